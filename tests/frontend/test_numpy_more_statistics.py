"""histogramdd, polydiv and polyfit's full=True and cov= against NumPy.

Shape, then dtype, then values. histogramdd and polydiv repeat NumPy's arithmetic step by step
(the same searchsorted edges, the same scatter of float64 ones or weights in sample order;
polydiv's long division in NumPy's order), so they are compared exactly (NaNs equal), on the
interpreter in the hypothesis tables and on the CPU backend in a fixed table. polyfit solves
with another SVD than NumPy's lstsq, so its parts are held to NumPy within the fit's
conditioning (each tolerance says how).
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from lazyarr.frontend.tracing import TracedValueError
from tests.assertions import assert_lazy_matches
from tests.strategies import arrays

pytestmark = pytest.mark.usefixtures("interpreter_backend_for_module")

EPS = np.finfo(np.float64).eps


def numpy_outcome(function, *args, **kwargs):
    """NumPy's result, or the exception it raises."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return function(*args, **kwargs)
        except (ValueError, TypeError, IndexError) as error:
            return error




def check(lazy_call, expected):
    """lazy_call() matches NumPy's outcome: the same values, or the same kind of error."""
    if isinstance(expected, Exception):
        with pytest.raises(type(expected)):
            lazy_call()
        return
    assert_lazy_matches(lazy_call(), expected)


def lazy(values) -> la.Array:
    array = la.asarray(values)
    return la.where(True, array, array)


# -- histogramdd -------------------------------------------------------------------------------


@st.composite
def histogramdd_cases(draw):
    """(sample, bins, range, weights, density): counts, per-coordinate counts and edge arrays."""
    dtype = draw(st.sampled_from([np.dtype(name) for name in ("bool", "int8", "uint8", "int64", "float16", "float32",
                                                                "float64")]))
    count, dimensions = draw(st.integers(0, 9)), draw(st.integers(1, 3))
    sample = draw(arrays(dtype, st.just((count, dimensions)), allow_edge=draw(st.booleans())))
    edges = arrays(draw(st.sampled_from([np.float64, np.int64])), hnp.array_shapes(min_dims=1, max_dims=1,
                   max_side=5), allow_edge=False, min_value=-50, max_value=50).map(np.sort)
    per_coordinate = st.lists(st.integers(1, 4) | edges, min_size=dimensions, max_size=dimensions)
    bins = draw(st.integers(1, 5) | per_coordinate)
    range_ = None
    if draw(st.booleans()):
        range_ = [None if draw(st.booleans()) else (low, low + draw(st.sampled_from([0.0, 1.5, 40.0])))
                  for low in draw(st.lists(st.integers(-20, 20), min_size=dimensions, max_size=dimensions))]
    weights = None
    if draw(st.booleans()):
        weights = draw(arrays(draw(st.sampled_from([np.float64, np.float32, np.int16])), st.just((count,)),
                              allow_edge=False, min_value=-9, max_value=9))
    return sample, bins, range_, weights, draw(st.booleans())


@settings(max_examples=60)
@given(histogramdd_cases(), st.booleans())
def test_histogramdd_matches_numpy(case, as_coordinates):
    sample, bins, range_, weights, density = case
    expected = numpy_outcome(np.histogramdd, sample, bins, range_, density, weights)
    given_sample = [lazy(column) for column in sample.T] if as_coordinates else lazy(sample)
    check(lambda: la.histogramdd(given_sample, bins, range_, density, weights), expected)


def test_histogramdd_is_lazy_with_ranges_or_edges():
    samples = np.array([[0.5, 1.0, -3.0], [1.5, 2.0, 0.0], [2.5, 9.0, 1.0], [0.5, 0.0, 1.0]])
    sample = lazy(samples)
    counts, edges = la.histogramdd(sample, bins=(2, [0, 1, 10], 3), range=[(0, 3), None, (-3, 3)])
    assert not counts.is_evaluated and not sample.is_evaluated
    expected = np.histogramdd(samples, bins=(2, [0, 1, 10], 3), range=[(0, 3), None, (-3, 3)])
    assert_lazy_matches((counts, edges), expected)
    # without a range the extremes of every coordinate are evaluated, in one module
    assert_lazy_matches(la.histogramdd(sample, bins=2), np.histogramdd(samples, bins=2))
    jitted = la.jit(lambda s: la.histogramdd(s, bins=2, range=[(0, 3)] * 3)[0])
    assert_lazy_matches(jitted(samples), np.histogramdd(samples, bins=2, range=[(0, 3)] * 3)[0])
    with pytest.raises(TracedValueError, match=r"la.histogramdd on a traced array inside la.jit.*pass range="):
        la.jit(lambda s: la.histogramdd(s, bins=2)[0])(samples)
    # np.histogramdd of a lazy sample dispatches here; histogram2d is histogramdd of the pair
    assert isinstance(np.histogramdd(sample, bins=2, range=[(0, 3)] * 3)[0], la.Array)
    assert_lazy_matches(la.histogram2d(samples[:, 0], samples[:, 1], bins=(2, 3))[0],
                np.histogramdd(samples[:, :2], bins=(2, 3))[0])


def test_histogramdd_errors():
    sample = np.ones((3, 2))
    for call in [
        lambda module: module.histogramdd(np.zeros((2, 2, 2))),
        lambda module: module.histogramdd(sample, bins=[2, 2, 2]),
        lambda module: module.histogramdd(sample, range=[(0, 1)]),
        lambda module: module.histogramdd(sample, bins=[0, 2]),
        lambda module: module.histogramdd(sample, bins=[2.5, 2]),
        lambda module: module.histogramdd(sample, bins=[[[1.0]], 2]),
        lambda module: module.histogramdd(sample, bins=[[2.0, 1.0], 2]),
        lambda module: module.histogramdd(sample, range=[(1, 0), None]),
        lambda module: module.histogramdd(sample, weights=np.ones((3, 1))),
        lambda module: module.histogramdd(sample, weights=np.ones(2)),
        lambda module: module.histogramdd(sample, weights=np.ones(3, np.complex64)),
        lambda module: module.histogramdd(np.ones((3, 40)), bins=10),
        lambda module: module.histogramdd(np.zeros((3, 0))),
    ]:
        expected = numpy_outcome(call, np)
        assert isinstance(expected, Exception)
        check(lambda: call(la), expected)
    with pytest.raises(ValueError, match="histogramdd: The dimension of bins must be equal"):
        la.histogramdd(sample, bins=[2, 2, 2])
    with pytest.raises(NotImplementedError, match="histogramdd: complex coordinates are not supported"):
        la.histogramdd(np.ones((2, 2), np.complex64))


# -- polydiv -----------------------------------------------------------------------------------

POLY_DTYPES = [np.dtype(name) for name in ("bool", "int8", "int64", "float16", "float32", "float64")]
coefficient_shapes = hnp.array_shapes(min_dims=0, max_dims=1, min_side=0, max_side=7)
real_coefficients = st.sampled_from(POLY_DTYPES).flatmap(lambda dtype: arrays(dtype, coefficient_shapes))
# complex ones of moderate size, away from zero (see the tolerance below)
complex_coefficients = st.sampled_from([np.complex64, np.complex128]).flatmap(lambda dtype: hnp.arrays(
    dtype, hnp.array_shapes(min_dims=0, max_dims=1, min_side=1, max_side=6),
    elements=hnp.from_dtype(np.dtype(dtype), min_magnitude=0.5, max_magnitude=10, allow_nan=False,
                            allow_infinity=False)))


@settings(max_examples=80)
@given(st.tuples(real_coefficients, real_coefficients) | st.tuples(complex_coefficients, complex_coefficients),
       st.booleans(), st.booleans())
def test_polydiv_matches_numpy(pair, small_lead, lazy_input):
    dividend, divisor = pair
    if small_lead and dividend.ndim and dividend.size > 1 and dividend.dtype.kind == "f":
        dividend = dividend.copy()
        dividend[0] = dividend.dtype.type(3e-9)  # a leading coefficient NumPy's remainder trim drops
    expected = numpy_outcome(np.polydiv, dividend, divisor)
    call = lambda: la.polydiv(lazy(dividend) if lazy_input else dividend, divisor)  # noqa: E731
    if dividend.dtype.kind != "c":
        check(call, expected)
        return
    # NumPy multiplies complex scalars (d = scale * r[k]) otherwise than its array loops, which
    # fuse multiply-adds on some CPUs, so it disagrees with itself; lazyarr's graph is all array
    # operations. Each step's rounding may differ (eps times the values' size), and the long
    # division carries it on, growing with the quotient: |v[0]| >= 0.5 bounds that growth. A
    # leading remainder coefficient that cancels to rounding may then fall on either side of
    # the 1e-8 trim: the longer remainder's extra leading coefficients are that rounding.
    got = [np.asarray(part) for part in call()]
    eps = np.finfo(expected[0].dtype).eps
    size = max(1.0, *(float(np.abs(part).max(initial=0)) for part in (*expected, dividend, divisor)))
    tolerance = 1e3 * eps * size ** 2
    extra = got[1].size - expected[1].size
    if extra > 0:
        np.testing.assert_allclose(got[1][:extra], 0, atol=tolerance)
        got[1] = got[1][extra:]
    elif extra < 0:
        np.testing.assert_allclose(expected[1][:-extra], 0, atol=tolerance)
        expected = (expected[0], expected[1][-extra:])
    for got_part, want in zip(got, expected):
        assert got_part.shape == want.shape and got_part.dtype == want.dtype
        np.testing.assert_allclose(got_part, want, rtol=0, atol=tolerance)


def test_polydiv_cases():
    cases = [
        ([3.0, 5.0, 2.0], [2.0, 1.0]),
        ([1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0]),  # a shorter dividend: quotient [0], remainder u
        ([1e-9, 2.0, 3.0], [1.0]),  # leading remainder coefficients within 1e-8 are dropped
        ([1.0, 0.0, 0.0, -1.0], [1.0, -1.0]),  # an exact division: remainder [0]
        (np.array([1e10, 3.0, 7.0, 1.0]), [3.0, 1e-3]),  # rounding leaves a remainder NumPy keeps
        ([1.0, 2.0], [0.0, 1.0]),  # a zero leading divisor: inf and NaN as NumPy's
        (np.float32([1, 2, 3, 4]), np.float16([3, 1])),
        ([1 + 2j, 3.0, 4.0], [1j, 1.0]),  # (exact here: the complex products are exact)
        (5.0, 2.0),
    ]
    for dividend, divisor in cases:
        quotient, remainder = la.polydiv(dividend, divisor)
        assert quotient.is_evaluated and remainder.is_evaluated  # evaluated for the remainder's length
        assert_lazy_matches((quotient, remainder), numpy_outcome(np.polydiv, dividend, divisor))
    result = la.polydiv(np.poly1d([1.0, 2.0, 3.0]), [1.0, 1.0])
    assert all(isinstance(part, np.poly1d) for part in result)
    assert result == np.polydiv(np.poly1d([1.0, 2.0, 3.0]), [1.0, 1.0])
    assert_lazy_matches(np.polydiv(lazy([1.0, 2.0, 3.0]), [1.0, 1.0]), np.polydiv([1.0, 2.0, 3.0], [1.0, 1.0]))
    with pytest.raises(IndexError, match="polydiv: index 0 is out of bounds"):
        la.polydiv([], [1.0])
    with pytest.raises(TracedValueError, match=r"la.polydiv on a traced array inside la.jit.*remainder's length"):
        la.jit(lambda u: la.polydiv(u, [1.0, 1.0]))(np.array([1.0, 2.0, 3.0]))


# -- polyfit: full=True, cov= ------------------------------------------------------------------


def assert_fit_close(got, expected, lhs_condition, scale):
    """polyfit's parts within the fit's conditioning: coefficients, residuals (rank, singular
    values and rcond exactly the same kind), the covariance."""
    for got_part, expected_part in zip(got, expected):
        if isinstance(expected_part, (np.generic, float)):
            assert type(got_part) is type(expected_part) and got_part == expected_part
            continue
        got_part = np.asarray(got_part)
        assert got_part.shape == expected_part.shape and got_part.dtype == expected_part.dtype
        # a backward-stable solve of another SVD: errors of order eps * condition (squared for
        # the normal equations' inverse in cov) times the data's scale; 1000 covers the constants
        tolerance = 1e3 * EPS * lhs_condition ** 2 * scale * max(1.0, float(np.abs(expected_part).max(initial=0)))
        np.testing.assert_allclose(got_part, expected_part, rtol=0, atol=tolerance)


@settings(max_examples=30)
@given(st.integers(2, 9), st.integers(0, 3), st.integers(0, 2), st.booleans(), st.sampled_from(
    [{"full": True}, {"cov": True}, {"cov": "unscaled"}]), st.data())
def test_polyfit_full_and_cov_match_numpy(count, degree, columns, weighted, mode, data):
    # distinct integer abscissae keep the fit well conditioned, except where deliberately repeated
    x = np.array(data.draw(st.lists(st.integers(-6, 6), min_size=count, max_size=count, unique=count <= 13)), float)
    if data.draw(st.booleans()):
        x[: count // 2] = x[0]  # fewer distinct points than coefficients: a rank-deficient fit
    shape = (count,) if columns == 0 else (count, columns)
    y = data.draw(arrays(np.float64, st.just(shape), allow_edge=False, min_value=-100, max_value=100))
    w = data.draw(arrays(np.float64, st.just((count,)), allow_edge=False, min_value=0.5, max_value=2)) if weighted \
        else None
    expected = numpy_outcome(np.polyfit, x, y, degree, w=w, **mode)
    if isinstance(expected, Exception):
        # (a singular matrix in cov='unscaled', which stays lazy, raises LinAlgError when evaluated)
        with pytest.raises(type(expected)), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            la.eval(*la.polyfit(lazy(x), lazy(y), degree, w=w, **mode)[:2])
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # RankWarning, as NumPy's
        got = la.polyfit(lazy(x), lazy(y), degree, w=w, **mode)
    lhs = np.vander(x, degree + 1) * (1.0 if w is None else w[:, None])
    lhs /= np.sqrt((lhs * lhs).sum(axis=0))
    singular = np.linalg.svd(lhs, compute_uv=False)
    retained = singular[singular > count * EPS * singular[0]]
    scale = max(1.0, float(np.abs(y).max(initial=0))) ** 2
    if mode.get("full") and expected[2] != degree + 1:
        assert got[2] == expected[2] and got[1].shape == (0,)  # rank deficient: no residuals
    assert_fit_close(got, expected, retained[0] / retained[-1], scale)


def test_polyfit_full_and_cov_laziness_warnings_and_errors():
    x, y = np.array([0.0, 1.0, 2.0, 3.0, 4.0]), np.array([1.0, 2.5, 2.0, 4.5, 5.0])
    lazy_x = lazy(x)
    coefficients, covariance = la.polyfit(lazy_x, y, 1, cov="unscaled")
    assert not covariance.is_evaluated and not lazy_x.is_evaluated  # no rank needed
    full = la.polyfit(lazy_x, y, 1, full=True)
    assert type(full[2]) is np.int32 and full[2] == 2 and full[1].shape == (1,)
    assert type(full[4]) is type(np.polyfit(x, y, 1, full=True)[4])
    jitted = la.jit(lambda a, b: la.polyfit(a, b, 1, cov="unscaled")[1])
    np.testing.assert_allclose(np.asarray(jitted(x, y)), np.polyfit(x, y, 1, cov="unscaled")[1], rtol=1e-12)
    with pytest.raises(TracedValueError, match=r"la.polyfit on a traced array inside la.jit.*use cov='unscaled'"):
        la.jit(lambda a, b: la.polyfit(a, b, 1, full=True)[0])(x, y)
    repeated = np.array([1.0, 1.0, 1.0, 2.0])
    with pytest.warns(np.exceptions.RankWarning, match="Polyfit may be poorly conditioned"):
        la.polyfit(repeated, np.ones((4, 2)), 2, cov=True)  # the rank is evaluated for cov: NumPy's warning
    with pytest.raises(ValueError, match="the number of data points must exceed order"):
        la.polyfit(x[:2], y[:2], 1, cov=True)


# -- compiled code, documentation ----------------------------------------------------------------


def test_compiled_values_match_numpy():
    rng = np.random.default_rng(5)
    samples = rng.standard_normal((40, 3))
    samples[3, 1] = np.nan
    weights = rng.standard_normal(40)
    la.set_backend("cpu")
    try:
        lazy_samples = la.asarray(samples)
        arguments = dict(bins=(3, [-2.0, 0.0, 0.5, 2.0], 4), range=[(-2, 2), None, (-3, 3)])
        assert_lazy_matches(la.histogramdd(lazy_samples, **arguments, weights=weights),
                    np.histogramdd(samples, **arguments, weights=weights))
        assert_lazy_matches(la.histogramdd(lazy_samples[:, [0, 2]], bins=4), np.histogramdd(samples[:, [0, 2]], bins=4))
        for dividend, divisor in [(samples[:7, 0], samples[:3, 2]), (np.float32([1e10, 3, 7, 1]), [3.0, 1e-3])]:
            assert_lazy_matches(la.polydiv(la.asarray(dividend), divisor), np.polydiv(dividend, divisor))
    finally:
        la.set_backend("interpreter")
