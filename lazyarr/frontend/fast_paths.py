"""The frontend's fast paths in C (`_fast_paths.c`), where the optional extension is built.

Recording an elementwise op (`a + b`, `x * 0.5`, `la.exp(x)`), replaying a graph template
(`mean`, `@`, reductions), reading an element (`x[i]`, `float(x[i])`) and checking a jitted
call's arguments each cost from a few hundred nanoseconds to a few microseconds of Python
(frames, attribute reads, objects): more than NumPy's whole op on small arrays. The C extension
does their common case and nothing else, calling the Python for every other case:

- FastSlots in place of the Array operators, `Array.__getitem__`, `__setitem__` (a plain key's
  write, from indexing's SETITEM_TEMPLATES), `__matmul__`, the templated reductions (methods and
  namespace functions: `x.max(axis=-1, keepdims=True)`) and the Element conversions; they pickle
  as the functions they stand for (`restore`);
- `record_binary` / `record_unary` in place of direct_recording's (elementwise ops on a
  signature seen before, NumPy scalar operands among them), also as FastSlots for the
  namespace's elementwise functions (`la.exp(x)`) and `Array.__array_ufunc__` (NumPy's own
  ufuncs called plainly: `np.float32(0.1) * x`, `np.exp(x)`);
- `adopt_evaluated` in place of array.python_adopt_evaluated and `parameter_leaf` inside
  hlo.instruction.fresh_parameter (one evaluated array's leaves: `float(x)` each iteration);
- `replay` and the intern table's sweep for hlo.instruction;
- `host_buffers` in place of jit.py's `host_buffers_of_layouts`.

This module loads it, hands it the classes, tables and slot descriptors it reads, installs it,
and answers with the Python function wherever it is not built or `--c_extensions=false` (read
at import). The C file's header says what each path mirrors and how it stays safe.
"""

from __future__ import annotations

import importlib

import numpy as np

from .. import _flags, _profiler
from .. import compile as compile_driver
from ..hlo import Instruction, template
from ..hlo import instruction as instruction_module
from . import array as array_module
from . import (
    direct_recording,
    elementwise,
    indexing,
    interop,
    linalg,
    reduction_support,
    reductions,
    templated_calls,
    tensor_products,
    tracing,
    views,
)
from .array import Array
from .elements import INTEGER_SCALAR_TYPES, REAL_SCALAR_TYPES, Element

try:  # the optional C extension (setup.py)
    from . import _fast_paths
except ImportError:  # built without a C compiler: the Python code does it all
    _fast_paths = None

ENABLED = _fast_paths is not None and _flags.FLAGS.c_extensions
if ENABLED:
    _fast_paths.configure(
        Array, Element, Instruction, np.ndarray, Array._node, Instruction._bound,  # (the slots' descriptors)
        Element._value, Element._leaf, Array._base, Array._views, Instruction.shape, Instruction.dtype,
        tuple(REAL_SCALAR_TYPES), tuple(INTEGER_SCALAR_TYPES))
    _fast_paths.configure_recording(
        direct_recording.DIRECT, direct_recording.SCALAR_OPERANDS, instruction_module._INTERN, vars(instruction_module),
        instruction_module._sweep, instruction_module._interned, direct_recording.scalar_operand,
        array_module.holders_with, array_module.track_pending, _flags, tracing.STATE, template.RECORDING,
        array_module._PENDING, Instruction.op, Instruction.operands,
        Instruction.attrs, Instruction._attr_map, Instruction._local, Instruction._identity, Instruction.depth,
        Instruction.constant_only, Instruction._holder)
    direct_recording.use_fast_recording(_fast_paths.record_binary, _fast_paths.record_unary)
    instruction_module.use_fast_replay(_fast_paths.replay)
    instruction_module.use_fast_sweep(_fast_paths.sweep_intern_table)
    instruction_module.use_fast_leaf(_fast_paths.new_leaf, _fast_paths.parameter_leaf)
    _fast_paths.configure_views(
        views.VIEW_CHAINS, views.ViewOf, array_module.leaf_for, views.ViewOf.base, views.ViewOf.read,
        views.ViewOf.write, views.ViewOf.layout, views.ViewOf.refusal, views.ViewOf.strided)
    views.note_view_chains()
    _fast_paths.configure_evaluation(instruction_module._CHECKED_PARAMETERS, instruction_module._PARAMETER_NUMBERS,
                                     instruction_module.fresh_parameter, array_module._kept,
                                     array_module._note_kept_for_readers)
    array_module.use_fast_adopt(_fast_paths.adopt_evaluated)
    if compile_driver._graph_walk is not None:  # (compile's cached evaluation in C: evaluate_one)
        _fast_paths.configure_cached_evaluation(
            compile_driver._graph_walk.run_cached, compile_driver._DECISIONS[True], compile_driver._PLANS,
            vars(compile_driver), vars(_profiler), compile_driver._INFO, array_module._worth_keeping,
            tracing._TRACER_ENTRIES)
        array_module.use_fast_adopt(_fast_paths.adopt_evaluated, _fast_paths.evaluate_one)
    _fast_paths.configure_numpy_operands(elementwise.NUMPY_SCALAR_CONSTANTS, elementwise.NUMPY_SCALAR_TYPES,
                                         interop.OWN_BINARY_UFUNCS, interop.OWN_UNARY_UFUNCS)
    _fast_paths.configure_templates(linalg.MATMUL_TEMPLATES.table, indexing.SETITEM_TEMPLATES,
                                    reduction_support._TEMPLATE_TABLE, reduction_support.NO_VALUE, template.Template,
                                    template.Template.fixed, template.Template.steps, template.Template.outputs)
    reduction_support.use_fast_replayed_array(_fast_paths.replayed_array)


def accelerated(kind: str, function):
    """`function` (the Python implementation of a `kind` read: "getitem", "float", "int", "bool",
    "index") as a FastSlot, which does the common case itself (an evaluated host buffer read
    with integers; an element holding a real NumPy scalar) and calls `function` for the rest.

    A Python `__getitem__` or `__float__` costs a frame and its bytecode per read, several times
    NumPy's whole read: `float(x[i])` 395 -> 120 ns on the 2-core box (NumPy: 77 ns)."""
    return _fast_paths.FastSlot(kind, function) if ENABLED else function


def operator(kind: str, method, name: str):
    """An Array operator (`kind` "binary", "reflected" or "unary" of elementwise op `name`) as a
    FastSlot recording its direct path in C and calling the Python `method` otherwise."""
    return _fast_paths.FastSlot(kind, method, name) if ENABLED else method


def install() -> None:
    """`Array.__getitem__`, `__matmul__`, `__setitem__`, `.T`, the templated reductions and the
    Element conversions through their C slots (methods.py binds the rest of Array's methods,
    then this)."""
    Array.__getitem__ = accelerated("getitem", Array.__dict__["__getitem__"])
    if ENABLED:  # `x1 @ x2` and `u[1:-1] = v` replayed from templates, `.T` made from its noted chain, in C
        Array.__matmul__ = _fast_paths.FastSlot("matmul", Array.__dict__["__matmul__"])
        Array.__setitem__ = _fast_paths.FastSlot("setitem", Array.__dict__["__setitem__"])
        Array.T = _fast_paths.FastView("T", Array.__dict__["T"].fget)
        # `float(loss)` of a one-element array: evaluated (evaluate_one) and read in C
        Array.__float__ = _fast_paths.FastSlot("array_float", Array.__dict__["__float__"])
        # `x.reshape(h, w)` of an array owning its value: the view chain noted for its arguments, in C
        Array.reshape = _fast_paths.FastSlot("reshape", Array.__dict__["reshape"])
        # `np.float32(0.1) * x`, `np.exp(x)`: NumPy's own ufunc called on operands the direct path takes
        Array.__array_ufunc__ = _fast_paths.FastSlot("ufunc", Array.__dict__["__array_ufunc__"])
    for kind in ("float", "int", "bool", "index"):
        name = f"__{kind}__"
        setattr(Element, name, accelerated(kind, Element.__dict__[name]))
    if ENABLED:  # `la.exp(x)`, `la.maximum(x, 0.0)`: the namespace's elementwise functions record in C too
        for name, (ufunc, _) in elementwise.UFUNCS.items():
            function = getattr(elementwise, name, None)
            if getattr(function, "__module__", None) == elementwise.__name__ and ufunc.nin in (1, 2):
                kind = "unary" if ufunc.nin == 1 else "binary"
                setattr(elementwise, name, _fast_paths.FastSlot(kind, function, name))
    if ENABLED:  # `la.where(m, x, 0.0)`, `la.clip(x, 0, 1)`, `la.outer(u, v)` replayed from their templates in C
        _fast_paths.configure_replayed_calls(templated_calls.CALLS.table, _REPLAYED_ARITIES)
        for module, name in ((elementwise, "where"), (elementwise, "clip"), (tensor_products, "outer"),
                             (linalg, "outer")):
            setattr(module, name, _fast_paths.FastSlot("replayed", getattr(module, name), name))
    if ENABLED:  # `x.sum()`, `x.max(axis=-1, keepdims=True)`, `la.mean(x, 0)` replayed from their templates in C
        for name in _TEMPLATED_REDUCTIONS:
            setattr(reductions, name, _fast_paths.FastSlot("reduction", getattr(reductions, name), name))
            if name in Array.__dict__:
                setattr(Array, name, _fast_paths.FastSlot("reduction", Array.__dict__[name], name))


# Functions replayed through templated_calls.replayed with no statics, keyed by all their
# positional arguments (missing trailing ones None): how many.
_REPLAYED_ARITIES = {"where": 3, "clip": 3, "outer": 2}

# Reductions whose plain calls go through reduction_support.templated under their own name
# (the key's first item): their namespace functions and Array methods get a C slot.
_TEMPLATED_REDUCTIONS = ("sum", "prod", "mean", "max", "min", "amax", "amin")


def restore(module: str, qualname: str):
    """What `module` holds under `qualname`: how a FastSlot is unpickled (`pickle.dumps(la.max)`;
    the slot stands where its Python function stood)."""
    found = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


def host_buffers(python_function):
    """jit.py's `host_buffers_of_layouts` (`python_function`), in C where built."""
    return _fast_paths.host_buffers if ENABLED else python_function
