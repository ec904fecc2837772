"""Compiling a module's new kernels on several cores: threads here first, then helper processes.

LLVM is ~70-85 % of a program's first run (10-60 ms a kernel on a 2-core box; the MLP's first
run compiles 24). A process's first `_KERNELS_HERE` kernels compile on its own threads
(thread_compile.py: one per core, each with an LLVM context and target machine of its own), so a
short program's first run gets every core at once. Kernels past that share go to helper
processes: each is `python -m lazyarr.backends.llvm.compile_worker`, which reads IR text on its
stdin and answers with `compile_object`'s bytes, the very code the process would make itself
(same host CPU and features, same LLVM options, same pipeline), so where a kernel was compiled
changes nothing, including its persistent-cache entry.

Keeping LLVM out of the evaluating process matters beyond speed: LLVM keeps ~0.1-0.3 MiB of
every kernel a process compiles for the process's life (its pass pipeline's leftovers, whatever
the context), so a long-running program that compiled many graphs grew without bound (600
distinct compiles: +201 MiB). Past its share, the process compiles only while no helper is
ready (on its threads); it then grows by what its LRU caches hold, and a helper is replaced by a
fresh one after `_KERNELS_PER_HELPER` kernels. Helpers start when a batch does not fit in the
share (~0.1 s each: only the compile modules load, `_BOOTSTRAP`; a program compiling fewer
kernels never starts one), take the next text until none is left, and stop when the process
exits (their stdin closes); a helper still starting or busy with another thread's batch takes nothing, so a
batch never waits for one. A helper that fails, dies or takes longer than `_ANSWER_SECONDS` to
answer is dropped and its kernel compiled here, where a real error shows as it always did. A
forked child starts helpers of its own. Profiled compiles (`la.profile`) stay on the calling
thread, so their spans are recorded.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import select
import struct
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path

from ... import _profiler
from . import thread_compile
from .target import compile_object

_HEADER = struct.Struct(">BI")  # status (0: object code, 1: error text), payload length
_DIGEST_SIZE = 32  # then the SHA-256 of the request it answers, then the payload
_LENGTH = struct.Struct(">I")
READY = b"R"
# A helper is replaced by a fresh process after compiling this many kernels: LLVM's context in
# it grows by ~0.3 MiB a kernel and never shrinks (compile_objects).
_KERNELS_PER_HELPER = 500
# The calling thread compiles beside the helpers until it has compiled this many kernels (a
# short program's first batches get every core; ~20 MiB of LLVM's growth), then only while no
# helper is ready.
_KERNELS_HERE = 64
_COMPILED_HERE = [0]  # kernels compiled by this process itself
# A helper that has not answered one kernel in this long is taken for hung (LLVM never takes
# this long for one kernel: the largest, 100,000-op chains, are cut into kernels of bounded size).
_ANSWER_SECONDS = 300.0
# A helper not ready this long after its start is taken for stuck and dropped.
_START_SECONDS = 60.0
# Set by the first process of a program to start helpers: processes it starts (multiprocessing,
# concurrent.futures, dask's process scheduler) compile in themselves by default, so N worker
# processes do not each start up to four helpers.
_OWNER_VARIABLE = "LAZYARR_COMPILE_HELPERS_OWNER"


# A helper's program: lazyarr's packages become bare modules over their directories, so that
# only the compile modules load (compile_worker, target, thread_compile, vector_math: llvmlite
# and the standard library), not the packages' __init__ files with NumPy and the whole frontend:
# a helper is ready in ~0.1 s instead of ~0.4 s of a core (`python -m
# lazyarr.backends.llvm.compile_worker` runs the same loop with the whole package).
_BOOTSTRAP = """\
import os, sys, types
root = sys.argv[1]
for name in ("lazyarr", "lazyarr.backends", "lazyarr.backends.llvm"):
    package = types.ModuleType(name)
    package.__path__ = [os.path.join(root, *name.split("."))]
    sys.modules[name] = package
from lazyarr.backends.llvm.compile_worker import serve
serve(sys.stdin.buffer, sys.stdout.buffer)
"""


class _Helper:
    """One helper process and the lock of its pipes."""

    def __init__(self):
        # -P: nothing from the current directory (another lazyarr there would compile instead)
        self.process = subprocess.Popen(
            [sys.executable, "-P", "-c", _BOOTSTRAP, str(Path(__file__).resolve().parents[3])],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            bufsize=0,  # unbuffered: a forked child closing its copies flushes nothing into them
        )
        self.lock = threading.Lock()
        self.ready = threading.Event()
        self.alive = True
        self.served = 0  # texts compiled
        self.started = time.monotonic()
        threading.Thread(target=self._await_ready, name="lazyarr-compile-helper-start", daemon=True).start()

    def _await_ready(self) -> None:
        try:
            if self.process.stdout.read(1) == READY:
                self.ready.set()
                return
        except (OSError, ValueError):
            pass
        self.alive = False

    def compile(self, text: str) -> bytes | None:
        """The object code for `text`, or None when the helper could not make it (then it is
        dropped if it died, or if its answer is not for this text). The caller holds `lock`."""
        data = text.encode()
        try:
            _write_all(self.process.stdin, _LENGTH.pack(len(data)) + data)
            if not _answers_within(self.process.stdout, _ANSWER_SECONDS):
                self.process.kill()  # hung: never wait on it again
                raise ValueError("the compile helper did not answer in time")
            status, length = _HEADER.unpack(_read_exactly(self.process.stdout, _HEADER.size))
            digest = _read_exactly(self.process.stdout, _DIGEST_SIZE)
            payload = _read_exactly(self.process.stdout, length)
        except (OSError, ValueError, struct.error):
            self.stop()
            return None
        if digest != hashlib.sha256(data).digest():
            self.stop()  # out of step with its requests: never trust it again
            return None
        return payload if status == 0 else None

    def stop(self) -> None:
        self.alive = False
        try:
            self.process.stdin.close()
        except OSError:
            pass


def _write_all(stream, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[stream.write(view):]


def _answers_within(stream, seconds: float) -> bool:
    """Whether `stream` has something to read (or has closed) within `seconds`."""
    try:
        readable, _, _ = select.select([stream], [], [], seconds)
    except (OSError, ValueError, TypeError):  # no select on this pipe (Windows): read and block
        return True
    return bool(readable)


def _read_exactly(stream, count: int) -> bytes:
    parts, missing = [], count
    while missing:
        part = stream.read(missing)
        if not part:
            raise ValueError("the compile helper closed its pipe")
        parts.append(part)
        missing -= len(part)
    return b"".join(parts)


_POOL_LOCK = threading.Lock()
_POOL: dict = {"pid": None, "helpers": []}


def _helpers(count: int) -> list[_Helper]:
    """This process's helpers, started on first use (and again in a forked child)."""
    with _POOL_LOCK:
        if _POOL["pid"] != os.getpid():
            _POOL.update(pid=os.getpid(), helpers=[])  # a forked child must not share its parent's pipes
        for helper in _POOL["helpers"]:
            if not helper.alive and not helper.lock.locked():
                _reap(helper)
        helpers = _POOL["helpers"] = [helper for helper in _POOL["helpers"] if helper.alive]
        if helpers or count:
            os.environ[_OWNER_VARIABLE] = str(os.getpid())
        while len(helpers) < count:
            try:
                helpers.append(_Helper())
            except OSError:
                break
        return list(helpers)


def _close_pipes(helper: _Helper) -> None:
    for stream in (helper.process.stdin, helper.process.stdout):
        try:
            stream.close()
        except (OSError, ValueError):
            pass


def _reap(helper: _Helper) -> None:
    """Close a stopped helper's pipes and wait for its process (it ends at end of input)."""
    _close_pipes(helper)
    try:
        helper.process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        helper.process.kill()
        helper.process.wait()


def default_worker_count() -> int:
    """Helpers when --compile_workers is -1: one per core, at most 4 (past its share of kernels
    the process compiles nothing itself, so with one fewer a 2-core machine compiled on one
    core: the MLP's jitted first run in a long process 280 -> 430-580 ms); none inside a daemonic
    process (a multiprocessing or dask worker: the pool there is the cluster's) or a process
    started by one with helpers (`_OWNER_VARIABLE`)."""
    import multiprocessing

    if multiprocessing.current_process().daemon:
        return 0
    owner = os.environ.get(_OWNER_VARIABLE)
    if owner is not None and owner != str(os.getpid()):
        return 0  # started by a process that has helpers of its own
    return max(1, min(4, os.cpu_count() or 1))


def compile_objects(texts: list[str], workers: int) -> list[bytes]:
    """`compile_object` of each text, in order, on `workers` + 1 threads of this process (at most
    one per core) while it has compiled fewer than `_KERNELS_HERE` kernels (thread_compile.py: a
    program's first kernels compile on every core at once), then on up to `workers` helper
    processes.

    Past its share, this thread compiles only while no helper is ready: LLVM keeps ~0.1-0.3 MiB
    of every kernel a process compiles for the life of the process, so kernels compiled in
    helpers leave this process's memory flat, and a helper is replaced after
    `_KERNELS_PER_HELPER` kernels. Texts that no helper took (each busy with another thread's
    batch, or dead) are compiled here."""
    if not texts or workers <= 0 or _profiler.is_profiling():
        return [compile_object(text) for text in texts]
    os.environ.setdefault(_OWNER_VARIABLE, str(os.getpid()))  # processes it starts start no helpers
    with _SHARE_LOCK:
        overflows = _COMPILED_HERE[0] + len(texts) > _KERNELS_HERE
    # Helpers start when a batch does not fit in what is left of the share: a program that
    # compiles fewer kernels (the quickstart: 10, the MLP's first eager and jitted runs: 45)
    # never starts one. They take texts from the same queue as this process's threads, as soon
    # as they are ready, so a batch straddling the share keeps every core busy.
    helpers = _helpers(workers) if overflows else []
    results: list[bytes | None] = [None] * len(texts)
    pending = deque(range(len(texts)))
    failures: list[BaseException] = []
    serving = [threading.Thread(target=_serve, args=(helper, texts, pending, results, failures), daemon=True)
               for helper in helpers]
    for thread in serving:
        thread.start()
    try:
        here = _compile_here(texts, pending, workers, helpers)
    except BaseException:
        pending.clear()  # helpers take nothing more
        raise
    finally:
        for thread in serving:
            thread.join()
    if failures:
        raise failures[0]
    for index, code in enumerate(here):
        if code is not None:
            results[index] = code
    while pending:  # what no one took (helpers busy with another thread's batch, or dead)
        index = pending.popleft()
        results[index] = compile_object(texts[index])
    return results  # every index was taken once and filled by whoever took it


_SHARE_LOCK = threading.Lock()


def _compile_here(texts: list[str], pending: deque, workers: int, helpers: list[_Helper]) -> list[bytes | None]:
    """What this process compiles of `pending`'s texts (None for the others), on `workers` + 1
    threads, at most one per core (thread_compile.py; the calling thread alone where llvmlite
    does not allow it):
    texts while its share lasts, past it only while no helper is ready, counted under a lock
    so that threads evaluating at once count the share once."""

    def take_another() -> bool:
        with _SHARE_LOCK:
            if _COMPILED_HERE[0] >= _KERNELS_HERE and any(helper.alive and helper.ready.is_set()
                                                          for helper in helpers):
                return False
            _COMPILED_HERE[0] += 1
            return True

    if not thread_compile.available():
        return thread_compile.compile_on_threads(texts, 1, take_another, pending, compile_text=compile_object)
    threads = max(1, min(workers + 1, os.cpu_count() or 1))
    return thread_compile.compile_on_threads(texts, threads, take_another, pending)


def _serve(helper: _Helper, texts: list[str], pending: deque, results: list, failures: list) -> None:
    """A helper takes `pending`'s texts once ready, until none is left (nothing if it is busy
    with another thread's batch, dies or never comes up)."""
    if not helper.lock.acquire(blocking=False):
        return  # busy with another thread's batch
    try:
        while not helper.ready.wait(0.005):
            if not helper.alive or not pending:
                return
            if time.monotonic() - helper.started > _START_SECONDS:
                helper.stop()  # never came up: the calling thread compiles what is left
                return
        while helper.alive:
            try:
                index = pending.popleft()  # atomic: each index is taken once
            except IndexError:
                return
            code = helper.compile(texts[index])
            helper.served += code is not None
            results[index] = code if code is not None else compile_object(texts[index])
    except BaseException as error:  # raised again by the calling thread
        failures.append(error)
        pending.clear()
    finally:
        if helper.served >= _KERNELS_PER_HELPER:
            helper.stop()  # retired: the next batch starts a fresh one
        helper.lock.release()


def stop_helpers(wait: bool = True) -> None:
    """Stop this process's helpers (tests; at exit without waiting: they end at end of input)."""
    with _POOL_LOCK:
        helpers = _POOL["helpers"] if _POOL["pid"] == os.getpid() else []
        _POOL["helpers"] = []
    for helper in helpers:
        helper.stop()
        if wait:
            _reap(helper)


def _forget_helpers_in_child() -> None:
    """After fork: close the child's copies of the parent's pipes (a child holding a helper's
    stdin would keep that helper alive after the parent ends) and start afresh."""
    global _POOL_LOCK, _SHARE_LOCK
    _POOL_LOCK = threading.Lock()  # another thread may have held it at the fork
    _SHARE_LOCK = threading.Lock()
    for helper in _POOL["helpers"]:
        _close_pipes(helper)
    _POOL.update(pid=os.getpid(), helpers=[])


atexit.register(stop_helpers, wait=False)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_helpers_in_child)
