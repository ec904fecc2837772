"""What a program's loop compiles: masks of new counts and new index values reuse one
executable, a mask's computed operand is evaluated once for several masks, and a step
evaluated in every iteration compiles in the first one only. Results are held to NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import lazyarr as la

pytestmark = pytest.mark.usefixtures("fresh_cpu_cache")


def test_masks_of_new_counts_reuse_one_executable():
    rng = np.random.default_rng(0)
    values = rng.standard_normal((300, 4)).astype(np.float32)
    points = la.asarray(values)
    misses = []
    for threshold in (-1.0, -0.3, 0.0, 0.4, 1.2):
        mask = values[:, 0] > threshold  # a NumPy mask: its count and positions change
        got = np.asarray(points[mask].mean(0))
        # float32 means of <= 300 values: a few ULPs of reassociation.
        np.testing.assert_allclose(got, values[mask].mean(0), rtol=1e-5, atol=1e-6)
        misses.append(la.cache_info().misses)
    assert misses[-1] == misses[0], misses  # the first mask compiled; the others hit


def test_several_masks_of_one_lazy_array_compute_it_once():
    rng = np.random.default_rng(1)
    data = rng.standard_normal((500, 3)).astype(np.float32)
    centres = rng.standard_normal((4, 3)).astype(np.float32)
    points = la.asarray(data)
    distances = ((points[:, None, :] - la.asarray(centres)[None, :, :]) ** 2).sum(-1)
    labels = distances.argmin(1)
    expected_labels = ((data[:, None, :] - centres[None, :, :]) ** 2).sum(-1).argmin(1)
    means = [np.asarray(points[labels == k].mean(0)) for k in range(4)]
    assert labels.is_evaluated  # computed with the first mask, read from memory by the others
    for k, mean in enumerate(means):
        selected = data[expected_labels == k]
        np.testing.assert_allclose(mean, selected.mean(0) if len(selected) else np.nan, rtol=1e-5, atol=1e-6)


def test_a_loop_evaluating_its_step_each_iteration_compiles_once():
    values = np.linspace(0, 1, 1000, dtype=np.float32)
    state, expected = la.asarray(values), values
    counts = []
    for _ in range(6):
        state = (la.sin(state) * 0.9 + 0.05).eval()
        expected = np.sin(expected) * np.float32(0.9) + np.float32(0.05)
        counts.append((la.cache_info().misses, la.cache_info().kernels_compiled))
    assert counts[-1] == counts[0], counts
    # float32 sin within a few ULPs per step, contracting: within 1e-6 absolute.
    np.testing.assert_allclose(np.asarray(state), expected, rtol=0, atol=1e-6)
