"""median, quantile, percentile and the nan-forms against NumPy.

Exact comparisons (shape, then dtype, then values with NaNs equal): each function repeats
NumPy's arithmetic step by step (its index clamping, its `_lerp`, its mean of the middle
values), so no tolerance is needed. The hypothesis tables run on the interpreter, which
evaluates the same graphs with NumPy (fast: no compile per new graph); a fixed table runs on
the CPU backend to check that the compiled code gives the same bits (no fused multiply-add).
"""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from tests.strategies import FLOAT_DTYPES, arrays

INTEGER_DTYPES = [np.dtype(name) for name in ("int8", "int16", "int64", "uint8", "uint64")]
ORDERED_DTYPES = INTEGER_DTYPES + FLOAT_DTYPES
nonempty = hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=5)
any_sides = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5)


pytestmark = pytest.mark.usefixtures("interpreter_backend_for_module")


def numpy_result(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy warns on NaN slices; lazyarr does not
        return np.asarray(function(*args, **kwargs))


def numpy_answers(values, axis) -> bool:
    """NumPy cannot merge several axes of an array whose other axes hold a 0 (it reshapes with
    -1 and raises); lazyarr answers those, so there is nothing to compare."""
    if not isinstance(axis, tuple) or len(axis) < 2:
        return True
    kept = [size for position, size in enumerate(values.shape) if position not in {a % values.ndim for a in axis}]
    return 0 not in kept or values.size != 0


def assert_same(got, expected):
    got = np.asarray(got)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    np.testing.assert_array_equal(got, expected)


@st.composite
def reduction_cases(draw, dtypes=ORDERED_DTYPES, shapes=nonempty):
    """(values, axis) with axis None, one axis or several."""
    values = draw(arrays(draw(st.sampled_from(dtypes)), shapes))
    axes = st.lists(st.integers(0, values.ndim - 1), min_size=1, max_size=values.ndim, unique=True)
    choices = [st.none()]
    if values.ndim:
        choices += [st.integers(-values.ndim, values.ndim - 1), axes.map(tuple)]
    return values, draw(st.one_of(*choices))


# q as users pass it: Python floats and ints (weak: float32 data stays float32), lists, NumPy
# scalars and arrays of any float dtype (strong: they promote).
quantile_arguments = st.one_of(
    st.floats(0, 1),
    st.sampled_from([0, 1, 0.5, 1.0, 0.0]),
    st.lists(st.floats(0, 1), min_size=0, max_size=3),
    st.sampled_from(FLOAT_DTYPES).flatmap(
        lambda dtype: hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=2, max_side=3),
                                 elements=st.floats(0, 1, width=np.dtype(dtype).itemsize * 8))),
    st.lists(st.integers(0, 1), min_size=1, max_size=2).map(np.array),
)


def _strong_scalar_nan_quirk(values, q, expected, got) -> bool:
    """NumPy returns a slice's NaN in the data's dtype when its result is a single value and q
    is a NumPy scalar or 0-d array (README: Differences); lazyarr keeps the promoted dtype."""
    return (type(q) not in (int, float) and np.ndim(q) == 0 and expected.size == 1
            and np.isnan(expected).all() and got.dtype != expected.dtype)


@given(reduction_cases(), quantile_arguments, st.booleans(), st.booleans())
def test_quantile_and_percentile_match_numpy(case, q, keepdims, as_percent):
    values, axis = case
    if as_percent:
        q = [value * 100 for value in q] if isinstance(q, list) else q * 100
        function, reference = la.percentile, np.percentile
    else:
        function, reference = la.quantile, np.quantile
    expected = numpy_result(reference, values, q, axis=axis, keepdims=keepdims)
    got = np.asarray(function(la.asarray(values), q, axis=axis, keepdims=keepdims))
    if _strong_scalar_nan_quirk(values, q, expected, got):
        expected = expected.astype(got.dtype)
    assert_same(got, expected)


@given(reduction_cases(shapes=any_sides), st.booleans())
def test_median_matches_numpy(case, keepdims):
    values, axis = case
    if not numpy_answers(values, axis):
        return
    expected = numpy_result(np.median, values, axis=axis, keepdims=keepdims)
    assert_same(la.median(la.asarray(values), axis=axis, keepdims=keepdims), expected)


@st.composite
def nan_cases(draw):
    """Float data where NaN is common (whole slices of it too), and the reduction axes."""
    values, axis = draw(reduction_cases(dtypes=FLOAT_DTYPES, shapes=any_sides))
    mask = draw(hnp.arrays(np.bool_, values.shape))
    return np.where(mask, np.array(np.nan, values.dtype), values), axis


def _all_nan_slice_quirk(values, axis, q, expected, got) -> bool:
    """NumPy gives an all-NaN slice's result in the data's dtype (np.full(..., nan, a.dtype))
    and lets the first slice decide the whole result's dtype; lazyarr keeps the promoted one."""
    return got.dtype != expected.dtype and np.isnan(values).all(axis=axis).any()


@given(nan_cases(), quantile_arguments, st.booleans(), st.booleans())
def test_nanquantile_and_nanpercentile_match_numpy(case, q, keepdims, as_percent):
    values, axis = case
    if isinstance(axis, tuple) and np.ndim(q) == 2:
        q = np.asarray(q)[0]  # NumPy moves a 2-d q's axes to wrong places for tuple axes
    if as_percent:
        q = [value * 100 for value in q] if isinstance(q, list) else q * 100
        function, reference = la.nanpercentile, np.nanpercentile
    else:
        function, reference = la.nanquantile, np.nanquantile
    expected = numpy_result(reference, values, q, axis=axis, keepdims=keepdims)
    got = np.asarray(function(la.asarray(values), q, axis=axis, keepdims=keepdims))
    if _all_nan_slice_quirk(values, axis, q, expected, got) or _strong_scalar_nan_quirk(values, q, expected, got):
        got = got.astype(expected.dtype)  # NumPy's values, cast to the dtype NumPy chose
    assert_same(got, expected)


@given(nan_cases(), st.booleans())
def test_nanmedian_matches_numpy(case, keepdims):
    values, axis = case
    expected = numpy_result(np.nanmedian, values, axis=axis, keepdims=keepdims)
    assert_same(la.nanmedian(la.asarray(values), axis=axis, keepdims=keepdims), expected)


@given(reduction_cases(dtypes=INTEGER_DTYPES + [np.dtype(np.bool_)]), st.booleans())
def test_nan_forms_of_integers_are_the_plain_forms(case, keepdims):
    values, axis = case
    assert_same(la.nanmedian(la.asarray(values), axis=axis, keepdims=keepdims),
                numpy_result(np.nanmedian, values, axis=axis, keepdims=keepdims))
    if values.dtype != np.bool_:
        assert_same(la.nanquantile(la.asarray(values), [0.3, 1], axis=axis, keepdims=keepdims),
                    numpy_result(np.nanquantile, values, [0.3, 1], axis=axis, keepdims=keepdims))


def test_nanmedian_takes_numpy_paths_by_slice_length():
    # Below 600 values per slice NumPy's masked path sums the middle pair in float16 (and
    # overflows); from 600 on, and for 1-d input, it takes a float32 mean.
    short = np.array([[60000, 60000, np.nan], [1, 2, 3]], np.float16)
    long = np.full((2, 600), 60000, np.float16)
    long[:, ::2] = np.nan
    for values in (short, long, short[0]):
        axis = None if values.ndim == 1 else 1
        assert_same(la.nanmedian(la.asarray(values), axis=axis), numpy_result(np.nanmedian, values, axis=axis))


def test_known_difference_nan_dtype_for_strong_q():
    values = np.array([1.0, np.nan], np.float32)
    assert numpy_result(np.quantile, values, np.float64(0.5)).dtype == np.float32  # NumPy: data's dtype
    result = la.quantile(la.asarray(values), np.float64(0.5))
    assert result.dtype == np.float64 and np.isnan(result.numpy())  # lazyarr: the promoted dtype
    all_nan = np.full(2, np.nan, np.float32)
    assert numpy_result(np.nanquantile, all_nan, [0.5]).dtype == np.float32  # an all-NaN slice
    assert la.nanquantile(la.asarray(all_nan), [0.5]).dtype == np.float64


def test_empty_arrays_and_axes():
    empty = np.zeros((0, 3), np.float32)
    assert_same(la.median(la.asarray(empty), axis=0), numpy_result(np.median, empty, axis=0))
    assert_same(la.quantile(la.asarray(empty), 0.5, axis=1), numpy_result(np.quantile, empty, 0.5, axis=1))
    # NumPy's nan-forms answer an empty array with nanmean, whatever q.
    assert_same(la.nanquantile(la.asarray(empty), [0.5, 0.7], axis=0),
                numpy_result(np.nanquantile, empty, [0.5, 0.7], axis=0))
    assert_same(la.nanmedian(la.asarray(empty)), numpy_result(np.nanmedian, empty))
    with pytest.raises(IndexError, match="quantile: index -1 is out of bounds for axis 0 with size 0"):
        la.quantile(la.asarray(empty), 0.5, axis=0)


def test_errors_name_the_function():
    values = la.asarray([1.0, 2.0])
    with pytest.raises(ValueError, match=r"quantile: Quantiles must be in the range \[0, 1\]"):
        la.quantile(values, 1.5)
    with pytest.raises(ValueError, match=r"percentile: Percentiles must be in the range \[0, 100\]"):
        la.percentile(values, [-1, 50])
    with pytest.raises(ValueError, match="nanquantile: Quantiles must be in the range"):
        la.nanquantile(values, float("nan"))
    with pytest.raises(TypeError, match="median: dtype complex128 is not supported"):
        la.median(la.asarray([1j]))
    with pytest.raises(TypeError, match="nanmedian: dtype complex64 is not supported"):
        la.nanmedian(la.asarray(np.array([1j], np.complex64)))
    with pytest.raises(TypeError, match="nanquantile: a must be an array of real numbers"):
        la.nanquantile(la.asarray([1j]), 0.5)
    with pytest.raises(TypeError, match="quantile: cannot interpolate between boolean values"):
        la.quantile(la.asarray([True, False]), 0.5)
    with pytest.raises(ValueError, match="q must be a scalar or 1d"):
        la.quantile(values, np.zeros((1, 1, 1)))
    with pytest.raises(ValueError, match="'bogus' is not a valid method"):
        la.quantile(values, 0.5, method="bogus")
    with pytest.raises(NotImplementedError, match="method='lower' is not implemented"):
        la.percentile(values, 50, method="lower")
    with pytest.raises(ValueError, match="Only method 'inverted_cdf' supports weights"):
        la.quantile(values, 0.5, weights=[1, 1])
    with pytest.raises(TypeError, match="median: out= is not supported"):
        la.median(values, out=np.zeros(()))
    with pytest.raises(np.exceptions.AxisError, match="nanmedian: axis 2 is out of bounds"):
        la.nanmedian(values, axis=2)
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        la.median(la.asarray(np.zeros((2, 2))), axis=(0, 0))


def test_numpy_dispatch_and_fallback():
    values = np.array([[3.0, 1.0, np.nan], [2.0, 5.0, 4.0]])
    lazy = la.asarray(values)
    result = np.nanpercentile(lazy, [10, 90], axis=1)  # dispatches to lazyarr: stays lazy
    assert isinstance(result, la.Array) and not result.is_evaluated
    assert_same(result, numpy_result(np.nanpercentile, values, [10, 90], axis=1))
    # A method lazyarr does not implement falls back to NumPy on the evaluated values.
    assert_same(np.asarray(np.quantile(lazy, 0.4, method="nearest")), np.quantile(values, 0.4, method="nearest"))


def test_lazy_and_usable_inside_jit():
    values = np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32)
    values[1, 2] = np.nan
    lazy = la.asarray(values) * 1
    for function in (la.median, la.nanmedian):
        assert not function(lazy, axis=1).is_evaluated

    @la.jit
    def summarize(x):
        return la.median(x, axis=0), la.nanquantile(x, [0.1, 0.9], axis=1), la.percentile(x, 30.0)

    medians, quantiles, percentile = summarize(values)
    assert_same(medians, numpy_result(np.median, values, axis=0))
    assert_same(quantiles, numpy_result(np.nanquantile, values, [0.1, 0.9], axis=1))
    assert_same(percentile, numpy_result(np.percentile, values, 30.0))


def test_compiled_values_match_numpy_bit_for_bit():
    # The interpolation a + (b - a) * t must not become a fused multiply-add in compiled code.
    rng = np.random.default_rng(7)
    data = {
        np.float32: rng.standard_normal((5, 11)).astype(np.float32) * 1e3,
        np.float64: rng.standard_normal((5, 11)) / 3,
        np.int16: rng.integers(-30000, 30000, (5, 11)).astype(np.int16),
    }
    data[np.float64][2, 3] = np.nan
    data[np.float32][0, :] = [np.inf, -np.inf, -0.0, 0.0, np.nan, 1, 2, 3, 4, 5, 6]
    la.set_backend("cpu")
    try:
        for values in data.values():
            lazy = la.asarray(values)
            cases = [
                (la.quantile(lazy, [0.13, 0.5, 0.77], axis=1), np.quantile(values, [0.13, 0.5, 0.77], axis=1)),
                (la.percentile(lazy, 37.5, axis=0), np.percentile(values, 37.5, axis=0)),
                (la.median(lazy, axis=1), np.median(values, axis=1)),
            ]
            if values.dtype.kind == "f":
                cases += [
                    (la.nanquantile(lazy, 0.61, axis=1), np.nanquantile(values, 0.61, axis=1)),
                    (la.nanmedian(lazy, axis=0), np.nanmedian(values, axis=0)),
                ]
            for got, expected in cases:
                assert_same(got, numpy_result(lambda value: value, expected))
    finally:
        la.set_backend("interpreter")
