"""dot: XLA's dot_general (batch dims, contracting dims) with NumPy's matmul as reference.

Output dims are: the batch dims (in lhs_batch order), then lhs's free dims, then rhs's free
dims, each in operand order. matmul, tensordot, inner, outer and einsum all lower to it.
"""

from __future__ import annotations

import math

import numpy as np

from ..op import REDUCTION, HloError, OpDef, register
from ._rules import check_axes, describe, same_dtype


def _free_axes(ndim, batch, contracting):
    return [axis for axis in range(ndim) if axis not in batch and axis not in contracting]


def _dot_shape(operands, attrs):
    lhs, rhs = operands
    lhs_batch = check_axes("dot", attrs["lhs_batch"], lhs.ndim, "lhs_batch")
    rhs_batch = check_axes("dot", attrs["rhs_batch"], rhs.ndim, "rhs_batch")
    lhs_contracting = check_axes("dot", attrs["lhs_contracting"], lhs.ndim, "lhs_contracting")
    rhs_contracting = check_axes("dot", attrs["rhs_contracting"], rhs.ndim, "rhs_contracting")
    if set(lhs_batch) & set(lhs_contracting) or set(rhs_batch) & set(rhs_contracting):
        raise HloError("dot: a dimension cannot be both batch and contracting")
    if len(lhs_batch) != len(rhs_batch) or len(lhs_contracting) != len(rhs_contracting):
        raise HloError("dot: lhs and rhs need the same number of batch and contracting dims")
    for left, right in zip(lhs_batch + lhs_contracting, rhs_batch + rhs_contracting):
        if lhs.shape[left] != rhs.shape[right]:
            raise HloError(
                f"dot: dim {left} of lhs and dim {right} of rhs differ ({describe(operands)})"
            )
    return (
        tuple(lhs.shape[axis] for axis in lhs_batch)
        + tuple(lhs.shape[axis] for axis in _free_axes(lhs.ndim, lhs_batch, lhs_contracting))
        + tuple(rhs.shape[axis] for axis in _free_axes(rhs.ndim, rhs_batch, rhs_contracting))
    )


def _as_batched_matrix(value, batch, free, contracting, contracting_last):
    """Transpose and reshape an operand to (batch, free, contracting) or (batch, contracting, free)."""
    inner = list(free) + list(contracting) if contracting_last else list(contracting) + list(free)
    order = list(batch) + inner
    moved = np.transpose(value, order)
    batch_size = math.prod(value.shape[axis] for axis in batch)
    free_size = math.prod(value.shape[axis] for axis in free)
    contracting_size = math.prod(value.shape[axis] for axis in contracting)
    if contracting_last:
        return moved.reshape(batch_size, free_size, contracting_size)
    return moved.reshape(batch_size, contracting_size, free_size)


def _dot_reference(values, attrs):
    lhs, rhs = values
    lhs_batch, rhs_batch = attrs["lhs_batch"], attrs["rhs_batch"]
    lhs_contracting, rhs_contracting = attrs["lhs_contracting"], attrs["rhs_contracting"]
    lhs_free = _free_axes(lhs.ndim, lhs_batch, lhs_contracting)
    rhs_free = _free_axes(rhs.ndim, rhs_batch, rhs_contracting)
    left = _as_batched_matrix(lhs, lhs_batch, lhs_free, lhs_contracting, contracting_last=True)
    right = _as_batched_matrix(rhs, rhs_batch, rhs_free, rhs_contracting, contracting_last=False)
    with np.errstate(all="ignore"):
        product = np.matmul(left, right)
    shape = (
        tuple(lhs.shape[axis] for axis in lhs_batch)
        + tuple(lhs.shape[axis] for axis in lhs_free)
        + tuple(rhs.shape[axis] for axis in rhs_free)
    )
    return product.reshape(shape)


register(OpDef(
    name="dot",
    arity=2,
    shape_rule=_dot_shape,
    dtype_rule=lambda operands, attrs: same_dtype("dot", operands),
    reference=_dot_reference,
    attrs=("lhs_batch", "rhs_batch", "lhs_contracting", "rhs_contracting"),
    traits=frozenset({REDUCTION}),
    doc="General dot product with batch and contracting dimensions (XLA's dot_general).",
))
