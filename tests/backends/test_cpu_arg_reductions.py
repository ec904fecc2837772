"""argmax and argmin compiled as kernel roots (llvm/arg_reduction.py `emit_arg_reduce`).

Each output element walks its line of the operand (computed in the kernel: its producers fuse
in) and keeps the first best element: a strictly larger (smaller) value replaces it, a tie does
not, and the first NaN wins and stays, as in NumPy. Held to NumPy on every real dtype with edge
values (NaN, infinities, -0.0, integer extremes, ties), every axis, fused operands, kernels split
over threads and kernels with placeholder sizes run at new sizes; and the k-means pattern
(`distances.argmin(1)`) runs no host step.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from tests.strategies import REAL_DTYPES, elements

pytestmark = pytest.mark.usefixtures("cpu_backend")

_NONEMPTY = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6)


@st.composite
def _operands(draw):
    dtype = np.dtype(draw(st.sampled_from(REAL_DTYPES)))
    shape = draw(_NONEMPTY)
    # Few distinct values: ties are common, and every edge value NumPy treats specially appears.
    pool = draw(st.lists(elements(dtype), min_size=1, max_size=4))
    values = np.array(draw(st.lists(st.sampled_from(pool), min_size=int(np.prod(shape)),
                                    max_size=int(np.prod(shape)))), dtype=dtype).reshape(shape)
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    return values, axis


@settings(max_examples=120, deadline=None)
@given(_operands(), st.sampled_from(["argmax", "argmin"]))
def test_compiled_arg_reductions_match_numpy(operand, name):
    values, axis = operand
    result = getattr(la, name)(la.asarray(values), axis=axis)
    np.testing.assert_array_equal(np.asarray(result), getattr(np, name)(values, axis=axis))


@st.composite
def _long_lines(draw):
    """Lines about LONG_LINE (32) long and longer, which take the two-pass path (extremum,
    then the first position holding it): few distinct values, edge values among them, spread
    at random (ties anywhere), and for floats a NaN planted at a random position of some."""
    dtype = np.dtype(draw(st.sampled_from(REAL_DTYPES)))
    length = draw(st.sampled_from([31, 32, 33, 100]))
    lines = draw(st.integers(1, 3))
    pool = np.array(draw(st.lists(elements(dtype), min_size=1, max_size=4)), dtype=dtype)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    values = rng.choice(pool, (lines, length))
    if dtype.kind == "f" and draw(st.booleans()):
        values[rng.integers(lines), rng.integers(length)] = np.nan
    return values if draw(st.booleans()) else values.T.copy()


@settings(max_examples=80, deadline=None)
@given(_long_lines(), st.sampled_from(["argmax", "argmin"]), st.booleans())
def test_long_lines_match_numpy(values, name, fused):
    axis = 1 if values.shape[1] >= 31 else 0
    operand = la.asarray(values)
    expected_values = values
    if fused and values.dtype.kind == "f":  # (x * 2 fuses into the kernel, read in both passes)
        with np.errstate(over="ignore"):  # (large values double to inf, as they do in the kernel)
            operand, expected_values = operand * 2, values * values.dtype.type(2)
    result = getattr(la, name)(operand, axis=axis)
    np.testing.assert_array_equal(np.asarray(result), getattr(np, name)(expected_values, axis=axis))


@settings(max_examples=40, deadline=None)
@given(_operands(), st.sampled_from(["argmax", "argmin"]))
def test_a_fused_operand_is_computed_in_the_kernel(operand, name):
    values, axis = operand
    if values.dtype.kind != "f":
        values = values.astype(np.float64)
    # (x - 1) * 2 fuses into the arg-reduction's kernel: NaNs stay NaNs, order is kept.
    result = getattr(la, name)((la.asarray(values) - 1) * 2, axis=axis)
    with np.errstate(all="ignore"):
        expected = getattr(np, name)((values - 1) * 2, axis=axis)
    np.testing.assert_array_equal(np.asarray(result), expected)


@pytest.mark.parametrize("rows", [1, 7, 1000, 4097])
def test_arg_reductions_split_over_threads_and_sizes(thread_pool_kernels, rows):
    """Rows split over threads (a small threshold: every kernel splits), and one executable
    with placeholder sizes serving several sizes."""
    rng = np.random.default_rng(rows)
    values = rng.integers(-3, 4, (rows, 9)).astype(np.float32)  # many ties
    values[rng.random(values.shape) < 0.05] = np.nan
    for name in ("argmax", "argmin"):
        for axis in (0, 1):
            result = getattr(la, name)(la.asarray(values) * 3, axis=axis)
            np.testing.assert_array_equal(np.asarray(result), getattr(np, name)(values * 3, axis=axis))


def test_k_means_labels_run_no_host_step():
    rng = np.random.default_rng(0)
    points = la.asarray(rng.standard_normal((200, 4)).astype(np.float32))
    centres = la.asarray(rng.standard_normal((5, 4)).astype(np.float32))
    labels = ((points[:, None, :] - centres[None, :, :]) ** 2).sum(axis=-1).argmin(axis=1)
    assert "host step" not in la.explain(labels).steps
    distances = ((np.asarray(points)[:, None, :] - np.asarray(centres)[None, :, :]) ** 2).sum(axis=-1)
    np.testing.assert_array_equal(np.asarray(labels), distances.argmin(axis=1))
