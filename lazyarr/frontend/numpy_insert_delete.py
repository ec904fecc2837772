"""append, insert and delete: NumPy's functions that add or remove entries along an axis.

Where each entry of the result comes from is decided by NumPy itself, on a proxy of the axis:
`np.insert(np.arange(N), obj, markers)` or `np.delete(np.arange(N), obj)` gives the source
position of every result position (or the marker of an inserted value), with NumPy's own
checks of `obj`. The result is then slices of the input joined together, or one gather with
a constant index (axis_positions.py): lazy, and nothing is copied until a consumer reads it.

A lazy `obj` is evaluated only where it sets the result's shape: a boolean mask, or several
positions to delete (a repeated one counts once). Lazy positions to insert, or one lazy
position to delete, stay lazy; an out-of-range one raises IndexError when evaluated.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..hlo import make
from ..shapes import normalize_axis
from . import elementwise, reductions
from .array import Array
from .axis_positions import (
    checked_position,
    fitted,
    lazy_integers,
    select_positions,
    values_node,
)
from .core import as_array, contains_lazy, convert, wrap
from .indexing_take import take
from .manipulation_joining import concatenate
from .manipulation_nodes import reshape_node, transpose_node
from .searching import argsort

__all__ = ["append", "delete", "insert"]


def _along_axis(arr, axis, where: str) -> tuple[Array, int]:
    """The operand and its axis; axis=None works on the flattened array (NumPy's ravel)."""
    array = as_array(arr, where=where)
    if axis is None:
        if array.ndim != 1:
            array = wrap(reshape_node(array._node, (array.size,)))
        return array, 0
    return array, normalize_axis(axis, array.ndim, where=where)


def _proxy(function, where: str, axis: int, *args):
    """NumPy's `function` on the proxy of one axis; its IndexError names the real axis."""
    try:
        return function(*args)
    except IndexError as error:
        raise IndexError(f"{where}: {str(error).replace('for axis 0 ', f'for axis {axis} ')}") from None
    except (TypeError, ValueError, OverflowError) as error:
        raise type(error)(f"{where}: {error}") from None


def append(arr, values, axis=None) -> Array:
    """`values` joined to the end of `arr` along `axis` (both flattened when axis is None).

    The dtype is NumPy's result type of both, as for concatenate.

    >>> import lazyarr as la
    >>> la.append(la.asarray([[1, 2]]), [3, 4]).tolist()
    [1, 2, 3, 4]
    """
    array = as_array(arr, where="append")
    extra = as_array(values, where="append")
    if axis is None:
        array = wrap(reshape_node(array._node, (array.size,)))
        extra = wrap(reshape_node(extra._node, (extra.size,)))
        axis = 0
    try:
        return concatenate((array, extra), axis=axis)
    except ValueError as error:  # (AxisError included)
        raise type(error)(f"append: {error}") from None


# -- insert ------------------------------------------------------------------------------------
def insert(arr, obj, values, axis=None) -> Array:
    """`values` inserted before the positions `obj` (an int, a slice, a sequence of ints, or a
    boolean mask) along `axis` (the flattened array when None), in `arr`'s dtype.

    One position inserts all of `values` there (for an int, `values` is laid along `axis` as
    NumPy does); several positions insert one entry before each, in their order. Lazy integer
    positions stay lazy.

    >>> import lazyarr as la
    >>> la.insert(la.asarray([1, 2, 3]), [1, 1], [8, 9]).tolist()
    [1, 8, 9, 2, 3]
    """
    array, axis = _along_axis(arr, axis, "insert")
    lazy = lazy_integers(obj, "insert")
    if lazy is not None and lazy.size:
        return _insert_lazy(array, axis, lazy, values)
    if isinstance(obj, Array) or (isinstance(obj, (list, tuple)) and contains_lazy(obj)):
        obj = as_array(obj, where="insert").numpy()  # a boolean mask (its count sets the shape)
    size = array.shape[axis]
    if isinstance(obj, slice):
        indices = np.arange(*obj.indices(size))
    else:
        indices = np.asarray(obj)
        if indices.dtype == bool:
            if indices.ndim != 1:
                raise ValueError("insert: boolean array argument obj to insert must be one dimensional")
            obj = indices = np.flatnonzero(indices)
        elif indices.ndim > 1:
            raise ValueError("insert: index array argument obj to insert must be one dimensional or scalar")
    if indices.size == 1:
        index = indices.item()
        if isinstance(index, (int, np.integer)) and not -size <= index <= size:
            raise IndexError(f"insert: index {obj} is out of bounds for axis {axis} with size {size}")
        update = _single_update(array, axis, values, scalar=indices.ndim == 0)
    else:
        update = _many_update(array, axis, values, indices.size)
    count = update.shape[axis]
    markers = -1 - np.arange(count)
    sources = _proxy(np.insert, "insert", axis, np.arange(size), obj, markers)
    sources = np.where(sources >= 0, sources, size - 1 - sources)  # a marker -> its value's position
    joined = make("concatenate", [array._node, update], dimension=axis) if count else array._node
    return wrap(select_positions(joined, axis, sources))


def _single_update(array: Array, axis: int, values, *, scalar: bool):
    """The values inserted at one position: NumPy's `array(values, ndmin=arr.ndim)`, with its
    first axis moved to `axis` for an integer position (so that `insert(m, 1, [a, b], axis=1)`
    inserts one column), fitted to the block they fill."""
    node = values_node(values, array.dtype, array.ndim, "insert")
    if scalar and node.ndim:
        order = list(range(1, node.ndim))
        order.insert(axis, 0)
        node = transpose_node(node, order)
    shape = list(array.shape)
    shape[axis] = node.shape[axis]
    return fitted(node, tuple(shape), "insert", advanced=False)


def _many_update(array: Array, axis: int, values, count: int):
    """The values inserted at `count` positions, one entry along `axis` for each."""
    node = values_node(values, array.dtype, 0, "insert")
    shape = list(array.shape)
    shape[axis] = count
    return fitted(node, tuple(shape), "insert", advanced=True)


def _insert_lazy(array: Array, axis: int, positions: Array, values) -> Array:
    """insert at lazy integer positions: the result's source positions computed lazily.

    Positions are sorted stably (NumPy's mergesort), so the k-th in sorted order lands at
    `position + k`; every other result position j reads the input at j minus the number of
    inserted entries before it."""
    if positions.ndim > 1:
        raise ValueError("insert: index array argument obj to insert must be one dimensional or scalar")
    size = array.shape[axis]
    if positions.size == 1:
        update = _single_update(array, axis, values, scalar=positions.ndim == 0)
        count = update.shape[axis]
        start = checked_position(wrap(reshape_node(positions._node, ())), size, inclusive=True)
        landing = elementwise.add(start, wrap(make("iota", [], shape=(count,), dtype=dtypes.int64, dimension=0)))
    else:
        update = _many_update(array, axis, values, positions.size)
        count = positions.size
        start = checked_position(positions, size, inclusive=True)
        order = argsort(start, kind="stable")
        landing = elementwise.add(start, argsort(order, kind="stable"))  # position + rank
    total = size + count
    if count == 0:
        return wrap(array._node)
    grid = (total, count)
    rows = wrap(make("iota", [], shape=grid, dtype=dtypes.int64, dimension=0))
    columns = wrap(make("iota", [], shape=grid, dtype=dtypes.int64, dimension=1))
    landed = wrap(make("broadcast", [landing._node], shape=grid, dimensions=(1,)))
    hit = elementwise.equal(landed, rows)
    inserted = reductions.any(hit, axis=1)
    which = reductions.sum(elementwise.where(hit, columns, 0), axis=1)
    before = reductions.sum(elementwise.less(landed, rows), axis=1, dtype=dtypes.int64)
    here = wrap(make("iota", [], shape=(total,), dtype=dtypes.int64, dimension=0))
    sources = elementwise.where(inserted, elementwise.add(which, size), elementwise.subtract(here, before))
    joined = wrap(make("concatenate", [array._node, update], dimension=axis))
    return take(joined, sources, axis=axis)


# -- delete ------------------------------------------------------------------------------------
def delete(arr, obj, axis=None) -> Array:
    """`arr` without the entries at `obj` (an int, a slice, a sequence of ints, or a boolean
    mask of the axis' length) along `axis` (the flattened array when None).

    Static `obj` stays lazy (slices of `arr`, or one gather); a lazy mask or lazy list of
    positions is evaluated (how many entries remain depends on it); one lazy position is not.

    >>> import lazyarr as la
    >>> la.delete(la.asarray([[1, 2, 3], [4, 5, 6]]), [0, 2], axis=1).tolist()
    [[2], [5]]
    """
    array, axis = _along_axis(arr, axis, "delete")
    size = array.shape[axis]
    lazy = lazy_integers(obj, "delete")
    if lazy is not None and lazy.size == 1:
        return _delete_one_lazy(array, axis, wrap(reshape_node(lazy._node, ())))
    if isinstance(obj, Array) or (isinstance(obj, (list, tuple)) and contains_lazy(obj)):
        mask = as_array(obj, where="delete")
        if dtypes.is_bool(mask.dtype) and mask.shape != (size,):
            raise ValueError(
                "delete: boolean array argument obj to delete must be one dimensional and match the "
                f"axis length of {size}"
            )
        obj = mask.numpy()  # how many entries remain depends on its values
    keep = _proxy(np.delete, "delete", axis, np.arange(size), obj)
    return wrap(select_positions(array._node, axis, keep))


def _delete_one_lazy(array: Array, axis: int, position: Array) -> Array:
    """delete at one lazy position: result position j reads j, or j + 1 from the position on."""
    size = array.shape[axis]
    if size == 0:
        raise IndexError(f"delete: index out of bounds for axis {axis} with size 0")
    start = checked_position(position, size)
    here = wrap(make("iota", [], shape=(size - 1,), dtype=dtypes.int64, dimension=0))
    shift = wrap(convert(elementwise.greater_equal(here, start)._node, dtypes.int64))
    return take(array, elementwise.add(here, shift), axis=axis)
