"""The memoized direct path of elementwise ops: `a * b`, `x + bias`, `x * 0.2` recorded again.

A loop records the same op on the same operand signature over and over. The first time,
elementwise.apply resolves dtypes, prepares operands and builds the node; `remember` then keeps
how it did, when the result was one node of the operands' nodes. Every later time
`record_binary` / `record_unary` make that node with one table lookup and one intern lookup
(hlo.make_like): no dtype resolution, no rules. They return None wherever the memo does not
apply, and `apply` runs. Where the frontend's C extension is built the same two functions are
its own (`use_fast_recording`, called by fast_paths.py): a change here changes
frontend/_fast_paths.c too; tests/frontend/test_recording_in_c.py holds the two together.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .. import dtypes
from ..hlo import Instruction, chain_templates, make_like, make_through, node_template
from .array import Array
from .core import broadcast_to, convert, scalar_constant

# (name, then per operand: an array's dtype and shape, or a weak scalar's type) -> how `apply`
# built the result, where it made one node of the operands' nodes: the node's template
# (hlo.node_template), then per operand how an array was broadcast (None: as it is; else the
# templates of the nodes core.broadcast_to made, in order: hlo.make_through), or for a scalar its
# constant's dtype, the broadcast shape and the range of Python values that needs no check.
# One-operand ops map to the template alone.
DIRECT: dict[tuple, tuple] = {}
_DIRECT_SCALARS = (int, float)
# (type, value, dtype, shape) of a Python scalar operand -> its (broadcast) constant node.
SCALAR_OPERANDS: dict[tuple, Instruction] = {}


def python_record_binary(name: str, x1, x2) -> Array | None:
    """`x1 <name> x2` from the memo, or None (the memo does not apply: elementwise.apply runs)."""
    kind1, kind2 = type(x1), type(x2)
    if kind1 is Array:
        node1 = x1._node
        if kind2 is Array:
            node2 = x2._node
            direct = DIRECT.get((name, node1.dtype, node1.shape, node2.dtype, node2.shape))
            if direct is not None:
                template, chain1, chain2 = direct
                if chain1 is not None:
                    node1 = make_through(chain1, node1)
                if chain2 is not None:
                    node2 = make_through(chain2, node2)
                return Array(make_like(template, node1, node2))
        elif kind2 in _DIRECT_SCALARS:
            direct = DIRECT.get((name, node1.dtype, node1.shape, kind2))
            if direct is not None:
                template, chain1, (dtype, shape, low, high) = direct
                if low <= x2 <= high:
                    if chain1 is not None:
                        node1 = make_through(chain1, node1)
                    return Array(make_like(template, node1, scalar_operand(x2, dtype, shape)))
    elif kind2 is Array and kind1 in _DIRECT_SCALARS:
        node2 = x2._node
        direct = DIRECT.get((name, kind1, node2.dtype, node2.shape))
        if direct is not None:
            template, (dtype, shape, low, high), chain2 = direct
            if low <= x1 <= high:
                if chain2 is not None:
                    node2 = make_through(chain2, node2)
                return Array(make_like(template, scalar_operand(x1, dtype, shape), node2))
    return None


def python_record_unary(name: str, x) -> Array | None:
    """`<name>(x)` from the memo, or None (elementwise.apply runs)."""
    if type(x) is Array:
        node = x._node
        template = DIRECT.get((name, node.dtype, node.shape))
        if template is not None:
            return Array(make_like(template, node))
    return None


# The direct paths elementwise.binary / unary take: these, or the C extension's (use_fast_recording).
record_binary, record_unary = python_record_binary, python_record_unary


def use_fast_recording(binary, unary) -> None:
    """Record the direct paths with these (fast_paths.py: the C extension's twins)."""
    global record_binary, record_unary
    record_binary, record_unary = binary, unary


def scalar_operand(value, dtype, shape) -> Instruction:
    """The (broadcast) constant of a Python int or float, as elementwise.prepare makes it;
    memoized by value (`la.maximum(h, 0)` each step), except NaN (never equal to itself) and
    -0.0, which equals 0.0 but is another constant: it is never looked up nor remembered."""
    negative_zero = type(value) is float and value == 0 and math.copysign(1.0, value) < 0
    key = (type(value), value, dtype, shape)
    node = None if negative_zero else SCALAR_OPERANDS.get(key)
    if node is None:
        node = scalar_constant(value, dtype)
        if shape:
            node = broadcast_constant(node, shape)
        if value == value and not negative_zero:
            if len(SCALAR_OPERANDS) >= 1024:
                SCALAR_OPERANDS.clear()
            SCALAR_OPERANDS[key] = node
    return node


@functools.lru_cache(maxsize=1024)
def broadcast_constant(node: Instruction, shape: tuple[int, ...]) -> Instruction:
    """Broadcast scalar constants (`x * 2` on one shape in a loop) are built once (values of
    constants alone are never bound to a buffer, so keeping them ties them to no device)."""
    return broadcast_to(node, shape)


def remember(name, ufunc, operands, nodes, result) -> None:
    """Enter in DIRECT how elementwise.apply just built `result`, when it was one node of the
    operands' nodes: an array as it is, converted and/or broadcast, a Python int or float as its
    constant."""
    # An integer power checks its exponent's sign at every call (apply): not a direct path.
    if (ufunc is np.power and not dtypes.is_inexact(result.dtype)) or result.operands != tuple(nodes) \
            or len(DIRECT) >= 4096:
        return
    if len(operands) == 1:
        if type(operands[0]) is Array and operands[0]._node is nodes[0]:
            DIRECT[name, nodes[0].dtype, nodes[0].shape] = node_template(result)
        return
    key, specs = [name], []
    for value, node in zip(operands, nodes):
        kind = type(value)
        if kind is Array:
            if value._node is node:
                specs.append(None)
            elif broadcast_to(convert(value._node, node.dtype), node.shape) is node:
                # converted and/or broadcast (`int_array * 0.5`, `float32 + float64`), as prepare does
                chain = chain_templates(node, value._node)
                if chain is None:
                    return
                specs.append(chain)
            else:
                return
            key += (value.dtype, value.shape)
        elif kind in _DIRECT_SCALARS:
            scalar = node.operands[0] if node.shape else node
            if scalar.op.name != "constant" or scalar.shape or scalar_constant(value, scalar.dtype) is not scalar:
                return
            dtype = scalar.dtype
            low, high = -math.inf, math.inf
            if kind is int:
                # Outside its integer dtype's range an int is refused, or compared by value
                # (elementwise's `_compare_out_of_range`): those calls take the general path.
                bound = dtypes.int64 if dtypes.is_bool(dtype) else dtype
                low, high = dtypes.integer_range(bound) if dtypes.is_integer(bound) else (-2**53, 2**53)
            key.append(kind)
            specs.append((dtype, node.shape, low, high))
        else:
            return
    DIRECT[tuple(key)] = (node_template(result), *specs)
