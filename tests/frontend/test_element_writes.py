"""Writes into evaluated arrays nothing else sees are NumPy's stores into the buffer.

`x[i] = v`, `M[i] = row`, `x[2:5] = values` (element_writes.py) write in place only when no
graph, view, NumPy array or other holder can see the old value. These tests hold the results
to NumPy (values, dtypes, errors) over random write sequences, and check every way the old
value may still be seen: a pending graph recorded before the write, `np.asarray` views, lazy
and evaluated views, another array wrapping the same value, a jitted function's captured
array, a NumPy array given to `la.asarray`. And that in-place writes compile nothing.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarr as la
from tests.assertions import outcome
from tests.strategies import REAL_DTYPES, arrays, elements, nonempty_shapes


def evaluated(value: np.ndarray) -> la.Array:
    return la.asarray(value.copy()).eval()


@st.composite
def write_sequences(draw):
    """An array and a list of (integer key, Python or NumPy scalar) writes NumPy may accept or refuse."""
    dtype = draw(st.sampled_from(REAL_DTYPES))
    value = draw(arrays(dtype, nonempty_shapes))
    writes = []
    for _ in range(draw(st.integers(1, 12))):
        key = tuple(draw(st.integers(-side, side - 1)) for side in value.shape)
        if len(key) == 1 and draw(st.booleans()):
            key = key[0]  # `x[i]` as well as `x[(i,)]`
        scalar = draw(st.one_of(
            elements(dtype).map(lambda item: item.item() if draw(st.booleans()) else item),
            st.sampled_from([0, 1, -1, 2.5, True, 300, -(2**63), 2**64, float("nan"), float("inf")]),
        ))
        writes.append((key, scalar))
    return value, writes


@st.composite
def block_writes(draw):
    """An array and writes of known values (NumPy arrays, lists, evaluated arrays, scalars) at
    basic keys: integers, slices, `...` and `None`, shapes that broadcast or do not."""
    dtype = draw(st.sampled_from(REAL_DTYPES))
    value = draw(arrays(dtype, nonempty_shapes))
    writes = []
    for _ in range(draw(st.integers(1, 6))):
        key = []
        for side in value.shape:
            kind = draw(st.sampled_from(["int", "slice", "all"]))
            if kind == "int":
                key.append(draw(st.integers(-side, side - 1)))
            elif kind == "slice":
                key.append(slice(draw(st.integers(-side, side)), draw(st.integers(-side, side)),
                                 draw(st.sampled_from([None, 1, 2, -1]))))
            else:
                key.append(slice(None))
        if key and draw(st.booleans()):
            key.insert(draw(st.integers(0, len(key))), draw(st.sampled_from([None, Ellipsis])))
        selected = value[tuple(key)].shape
        shape = draw(st.sampled_from([selected, selected[1:], (1,) * len(selected), (2,)]))
        source = draw(arrays(draw(st.sampled_from(REAL_DTYPES)), shape))
        form = draw(st.sampled_from(["numpy", "list", "evaluated"]))
        writes.append((tuple(key), source, form))
    return value, writes


@settings(max_examples=60, deadline=None)
@given(block_writes())
def test_block_writes_match_numpy(case):
    value, writes = case
    expected, got = value.copy(), evaluated(value)
    for key, source, form in writes:
        numpy_value = source.tolist() if form == "list" else source  # (NumPy is given the same list)
        given_value = evaluated(source) if form == "evaluated" else numpy_value
        _, want_error = outcome(lambda: expected.__setitem__(key, numpy_value))
        _, error = outcome(lambda: got.__setitem__(key, given_value))
        assert error == want_error, (key, source, form)
    result = np.asarray(got)
    assert result.dtype == expected.dtype
    np.testing.assert_array_equal(result, expected)


def test_row_fill_loop_writes_in_place():
    rows = np.arange(600.0).reshape(40, 15)
    table = la.zeros((40, 15))
    for i in range(40):
        table[i] = rows[i]
    np.testing.assert_array_equal(np.asarray(table), rows)
    misses = la.cache_info().misses
    source = la.asarray(rows[::-1].copy()).eval()
    for i in range(40):
        table[i, 2:5] = source[i, :3]  # an evaluated view's value
    expected = rows.copy()
    expected[:, 2:5] = rows[::-1, :3]
    np.testing.assert_array_equal(np.asarray(table), expected)
    assert la.cache_info().misses == misses


def test_a_write_of_its_own_rows_reads_the_old_value():
    x = evaluated(np.arange(12.0).reshape(4, 3))
    x[1:] = x[:-1]  # the view holds the buffer: the lazy write, NumPy's result
    expected = np.arange(12.0).reshape(4, 3)
    expected[1:] = expected[:-1].copy()
    np.testing.assert_array_equal(np.asarray(x), expected)


def test_a_pending_value_is_written_lazily():
    x = evaluated(np.zeros(4))
    source = evaluated(np.arange(4.0))
    pending = source * 2
    x[:] = pending
    source[0] = 10  # nothing refers to source's value but source: in place; `pending` read it before
    np.testing.assert_array_equal(np.asarray(x), [0, 2, 4, 6])


@settings(max_examples=60, deadline=None)
@given(write_sequences())
def test_writes_match_numpy(case):
    value, writes = case
    expected, got = value.copy(), evaluated(value)
    for key, scalar in writes:
        _, want_error = outcome(lambda: expected.__setitem__(key, scalar))
        _, error = outcome(lambda: got.__setitem__(key, scalar))
        assert error == want_error, (key, scalar)
    result = np.asarray(got)
    assert result.dtype == expected.dtype
    np.testing.assert_array_equal(result, expected)


# Buffers up to 4 KiB are NumPy's own; larger ones view the pool's raw memory (host_buffers).
@pytest.mark.parametrize("dtype", [np.int32, np.float64], ids=["small", "pooled"])
def test_fill_loop_compiles_once_and_writes_in_place(dtype):
    x = la.zeros((20, 30), dtype=dtype)
    for i in range(20):
        for j in range(30):
            x[i, j] = i * 30 - j
    np.testing.assert_array_equal(np.asarray(x), np.arange(20)[:, None] * 30 - np.arange(30))
    misses = la.cache_info().misses
    address = x._node._bound.__array_interface__["data"][0]  # (holding the node would share it)
    for i in range(20):
        x[i, -1] = -i  # evaluated, held by x alone: the buffer itself changes
    assert x._node._bound.__array_interface__["data"][0] == address
    assert la.cache_info().misses == misses
    assert np.asarray(x)[:, -1].tolist() == [-i for i in range(20)]


def test_shuffle_is_numpy_shuffle():
    x = la.asarray(np.arange(300.0))
    expected = np.arange(300.0)
    with warnings.catch_warnings():
        # NumPy: "you are shuffling a 'Array' object which is not a subclass of 'Sequence'"
        warnings.simplefilter("ignore")
        np.random.default_rng(7).shuffle(x)
    np.random.default_rng(7).shuffle(expected)
    np.testing.assert_array_equal(np.asarray(x), expected)


def test_element_values_from_other_arrays():
    source = evaluated(np.array([3, -7, 127], np.int8))
    target = evaluated(np.zeros(3, np.float32))
    target[0] = source[1]
    target[2] = source[2]
    np.testing.assert_array_equal(np.asarray(target), np.array([-7, 0, 127], np.float32))
    wide = evaluated(np.zeros(2, np.int8))
    with pytest.raises(OverflowError):
        wide[0] = 300


# -- the old value stays visible wherever NumPy's semantics keep it --------------------------
def test_pending_graph_reads_the_value_before_the_write():
    x = evaluated(np.arange(5.0))
    y = x + 1  # recorded before the write: NumPy computed it then
    x[0] = 100
    np.testing.assert_array_equal(np.asarray(y), np.arange(5.0) + 1)
    np.testing.assert_array_equal(np.asarray(x), [100, 1, 2, 3, 4])


@pytest.mark.parametrize("size", [5, 2000], ids=["small", "pooled"])
def test_numpy_views_taken_before_keep_their_value(size):
    x = (la.arange(float(size)) * 1).eval()  # a kernel's output (pooled when large)
    seen, part = np.asarray(x), np.asarray(x[1:3])
    x[1] = 7
    np.testing.assert_array_equal(seen, np.arange(float(size)))
    np.testing.assert_array_equal(part, [1, 2])
    expected = np.arange(float(size))
    expected[1] = 7
    np.testing.assert_array_equal(np.asarray(x), expected)


@pytest.mark.parametrize("make_view", [lambda x: x[1:], lambda x: x[::-1], lambda x: x.reshape(5, 1)])
def test_views_see_the_write(make_view):
    x = evaluated(np.arange(5.0))
    view = make_view(x)
    expected = np.arange(5.0)
    expected_view = make_view(expected)
    x[2] = -1
    expected[2] = -1
    np.testing.assert_array_equal(np.asarray(view), expected_view)
    np.testing.assert_array_equal(np.asarray(x), expected)


def test_another_array_of_the_same_value_keeps_it():
    x = evaluated(np.arange(4.0))
    other = la.Array(x._node)
    x[0] = 9
    np.testing.assert_array_equal(np.asarray(other), np.arange(4.0))
    np.testing.assert_array_equal(np.asarray(x), [9, 1, 2, 3])


def test_user_numpy_array_never_written():
    user = np.arange(4.0)
    x = la.asarray(user).eval()
    x[0] = 9
    np.testing.assert_array_equal(user, np.arange(4.0))
    np.testing.assert_array_equal(np.asarray(x), [9, 1, 2, 3])


def test_jitted_function_keeps_its_captured_value():
    x = evaluated(np.arange(3.0))
    shifted = la.jit(lambda a: a + x)
    np.testing.assert_array_equal(np.asarray(shifted(la.zeros(3))), np.arange(3.0))
    x[0] = 50
    np.testing.assert_array_equal(np.asarray(shifted(la.zeros(3))), np.arange(3.0))
    np.testing.assert_array_equal(np.asarray(x), [50, 1, 2])


def test_result_of_an_earlier_jitted_call_keeps_its_value():
    doubled = la.jit(lambda a: a * 2)
    x = evaluated(np.arange(3.0))
    result = doubled(x)
    x[1] = 10
    np.testing.assert_array_equal(np.asarray(result), [0, 2, 4])
    np.testing.assert_array_equal(np.asarray(doubled(x)), [0, 20, 4])


def test_writes_inside_a_trace_stay_lazy():
    def step(a):
        a = a + 0
        a[0] = 5.0
        return a

    jitted = la.jit(step)
    x = evaluated(np.arange(3.0))
    np.testing.assert_array_equal(np.asarray(jitted(x)), [5, 1, 2])
    np.testing.assert_array_equal(np.asarray(jitted(x + 1)), [5, 2, 3])
    np.testing.assert_array_equal(np.asarray(x), np.arange(3.0))
