"""NumPy's elementwise functions over strict HLO ops.

Promotion is NumPy's own: each function names the NumPy ufunc whose type resolution it
follows (`ufunc.resolve_dtypes`, with Python scalars passed as weak types, NEP 50), so dtypes
match NumPy 2 for every input combination. Then operands are converted, broadcast with
NumPy's rules and handed to the HLO op. Each row of `UFUNCS` is the whole definition of one
NumPy name.
"""

from __future__ import annotations

import operator

import numpy as np

from .. import dtypes
from ..hlo import Instruction, make
from ..shapes import broadcast_shapes
from .array import Array
from .core import as_array, broadcast_to, convert, is_python_scalar, scalar_constant, wrap


def _operand_dtype(value):
    """What NumPy's type resolution sees for an operand: a dtype, or a weak Python type."""
    if isinstance(value, Array):
        return value.dtype
    if is_python_scalar(value):
        return dtypes.weak_scalar_type(value)
    return as_array(value).dtype


def resolve(name: str, ufunc: np.ufunc, operands) -> tuple[tuple[np.dtype, ...], tuple[np.dtype, ...]]:
    """NumPy's loop for `ufunc` on these operands: (input dtypes, output dtypes)."""
    seen = tuple(_operand_dtype(value) for value in operands)
    try:
        resolved = ufunc.resolve_dtypes(seen + (None,) * ufunc.nout)
    except TypeError:
        shown = ", ".join(getattr(kind, "__name__", str(kind)) for kind in seen)
        raise TypeError(
            f"{name}: not supported for the input types ({shown}); NumPy's {ufunc.__name__} "
            "has no loop for them"
        ) from None
    inputs, outputs = resolved[: ufunc.nin], resolved[ufunc.nin :]
    for value, dtype in zip(operands, inputs):
        if is_python_scalar(value):
            dtypes.check_weak_scalar_fits(value, dtype, where=name)
    for dtype in inputs + outputs:
        if dtype not in dtypes.ALL:
            raise TypeError(f"{name}: NumPy would compute in {dtype}, which lazyarr does not support")
    return tuple(inputs), tuple(outputs)


def prepare(name: str, ufunc: np.ufunc, operands) -> tuple[list[Instruction], np.dtype]:
    """Resolve dtypes, convert and broadcast `operands`; return their nodes and the result dtype."""
    inputs, outputs = resolve(name, ufunc, operands)
    arrays = [None if is_python_scalar(value) else as_array(value, where=name) for value in operands]
    shape = broadcast_shapes(*(array.shape for array in arrays if array is not None), where=name)
    nodes = []
    for value, array, dtype in zip(operands, arrays, inputs):
        node = scalar_constant(value, dtype) if array is None else convert(array._node, dtype)
        nodes.append(broadcast_to(node, shape))
    return nodes, outputs[0]


def _op(hlo_name, **attrs):
    return lambda *nodes: make(hlo_name, nodes, **attrs)


def _compare(direction):
    return _op("compare", direction=direction)


def _identity(node):
    return node


def _square(node):
    return make("multiply", [node, node])


def _reciprocal(node):
    if dtypes.is_integer(node.dtype) or dtypes.is_bool(node.dtype):
        # NumPy's integer reciprocal is C's 1 / x; lazyarr's integer power defines x ** -1 alike.
        minus_one = broadcast_to(scalar_constant(-1, node.dtype), node.shape)
        return make("power", [node, minus_one])
    return make("reciprocal", [node])


def _logical(hlo_name):
    def build(*nodes):
        return make(hlo_name, [_truth(node) for node in nodes])

    return build


def _truth(node):
    if node.dtype == dtypes.bool_:
        return node
    zero = broadcast_to(scalar_constant(0, node.dtype), node.shape)
    return make("compare", [node, zero], direction="NE")


def _angle(node):
    return make("atan2", [make("imag", [node]), make("real", [node])])


# NumPy name -> (ufunc whose type resolution applies, builder from converted nodes)
UFUNCS = {
    "add": (np.add, _op("add")),
    "subtract": (np.subtract, _op("subtract")),
    "multiply": (np.multiply, _op("multiply")),
    "divide": (np.divide, _op("divide")),
    "true_divide": (np.true_divide, _op("divide")),
    "floor_divide": (np.floor_divide, _op("floor-divide")),
    "remainder": (np.remainder, _op("remainder")),
    "mod": (np.remainder, _op("remainder")),
    "power": (np.power, _op("power")),
    "pow": (np.power, _op("power")),
    "float_power": (np.float_power, _op("power")),
    "negative": (np.negative, _op("negate")),
    "positive": (np.positive, _identity),
    "absolute": (np.absolute, _op("abs")),
    "abs": (np.absolute, _op("abs")),
    "fabs": (np.fabs, _op("abs")),
    "sign": (np.sign, _op("sign")),
    "sqrt": (np.sqrt, _op("sqrt")),
    "cbrt": (np.cbrt, _op("cbrt")),
    "square": (np.square, _square),
    "reciprocal": (np.reciprocal, _reciprocal),
    "exp": (np.exp, _op("exp")),
    "exp2": (np.exp2, _op("exp2")),
    "expm1": (np.expm1, _op("expm1")),
    "log": (np.log, _op("log")),
    "log2": (np.log2, _op("log2")),
    "log10": (np.log10, _op("log10")),
    "log1p": (np.log1p, _op("log1p")),
    "sin": (np.sin, _op("sin")),
    "cos": (np.cos, _op("cos")),
    "tan": (np.tan, _op("tan")),
    "arcsin": (np.arcsin, _op("asin")),
    "arccos": (np.arccos, _op("acos")),
    "arctan": (np.arctan, _op("atan")),
    "asin": (np.arcsin, _op("asin")),
    "acos": (np.arccos, _op("acos")),
    "atan": (np.arctan, _op("atan")),
    "sinh": (np.sinh, _op("sinh")),
    "cosh": (np.cosh, _op("cosh")),
    "tanh": (np.tanh, _op("tanh")),
    "arcsinh": (np.arcsinh, _op("asinh")),
    "arccosh": (np.arccosh, _op("acosh")),
    "arctanh": (np.arctanh, _op("atanh")),
    "asinh": (np.arcsinh, _op("asinh")),
    "acosh": (np.arccosh, _op("acosh")),
    "atanh": (np.arctanh, _op("atanh")),
    "arctan2": (np.arctan2, _op("atan2")),
    "atan2": (np.arctan2, _op("atan2")),
    "hypot": (np.hypot, _op("hypot")),
    "floor": (np.floor, _op("floor")),
    "ceil": (np.ceil, _op("ceil")),
    "trunc": (np.trunc, _op("trunc")),
    "rint": (np.rint, _op("round-nearest-even")),
    "maximum": (np.maximum, _op("maximum")),
    "minimum": (np.minimum, _op("minimum")),
    "fmax": (np.fmax, _op("fmax")),
    "fmin": (np.fmin, _op("fmin")),
    "isnan": (np.isnan, _op("is-nan")),
    "isinf": (np.isinf, _op("is-inf")),
    "isfinite": (np.isfinite, _op("is-finite")),
    "signbit": (np.signbit, _op("signbit")),
    "copysign": (np.copysign, _op("copysign")),
    "nextafter": (np.nextafter, _op("nextafter")),
    "logaddexp": (np.logaddexp, _op("logaddexp")),
    "logical_and": (np.logical_and, _logical("and")),
    "logical_or": (np.logical_or, _logical("or")),
    "logical_xor": (np.logical_xor, _logical("xor")),
    "logical_not": (np.logical_not, _logical("not")),
    "bitwise_and": (np.bitwise_and, _op("and")),
    "bitwise_or": (np.bitwise_or, _op("or")),
    "bitwise_xor": (np.bitwise_xor, _op("xor")),
    "invert": (np.invert, _op("not")),
    "bitwise_not": (np.invert, _op("not")),
    "bitwise_invert": (np.invert, _op("not")),
    "left_shift": (np.left_shift, _op("shift-left")),
    "right_shift": (np.right_shift, _op("shift-right")),
    "bitwise_left_shift": (np.left_shift, _op("shift-left")),
    "bitwise_right_shift": (np.right_shift, _op("shift-right")),
    "equal": (np.equal, _compare("EQ")),
    "not_equal": (np.not_equal, _compare("NE")),
    "less": (np.less, _compare("LT")),
    "less_equal": (np.less_equal, _compare("LE")),
    "greater": (np.greater, _compare("GT")),
    "greater_equal": (np.greater_equal, _compare("GE")),
    "conjugate": (np.conjugate, _op("conj")),
    "conj": (np.conjugate, _op("conj")),
}


def apply(name: str, *operands) -> Array:
    """Call the NumPy-named elementwise function `name` on lazy/NumPy/Python operands."""
    ufunc, build = UFUNCS[name]
    if len(operands) != ufunc.nin:
        raise TypeError(f"{name}() takes {ufunc.nin} positional arguments, got {len(operands)}")
    nodes, result_dtype = prepare(name, ufunc, operands)
    if ufunc is np.power and dtypes.is_integer(result_dtype) and _is_negative_int(operands[1]):
        raise ValueError(f"{name}: Integers to negative integer powers are not allowed.")
    result = build(*nodes)
    if result.dtype != result_dtype:
        result = convert(result, result_dtype)
    return wrap(result)


def _is_negative_int(value) -> bool:
    """A negative Python int exponent is known now; NumPy refuses it for integer bases."""
    return isinstance(value, int) and not isinstance(value, bool) and value < 0


def _define(name):
    ufunc = UFUNCS[name][0]
    if ufunc.nin == 1:
        def function(x, /):
            return apply(name, x)
    else:
        def function(x1, x2, /):
            return apply(name, x1, x2)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"Lazy `numpy.{ufunc.__name__}`: same dtypes, broadcasting and values."
    return function


add = _define("add")
subtract = _define("subtract")
multiply = _define("multiply")
divide = _define("divide")
true_divide = _define("true_divide")
floor_divide = _define("floor_divide")
remainder = _define("remainder")
mod = _define("mod")
power = _define("power")
pow = _define("pow")
float_power = _define("float_power")
negative = _define("negative")
positive = _define("positive")
absolute = _define("absolute")
abs = _define("abs")
fabs = _define("fabs")
sign = _define("sign")
sqrt = _define("sqrt")
cbrt = _define("cbrt")
square = _define("square")
reciprocal = _define("reciprocal")
exp = _define("exp")
exp2 = _define("exp2")
expm1 = _define("expm1")
log = _define("log")
log2 = _define("log2")
log10 = _define("log10")
log1p = _define("log1p")
sin = _define("sin")
cos = _define("cos")
tan = _define("tan")
arcsin = _define("arcsin")
arccos = _define("arccos")
arctan = _define("arctan")
asin = _define("asin")
acos = _define("acos")
atan = _define("atan")
sinh = _define("sinh")
cosh = _define("cosh")
tanh = _define("tanh")
arcsinh = _define("arcsinh")
arccosh = _define("arccosh")
arctanh = _define("arctanh")
asinh = _define("asinh")
acosh = _define("acosh")
atanh = _define("atanh")
arctan2 = _define("arctan2")
atan2 = _define("atan2")
hypot = _define("hypot")
floor = _define("floor")
ceil = _define("ceil")
trunc = _define("trunc")
rint = _define("rint")
maximum = _define("maximum")
minimum = _define("minimum")
fmax = _define("fmax")
fmin = _define("fmin")
isnan = _define("isnan")
isinf = _define("isinf")
isfinite = _define("isfinite")
signbit = _define("signbit")
copysign = _define("copysign")
nextafter = _define("nextafter")
logaddexp = _define("logaddexp")
logical_and = _define("logical_and")
logical_or = _define("logical_or")
logical_xor = _define("logical_xor")
logical_not = _define("logical_not")
bitwise_and = _define("bitwise_and")
bitwise_or = _define("bitwise_or")
bitwise_xor = _define("bitwise_xor")
invert = _define("invert")
bitwise_not = _define("bitwise_not")
bitwise_invert = _define("bitwise_invert")
left_shift = _define("left_shift")
right_shift = _define("right_shift")
bitwise_left_shift = _define("bitwise_left_shift")
bitwise_right_shift = _define("bitwise_right_shift")
equal = _define("equal")
not_equal = _define("not_equal")
less = _define("less")
less_equal = _define("less_equal")
greater = _define("greater")
greater_equal = _define("greater_equal")
conjugate = _define("conjugate")
conj = _define("conj")


def real(x, /) -> Array:
    """Real part (the array itself for real dtypes)."""
    array = as_array(x, where="real")
    return wrap(make("real", [array._node])) if dtypes.is_complex(array.dtype) else array


def imag(x, /) -> Array:
    """Imaginary part (zeros for real dtypes)."""
    array = as_array(x, where="imag")
    return wrap(make("imag", [array._node]))


def angle(z, deg: bool = False) -> Array:
    """Angle of complex numbers (NumPy's angle); `deg` gives degrees."""
    array = as_array(z, where="angle")
    if not dtypes.is_inexact(array.dtype):
        array = wrap(convert(array._node, dtypes.float64))
    if dtypes.is_complex(array.dtype):
        result = wrap(_angle(array._node))
    else:
        zero = broadcast_to(scalar_constant(0, array.dtype), array.shape)
        result = wrap(make("atan2", [zero, array._node]))
    return multiply(result, 180 / np.pi) if deg else result


def where(condition, x=None, y=None, /) -> Array:
    """NumPy's where(condition, x, y); the one-argument form is nonzero (evaluates)."""
    if x is None and y is None:
        from .searching import nonzero

        return nonzero(condition)
    if x is None or y is None:
        raise ValueError("where: either both or neither of x and y should be given")
    condition = as_array(condition, where="where")
    kinds = [value if is_python_scalar(value) else as_array(value, where="where").dtype for value in (x, y)]
    result_dtype = dtypes.result_type(*kinds)
    for value in (x, y):
        if is_python_scalar(value):
            dtypes.check_weak_scalar_fits(value, result_dtype, where="where")
    arrays = [condition] + [None if is_python_scalar(v) else as_array(v, where="where") for v in (x, y)]
    shape = broadcast_shapes(*(a.shape for a in arrays if a is not None), where="where")
    predicate = broadcast_to(_truth(condition._node), shape)
    branches = [
        broadcast_to(
            scalar_constant(value, result_dtype) if array is None else convert(array._node, result_dtype),
            shape,
        )
        for value, array in zip((x, y), arrays[1:])
    ]
    return wrap(make("select", [predicate] + branches))


def clip(x, /, min=None, max=None) -> Array:  # noqa: A002 (NumPy's and the array API's names)
    """NumPy's clip: maximum(x, min) then minimum(..., max); NaN in x propagates."""
    result = as_array(x, where="clip")
    if min is not None:
        result = maximum(result, min)
    if max is not None:
        result = minimum(result, max)
    return result


def round(x, /, decimals: int = 0) -> Array:  # noqa: A001
    """Round half to even to `decimals` places, as NumPy's round (scale, rint, unscale)."""
    decimals = operator.index(decimals)
    array = as_array(x, where="round")
    if dtypes.is_integer(array.dtype) or dtypes.is_bool(array.dtype):
        if decimals >= 0:
            return array
        raise NotImplementedError("round: negative decimals on integer arrays are not supported yet")
    if decimals == 0:
        return rint(array)
    scale = 10.0 ** abs(decimals)
    if decimals > 0:
        return divide(rint(multiply(array, scale)), scale)
    return multiply(rint(divide(array, scale)), scale)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False) -> Array:
    """|a - b| <= atol + rtol * |b|, as NumPy's isclose (infinities equal only to themselves)."""
    a, b = as_array(a, where="isclose"), as_array(b, where="isclose")
    kind = dtypes.result_type(a, b, 1.0)
    a, b = wrap(convert(a._node, kind)), wrap(convert(b._node, kind))
    finite = logical_and(isfinite(a), isfinite(b))
    close = less_equal(absolute(subtract(a, b)), add(atol, multiply(rtol, absolute(b))))
    result = where(finite, close, equal(a, b))
    if equal_nan:
        result = logical_or(result, logical_and(isnan(a), isnan(b)))
    return result


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """Whether every element is close (evaluates)."""
    from .reductions import all as all_

    return bool(all_(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))
