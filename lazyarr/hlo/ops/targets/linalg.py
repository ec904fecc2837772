"""Linear-algebra targets: the array API's `linalg` extension (2025.12), run by NumPy.

Every target takes stacks of matrices `(..., M, N)` as NumPy does. Operands must be float32,
float64, complex64 or complex128: NumPy upcasts integers to float64 and refuses float16, and
the frontend converts before it builds the call, so the targets stay strict (as XLA's ops are;
`linalg.solve` also wants equal dtypes). Results keep the operand's precision (NumPy's float32
linalg returns float32); eigenvalues, singular values and log-determinants are real, except
those of `linalg.eig`/`linalg.eigvals`, which are complex (the array API's rule: NumPy's real
results for real spectra are cast).
`infer` computes every output's shape and dtype from operand shapes and dtypes alone; the
implementation casts NumPy's results to what `infer` says, so the two can never disagree.
"""

from __future__ import annotations

import numpy as np

from .... import dtypes, shapes
from ...op import HloError
from .._rules import describe
from ..custom import CustomCallTarget, register_target

ACCEPTED = (dtypes.float32, dtypes.float64, dtypes.complex64, dtypes.complex128)
_ACCEPTED_NAMES = ", ".join(str(dtype) for dtype in ACCEPTED)


# --- operand and option checks ------------------------------------------------------------


def _operands(name, operands, count):
    if len(operands) != count:
        raise HloError(f"{name}: expects {count} operand(s), got {len(operands)} ({describe(operands)})")
    for index, operand in enumerate(operands):
        if operand.dtype not in ACCEPTED:
            raise HloError(
                f"{name}: operand {index} has dtype {operand.dtype} (shape {tuple(operand.shape)}); "
                f"accepted: {_ACCEPTED_NAMES} (convert integers to float64 first)"
            )
    return operands


def _matrices(name, operand, *, square=False, index=0):
    """Split `(..., M, N)` into (batch, M, N), refusing rank < 2 and, when asked, M != N."""
    shape = tuple(operand.shape)
    if len(shape) < 2:
        raise HloError(
            f"{name}: operand {index} {describe([operand])} has rank {len(shape)}; "
            "expected a stack of matrices (..., M, N) of rank >= 2"
        )
    batch, rows, columns = shape[:-2], shape[-2], shape[-1]
    if square and rows != columns:
        raise HloError(
            f"{name}: operand {index} {describe([operand])} is not a stack of square matrices; "
            "expected shape (..., M, M)"
        )
    return batch, rows, columns


def _check_options(name, options, accepted):
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise HloError(f"{name}: unknown option(s) {unknown}; accepted: {sorted(accepted) or 'none'}")


def _bool_option(name, options, option, default):
    value = options.get(option, default)
    if not isinstance(value, (bool, np.bool_)):
        raise HloError(f"{name}: option {option} must be a bool, got {value!r}")
    return bool(value)


def _choice_option(name, options, option, choices, default):
    value = options.get(option, default)
    if value not in choices:
        raise HloError(f"{name}: option {option} must be one of {choices}, got {value!r}")
    return value


def _tolerance_option(name, options):
    """`rtol` as a non-negative float, or None when omitted (the NumPy default).

    An explicit None is refused: HLO text cannot print it, so "default" is spelled by omission.
    """
    if "rtol" not in options:
        return None
    value = options["rtol"]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise HloError(
            f"{name}: option rtol must be a non-negative float (omit it for the default), "
            f"got {value!r}"
        )
    return float(value)


# --- registration ---------------------------------------------------------------------------


def _register(name, option_names, infer, compute, doc):
    """Register `name`; its implementation casts `compute`'s results to `infer`'s dtypes.

    NumPy arrays have `.shape` and `.dtype`, so `infer` runs on the values as well: that keeps
    one source of truth for the dtypes (NumPy's choice can differ on edge cases).
    """

    def checked_infer(operands, options):
        _check_options(name, options, option_names)
        return infer(operands, options)

    def implementation(values, options):
        expected = checked_infer(values, options)
        results = compute(values, options)
        return tuple(
            np.asarray(result).astype(dtype, copy=False)
            for result, (_, dtype) in zip(results, expected)
        )

    return register_target(CustomCallTarget(name, checked_infer, implementation, doc))


def _same_as_operand(name, square):
    """Infer rule for one output of the operand's shape and dtype (cholesky, inv)."""

    def infer(operands, options):
        (operand,) = _operands(name, operands, 1)
        _matrices(name, operand, square=square)
        return [(tuple(operand.shape), operand.dtype)]

    return infer


# --- targets --------------------------------------------------------------------------------

_register(
    "linalg.cholesky", ("upper",),
    _same_as_operand("linalg.cholesky", square=True),
    lambda values, options: (
        np.linalg.cholesky(values[0], upper=_bool_option("linalg.cholesky", options, "upper", False)),
    ),
    "Cholesky factor of Hermitian positive-definite matrices; lower unless options['upper'].",
)

_register(
    "linalg.inv", (),
    _same_as_operand("linalg.inv", square=True),
    lambda values, options: (np.linalg.inv(values[0]),),
    "Inverse of each square matrix in the stack.",
)


def _solve_infer(operands, options):
    name = "linalg.solve"
    coefficients, right_side = _operands(name, operands, 2)
    batch, size, _ = _matrices(name, coefficients, square=True, index=0)
    if coefficients.dtype != right_side.dtype:
        raise HloError(f"{name}: operands must have equal dtypes, got {describe(operands)}")
    if len(right_side.shape) == 1:
        if right_side.shape[0] != size:
            raise HloError(
                f"{name}: vector operand 1 must have length {size} to match operand 0, "
                f"got {describe(operands)}"
            )
        return [(batch + (size,), coefficients.dtype)]
    right_batch, rows, columns = _matrices(name, right_side, index=1)
    if rows != size:
        raise HloError(
            f"{name}: operand 1 must have {size} rows to match operand 0, got {describe(operands)}"
        )
    try:
        result_batch = shapes.broadcast_shapes(batch, right_batch, where=name)
    except ValueError as error:
        raise HloError(f"{error} (batch dims of {describe(operands)})") from None
    return [(result_batch + (size, columns), coefficients.dtype)]


_register(
    "linalg.solve", (), _solve_infer,
    lambda values, options: (np.linalg.solve(values[0], values[1]),),
    "x1 @ result == x2; x2 is a vector (M,) only when it has rank 1 (NumPy 2 / array API).",
)


def _det_infer(operands, options):
    (operand,) = _operands("linalg.det", operands, 1)
    batch, _, _ = _matrices("linalg.det", operand, square=True)
    return [(batch, operand.dtype)]


_register(
    "linalg.det", (), _det_infer,
    lambda values, options: (np.linalg.det(values[0]),),
    "Determinant of each square matrix; shape (...,).",
)


def _slogdet_infer(operands, options):
    (operand,) = _operands("linalg.slogdet", operands, 1)
    batch, _, _ = _matrices("linalg.slogdet", operand, square=True)
    return [(batch, operand.dtype), (batch, dtypes.real_dtype(operand.dtype))]


_register(
    "linalg.slogdet", (), _slogdet_infer,
    lambda values, options: tuple(np.linalg.slogdet(values[0])),
    "(sign, logabsdet) of each determinant; sign has the operand's dtype, logabsdet is real.",
)


def _eigenvalues(name, operands):
    (operand,) = _operands(name, operands, 1)
    batch, size, _ = _matrices(name, operand, square=True)
    return operand, (batch + (size,), dtypes.real_dtype(operand.dtype))


def _eigh_infer(operands, options):
    operand, eigenvalues = _eigenvalues("linalg.eigh", operands)
    return [eigenvalues, (tuple(operand.shape), operand.dtype)]


_register(
    "linalg.eigh", (), _eigh_infer,
    lambda values, options: tuple(np.linalg.eigh(values[0])),
    "(eigenvalues ascending, eigenvectors) of Hermitian matrices (lower triangle is read).",
)

_register(
    "linalg.eigvalsh", (),
    lambda operands, options: [_eigenvalues("linalg.eigvalsh", operands)[1]],
    lambda values, options: (np.linalg.eigvalsh(values[0]),),
    "Eigenvalues (ascending, real) of Hermitian matrices.",
)


def _complex_of(dtype):
    """The complex dtype of `dtype`'s precision (float32 -> complex64)."""
    return dtypes.complex64 if dtype in (dtypes.float32, dtypes.complex64) else dtypes.complex128


def _eig_infer(operands, options):
    operand, (shape, _) = _eigenvalues("linalg.eig", operands)
    return [(shape, _complex_of(operand.dtype)), (tuple(operand.shape), _complex_of(operand.dtype))]


_register(
    "linalg.eig", (), _eig_infer,
    lambda values, options: tuple(np.linalg.eig(values[0])),
    "(eigenvalues, eigenvectors) of general square matrices, both complex (columns of the "
    "second are the unit-norm eigenvectors); NaN or inf raises LinAlgError when evaluated.",
)


def _eigvals_infer(operands, options):
    operand, (shape, _) = _eigenvalues("linalg.eigvals", operands)
    return [(shape, _complex_of(operand.dtype))]


_register(
    "linalg.eigvals", (), _eigvals_infer,
    lambda values, options: (np.linalg.eigvals(values[0]),),
    "Eigenvalues of general square matrices, complex; shape (..., M).",
)


def _qr_infer(operands, options):
    name = "linalg.qr"
    (operand,) = _operands(name, operands, 1)
    batch, rows, columns = _matrices(name, operand)
    mode = _choice_option(name, options, "mode", ("reduced", "complete"), "reduced")
    inner = min(rows, columns) if mode == "reduced" else rows
    return [(batch + (rows, inner), operand.dtype), (batch + (inner, columns), operand.dtype)]


_register(
    "linalg.qr", ("mode",), _qr_infer,
    lambda values, options: tuple(np.linalg.qr(values[0], mode=options.get("mode", "reduced"))),
    "(Q, R) with options['mode'] 'reduced' (default; K = min(M, N) columns) or 'complete'.",
)


def _svd_infer(operands, options):
    name = "linalg.svd"
    (operand,) = _operands(name, operands, 1)
    batch, rows, columns = _matrices(name, operand)
    full = _bool_option(name, options, "full_matrices", True)
    inner = min(rows, columns)
    left, right = (rows, columns) if full else (inner, inner)
    return [
        (batch + (rows, left), operand.dtype),
        (batch + (inner,), dtypes.real_dtype(operand.dtype)),
        (batch + (right, columns), operand.dtype),
    ]


_register(
    "linalg.svd", ("full_matrices",), _svd_infer,
    lambda values, options: tuple(
        np.linalg.svd(values[0], full_matrices=options.get("full_matrices", True))
    ),
    "(U, S, Vh); S is real and descending; options['full_matrices'] defaults to True.",
)


def _svdvals_infer(operands, options):
    (operand,) = _operands("linalg.svdvals", operands, 1)
    batch, rows, columns = _matrices("linalg.svdvals", operand)
    return [(batch + (min(rows, columns),), dtypes.real_dtype(operand.dtype))]


_register(
    "linalg.svdvals", (), _svdvals_infer,
    lambda values, options: (np.linalg.svdvals(values[0]),),
    "Singular values, real and descending; shape (..., min(M, N)).",
)


def _pinv_infer(operands, options):
    name = "linalg.pinv"
    operands = _operands(name, operands, 2 if len(operands) == 2 else 1)
    batch, rows, columns = _matrices(name, operands[0])
    _tolerance_option(name, options)
    if len(operands) == 2:
        tolerance = operands[1]
        if "rtol" in options:
            raise HloError(f"{name}: rtol given both as operand 1 and as an option ({describe(operands)})")
        if tolerance.dtype not in (dtypes.float32, dtypes.float64):
            raise HloError(f"{name}: operand 1 (rtol) must be real, got {describe(operands)}")
        try:
            broadcast = shapes.broadcast_shapes(batch, tuple(tolerance.shape), where=name)
        except ValueError:
            broadcast = None
        if broadcast != batch:
            raise HloError(
                f"{name}: operand 1 (rtol) must broadcast to the batch shape {batch}, got "
                f"{describe(operands)}"
            )
    return [(batch + (columns, rows), operands[0].dtype)]


def _pinv(values, options):
    if len(values) == 2:
        return (np.linalg.pinv(values[0], rtol=values[1]),)
    tolerance = _tolerance_option("linalg.pinv", options)
    if tolerance is None:
        return (np.linalg.pinv(values[0]),)
    return (np.linalg.pinv(values[0], rtol=tolerance),)


_register(
    "linalg.pinv", ("rtol",), _pinv_infer, _pinv,
    "Moore-Penrose pseudo-inverse, shape (..., N, M). Without options['rtol'] it is "
    "np.linalg.pinv(x) (cutoff 1e-15); the array API's rtol=None (max(M, N) * eps) is "
    "the frontend's to compute and pass. A per-matrix rtol is operand 1 (float32 or "
    "float64, broadcasting to the batch shape).",
)


def _matrix_rank_infer(operands, options):
    name = "linalg.matrix_rank"
    (operand,) = _operands(name, operands, 1)
    batch, _, _ = _matrices(name, operand)
    _tolerance_option(name, options)
    return [(batch, dtypes.int64)]


_register(
    "linalg.matrix_rank", ("rtol",), _matrix_rank_infer,
    lambda values, options: (
        np.linalg.matrix_rank(values[0], rtol=_tolerance_option("linalg.matrix_rank", options)),
    ),
    "Number of singular values above rtol * largest (default rtol max(M, N) * eps); int64.",
)
