"""Flat and multi-dimensional positions: unravel_index, ravel_multi_index, indices.

All three are integer arithmetic on positions, so they stay lazy. Indices given as NumPy
arrays, lists or scalars are known now: they are checked now, with NumPy's errors, and the
result is computed once. Lazy indices are computed lazily; an out-of-range entry among them
cannot be seen until evaluation, so each coordinate is read through a gather from an iota of
the dimension's size, which raises IndexError for it when the graph is evaluated (as indexing
does) instead of returning a wrong position.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from .. import dtypes
from ..hlo import Instruction, make
from ..shapes import broadcast_shapes
from . import elementwise
from .array import Array
from .core import as_array, broadcast_to, contains_lazy, convert, from_numpy, scalar_constant, wrap

__all__ = ["indices", "ravel_multi_index", "unravel_index"]

_INTP_MAX = np.iinfo(np.intp).max
_CLIP_MODES = ("raise", "wrap", "clip")


def _dimensions(value, where: str, argument: str) -> tuple[int, ...]:
    """An int or a sequence of ints as a tuple of non-negative sizes."""
    items = (value,) if np.ndim(value) == 0 and not isinstance(value, (tuple, list)) else tuple(value)
    try:
        sizes = tuple(operator.index(item) for item in items)
    except TypeError:
        raise TypeError(f"{where}: {argument} must be integers, got {value!r}") from None
    if any(size < 0 for size in sizes):
        raise ValueError(f"{where}: {argument} must be non-negative, got {sizes}")
    if math.prod(sizes) > _INTP_MAX:
        raise ValueError(
            f"{where}: invalid dims: array size defined by dims is larger than the maximum possible size."
        )
    return sizes


def _check_order(order, where: str) -> str:
    if order not in ("C", "F"):
        raise ValueError(f"{where}: only 'C' or 'F' order is permitted (got {order!r})")
    return order


def _integer_index(value, where: str) -> Array:
    """A lazy index array as int64 (bool counts as integer, as in NumPy)."""
    array = as_array(value, where=where)
    if not (dtypes.is_integer(array.dtype) or dtypes.is_bool(array.dtype)):
        raise TypeError(f"{where}: only int indices permitted, got dtype {array.dtype}")
    return wrap(convert(array._node, dtypes.int64))


def _checked(index: Array, size: int) -> Array:
    """`index` itself where 0 <= index < size; any other entry raises IndexError at evaluation.

    A gather from iota(size) returns the index it reads; negative entries (which a gather
    would wrap) are sent past the end first so that they raise too.
    """
    outside = elementwise.where(elementwise.less(index, 0), size, index)
    positions = make("iota", [], shape=(size,), dtype=dtypes.int64, dimension=0)
    column = make("reshape", [outside._node], shape=index.shape + (1,))
    return wrap(make("gather", [positions, column], index_dims=(0,)))


def _numpy_call(function, where: str, *args, **kwargs):
    """Call NumPy's function on static arguments, naming ours in its errors."""
    try:
        return function(*args, **kwargs)
    except (TypeError, ValueError) as error:
        raise type(error)(f"{where}: {error}") from None


def unravel_index(indices, shape, order="C") -> tuple[Array, ...]:
    """The coordinates (one int64 array per dimension of `shape`) of flat positions `indices`.

    Lazy indices (`la.argmax(x)`) stay lazy: an entry outside [0, prod(shape)) raises
    IndexError when evaluated; static ones raise NumPy's ValueError now.

    >>> import lazyarr as la
    >>> [int(part) for part in la.unravel_index(5, (2, 3))]
    [1, 2]
    """
    order = _check_order(order, "unravel_index")
    dims = _dimensions(shape, "unravel_index", "shape")
    if not (isinstance(indices, Array) or (isinstance(indices, (list, tuple)) and contains_lazy(indices))):
        parts = _numpy_call(np.unravel_index, "unravel_index", indices, dims, order=order)
        return tuple(from_numpy(np.asarray(part, dtype=np.int64)) for part in parts)
    remaining = _checked(_integer_index(indices, "unravel_index"), math.prod(dims))
    coordinates = [None] * len(dims)
    order_of_axes = range(len(dims) - 1, -1, -1) if order == "C" else range(len(dims))
    for axis in order_of_axes:
        size = dims[axis]
        coordinates[axis] = elementwise.remainder(remaining, size)
        remaining = elementwise.floor_divide(remaining, size)
    return tuple(coordinates)


def _modes(mode, count: int, where: str) -> tuple[str, ...]:
    modes = (mode,) * count if isinstance(mode, str) else tuple(mode)
    if len(modes) != count:
        raise ValueError(f"{where}: list of clipmodes has wrong length ({len(modes)} instead of {count})")
    for item in modes:
        if item not in _CLIP_MODES:
            raise ValueError(f"{where}: clipmode must be one of 'clip', 'raise', or 'wrap' (got {item!r})")
    return modes


def ravel_multi_index(multi_index, dims, mode="raise", order="C") -> Array:
    """Flat positions (int64) of the coordinates in `multi_index` for an array of shape `dims`.

    `mode` ('raise', 'wrap', 'clip', or one per dimension) treats out-of-range coordinates
    as NumPy does; with 'raise', lazy coordinates are checked when evaluated (IndexError).

    >>> import lazyarr as la
    >>> la.ravel_multi_index(([1, 0], [2, 1]), (2, 3)).tolist()
    [5, 1]
    """
    order = _check_order(order, "ravel_multi_index")
    dims = _dimensions(dims, "ravel_multi_index", "dims")
    if not isinstance(multi_index, (tuple, list, Array)) or len(multi_index) != len(dims):
        raise ValueError(f"ravel_multi_index: parameter multi_index must be a sequence of length {len(dims)}")
    modes = _modes(mode, len(dims), "ravel_multi_index")
    if not (isinstance(multi_index, Array) or contains_lazy(list(multi_index))):
        flat = _numpy_call(np.ravel_multi_index, "ravel_multi_index", tuple(multi_index), dims,
                           mode=modes, order=order)
        return from_numpy(np.asarray(flat, dtype=np.int64))
    parts = [_integer_index(part, "ravel_multi_index") for part in multi_index]
    shape = broadcast_shapes(*(part.shape for part in parts), where="ravel_multi_index")
    if math.prod(shape) and 0 in dims:
        raise ValueError("ravel_multi_index: cannot unravel if shape has zero entries (is empty).")
    strides = [math.prod(dims[axis + 1:]) if order == "C" else math.prod(dims[:axis]) for axis in range(len(dims))]
    total: Instruction = broadcast_to(scalar_constant(0, dtypes.int64), shape)
    for part, size, part_mode, stride in zip(parts, dims, modes, strides):
        if part_mode == "wrap":
            part = elementwise.remainder(part, size)
        elif part_mode == "clip":
            part = elementwise.clip(part, 0, size - 1)
        else:
            part = _checked(part, size)
        total = make("add", [total, broadcast_to(elementwise.multiply(part, stride)._node, shape)])
    return wrap(total)


def indices(dimensions, dtype=int, sparse=False):
    """The index grids of an array of shape `dimensions`: shape (N,) + dimensions, lazily.

    sparse=True gives N broadcastable arrays (unit dimensions except their own) instead.

    >>> import lazyarr as la
    >>> la.indices((2, 3))[1].tolist()
    [[0, 1, 2], [0, 1, 2]]
    """
    dims = _dimensions(tuple(dimensions), "indices", "dimensions")
    dtype = dtypes.as_dtype(dtype, where="indices")
    grids = []
    for axis, size in enumerate(dims):
        shape = tuple(size if other == axis else (1 if sparse else dims[other]) for other in range(len(dims)))
        grid = make("iota", [], shape=shape, dtype=dtypes.int64, dimension=axis)
        grids.append(convert(grid, dtype))
    if sparse:
        return tuple(wrap(grid) for grid in grids)
    if not grids:
        return from_numpy(np.empty((0,), dtype=dtype))
    stacked = [make("reshape", [grid], shape=(1,) + dims) for grid in grids]
    return wrap(stacked[0] if len(stacked) == 1 else make("concatenate", stacked, dimension=0))
