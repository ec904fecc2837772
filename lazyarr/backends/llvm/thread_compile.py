"""LLVM compiles on several threads of this process: a private context and target machine each.

llvmlite puts every call into LLVM behind one process-wide lock, so two threads calling
`compile_object` take turns. LLVM itself compiles on several threads at once when each has an
`LLVMContext` and a `TargetMachine` of its own and nothing writes LLVM's global options meanwhile
(XLA and ORC's concurrent compile layers rely on it). So `compile_object_concurrently` parses
into a context made for the call, optimizes and emits with its thread's own target machine, and
makes the three long calls (parsing, the pass pipeline, code generation) without llvmlite's lock;
the short ones (making the context, setting the triple, verifying, disposing) still take it.
ctypes releases the GIL for each call, so threads run LLVM side by side: the first kernels of a
program compile on every core at once, without waiting ~0.3-1 s for a helper process to start
(compile_workers.py). What LLVM leaves behind (~70 KB a kernel kept by its pass pipeline, whatever
the context) stays in this process, so only the process's first kernels are compiled this way.

The object is byte for byte `target.compile_object`'s (the same pipeline, options, CPU and
features: tests/backends/test_thread_compile.py), so where a kernel was compiled changes nothing.
Where llvmlite's internals differ from what this expects, `available()` is False and callers
compile as before. Only lazyarr's own writes of LLVM's globals wait for these compiles
(target.py's `shared_options`); another llvmlite user in the process setting LLVM options while
lazyarr compiles (numba's SVML switch, `set_time_passes`) takes llvmlite's lock alone.
"""

from __future__ import annotations

import contextlib
import ctypes
import queue
import threading
from collections import deque
from collections.abc import Callable

import llvmlite.binding as llvm
from llvmlite.binding import ffi

from . import target

_LONG_CALLS = ("LLVMPY_ParseAssembly", "LLVMPY_RunNewModulePassManager", "LLVMPY_TargetMachineEmitToMemory")
_MACHINES: queue.SimpleQueue = queue.SimpleQueue()  # target machines no thread is using


def _unlocked(name: str):
    """The raw ctypes function behind llvmlite's locked wrapper of `name` (None: not found)."""
    return getattr(getattr(ffi.lib, name, None), "_cfn", None)


def available() -> bool:
    """Whether this llvmlite lets its long calls be made without its lock."""
    return all(callable(_unlocked(name)) for name in _LONG_CALLS)


def compile_on_threads(texts: list[str], threads: int, take_another: Callable[[], bool] | None = None,
                       pending: deque | None = None, compile_text: Callable[[str], bytes] | None = None
                       ) -> list[bytes | None]:
    """`compile_object_concurrently` of each text, in order, on up to `threads` threads (the
    calling one among them; `compile_text` instead, e.g. the locked `compile_object` on one
    thread). With `take_another`, a thread asks it before each text and stops when it says no;
    with `pending` (a deque of indices), threads take from it, shared with others
    (compile_workers.py's helpers): the texts none took are None. An error stops every thread
    (and clears `pending`); the one of the earliest text that failed is raised."""
    compile_text = compile_text or compile_object_concurrently
    results: list[bytes | None] = [None] * len(texts)
    pending = deque(range(len(texts))) if pending is None else pending
    failures: list[tuple[int, BaseException]] = []

    def work() -> None:
        while True:
            try:
                index = pending.popleft()  # atomic: each index is taken once
            except IndexError:
                return
            if take_another is not None and not take_another():
                pending.appendleft(index)  # for whoever compiles what is left
                return
            try:
                results[index] = compile_text(texts[index])
            except BaseException as error:  # raised again by the calling thread
                failures.append((index, error))
                pending.clear()
                return

    others = [threading.Thread(target=work, name="lazyarr-compile", daemon=True)
              for _ in range(min(threads, len(texts)) - 1)]
    for thread in others:
        thread.start()
    try:
        work()
    except BaseException:  # an interrupt: the other threads take nothing more
        pending.clear()
        raise
    finally:
        for thread in others:
            thread.join()
    if failures:
        raise min(failures, key=lambda failure: failure[0])[1]
    return results


@contextlib.contextmanager
def _target_machine():
    """A host target machine no other thread uses meanwhile (LLVM's are not shared across threads)."""
    try:
        machine = _MACHINES.get_nowait()
    except queue.Empty:
        machine = target.create_host_target_machine()
    try:
        yield machine
    finally:
        _MACHINES.put(machine)


def compile_object_concurrently(text: str, speed_level: int = 3) -> bytes:
    """`target.compile_object(text)`, made beside other threads doing the same."""
    parse, run_pipeline, emit = (_unlocked(name) for name in _LONG_CALLS)
    with _target_machine() as machine, target.shared_options():
        context = llvm.create_context()
        try:
            data = text.encode()
            with ffi.OutputString() as error:
                module = llvm.ModuleRef(parse(context, ctypes.c_char_p(data), error), context)
                if error:
                    module.close()
                    raise ValueError(f"parse_module: LLVM could not parse the IR: LLVM IR parsing error\n{error}")
            try:
                module.name = target.module_id(text) or module.name
                target.verify(module)
                passes = target.pipeline(module, machine, speed_level)
                try:
                    run_pipeline(passes.manager, module, passes.builder)
                finally:  # here, not whenever and wherever the garbage collector gets to them
                    passes.manager.close()
                    passes.builder.close()
                with ffi.OutputString() as error:
                    buffer = emit(machine, module, 1, error)
                    if not buffer:
                        raise RuntimeError(f"LLVM code generation failed: {error}")
                try:
                    return ctypes.string_at(ffi.lib.LLVMPY_GetBufferStart(buffer), ffi.lib.LLVMPY_GetBufferSize(buffer))
                finally:
                    ffi.lib.LLVMPY_DisposeMemoryBuffer(buffer)
            finally:
                module.close()
        finally:
            context.close()
