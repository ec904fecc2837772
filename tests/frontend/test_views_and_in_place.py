"""NumPy's write semantics, held to NumPy: in-place operators change the object, views write
through to their base and see its writes, copies are independent.

Each test runs the same statements on a NumPy array and on a lazy array and compares every
array involved afterwards (bases, views and aliases), so a write lost anywhere fails.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from tests.assertions import assert_identical, outcome

IN_PLACE = ["+=", "-=", "*=", "/=", "//=", "%=", "**=", "&=", "|=", "^=", "<<=", ">>="]
OPERAND_DTYPES = [np.bool_, np.int8, np.int32, np.int64, np.uint8, np.float32, np.float64]


def apply_in_place(target, operator: str, other):
    namespace = {"target": target, "other": other}
    exec(f"target {operator} other", namespace)  # the statement itself, not a function call
    return namespace["target"]


small_values = st.integers(-3, 3)


@pytest.mark.parametrize("operator", IN_PLACE)
@settings(max_examples=25)
@given(data=st.data())
def test_in_place_operators_change_the_object_for_every_reference(operator, data):
    target_dtype = data.draw(st.sampled_from(OPERAND_DTYPES))
    other_dtype = data.draw(st.sampled_from(OPERAND_DTYPES))
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_side=0, max_side=3, max_dims=3))
    target_values = data.draw(hnp.arrays(target_dtype, shapes.input_shapes[0], elements=small_values.map(
        lambda v: np.array(v).astype(target_dtype)[()])))
    other_values = data.draw(hnp.arrays(other_dtype, shapes.input_shapes[1], elements=small_values.map(
        lambda v: np.array(v).astype(other_dtype)[()])))
    if operator in ("<<=", ">>="):  # shifts by negative or wide amounts are undefined in NumPy too
        other_values = np.abs(other_values) % 4 if other_dtype != np.bool_ else other_values
    if operator == "**=" and np.issubdtype(other_dtype, np.integer):
        other_values = np.abs(other_values)  # negative integer exponent *arrays*: README's Differences
    if operator in ("//=", "%=") and np.issubdtype(other_dtype, np.integer):
        other_values = np.where(other_values == 0, 1, other_values).astype(other_dtype)

    expected = target_values.copy()
    expected_alias = expected
    want, want_error = outcome(lambda: apply_in_place(expected, operator, other_values))

    lazy = la.asarray(target_values)
    lazy_alias = lazy
    got, got_error = outcome(lambda: apply_in_place(lazy, operator, la.asarray(other_values)))

    assert got_error == want_error, (got_error, want_error)
    if want_error is None:
        assert got is lazy
        # Results compared exactly: same dtype rules, small integers; float division and power
        # of small values are correctly rounded on both sides (NaN and inf as NumPy gives).
        assert_identical(np.asarray(lazy_alias), expected_alias)


def _assert_same_arrays(pairs):
    for got, want in pairs:
        assert_identical(np.asarray(got), want)


@st.composite
def base_and_key(draw, max_dims=3):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=max_dims, min_side=1, max_side=5))
    key = draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
    values = np.arange(np.prod(shape), dtype=np.int64).reshape(shape)
    return values, key


@settings(max_examples=80)
@given(case=base_and_key(), statement=st.sampled_from(["view[...] = -1", "view += 100", "view *= -1"]))
def test_writes_through_a_basic_index_view_reach_the_base(case, statement):
    values, key = case
    want_base = values.copy()
    want_view = want_base[key]
    lazy_base = la.asarray(values)
    lazy_view = lazy_base[key]
    if not isinstance(want_view, np.ndarray):  # integers for every axis: a scalar, not a view
        assert_identical(np.asarray(lazy_view), np.asarray(want_view))
        return
    exec(statement, {"view": want_view})
    exec(statement, {"view": lazy_view})
    _assert_same_arrays([(lazy_base, want_base), (lazy_view, want_view)])


@settings(max_examples=60)
@given(case=base_and_key(), data=st.data())
def test_views_see_later_writes_to_their_base(case, data):
    values, key = case
    want_base = values.copy()
    want_view = want_base[key]
    if not isinstance(want_view, np.ndarray):
        return
    lazy_base = la.asarray(values)
    lazy_view = lazy_base[key]
    other_key = data.draw(hnp.basic_indices(values.shape, allow_newaxis=False, allow_ellipsis=True))
    want_base[other_key] = -7
    lazy_base[other_key] = -7
    want_base += 1
    lazy_base += 1
    _assert_same_arrays([(lazy_base, want_base), (lazy_view, want_view)])


@settings(max_examples=60)
@given(case=base_and_key(max_dims=2), data=st.data())
def test_views_of_views_and_siblings_agree(case, data):
    values, key = case
    want_base = values.copy()
    want_view = want_base[key]
    if not isinstance(want_view, np.ndarray) or want_view.ndim == 0:
        return
    inner_key = data.draw(hnp.basic_indices(want_view.shape, allow_newaxis=True, allow_ellipsis=True))
    want_inner = want_view[inner_key]
    if not isinstance(want_inner, np.ndarray):
        return
    lazy_base = la.asarray(values)
    lazy_view = lazy_base[key]
    lazy_inner = lazy_view[inner_key]
    lazy_sibling, want_sibling = lazy_base[key], want_base[key]
    want_inner[...] = 1000
    lazy_inner[...] = 1000
    _assert_same_arrays([(lazy_base, want_base), (lazy_view, want_view), (lazy_inner, want_inner),
                         (lazy_sibling, want_sibling)])


def test_numpy_view_write_idioms():
    # Game of Life: a masked write into an interior view.
    board = np.zeros((6, 6), np.int8)
    lazy_board = la.asarray(board)
    mask = np.random.default_rng(0).random((4, 4)) > 0.5
    board[1:-1, 1:-1][mask] = 1
    lazy_board[1:-1, 1:-1][mask] = 1
    # A row kept in a name, cleared, then the matrix written: the row follows.
    matrix = np.arange(12.0).reshape(3, 4)
    lazy_matrix = la.asarray(matrix)
    row, lazy_row = matrix[2], lazy_matrix[2]
    row[:] = 0
    lazy_row[:] = 0
    matrix[2, 1] = 5
    lazy_matrix[2, 1] = 5
    # Transposes are views too.
    matrix.T[0] += 10
    lazy_matrix.T[0] += 10
    la.swapaxes(lazy_matrix, 0, 1)[1, 1] = -1
    np.swapaxes(matrix, 0, 1)[1, 1] = -1
    # sort() on a view sorts the base's row.
    matrix[1, ::-1].sort()
    lazy_matrix[1, ::-1].sort()
    _assert_same_arrays([(lazy_board, board), (lazy_matrix, matrix), (lazy_row, row)])


def test_in_place_operators_reach_a_callers_array():
    # NPBench's gemver/mvt pattern: a function updates its arguments in place.
    def kernel(A, x, beta):
        A *= beta
        x += A @ x
        x[0] = -1

    rng = np.random.default_rng(1)
    matrix, vector = rng.random((4, 4)), rng.random(4)
    lazy_matrix, lazy_vector = la.asarray(matrix), la.asarray(vector)
    kernel(matrix, vector, 0.5)
    kernel(lazy_matrix, lazy_vector, 0.5)
    # The matrix product reassociates: 4 terms, within a few ULPs of 1.
    np.testing.assert_allclose(np.asarray(lazy_vector), vector, rtol=1e-15, atol=1e-15)
    assert_identical(np.asarray(lazy_matrix), matrix)


def test_in_place_errors_match_numpy():
    ints = la.asarray(np.arange(3))
    with pytest.raises(TypeError, match="same_kind"):
        ints += 1.5
    with pytest.raises(TypeError, match="same_kind"):
        ints /= 2
    with pytest.raises(ValueError, match=r"\(3,\).*\(2,3\)"):
        ints += np.ones((2, 3), np.int64)
    assert_identical(np.asarray(ints), np.arange(3))  # a refused write changes nothing


@pytest.mark.parametrize("copier", [copy.copy, copy.deepcopy])
def test_copies_are_independent(copier):
    original = la.asarray(np.arange(4))
    duplicate = copier(original)
    assert duplicate is not original
    duplicate[0] = 100
    original[1] += 10
    assert_identical(np.asarray(original), np.array([0, 11, 2, 3]))
    assert_identical(np.asarray(duplicate), np.array([100, 1, 2, 3]))


def test_a_view_keeps_its_base_alive_and_dead_views_are_forgotten():
    base = la.asarray(np.zeros(5))
    for start in range(100):  # temporaries, as in `u[1:-1] + u[2:]`
        base[start % 5:] + 1  # noqa: B018
    assert len(base._views or ()) < 16
    view = la.asarray(np.zeros((2, 3)))[0]
    del base
    view[1] = 3
    assert_identical(np.asarray(view._base.base), np.array([[0, 3, 0], [0, 0, 0]], np.float64))


@pytest.mark.parametrize("evaluated", [True, False])
def test_a_zero_dimensional_index_array_gives_a_copy_as_numpy(evaluated):
    # NumPy: `a[np.array(1)]` is advanced indexing (a copy), unlike `a[1]` (a view).
    values = np.arange(12).reshape(4, 3)
    x = la.asarray(values) if evaluated else la.asarray(values) + 0
    for key in (np.array(1), (np.array(-1), slice(None)), (slice(None), np.array(2))):
        expected = values[key].copy()
        picked = x[key]
        picked[0] = 99
        np.testing.assert_array_equal(np.asarray(x), values)
        expected[0] = 99
        np.testing.assert_array_equal(np.asarray(picked), expected)


@settings(max_examples=60)
@given(case=base_and_key(), statement=st.sampled_from(["+=", "-=", "*="]), data=st.data())
def test_an_indexed_in_place_statement_writes_once(case, statement, data):
    """`a[k] += w` runs `t = a[k]; t += w; a[k] = t`: the view wrote through already, so the last
    write records nothing (it left a second update per statement in the graph). An assignment
    of a view at another key, or of the same key once its base moved on, still writes."""
    values, key = case
    want = values.copy()
    if not isinstance(want[key], np.ndarray):
        return  # integers for every axis: `t` is a copy, the assignment writes it
    other = data.draw(hnp.arrays(np.int64, want[key].shape, elements=st.integers(-9, 9)))
    lazy = la.asarray(values)
    exec(f"target[key] {statement} other", {"target": want, "key": key, "other": other})
    view = lazy[key]
    exec(f"view {statement} other", {"view": view, "other": la.asarray(other)})
    written = lazy._node
    lazy[key] = view  # what the statement's last step does
    assert lazy._node is written
    assert_identical(np.asarray(lazy), want)
    exec(f"target[key] {statement} other", {"target": want, "key": key, "other": other})
    exec(f"target[key] {statement} other", {"target": lazy, "key": key, "other": la.asarray(other)})
    assert_identical(np.asarray(lazy), want)
    # another row's view (a different value) is written
    if values.ndim and values.shape[0] > 1:
        want[0] = want[1]
        lazy[0] = lazy[1]
        assert_identical(np.asarray(lazy), want)


_LAYOUT_VIEWS = {
    "T": lambda a: a.T,
    "transpose": lambda a: a.transpose(tuple(reversed(range(a.ndim)))),
    "reshape": lambda a: a.reshape(-1),
    "reshape 2-d": lambda a: a.reshape(1, -1),
    "swapaxes": lambda a: a.swapaxes(0, -1),
    "diagonal": lambda a: a.diagonal() if a.ndim >= 2 else a,
    "real": lambda a: a.real,  # (of a complex array: its shape and strides, another dtype)
    "imag": lambda a: a.imag,
}


@given(shape=st.lists(st.integers(0, 4), min_size=1, max_size=3), view=st.sampled_from(sorted(_LAYOUT_VIEWS)),
       dtype=st.sampled_from(["float32", "complex64"]))
def test_layout_views_of_an_evaluated_array_are_numpys_views_of_its_buffer(shape, view, dtype):
    """`x.T`, `x.reshape(...)` of an evaluated array are read as NumPy's views of its buffer
    (np.asarray copies nothing: `np.asarray(x.reshape(h, w))` ran a copy kernel), computations
    reading them match NumPy, and writes through the view and to the base still reach each
    other. Twice: the second time through the C paths that noted the view."""
    values = (np.arange(int(np.prod(shape))) * (1 + 2j if dtype == "complex64" else 1)).astype(dtype).reshape(shape)
    make = _LAYOUT_VIEWS[view]
    if view == "imag" and dtype != "complex64":
        return  # (zeros that refuse writes, not a view of the buffer)
    for _ in range(2):
        base = la.asarray(values.copy())
        made = make(base)
        read = np.asarray(made)
        assert_identical(read, make(values))
        assert made.is_evaluated
        if values.size:
            assert np.shares_memory(read, np.asarray(base))
        assert_identical(np.asarray(made * 2 + 1), make(values) * 2 + 1)
        if made.size and view == "diagonal" and values.ndim >= 2:  # read-only in NumPy, and here
            with pytest.raises(ValueError):
                made[...] = 7
        elif made.size:
            expected = values.copy()
            make(expected)[...] = 7
            made[...] = 7  # a write through the view reaches the base
            assert_identical(np.asarray(base), expected)
            base[...] = 3  # and a write to the base is read by the view
            expected = values.copy()
            expected[...] = 3
            assert_identical(np.asarray(made), make(expected))
