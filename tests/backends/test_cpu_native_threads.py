"""Kernels split over OpenMP's threads by the native dispatcher (llvm/threads.py).

A split kernel computes each output element on one thread, with the same code as the serial
kernel, so its results are the serial kernel's bit for bit, whatever the extent (not a
multiple of the team, smaller than it, one row) and whatever the thread count. A second
thread dispatching while a team runs computes on its own thread; forked children run serially
(test_cpu_processes_and_threads.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lazyarr as la
from lazyarr.backends import cpu
from lazyarr.backends.llvm import dispatch, threads

pytestmark = [
    pytest.mark.usefixtures("cpu_backend"),
    pytest.mark.skipif(not dispatch.native_threads(), reason="no OpenMP runtime found (the Python pool runs splits)"),
]


def _programs(x, y):
    """Elementwise with a math call, a row reduction beside its loop root (multi-output), a
    full reduction computed whole by the call starting at 0, a transpose, and a scan."""
    scaled = la.exp(x) * 2 + y
    return [scaled, scaled.sum(axis=-1), (x * y).sum(), x.T + 1, la.cumsum(x, axis=-1)]


def _evaluate_with(work, monkeypatch, values):
    monkeypatch.setattr(cpu, "_NATIVE_PARALLEL_WORK", work)
    la.clear_cache()  # the split is decided when a kernel is compiled or first run at a size
    arrays = [la.asarray(value) for value in values]
    return [np.asarray(result) for result in _programs(*arrays)]


# (monkeypatch: each example sets the threshold it needs)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.integers(0, 37), columns=st.integers(1, 23), dtype=st.sampled_from([np.float32, np.float64]),
       seed=st.integers(0, 2**16))
def test_split_kernels_equal_serial_kernels_bit_for_bit(monkeypatch, rows, columns, dtype, seed):
    rng = np.random.default_rng(seed)
    values = [rng.standard_normal((rows, columns)).astype(dtype) for _ in range(2)]
    split = _evaluate_with(1, monkeypatch, values)  # every kernel with extent > 1 splits
    serial = _evaluate_with(1 << 62, monkeypatch, values)
    for got, want in zip(split, serial):
        np.testing.assert_array_equal(got, want)
    x, y = values
    # exp within 2 ULP; the sums add at most 23 (or 37 * 23) terms of magnitude below ~20.
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(split[0], np.exp(x) * 2 + y, rtol=tolerance, atol=tolerance)
    np.testing.assert_allclose(split[1], (np.exp(x) * 2 + y).sum(axis=-1), rtol=tolerance, atol=50 * tolerance)
    np.testing.assert_allclose(split[2], (x * y).sum(), rtol=tolerance, atol=1000 * tolerance)
    np.testing.assert_array_equal(split[3], x.T + 1)
    np.testing.assert_allclose(split[4], np.cumsum(x, axis=-1), rtol=tolerance, atol=50 * tolerance)


def test_threads_dispatching_at_once_each_get_their_results(monkeypatch):
    """One team runs at a time; a thread finding it busy runs its kernel alone, and is right."""
    monkeypatch.setattr(cpu, "_NATIVE_PARALLEL_WORK", 1)
    la.clear_cache()
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal((257, 65)) for _ in range(4)]
    errors: list[BaseException] = []
    start = threading.Barrier(len(inputs))

    def work(index):
        try:
            start.wait()
            x = la.asarray(inputs[index])
            for step in range(30):
                got = np.asarray(la.sin(x) * (index + step) + x.sum(axis=1, keepdims=True))
                want = np.sin(inputs[index]) * (index + step) + inputs[index].sum(axis=1, keepdims=True)
                # sin within 1 ULP; row sums of 65 terms of magnitude below 4.
                np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-12)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    workers = [threading.Thread(target=work, args=(index,)) for index in range(len(inputs))]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert not errors, errors


_CHILD = """
import sys
import numpy as np
import lazyarr as la
from lazyarr.backends import cpu
from lazyarr.backends.llvm import threads
cpu._NATIVE_PARALLEL_WORK = 1
x = la.asarray(np.random.default_rng(0).standard_normal((1001, 333)).astype(np.float32))
result = la.exp(x).sum(axis=1) + (x * x).sum()
sys.stdout.write(str(threads.team_size()) + " " + np.asarray(result).tobytes().hex())
"""


def test_results_do_not_depend_on_the_thread_count():
    outputs = {}
    for count in ("1", "3"):
        environment = {**os.environ, "OMP_NUM_THREADS": count, "LAZYARR_FLAGS": "--persistent_cache=false"}
        completed = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, check=True,
                                   env=environment, timeout=120)
        team, digest = completed.stdout.split()
        assert team == count
        outputs[count] = digest
    assert outputs["1"] == outputs["3"]


def test_the_runtime_is_found_and_reports_its_team():
    assert threads.runtime() is not None
    assert threads.team_size() >= 1


def test_the_short_spin_is_set_for_loading_only(monkeypatch):
    """GOMP_SPINCOUNT is set while the runtime loads (it reads its environment then), unless
    the user chose a policy, and the environment is left as it was."""
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    with threads._short_spin():
        assert os.environ["GOMP_SPINCOUNT"] == threads._SPIN_COUNT
    assert "GOMP_SPINCOUNT" not in os.environ
    monkeypatch.setenv("OMP_WAIT_POLICY", "active")
    with threads._short_spin():
        assert "GOMP_SPINCOUNT" not in os.environ


def test_a_kernel_gets_one_thread_per_half_threshold_of_work(monkeypatch):
    """Just above the threshold, 2 threads; more work, more threads, up to the team and the
    extent; a team of 1 (OMP_NUM_THREADS=1) runs everything on the calling thread."""
    threshold = cpu._NATIVE_PARALLEL_WORK
    monkeypatch.setattr(threads, "team_size", lambda: 16)
    assert cpu._parallel(1000, [(threshold - 1,)], 1) == 0
    assert cpu._parallel(1000, [(threshold,)], 1) == 2
    assert cpu._parallel(1000, [(threshold,)], 4) == 8
    assert cpu._parallel(1000, [(threshold, 100)], 1) == 16
    assert cpu._parallel(3, [(threshold, 100)], 1) == 3
    assert cpu._parallel(1, [(threshold, 100)], 1) == 0
    monkeypatch.setattr(threads, "team_size", lambda: 1)
    assert cpu._parallel(1000, [(threshold, 100)], 1) == 0
