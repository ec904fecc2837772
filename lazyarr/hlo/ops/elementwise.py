"""Elementwise ops: unary, binary, compare, select, clamp, convert, complex, ldexp.

Each op is one row of a table: its HLO name, its NumPy reference, the dtypes it accepts and
how its result dtype follows. Operands are strict: equal shapes, equal dtypes (select's
predicate and ldexp's int32 exponent aside). Semantics are NumPy's, including integer
division by zero (0), NaN-propagating maximum/minimum and NumPy's shift rules; references run
with floating point warnings silenced (the compiled backends do not warn either).

VJP rules (reverse-mode derivatives, see hlo/autodiff.py) sit in tables beside the op tables:
each maps an op to its operands' cotangents given the operands, the result and the result's
cotangent. Conventions at points where a derivative does not exist, as JAX's: abs'(0) = 0;
maximum/minimum (and fmax/fmin) split the cotangent evenly between tied operands; sign, floor,
ceil, trunc, rint and floor-divide have derivative 0; clamp passes the cotangent to the operand
on the closed interval [min, max] (a tie goes to the operand).
"""

from __future__ import annotations

import numpy as np

from ... import dtypes
from ..instruction import make
from ..op import COMMUTATIVE, ELEMENTWISE, HloError, OpDef, register
from ._rules import require_dtypes, same_dtype, same_shape
from ._vjp_support import (
    add,
    compare,
    constant_scalar,
    divide,
    full_like,
    is_differentiable_dtype,
    multiply,
    negate,
    no_gradient,
    scale,
    select,
    shift,
    subtract,
    where_else_zero,
)

ALL = dtypes.ALL
NUMERIC = dtypes.NUMERIC
REAL = (dtypes.bool_,) + dtypes.INTEGER + dtypes.FLOATING
REAL_NUMERIC = dtypes.INTEGER + dtypes.FLOATING
INEXACT = dtypes.FLOATING + dtypes.COMPLEX
FLOATING = dtypes.FLOATING
BITWISE = (dtypes.bool_,) + dtypes.INTEGER
INTEGER = dtypes.INTEGER


def _quiet(function):
    """Run a NumPy function with floating-point warnings silenced."""

    def reference(values, attrs):
        with np.errstate(all="ignore"):
            return np.asarray(function(*values))

    reference.__name__ = getattr(function, "__name__", "reference")
    return reference


def _same(operands):
    return operands[0].dtype


def _real(operands):
    return dtypes.real_dtype(operands[0].dtype)


def _bool(operands):
    return dtypes.bool_


def _int32(operands):
    return dtypes.int32


def _uint8(operands):
    return dtypes.uint8


def _frexp_mantissa(values):
    return np.frexp(values)[0]


def _frexp_exponent(values):
    return np.frexp(values)[1]


def _popcount(values):
    """The set bits of the pattern itself (NumPy's bitwise_count counts |x| of signed values:
    the frontend takes the magnitude first)."""
    return np.bitwise_count(values.view(f"u{values.dtype.itemsize}"))


def _integer_power(base, exponent):
    """NumPy raises for negative integer exponents; lazyarr defines them (see README).

    x ** -n truncates 1 / x ** n toward zero: 1 for x == 1, +-1 for x == -1, 0 otherwise
    (0 ** -n is 0 as well, like integer division by zero).
    """
    base, exponent = np.broadcast_arrays(base, exponent)
    negative = exponent < 0
    safe_exponent = np.where(negative, 0, exponent)
    result = np.power(base, safe_exponent)
    if np.any(negative):
        one = np.ones((), base.dtype)
        odd = (exponent % 2) != 0
        minus_one = (base == -one) if dtypes.is_signed_integer(base.dtype) else np.zeros_like(negative)
        inverse = np.where(base == one, one, np.zeros((), base.dtype))
        if dtypes.is_signed_integer(base.dtype):
            inverse = np.where(minus_one, np.where(odd, -one, one), inverse)
        result = np.where(negative, inverse, result)
    return result.astype(base.dtype, copy=False)


def _power(base, exponent):
    if dtypes.is_integer(base.dtype):
        return _integer_power(base, exponent)
    if exponent.size and not any(exponent.strides):
        # A broadcast scalar. NumPy's float loops give a scalar exponent its own path (x ** 0.5
        # is sqrt(x), x ** -1 is 1 / x), which rounds differently from the vector pow; a size-1
        # broadcast view would not be seen as a scalar, so pass the scalar itself.
        exponent = exponent[(0,) * exponent.ndim]
    return np.power(base, exponent)


def _elementwise_opdef(name, arity, function, accepted, result, *, commutative=False, doc="", vjp=None):
    def shape_rule(operands, attrs):
        return same_shape(name, operands)

    checked: dict[tuple, object] = {}  # operand dtypes -> result dtype: the rule runs once per signature

    def dtype_rule(operands, attrs):
        signature = tuple([operand.dtype for operand in operands])
        found = checked.get(signature)
        if found is None:
            same_dtype(name, operands)
            require_dtypes(name, operands, accepted)
            found = checked[signature] = result(operands)
        return found

    traits = {ELEMENTWISE} | ({COMMUTATIVE} if commutative else set())
    return OpDef(
        name=name,
        arity=arity,
        shape_rule=shape_rule,
        dtype_rule=dtype_rule,
        reference=_quiet(function),
        traits=frozenset(traits),
        doc=doc or f"NumPy's {getattr(function, '__name__', name)}",
        vjp=vjp,
    )


# name, NumPy reference, accepted dtypes, result dtype
UNARY = [
    ("negate", np.negative, NUMERIC, _same),
    ("abs", np.absolute, ALL, _real),
    ("sign", np.sign, NUMERIC, _same),
    ("sqrt", np.sqrt, INEXACT, _same),
    ("cbrt", np.cbrt, FLOATING, _same),
    ("exp", np.exp, INEXACT, _same),
    ("exp2", np.exp2, INEXACT, _same),
    ("expm1", np.expm1, INEXACT, _same),
    ("log", np.log, INEXACT, _same),
    ("log2", np.log2, INEXACT, _same),
    ("log10", np.log10, INEXACT, _same),
    ("log1p", np.log1p, INEXACT, _same),
    ("sin", np.sin, INEXACT, _same),
    ("cos", np.cos, INEXACT, _same),
    ("tan", np.tan, INEXACT, _same),
    ("asin", np.arcsin, INEXACT, _same),
    ("acos", np.arccos, INEXACT, _same),
    ("atan", np.arctan, INEXACT, _same),
    ("sinh", np.sinh, INEXACT, _same),
    ("cosh", np.cosh, INEXACT, _same),
    ("tanh", np.tanh, INEXACT, _same),
    ("asinh", np.arcsinh, INEXACT, _same),
    ("acosh", np.arccosh, INEXACT, _same),
    ("atanh", np.arctanh, INEXACT, _same),
    ("floor", np.floor, REAL, _same),
    ("ceil", np.ceil, REAL, _same),
    ("trunc", np.trunc, REAL, _same),
    ("round-nearest-even", np.rint, INEXACT, _same),
    ("not", np.invert, BITWISE, _same),
    ("is-nan", np.isnan, ALL, _bool),
    ("is-inf", np.isinf, ALL, _bool),
    ("is-finite", np.isfinite, ALL, _bool),
    ("signbit", np.signbit, FLOATING, _bool),
    ("real", np.real, ALL, _real),
    ("imag", np.imag, ALL, _real),
    ("conj", np.conjugate, NUMERIC, _same),
    ("reciprocal", np.reciprocal, INEXACT, _same),
    # Floating-point representation (C's frexp split in two ops; NumPy's spacing) and bits.
    ("frexp-mantissa", _frexp_mantissa, FLOATING, _same),
    ("frexp-exponent", _frexp_exponent, FLOATING, _int32),
    ("spacing", np.spacing, FLOATING, _same),
    ("popcount", _popcount, INTEGER, _uint8),
]

# name, NumPy reference, accepted dtypes, result dtype, commutative
BINARY = [
    ("add", np.add, ALL, _same, True),
    ("subtract", np.subtract, NUMERIC, _same, False),
    ("multiply", np.multiply, ALL, _same, True),
    ("divide", np.true_divide, INEXACT, _same, False),
    ("floor-divide", np.floor_divide, REAL_NUMERIC, _same, False),
    ("remainder", np.remainder, REAL_NUMERIC, _same, False),
    ("fmod", np.fmod, REAL_NUMERIC, _same, False),
    ("gcd", np.gcd, INTEGER, _same, True),
    ("lcm", np.lcm, INTEGER, _same, True),
    ("power", _power, NUMERIC, _same, False),
    ("maximum", np.maximum, ALL, _same, True),
    ("minimum", np.minimum, ALL, _same, True),
    ("fmax", np.fmax, ALL, _same, True),
    ("fmin", np.fmin, ALL, _same, True),
    ("atan2", np.arctan2, FLOATING, _same, False),
    ("hypot", np.hypot, FLOATING, _same, True),
    ("copysign", np.copysign, FLOATING, _same, False),
    ("nextafter", np.nextafter, FLOATING, _same, False),
    ("logaddexp", np.logaddexp, FLOATING, _same, True),
    ("and", np.bitwise_and, BITWISE, _same, True),
    ("or", np.bitwise_or, BITWISE, _same, True),
    ("xor", np.bitwise_xor, BITWISE, _same, True),
    ("shift-left", np.left_shift, INTEGER, _same, False),
    ("shift-right", np.right_shift, INTEGER, _same, False),
]



# --- VJP rules of the unary and binary tables ---------------------------------------------


def _square(node):
    return multiply(node, node)


def _one_minus_square(node):
    return subtract(full_like(node, 1), _square(node))


# name -> cotangent of the operand from (operand x, result y, cotangent g)
UNARY_DERIVATIVES = {
    "negate": lambda x, y, g: negate(g),
    "abs": lambda x, y, g: multiply(g, make("sign", [x])),
    "sqrt": lambda x, y, g: divide(g, scale(y, 2.0)),
    "cbrt": lambda x, y, g: divide(g, scale(_square(y), 3.0)),
    "exp": lambda x, y, g: multiply(g, y),
    "exp2": lambda x, y, g: multiply(g, scale(y, np.log(2.0))),
    "expm1": lambda x, y, g: multiply(g, shift(y, 1.0)),
    "log": lambda x, y, g: divide(g, x),
    "log2": lambda x, y, g: divide(g, scale(x, np.log(2.0))),
    "log10": lambda x, y, g: divide(g, scale(x, np.log(10.0))),
    "log1p": lambda x, y, g: divide(g, shift(x, 1.0)),
    "sin": lambda x, y, g: multiply(g, make("cos", [x])),
    "cos": lambda x, y, g: negate(multiply(g, make("sin", [x]))),
    "tan": lambda x, y, g: multiply(g, shift(_square(y), 1.0)),
    "asin": lambda x, y, g: divide(g, make("sqrt", [_one_minus_square(x)])),
    "acos": lambda x, y, g: negate(divide(g, make("sqrt", [_one_minus_square(x)]))),
    "atan": lambda x, y, g: divide(g, shift(_square(x), 1.0)),
    "sinh": lambda x, y, g: multiply(g, make("cosh", [x])),
    "cosh": lambda x, y, g: multiply(g, make("sinh", [x])),
    "tanh": lambda x, y, g: multiply(g, _one_minus_square(y)),
    "asinh": lambda x, y, g: divide(g, make("sqrt", [shift(_square(x), 1.0)])),
    # 1 / sqrt(x*x - 1) as JAX writes it: x*x - 1 loses the digits of x - 1 near x = 1.
    "acosh": lambda x, y, g: divide(
        g, multiply(make("sqrt", [shift(x, -1.0)]), make("sqrt", [shift(x, 1.0)]))
    ),
    "atanh": lambda x, y, g: divide(g, _one_minus_square(x)),
    "reciprocal": lambda x, y, g: negate(multiply(g, _square(y))),
    # On real operands (complex ones never reach a rule: the sweep refuses them) real and conj
    # are the identity, and imag is zero.
    "real": lambda x, y, g: g,
    "conj": lambda x, y, g: g,
    # x = mantissa * 2**e with e constant between powers of two: the slope is 2**-e, exactly.
    "frexp-mantissa": lambda x, y, g: make("ldexp", [g, negate(make("frexp-exponent", [x]))]),
}

# Results that are bool or integer, or piecewise constant: no gradient flows.
UNARY_WITHOUT_GRADIENT = (
    "sign", "floor", "ceil", "trunc", "round-nearest-even",
    "not", "is-nan", "is-inf", "is-finite", "signbit", "imag",
    "frexp-exponent", "spacing", "popcount",
)


def _share(operand, other, result):
    """1 where `operand` alone equals the result, 0.5 where both operands do, else 0.

    maximum/minimum route the cotangent to the operand they chose, split evenly on a tie
    (JAX's convention); a NaN result equals neither operand, so neither receives anything.
    """
    return select(
        compare(operand, result, "EQ"),
        select(compare(other, result, "EQ"), full_like(result, 0.5), full_like(result, 1.0)),
        full_like(result, 0.0),
    )


def _chooser_derivative(a, b, z, g):
    return multiply(g, _share(a, b, z)), multiply(g, _share(b, a, z))


def _sum_of_squares(a, b):
    return add(_square(a), _square(b))


def _power_derivative(a, b, z, g):
    """d/da a**b = b * a**(b-1), taken as 0 where b == 0 (so 0**0 has derivative 0, as JAX);
    d/db a**b = log(a) * a**b, taken as 0 where a == 0 (the limit for b > 0, as JAX).
    A literal exponent (x ** 2) gets the direct form c * a**(c-1), or c * a when c == 2."""
    exponent = constant_scalar(b)
    if exponent is not None and exponent != 0:
        if exponent == 2:
            slope = scale(a, 2.0)
        else:
            slope = scale(make("power", [a, full_like(a, exponent - 1)]), exponent)
    else:
        zero_exponent = compare(b, full_like(b, 0), "EQ")
        general = multiply(b, make("power", [a, shift(b, -1.0)]))
        slope = select(zero_exponent, full_like(b, 0), general)
    safe_base = select(compare(a, full_like(a, 0), "EQ"), full_like(a, 1), a)
    return multiply(g, slope), multiply(g, multiply(make("log", [safe_base]), z))


def _copysign_derivative(a, b, z, g):
    """|a| with b's sign: the cotangent passes to a, negated where the signs differ."""
    same_sign = compare(make("signbit", [a]), make("signbit", [b]), "EQ")
    return select(same_sign, g, negate(g)), None


# name -> cotangents of both operands from (operands a and b, result z, cotangent g)
BINARY_DERIVATIVES = {
    "add": lambda a, b, z, g: (g, g),
    "subtract": lambda a, b, z, g: (g, negate(g)),
    "multiply": lambda a, b, z, g: (multiply(g, b), multiply(g, a)),
    "divide": lambda a, b, z, g: (divide(g, b), negate(divide(multiply(g, z), b))),
    "power": _power_derivative,
    "maximum": _chooser_derivative,
    "minimum": _chooser_derivative,
    "fmax": _chooser_derivative,
    "fmin": _chooser_derivative,
    "atan2": lambda a, b, z, g: (
        divide(multiply(g, b), _sum_of_squares(a, b)),
        negate(divide(multiply(g, a), _sum_of_squares(a, b))),
    ),
    "hypot": lambda a, b, z, g: (divide(multiply(g, a), z), divide(multiply(g, b), z)),
    "copysign": _copysign_derivative,
    "logaddexp": lambda a, b, z, g: (
        multiply(g, make("exp", [subtract(a, z)])),
        multiply(g, make("exp", [subtract(b, z)])),
    ),
    # NumPy's remainder is a - floor(a / b) * b.
    "remainder": lambda a, b, z, g: (g, negate(multiply(g, make("floor", [divide(a, b)])))),
    # C's fmod is a - trunc(a / b) * b.
    "fmod": lambda a, b, z, g: (g, negate(multiply(g, make("trunc", [divide(a, b)])))),
}

BINARY_WITHOUT_GRADIENT = (
    "floor-divide", "and", "or", "xor", "shift-left", "shift-right", "gcd", "lcm",
)


def _unary_vjp(derivative):
    def vjp(instruction, cotangent):
        return (derivative(instruction.operands[0], instruction, cotangent),)

    return vjp


def _binary_vjp(derivative):
    def vjp(instruction, cotangent):
        left, right = instruction.operands
        return tuple(derivative(left, right, instruction, cotangent))

    return vjp


def _elementwise_vjp(name):
    if name in UNARY_DERIVATIVES:
        return _unary_vjp(UNARY_DERIVATIVES[name])
    if name in BINARY_DERIVATIVES:
        return _binary_vjp(BINARY_DERIVATIVES[name])
    if name in UNARY_WITHOUT_GRADIENT or name in BINARY_WITHOUT_GRADIENT:
        return no_gradient
    return None  # complex and nextafter: see WITHOUT_RULE in tests/hlo/test_vjp_rules.py


for _name, _function, _accepted, _result in UNARY:
    register(_elementwise_opdef(_name, 1, _function, _accepted, _result, vjp=_elementwise_vjp(_name)))

for _name, _function, _accepted, _result, _commutative in BINARY:
    register(
        _elementwise_opdef(
            _name, 2, _function, _accepted, _result, commutative=_commutative, vjp=_elementwise_vjp(_name)
        )
    )


COMPARISONS = {
    "EQ": np.equal, "NE": np.not_equal, "LT": np.less,
    "LE": np.less_equal, "GT": np.greater, "GE": np.greater_equal,
}


def _compare_dtype(operands, attrs):
    same_dtype("compare", operands)
    if attrs["direction"] not in COMPARISONS:
        raise HloError(
            f"compare: direction {attrs['direction']!r} is not one of {sorted(COMPARISONS)}"
        )
    return dtypes.bool_


register(OpDef(
    name="compare",
    arity=2,
    shape_rule=lambda operands, attrs: same_shape("compare", operands),
    dtype_rule=_compare_dtype,
    reference=lambda values, attrs: _quiet(COMPARISONS[attrs["direction"]])(values, attrs),
    attrs=("direction",),
    traits=frozenset({ELEMENTWISE}),
    doc="Elementwise comparison; direction is one of EQ NE LT LE GT GE; NaN compares unequal.",
    vjp=no_gradient,
))


def _select_dtype(operands, attrs):
    predicate, on_true, on_false = operands
    if predicate.dtype != dtypes.bool_:
        raise HloError(f"select: predicate must be bool, got {predicate.dtype}")
    return same_dtype("select", (on_true, on_false))


def _select_vjp(instruction, cotangent):
    predicate = instruction.operands[0]
    return (
        None,
        where_else_zero(predicate, cotangent),
        where_else_zero(make("not", [predicate]), cotangent),
    )


register(OpDef(
    name="select",
    arity=3,
    shape_rule=lambda operands, attrs: same_shape("select", operands),
    dtype_rule=_select_dtype,
    reference=lambda values, attrs: np.asarray(np.where(*values)),
    traits=frozenset({ELEMENTWISE}),
    doc="select(predicate, on_true, on_false): NumPy's where.",
    vjp=_select_vjp,
))


def _clamp_reference(values, attrs):
    minimum, operand, maximum = values
    with np.errstate(all="ignore"):
        # NumPy's clip loop, not minimum(maximum(...)): they differ on the sign of zero.
        return np.asarray(np.clip(operand, minimum, maximum))


def _clamp_vjp(instruction, cotangent):
    """The cotangent goes to the operand on [min, max], to min where the operand is below it
    (and min <= max), and to max otherwise (above max, or min > max, where clip gives max)."""
    minimum, operand, maximum = instruction.operands
    inside = make("and", [compare(minimum, operand, "LE"), compare(operand, maximum, "LE")])
    below = make("and", [compare(operand, minimum, "LT"), compare(minimum, maximum, "LE")])
    to_maximum = make("not", [make("or", [inside, below])])
    return (
        where_else_zero(below, cotangent),
        where_else_zero(inside, cotangent),
        where_else_zero(to_maximum, cotangent),
    )


def _clamp_dtype(operands, attrs):
    require_dtypes("clamp", operands, ALL)
    return same_dtype("clamp", operands)


register(OpDef(
    name="clamp",
    arity=3,
    shape_rule=lambda operands, attrs: same_shape("clamp", operands),
    dtype_rule=_clamp_dtype,
    reference=_clamp_reference,
    traits=frozenset({ELEMENTWISE}),
    doc="clamp(min, operand, max): NumPy's clip (NaN propagates; min > max gives max).",
    vjp=_clamp_vjp,
))


def _truncate_or_minimum(values, bits):
    """x86-64's cvttsd2si on float64 values: truncation, or INT_MIN for NaN and out of range."""
    limit = 2.0 ** (bits - 1)
    inside = (values >= -limit) & (values < limit)
    return np.where(inside, np.trunc(np.where(inside, values, 0.0)), -limit).astype(np.int64)


def _unsigned_by_halves(values, bits):
    """The unsigned conversion x86-64 compilers emit: from 2**(bits-1) up, convert the value
    less 2**(bits-1) and set the top bit back."""
    half = 2.0 ** (bits - 1)
    high = values >= half
    upper = _truncate_or_minimum(np.where(high, values - half, 0.0), bits) ^ np.int64(-(2 ** (bits - 1)))
    return np.where(high, upper, _truncate_or_minimum(values, bits))


def float_to_integer(operand: np.ndarray, target: np.dtype) -> np.ndarray:
    """NumPy's float -> integer astype as it computes on x86-64, whatever the layout.

    C leaves NaN, inf and out-of-range casts undefined; NumPy's x86-64 loops give INT_MIN of
    int32 (then wrapped) for int8/16/32 and uint8/16, INT64_MIN for int64, 2**63 for uint64
    (by halves), and for uint32 a layout-dependent value: this is its vectorized loop's (by
    halves of 32 bits), except from float16 (through int64). The CPU backend emits the same
    (backends/llvm/elemental.py `float_to_integer`).
    """
    values = operand.astype(np.float64)  # exact for every float dtype
    with np.errstate(invalid="ignore"):
        if target == dtypes.uint64:
            result = _unsigned_by_halves(values, 64)
        elif target == dtypes.uint32 and operand.dtype != dtypes.float16:
            result = _unsigned_by_halves(values, 32)
        elif target in (dtypes.int64, dtypes.uint32):
            result = _truncate_or_minimum(values, 64)
        else:
            result = _truncate_or_minimum(values, 32)
    return result.astype(target)  # integer -> integer wraps


def _convert_reference(values, attrs):
    (operand,) = values
    target = attrs["dtype"]
    if dtypes.is_complex(operand.dtype) and not dtypes.is_complex(target) and target != dtypes.bool_:
        operand = operand.real  # as NumPy's astype (without its ComplexWarning); bool is z != 0
    if dtypes.is_floating(operand.dtype) and dtypes.is_integer(target):
        return float_to_integer(operand, target)
    with np.errstate(all="ignore"):
        return np.asarray(operand.astype(target))


def _convert_dtype(operands, attrs):
    try:
        return dtypes.as_dtype(attrs["dtype"], where="convert")
    except TypeError as error:
        raise HloError(str(error)) from None  # a broken rule, as every op reports it


def _convert_vjp(instruction, cotangent):
    """Between float dtypes the cotangent converts back; from bool or integers nothing flows."""
    (operand,) = instruction.operands
    if not is_differentiable_dtype(operand.dtype):
        return (None,)
    return (make("convert", [cotangent], dtype=operand.dtype),)


register(OpDef(
    name="convert",
    arity=1,
    shape_rule=lambda operands, attrs: operands[0].shape,
    dtype_rule=_convert_dtype,
    reference=_convert_reference,
    attrs=("dtype",),
    traits=frozenset({ELEMENTWISE}),
    doc="Element type conversion as NumPy's astype (complex to real drops the imaginary part).",
    vjp=_convert_vjp,
))


def _ldexp_dtype(operands, attrs):
    mantissa, exponent = operands
    require_dtypes("ldexp", (mantissa,), FLOATING)
    if exponent.dtype != dtypes.int32:
        raise HloError(f"ldexp: the exponent (operand 1) must be int32 (C's int), got {exponent.dtype}")
    return mantissa.dtype


def _ldexp_vjp(instruction, cotangent):
    """x * 2**n: the cotangent scaled by 2**n (exactly); none to the integer exponent."""
    return (make("ldexp", [cotangent, instruction.operands[1]]), None)


register(OpDef(
    name="ldexp",
    arity=2,
    shape_rule=lambda operands, attrs: same_shape("ldexp", operands),
    dtype_rule=_ldexp_dtype,
    reference=_quiet(np.ldexp),
    traits=frozenset({ELEMENTWISE}),
    doc="ldexp(x, n) = x * 2**n rounded once (C's ldexp): float x, int32 n (the frontend "
        "clamps NumPy's int64 exponents into int32, as NumPy's int64 loop does).",
    vjp=_ldexp_vjp,
))


_COMPLEX_OF = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128}


def _complex_dtype(operands, attrs):
    same_dtype("complex", operands)
    require_dtypes("complex", operands, tuple(_COMPLEX_OF))
    return _COMPLEX_OF[operands[0].dtype]


def _complex_reference(values, attrs):
    real_part, imaginary_part = values
    result = np.empty(real_part.shape, _COMPLEX_OF[real_part.dtype])
    result.real, result.imag = real_part, imaginary_part
    return result


register(OpDef(
    name="complex",
    arity=2,
    shape_rule=lambda operands, attrs: same_shape("complex", operands),
    dtype_rule=_complex_dtype,
    reference=_complex_reference,
    traits=frozenset({ELEMENTWISE}),
    doc="complex(real, imag) -> real + imag*i without arithmetic (inf, NaN and -0.0 parts survive).",
))
