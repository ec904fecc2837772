"""Recycled output buffers (backends/host_buffers.py): memory comes back only when nothing refers to it.

The property that matters is safety: a buffer that any array, view or NumPy array still refers
to is never handed to another output. The hypothesis test below runs random programs of
evaluations that keep, view, export and drop results, and checks every kept value after every
step. The others pin that dropped memory is reused (what the pool is for) and that the pool
stays within its budget.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarr as la
from lazyarr.backends import host_buffers

pytestmark = pytest.mark.usefixtures("cpu_backend")
# Where the interpreter's reference counts cannot be trusted (free-threaded builds, or the
# import-time self-test failed) the pool is off: these tests of reuse do not apply there.
recycling = pytest.mark.skipif(not host_buffers._RECYCLING, reason="output recycling is off in this interpreter")

# Float32 element counts of outputs the pool recycles (64 KiB and up) and one it does not (400 B).
RECYCLED_COUNTS = (1 << 14, 3 << 13, 1 << 15)
HEAP_COUNT = 100


def _output(count: int, value: float) -> la.Array:
    """A freshly evaluated output of `count` float32 elements, all `value` (a kernel writes it)."""
    return (la.zeros(count, dtype=la.float32) + np.float32(value)).eval()


@recycling
def test_a_dropped_output_is_reused_by_the_next():
    first = _output(1 << 15, 1.0)
    address = np.asarray(first).ctypes.data
    del first
    second = _output(1 << 15, 2.0)
    assert np.asarray(second).ctypes.data == address
    np.testing.assert_array_equal(np.asarray(second), np.full(1 << 15, 2.0, np.float32))


@recycling
def test_a_loop_keeps_two_buffers_per_size():
    x = _output(1 << 15, 0.0)
    for step in range(30):
        x = (x + np.float32(1)).eval()
    np.testing.assert_array_equal(np.asarray(x), np.full(1 << 15, 30.0, np.float32))
    addresses = set()
    for step in range(10):
        x = (x + np.float32(1)).eval()
        addresses.add(np.asarray(x).ctypes.data)
    assert len(addresses) <= 2  # x = f(x): the new output is made while the old one lives


def test_outputs_are_aligned_to_cache_lines():
    for count in (*RECYCLED_COUNTS, HEAP_COUNT * 1000):
        assert np.asarray(_output(count, 1.0)).ctypes.data % host_buffers.ALIGNMENT == 0


# Ways a program can go on referring to an output's memory.
HOLDERS = {
    "array": lambda array: array,
    "numpy": lambda array: np.asarray(array),
    "numpy slice": lambda array: np.asarray(array)[5:-3],
    "numpy base": lambda array: np.asarray(array).base,
    "memoryview": lambda array: memoryview(np.asarray(array)),
    "lazy slice": lambda array: array[7:],
}


def _value_of(holder, count: int) -> np.ndarray:
    if isinstance(holder, la.Array):
        return np.asarray(holder)
    if isinstance(holder, memoryview):
        return np.frombuffer(holder, dtype=np.float32)
    if holder.dtype == np.uint8:  # a raw buffer: the output starts at its first aligned byte
        offset = (-holder.ctypes.data) % host_buffers.ALIGNMENT
        return holder[offset:offset + 4 * count].view(np.float32)
    return np.asarray(holder)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from((*RECYCLED_COUNTS, HEAP_COUNT)), st.sampled_from(sorted(HOLDERS)),
                          st.booleans(), st.integers(0, 5)), min_size=1, max_size=25))
def test_memory_anything_refers_to_is_never_reused(steps):
    kept: list[tuple[object, np.ndarray]] = []  # (holder, the value it must still read)
    for index, (count, holder_kind, keep, drop_at) in enumerate(steps):
        output = _output(count, float(index + 1))
        holder = HOLDERS[holder_kind](output)
        expected = np.full(count, index + 1, np.float32)
        if holder_kind == "numpy slice":
            expected = expected[5:-3]
        elif holder_kind == "lazy slice":
            expected = expected[7:]
        del output
        if keep:
            kept.append((holder, expected))
        if kept and drop_at < len(kept) and drop_at % 2:
            del kept[drop_at]  # freed at once: nothing here makes reference cycles
        for held, want in kept:
            np.testing.assert_array_equal(_value_of(held, want.size), want)


@recycling
def test_the_pool_stays_within_its_budget(monkeypatch):
    host_buffers.release()
    monkeypatch.setattr(host_buffers, "_BUDGET_BYTES", 1 << 19)  # 512 KiB: a few buffers
    kept = []
    for index in range(40):
        count = RECYCLED_COUNTS[index % len(RECYCLED_COUNTS)] + 16 * index  # every size new
        kept.append(_output(count, float(index)))
        assert host_buffers.held_bytes() <= 1 << 19
    for index, array in enumerate(kept):  # forgotten buffers live on with their arrays
        assert float(np.asarray(array)[-1]) == float(index)


@recycling
def test_clear_cache_releases_the_pool():
    kept = _output(1 << 15, 1.0)
    assert host_buffers.held_bytes() > 0
    la.clear_cache()
    assert host_buffers.held_bytes() == 0
    np.testing.assert_array_equal(np.asarray(kept), np.ones(1 << 15, np.float32))


def test_threads_never_share_a_buffer():
    errors: list[str] = []

    def loop(offset: float):
        for step in range(40):
            values = [_output(RECYCLED_COUNTS[step % 3], offset + step + copy) for copy in range(3)]
            for copy, value in enumerate(values):
                got = np.asarray(value)
                if not (got == np.float32(offset + step + copy)).all():
                    errors.append(f"thread {offset}: step {step} copy {copy} read {got[0]}")

    threads = [threading.Thread(target=loop, args=(1000.0 * number,)) for number in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


class _Node:
    """Holds a buffer in a slot, as a graph node holds its value."""

    __slots__ = ("_bound",)


def _private(node: _Node) -> bool:
    # (not inside an `assert`: pytest's rewriting keeps the call's argument, one more reference)
    return host_buffers.sole_reference(node._bound)


@pytest.mark.parametrize("nbytes", [64, 2 * host_buffers._SMALL_BYTES], ids=["numpy's", "pooled"])
def test_sole_reference_sees_every_other_holder(nbytes):
    """A write through the holder is invisible to others only when nothing else refers to the
    memory: not a view (whose base NumPy points at the memory's owner), not a second holder."""
    node = _Node()
    node._bound = host_buffers.kernel_output((nbytes // 8,), np.dtype(np.float64))
    assert _private(node)
    view = node._bound[1:]
    assert not _private(node)
    del view
    assert _private(node)
    other = _Node()
    other._bound = node._bound
    assert not _private(node)
    del other
    read_only_view = node._bound.view()
    read_only_view.setflags(write=False)
    assert not _private(node)
    del read_only_view
    assert _private(node)


def test_sole_reference_refuses_someone_elses_memory():
    owner = np.zeros(10)
    node = _Node()
    node._bound = owner[2:]  # a view of the caller's array: the caller still holds `owner`
    assert not _private(node)
