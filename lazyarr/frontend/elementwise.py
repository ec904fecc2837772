"""NumPy's elementwise functions over strict HLO ops.

Promotion is NumPy's own: each function names the NumPy ufunc whose type resolution it
follows (`ufunc.resolve_dtypes`, with Python scalars passed as weak types, NEP 50), so dtypes
match NumPy 2 for every input combination. Then operands are converted, broadcast with
NumPy's rules and handed to the HLO op. Each row of `UFUNCS` is the whole definition of one
NumPy name.
"""

from __future__ import annotations

import builtins
import functools
import operator

import numpy as np

from .. import dtypes
from ..hlo import Instruction, Maker, make, make_plain
from ..hlo import get as get_op
from ..shapes import broadcast_shapes
from . import direct_recording as _direct
from . import elements
from .array import Array
from .core import as_array, broadcast_to, convert, is_python_scalar, scalar_constant, wrap
from .elements import Element
from .templated_calls import replayed
from .ufunc import make_ufunc
from .views import make_view, read_only


def _operand_dtype(value):
    """What NumPy's type resolution sees for an operand: a dtype, or a weak Python type."""
    if isinstance(value, Array):
        return value.dtype
    if is_python_scalar(value):
        kind = dtypes.weak_scalar_type(value)
        # resolve_dtypes takes int, float and complex as weak types; a Python bool is plain bool.
        return dtypes.bool_ if kind is bool else kind
    return as_array(value, placed=False).dtype


@functools.lru_cache(maxsize=4096)
def _resolve_loop(name: str, ufunc: np.ufunc, seen: tuple) -> tuple[tuple, tuple]:
    """NumPy's loop for `ufunc` given operand dtypes / weak Python types (cached: it is hot)."""
    try:
        resolved = ufunc.resolve_dtypes(seen + (None,) * ufunc.nout)
    except TypeError:
        shown = ", ".join(getattr(kind, "__name__", str(kind)) for kind in seen)
        raise TypeError(
            f"{name}: not supported for the input types ({shown}); NumPy's {ufunc.__name__} "
            "has no loop for them"
        ) from None
    inputs, outputs = tuple(resolved[: ufunc.nin]), tuple(resolved[ufunc.nin :])
    for dtype in inputs + outputs:
        if dtype not in dtypes.SUPPORTED:
            raise TypeError(f"{name}: NumPy would compute in {dtype}, which lazyarr does not support")
    return inputs, outputs


def resolve(name: str, ufunc: np.ufunc, operands) -> tuple[tuple[np.dtype, ...], tuple[np.dtype, ...]]:
    """NumPy's loop for `ufunc` on these operands: (input dtypes, output dtypes)."""
    inputs, outputs = _resolve_loop(name, ufunc, tuple(_operand_dtype(value) for value in operands))
    for value, dtype in zip(operands, inputs):
        if is_python_scalar(value):
            # A Python int meeting a bool loop goes through a C long in NumPy: int64's range.
            bound = dtypes.int64 if dtypes.is_bool(dtype) and type(value) is int else dtype
            dtypes.check_weak_scalar_fits(value, bound, where=name)
    return inputs, outputs


# Exactly these types are NumPy's weak Python scalars (np.float64, a float subclass, is not).
_WEAK_TYPES = frozenset({bool, int, float, complex})
# (name, then per operand: dtype and shape of an array, or a weak scalar's type) -> (input
# dtypes, result dtype, broadcast shape): everything `prepare` decides depends only on these.
_PREPARED: dict[tuple, tuple] = {}


def prepare(name: str, ufunc: np.ufunc, operands) -> tuple[list[Instruction], np.dtype]:
    """Resolve dtypes, convert and broadcast `operands`; return their nodes and the result dtype.

    Hot (every recorded elementwise op): lazy arrays and Python scalars take a plan memoized
    under a flat key (name, then per operand its dtype and shape, or its Python type)."""
    signature = (name,)
    for value in operands:
        kind = type(value)
        if kind is Array:
            node = value._node
            signature += (node.dtype, node.shape)
        elif kind in _WEAK_TYPES:
            signature += (kind,)
        else:
            return _prepare(name, ufunc, operands)
    plan = _PREPARED.get(signature)
    if plan is None:
        nodes, result = _prepare(name, ufunc, operands)  # raises for bad input: nothing memoized
        if len(_PREPARED) >= 4096:
            _PREPARED.clear()
        _PREPARED[signature] = (resolve(name, ufunc, operands)[0], result,
                                broadcast_shapes(*(node.shape for node in nodes)))
        return nodes, result
    inputs, result, shape = plan
    nodes = []
    for value, dtype in zip(operands, inputs):
        if type(value) is Array:
            node = value._node
            if node.dtype is not dtype:
                node = convert(node, dtype)
            if node.shape != shape:
                node = broadcast_to(node, shape)
        else:
            if type(value) is int:
                # A Python int meeting a bool loop goes through a C long in NumPy: int64's range.
                dtypes.check_weak_scalar_fits(value, dtypes.int64 if dtypes.is_bool(dtype) else dtype, where=name)
            node = scalar_constant(value, dtype)
            if shape:
                node = _direct.broadcast_constant(node, shape)
        nodes.append(node)
    return nodes, result


def _prepare(name: str, ufunc: np.ufunc, operands) -> tuple[list[Instruction], np.dtype]:
    inputs, outputs = resolve(name, ufunc, operands)
    arrays = [None if is_python_scalar(value) else as_array(value, where=name) for value in operands]
    shape = broadcast_shapes(*(array.shape for array in arrays if array is not None), where=name)
    nodes = []
    for value, array, dtype in zip(operands, arrays, inputs):
        node = scalar_constant(value, dtype) if array is None else convert(array._node, dtype)
        nodes.append(broadcast_to(node, shape))
    return nodes, outputs[0]


def _op(hlo_name, **attrs):
    if attrs:
        return lambda *nodes: make(hlo_name, nodes, **attrs)
    opdef = get_op(hlo_name)
    return lambda *nodes: make_plain(opdef, nodes)


def _compare(direction):
    compare = Maker("compare", direction=direction)

    def build(left, right):
        if left.dtype != right.dtype:
            return _mixed_sign_compare(direction, left, right)
        return compare(left, right)

    return build


_MIRRORED = {"EQ": "EQ", "NE": "NE", "LT": "GT", "LE": "GE", "GT": "LT", "GE": "LE"}


def _mixed_sign_compare(direction, left, right):
    """int64 against uint64, exactly as NumPy 2 compares them (no common dtype holds both).

    A negative signed value is below every unsigned one; otherwise both fit uint64.
    """
    if dtypes.is_unsigned_integer(left.dtype):
        left, right, direction = right, left, _MIRRORED[direction]
    zero = broadcast_to(scalar_constant(0, left.dtype), left.shape)
    negative = make("compare", [left, zero], direction="LT")
    unsigned = make("compare", [convert(left, right.dtype), right], direction=direction)
    if direction in ("NE", "LT", "LE"):
        return make("or", [negative, unsigned])
    return make("and", [make("not", [negative]), unsigned])


_COMPARISON_UFUNCS = {
    np.equal: "EQ", np.not_equal: "NE", np.less: "LT",
    np.less_equal: "LE", np.greater: "GT", np.greater_equal: "GE",
}


def _compare_out_of_range(name, ufunc, operands):
    """NumPy 2 compares a Python int outside the integer dtype it meets mathematically (no
    OverflowError): `int8_array < 300` is all True. The answer is one constant; None if no
    operand is such an int."""
    if len(operands) != 2 or is_python_scalar(operands[0]) == is_python_scalar(operands[1]):
        return None
    position = 0 if is_python_scalar(operands[0]) else 1
    value = operands[position]
    if type(value) is not int:
        return None  # NumPy's exact comparison is for Python ints meeting integer arrays
    array = as_array(operands[1 - position], where=name)
    inputs, _ = _resolve_loop(name, ufunc, tuple(_operand_dtype(operand) for operand in operands))
    if not (dtypes.is_integer(array.dtype) and dtypes.is_integer(inputs[position])):
        return None  # (bool arrays go through int64)
    low, high = dtypes.integer_range(inputs[position])
    if low <= value <= high:
        return None
    info = np.iinfo(inputs[position])
    direction = _COMPARISON_UFUNCS[ufunc]
    if position == 0:
        direction = _MIRRORED[direction]  # now: array <direction> value
    above = value > info.max
    outcome = {"EQ": False, "NE": True, "LT": above, "LE": above, "GT": not above, "GE": not above}
    return wrap(broadcast_to(scalar_constant(outcome[direction], dtypes.bool_), array.shape))


def _identity(node):
    return node


def _square(node):
    return make("multiply", [node, node])


def _reciprocal(node):
    if dtypes.is_integer(node.dtype):
        # NumPy's integer loop is C's `(type)(1.0 / x)`: in double, then cast (1 / 0 -> INT_MIN).
        return convert(make("reciprocal", [convert(node, dtypes.float64)]), node.dtype)
    return make("reciprocal", [node])


def _ldexp(mantissa, exponent):
    """NumPy's ldexp loops: C's ldexp takes an int, so an int64 exponent is clamped to int32's
    range first (NumPy's `ldexp_int64` does the same; any exponent that far out saturates)."""
    if exponent.dtype == dtypes.int64:
        low, high = (broadcast_to(scalar_constant(bound, dtypes.int64), exponent.shape)
                     for bound in dtypes.integer_range(dtypes.int32))
        exponent = convert(make("clamp", [low, exponent, high]), dtypes.int32)
    return make("ldexp", [mantissa, exponent])


def _bitwise_count(node):
    """NumPy's npy_popcount: the set bits of |x| (the most negative value is its own |x|)."""
    if dtypes.is_signed_integer(node.dtype):
        node = make("abs", [node])
    return make("popcount", [node])


def _logical(hlo_name):
    def build(*nodes):
        return make(hlo_name, [_truth(node) for node in nodes])

    return build


def _truth(node):
    if node.dtype == dtypes.bool_:
        return node
    zero = broadcast_to(scalar_constant(0, node.dtype), node.shape)
    return make("compare", [node, zero], direction="NE")


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
    "fmod": (np.fmod, _op("fmod")),
    "gcd": (np.gcd, _op("gcd")),
    "lcm": (np.lcm, _op("lcm")),
    "ldexp": (np.ldexp, _ldexp),
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
    "spacing": (np.spacing, _op("spacing")),
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
    "bitwise_count": (np.bitwise_count, _bitwise_count),
    "equal": (np.equal, _compare("EQ")),
    "not_equal": (np.not_equal, _compare("NE")),
    "less": (np.less, _compare("LT")),
    "less_equal": (np.less_equal, _compare("LE")),
    "greater": (np.greater, _compare("GT")),
    "greater_equal": (np.greater_equal, _compare("GE")),
    "conjugate": (np.conjugate, _op("conj")),
    "conj": (np.conjugate, _op("conj")),
}


def binary(name: str, x1, x2) -> Array:
    """`apply(name, x1, x2)`: the hot path of operators and two-operand functions, through the
    memoized direct path first (direct_recording.py)."""
    result = _direct.record_binary(name, x1, x2)
    if result is not None:
        return result
    if ((isinstance(x1, _NUMPY_VALUES) or isinstance(x2, _NUMPY_VALUES))
            and type(x1) is not Element and type(x2) is not Element):  # (an element: NumPy's scalar math, in apply)
        x1, x2 = numpy_scalar_operand(x1), numpy_scalar_operand(x2)
        result = _direct.record_binary(name, x1, x2)
        if result is not None:
            return result
    return apply(name, x1, x2)


_NUMPY_VALUES = (np.generic, np.ndarray)


def numpy_scalar_operand(value):
    """A NumPy scalar operand (`x * np.float32(0.5)`, a value read from a NumPy array) as what
    NumPy 2 takes it for, a 0-d array of its own dtype (NEP 50: NumPy scalars are not weak),
    made the interned constant of its bytes: the direct path then records the op again, and a
    new value per loop iteration is a constant lifted to a runtime argument, not a new compile.
    A 0-d NumPy array likewise (NumPy's scalar operators hand one to `__array_ufunc__`:
    `np.float32(1) < x`). It was a fresh copied leaf every time, recorded in ~35 us. Anything
    else is returned as it is."""
    kind = type(value)
    node = NUMPY_SCALAR_CONSTANTS.get((kind, value)) if kind in NUMPY_SCALAR_TYPES else None
    if node is not None:
        return Array(node)
    if kind is np.ndarray:
        if value.ndim or value.dtype not in dtypes.SUPPORTED:
            return value
        value = value[()]
    elif not isinstance(value, np.generic) or value.dtype not in dtypes.SUPPORTED:
        return value
    node = scalar_constant(value, value.dtype)
    if value and value == value:  # (by value: 0.0 == -0.0 and NaN != NaN go by their bits, each time)
        if len(NUMPY_SCALAR_CONSTANTS) >= 1024:
            NUMPY_SCALAR_CONSTANTS.clear()
        NUMPY_SCALAR_CONSTANTS[type(value), value] = node
    return Array(node)


# (NumPy scalar type, value) -> its constant (numpy_scalar_operand: a loop's `lr * g`).
NUMPY_SCALAR_CONSTANTS: dict[tuple, Instruction] = {}
NUMPY_SCALAR_TYPES = frozenset(dtype.type for dtype in dtypes.SUPPORTED)


def unary(name: str, x) -> Array:
    """`apply(name, x)`: the hot path of one-operand functions and operators."""
    result = _direct.record_unary(name, x)
    return apply(name, x) if result is None else result


def apply(name: str, *operands) -> Array:
    """Call the NumPy-named elementwise function `name` on lazy/NumPy/Python operands."""
    ufunc, build = UFUNCS[name]
    if len(operands) != ufunc.nin:
        raise TypeError(f"{name}() takes {ufunc.nin} positional arguments, got {len(operands)}")
    if type(operands[0]) is Element or (len(operands) == 2 and type(operands[1]) is Element):
        computed = elements.compute(ufunc, operands)  # known scalars: NumPy's scalar math, now
        if computed is not None:
            return computed
    if ufunc in _COMPARISON_UFUNCS:
        answer = _compare_out_of_range(name, ufunc, operands)
        if answer is not None:
            return answer
    nodes, result_dtype = prepare(name, ufunc, operands)
    result = build(*nodes)
    if ufunc is np.power and dtypes.is_integer(result_dtype) and _is_negative_int(operands[1]) and result.size:
        raise ValueError(f"{name}: Integers to negative integer powers are not allowed.")  # empty: no element to refuse
    if result.dtype is not result_dtype and result.dtype != result_dtype:
        result = convert(result, result_dtype)
    else:
        _direct.remember(name, ufunc, operands, nodes, result)
    return Array(result)


def _is_negative_int(value) -> bool:
    """A negative integer exponent known now (a Python int, or an element: a read of an
    evaluated array, `x ** a[i]`), or one among the values of an integer NumPy array or
    evaluated host array; NumPy refuses it for integer bases. (An exponent still pending is
    not evaluated for this check: its kernel gives 0 where NumPy would raise.)"""
    if type(value) is Element:
        known = value._value
        return known is not None and known.dtype.kind in "iu" and known < 0
    if isinstance(value, Array):
        node = value._node
        value = node.attr("literal").array if node.op.name == "constant" else node._bound
    if isinstance(value, (np.ndarray, np.signedinteger)):
        return value.dtype.kind == "i" and bool((value < 0).any())
    return isinstance(value, int) and not isinstance(value, bool) and value < 0


def _define(name):
    ufunc = UFUNCS[name][0]
    if ufunc.nin == 1:
        def function(x, /):
            return unary(name, x)
    else:
        def function(x1, x2, /):
            return binary(name, x1, x2)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"Lazy `numpy.{ufunc.__name__}`: same dtypes, broadcasting and values."
    return make_ufunc(name, ufunc, function)  # adds NumPy's ufunc methods (reduce, at, ...)


add = _define("add")
subtract = _define("subtract")
multiply = _define("multiply")
divide = _define("divide")
true_divide = _define("true_divide")
floor_divide = _define("floor_divide")
remainder = _define("remainder")
fmod = _define("fmod")
gcd = _define("gcd")
lcm = _define("lcm")
ldexp = _define("ldexp")
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
spacing = _define("spacing")
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
bitwise_count = _define("bitwise_count")
equal = _define("equal")
not_equal = _define("not_equal")
less = _define("less")
less_equal = _define("less_equal")
greater = _define("greater")
greater_equal = _define("greater_equal")
conjugate = _define("conjugate")
conj = _define("conj")


def real(x, /) -> Array:
    """Real part (the array itself for real dtypes). Of a complex array, a view as in NumPy:
    `z.real[...] = 0` writes the real parts of `z`."""
    array = as_array(x, where="real")
    if not dtypes.is_complex(array.dtype):
        return array
    return make_view(
        array, lambda base: make("real", [base]),
        lambda base, value: make("complex", [value, make("imag", [base])]),
        layout=lambda dummy: dummy.real,
    )


def imag(x, /) -> Array:
    """Imaginary part. Of a complex array, a view as in NumPy (`z.imag[...] = 0` writes `z`);
    of a real array, zeros that refuse writes (NumPy's are read-only)."""
    array = as_array(x, where="imag")
    if dtypes.is_complex(array.dtype):
        return make_view(
            array, lambda base: make("imag", [base]),
            lambda base, value: make("complex", [make("real", [base]), value]),
            layout=lambda dummy: dummy.imag,
        )
    zeros = Array(make("imag", [array._node]))
    return make_view(zeros, lambda base: base, None, layout=lambda dummy: dummy,
                     refusal=read_only("imag of a real array"))


def angle(z, deg: bool = False) -> Array:
    """Angle of complex numbers (NumPy's angle); `deg` gives degrees.

    As NumPy, real input computes arctan2(0, z) with a weak 0, so int8 gives float16.
    """
    array = as_array(z, where="angle")
    if dtypes.is_complex(array.dtype):
        result = arctan2(imag(array), real(array))
    else:
        result = arctan2(0, array)
    return multiply(result, 180 / np.pi) if deg else result


def where(condition, x=None, y=None, /) -> Array:
    """NumPy's where(condition, x, y); the one-argument form is nonzero (evaluates)."""
    if x is None and y is None:
        from .searching import nonzero

        return nonzero(condition)
    if x is None or y is None:
        raise ValueError("where: either both or neither of x and y should be given")
    result = replayed("where", _where, (condition, x, y))
    return result if result is not None else _where(condition, x, y)


def _where(condition, x, y) -> Array:
    condition = as_array(condition, where="where")
    kinds = [value if is_python_scalar(value) else as_array(value, where="where", placed=False).dtype
             for value in (x, y)]
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
    """NumPy's clip: the result dtype promotes all three; NaN in any operand propagates.

    As NumPy, a Python int bound beyond an integer array's range is dropped (it clips nothing),
    one missing bound makes it minimum/maximum, and two bounds use NumPy's clip loop (clamp).
    """
    result = replayed("clip", _clip, (x, min, max))
    return result if result is not None else _clip(x, min, max)


def _clip(x, min, max) -> Array:  # noqa: A002
    array = as_array(x, where="clip")
    if dtypes.is_integer(array.dtype):
        info = np.iinfo(array.dtype)
        if type(min) is int and min <= info.min:
            min = None
        if type(max) is int and max >= info.max:
            max = None
    if min is None and max is None:
        return positive(array)
    if min is None:
        return minimum(array, max)
    if max is None:
        return maximum(array, min)
    operands = [value if is_python_scalar(value) else as_array(value, where="clip")
                for value in (min, array, max)]
    result_dtype = dtypes.result_type(*operands)
    for value in operands:
        if is_python_scalar(value):
            dtypes.check_weak_scalar_fits(value, result_dtype, where="clip")
    shape = broadcast_shapes(*(value.shape for value in operands if isinstance(value, Array)), where="clip")
    nodes = [
        broadcast_to(
            scalar_constant(value, result_dtype) if is_python_scalar(value)
            else convert(value._node, result_dtype),
            shape,
        )
        for value in operands
    ]
    return wrap(make("clamp", nodes))


def round(x, /, decimals: int = 0) -> Array:  # noqa: A001
    """Round half to even to `decimals` places, as NumPy's round.

    NumPy's algorithm, step for step: scale by 10**decimals in the array's dtype (integers in
    float64, cast back), rint, unscale; complex rounds its real and imaginary parts separately.
    """
    decimals = operator.index(decimals)
    array = as_array(x, where="round")
    if dtypes.is_complex(array.dtype):
        parts = (round(real(array), decimals), round(imag(array), decimals))
        return wrap(make("complex", [part._node for part in parts]))
    if dtypes.is_integer(array.dtype) and decimals >= 0:
        return array
    if decimals == 0:
        return rint(array)  # bool rounds to float16, as NumPy's rint
    if dtypes.is_bool(array.dtype):
        raise TypeError(
            f"round: decimals={decimals} is not supported for bool arrays (NumPy cannot store "
            "the scaled values back in bool); convert to a numeric dtype first"
        )
    scale = 10.0 ** builtins.abs(decimals)
    if decimals > 0:
        result = divide(rint(multiply(array, scale)), scale)
    else:
        result = multiply(rint(divide(array, scale)), scale)
    return wrap(convert(result._node, array.dtype))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False) -> Array:
    """NumPy's isclose: (|a - b| <= atol + rtol * |b| and b finite) or a == b.

    As NumPy, only b is converted (to result_type(b, 1.0)) and Python scalars stay weak, so
    atol and rtol act in b's precision.
    """
    a, b, rtol, atol = (
        value if is_python_scalar(value) else as_array(value, where="isclose") for value in (a, b, rtol, atol)
    )
    if isinstance(b, Array):
        b = wrap(convert(b._node, dtypes.result_type(b, 1.0)))
    elif isinstance(b, int):
        b = float(b)
    if all(is_python_scalar(value) for value in (b, rtol, atol)):
        tolerance = atol + rtol * builtins.abs(b)  # Python arithmetic, as in NumPy: stays weak
    else:
        tolerance = add(atol, multiply(rtol, absolute(b)))
    close = logical_and(less_equal(absolute(subtract(a, b)), tolerance), isfinite(b))
    result = logical_or(close, equal(a, b))
    if equal_nan:
        result = logical_or(result, logical_and(isnan(a), isnan(b)))
    return result


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """Whether every element is close (evaluates)."""
    from .reductions import all as all_

    return bool(all_(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))


__all__ = [*UFUNCS, "real", "imag", "angle", "where", "clip", "round", "isclose", "allclose"]
