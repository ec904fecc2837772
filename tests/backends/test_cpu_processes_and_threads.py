"""The CPU backend across fork and threads: no hang in a forked child, no race in compiles.

After the thread pool had run, a forked child handed work to the parent's pool, whose
threads the child does not have, and waited forever. Concurrent first compiles could raise
KeyError from llvmlite's lazily filled tables.
"""

from __future__ import annotations

import multiprocessing
import sys
import threading

import numpy as np
import pytest

import lazyarr as la

_LARGE = (400, 1000)


pytestmark = pytest.mark.usefixtures("cpu_backend")


def _child_evaluates(data, queue):
    x = la.asarray(data)
    queue.put(float(np.asarray(la.exp(x) * 2).sum()) - float((np.exp(data) * 2).sum()))


@pytest.mark.skipif(sys.platform == "win32" or "fork" not in multiprocessing.get_all_start_methods(),
                    reason="needs the fork start method")
def test_forked_child_runs_large_kernels_after_the_pool_has_run(thread_pool_kernels):
    data = np.random.default_rng(0).random(_LARGE)
    x = la.asarray(data)
    np.testing.assert_allclose(np.asarray(la.exp(x)), np.exp(data), rtol=1e-15)  # the pool has run
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_child_evaluates, args=(data, queue))
    child.start()
    child.join(timeout=60)
    if child.is_alive():
        child.kill()
        pytest.fail("the forked child hung evaluating a parallel kernel")
    assert child.exitcode == 0
    # exp within 1 ULP each; the two sums add 4e5 terms of ~5 in different orders.
    assert abs(queue.get(timeout=5)) < 1e-6 * data.size


def test_concurrent_first_compiles_and_runs_agree_with_numpy():
    la.clear_cache()
    rng = np.random.default_rng(1)
    inputs = [rng.random(17 + thread) for thread in range(6)]
    errors: list[BaseException] = []
    start = threading.Barrier(len(inputs))

    def work(thread: int):
        try:
            start.wait()
            value = inputs[thread]
            for step in range(12):  # distinct graphs per thread and step: every one compiles
                graph = la.asarray(value)
                for _ in range(step % 4 + 1):
                    graph = la.sin(graph) * (thread + 2) + step
                want = value
                for _ in range(step % 4 + 1):
                    want = np.sin(want) * (thread + 2) + step
                # sin within 1 ULP per step; a few chained steps of magnitude <= 40.
                np.testing.assert_allclose(np.asarray(graph), want, rtol=1e-13, atol=1e-13)
        except BaseException as error:  # noqa: BLE001 - reported below with the thread
            errors.append(error)

    threads = [threading.Thread(target=work, args=(index,)) for index in range(len(inputs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
