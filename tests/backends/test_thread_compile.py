"""Kernels compiled on several threads of the process (llvm/thread_compile.py) are the kernels
`target.compile_object` makes, byte for byte, with its errors, whatever else runs meanwhile."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import lazyarr as la
from lazyarr.backends.llvm import target, thread_compile
from tests.concurrency import run_in_threads

pytestmark = pytest.mark.skipif(not thread_compile.available(), reason="this llvmlite's calls cannot run unlocked")


def kernel_texts() -> list[str]:
    """LLVM IR of kernels of several kinds (row reductions, inline math, scans, arg reductions,
    float64 and integer arithmetic), as the CPU backend writes them."""
    x = la.asarray(np.linspace(-3, 3, 3000, dtype=np.float32).reshape(30, 100))
    d = la.asarray(np.linspace(-1, 1, 500))
    i = la.asarray(np.arange(-50, 50, dtype=np.int32))
    programs = [
        (lambda e: e / e.sum(-1, keepdims=True))(la.exp(x - x.max(-1, keepdims=True))),
        0.5 * x * (1 + la.tanh(0.79788 * (x + 0.044715 * x**3))),
        la.cumsum(la.sin(d) * 2.0),
        la.argmax(x, axis=1),
        (d * d).sum() + la.log1p(abs(d)).max(),
        (i * 7 // 3) % 5 - (i >> 2),
    ]
    la.clear_cache()
    return [la.explain(program).llvm_ir for program in programs]


def test_objects_made_on_threads_are_the_locked_compiles_objects():
    texts = kernel_texts()
    expected = [target.compile_object(text) for text in texts]
    assert thread_compile.compile_on_threads(texts, 4) == expected
    # Several batches at once, from several threads: every object still the locked compile's.
    results = {}

    def batch(key):
        results[key] = thread_compile.compile_on_threads(texts[key:] + texts[:key], 2)

    run_in_threads(batch, range(3))
    for key in range(3):
        assert results[key] == expected[key:] + expected[:key]


@pytest.mark.parametrize("text", [
    "define void @broken( {",  # does not parse
    "define i32 @undominated(i1 %c) {\nentry:\n  br i1 %c, label %a, label %b\na:\n  %x = add i32 1, 2\n"
    "  br label %b\nb:\n  ret i32 %x\n}\n",  # parses, fails verification
])
def test_a_broken_module_raises_compile_objects_error(text):
    with pytest.raises(ValueError) as locked:
        target.compile_object(text)
    with pytest.raises(ValueError) as threaded:
        thread_compile.compile_on_threads([kernel_texts()[1], text], 2)
    assert str(threaded.value) == str(locked.value)


def test_a_write_of_llvm_options_waits_for_the_compiles_reading_them():
    """`loop_strength_reduction` (PTX code generation) writes one of LLVM's global options: it
    waits until no thread compiles outside llvmlite's lock, and host code compiled beside PTX
    never runs the pass the host leaves out, whether compiled on threads or by compile_object."""
    entered = threading.Event()

    def write():
        with target.loop_strength_reduction():
            entered.set()

    with target.shared_options():
        writer = threading.Thread(target=write)
        writer.start()
        time.sleep(0.2)
        assert not entered.is_set()  # a compile is reading the options
    writer.join(10)
    assert entered.is_set()

    texts = kernel_texts()[:3]
    expected = [target.compile_object(text) for text in texts]
    stop = threading.Event()

    def toggle():  # PTX compiles, one after another
        while not stop.is_set():
            with target.loop_strength_reduction():
                time.sleep(0.001)
            time.sleep(0.001)

    toggler = threading.Thread(target=toggle)
    toggler.start()
    try:
        for _ in range(3):
            assert thread_compile.compile_on_threads(texts, 2) == expected
            assert [target.compile_object(text) for text in texts] == expected
    finally:
        stop.set()
        toggler.join()


def test_a_child_forked_during_a_compile_can_write_llvm_options():
    """A thread compiling at the moment of a fork is not in the child: the child's count of
    readers starts afresh, so its own PTX code generation does not wait for it forever."""
    import os

    reading, release = threading.Event(), threading.Event()

    def compile_in_progress():
        with target.shared_options():
            reading.set()
            release.wait(30)

    holder = threading.Thread(target=compile_in_progress)
    holder.start()
    reading.wait(10)
    try:
        child = os.fork()
        if child == 0:  # the child: write the option, then leave at once
            code = 1
            try:
                with target.loop_strength_reduction():
                    code = 0
            finally:
                os._exit(code)
        deadline = time.monotonic() + 30
        while (finished := os.waitpid(child, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        if finished[0] == 0:
            os.kill(child, 9)
            os.waitpid(child, 0)
            pytest.fail("the forked child waited for a reader that is not in it")
        assert os.waitstatus_to_exitcode(finished[1]) == 0
    finally:
        release.set()
        holder.join()


def test_the_long_calls_bypass_llvmlites_lock_and_two_compiles_reach_them_at_once(monkeypatch):
    """The three long calls are llvmlite's raw ctypes functions, not its locked wrappers, and
    two compiles reach the pass pipeline at the same time (a barrier of two there would time
    out if anything of lazyarr's own, a lock or the target machines, serialized them)."""
    from llvmlite.binding import ffi

    for name in thread_compile._LONG_CALLS:
        function = thread_compile._unlocked(name)
        assert callable(function) and not isinstance(function, type(ffi.lib.LLVMPY_GetVersionInfo))
    barrier = threading.Barrier(2, timeout=20)
    real = thread_compile._unlocked

    def meeting(name):
        function = real(name)
        if name != "LLVMPY_RunNewModulePassManager":
            return function
        return lambda *arguments: barrier.wait() is not None and function(*arguments)

    texts = kernel_texts()[:2]
    expected = [target.compile_object(text) for text in texts]
    monkeypatch.setattr(thread_compile, "_unlocked", meeting)
    assert thread_compile.compile_on_threads(texts, 2) == expected


def test_of_several_broken_texts_the_earliest_ones_error_is_raised():
    texts = kernel_texts()[:4]
    texts[1] = "define void @first_broken( {"
    texts[3] = "define void @second_broken {"
    with pytest.raises(ValueError) as locked:
        target.compile_object(texts[1])
    for _ in range(3):
        with pytest.raises(ValueError) as threaded:
            thread_compile.compile_on_threads(texts, 3)
        assert str(threaded.value) == str(locked.value)


def test_a_waiting_writer_goes_before_new_readers():
    """PTX code generation waiting for the options is not starved by compiles that keep coming."""
    order, first_reading, release = [], threading.Event(), threading.Event()

    def first_reader():
        with target.shared_options():
            first_reading.set()
            release.wait(10)

    def writer():
        with target.loop_strength_reduction():
            order.append("writer")

    def later_reader():
        with target.shared_options():
            order.append("reader")

    threads = [threading.Thread(target=first_reader)]
    threads[0].start()
    first_reading.wait(10)
    threads.append(threading.Thread(target=writer))
    threads[1].start()
    time.sleep(0.2)  # the writer waits for the first reader
    threads.append(threading.Thread(target=later_reader))
    threads[2].start()
    time.sleep(0.2)
    assert order == []  # the later reader waits behind the waiting writer
    release.set()
    for thread in threads:
        thread.join(10)
    assert order == ["writer", "reader"]
