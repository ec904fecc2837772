"""The array API `linalg` extension (2025.12) with NumPy's `numpy.linalg` signatures, lazily.

Decompositions, inverses and solves are custom-calls (targets `linalg.*`, run by NumPy on the
host), built here with NumPy's dtype rules: integers and bools become float64, float32 and
complex64 keep single precision (NumPy computes them in double and casts back; the target
calls NumPy, so it does the same), float16 is refused as NumPy refuses it. Shape errors are
`numpy.linalg.LinAlgError` (a ValueError) with NumPy's wording, raised when the graph is built;
errors that depend on values (a singular matrix) come from NumPy when the graph is evaluated.
Multi-output functions return the array API's named tuples. Norms are in `linalg_norms`.
"""

from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

from .. import dtypes
from ..hlo import Instruction, make
from ..hlo.ops.custom import custom_call_outputs
from ..shapes import broadcast_shapes
from . import elementwise, manipulation_layout
from . import linalg as core
from .array import Array
from .core import as_array, convert, wrap
from .node_layout import reshape
from .reduction_support import NO_VALUE, normalize_axis_index

LinAlgError = np.linalg.LinAlgError


class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class EigResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    Q: Array
    R: Array


class SVDResult(NamedTuple):
    U: Array
    S: Array
    Vh: Array


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


def linalg_dtype(name: str, *arrays) -> np.dtype:
    """NumPy's `_commonType`: the precision a linalg routine returns for these operands."""
    single, complex_ = True, False
    for array in arrays:
        dtype = array.dtype
        if dtype == dtypes.float16:
            raise TypeError(f"{name}: array type float16 is unsupported in linalg")
        if dtypes.is_complex(dtype):
            complex_ = True
        if dtype not in (dtypes.float32, dtypes.complex64):
            single = False
    if complex_:
        return dtypes.complex64 if single else dtypes.complex128
    return dtypes.float32 if single else dtypes.float64


def stacked_matrices(name: str, x, *, square: bool = False) -> Array:
    """`x` as a lazy array of shape (..., M, N), refusing rank < 2 (and M != N when `square`)."""
    array = as_array(x, where=name)
    if array.ndim < 2:
        raise LinAlgError(
            f"{name}: {array.ndim}-dimensional array given. Array must be at least two-dimensional"
        )
    if square and array.shape[-1] != array.shape[-2]:
        raise LinAlgError(f"{name}: Last 2 dimensions of the array must be square, got shape {array.shape}")
    return array


def _call(target: str, arrays, **options):
    """Run a linalg target on operands converted to NumPy's linalg dtype; returns the nodes."""
    dtype = linalg_dtype(target, *arrays)
    nodes = [convert(array._node, dtype) for array in arrays]
    return custom_call_outputs(target, nodes, **options)


def cholesky(x, /, *, upper=False) -> Array:
    """Cholesky factor L (x = L @ L^H), or the upper factor U (x = U^H @ U) when `upper`."""
    array = stacked_matrices("cholesky", x, square=True)
    return wrap(_call("linalg.cholesky", [array], upper=bool(upper))[0])


def inv(x, /) -> Array:
    """Inverse of each square matrix (a singular one raises LinAlgError when evaluated)."""
    return wrap(_call("linalg.inv", [stacked_matrices("inv", x, square=True)])[0])


def det(x, /) -> Array:
    """Determinant of each square matrix."""
    return wrap(_call("linalg.det", [stacked_matrices("det", x, square=True)])[0])


def slogdet(x, /) -> SlogdetResult:
    """(sign, log|det|) of each square matrix; logabsdet is real."""
    sign, logabsdet = _call("linalg.slogdet", [stacked_matrices("slogdet", x, square=True)])
    return SlogdetResult(wrap(sign), wrap(logabsdet))


def solve(x1, x2, /) -> Array:
    """x such that x1 @ x == x2; x2 is a vector only when it is 1-d (NumPy 2, array API)."""
    coefficients = stacked_matrices("solve", x1, square=True)
    right_side = as_array(x2, where="solve")
    size = coefficients.shape[-1]
    if right_side.ndim == 0:
        raise LinAlgError("solve: 0-dimensional array given as x2. Array must be at least one-dimensional")
    rows = right_side.shape[0] if right_side.ndim == 1 else right_side.shape[-2]
    if rows != size:
        raise ValueError(
            f"solve: x2 must have {size} rows to match x1 of shape {coefficients.shape}, got shape "
            f"{right_side.shape}"
        )
    return wrap(_call("linalg.solve", [coefficients, right_side])[0])


def _hermitian_operand(name: str, x, uplo: str) -> Array:
    """The Hermitian matrix read from the lower triangle: x itself, or x^H for UPLO='U'."""
    if uplo not in ("L", "U"):
        raise ValueError(f"{name}: UPLO argument must be 'L' or 'U', got {uplo!r}")
    array = stacked_matrices(name, x, square=True)
    return array if uplo == "L" else matrix_transpose(elementwise.conj(array))


def eigh(x, /, UPLO="L") -> EighResult:  # noqa: N803 (NumPy's argument name)
    """Eigenvalues (ascending, real) and eigenvectors of Hermitian matrices."""
    values, vectors = _call("linalg.eigh", [_hermitian_operand("eigh", x, UPLO)])
    return EighResult(wrap(values), wrap(vectors))


def eigvalsh(x, /, UPLO="L") -> Array:  # noqa: N803
    """Eigenvalues (ascending, real) of Hermitian matrices."""
    return wrap(_call("linalg.eigvalsh", [_hermitian_operand("eigvalsh", x, UPLO)])[0])


def eig(x, /) -> EigResult:
    """Eigenvalues and eigenvectors (columns, unit norm) of general square matrices (2025.12).

    Both are complex of x's precision (float32 -> complex64), as the array API says; NumPy
    returns real arrays for a real matrix whose eigenvalues are all real, a dtype that depends
    on the values, which a lazy array cannot have. Run by NumPy (LAPACK's geev) on the host.

    >>> import lazyarr as la
    >>> la.linalg.eig(la.asarray([[2.0, 0.0], [0.0, 3.0]])).eigenvalues.tolist()
    [(2+0j), (3+0j)]
    """
    values, vectors = _call("linalg.eig", [stacked_matrices("eig", x, square=True)])
    return EigResult(wrap(values), wrap(vectors))


def eigvals(x, /) -> Array:
    """Eigenvalues of general square matrices, complex of x's precision (2025.12; see `eig`)."""
    return wrap(_call("linalg.eigvals", [stacked_matrices("eigvals", x, square=True)])[0])


def qr(x, /, mode="reduced"):
    """QR factorization: QRResult(Q, R) for 'reduced' and 'complete'; R alone for 'r'."""
    array = stacked_matrices("qr", x)
    if mode not in ("reduced", "complete", "r", "raw"):
        raise ValueError(f"qr: Unrecognized mode {mode!r}; accepted: 'reduced', 'complete', 'r', 'raw'")
    if mode == "raw":
        raise NotImplementedError("qr: mode='raw' (LAPACK's Householder form) is not supported")
    q, r = _call("linalg.qr", [array], mode="complete" if mode == "complete" else "reduced")
    return wrap(r) if mode == "r" else QRResult(wrap(q), wrap(r))


def svd(x, /, full_matrices=True, compute_uv=True, hermitian=False):
    """Singular value decomposition SVDResult(U, S, Vh) (S alone when not compute_uv)."""
    array = stacked_matrices("svd", x)
    if hermitian:
        raise NotImplementedError(
            "svd: hermitian=True is not supported (NumPy's eigh-based U and Vh differ in sign "
            "from the general SVD); use hermitian=False"
        )
    if not compute_uv:
        return svdvals(array)
    u, s, vh = _call("linalg.svd", [array], full_matrices=bool(full_matrices))
    return SVDResult(wrap(u), wrap(s), wrap(vh))


def svdvals(x, /) -> Array:
    """Singular values, real and descending, shape (..., min(M, N))."""
    return wrap(_call("linalg.svdvals", [stacked_matrices("svdvals", x)])[0])


def _tolerance_operand(name: str, argument: str, value, batch) -> Instruction:
    """A per-matrix cutoff array as the target's second operand: float32/float64 kept (NumPy
    multiplies in its dtype), float16 widened to float32, bools and integers to float64."""
    tolerance = as_array(value, where=name)
    if dtypes.is_complex(tolerance.dtype):
        raise TypeError(f"{name}: {argument} must be real, got dtype {tolerance.dtype}")
    try:
        fits = broadcast_shapes(batch, tolerance.shape, where=name) == batch
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"{name}: {argument} of shape {tolerance.shape} must broadcast to the batch shape "
            f"{batch} of the matrices"
        )
    if tolerance.dtype in (dtypes.float32, dtypes.float64):
        return tolerance._node
    return convert(tolerance._node, dtypes.float32 if tolerance.dtype == dtypes.float16 else dtypes.float64)


def pinv(x, /, rcond=None, hermitian=False, *, rtol=NO_VALUE) -> Array:
    """Moore-Penrose pseudo-inverse, shape (..., N, M), with NumPy's cutoff rules.

    Without rcond/rtol NumPy's 1e-15 cutoff applies; rtol=None is the array API's
    max(M, N) * eps; an array (0-d, or one cutoff per matrix of the stack) applies per matrix,
    as in NumPy. `hermitian` is accepted and computed with the general SVD.
    """
    array = stacked_matrices("pinv", x)
    if rcond is not None and rtol is not NO_VALUE:
        raise ValueError("pinv: `rtol` and `rcond` can't be both set.")
    argument, tolerance = ("rcond", rcond) if rcond is not None else ("rtol", rtol)
    if isinstance(tolerance, (Array, np.ndarray, np.generic, list, tuple)):  # NumPy's asarray(rtol)
        dtype = linalg_dtype("pinv", array)
        operands = [convert(array._node, dtype), _tolerance_operand("pinv", argument, tolerance, array.shape[:-2])]
        return wrap(custom_call_outputs("linalg.pinv", operands)[0])
    if tolerance is NO_VALUE:
        options = {}
    elif tolerance is None:
        options = {"rtol": max(array.shape[-2:]) * float(np.finfo(linalg_dtype("pinv", array)).eps)}
    else:
        options = {"rtol": float(tolerance)}
    return wrap(_call("linalg.pinv", [array], **options)[0])


def matrix_rank(A, /, tol=None, hermitian=False, *, rtol=None) -> Array:  # noqa: N803
    """Number of singular values above the tolerance (int64), per matrix of the stack.

    NumPy returns a Python int for inputs of rank < 2; lazyarr returns a 0-d int64 array.
    """
    from .reductions import any as any_
    from .reductions import count_nonzero
    from .reductions import max as max_

    if rtol is not None and tol is not None:
        raise ValueError("matrix_rank: `tol` and `rtol` can't be both set.")
    array = as_array(A, where="matrix_rank")
    if array.ndim < 2:
        return wrap(convert(any_(array)._node, dtypes.int64))
    if tol is None and not hermitian and (rtol is None or np.ndim(rtol) == 0) and not isinstance(rtol, Array):
        options = {} if rtol is None else {"rtol": float(rtol)}
        return wrap(_call("linalg.matrix_rank", [array], **options)[0])
    if hermitian:
        singular = elementwise.absolute(eigvalsh(array))
    else:
        singular = svdvals(array)
    if tol is None:
        if rtol is None:
            rtol = max(array.shape[-2:]) * float(np.finfo(singular.dtype).eps)
        else:
            rtol = _trailing_axis(as_array(rtol, where="matrix_rank"))
        tol = elementwise.multiply(max_(singular, axis=-1, keepdims=True, initial=0), rtol)
    else:
        tol = _trailing_axis(as_array(tol, where="matrix_rank"))
    return count_nonzero(elementwise.greater(singular, tol), axis=-1)


def _trailing_axis(array: Array) -> Array:
    return wrap(reshape(array._node, array.shape + (1,)))


def _identity_like(array: Array) -> Array:
    size = array.shape[-1]
    rows = make("iota", shape=(size, size), dtype=dtypes.int64, dimension=0)
    columns = make("iota", shape=(size, size), dtype=dtypes.int64, dimension=1)
    eye = convert(make("compare", [rows, columns], direction="EQ"), array.dtype)
    if array.ndim == 2:
        return wrap(eye)
    return wrap(make("broadcast", [eye], shape=array.shape, dimensions=(array.ndim - 2, array.ndim - 1)))


def matrix_power(a, n, /) -> Array:
    """a ** n by repeated squaring, exactly NumPy's sequence of matmuls (n < 0 inverts first)."""
    array = stacked_matrices("matrix_power", a, square=True)
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"matrix_power: exponent must be an integer, got {type(n).__name__}") from None
    if n == 0:
        return _identity_like(array)
    if n < 0:
        array, n = inv(array), -n
    if n == 1:
        return array
    if n == 2:
        return core.matmul(array, array)
    if n == 3:
        return core.matmul(core.matmul(array, array), array)
    power = result = None
    while n > 0:
        power = array if power is None else core.matmul(power, power)
        n, bit = divmod(n, 2)
        if bit:
            result = power if result is None else core.matmul(result, power)
    return result


def matrix_transpose(x, /) -> Array:
    """Swap the last two axes (a view, as NumPy's: writes to it reach `x`)."""
    array = as_array(x, where="matrix_transpose")
    if array.ndim < 2:
        raise ValueError(
            f"matrix_transpose: Input array must be at least 2-dimensional, but it is {array.ndim}"
        )
    order = list(range(array.ndim - 2)) + [array.ndim - 1, array.ndim - 2]
    return manipulation_layout.transpose(array, order)


def matmul(x1, x2, /) -> Array:
    """Matrix product (the array API's linalg.matmul)."""
    return core.matmul(x1, x2)


def tensordot(x1, x2, /, *, axes=2) -> Array:
    """Tensor contraction over `axes` (the array API's linalg.tensordot)."""
    return core.tensordot(x1, x2, axes=axes)


def vecdot(x1, x2, /, *, axis=-1) -> Array:
    """Vector dot products along `axis`, x1 conjugated."""
    return core.vecdot(x1, x2, axis=axis)


def outer(x1, x2, /) -> Array:
    """Outer product of two 1-d arrays."""
    first, second = as_array(x1, where="outer"), as_array(x2, where="outer")
    if first.ndim != 1 or second.ndim != 1:
        raise ValueError(
            f"outer: Input arrays must be one-dimensional, but they are x1.ndim={first.ndim} and "
            f"x2.ndim={second.ndim}."
        )
    return core.outer(first, second)


def cross(x1, x2, /, *, axis=-1) -> Array:
    """Cross product of 3-element vectors along `axis`."""
    first, second = as_array(x1, where="cross"), as_array(x2, where="cross")
    sizes = [
        array.shape[normalize_axis_index("cross", axis, array.ndim)] if array.ndim else 0
        for array in (first, second)
    ]
    if sizes != [3, 3]:
        raise ValueError(
            "cross: Both input arrays must be (arrays of) 3-dimensional vectors, but they are "
            f"{sizes[0]} and {sizes[1]} dimensional instead."
        )
    return core.cross(first, second, axis=axis)


def diagonal(x, /, *, offset=0) -> Array:
    """Diagonals of the matrices formed by the last two axes."""
    return core.diagonal(stacked_matrices("diagonal", x), offset, -2, -1)


def trace(x, /, *, offset=0, dtype=None) -> Array:
    """Sum of the diagonals over the last two axes (NumPy's dtype rules: int8 gives int64)."""
    return core.trace(stacked_matrices("trace", x), offset, -2, -1, dtype=dtype)


from .linalg_norms import matrix_norm, norm, vector_norm  # noqa: E402

__all__ = [
    "EigResult",
    "EighResult",
    "LinAlgError",
    "QRResult",
    "SVDResult",
    "SlogdetResult",
    "cholesky",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "inv",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "norm",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "tensordot",
    "trace",
    "vecdot",
    "vector_norm",
]
