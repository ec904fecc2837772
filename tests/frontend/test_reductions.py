"""Reductions against NumPy: one table record per function, run with hypothesis.

Each record draws an array of one of its dtypes (shapes with 0-d, empty and size-1 dims, edge
values: NaN, +-inf, -0.0, integer extremes) and the function's arguments (axis None, int,
negative, tuple; keepdims; dtype; ddof). Where NumPy raises, lazyarr must raise the same
exception type when the graph is built; otherwise the result must have NumPy's shape, then
dtype, then exactly its values: the interpreter's reduce calls np.sum/np.max itself and the
composed functions (mean, var, std, nan*) follow NumPy's own steps, so no tolerance is needed.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from lazyarr.frontend import reductions
from tests.strategies import (
    ALL_DTYPES,
    FLOAT_DTYPES,
    INEXACT_DTYPES,
    NUMERIC_DTYPES,
    REAL_DTYPES,
    arrays,
    shapes,
)

NON_BOOL = [dtype for dtype in ALL_DTYPES if dtype != np.bool_]
SMALL_INTEGERS = [np.dtype(name) for name in ("bool", "int8", "uint8", "int32", "uint64")]


def axis_argument(data, ndim: int, *, tuples: bool = True):
    """None, an int (possibly negative), or (if `tuples`) a tuple of distinct axes."""
    choices = [st.none()]
    if ndim:
        choices.append(st.integers(-ndim, ndim - 1))
        if tuples:
            choices.append(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim).map(tuple))
    elif tuples:
        choices.append(st.just(()))
    return data.draw(st.one_of(choices), label="axis")


def reduction_arguments(data, value, *, dtypes=(None,), tuples=True, keepdims=True):
    arguments = {"axis": axis_argument(data, value.ndim, tuples=tuples)}
    if keepdims:
        arguments["keepdims"] = data.draw(st.booleans(), label="keepdims")
    dtype = data.draw(st.sampled_from(dtypes), label="dtype")
    if dtype is not None:
        arguments["dtype"] = dtype
    return arguments


def sum_arguments(data, value):
    arguments = reduction_arguments(data, value, dtypes=(None, None, np.int64, np.float64, np.complex128))
    if data.draw(st.booleans(), label="use initial"):
        arguments["initial"] = 1
    return arguments


def extreme_arguments(data, value):
    arguments = reduction_arguments(data, value)
    if value.dtype.kind != "c" and data.draw(st.booleans(), label="use initial"):
        arguments["initial"] = 0
    return arguments


def argmax_arguments(data, value):
    return reduction_arguments(data, value, tuples=False)


def scan_arguments(data, value):
    return reduction_arguments(
        data, value, dtypes=(None, None, np.int64, np.float64), tuples=False, keepdims=False
    )


def cumulative_arguments(data, value):
    arguments = scan_arguments(data, value)
    if value.ndim == 1 and data.draw(st.booleans(), label="axis none"):
        arguments["axis"] = None
    arguments["include_initial"] = data.draw(st.booleans(), label="include_initial")
    return arguments


def mean_arguments(data, value):
    return reduction_arguments(data, value, dtypes=(None, None, np.float32, np.float64))


def variance_arguments(data, value):
    arguments = reduction_arguments(data, value, dtypes=(None, None, np.float64))
    spelling = data.draw(st.sampled_from(["ddof", "correction", None]), label="ddof spelling")
    if spelling is not None:
        arguments[spelling] = data.draw(st.sampled_from([0, 1, 2, 0.5]), label="ddof")
    return arguments


def count_arguments(data, value):
    return reduction_arguments(data, value)


def plain_arguments(data, value):
    return reduction_arguments(data, value)


@dataclass(frozen=True)
class ReductionRecord:
    """One function: its NumPy counterpart, dtypes, argument strategy and tolerance (None: exact)."""

    name: str
    numpy_function: Callable
    dtypes: list
    arguments: Callable
    tolerance: float | None = None
    zero_signs: bool = True  # whether -0.0 and 0.0 must come out as NumPy's

    @property
    def lazy_function(self):
        return getattr(reductions, self.name)


RECORDS = [
    ReductionRecord("sum", np.sum, ALL_DTYPES, sum_arguments),
    ReductionRecord("prod", np.prod, ALL_DTYPES, sum_arguments),
    ReductionRecord("max", np.max, ALL_DTYPES, extreme_arguments),
    ReductionRecord("min", np.min, ALL_DTYPES, extreme_arguments),
    ReductionRecord("amax", np.amax, REAL_DTYPES, extreme_arguments),
    ReductionRecord("amin", np.amin, REAL_DTYPES, extreme_arguments),
    ReductionRecord("ptp", np.ptp, ALL_DTYPES, plain_arguments),
    ReductionRecord("argmax", np.argmax, ALL_DTYPES, argmax_arguments),
    ReductionRecord("argmin", np.argmin, ALL_DTYPES, argmax_arguments),
    ReductionRecord("any", np.any, ALL_DTYPES, plain_arguments),
    ReductionRecord("all", np.all, ALL_DTYPES, plain_arguments),
    ReductionRecord("count_nonzero", np.count_nonzero, ALL_DTYPES, count_arguments),
    ReductionRecord("cumsum", np.cumsum, ALL_DTYPES, scan_arguments),
    ReductionRecord("cumprod", np.cumprod, ALL_DTYPES, scan_arguments),
    ReductionRecord("cumulative_sum", np.cumulative_sum, ALL_DTYPES, cumulative_arguments),
    ReductionRecord("cumulative_prod", np.cumulative_prod, ALL_DTYPES, cumulative_arguments),
    ReductionRecord("mean", np.mean, ALL_DTYPES, mean_arguments),
    ReductionRecord("var", np.var, ALL_DTYPES, variance_arguments),
    ReductionRecord("std", np.std, ALL_DTYPES, variance_arguments),
    ReductionRecord("nansum", np.nansum, ALL_DTYPES, sum_arguments),
    ReductionRecord("nanprod", np.nanprod, ALL_DTYPES, sum_arguments),
    ReductionRecord("nanmean", np.nanmean, ALL_DTYPES, mean_arguments),
    # NumPy's fmax reduction keeps the first of 0.0 and -0.0 where its max reduction keeps the
    # last; lazyarr's nanmax is a max reduction with NaN masked, so only the zero sign may differ.
    ReductionRecord("nanmax", np.nanmax, REAL_DTYPES, extreme_arguments, zero_signs=False),
    ReductionRecord("nanmin", np.nanmin, REAL_DTYPES, extreme_arguments, zero_signs=False),
]


def call_numpy(function, value, arguments):
    """NumPy's result, or the exception it raises (warnings about empty slices silenced)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return np.asarray(function(value, **arguments)), None
        except (ValueError, TypeError, OverflowError) as error:
            return None, error


def assert_zero_signs(actual, expected):
    """assert_array_equal treats -0.0 == 0.0; NumPy's sums turn -0.0 into 0.0, so check signs."""
    if actual.dtype.kind not in "fc":
        return
    for part in (np.real, np.imag):
        zeros = part(expected) == 0
        np.testing.assert_array_equal(np.signbit(part(actual)[zeros]), np.signbit(part(expected)[zeros]))


def assert_matches(result, expected, tolerance=None, zero_signs=True):
    """Shape, then dtype, then values (NaN equal to NaN, zeros compared by sign)."""
    assert isinstance(result, la.Array), type(result)
    assert result.shape == expected.shape, (result.shape, expected.shape)
    assert result.dtype == expected.dtype, (result.dtype, expected.dtype)
    actual = np.asarray(result)
    if tolerance is None:
        np.testing.assert_array_equal(actual, expected, strict=True)
        if zero_signs:
            assert_zero_signs(actual, expected)
    else:
        np.testing.assert_allclose(actual, expected, rtol=tolerance, atol=tolerance, equal_nan=True)


@pytest.mark.parametrize("record", RECORDS, ids=lambda record: record.name)
@given(data=st.data())
def test_matches_numpy(record, data):
    dtype = data.draw(st.sampled_from(record.dtypes), label="dtype")
    value = data.draw(arrays(dtype, shapes), label="value")
    arguments = record.arguments(data, value)
    expected, error = call_numpy(record.numpy_function, value, arguments)
    array = la.asarray(value)
    if error is not None:
        with pytest.raises(type(error)):
            record.lazy_function(array, **arguments)
        return
    result = record.lazy_function(array, **arguments)
    several_axes = arguments["axis"] is None or (
        isinstance(arguments["axis"], tuple) and len(arguments["axis"]) > 1
    )
    if "initial" in arguments and "prod" in record.name and expected.dtype.kind == "c" and several_axes:
        # Over several axes NumPy multiplies into `initial` with its SIMD (FMA) complex loop in
        # an order set by the layout; lazyarr flattens the axes first: 1 ulp apart, allow 4 eps.
        assert_matches(result, expected, 4 * float(np.finfo(expected.dtype).eps), zero_signs=False)
        return
    compiled_backend = la.get_backend_name() != "interpreter"
    if compiled_backend and expected.dtype.kind in "iu" and value.dtype.kind in "fc":
        # dtype= casts float results to ints: out of range or NaN is undefined in C; NumPy
        # gives INT_MIN on x86, compiled code saturates (NaN -> 0; README: Differences).
        actual, limits = np.asarray(result), np.iinfo(expected.dtype)
        with np.errstate(all="ignore"):
            defined = np.isfinite(value).all() and (np.abs(value) < limits.max).all()
        if defined:  # otherwise an element's cast is undefined and so is the whole reduction
            kept = (actual != limits.max) & (actual != limits.min)
            np.testing.assert_array_equal(actual[kept], expected[kept])
        return
    accumulates = any(part in record.name for part in ("sum", "prod", "mean", "var", "std", "average"))
    if compiled_backend and accumulates and expected.dtype.kind in "fc":
        # Compiled float reductions reassociate (vector accumulators, blocks of 256): each
        # rounding error is at most eps times a partial sum, so the result is within n * eps of
        # the summands' total magnitude (squared for var; std = sqrt(var) moves by at most the
        # square root of var's error). Products: n * eps relative.
        epsilon = float(np.finfo(expected.dtype).eps) * max(value.size, 1) * 4
        with np.errstate(all="ignore"):
            widened = np.abs(value.astype(np.complex128))
            total = float(np.sum(widened[np.isfinite(widened)]))
            magnitude = total * total / max(value.size, 1) if "var" in record.name or "std" in record.name \
                else total
            atol = min(epsilon * (magnitude + 1.0), float(np.finfo(np.float64).max))
            atol = np.sqrt(atol) if "std" in record.name else atol
        actual = np.asarray(result)
        assert result.shape == expected.shape and result.dtype == expected.dtype
        np.testing.assert_allclose(actual, expected, rtol=epsilon, atol=atol, equal_nan=True)
        return
    if "initial" in arguments and record.name in ("sum", "nansum") and expected.dtype.kind in "fc":
        # Documented difference: NumPy adds the elements into `initial` in an order that depends
        # on the memory layout; lazyarr adds `initial` to the pairwise sum (NumPy's order for
        # trailing axes). The rounding (and a zero's sign) may differ: by a few eps of the
        # summands' magnitude (cancellation can make that large relative to the result).
        epsilon = float(np.finfo(expected.dtype).eps)
        with np.errstate(all="ignore"):
            widened = np.abs(value.astype(np.complex128))
            magnitude = min(
                float(np.sum(widened[np.isfinite(widened)])) + 1.0, float(np.finfo(np.float64).max)
            )
        actual = np.asarray(result)
        assert result.shape == expected.shape and result.dtype == expected.dtype
        np.testing.assert_allclose(
            actual, expected, rtol=4 * epsilon, atol=4 * epsilon * magnitude, equal_nan=True
        )
        return
    # With `initial`, NumPy's max/min fold it in inside their (SIMD) reduction; lazyarr applies
    # maximum(initial, result). NumPy's own maximum/minimum pick between 0.0 and -0.0 by code
    # path, so only the sign of a zero result may differ there.
    # Compiled float32/float64 max/min reductions are IEEE maximum/minimum (+0.0 above -0.0,
    # tests/backends/test_cpu_regressions.py), other dtypes keep the last of equal values; NumPy's
    # loops keep the last or the first by dtype: the sign of a zero result may differ.
    compiled = la.get_backend_name() != "interpreter"
    zero_signs = record.zero_signs and not (
        ("initial" in arguments or compiled) and record.name in ("max", "min", "amax", "amin")
    )
    assert_matches(result, expected, record.tolerance, zero_signs)


@pytest.mark.parametrize("name", ["sum", "prod", "any", "all", "max", "min"])
@given(data=st.data())
def test_where_mask(name, data):
    """where= for exact (integer and bool) accumulations, with initial for max/min as NumPy needs."""
    dtype = data.draw(st.sampled_from(SMALL_INTEGERS))
    value = data.draw(arrays(dtype, shapes))
    mask = data.draw(arrays(np.bool_, st.just(value.shape[1:]) if value.ndim else st.just(())))
    arguments = {"axis": axis_argument(data, value.ndim), "where": mask}
    if name in ("max", "min"):
        arguments["initial"] = 1
    expected, error = call_numpy(getattr(np, name), value, arguments)
    assert error is None
    assert_matches(getattr(reductions, name)(la.asarray(value), **arguments), expected)


@given(value=arrays(np.float64, shapes))
def test_sum_where_on_floats_is_refused(value):
    with pytest.raises(NotImplementedError, match="where"):
        reductions.sum(la.asarray(value), where=np.ones(value.shape, bool))


# --- errors ---------------------------------------------------------------------------------


def test_max_of_empty_raises_numpy_message():
    with pytest.raises(
        ValueError, match="zero-size array to reduction operation maximum which has no identity"
    ):
        reductions.max(la.asarray(np.zeros((0, 3))), axis=0)
    with pytest.raises(ValueError, match="reduction operation minimum"):
        reductions.min(la.asarray(np.zeros(0, np.int8)))
    assert reductions.max(la.asarray(np.zeros((0, 3))), axis=1).shape == (0,)


def test_argmax_of_empty_raises():
    with pytest.raises(ValueError, match="attempt to get argmax of an empty sequence"):
        reductions.argmax(la.asarray(np.zeros(0)))


@pytest.mark.parametrize("axis", [2, -3, (0, 2), (5,)])
def test_bad_axis_raises_axis_error(axis):
    array = la.asarray(np.ones((2, 3)))
    for function in (reductions.sum, reductions.mean, reductions.max, reductions.any):
        with pytest.raises(np.exceptions.AxisError, match="out of bounds"):
            function(array, axis=axis)


def test_duplicate_axis_and_bad_axis_type():
    array = la.asarray(np.ones((2, 3)))
    with pytest.raises(ValueError, match="duplicate"):
        reductions.sum(array, axis=(0, -2))
    with pytest.raises(TypeError, match="axis"):
        reductions.sum(array, axis=1.5)
    with pytest.raises(TypeError):
        reductions.argmax(array, axis=(0,))


def test_out_is_refused():
    array = la.asarray(np.ones(3))
    for function in (reductions.sum, reductions.mean, reductions.max, reductions.argmax, reductions.cumsum):
        with pytest.raises(TypeError, match="out="):
            function(array, out=np.zeros(()))


def test_ddof_and_correction_together_raise():
    with pytest.raises(ValueError, match="ddof and correction"):
        reductions.var(la.asarray(np.ones(3)), ddof=1, correction=1)


def test_cumulative_sum_needs_axis_for_2d():
    with pytest.raises(ValueError, match="axis"):
        reductions.cumulative_sum(la.asarray(np.ones((2, 2))))


# --- laziness and special cases --------------------------------------------------------------


def test_reductions_are_lazy():
    array = la.asarray(np.arange(6.0).reshape(2, 3))
    results = [
        reductions.sum(array, axis=0),
        reductions.var(array, axis=1),
        reductions.argmax(array),
        reductions.cumsum(array),
        reductions.max(la.asarray(np.ones(3, complex))),
    ]
    assert not any(result.is_evaluated for result in results)


def test_mean_of_empty_is_nan():
    result = reductions.mean(la.asarray(np.zeros((0, 2))), axis=0)
    assert result.shape == (2,) and np.all(np.isnan(np.asarray(result)))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_float16_and_float_mean_precision(dtype):
    value = np.linspace(0, 1000, 999).astype(dtype)
    expected = np.asarray(np.mean(value))
    if la.get_backend_name() == "interpreter":
        assert_matches(reductions.mean(la.asarray(value)), expected)
    else:  # reassociated sum of 999 positive terms: within a few eps (float16 sums in float32)
        assert_matches(reductions.mean(la.asarray(value)), expected, 4 * float(np.finfo(dtype).eps))


@pytest.mark.parametrize("dtype", INEXACT_DTYPES)
def test_nan_argmax_picks_first_nan(dtype):
    value = np.array([1, np.nan, 3, np.nan], dtype)
    assert int(reductions.argmax(la.asarray(value))) == 1
    assert int(reductions.argmin(la.asarray(value))) == 1


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES)
def test_sum_of_empty_is_zero(dtype):
    assert_matches(
        reductions.sum(la.asarray(np.zeros((0,), dtype))), np.asarray(np.sum(np.zeros((0,), dtype)))
    )


def test_initial_on_a_float_sum_pins_the_order_difference():
    """Over a leading axis NumPy computes (initial + a0) + a1; lazyarr initial + (a0 + a1)."""
    value = np.full((2, 2), 2.0**-53)
    result = np.asarray(reductions.sum(la.asarray(value), axis=0, initial=1.0))
    expected = np.sum(value, axis=0, initial=1.0)
    assert np.all(expected == 1.0) and np.all(result == 1.0 + 2.0**-52)


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "amax"])
@given(data=st.data())
def test_a_repeated_plain_reduction_follows_its_remembered_plan_to_numpys_answer(name, data):
    # sum, prod, max and min remember what a plain call (axis and keepdims only) decides from
    # its input's signature; the second call of a signature takes that plan. Both calls give
    # NumPy's dtype, shape and values (integers and small floats: exact in any order), and an
    # empty max/min raises both times.
    dtype = data.draw(st.sampled_from(SMALL_INTEGERS + [np.dtype("float32"), np.dtype("complex64")]), label="dtype")
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3), label="shape")
    value = data.draw(hnp.arrays(np.int64, shape, elements=st.integers(-3, 3)), label="value").astype(dtype)
    arguments = {"axis": axis_argument(data, value.ndim), "keepdims": data.draw(st.booleans(), label="keepdims")}
    try:
        expected = getattr(np, name)(value, **arguments)
    except ValueError:
        for _ in range(2):
            with pytest.raises(ValueError, match="zero-size array"):
                getattr(la, name)(la.asarray(value), **arguments)
        return
    for _ in range(2):
        result = np.asarray(getattr(la, name)(la.asarray(value), **arguments))
        assert result.dtype == expected.dtype and result.shape == np.shape(expected)
        np.testing.assert_array_equal(result, expected)


def test_a_remembered_plan_never_answers_an_axis_numpy_refuses():
    # axis=0.0 equals axis=0 as a dictionary key: after a plan for axis=0 it must still raise.
    x = la.asarray(np.ones((2, 3), np.float32))
    for name in ("sum", "max"):
        assert getattr(la, name)(x, axis=0).shape == getattr(la, name)(x, axis=0).shape == (3,)
        for axis in (0.0, (0.0,)):
            with pytest.raises(TypeError, match="axis must be an integer"):
                getattr(la, name)(x, axis=axis)
