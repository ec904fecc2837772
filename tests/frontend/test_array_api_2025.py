"""What the array API 2025.12 adds or changes, and conformance fixes, against NumPy and the standard.

2025.12 adds `broadcast_shapes`, `isin`, `linalg.eig`, `linalg.eigvals`; returns tuples from
`__array_namespace_info__().devices()`, `meshgrid` and `broadcast_arrays`; lets `expand_dims`
take a tuple of axes, `permute_dims` negative axes and `searchsorted` a scalar; and states how
scalar `min`/`max` of `clip` promote. Each is run with hypothesis against NumPy (which
implements all of them), checking shape, then dtype, then values. Conformance fixes follow:
`linalg.pinv` with a 0-d or per-matrix `rtol` array, `dtypes()` without float16, and `finfo`
fields as Python floats.

Decompositions are custom-calls whose implementation is the NumPy call itself on the operand
converted as NumPy converts it, so results are compared exactly (no tolerance); the array
API's own property (x @ v == v * w) is checked with a tolerance justified where it is used.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from lazyarr import dtypes
from tests.strategies import arrays, elements

LINALG_DTYPES = [np.dtype(name) for name in ("float32", "float64", "complex64", "complex128")]
CONVERTED_DTYPES = [np.dtype(name) for name in ("bool", "int8", "int64")]
REAL_NUMERIC = [np.dtype(name) for name in ("int8", "int64", "uint16", "float32", "float64")]
batch_shapes = hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3)
sides = st.integers(0, 4)


def assert_same(result, expected):
    """A lazy array with NumPy's shape, then dtype, then values bit for bit (NaN == NaN)."""
    expected = np.asarray(expected)
    assert isinstance(result, la.Array), type(result)
    assert result.shape == expected.shape, (result.shape, expected.shape)
    assert result.dtype == expected.dtype, (result.dtype, expected.dtype)
    np.testing.assert_array_equal(np.asarray(result), expected, strict=True)


def bounded(dtype, bound=2.0):
    """Finite values of magnitude <= bound: LAPACK refuses NaN, conditioning needs a bound."""
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind in "iu":
        return st.integers(-4, 4)
    if dtype.kind == "c":
        return hnp.from_dtype(dtype, allow_nan=False, allow_infinity=False, max_magnitude=bound)
    return hnp.from_dtype(dtype, allow_nan=False, allow_infinity=False, min_value=-bound, max_value=bound)


def draw_matrices(data, *, square=False, dtypes=LINALG_DTYPES + CONVERTED_DTYPES):
    dtype = data.draw(st.sampled_from(dtypes), label="dtype")
    rows = data.draw(sides, label="rows")
    columns = rows if square else data.draw(sides, label="columns")
    shape = data.draw(batch_shapes, label="batch") + (rows, columns)
    return data.draw(hnp.arrays(dtype, shape, elements=bounded(dtype)), label="x")


# --- the version and the namespace ------------------------------------------------------------


def test_version_is_2025_12_and_every_version_selects_the_namespace():
    assert la.__array_api_version__ == "2025.12"
    x = la.asarray([1.0])
    for version in (None, "2021.12", "2022.12", "2023.12", "2024.12", "2025.12"):
        assert x.__array_namespace__(api_version=version) is la
    with pytest.raises(ValueError, match="2026.12"):
        x.__array_namespace__(api_version="2026.12")


def test_tuples_where_2025_12_returns_tuples():
    info = la.__array_namespace_info__()
    assert isinstance(info.devices(), tuple) and "cpu" in info.devices()
    grids = la.meshgrid(la.asarray([1, 2]), la.asarray([3, 4, 5]))
    assert isinstance(grids, tuple) and [grid.shape for grid in grids] == [(3, 2), (3, 2)]
    broadcast = la.broadcast_arrays(la.zeros((3, 1)), la.zeros(4))
    assert isinstance(broadcast, tuple) and [array.shape for array in broadcast] == [(3, 4), (3, 4)]


# --- broadcast_shapes ------------------------------------------------------------------------------


@given(data=st.data(), count=st.integers(0, 4))
def test_broadcast_shapes_is_numpys(data, count):
    shapes = data.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=max(count, 1), min_dims=0, max_dims=4, max_side=4)).input_shapes[:count]
    assert la.broadcast_shapes(*shapes) == np.broadcast_shapes(*shapes)
    assert la.broadcast_shapes(*(shape[-1] for shape in shapes if len(shape) == 1)) == np.broadcast_shapes(
        *(shape[-1] for shape in shapes if len(shape) == 1))


@given(shapes=st.lists(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3), max_size=3))
def test_broadcast_shapes_refuses_what_numpy_refuses(shapes):
    try:
        expected = np.broadcast_shapes(*shapes)
    except ValueError:
        with pytest.raises(ValueError, match="broadcast_shapes"):
            la.broadcast_shapes(*shapes)
        return
    assert la.broadcast_shapes(*shapes) == expected


# --- linalg.eig, linalg.eigvals ----------------------------------------------------------------------


def as_complex(results, source_dtype):
    """NumPy's eig results with the array API's dtype: complex of the input's precision (NumPy
    returns real arrays when every eigenvalue is real; integers compute in float64)."""
    dtype = np.complex64 if source_dtype in (np.float32, np.complex64) else np.complex128
    return tuple(np.asarray(result).astype(dtype) for result in results)


@given(data=st.data())
def test_eig_and_eigvals_are_numpys_with_complex_results(data):
    value = draw_matrices(data, square=True)
    with np.errstate(all="ignore"):
        expected_values, expected_vectors = as_complex(np.linalg.eig(value), value.dtype)
    values, vectors = la.linalg.eig(la.asarray(value))
    assert_same(values, expected_values)
    assert_same(vectors, expected_vectors)
    assert_same(la.linalg.eigvals(la.asarray(value)), as_complex([np.linalg.eigvals(value)], value.dtype)[0])
    precision = np.finfo(np.asarray(values).real.dtype).eps
    nonzero = np.abs(value.astype(np.complex128))
    nonzero = nonzero[nonzero > 0]
    if value.size and not (nonzero.size and nonzero.max() > nonzero.min() / precision**2):
        # (Entries of wildly different magnitudes excepted: the dev profile found
        # [[1, 1, 0], [4e-240, 0, 0], [1, 0, 0]], whose eigenvectors, NumPy's as lazyarr's,
        # leave a residual of 1.0: geev's balancing scales by powers of 2 and the matrix is all
        # but defective. lazyarr returns NumPy's result, which the lines above check.)
        # The standard's definition, x v = v diag(w): LAPACK's geev is backward stable, so the
        # residual is a small multiple of n * eps * |x| (entries <= 2, n <= 4); 64 * n * eps
        # * (|x| + 1) leaves room for float32 matrices whose eigenvalues nearly coincide.
        wide = value.astype(np.complex128)
        residual = np.abs(wide @ np.asarray(vectors) - np.asarray(vectors) * np.asarray(values)[..., None, :])
        eps = np.finfo(np.asarray(values).real.dtype).eps
        assert residual.max() <= 64 * value.shape[-1] * eps * (np.abs(wide).max() + 1)


def test_eig_returns_a_named_tuple_and_refuses_bad_input():
    result = la.linalg.eig(la.asarray([[2.0, 0.0], [0.0, 3.0]]))
    assert type(result).__name__ == "EigResult"
    assert result.eigenvalues.tolist() == [2 + 0j, 3 + 0j]
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        la.linalg.eig(la.ones((2, 3)))
    with pytest.raises(np.linalg.LinAlgError, match="two-dimensional"):
        la.linalg.eigvals(la.ones(3))
    with pytest.raises(TypeError, match="float16"):
        la.linalg.eigvals(la.ones((2, 2), dtype=la.float16))
    with pytest.raises(np.linalg.LinAlgError):  # NaN is refused by LAPACK, when evaluated
        la.linalg.eigvals(la.asarray([[np.nan, 0.0], [0.0, 1.0]])).eval()


def test_numpy_eig_on_a_lazy_array_is_complex_where_numpy_is_real():
    """README, Differences from NumPy: a real matrix with a real spectrum gives NumPy float64
    arrays; a lazy array's dtype cannot depend on its values, so lazyarr's are complex."""
    value = np.array([[2.0, 1.0], [1.0, 2.0]])
    # NumPy 2.5 returns complex always (seen with 2.5.2), as the array API and lazyarr do
    assert np.linalg.eigvals(value).dtype == (np.complex128 if np.lib.NumpyVersion(np.__version__) >= "2.5.0"
                                              else np.float64)
    result = np.linalg.eigvals(la.asarray(value))
    assert isinstance(result, la.Array) and result.dtype == np.complex128
    np.testing.assert_array_equal(np.asarray(result), np.linalg.eigvals(value).astype(np.complex128))


# --- linalg.pinv with an rtol array ----------------------------------------------------------------


@given(data=st.data(), keyword=st.sampled_from(["rtol", "rcond"]), kind=st.sampled_from(["lazy", "numpy"]))
def test_pinv_takes_a_0d_or_per_matrix_tolerance_array(data, keyword, kind):
    # float dtypes only, as test_linalg_extension's pinv: NumPy returns an empty integer
    # matrix's pseudo-inverse in the integer dtype, a quirk lazyarr does not copy
    value = draw_matrices(data, dtypes=LINALG_DTYPES)
    batch = value.shape[:-2]
    kept = batch[len(batch) - data.draw(st.integers(0, len(batch)), label="tolerance rank"):]
    shape = tuple(size if data.draw(st.booleans()) else 1 for size in kept)
    dtype = data.draw(st.sampled_from([np.float32, np.float64, np.int64]), label="tolerance dtype")
    values = st.integers(0, 1) if dtype == np.int64 else st.floats(0.0, 0.5, width=np.dtype(dtype).itemsize * 8)
    tolerance = data.draw(hnp.arrays(dtype, shape, elements=values), label="tolerance")
    with np.errstate(all="ignore"):
        expected = np.linalg.pinv(value, **{keyword: tolerance})
    argument = la.asarray(tolerance) if kind == "lazy" else tolerance
    assert_same(la.linalg.pinv(la.asarray(value), **{keyword: argument}), expected)


def test_pinv_tolerance_array_errors():
    stack = la.ones((2, 3, 3))
    with pytest.raises(ValueError, match=r"shape \(4,\).*batch shape \(2,\)"):
        la.linalg.pinv(stack, rtol=la.ones(4))
    with pytest.raises(ValueError, match="batch shape"):
        la.linalg.pinv(stack, rtol=la.ones((3, 2)))
    with pytest.raises(TypeError, match="real"):
        la.linalg.pinv(stack, rtol=la.asarray(0.5j))
    with pytest.raises(ValueError, match="both"):
        la.linalg.pinv(stack, rtol=la.asarray(0.5), rcond=0.5)


@given(data=st.data())
def test_matrix_rank_takes_a_tolerance_array_as_pinv_does(data):
    value = draw_matrices(data, dtypes=LINALG_DTYPES[:2])
    tolerance = data.draw(hnp.arrays(np.float64, value.shape[:-2], elements=st.floats(0.0, 0.5)))
    assert_same(la.linalg.matrix_rank(la.asarray(value), rtol=la.asarray(tolerance)),
                np.linalg.matrix_rank(value, rtol=tolerance))


# --- inspection: dtypes(), finfo, iinfo ------------------------------------------------------------


@pytest.mark.parametrize("kind", [None, "bool", "signed integer", "unsigned integer", "integral",
                                  "real floating", "complex floating", "numeric",
                                  ("real floating", "complex floating")])
def test_namespace_dtypes_are_the_standards_without_float16(kind):
    listed = la.__array_namespace_info__().dtypes(kind=kind)
    assert "float16" not in listed
    expected = [dtype for dtype in dtypes.ALL if dtype != dtypes.float16
                and (kind is None or dtypes.isdtype(dtype, kind))]
    assert listed == {str(dtype): dtype for dtype in expected}
    # float16 still works everywhere else
    assert la.isdtype(la.float16, "real floating")
    assert_same(la.asarray([1.5], dtype=la.float16) * 2, np.array([3.0], np.float16))


@pytest.mark.parametrize("dtype", dtypes.FLOATING + dtypes.COMPLEX, ids=str)
def test_finfo_fields_are_python_floats_of_numpys_values(dtype):
    for argument in (dtype, la.zeros(1, dtype=dtype)):
        info, numpys = la.finfo(argument), np.finfo(dtype)
        assert type(info.bits) is int and info.bits == numpys.bits
        for field in ("eps", "max", "min", "smallest_normal"):
            assert type(getattr(info, field)) is float, field
            assert getattr(info, field) == getattr(numpys, field), field
        assert info.dtype == numpys.dtype and isinstance(info.dtype, np.dtype)
        assert info.tiny == numpys.tiny and info.resolution == numpys.resolution  # NumPy's others


@pytest.mark.parametrize("dtype", dtypes.INTEGER, ids=str)
def test_iinfo_fields_are_python_ints(dtype):
    info = la.iinfo(la.zeros(1, dtype=dtype))
    for field in ("bits", "max", "min"):
        assert type(getattr(info, field)) is int and getattr(info, field) == getattr(np.iinfo(dtype), field)
    assert info.dtype == dtype and isinstance(info.dtype, np.dtype)


# --- scalar arguments and the other 2025.12 changes ---------------------------------------------------


scalars = st.one_of(st.integers(-3, 3), st.floats(-4, 4, allow_nan=False, width=16))


@given(data=st.data(), dtype=st.sampled_from([np.float32, np.float64]), scalar=scalars)
def test_scalar_arguments_follow_numpys_promotion(data, dtype, scalar):
    x = data.draw(arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=2, max_side=4)), label="x")
    condition = data.draw(hnp.arrays(np.bool_, x.shape), label="condition")
    lazy = la.asarray(x)
    with np.errstate(all="ignore"):
        assert_same(la.where(la.asarray(condition), scalar, lazy), np.where(condition, scalar, x))
        assert_same(la.where(la.asarray(condition), lazy, scalar), np.where(condition, x, scalar))
        assert_same(la.nextafter(lazy, scalar), np.nextafter(x, scalar))
        assert_same(la.nextafter(scalar, lazy), np.nextafter(scalar, x))
        assert_same(la.copysign(lazy, scalar), np.copysign(x, scalar))
        assert_same(la.copysign(scalar, lazy), np.copysign(scalar, x))
        low, high = sorted([scalar, data.draw(scalars, label="high")])
        assert_same(la.clip(lazy, low, high), np.clip(x, low, high))
        assert_same(la.clip(lazy, max=high), np.clip(x, None, high))
    assert la.result_type(lazy, scalar) == np.result_type(x.dtype, scalar)


@given(data=st.data(), dtype=st.sampled_from(REAL_NUMERIC), side=st.sampled_from(["left", "right"]))
def test_searchsorted_and_isin_take_scalars(data, dtype, side):
    dtype = np.dtype(dtype)
    limit = 50 if dtype.kind in "iu" else None
    value_elements = elements(dtype, allow_edge=False, min_value=0 if limit else None, max_value=limit)
    sorted_values = np.sort(data.draw(hnp.arrays(dtype, st.integers(0, 6), elements=value_elements), label="x1"))
    scalar = data.draw(st.integers(0, 50), label="scalar")
    assert_same(la.searchsorted(la.asarray(sorted_values), scalar, side=side),
                np.searchsorted(sorted_values, scalar, side=side))
    invert = data.draw(st.booleans(), label="invert")
    assert_same(la.isin(scalar, la.asarray(sorted_values), invert=invert),
                np.isin(scalar, sorted_values, invert=invert))
    assert_same(la.isin(la.asarray(sorted_values), scalar, invert=invert),
                np.isin(sorted_values, scalar, invert=invert))


@given(data=st.data())
def test_expand_dims_takes_a_tuple_and_permute_dims_negative_axes(data):
    x = data.draw(arrays(np.int16, hnp.array_shapes(min_dims=0, max_dims=3, max_side=3)), label="x")
    expanded = x.ndim + data.draw(st.integers(1, 3), label="new axes")
    positions = data.draw(st.lists(st.integers(0, expanded - 1), min_size=expanded - x.ndim,
                                   max_size=expanded - x.ndim, unique=True), label="positions")
    axis = tuple(position - expanded if data.draw(st.booleans()) else position for position in positions)
    assert_same(la.expand_dims(la.asarray(x), axis=axis), np.expand_dims(x, axis))
    order = data.draw(st.permutations(range(x.ndim)), label="order")
    axes = tuple(axis - x.ndim if data.draw(st.booleans()) else axis for axis in order)
    assert_same(la.permute_dims(la.asarray(x), axes), np.transpose(x, axes))


def test_expand_dims_refuses_repeated_and_out_of_range_axes():
    x = la.ones((2, 3))
    with pytest.raises(ValueError, match="repeated"):
        la.expand_dims(x, axis=(1, -3))  # both are axis 1 of the 4-d result
    with pytest.raises((IndexError, ValueError)):
        la.expand_dims(x, axis=(0, 4))


def test_no_warning_where_numpy_warns_about_a_cast():
    """README, Differences from NumPy: NaN/inf to integer gives NumPy's value without its
    RuntimeWarning (compiled kernels do not warn per element)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert la.astype(la.asarray([np.nan, np.inf]), la.int64).tolist() == [-(2**63)] * 2
        with pytest.raises(RuntimeWarning, match="invalid value encountered in cast"):
            np.array([np.nan]).astype(np.int64)
