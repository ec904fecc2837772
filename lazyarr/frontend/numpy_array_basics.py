"""NumPy's small array utilities: ndim, shape, size, copy, asanyarray, ascontiguousarray, and
apply_along_axis.

ndim, shape and size read metadata only: a lazy array (or a list of them) is never evaluated.
copy gives a new array with the same value (not a view); asanyarray is asarray (lazyarr has no
subclasses); ascontiguousarray returns its input where NumPy would (lazy arrays have no memory
layout: an array that owns its value counts as C-contiguous, and a view as NumPy's strides for
it say, views.py). apply_along_axis calls the function on each 1-d slice and stacks the
results lazily, as NumPy's loop does.
"""

from __future__ import annotations

import math

import numpy as np

from ..hlo import make
from ..shapes import normalize_axis
from .array import Array
from .axis_positions import fitted
from .core import as_array, contains_lazy, convert, wrap
from .creation import asarray
from .indexing import getitem
from .manipulation_layout import atleast_1d, moveaxis
from .manipulation_nodes import normalize_axis_tuple, reshape_node, transpose_node
from .views import is_owner, make_view, strided, undecided

__all__ = ["apply_along_axis", "asanyarray", "ascontiguousarray", "copy", "ndim", "shape", "size"]


def _metadata(a):
    """Something with `shape` and `ndim` for `a`, never evaluating a lazy array."""
    if isinstance(a, Array) or (hasattr(a, "shape") and hasattr(a, "ndim")):
        return a
    if isinstance(a, (list, tuple)) and contains_lazy(a):
        return as_array(a, where="shape")  # a lazy stack: shapes only
    return np.asarray(a)


def ndim(a) -> int:
    """The number of dimensions of `a` (never evaluates).

    >>> import lazyarr as la
    >>> la.ndim(la.zeros((2, 3)))
    2
    """
    return _metadata(a).ndim


def shape(a) -> tuple[int, ...]:
    """The shape of `a` (never evaluates).

    >>> import lazyarr as la
    >>> la.shape([[1, 2, 3]])
    (1, 3)
    """
    return tuple(_metadata(a).shape)


def size(a, axis=None) -> int:
    """The number of elements of `a`, or along `axis` (an int or a tuple, as NumPy 2.4).

    >>> import lazyarr as la
    >>> la.size(la.zeros((2, 3))), la.size(la.zeros((2, 3)), 1)
    (6, 3)
    """
    dimensions = tuple(_metadata(a).shape)
    if axis is None:
        return math.prod(dimensions)
    axes = normalize_axis_tuple(axis, len(dimensions), where="size")
    return math.prod(dimensions[each] for each in axes)


def copy(a, order="K", subok=False) -> Array:
    """A new array with `a`'s value, not a view: later writes to either leave the other.

    >>> import lazyarr as la
    >>> x = la.asarray([1, 2]); y = la.copy(x); x[0] = 9
    >>> y.tolist()
    [1, 2]
    """
    if order not in ("C", "F", "A", "K"):
        raise ValueError(f"copy: order must be one of 'C', 'F', 'A', 'K', got {order!r}")
    array = as_array(a, where="copy")
    return wrap(array._node) if array is a else array


def asanyarray(a, dtype=None, order=None, *, device=None, copy=None, like=None) -> Array:
    """`a` as a lazy array: asarray (lazyarr has no array subclasses to pass through).

    >>> import lazyarr as la
    >>> la.asanyarray([1, 2], dtype="int8").dtype
    dtype('int8')
    """
    return asarray(a, dtype, order, device=device, copy=copy)


def ascontiguousarray(a, dtype=None, *, like=None) -> Array:
    """`a` as an array of at least one dimension laid out in C order: `a` itself where NumPy
    returns it (an array that owns its value, or a view NumPy's strides call C-contiguous),
    else a copy. A view whose layout lazyarr cannot tell gives a result that follows `a` but
    refuses writes (they might or might not reach `a` in NumPy).

    >>> import lazyarr as la
    >>> la.ascontiguousarray(la.asarray(5.0)).shape
    (1,)
    """
    array = as_array(a, where="ascontiguousarray")
    if dtype is not None:
        array = asarray(array, dtype=dtype)
    if array.ndim == 0:
        return atleast_1d(array)
    if array is not a or is_owner(array):
        return array
    layout = strided(array)
    if layout is None:
        return make_view(array, lambda base: base, None, refusal=undecided("ascontiguousarray"))
    return array if layout.flags.c_contiguous else wrap(array._node)


def apply_along_axis(func1d, axis, arr, *args, **kwargs) -> Array:
    """`func1d` applied to every 1-d slice of `arr` along `axis`; the results (all of the first
    one's shape and dtype, as NumPy converts them) take the place of that axis.

    Lazy: each call gets a lazy slice, and the results are stacked without evaluation (as
    long as `func1d` itself does not evaluate).

    >>> import lazyarr as la
    >>> la.apply_along_axis(la.sum, 1, la.asarray([[1, 2], [3, 4]])).tolist()
    [3, 7]
    """
    array = as_array(arr, where="apply_along_axis")
    axis = normalize_axis(axis, array.ndim, where="apply_along_axis")
    moved = moveaxis(array, axis, -1)
    outer = moved.shape[:-1]
    if math.prod(outer) == 0:
        raise ValueError(
            f"apply_along_axis: Cannot apply_along_axis when any iteration dimensions are 0 (shape {array.shape}, "
            f"axis {axis})"
        )
    results = []
    for index in np.ndindex(outer):
        result = as_array(func1d(getitem(moved, index + (Ellipsis,)), *args, **kwargs), where="apply_along_axis")
        if results:
            first = results[0]
            node = fitted(convert(result._node, first.dtype), first.shape, "apply_along_axis", advanced=False)
            result = wrap(node)
        results.append(result)
    result_shape = results[0].shape
    pieces = [reshape_node(result._node, (1,) + result_shape) for result in results]
    stacked = pieces[0] if len(pieces) == 1 else make("concatenate", pieces, dimension=0)
    buffer = reshape_node(stacked, outer + result_shape)
    dimensions = list(range(buffer.ndim))
    inner = len(result_shape)
    permutation = dimensions[:axis] + dimensions[buffer.ndim - inner:] + dimensions[axis:buffer.ndim - inner]
    return wrap(transpose_node(buffer, permutation))
