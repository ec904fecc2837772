"""The ufunc methods (`la.add.reduce`, `.accumulate`, `.reduceat`, `.outer`, `.at`) and
attributes against NumPy's, as tables run with hypothesis.

Each record is a family of ufuncs that share one implementation path (frontend/ufunc.py): a
mapped reduction (sum/prod, max/min, all/any, a count's parity), a running count, or NumPy's
own method on the host. Inputs are random shapes (0-d, empty and size-1 dims), every dtype,
edge values (NaN, +-inf, -0.0, integer extremes, so integer overflow must wrap as NumPy's),
random axes (int, negative, tuple, None, omitted), keepdims, dtype=, initial= and where=.
Where NumPy raises, lazyarr raises the same exception type; otherwise shape, then dtype, then
values must match: exactly, except the float sums and products noted in `_assert_matches`.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from lazyarr.frontend import elementwise
from tests.frontend.test_elementwise import RECORD_BY_NAME, assert_same
from tests.strategies import ALL_DTYPES, arrays

NAMES = list(elementwise.UFUNCS)
BINARY = [name for name in NAMES if elementwise.UFUNCS[name][0].nin == 2]
SMALL_SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
INITIALS = [0, 1, -1, 3, 2.5]


def numpy_ufunc(name: str) -> np.ufunc:
    return elementwise.UFUNCS[name][0]


_ERRORS = (IndexError, OverflowError, TypeError, ValueError)


def call_numpy(function, *arguments, **keywords):
    """NumPy's result as an array, or the built-in type of the exception it raises (NumPy's
    own subclasses, such as UFuncTypeError, count as their base; warnings silenced)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return np.asarray(function(*arguments, **keywords)), None
        except _ERRORS as error:
            return None, next(kind for kind in _ERRORS if isinstance(error, kind))


def evaluate(build):
    """Build and evaluate (a data-dependent error, e.g. int ** -1 in a fold, comes at evaluation)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        result = build()
        return result, np.asarray(result)


# --- values ------------------------------------------------------------------------------------


def _special_floats(dtype, specials):
    return st.sampled_from(specials).map(lambda value: np.array(value).astype(dtype)[()])


def draw_value(data, name: str, dtype, shapes=SMALL_SHAPES):
    """Edge values everywhere, except for float sums and products (see `_assert_matches`)."""
    dtype = np.dtype(dtype)
    shape = data.draw(shapes, label="shape")
    if dtype.kind in "fc" and name in ("add", "multiply"):
        if name == "add":  # finite summands plus specials whose sums do not depend on order
            ordinary = hnp.from_dtype(dtype, allow_nan=False, allow_infinity=False, allow_subnormal=False,
                                      **({"min_value": -100, "max_value": 100} if dtype.kind == "f"
                                         else {"max_magnitude": 100}))
            specials = [np.nan, np.inf, -np.inf, -0.0] if dtype.kind == "f" else [complex(np.nan, 0), -0.0]
        else:  # powers of two: every order gives the same exact product (shapes keep 2**±8)
            ordinary = st.sampled_from([0.5, 1.0, 2.0, -0.5, -1.0, -2.0]).map(lambda v: np.array(v).astype(dtype)[()])
            specials = [0.0, -0.0, np.nan, np.inf] if dtype.kind == "f" else [0.0]
            shape = shape[:3] if np.prod(shape) <= 8 else (2, 2, 2)
        elements = st.one_of(ordinary, _special_floats(dtype, specials))
        return data.draw(hnp.arrays(dtype, shape, elements=elements), label="value")
    return data.draw(arrays(dtype, st.just(shape)), label="value")


def _dtype_argument(data, dtype):
    """None (most often), or a dtype the input casts to safely (NumPy then loops in it)."""
    candidates = [None, None, None] + [
        np.dtype(name) for name in ("bool", "int64", "float64", "complex128") if np.can_cast(dtype, name)
    ]
    return data.draw(st.sampled_from(candidates), label="dtype=")


def _axis_argument(data, ndim: int):
    """Omitted (NumPy's default, 0), None, an int (maybe negative) or a tuple of distinct axes."""
    choices = [st.just("omitted"), st.none()]
    if ndim:
        choices.append(st.integers(-ndim, ndim - 1))
        choices.append(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim).map(tuple))
    else:
        choices.append(st.just(()))
    return data.draw(st.one_of(choices), label="axis")


def _assert_matches(name, value, result, expected):
    """Shape, dtype, then values. Exact (NaN == NaN; zero signs not compared: NumPy's own
    max/min loops keep either zero by code path), except compiled float sums and products:
    they reassociate (vector accumulators), so each rounding is at most eps times a partial
    sum: within 4 * n * eps of the summands' total magnitude."""
    assert isinstance(result, la.Array), type(result)
    actual = np.asarray(result)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    if name in ("add", "multiply") and expected.dtype.kind in "fc":
        epsilon = 4 * float(np.finfo(expected.dtype).eps) * max(value.size, 1)
        with np.errstate(all="ignore"):
            widened = np.abs(value.astype(np.complex128))
            magnitude = float(np.sum(widened[np.isfinite(widened)])) + 1.0
        np.testing.assert_allclose(actual, expected, rtol=epsilon, atol=epsilon * magnitude, equal_nan=True)
    else:
        np.testing.assert_array_equal(actual, expected)


# --- reduce ------------------------------------------------------------------------------------

# family -> its ufuncs (each family is one path in frontend/ufunc.py)
REDUCE_FAMILIES = {
    "sum-prod": ["add", "multiply"],
    "max-min": ["maximum", "minimum"],
    "nan-ignoring": ["fmax", "fmin"],
    "logical": ["logical_and", "logical_or", "logical_xor"],
    "numpy-fold": [
        "bitwise_and", "bitwise_or", "bitwise_xor",
        "subtract", "divide", "floor_divide", "remainder", "power", "float_power", "arctan2", "hypot",
        "copysign", "nextafter", "logaddexp", "left_shift", "right_shift", "equal", "not_equal", "less",
        "greater_equal",
    ],
}


def _reduce_arguments(data, name, value):
    arguments = {}
    axis = _axis_argument(data, value.ndim)
    if axis != "omitted":
        arguments["axis"] = axis
    if data.draw(st.booleans(), label="keepdims"):
        arguments["keepdims"] = True
    dtype = _dtype_argument(data, value.dtype)
    if dtype is not None:
        arguments["dtype"] = dtype
    if data.draw(st.booleans(), label="use initial"):
        arguments["initial"] = data.draw(st.sampled_from(INITIALS + [None]), label="initial")
    if data.draw(st.integers(0, 3), label="use where") == 0:
        arguments["where"] = data.draw(hnp.arrays(np.bool_, value.shape[value.ndim // 2:]), label="where")
    return arguments


@pytest.mark.parametrize("family", REDUCE_FAMILIES, ids=str)
@given(data=st.data())
def test_reduce_matches_numpy(family, data):
    name = data.draw(st.sampled_from(REDUCE_FAMILIES[family]), label="ufunc")
    dtype = data.draw(st.sampled_from(ALL_DTYPES), label="dtype")
    value = draw_value(data, name, dtype)
    arguments = _reduce_arguments(data, name, value)
    if family == "sum-prod" and "where" in arguments:
        arguments.pop("initial", None)  # NumPy sums masked floats in its own order: keep it short
    _check_method(name, "reduce", value, arguments)


def _check_method(name: str, method_name: str, value, arguments) -> None:
    """`la.<name>.<method_name>(value, **arguments)` gives NumPy's result, or raises NumPy's error."""
    expected, error = call_numpy(getattr(numpy_ufunc(name), method_name), value, **arguments)
    method = getattr(getattr(la, name), method_name)
    event("NumPy raises" if error is not None else "values compared")
    if error is not None:
        with pytest.raises(error):
            evaluate(lambda: method(la.asarray(value), **arguments))
        return
    result, _ = evaluate(lambda: method(la.asarray(value), **arguments))
    _assert_matches(name, value, result, expected)


# --- accumulate --------------------------------------------------------------------------------

ACCUMULATE_FAMILIES = {
    "cumsum-cumprod": ["add", "multiply"],
    "logical-scans": ["logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
                      "maximum", "minimum"],
    "numpy-fold": ["maximum", "minimum", "fmax", "fmin", "bitwise_xor", "subtract", "divide", "power", "arctan2",
                   "hypot", "logaddexp", "right_shift", "less"],
}
# the running count serves bool results: mostly bool input (others: logical ops' truth values)
SCAN_DTYPES = {"logical-scans": [np.dtype(name) for name in ["bool"] * 4 + ["int8", "float32", "complex64"]]}


@pytest.mark.parametrize("family", ACCUMULATE_FAMILIES, ids=str)
@given(data=st.data())
def test_accumulate_matches_numpy(family, data):
    name = data.draw(st.sampled_from(ACCUMULATE_FAMILIES[family]), label="ufunc")
    dtype = data.draw(st.sampled_from(SCAN_DTYPES.get(family, ALL_DTYPES)), label="dtype")
    value = draw_value(data, name, dtype, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4))
    arguments = {}
    if data.draw(st.booleans(), label="give axis"):
        arguments["axis"] = data.draw(
            st.one_of(st.integers(-value.ndim, value.ndim - 1), st.none(), st.just((value.ndim - 1,))), label="axis"
        )
    dtype_argument = _dtype_argument(data, value.dtype)
    if dtype_argument is not None:
        arguments["dtype"] = dtype_argument
    _check_method(name, "accumulate", value, arguments)


# --- outer and reduceat ------------------------------------------------------------------------


@given(data=st.data())
def test_outer_matches_numpy(data):
    name = data.draw(st.sampled_from(BINARY), label="ufunc")
    small = hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3)
    left = data.draw(arrays(data.draw(st.sampled_from(ALL_DTYPES)), small), label="a")
    right = data.draw(arrays(data.draw(st.sampled_from(ALL_DTYPES)), small), label="b")
    expected, error = call_numpy(numpy_ufunc(name).outer, left, right)
    if error is ValueError and numpy_ufunc(name) is np.power:
        return  # integer ** negative integer *array*: README's Differences (lazy graphs cannot raise on data)
    method = getattr(la, name).outer
    event("NumPy raises" if error is not None else "values compared")
    if error is not None:
        with pytest.raises(error):
            evaluate(lambda: method(la.asarray(left), la.asarray(right)))
        return
    result, _ = evaluate(lambda: method(la.asarray(left), right))  # a NumPy operand works too
    # outer is the elementwise function on reshaped operands: its record's tolerance applies
    # (exact, or within the ulps test_elementwise justifies for compiled transcendentals)
    assert_same(result, expected, RECORD_BY_NAME[name])


@settings(max_examples=max(settings.default.max_examples // 2, 1))  # ci: 20; one host path
@given(data=st.data())
def test_reduceat_matches_numpy(data):
    name = data.draw(st.sampled_from(["add", "multiply", "maximum", "subtract", "logical_or", "bitwise_xor"]))
    value = data.draw(arrays(data.draw(st.sampled_from(ALL_DTYPES)), hnp.array_shapes(min_dims=1, max_dims=2)))
    axis = data.draw(st.integers(-value.ndim, value.ndim - 1), label="axis")
    size = value.shape[axis]
    indices = data.draw(st.lists(st.integers(-1, size), max_size=5), label="indices")
    expected, error = call_numpy(numpy_ufunc(name).reduceat, value, indices, axis=axis)
    method = getattr(la, name).reduceat
    event("NumPy raises" if error is not None else "values compared")
    if error is not None:
        with pytest.raises(error):
            evaluate(lambda: method(la.asarray(value), indices, axis=axis))
        return
    result, _ = evaluate(lambda: method(la.asarray(value), indices, axis=axis))
    assert result.shape == expected.shape and result.dtype == expected.dtype
    np.testing.assert_array_equal(np.asarray(result), expected)  # exact: NumPy's own reduceat


# --- at ------------------------------------------------------------------------------------------


def _draw_index(data, shape):
    """An index into `shape`: integer arrays with repeats and negatives, a slice, or a tuple
    mixing them. A lone index may be out of range (a tuple's may not: lazyarr's indexing
    checks each index array's range even where the broadcast selection is empty, NumPy not)."""
    def axis_index(size, beyond):
        return st.one_of(
            st.lists(st.integers(-size - beyond, size - 1 + beyond), max_size=6).map(lambda v: np.array(v, np.int64)),
            st.builds(slice, st.integers(-size, size) | st.none(), st.integers(-size, size) | st.none()),
            st.integers(-size, size - 1),
        )
    if len(shape) == 1 or data.draw(st.booleans(), label="one index"):
        return data.draw(axis_index(shape[0], 1), label="index")
    return tuple(data.draw(axis_index(size, 0), label=f"index {axis}") for axis, size in enumerate(shape))


@given(data=st.data())
def test_at_matches_numpy(data):
    name = data.draw(st.sampled_from(NAMES), label="ufunc")
    ufunc = numpy_ufunc(name)
    a_value = data.draw(arrays(data.draw(st.sampled_from(ALL_DTYPES)),
                               hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=4)), label="a")
    index = _draw_index(data, a_value.shape)
    operands = ()
    if ufunc.nin == 2:
        b_dtype = data.draw(st.sampled_from(ALL_DTYPES), label="b dtype")
        operands = (data.draw(arrays(b_dtype, st.sampled_from([(), (1,)])), label="b"),)
    expected = a_value.copy()
    _, error = call_numpy(ufunc.at, expected, index, *operands)
    array = la.asarray(a_value)
    alias = array  # another reference to the same array object sees the update, as in NumPy
    event("NumPy raises" if error is not None else "values compared")
    if error is not None:
        with pytest.raises(error):
            evaluate(lambda: (getattr(la, name).at(array, index, *operands), array)[1])
        return
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        assert getattr(la, name).at(array, index, *operands) is None
        actual = np.asarray(alias)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    np.testing.assert_array_equal(actual, expected)  # exact: scatter-add or NumPy's own at


def test_at_repeated_indices_accumulate_and_write_through_views():
    base = la.asarray(np.zeros((3, 4)))
    row = base[1]
    la.add.at(row, [0, 0, 3, 0], 1.0)  # unbuffered: index 0 three times
    np.testing.assert_array_equal(np.asarray(base)[1], [3, 0, 0, 1])
    np.testing.assert_array_equal(np.asarray(row), [3, 0, 0, 1])
    values = la.asarray(np.array([2, 3, 5], np.int64))
    la.multiply.at(values, la.asarray(np.array([0, 0, 2])), 3)  # lazy indices
    np.testing.assert_array_equal(np.asarray(values), [18, 3, 15])
    counts = la.zeros(3, dtype=np.int64)
    la.add.at(counts, la.asarray(np.array([2, 2, 0])), 1)  # lazy indices, scatter-add
    np.testing.assert_array_equal(np.asarray(counts), [1, 0, 2])


def test_at_on_numpy_array_is_numpy_in_place():
    target = np.zeros(3)
    la.add.at(target, [0, 0, 2], la.asarray(np.array([1.0, 2.0, 3.0])))
    np.testing.assert_array_equal(target, [3.0, 0.0, 3.0])


# --- NumPy's own ufuncs on lazy arrays (__array_ufunc__) -----------------------------------------


def test_numpy_ufunc_methods_on_lazy_arrays_stay_lazy():
    value = np.arange(12, dtype=np.int8).reshape(3, 4) - 5
    array = la.asarray(value)
    cases = [
        (lambda xp, x: xp.add.reduce(x), {}),
        (lambda xp, x: xp.subtract.reduce(x, axis=1, keepdims=True), {}),
        (lambda xp, x: xp.bitwise_or.reduce(x, axis=None), {}),
        (lambda xp, x: xp.maximum.accumulate(x, axis=1), {}),
        (lambda xp, x: xp.add.reduceat(x, [0, 2], axis=1), {}),
        (lambda xp, x: xp.multiply.outer(x[0], x[:, 0]), {}),
        (lambda xp, x: xp.logical_and.reduce(x, axis=0, where=np.array([True, False, True, True])), {}),
    ]
    for case, _ in cases:
        result = case(np, array)
        assert isinstance(result, la.Array)
        expected = case(np, value)
        assert result.dtype == expected.dtype
        np.testing.assert_array_equal(np.asarray(result), expected)
    np.add.at(array, (0, [1, 1]), 10)  # in place on the lazy array
    np.testing.assert_array_equal(np.asarray(array)[0], [-5, 16, -3, -2])


def test_numpy_ufuncs_lazyarr_composes_stay_lazy_on_lazy_arrays():
    # deg2rad, heaviside, divmod, modf ... are compositions in lazyarr (not ops of elementwise.UFUNCS):
    # NumPy's ufunc called on a lazy array dispatches to them (it used to evaluate and run NumPy).
    value = np.array([-1.5, -0.0, 0.0, 2.5, np.inf, np.nan])
    array = la.asarray(value)
    for ufunc in (np.deg2rad, np.rad2deg, np.radians, np.degrees, np.heaviside, np.divmod, np.modf,
                  np.logaddexp2):
        arguments = (0.5,) if ufunc.nin == 2 else ()
        with np.errstate(all="ignore"):
            expected = ufunc(value, *arguments)
            result = ufunc(array, *arguments)
        results = result if isinstance(result, tuple) else (result,)
        expectations = expected if isinstance(expected, tuple) else (expected,)
        assert all(isinstance(lazy, la.Array) and not lazy.is_evaluated for lazy in results), ufunc.__name__
        for lazy, numpy_value in zip(results, expectations, strict=True):
            assert lazy.dtype == numpy_value.dtype
            np.testing.assert_array_equal(np.asarray(lazy), numpy_value)


def test_another_librarys_ufunc_of_a_lazyarr_name_is_not_lazyarrs():
    # scipy.special.round is a ufunc named like la.round with other semantics (float64 out of
    # int64, ties away from zero): NumPy's protocol must not send it to la.round.
    special = pytest.importorskip("scipy.special")
    for function in (special.round, special.log1p, special.expm1, special.exp2, special.cbrt):
        for values in (np.array([1, 2, 3], np.int8), np.array([-0.4, 2.5]), np.array([1.5], np.float16)):
            result = function(la.asarray(values))
            expected = function(values)
            assert np.asarray(result).dtype == expected.dtype, function.__name__
            np.testing.assert_array_equal(np.asarray(result), expected)
            np.testing.assert_array_equal(np.signbit(np.asarray(result)), np.signbit(expected))


# --- attributes and errors ----------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_attributes_match_numpy(name):
    function, ufunc = getattr(la, name), numpy_ufunc(name)
    assert (function.nin, function.nout, function.nargs) == (ufunc.nin, ufunc.nout, ufunc.nargs)
    assert function.identity == ufunc.identity or (function.identity is None and ufunc.identity is None)
    assert function.signature is None and function.__name__ == name
    assert set(function.types) <= set(ufunc.types) and function.ntypes == len(function.types) > 0
    assert pickle.loads(pickle.dumps(function)) is function


def test_errors_match_numpy():
    array = la.asarray(np.ones((2, 3)))
    with pytest.raises(ValueError, match="reduce only supported for binary functions"):
        la.sin.reduce(array)
    with pytest.raises(ValueError, match="accumulate only supported for binary functions"):
        la.exp.accumulate(array)
    with pytest.raises(ValueError, match="outer product only supported for binary functions"):
        la.negative.outer(array, array)
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum which has no identity"):
        la.maximum.reduce(la.asarray(np.ones((0, 3))))
    with pytest.raises(ValueError, match="'subtract' does not have an identity, so to use a where mask"):
        la.subtract.reduce(array, where=np.array([True, False, True]))
    with pytest.raises(ValueError, match="'subtract' is not reorderable"):
        la.subtract.reduce(array, axis=None)
    with pytest.raises(ValueError, match="zero-size array to reduction operation add"):
        la.add.reduce(la.asarray(np.ones(0)), initial=None)  # None: no identity
    with pytest.raises(TypeError, match="cannot accumulate on a scalar"):
        la.add.accumulate(la.asarray(np.float64(1.0)))
    with pytest.raises(ValueError, match="accumulate does not allow multiple axes"):
        la.add.accumulate(array, axis=None)
    with pytest.raises(TypeError):
        la.bitwise_and.reduce(array)  # no float loop, as NumPy
    with pytest.raises(OverflowError):
        la.maximum.reduce(la.asarray(np.ones(3, np.uint8)), initial=-1)
    with pytest.raises(ValueError, match="second operand needed"):
        la.add.at(array, 0)
    with pytest.raises(ValueError, match="second operand provided"):
        la.sqrt.at(array, 0, 1.0)


def test_mapped_reductions_are_fused_lazy_and_differentiable():
    value = np.linspace(-1, 1, 12).reshape(3, 4)[:, ::-1].copy()  # row maxima at column 0
    total = la.add.reduce(la.asarray(value), axis=None)
    text = la.hlo_text(total)
    assert text.count("reduce(") == 1 and "custom-call" not in text
    assert "custom-call" not in la.hlo_text(la.fmax.reduce(la.asarray(value), axis=1))
    ones = la.grad(lambda x: la.add.reduce(x, axis=None))(value)
    np.testing.assert_array_equal(np.asarray(ones), np.ones((3, 4)))
    at_maxima = la.grad(lambda x: la.add.reduce(la.fmax.reduce(x, axis=1)))(value)
    np.testing.assert_array_equal(np.asarray(at_maxima), np.tile([1.0, 0.0, 0.0, 0.0], (3, 1)))
    jitted = la.jit(lambda x: la.maximum.accumulate(x, axis=1) + la.subtract.reduce(x, axis=1)[:, None])
    expected = np.maximum.accumulate(value, axis=1) + np.subtract.reduce(value, axis=1)[:, None]
    np.testing.assert_array_equal(np.asarray(jitted(value)), expected)
