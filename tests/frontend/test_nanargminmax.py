"""la.nanargmax and la.nanargmin against NumPy 2's, as hypothesis tables, plus the pinned edges.

`test_matches_numpy` draws an array of any dtype (0-d, empty and size-1 dims; NaN, +-inf, -0.0
and integer extremes among the values) and the arguments (axis None, an int, negative or out of
range, now and then a tuple; keepdims absent, True or False). `test_nan_placement_matches_numpy`
draws float and complex arrays with NaN placed so that some slices are partly and some wholly
NaN. Where NumPy raises, lazyarr must raise the same exception type (and, for an all-NaN slice,
NumPy's message); otherwise shape, then dtype, then exactly the values: indices have no
tolerance. About half the calls go through `np.nanargmax(lazy)` (`__array_function__`), the
others call `la.` itself.

The tables run on the interpreter (every example is a new graph); `test_cpu_backend` runs a
few fixed cases on the CPU backend. The all-NaN check needs the values, so on float and
complex input these functions evaluate when called, and inside la.jit they refuse a traced
value (README, Differences from NumPy); both are pinned here.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

import lazyarr as la
from lazyarr.frontend.tracing import TracedValueError
from tests.strategies import ALL_DTYPES, INEXACT_DTYPES, arrays, nonempty_shapes, shapes

NAMES = ["nanargmax", "nanargmin"]


def numpy_result(name, value, arguments):
    """NumPy's result as an array, or the exception it raises."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return np.asarray(getattr(np, name)(value, **arguments)), None
        except (ValueError, TypeError) as error:
            return None, error


def assert_same(result, expected):
    """Shape, then dtype, then the exact values."""
    assert isinstance(result, la.Array), type(result)
    assert result.shape == expected.shape, (result.shape, expected.shape)
    assert result.dtype == expected.dtype, (result.dtype, expected.dtype)
    np.testing.assert_array_equal(np.asarray(result), expected, strict=True)


def place_nans(data, value):
    """`value` (float or complex, nonempty) with NaN placed as drawn: at one place, at random
    places, on one index of one axis (a plane: all-NaN slices along the other axes only), or
    everywhere."""
    placement = data.draw(st.sampled_from(["random", "one", "plane", "random", "everywhere"]), label="NaN")
    value = value.copy()
    if placement == "one" or (placement == "plane" and not value.ndim):
        value.flat[data.draw(st.integers(0, value.size - 1), label="NaN position")] = np.nan
    elif placement == "random":  # each element NaN one time in three, drawn one by one (no fill)
        flags = st.lists(st.sampled_from([False, False, True]), min_size=value.size, max_size=value.size)
        value[np.array(data.draw(flags, label="NaN mask"), dtype=bool).reshape(value.shape)] = np.nan
    elif placement == "plane":
        axis = data.draw(st.integers(0, value.ndim - 1), label="NaN plane axis")
        index = data.draw(st.integers(0, value.shape[axis] - 1), label="NaN plane index")
        value[(slice(None),) * axis + (index,)] = np.nan
    else:
        value[...] = np.nan
    return value


def draw_arguments(data, ndim: int, *, invalid: bool = True) -> dict:
    """axis None or an int in range; with `invalid`, also out of range or a 1-tuple (NumPy refuses)."""
    kinds = ["int", "none", "int", "outside", "int", "tuple"] if invalid else ["int", "none"]
    kind = data.draw(st.sampled_from(kinds), label="axis kind")
    if kind == "int":
        axis = data.draw(st.integers(-max(ndim, 1), max(ndim, 1) - 1), label="axis")  # 0-d: 0 or -1
    elif kind == "outside":
        axis = data.draw(st.sampled_from([max(ndim, 1), -max(ndim, 1) - 1]), label="axis")
    elif kind == "tuple" and ndim:
        axis = (data.draw(st.integers(0, ndim - 1), label="axis"),)
    else:
        axis = None
    arguments = {"axis": axis}
    keepdims = data.draw(st.sampled_from([None, True, False]), label="keepdims")
    if keepdims is not None:
        arguments["keepdims"] = keepdims
    return arguments


def check_against_numpy(data, name, value, arguments):
    """Call la.<name> or np.<name> on the lazy array (drawn) and compare with NumPy's call."""
    function = getattr(np if data.draw(st.booleans(), label="np. dispatch") else la, name)
    expected, error = numpy_result(name, value, arguments)
    array = la.asarray(value)
    if error is not None:
        message = "All-NaN slice encountered" if "All-NaN" in str(error) else None
        event(f"NumPy raises {type(error).__name__}{' (all-NaN slice)' if message else ''}")
        with pytest.raises(type(error), match=message):
            function(array, **arguments)
        return
    event(f"a result; {'NaN' if value.dtype.kind in 'fc' and np.isnan(value).any() else 'no NaN'} in the input")
    assert_same(function(array, **arguments), expected)


@pytest.mark.usefixtures("interpreter_backend_for_module")
@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
def test_matches_numpy(name, data):
    """Every dtype and shape (empty and 0-d too), valid and invalid axes; NaN as drawn among
    the edge values."""
    dtype = data.draw(st.sampled_from(ALL_DTYPES), label="dtype")
    value = data.draw(arrays(dtype, shapes), label="value")
    check_against_numpy(data, name, value, draw_arguments(data, value.ndim))


@pytest.mark.usefixtures("interpreter_backend_for_module")
@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
def test_nan_placement_matches_numpy(name, data):
    """Float and complex input with NaN placed so that some slices are partly and some wholly NaN."""
    dtype = data.draw(st.sampled_from(INEXACT_DTYPES), label="dtype")
    value = place_nans(data, data.draw(arrays(dtype, nonempty_shapes), label="value"))
    check_against_numpy(data, name, value, draw_arguments(data, value.ndim, invalid=False))


# --- fixed edges, on the interpreter --------------------------------------------------------

EDGE_CASES = [
    # (values, axis, note)
    ([-0.0, 0.0, -0.0], None, "equal zeros: the first wins either way"),
    ([math.nan, math.inf, math.inf, -math.inf], None, "inf beside NaN, first occurrence"),
    ([math.nan, -math.inf], None, "NaN replaced by -inf ties with -inf: NumPy gives the NaN's index"),
    ([math.inf, math.nan], None, "NaN replaced by +inf ties with inf for nanargmin"),
    ([[math.nan, 1.0, math.nan], [2.0, math.nan, 2.0]], 1, "per row"),
    ([[math.nan, 1.0, math.nan], [2.0, math.nan, 2.0]], -2, "per column, negative axis"),
    ([complex(math.nan, 1), complex(-math.inf, -1), complex(-math.inf, 0)], None, "complex NaN parts"),
    ([complex(1, math.nan), complex(1, 2), complex(1, -2)], None, "NaN in the imaginary part"),
    (np.array([-(2**63), 2**63 - 1, 0], np.int64), None, "integer extremes"),
    (np.array([0, 2**64 - 1, 2**64 - 1], np.uint64), None, "uint64 maximum twice"),
    (np.array([True, False, True]), None, "bool"),
    (np.float64(2.5), 0, "0-d with axis 0"),
    (np.float16(-1), -1, "0-d float16 with axis -1"),
    (np.zeros((0, 3)), 1, "empty result along a nonempty axis"),
]


@pytest.mark.usefixtures("interpreter_backend_for_module")
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("values, axis, note", EDGE_CASES, ids=[case[2] for case in EDGE_CASES])
def test_edges(name, values, axis, note):
    value = np.asarray(values)
    expected, error = numpy_result(name, value, {"axis": axis})
    assert error is None, error
    assert_same(getattr(la, name)(la.asarray(value), axis=axis), expected)


@pytest.mark.usefixtures("interpreter_backend_for_module")
@pytest.mark.parametrize(
    "values, axis, error, message",
    [
        (np.array(math.nan), None, ValueError, "All-NaN slice encountered"),
        (np.full((2, 3), np.nan, np.float32), 0, ValueError, "All-NaN slice encountered"),
        (np.array([[1.0, math.nan], [math.nan, math.nan]]), 1, ValueError, "All-NaN slice encountered"),
        (np.full((2, 2), math.nan), (0,), ValueError, "All-NaN"),  # NumPy checks before argmax's TypeError
        (np.ones((2, 2)), (0,), TypeError, None),
        (np.zeros(0), None, ValueError, "empty sequence"),
        (np.zeros((3, 0)), 1, ValueError, "empty sequence"),
        (np.ones((2, 2)), 2, np.exceptions.AxisError, "out of bounds"),
        (np.ones(3, np.int8), 1, np.exceptions.AxisError, "out of bounds"),
    ],
)
def test_errors(values, axis, error, message):
    for name in NAMES:
        with pytest.raises(error, match=message):
            getattr(np, name)(values, axis=axis)  # NumPy agrees
        with pytest.raises(error, match=message):
            getattr(la, name)(la.asarray(values), axis=axis)


@pytest.mark.usefixtures("interpreter_backend_for_module")
def test_out():
    value = np.array([[math.nan, 4.0], [2.0, 3.0]])
    with pytest.raises(TypeError, match="out= is not supported"):
        la.nanargmax(la.asarray(value), axis=0, out=np.empty(2, np.int64))
    out = np.empty(2, np.int64)
    assert np.nanargmin(la.asarray(value), axis=1, out=out) is out  # NumPy's call writes into out
    np.testing.assert_array_equal(out, np.nanargmin(value, axis=1))


@pytest.mark.usefixtures("interpreter_backend_for_module")
def test_inside_jit():
    """A traced float argument is refused with the fix (an index for an all-NaN slice would be
    wrong silently); integer input stays lazy; an array not traced is checked as outside."""
    value = np.array([[math.nan, 4.0], [math.nan, math.nan]])
    with pytest.raises(TracedValueError, match=r"la\.nanargmax on a traced array.*all-NaN slice.*la\.argmax"):
        la.jit(lambda x: la.nanargmax(x, axis=1))(la.asarray(value))
    with pytest.raises(TracedValueError, match=r"la\.nanargmin.*la\.argmin\(la\.where\(la\.isnan\(x\), la\.inf"):
        la.jit(lambda x: la.nanargmin(x))(la.asarray(value))
    integers = np.array([[3, 9], [7, 1]], np.int32)
    result = la.jit(lambda x: la.nanargmax(x, axis=0, keepdims=True))(la.asarray(integers))
    assert_same(result, np.nanargmax(integers, axis=0, keepdims=True))
    constant = la.asarray(value[0])
    assert_same(la.jit(lambda x: x + la.nanargmax(constant))(la.asarray(1)), np.asarray(2))
    all_nan = la.asarray(value[1])
    with pytest.raises(ValueError, match="All-NaN slice encountered"):
        la.jit(lambda x: x + la.nanargmin(all_nan))(la.asarray(1))


@pytest.mark.usefixtures("interpreter_backend_for_module")
def test_float_input_evaluates_when_called_and_integer_stays_lazy():
    lazy_floats = la.exp(la.asarray([0.0, math.nan, 1.0]))
    result = la.nanargmax(lazy_floats)
    assert result._node._bound is not None  # the check and the indices ran in one module
    assert int(result) == 2
    lazy_integers = la.asarray([1, 5, 2]) * 2
    result = la.nanargmin(lazy_integers)
    assert result._node._bound is None
    assert int(result) == 0


# --- CPU backend --------------------------------------------------------------------------

CPU_VALUES = np.array(
    [[math.nan, 1.5, -0.0, math.inf], [2.0, math.nan, -math.inf, 0.0], [math.nan, math.nan, math.nan, 3.0]]
)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "int32"])
def test_cpu_backend(cpu_backend, dtype):
    value = CPU_VALUES.astype(dtype) if dtype != "int32" else np.arange(12, dtype=dtype).reshape(3, 4) % 5
    for name in NAMES:
        for arguments in ({"axis": 1}, {"axis": None}, {"axis": 1, "keepdims": True}):
            assert_same(getattr(la, name)(la.asarray(value), **arguments), getattr(np, name)(value, **arguments))
    if dtype != "int32":
        all_nan_row = value.copy()
        all_nan_row[2] = np.nan
        with pytest.raises(ValueError, match="All-NaN slice encountered"):
            la.nanargmin(la.asarray(all_nan_row), axis=1)
