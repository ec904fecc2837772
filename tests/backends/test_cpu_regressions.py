"""Regressions of the CPU backend found by running the frontend suite on it, held to NumPy.

Each test builds the failing case through the public API on the CPU backend. Integer and
exact float results must be bit-identical; the one float sum is of values whose partial sums
are all exact, so reassociation cannot change it.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lazyarr as la

pytestmark = pytest.mark.usefixtures("cpu_backend")  # tests/conftest.py


def assert_same(actual, expected):
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    values = np.asarray(actual)
    np.testing.assert_array_equal(values, expected, strict=True)
    if values.dtype.kind == "f":  # assert_array_equal takes -0.0 == 0.0; signs must agree too
        np.testing.assert_array_equal(np.signbit(values), np.signbit(expected))


@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.int32])
def test_inlined_constant_of_several_elements_reads_every_element(dtype):
    # arange of length > 2 is iota * step + constant([start, start + step]) slices: a fused
    # two-element constant, whose elements all used to read as the first one.
    assert_same(la.arange(0, 1, 0.1, dtype=dtype) if dtype != np.int32 else la.arange(3, 40, 3),
                np.arange(0, 1, 0.1, dtype=dtype) if dtype != np.int32 else np.arange(3, 40, 3))


@pytest.mark.parametrize("dtype", [np.bool_, np.float64, np.int8])
def test_zero_dimensional_host_and_parameter_values_keep_shape(dtype):
    # np.ascontiguousarray turned 0-d arrays into shape (1,).
    value = np.array(1, dtype=dtype)
    assert_same(la.roll(la.asarray(value), 0), np.roll(value, 0))
    data = np.array([False])
    assert_same(la.asarray(data)[la.asarray(np.array(0))], data[np.array(0)])


@pytest.mark.parametrize("shape", [(50, 60), (60, 50)])
@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("sum_first", [True, False])
def test_multi_output_kernel_with_outputs_of_different_shapes(shape, axis, sum_first):
    # A reduction and a loop root over its operand share a kernel; each output used to loop
    # over the first output's first dimension (rows missed, or written out of bounds).
    value = np.arange(np.prod(shape), dtype=np.int64).reshape(shape)
    lazy = la.asarray(value)
    if sum_first:
        total, doubled = la.eval(lazy.sum(axis=axis), lazy * 2)
    else:
        doubled, total = la.eval(lazy * 2, lazy.sum(axis=axis))
    assert_same(total, value.sum(axis=axis))
    assert_same(doubled, value * 2)


def test_multi_output_kernel_split_over_threads(thread_pool_kernels):
    # Run on the thread pool: a whole-array sum beside a loop root.
    value = np.arange(600 * 500, dtype=np.float64).reshape(600, 500) % 7  # exact partial sums
    lazy = la.asarray(value)
    total, doubled = la.eval(lazy.sum(), lazy * 2)
    assert_same(total, value.sum())
    assert_same(doubled, value * 2)


@pytest.mark.parametrize("dtype", [np.bool_, np.int16, np.float32])
def test_reduction_over_no_dimensions_copies_elements(dtype):
    # reduce with dimensions={} (nanmean of a 0-d array) used to give the identity.
    value = np.array(True).astype(dtype)
    assert_same(la.nanmean(la.asarray(value)), np.nanmean(value))
    matrix = np.arange(6).reshape(2, 3).astype(dtype)
    assert_same(la.sum(la.asarray(matrix), axis=()), np.sum(matrix, axis=()))


def test_float_sum_of_negative_zeros_is_positive_zero():
    # NumPy's sum starts from +0.0; the accumulator's 'nsz' flag let LLVM drop that start.
    for value in (np.array([-0.0]), np.full(1000, -0.0), np.full((3, 40), -0.0, np.float32)):
        assert_same(la.sum(la.asarray(value)), np.sum(value))


def test_empty_operands_of_pad_and_concatenate_are_never_read(cpu_backend):
    empty = np.zeros((0, 3), np.float32)
    full = np.arange(6, dtype=np.float32).reshape(2, 3)
    joined = la.concatenate([la.asarray(empty), la.asarray(full)]) * 2
    np.testing.assert_array_equal(np.asarray(joined), np.concatenate([empty, full]) * 2)
    padded = la.pad(la.asarray(empty), ((1, 1), (0, 0)), constant_values=5.0) + 1
    np.testing.assert_array_equal(np.asarray(padded), np.pad(empty, ((1, 1), (0, 0)), constant_values=5.0) + 1)


_COMPILE_IN_A_CHILD = """
import sys, numpy as np
from lazyarr.compile import compile_module
from lazyarr.hlo import evaluate, text
source = open(sys.argv[1]).read()
module = text.parse(source)
arguments = [np.linspace(-3, 3, p.size).reshape(p.shape).astype(p.dtype) for p in module.entry.parameters]
got = compile_module(module, "cpu").run(arguments)
want = evaluate(text.parse(source).entry, arguments)
assert all(np.array_equal(a, b) for a, b in zip(got, want)), (got, want)
"""

_INVARIANT_MIN = """HloModule main

ENTRY main {
  p0 = f32[1,7] parameter(0)
  b = f32[3,1,7] broadcast(p0), dimensions={1,2}, shape={3,1,7}
  n = f32[3,1,7] negate(b)
  ROOT r = f32[1] reduce(n), dimensions={0,2}, kind=min
}
"""


@pytest.mark.parametrize("case", ["data/optimize_hang.hlo", "invariant min"])
def test_reductions_independent_of_the_output_index_compile_quickly(case, tmp_path):
    """A min over values that do not depend on the output index used to make LLVM's loop
    vectorizer run for minutes (exponential in the unrolled chain). A child process with a
    time limit turns a regression into a failure instead of a hung suite."""
    import pathlib
    import subprocess
    import sys

    path = pathlib.Path(__file__).parent / case
    if case == "invariant min":
        path = tmp_path / "invariant_min.hlo"
        path.write_text(_INVARIANT_MIN)
    # 60 s: compiling these takes well under a second; a regression takes minutes.
    subprocess.run([sys.executable, "-c", _COMPILE_IN_A_CHILD, str(path)], check=True, timeout=60)


def test_kernels_declare_their_buffers_disjoint_so_loops_need_no_overlap_checks():
    # Every buffer access carries alias-scope metadata (buffer_access.buffer_alias_scopes): without
    # it LLVM guards each vectorized loop with run-time overlap checks and a scalar copy of the
    # loop, doubling the code to optimize and emit (~40 % of the compile time of small kernels).
    from lazyarr.backends.llvm.target import host_target_machine, optimize, parse_module

    la.clear_cache()
    x, y = la.asarray(np.linspace(-1, 1, 1000, dtype=np.float32)), la.asarray(np.ones(1000, np.float32))
    report = la.explain(la.exp(x) * y + x, (x - y).sum())
    assert "!alias.scope" in report.llvm_ir and "!noalias" in report.llvm_ir
    module = parse_module(report.llvm_ir)
    optimize(module, host_target_machine())
    optimized = str(module)
    assert "vector.body" in optimized  # still vectorized
    assert "memcheck" not in optimized
    # The same buffer passed twice (read only) is fine: scopes only promise that writes and
    # reads never overlap, and outputs are fresh.
    assert_same(x * x + x, np.asarray(x) * np.asarray(x) + np.asarray(x))


def test_a_kernel_of_many_sines_still_vectorizes(pending_depth):
    # A float32 sine reads its large-argument table at 4 pointers; past 250 pointers in a loop
    # LLVM's alias-set tracker saturated (every access may alias every other), the vectorizer
    # found no bounds for run-time checks and left the loop scalar: 63 sines ran 6x slower than
    # 62 (target.py raises the threshold).
    from lazyarr.backends.llvm.target import host_target_machine, optimize, parse_module

    pending_depth(0)  # one graph of all the steps, one kernel
    values = np.linspace(-3, 3, 1000, dtype=np.float32)
    x, expected = la.asarray(values), values
    for _ in range(70):
        x = la.sin(x) * 0.5 + 0.1
        expected = np.sin(expected) * np.float32(0.5) + np.float32(0.1)
    report = la.explain(x)
    assert report.llvm_ir.count("lazyarr_two_over_pi_table\", i64 0") >= 252  # past the old threshold
    module = parse_module(report.llvm_ir)
    optimize(module, host_target_machine())
    assert "vector.body" in str(module)
    # float32 sine within 1 ULP per step, 70 contracting steps (|d/dx| <= 0.5): 1e-6 absolute.
    np.testing.assert_allclose(np.asarray(x), expected, rtol=0, atol=1e-6)


@given(size=st.integers(2, 300), fill=st.sampled_from([0, 1, 2.5]), kind=st.sampled_from(["sum", "all", "any", "max"]))
def test_reductions_of_arrays_made_without_inputs_read_their_sizes(size, fill, kind):
    # sum(ones(n)) has no parameter: only the fused broadcast inside the kernel has the size n,
    # a placeholder read from the run's size vector. Native dispatch ran such kernels with an
    # empty size vector (an empty loop: sum 0, all(ones(n) == 0) True; scikit-learn's
    # `xp.all(sample_weight == 0)` check then refused every default weight).
    made, expected = la.full(size, fill), np.full(size, fill)
    if kind in ("all", "any"):
        made, expected = made == 0, expected == 0
    assert_same(getattr(la, kind)(made), getattr(np, kind)(expected))
    assert_same(la.sum(la.ones((3, size)), axis=1), np.ones((3, size)).sum(axis=1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("axis", [None, 0, 1])
@given(data=st.data())
def test_float_max_min_reductions_are_ieee_maximum_minimum(dtype, axis, data):
    # float32/float64 max/min reductions combine with llvm.maximum/llvm.minimum (LLVM vectorizes
    # them; a select chain that propagates NaN it did not): NaN wins, +0.0 is above -0.0 (README,
    # "Differences from NumPy": NumPy's SIMD loops keep whichever zero came last).
    shape = data.draw(st.tuples(st.integers(1, 9), st.integers(1, 70)))
    values = st.sampled_from([0.0, -0.0, np.nan, -np.inf, np.inf, 1.5, -2.0])
    x = np.array(data.draw(st.lists(values, min_size=shape[0] * shape[1], max_size=shape[0] * shape[1])),
                 dtype).reshape(shape)
    lazy = la.asarray(x)
    for name in ("max", "min"):
        expected = getattr(np, name)(x, axis=axis)
        zeros = expected == 0
        # The sign NumPy cannot promise: +0.0 for max wherever a +0.0 took part, -0.0 for min.
        sign_source = (x == 0) & ~np.signbit(x) if name == "max" else (x == 0) & np.signbit(x)
        has_sign = sign_source.any(axis=axis)
        expected = np.where(zeros & has_sign, 0.0 if name == "max" else -0.0, expected).astype(dtype)
        assert_same(getattr(lazy, name)(axis=axis), expected)
