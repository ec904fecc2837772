"""`la.profile`: record what lazyarr does as Chrome trace events (chrome://tracing, Perfetto).

Every layer reports its work through three hooks, so this module sits in the base layer:

    with _profiler.span("simplify", "pass"):          # a complete ("X") event around a block
        ...
    _profiler.instant("compile cache hit", "compile")  # an instant ("i") event
    _pool.submit(_profiler.traced(kernel, "kernel chunk", "execute"), ...)  # on a worker thread

When nothing is profiling, a hook costs one global check: `span` returns a shared do-nothing
context manager, `instant` returns at once, `traced` returns the function itself; nothing is
allocated and no clock is read. The optional `detail` of a hook (a string, a dict, a dataclass
such as a kernel step) becomes the event's `args` only while profiling.

A profile block records every thread of the process while it is open: thread-pool chunks
appear on their own thread ids, named after their threads. Blocks nest; an inner block holds
the events that began inside it, the outer one holds those too. Categories used by lazyarr:
eval (evaluation requests), jit (tracing), compile (cache hits/misses, backend compile),
pass (each pass of the pipeline), codegen (IR build, LLVM optimize, machine code), execute
(kernels, host steps, thread-pool chunks, the interpreter's run).
"""

from __future__ import annotations

import dataclasses
import json
import os
import threading
import time
from collections import defaultdict

from . import _files

_ACTIVE: tuple[Profile, ...] | None = None  # the open profile blocks; None when nothing records
_ACTIVE_LOCK = threading.Lock()
_MAX_LIST_ITEMS = 16  # longer lists in event args are cut (a trace viewer shows args in one line)


class _NullSpan:
    """What `span` returns when nothing is profiling: entering and leaving do nothing."""

    __slots__ = ()

    def __enter__(self):
        return self

    def __exit__(self, exception_type, exception, traceback):
        return None


_NULL_SPAN = _NullSpan()


def span(name: str, category: str, detail: object = None):
    """A context manager recording one complete event around its block while profiling.

    `detail` (optional) becomes the event's args: a dict as it is, a dataclass by its fields,
    anything else as {"detail": value}. Pass objects that exist anyway, or dicts only on
    paths that are not hot: the dict is built even when nothing is profiling.

    >>> with span("my step", "execute"):
    ...     pass
    """
    recorders = _ACTIVE  # read once: another thread may close the last block meanwhile
    if recorders is None:
        return _NULL_SPAN
    return _Span(name, category, detail, recorders)


def instant(name: str, category: str, detail: object = None) -> None:
    """Record an instant event (a point in time, e.g. a compile-cache hit) while profiling."""
    recorders = _ACTIVE
    if recorders is None:
        return
    event = {"name": name, "cat": category, "ph": "i", "s": "t", "ts": time.perf_counter_ns(),
             "args": _arguments(detail)}
    _deliver(recorders, event)


def traced(function, name: str, category: str):
    """`function` itself, or while profiling a wrapper recording each call as an event on the
    thread that runs it (for work handed to a thread pool). Plain int, float and str
    arguments of the call become the event's args."""
    recorders = _ACTIVE
    if recorders is None:
        return function

    def traced_call(*arguments):
        with _Span(name, category, {"arguments": [value for value in arguments
                                                  if isinstance(value, int | float | str)]}, recorders):
            return function(*arguments)

    return traced_call


def is_profiling() -> bool:
    return _ACTIVE is not None


class _Span:
    __slots__ = ("name", "category", "detail", "recorders", "start")

    def __init__(self, name, category, detail, recorders):
        self.name = name
        self.category = category
        self.detail = detail
        self.recorders = recorders

    def __enter__(self):
        self.start = time.perf_counter_ns()
        return self

    def __exit__(self, exception_type, exception, traceback):
        end = time.perf_counter_ns()
        args = _arguments(self.detail)
        if exception_type is not None:
            args["exception"] = exception_type.__name__
        event = {"name": self.name, "cat": self.category, "ph": "X", "ts": self.start,
                 "dur": end - self.start, "args": args}
        _deliver(self.recorders, event)
        return None


def _deliver(recorders, event) -> None:
    """Stamp `event` with this thread and hand it to every recorder still open."""
    thread = threading.current_thread()
    event["tid"] = thread_id = threading.get_native_id()
    for recorder in recorders:
        if recorder.is_recording:
            recorder._raw.append(event)  # list.append is atomic: threads record without a lock
            recorder._thread_names.setdefault(thread_id, thread.name)


def _arguments(detail) -> dict:
    if detail is None:
        return {}
    if isinstance(detail, dict):
        return {str(key): _plain(value) for key, value in detail.items()}
    if dataclasses.is_dataclass(detail) and not isinstance(detail, type):
        fields = {field.name: getattr(detail, field.name) for field in dataclasses.fields(detail)}
        return {"type": type(detail).__name__} | {
            key: _plain(value) for key, value in fields.items() if not callable(value)
        }
    return {"detail": _plain(detail)}


def _plain(value, depth: int = 0):
    """A JSON-friendly form of `value` for event args: numbers and strings as they are, an HLO
    instruction by its opcode (this layer cannot import hlo, so it goes by the attribute), short
    lists item by item, anything else as its str()."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    opcode = getattr(value, "opcode", None)
    if isinstance(opcode, str):
        return opcode
    if isinstance(value, list | tuple) and depth < 3:
        return [_plain(item, depth + 1) for item in value[:_MAX_LIST_ITEMS]]
    if getattr(value, "ndim", None) == 0 and hasattr(value, "item"):  # NumPy scalars
        return value.item()
    return str(value)


class Profile:
    """One profile block: `with profile(path) as trace:` records until the block ends.

    `trace.events` lists the recorded Chrome trace events (dicts with name, cat, ph, ts and dur
    in microseconds, pid, tid, args) followed by the process and thread name records;
    `trace.trace()` is the whole JSON object; `trace.write(path)` saves it; `trace.summary()`
    totals the time per event name.
    """

    def __init__(self, path: str | os.PathLike | None = None):
        if path is not None and not isinstance(path, str | os.PathLike):
            raise TypeError(f"profile: path must be a str or os.PathLike (or None), got {type(path).__name__}")
        self.path = path
        self.is_recording = False
        self._raw: list[dict] = []
        self._thread_names: dict[int, str] = {}
        self._start_ns = 0

    def __enter__(self) -> Profile:
        global _ACTIVE
        if self.is_recording:
            raise RuntimeError("profile: this block is already recording; open a new la.profile()")
        self._start_ns = time.perf_counter_ns()
        self.is_recording = True
        with _ACTIVE_LOCK:
            _ACTIVE = (_ACTIVE or ()) + (self,)
        return self

    def __exit__(self, exception_type, exception, traceback):
        global _ACTIVE
        with _ACTIVE_LOCK:
            remaining = tuple(recorder for recorder in _ACTIVE or () if recorder is not self)
            _ACTIVE = remaining or None
        self.is_recording = False
        if self.path is not None:
            self.write(self.path)  # also when an exception escapes the block: it is still raised
        return None

    @property
    def events(self) -> list[dict]:
        """The Chrome trace events: timed events ordered by start, then name records."""
        pid = os.getpid()
        timed = []
        for raw in sorted(list(self._raw), key=lambda event: event["ts"]):
            event = dict(raw, pid=pid, ts=(raw["ts"] - self._start_ns) / 1000)
            if "dur" in raw:
                event["dur"] = raw["dur"] / 1000
            timed.append(event)
        names = [{"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "args": {"name": "lazyarr"}}]
        names += [
            {"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": thread_name}}
            for tid, thread_name in sorted(self._thread_names.items())
        ]
        return timed + names

    def trace(self) -> dict:
        """The JSON object chrome://tracing and Perfetto load."""
        return {"traceEvents": self.events, "displayTimeUnit": "ms"}

    def write(self, path: str | os.PathLike) -> None:
        """Save the trace JSON at `path` through a new file and a rename: a symlink planted
        there is replaced, not followed."""
        _files.replace(path, json.dumps(self.trace()))

    def summary(self) -> str:
        """Total and count per (category, name) of the complete events, longest first.

        Nested events are counted in their parents too, so totals do not add up to wall time.
        """
        totals: dict[tuple[str, str], list] = defaultdict(lambda: [0.0, 0])
        for event in self.events:
            if event["ph"] == "X":
                total = totals[(event["cat"], event["name"])]
                total[0] += event["dur"]
                total[1] += 1
        rows = sorted(totals.items(), key=lambda item: -item[1][0])
        lines = [f"{'category':<10} {'name':<32} {'count':>6} {'total ms':>10}"]
        lines += [f"{category:<10} {name[:32]:<32} {count:>6} {micros / 1000:>10.3f}"
                  for (category, name), (micros, count) in rows]
        return "\n".join(lines)

    def __repr__(self):
        state = "recording" if self.is_recording else "stopped"
        return f"<lazyarr profile {state}: {len(self._raw)} events, path={self.path!r}>"


def profile(path: str | os.PathLike | None = None) -> Profile:
    """Record evaluations, compiles, passes, code generation and kernel runs in a block.

    With a `path`, the Chrome trace JSON is written there when the block ends (also when an
    exception escapes it); open it in chrome://tracing or https://ui.perfetto.dev. The block
    yields the Profile, whose `events` hold the same records.

    >>> import lazyarr as la
    >>> with la.profile() as trace:
    ...     _ = (la.arange(4.0) * 2).sum().eval()
    >>> "eval" in {event.get("cat") for event in trace.events}
    True
    """
    return Profile(path)
