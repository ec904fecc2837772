"""Trace state for `la.jit`: which parameter leaves are tracers, and the error for asking their values.

While `la.jit` runs a function once to record its graph, the function's array arguments are
*tracers*: lazy arrays whose leaves are parameters with no buffer. Building graphs on them
works as on any lazy array; asking for a value does not, because there is none yet. Every
evaluation in the frontend goes through `evaluate_arrays` (frontend/array.py), which calls
`check_concrete` here: if the graph reaches a tracer, it raises `TracedValueError` naming the
operation that asked for the value and the fix.

The operation is read from the call stack: the outermost lazyarr frame below the user's code
is the call the user wrote (`bool(x)` enters through `Array.__bool__`, `x[mask]` through
`getitem`, `la.unique(x)` through `unique`). Conversions the user asked for (`float`, `print`,
`np.asarray`, ...) get one message, `bool` (an `if` on a traced value) another, NumPy functions
lazyarr has no lazy version of (computed by NumPy on the values) a third, and every other
frontend function that evaluates does so because its result's shape depends on the values
(`nonzero`, `unique`, masks, `repeat` with array counts), which gets the fourth.
"""

from __future__ import annotations

import os
import sys
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from ..hlo import Instruction, fresh_parameter


class TracedValueError(TypeError):
    """A traced array's value was needed inside `la.jit` (it has none until the call runs)."""


class Trace:
    """One run of a function on tracers; `active` until the function returns."""

    def __init__(self, function_name: str):
        self.function_name = function_name
        self.active = True

    def new_tracer(self, shape, dtype) -> Instruction:
        """A parameter leaf with no buffer, standing for one array argument."""
        leaf = fresh_parameter(shape, dtype)
        _TRACER_TRACES[leaf] = self
        return leaf


# Every live tracer leaf -> its trace (weak: the entry goes when the graph is freed).
_TRACER_TRACES: weakref.WeakKeyDictionary[Instruction, Trace] = weakref.WeakKeyDictionary()
# Its dict of weak references, for the every-evaluation test "any tracer?" (the mapping's own
# __len__ is Python, ~0.4 us): a dead key not yet removed only makes the test look further.
_TRACER_ENTRIES = _TRACER_TRACES.data


class _State(threading.local):
    def __init__(self):
        self.traces: list[Trace] = []  # the traces running on this thread, innermost last


STATE = _State()  # read by array.track_pending on every deep new array


def is_tracing() -> bool:
    """Whether a `la.jit` trace is running on this thread (a jitted call inside it inlines)."""
    return bool(STATE.traces)


@contextmanager
def tracing(function_name: str) -> Iterator[Trace]:
    """Run the body as a trace of `function_name`; tracers made by the trace die with it."""
    trace = Trace(function_name)
    STATE.traces.append(trace)
    try:
        yield trace
    finally:
        STATE.traces.pop()
        trace.active = False


def tracer_of(node: Instruction) -> Trace | None:
    """The trace that made `node`, when it is a tracer leaf."""
    return _TRACER_TRACES.get(node)


def tracers_alive() -> bool:
    """Whether any traced array exists (a trace running, or a tracer that escaped one)."""
    return bool(_TRACER_ENTRIES) and bool(_TRACER_TRACES)


def check_concrete(nodes: Sequence[Instruction], is_bound: Callable[[Instruction], bool]) -> None:
    """Raise TracedValueError when computing `nodes` needs the value of a tracer.

    Costs nothing measurable unless a tracer is alive; then it walks the part of the graph not
    yet evaluated (iteratively), stopping at nodes that have buffers.
    """
    if not _TRACER_ENTRIES:
        return
    tracer = find_tracer(nodes, is_bound)
    if tracer is None:
        return
    trace = _TRACER_TRACES[tracer]
    if not trace.active:
        raise TracedValueError(escaped_tracer_message(trace))
    display, kind = _requesting_operation()
    where = f"{display} on a traced array inside la.jit({trace.function_name})"
    if kind == "control flow":
        message = (
            f"{where} (an if, while, assert, and/or on an array): Python control flow on a traced value: "
            "use la.where, or mark the argument static with static_argnums (or static_argnames) to "
            "compile one version per value"
        )
    elif kind == "numpy":
        message = (
            f"{where}: lazyarr has no lazy version of it, so NumPy would compute it from the values, which a "
            "traced array does not have yet; use lazyarr functions inside la.jit, or call it outside la.jit"
        )
    elif kind == "conversion":
        message = (
            f"{where}: a traced array has no value while the function is being compiled; return it from "
            "the jitted function and convert the result, or mark the argument static with static_argnums "
            "(or static_argnames)"
        )
    else:
        message = (
            f"{where} needs the array's values to know the shape of its result; data-dependent shape in "
            "jit: use la.where(mask, x, 0) to keep shapes static (la.sum(la.where(mask, x, 0)) for "
            "x[mask].sum()), or call it outside la.jit"
        )
    raise TracedValueError(message)


def escaped_tracer_message(trace: Trace) -> str:
    return (
        f"a traced array from la.jit({trace.function_name}) escaped its trace (it was kept outside the "
        "function, e.g. in a global or a list) and has no value: return it from the jitted function instead"
    )


def find_tracer(nodes: Sequence[Instruction], is_bound) -> Instruction | None:
    """A tracer leaf reachable from `nodes` through nodes that are not bound, or None."""
    visited: set[int] = set()
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if id(node) in visited or is_bound(node):
            continue
        visited.add(id(node))
        if node in _TRACER_TRACES:
            return node
        stack.extend(node.operands)
    return None


_PACKAGE_DIRECTORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

# Array methods (and la.eval) that hand a value to Python: what the user wrote, for the message.
_CONVERSIONS = {
    "__bool__": "bool()",
    "__float__": "float()", "__int__": "int()", "__complex__": "complex()",
    "__index__": "use as a Python integer (operator.index)", "item": ".item()", "tolist": ".tolist()",
    "numpy": ".numpy()", "__array__": "np.asarray()", "__repr__": "repr() or print()",
    "__str__": "str() or print()", "__format__": "format() or an f-string", "__dlpack__": "DLPack export",
    "__reduce__": "pickling", "eval": "eval()",
}
_INDEXING = {"getitem": "x[mask] (boolean mask indexing)", "setitem": "x[mask] = value (boolean mask assignment)"}
_WRAPPER_FILES = ("methods.py", "interop.py", "array.py", "evaluation.py")


def _requesting_operation() -> tuple[str, str]:
    """(what the user called, its kind) from the outermost lazyarr frames on the stack."""
    frames = []
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIRECTORY):
        frames.append(frame)
        frame = frame.f_back
    frames.reverse()  # outermost first
    for position, frame in enumerate(frames):
        name = frame.f_code.co_name
        file_name = os.path.basename(frame.f_code.co_filename)
        if file_name == "interop.py" and name in ("array_function", "array_ufunc"):
            function = frame.f_locals.get("func", frame.f_locals.get("ufunc"))
            falls_back = any(inner.f_code.co_name == "to_numpy" for inner in frames[position + 1:])
            return f"np.{getattr(function, '__name__', 'function')}", "numpy" if falls_back else "data-dependent"
        if file_name in ("array.py", "evaluation.py") and name in _CONVERSIONS:
            return _CONVERSIONS[name], "control flow" if name == "__bool__" else "conversion"
        if file_name in _WRAPPER_FILES or name.startswith("_"):
            continue  # operator and method wrappers: the function they call names the operation
        return _INDEXING.get(name, f"la.{name}"), "data-dependent"
    return "evaluation", "conversion"
