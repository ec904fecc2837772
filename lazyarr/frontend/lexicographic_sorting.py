"""Sorting by several keys: lexsort, and sort_complex (complex numbers in NumPy's order).

lazyarr's argsort is stable and puts NaN last, as NumPy's, so lexsort is one stable argsort
per key, least significant (first) key first, each reordering the order found so far. A
complex key is three real keys in NumPy's complex order, which is lexicographic on (real,
imag) with the NaN classes after all numbers: R + Rj, R + nanj, nan + Rj, nan + nanj; its
most significant key is that class. Everything stays lazy.
"""

from __future__ import annotations

from .. import dtypes
from ..shapes import normalize_axis
from . import elementwise as ew
from .array import Array
from .core import as_array, convert, scalar_constant, wrap
from .indexing_take import take_along_axis
from .searching import argsort, sort

__all__ = ["lexsort", "sort_complex"]


def _real_keys(key: Array) -> list[Array]:
    """`key` as real keys, least significant first (a complex key becomes three)."""
    if not dtypes.is_complex(key.dtype):
        return [key]
    real, imaginary = ew.real(key), ew.imag(key)
    nan_class = ew.add(ew.multiply(_as_int8(ew.isnan(real)), 2), _as_int8(ew.isnan(imaginary)))
    return [imaginary, real, nan_class]


def _as_int8(mask: Array) -> Array:
    return wrap(convert(mask._node, dtypes.int8))


def _sorting_order(keys: list[Array], axis: int) -> Array:
    """Indices (int64) that sort along `axis` by the last key, then the one before, ..."""
    order = None
    for key in keys:
        for column in _real_keys(key):
            if order is None:
                order = argsort(column, axis=axis, stable=True)
            else:
                within = argsort(take_along_axis(column, order, axis=axis), axis=axis, stable=True)
                order = take_along_axis(order, within, axis=axis)
    return order


def _key_list(keys) -> list[Array]:
    if isinstance(keys, (list, tuple)):
        items = [value if isinstance(value, Array) else as_array(value, where="lexsort") for value in keys]
    else:
        array = keys if isinstance(keys, Array) else as_array(keys, where="lexsort")
        if array.ndim == 0:
            raise TypeError("lexsort: need sequence of keys with len > 0 in lexsort (got a 0-d array)")
        items = [array[index] for index in range(array.shape[0])]
    if not items:
        raise TypeError("lexsort: need sequence of keys with len > 0 in lexsort")
    shapes = {item.shape for item in items}
    if len(shapes) > 1:
        raise ValueError(f"lexsort: all keys need to be the same shape, got {sorted(shapes)}")
    return items


def lexsort(keys, axis=-1) -> Array:
    """Indices (int64) that sort by several keys: the last key is the primary one (NumPy's
    lexsort). `keys` is a sequence of same-shaped arrays, or an array whose rows are the keys.

    >>> import lazyarr as la
    >>> surnames = la.asarray([3, 1, 3, 2])
    >>> first_names = la.asarray([2.0, 5.0, 1.0, 0.0])
    >>> la.lexsort((first_names, surnames)).tolist()
    [1, 3, 2, 0]
    """
    items = _key_list(keys)
    shape = items[0].shape
    if not shape:
        return wrap(scalar_constant(0, dtypes.int64))  # NumPy: 0 for 0-d keys, whatever the axis
    axis = normalize_axis(axis, len(shape), where="lexsort")
    return _sorting_order(items, axis)


def sort_complex(a) -> Array:
    """A copy sorted along the last axis in NumPy's complex order, as a complex array
    (complex64 for int8/int16/uint8/uint16, complex128 for other real dtypes).

    >>> import lazyarr as la
    >>> la.sort_complex(la.asarray([1 + 2j, 2 - 1j, 1 - 1j])).tolist()
    [(1-1j), (1+2j), (2-1j)]
    """
    array = a if isinstance(a, Array) else as_array(a, where="sort_complex")
    axis = normalize_axis(-1, array.ndim, where="sort_complex")  # a 0-d array: NumPy's AxisError
    if dtypes.is_complex(array.dtype):
        return take_along_axis(array, _sorting_order([array], axis), axis=axis)
    target = dtypes.complex64 if array.dtype.char in "bhBH" else dtypes.complex128
    return wrap(convert(sort(array, axis=axis)._node, target))

