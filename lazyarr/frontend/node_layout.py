"""Small layout helpers on HLO nodes shared by the reduction, linalg and fft modules.

They build strict HLO (reshape, transpose, slice, concatenate, gather, iota) and skip the
instruction when it would be the identity, so graphs stay as small as the user's intent.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..hlo import Instruction, make
from .manipulation_nodes import reshape_node as reshape
from .manipulation_nodes import slice_node as slice_axis
from .manipulation_nodes import transpose_node as transpose


def move_axes_to_end(node: Instruction, axes) -> Instruction:
    """Transpose so that `axes` (in the given order) become the last dimensions."""
    rest = [axis for axis in range(node.ndim) if axis not in axes]
    return transpose(node, rest + list(axes))


def move_last_axis_to(node: Instruction, destination: int) -> Instruction:
    """Inverse of moving one axis to the end: the last axis goes to `destination`."""
    order = list(range(node.ndim - 1))
    order.insert(destination, node.ndim - 1)
    return transpose(node, order)


def flatten_axes_to_end(node: Instruction, axes) -> Instruction:
    """Move `axes` to the end and merge them into one trailing dimension (C order)."""
    moved = move_axes_to_end(node, axes)
    kept = moved.shape[: node.ndim - len(axes)]
    return reshape(moved, kept + (math.prod(node.shape[axis] for axis in axes),))


def concatenate(nodes, axis: int) -> Instruction:
    nodes = list(nodes)
    if len(nodes) == 1:
        return nodes[0]
    return make("concatenate", nodes, dimension=axis)


def stack_last(nodes) -> Instruction:
    """Stack equal-shaped nodes along a new last axis."""
    expanded = [reshape(node, node.shape + (1,)) for node in nodes]
    return concatenate(expanded, len(nodes[0].shape))


def roll(node: Instruction, shift: int, axis: int) -> Instruction:
    """NumPy's roll along one axis, as two slices and a concatenate."""
    size = node.shape[axis]
    if size == 0:
        return node
    shift %= size
    if shift == 0:
        return node
    tail = slice_axis(node, axis, size - shift, size)
    head = slice_axis(node, axis, 0, size - shift)
    return concatenate([tail, head], axis)


def take_along_last(node: Instruction, index: Instruction) -> Instruction:
    """node[..., index[...]]: for node of shape B + (K,) and int64 index of shape B."""
    batch = node.shape[:-1]
    columns = [
        make("iota", shape=batch + (1,), dtype=dtypes.int64, dimension=axis) for axis in range(len(batch))
    ]
    columns.append(reshape(index, batch + (1,)))
    indices = concatenate(columns, len(batch))
    return make("gather", [node, indices], index_dims=tuple(range(node.ndim)))


def filled(value, dtype, shape) -> Instruction:
    """A constant `value` of `dtype` broadcast to `shape`."""
    from .core import scalar_constant

    scalar = scalar_constant(value, np.dtype(dtype))
    shape = tuple(shape)
    return scalar if shape == () else make("broadcast", [scalar], shape=shape, dimensions=())
