"""Vector math from glibc's libmvec: C-library math functions inside vectorized loops.

Most math functions have branch-free polynomials of lazyarr's own (math.py), which vectorize
with the loop around them. The rest (tan, arcsin, arccos, arctan, sinh, cosh, arcsinh,
arccosh, arctanh, cbrt, arctan2, power) are calls to the C library, and a call keeps
its loop scalar: 10^6 float32 `arctan` took 2.15 ns an element against NumPy's SIMD loop's
0.40, `cbrt` 6.1 against 0.30. glibc's libmvec has vector versions of them (`_ZGVdN8v_atanf`:
eight floats in an AVX2 register, at most ~3 ULP here).

How they are reached, since llvmlite's pass pipeline takes no vector library: the library
call is declared as touching no memory (these functions set errno, which lazyarr never reads),
and before a kernel module is compiled `add_vector_variants` sends its calls to a small
function of the module's own that computes the value with libmvec's AVX2 function (the
argument in every lane, lane 0 of the result), and names that AVX2 function as its vector
variant in LLVM's `vector-function-abi-variant` attribute, as OpenMP's `declare simd` does.
The loop vectorizer then calls libmvec for 8 floats or 4 doubles at a time, and the elements
left over (a loop's remainder, a loop LLVM keeps scalar) get the same function's value: an
element's result never depends on its position, the array's length or the thread count, as
it would if the remainder called the C library's scalar function (which can differ in the
last bit). Where libmvec is missing (another C library, another architecture, a CPU without
AVX2 and FMA) nothing changes: the calls stay scalar. LAZYARR_LIBMVEC=0 turns it off.
"""

from __future__ import annotations

import ctypes
import functools
import os
import platform

import llvmlite.binding as llvm
import llvmlite.ir as ir

# C library name (float32 and float64 both) -> arity.
# Not hypot: glibc's is correctly rounded, and complex `abs` and `sign` give NumPy's values bit
# for bit with it (libmvec's is 1 ULP off at times); it is faster than NumPy's already.
_FUNCTIONS = {
    "atan": 1, "asin": 1, "acos": 1, "tan": 1, "sinh": 1, "cosh": 1, "asinh": 1, "acosh": 1, "atanh": 1,
    "cbrt": 1, "atan2": 2, "pow": 2,
}
# element type -> lanes of libmvec's AVX2 functions ('d' in the x86-64 vector ABI's names).
_LANES = {"f32": 8, "f64": 4}


def _symbol(name: str, element: str, arity: int) -> str:
    return f"_ZGVdN{_LANES[element]}{'v' * arity}_{name}{'f' if element == 'f32' else ''}"


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
        for element in _LANES:
            symbol = _symbol(name, element, arity)
            try:
                addresses[symbol] = ctypes.cast(getattr(library, symbol), ctypes.c_void_p).value
            except AttributeError:
                return None  # an older glibc: all or nothing, so every kernel compiles the same way
    return addresses


def vectorizable(c_name: str) -> bool:
    """Whether calls to the C library's `c_name` (`atanf`, `pow`, `cbrt`, ...) may be declared
    as touching no memory, to be computed by libmvec's functions (add_vector_variants)."""
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
    """Send the calls of each C-library function `module` declares as vectorizable
    (math_common.declare_libm) to `lazyarr_vector_<name>`, defined here with libmvec's AVX2
    function (see the module docstring); call it when the module is complete, before it is
    printed for compilation. Nothing where libmvec is not used."""
    if libmvec() is None:
        return
    replacements = {}
    for function in module.functions:
        if not function.is_declaration or "readnone" not in function.attributes:
            continue
        element = {"float": "f32", "double": "f64"}.get(str(function.function_type.return_type))
        name = function.name.removesuffix("f") if element == "f32" else function.name
        arity = _FUNCTIONS.get(name)
        if element is None or arity is None or len(function.function_type.args) != arity:
            continue
        replacements[function] = _one_lane_function(module, function, name, element)
    if not replacements:
        return
    for function in module.functions:
        for block in function.blocks:
            for instruction in block.instructions:
                if isinstance(instruction, ir.CallInstr) and instruction.callee in replacements:
                    instruction.replace_callee(replacements[instruction.callee])


def _one_lane_function(module: ir.Module, scalar: ir.Function, name: str, element: str) -> ir.Function:
    """`lazyarr_vector_<scalar>`: libmvec's AVX2 `name` on the arguments in every lane, lane 0
    of its result; its vector variant is that AVX2 function itself. Internal, never inlined
    (the loop vectorizer widens calls to it, and would not see through an inlined body)."""
    scalar_type = scalar.function_type.return_type
    arity, lanes = len(scalar.function_type.args), _LANES[element]
    symbol = _symbol(name, element, arity)
    vector_type = ir.VectorType(scalar_type, lanes)
    vector_function = ir.Function(module, ir.FunctionType(vector_type, [vector_type] * arity), name=symbol)
    function = ir.Function(module, scalar.function_type, name=f"lazyarr_vector_{scalar.name}")
    function.linkage = "internal"
    function.attributes = _WithVectorVariant(f"_ZGVdN{lanes}{'v' * arity}_{function.name}({symbol})")
    builder = ir.IRBuilder(function.append_basic_block("entry"))
    every_lane = ir.Constant(ir.VectorType(ir.IntType(32), lanes), [0] * lanes)
    splats = [builder.shuffle_vector(builder.insert_element(ir.Constant(vector_type, ir.Undefined), argument,
                                                            ir.Constant(ir.IntType(32), 0)),
                                     ir.Constant(vector_type, ir.Undefined), every_lane)
              for argument in function.args]
    result = builder.call(vector_function, splats)
    builder.ret(builder.extract_element(result, ir.Constant(ir.IntType(32), 0)))
    return function


class _WithVectorVariant(ir.values.FunctionAttributes):
    """Touches no memory, never inlined, plus `vector-function-abi-variant` (a string
    attribute, which llvmlite's attribute sets do not take by name)."""

    def __init__(self, variant: str):
        super().__init__(["readnone", "nounwind", "noinline"])
        self.variant = variant

    def _to_list(self, return_type):
        return [*super()._to_list(return_type), f'"vector-function-abi-variant"="{self.variant}"']
