"""Kernels that read an operand transposed walk their output in square tiles (llvm/kernel.py
`_tiled_loops`): every element is still written exactly once, whatever the shape (sizes that
are not multiples of the tile, empty and one-element dimensions, 3-d permutations) and thread
split; results are NumPy's bit for bit (the tiles change the order of writes only)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarr as la
from lazyarr.backends.llvm.kernel import _TRANSPOSE_TILE

pytestmark = pytest.mark.usefixtures("cpu_backend")  # tests/conftest.py

TILE = _TRANSPOSE_TILE
SIZES = st.sampled_from([0, 1, 2, 5, TILE - 1, TILE, TILE + 3, 2 * TILE + 1])
PERMUTATIONS = [permutation for permutation in itertools.permutations(range(3)) if permutation[-1] != 2]


@settings(max_examples=30, deadline=None)
@given(rows=SIZES, columns=SIZES, dtype=st.sampled_from([np.float32, np.float64, np.int16, np.bool_]))
def test_transposed_operand_plus_another(rows, columns, dtype):
    rng = np.random.default_rng(rows * 100 + columns)
    x = (rng.standard_normal((columns, rows)) * 100).astype(dtype)
    y = (rng.standard_normal((rows, columns)) * 100).astype(dtype)
    result = la.asarray(x).T + la.asarray(y)
    expected = x.T + y
    assert result.shape == expected.shape and result.dtype == expected.dtype
    np.testing.assert_array_equal(np.asarray(result), expected, strict=True)


@settings(max_examples=20, deadline=None)
@given(shape=st.tuples(SIZES, st.integers(1, 4), SIZES), permutation=st.sampled_from(PERMUTATIONS))
def test_three_dimensional_permutations(shape, permutation):
    x = np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)
    result = la.exp(la.permute_dims(la.asarray(x), permutation)) * 2
    # Elementwise exp of the same elements (within 2 ULP of NumPy's; reordering changes nothing).
    np.testing.assert_allclose(np.asarray(result), np.exp(x.transpose(permutation)) * 2, rtol=4e-7)


def test_tiles_split_over_threads(thread_pool_kernels):
    x = np.arange(3 * 97 * 70, dtype=np.float32).reshape(3, 97, 70)
    y = np.ones((70, 97), np.float32)
    np.testing.assert_array_equal(np.asarray(la.asarray(x[1]).T - la.asarray(y)), x[1].T - y)
    np.testing.assert_array_equal(np.asarray(la.permute_dims(la.asarray(x), (1, 2, 0)) + 1),
                                  x.transpose(1, 2, 0) + 1)
