"""Reductions: reduce (sum, prod, max, min, and, or), argmax/argmin, cumulative (scans).

All are strict: the result dtype is the operand dtype (argmax: int64). The frontend picks
the accumulation dtype NumPy would (int8 sums in int64) and converts before reducing.
max/min propagate NaN like NumPy's and have no identity, so reducing an empty dimension
with them is refused when the graph is built, as NumPy refuses it.

VJP rules: a sum spreads the cotangent back over the reduced dims; max/min give it to the
elements equal to the result, split evenly among ties (JAX's convention; a NaN result gives
NaN); a product gives each element the product of the *others*, built from prefix and suffix
products so that zeros are handled exactly (no division). Prefix products are scans by
doubling (log2(n) shifted multiplies), which are themselves differentiable.
"""

from __future__ import annotations

import numpy as np

from ... import dtypes
from ..instruction import make
from ..op import REDUCTION, HloError, OpDef, register
from ._rules import check_axes, require_dtypes
from ._vjp_support import (
    add,
    compare,
    divide,
    multiply,
    no_gradient,
    reshape_to,
    scalar,
    sum_over,
    zeros_like,
)

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


def _shifted(node, dimension: int, step: int, fill: float):
    """node moved `step` places up along `dimension`; the first `step` places hold `fill`."""
    size = node.shape[dimension]
    limit = tuple(size - step if axis == dimension else extent for axis, extent in enumerate(node.shape))
    kept = make("slice", [node], start=(0,) * node.ndim, limit=limit, stride=(1,) * node.ndim)
    low = tuple(step if axis == dimension else 0 for axis in range(node.ndim))
    return make("pad", [kept, scalar(fill, node.dtype)], low=low, high=(0,) * node.ndim, interior=(0,) * node.ndim)


def _unshifted(node, dimension: int, step: int):
    """The transpose of `_shifted`: node moved `step` places down, zeros entering at the top."""
    start = tuple(step if axis == dimension else 0 for axis in range(node.ndim))
    kept = make("slice", [node], start=start, limit=node.shape, stride=(1,) * node.ndim)
    high = tuple(step if axis == dimension else 0 for axis in range(node.ndim))
    return make("pad", [kept, scalar(0, node.dtype)], low=(0,) * node.ndim, high=high, interior=(0,) * node.ndim)


def _prefix_product_levels(node, dimension: int) -> list:
    """Inclusive prefix products along `dimension` by doubling: level k+1 is level k times
    level k shifted by 2**k (filled with 1); the last level holds the prefix products."""
    levels, step = [node], 1
    while step < node.shape[dimension]:
        levels.append(multiply(levels[-1], _shifted(levels[-1], dimension, step, 1)))
        step *= 2
    return levels


def _exclusive_prefix_product(node, dimension: int):
    """product of the elements strictly before each position along `dimension` (1 first)."""
    return _shifted(_prefix_product_levels(node, dimension)[-1], dimension, 1, 1)


def _product_of_others(operand, dimensions):
    """For each element, the product of the other elements of its reduced group, exactly
    (zeros included): flatten the group into a last dim, multiply exclusive prefix and suffix
    products, restore the layout."""
    kept = [axis for axis in range(operand.ndim) if axis not in dimensions]
    permutation = tuple(kept) + tuple(dimensions)
    moved = operand if permutation == tuple(range(operand.ndim)) else make(
        "transpose", [operand], permutation=permutation
    )
    group = 1
    for axis in dimensions:
        group *= operand.shape[axis]
    if group == 0:
        return zeros_like(operand)
    flat = reshape_to(moved, tuple(operand.shape[axis] for axis in kept) + (group,))
    last = flat.ndim - 1
    before = _exclusive_prefix_product(flat, last)
    reversed_flat = make("reverse", [flat], dimensions=(last,))
    after = make("reverse", [_exclusive_prefix_product(reversed_flat, last)], dimensions=(last,))
    others = reshape_to(multiply(before, after), moved.shape)
    if moved is operand:
        return others
    inverse = tuple(permutation.index(axis) for axis in range(operand.ndim))
    return make("transpose", [others], permutation=inverse)


def _reduce_vjp(instruction, cotangent):
    (operand,) = instruction.operands
    kind, dimensions = instruction.attr("kind"), instruction.attr("dimensions")
    if kind in ("and", "or"):
        return (None,)
    kept = tuple(axis for axis in range(operand.ndim) if axis not in dimensions)

    def spread(node):
        if not dimensions:
            return node
        return make("broadcast", [node], shape=operand.shape, dimensions=kept)

    if kind == "sum":
        return (spread(cotangent),)
    if kind == "prod":
        return (multiply(spread(cotangent), _product_of_others(operand, dimensions)),)
    hits = make("convert", [compare(operand, spread(instruction), "EQ")], dtype=operand.dtype)
    return (multiply(spread(divide(cotangent, sum_over(hits, dimensions))), hits),)


register(OpDef(
    name="reduce",
    arity=1,
    shape_rule=_reduce_shape,
    dtype_rule=_reduce_dtype,
    reference=_reduce_reference,
    attrs=("kind", "dimensions"),
    traits=frozenset({REDUCTION}),
    doc="Reduce the given dimensions with kind in sum, prod, max, min, and, or.",
    vjp=_reduce_vjp,
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
        vjp=no_gradient,
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


def _cumulative_vjp(instruction, cotangent):
    """sum: a reversed cumulative sum of the cotangent. prod: back through the doubling scan
    that computes the same prefix products (level k+1 = level k * shifted level k), which
    needs no division and so is exact where the operand has zeros."""
    (operand,) = instruction.operands
    dimension = instruction.attr("dimension")
    if instruction.attr("kind") == "sum":
        flipped = make("reverse", [cotangent], dimensions=(dimension,))
        scanned = make("cumulative", [flipped], kind="sum", dimension=dimension)
        return (make("reverse", [scanned], dimensions=(dimension,)),)
    levels = _prefix_product_levels(operand, dimension)
    for level in range(len(levels) - 2, -1, -1):
        step, value = 1 << level, levels[level]
        cotangent = add(
            multiply(cotangent, _shifted(value, dimension, step, 1)),
            _unshifted(multiply(cotangent, value), dimension, step),
        )
    return (cotangent,)


register(OpDef(
    name="cumulative",
    arity=1,
    shape_rule=_cumulative_shape,
    dtype_rule=_cumulative_dtype,
    reference=_cumulative_reference,
    attrs=("kind", "dimension"),
    traits=frozenset({REDUCTION}),
    doc="Inclusive scan (sum or prod) along `dimension`.",
    vjp=_cumulative_vjp,
))
