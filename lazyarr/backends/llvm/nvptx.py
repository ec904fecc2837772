"""LLVM IR -> PTX for NVIDIA GPUs: the NVPTX target machine, libdevice, and `compile_ptx`.

This is XLA's GPU code path: the kernels are LLVM IR that calls NVPTX intrinsics (thread and
block indices, warp shuffles, barriers) and libdevice's math functions; LLVM links libdevice's
bitcode in, optimizes at O3 (its NVPTX pipeline runs NVVMReflect, which resolves libdevice's
`__nvvm_reflect("__CUDA_FTZ")` to 0: subnormals are kept, as NumPy keeps them) and prints
PTX. The driver turns PTX into machine code when the module is loaded (gpu.py). Nothing here
needs a GPU or CuPy, so PTX generation is tested everywhere (`ptxas -arch=sm_90`).

Example:
    >>> ptx = compile_ptx('define ptx_kernel void @noop() { ret void }', "sm_90")
    >>> ".entry noop" in ptx
    True
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import subprocess
import tempfile
import threading

import llvmlite.binding as llvm

from ... import _profiler
from .target import _initialize_all, loop_strength_reduction, optimize, parse_module

TRIPLE = "nvptx64-nvidia-cuda"
# PTX ISA 8.0 (CUDA 12.0) is what sm_90 needs; drivers from CUDA 12.0 on load it.
_PTX_FEATURES = "+ptx80"
_LOCK = threading.Lock()  # LLVM's global context (parsing, linking) is not thread-safe


class LibdeviceNotFound(RuntimeError):
    """No libdevice bitcode was found (it ships with the CUDA toolkit and pip's NVVM package)."""


def _libdevice_candidates() -> list[str]:
    roots = [os.environ.get(name) for name in ("LAZYARR_LIBDEVICE", "CUDA_HOME", "CUDA_PATH")]
    ptxas = shutil.which("ptxas") or shutil.which("nvcc")
    if ptxas:
        roots.append(os.path.dirname(os.path.dirname(os.path.realpath(ptxas))))
    roots += ["/usr/local/cuda", *sorted(glob.glob("/usr/local/cuda-*"), reverse=True), "/usr/lib/cuda", "/opt/cuda"]
    try:  # pip's nvidia-cuda-nvcc (the CUDA 12 wheel) and nvidia-nvvm (CUDA 13) packages
        import nvidia

        for package in nvidia.__path__:
            roots += glob.glob(os.path.join(package, "cuda_nvcc")) + glob.glob(os.path.join(package, "nvvm", ".."))
            roots += glob.glob(os.path.join(package, "cu*"))
    except ImportError:
        pass
    candidates = []
    for root in filter(None, roots):
        if root.endswith(".bc"):
            candidates.append(root)
        else:
            candidates += sorted(glob.glob(os.path.join(root, "nvvm", "libdevice", "libdevice*.bc")))
    return candidates


@functools.cache
def libdevice_path() -> str:
    """Path of libdevice.10.bc: $LAZYARR_LIBDEVICE, the CUDA toolkit ($CUDA_HOME, $CUDA_PATH,
    next to ptxas, /usr/local/cuda*), or pip's nvidia-cuda-nvcc / nvidia-nvvm packages."""
    for candidate in _libdevice_candidates():
        if os.path.isfile(candidate):
            return candidate
    raise LibdeviceNotFound(
        "GPU code generation needs libdevice (libdevice.10.bc), NVIDIA's math library as LLVM "
        "bitcode; none was found. Install the CUDA toolkit, or `pip install nvidia-cuda-nvcc-cu12`, "
        "or point LAZYARR_LIBDEVICE at the file."
    )


@functools.cache
def _libdevice_bitcode() -> bytes:
    with open(libdevice_path(), "rb") as file:
        return file.read()


@functools.cache
def target_machine(arch: str) -> llvm.TargetMachine:
    """The NVPTX target machine for one GPU architecture ('sm_90' for H100)."""
    _initialize_all()
    target = llvm.Target.from_triple(TRIPLE)
    return target.create_target_machine(cpu=arch, features=_PTX_FEATURES, opt=3)


def data_layout(arch: str) -> str:
    """The NVPTX data layout, for a module's IR before it is printed for `compile_ptx`: the IR
    parser gives loads and stores without an explicit alignment the layout's. Without it
    (LLVM's default layout aligns i64 to 4 bytes) 64-bit accesses were split into two 32-bit
    ones, and split st.shared of float64 block partials read back with a wrong low word on an
    H100 (a row kernel's 1.0 + 2.0 gave 3.0000000000000013)."""
    return str(target_machine(arch).target_data)


def compile_ptx(source, arch: str) -> str:
    """LLVM IR (text or `ir.Module`) of `ptx_kernel` functions -> PTX text for `arch`.

    libdevice is linked in when the module calls `__nv_*` functions; its functions are then
    made internal, so O3 inlines what is used and drops the rest.
    """
    machine = target_machine(arch)
    with _LOCK, _profiler.span("PTX compile", "codegen", arch):
        module = parse_module(str(source))
        module.triple = machine.triple
        module.data_layout = str(machine.target_data)
        if any(function.is_declaration and function.name.startswith("__nv_") for function in module.functions):
            libdevice = llvm.parse_bitcode(_libdevice_bitcode())
            libdevice.triple = machine.triple
            libdevice.data_layout = str(machine.target_data)
            module.link_in(libdevice)
            for function in module.functions:
                if not function.is_declaration and function.name.startswith("__nv_"):
                    function.linkage = "internal"
        optimize(module, machine, straight_line_vectorization=True)  # (PTX: as it ran on the H100)
        with loop_strength_reduction():
            return machine.emit_assembly(module)


def ptxas_path() -> str | None:
    """The `ptxas` assembler, if installed (tests use it to check generated PTX): on PATH, or
    from pip's nvidia-cuda-nvcc package (the `test` and `gpu` extras install it on Linux)."""
    found = shutil.which("ptxas")
    if found:
        return found
    try:
        import nvidia
    except ImportError:
        return None
    for package in nvidia.__path__:
        candidate = os.path.join(package, "cuda_nvcc", "bin", "ptxas")
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def assemble(ptx: str, arch: str) -> None:
    """Check that `ptx` assembles for `arch` with ptxas; raise ValueError with its message if not."""
    executable = ptxas_path()
    if executable is None:
        raise FileNotFoundError("ptxas is not installed (it comes with the CUDA toolkit)")
    with tempfile.NamedTemporaryFile("w", suffix=".ptx") as file:
        file.write(ptx)
        file.flush()
        command = [executable, f"-arch={arch}", "-o", os.devnull, file.name]
        result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise ValueError(f"ptxas -arch={arch} rejected the PTX:\n{result.stderr}")
