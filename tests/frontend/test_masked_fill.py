"""`x[mask] = scalar` (indexing.setitem's masked fill): NumPy's values, nothing data-dependent.

A boolean mask over x's leading dimensions with a 0-d value changes the selected elements to
that value: the same as `where(mask, value, x)`, built lazily with no count of selected
elements, so a loop filling a new mask every iteration (Game of Life) compiles once.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from tests.strategies import ALL_DTYPES, arrays, elements

pytestmark = pytest.mark.usefixtures("fresh_cpu_cache")


@st.composite
def _fills(draw):
    dtype = draw(st.sampled_from(ALL_DTYPES))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5))
    target = draw(arrays(dtype, shape))
    mask_dims = draw(st.integers(1, len(shape)))
    mask = draw(hnp.arrays(np.bool_, shape[:mask_dims]))
    value = draw(elements(dtype))
    how = draw(st.sampled_from(["numpy scalar", "python scalar", "0-d lazy", "0-d numpy"]))
    return target, mask, value, how


def _value(value, how):
    if how == "python scalar":
        return value.item()
    if how == "0-d lazy":
        return la.asarray(np.asarray(value))
    if how == "0-d numpy":
        return np.asarray(value)
    return value


@settings(max_examples=150, deadline=None)
@given(_fills(), st.booleans())
def test_masked_fill_matches_numpy(fill, lazy_mask):
    target, mask, value, how = fill
    expected = target.copy()
    expected[mask] = _value(value, how) if how != "0-d lazy" else np.asarray(value)
    got = la.asarray(target.copy())
    got[la.asarray(mask) if lazy_mask else mask] = _value(value, how)
    # Bit for bit (NaN payloads and -0.0 included): the selected elements take the value.
    np.testing.assert_array_equal(np.asarray(got).view(np.uint8), expected.view(np.uint8))


def test_a_lazy_fill_value_is_not_evaluated_and_traces():
    mask = np.array([True, False, True, False])
    value = la.asarray(np.float64(3.0)) * 1.0
    x = la.zeros(4)
    x[mask] = value
    assert not value.is_evaluated  # (np.ndim of a lazy value would have evaluated it)
    np.testing.assert_array_equal(np.asarray(x), [3.0, 0.0, 3.0, 0.0])

    @la.jit
    def fill(target, fill_value):
        target = target.copy()
        target[mask] = fill_value
        return target

    np.testing.assert_array_equal(np.asarray(fill(la.zeros(4), la.asarray(np.float64(2.0)))), [2.0, 0.0, 2.0, 0.0])

    def total(fill_value):
        target = la.zeros(4)
        target[mask] = fill_value
        return target.sum()

    assert float(la.grad(total)(la.asarray(2.0))) == 2.0  # two elements take the value


def test_a_fill_through_a_view_writes_the_base():
    board = np.zeros((6, 6), np.int8)
    board[2, 1:4] = 1
    expected = board.copy()
    neighbours = expected[1:-1, 1:-1] > 0
    expected[1:-1, 1:-1][neighbours] = 7
    got = la.asarray(board)
    got[1:-1, 1:-1][got[1:-1, 1:-1] > 0] = 7
    np.testing.assert_array_equal(np.asarray(got), expected)


def test_a_new_count_of_selected_elements_compiles_nothing():
    rng = np.random.default_rng(0)
    x = la.asarray(np.zeros(64, np.float32))
    np.asarray(x)
    misses = []
    for threshold in (0.3, 0.6, 0.9):  # (none of them a specialized scalar: compile.py)
        y = la.asarray(np.zeros(64, np.float32))
        y[la.asarray(rng.random(64)) > threshold] = 1.0
        np.asarray(y)
        misses.append(la.cache_info().misses)
    assert misses[2] == misses[0], misses


def test_fill_values_convert_as_numpy_assignment_does():
    small = la.asarray(np.arange(4, dtype=np.int8))
    with pytest.raises(OverflowError):
        small[np.array([True, False, True, False])] = 1000
    floats_into_ints = la.asarray(np.arange(4, dtype=np.int32))
    floats_into_ints[np.array([True, True, False, False])] = 2.9  # truncates, as NumPy
    np.testing.assert_array_equal(np.asarray(floats_into_ints), [2, 2, 2, 3])


def test_a_mask_of_another_shape_still_raises_numpys_error():
    x = la.asarray(np.zeros((3, 4)))
    with pytest.raises(IndexError):
        x[np.ones((4,), bool)] = 1.0
