"""Row kernels on the CPU (passes/fusion_rows.py, llvm/kernel.py `_rows`): softmax, log-softmax,
layernorm and other chains that reduce each row and then compute the row's elements from the
reductions run as one kernel, held to NumPy on random shapes (leading row dimensions, trailing
reduced ones, empty and one-element sizes), edge values (NaN, +-inf, -0.0) and both thread splits.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarr as la

pytestmark = pytest.mark.usefixtures("cpu_backend")  # tests/conftest.py


def softmax(xp, x):
    exponentials = xp.exp(x - x.max(axis=-1, keepdims=True))
    return exponentials / exponentials.sum(axis=-1, keepdims=True)


def log_softmax(xp, x):
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - xp.log(xp.exp(shifted).sum(axis=-1, keepdims=True))


def layernorm(xp, x):
    centered = x - x.mean(axis=-1, keepdims=True)
    return centered / xp.sqrt((centered * centered).mean(axis=-1, keepdims=True) + 1e-5)


def two_axes(xp, x):
    """Rows of the two trailing dimensions (reduced together), a [:, None, None] broadcast."""
    largest = x.max(axis=(-2, -1))
    return xp.exp(x - largest[:, None, None]) * 2


def normalized(xp, x):
    """x / ||row||: a per-row elementwise value (sqrt) between the reduction and the broadcast."""
    return x / xp.sqrt((x * x).sum(axis=-1))[..., None]


PROGRAMS = {"softmax": softmax, "log_softmax": log_softmax, "layernorm": layernorm,
            "two_axes": two_axes, "normalized": normalized}
# Kernels each program compiles to with row kernels (softmax: 3 without).
ONE_KERNEL = ("softmax", "log_softmax", "layernorm", "two_axes", "normalized")


def shapes(name):
    if name == "two_axes":
        return st.tuples(st.integers(0, 5), st.integers(0, 6), st.integers(1, 40))
    return st.lists(st.integers(0, 40), min_size=2, max_size=3).map(tuple)


def values(dtype, shape, edges):
    rng = np.random.default_rng(sum(shape) * 7 + len(shape))
    x = (rng.standard_normal(shape) * 4).astype(dtype)
    if edges and x.size:
        flat = x.reshape(-1)
        picks = rng.integers(0, flat.size, size=max(1, flat.size // 10))
        flat[picks] = rng.choice(np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], dtype), size=picks.size)
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(PROGRAMS))
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_row_kernels_match_numpy(name, dtype, data):
    shape = data.draw(shapes(name))
    if name == "two_axes" and 0 in shape[1:]:
        shape = (shape[0], 1, shape[2])  # max over no elements raises (as in NumPy)
    if name not in ("two_axes",) and shape[-1] == 0 and name in ("softmax", "log_softmax"):
        shape = (*shape[:-1], 1)
    x = values(dtype, shape, data.draw(st.booleans(), label="edges"))
    program = PROGRAMS[name]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy's "mean of empty slice"
        expected = program(np, x)
    result = program(la, la.asarray(x))
    assert result.shape == expected.shape and result.dtype == expected.dtype
    # exp/log within a few ULP of NumPy's, sums of at most 40 terms reassociated in vector
    # lanes: 64 ULP of relative error covers both; NaN where NumPy has NaN.
    epsilon = np.finfo(dtype).eps
    np.testing.assert_allclose(np.asarray(result), expected, rtol=64 * epsilon, atol=64 * epsilon, equal_nan=True)


@pytest.mark.parametrize("name", ONE_KERNEL)
def test_row_programs_are_one_kernel(name):
    x = la.asarray(values(np.float32, (6, 5, 7) if name == "two_axes" else (6, 7), edges=False))
    assert la.explain(PROGRAMS[name](la, x)).num_kernels == 1


def test_row_kernels_split_over_threads(thread_pool_kernels):
    # Rows are split over the pool's threads: each thread computes whole rows.
    x = values(np.float32, (37, 300), edges=True)
    for program in PROGRAMS.values():
        if program is two_axes:
            continue
        with np.errstate(all="ignore"):
            expected = program(np, x)
        np.testing.assert_allclose(np.asarray(program(la, la.asarray(x))), expected,
                                   rtol=64 * np.finfo(np.float32).eps, atol=1e-6, equal_nan=True)


def test_reductions_read_at_another_row_stay_separate_kernels():
    # `m[::-1]` reads row i's maximum at row n-1-i: not the kernel's own row, so the reduction
    # must be complete before the consumer runs (its own kernel), and results stay right.
    x = values(np.float32, (9, 13), edges=False)
    lazy = la.asarray(x)
    result = lazy - lazy.max(axis=-1)[::-1][:, None]
    assert la.explain(result).num_kernels == 2
    np.testing.assert_array_equal(np.asarray(result), x - x.max(axis=-1)[::-1][:, None])
    # A column reduction broadcast back over columns is not a row kernel either.
    columns = lazy / lazy.sum(axis=0)
    np.testing.assert_allclose(np.asarray(columns), x / x.sum(axis=0), rtol=1e-5)


def test_a_reduction_returned_too_is_stored_by_its_own_kernel():
    # The row maximum is also a result: computed once, stored, and read by the softmax kernel.
    x = values(np.float32, (9, 13), edges=False)
    lazy = la.asarray(x)
    largest = lazy.max(axis=-1, keepdims=True)
    exponentials = la.exp(lazy - largest)
    probabilities = exponentials / exponentials.sum(axis=-1, keepdims=True)
    la.eval(largest, probabilities)
    np.testing.assert_array_equal(np.asarray(largest), x.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(np.asarray(probabilities), softmax(np, x), rtol=1e-5)
