"""Element writes into evaluated arrays nothing else can see: NumPy's own store into the buffer.

A loop that sets elements one by one (`x[i] = f(i)`, `x[i, j] = v`, the swaps of NumPy's
`random.shuffle`) would otherwise record, per statement, a new value of the whole array: ~13 µs
a write (NumPy: ~0.1 µs) and a graph as long as the loop. Values are immutable because graphs,
views and NumPy arrays from `np.asarray` may share a buffer with the array written; when nothing
but the array refers to its node and its buffer (reference counts, as the host buffer pool
decides that a buffer is free: `host_buffers.sole_reference`), nobody can see the old value, and
the write is NumPy's `buffer[key] = value`, with NumPy's conversions and errors.

A pending array whose last `_CHAIN` statements each wrote one element of it is evaluated at the
next element write: a fill loop from `la.zeros(n)` pays a few lazy writes and one evaluation,
then writes in place. A few element writes after other work (boundary values set after each
stencil step) stay lazy and fuse with what computes and reads the array.
"""

from __future__ import annotations

import sys

import numpy as np

from ..backends.host_buffers import sole_reference
from ..hlo import template
from . import tracing
from .array import Array, evaluate_arrays, leaf_for
from .elements import Element

_NDARRAY = np.ndarray
_SCALAR_TYPES = frozenset({int, float, bool, complex}) | frozenset(
    np.dtype(code).type for code in "?bhilqBHILQefdgFDG")
_INDEX_TYPES = frozenset({int}) | frozenset(np.dtype(code).type for code in "bhilqBHILQ")
_ELEMENT_UPDATE = "dynamic-update-slice"
_TRACING = tracing.STATE
_RECORDING = template.RECORDING


def written_in_place(array, key, value) -> bool:
    """Do `array[key] = value` as NumPy's write into the array's own buffer, when `key` picks
    one element (an integer per axis), `value` is a scalar (or an element read from an
    evaluated array), and nothing else refers to the array's value; False (nothing done)
    otherwise, for the lazy write to take over."""
    if type(array) is not Array or array._base is not None:
        return False
    kind = type(value)
    if kind is Element:
        value = value._value
        if value is None:
            return False
    elif kind not in _SCALAR_TYPES:
        return False
    node = array._node
    if type(key) is tuple:
        if len(key) != len(node.shape):
            return False
        for index in key:
            if type(index) not in _INDEX_TYPES:
                return False
    elif type(key) not in _INDEX_TYPES or len(node.shape) != 1:
        return False
    if array._views is not None:
        if any(view() is not None for view in array._views):
            return False
        array._views = None
    if _TRACING.traces or _RECORDING.depth:
        return False
    if node._bound is None:
        if not _after_element_writes(node):
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
        buffer[key] = value  # NumPy's conversion, bounds check and errors
    finally:
        buffer.setflags(write=False)
    return True


def _after_element_writes(node) -> bool:
    """Whether `node` is an array whose last `_CHAIN` updates each replaced one element."""
    for _ in range(_CHAIN):
        if node.op.name != _ELEMENT_UPDATE or node.operands[1].size != 1 or node._bound is not None:
            return False
        node = node.operands[0]
    return True


_CHAIN = 8


def _leaf_on_host(node) -> bool:
    return type(node._bound) is _NDARRAY and node.depth == 0


def _node_references(array: Array) -> int:
    return sys.getrefcount(array._node)


# References to a node only its array refers to, read as `written_in_place` reads them.
_SOLE_NODE = _node_references(Array(leaf_for(np.zeros(1))))
