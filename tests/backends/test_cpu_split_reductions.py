"""Full reductions split over threads: partial results per block, then their combination.

A kernel whose outputs each reduce all of one operand (`sum(x + y*z)`, `x.max()`) runs as two
kernels (backends/split_reductions.py `splits_into_partials`): 64 partial results, block b reducing the b-th
of 64 equal ranges of the outermost reduced axis (a multiple of 256 elements, so float sums add
the blocks the whole reduction adds), computed by threads; then a kernel combining them (float32
sums and products in float64). The partials depend on the extent only, so a split run equals a
serial run bit for bit; against the unsplit kernel (one pairwise tree over all blocks) float sums
differ by rounding only. Checked against NumPy on sizes around the block boundaries, empty and
one-element operands, NaN and infinities, integer wraparound, float16 (float32 partials) and
multi-output kernels.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lazyarr as la
from lazyarr.backends import cpu, split_reductions
from lazyarr.backends.cpu import KernelStep
from lazyarr.compile import compile_module
from lazyarr.hlo import Computation, Module, make

pytestmark = pytest.mark.usefixtures("cpu_backend")

_BLOCK_ELEMENTS = split_reductions.PARTIAL_BLOCKS * 256  # one block's share of the outer axis is a multiple of 256
_SIZES = st.sampled_from([0, 1, 2, 63, 64, 255, 256, 257, _BLOCK_ELEMENTS - 1, _BLOCK_ELEMENTS,
                          _BLOCK_ELEMENTS + 1, 3 * _BLOCK_ELEMENTS + 77]) | st.integers(0, 5000)
_DTYPES = st.sampled_from([np.float32, np.float64, np.float16, np.int32, np.int64, np.uint8])


def _values(draw_data, size, dtype):
    rng = np.random.default_rng(draw_data)
    if np.dtype(dtype).kind == "f":
        values = (rng.standard_normal(size) * 4).astype(dtype)
    else:
        info = np.iinfo(dtype)
        values = rng.integers(info.min, info.max, size, dtype=dtype, endpoint=True)  # sums wrap around
    return values


def _reductions(array):
    return [array.sum(), array.max() if array.size else array.sum(), array.min() if array.size else array.sum()]


def _expected(values):
    with np.errstate(over="ignore"):  # (NumPy's dtypes: small integers sum as int64/uint64)
        return [values.sum(), values.max() if values.size else values.sum(),
                values.min() if values.size else values.sum()]


def _check_close(got, want, values):
    if np.dtype(values.dtype).kind != "f":
        np.testing.assert_array_equal(got, want)  # integer sums wrap around the same way
        return
    # Float sums: NumPy's pairwise tree and the kernel's (blocks of 256, pairwise per partial,
    # then 64 partials) differ by rounding: a few ulps of the largest partial sum's magnitude.
    scale = float(np.abs(values.astype(np.float64)).sum()) if values.size else 0.0
    eps = float(np.finfo(values.dtype).eps)
    np.testing.assert_allclose(np.float64(got), np.float64(want), rtol=0, atol=8 * eps * scale + 1e-300)


# (monkeypatch: each example sets what it needs)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(size=_SIZES, dtype=_DTYPES, seed=st.integers(0, 2**16))
def test_split_full_reductions_match_numpy_and_the_serial_run(monkeypatch, size, dtype, seed):
    values = _values(seed, size, dtype)
    got = []
    for work in (1, 1 << 62):  # every partials kernel on threads; every one on this thread
        monkeypatch.setattr(cpu, "_NATIVE_PARALLEL_WORK", work)
        monkeypatch.setattr(cpu, "_PARALLEL_WORK", work)
        la.clear_cache()
        got.append([np.asarray(result) for result in la.eval(*_reductions(la.asarray(values) * 1))])
    for split, serial in zip(*got):
        np.testing.assert_array_equal(split, serial)  # the partials do not depend on the threads
    for result, want in zip(got[0], _expected(values * 1)):
        assert result.dtype == want.dtype
        _check_close(result, want, values)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_and_infinities_reach_the_combined_result(dtype):
    values = np.random.default_rng(1).standard_normal(3 * _BLOCK_ELEMENTS + 5).astype(dtype)
    for special in (np.nan, np.inf, -np.inf):
        poisoned = values.copy()
        poisoned[2 * _BLOCK_ELEMENTS + 3] = special  # inside a later block
        x = la.asarray(poisoned)
        for lazy, reference in ((x.sum(), poisoned.sum()), (x.max(), poisoned.max()), (x.min(), poisoned.min())):
            np.testing.assert_array_equal(np.asarray(lazy), reference)


def test_a_full_reduction_compiles_to_partials_then_their_combination():
    operand = make("parameter", number=0, shape=(10**6,), dtype=np.dtype(np.float32))
    root = make("reduce", [make("exp", [operand])], dimensions=(0,), kind="sum")
    executable = compile_module(Module("main", Computation("main", (operand,), (root,))), "cpu")
    kernels = [step for step in getattr(executable, "executable", executable).steps if isinstance(step, KernelStep)]
    partials, combination = kernels
    assert partials.extent == split_reductions.PARTIAL_BLOCKS
    assert partials.output_specs == [((64,), np.dtype(np.float32))]
    assert combination.inputs == partials.outputs
    values = np.random.default_rng(0).random(10**6, dtype=np.float32)
    (result,) = executable.run([values])
    # exp within 1 ULP; 10^6 terms below e: NumPy's float64 sum, within float32 rounding.
    np.testing.assert_allclose(result, np.exp(values.astype(np.float64)).sum(), rtol=1e-6)


def test_several_full_reductions_of_one_operand_share_the_split():
    values = np.random.default_rng(2).standard_normal((700, 300)).astype(np.float32)
    x = la.asarray(values)
    total, largest, squares = la.eval(x.sum(), x.max(), (x * x).sum())
    exact = values.astype(np.float64)
    np.testing.assert_allclose(float(total), exact.sum(), rtol=0, atol=1e-5 * np.abs(exact).sum())
    assert float(largest) == values.max()
    np.testing.assert_allclose(float(squares), (exact * exact).sum(), rtol=1e-6)


def test_float16_sums_keep_float32_partials():
    values = np.full(4 * _BLOCK_ELEMENTS, 0.1, dtype=np.float16)  # 65536 x 0.1: beyond float16's
    result = la.asarray(values).sum()                              # running-total precision
    assert np.asarray(result).dtype == np.float16
    np.testing.assert_allclose(float(result), float(values.astype(np.float64).sum()), rtol=1e-3)


def test_explain_lists_the_partials_and_their_combination():
    x = la.asarray(np.random.default_rng(4).random((1000, 300), dtype=np.float32))
    steps = la.explain((x + 1).sum()).steps.splitlines()
    assert steps[0].startswith("kernel fused_computation") and "64 partial results" in steps[0]
    assert "threads decided at each run" in steps[0]
    assert steps[1].startswith("kernel combine_partials") and steps[1].endswith("the calling thread")
    assert "work units" in steps[-1]


# -- a maximum or minimum of an elementwise operand walks it in memory order -------------------
_EDGES = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=st.lists(st.integers(1, 70), min_size=2, max_size=4).filter(lambda shape: np.prod(shape) < 60_000),
       dtype=st.sampled_from([np.float32, np.float64, np.float16, np.int16, np.uint8]), seed=st.integers(0, 2**16),
       edges=st.integers(0, 3))
def test_extremes_over_rows_in_memory_order_match_numpy(monkeypatch, shape, dtype, seed, edges):
    # kernel.py `_reads_linearly`: max/min of `abs(x - y) * 2 + 1` over every dimension loop
    # once over the elements (blocks split them in memory order; unsplit, one loop); NaN,
    # infinities and zeros of both signs anywhere, rows of any length, on threads and on one,
    # float16 kept in its float32 accumulator until the end.
    rng = np.random.default_rng(seed)
    x, y = (_values(seed + offset, int(np.prod(shape)), dtype).reshape(shape) for offset in (0, 1))
    if np.dtype(dtype).kind == "f":
        for _ in range(edges):
            x.flat[rng.integers(0, x.size)] = _EDGES[rng.integers(0, len(_EDGES))]
    with np.errstate(all="ignore"):
        expected_values = np.abs(x - y) * dtype(2) + dtype(1)
    results = []
    for work in (1, 1 << 62):
        monkeypatch.setattr(cpu, "_NATIVE_PARALLEL_WORK", work)
        monkeypatch.setattr(cpu, "_PARALLEL_WORK", work)
        la.clear_cache()
        lazy = la.abs(la.asarray(x) - la.asarray(y)) * dtype(2) + dtype(1)
        results.append([np.asarray(value) for value in la.eval(lazy.max(), lazy.min())])
    for got in results:
        np.testing.assert_array_equal(got[0], expected_values.max())
        np.testing.assert_array_equal(got[1], expected_values.min())


def test_only_elementwise_operands_of_extremes_are_walked_in_memory_order():
    from lazyarr.backends.llvm.kernel import _reads_linearly
    from lazyarr.hlo import constant

    x, y = (make("parameter", number=number, shape=(4, 6), dtype=np.dtype(np.float32)) for number in (0, 1))
    difference = make("abs", [make("subtract", [x, y])])
    scalar = make("broadcast", [constant(np.float32(2))], dimensions=(), shape=(4, 6))
    assert _reads_linearly(make("reduce", [make("multiply", [difference, scalar])], dimensions=(0, 1), kind="max"))
    assert not _reads_linearly(make("reduce", [difference], dimensions=(0, 1), kind="sum"))  # sums keep rows
    index = make("iota", shape=(4, 6), dtype=np.dtype(np.float32), dimension=0)
    assert not _reads_linearly(make("reduce", [make("add", [x, index])], dimensions=(0, 1), kind="max"))
    row = make("parameter", number=2, shape=(6,), dtype=np.dtype(np.float32))
    spread = make("broadcast", [row], dimensions=(1,), shape=(4, 6))
    assert not _reads_linearly(make("reduce", [make("add", [x, spread])], dimensions=(0, 1), kind="min"))
    sliced = make("slice", [make("parameter", number=3, shape=(5, 6), dtype=np.dtype(np.float32))],
                  start=(1, 0), limit=(5, 6), stride=(1, 1))
    assert not _reads_linearly(make("reduce", [make("add", [x, sliced])], dimensions=(0, 1), kind="max"))
