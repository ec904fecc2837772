"""Vector math from glibc's libmvec: C-library math functions inside vectorized loops.

Most math functions have branch-free polynomials of lazyarr's own (math.py), which vectorize
with the loop around them. The rest (tan, arcsin, arccos, arctan, sinh, cosh, arcsinh,
arccosh, arctanh, cbrt, erf, arctan2, hypot, power) are calls to the C library, and a call
keeps its loop scalar: 10^6 float32 `arctan` took 2.15 ns an element against NumPy's SIMD
loop's 0.40, `cbrt` 6.1 against 0.30. glibc's libmvec has vector versions of them
(`_ZGVdN8v_atanf`: eight floats in an AVX2 register, at most ~3 ULP here).

How they are reached, since llvmlite's pass pipeline takes no vector library: the library
call is declared as touching no memory (these functions set errno, which lazyarr never reads),
and before a kernel module is compiled `add_vector_variants` gives the declaration LLVM's
`vector-function-abi-variant` attribute naming libmvec's functions (AVX2's 8 floats or 4
doubles, SSE's 4 or 2), declared in the module and kept there (`llvm.compiler.used`) until the
loop vectorizer has run. The vectorizer then calls them for whole vectors, as it does for
OpenMP's `declare simd` functions. Where libmvec is missing (another C library, another
architecture, a CPU without AVX2 and FMA) nothing changes: the calls stay scalar.
LAZYARR_LIBMVEC=0 turns it off.
"""

from __future__ import annotations

import ctypes
import functools
import os
import platform

import llvmlite.binding as llvm
import llvmlite.ir as ir

# C library name (float32 and float64 both) -> arity.
_FUNCTIONS = {
    "atan": 1, "asin": 1, "acos": 1, "tan": 1, "sinh": 1, "cosh": 1, "asinh": 1, "acosh": 1, "atanh": 1,
    "cbrt": 1, "erf": 1, "atan2": 2, "hypot": 2, "pow": 2,
}
# (element type, lanes) -> libmvec's ISA letter: SSE4 'b', AVX2 'd' (the x86-64 vector ABI).
_VARIANTS = {("f32", 8): "d", ("f32", 4): "b", ("f64", 4): "d", ("f64", 2): "b"}


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
    for name, arity in _FUNCTIONS.items():
        for element, lanes in _VARIANTS:
            symbol = _symbol(name, element, lanes, arity)
            try:
                addresses[symbol] = ctypes.cast(getattr(library, symbol), ctypes.c_void_p).value
            except AttributeError:
                return None  # an older glibc: all or nothing, so every kernel compiles the same way
    return addresses


def vectorizable(c_name: str) -> bool:
    """Whether calls to the C library's `c_name` (`atanf`, `pow`, `erf`, ...) may be declared
    as touching no memory, to be vectorized into libmvec's calls (add_vector_variants)."""
    return libmvec() is not None and (c_name in _FUNCTIONS or c_name.endswith("f") and c_name[:-1] in _FUNCTIONS)


def bind_symbols() -> None:
    """Make libmvec's functions known to LLVM's JIT linker (once per process, before any
    kernel that calls them is loaded)."""
    for symbol, address in (libmvec() or {}).items():
        llvm.add_symbol(symbol, address)


def abi() -> str:
    """What compiled kernels depend on (part of the persistent cache's code version)."""
    return f"libmvec avx2 variants {','.join(_FUNCTIONS)}" if libmvec() is not None else "no libmvec"


def add_vector_variants(module: ir.Module) -> None:
    """Name libmvec's functions as vector variants of the C-library functions `module` declares
    as vectorizable (math_common.declare_libm), for LLVM's loop vectorizer; call it when the
    module is complete, before it is printed for compilation. Nothing where libmvec is not used."""
    if libmvec() is None:
        return
    kept = []
    for function in module.functions:
        if not function.is_declaration or "readnone" not in function.attributes:
            continue
        element = {"float": "f32", "double": "f64"}.get(str(function.function_type.return_type))
        name = function.name.removesuffix("f") if element == "f32" else function.name
        arity = _FUNCTIONS.get(name)
        if element is None or arity is None or len(function.function_type.args) != arity:
            continue
        scalar = function.function_type.return_type
        variants = []
        for (variant_element, lanes), _ in _VARIANTS.items():
            if variant_element != element:
                continue
            symbol = _symbol(name, element, lanes, arity)
            vector = ir.VectorType(scalar, lanes)
            kept.append(ir.Function(module, ir.FunctionType(vector, [vector] * arity), name=symbol))
            variants.append(f"{symbol}({symbol})")
        function.attributes = _WithVectorVariants(function.attributes, ",".join(variants))
    if kept:
        used = ir.GlobalVariable(module, ir.ArrayType(ir.PointerType(), len(kept)), "llvm.compiler.used")
        used.linkage, used.section = "appending", "llvm.metadata"
        used.initializer = ir.Constant(used.value_type, kept)


class _WithVectorVariants(ir.values.FunctionAttributes):
    """A declaration's attributes plus `vector-function-abi-variant` (a string attribute, which
    llvmlite's attribute sets do not take by name)."""

    def __init__(self, attributes: ir.values.FunctionAttributes, variants: str):
        super().__init__(sorted(attributes))
        self.variants = variants

    def _to_list(self, return_type):
        return [*super()._to_list(return_type), f'"vector-function-abi-variant"="{self.variants}"']
