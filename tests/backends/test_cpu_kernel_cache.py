"""The CPU backend's kernel cache: a fused kernel is compiled once, whichever module holds it.

A kernel's fingerprint is its fused computation's parameter and output tuples (instructions
are interned), so a Python loop's unrolled steps, or the same step in a new graph, link the
compiled function instead of going through LLVM again. Counted by `la.cache_info()`.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazyarr as la
from lazyarr.passes.fusion_policy import FusionPolicy

pytestmark = pytest.mark.usefixtures("fresh_cpu_cache")


def test_a_long_unrolled_chain_compiles_each_distinct_kernel_once(pending_depth):
    pending_depth(0)  # one module of the whole chain (the loop bound off)
    values = np.linspace(-1, 1, 7)
    lazy, expected = la.asarray(values), values
    steps = 5 * FusionPolicy().max_instructions  # ~10 kernels of the policy's size
    for _ in range(steps):
        lazy = lazy * 0.5 + 0.25
        expected = expected * 0.5 + 0.25
    # Each step is exact or rounds once and halves earlier errors: within an ULP of NumPy.
    np.testing.assert_allclose(np.asarray(lazy), expected, rtol=1e-15)
    info = la.cache_info()
    kernels = info.kernels_compiled + info.kernels_reused
    assert kernels >= 9
    # The full-size kernels repeat one computation (or a few, by where the cuts fall);
    # the chain's two ends differ.
    assert info.kernels_compiled <= kernels // 2, info


def test_a_kernel_seen_in_one_module_is_reused_by_another():
    x = la.asarray(np.arange(10.0))
    first = la.exp(x) * 3 - 1
    np.testing.assert_allclose(np.asarray(first), np.exp(np.arange(10.0)) * 3 - 1, rtol=1e-15)
    compiled = la.cache_info().kernels_compiled
    # A new module: the same elementwise kernel (on another buffer of the same size) beside
    # a reduction of another array, so the module misses and the kernel hits.
    y = la.asarray(np.arange(10.0) + 1)
    second, total = la.eval(la.exp(y) * 3 - 1, la.asarray(np.ones(6)).sum())  # 6: a placeholder
    np.testing.assert_allclose(np.asarray(second), np.exp(np.arange(10.0) + 1) * 3 - 1, rtol=1e-15)
    assert float(total) == 6.0
    info = la.cache_info()
    assert info.misses == 2 and info.kernels_reused >= 1
    # Only the sum's kernels are new: its partial sums and their combination (split_reductions.py's
    # splits_into_partials: the size is a placeholder, so it may be large at run time).
    assert info.kernels_compiled == compiled + 2


def test_clear_cache_forgets_kernels():
    x = la.asarray(np.arange(5.0))
    np.asarray(la.cos(x) + 2)
    assert la.cache_info().kernels_compiled >= 1
    la.clear_cache()
    assert la.cache_info().kernels_compiled == 0
    np.testing.assert_allclose(np.asarray(la.cos(x) + 2), np.cos(np.arange(5.0)) + 2, rtol=1e-15)
    assert la.cache_info().kernels_compiled >= 1  # compiled again, not found


@pytest.mark.parametrize("steps", [12, 50])
def test_unrolled_steps_that_reduce_rows_compile_a_few_kernels_not_one_per_stretch(steps):
    """`u + 0.1 * (tanh(u) * 0.5 - u.mean(1, keepdims=True))` under la.jit, unrolled: row
    kernels hold two reductions at most (FusionPolicy.max_row_reductions), so the steps become
    copies of one kernel, compiled once, instead of a kernel of a stage per step (12 steps: one
    kernel that took 1.1 s to compile; 50 steps: 5 such kernels, 10 s)."""
    values = np.random.default_rng(4).random((64, 96)).astype(np.float32)

    def program(xp, u):
        for _ in range(steps):
            u = u + 0.1 * (xp.tanh(u) * 0.5 - u.mean(axis=1, keepdims=True))
        return u

    result = la.jit(lambda u: program(la, u))(la.asarray(values))
    # float32 steps, each within a few ULP of NumPy's (tanh within 4 ULP, row means of 96 terms
    # in another order); the errors do not grow: each step shrinks its input's deviation.
    np.testing.assert_allclose(np.asarray(result), program(np, values), rtol=2e-5, atol=2e-6)
    info = la.cache_info()
    assert info.kernels_compiled <= 3 and info.kernels_compiled + info.kernels_reused >= steps // 3


def test_a_row_kernel_takes_no_second_reduction_of_a_next_step():
    """A row kernel computes in each later phase again what its earlier phases reduced, so a
    second reduction joins unless it reduces a next step's values (expensive work on another
    reduction's result: a loop's mean of the step before's tanh chain); softmax (with a
    temperature too), layernorm and RMSNorm stay one kernel. The loop's kernels hold two steps,
    not three (each computing tanh six times for three steps; measured: 50 steps of 2048x2048
    ran 1.25-1.4x faster, of 256x512 1.5x, whose first call took 0.38-0.51 s, not 0.60-0.70)."""
    values = np.random.default_rng(5).random((64, 96)).astype(np.float32)

    def steps(u):
        for _ in range(6):
            u = u + 0.1 * (la.tanh(u) * 0.5 - u.mean(axis=1, keepdims=True))
        return u

    report = la.jit(steps).explain(values)
    kernels = report.hlo_after.split("fused_computation")[1:]
    assert kernels and max(kernel.count(" tanh(") for kernel in kernels) == 2, report.hlo_after
    assert any("a second reduction of the row" in decision.reason for *_, decision in report.fusion_decisions)
    x = la.asarray(values)

    def softmax(z):
        exponentials = la.exp(z - z.max(axis=1, keepdims=True))
        return exponentials / exponentials.sum(axis=1, keepdims=True)

    centered = x - x.mean(axis=1, keepdims=True)
    for name, one_kernel in [
        ("softmax", softmax(x)),
        ("softmax with a temperature (a division before the max)", softmax(x / 0.7)),
        ("softmax of sin(x)", softmax(la.sin(x))),
        ("log-softmax", x - x.max(axis=1, keepdims=True) - la.log(la.exp(x - x.max(axis=1, keepdims=True)).sum(
            axis=1, keepdims=True))),
        ("layernorm", centered / la.sqrt(x.var(axis=1, keepdims=True) + 1e-5)),
        ("layernorm by squared deviations", centered / la.sqrt((centered**2).mean(axis=1, keepdims=True) + 1e-5)),
        ("RMSNorm", x / la.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6)),
    ]:
        assert la.explain(one_kernel).num_kernels == 1, name
