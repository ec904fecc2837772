"""dynamic-slice and dynamic-update-slice inside CPU kernels.

The CPU backend emits a dynamic-update-slice element by element (the update's element inside
the clamped window, the operand's outside), so the update's producers fuse into it and
`u[1:-1, 1:-1] = expression` costs one pass instead of a host copy of the whole operand; and
a dynamic-slice as a read at run-time offsets, so `x[i]` on a pending array is one kernel for
every i. Results are checked bit for bit against NumPy, with starts given at run time
(including starts XLA's rules clamp: negative, or past the end) and as constants.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarr as la
from lazyarr.backends import cpu
from lazyarr.backends.llvm import dispatch
from lazyarr.backends.slots import HostStep
from lazyarr.compile import clear_cache, compile_module
from lazyarr.hlo import Computation, Module, constant, make

pytestmark = pytest.mark.usefixtures("cpu_backend")


def _parameter(number, shape, dtype):
    return make("parameter", number=number, shape=tuple(shape), dtype=np.dtype(dtype))


def _expected(operand, update, starts):
    """NumPy's assignment at XLA's clamped starts."""
    begin = [min(max(start, 0), extent - size) for start, extent, size in zip(starts, operand.shape, update.shape)]
    result = operand.copy()
    result[tuple(slice(b, b + size) for b, size in zip(begin, update.shape))] = update
    return result


@st.composite
def _cases(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(0, 6)) for _ in range(ndim))
    block = tuple(draw(st.integers(0, extent)) for extent in shape)
    starts = tuple(draw(st.integers(-3, extent + 3)) for extent in shape)
    dtype = draw(st.sampled_from([np.float32, np.float64, np.int32, np.int8, np.bool_]))
    return shape, block, starts, np.dtype(dtype), draw(st.sampled_from([np.int64, np.int32]))


@settings(max_examples=40)
@given(_cases(), st.integers(0, 2**32 - 1))
def test_fused_update_matches_numpy_assignment(case, seed):
    shape, block, starts, dtype, start_dtype = case
    rng = np.random.default_rng(seed)
    operand = (rng.standard_normal(shape) * 10).astype(dtype)
    update = (rng.standard_normal(block) * 10).astype(dtype)
    p_operand, p_update = _parameter(0, shape, dtype), _parameter(1, block, dtype)
    p_starts = [_parameter(2 + axis, (), start_dtype) for axis in range(len(shape))]
    # The update is computed inside the kernel (negated or not-ed), the operand read as is.
    computed = make("not" if dtype == np.bool_ else "negate", [p_update])
    root = make("dynamic-update-slice", [p_operand, computed, *p_starts])
    executable = compile_module(Module("main", Computation("main", (p_operand, p_update, *p_starts), (root,))), "cpu")
    assert not [step for step in executable.steps if isinstance(step, HostStep)]
    values = [operand, update] + [np.asarray(start, start_dtype) for start in starts]
    (result,) = executable.run(values)
    expected_update = ~update if dtype == np.bool_ else -update
    np.testing.assert_array_equal(result, _expected(operand, expected_update, starts), strict=True)


def test_constant_starts_clamp_as_xla_does():
    operand = np.arange(35, dtype=np.float32).reshape(5, 7)
    update = np.full((2, 3), -1, np.float32)
    p_operand, p_update = _parameter(0, (5, 7), np.float32), _parameter(1, (2, 3), np.float32)
    root = make("dynamic-update-slice", [p_operand, p_update, constant(np.int64(-1)), constant(np.int64(9))])
    executable = compile_module(Module("main", Computation("main", (p_operand, p_update), (root,))), "cpu")
    (result,) = executable.run([operand, update])
    np.testing.assert_array_equal(result, _expected(operand, update, (-1, 9)), strict=True)


def test_stencil_assignment_is_one_kernel_and_matches_numpy():
    grid = np.random.default_rng(0).random((34, 20)).astype(np.float32)
    lazy = la.asarray(grid.copy())
    expected = grid.copy()
    for u in (lazy, expected):
        for _ in range(3):
            u[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.1 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
                                                  - 4 * u[1:-1, 1:-1])
            if u is lazy:
                report = str(la.explain(u))
                optimized = report.split("== HLO after optimization ==")[1].split("== fusion ==")[0]
                entry = optimized.split("ENTRY main {")[1]
                assert report.startswith("backend: cpu; kernels: 1")
                assert "dynamic-update-slice" not in entry  # it is inside the kernel
                la.eval(u)
    # The kernel evaluates the same float32 expression in the same order as NumPy.
    np.testing.assert_array_equal(np.asarray(lazy), expected, strict=True)


@pytest.mark.parametrize("threads", ["python pool", "native"])
def test_update_window_loops_split_over_threads_match_numpy(monkeypatch, threads):
    """A 1-D assignment big enough for threads: each thread's [begin, end) cuts the three
    loops (before, inside, after the window) that the kernel runs instead of testing each
    element; a thread's range may hold the window's edge or miss the window entirely. The
    Python pool's chunks are watched (the module has symbolic sizes: the split is decided at
    run time); OpenMP's threads (llvm/threads.py) cut the same kernel in native code."""
    if threads == "native" and not dispatch.native_threads():
        pytest.skip("no OpenMP runtime found")
    if threads == "python pool":
        monkeypatch.setattr(dispatch, "native_threads", lambda: False)
        monkeypatch.setattr(dispatch, "parallel_caller", lambda: None)
    clear_cache()  # the split is decided when a module is compiled
    pool, chunks = cpu._pool(), []

    class Watched:
        _max_workers = max(2, pool._max_workers)

        def submit(self, function, *arguments):
            chunks.append(arguments[-2:])
            return pool.submit(function, *arguments)

    monkeypatch.setattr(cpu, "_pool", Watched)
    size = (1 << 21) + 3
    operand = np.arange(size, dtype=np.float32)
    update = np.linspace(-1, 1, size - 12, dtype=np.float32)
    for start in (5, -4, size):  # inside; clamped to 0; clamped to the end
        p_operand, p_update = _parameter(0, operand.shape, np.float32), _parameter(1, update.shape, np.float32)
        p_start = _parameter(2, (), np.int64)
        root = make("dynamic-update-slice", [p_operand, make("negate", [p_update]), p_start])
        executable = compile_module(Module("main", Computation("main", (p_operand, p_update, p_start), (root,))),
                                    "cpu")
        chunks.clear()
        (result,) = executable.run([operand, update, np.asarray(start, np.int64)])
        np.testing.assert_array_equal(result, _expected(operand, -update, (start,)), strict=True)
        if threads == "python pool":
            assert len(chunks) >= 2 and chunks[0][0] == 0 and chunks[-1][1] == size  # split over threads


@settings(max_examples=30)
@given(_cases(), st.integers(0, 2**32 - 1))
def test_fused_dynamic_slice_matches_numpy(case, seed):
    shape, block, starts, dtype, start_dtype = case
    operand = (np.random.default_rng(seed).standard_normal(shape) * 10).astype(dtype)
    p_operand = _parameter(0, shape, dtype)
    p_starts = [_parameter(1 + axis, (), start_dtype) for axis in range(len(shape))]
    computed = make("not" if dtype == np.bool_ else "negate", [p_operand])  # computed in the kernel
    root = make("dynamic-slice", [computed, *p_starts], sizes=block)
    executable = compile_module(Module("main", Computation("main", (p_operand, *p_starts), (root,))), "cpu")
    assert not [step for step in executable.steps if isinstance(step, HostStep)]
    (result,) = executable.run([operand] + [np.asarray(start, start_dtype) for start in starts])
    begin = [min(max(start, 0), extent - size) for start, extent, size in zip(starts, shape, block)]
    window = tuple(slice(b, b + size) for b, size in zip(begin, block))
    expected = ~operand[window] if dtype == np.bool_ else -operand[window]
    np.testing.assert_array_equal(result, expected, strict=True)


def test_integer_reads_and_writes_in_a_loop_compile_once(fresh_cpu_cache):
    """`x[i]` and `z[i] = v` for a new i reuse the executable (the index is a run-time value)."""
    values = np.random.default_rng(2).random(60)
    x = la.asarray(values) * 2  # pending: read through the graph, not from a buffer
    z = la.zeros(60)
    expected = np.zeros(60)
    counts = []
    for i in range(5, 45):
        z[i] = x[i] + 1
        expected[i] = values[i] * 2 + 1
        la.eval(z)
        counts.append(la.cache_info().misses)
    assert counts[-1] == counts[1]  # after the first two evaluations, nothing compiles
    np.testing.assert_array_equal(np.asarray(z), expected)


def test_shuffle_of_a_lazy_array_is_a_permutation():
    """NumPy's shuffle swaps elements through `x[i]` reads and writes: a few kernels, not one per index."""
    import warnings

    x = la.asarray(np.arange(120.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy warns that lazyarr arrays are not Sequences
        np.random.default_rng(0).shuffle(x)
    reference = np.arange(120.0)
    np.random.default_rng(0).shuffle(reference)
    np.testing.assert_array_equal(np.asarray(x), reference)
