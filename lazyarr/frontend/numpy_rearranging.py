"""NumPy's rearranging helpers: fliplr, flipud, rot90, rollaxis, hsplit, vsplit, dsplit,
row_stack, block, resize and trim_zeros.

Each is a few of lazyarr's layout functions in NumPy's arrangement, so each stays lazy and
returns what NumPy's returns: flips, rotations, rollaxis and splits are views of the input
(writes to them reach it), the others new arrays. trim_zeros alone reads values: where the
nonzero entries begin and end sets its result's shape, so it evaluates its input's zero
pattern and returns a (lazy) slice of the input.
"""

from __future__ import annotations

import operator
import warnings

import numpy as np

from ..shapes import normalize_axis
from .array import Array
from .core import as_array, wrap
from .creation import zeros
from .indexing import getitem
from .manipulation_joining import concatenate, split, vstack
from .manipulation_layout import flip, transpose
from .manipulation_nodes import as_items, normalize_axis_tuple, reshape_node, slice_node
from .manipulation_repeating import tile

__all__ = [
    "block", "dsplit", "fliplr", "flipud", "hsplit", "resize", "rollaxis", "rot90", "row_stack",
    "trim_zeros", "vsplit",
]


def fliplr(m) -> Array:
    """`m` with its columns (axis 1) in reverse order: a view, as NumPy's.

    >>> import lazyarr as la
    >>> la.fliplr(la.asarray([[1, 2], [3, 4]])).tolist()
    [[2, 1], [4, 3]]
    """
    array = as_array(m, where="fliplr")
    if array.ndim < 2:
        raise ValueError(f"fliplr: Input must be >= 2-d, got shape {array.shape}.")
    return flip(array, 1)


def flipud(m) -> Array:
    """`m` with its rows (axis 0) in reverse order: a view, as NumPy's.

    >>> import lazyarr as la
    >>> la.flipud(la.asarray([1, 2, 3])).tolist()
    [3, 2, 1]
    """
    array = as_array(m, where="flipud")
    if array.ndim < 1:
        raise ValueError("flipud: Input must be >= 1-d, got a 0-d array.")
    return flip(array, 0)


def rot90(m, k=1, axes=(0, 1)) -> Array:
    """`m` rotated by 90 degrees `k` times in the plane of `axes`, from the first axis toward
    the second: flips and a transpose, so a view as NumPy's.

    >>> import lazyarr as la
    >>> la.rot90(la.asarray([[1, 2], [3, 4]])).tolist()
    [[2, 4], [1, 3]]
    """
    axes = tuple(as_items(axes))
    if len(axes) != 2:
        raise ValueError(f"rot90: len(axes) must be 2, got axes={axes}.")
    array = as_array(m, where="rot90")
    first, second = (operator.index(axis) for axis in axes)
    if first == second or abs(first - second) == array.ndim:
        raise ValueError(f"rot90: Axes must be different, got axes={axes} for an array of ndim={array.ndim}.")
    if not (-array.ndim <= first < array.ndim and -array.ndim <= second < array.ndim):
        raise ValueError(f"rot90: Axes={axes} out of range for array of ndim={array.ndim}.")
    k %= 4  # (NumPy's steps, float k included)
    if k == 0:
        return getitem(array, (slice(None),))
    if k == 2:
        return flip(flip(array, first), second)
    permutation = list(range(array.ndim))
    permutation[first], permutation[second] = permutation[second], permutation[first]
    if k == 1:
        return transpose(flip(array, second), permutation)
    return flip(transpose(array, permutation), second)


def rollaxis(a, axis, start=0) -> Array:
    """`a` with `axis` moved to lie before position `start` (NumPy's older moveaxis): a view.

    >>> import lazyarr as la
    >>> la.rollaxis(la.zeros((2, 3, 4)), 2).shape
    (4, 2, 3)
    """
    array = as_array(a, where="rollaxis")
    ndim = array.ndim
    axis = normalize_axis(axis, ndim, where="rollaxis")
    start = operator.index(start)
    given = start
    if start < 0:
        start += ndim
    if not 0 <= start < ndim + 1:
        raise np.exceptions.AxisError(
            f"rollaxis: 'start' arg requires {-ndim} <= start < {ndim + 1}, but {given} was passed in"
        )
    if axis < start:
        start -= 1  # the axis is removed before it is put back
    if axis == start:
        return getitem(array, Ellipsis)
    order = [other for other in range(ndim) if other != axis]
    order.insert(start, axis)
    return transpose(array, order)


# -- splits ------------------------------------------------------------------------------------
def hsplit(ary, indices_or_sections) -> list[Array]:
    """split along axis 1 (axis 0 for 1-d arrays): a list of views.

    >>> import lazyarr as la
    >>> [piece.tolist() for piece in la.hsplit(la.asarray([[1, 2], [3, 4]]), 2)]
    [[[1], [3]], [[2], [4]]]
    """
    array = as_array(ary, where="hsplit")
    if array.ndim == 0:
        raise ValueError("hsplit: hsplit only works on arrays of 1 or more dimensions")
    return split(array, indices_or_sections, 1 if array.ndim > 1 else 0)


def vsplit(ary, indices_or_sections) -> list[Array]:
    """split along axis 0 of an array of 2 or more dimensions: a list of views.

    >>> import lazyarr as la
    >>> [piece.shape for piece in la.vsplit(la.zeros((4, 2)), [1])]
    [(1, 2), (3, 2)]
    """
    array = as_array(ary, where="vsplit")
    if array.ndim < 2:
        raise ValueError(f"vsplit: vsplit only works on arrays of 2 or more dimensions, got shape {array.shape}")
    return split(array, indices_or_sections, 0)


def dsplit(ary, indices_or_sections) -> list[Array]:
    """split along axis 2 of an array of 3 or more dimensions: a list of views.

    >>> import lazyarr as la
    >>> [piece.shape for piece in la.dsplit(la.zeros((1, 2, 4)), 2)]
    [(1, 2, 2), (1, 2, 2)]
    """
    array = as_array(ary, where="dsplit")
    if array.ndim < 3:
        raise ValueError(f"dsplit: dsplit only works on arrays of 3 or more dimensions, got shape {array.shape}")
    return split(array, indices_or_sections, 2)


def row_stack(tup, *, dtype=None, casting="same_kind") -> Array:
    """NumPy's deprecated alias of vstack (it warns, as NumPy 2 does).

    >>> import warnings, lazyarr as la
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     la.row_stack([[1, 2], [3, 4]]).shape
    (2, 2)
    """
    warnings.warn("`row_stack` alias is deprecated. Use `np.vstack` directly.", DeprecationWarning, stacklevel=2)
    return vstack(tup, dtype=dtype, casting=casting)


# -- block -------------------------------------------------------------------------------------
def _index_text(index) -> str:
    return "arrays" + "".join(f"[{position}]" for position in index if position is not None)


def _block_structure(arrays) -> tuple[list, int]:
    """(the index of the first leaf, the largest leaf ndim), checking NumPy's rules in its
    order: lists only (no tuples), every leaf at the same depth, then no empty list. An empty
    list counts as a leaf one level deeper. Iterative over the nesting."""
    first_index = empty_index = None
    largest = 0
    stack = [(arrays, [])]
    while stack:
        item, index = stack.pop()
        if type(item) is tuple:
            raise TypeError(
                f"block: {_index_text(index)} is a tuple. Only lists can be used to arrange blocks, and "
                "np.block does not allow implicit conversion from tuple to ndarray."
            )
        if type(item) is list and item:
            stack.extend((child, index + [position]) for position, child in reversed(list(enumerate(item))))
            continue
        if type(item) is list:
            leaf_index = index + [None]
            empty_index = empty_index or leaf_index
        else:
            leaf_index = index
            largest = max(largest, item.ndim if isinstance(item, Array) else np.ndim(item))
        if first_index is None:
            first_index = leaf_index
        elif len(leaf_index) != len(first_index):
            raise ValueError(
                f"block: List depths are mismatched. First element was at depth {len(first_index)}, but there "
                f"is an element at depth {len(leaf_index)} ({_index_text(leaf_index)})"
            )
    if empty_index is not None:
        raise ValueError(f"block: List at {_index_text(empty_index)} cannot be empty")
    return first_index, largest


def block(arrays) -> Array:
    """Assemble an array from nested lists of blocks: the innermost lists are joined along the
    last axis, the next ones along the second-to-last, and so on; every block first gets
    leading unit axes up to the result's rank.

    >>> import lazyarr as la
    >>> la.block([[la.zeros((2, 2)), la.ones((2, 1))], [la.ones((1, 3))]]).shape
    (3, 3)
    """
    first_index, largest = _block_structure(arrays)
    depth = len(first_index)
    ndim = max(largest, depth)
    if depth == 0:
        return wrap(as_array(arrays, where="block")._node)  # a single array: a copy of it

    def leaf(item) -> Array:
        array = as_array(item, where="block")
        if array.ndim < ndim:
            return wrap(reshape_node(array._node, (1,) * (ndim - array.ndim) + array.shape))
        return array

    # Post-order over the nesting: each list becomes one array joined along its axis.
    results: dict[int, Array] = {}
    stack = [(arrays, 0, False)]
    while stack:
        item, level, expanded = stack.pop()
        if level == depth:
            results[id(item)] = leaf(item)
        elif not expanded:
            stack.append((item, level, True))
            stack.extend((child, level + 1, False) for child in item)
        else:
            parts = [results[id(child)] for child in item]
            try:
                results[id(item)] = concatenate(parts, axis=-(depth - level))
            except ValueError as error:
                raise ValueError(f"block: {error}") from None
    return results[id(arrays)]


# -- resize and trim_zeros -------------------------------------------------------------------
def resize(a, new_shape) -> Array:
    """An array of `new_shape` filled with `a`'s elements in C order, repeated as needed
    (zeros when `a` is empty): a tile, a slice and a reshape.

    >>> import lazyarr as la
    >>> la.resize(la.asarray([[0, 1], [2, 3]]), (2, 3)).tolist()
    [[0, 1, 2], [3, 0, 1]]
    """
    array = as_array(a, where="resize")
    try:
        shape = tuple(operator.index(size) for size in as_items(new_shape))
    except TypeError:
        raise TypeError(f"resize: new_shape must be an int or a sequence of ints, got {new_shape!r}") from None
    if any(size < 0 for size in shape):
        raise ValueError(f"resize: all elements of `new_shape` must be non-negative, got {shape}")
    total = int(np.prod(shape, dtype=np.int64))
    if array.size == 0 or total == 0:
        return zeros(shape, dtype=array.dtype)
    flat = reshape_node(array._node, (array.size,))
    repeats = -(-total // array.size)
    repeated = tile(wrap(flat), repeats)._node if repeats > 1 else flat
    return wrap(reshape_node(slice_node(repeated, 0, 0, total), shape))


def trim_zeros(filt, trim="fb", axis=None):
    """`filt` without its leading ('f') and/or trailing ('b') entries that are zero along
    every other axis, on the axes `axis` (all by default); a list or tuple gives a list or
    tuple, as NumPy's. Evaluates the zero pattern (it sets the shape); the result is a view
    of a lazy `filt`.

    >>> import lazyarr as la
    >>> la.trim_zeros(la.asarray([0, 0, 1, 2, 0])).tolist()
    [1, 2]
    """
    if not isinstance(trim, str) or trim.lower() not in ("fb", "bf", "f", "b"):
        raise ValueError(f"trim_zeros: unexpected character(s) in `trim`: {trim!r}")
    trim = trim.lower()
    lazy = isinstance(filt, Array)
    sequence = isinstance(filt, (list, tuple))
    array = filt if lazy else np.asarray(filt)
    axes = tuple(range(array.ndim)) if axis is None else normalize_axis_tuple(axis, array.ndim, where="trim_zeros")
    if not axes:
        return filt if lazy or sequence else as_array(array, where="trim_zeros")
    nonzero = np.argwhere(filt.numpy() if lazy else array)
    if nonzero.size == 0:
        start = stop = [0] * array.ndim
    else:
        start = nonzero.min(axis=0).tolist() if "f" in trim else [None] * array.ndim
        stop = (nonzero.max(axis=0) + 1).tolist() if "b" in trim else [None] * array.ndim
    key = tuple(slice(start[dimension], stop[dimension]) if dimension in axes else slice(None)
                for dimension in range(array.ndim))
    if lazy:
        return getitem(filt, key)
    if sequence and len(key) == 1:
        return filt[key[0]]  # a list or tuple keeps its type, as in NumPy
    return as_array(array[key], where="trim_zeros")
