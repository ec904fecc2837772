"""Host memory for kernel outputs: cache-line aligned, and recycled once the program drops it.

Why recycle: a fresh allocation above glibc's mmap threshold (128 KiB at first) is mapped from
the OS, and the kernel faults it in and zero-fills it page by page on first touch; glibc's heap
returns large freed chunks to the OS too. Measured on a 2-core AVX2 box, pool on against off in
one process: an eager loop `y = sqrt(y * 0.5 + 1); y.eval()` on 64k float32 took 128 -> 26 µs a
step (57,601 page faults -> 0 over the run), on 4M float32 1,560 -> 850 µs; a jitted call on 8 KiB
7.1 -> 5.8 µs. NumPy pays the same faults (its heat stencil runs 4.4x slower with glibc's default
thresholds than with raised ones). A loop `x = f(x)` drops one output as it makes the next, so the
pool holds two buffers per size and faults no more. Below 64 KiB the pool saves finding the
alignment of a fresh buffer (`ndarray.ctypes.data` costs ~1.5 µs), done once per pooled buffer.

How a buffer is known to be free: the pool keeps a reference to each raw allocation; every
array made from it (the output, its views, NumPy arrays viewing it) refers to it too, so when
its reference count is the pool's alone, nothing can read or write it, and it is handed out
again. No hook runs when a program drops an array, and nothing is freed early: a buffer
anything still refers to is never reused. The pool holds at most `_BUDGET_BYTES` (least
recently used sizes are dropped first); `release()` (called by `la.clear_cache()`) empties it.
"""

from __future__ import annotations

import math
import os
import sys
import threading
from collections import OrderedDict

import numpy as np

ALIGNMENT = 64
_SMALL_BYTES = 1 << 12  # outputs of at most this many bytes come from NumPy's allocator
_BUDGET_BYTES = 1 << 28  # memory the pool may keep (256 MiB), in use or not
_LARGEST_RECYCLED_BYTES = _BUDGET_BYTES // 4
_PER_SIZE = 8  # buffers of one size the pool tracks


def _references_when_free() -> int:
    """What getrefcount says of a raw buffer only the pool refers to, read as `_recycled`
    reads it (from a tuple in a list, in a loop): measured, since interpreters count differently."""
    buffers = [(np.empty(1, np.uint8), 0)]
    for raw, _ in buffers:
        return sys.getrefcount(raw)
    raise AssertionError("unreachable")


_FREE_REFERENCES = _references_when_free()
# Reference counts are exact only with the GIL; a free-threaded interpreter allocates afresh.
_RECYCLING = getattr(sys, "_is_gil_enabled", lambda: True)()

_LOCK = threading.Lock()  # one thread at a time checks and takes a free buffer
# A child forked while another thread held the lock would wait for it forever.
os.register_at_fork(before=_LOCK.acquire, after_in_parent=_LOCK.release, after_in_child=_LOCK.release)
# byte size -> (raw buffer, offset of its first aligned byte), least recently used size first
_BY_SIZE: OrderedDict[int, list[tuple[np.ndarray, int]]] = OrderedDict()
_HELD = [0]  # bytes the pool refers to
_NDARRAY = np.ndarray


def kernel_output(shape, dtype: np.dtype) -> np.ndarray:
    """An uninitialized output buffer for a kernel. Up to `_SMALL_BYTES`: NumPy's allocator
    (aligning costs more than a small kernel runs). Larger: it starts on a 64-byte boundary, in
    memory the program has dropped when there is some of its size (see the module docstring).

    Too large for memory: MemoryError in NumPy's words, naming `shape` and `dtype` (not the
    byte buffer behind them): 'Unable to allocate 72.8 TiB for an array with shape
    (10000000000000,) and data type float64'.
    """
    nbytes = math.prod(shape) * dtype.itemsize  # not np.prod: ~2 µs of dispatch
    if nbytes <= _SMALL_BYTES:
        return np.empty(shape, dtype)
    if nbytes <= _LARGEST_RECYCLED_BYTES and _RECYCLING:
        raw, offset = _recycled(nbytes, shape, dtype)
    else:
        raw, offset = _allocate(nbytes, shape, dtype)
    return _NDARRAY(shape, dtype, raw, offset)


def output_allocator(shape, dtype: np.dtype):
    """What `kernel_output(shape, dtype)` amounts to for these, as a function of (shape, dtype):
    NumPy's allocator for small outputs, kernel_output itself for others (a plan made once
    per shapes skips the size test at every call)."""
    return np.empty if math.prod(shape) * dtype.itemsize <= _SMALL_BYTES else kernel_output


def release() -> None:
    """Forget every buffer the pool holds (those still in use live on with their arrays)."""
    with _LOCK:
        _BY_SIZE.clear()
        _HELD[0] = 0


def held_bytes() -> int:
    """Bytes of the buffers the pool refers to, in use or free."""
    return _HELD[0]


def _recycled(nbytes: int, shape, dtype) -> tuple[np.ndarray, int]:
    """A raw buffer of `nbytes` + ALIGNMENT bytes that nothing else refers to, and its offset."""
    with _LOCK:
        buffers = _BY_SIZE.get(nbytes)
        if buffers is not None:
            _BY_SIZE.move_to_end(nbytes)
            for raw, offset in buffers:
                if sys.getrefcount(raw) == _FREE_REFERENCES:
                    return raw, offset
    # Allocated outside the lock: allocating may collect garbage, and a finalizer may evaluate
    # arrays (and so come back here).
    try:
        entry = _allocate(nbytes, shape, dtype)
    except MemoryError:
        release()  # the pool's free buffers go back to the allocator; one more try
        entry = _allocate(nbytes, shape, dtype)
    with _LOCK:
        buffers = _BY_SIZE.get(nbytes)
        if buffers is None:
            buffers = _BY_SIZE[nbytes] = []
        elif len(buffers) >= _PER_SIZE:
            _HELD[0] -= buffers.pop(0)[0].nbytes  # the oldest: its arrays keep it while they live
        buffers.append(entry)
        _HELD[0] += entry[0].nbytes
        while _HELD[0] > _BUDGET_BYTES:  # forget the least recently used sizes' oldest buffers
            size, oldest = next(iter(_BY_SIZE.items()))
            _HELD[0] -= oldest.pop(0)[0].nbytes
            if not oldest:
                del _BY_SIZE[size]
    return entry


def _allocate(nbytes: int, shape, dtype) -> tuple[np.ndarray, int]:
    """A fresh raw buffer with room to start `nbytes` on a 64-byte boundary, and that offset."""
    try:
        raw = np.empty(nbytes + ALIGNMENT, dtype=np.uint8)
    except MemoryError:
        size, unit = float(nbytes), "bytes"
        for larger in ("KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
            if round(size) < 1024:  # as NumPy: a unit that still fits after rounding
                break
            size, unit = size / 1024, larger
        amount = f"{nbytes} bytes" if unit == "bytes" else f"{size:#.3g} {unit}"
        raise MemoryError(f"Unable to allocate {amount} for an array with shape {tuple(shape)} "
                          f"and data type {np.dtype(dtype)}") from None
    return raw, (-raw.ctypes.data) % ALIGNMENT


def _recycling_is_safe() -> bool:
    """Whether a buffer still referred to is seen as in use (checked once, at import): the
    reference count of a free buffer was measured in another function than `_recycled`, and an
    interpreter may count a function's references differently (borrowed local references)."""
    held = kernel_output((2 * _SMALL_BYTES,), np.dtype(np.uint8))
    other = kernel_output((2 * _SMALL_BYTES,), np.dtype(np.uint8))
    distinct = held.ctypes.data != other.ctypes.data
    del held, other
    release()
    return distinct


_RECYCLING = _RECYCLING and _recycling_is_safe()


# -- private buffers: may a holder write one in place? ------------------------------------------
def sole_reference(buffer: np.ndarray) -> bool:
    """Whether `buffer`'s memory has one reference outside this call, its holder's: no view, no
    NumPy array from `np.asarray`, no second holder, no other graph can see a write to it.

    Pass the holder's attribute itself (`sole_reference(node._bound)`), with no local name
    for the buffer in the caller. A buffer made by `kernel_output` views a raw allocation,
    which its own views refer to (NumPy points a view's base at the memory's owner) and the
    pool may hold (once). The counts of a private buffer are measured at import, through
    the same function (`_counts`), as interpreters count a call's references differently;
    where counts are not exact (free-threaded builds) the answer is always False."""
    held, viewed, raw = _counts(buffer)
    if held != _PRIVATE[0] or not _EXACT_COUNTS:
        return False
    if raw is None:
        return True
    if type(raw) is not _NDARRAY or raw.base is not None:
        return False  # a view of someone else's array (a NumPy array given to la.asarray)
    pooled = 0
    with _LOCK:
        for entry in _BY_SIZE.get(raw.nbytes - ALIGNMENT, ()):
            if entry[0] is raw:
                pooled = 1
                break
    return viewed == _PRIVATE[1] + pooled


def _counts(buffer: np.ndarray) -> tuple[int, int, np.ndarray | None]:
    """References to `buffer` and to the memory it views (0 when it owns its memory), and that memory."""
    base = buffer.base
    return sys.getrefcount(buffer), (sys.getrefcount(base) if base is not None else 0), base


def _counted_as_sole_reference_counts(buffer: np.ndarray) -> tuple[int, int, np.ndarray | None]:
    """`_counts` called as `sole_reference` calls it (one frame holding `buffer` between)."""
    return _counts(buffer)


class _Holder:
    """Holds a buffer in a slot, as a graph node holds its value (`node._bound`)."""

    __slots__ = ("_bound",)


def _private_counts() -> tuple[int, int]:
    """What `sole_reference` counts for a buffer held once, and for the raw memory such a buffer
    alone views: read through a slot, as callers pass it (`sole_reference(node._bound)`)."""
    holder = _Holder()
    holder._bound = np.empty(1)
    held = _counted_as_sole_reference_counts(holder._bound)[0]
    raw = np.empty(64, np.uint8)
    holder._bound = _NDARRAY((8,), np.float64, raw, 0)
    del raw
    return held, _counted_as_sole_reference_counts(holder._bound)[1]


_PRIVATE = _private_counts()
_EXACT_COUNTS = getattr(sys, "_is_gil_enabled", lambda: True)()
