"""Empty integer-array keys against NumPy: when out-of-range indices raise IndexError.

NumPy checks index arrays only for the elements they select: when the advanced indices
broadcast to an empty shape (`x[[], [5]]`), nothing is read and nothing raises, whatever the
values; integer indices are always checked, and a boolean mask's axes of length 0 match any
axis. Reads and writes are compared with NumPy (the interpreter backend: each key is a new graph).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from tests.assertions import assert_identical

pytestmark = pytest.mark.usefixtures("interpreter_backend_for_module")

EMPTY = np.array([], dtype=np.int64)


def _outcome(function):
    try:
        return function(), None
    except IndexError:
        return None, IndexError


def _check(values: np.ndarray, key):
    want, want_error = _outcome(lambda: values[key])
    got, got_error = _outcome(lambda: np.asarray(la.asarray(values)[key]))
    assert got_error == want_error, (key, got_error, want_error)
    if want_error is None:
        assert_identical(got, want)
    written = values.copy()
    _, want_error = _outcome(lambda: written.__setitem__(key, -1))
    lazy = la.asarray(values)
    _, got_error = _outcome(lambda: (lazy.__setitem__(key, -1), lazy.eval()))
    assert got_error == want_error, (key, got_error, want_error)
    if want_error is None:
        assert_identical(np.asarray(lazy), written)


@pytest.mark.parametrize("key", [
    ([], [1]), ([2], []), ([], [-2]), (EMPTY, [5]), ([[]], [1]), (np.empty((0, 3), np.int64), [1]),
    ([], [[1], [2]]), ([[1], [2]], []), ([3], [[]]), ([], [0]), ([], []),
    ([], 1), (5, []), ([], [0, 1]), ([2], [0, 0]), ([], [1, 1, 1]),   # these raise, as in NumPy
], ids=repr)
def test_empty_advanced_indices_check_nothing(key):
    _check(np.arange(2).reshape(2, 1), key)


@pytest.mark.parametrize("key", [
    ([], slice(None), [9]), ([], Ellipsis, [9]), ([], None, [9]), (slice(None), [], [9]),
    ([], [], [9]), (0, [], [9]), ([], 0, [9]), ([], slice(None), [[9]]),
    ([], 7, [1]), ([9], slice(0, 0)), (slice(0, 0), [9]),  # an integer, or a non-empty index: raises
], ids=repr)
def test_empty_advanced_indices_beside_slices_and_integers(key):
    _check(np.arange(24).reshape(2, 3, 4), key)


@pytest.mark.parametrize("mask_shape", [(0,), (0, 2), (3, 0), (0, 0), (1, 0), (1,), (2,)], ids=str)
def test_boolean_masks_with_empty_axes(mask_shape):
    _check(np.arange(6).reshape(3, 2), np.zeros(mask_shape, dtype=bool))


@settings(max_examples=150)
@given(data=st.data())
def test_integer_array_keys_with_empty_or_out_of_range_parts(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3), label="shape")
    count = data.draw(st.integers(1, len(shape)), label="count")
    parts = []
    for axis in range(count):
        part_shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=2), label="part")
        part_shape = data.draw(st.sampled_from([part_shape, (0,), (1,)]), label="part shape")
        bound = shape[axis] + 2
        parts.append(data.draw(hnp.arrays(np.int64, part_shape, elements=st.integers(-bound, bound)), label="index"))
    _check(np.arange(np.prod(shape)).reshape(shape), tuple(parts))
