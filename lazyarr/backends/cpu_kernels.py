"""The CPU backend's compiled kernels: one native function per distinct fused computation.

A kernel is keyed by its structure (`kernel_fingerprint`) and compiled once per process,
whichever module meets it, or loaded from the persistent cache (`persistent_key`); new ones go
into shared MCJIT engines, a few dozen kernels each, freed with the last kernel and executable
holding them. cpu.py's CpuBackend compiles modules through `_compile_kernels` and `_KERNELS`.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import llvmlite.binding as llvm
import llvmlite.ir as ir

from .. import _flags, _profiler
from ..hlo.text import print_computation
from ..persistent_cache import code_version, disk_cache
from .llvm import vector_math
from .llvm.blas import gemm
from .llvm.compile_workers import compile_objects, default_worker_count
from .llvm.kernel import KernelBuilder
from .llvm.math_table import cpu_math
from .llvm.target import JitEngine, cpu_features_key, host_target_machine

# A kernel's native signature: (buffer pointers, size vector, first, last index of its outermost output dimension).
_KERNEL_SIGNATURE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)


@dataclass
class CompiledKernel:
    """A kernel's native function, and the engine whose memory holds its code (kept alive by
    every executable that calls it)."""

    name: str
    function: object
    engine: JitEngine


# Compiled kernels by structural fingerprint. A kernel met again, in this module or another (a
# loop's every iteration, the same step in a new graph), links without LLVM. Least recently used
# first out beyond the limit; its code is freed once no executable calls it either.
_KERNELS: OrderedDict[tuple, CompiledKernel] = OrderedDict()
_KERNEL_LIMIT = 4096
KERNEL_COUNTS = {"compiled": 0, "reused": 0, "loaded": 0}  # since the last clear (la.cache_info())


def kernel_fingerprint(computation) -> tuple:
    """The fused computation's structure: instructions are interned and its parameters are
    numbered 0..n-1, so equal kernels have identical parameter and output tuples (sizes,
    symbolic or not, are part of the shapes)."""
    return (computation.parameters, computation.outputs)


@functools.cache
def _code_version() -> str:
    """What compiled code depends on besides the kernel: the host CPU and its features, LLVM's
    and llvmlite's versions, and this backend's code generator (its source, so that any change
    to it gives new persistent-cache keys)."""
    import llvmlite

    blas = gemm()
    return code_version(
        f"{cpu_features_key()}|{llvmlite.__version__}|{llvm.llvm_version_info}|{blas.abi if blas else 'no blas'}"
        f"|{vector_math.abi()}",
        sorted(Path(__file__).parent.joinpath("llvm").glob("*.py")) + [
            Path(__file__), Path(__file__).parent / "cpu.py", Path(__file__).parent / "kernel_sizes.py"])


def persistent_key(computation, partial_blocks: int = 0) -> str:
    """The kernel's key in the persistent cache: its HLO text without the computation's name
    (canonical: parameters and placeholder sizes are numbered by the kernel itself), under
    the code version (and the partial blocks of a split reduction's first kernel)."""
    text = print_computation(computation).split("\n", 1)[1]
    blocks = f"partials {partial_blocks}\n" if partial_blocks else ""
    return hashlib.sha256(f"{_code_version()}\n{blocks}{text}".encode()).hexdigest()


def _compile_kernels(new: dict[tuple, tuple]) -> tuple[dict[tuple, CompiledKernel], list[str]]:
    """Compile (or load from the persistent cache) each new kernel into one engine of their own.

    Each kernel is an LLVM module of its own, so its object code can be stored and loaded by
    itself, and compiled on another core (llvm/compile_workers.py). Returns the kernels by
    fingerprint and the LLVM IR of those compiled here."""
    disk = disk_cache()
    codes, names, keys, texts = {}, {}, {}, {}
    for fingerprint, (computation, partial_blocks) in new.items():
        key = keys[fingerprint] = persistent_key(computation, partial_blocks)
        name = names[fingerprint] = f"kernel_{key[:32]}"
        code = disk.get(key) if disk is not None else None
        if code is None:
            llvm_module = ir.Module(name=name)
            llvm_module.triple = host_target_machine().triple
            with _profiler.span("build IR", "codegen", name):
                KernelBuilder(llvm_module, cpu_math).add(name, computation, partial_blocks)
                vector_math.add_vector_variants(llvm_module)
            texts[fingerprint] = str(llvm_module)
        else:
            codes[fingerprint] = code
            KERNEL_COUNTS["loaded"] += 1
    compiled = compile_objects(list(texts.values()), _compile_workers())
    for fingerprint, code in zip(texts, compiled):
        codes[fingerprint] = code
        KERNEL_COUNTS["compiled"] += 1
        if disk is not None:
            disk.put(keys[fingerprint], code)
    engine = _engine_with_room()
    fresh = {names[fingerprint]: (code, [names[fingerprint]]) for fingerprint, code in codes.items()
             if not engine.defines(names[fingerprint])}
    engine.add_objects(list(fresh.values()))  # a kernel evicted and met again may still be in it
    return {fingerprint: CompiledKernel(name, _KERNEL_SIGNATURE(engine.function_address(name)), engine)
            for fingerprint, name in names.items()}, list(texts.values())


def _compile_workers() -> int:
    """Helper processes for LLVM (--compile_workers; -1: `default_worker_count`)."""
    workers = _flags.FLAGS.compile_workers
    return default_worker_count() if workers < 0 else workers


# Kernels share MCJIT engines, up to this many per engine: an engine (and the target machine
# it owns) costs ~0.3 MiB, a kernel's code a few KiB. An engine is freed with the last kernel
# and executable that hold it. The newest engine takes new kernels until it is full.
_KERNELS_PER_ENGINE = 64
_NEWEST_ENGINE: list[JitEngine] = []


def _engine_with_room() -> JitEngine:
    """The engine new kernels go into (the caller holds the compile lock)."""
    if not _NEWEST_ENGINE or _NEWEST_ENGINE[0].function_count >= _KERNELS_PER_ENGINE:
        _NEWEST_ENGINE[:] = [JitEngine()]
    return _NEWEST_ENGINE[0]


def _remember(kernels: dict[tuple, CompiledKernel]) -> None:
    _KERNELS.update(kernels)
    while len(_KERNELS) > _KERNEL_LIMIT:
        _KERNELS.popitem(last=False)
