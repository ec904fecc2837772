"""`la.jit`: trace a function once per signature into one HLO module, then reuse its executable.

The first call with a given *signature* runs the function once on tracers (lazy arrays whose
leaves are parameters without buffers), so the whole function becomes one graph, and compiles
it. Later calls with the same signature skip graph building: they flatten the arguments, look
the signature up, run the cached executable on the argument buffers and wrap the results.

A signature is the arguments' pytree structure (frontend/pytree.py), each array leaf's shape
and dtype, each Python scalar's type and value, the static arguments' values, and the backend,
which follows the device of the argument buffers: GPU arrays run on the GPU, host arrays on the
default backend, arrays on two devices raise ValueError.
Python scalars stay Python scalars while tracing, so they keep NumPy's weak promotion
(`f32 * 0.5` is float32) and may steer Python control flow like static arguments. A new value
re-traces (about the cost of one eager evaluation of the function) but does not recompile: the
compile driver lifts scalar constants to runtime parameters, so the new graph finds its
executable in the compile cache (the values 0, 1, -1, 2, 3 and 0.5 stay constants, compiled
once each, because they simplify).

Inside a trace, asking a tracer for its value raises `TracedValueError` (frontend/tracing.py);
a jitted function called during another trace is inlined into it. Lazy arrays the function
closes over (closure cells, globals it names, functools.partial arguments) are evaluated before
tracing and enter the module as captured buffers, so they are not recomputed on every call.

>>> import lazyarr as la, numpy as np
>>> @la.jit
... def scaled_difference(a, b, scale):
...     return (a - b) * scale
>>> scaled_difference(np.ones(3, np.float32), np.zeros(3, np.float32), 0.5).dtype
dtype('float32')
"""

from __future__ import annotations

import functools
import logging
import re
import sys

import numpy as np

from .. import _flags, _profiler, dtypes
from ..compile import backend_for, build_module, cache_info, compile_module, fastest_run
from ..hlo import Computation, Module, constant, remake, replace_all
from ..hlo.text import print_module
from ..introspection import explanation_for
from . import fast_paths, pytree, tracing
from .array import Array, evaluate_arrays, leaf_for
from .core import as_array
from .jit_signature import (
    JitCacheInfo,
    ShapeDtypeStruct,
    StaticArguments,
    call_signature,
    describe_differences,
    position_of,
)

__all__ = ["Compiled", "JittedFunction", "Lowered", "ShapeDtypeStruct", "jit"]

_CACHE_LIMIT = 256  # signatures kept per jitted function; the oldest goes first
_PLACEHOLDER = np.empty(0)  # what build_module sees as the "buffer" of a tracer; never run


def jit(fun=None, /, *, static_argnums=(), static_argnames=()):
    """Compile `fun` as one HLO module per signature and reuse it (see the module docstring).

    Use as `la.jit(f)`, `@la.jit` or `@la.jit(static_argnums=1)`. Static arguments must be
    hashable; each value compiles its own version. The result has `lower`, `explain`,
    `cache_size`, `cache_info` and `clear_cache`.

    >>> import lazyarr as la
    >>> @la.jit(static_argnames="axis")
    ... def normalized(x, axis):
    ...     return x / x.sum(axis=axis, keepdims=True)
    >>> normalized(la.ones((2, 2)), axis=1).tolist()
    [[0.5, 0.5], [0.5, 0.5]]
    """
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums, static_argnames=static_argnames)
    return JittedFunction(fun, static_argnums, static_argnames)


class _Entry:
    """One compiled signature: the executable, the buffers it captured, the results' structure."""

    __slots__ = ("executable", "captured", "out_tree", "_call", "run_arrays")

    def __init__(self, executable, captured: list, out_tree):
        self.executable, self.captured, self.out_tree = executable, captured, out_tree
        self._call = fastest_run(executable)  # (W5's whole call is ~5 us: the fewest layers)
        # `run(buffers, ())`, for calls of lazyarr arrays only (JittedFunction._last): one result
        # and nothing captured take the shortest path.
        self.run_arrays = self._run_one if out_tree is pytree.LEAF and not captured else self._run_no_user_arrays

    def _run_one(self, buffers: list):
        result = self._call(buffers)[0]
        if type(result) is _NDARRAY:
            return Array(leaf_for(result))
        return self.run(buffers, ())

    def _run_no_user_arrays(self, buffers: list):
        return self.run(buffers, ())

    def run(self, buffers: list, user_arrays: list):
        if self.captured:
            buffers = buffers + self.captured
        results = self._call(buffers)
        if self.out_tree is pytree.LEAF and not user_arrays and type(results[0]) is np.ndarray:
            return Array(leaf_for(results[0]))  # the commonest call: one result, no NumPy argument
        arrays = []
        for result in results:
            if type(result) is not np.ndarray:
                if not isinstance(result, np.generic):  # a device buffer: stays on its device
                    arrays.append(Array(leaf_for(result)))
                    continue
                result = np.asarray(result)
            for array in user_arrays:
                if np.may_share_memory(result, array):
                    result = result.copy()  # never alias (nor make read-only) the caller's NumPy array
                    break
            arrays.append(Array(leaf_for(result)))
        if self.out_tree is pytree.LEAF:
            return arrays[0]
        return pytree.unflatten(self.out_tree, arrays)


class _Traced:
    """The graph of one trace: tracer leaves (one per array argument) and output nodes."""

    def __init__(self, name: str, parameters: list, outputs: list, out_tree):
        self.name, self.parameters, self.outputs, self.out_tree = name, parameters, outputs, out_tree

    def build(self, *, for_execution: bool) -> tuple[Module, list[np.ndarray]]:
        """(module, captured buffers). Parameters come first, one per array argument in order.

        For execution, captured buffers and scalar constants follow as parameters (the compile
        cache then serves new scalar values and new closure data). Otherwise (`lower`) the
        module is self-contained: captured buffers become constants, scalars stay constants.
        """
        tracer_ids = {id(node) for node in self.parameters}

        def lookup(node):
            return _PLACEHOLDER if id(node) in tracer_ids else node._bound

        count = len(self.parameters)
        try:
            # Tracers lead the roots, so the post-order walk numbers them 0..count-1 in order.
            module, buffers = build_module(
                [*self.parameters, *self.outputs], lookup, self.name, lift_scalars=for_execution
            )
        except ValueError:
            escaped = tracing.find_tracer(self.outputs, lambda node: id(node) in tracer_ids or node._bound is not None)
            if escaped is None:
                raise
            raise tracing.TracedValueError(tracing.escaped_tracer_message(tracing.tracer_of(escaped))) from None
        parameters, outputs, captured = module.entry.parameters, module.entry.outputs[count:], buffers[count:]
        if captured and not for_execution:
            values = {id(parameters[count + index]): buffer for index, buffer in enumerate(captured)}
            outputs = replace_all(outputs, lambda node, operands: _embedded(node, operands, values))
            parameters, captured = parameters[:count], []
        return Module(self.name, Computation(self.name, parameters, outputs)), captured


def _embedded(node, operands, values):
    """replace_all rule: a captured-buffer parameter becomes a constant holding the buffer."""
    if id(node) in values:
        return constant(values[id(node)])
    if operands == node.operands:
        return node
    return remake(node, operands)


class JittedFunction:
    """What `la.jit(f)` returns: call it like `f`; see the module docstring."""

    def __init__(self, fun, static_argnums=(), static_argnames=()):
        if not callable(fun):
            raise TypeError(f"la.jit: expected a function to compile, got {type(fun).__name__} {fun!r:.60}")
        functools.update_wrapper(self, fun)
        self._fun = fun
        self._name = getattr(fun, "__name__", type(fun).__name__)
        self._module_name = "jit_" + re.sub(r"[^A-Za-z0-9_]", "_", self._name)  # an HLO identifier
        self._statics = StaticArguments(fun, self._name, static_argnums, static_argnames)
        self._cache: dict = {}
        # The last call's signature when it was the commonest kind (evaluated host lazyarr
        # arrays only, no static arguments): (flags, ((shape, dtype), ...), entry). The next
        # call with arrays of those shapes and dtypes runs its entry without building and
        # hashing a key (a loop calling a jitted step).
        self._last: tuple | None = None
        self._hits = self._misses = self._traces = self._compiles = 0

    def __repr__(self):
        return f"<la.jit({self._name}): {len(self._cache)} compiled signature(s)>"

    def __get__(self, instance, owner=None):
        """As a method: bind the instance as the first argument (mark it static to use it)."""
        return self if instance is None else functools.partial(self, instance)

    def __reduce__(self):
        """Pickled by reference, never with its executables (dask ships functions to workers):
        a module-level `@la.jit` function by its name, which the receiving process imports;
        any other as `la.jit(wrapped function)` with the same static arguments. Each process
        traces and compiles (or loads from the persistent compile cache) for itself."""
        module = getattr(self, "__module__", None)
        named = module not in (None, "__main__") and module in sys.modules
        found = sys.modules[module] if named else None
        for part in getattr(self, "__qualname__", "<locals>").split("."):
            found = getattr(found, part, None)
        if found is self:
            return self.__qualname__
        static = functools.partial(jit, static_argnums=self._statics.sorted_positions,
                                   static_argnames=tuple(sorted(self._statics.names)))
        return static, (self._fun,)

    # -- calls ---------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if tracing.STATE.traces:  # (is_tracing(), inline: every call asks)
            return self._inline(args, kwargs)
        last = self._last
        if last is not None and not kwargs and last[0] is _flags.FLAGS:
            buffers = _host_buffers(args, last[1])
            if buffers is not None:
                self._hits += 1
                return last[2].run_arrays(buffers)
        key, buffers, user_arrays, tree = call_signature(self._statics, args, kwargs)
        try:
            entry = self._cache.get(key)
        except TypeError:
            raise self._statics.unhashable_error(args, kwargs) from None
        if entry is None:
            entry = self._compile(key, tree, args, kwargs, buffers)
        else:
            self._hits += 1
        if tree is args and not user_arrays and key[2] is None and _all_lazyarr_host(args):
            self._last = (_flags.FLAGS, key[1], entry)
        return entry.run(buffers, user_arrays)

    def _compile(self, key, tree, args, kwargs, buffers) -> _Entry:
        """The miss path: trace, build the module, compile (or find it compiled), cache it.

        The backend is the key's (the arguments' device) unless arrays the function closes over
        decide it: a function of no array arguments over GPU arrays runs on the GPU, and
        captured arrays on another device than the arguments' raise ValueError."""
        self._misses += 1
        self._statics.check_call(args, kwargs)
        if _flags.FLAGS.explain_cache_misses:
            self._log_miss(key)
        traced = self._trace(tree, args, kwargs)
        module, captured = traced.build(for_execution=True)
        backend = key[-1]
        if captured:
            backend = backend_for([*buffers, *captured], where=f"la.jit({self._name})")
        misses = cache_info().misses
        executable = compile_module(module, backend)
        self._compiles += cache_info().misses != misses
        entry = _Entry(executable, captured, traced.out_tree)
        if len(self._cache) >= _CACHE_LIMIT:
            del self._cache[next(iter(self._cache))]
        self._cache[key] = entry
        return entry

    def _trace(self, tree, args, kwargs) -> _Traced:
        """Run the function once on tracers standing for the array leaves of `tree`."""
        self._traces += 1
        _evaluate_captured_lazy_arrays(self._fun)
        leaves, treedef = pytree.flatten(tree)
        parameters = []
        with _profiler.span("trace", "jit", self._name), tracing.tracing(self._name) as trace:
            traced_leaves = []
            for leaf in leaves:
                if dtypes.weak_scalar_type(leaf) is not None:
                    traced_leaves.append(leaf)  # a Python scalar: part of the signature by value
                    continue
                parameters.append(trace.new_tracer(leaf.shape, leaf.dtype))
                traced_leaves.append(Array(parameters[-1]))
            call_args, call_kwargs = self._statics.merge(pytree.unflatten(treedef, traced_leaves), args, kwargs)
            result = self._fun(*call_args, **call_kwargs)
        out_leaves, out_tree = pytree.flatten(result)
        outputs = [self._output_node(leaf, result) for leaf in out_leaves]
        return _Traced(self._module_name, parameters, outputs, out_tree)

    def _output_node(self, leaf, result):
        if isinstance(leaf, Array):
            return leaf._node
        if dtypes.weak_scalar_type(leaf) is not None or isinstance(leaf, (np.ndarray, np.generic)):
            return as_array(leaf, where=f"la.jit({self._name}) result")._node
        raise TypeError(
            f"la.jit({self._name}): {position_of(leaf, result, {}, 'result')} is a "
            f"{type(leaf).__name__}; a jitted function returns arrays, or tuples, lists and dicts of them"
        )

    def _inline(self, args, kwargs):
        """Called while another function is traced: run on the caller's tracers (one module)."""
        tree, _ = self._statics.tree_of(args, kwargs)
        leaves, treedef = pytree.flatten(tree)
        arrays = [as_array(leaf) if isinstance(leaf, (np.ndarray, np.generic)) else leaf for leaf in leaves]
        call_args, call_kwargs = self._statics.merge(pytree.unflatten(treedef, arrays), args, kwargs)
        return self._fun(*call_args, **call_kwargs)

    def _log_miss(self, key) -> None:
        """--explain_cache_misses: how this signature differs from the nearest cached one."""
        logger = logging.getLogger("lazyarr.jit")
        if not self._cache:
            logger.warning("la.jit(%s): first call, tracing and compiling", self._name)
            return
        reasons = min((describe_differences(cached, key) for cached in self._cache), key=len)
        logger.warning("la.jit(%s) signature miss (%d cached): %s", self._name, len(self._cache), "; ".join(reasons))

    # -- introspection -------------------------------------------------------------------------
    def lower(self, *args, **kwargs) -> Lowered:
        """The traced HLO module for these arguments; `la.ShapeDtypeStruct`s may stand for arrays.

        `.module` has one parameter per array leaf of the arguments, in flattened order, and one
        output per leaf of the result; closed-over arrays are constants in it.
        """
        key, _, _, tree = call_signature(self._statics, args, kwargs, abstract=True)
        traced = self._trace(tree, args, kwargs)
        module, _ = traced.build(for_execution=False)
        return Lowered(self, key, module, traced.out_tree)

    def explain(self, *args, **kwargs):
        """The compile report (HLO before and after, fusion, buffers) of calling with these arguments."""
        key, _, _, tree = call_signature(self._statics, args, kwargs, abstract=True)
        module, _ = self._trace(tree, args, kwargs).build(for_execution=True)
        before = print_module(module)
        misses = cache_info().misses
        executable = compile_module(module, key[-1])
        return explanation_for(key[-1], before, executable, cache_hit=cache_info().misses == misses)

    def cache_size(self) -> int:
        """How many signatures are compiled for this function."""
        return len(self._cache)

    def cache_info(self) -> JitCacheInfo:
        """Calls served from the cache (hits), traced (misses), traces, and real compilations."""
        return JitCacheInfo(self._hits, self._misses, self._traces, self._compiles, len(self._cache))

    def clear_cache(self) -> None:
        self._cache.clear()
        self._last = None


def host_buffers_of_layouts(args: tuple, layouts: tuple) -> list | None:
    """The buffers of `args` when each is an evaluated host lazyarr array of the shape and
    dtype `layouts` lists in order (the last call's signature), else None. (`_host_buffers`:
    this, or the same in C: fast_paths.py.)"""
    if len(args) != len(layouts):
        return None
    buffers = []
    for arg, (shape, dtype) in zip(args, layouts):
        if type(arg) is not Array:
            return None
        node = arg._node
        buffer = node._bound
        if type(buffer) is not _NDARRAY or node.dtype is not dtype or node.shape != shape:
            return None
        buffers.append(buffer)
    return buffers


_host_buffers = fast_paths.host_buffers(host_buffers_of_layouts)


def _all_lazyarr_host(args: tuple) -> bool:
    for arg in args:
        if type(arg) is not Array or type(arg._node._bound) is not _NDARRAY:
            return False
    return True


_NDARRAY = np.ndarray


class Lowered:
    """One signature of a jitted function as an HLO module (what `f.lower(*args)` returns).

    `module`: parameters are the flattened array arguments in order, outputs the flattened
    results in order; closed-over arrays and Python-scalar arguments are constants in it.
    `str()` and `as_text()` give its HLO text; `compile()` gives a callable for this signature.
    """

    def __init__(self, jitted: JittedFunction, key, module: Module, out_tree):
        self._jitted, self._key, self._module, self.out_tree = jitted, key, module, out_tree

    @property
    def module(self) -> Module:
        """A fresh Module each time: compiling rewrites the module it is given."""
        return Module(self._module.name, self._module.entry)

    def as_text(self) -> str:
        return print_module(self._module)

    def __str__(self) -> str:
        return self.as_text()

    def __repr__(self) -> str:
        return f"<Lowered {self._module.name}: {len(self._module.entry.parameters)} parameter(s)>"

    def compile(self) -> Compiled:
        executable = compile_module(self.module, self._key[-1])
        return Compiled(self._jitted, self._key, _Entry(executable, [], self.out_tree))


class Compiled:
    """A jitted function compiled for one signature: call it with arguments of that signature
    (static arguments included, with the values given to `lower`)."""

    def __init__(self, jitted: JittedFunction, key, entry: _Entry):
        self._jitted, self._key, self._entry = jitted, key, entry

    def __call__(self, *args, **kwargs):
        key, buffers, user_arrays, _ = call_signature(self._jitted._statics, args, kwargs)
        if key != self._key:
            differences = "; ".join(describe_differences(self._key, key))
            raise TypeError(f"la.jit({self._jitted._name}) compiled for another signature: {differences}")
        return self._entry.run(buffers, user_arrays)


def _evaluate_captured_lazy_arrays(fun) -> None:
    """Evaluate lazy arrays `fun` closes over, so the module captures their buffers instead of
    recomputing them on each call: closure cells, globals it names, partial's arguments, and
    the items of lists, tuples and dicts among those (one level). Not while another function is
    traced: a closure may then hold that trace's tracers, which have no value."""
    if tracing.is_tracing():
        return
    values = []
    while isinstance(fun, functools.partial):
        values += [*fun.args, *fun.keywords.values()]
        fun = fun.func
    fun = getattr(fun, "__func__", fun)
    for cell in getattr(fun, "__closure__", None) or ():
        try:
            values.append(cell.cell_contents)
        except ValueError:  # an empty cell (a name assigned later)
            pass
    code, names = getattr(fun, "__code__", None), getattr(fun, "__globals__", {})
    if code is not None:
        values += [names[name] for name in code.co_names if name in names]
    lazy = []
    for value in values:
        if type(value) in (list, tuple, dict):
            value = list(value.values() if type(value) is dict else value)[:1000]
        else:
            value = [value]
        lazy += [item for item in value if isinstance(item, Array) and not item.is_evaluated]
    if lazy:
        evaluate_arrays(lazy)
