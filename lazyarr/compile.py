"""The compile driver: lazy graph -> Module -> backend executable -> buffers.

It is the only place that runs both the passes and a backend. The frontend hands it output
instructions and a way to find the buffer already bound to a node (a materialized input or
an evaluated value); those nodes become the module's parameters, numbered in the order a
post-order walk first meets them, so the same computation on other buffers yields the same
module text.
"""

from __future__ import annotations

import logging
import math
import os
import sys
import threading
import time
from array import array
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from . import _flags, _profiler
from .backends import device_of, get_backend, loaded_backends
from .graph_signature import IDENTITY_CODES, LEAF_CODES, identity_word, leaf_word, new_code
from .hlo import Computation, Instruction, Module, bound_buffer, make, remake, set_lifted
from .hlo import get as get_op
from .passes.fusion_policy import FusionPolicy
from .persistent_cache import clear_persistent_cache
from .shapes import SYMBOLIC_SIZE_BASE
from .symbolic_sizes import symbolize

try:  # the optional C extension (setup.py): linearize's walk without a Python frame per node
    from . import _graph_walk
except ImportError:  # built without a C compiler: python_linearize walks
    _graph_walk = None

BufferLookup = Callable[[Instruction], "np.ndarray | None"]


class Linearized:
    """A graph cut at its bound nodes, in post order: what evaluating it needs, and its key.

    `signature` describes the graph completely up to which buffers it reads: per node in post
    order, a leaf's (shape, dtype, buffer type) or an interior node's (op, attributes, operand
    positions), as int64 words in bytes (graph_signature.py). Equal signatures build equal
    modules, so the signature (with `roots`, the outputs' positions) keys an executable without
    building or renumbering anything; as bytes it is hashed once and compared with memcmp.

    `shared` lists (position, references) of the interior nodes other than the outputs that
    something outside the graph references (references beyond those its users in the graph
    hold): an array holding it, or, in a loop, a pending node the program evaluates later. The
    only ones _kept_positions looks at.
    """

    __slots__ = ("nodes", "leaf_positions", "buffers", "signature", "roots", "shared")

    def __init__(self, nodes, leaf_positions, buffers, signature, roots, shared):
        self.nodes, self.leaf_positions, self.buffers = nodes, leaf_positions, buffers
        self.signature, self.roots, self.shared = signature, roots, shared


def linearize(outputs: Sequence[Instruction], bound: BufferLookup, *, lift_scalars: bool = True,
              lift_constants: bool = False) -> Linearized:
    """Walk the unbound part of the graph of `outputs` (iteratively, leftmost operand first).

    A node with a buffer is a leaf, cut off from its operands: evaluated values are never
    recomputed. With `lift_scalars`, scalar constants other than _SPECIALIZED_SCALARS are
    leaves holding their value; with `lift_constants`, so are constants larger than a kernel
    inlines. Leaves are numbered in the order the walk meets them (the module's parameters).

    The walk is the C extension's (`_graph_walk.c`, ~10x faster) where it is built, else
    `python_linearize`: the same loop, the same result; what is more than graph structure
    (which bound nodes and constants are leaves: `_leaf_decision`) is Python in both, except
    what the C walk decides as _leaf_decision would: a constant's remembered decision, and a
    bound NumPy view's under the nodes' own `_bound`.
    """
    if _graph_walk is None or not _flags.FLAGS.c_extensions:
        return python_linearize(outputs, bound, lift_scalars=lift_scalars, lift_constants=lift_constants)
    if bound is _BOUND_BUFFER:
        decide = _DECISIONS[lift_constants]
    else:
        def decide(node, buffer):
            return _leaf_decision(node, buffer, bound, lift_constants)
    return Linearized(*_graph_walk.walk(outputs, None if bound is _BOUND_BUFFER else bound, decide, lift_scalars))


def _leaf_decision(node: Instruction, buffer, bound: BufferLookup, lift_constants: bool):
    """The leaf buffer of a node the walk asks about (None: walk its operands): a bound node
    with operands (`buffer`: its value) unless it is better recomputed (`_recomputed_view`),
    or a constant (`buffer` None) lifted to a runtime parameter."""
    if buffer is not None:
        return None if _recomputed_view(node, buffer, bound) else buffer
    if node.size > _LIFTED_CONSTANT_ELEMENTS:
        return node.attr("literal").array if lift_constants else None
    lifted = _lifted_scalar(node)
    set_lifted(node, False if lifted is None else lifted)  # (read by the C walk: interned constants recur)
    return lifted


def python_linearize(outputs: Sequence[Instruction], bound: BufferLookup, *, lift_scalars: bool = True,
                     lift_constants: bool = False) -> Linearized:
    """linearize's walk in Python (where the C extension is not built; its reference in tests)."""
    graph = _python_walk(outputs, bound, lift_scalars, lift_constants)
    graph.shared = _shared_positions(graph)  # (the walk's frame gone: its locals hold no node)
    return graph


def _shared_positions(graph: Linearized) -> list[tuple[int, int]]:
    """(position, references) of the interior nodes other than outputs referenced from outside
    the graph: their references beyond their users' in it, the graph's node list and
    getrefcount's argument (the C walk counts its own one: its list)."""
    leaves = set(graph.leaf_positions)
    users = _users(graph, leaves)
    skipped = leaves.union(graph.roots)
    nodes = graph.nodes
    shared = []
    for position in range(len(nodes)):  # (no loop variable holds a node)
        outside = _refcount(nodes[position]) - users[position] - 2
        if outside > 0 and position not in skipped:
            shared.append((position, outside))
    return shared


def _users(graph: Linearized, leaves: set[int]) -> list[int]:
    """How many operands of the graph's interior nodes each node is (no node left referenced)."""
    index_of = {id(node): index for index, node in enumerate(graph.nodes)}
    users = [0] * len(graph.nodes)
    for position in range(len(graph.nodes)):
        if position not in leaves:
            for operand in graph.nodes[position].operands:
                users[index_of[id(operand)]] += 1
    return users


_refcount = sys.getrefcount

def _python_walk(outputs, bound, lift_scalars, lift_constants) -> Linearized:
    # Keyed by the nodes themselves (Instruction hashes by identity; no `id()` calls).
    position: dict[Instruction, int] = {}
    nodes: list[Instruction] = []
    leaf_positions: list[int] = []
    buffers: list = []
    signature = array("q")  # (_graph_walk.c writes the same words)
    # A node is met twice: first it is expanded (pushed back under _OPERANDS_DONE, its operands
    # on top, the leftmost last so it is walked first); when the marker comes back its operands
    # have positions. (A node cannot be met again while expanded: the graph has no cycles.)
    for root in outputs:
        stack = [root]
        pop, push = stack.pop, stack.append
        while stack:
            node = pop()
            if node is _OPERANDS_DONE:
                node = pop()
                # `_identity` stands for `_local` (a small int for plain attributes).
                operands = node.operands
                signature.append(identity_word(node._identity))
                signature.append(len(operands))
                signature.extend([position[operand] for operand in operands])
            elif node in position:
                continue
            else:
                buffer = node._bound if bound is _BOUND_BUFFER else bound(node)
                operands = node.operands
                if buffer is not None:
                    if operands and _recomputed_view(node, buffer, bound):
                        buffer = None
                elif lift_scalars and node.op is _CONSTANT:
                    if lift_constants and node.size > _LIFTED_CONSTANT_ELEMENTS:
                        buffer = node.attr("literal").array
                    else:
                        buffer = _lifted_scalar(node)
                if buffer is None:
                    if not operands and node.op is _PARAMETER:
                        raise ValueError(f"no buffer is bound to {node!r}; it cannot be evaluated")
                    push(node)
                    push(_OPERANDS_DONE)
                    if len(operands) == 2:  # unrolled: most nodes are binary
                        second, first = operands[1], operands[0]
                        if second not in position:
                            push(second)
                        if first not in position:
                            push(first)
                    else:
                        for operand in reversed(operands):
                            if operand not in position:
                                push(operand)
                    continue
                leaf_positions.append(len(nodes))
                buffers.append(buffer)
                signature.append(leaf_word(node, buffer))
            position[node] = len(nodes)
            nodes.append(node)
    return Linearized(nodes, leaf_positions, buffers, signature.tobytes(),
                      tuple([position[root] for root in outputs]), None)


_OPERANDS_DONE = object()  # linearize's marker: the node under it has its operands placed
_BOUND_BUFFER = bound_buffer  # the usual lookup, read inline as the attribute it gets


def _recomputed_view(node: Instruction, buffer, bound: BufferLookup) -> bool:
    """Whether a bound node is better computed from its operands than read: a strided NumPy
    view (`u[1:-1, 1:-1]` of an evaluated `u`) of bound operands would be copied into a
    contiguous buffer before every run; as a slice of its operand it fuses into the kernel."""
    return (type(buffer) is np.ndarray and not buffer.flags.c_contiguous
            and all(bound(operand) is not None for operand in node.operands))


def module_of(graph: Linearized, name: str = "main") -> Module:
    """The module computing a linearized graph: its leaves become parameters 0..n-1."""
    leaves = set(graph.leaf_positions)
    index_of = {id(node): index for index, node in enumerate(graph.nodes)}
    built: list[Instruction] = []
    parameters: list[Instruction] = []
    for index, node in enumerate(graph.nodes):
        if index in leaves:
            node = make("parameter", number=len(parameters), shape=node.shape, dtype=node.dtype)
            parameters.append(node)
        else:
            operands = tuple(built[index_of[id(operand)]] for operand in node.operands)
            if operands != node.operands:
                node = remake(node, operands)
        built.append(node)
    entry = Computation(name, tuple(parameters), tuple(built[position] for position in graph.roots))
    return Module(name, entry)


# Scalar constants with these values stay constants: simplification rules act on them
# (x * 1, x + 0, x ** 2), so they change the generated code. Other scalars become runtime
# parameters, so `x * 0.5` and `x * 0.6` share one executable.
_SPECIALIZED_SCALARS = frozenset({0, 1, -1, 2, 3, 0.5})


def _lifted_scalar(node: Instruction) -> np.ndarray | None:
    """The value of a 0-d constant that should be a runtime parameter, else None."""
    if node.shape != () or node.op is not _CONSTANT:
        return None
    value = node.attr("literal").array
    scalar = value.item()
    try:
        # (-0.0 equals 0 but is not a zero that simplification may drop: it stays a parameter.)
        if scalar in _SPECIALIZED_SCALARS and not (scalar == 0 and type(scalar) is float
                                                   and math.copysign(1.0, scalar) < 0):
            return None
    except TypeError:
        pass
    return value


# Constants of more elements than a kernel inlines are read from memory anyway: as runtime
# parameters they keep their values out of the cache key, so `x[indices]` with new indices
# (a mask's nonzero positions, each iteration of k-means) reuses one executable.
_LIFTED_CONSTANT_ELEMENTS = FusionPolicy.max_constant_elements
_CONSTANT, _PARAMETER = get_op("constant"), get_op("parameter")
# The leaf decisions of the usual lookup (the nodes' own `_bound`), without and with lifting constants.
_DECISIONS = (lambda node, buffer: _leaf_decision(node, buffer, _BOUND_BUFFER, False),
              lambda node, buffer: _leaf_decision(node, buffer, _BOUND_BUFFER, True))
if _graph_walk is not None:
    _graph_walk.configure(Instruction, Instruction.operands, Instruction._identity, Instruction._bound,
                          Instruction.op, Instruction.shape, Instruction.dtype,
                          Instruction._lifted, _CONSTANT, _PARAMETER, np.ndarray, LEAF_CODES, IDENTITY_CODES,
                          new_code)
# Ops that only rearrange (NumPy's views): one of a value needing no computing is recomputed,
# never kept (_kept_positions, _views_a_value).
_VIEW_OPS = frozenset(get_op(name) for name in ("slice", "reshape", "broadcast", "transpose", "reverse"))
_BROADCAST = get_op("broadcast")
# At most this many held values are written out by one evaluation (each is one more output of
# its module: a program holding hundreds of arrays must not make a module of hundreds).
_MOST_KEPT = 32
if _graph_walk is not None:
    _graph_walk.configure_evaluation(Instruction.constant_only, _VIEW_OPS, _BROADCAST, _MOST_KEPT)


def build_module(
    outputs: Sequence[Instruction], bound: BufferLookup, name: str = "main", *, lift_scalars: bool = True,
    lifted_constants: list | None = None,
) -> tuple[Module, list[np.ndarray]]:
    """Renumber bound nodes as parameters 0..n-1; return the module and their buffers.

    A node with a buffer is cut off from its operands: evaluated values are never recomputed.
    With `lift_scalars`, scalar constants become parameters too (see _SPECIALIZED_SCALARS).
    Given a `lifted_constants` list, constants larger than a kernel inlines become parameters
    as well, and their buffers are appended to the list.
    """
    graph = linearize(outputs, bound, lift_scalars=lift_scalars, lift_constants=lifted_constants is not None)
    if lifted_constants is not None:
        lifted_constants.extend(buffer for position, buffer in zip(graph.leaf_positions, graph.buffers)
                                if graph.nodes[position].op is _CONSTANT and graph.nodes[position].size
                                > _LIFTED_CONSTANT_ELEMENTS)
    return module_of(graph, name), graph.buffers


@dataclass
class CacheInfo:
    """Compile-cache counters (`la.cache_info()`)."""

    hits: int = 0
    misses: int = 0
    compile_seconds: float = 0.0
    entries: int = 0
    kernels_compiled: int = 0  # fused kernels generated by LLVM (each distinct one once)
    kernels_reused: int = 0  # kernels a new module found already compiled (the kernel cache)
    kernels_loaded: int = 0  # kernels read from the persistent cache instead of compiled


_CACHE: OrderedDict[tuple, object] = OrderedDict()
_CACHE_LIMIT = 512
_INFO = CacheInfo()


def cache_info() -> CacheInfo:
    """Executable cache counters, and the kernel caches' counts of the backends loaded so far."""
    counts = [backend.kernel_counts() for backend in loaded_backends() if hasattr(backend, "kernel_counts")]
    return CacheInfo(_INFO.hits, _INFO.misses, _INFO.compile_seconds, len(_CACHE),
                     sum(count["compiled"] for count in counts), sum(count["reused"] for count in counts),
                     sum(count.get("loaded", 0) for count in counts))


def clear_cache(*, persistent: bool = False) -> None:
    """Forget every compiled executable and kernel (the next evaluations compile again); with
    `persistent`, also delete the entries of the on-disk compile cache (`LAZYARR_CACHE_DIR`,
    else the user cache directory), so the next evaluations compile from scratch, not load."""
    if persistent:
        clear_persistent_cache()
    _CACHE.clear()
    _SYMBOLIC.clear()
    _PLANS.clear()
    for backend in loaded_backends():
        forget = getattr(backend, "clear_kernel_cache", None)
        if forget is not None:
            forget()
    _INFO.hits = _INFO.misses = 0
    _INFO.compile_seconds = 0.0


class SizedExecutable:
    """An executable compiled for symbolic sizes, bound to one call's real sizes."""

    __slots__ = ("executable", "sizes")

    def __init__(self, executable, sizes: tuple[int, ...]):
        self.executable, self.sizes = executable, sizes

    def run(self, arguments):
        return self.executable.run(arguments, self.sizes)

    def __getattr__(self, name):
        return getattr(self.executable, name)


def fastest_run(executable):
    """A function of the arguments running `executable` (a SizedExecutable: at its sizes) with
    the fewest call layers: the backend's direct call where it has one (the CPU's, for one
    native run: its plan made once, here), else `executable.run`. For callers that run one
    executable many times (a jitted function's signature, an evaluation plan)."""
    inner, sizes = executable, ()
    if isinstance(executable, SizedExecutable):
        inner, sizes = executable.executable, executable.sizes
    direct = getattr(inner, "direct_call", None)
    call = direct(sizes) if direct is not None else None
    return executable.run if call is None else call


_SYMBOLIC: dict[tuple, tuple[tuple, tuple[int, ...]]] = {}  # concrete key -> (key, sizes)


def _cache_key(module: Module, backend_name: str) -> tuple[tuple, Module, tuple[int, ...]]:
    """(key, module to compile, real sizes): for a backend whose code takes sizes at run time,
    the module with placeholder sizes (lazyarr/symbolic_sizes.py), so new sizes reuse it.
    Remembered per concrete graph: a loop evaluating the same shapes symbolizes once."""
    concrete = (backend_name, module.entry.parameters, module.entry.outputs)
    takes_sizes = getattr(get_backend(backend_name), "symbolic_sizes", False)
    if not takes_sizes or _flags.FLAGS.specialize_sizes:
        if concrete in _CACHE:
            return concrete, module, ()
        placeholder_sized = _check_sizes(module)  # (the interpreter would sum `la.zeros(2**41)` for hours)
        if not (takes_sizes and placeholder_sized):
            return concrete, module, ()
        # An empty array's axis of 2**40 or more elements would read as a placeholder in a
        # kernel (`la.zeros((2**41, 0)).sum()`): such a module takes its sizes at run time.
    known = _SYMBOLIC.get(concrete)
    if known is None:
        _check_sizes(module)
        symbolic = symbolize(module)
        known = (concrete, ()) if symbolic is None else (
            (backend_name, symbolic[0].entry.parameters, symbolic[0].entry.outputs), symbolic[1])
        if len(_SYMBOLIC) >= _CACHE_LIMIT:
            _SYMBOLIC.clear()
        _SYMBOLIC[concrete] = known
    key, sizes = known
    if not sizes:
        return key, module, ()
    # A fresh module each time: compiling rewrites the module it is given.
    return key, Module(module.name, Computation(module.entry.name, key[1], key[2])), sizes


def _check_sizes(module: Module) -> bool:
    """NumPy's MemoryError ("Unable to allocate 2.00 TiB for an array with shape ...") for a
    non-empty array of 2**40 or more elements along an axis (`la.zeros(2**41)`): no host has
    that memory, and such sizes are where the symbolic placeholders live (symbolic_sizes.py),
    which would mistake them for placeholders. Also for one that is never materialized (a
    broadcast read through a slice), where NumPy's view would do: a documented difference.
    Returns whether an empty array has such an axis (a kernel would read it as a placeholder)."""
    placeholder_sized = False
    for instruction in module.entry.post_order():
        shape = instruction.shape
        if any(size >= SYMBOLIC_SIZE_BASE for size in shape):
            if 0 not in shape:  # (empty: nothing to hold)
                raise _allocation_error(shape, instruction.dtype)
            placeholder_sized = True
    return placeholder_sized


def _allocation_error(shape, dtype) -> MemoryError:
    """The MemoryError NumPy raises for an allocation of `shape` and `dtype` (its message)."""
    try:
        from numpy._core._exceptions import _ArrayMemoryError  # (NumPy's own; not public)

        return _ArrayMemoryError(tuple(shape), np.dtype(dtype))
    except (ImportError, TypeError):
        return MemoryError(f"Unable to allocate an array with shape {tuple(shape)} and data type {dtype}")


def compile_module(module: Module, backend_name: str):
    """The executable for `module`, from the cache when the same graph was compiled before.

    Instructions are interned and parameters renumbered from 0, so the entry's parameter and
    output tuples *are* the structural fingerprint: equal graphs give identical tuples. With
    symbolic sizes the fingerprint leaves sizes out, and the executable is bound to this
    module's sizes (`run(buffers)` as for any executable).
    """
    key, symbolic, sizes = _cache_key(module, backend_name)
    executable = _compile_cached(key, symbolic, module)
    return SizedExecutable(executable, sizes) if sizes else executable


# Compiling is serialized: llvmlite's IR builder fills some tables lazily and LLVM's global
# context is not thread-safe, so two threads compiling at once could fail (a KeyError was
# seen). Runs of compiled code stay concurrent. Held across fork, so a child never inherits
# a half-finished compile.
_COMPILE_LOCK = threading.RLock()
os.register_at_fork(before=_COMPILE_LOCK.acquire, after_in_parent=_COMPILE_LOCK.release,
                    after_in_child=_COMPILE_LOCK.release)


def _compile_cached(key: tuple, module: Module, concrete: Module):
    """Compile `module` under `key` unless cached; dumps show `concrete` (replayable sizes)."""
    executable = _CACHE.get(key)
    if executable is not None:
        _profiler.instant("compile cache hit", "compile", key[0])
        _INFO.hits += 1
        try:
            _CACHE.move_to_end(key)
        except KeyError:  # evicted by another thread meanwhile: still a valid executable
            pass
        return executable
    with _COMPILE_LOCK:
        executable = _CACHE.get(key)  # another thread may have compiled it while we waited
        if executable is not None:
            _INFO.hits += 1
            return executable
        return _compile_uncached(key, module, concrete)


def _compile_uncached(key: tuple, module: Module, concrete: Module):
    backend_name = key[0]
    _INFO.misses += 1
    _profiler.instant("compile cache miss", "compile", backend_name)
    if _flags.FLAGS.explain_cache_misses:
        _log_cache_miss(key)
    start = time.perf_counter()
    if _flags.FLAGS.verify:
        from .hlo.verify import verify

        verify(module)
    writer = None
    if _flags.FLAGS.dump_to:
        from .hlo.text import print_module
        from .introspection import DumpWriter

        writer = DumpWriter(_flags.FLAGS.dump_to, module.name)
        writer.write("before_optimizations.txt", print_module(concrete))
    hook = writer.pass_hook if writer is not None and _flags.FLAGS.dump_passes else None
    backend = get_backend(backend_name)
    counts_before = _kernel_counts(backend)
    # A compile still running after SLOW_COMPILE_SECONDS says so (INFO on "lazyarr.compile"),
    # and its end is logged with its kernels and time: no silent multi-second pause.
    announce = threading.Timer(SLOW_COMPILE_SECONDS, _LOG.info, (
        "compiling module %r for %s (%d instructions) ...", module.name, backend_name,
        len(module.entry.post_order())))
    announce.daemon = True
    announce.start()
    try:
        with _profiler.span("compile", "compile", backend_name):
            executable = backend.compile(module, pipeline_dump=hook)
    finally:
        announce.cancel()
    if writer is not None:
        writer.finish(executable)
    seconds = time.perf_counter() - start
    if seconds > SLOW_COMPILE_SECONDS:
        compiled, reused, loaded = (after - before for after, before in zip(_kernel_counts(backend), counts_before))
        _LOG.info("compiled module %r for %s in %.2f s: %d kernels compiled, %d reused, %d loaded from disk",
                  module.name, backend_name, seconds, compiled, reused, loaded)
    _INFO.compile_seconds += seconds
    _CACHE[key] = executable
    if len(_CACHE) > _CACHE_LIMIT:
        _CACHE.popitem(last=False)
    return executable


SLOW_COMPILE_SECONDS = 1.0
_LOG = logging.getLogger("lazyarr.compile")


def _kernel_counts(backend) -> tuple[int, int, int]:
    """(compiled, reused, loaded) kernels of `backend` so far; zeros for one that does not count."""
    counts = backend.kernel_counts() if hasattr(backend, "kernel_counts") else {}
    return counts.get("compiled", 0), counts.get("reused", 0), counts.get("loaded", 0)


def _log_cache_miss(key) -> None:
    """--explain_cache_misses: say how the missed graph differs from the nearest cached one."""
    from .hlo.text import print_module

    backend_name, parameters, outputs = key
    logger = logging.getLogger("lazyarr.cache")
    candidates = [other for other in _CACHE if other[0] == backend_name]
    if not candidates:
        logger.warning("compile cache miss: nothing compiled yet for backend %s", backend_name)
        return

    def signature(entry_key):
        return [f"{p.dtype}{list(p.shape)}" for p in entry_key[1]], [o.opcode for o in entry_key[2]]

    wanted = signature(key)
    nearest = min(candidates, key=lambda other: sum(a != b for a, b in zip(signature(other), wanted)))
    new_text = print_module(Module("missed", Computation("missed", parameters, outputs))).splitlines()
    old_text = print_module(Module("cached", Computation("cached", nearest[1], nearest[2]))).splitlines()
    difference = next(
        (f"first difference: cached {old!r} vs new {new!r}" for old, new in zip(old_text[1:], new_text[1:])
         if old != new),
        "the graphs differ in length",
    )
    logger.warning("compile cache miss (%d entries for %s); %s", len(candidates), backend_name, difference)


def explain(outputs: Sequence[Instruction], bound: BufferLookup):
    """The compile report for evaluating `outputs` now (compiles if needed; runs nothing)."""
    from .hlo.text import print_module
    from .introspection import explanation_for

    # The device of the buffers decides, as in evaluation (lifted scalars are 0-d: no device).
    backend_name = backend_for(linearize(outputs, bound).buffers, "explain")
    host = get_backend(backend_name).device == "cpu"
    module, _ = build_module(outputs, bound, lifted_constants=[] if host else None)  # as evaluate_graph
    before = print_module(module)
    hit = _cache_key(module, backend_name)[0] in _CACHE
    executable = compile_module(module, backend_name)
    return explanation_for(backend_name, before, executable, hit)


# The backend that runs a module whose buffers live on a device other than the default
# backend's (buffers on the host run on the default backend when it is a host backend).
_DEVICE_BACKENDS = {"cpu": "cpu", "gpu": "gpu"}


def device_of_buffers(buffers: Sequence[object], where: str = "evaluate") -> str | None:
    """The one device holding `buffers`, or None when none decides: host 0-d arrays go with any
    device (as Python scalars do: lifted scalars are host arrays, and executables move them).
    Buffers on two devices raise ValueError naming them: move one side with `to_device`."""
    devices: dict[str, object] = {}
    for buffer in buffers:
        if isinstance(buffer, np.ndarray) and buffer.ndim == 0:
            continue
        devices.setdefault(device_of(buffer), buffer)
    if len(devices) > 1:
        described = ", ".join(
            f"{getattr(buffer, 'dtype', '?')}{list(getattr(buffer, 'shape', ()))} on {device!r}"
            for device, buffer in devices.items()
        )
        raise ValueError(
            f"{where}: one computation reads arrays on different devices ({described}); "
            "move them to one device first with x.to_device(...)"
        )
    return next(iter(devices), None)


def backend_for(buffers: Sequence[object], where: str = "evaluate") -> str:
    """The backend that runs a module on these buffers: the one of the device holding them
    (`device_of_buffers`); the default backend when no buffer decides or when the default
    backend runs on that device."""
    default = _flags.FLAGS.backend
    device = device_of_buffers(buffers, where)
    if device is None or get_backend(default).device == device:
        return default
    if device not in _DEVICE_BACKENDS:
        raise ValueError(f"{where}: no backend runs computations on device {device!r}")
    return _DEVICE_BACKENDS[device]


def register_device_backend(device: str, backend_name: str) -> None:
    """Run computations on `device`'s buffers with `backend_name` (for plug-in devices)."""
    _DEVICE_BACKENDS[device] = backend_name


# Linearized signature (+ roots) -> the executable evaluating it: a repeated evaluation (each
# iteration of a loop, the same expression on new inputs) finds its executable with one walk
# and one dict lookup, without building, renumbering or symbolizing a module. FIFO-bounded;
# forgotten with the compile cache and whenever the flags change.
_PLANS: OrderedDict[tuple, object] = OrderedDict()
_PLANS_LIMIT = 1024
_plans_flags = None


def evaluate_graph(outputs: Sequence[Instruction], bound: BufferLookup) -> list[object]:
    """Compile (or reuse) and run the computation of `outputs`; return one buffer each, on
    the device of the buffers it read (see `backend_for`)."""
    return evaluate_graph_keeping(outputs, bound, None)[0]


def evaluate_graph_keeping(outputs: Sequence[Instruction], bound: BufferLookup,
                           keep: Callable[[Instruction, int], bool] | None,
                           optional: Sequence[Instruction] = ()) -> tuple[list, list]:
    """evaluate_graph, also computing the interior nodes referenced from outside the graph
    that `keep(node, references)` accepts (`references`: how many references from outside
    the graph the node has), and the `optional` nodes no larger than the largest value the
    outputs' graph reads or writes: (the outputs' buffers, [(kept or optional node, its
    buffer), ...]).

    The frontend keeps what the program still holds (its arrays), and what a node outside the
    graph reads: a loop that evaluates a test every iteration (`while float(error) > tol`) then
    computes its state once, with the test, instead of again from the start at every test; one
    that evaluates a loss read from its state before the update (`w = w - lr * g`) computes the
    update from the state kept, not from the last state evaluated. Views (layout ops) of
    evaluated values are never kept: recomputing them is free. `optional` nodes are other values
    the program holds, outside the outputs' graph but likely sharing it (a loop's other results)."""
    global _plans_flags
    if _flags.FLAGS is not _plans_flags:
        _PLANS.clear()
        _plans_flags = _flags.FLAGS
    if _profiler._ACTIVE is not None:
        with _profiler.span("evaluate", "eval"):
            return _evaluate(outputs, bound, keep, optional)
    return _evaluate(outputs, bound, keep, optional)


def evaluate_keeping_one(output: Instruction, keep: Callable[[Instruction, int], bool]) -> tuple[object, list]:
    """evaluate_graph_keeping([output], bound_buffer, keep) as (its buffer, held), in the fewest
    Python steps: a program's own evaluation of one array (`float(change)` every iteration of a
    solver, `np.asarray(x)`), whose bookkeeping is most of its cost once the executable is
    cached. The general path wherever the flags changed or a profile records."""
    if _flags.FLAGS is not _plans_flags or _profiler._ACTIVE is not None:
        (result,), held = evaluate_graph_keeping([output], _BOUND_BUFFER, keep)
        return result, held
    if _graph_walk is not None and _flags.FLAGS.c_extensions:
        # The cached case in C (walk, kept positions, plan, run); a graph without a plan: below.
        ran = _graph_walk.run_cached(output, _DECISIONS[True], _PLANS, keep)
        if ran is not None:
            _INFO.hits += 1
            return ran
    graph = linearize((output,), _BOUND_BUFFER, lift_constants=True)
    kept = _kept_positions(graph, keep) if graph.shared else None
    if kept:
        graph.roots += tuple(kept)
    results = _run_graph(graph, _BOUND_BUFFER)
    if not kept:
        return results[0], ()
    nodes = graph.nodes
    return results[0], [(nodes[position], buffer) for position, buffer in zip(kept, results[1:])]


def _evaluate(outputs, bound, keep, optional=()):
    graph = linearize(outputs, bound, lift_constants=True)
    chosen = ()
    if optional:
        largest = _largest_touched(graph)
        chosen = [node for node in optional if node._bound is None and node.size <= largest]
        if chosen:
            del graph  # (its node list would count as references from outside the next walk)
            graph = linearize([*outputs, *chosen], bound, lift_constants=True)
    kept = _kept_positions(graph, keep) if keep is not None else None
    if not kept and not chosen:
        return _run_graph(graph, bound), []
    if kept:
        graph.roots += tuple(kept)
    results = _run_graph(graph, bound)
    count = len(outputs)
    held = list(zip(chosen, results[count:count + len(chosen)]))
    held += [(graph.nodes[position], buffer) for position, buffer in zip(kept or (), results[count + len(chosen):])]
    return results[:count], held


def _largest_touched(graph: Linearized) -> int:
    """The size of the largest value an evaluation of `graph` reads (a leaf) or writes (a root)."""
    nodes = graph.nodes
    return max(nodes[index].size for index in (*graph.leaf_positions, *graph.roots))


def _kept_positions(graph: Linearized, keep: Callable[[Instruction, int], bool]) -> list[int]:
    """Positions of the interior nodes (neither leaves nor outputs) referenced from outside the
    graph (`graph.shared`) that `keep` accepts, at most _MOST_KEPT of them.

    Never a value larger than the largest the evaluation reads or writes anyway: a program
    may name a huge lazy product and read a few elements of it (`M = a[:, None] * a[None, :]`,
    `float(M[3, 4])`), which must stay as cheap as it is lazily. Never a function of constants
    alone (it is computed wherever it is read, on any device) nor a view of a value that needs
    no computing (free to recompute: `_views_a_value`)."""
    kept = []
    nodes = graph.nodes
    for position, references in graph.shared:
        node = nodes[position]
        if (node._bound is not None or node.constant_only
                or (node.op in _VIEW_OPS and _views_a_value(node)) or not keep(node, references)):
            continue
        if _touches_as_large(graph, node.size):
            kept.append(position)
            if len(kept) == _MOST_KEPT:
                break
    return kept


def _touches_as_large(graph: Linearized, size: int) -> bool:
    """Whether an evaluation of `graph` reads (a leaf) or writes (a root) a value of at least
    `size` elements: `size <= _largest_touched(graph)`, stopping at the first (usually the
    first leaf: a loop's state, as large as what it keeps)."""
    nodes = graph.nodes
    for index in graph.leaf_positions:
        if nodes[index].size >= size:
            return True
    for index in graph.roots:
        if nodes[index].size >= size:
            return True
    return False


def _views_a_value(node: Instruction) -> bool:
    """Whether a view node (a layout op) reads, through layout ops only, a value that needs
    no computing (a bound buffer, a leaf, constants): free to recompute, never worth keeping.
    A layout op of a computed value (`A.T @ r` is the reshape of a dot; `(a * b).T`) is that
    value as the program holds it: kept, else the computation is repeated by the next read.
    A broadcast is never kept (it would write out copies of its operand)."""
    while True:
        if node.op is _BROADCAST or node._bound is not None or node.constant_only:
            return True
        operands = node.operands
        if not operands:
            return True
        node = operands[0]
        if node.op not in _VIEW_OPS:
            return node._bound is not None or not node.operands or node.constant_only



def _run_graph(graph: Linearized, bound) -> list:
    key = (graph.signature, graph.roots)
    plan = _PLANS.get(key)
    if plan is not None:
        _INFO.hits += 1
        if _profiler._ACTIVE is not None:
            _profiler.instant("compile cache hit", "compile", plan[1])
        return plan[2](graph.buffers)
    lifted = {id(buffer) for position, buffer in zip(graph.leaf_positions, graph.buffers)
              if graph.nodes[position].op is _CONSTANT}
    backend_name = backend_for([buffer for buffer in graph.buffers if id(buffer) not in lifted])
    if any(graph.nodes[position].size > _LIFTED_CONSTANT_ELEMENTS for position in graph.leaf_positions
           if graph.nodes[position].op is _CONSTANT) and get_backend(backend_name).device != "cpu":
        # Device backends keep large constants in the code: another module, not remembered here.
        module, buffers = build_module([graph.nodes[position] for position in graph.roots], bound)
        return compile_module(module, backend_name).run(buffers)
    executable = compile_module(module_of(graph), backend_name)
    _PLANS[key] = (executable, backend_name, fastest_run(executable))
    if len(_PLANS) > _PLANS_LIMIT:
        _PLANS.popitem(last=False)
    return executable.run(graph.buffers)
