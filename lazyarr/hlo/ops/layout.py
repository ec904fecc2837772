"""Layout ops: each output element is one operand element at a remapped index.

broadcast, reshape, transpose, slice (positive strides), reverse, pad (with interior
padding) and concatenate. A compiler emits them by rewriting the index, never by copying.

Their VJP rules move the cotangent back through the same remapping: a broadcast sums over
the dims it repeated, a slice pads with zeros, a pad slices, a concatenate splits.
"""

from __future__ import annotations

import math

import numpy as np

from ..instruction import make
from ..op import INDEX_REMAP, HloError, OpDef, register
from ._rules import check_axes, check_int_tuple, describe, same_dtype
from ._vjp_support import multiply, reshape_to, scalar, sum_over, zeros_like

_REMAP = frozenset({INDEX_REMAP})


def _broadcast_shape(operands, attrs):
    (operand,) = operands
    shape = check_int_tuple("broadcast", "shape", attrs["shape"], minimum=0)
    dimensions = check_axes("broadcast", attrs["dimensions"], len(shape))
    if len(dimensions) != operand.ndim:
        raise HloError(
            f"broadcast: dimensions {dimensions} must map each of the operand's {operand.ndim} dims"
        )
    if list(dimensions) != sorted(dimensions):
        raise HloError(f"broadcast: dimensions {dimensions} must be increasing")
    for axis, target in enumerate(dimensions):
        if operand.shape[axis] not in (1, shape[target]):
            raise HloError(
                f"broadcast: operand dim {axis} of size {operand.shape[axis]} cannot broadcast "
                f"to output dim {target} of size {shape[target]}"
            )
    return shape


def _broadcast_reference(values, attrs):
    (operand,) = values
    shape, dimensions = attrs["shape"], attrs["dimensions"]
    view = [1] * len(shape)
    for axis, target in enumerate(dimensions):
        view[target] = operand.shape[axis]
    return np.broadcast_to(operand.reshape(view), shape)


def _broadcast_vjp(instruction, cotangent):
    """Sum over the new dims and the size-1 dims that were stretched, then restore the 1s."""
    (operand,) = instruction.operands
    dimensions = instruction.attr("dimensions")
    summed = [axis for axis in range(instruction.ndim) if axis not in dimensions]
    summed += [
        target for axis, target in enumerate(dimensions) if operand.shape[axis] != instruction.shape[target]
    ]
    return (reshape_to(sum_over(cotangent, summed), operand.shape),)


register(OpDef(
    name="broadcast",
    arity=1,
    shape_rule=_broadcast_shape,
    dtype_rule=lambda operands, attrs: operands[0].dtype,
    reference=_broadcast_reference,
    attrs=("shape", "dimensions"),
    traits=_REMAP,
    doc="Operand dim i maps to output dim dimensions[i] (size 1 or equal); other dims repeat.",
    vjp=_broadcast_vjp,
))


def _reshape_shape(operands, attrs):
    shape = check_int_tuple("reshape", "shape", attrs["shape"], minimum=0)
    if math.prod(shape) != operands[0].size:
        raise HloError(f"reshape: cannot reshape {describe(operands)} to {list(shape)}")
    return shape


register(OpDef(
    name="reshape",
    arity=1,
    shape_rule=_reshape_shape,
    dtype_rule=lambda operands, attrs: operands[0].dtype,
    reference=lambda values, attrs: values[0].reshape(attrs["shape"]),
    attrs=("shape",),
    traits=_REMAP,
    doc="Row-major reshape to the same number of elements.",
    vjp=lambda instruction, cotangent: (reshape_to(cotangent, instruction.operands[0].shape),),
))


def _transpose_shape(operands, attrs):
    (operand,) = operands
    permutation = check_axes("transpose", attrs["permutation"], operand.ndim, "permutation")
    if len(permutation) != operand.ndim:
        raise HloError(f"transpose: permutation {permutation} must have {operand.ndim} entries")
    return tuple(operand.shape[axis] for axis in permutation)


def _transpose_vjp(instruction, cotangent):
    permutation = instruction.attr("permutation")
    inverse = tuple(permutation.index(axis) for axis in range(len(permutation)))
    return (make("transpose", [cotangent], permutation=inverse),)


register(OpDef(
    name="transpose",
    arity=1,
    shape_rule=_transpose_shape,
    dtype_rule=lambda operands, attrs: operands[0].dtype,
    reference=lambda values, attrs: np.transpose(values[0], attrs["permutation"]),
    attrs=("permutation",),
    traits=_REMAP,
    doc="output dim i is operand dim permutation[i].",
    vjp=_transpose_vjp,
))


def _slice_shape(operands, attrs):
    (operand,) = operands
    start = check_int_tuple("slice", "start", attrs["start"], operand.ndim, minimum=0)
    limit = check_int_tuple("slice", "limit", attrs["limit"], operand.ndim, minimum=0)
    stride = check_int_tuple("slice", "stride", attrs["stride"], operand.ndim, minimum=1)
    shape = []
    for axis, size in enumerate(operand.shape):
        if not start[axis] <= limit[axis] <= size:
            raise HloError(
                f"slice: need 0 <= start <= limit <= size on dim {axis}, got "
                f"start={start[axis]} limit={limit[axis]} size={size}"
            )
        shape.append(-(-(limit[axis] - start[axis]) // stride[axis]))
    return tuple(shape)


def _slice_reference(values, attrs):
    index = tuple(
        slice(begin, end, step)
        for begin, end, step in zip(attrs["start"], attrs["limit"], attrs["stride"])
    )
    return values[0][index]


def _slice_vjp(instruction, cotangent):
    """Pad the cotangent with zeros back to the operand's shape: `start` before, stride - 1
    between elements, and what remains of each dim after the last element taken."""
    (operand,) = instruction.operands
    start, stride = instruction.attr("start"), instruction.attr("stride")
    interior = tuple(step - 1 for step in stride)
    high = tuple(
        size - begin - (count + max(count - 1, 0) * (step - 1))
        for size, begin, count, step in zip(operand.shape, start, instruction.shape, stride)
    )
    zero = scalar(0, cotangent.dtype)
    return (make("pad", [cotangent, zero], low=start, high=high, interior=interior),)


register(OpDef(
    name="slice",
    arity=1,
    shape_rule=_slice_shape,
    dtype_rule=lambda operands, attrs: operands[0].dtype,
    reference=_slice_reference,
    attrs=("start", "limit", "stride"),
    traits=_REMAP,
    doc="Static strided slice with positive strides (negative steps are reverse + slice).",
    vjp=_slice_vjp,
))


def _reverse_shape(operands, attrs):
    check_axes("reverse", attrs["dimensions"], operands[0].ndim)
    return operands[0].shape


register(OpDef(
    name="reverse",
    arity=1,
    shape_rule=_reverse_shape,
    dtype_rule=lambda operands, attrs: operands[0].dtype,
    reference=lambda values, attrs: np.flip(values[0], attrs["dimensions"]),
    attrs=("dimensions",),
    traits=_REMAP,
    doc="Reverse the order of elements along the given dimensions.",
    vjp=lambda instruction, cotangent: (
        make("reverse", [cotangent], dimensions=instruction.attr("dimensions")),
    ),
))


def _pad_shape(operands, attrs):
    operand, padding_value = operands
    if padding_value.shape != ():
        raise HloError(f"pad: padding value must be a scalar, got shape {padding_value.shape}")
    ndim = operand.ndim
    low = check_int_tuple("pad", "low", attrs["low"], ndim, minimum=0)
    high = check_int_tuple("pad", "high", attrs["high"], ndim, minimum=0)
    interior = check_int_tuple("pad", "interior", attrs["interior"], ndim, minimum=0)
    return tuple(
        low[axis] + high[axis] + size + max(size - 1, 0) * interior[axis]
        for axis, size in enumerate(operand.shape)
    )


def _pad_reference(values, attrs):
    operand, padding_value = values
    shape = tuple(
        low + high + size + max(size - 1, 0) * interior
        for low, high, interior, size in zip(attrs["low"], attrs["high"], attrs["interior"], operand.shape)
    )
    result = np.full(shape, padding_value, dtype=operand.dtype)
    index = tuple(
        slice(low, low + max(size - 1, 0) * (interior + 1) + 1 if size else low, interior + 1)
        for low, interior, size in zip(attrs["low"], attrs["interior"], operand.shape)
    )
    result[index] = operand
    return result


def _pad_vjp(instruction, cotangent):
    """The operand's cotangent is the strided slice where its elements landed; the padding
    value's is the sum of the cotangent over the padded positions (a 0/1 mask picks them)."""
    operand, padding_value = instruction.operands
    low, interior = instruction.attr("low"), instruction.attr("interior")
    limit = tuple(
        begin + (size - 1) * (gap + 1) + 1 if size else begin
        for begin, gap, size in zip(low, interior, operand.shape)
    )
    stride = tuple(gap + 1 for gap in interior)
    operand_cotangent = make("slice", [cotangent], start=low, limit=limit, stride=stride)
    padded_positions = make(
        "pad", [zeros_like(operand), scalar(1, operand.dtype)],
        low=low, high=instruction.attr("high"), interior=interior,
    )
    value_cotangent = sum_over(multiply(cotangent, padded_positions), range(instruction.ndim))
    return operand_cotangent, value_cotangent


def _pad_dtype(operands, attrs):
    return same_dtype("pad", operands)


register(OpDef(
    name="pad",
    arity=2,
    shape_rule=_pad_shape,
    dtype_rule=_pad_dtype,
    reference=_pad_reference,
    attrs=("low", "high", "interior"),
    traits=_REMAP,
    doc="pad(operand, scalar): low/high edge padding and interior padding between elements.",
    vjp=_pad_vjp,
))


def _concatenate_shape(operands, attrs):
    if not operands:
        raise HloError("concatenate: needs at least one operand")
    dimension = attrs["dimension"]
    ndim = operands[0].ndim
    if not 0 <= dimension < ndim:
        raise HloError(f"concatenate: dimension {dimension} out of range for rank {ndim}")
    for operand in operands:
        if operand.ndim != ndim or any(
            operand.shape[axis] != operands[0].shape[axis] for axis in range(ndim) if axis != dimension
        ):
            raise HloError(
                f"concatenate: shapes must match except on dimension {dimension}, "
                f"got {describe(operands)}"
            )
    shape = list(operands[0].shape)
    shape[dimension] = sum(operand.shape[dimension] for operand in operands)
    return tuple(shape)


def _concatenate_vjp(instruction, cotangent):
    """Each operand's cotangent is its block of the result's cotangent."""
    dimension = instruction.attr("dimension")
    cotangents, offset = [], 0
    for operand in instruction.operands:
        start = tuple(offset if axis == dimension else 0 for axis in range(instruction.ndim))
        limit = tuple(
            offset + size if axis == dimension else size for axis, size in enumerate(operand.shape)
        )
        stride = (1,) * instruction.ndim
        cotangents.append(make("slice", [cotangent], start=start, limit=limit, stride=stride))
        offset += operand.shape[dimension]
    return tuple(cotangents)


register(OpDef(
    name="concatenate",
    arity=None,
    shape_rule=_concatenate_shape,
    dtype_rule=lambda operands, attrs: same_dtype("concatenate", operands),
    reference=lambda values, attrs: np.concatenate(values, axis=attrs["dimension"]),
    attrs=("dimension",),
    traits=_REMAP,
    doc="Join operands along an existing dimension.",
    vjp=_concatenate_vjp,
))
