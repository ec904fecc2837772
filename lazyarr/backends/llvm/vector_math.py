"""Vector math from glibc's libmvec: C-library math functions inside vectorized loops.

Most math functions have branch-free polynomials of lazyarr's own (math.py), which vectorize
with the loop around them. The rest (tan, arcsin, arccos, arctan, sinh, cosh, arctan2, power)
are calls to the C library, and a call keeps its loop scalar: 10^6 float32 `arctan` took
2.15 ns an element against NumPy's SIMD loop's 0.40. glibc's libmvec has vector versions of
them (`_ZGVdN8v_atanf`: eight floats in an AVX2 register, at most ~2 ULP here).

How they are reached, since llvmlite's pass pipeline takes no vector library: the library
call is declared as touching no memory (these functions set errno, which lazyarr never reads),
so LLVM's loop vectorizer widens it into its intrinsic (`llvm.atan.v8f32`); after
optimization, `use_vector_library` renames each such intrinsic declaration to libmvec's
function of that width (AVX2's 8 floats or 4 doubles, SSE's 4 or 2), or to a wrapper calling
it twice for twice the width. Code generation would otherwise split the intrinsic back into
scalar calls. Where libmvec is missing (another C library, another architecture, a CPU
without AVX2 and FMA) nothing changes: the calls stay scalar. LAZYARR_LIBMVEC=0 turns it off.
"""

from __future__ import annotations

import ctypes
import functools
import os
import platform

import llvmlite.binding as llvm

# C library name (float32 and float64 both) -> (LLVM intrinsic, arity).
_FUNCTIONS = {
    "atan": ("llvm.atan", 1), "asin": ("llvm.asin", 1), "acos": ("llvm.acos", 1), "tan": ("llvm.tan", 1),
    "sinh": ("llvm.sinh", 1), "cosh": ("llvm.cosh", 1), "atan2": ("llvm.atan2", 2), "pow": ("llvm.pow", 2),
}
# (element type, lanes) -> libmvec's ISA letter: SSE4 'b', AVX2 'd' (the x86-64 vector ABI).
_VARIANTS = {("f32", 4): "b", ("f32", 8): "d", ("f64", 2): "b", ("f64", 4): "d"}


def _symbol(name: str, element: str, lanes: int, arity: int) -> str:
    isa = _VARIANTS[element, lanes]
    return f"_ZGV{isa}N{lanes}{'v' * arity}_{name}{'f' if element == 'f32' else ''}"


@functools.cache
def libmvec() -> dict[str, int] | None:
    """libmvec's functions used here, symbol -> address; None where they cannot be used."""
    if os.environ.get("LAZYARR_LIBMVEC", "1") == "0":
        return None
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        return None
    from .target import host_cpu_features  # (target.py imports this module at its top)

    features = host_cpu_features().split(",")
    if "+avx2" not in features or "+fma" not in features:
        return None
    try:
        library = ctypes.CDLL("libmvec.so.1")
    except OSError:
        return None
    addresses = {}
    for name, (_, arity) in _FUNCTIONS.items():
        for element, lanes in _VARIANTS:
            symbol = _symbol(name, element, lanes, arity)
            try:
                addresses[symbol] = ctypes.cast(getattr(library, symbol), ctypes.c_void_p).value
            except AttributeError:
                return None  # an older glibc: all or nothing, so every kernel compiles the same way
    return addresses


def vectorizable(c_name: str) -> bool:
    """Whether calls to the C library's `c_name` (`atanf`, `pow`, ...) may be declared as
    touching no memory, to be vectorized and then replaced (use_vector_library)."""
    return libmvec() is not None and c_name.removesuffix("f") in _FUNCTIONS


def bind_symbols() -> None:
    """Make libmvec's functions known to LLVM's JIT linker (once per process, before any
    kernel that calls them is loaded)."""
    for symbol, address in (libmvec() or {}).items():
        llvm.add_symbol(symbol, address)


def abi() -> str:
    """What compiled kernels depend on (part of the persistent cache's code version)."""
    return "libmvec avx2" if libmvec() is not None else "no libmvec"


def use_vector_library(module: llvm.ModuleRef) -> None:
    """Rename the vector math intrinsics of an optimized module to libmvec's functions, adding
    two-call wrappers for twice the widths libmvec has; the rest stay as they are."""
    if libmvec() is None:
        return
    wrappers = []
    for function in list(module.functions):
        parsed = _parse_intrinsic(function.name)
        if parsed is None:
            continue
        name, element, lanes, arity = parsed
        if (element, lanes) in _VARIANTS:
            function.name = _symbol(name, element, lanes, arity)
        elif (element, lanes // 2) in _VARIANTS and lanes % 2 == 0:
            symbol = _symbol(name, element, lanes // 2, arity)
            wrapper = f"lazyarr_{symbol}_x2"
            function.name = wrapper
            wrappers.append(_wrapper_ir(wrapper, symbol, element, lanes, arity))
    if wrappers:
        extra = llvm.parse_assembly("\n".join(wrappers))
        extra.triple, extra.data_layout = module.triple, module.data_layout
        module.link_in(extra)


def _parse_intrinsic(name: str):
    """`llvm.atan.v8f32` -> ('atan', 'f32', 8, 1); None for any other function."""
    for c_name, (intrinsic, arity) in _FUNCTIONS.items():
        prefix = intrinsic + ".v"
        if name.startswith(prefix):
            rest = name[len(prefix):]
            for element in ("f32", "f64"):
                if rest.endswith(element) and rest[:-3].isdigit():
                    return c_name, element, int(rest[:-3]), arity
    return None


def _wrapper_ir(wrapper: str, symbol: str, element: str, lanes: int, arity: int) -> str:
    """A function applying `symbol` (half as wide) to each half of its operands (linkonce_odr: the
    same in every kernel that uses it, so several kernels of one engine may each bring it)."""
    scalar = "float" if element == "f32" else "double"
    half = lanes // 2
    wide, narrow = f"<{lanes} x {scalar}>", f"<{half} x {scalar}>"
    low = ", ".join(f"i32 {lane}" for lane in range(half))
    high = ", ".join(f"i32 {lane}" for lane in range(half, lanes))
    every = ", ".join(f"i32 {lane}" for lane in range(lanes))
    parameters = ", ".join(f"{wide} %x{index}" for index in range(arity))
    lines = [f"declare {narrow} @{symbol}({', '.join([narrow] * arity)})",
             f"define linkonce_odr {wide} @{wrapper}({parameters}) {{"]
    for index in range(arity):
        lines.append(f"  %lo{index} = shufflevector {wide} %x{index}, {wide} poison, <{half} x i32> <{low}>")
        lines.append(f"  %hi{index} = shufflevector {wide} %x{index}, {wide} poison, <{half} x i32> <{high}>")
    low_arguments = ", ".join(f"{narrow} %lo{index}" for index in range(arity))
    high_arguments = ", ".join(f"{narrow} %hi{index}" for index in range(arity))
    lines += [f"  %a = call {narrow} @{symbol}({low_arguments})",
              f"  %b = call {narrow} @{symbol}({high_arguments})",
              f"  %r = shufflevector {narrow} %a, {narrow} %b, <{lanes} x i32> <{every}>",
              f"  ret {wide} %r", "}"]
    return "\n".join(lines)
