"""Matrices and grids from index arithmetic: eye, identity, tri, tril, triu, meshgrid.

Masks are `compare(iota_rows + k, iota_columns)`, never a materialized matrix, so eye(10**4)
is a handful of instructions; tril/triu select between the input and zero under such a mask,
broadcast over any leading (batch) axes.
"""

from __future__ import annotations

import operator

from .. import dtypes
from ..hlo import Instruction, make
from ..shapes import broadcast_shapes, size_index
from .array import Array, check_device
from .core import as_array, scalar_constant, wrap
from .manipulation_layout import broadcast_arrays, reshape
from .manipulation_nodes import broadcast_node
from .templated_calls import replayed

__all__ = ["eye", "identity", "tri", "tril", "triu", "meshgrid"]


def _size(value, name: str, where: str) -> int:
    try:
        size = size_index(value)
    except TypeError:
        raise TypeError(f"{where}: {name} must be an integer, got {value!r}") from None
    if size < 0:
        raise ValueError(f"{where}: negative dimensions are not allowed, got {name}={size}")
    return size


def _diagonal_mask(rows: int, columns: int, k: int, direction: str) -> Instruction:
    """bool[rows, columns]: column `direction` row + k (EQ for eye, LE for tri)."""
    shape = (rows, columns)
    # Offsets beyond the matrix select all or nothing; clamping keeps the int64 sums exact.
    k = max(-rows - 1, min(columns + 1, operator.index(k)))
    row_index = make("iota", [], shape=shape, dtype=dtypes.int64, dimension=0)
    column_index = make("iota", [], shape=shape, dtype=dtypes.int64, dimension=1)
    shifted = make("add", [row_index, broadcast_node(scalar_constant(k, dtypes.int64), shape, where="mask")])
    return make("compare", [column_index, shifted], direction=direction)


def _from_mask(mask: Instruction, dtype) -> Array:
    target = dtypes.as_dtype(float if dtype is None else dtype, where="eye")
    return wrap(mask if target == dtypes.bool_ else make("convert", [mask], dtype=target))


def eye(N, M=None, k=0, dtype=float, order="C", *, device=None, like=None) -> Array:
    """Ones on the k-th diagonal (k > 0 above the main one), zeros elsewhere.

    >>> import lazyarr as la
    >>> la.eye(2, 3, k=1, dtype=int).tolist()
    [[0, 1, 0], [0, 0, 1]]
    """
    if device is None and like is None and type(N) is int and type(M) in (int, type(None)) and type(k) is int:
        # hot: `eye(n)` in a loop: a function of its arguments alone
        result = replayed("eye", lambda: _eye(N, M, k, dtype, order, None), (), (N, M, k, dtype, order))
        if result is not None:
            return result
    return _eye(N, M, k, dtype, order, device, like)


def _eye(N, M, k, dtype, order, device, like=None) -> Array:  # noqa: N803 (NumPy's names)
    if device is not None:
        check_device(device, "eye")
    if not (isinstance(order, str) and order.upper() in ("C", "F")):
        raise ValueError(f"eye: only 'C' or 'F' order is permitted, got {order!r}")
    rows = _size(N, "N", "eye")
    columns = rows if M is None else _size(M, "M", "eye")
    result = _from_mask(_diagonal_mask(rows, columns, k, "EQ"), dtype)
    return result if device is None else result.to_device(device)


def identity(n, dtype=None, *, like=None) -> Array:
    """The n x n identity matrix (float64 by default)."""
    return eye(n, dtype=float if dtype is None else dtype)


def tri(N, M=None, k=0, dtype=float, *, like=None) -> Array:
    """Ones at and below the k-th diagonal, zeros above.

    >>> import lazyarr as la
    >>> la.tri(2, dtype=int).tolist()
    [[1, 0], [1, 1]]
    """
    rows = _size(N, "N", "tri")
    columns = rows if M is None else _size(M, "M", "tri")
    return _from_mask(_diagonal_mask(rows, columns, k, "LE"), dtype)


def _masked(m, k, where: str, keep_lower: bool) -> Array:
    array = as_array(m, where=where)
    if array.ndim == 0:
        raise TypeError(f"{where}: input must be at least 1-d, got a 0-d array")
    rows, columns = (array.shape[-2:] if array.ndim >= 2 else (array.shape[-1],) * 2)
    # NumPy's tril of a 1-d array broadcasts it against the (n, n) mask.
    mask = _diagonal_mask(rows, columns, k if keep_lower else operator.index(k) - 1, "LE")
    shape = broadcast_shapes(array.shape, mask.shape, where=where)
    values = broadcast_node(array._node, shape, where=where)
    zero = broadcast_node(scalar_constant(0, array.dtype), shape, where=where)
    choose = broadcast_node(mask, shape, where=where)
    branches = [values, zero] if keep_lower else [zero, values]
    return wrap(make("select", [choose] + branches))


def tril(m, k=0) -> Array:
    """Lower triangle of (each matrix in) `m`: elements above the k-th diagonal become 0.

    >>> import lazyarr as la
    >>> la.tril(la.ones((2, 2), dtype=int)).tolist()
    [[1, 0], [1, 1]]
    """
    return _masked(m, k, "tril", keep_lower=True)


def triu(m, k=0) -> Array:
    """Upper triangle of (each matrix in) `m`: elements below the k-th diagonal become 0."""
    return _masked(m, k, "triu", keep_lower=False)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy") -> tuple[Array, ...]:
    """Coordinate arrays from 1-d coordinate vectors (flattened if not 1-d).

    indexing='xy' (Cartesian) swaps the first two output axes relative to 'ij' (matrix);
    sparse=True returns broadcastable arrays with unit axes instead of full grids. As in NumPy,
    copy=False returns views of the inputs (a full grid refuses writes: broadcast_arrays).

    >>> import lazyarr as la
    >>> [grid.shape for grid in la.meshgrid(la.arange(3), la.arange(2))]
    [(2, 3), (2, 3)]
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: Valid values for `indexing` are 'xy' and 'ij', got {indexing!r}")
    ndim = len(xi)
    vectors = [as_array(value, where="meshgrid") for value in xi]
    outputs = []
    for position, vector in enumerate(vectors):
        shape = [1] * ndim
        target = position
        if indexing == "xy" and ndim > 1 and position < 2:
            target = 1 - position
        shape[target] = vector.size
        outputs.append(reshape(vector, tuple(shape)))
    if not sparse:
        outputs = list(broadcast_arrays(*outputs))
    if copy:
        outputs = [output.__copy__() for output in outputs]
    return tuple(outputs)
