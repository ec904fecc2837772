"""Masks that are one comparison of evaluated arrays are computed by NumPy, not compiled.

`X[labels == k]` must know the mask's values now (the result's shape depends on them). When
the mask is one comparison of evaluated host arrays and scalars, `indexing_key.evaluated_mask`
asks NumPy's comparison directly (lazyarr's `compare` follows it exactly). These tests hold the
selection to NumPy over every dtype, both operand orders, broadcasting, and edge values (NaN,
-0.0, infinities, integer extremes), and check that such a mask compiles nothing while a mask
over pending work still evaluates through the compiler.
"""

from __future__ import annotations

import operator

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from tests.assertions import assert_identical
from tests.strategies import ALL_DTYPES, arrays, elements

# At least one axis: a 0-d mask adds an axis (NumPy's `x[True]`), which the general path handles.
SHAPES = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5)

COMPARISONS = [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]


@st.composite
def comparison_cases(draw):
    dtype = np.dtype(draw(st.sampled_from(ALL_DTYPES)))
    values = draw(arrays(dtype, shape=SHAPES))
    if draw(st.booleans()):  # against an array of the same dtype, broadcast from the last axis
        other = draw(arrays(dtype, shape=st.just(values.shape[-1:])))
    else:  # against a scalar of the same dtype (a 0-d constant in the graph)
        other = np.asarray(draw(elements(dtype)), dtype=dtype)[()]
    comparison = draw(st.sampled_from(COMPARISONS))
    if dtype.kind == "c" and comparison not in (operator.eq, operator.ne):
        comparison = operator.eq  # ordering complex numbers is tested with the elementwise ops
    return values, other, comparison, draw(st.booleans())


def _lookups() -> int:
    info = la.cache_info()
    return info.hits + info.misses


@given(comparison_cases())
def test_selection_by_a_comparison_of_evaluated_arrays_is_numpys(case):
    values, other, comparison, swapped = case
    data = la.asarray(values).eval()
    lazy_other = la.asarray(other).eval() if isinstance(other, np.ndarray) else other
    mask = comparison(lazy_other, data) if swapped else comparison(data, lazy_other)
    expected_mask = comparison(other, values) if swapped else comparison(values, other)
    lookups = _lookups()
    selected = data[mask]
    assert _lookups() == lookups  # NumPy compared and selected: nothing evaluated, nothing compiled
    assert_identical(np.asarray(selected), values[expected_mask])
    assert_identical(np.asarray(mask), expected_mask)


def test_a_python_int_and_negative_zero_meet_numpys_rules():
    labels = la.asarray(np.array([0, 3, 1, 3, -2], dtype=np.int8)).eval()
    assert np.asarray(labels[labels == 3]).tolist() == [3, 3]
    assert np.asarray(labels[labels < 300]).tolist() == [0, 3, 1, 3, -2]  # out of int8's range: all True
    signed = la.asarray(np.array([-0.0, 0.0, np.nan, 1.0], dtype=np.float32)).eval()
    assert np.asarray(signed[signed == 0.0]).tolist() == [0.0, 0.0]
    assert np.asarray(signed[signed != signed]).size == 1  # NaN alone differs from itself


def test_a_mask_over_pending_work_is_still_evaluated_by_the_compiler():
    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    data = la.asarray(values).eval()
    mask = (data * 2) > 9  # the product is pending: the mask is no comparison of buffers
    assert_identical(np.asarray(data[mask]), values[(values * 2) > 9])
    assert mask.is_evaluated


@given(data=st.data(), dtype=st.sampled_from(ALL_DTYPES), shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=5))
def test_a_mask_over_leading_axes_selects_numpys_elements(data, dtype, shape):
    """`x[mask]` with a mask over the first one, some or all axes of an evaluated array (the
    selection runs as np.compress where NumPy's result is the same): NumPy's elements, order,
    shape and dtype."""
    values = data.draw(arrays(np.dtype(dtype), shape=st.just(shape)))
    leading = data.draw(st.integers(1, len(shape)))
    mask = data.draw(hnp.arrays(np.bool_, shape[:leading]))
    lazy = la.asarray(values).eval()
    assert_identical(np.asarray(lazy[la.asarray(mask).eval()]), values[mask])
    labels = la.asarray(mask.astype(np.int8)).eval()  # a comparison NumPy evaluates (host path)
    assert_identical(np.asarray(lazy[labels == 1]), values[mask])
