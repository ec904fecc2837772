"""la.linalg (the array API linalg extension) against numpy.linalg, run with hypothesis.

Decompositions are custom-calls whose implementation is the NumPy call itself, so, on the same
operand converted the way NumPy converts it (integers and bools to float64, float32 kept), the
results must be identical: no tolerance. Operands are finite and bounded (LAPACK refuses NaN)
and shaped as stacks with empty batches, 0x0 and 1x1 matrices; Cholesky gets Hermitian positive
definite matrices and eigh Hermitian ones. Errors NumPy raises when it evaluates (a singular
matrix) must come out of lazyarr's evaluation with the same type; shape errors at build time.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from lazyarr.frontend import linalg_extension as extension

ACCEPTED = [np.dtype(name) for name in ("float32", "float64", "complex64", "complex128")]
CONVERTED = [np.dtype(name) for name in ("bool", "int8", "int64", "uint16")]
batch_shapes = hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3)
sides = st.integers(0, 4)


def bounded(dtype, bound=2.0):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind in "iu":
        return st.integers(0 if dtype.kind == "u" else -4, 4)
    if dtype.kind == "c":
        return hnp.from_dtype(dtype, allow_nan=False, allow_infinity=False, max_magnitude=bound)
    return hnp.from_dtype(dtype, allow_nan=False, allow_infinity=False, min_value=-bound, max_value=bound)


def draw_matrices(data, *, square=False, dtypes=ACCEPTED + CONVERTED, label="x"):
    dtype = data.draw(st.sampled_from(dtypes), label=f"{label} dtype")
    rows = data.draw(sides, label="rows")
    columns = rows if square else data.draw(sides, label="columns")
    shape = data.draw(batch_shapes, label="batch") + (rows, columns)
    return data.draw(hnp.arrays(dtype, shape, elements=bounded(dtype)), label=label)


def hermitian(value, positive_definite=False):
    value = value.astype(np.result_type(value.dtype, np.float32)) if value.dtype.kind in "biu" else value
    transposed = np.conj(np.swapaxes(value, -1, -2))
    if positive_definite:
        size = value.shape[-1]
        return value @ transposed + size * np.eye(size, dtype=value.dtype)
    return (value + transposed) / 2


def outcome(function):
    """(result, None) or (None, exception) of a NumPy call, warnings silenced."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return function(), None
        except (ValueError, TypeError) as error:  # LinAlgError is a ValueError
            return None, error


def assert_matches(result, expected, tolerance=None):
    """Shape, then dtype, then values; named tuples field by field."""
    if isinstance(expected, tuple):
        assert type(result).__name__ == type(expected).__name__, (type(result), type(expected))
        for part, expected_part in zip(result, expected):
            assert_matches(part, expected_part, tolerance)
        return
    expected = np.asarray(expected)
    assert isinstance(result, la.Array), type(result)
    assert result.shape == expected.shape, (result.shape, expected.shape)
    assert result.dtype == expected.dtype, (result.dtype, expected.dtype)
    if tolerance is None:
        np.testing.assert_array_equal(np.asarray(result), expected, strict=True)
    else:
        np.testing.assert_allclose(np.asarray(result), expected, rtol=tolerance, atol=tolerance)


def check(lazy_call, numpy_call, tolerance=None):
    """Compare lazyarr with NumPy, including where and how NumPy fails."""
    expected, error = outcome(numpy_call)
    if error is None:
        assert_matches(lazy_call(), expected, tolerance)
        return
    if isinstance(error, np.linalg.LinAlgError) and "singular" in str(error).lower():
        with pytest.raises(np.linalg.LinAlgError):  # data-dependent: raised when evaluated
            result = lazy_call()
            for part in result if isinstance(result, tuple) else (result,):
                np.asarray(part)
        return
    with pytest.raises(type(error)):
        lazy_call()


# --- decompositions ------------------------------------------------------------------------------


@given(data=st.data(), upper=st.booleans())
def test_cholesky(data, upper):
    value = hermitian(draw_matrices(data, square=True), positive_definite=True)
    check(
        lambda: la.linalg.cholesky(la.asarray(value), upper=upper),
        lambda: np.linalg.cholesky(value, upper=upper),
    )


@pytest.mark.parametrize("name", ["inv", "det", "slogdet", "svdvals"])
@given(data=st.data())
def test_single_operand_functions(name, data):
    value = draw_matrices(data, square=name != "svdvals")
    check(lambda: getattr(la.linalg, name)(la.asarray(value)), lambda: getattr(np.linalg, name)(value))


@given(data=st.data(), uplo=st.sampled_from(["L", "U"]))
def test_eigh_and_eigvalsh(data, uplo):
    value = hermitian(draw_matrices(data, square=True))
    check(
        lambda: la.linalg.eigvalsh(la.asarray(value), UPLO=uplo),
        lambda: np.linalg.eigvalsh(value, UPLO=uplo),
        None if uplo == "L" else 1e-5,
    )  # UPLO='U' reads x^H's lower triangle: LAPACK rounds differently
    if uplo == "L":
        check(lambda: la.linalg.eigh(la.asarray(value)), lambda: np.linalg.eigh(value))


@given(data=st.data(), mode=st.sampled_from(["reduced", "complete", "r"]))
def test_qr(data, mode):
    value = draw_matrices(data)
    check(lambda: la.linalg.qr(la.asarray(value), mode=mode), lambda: np.linalg.qr(value, mode=mode))


@given(data=st.data(), full_matrices=st.booleans(), compute_uv=st.booleans())
def test_svd(data, full_matrices, compute_uv):
    value = draw_matrices(data)
    check(
        lambda: la.linalg.svd(la.asarray(value), full_matrices=full_matrices, compute_uv=compute_uv),
        lambda: np.linalg.svd(value, full_matrices=full_matrices, compute_uv=compute_uv),
    )


@given(data=st.data())
def test_solve(data):
    coefficients = draw_matrices(data, square=True, label="x1")
    size = coefficients.shape[-1]
    dtype = data.draw(st.sampled_from(ACCEPTED + CONVERTED), label="x2 dtype")
    if data.draw(st.booleans(), label="vector"):
        shape = (size,)
    else:
        shape = data.draw(batch_shapes) + (size, data.draw(sides))
    right_side = data.draw(hnp.arrays(dtype, shape, elements=bounded(dtype)), label="x2")
    check(
        lambda: la.linalg.solve(la.asarray(coefficients), la.asarray(right_side)),
        lambda: np.linalg.solve(coefficients, right_side),
    )


@given(data=st.data(), cutoff=st.sampled_from(["default", "rcond", "rtol", "rtol None"]))
def test_pinv(data, cutoff):
    value = draw_matrices(data, dtypes=ACCEPTED)
    keywords = {"default": {}, "rcond": {"rcond": 0.1}, "rtol": {"rtol": 0.1}, "rtol None": {"rtol": None}}[
        cutoff
    ]
    check(lambda: la.linalg.pinv(la.asarray(value), **keywords), lambda: np.linalg.pinv(value, **keywords))


@given(data=st.data(), variant=st.sampled_from(["default", "rtol", "tol", "hermitian", "vector"]))
def test_matrix_rank(data, variant):
    value = draw_matrices(data, square=variant == "hermitian")
    if variant == "hermitian":
        value = hermitian(value)
    if variant == "vector":
        value = value.reshape(-1)
    keywords = {"rtol": {"rtol": 0.3}, "tol": {"tol": 0.5}, "hermitian": {"hermitian": True}}.get(variant, {})
    expected, error = outcome(lambda: np.linalg.matrix_rank(value, **keywords))
    assert error is None
    result = la.linalg.matrix_rank(la.asarray(value), **keywords)
    assert result.dtype == np.int64 and result.shape == np.shape(expected)
    np.testing.assert_array_equal(np.asarray(result), expected)


@given(data=st.data(), power=st.integers(-3, 6))
def test_matrix_power(data, power):
    """Values in -1..1 keep every power exactly representable (3 ** 6 < 2 ** 11), so the
    repeated matmuls are exact in any summation order; negative powers go through inv."""
    dtype = data.draw(st.sampled_from(ACCEPTED + CONVERTED + [np.dtype("float16")]))
    side = data.draw(st.integers(0, 3))
    shape = data.draw(batch_shapes) + (side, side)
    elements = st.integers(-1, 1) if dtype.kind not in "bu" else st.integers(0, 1)
    value = data.draw(hnp.arrays(dtype, shape, elements=elements))
    tolerance = 1e-5 if power < 0 else None  # the inverse's own rounding is multiplied on
    check(
        lambda: la.linalg.matrix_power(la.asarray(value), power),
        lambda: np.linalg.matrix_power(value, power),
        tolerance,
    )


# --- norms ------------------------------------------------------------------------------------

MATRIX_ORDS = ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf]
VECTOR_ORDS = [2, 1, 0, -1, 3, 0.5, math.inf, -math.inf]


def summed_tolerance(value) -> float:
    """Norms sum |x| (or its squares) in compiled kernels, which reassociate (vector
    accumulators): within 4 * n * eps relative of NumPy's pairwise sums (README: Differences).
    The drawn values are bounded, so the same figure serves as an absolute bound near zero."""
    dtype = value.dtype if value.dtype.kind in "fc" else np.dtype(np.float64)
    return 4 * max(value.size, 1) * float(np.finfo(dtype).eps)


@given(data=st.data(), ord=st.sampled_from(MATRIX_ORDS), keepdims=st.booleans())
def test_matrix_norm(data, ord, keepdims):
    value = draw_matrices(data, dtypes=ACCEPTED + CONVERTED + [np.dtype("float16")])
    check(
        lambda: la.linalg.matrix_norm(la.asarray(value), ord=ord, keepdims=keepdims),
        lambda: np.linalg.matrix_norm(value, ord=ord, keepdims=keepdims),
        tolerance=summed_tolerance(value),
    )


@given(data=st.data(), ord=st.sampled_from(VECTOR_ORDS), keepdims=st.booleans())
def test_vector_norm(data, ord, keepdims):
    dtype = data.draw(st.sampled_from(ACCEPTED + CONVERTED + [np.dtype("float16")]))
    value = data.draw(
        hnp.arrays(
            dtype, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3), elements=bounded(dtype)
        )
    )
    choices = [st.none()]
    if value.ndim:
        choices += [
            st.integers(-value.ndim, value.ndim - 1),
            st.lists(st.integers(0, value.ndim - 1), min_size=1, unique=True).map(tuple),
        ]
    axis = data.draw(st.one_of(choices), label="axis")
    check(
        lambda: la.linalg.vector_norm(la.asarray(value), axis=axis, ord=ord, keepdims=keepdims),
        lambda: np.linalg.vector_norm(value, axis=axis, ord=ord, keepdims=keepdims),
        max(general_power_tolerance(ord, value) or 0.0, summed_tolerance(value)),
    )


def general_power_tolerance(ord, value):
    """For p not in (0, 1, 2, inf), a 0-d sum is a NumPy scalar and NumPy's final `ret **= 1/p`
    runs scalar math (C powf), while lazyarr runs the power ufunc (SIMD): 1 ulp apart at most;
    allow 4 eps. Every norm also sums, which compiled kernels reassociate (summed_tolerance)."""
    if isinstance(ord, str) or ord in (0, 1, 2, None, math.inf, -math.inf):
        return None
    dtype = np.float64 if value.dtype.kind in "biu" else value.dtype
    return 4 * float(np.finfo(dtype).eps)


@given(
    data=st.data(),
    ord=st.sampled_from([None, "fro", "nuc", 1, 2, math.inf, -2, 0, 3]),
    keepdims=st.booleans(),
)
def test_norm(data, ord, keepdims):
    """norm(x) of all elements is sqrt(x . x) in NumPy (BLAS) and an HLO dot here: allow
    100 * eps (float16: 1e-2) for that path only; the others use the same ops as NumPy."""
    dtype = data.draw(st.sampled_from(ACCEPTED + CONVERTED + [np.dtype("float16")]))
    value = data.draw(
        hnp.arrays(
            dtype, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3), elements=bounded(dtype)
        )
    )
    axis = data.draw(st.sampled_from([None, 0, -1, (0, -1), (-1, 0)]))
    flat_dot = axis is None and (
        ord is None or (ord == 2 and value.ndim == 1) or (ord == "fro" and value.ndim == 2)
    )
    result_dtype = np.result_type(value.dtype, np.float16) if value.dtype.kind not in "fc" else value.dtype
    vector = axis in (0, -1) or (axis is None and value.ndim == 1)
    tolerance = general_power_tolerance(ord, value) if vector else None
    if flat_dot:
        tolerance = (
            1e-2
            if value.dtype == np.float16
            else 100 * float(np.finfo(np.float64 if value.dtype.kind in "biu" else result_dtype).eps)
        )
    check(
        lambda: la.linalg.norm(la.asarray(value), ord=ord, axis=axis, keepdims=keepdims),
        lambda: np.linalg.norm(value, ord=ord, axis=axis, keepdims=keepdims),
        tolerance,
    )


# --- array API wrappers --------------------------------------------------------------------------


@given(data=st.data(), offset=st.integers(-3, 3))
def test_trace_diagonal_transpose(data, offset):
    value = draw_matrices(data)
    dtype = data.draw(st.sampled_from([None, np.float64]))
    check(
        lambda: la.linalg.trace(la.asarray(value), offset=offset, dtype=dtype),
        lambda: np.linalg.trace(value, offset=offset, dtype=dtype),
    )
    check(
        lambda: la.linalg.diagonal(la.asarray(value), offset=offset),
        lambda: np.linalg.diagonal(value, offset=offset),
    )
    check(lambda: la.linalg.matrix_transpose(la.asarray(value)), lambda: np.linalg.matrix_transpose(value))


@given(data=st.data())
def test_products(data):
    left = data.draw(hnp.arrays(np.int32, hnp.array_shapes(min_dims=1, max_dims=3, min_side=3, max_side=3)))
    right = data.draw(hnp.arrays(np.int32, hnp.array_shapes(min_dims=1, max_dims=3, min_side=3, max_side=3)))
    check(lambda: la.linalg.cross(la.asarray(left), la.asarray(right)), lambda: np.linalg.cross(left, right))
    check(lambda: la.linalg.outer(la.asarray(left), la.asarray(right)), lambda: np.linalg.outer(left, right))
    check(
        lambda: la.linalg.vecdot(la.asarray(left), la.asarray(right)), lambda: np.linalg.vecdot(left, right)
    )
    check(
        lambda: la.linalg.matmul(la.asarray(left), la.asarray(right)), lambda: np.linalg.matmul(left, right)
    )
    check(
        lambda: la.linalg.tensordot(la.asarray(left), la.asarray(right), axes=1),
        lambda: np.linalg.tensordot(left, right, axes=1),
    )


# --- errors and laziness -------------------------------------------------------------------------


def test_shape_and_dtype_errors():
    with pytest.raises(np.linalg.LinAlgError, match="1-dimensional array given"):
        la.linalg.inv(la.asarray(np.ones(3)))
    with pytest.raises(np.linalg.LinAlgError, match="must be square"):
        la.linalg.det(la.asarray(np.ones((2, 3))))
    with pytest.raises(TypeError, match="float16 is unsupported in linalg"):
        la.linalg.inv(la.asarray(np.eye(2, dtype=np.float16)))
    with pytest.raises(ValueError, match="UPLO"):
        la.linalg.eigh(la.asarray(np.eye(2)), UPLO="X")
    with pytest.raises(ValueError, match="Unrecognized mode"):
        la.linalg.qr(la.asarray(np.eye(2)), mode="x")
    with pytest.raises(NotImplementedError, match="raw"):
        la.linalg.qr(la.asarray(np.eye(2)), mode="raw")
    with pytest.raises(TypeError, match="exponent must be an integer"):
        la.linalg.matrix_power(la.asarray(np.eye(2)), 1.5)
    with pytest.raises(ValueError, match="Invalid norm order 'nuc' for vectors"):
        la.linalg.norm(la.asarray(np.ones((2, 2))), ord="nuc", axis=0)
    with pytest.raises(ValueError, match="Improper number of dimensions"):
        la.linalg.norm(la.asarray(np.ones((2, 2, 2))), ord=3)
    with pytest.raises(ValueError, match="rows"):
        la.linalg.solve(la.asarray(np.eye(2)), la.asarray(np.ones(3)))
    with pytest.raises(ValueError, match="one-dimensional"):
        la.linalg.outer(la.asarray(np.ones((2, 2))), la.asarray(np.ones(2)))
    with pytest.raises(ValueError, match="3-dimensional vectors"):
        la.linalg.cross(la.asarray(np.ones(2)), la.asarray(np.ones(3)))


def test_singular_matrix_raises_when_evaluated():
    inverse = la.linalg.inv(la.asarray(np.zeros((2, 2))))
    assert not inverse.is_evaluated
    with pytest.raises(np.linalg.LinAlgError):
        np.asarray(inverse)


def test_named_tuples_and_laziness():
    matrix = la.asarray(np.array([[2.0, 1.0], [1.0, 3.0]]))
    results = [la.linalg.eigh(matrix), la.linalg.qr(matrix), la.linalg.svd(matrix), la.linalg.slogdet(matrix)]
    assert [type(result).__name__ for result in results] == [
        "EighResult",
        "QRResult",
        "SVDResult",
        "SlogdetResult",
    ]
    assert results[0].eigenvalues.shape == (2,) and results[2].Vh.shape == (2, 2)
    assert not any(part.is_evaluated for result in results for part in result)
    assert not la.linalg.matrix_norm(matrix, ord="nuc").is_evaluated


def test_namespace_exports_everything():
    for name in extension.__all__:
        assert getattr(la.linalg, name) is getattr(extension, name)
