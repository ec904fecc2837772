"""NumPy's statistics and signal functions against NumPy: average, cov, corrcoef, nanvar,
nanstd, nancumsum, nancumprod, digitize, histogram_bin_edges, histogram, histogram2d,
gradient, trapezoid, ediff1d, convolve and correlate.

Shape, then dtype, then values. The hypothesis tables run on the interpreter (it evaluates
the same graphs with NumPy, without a compile per new graph), where these functions repeat
NumPy's arithmetic step by step, so most comparisons are exact (NaNs equal). Tolerances
appear only where NumPy's order of summation is not reproducible (its dot products go
through BLAS), each with its reason. `test_compiled_values_match_numpy` runs a fixed table
on the CPU backend.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from lazyarr.frontend.tracing import TracedValueError
from tests.strategies import arrays

INTEGER_DTYPES = [np.dtype(name) for name in ("int8", "int64", "uint8")]
FLOAT_DTYPES = [np.dtype(name) for name in ("float16", "float32", "float64")]
COMPLEX_DTYPES = [np.dtype(name) for name in ("complex64", "complex128")]
REAL_DTYPES = [np.dtype(np.bool_)] + INTEGER_DTYPES + FLOAT_DTYPES
small_shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
vectors = hnp.array_shapes(min_dims=1, max_dims=1, min_side=0, max_side=12)

pytestmark = pytest.mark.usefixtures("interpreter_backend_for_module")


def numpy_outcome(function, *args, **kwargs):
    """NumPy's result (arrays), or the exception it raises."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # NumPy warns on empty slices and bad ddof; lazyarr does not
        try:
            result = function(*args, **kwargs)
        except (ValueError, TypeError, ZeroDivisionError, IndexError, RuntimeError) as error:
            return error
    return tuple(np.asarray(part) for part in result) if isinstance(result, tuple) else np.asarray(result)


def assert_same(got, expected, **tolerance):
    """Shape, then dtype, then values (exact unless a tolerance is given; NaNs equal)."""
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for got_part, expected_part in zip(got, expected):
            assert_same(got_part, expected_part, **tolerance)
        return
    got = np.asarray(got)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    if tolerance:
        np.testing.assert_allclose(got, expected, **tolerance)
    else:
        np.testing.assert_array_equal(got, expected)


def check(lazy_call, expected, **tolerance):
    """lazy_call() matches NumPy's outcome: the same values, or the same kind of error."""
    if isinstance(expected, Exception):
        with pytest.raises(type(expected)), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lazy_call()
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # histogram's bool-to-uint8 warning, as NumPy's
        assert_same(lazy_call(), expected, **tolerance)


@st.composite
def axis_choices(draw, ndim: int, *, tuples=True):
    choices = [st.none()]
    if ndim:
        choices.append(st.integers(-ndim, ndim - 1))
        if tuples:
            choices.append(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True).map(tuple))
    return draw(st.one_of(*choices))


# -- average, cov, corrcoef -------------------------------------------------------------------


@given(st.sampled_from(REAL_DTYPES + COMPLEX_DTYPES), st.data())
def test_average_matches_numpy(dtype, data):
    values = data.draw(arrays(dtype, small_shapes))
    axis = data.draw(axis_choices(values.ndim))
    weights = None
    if data.draw(st.booleans()):
        axes = (axis,) if isinstance(axis, int) else axis
        along = axes is not None and data.draw(st.booleans())
        shape = tuple(values.shape[item] for item in axes) if along else values.shape
        weights = data.draw(arrays(data.draw(st.sampled_from([np.float32, np.float64, np.int64])), st.just(shape)))
    returned, keepdims = data.draw(st.booleans()), data.draw(st.sampled_from([np._NoValue, False, True]))
    expected = numpy_outcome(np.average, values, axis=axis, weights=weights, returned=returned, keepdims=keepdims)
    check(lambda: la.average(la.asarray(values), axis=axis, weights=weights, returned=returned, keepdims=keepdims),
          expected)


def test_average_errors_and_lazy_weights():
    values = la.asarray([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(TypeError, match="average: Axis must be specified when shapes of a and weights differ"):
        la.average(values, weights=[1.0, 2.0])
    with pytest.raises(ValueError, match="average: Shape of weights must be consistent"):
        la.average(values, axis=0, weights=[1.0, 2.0, 3.0])
    with pytest.raises(ZeroDivisionError, match="average: Weights sum to zero"):
        la.average(values, axis=1, weights=[1.0, -1.0])
    with pytest.raises(np.exceptions.AxisError):
        la.average(values, axis=2)
    # Lazy weights are not evaluated for NumPy's zero-sum check: the division gives inf/NaN.
    lazy_weights = la.asarray([1.0, -1.0]) * 1
    result = la.average(values, axis=1, weights=lazy_weights)
    assert not result.is_evaluated and not lazy_weights.is_evaluated
    assert np.isinf(result.numpy()).all()


@st.composite
def covariance_cases(draw):
    """(m, y, rowvar, bias, ddof, fweights, aweights, dtype), observations along the right axis."""
    variables, observations = draw(st.integers(0, 3)), draw(st.integers(0, 5))
    rowvar = draw(st.booleans())
    ndim = draw(st.sampled_from([0, 1, 2])) if variables == 1 else 2
    dtype = draw(st.sampled_from(INTEGER_DTYPES + FLOAT_DTYPES + COMPLEX_DTYPES[1:]))
    shape = {0: (), 1: (observations,), 2: (variables, observations) if rowvar else (observations, variables)}[ndim]
    observations = 1 if ndim == 0 else observations
    bounded = {"allow_edge": False, "max_value": 100}
    if dtype.kind in "if":
        bounded["min_value"] = -100
    m = draw(arrays(dtype, st.just(shape), **bounded))
    y = draw(st.none() | arrays(np.float64, st.just(shape), allow_edge=False, min_value=-100, max_value=100))
    fweights = draw(st.none() | hnp.arrays(np.int64, (observations,), elements=st.integers(0, 3)))
    aweights = draw(st.none() | arrays(np.float64, st.just((observations,)), allow_edge=False, min_value=0,
                                       max_value=4))
    ddof = draw(st.sampled_from([None, 0, 1, 2]))
    return m, y, rowvar, draw(st.booleans()), ddof, fweights, aweights, draw(st.sampled_from([None, np.float32]))


@given(covariance_cases())
def test_cov_and_corrcoef_match_numpy(case):
    m, y, rowvar, bias, ddof, fweights, aweights, dtype = case
    # The products of centred rows go through `dot`: NumPy's BLAS and the interpreter's may sum in
    # different orders, so values agree to a few float32 roundings (|values| <= 100: atol scaled).
    tolerance = {"rtol": 1e-4, "atol": 1e-2} if dtype == np.float32 or m.dtype == np.float16 else {
        "rtol": 1e-10, "atol": 1e-8}
    expected = numpy_outcome(np.cov, m, y, rowvar, bias, ddof, fweights, aweights, dtype=dtype)
    check(lambda: la.cov(la.asarray(m), y, rowvar, bias, ddof, fweights, aweights, dtype=dtype), expected,
          **tolerance)
    expected = numpy_outcome(np.corrcoef, m, y, rowvar, dtype=dtype)
    check(lambda: la.corrcoef(la.asarray(m), y, rowvar, dtype=dtype), expected, **tolerance)


def test_cov_errors_and_laziness():
    samples = la.asarray([[1.0, 2.0, 4.0], [0.0, 1.0, 0.0]]) * 1
    for arguments, error, message in [
        ({"ddof": 1.5}, ValueError, "cov: ddof must be integer"),
        ({"fweights": [1, 1.5, 1]}, TypeError, "cov: fweights must be integer"),
        ({"aweights": [1.0, -1.0, 1.0]}, ValueError, "cov: aweights cannot be negative"),
        ({"fweights": [1, 2]}, RuntimeError, "cov: incompatible numbers of samples and fweights"),
        ({"aweights": [[1.0, 1.0, 1.0]]}, RuntimeError, "cov: cannot handle multidimensional aweights"),
        ({"fweights": [0, 0, 0]}, ZeroDivisionError, "cov: Weights sum to zero"),
        ({"dtype": np.int64}, TypeError, "cov: Cannot cast ufunc 'subtract' output"),  # (NumPy's X -= avg)
    ]:
        with pytest.raises(error, match=message):
            la.cov(samples, **arguments)
    with pytest.raises(ValueError, match="cov: m has more than 2 dimensions"):
        la.cov(la.zeros((1, 1, 1)))
    assert not la.cov(samples, aweights=[1.0, 2.0, 1.0]).is_evaluated
    # Lazy weights are not evaluated for NumPy's value checks (integral, non-negative): no error.
    assert not la.cov(samples, aweights=la.asarray([1.0, -1.0, 1.0]) * 1).is_evaluated
    assert not la.corrcoef(samples).is_evaluated
    assert not samples.is_evaluated


# -- nanvar, nanstd, nancumsum, nancumprod ------------------------------------------------------


@st.composite
def with_nans(draw, dtypes=FLOAT_DTYPES + COMPLEX_DTYPES + INTEGER_DTYPES):
    values = draw(arrays(draw(st.sampled_from(dtypes)), small_shapes))
    if values.dtype.kind in "fc":  # NaN common, whole slices of it too
        values = np.where(draw(hnp.arrays(np.bool_, values.shape)), np.array(np.nan, values.dtype), values)
    return values


@given(with_nans(), st.data())
def test_nanvar_and_nanstd_match_numpy(values, data):
    axis = data.draw(axis_choices(values.ndim))
    ddof = data.draw(st.sampled_from([0, 1, 2, 0.5]))
    keepdims = data.draw(st.sampled_from([np._NoValue, True]))
    dtype = data.draw(st.sampled_from([None, np.float64])) if values.dtype.kind != "c" else None
    for function, reference in [(la.nanvar, np.nanvar), (la.nanstd, np.nanstd)]:
        expected = numpy_outcome(reference, values, axis=axis, ddof=ddof, keepdims=keepdims, dtype=dtype)
        check(lambda: function(la.asarray(values), axis=axis, ddof=ddof, keepdims=keepdims, dtype=dtype), expected)


@given(with_nans(FLOAT_DTYPES + COMPLEX_DTYPES + INTEGER_DTYPES + [np.dtype(np.bool_)]), st.data())
def test_nancumsum_and_nancumprod_match_numpy(values, data):
    axis = data.draw(axis_choices(values.ndim, tuples=False))
    dtype = data.draw(st.sampled_from([None, np.float64, np.int64])) if values.dtype.kind != "c" else None
    for function, reference in [(la.nancumsum, np.nancumsum), (la.nancumprod, np.nancumprod)]:
        expected = numpy_outcome(reference, values, axis=axis, dtype=dtype)
        check(lambda: function(la.asarray(values), axis=axis, dtype=dtype), expected)


def test_nan_statistics_are_lazy_and_check_arguments():
    values = la.asarray([[1.0, np.nan], [3.0, 5.0]]) * 1
    for result in (la.nanvar(values, axis=0), la.nanstd(values, ddof=1), la.nancumsum(values, axis=1),
                   la.nancumprod(values)):
        assert not result.is_evaluated
    data = np.array([[1.0, np.nan, 4.0], [2.0, 6.0, np.nan]])
    centre = np.nanmean(data, axis=1, keepdims=True) + 0.5
    assert_same(la.nanvar(la.asarray(data), axis=1, mean=centre), np.nanvar(data, axis=1, mean=centre))
    assert_same(la.nanstd(la.asarray(data), axis=0, correction=1), numpy_outcome(np.nanstd, data, axis=0, correction=1))
    with pytest.raises(TypeError, match="nanvar: If a is inexact, then dtype must be inexact"):
        la.nanvar(values, dtype=np.int64)
    with pytest.raises(ValueError, match="nanstd: ddof and correction can't be provided simultaneously"):
        la.nanstd(values, ddof=1, correction=1)
    with pytest.raises(TypeError, match="nancumsum: out= is not supported"):
        la.nancumsum(values, out=np.zeros(4))
    with pytest.raises(NotImplementedError, match="nanvar: where= is not supported"):
        la.nanvar(values, where=np.ones((2, 2), bool))


# -- digitize, histogram_bin_edges, histogram, histogram2d ---------------------------------------


@st.composite
def monotonic_edges(draw, dtype=np.float64, min_size=0):
    """Sorted edges (repeats allowed), increasing or decreasing."""
    edges = np.sort(draw(arrays(dtype, hnp.array_shapes(min_dims=1, max_dims=1, min_side=min_size, max_side=6),
                                allow_edge=False, min_value=-50, max_value=50)))
    return edges[::-1].copy() if draw(st.booleans()) else edges


@given(st.sampled_from(REAL_DTYPES).flatmap(lambda dtype: arrays(dtype, small_shapes)),
       st.sampled_from([np.float64, np.int64, np.float32]).flatmap(monotonic_edges), st.booleans(), st.booleans())
def test_digitize_matches_numpy(values, edges, right, lazy_edges):
    given_edges = la.asarray(edges) * 1 if lazy_edges else edges
    expected = numpy_outcome(np.digitize, values, edges, right=right)
    check(lambda: la.digitize(la.asarray(values), given_edges, right=right), expected)


def test_digitize_errors_and_laziness():
    values = la.asarray([0.5, 1.5]) * 1
    result = la.digitize(values, [0.0, 1.0, 2.0])
    assert not result.is_evaluated  # lazy in x; concrete edges are checked on the host
    assert_same(result, np.array([1, 2]))
    with pytest.raises(ValueError, match="digitize: bins must be monotonically increasing or decreasing"):
        la.digitize(values, [1.0, 3.0, 2.0])
    with pytest.raises(TypeError, match="digitize: x may not be complex"):
        la.digitize([1j], [0.0, 1.0])
    with pytest.raises(ValueError, match="digitize: object too deep"):
        la.digitize(values, [[0.0, 1.0]])
    with pytest.raises(TracedValueError, match="la.digitize on a traced array inside la.jit.*NumPy array"):
        la.jit(lambda x, bins: la.digitize(x, bins))(np.array([1.0]), np.array([0.0, 2.0]))


@st.composite
def histogram_cases(draw):
    """(a, bins, range, weights, density) across NumPy's two counting paths."""
    dtype = draw(st.sampled_from(INTEGER_DTYPES + FLOAT_DTYPES + [np.dtype(np.bool_)]))
    shape = hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=8)
    values = draw(arrays(dtype, shape, allow_edge=draw(st.booleans())))
    kind = draw(st.sampled_from(["count", "count and range", "edges", "estimator"]))
    bins, range_ = 10, None
    if kind.startswith("count"):
        bins = draw(st.integers(1, 7))
    if kind == "count and range":
        low = draw(st.floats(-60, 60))
        range_ = (low, low + draw(st.sampled_from([0.0, 0.5, 3.0, 100.0])))
        if draw(st.booleans()):
            range_ = tuple(int(edge) for edge in range_)
    if kind == "edges":
        bins = draw(monotonic_edges(draw(st.sampled_from([np.float64, np.int64, np.float32])), min_size=1))
        bins = np.sort(bins)
    if kind == "estimator":
        bins = draw(st.sampled_from(["auto", "sqrt", "sturges"]))
    weights = None
    if kind != "estimator" and draw(st.booleans()):
        weight_dtype = draw(st.sampled_from([np.float64, np.float32, np.int16, np.complex64]))
        weights = draw(arrays(weight_dtype, st.just(values.shape), allow_edge=False, max_value=1000,
                              **({"min_value": -1000} if weight_dtype != np.complex64 else {})))
        if kind == "edges":
            # NumPy sorts the data with an unstable argsort, so tied values' weights are summed in
            # an order of its own: multiples of 1/8 below 2**10 keep every partial sum exact.
            weights = (np.round(weights * 8) / 8).astype(weight_dtype)
    return values, bins, range_, weights, draw(st.booleans())


@given(histogram_cases())
def test_histogram_matches_numpy(case):
    values, bins, range_, weights, density = case
    expected = numpy_outcome(np.histogram, values, bins, range_, density, weights)
    check(lambda: la.histogram(la.asarray(values), bins, range_, density, weights), expected)
    expected = numpy_outcome(np.histogram_bin_edges, values, bins, range_, weights)
    check(lambda: la.histogram_bin_edges(la.asarray(values), bins, range_, weights), expected)


@given(st.sampled_from(FLOAT_DTYPES + INTEGER_DTYPES).flatmap(lambda dtype: arrays(dtype, vectors)), st.data())
def test_histogram2d_matches_numpy(first, data):
    second = data.draw(arrays(np.float64, st.just(first.shape), allow_edge=data.draw(st.booleans())))
    edges = st.sampled_from([np.float64, np.int64]).flatmap(monotonic_edges).map(np.sort)
    bins = data.draw(st.integers(1, 4) | st.tuples(st.integers(1, 4), edges.filter(len)) | edges.filter(
        lambda value: len(value) > 2))
    range_ = data.draw(st.none() | st.just(((-10, 10), (-5.5, 60.0))))
    weights = data.draw(st.none() | arrays(np.float64, st.just(first.shape), allow_edge=False, min_value=-9,
                                           max_value=9))
    density = data.draw(st.booleans())
    expected = numpy_outcome(np.histogram2d, first, second, bins, range_, density, weights)
    check(lambda: la.histogram2d(la.asarray(first), second, bins, range_, density, weights), expected)


def test_histograms_are_lazy_with_a_range_or_edges():
    def fresh():
        return la.asarray([0.5, 1.5, 2.5, 9.0]) * 1

    values = fresh()
    counts, edges = la.histogram(values, bins=3, range=(0, 3), weights=la.asarray([1.0, 2.0, 3.0, 4.0]) * 1)
    assert not counts.is_evaluated and not values.is_evaluated
    assert_same(counts, np.array([1.0, 2.0, 3.0]))
    assert_same(edges, np.array([0.0, 1.0, 2.0, 3.0]))
    assert not la.histogram(fresh(), bins=[0, 1, 10])[0].is_evaluated
    assert not la.histogram2d(fresh(), fresh(), bins=2, range=[(0, 3), (0, 10)])[0].is_evaluated
    values = fresh()
    assert_same(la.histogram_bin_edges(values, bins=4, range=(0, 1)), np.linspace(0.0, 1.0, 5))
    assert not values.is_evaluated  # edges from a range are host values: nothing evaluated

    @la.jit
    def counted(x):
        return la.histogram(x, bins=4, range=(0.0, 2.0))[0]

    assert_same(counted(np.array([0.1, 0.6, 1.9, 2.0, 3.0])), np.array([1, 1, 0, 2]))
    with pytest.raises(TracedValueError, match=r"la.histogram on a traced array inside la.jit.*pass range="):
        la.jit(lambda x: la.histogram(x, bins=3)[0])(np.array([1.0, 2.0]))


def test_histogram_errors():
    values = la.asarray([1.0, 2.0, np.nan])
    for arguments, error, message in [
        ({}, ValueError, r"histogram: autodetected range of \[nan, nan\] is not finite"),
        ({"range": (2, 1)}, ValueError, "histogram: max must be larger than min in range parameter"),
        ({"range": (0, np.inf)}, ValueError, r"histogram: supplied range of \[0, inf\] is not finite"),
        ({"bins": 0}, ValueError, "histogram: `bins` must be positive, when an integer"),
        ({"bins": 2.5}, TypeError, "histogram: `bins` must be an integer, a string, or an array"),
        ({"bins": [[1, 2]]}, ValueError, "histogram: `bins` must be 1d, when an array"),
        ({"bins": [2, 1]}, ValueError, "histogram: `bins` must increase monotonically, when an array"),
        ({"bins": "bogus"}, ValueError, "histogram: 'bogus' is not a valid estimator for `bins`"),
        ({"bins": "auto", "weights": [1, 1, 1]}, TypeError, "histogram: Automated estimation"),
        ({"weights": [1.0]}, ValueError, "histogram: weights should have the same shape as a"),
        ({"bins": 100000, "range": (1, 1.0001)}, ValueError, "histogram: Too many bins for data range"),
    ]:
        with pytest.raises(error, match=message):
            la.histogram(la.asarray(values, dtype=np.float16) if "bins" in arguments and arguments["bins"] == 100000
                         else values, **arguments)
    with pytest.raises(NotImplementedError, match="histogram: complex data is not supported"):
        la.histogram([1j])
    with pytest.raises(ValueError, match="histogram2d: x and y must have the same length"):
        la.histogram2d([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="histogram2d: The dimension of bins must be equal"):
        la.histogram2d([1.0], [1.0], bins=[3])
    with pytest.warns(RuntimeWarning, match="Converting input from bool"):
        la.histogram(la.asarray([True, False]))


# -- gradient, trapezoid, ediff1d -----------------------------------------------------------------


@st.composite
def gradient_cases(draw):
    """(f, spacing arguments, axis, edge_order), spacing as NumPy reads it: none, one scalar,
    or one scalar or 1-d coordinates per axis (even and uneven, lazy or not)."""
    dtype = draw(st.sampled_from(INTEGER_DTYPES + FLOAT_DTYPES + COMPLEX_DTYPES[:1]))
    values = draw(arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=5)))
    axis = draw(axis_choices(values.ndim))
    axes = range(values.ndim) if axis is None else [axis % values.ndim] if isinstance(axis, int) else axis
    scalars = st.sampled_from([1.0, 2, 0.5, np.float32(2.0), np.float64(0.25), np.array(3.0)])
    form = draw(st.sampled_from(["none", "scalar", "per axis"]))
    spacing = () if form == "none" else (draw(scalars),) if form == "scalar" else tuple(
        draw(scalars | st.sampled_from([np.float64, np.float32, np.int64]).flatmap(
            lambda kind, size=values.shape[item]: coordinates(kind, size))) for item in axes)
    lazy = draw(st.booleans())
    spacing = tuple(la.asarray(item) * 1 if lazy and np.ndim(item) == 1 else item for item in spacing)
    return values, spacing, axis, draw(st.sampled_from([1, 2]))


def coordinates(dtype, size):
    even = st.just(np.arange(size, dtype=dtype) * 3)
    uneven = hnp.arrays(dtype, (size,), elements=st.integers(-20, 20), unique=True).map(np.sort)
    return even | uneven


@given(gradient_cases())
def test_gradient_matches_numpy(case):
    values, spacing, axis, edge_order = case
    numpy_spacing = tuple(item.numpy() if isinstance(item, la.Array) else item for item in spacing)
    expected = numpy_outcome(np.gradient, values, *numpy_spacing, axis=axis, edge_order=edge_order)
    check(lambda: la.gradient(la.asarray(values), *spacing, axis=axis, edge_order=edge_order), expected)


def test_gradient_errors_and_laziness():
    values = la.asarray(np.arange(12.0).reshape(3, 4)) * 1
    gradients = la.gradient(values, la.asarray([0.0, 1.0, 3.0]) * 1, 2.0, edge_order=2)
    assert isinstance(gradients, tuple) and not any(part.is_evaluated for part in gradients)
    assert not values.is_evaluated
    with pytest.raises(ValueError, match="gradient: Shape of array too small"):
        la.gradient(la.asarray([1.0, 2.0]), edge_order=2)
    with pytest.raises(ValueError, match="gradient: 'edge_order' greater than 2 not supported"):
        la.gradient(values, edge_order=3)
    with pytest.raises(TypeError, match="gradient: invalid number of arguments"):
        la.gradient(values, 1.0, 2.0, 3.0)
    with pytest.raises(ValueError, match="gradient: distances must be either scalars or 1d"):
        la.gradient(values, np.ones((3, 1)), 1.0)
    with pytest.raises(ValueError, match="gradient: when 1d, distances must match"):
        la.gradient(values, [0.0, 1.0], 1.0)
    with pytest.raises(TypeError, match="gradient: numpy boolean subtract"):
        la.gradient(la.asarray([True, False]))


@given(st.sampled_from(REAL_DTYPES + COMPLEX_DTYPES[:1]).flatmap(
    lambda dtype: arrays(dtype, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4))), st.data())
def test_trapezoid_matches_numpy(values, data):
    axis = data.draw(st.integers(-values.ndim, values.ndim - 1))
    size = values.shape[axis]
    points = data.draw(st.none() | arrays(np.float64, st.just((size,))) | arrays(np.float32, st.just(values.shape)))
    dx = data.draw(st.sampled_from([1.0, 0.5, 2, np.float32(0.25), np.float64(3.0)]))
    expected = numpy_outcome(np.trapezoid, values, points, dx, axis)
    check(lambda: la.trapezoid(la.asarray(values), points, dx, axis), expected)


@given(st.sampled_from(INTEGER_DTYPES + FLOAT_DTYPES + COMPLEX_DTYPES[:1]).flatmap(
    lambda dtype: arrays(dtype, small_shapes)), st.data())
def test_ediff1d_matches_numpy(values, data):
    ends = st.none() | st.sampled_from([0, -7, 300, 2.5, [1, 2], np.array([[4]], np.int8), np.array([1.5, 2.5])])
    to_end, to_begin = data.draw(ends), data.draw(ends)
    expected = numpy_outcome(np.ediff1d, values, to_end, to_begin)
    check(lambda: la.ediff1d(la.asarray(values), to_end, to_begin), expected)


def test_trapezoid_and_ediff1d_laziness_and_errors():
    values = la.asarray([1.0, 2.0, 4.0]) * 1
    assert not la.trapezoid(values, x=la.asarray([0.0, 1.0, 3.0]) * 1).is_evaluated
    assert not la.ediff1d(values, to_begin=[0.0]).is_evaluated
    assert not values.is_evaluated
    with pytest.raises(IndexError):  # NumPy's IndexError for a 0-d y (AxisError is one)
        la.trapezoid(la.asarray(3.0))
    with pytest.raises(TypeError, match="ediff1d: dtype of `to_begin` must be compatible"):
        la.ediff1d(la.asarray([1, 2]), to_begin=1.5)
    with pytest.raises(TypeError, match="ediff1d: numpy boolean subtract"):
        la.ediff1d(la.asarray([True, False]))


# -- convolve, correlate --------------------------------------------------------------------------


def _summation_bound(first, second, mode, reference):
    """The rounding bound of each output's dot product summed in any order: width * eps *
    sum |a_i v_j| (NumPy's float32, float64 and complex dots run in BLAS, in BLAS's order)."""
    eps = np.finfo(np.result_type(first, second)).eps
    magnitudes = reference(*(np.abs(np.asarray(operand, np.complex128)) for operand in (first, second)), mode)
    return max(np.size(first), np.size(second)) * eps * magnitudes


@given(st.sampled_from([np.dtype(np.bool_)] + INTEGER_DTYPES + FLOAT_DTYPES + COMPLEX_DTYPES), st.data())
def test_convolve_and_correlate_match_numpy(dtype, data):
    # Finite, bounded floats: the tolerance below is a rounding bound, meaningless once sums overflow
    # (test_convolve_keeps_infinities_out_of_partial_windows covers infinities).
    bounded = {"allow_edge": False, "max_value": 100} if dtype.kind in "fc" else {}
    first = data.draw(arrays(dtype, vectors, **bounded, **({"min_value": -100} if dtype.kind == "f" else {})))
    second_dtype = data.draw(st.sampled_from([dtype, np.dtype(np.int8)]))
    second = data.draw(arrays(second_dtype, hnp.array_shapes(min_dims=0, max_dims=1, min_side=0, max_side=6),
                              **(bounded if second_dtype == dtype else {}),
                              **({"min_value": -100} if second_dtype.kind == "f" else {})))
    mode = data.draw(st.sampled_from(["full", "same", "valid", 0, 1, 2]))
    for function, reference in [(la.convolve, np.convolve), (la.correlate, np.correlate)]:
        expected = numpy_outcome(reference, first, second, mode)
        if isinstance(expected, Exception) or dtype.kind not in "fc" or dtype == np.float16:
            check(lambda: function(la.asarray(first), second, mode), expected)  # exact: NumPy's own loops
            continue
        got = np.asarray(function(la.asarray(first), second, mode))
        assert got.shape == expected.shape and got.dtype == expected.dtype
        bound = _summation_bound(first, second, mode, reference)
        assert np.all(np.abs(got - expected) <= bound), (got, expected, bound)


def test_convolve_keeps_infinities_out_of_partial_windows():
    # NumPy's partial windows never multiply a padding zero: no 0 * inf = NaN at the ends.
    signal, kernel = np.array([np.inf, 1.0, 2.0]), np.array([1.0, 2.0])
    for mode in ("full", "same", "valid"):
        assert_same(la.convolve(la.asarray(signal), kernel, mode), np.convolve(signal, kernel, mode))
        assert_same(la.correlate(la.asarray(kernel), signal, mode), np.correlate(kernel, signal, mode))


def test_convolve_and_correlate_errors_and_laziness():
    signal = la.asarray([1.0, 2.0, 3.0]) * 1
    assert not la.convolve(signal, [1.0, -1.0]).is_evaluated
    assert not la.correlate(signal, [1.0, -1.0], "same").is_evaluated
    assert not signal.is_evaluated
    with pytest.raises(ValueError, match="convolve: a cannot be empty"):
        la.convolve([], [1.0])
    with pytest.raises(ValueError, match="correlate: second array argument cannot be empty"):
        la.correlate([1.0], [])
    with pytest.raises(ValueError, match="correlate: object too deep"):
        la.correlate(np.ones((2, 2)), [1.0])
    with pytest.raises(ValueError, match="correlate: object of too small depth"):
        la.correlate(1.0, [1.0])
    with pytest.raises(ValueError, match="convolve: mode must be one of 'valid', 'same', or 'full'"):
        la.convolve(signal, [1.0], mode="middle")
    with pytest.raises(TypeError, match="convolve/correlate mode not understood"):
        la.correlate(signal, [1.0], mode=None)


# -- compiled code, documentation ----------------------------------------------------------------


def test_compiled_values_match_numpy():
    rng = np.random.default_rng(3)
    samples = rng.standard_normal((3, 40))
    samples[1, 5] = np.nan
    floats = samples.astype(np.float32)
    signal, kernel = rng.standard_normal(30), rng.standard_normal(5)
    la.set_backend("cpu")
    try:
        lazy = la.asarray(samples)
        exact = [
            (la.nancumsum(lazy, axis=1), np.nancumsum(samples, axis=1)),
            (la.digitize(lazy, [-1.0, 0.0, 0.5]), np.digitize(samples, [-1.0, 0.0, 0.5])),
            (la.histogram(lazy, bins=6, range=(-2, 2))[0], np.histogram(samples, bins=6, range=(-2, 2))[0]),
            (la.histogram(lazy, bins=[-3, -1, 0, 0.5, 3])[0], np.histogram(samples, bins=[-3, -1, 0, 0.5, 3])[0]),
            (la.histogram2d(lazy[0], lazy[2], bins=3, range=[(-2, 2), (-3, 3)])[0],
             np.histogram2d(samples[0], samples[2], bins=3, range=[(-2, 2), (-3, 3)])[0]),
            (la.gradient(la.asarray(floats), 0.5, axis=1, edge_order=2),
             np.gradient(floats, 0.5, axis=1, edge_order=2)),
            (la.ediff1d(la.asarray(floats), to_begin=0), np.ediff1d(floats, to_begin=0)),
            (la.convolve(la.asarray([3, -1, 7], np.int8), np.array([100, 5], np.int8)),
             np.convolve(np.array([3, -1, 7], np.int8), np.array([100, 5], np.int8))),
        ]
        for got, expected in exact:
            assert_same(got, numpy_outcome(lambda value: value, expected))
        # Compiled reductions sum in their own order (vectorized), not NumPy's pairwise order;
        # relative differences stay within a few float64 roundings of these O(1) values.
        close = [
            (la.average(lazy, axis=1, weights=np.arange(40.0)), np.average(samples, axis=1, weights=np.arange(40.0))),
            (la.cov(la.asarray(samples[[0, 2]]), aweights=np.arange(40.0)),
             np.cov(samples[[0, 2]], aweights=np.arange(40.0))),
            (la.corrcoef(la.asarray(samples[[0, 2]])), np.corrcoef(samples[[0, 2]])),
            (la.nanvar(lazy, axis=1, ddof=1), np.nanvar(samples, axis=1, ddof=1)),
            (la.nanstd(la.asarray(floats), axis=0), np.nanstd(floats, axis=0)),
            (la.trapezoid(lazy, dx=0.1), np.trapezoid(samples, dx=0.1)),
            (la.correlate(la.asarray(signal), kernel, "same"), np.correlate(signal, kernel, "same")),
            (la.histogram(lazy[0], bins=5, weights=lazy[2], density=True)[0],
             np.histogram(samples[0], bins=5, weights=samples[2], density=True)[0]),
        ]
        for got, expected in close:
            tolerance = 1e-5 if expected.dtype == np.float32 else 1e-12
            assert_same(got, numpy_outcome(lambda value: value, expected), rtol=tolerance, atol=tolerance)
    finally:
        la.set_backend("interpreter")


def test_docstring_examples():
    import doctest
    import importlib

    from lazyarr.frontend import numpy_statistics

    modules = {importlib.import_module(f"lazyarr.frontend.{name}") for name in (
        "convolution", "differences", "histogram_edges", "histograms", "nan_statistics", "weighted_statistics")}
    assert set(numpy_statistics.__all__) == {name for module in modules for name in module.__all__}
    for module in modules:
        assert doctest.testmod(module).failed == 0, module.__name__
