"""The compile driver on the CPU backend: cache behaviour, fusion structure, explain, dumps."""

from __future__ import annotations

import logging
import re

import numpy as np
import pytest

import lazyarr as la
from lazyarr import _flags


def vectors(count, size=1000, seed=0):
    rng = np.random.default_rng(seed)
    values = [rng.standard_normal(size).astype(np.float32) for _ in range(count)]
    return values, [la.asarray(value) for value in values]


def test_explain_names_symbolic_sizes_instead_of_printing_placeholders(cpu_backend):
    (x, y, _), (lx, ly, _) = vectors(3, size=777)
    report = la.explain(la.exp(lx) * ly)
    if "s0" not in report.hlo_after:
        pytest.skip("this module kept concrete sizes")
    assert "f32[s0]" in report.hlo_after
    assert not re.search(r"\d{13,}", report.hlo_after), report.hlo_after  # no raw placeholder numbers
    assert "777" not in report.hlo_after  # one executable for every size: the size is not in it
    buffers = str(report).split("== buffer assignment ==")[1]
    assert "f32[s0]" in buffers and "size known at run time" in buffers  # no byte counts of placeholders
    assert not re.search(r"\d{13,}", buffers), buffers


def test_sum_of_fused_expression_is_one_kernel_without_temporaries(cpu_backend):
    (x, y, z), (lx, ly, lz) = vectors(3)
    report = la.explain(la.sum(lx + ly * lz))
    assert report.num_kernels == 1
    assignment = report.buffer_assignment
    assert [allocation.kind for allocation in assignment.allocations].count("temp") == 0
    assert "fusion" in report.hlo_after and "fused_computation" in str(report)
    # Float sums associate differently from NumPy's pairwise order: relative 1e-5 on 1000 terms.
    assert float(la.sum(lx + ly * lz)) == pytest.approx(float(np.sum(x + y * z)), rel=1e-5, abs=1e-4)


def test_softmax_compiles_to_at_most_three_kernels(cpu_backend):
    rng = np.random.default_rng(1)
    values = rng.standard_normal((64, 128)).astype(np.float32)
    x = la.asarray(values)
    shifted = x - x.max(axis=-1, keepdims=True)
    softmax = la.exp(shifted) / la.exp(shifted).sum(axis=-1, keepdims=True)
    # max; exp with its row sum (one multi-output kernel); the divide.
    assert la.explain(softmax).num_kernels <= 3
    expected = np.exp(values - values.max(-1, keepdims=True))
    expected /= expected.sum(-1, keepdims=True)
    np.testing.assert_allclose(np.asarray(softmax), expected, rtol=1e-5)  # exp: 4 ULP, sums reassociate


def test_same_graph_twice_compiles_once(cpu_backend):
    _, (x, y, _) = vectors(3)
    la.clear_cache()
    for _ in range(3):
        (la.tanh(x) * y + 1).eval()
    info = la.cache_info()
    assert (info.misses, info.hits) == (1, 2)


def test_new_python_scalars_reuse_the_executable(cpu_backend):
    values, (x, _, _) = vectors(3)
    la.clear_cache()
    results = [np.asarray(x * scale + shift) for scale, shift in ((0.25, 4.5), (0.75, -1.5), (1.5, 7.25))]
    assert la.cache_info().misses == 1
    np.testing.assert_array_equal(results[1], values[0] * np.float32(0.75) + np.float32(-1.5))


def test_explain_shows_refusals_with_reasons(cpu_backend):
    rng = np.random.default_rng(2)
    a = la.asarray(rng.standard_normal((16, 8)).astype(np.float32))
    b = la.asarray(rng.standard_normal((8, 4)).astype(np.float32))
    report = la.explain(la.maximum(a @ b + 1, 0))
    assert report.num_kernels >= 1
    assert "dot" in report.hlo_after
    text = str(report)
    assert "== HLO before optimization ==" in text and "== fusion ==" in text


def test_dump_flags_write_xla_named_files(cpu_backend, tmp_path, monkeypatch):
    monkeypatch.setattr(_flags, "FLAGS", _flags.parse_flags(f"--backend=cpu --dump_to={tmp_path} --dump_passes"))
    la.clear_cache()
    _, (x, y, _) = vectors(3, seed=5)
    (la.exp(x) - y).sum().eval()
    names = sorted(path.name for path in tmp_path.iterdir())
    for suffix in ("before_optimizations.txt", "after_optimizations.txt", "buffer_assignment.txt",
                   "ir-no-opt.ll", "ir-with-opt.ll"):
        assert any(name.endswith(f".main.{suffix}") and name.startswith("module_") for name in names), suffix
    assert any(".fusion.after.txt" in name for name in names)


@pytest.mark.parametrize("exponent", [2, 3, 4])
def test_small_constant_powers_become_multiplies_within_two_ulp(cpu_backend, exponent):
    rng = np.random.default_rng(exponent)
    values = (rng.standard_normal(1000) * 10).astype(np.float32)
    got = np.asarray(la.asarray(values) ** exponent)
    want = values.astype(np.float64) ** exponent
    # Two roundings of float32 multiplies (x*x*x): within 2 ULP of the exact power.
    assert np.all(np.abs(got - want) <= 2 * np.spacing(np.abs(want).astype(np.float32)))


def test_slow_compiles_are_logged_with_their_kernels_and_time(fresh_cpu_cache, monkeypatch, caplog):
    """Issue "compile once": a compile over SLOW_COMPILE_SECONDS says what it does at INFO."""
    from lazyarr import compile as driver

    monkeypatch.setattr(driver, "SLOW_COMPILE_SECONDS", 0.0)  # every compile counts as slow
    x = la.asarray(np.arange(8, dtype=np.float32))
    with caplog.at_level(logging.INFO, logger="lazyarr.compile"):
        (la.sin(x) * 3 + 1).eval()
    finished = [record.getMessage() for record in caplog.records if "compiled module" in record.getMessage()]
    assert len(finished) == 1
    assert "1 kernels compiled" in finished[0] and " s:" in finished[0]
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="lazyarr.compile"):
        (la.sin(x) * 3 + 1).eval()  # a cache hit compiles nothing and says nothing
    assert not caplog.records
