"""The CPU backend: fused kernels compiled by llvmlite, host steps for everything else.

`compile(module)` runs the target-independent pipeline with this backend's fusion policy,
turns every fusion into an LLVM function (all of a module's kernels go into one LLVM module,
optimized at O3 for the host CPU and JIT-compiled once), and plans the entry computation
as a list of steps over buffer slots: kernels, and host steps that run an instruction's
NumPy reference (dot through NumPy's BLAS, custom-calls, scatter), as XLA's auto-clustering
leaves unsupported ops to TensorFlow. Kernels split their outermost output dimension over a
thread pool when the output is large; ctypes releases the GIL during each call.
"""

from __future__ import annotations

import ctypes
import math
import os
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import llvmlite.ir as ir
import numpy as np

from .. import _profiler
from ..hlo import Instruction, Module
from ..passes.default import default_pipeline
from ..passes.fusion import FusionDecision, FusionPolicy
from ..shapes import is_symbolic_size, resolve_shape
from .llvm.elemental import COMPILED_DTYPES, EMITTABLE
from .llvm.kernel import KernelBuilder, outer_extent
from .llvm.math_table import cpu_math
from .llvm.target import host_target_machine, jit_engine
from .slots import HostStep, Slots

_KERNEL_SIGNATURE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
_ALIGNMENT = 64
# Below this many elements touched per call a kernel runs on the calling thread.
_PARALLEL_THRESHOLD = 1 << 16


def aligned_empty(shape, dtype) -> np.ndarray:
    """An uninitialized array whose data starts on a 64-byte boundary.

    Too large for memory: MemoryError in NumPy's words, naming `shape` and `dtype` (not the
    byte buffer behind them): 'Unable to allocate 72.8 TiB for an array with shape
    (10000000000000,) and data type float64'.
    """
    dtype = np.dtype(dtype)
    count = math.prod(shape)  # not np.prod: ~2 µs of dispatch per output on every run
    nbytes = max(count, 1) * dtype.itemsize
    try:
        raw = np.empty(nbytes + _ALIGNMENT, dtype=np.uint8)
    except MemoryError:
        size, unit = float(nbytes), "bytes"
        for larger in ("KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
            if round(size) < 1024:  # as NumPy: a unit that still fits after rounding
                break
            size, unit = size / 1024, larger
        amount = f"{nbytes} bytes" if unit == "bytes" else f"{size:#.3g} {unit}"
        raise MemoryError(f"Unable to allocate {amount} for an array with shape {tuple(shape)} "
                          f"and data type {dtype}") from None
    offset = (-raw.ctypes.data) % _ALIGNMENT
    return raw[offset:offset + nbytes].view(dtype)[:count].reshape(shape)


class CpuFusionPolicy(FusionPolicy):
    """Fuse what the elemental emitter can generate, for the dtypes it compiles."""

    def is_fusible(self, instruction: Instruction) -> FusionDecision:
        if instruction.dtype not in COMPILED_DTYPES or any(
            operand.dtype not in COMPILED_DTYPES for operand in instruction.operands
        ):
            return FusionDecision.no(
                f"a {instruction.opcode} on {instruction.dtype}, which runs on the host "
                "(complex dtypes are not compiled yet)"
            )
        if instruction.opcode not in EMITTABLE and instruction.opcode != "reduce":
            return FusionDecision.no(
                f"a {instruction.opcode}, which has no code generator yet (runs on the host)"
            )
        return super().is_fusible(instruction)


@dataclass
class KernelStep:
    """One fused kernel: reads `inputs` slots, writes `outputs` slots."""

    function: object
    inputs: list[int]
    outputs: list[int]
    output_specs: list[tuple[tuple[int, ...], np.dtype]]
    extent: int
    parallel: bool
    # Shapes of what the kernel touches, when some size is a placeholder (symbolic_sizes.py):
    # then extent, output shapes and the threading decision are resolved at each run.
    symbolic_work: list[tuple[int, ...]] | None = None


@dataclass
class CpuExecutable:
    module: Module
    steps: list
    parameter_slots: list[int]
    output_slots: list[int]
    constants: dict[int, np.ndarray]
    slot_count: int
    llvm_ir: str = ""
    compile_seconds: float = 0.0
    keepalive: list = field(default_factory=list)

    def run(self, arguments: Sequence[np.ndarray], sizes: Sequence[int] = ()) -> list[np.ndarray]:
        """Run on `arguments` (one buffer per parameter); `sizes` are the real values of the
        module's placeholder sizes, if it has any (see lazyarr/symbolic_sizes.py)."""
        slots: list[np.ndarray | None] = [None] * self.slot_count
        size_vector = (ctypes.c_int64 * max(len(sizes), 1))(*sizes)
        for slot, argument in zip(self.parameter_slots, arguments):
            # np.asarray, not np.ascontiguousarray: the latter turns 0-d arrays into shape (1,).
            slots[slot] = np.asarray(argument, order="C")
        for slot, value in self.constants.items():
            slots[slot] = value
        for step in self.steps:
            if isinstance(step, HostStep):
                with _profiler.span("host step", "execute", step):
                    values = [slots[slot] for slot in step.inputs]
                    attributes = step.instruction.attributes
                    if step.symbolic_shape:
                        attributes = {**attributes, "shape": resolve_shape(attributes["shape"], sizes)}
                    result = step.instruction.op.reference(values, attributes)
                    slots[step.output] = np.asarray(result, dtype=step.instruction.dtype, order="C")
            else:
                with _profiler.span("kernel", "execute", step):
                    _run_kernel(step, slots, size_vector, sizes)
        return [slots[slot] for slot in self.output_slots]


def _run_kernel(step: KernelStep, slots, size_vector, sizes):
    specs, extent, parallel = step.output_specs, step.extent, step.parallel
    if step.symbolic_work is not None:
        specs = [(resolve_shape(shape, sizes), dtype) for shape, dtype in specs]
        extent = resolve_shape((extent,), sizes)[0]
        parallel = _parallel(extent, (resolve_shape(shape, sizes) for shape in step.symbolic_work))
    outputs = [aligned_empty(shape, dtype) for shape, dtype in specs]
    buffers = [slots[slot] for slot in step.inputs] + outputs
    pointer_array = (ctypes.c_void_p * len(buffers))(*(buffer.ctypes.data for buffer in buffers))
    if parallel:
        workers = _pool()._max_workers
        bounds = np.linspace(0, extent, workers + 1).astype(np.int64)
        chunk = _profiler.traced(step.function, "kernel chunk", "execute")
        futures = [
            _pool().submit(chunk, pointer_array, size_vector, int(begin), int(end))
            for begin, end in zip(bounds[:-1], bounds[1:]) if end > begin
        ]
        for future in futures:
            future.result()
    else:
        step.function(pointer_array, size_vector, 0, extent)
    for slot, output in zip(step.outputs, outputs):
        slots[slot] = output


def _parallel(extent: int, work_shapes) -> bool:
    """Split over threads when the kernel touches enough elements (work is the largest of
    its inputs and outputs: a row reduction has a small output and big inputs)."""
    return extent > 1 and max(math.prod(shape) for shape in work_shapes) >= _PARALLEL_THRESHOLD


_POOL: ThreadPoolExecutor | None = None


def _pool() -> ThreadPoolExecutor:
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="lazyarr-cpu")
    return _POOL


def _forget_pool_in_child() -> None:
    """A forked child has none of its parent's worker threads: work handed to the inherited
    pool would wait forever, so the child makes a pool of its own on first use."""
    global _POOL
    _POOL = None


os.register_at_fork(after_in_child=_forget_pool_in_child)


# Compiled kernels by structural fingerprint -> function name in the process-wide engine. A
# kernel met again, in this module or another (a loop's every iteration, the same step in a
# new graph), links without LLVM. Bounded only by the engine, which keeps all code anyway.
_KERNELS: dict[tuple, str] = {}
_FUNCTIONS: dict[str, object] = {}  # function name -> its ctypes function
KERNEL_COUNTS = {"compiled": 0, "reused": 0}  # since the last clear (la.cache_info())


def kernel_fingerprint(computation) -> tuple:
    """The fused computation's structure: instructions are interned and its parameters are
    numbered 0..n-1, so equal kernels have identical parameter and output tuples (sizes,
    symbolic or not, are part of the shapes)."""
    return (computation.parameters, computation.outputs)


def _kernel_function(name: str):
    function = _FUNCTIONS.get(name)
    if function is None:
        function = _FUNCTIONS[name] = _KERNEL_SIGNATURE(jit_engine().function_address(name))
    return function


class CpuBackend:
    name = "cpu"
    device = "cpu"
    symbolic_sizes = True  # kernels read placeholder sizes at run time (symbolic_sizes.py)

    def __init__(self):
        self.fusion_policy = CpuFusionPolicy()

    @staticmethod
    def clear_kernel_cache() -> None:
        """Forget compiled kernels (`la.clear_cache()`): the next modules compile theirs again."""
        _KERNELS.clear()
        KERNEL_COUNTS.update(compiled=0, reused=0)

    @staticmethod
    def kernel_counts() -> dict[str, int]:
        """Kernels compiled, and kernels a module took from the kernel cache instead."""
        return dict(KERNEL_COUNTS)

    def compile(self, module: Module, pipeline_dump=None) -> CpuExecutable:
        start = time.perf_counter()
        with _profiler.span("pipeline", "compile"):
            default_pipeline(self.fusion_policy, dump=pipeline_dump).run(module)
        llvm_module = ir.Module(name=module.name)
        llvm_module.triple = host_target_machine().triple
        builder = KernelBuilder(llvm_module, cpu_math)
        slots = Slots(module)
        steps, pending = [], []
        launched: dict[tuple, KernelStep] = {}
        new_kernels: dict[tuple, str] = {}  # fingerprint -> function name, compiled below
        for instruction in slots.instructions():
            if instruction.opcode != "fusion":
                steps.append(slots.host_step(instruction))
                continue
            computation = instruction.attr("computation")
            key = (id(computation), tuple(id(o) for o in instruction.operands))
            if key not in launched:
                fingerprint = kernel_fingerprint(computation)
                name = _KERNELS.get(fingerprint) or new_kernels.get(fingerprint)
                if name is None:
                    name = new_kernels[fingerprint] = jit_engine().fresh_name("kernel")
                    with _profiler.span("build IR", "codegen", name):
                        builder.add(name, computation)
                else:
                    KERNEL_COUNTS["reused"] += 1
                extent = outer_extent(computation)
                work = [node.shape for node in computation.outputs + computation.parameters]
                symbolic = any(is_symbolic_size(size) for shape in work for size in shape)
                step = KernelStep(
                    name, [slots.of(o) for o in instruction.operands], [None] * len(computation.outputs),
                    [(output.shape, output.dtype) for output in computation.outputs], extent,
                    parallel=not symbolic and _parallel(extent, work), symbolic_work=work if symbolic else None,
                )
                launched[key] = step
                steps.append(step)
                pending.append(step)
            launched[key].outputs[instruction.attr("output_index")] = slots.of(instruction)
        for step in pending:
            step.outputs = [slot if slot is not None else slots.fresh() for slot in step.outputs]
        text = str(llvm_module)
        engine = jit_engine()  # one per process: compiled code lives as long as it does
        if new_kernels:
            engine.add_module(text)
            _KERNELS.update(new_kernels)
            KERNEL_COUNTS["compiled"] += len(new_kernels)
        for step in pending:
            step.function = _kernel_function(step.function)
        return CpuExecutable(
            module=module,
            steps=steps,
            parameter_slots=slots.parameters,
            output_slots=slots.outputs,
            constants=slots.constants,
            slot_count=slots.count,
            llvm_ir=text,
            compile_seconds=time.perf_counter() - start,
        )

BACKEND = CpuBackend()
