"""Float sums in CPU kernels are as accurate as NumPy's pairwise sum.

A kernel adds each block of 256 elements into a partial sum (vectorized), then combines the
blocks' partial sums pairwise (a binary counter of partial sums, across all reduced
dimensions), so the rounding error grows with 256 + log2(count / 256) terms, as NumPy's
pairwise summation does, not with count / 256 terms of one running total (which was 60 to
160 times NumPy's error on the sums below).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarr as la

pytestmark = pytest.mark.usefixtures("cpu_backend")

_EPS32 = float(np.finfo(np.float32).eps)


def _error(value, exact: float) -> float:
    return abs(float(value) - exact)


def _allowed(numpy_error: float, exact: float) -> float:
    """NumPy's own error, four times over (its pairwise tree has leaves of 128 elements in 8
    interleaved sums, ours vector blocks of 256: the two errors differ by small factors, either
    way), plus half an ulp of the float32 result, which both round to."""
    return 4 * numpy_error + 0.5 * float(np.spacing(np.float32(abs(exact))))


def test_ten_million_term_sums_are_as_accurate_as_numpy():
    rng = np.random.default_rng(7)
    size = 10**7
    x, y, z = (rng.random(size, dtype=np.float32) for _ in range(3))
    terms = x + y * z  # NumPy's float32 values of W1's terms, bit for bit as the kernel's
    exact = float(np.sum(terms, dtype=np.float64))
    fused = (la.asarray(x) + la.asarray(y) * la.asarray(z)).sum()
    assert _error(fused, exact) <= _allowed(_error(terms.sum(), exact), exact)

    cancelling = rng.standard_normal(size).astype(np.float32) + np.float32(0.5)
    exact = float(np.sum(cancelling, dtype=np.float64))
    assert _error(la.asarray(cancelling).sum(), exact) <= _allowed(_error(cancelling.sum(), exact), exact)


def test_a_full_sum_combines_short_rows_pairwise():
    """Rows shorter than a block: each row is one block, and the rows' sums are combined
    pairwise too (a running total over 40,000 row sums had 23 times NumPy's error)."""
    rows = np.random.default_rng(3).random((40_000, 250), dtype=np.float32)
    exact = float(np.sum(rows, dtype=np.float64))
    assert _error(la.asarray(rows).sum(), exact) <= _allowed(_error(rows.sum(), exact), exact)


@st.composite
def _sums(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(0, 700 if ndim == 1 else 40)) for _ in range(ndim))
    axes = draw(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True))
    return shape, tuple(sorted(axes)), draw(st.integers(0, 2**32 - 1))


@settings(max_examples=40)
@given(_sums())
def test_float_sums_stay_within_the_pairwise_bound(case):
    """Any float32 sum (empty, one element, lengths around a block's 256, several reduced
    axes): within (256 + log2(count / 256) + 2) * eps * sum|x| of the float64 sum, plus half
    an ulp of each float32 result."""
    shape, axes, seed = case
    x = (np.random.default_rng(seed).standard_normal(shape) * 100).astype(np.float32)
    result = np.asarray(la.asarray(x).sum(axis=axes))
    exact = x.astype(np.float64).sum(axis=axes)
    count = math.prod(shape[axis] for axis in axes)
    terms = 256 + math.log2(max(count / 256, 1)) + 2
    bound = terms * _EPS32 * np.abs(x.astype(np.float64)).sum(axis=axes) + 0.5 * np.spacing(
        np.abs(exact).astype(np.float32)).astype(np.float64)
    assert result.shape == exact.shape and result.dtype == np.float32
    assert np.all(np.abs(result.astype(np.float64) - exact) <= bound)
