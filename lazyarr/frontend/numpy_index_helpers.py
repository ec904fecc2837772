"""Index tuples for a matrix's triangles and diagonals: tril_indices, triu_indices,
tril_indices_from, triu_indices_from, diag_indices, diag_indices_from and mask_indices.

Their values depend only on sizes (the `_from` forms read only their argument's shape, never
its values), so they are computed now with NumPy and returned as lazy int64 arrays bound to
the results: nothing is evaluated. mask_indices applies a masking function (`la.triu`) to an
array of ones and reads where the result is nonzero, so it evaluates that result.
"""

from __future__ import annotations

import operator

import numpy as np

from .array import Array
from .axis_positions import numpy_call
from .core import as_array, from_numpy
from .creation import ones
from .searching import nonzero

__all__ = [
    "diag_indices", "diag_indices_from", "mask_indices", "tril_indices", "tril_indices_from", "triu_indices",
    "triu_indices_from",
]


def _bound(parts) -> tuple[Array, ...]:
    return tuple(from_numpy(np.asarray(part, dtype=np.int64)) for part in parts)


def _shape_of(arr) -> tuple[int, ...]:
    """The shape of `arr` without reading its values (a lazy array's shape is known)."""
    return arr.shape if isinstance(arr, Array) else np.shape(arr)


def tril_indices(n, k=0, m=None) -> tuple[Array, Array]:
    """(rows, columns) of the lower triangle (diagonal k and below) of an n x m matrix.

    >>> import lazyarr as la
    >>> [part.tolist() for part in la.tril_indices(3)]
    [[0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2]]
    """
    return _bound(numpy_call(np.tril_indices, "tril_indices", n, k, m))


def triu_indices(n, k=0, m=None) -> tuple[Array, Array]:
    """(rows, columns) of the upper triangle (diagonal k and above) of an n x m matrix.

    >>> import lazyarr as la
    >>> [part.tolist() for part in la.triu_indices(3, 1)]
    [[0, 0, 1], [1, 2, 2]]
    """
    return _bound(numpy_call(np.triu_indices, "triu_indices", n, k, m))


def _matrix_shape(arr, where: str) -> tuple[int, int]:
    shape = _shape_of(arr)
    if len(shape) != 2:
        raise ValueError(f"{where}: input array must be 2-d, got shape {shape}")
    return shape


def tril_indices_from(arr, k=0) -> tuple[Array, Array]:
    """tril_indices for the shape of the 2-d `arr` (its values are not read).

    >>> import lazyarr as la
    >>> [part.tolist() for part in la.tril_indices_from(la.zeros((2, 3)), 1)]
    [[0, 0, 1, 1, 1], [0, 1, 0, 1, 2]]
    """
    rows, columns = _matrix_shape(arr, "tril_indices_from")
    return tril_indices(rows, k=k, m=columns)


def triu_indices_from(arr, k=0) -> tuple[Array, Array]:
    """triu_indices for the shape of the 2-d `arr` (its values are not read).

    >>> import lazyarr as la
    >>> [part.tolist() for part in la.triu_indices_from(la.zeros((2, 3)), 1)]
    [[0, 0, 1], [1, 2, 2]]
    """
    rows, columns = _matrix_shape(arr, "triu_indices_from")
    return triu_indices(rows, k=k, m=columns)


def diag_indices(n, ndim=2) -> tuple[Array, ...]:
    """`ndim` copies of arange(n): the indices of the main diagonal of an (n, ..., n) array.

    >>> import lazyarr as la
    >>> [part.tolist() for part in la.diag_indices(2, 3)]
    [[0, 1], [0, 1], [0, 1]]
    """
    try:
        count, copies = operator.index(n), operator.index(ndim)
    except TypeError:
        raise TypeError(f"diag_indices: n and ndim must be integers, got {n!r} and {ndim!r}") from None
    positions = np.arange(max(count, 0), dtype=np.int64)
    return tuple(from_numpy(positions) for _ in range(copies))


def diag_indices_from(arr) -> tuple[Array, ...]:
    """diag_indices for the shape of `arr`, at least 2-d with equal dimensions (its values are
    not read).

    >>> import lazyarr as la
    >>> [part.tolist() for part in la.diag_indices_from(la.zeros((2, 2)))]
    [[0, 1], [0, 1]]
    """
    shape = _shape_of(arr)
    if len(shape) < 2:
        raise ValueError(f"diag_indices_from: input array must be at least 2-d, got shape {shape}")
    if len(set(shape)) != 1:
        raise ValueError(f"diag_indices_from: All dimensions of input must be of equal length, got shape {shape}")
    return diag_indices(shape[0], len(shape))


def mask_indices(n, mask_func, k=0) -> tuple[Array, Array]:
    """(rows, columns) where `mask_func(ones((n, n)), k)` is nonzero (`la.triu`, `la.tril`, or
    NumPy's, which dispatch here); evaluates that mask.

    >>> import lazyarr as la
    >>> [part.tolist() for part in la.mask_indices(3, la.triu, 1)]
    [[0, 0, 1], [1, 2, 2]]
    """
    masked = mask_func(ones((n, n), dtype=int), k)
    return nonzero(as_array(masked, where="mask_indices") != 0)
