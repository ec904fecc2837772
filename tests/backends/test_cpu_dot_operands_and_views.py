"""What feeds a dot is not copied, and a slice of a buffer is a view: no copy kernels, and kernels
that do not depend on where a slice starts.

* `x.T @ y`: the transpose folds into the dot's dimension numbers (passes/transpose_folding.py);
  BLAS reads the transposed matrix in place.
* `A @ v` with a vector: the dot contracts the vector as it is (no reshape to (n, 1) and back).
* `x[i*n:(i+1)*n]` of an input: one contiguous stretch of its buffer, a host view
  (backends/cpu.is_buffer_view), so a loop over batches compiles its kernels once.
Dots go through NumPy's BLAS, whose summation order may differ between a transposed and a
copied operand: results are compared within 4 float64 ULPs of the row length (rtol 1e-13 for
the sizes here), not bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lazyarr as la
from lazyarr.backends.cpu import is_buffer_view
from lazyarr.hlo.instruction import make

pytestmark = pytest.mark.usefixtures("fresh_cpu_cache")


def kernels_of(*arrays) -> int:
    return la.explain(*arrays).num_kernels


@given(rows=st.integers(1, 9), inner=st.integers(1, 9), columns=st.integers(1, 4),
       transpose_left=st.booleans(), transpose_right=st.booleans(), vector=st.booleans())
def test_transposed_and_vector_operands_reach_blas_without_copies(rows, inner, columns, transpose_left,
                                                                 transpose_right, vector):
    rng = np.random.default_rng(rows * 100 + inner * 10 + columns)
    left = rng.standard_normal((inner, rows) if transpose_left else (rows, inner))
    right = rng.standard_normal(inner) if vector else rng.standard_normal(
        (columns, inner) if transpose_right else (inner, columns))
    lazy_left, lazy_right = la.asarray(left), la.asarray(right)
    if transpose_left:
        left, lazy_left = left.T, lazy_left.T
    if transpose_right and not vector:
        right, lazy_right = right.T, lazy_right.T
    product = lazy_left @ lazy_right
    assert kernels_of(product) == 0  # only the BLAS call
    np.testing.assert_allclose(np.asarray(product), left @ right, rtol=1e-13, atol=1e-13)


def test_a_vector_on_the_left_and_batched_matrices_keep_numpy_shapes():
    rng = np.random.default_rng(1)
    for left_shape, right_shape in [((4,), (4, 5)), ((4,), (4,)), ((2, 3, 4), (4,)), ((4,), (2, 4, 5))]:
        left, right = rng.standard_normal(left_shape), rng.standard_normal(right_shape)
        got = la.asarray(left) @ la.asarray(right)
        assert got.shape == (left @ right).shape
        np.testing.assert_allclose(np.asarray(got), left @ right, rtol=1e-13, atol=1e-13)


def test_a_transpose_that_reorders_free_dimensions_is_not_folded():
    # (b, n, k) transposed to (n, b, k) and contracted over k: the free dimensions (n, b) would
    # come out as (b, n) if folded, so the transpose stays (and the answer is NumPy's).
    rng = np.random.default_rng(2)
    values, weights = rng.standard_normal((2, 3, 4)), rng.standard_normal(4)
    got = la.matmul(la.permute_dims(la.asarray(values), (1, 0, 2)), la.asarray(weights))
    np.testing.assert_allclose(np.asarray(got), np.transpose(values, (1, 0, 2)) @ weights, rtol=1e-13)


def test_a_loop_over_batches_compiles_its_kernels_once():
    rng = np.random.default_rng(3)
    inputs, weights = la.asarray(rng.standard_normal((60, 8))), la.asarray(rng.standard_normal((8, 5)))
    expected_inputs, expected_weights = np.asarray(inputs), np.asarray(weights)
    compiled = []
    for index in range(5):
        batch = inputs[index * 12:(index + 1) * 12]
        result = la.tanh(batch @ weights + 1.0)
        np.testing.assert_allclose(np.asarray(result), np.tanh(expected_inputs[index * 12:(index + 1) * 12]
                                                               @ expected_weights + 1.0), rtol=1e-13)
        compiled.append(la.cache_info().kernels_compiled)
    assert compiled[0] >= 1 and compiled == [compiled[0]] * 5  # every offset reuses the kernel


@pytest.mark.parametrize("shape, start, limit, stride, view", [
    ((10,), (2,), (7,), (1,), True),                # x[2:7]
    ((6, 4), (1, 0), (3, 4), (1, 1), True),         # rows x[1:3]
    ((6, 4), (2, 1), (3, 3), (1, 1), True),         # x[2, 1:3]
    ((2, 6, 4), (1, 2, 0), (2, 5, 4), (1, 1, 1), True),  # x[1, 2:5]
    ((6, 4), (0, 1), (6, 3), (1, 1), False),        # columns x[:, 1:3]
    ((6, 4), (1, 1), (3, 3), (1, 1), False),        # a block
    ((10,), (0,), (10,), (2,), False),              # strided
    ((10,), (0,), (10,), (1,), False),              # the whole buffer (simplified away)
])
def test_which_slices_are_views_of_their_buffer(shape, start, limit, stride, view):
    operand = make("parameter", number=0, shape=shape, dtype=np.dtype(np.float32))
    sliced = make("slice", [operand], start=start, limit=limit, stride=stride)
    assert is_buffer_view(sliced) is view
    numpy_slice = np.zeros(shape, np.float32)[tuple(slice(*bounds) for bounds in zip(start, limit, stride))]
    if view:
        assert numpy_slice.flags.c_contiguous


def test_a_slice_of_a_computed_value_is_still_fused():
    x = la.asarray(np.arange(12.0))
    assert kernels_of((la.exp(x) + 1)[2:7]) == 1
    np.testing.assert_allclose(np.asarray((la.exp(x) + 1)[2:7]), (np.exp(np.arange(12.0)) + 1)[2:7], rtol=1e-15)
