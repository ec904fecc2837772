"""Small helpers of NumPy's insert, delete and friends: pick positions along an axis, check lazy
positions, fit values into a target shape as NumPy's assignment does, and call NumPy on
static arguments with the calling function's name in its errors.

Positions known now are NumPy arrays: a few contiguous runs become slices joined by one
`concatenate` (no index constant), anything else one `gather` with a constant index.
Positions known only at evaluation are lazy int64 arrays, read through a gather from an iota
so that an out-of-range one raises IndexError when evaluated, as indexing does.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..hlo import Instruction, constant, make
from . import elementwise
from .array import Array
from .core import as_array, contains_lazy, convert, wrap
from .indexing_key import format_shape
from .manipulation_nodes import broadcast_node, reshape_node, slice_node, transpose_node

# At most this many runs of consecutive positions are joined from slices; more use a gather.
_MAX_RUNS = 8


def numpy_call(function, where: str, *args, **kwargs):
    """`function(*args, **kwargs)` on static arguments, its errors prefixed with `where`."""
    try:
        return function(*args, **kwargs)
    except (TypeError, ValueError, IndexError, OverflowError) as error:
        raise type(error)(f"{where}: {error}") from None


def select_positions(node: Instruction, axis: int, positions: np.ndarray) -> Instruction:
    """`node` at the static in-range `positions` (1-d, non-negative) along `axis`."""
    positions = np.asarray(positions, dtype=np.int64).reshape(-1)
    size = node.shape[axis]
    if positions.size == size and np.array_equal(positions, np.arange(size)):
        return node
    if positions.size == 0:
        return slice_node(node, axis, 0, 0)
    breaks = np.flatnonzero(np.diff(positions) != 1) + 1
    starts = [0, *breaks.tolist()]
    stops = [*breaks.tolist(), positions.size]
    if len(starts) <= _MAX_RUNS:
        pieces = [slice_node(node, axis, int(positions[start]), int(positions[stop - 1]) + 1)
                  for start, stop in zip(starts, stops)]
        return pieces[0] if len(pieces) == 1 else make("concatenate", pieces, dimension=axis)
    gathered = make("gather", [node, constant(positions.reshape(-1, 1))], index_dims=(axis,))
    # gather puts the indexed axis first; move it back to `axis`.
    return transpose_node(gathered, list(range(1, axis + 1)) + [0] + list(range(axis + 1, node.ndim)))


def checked_position(index: Array, size: int, *, inclusive: bool = False) -> Array:
    """The lazy int64 `index` as a position in [0, size) (negative ones count from the end;
    `inclusive`: [0, size], an insertion point); an index outside that range (before the
    shift) raises IndexError when evaluated."""
    shifted = elementwise.where(elementwise.less(index, 0), elementwise.add(index, size), index)
    limit = size + 1 if inclusive else size
    outside = elementwise.where(elementwise.less(shifted, 0), limit, shifted)  # a gather would wrap it
    positions = make("iota", [], shape=(limit,), dtype=dtypes.int64, dimension=0)
    column = reshape_node(outside._node, outside.shape + (1,))
    return wrap(make("gather", [positions, column], index_dims=(0,)))


def lazy_integers(value, where: str) -> Array | None:
    """`value` as a lazy int64 array when it is (or holds) a lazy integer array; None when it
    is static or a boolean array (a mask, which callers evaluate)."""
    if not (isinstance(value, Array) or (isinstance(value, (list, tuple)) and contains_lazy(value))):
        return None
    array = as_array(value, where=where)
    if dtypes.is_bool(array.dtype):
        return None
    if not dtypes.is_integer(array.dtype):
        raise IndexError(f"{where}: arrays used as indices must be of integer (or boolean) type, got {array.dtype}")
    return wrap(convert(array._node, dtypes.int64))


def values_node(values, dtype, ndmin: int, where: str) -> Instruction:
    """`values` converted to `dtype` as NumPy's `array(values, dtype=dtype, ndmin=ndmin)`
    converts it (static values by NumPy itself: a Python int out of range raises
    OverflowError, floats truncate), with leading unit axes up to `ndmin`."""
    if isinstance(values, Array) or (isinstance(values, (list, tuple)) and contains_lazy(values)):
        node = convert(as_array(values, where=where)._node, dtype)
    else:
        node = as_array(numpy_call(np.array, where, values, dtype=dtype), where=where)._node
    if node.ndim < ndmin:
        node = reshape_node(node, (1,) * (ndmin - node.ndim) + node.shape)
    return node


def fitted(node: Instruction, target: tuple[int, ...], where: str, *, advanced: bool) -> Instruction:
    """`node` broadcast to `target` as NumPy's assignment broadcasts a value (leading unit
    axes beyond the target's rank dropped), with NumPy's error for a value that does not fit."""
    shape = node.shape
    while len(shape) > len(target) and shape[0] == 1:
        shape = shape[1:]
    offset = len(target) - len(shape)
    if offset < 0 or any(size not in (1, target[offset + axis]) for axis, size in enumerate(shape)):
        if advanced:
            raise ValueError(
                f"{where}: shape mismatch: value array of shape {format_shape(node.shape)} could not be "
                f"broadcast to indexing result of shape {format_shape(target)}"
            )
        raise ValueError(
            f"{where}: could not broadcast input array from shape {format_shape(node.shape)} into shape "
            f"{format_shape(target)}"
        )
    return broadcast_node(reshape_node(node, shape), target, where=where)
