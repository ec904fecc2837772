"""Writes into evaluated arrays nothing else can see: NumPy's own store into the buffer.

A loop that sets elements or rows one by one (`x[i] = f(i)`, `M[i] = row`, the swaps of NumPy's
`random.shuffle`) would otherwise record, per statement, a new value of the whole array: ~10 µs
a write and more (a new NumPy row is a new constant, so a new kernel), against NumPy's ~0.1 µs,
and a graph as long as the loop. Values are immutable because graphs, views and NumPy arrays
from `np.asarray` may share a buffer with the array written; when nothing but the array refers
to its node and its buffer (reference counts, as the host buffer pool decides that a buffer is
free: `host_buffers.sole_reference`), nobody can see the old value, and a write of a known value
(a scalar, an element, a NumPy array or list, an evaluated array) at a basic key is NumPy's
`buffer[key] = value`, with NumPy's conversions, broadcasting and errors. A pending value (an
expression) is written lazily as before: it fuses with what computes it.

A pending array whose last `_CHAIN` statements each wrote a known value into a small part of
it is evaluated at the next such write: a fill loop from `la.zeros(n)` pays a few lazy writes
and one evaluation, then writes in place. A few writes after other work (boundary values set
after each stencil step) stay lazy and fuse with what computes and reads the array.
"""

from __future__ import annotations

import sys

import numpy as np

from .. import dtypes
from ..backends.host_buffers import sole_reference
from ..hlo import template
from . import tracing
from .array import Array, evaluate_arrays, leaf_for
from .elements import Element

_NDARRAY = np.ndarray
_SCALAR_TYPES = frozenset({int, float, bool, complex}) | frozenset(
    np.dtype(code).type for code in "?bhilqBHILQefdgFDG")
_INDEX_TYPES = frozenset({int}) | frozenset(np.dtype(code).type for code in "bhilqBHILQ")
_BASIC_INDEX_TYPES = _INDEX_TYPES | {slice, type(Ellipsis), type(None)}
_DTYPES = frozenset(np.dtype(dtype) for dtype in dtypes.ALL)
_TRACING = tracing.STATE
_RECORDING = template.RECORDING


def written_in_place(array, key, value) -> bool:
    """Do `array[key] = value` as NumPy's write into the array's own buffer, when `key` is a
    basic key (integers, slices, `...`, `None`), `value` is known (a scalar, an element, a
    NumPy array or list, an evaluated host array), and nothing else refers to the array's
    value; False (nothing done) otherwise, for the lazy write to take over."""
    if type(array) is not Array or array._base is not None:
        return False
    kind = type(value)
    if kind is Element:
        value = value._value
        if value is None:
            return False
    elif kind not in _SCALAR_TYPES:
        value = _known_value(value)
        if value is None:
            return False
    node = array._node
    if type(key) is tuple:
        for index in key:
            if type(index) not in _BASIC_INDEX_TYPES:
                return False
    elif type(key) not in _BASIC_INDEX_TYPES or (type(key) in _INDEX_TYPES and not node.shape):
        return False
    if array._views is not None:
        if any(view() is not None for view in array._views):
            return False
        array._views = None
    if _TRACING.traces or _RECORDING.depth:
        return False
    if node._bound is None:
        if not _after_small_writes(node):
            return False
        evaluate_arrays([array])
    del node  # (counted: the only references must be the array's own)
    if _node_references(array) != _SOLE_NODE or not _leaf_on_host(array._node):
        return False
    if not sole_reference(array._node._bound):
        return False
    buffer = array._node._bound
    try:  # (leaf_for keeps bound buffers read-only, against writes by mistake; this one is meant)
        buffer.setflags(write=True)
    except ValueError:
        return False  # memory NumPy itself may not write (a buffer of `bytes`)
    try:
        buffer[key] = value  # NumPy's conversion, bounds check, broadcasting and errors
    finally:
        buffer.setflags(write=False)
    return True


def _known_value(value):
    """What NumPy should write for `value` when its value is known without evaluating: a
    NumPy array of a dtype lazyarr has, a list of Python scalars, an evaluated host array's
    buffer; None otherwise (a pending array, anything else: the lazy write decides)."""
    kind = type(value)
    if kind is _NDARRAY:
        return value if value.dtype in _DTYPES else None
    if kind is Array:
        buffer = value._node._bound
        return buffer if type(buffer) is _NDARRAY else None
    if kind is list or kind is tuple:
        return value if _flat_scalars(value) else None
    return None


def _flat_scalars(items) -> bool:
    """Whether a (nested) list holds Python or NumPy scalars only (no lazy array to evaluate)."""
    for item in items:
        if type(item) is list or type(item) is tuple:
            if not _flat_scalars(item):
                return False
        elif type(item) not in _SCALAR_TYPES:
            return False
    return True


def _after_small_writes(node) -> bool:
    """Whether `node` is an array whose last `_CHAIN` updates each wrote a known value (a
    constant, an evaluated buffer) into at most a quarter of it: a fill loop."""
    for _ in range(_CHAIN):
        if node.op.name != _UPDATE or node._bound is not None:
            return False
        update = node.operands[1]
        if update.size * 4 > node.size or not _known_node(update):
            return False
        node = node.operands[0]
    return True


def _known_node(node) -> bool:
    """Whether `node` is a constant or an evaluated value, seen through layout and converts."""
    while node._bound is None and node.op.name in _PASSING and len(node.operands) == 1:
        node = node.operands[0]
    return node._bound is not None or node.op.name == "constant"


_CHAIN = 8
_UPDATE = "dynamic-update-slice"
_PASSING = frozenset({"reshape", "convert", "broadcast", "transpose"})


def _leaf_on_host(node) -> bool:
    return type(node._bound) is _NDARRAY and node.depth == 0


def _node_references(array: Array) -> int:
    return sys.getrefcount(array._node)


# References to a node only its array refers to, read as `written_in_place` reads them.
_SOLE_NODE = _node_references(Array(leaf_for(np.zeros(1))))
