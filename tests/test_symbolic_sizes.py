"""Symbolic sizes: a CPU executable compiled once serves every module that differs only in
its sizes (lazyarr/symbolic_sizes.py), with results equal to NumPy's for each of them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarr as la
from lazyarr import _flags, shapes
from lazyarr.compile import build_module
from lazyarr.frontend.array import bound_buffer
from lazyarr.hlo import text
from lazyarr.symbolic_sizes import CONCRETE_UP_TO, symbolize

BASE = shapes.SYMBOLIC_SIZE_BASE


@pytest.fixture
def cpu():
    previous = la.get_backend_name()
    la.set_backend("cpu")
    la.clear_cache()
    yield
    la.set_backend(previous)


def module_of(source: str):
    return text.parse("HloModule m\nENTRY main {\n" + source + "\n}")


def test_equal_sizes_share_a_placeholder_and_zero_and_one_stay():
    module = module_of("""
  p0 = f32[5,1] parameter(0)
  p1 = f32[5,7] parameter(1)
  b = f32[5,7] broadcast(p0), dimensions={0,1}, shape={5,7}
  a = f32[5,7] add(b, p1)
  z = f32[0,5] parameter(2)
  ROOT r = (f32[5], f32[0,5]) tuple(a, z)""".replace("ROOT r = (f32[5], f32[0,5]) tuple(a, z)",
                                                    "ROOT r = (f32[5,7], f32[0,5]) tuple(a, z)"))
    symbolic, sizes = symbolize(module)
    assert sizes == (5, 7)
    p0, p1, p2 = symbolic.entry.parameters
    five, seven = shapes.placeholder(0, 5), shapes.placeholder(1, 7)
    assert p0.shape == (five, 1) and p1.shape == (five, seven) and p2.shape == (0, five)
    assert symbolic.entry.outputs[0].shape == (five, seven)
    assert [shapes.placeholder_index(size) for size in (five, seven)] == [0, 1]
    # Both are small (<= shapes.SMALL_SIZE): fusion may treat them as tiny values.
    assert shapes.size_bound(five) == shapes.SMALL_SIZE and shapes.size_bound(shapes.placeholder(2, 5000)) is None


@pytest.mark.parametrize("body", [
    "p0 = f32[6] parameter(0)\n  ROOT s = f32[3] slice(p0), start={0}, limit={3}, stride={1}",
    "p0 = f32[6] parameter(0)\n  ROOT s = f32[2,3] reshape(p0), shape={2,3}",
    "ROOT c = f32[3] constant({1, 2, 3})",
])
def test_ops_with_sizes_in_attributes_or_data_keep_concrete_sizes(body):
    assert symbolize(module_of(body)) is None


def test_same_graph_at_new_sizes_compiles_once(cpu):
    def graph(x, y):
        return (la.exp(x) * y[None, :] + 1.5).sum(axis=1), la.flip(x, axis=0).max(axis=0)

    for rows, columns in [(5, 6), (50, 9), (1000, 33), (8, 7)]:  # all above CONCRETE_UP_TO
        x = np.random.default_rng(rows).standard_normal((rows, columns)).astype(np.float32)
        y = np.linspace(-1, 1, columns, dtype=np.float32)
        total, largest = la.eval(*graph(la.asarray(x), la.asarray(y)))
        # float32 sums of `columns` terms in another order: a few ULP of the largest partial sum
        np.testing.assert_allclose(np.asarray(total), (np.exp(x) * y + 1.5).sum(axis=1), rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(np.asarray(largest), np.flip(x, axis=0).max(axis=0))
    assert la.cache_info().misses == 1


def test_a_size_that_becomes_one_or_equal_to_another_compiles_again(cpu):
    for shape in [(6, 5), (8, 7), (1, 5), (5, 5)]:
        x = np.arange(np.prod(shape), dtype=np.int32).reshape(shape)
        np.testing.assert_array_equal(np.asarray(la.asarray(x).T * 3 - 1), x.T * 3 - 1)
    # (6,5) and (8,7) share one executable; a unit size and two equal sizes are new patterns
    assert la.cache_info().misses == 3


def test_sizes_up_to_concrete_up_to_stay_in_the_code(cpu):
    # A point's coordinates: `(delta * delta).sum(axis=-1)` over 2, 3 or 4 runs an unrolled
    # loop, so each of those sizes compiles once; the larger ones share one executable.
    assert CONCRETE_UP_TO == 4
    for size in (2, 3, 4, 5, 9, 3):
        x = np.arange(6 * size, dtype=np.float32).reshape(6, size) - 7
        got = np.asarray((la.asarray(x) * la.asarray(x)).sum(axis=-1))
        np.testing.assert_array_equal(got, (x * x).sum(axis=-1))  # small integers: exact sums
    assert la.cache_info().misses == 4  # 2, 3, 4, and one for 5 and 9 (3 again: a hit)
    module, _ = build_module([(la.asarray(np.ones((4, 3))) * 2)._node], bound_buffer)
    assert symbolize(module) is None  # nothing above CONCRETE_UP_TO: nothing to make symbolic


def test_specialize_sizes_flag_compiles_per_shape(cpu):
    saved = _flags.FLAGS
    try:
        _flags.with_overrides(specialize_sizes=True)
        for size in (10, 11):
            x = np.arange(size, dtype=np.float64)
            np.testing.assert_array_equal(np.asarray(la.asarray(x) * 2.0), x * 2.0)
        assert la.cache_info().misses == 2
    finally:
        _flags.FLAGS = saved


def test_specialize_sizes_takes_an_empty_axis_of_2_to_the_41_as_numpy_does(cpu):
    """Kernels read sizes of 2**40 and more as placeholders, so a module with such an axis (an
    empty array's: a non-empty one is NumPy's MemoryError) takes its sizes at run time under
    --specialize_sizes too (it raised an IndexError); other modules stay specialized."""
    saved = _flags.FLAGS
    try:
        _flags.with_overrides(specialize_sizes=True)
        for lazy, expected in [(la.zeros((2**41, 0)).sum(), np.zeros((2**41, 0)).sum()),
                               (la.zeros((2**41, 0)).sum(axis=0), np.zeros((0,))),
                               (la.ones((0, 2**41)) * 2, np.ones((0, 2**41)) * 2)]:
            np.testing.assert_array_equal(np.asarray(lazy), expected, strict=True)
        misses = la.cache_info().misses
        for size in (10, 11):
            np.asarray(la.asarray(np.arange(size, dtype=np.float64)) * 2.0)
        assert la.cache_info().misses == misses + 2
    finally:
        _flags.FLAGS = saved


@settings(max_examples=15, deadline=None)
@given(rows=st.integers(2, 300), columns=st.integers(2, 300), dtype=st.sampled_from([np.int32, np.float64]))
def test_symbolic_kernels_match_numpy_at_any_size(rows, columns, dtype):
    previous = la.get_backend_name()
    la.set_backend("cpu")
    try:
        x = (np.arange(rows * columns) % 11 - 5).astype(dtype).reshape(rows, columns)
        lazy = la.asarray(x)
        results = la.eval(lazy.T[::-1] + la.arange(rows, dtype=dtype), lazy.sum(axis=0), lazy.min(axis=1),
                          la.reshape(lazy, (rows, 1, columns)) * 2)
        expected = [x.T[::-1] + np.arange(rows, dtype=dtype), x.sum(axis=0), x.min(axis=1),
                    np.reshape(x, (rows, 1, columns)) * 2]
        for got, want in zip(results, expected):
            # small integers (|x| <= 5, at most 90,000 terms): float64 sums are exact
            np.testing.assert_array_equal(np.asarray(got), want, strict=True)
    finally:
        la.set_backend(previous)


def test_large_symbolic_outputs_split_over_threads(cpu):
    x = np.random.default_rng(0).standard_normal((512, 1024)).astype(np.float32)
    for rows in (512, 300):
        np.testing.assert_array_equal(np.asarray(la.asarray(x[:rows]) * 2), x[:rows] * 2)
    assert la.cache_info().misses == 1


def test_build_module_then_symbolize_keeps_parameter_order():
    a, b = la.asarray(np.ones((5, 6))), la.asarray(np.ones((6,)))
    module, buffers = build_module([(a * b)._node], lambda node: None if node.opcode != "parameter" else
                                   __import__("lazyarr.frontend.array", fromlist=["x"]).bound_buffer(node))
    symbolic, sizes = symbolize(module)
    assert [p.attr("number") for p in symbolic.entry.parameters] == [0, 1]
    assert sizes == (5, 6)


def test_slices_pads_and_concatenations_pin_only_the_axes_they_cut_pad_or_join():
    module = module_of("""
  p0 = f32[7,5] parameter(0)
  s = f32[7,4] slice(p0), start={0,1}, limit={7,5}, stride={1,1}
  z = f32[] constant(0)
  p = f32[7,6] pad(s, z), low={0,2}, high={0,0}, interior={0,0}
  ROOT c = f32[7,11] concatenate(p0, p), dimension=1""")
    symbolic, sizes = symbolize(module)
    assert sizes == (7,)  # 5, 4, 6 and 11 sit on cut, padded or joined axes: concrete everywhere
    rows = shapes.placeholder(0, 7)
    (parameter,) = symbolic.entry.parameters
    assert parameter.shape == (rows, 5)
    (joined,) = symbolic.entry.outputs
    sliced = joined.operands[1].operands[0]
    assert sliced.attr("limit") == (rows, 5) and sliced.shape == (rows, 4)  # the whole axis follows its size
    assert joined.shape == (rows, 11)


def test_a_size_on_a_cut_axis_is_concrete_on_every_axis():
    """A pinned size stays concrete wherever it occurs, so equal sizes stay equal: here 4 is a
    sliced size and the size of the other axis too."""
    module = module_of("""
  p0 = f32[4,8] parameter(0)
  s = f32[4,4] slice(p0), start={0,0}, limit={4,4}, stride={1,1}
  ROOT t = f32[4,4] transpose(s), permutation={1,0}""")
    assert symbolize(module) is None  # every size is pinned: nothing symbolic left


def test_stacked_means_of_masked_selections_compile_once_for_new_counts(cpu):
    """k-means' update: `stack([points[labels == k].mean(0) for k ...])`, whose counts change
    every iteration, reuses one executable (the stack joins unit axes; the counts stay symbolic)."""
    rng = np.random.default_rng(3)
    points = rng.standard_normal((3000, 4)).astype(np.float32)
    lazy = la.asarray(points)
    for threshold in (0.0, 0.2, -0.3, 0.1):
        # counts ~1,260-1,850: all above SMALL_SIZE (a count crossing it is another placeholder
        # class, compiled once more)
        masks = [points[:, axis] > threshold for axis in range(3)]
        result = la.stack([lazy[la.asarray(mask)].mean(axis=0) for mask in masks])
        expected = np.stack([points[mask].mean(axis=0) for mask in masks])
        # float32 means of ~1000-2000 terms in another order (float64 divide as NumPy): a few ULP
        np.testing.assert_allclose(np.asarray(result), expected, rtol=1e-5, atol=1e-6)
    assert la.cache_info().misses == 1


@settings(max_examples=12, deadline=None)
@given(rows=st.lists(st.integers(1100, 2500), min_size=2, max_size=3, unique=True),
       columns=st.integers(3, 6), cut=st.integers(0, 2), dtype=st.sampled_from([np.int32, np.float64]))
def test_slice_pad_concatenate_on_a_fixed_axis_compile_once_across_rows(rows, columns, cut, dtype):
    """Rows vary (all above SMALL_SIZE: one placeholder class), columns are cut, padded and
    joined: one executable serves every row count, with NumPy's values."""
    previous = la.get_backend_name()
    la.set_backend("cpu")
    la.clear_cache()
    try:
        for count in rows:
            x = (np.arange(count * columns) % 13 - 6).astype(dtype).reshape(count, columns)
            lazy = la.asarray(x)
            got = la.eval(la.concatenate([lazy[:, cut:], lazy[:, :cut] * 2], axis=1) - lazy[:, ::-1],
                          la.pad(lazy[:, 1:], ((0, 0), (cut, 1))) + 1,
                          la.stack([lazy[:, 0], lazy[:, -1]], axis=1).sum(axis=0))
            want = [np.concatenate([x[:, cut:], x[:, :cut] * 2], axis=1) - x[:, ::-1],
                    np.pad(x[:, 1:], ((0, 0), (cut, 1))) + 1,
                    np.stack([x[:, 0], x[:, -1]], axis=1).sum(axis=0)]
            for result, expected in zip(got, want):
                # small integers (|x| <= 12, at most 2,500 terms): float64 sums are exact
                np.testing.assert_array_equal(np.asarray(result), expected, strict=True)
        assert la.cache_info().misses == 1
    finally:
        la.set_backend(previous)


@pytest.mark.parametrize("features", [4, 8])
def test_a_run_keeps_one_set_of_scratch_buffers_when_only_other_sizes_change(cpu, monkeypatch, features):
    """k-means' update at new counts: the run's temporaries (per-centre sums, shape (features,))
    do not depend on the counts, so their kept buffers are made once, not at every new count
    (8 features: a placeholder size of their own, the same at every call). Values stay NumPy's."""
    from lazyarr.backends import cpu as cpu_backend

    made = []
    original = cpu_backend._scratch_buffers
    monkeypatch.setattr(cpu_backend, "_scratch_buffers", lambda *args: made.append(args[2]) or original(*args))
    rng = np.random.default_rng(5)
    points = rng.standard_normal((3000, features)).astype(np.float32)
    lazy = la.asarray(points)
    for threshold in (0.0, 0.2, -0.3, 0.1, 0.05):
        masks = [points[:, axis] > threshold for axis in range(3)]
        result = la.stack([lazy[la.asarray(mask)].mean(axis=0) * 2 + 1 for mask in masks])
        expected = np.stack([points[mask].mean(axis=0) * 2 + 1 for mask in masks])
        # float32 means of ~1000-2000 terms in another order (float64 divide as NumPy): a few ULP
        np.testing.assert_allclose(np.asarray(result), expected, rtol=1e-5, atol=1e-5)
    assert len(made) <= 1 and len(set(made)) <= 1, made
