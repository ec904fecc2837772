"""diag and diagflat: a vector on a diagonal of a square matrix, or a matrix's diagonal.

Building a matrix is a select between the vector, broadcast along the rows (or columns), and
zero, under the mask `column == row + k`: index arithmetic only, so it fuses into its consumer
and never materializes more than the result. Extracting a diagonal is `linalg.diagonal`.
"""

from __future__ import annotations

import operator

from .. import dtypes
from ..hlo import make
from .array import Array
from .core import as_array, scalar_constant, wrap
from .node_layout import filled

__all__ = ["diag", "diagflat"]


def _offset(k, where: str) -> int:
    try:
        return operator.index(k)
    except TypeError:
        raise TypeError(f"{where}: k must be an integer, got {k!r}") from None


def _matrix_from_vector(vector: Array, k: int) -> Array:
    """The (n + |k|) square matrix holding `vector` on its k-th diagonal, zero elsewhere."""
    count = vector.shape[0]
    size = count + abs(k)
    shape = (size, size)
    node = vector._node
    if abs(k):  # pad the vector to the matrix size; the padding lands off the diagonal
        node = make("pad", [node, scalar_constant(0, vector.dtype)], low=(0,), high=(abs(k),), interior=(0,))
    # Above the main diagonal the value at (row, row + k) is vector[row]: broadcast along
    # columns; below it the value at (column - k, column) is vector[column]: along rows.
    values = make("broadcast", [node], shape=shape, dimensions=(0,) if k >= 0 else (1,))
    rows = make("iota", [], shape=shape, dtype=dtypes.int64, dimension=0)
    columns = make("iota", [], shape=shape, dtype=dtypes.int64, dimension=1)
    shifted = make("add", [rows, filled(k, dtypes.int64, shape)])
    mask = make("compare", [columns, shifted], direction="EQ")
    return wrap(make("select", [mask, values, filled(0, vector.dtype, shape)]))


def diag(v, k=0) -> Array:
    """A 1-d `v` on the k-th diagonal of a square matrix, or the k-th diagonal of a 2-d `v`.

    >>> import lazyarr as la
    >>> la.diag(la.asarray([1, 2]), k=1).tolist()
    [[0, 1, 0], [0, 0, 2], [0, 0, 0]]
    >>> la.diag(la.asarray([[1, 2], [3, 4]])).tolist()
    [1, 4]
    """
    from .linalg import diagonal

    array = as_array(v, where="diag")
    k = _offset(k, "diag")
    if array.ndim == 1:
        return _matrix_from_vector(array, k)
    if array.ndim == 2:
        return diagonal(array, k)
    raise ValueError(f"diag: Input must be 1- or 2-d, got shape {array.shape}.")


def diagflat(v, k=0) -> Array:
    """The flattened `v` on the k-th diagonal of a square matrix.

    >>> import lazyarr as la
    >>> la.diagflat(la.asarray([[1, 2]])).tolist()
    [[1, 0], [0, 2]]
    """
    array = as_array(v, where="diagflat")
    flat = wrap(make("reshape", [array._node], shape=(array.size,)))
    return _matrix_from_vector(flat, _offset(k, "diagflat"))
