"""Elementwise ops: unary, binary, compare, select, clamp, convert, complex.

Each op is one row of a table: its HLO name, its NumPy reference, the dtypes it accepts and
how its result dtype follows. Operands are strict: equal shapes, equal dtypes (select's
predicate aside). Semantics are NumPy's, including integer division by zero (0),
NaN-propagating maximum/minimum and NumPy's shift rules; references run with floating
point warnings silenced (the compiled backends do not warn either).
"""

from __future__ import annotations

import numpy as np

from ... import dtypes
from ..op import COMMUTATIVE, ELEMENTWISE, HloError, OpDef, register
from ._rules import require_dtypes, same_dtype, same_shape

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


def _elementwise_opdef(name, arity, function, accepted, result, *, commutative=False, doc=""):
    def shape_rule(operands, attrs):
        return same_shape(name, operands)

    def dtype_rule(operands, attrs):
        same_dtype(name, operands)
        require_dtypes(name, operands, accepted)
        return result(operands)

    traits = {ELEMENTWISE} | ({COMMUTATIVE} if commutative else set())
    return OpDef(
        name=name,
        arity=arity,
        shape_rule=shape_rule,
        dtype_rule=dtype_rule,
        reference=_quiet(function),
        traits=frozenset(traits),
        doc=doc or f"NumPy's {getattr(function, '__name__', name)}",
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
]

# name, NumPy reference, accepted dtypes, result dtype, commutative
BINARY = [
    ("add", np.add, ALL, _same, True),
    ("subtract", np.subtract, NUMERIC, _same, False),
    ("multiply", np.multiply, ALL, _same, True),
    ("divide", np.true_divide, INEXACT, _same, False),
    ("floor-divide", np.floor_divide, REAL_NUMERIC, _same, False),
    ("remainder", np.remainder, REAL_NUMERIC, _same, False),
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

for _name, _function, _accepted, _result in UNARY:
    register(_elementwise_opdef(_name, 1, _function, _accepted, _result))

for _name, _function, _accepted, _result, _commutative in BINARY:
    register(
        _elementwise_opdef(_name, 2, _function, _accepted, _result, commutative=_commutative)
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
))


def _select_dtype(operands, attrs):
    predicate, on_true, on_false = operands
    if predicate.dtype != dtypes.bool_:
        raise HloError(f"select: predicate must be bool, got {predicate.dtype}")
    return same_dtype("select", (on_true, on_false))


register(OpDef(
    name="select",
    arity=3,
    shape_rule=lambda operands, attrs: same_shape("select", operands),
    dtype_rule=_select_dtype,
    reference=lambda values, attrs: np.asarray(np.where(*values)),
    traits=frozenset({ELEMENTWISE}),
    doc="select(predicate, on_true, on_false): NumPy's where.",
))


def _clamp_reference(values, attrs):
    minimum, operand, maximum = values
    with np.errstate(all="ignore"):
        # NumPy's clip loop, not minimum(maximum(...)): they differ on the sign of zero.
        return np.asarray(np.clip(operand, minimum, maximum))


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
))


def _convert_reference(values, attrs):
    (operand,) = values
    target = attrs["dtype"]
    if dtypes.is_complex(operand.dtype) and not dtypes.is_complex(target) and target != dtypes.bool_:
        operand = operand.real  # as NumPy's astype (without its ComplexWarning); bool is z != 0
    with np.errstate(all="ignore"):
        return np.asarray(operand.astype(target))


def _convert_dtype(operands, attrs):
    try:
        return dtypes.as_dtype(attrs["dtype"], where="convert")
    except TypeError as error:
        raise HloError(str(error)) from None  # a broken rule, as every op reports it


register(OpDef(
    name="convert",
    arity=1,
    shape_rule=lambda operands, attrs: operands[0].shape,
    dtype_rule=_convert_dtype,
    reference=_convert_reference,
    attrs=("dtype",),
    traits=frozenset({ELEMENTWISE}),
    doc="Element type conversion as NumPy's astype (complex to real drops the imaginary part).",
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
