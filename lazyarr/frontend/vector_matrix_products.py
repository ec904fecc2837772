"""matvec and vecmat, NumPy 2.2's generalized ufuncs: matrix-vector and vector-matrix products
over the last axes, the other axes broadcast.

    matvec(A, v)[..., i] = sum_j A[..., i, j] * v[..., j]          signature (m,n),(n)->(m)
    vecmat(v, A)[..., j] = sum_i conj(v[..., i]) * A[..., i, j]    signature (n),(n,m)->(m)

Both are one batched `matmul` (lazy; NumPy's gufunc dtypes, its shape errors). The sums may
be added in another order than NumPy's loop, so float results can differ in the last bits.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..shapes import broadcast_shapes
from . import elementwise as ew
from .array import Array
from .core import as_array, convert, wrap
from .linalg import matmul
from .manipulation_layout import reshape

__all__ = ["matvec", "vecmat"]


def _operands(name: str, ufunc: np.ufunc, x1, x2, required: tuple[int, int]) -> tuple[Array, Array]:
    """Both operands in NumPy's loop dtype, after NumPy's checks of their core dimensions."""
    arrays = [value if isinstance(value, Array) else as_array(value, where=name) for value in (x1, x2)]
    for index, (array, needed) in enumerate(zip(arrays, required)):
        if array.ndim < needed:
            raise ValueError(
                f"{name}: Input operand {index} does not have enough dimensions (has {array.ndim}, gufunc "
                f"core with signature {ufunc.signature} requires {needed})"
            )
    (first_dtype, second_dtype), _ = ew.resolve(name, ufunc, arrays)
    return wrap(convert(arrays[0]._node, first_dtype)), wrap(convert(arrays[1]._node, second_dtype))


def _mismatch(name: str, ufunc: np.ufunc, got: int, expected: int) -> ValueError:
    return ValueError(
        f"{name}: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
        f"{ufunc.signature} (size {got} is different from {expected})"
    )


def _batch(name: str, first: tuple, second: tuple) -> tuple[int, ...]:
    try:
        return broadcast_shapes(first, second, where=name)
    except ValueError:
        raise ValueError(
            f"{name}: operands could not be broadcast together: loop dimensions {first} and {second}"
        ) from None


def matvec(x1, x2, /) -> Array:
    """Matrix-vector products over the last axes: x1 (..., m, n) times x2 (..., n) -> (..., m).

    >>> import lazyarr as la
    >>> la.matvec(la.asarray([[1, 2], [3, 4]]), la.asarray([1, 10])).tolist()
    [21, 43]
    """
    matrices, vectors = _operands("matvec", np.matvec, x1, x2, (2, 1))
    if vectors.shape[-1] != matrices.shape[-1]:
        raise _mismatch("matvec", np.matvec, vectors.shape[-1], matrices.shape[-1])
    batch = _batch("matvec", matrices.shape[:-2], vectors.shape[:-1])
    columns = reshape(vectors, vectors.shape + (1,))
    product = matmul(matrices, columns)
    return reshape(product, batch + (matrices.shape[-2],))


def vecmat(x1, x2, /) -> Array:
    """Vector-matrix products over the last axes, x1 conjugated: conj(x1) (..., n) times
    x2 (..., n, m) -> (..., m).

    >>> import lazyarr as la
    >>> la.vecmat(la.asarray([1j, 2]), la.asarray([[1, 0], [0, 1]])).tolist()
    [-1j, (2+0j)]
    """
    vectors, matrices = _operands("vecmat", np.vecmat, x1, x2, (1, 2))
    if matrices.shape[-2] != vectors.shape[-1]:
        raise _mismatch("vecmat", np.vecmat, matrices.shape[-2], vectors.shape[-1])
    batch = _batch("vecmat", vectors.shape[:-1], matrices.shape[:-2])
    if dtypes.is_complex(vectors.dtype):
        vectors = ew.conj(vectors)
    rows = reshape(vectors, vectors.shape[:-1] + (1, vectors.shape[-1]))
    product = matmul(rows, matrices)
    return reshape(product, batch + (matrices.shape[-1],))
