"""The lazy array: a handle on one HLO instruction, and the points where evaluation happens.

An `Array` holds an interned `Instruction`. Operations build new instructions; nothing runs
until a value is needed (`.eval()`, `la.eval(...)`, `np.asarray`, `print`, `float`, `bool`,
`int`, `.item()`, `.tolist()`, `__dlpack__`). Evaluating compiles the graph once for all
requested arrays; each array then holds its buffer through a fresh parameter leaf and drops
its graph, and the old instruction stays bound to the buffer so that other graphs sharing it
reuse the value instead of recomputing it.

Buffers are never mutated after they are bound: inputs are copied on the way in and views
handed out are read-only. `a[i] = v` and `a += b` move the array object `a` to a new graph
node, so every reference to it sees the change; basic-index results and transposes are views
that write through to their base (views.py).

A buffer lives on a device (backends/base.py): NumPy arrays on "cpu", CuPy arrays on "gpu",
or a plug-in device's buffers. An array's `device` is the device of the buffers its graph
reads; evaluation runs on that device's backend and leaves the result there, and `.numpy()`
copies it to the host. `to_device` moves an array explicitly; one computation never reads
arrays on two devices (host 0-d arrays, like Python scalars, go with any device).
"""

from __future__ import annotations

import collections
import threading
import weakref
from collections.abc import Callable, Iterable

import numpy as np

from .. import _flags, dtypes
from ..backends import available_devices, device_of, get_backend, host_only, to_device, transfer_manager
from ..compile import device_of_buffers, evaluate_graph_keeping, evaluate_keeping_one
from ..hlo import Instruction, bind, bound_buffer, fresh_parameter, set_holder, template
from . import tracing

# The buffer holding a node's value (materialized inputs and evaluated values) lives on the
# node itself (hlo.bind / hlo.bound_buffer), so it dies with the node. A buffer is a NumPy
# array on the host, or a device buffer (a CuPy array, a plug-in's buffer).


def _is_bound(node: Instruction) -> bool:
    return node._bound is not None


def leaf_for(buffer) -> Instruction:
    """A fresh parameter leaf bound to `buffer` (which must never be written again)."""
    if isinstance(buffer, np.ndarray):  # device buffers have no read-only flag: never written either
        buffer.setflags(write=False)
    return fresh_parameter(buffer.shape, buffer.dtype, buffer)


def default_device() -> str:
    """The device of the default backend (`--backend`, `la.set_backend`): where a graph that
    reads no buffers (`la.zeros(3)`, `la.arange(5)`) is computed."""
    return get_backend(_flags.FLAGS.backend).device


def check_device(device, where: str) -> str:
    """`device` if lazyarr has it (None: the default device); else ValueError listing the
    available ones. A known device whose dependency is missing (the GPU without CuPy) raises
    that device's own clear error here."""
    if device is None:
        return default_device()
    if not isinstance(device, str):
        raise ValueError(f"{where}: unknown device {device!r}; available: {', '.join(available_devices())}")
    try:
        transfer_manager(device)
    except ValueError:
        raise ValueError(f"{where}: unknown device {device!r}; available: {', '.join(available_devices())}") from None
    return device


def graph_device(node: Instruction) -> str:
    """The device of the buffers `node`'s graph reads (iterative walk, stopping at bound
    nodes). Host 0-d buffers do not decide; a graph reading no other buffer is computed on
    the default device. Buffers on two devices: ValueError naming them."""
    if host_only() and default_device() == "cpu":
        return "cpu"  # every buffer is a host array: no walk (`zeros_like(w)` of a deep pending w)
    buffer = bound_buffer(node)
    if buffer is not None:
        return "cpu" if type(buffer) is np.ndarray else device_of(buffer)
    buffers = []
    visited = {id(node)}
    stack = [node]
    while stack:
        current = stack.pop()
        buffer = bound_buffer(current)
        if buffer is not None:
            buffers.append(buffer)
            continue
        for operand in current.operands:
            if id(operand) not in visited:
                visited.add(id(operand))
                stack.append(operand)
    return device_of_buffers(buffers, where="device") or default_device()


def host_copy(buffer) -> np.ndarray:
    """A read-only NumPy array holding a device buffer's value."""
    value = transfer_manager(device_of(buffer)).to_host(buffer)
    value.flags.writeable = False
    return value


def evaluate_arrays(arrays: Iterable[Array], *, keep_held: bool = True) -> None:
    """Evaluate every unevaluated array among `arrays` as one module, sharing common work.

    Other arrays the program still holds whose values the graph computes on the way are
    evaluated with them (compile.evaluate_graph_keeping), so later work reads them instead
    of computing them again; so are the thread's other deep pending arrays, when one of `arrays`
    is deep, where they are no larger than what it touches (`_loop_siblings`). A cut of pending
    work (`keep_held=False`) evaluates its arrays only."""
    if keep_held and type(arrays) is list and len(arrays) == 1 and _evaluate_one(arrays[0]):
        return  # (in C: a cached plan's run and its leaves, the same steps as below)
    keep = _worth_keeping if keep_held else None
    budget = _flags.FLAGS.max_pending_depth
    siblings = keep_held and budget and _PENDING.arrays  # (deep pending arrays noted: see _loop_siblings)
    if keep_held:
        _PENDING.phase = None  # a program's own evaluation point: its later cuts start afresh
    if (type(arrays) in (list, tuple) and len(arrays) == 1 and type(arrays[0]) is Array  # `x.eval()`, `np.asarray(x)`
            and not (siblings and arrays[0]._node.depth * 2 >= budget)):
        array = arrays[0]
        node = array._node
        if node._bound is None:
            if array._base is not None and read_as_numpy_view(array):
                return
            tracing.check_concrete([node], _is_bound)
            if keep is None:
                (result,), held = evaluate_graph_keeping([node], bound_buffer, None)
            else:
                result, held = evaluate_keeping_one(node, keep)
            _adopt_evaluated(array, node, result, held)
        return
    pending: list[Array] = []
    seen: set[int] = set()
    for array in arrays:
        if not isinstance(array, Array):
            raise TypeError(f"eval: expected lazyarr arrays, got {type(array).__name__}")
        if id(array._node) not in seen and array._node._bound is None:
            seen.add(id(array._node))
            pending.append(array)
    if not pending:
        return
    nodes = [array._node for array in pending]
    tracing.check_concrete(nodes, _is_bound)  # inside la.jit: a clear error, not a crash
    optional = ()
    if siblings and any(node.depth * 2 >= budget for node in nodes):
        optional = tuple(array._node for array in _loop_siblings(seen))
    try:
        results, held = evaluate_graph_keeping(nodes, bound_buffer, keep, optional)
    except Exception:
        if not optional:
            raise
        # A sibling that cannot be computed with these arrays (its graph raises, or reads
        # another device) must not fail them: they are evaluated alone, and it stays pending,
        # no longer noted, until the program asks for it (and meets the error itself).
        _forget_pending(optional)
        results, held = evaluate_graph_keeping(nodes, bound_buffer, keep)
    by_node = {id(node): _kept(node, result) for node, result in zip(nodes, results)}
    for array in arrays:
        if id(array._node) in by_node:
            array._node = by_node[id(array._node)]
    if held:
        _keep_held(held)


def _loop_siblings(seen: set[int]) -> list[Array]:
    """The deep pending arrays of this thread (see track_pending) that own their value and
    whose nodes are not in `seen`: offered to an evaluation of a deep array the program asks
    for (compile.evaluate_graph_keeping's `optional`: computed with it unless larger than what
    it touches anyway). They are the other results of the loop that made it (`loss, w, b =
    step(...)` N times, then `float(loss)`, `np.asarray(w)`): its earlier steps are in all their
    graphs but held by none, so asked for one at a time, each would compute the whole loop
    again (the MLP program's five results: five times the work). None while a tracer is alive
    (inside la.jit, a deep array may be a traced expression, which has no value)."""
    if tracing.tracers_alive():
        return []
    found = []
    for reference in _PENDING.arrays.values():
        array = reference()
        if _still_pending(array) and array._base is None and id(array._node) not in seen:
            seen.add(id(array._node))
            found.append(array)
    return found


def _forget_pending(nodes) -> None:
    """Stop noting the deep pending arrays holding `nodes` (loop cuts and _loop_siblings pass
    them by; they stay pending)."""
    dropped = {id(node) for node in nodes}
    pending = _PENDING.arrays
    for key, reference in list(pending.items()):
        array = reference()
        if array is None or id(array._node) in dropped:
            del pending[key]


def _worth_keeping(node: Instruction, references: int) -> bool:
    """Whether an evaluation should write out an interior `node` that `references` references
    from outside its graph point to: a live array holding it owns its value (a view, `.real`
    or a slice, is recomputed from its base, never written out), or something other than the
    arrays holding it reads it; in a loop, the pending next state (`w = w - lr * g`) when the
    program evaluates a loss read from the state before it, which would otherwise compute
    again everything since the last evaluated state."""
    holder = node._holder
    if holder is None:
        return True
    holding = 0
    for reference in holder if type(holder) is tuple else (holder,):
        array = reference()
        if array is not None and array._node is node:
            if array._base is None:
                return True
            holding += 1
    return references > holding


def _owner(node: Instruction) -> Array | None:
    """The live array holding `node` and owning its value, if any (see `_worth_keeping`)."""
    holder = node._holder
    if holder is None:  # (a node kept because a pending node reads it: compile.Linearized.shared)
        return None
    for reference in holder if type(holder) is tuple else (holder,):
        array = reference()
        if array is not None and array._node is node and array._base is None:
            return array
    return None


def holders_with(holder, reference) -> tuple:
    """A node's holders once another array wraps it too (or takes it by a write): the live
    ones that own their value and the new one. Any may be the one the program keeps
    (`y = la.array(exp(x))`: the temporary came first; `norm(g)` re-wraps the held `g` in a
    temporary; `b[:] = a` gives `b` the node of `a`), so each stays a candidate until it dies;
    views are not (they are recomputed from their base); at most _MOST_HOLDERS, the newest."""
    references = holder if type(holder) is tuple else (holder,)
    live = [known for known in references if (array := known()) is not None and array._base is None]
    live.append(reference)
    return tuple(live[-_MOST_HOLDERS:])


_MOST_HOLDERS = 4
# Evaluations numpy() tries before it gives up on an array that code run meanwhile (a finalizer
# of a collection inside the evaluation) keeps giving a new pending value.
_EVALUATION_TRIES = 4


def _keep_held(held: list) -> None:
    """Give each held array its value computed on the way: a leaf, as an evaluated array has,
    so the graph that computed it can be freed (the node stays bound for its other readers).
    The leaf is made first: the test and the move are consecutive steps, so a write by another
    thread (`y += 1`) in between is as unlikely as for the arrays evaluate_arrays is given."""
    for node, buffer in held:
        leaf = _kept(node, buffer)
        array = _owner(node)
        if array is not None:
            array._node = leaf
        elif not node.constant_only:
            _note_kept_for_readers(node, buffer)


# The bytes the values kept only for pending readers may hold at once (per thread): beyond it,
# the oldest are released (_note_kept_for_readers).
_KEPT_FOR_READERS_BYTES = 1 << 26


def _note_kept_for_readers(node: Instruction, buffer) -> None:
    """Remember a value kept because a pending node outside its evaluation's graph reads it (a
    loop's state before `w = w - lr * g`, read by the loss evaluated after the update), and
    release the oldest such values beyond _KEPT_FOR_READERS_BYTES (or beyond twice this one).

    Nothing else frees them: a bound node stays bound while its readers live, and the next
    state, kept in turn, reads this one, so a loop would hold every state back to its last cut
    (a 16 MB state, 120 iterations: 1.1 GB). The next evaluation reads the newest state; an
    older one released is recomputed from its operands if a reader ever needs it."""
    kept = _PENDING.kept_for_readers
    kept.append((weakref.ref(node), getattr(buffer, "nbytes", 0)))
    limit = max(_KEPT_FOR_READERS_BYTES, 2 * kept[-1][1])
    live = [(reference, size) for reference, size in kept
            if (value := reference()) is not None and value._bound is not None]
    total = sum(size for _, size in live)
    while total > limit and len(live) > 1:
        reference, size = live.pop(0)
        total -= size
        value = reference()
        if value is not None and _owner(value) is None:
            bind(value, None)  # (still computable from its operands)
    kept.clear()
    kept.extend(live)


def python_adopt_evaluated(array: Array, node: Instruction, result, held) -> None:
    """`array`, which held `node`, takes the leaf of its evaluated value `result`; each held
    (node, buffer) its owner's (_keep_held). The C twin (`_fast_paths.adopt_evaluated`, where
    built) stands in for it: evaluate_arrays' one array, a solver's test each iteration."""
    array._node = _kept(node, result)
    if held:
        _keep_held(held)


_adopt_evaluated = python_adopt_evaluated


def _no_evaluate_one(array) -> bool:
    return False


# evaluate_arrays' one-array case where compile's plan is cached, in C (_fast_paths.evaluate_one,
# where built): True when it evaluated `array`, False where the Python steps must run.
_evaluate_one = _no_evaluate_one


def use_fast_adopt(function, evaluate_one=None) -> None:
    """Adopt one array's evaluated value with `function` (python_adopt_evaluated's C twin), and
    evaluate one array whose plan is cached with `evaluate_one` (evaluate_arrays' steps in C)."""
    global _adopt_evaluated, _evaluate_one
    _adopt_evaluated, _evaluate_one = function, evaluate_one or _no_evaluate_one


def _kept(node: Instruction, result) -> Instruction:
    """Bind an evaluation's `result` to `node`; the leaf that stands for the value from now on."""
    # Host results may come back as NumPy scalars; device buffers stay on their device.
    buffer = result if type(result) is np.ndarray or not isinstance(result, np.generic) else np.asarray(result)
    # Values of constants alone are shared by every graph on every device (and cheap to
    # recompute): they stay unbound, computed where each graph runs.
    if not node.constant_only:
        bind(node, buffer)
    return leaf_for(buffer)


def evaluated_view_node(base: Instruction, read: Callable[[Instruction], Instruction],
                        value: np.ndarray) -> Instruction:
    """The node of a view of an evaluated host array (`base`, bound) whose value NumPy's view
    `value` is: `base` itself where the view is contiguous with the buffer's shape, strides and
    dtype (the buffer as it is: `.T` of a 1-d array, `a[:]`; `.real` of a complex array has its
    shape and strides); a leaf bound to `value` where it is contiguous (offsets and shapes are data,
    not part of any compiled kernel); else `read(base)` bound to it (read as is, nothing
    compiled; a computation reading it computes the view in its kernel: compile.linearize). The
    C getitem makes the same (_fast_paths.c `evaluated_view`)."""
    if value.flags.c_contiguous:  # (only a contiguous view can be a contiguous buffer as it is)
        buffer = base._bound
        if value.shape == buffer.shape and value.strides == buffer.strides and value.dtype == buffer.dtype:
            return base
        return leaf_for(value)
    node = read(base)
    if node._bound is None:
        value.setflags(write=False)
        bind(node, value)
    return node


def read_as_numpy_view(array: Array) -> bool:
    """Give a pending view of an evaluated host array (`x.reshape(h, w)`, `x.T`, `x.real`, a
    view of such a view) NumPy's view of the buffer as its value, as an evaluation point
    (`np.asarray`, `float`) asks for it: nothing is compiled or copied (it ran a copy kernel:
    `np.asarray(A.reshape(100, 200))` 50 -> 7 us). Only when read: `X.T @ e` in a loop
    records its transpose as before. False where `array` is no such view."""
    link = array._base
    if link is None or link.layout is None:
        return False
    base = link.base
    buffer = base._node._bound
    if buffer is None and read_as_numpy_view(base):
        buffer = base._node._bound
    if type(buffer) is not np.ndarray:
        return False
    value = link.layout(buffer)
    if type(value) is not np.ndarray:  # (NumPy's 0-d views come as scalars: evaluated as usual)
        return False
    array._node = evaluated_view_node(base._node, link.read, value)
    return True


# -- bounded pending work ----------------------------------------------------------------------
# A loop that records the same step N times would otherwise build one graph N steps deep and
# compile it as one giant module (seconds) at the end. Instead, when an array's graph gets
# --max_pending_depth operations deep, every live array of this thread whose graph is at least
# half that deep is evaluated together, in one module (so work they share runs once), and the
# loop goes on from their buffers. A loop's step structure repeats, so each cut records the
# same graph as the last and reuses its executable: a loop compiles a few modules, not one
# per iteration and not one giant one. Never inside la.jit or grad traces (nothing evaluates).
#
# A cut happens at the same point of the step every time: the op that made the first cut's
# array deep enough (its op, attributes, shape and dtype: its `phase`) is remembered, and later
# cuts wait, past the depth limit, for an array made by that op again (at most half the limit
# longer). A step whose depth does not divide the limit would otherwise be cut at a different
# op each time, and every cut would be a module of its own to compile. Any other evaluation
# (the program's own: `la.eval`, `np.asarray`, a mask) forgets the phase, so the next loop, or
# the next run of this one, cuts where a fresh start does.


class _Pending(threading.local):
    def __init__(self):
        self.arrays: dict[int, weakref.ref] = {}  # id -> the deep pending arrays (arrays are unhashable)
        self.prune_at = 64
        self.phase: tuple | None = None  # (op, shape, dtype) of the array whose depth made the last cut
        self.deferring = 0  # > 0 inside deferred_cuts
        # Values kept only for pending readers outside their evaluation's graph (no array holds
        # them), oldest first: (weak reference to the node, bytes); see _note_kept_for_readers.
        self.kept_for_readers: collections.deque[tuple[weakref.ref, int]] = collections.deque()


_PENDING = _Pending()


def track_pending(array: Array, written: bool = False, consumed: tuple[Array, ...] = ()) -> None:
    """Note a deep pending array; evaluate the pending work when `array` is too deep.

    `written`: `array` was just written (views.assign: `u[1:-1] = ...`, `w -= step`), where a
    statement ends and none of its temporaries is alive but `consumed`, the values the write
    used up, which no name or object holds (methods.py). A due cut happens there whatever op
    the last cut happened at, and leaves `consumed` out: evaluated too, each would be one more
    output to write and a fused kernel split in two."""
    node = array._node
    depth = node.depth
    budget = _flags.FLAGS.max_pending_depth
    if not budget or depth * 2 < budget or _TRACING.traces or _RECORDING.depth:
        return
    state = _PENDING
    pending = state.arrays
    phase = None
    if depth >= budget and not state.deferring:
        phase = (node._identity, node.shape, node.dtype)
        if phase != state.phase and state.phase is not None and depth < budget + budget // 2 and not written:
            phase = None  # not the op the last cut happened at: wait for it
    if phase is None:
        # Re-inserted at the end: the evaluation order (a module's outputs) is the order the
        # program last touched its arrays, the same at every cut of a loop.
        key = id(array)
        if key in pending:
            del pending[key]
        pending[key] = _new_reference(array)
        if len(pending) >= state.prune_at:  # amortized: drop the dead and the evaluated
            live = {key: ref for key, ref in pending.items() if _still_pending(ref())}
            state.arrays, state.prune_at = live, max(64, 2 * len(live))
        return
    left_out = {id(other) for other in consumed}
    arrays = [other for other in (ref() for ref in pending.values())
              if id(other) not in left_out and _still_pending(other)]
    state.arrays, state.prune_at = {}, 64
    if all(other is not array for other in arrays):
        arrays.append(array)
    evaluate_arrays(arrays, keep_held=False)
    state.phase = phase


_new_reference = weakref.ref
_SET_HOLDER = set_holder
_TRACING = tracing.STATE  # its `traces`: nothing is evaluated while la.jit or grad traces
_RECORDING = template.RECORDING  # its `depth`: nor while a graph template is recorded (on bufferless parameters)


class deferred_cuts:
    """Within it, deep arrays are noted but never cut at: an in-place operator's result is
    about to replace its operand (`w -= step`), and views.assign cuts once it has, leaving
    the operand's old value, which nothing will read, out of the evaluation."""

    __slots__ = ()

    def __enter__(self) -> None:
        _PENDING.deferring += 1

    def __exit__(self, *exception) -> None:
        _PENDING.deferring -= 1


def _still_pending(array: Array | None) -> bool:
    return array is not None and array._node.depth > 0 and array._node._bound is None


class Array:
    """A lazy n-dimensional array; see the module docstring. Build one with `la.asarray`."""

    # _base: how this array views another (views.ViewOf), or None when it owns its value;
    # _views: weak references to the arrays viewing this one, or None. See views.py.
    __slots__ = ("_node", "_base", "_views", "__weakref__")
    __array_priority__ = 100
    __hash__ = None  # elementwise __eq__, as NumPy arrays

    def __init__(self, node: Instruction):
        # (Mirrored by new_array in frontend/_fast_paths.c, which records the direct path of
        # elementwise ops: a change here changes it too; tests/frontend/test_recording_in_c.py.)
        if type(node) is not Instruction:
            raise TypeError("Array wraps an HLO Instruction; use lazyarr.asarray to make arrays")
        self._node = node
        self._base = self._views = None
        depth = node.depth
        if depth:  # (a leaf is never computed on the way)
            holder = node._holder
            if holder is None:
                _SET_HOLDER(node, _new_reference(self))  # see evaluate_arrays
            else:  # a node wrapped again (a no-op reshape, astype, copy): every live wrapper may be the one kept
                _SET_HOLDER(node, holders_with(holder, _new_reference(self)))
            if depth * 2 >= _flags.FLAGS.max_pending_depth:  # (track_pending's first test, inline: hot)
                track_pending(self)

    # -- metadata: never evaluates ---------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._node.shape

    @property
    def dtype(self) -> np.dtype:
        return self._node.dtype

    @property
    def ndim(self) -> int:
        return len(self._node.shape)

    @property
    def size(self) -> int:
        return self._node.size

    @property
    def itemsize(self) -> int:
        return self._node.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self._node.size * self._node.dtype.itemsize

    @property
    def device(self) -> str:
        """Where the value lives (or will, once computed): the device of the buffers the graph
        reads, or the default device for a graph that reads none. Never evaluates."""
        return graph_device(self._node)

    def to_device(self, device, /, *, stream=None) -> Array:
        """This array on `device` (itself when already there): evaluates, then copies the
        buffer over. `stream` is accepted for the array API and ignored (copies synchronize).

        >>> import lazyarr as la
        >>> la.arange(3.0).to_device("cpu").device
        'cpu'
        """
        if device is None:
            return self
        device = check_device(device, "to_device")
        if device == graph_device(self._node):
            return self
        return Array(leaf_for(to_device(self._buffer(), device)))

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object (a 0-d lazyarr array)")
        return self.shape[0]

    @property
    def is_evaluated(self) -> bool:
        """Whether the value is already computed (no work left for `.eval()`)."""
        return self._node._bound is not None

    # -- evaluation points -----------------------------------------------------------------
    def eval(self) -> Array:
        """Compute the value now (one compiled module); returns self, now holding a buffer."""
        evaluate_arrays([self])
        return self

    def numpy(self) -> np.ndarray:
        """The value as a read-only NumPy array (copied to the host from a device)."""
        buffer = self._node._bound
        if buffer is None:
            buffer = self._buffer()
        if type(buffer) is not np.ndarray:
            return host_copy(buffer)
        view = buffer.view()
        view.setflags(write=False)
        return view

    def _buffer(self):
        """The buffer holding the value, evaluated first if need be."""
        node = self._node
        buffer = node._bound
        for _ in range(_EVALUATION_TRIES):
            if buffer is not None:
                return buffer
            evaluate_arrays([self])
            # The value of the node asked about (evaluation binds it), even if code run meanwhile
            # (a finalizer of a collection inside the evaluation) gave the array a new pending
            # value; else the array's own (a function of constants is not bound: its leaf is).
            buffer = node._bound
            if buffer is None:
                node = self._node
                buffer = node._bound
        if buffer is not None:
            return buffer
        raise RuntimeError("the array was given a new pending value each time it was evaluated "
                           "(by code run during its evaluation: a finalizer writing it?)")

    def __array__(self, dtype=None, copy=None):
        """NumPy's view of the value: read-only (buffers are shared between graphs and never
        written), except a 0-d value, which comes as a fresh writable array as a scalar's
        conversion does (`s = np.asarray(np.average(x, weights=lazy)); s *= 0.5`)."""
        if dtype is None and not copy:  # `np.asarray(x)` of an evaluated host array: `numpy()`, inline
            buffer = self._node._bound
            if type(buffer) is np.ndarray:
                if not buffer.ndim and copy is None:
                    return buffer.copy()
                view = buffer.view()
                if view.flags.writeable:  # (a bound buffer is read-only, and so its views: leaf_for)
                    view.setflags(write=False)
                return view
        value = self.numpy()
        if dtype is not None and np.dtype(dtype) != value.dtype:
            if copy is False:
                raise ValueError("__array__: a dtype change needs a copy, but copy=False")
            return value.astype(dtype)
        if copy or (not value.ndim and copy is None):
            return value.copy()
        return value

    def _scalar(self, kind):
        if self.size != 1:
            raise TypeError(
                f"only arrays of size 1 can be converted to Python {kind.__name__}; "
                f"shape is {self.shape}"
            )
        return kind(self._element().item())

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError(
                "The truth value of an array with more than one element is ambiguous. "
                "Use a.any() or a.all()"
            )
        return bool(self._element())

    def _element(self) -> np.generic | np.ndarray:
        """The one element of a size-1 array, evaluated: `float(change)`, `while error > tol`
        in a solver's loop read it from the host buffer itself (no read-only view made)."""
        buffer = self._node._bound
        if buffer is None:
            evaluate_arrays([self])
            buffer = self._node._bound
        if type(buffer) is np.ndarray:
            return buffer.reshape(()) if buffer.ndim else buffer[()]
        return self.numpy().reshape(())

    def __float__(self) -> float:
        return self._scalar(float)

    def __int__(self) -> int:
        return self._scalar(int)

    def __complex__(self) -> complex:
        return self._scalar(complex)

    def __index__(self) -> int:
        if not dtypes.is_integer(self.dtype):
            raise TypeError(f"only integer arrays can be used as an index, not {self.dtype}")
        if self.ndim:
            raise TypeError(f"only 0-d integer arrays can be used as an index, shape {self.shape}")
        return int(self.numpy())

    def item(self, *args):
        """NumPy's `item`: one element as a Python scalar (`x.item(i)`, a loop's fast read)."""
        buffer = self._node._bound
        if type(buffer) is np.ndarray:  # evaluated on the host: NumPy reads it (no view made)
            return buffer.item(*args)
        return self.numpy().item(*args)

    def tolist(self):
        return self.numpy().tolist()

    def __repr__(self) -> str:
        text = np.array_repr(self.numpy())
        # NumPy's text with its class name ours (not a custom `override_repr`'s text)
        return "Array" + text[len("array"):] if text.startswith("array(") else text

    def __str__(self) -> str:
        return str(self.numpy())

    def __format__(self, spec: str) -> str:
        if self.ndim == 0:
            return format(self.numpy().item(), spec)
        return format(str(self), spec)

    def __iter__(self):
        """`self[0]`, `self[1]`, ...: through `__getitem__` itself, so an evaluated array's
        elements come from the C extension's read where it is built (fast_paths.py)."""
        if not self.shape:
            raise TypeError("iteration over a 0-d lazyarr array")
        return map(self.__getitem__, range(self.shape[0]))

    # -- interop -------------------------------------------------------------------------------
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        evaluate_arrays([self])
        buffer = self._node._bound
        if not isinstance(buffer, np.ndarray):
            return _device_dlpack(buffer, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)
        value = self.numpy()
        if copy:
            value = value.copy()
        kwargs = {}
        if max_version is not None:
            kwargs["max_version"] = max_version
        if dl_device is not None:
            kwargs["dl_device"] = dl_device
        if copy is not None:
            kwargs["copy"] = copy
        # Read-only buffers cannot be exported with the legacy (unversioned) protocol.
        if not value.flags.writeable and (max_version is None or max_version < (1, 0)):
            value = value.copy()
        return value.__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self):
        buffer = self._node._bound
        if buffer is None and graph_device(self._node) != "cpu":
            evaluate_arrays([self])
            buffer = self._node._bound
        if buffer is None or isinstance(buffer, np.ndarray):
            return (1, 0)  # kDLCPU, device 0
        return buffer.__dlpack_device__()

    @property
    def __cuda_array_interface__(self) -> dict:
        """The GPU buffer's CUDA array interface (Numba, CuPy, PyTorch read it). Only GPU arrays
        have it: for others this raises AttributeError, so `hasattr` is False. Evaluates."""
        if graph_device(self._node) != "gpu":
            raise AttributeError("__cuda_array_interface__: only arrays on the 'gpu' device have it")
        evaluate_arrays([self])
        return self._node._bound.__cuda_array_interface__

    def __array_namespace__(self, *, api_version=None):
        import lazyarr

        if api_version not in (None, "2021.12", "2022.12", "2023.12", "2024.12", "2025.12"):
            raise ValueError(f"unsupported array API version {api_version!r}")
        return lazyarr

    def __copy__(self) -> Array:
        """A new array with this value (not a view): later writes to either leave the other."""
        return Array(self._node)

    def __deepcopy__(self, memo) -> Array:
        return Array(self._node)

    def __reduce__(self):
        return (_rebuild, (self.numpy(),))


def _device_dlpack(buffer, *, stream, max_version, dl_device, copy):
    """__dlpack__ of a device buffer: its own (a CuPy array exports the GPU memory). Read-only
    by contract: lazyarr never writes a bound buffer, and neither may the importer."""
    kwargs = {}
    if max_version is not None:
        kwargs["max_version"] = max_version
    if dl_device is not None:
        kwargs["dl_device"] = dl_device
    if copy is not None:
        kwargs["copy"] = copy
    return buffer.__dlpack__(stream=stream, **kwargs)


def _rebuild(value):
    """An unpickled array: its value, on the default device (as `la.asarray` puts host data)."""
    from .core import from_numpy  # (core imports this module)

    return from_numpy(value, where="unpickling")
