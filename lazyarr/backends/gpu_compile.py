"""HLO module -> GPU program (PTX and a plan of launches), without CuPy or a GPU.

The GPU backend (gpu.py) loads and launches what this produces; tests assemble its PTX with
`ptxas` on machines without a GPU. Fusions become NVPTX kernels (llvm/gpu_kernel.py; one fusion
may need several when its outputs need different launch shapes); dot runs through cuBLAS
(CuPy's matmul) for float dtypes; every other unfused instruction runs its NumPy reference on
the host, its operands copied there and its result copied back (correct but slow: the README
lists these ops).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import time
from dataclasses import dataclass, field
from pathlib import Path

import llvmlite.ir as ir
import numpy as np

from .. import _profiler, dtypes
from ..hlo import Instruction, Module
from ..passes.default import default_pipeline
from ..passes.fusion_policy import FusionDecision
from ..persistent_cache import code_version, disk_cache
from ..shapes import is_symbolic_size, placeholder_index
from .cpu import CpuFusionPolicy
from .cpu_kernels import kernel_fingerprint
from .llvm.gpu_kernel import GpuKernelBuilder, KernelPlan, plan_kernels
from .llvm.math_table import gpu_math
from .llvm.nvptx import TRIPLE, LibdeviceNotFound, compile_ptx, data_layout, libdevice_path
from .slots import Slots

# dot on these dtypes goes to cuBLAS; on others (integers, bool) to the host reference.
CUBLAS_DTYPES = frozenset({dtypes.float16, dtypes.float32, dtypes.float64})


class GpuFusionPolicy(CpuFusionPolicy):
    """What the elemental emitter generates fuses on the GPU too. The GPU favours more fusion
    than the CPU (a round trip through memory costs more than recomputing an exp: memory
    bandwidth, not arithmetic, bounds these kernels) but limits kernel parameters (CUDA passes
    them in 4 KiB of constant memory; 64 pointers leave room for sizes)."""

    def __init__(self):
        # Recomputing is cheap next to a launch or a round trip through memory: tiny producers
        # and the producers of duplicated ones are duplicated too.
        # Row kernels (softmax, layernorm): llvm/gpu_kernel.py's "rows" skeleton, a block per row.
        super().__init__(max_operands=64, max_duplicates=16, max_tiny_elements=0, shared_under_copies=False,
                         row_reductions=True)

    def is_fusible(self, instruction: Instruction) -> FusionDecision:
        # The GPU skeletons (llvm/gpu_kernel.py) have no scan: a cumulative sum or product runs
        # as a host step (NumPy's own, copied through the host) rather than failing to compile.
        if instruction.opcode == "cumulative":
            return FusionDecision.no("a cumulative scan (no GPU scan kernel yet: runs on the host)")
        if instruction.opcode in ("argmax", "argmin"):
            return FusionDecision.no(f"an {instruction.opcode} (no GPU kernel for it yet: runs on the host)")
        return super().is_fusible(instruction)


@dataclass
class LaunchStep:
    """One kernel launch: reads `inputs` slots, writes `outputs` slots (one per plan output)."""

    plan: KernelPlan
    inputs: list[int]
    outputs: list[int | None]
    output_specs: list[tuple[tuple[int, ...], np.dtype]]


@dataclass
class DotStep:
    """A dot through cuBLAS (CuPy's matmul)."""

    instruction: Instruction
    inputs: list[int]
    output: int


@dataclass
class GpuProgram:
    """Everything gpu.py needs to run a module: PTX, the steps over buffer slots, and where
    parameters, constants and outputs live."""

    module: Module
    arch: str
    steps: list
    parameter_slots: list[int]
    output_slots: list[int]
    constants: dict[int, np.ndarray]
    slot_count: int
    size_count: int
    llvm_ir: str = ""
    ptx: str = ""
    compile_seconds: float = 0.0
    kernel_names: list[str] = field(default_factory=list)
    ptx_loaded: bool = False  # the PTX came from the persistent cache (no NVPTX compile)


def size_count(module: Module) -> int:
    """How many placeholder sizes (symbolic_sizes.py) the module's shapes use."""
    highest = -1
    computations = [module.entry]
    seen = set()
    while computations:
        computation = computations.pop()
        for node in computation.post_order():
            for size in node.shape:
                if is_symbolic_size(size):
                    highest = max(highest, placeholder_index(size))
            if node.opcode == "fusion" and id(node.attr("computation")) not in seen:
                seen.add(id(node.attr("computation")))
                computations.append(node.attr("computation"))
    return highest + 1


def compile_program(module: Module, arch: str, fusion_policy=None, pipeline_dump=None) -> GpuProgram:
    """Optimize `module` for the GPU and generate its PTX for `arch` ('sm_90')."""
    start = time.perf_counter()
    with _profiler.span("pipeline", "compile"):
        default_pipeline(fusion_policy or GpuFusionPolicy(), dump=pipeline_dump).run(module)
    llvm_module = ir.Module(name=module.name)
    llvm_module.triple = TRIPLE
    llvm_module.data_layout = data_layout(arch)
    sizes = size_count(module)
    builder = GpuKernelBuilder(llvm_module, gpu_math, sizes)
    slots = Slots(module)
    steps, names = [], []
    launched: dict[tuple, list[LaunchStep]] = {}
    # Kernels are numbered within the module (its PTX is a CUDA module of its own), so equal
    # modules have equal IR text and the persistent cache finds their PTX (`ptx_for`).
    kernel_numbers = itertools.count()
    # A fused computation met again in the module (the same step of an unrolled loop) launches
    # the kernels built for the first: one kernel in the PTX, not one per step.
    plans_by_structure: dict[tuple, list[KernelPlan]] = {}
    for instruction in slots.instructions():
        operand_slots = [slots.of(operand) for operand in instruction.operands]
        if instruction.opcode == "dot" and instruction.dtype in CUBLAS_DTYPES:
            steps.append(DotStep(instruction, operand_slots, slots.of(instruction)))
            continue
        if instruction.opcode != "fusion":
            steps.append(slots.host_step(instruction))
            continue
        computation = instruction.attr("computation")
        key = (id(computation), tuple(id(operand) for operand in instruction.operands))
        if key not in launched:
            launched[key] = []
            fingerprint = kernel_fingerprint(computation)
            plans = plans_by_structure.get(fingerprint)
            if plans is None:
                plans = plans_by_structure[fingerprint] = plan_kernels(computation, f"fusion_{next(kernel_numbers)}")
                for plan in plans:
                    with _profiler.span("build IR", "codegen", plan.name):
                        builder.add(plan, computation)
                    names.append(plan.name)
            for plan in plans:
                specs = [(computation.outputs[p].shape, computation.outputs[p].dtype) for p in plan.outputs]
                step = LaunchStep(plan, operand_slots, [None] * len(plan.outputs), specs)
                launched[key].append(step)
                steps.append(step)
        position = instruction.attr("output_index")
        for step in launched[key]:
            if position in step.plan.outputs:
                step.outputs[step.plan.outputs.index(position)] = slots.of(instruction)
    for group in launched.values():
        for step in group:
            step.outputs = [slot if slot is not None else slots.fresh() for slot in step.outputs]
    text = str(llvm_module)
    ptx, loaded = ptx_for(text, arch, len(names)) if names else ("", False)
    return GpuProgram(
        module=module, arch=arch, steps=steps, parameter_slots=slots.parameters,
        output_slots=slots.outputs, constants=slots.constants, slot_count=slots.count, size_count=sizes,
        llvm_ir=text, ptx=ptx,
        compile_seconds=time.perf_counter() - start, kernel_names=names, ptx_loaded=loaded,
    )


# Kernels whose PTX was generated ("compiled") or read from the persistent cache ("loaded").
PTX_COUNTS = {"compiled": 0, "loaded": 0}


def ptx_for(text: str, arch: str, kernels: int = 1) -> tuple[str, bool]:
    """(PTX of the LLVM IR `text` (its `kernels` kernels) for `arch`, whether it came from the
    persistent cache).

    The cache (persistent_cache.py: the CPU kernels' directory, trust rules and size bound)
    keys PTX by the IR text, the architecture and `_ptx_code_version`: a process running the
    same program again (its kernels numbered in the same order) generates no PTX. The driver
    still turns the PTX into machine code when the module loads (its own cache keeps that)."""
    cache = disk_cache()
    key = None
    if cache is not None:
        key = hashlib.sha256(f"ptx {arch}\n{_ptx_code_version()}\n{text}".encode()).hexdigest()
        found = cache.get(key)
        if found is not None:
            try:
                ptx = found.decode()
            except UnicodeDecodeError:  # (the digest matched: a foreign entry under our key)
                ptx = None
            if ptx is not None and ".entry" in ptx:
                PTX_COUNTS["loaded"] += kernels
                return ptx, True
    ptx = compile_ptx(text, arch)
    PTX_COUNTS["compiled"] += kernels
    if key is not None:
        cache.put(key, ptx.encode())
    return ptx, False


@functools.cache
def _ptx_code_version() -> str:
    """What PTX depends on besides the IR: llvmlite's and LLVM's versions, libdevice's bytes and
    the NVPTX code path (llvm/nvptx.py and the optimization pipeline in llvm/target.py)."""
    import llvmlite
    import llvmlite.binding as llvm

    llvm_sources = Path(__file__).parent / "llvm"
    sources = [llvm_sources / "nvptx.py", llvm_sources / "target.py"]
    try:
        sources.append(Path(libdevice_path()))
    except LibdeviceNotFound:
        pass
    return code_version(f"{llvmlite.__version__}|{llvm.llvm_version_info}|{len(sources)}", sources)
