"""Reductions: reduce (sum, prod, max, min, and, or), argmax/argmin, cumulative (scans).

All are strict: the result dtype is the operand dtype (argmax: int64). The frontend picks
the accumulation dtype NumPy would (int8 sums in int64) and converts before reducing.
max/min propagate NaN like NumPy's and have no identity, so reducing an empty dimension
with them is refused when the graph is built, as NumPy refuses it.
"""

from __future__ import annotations

import numpy as np

from ... import dtypes
from ..op import REDUCTION, HloError, OpDef, register
from ._rules import check_axes, require_dtypes

_REAL = (dtypes.bool_,) + dtypes.INTEGER + dtypes.FLOATING

# kind -> (NumPy reduction, accepted dtypes, has an identity)
REDUCE_KINDS = {
    "sum": (np.sum, dtypes.NUMERIC, True),
    "prod": (np.prod, dtypes.NUMERIC, True),
    "max": (np.max, _REAL, False),
    "min": (np.min, _REAL, False),
    "and": (np.all, (dtypes.bool_,), True),
    "or": (np.any, (dtypes.bool_,), True),
}


def _reduce_shape(operands, attrs):
    (operand,) = operands
    kind = attrs["kind"]
    if kind not in REDUCE_KINDS:
        raise HloError(f"reduce: kind {kind!r} is not one of {sorted(REDUCE_KINDS)}")
    dimensions = check_axes("reduce", attrs["dimensions"], operand.ndim)
    if list(dimensions) != sorted(dimensions):
        raise HloError(f"reduce: dimensions {dimensions} must be increasing")
    if not REDUCE_KINDS[kind][2] and any(operand.shape[axis] == 0 for axis in dimensions):
        raise HloError(
            f"reduce: zero-size array to reduction operation {kind} which has no identity "
            f"(shape {operand.shape}, dimensions {dimensions})"
        )
    return tuple(size for axis, size in enumerate(operand.shape) if axis not in dimensions)


def _reduce_dtype(operands, attrs):
    require_dtypes(f"reduce {attrs['kind']}", operands, REDUCE_KINDS[attrs["kind"]][1])
    return operands[0].dtype


def _reduce_reference(values, attrs):
    (operand,) = values
    function = REDUCE_KINDS[attrs["kind"]][0]
    extra = {"dtype": operand.dtype} if attrs["kind"] in ("sum", "prod") else {}
    with np.errstate(all="ignore"):
        return np.asarray(function(operand, axis=tuple(attrs["dimensions"]), **extra))


register(OpDef(
    name="reduce",
    arity=1,
    shape_rule=_reduce_shape,
    dtype_rule=_reduce_dtype,
    reference=_reduce_reference,
    attrs=("kind", "dimensions"),
    traits=frozenset({REDUCTION}),
    doc="Reduce the given dimensions with kind in sum, prod, max, min, and, or.",
))


def _arg_opdef(name, function):
    def shape_rule(operands, attrs):
        (operand,) = operands
        (dimension,) = check_axes(name, (attrs["dimension"],), operand.ndim, "dimension")
        if operand.shape[dimension] == 0:
            raise HloError(f"{name}: attempt to get {name} of an empty sequence")
        return tuple(size for axis, size in enumerate(operand.shape) if axis != dimension)

    def dtype_rule(operands, attrs):
        require_dtypes(name, operands, _REAL)
        return dtypes.int64

    return OpDef(
        name=name,
        arity=1,
        shape_rule=shape_rule,
        dtype_rule=dtype_rule,
        reference=lambda values, attrs: np.asarray(
            function(values[0], axis=attrs["dimension"]), dtype=np.int64
        ),
        attrs=("dimension",),
        traits=frozenset({REDUCTION}),
        doc=f"Index of the first {name[3:]} along `dimension` (a NaN wins, as in NumPy).",
    )


register(_arg_opdef("argmax", np.argmax))
register(_arg_opdef("argmin", np.argmin))


_SCANS = {"sum": np.cumsum, "prod": np.cumprod}


def _cumulative_shape(operands, attrs):
    (operand,) = operands
    if attrs["kind"] not in _SCANS:
        raise HloError(f"cumulative: kind {attrs['kind']!r} is not one of {sorted(_SCANS)}")
    check_axes("cumulative", (attrs["dimension"],), operand.ndim, "dimension")
    return operand.shape


def _cumulative_dtype(operands, attrs):
    require_dtypes("cumulative", operands, dtypes.NUMERIC)
    return operands[0].dtype


def _cumulative_reference(values, attrs):
    (operand,) = values
    with np.errstate(all="ignore"):
        return _SCANS[attrs["kind"]](operand, axis=attrs["dimension"], dtype=operand.dtype)


register(OpDef(
    name="cumulative",
    arity=1,
    shape_rule=_cumulative_shape,
    dtype_rule=_cumulative_dtype,
    reference=_cumulative_reference,
    attrs=("kind", "dimension"),
    traits=frozenset({REDUCTION}),
    doc="Inclusive scan (sum or prod) along `dimension`.",
))
