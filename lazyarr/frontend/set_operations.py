"""Set operations on 1-d arrays: intersect1d, union1d, setdiff1d, setxor1d.

How many values a set operation returns depends on the values, so, like `unique`, each one
evaluates its inputs, computes with NumPy's own function on the buffers (the same sorted
values, the same NaN handling, the same index choices for return_indices) and returns lazy
arrays bound to the results. Inside `la.jit` they raise an error naming the call: use
`la.isin` (lazy, static shape) there.
"""

from __future__ import annotations

import numpy as np

from .array import Array
from .core import as_array, from_numpy

__all__ = ["intersect1d", "setdiff1d", "setxor1d", "union1d"]


def _values(value, where: str) -> np.ndarray:
    """The evaluated value of an operand (anything asarray accepts)."""
    return (value if isinstance(value, Array) else as_array(value, where=where, placed=False)).numpy()


def _bound(result) -> Array | tuple[Array, ...]:
    if isinstance(result, tuple):
        return tuple(from_numpy(np.asarray(part)) for part in result)
    return from_numpy(np.asarray(result))


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """Sorted distinct values found in both arrays (flattened); with return_indices, also the
    positions of their first occurrences in each (evaluates both).

    >>> import lazyarr as la
    >>> la.intersect1d(la.asarray([3, 1, 2, 1]), [1, 3, 5]).tolist()
    [1, 3]
    """
    first, second = _values(ar1, "intersect1d"), _values(ar2, "intersect1d")
    return _bound(np.intersect1d(first, second, assume_unique=assume_unique, return_indices=return_indices))


def union1d(ar1, ar2) -> Array:
    """Sorted distinct values found in either array (flattened; evaluates both).

    >>> import lazyarr as la
    >>> la.union1d(la.asarray([3, 1]), [1, 5]).tolist()
    [1, 3, 5]
    """
    return _bound(np.union1d(_values(ar1, "union1d"), _values(ar2, "union1d")))


def setdiff1d(ar1, ar2, assume_unique=False) -> Array:
    """Sorted distinct values of `ar1` not in `ar2` (with assume_unique, in ar1's order;
    evaluates both).

    >>> import lazyarr as la
    >>> la.setdiff1d(la.asarray([3, 1, 2, 1]), [1, 5]).tolist()
    [2, 3]
    """
    first, second = _values(ar1, "setdiff1d"), _values(ar2, "setdiff1d")
    return _bound(np.setdiff1d(first, second, assume_unique=assume_unique))


def setxor1d(ar1, ar2, assume_unique=False) -> Array:
    """Sorted values found in exactly one of the arrays (evaluates both).

    >>> import lazyarr as la
    >>> la.setxor1d(la.asarray([3, 1, 2]), [1, 5]).tolist()
    [2, 3, 5]
    """
    first, second = _values(ar1, "setxor1d"), _values(ar2, "setxor1d")
    return _bound(np.setxor1d(first, second, assume_unique=assume_unique))
