"""dot: XLA's dot_general (batch dims, contracting dims) with NumPy's matmul as reference.

Output dims are: the batch dims (in lhs_batch order), then lhs's free dims, then rhs's free
dims, each in operand order. matmul, tensordot, inner, outer and einsum all lower to it.

Its VJP rule is two dots of the cotangent (as JAX's dot_general transpose): the cotangent's
free dims of one side contract with that side's free dims, leaving the other side's
contracting dims; a transpose puts the result back in the operand's dim order.
"""

from __future__ import annotations

import math

import numpy as np

from ..instruction import make
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
    moved = value.transpose(order)  # a method, so CuPy arrays work too (dot_general)
    batch_size = math.prod(value.shape[axis] for axis in batch)
    free_size = math.prod(value.shape[axis] for axis in free)
    contracting_size = math.prod(value.shape[axis] for axis in contracting)
    if contracting_last:
        return moved.reshape(batch_size, free_size, contracting_size)
    return moved.reshape(batch_size, contracting_size, free_size)


def _dot_reference(values, attrs):
    return dot_general(values, attrs, np.matmul)


def dot_general(values, attrs, matmul):
    """The dot of `values` (NumPy or CuPy arrays) by its dimension numbers, with `matmul`
    (np.matmul, or cupy.matmul for cuBLAS) doing the batched matrix product."""
    lhs, rhs = values
    lhs_batch, rhs_batch = attrs["lhs_batch"], attrs["rhs_batch"]
    lhs_contracting, rhs_contracting = attrs["lhs_contracting"], attrs["rhs_contracting"]
    if not lhs_batch and len(lhs_contracting) == 1 and lhs.ndim <= 2 and rhs.ndim <= 2:
        # One matrix or vector product (most dots): matmul on transposed views, which BLAS
        # reads through its transpose flags; no reshapes, and matmul never warns here.
        if lhs.ndim == 2 and lhs_contracting[0] == 0:
            lhs = lhs.T
        if rhs.ndim == 2 and rhs_contracting[0] == 1:
            rhs = rhs.T
        product = matmul(lhs, rhs)
        return np.asarray(product) if isinstance(product, np.generic) else product  # vector . vector
    lhs_free = _free_axes(lhs.ndim, lhs_batch, lhs_contracting)
    rhs_free = _free_axes(rhs.ndim, rhs_batch, rhs_contracting)
    left = _as_batched_matrix(lhs, lhs_batch, lhs_free, lhs_contracting, contracting_last=True)
    right = _as_batched_matrix(rhs, rhs_batch, rhs_free, rhs_contracting, contracting_last=False)
    with np.errstate(all="ignore"):
        product = matmul(left, right)
    shape = (
        tuple(lhs.shape[axis] for axis in lhs_batch)
        + tuple(lhs.shape[axis] for axis in lhs_free)
        + tuple(rhs.shape[axis] for axis in rhs_free)
    )
    return product.reshape(shape)


def _dot_cotangent(cotangent, other, contracted, other_batch, other_free, own_order):
    """Cotangent of one dot operand: contract the cotangent's dims `contracted` (those of the
    other operand's free dims) with `other`'s free dims, pairing batch dims. `own_order` names,
    for each result dim, the operand dim it holds; a transpose restores the operand's order."""
    batch_count = len(other_batch)
    result = make(
        "dot", [cotangent, other],
        lhs_batch=tuple(range(batch_count)), rhs_batch=tuple(other_batch),
        lhs_contracting=tuple(contracted), rhs_contracting=tuple(other_free),
    )
    permutation = tuple(own_order.index(axis) for axis in range(len(own_order)))
    if permutation == tuple(range(len(own_order))):
        return result
    return make("transpose", [result], permutation=permutation)


def _dot_vjp(instruction, cotangent):
    """The cotangent has dims (batch, lhs free, rhs free); see the module docstring."""
    lhs, rhs = instruction.operands
    lhs_batch, rhs_batch = instruction.attr("lhs_batch"), instruction.attr("rhs_batch")
    lhs_contracting, rhs_contracting = instruction.attr("lhs_contracting"), instruction.attr("rhs_contracting")
    lhs_free = _free_axes(lhs.ndim, lhs_batch, lhs_contracting)
    rhs_free = _free_axes(rhs.ndim, rhs_batch, rhs_contracting)
    batch_count = len(lhs_batch)
    lhs_free_range = range(batch_count, batch_count + len(lhs_free))
    rhs_free_range = range(batch_count + len(lhs_free), cotangent.ndim)
    # The dot's remaining dims come from the other operand's contracting dims in increasing
    # order; each pairs with the dim of this operand it was contracted against.
    lhs_order = list(lhs_batch) + lhs_free + [
        lhs_contracting[rhs_contracting.index(axis)] for axis in sorted(rhs_contracting)
    ]
    rhs_order = list(rhs_batch) + rhs_free + [
        rhs_contracting[lhs_contracting.index(axis)] for axis in sorted(lhs_contracting)
    ]
    return (
        _dot_cotangent(cotangent, rhs, rhs_free_range, rhs_batch, rhs_free, lhs_order),
        _dot_cotangent(cotangent, lhs, lhs_free_range, lhs_batch, lhs_free, rhs_order),
    )


register(OpDef(
    name="dot",
    arity=2,
    shape_rule=_dot_shape,
    dtype_rule=lambda operands, attrs: same_dtype("dot", operands),
    reference=_dot_reference,
    attrs=("lhs_batch", "rhs_batch", "lhs_contracting", "rhs_contracting"),
    traits=frozenset({REDUCTION}),
    doc="General dot product with batch and contracting dimensions (XLA's dot_general).",
    vjp=_dot_vjp,
))
