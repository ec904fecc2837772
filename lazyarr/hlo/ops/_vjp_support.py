"""The small vocabulary that VJP rules are written in: constants shaped like a node, and
one-line builders for the strict arithmetic the rules chain together.

A VJP rule receives the instruction being differentiated and the cotangent of its result
(same shape and dtype as the result) and returns one entry per operand: that operand's
cotangent, or None when no gradient flows to it. Rules build strict HLO (equal shapes and
dtypes), and only from ops that have rules themselves, so a backward graph can be
differentiated again. The sweep that calls the rules is `lazyarr.hlo.autodiff`.
"""

from __future__ import annotations

import numpy as np

from ... import dtypes
from ..instruction import Instruction, constant, make


def scalar(value, dtype) -> Instruction:
    """A 0-d constant `value` of `dtype`."""
    return constant(np.asarray(value).astype(dtype))


def full(value, dtype, shape) -> Instruction:
    """`value` of `dtype` broadcast to `shape` (a scalar constant when 0-d)."""
    value_node = scalar(value, dtype)
    if tuple(shape) == ():
        return value_node
    return make("broadcast", [value_node], shape=tuple(shape), dimensions=())


def full_like(node: Instruction, value) -> Instruction:
    """`value` in node's dtype and shape."""
    return full(value, node.dtype, node.shape)


def zeros_like(node: Instruction) -> Instruction:
    return full_like(node, 0)


def add(left: Instruction, right: Instruction) -> Instruction:
    return make("add", [left, right])


def subtract(left: Instruction, right: Instruction) -> Instruction:
    return make("subtract", [left, right])


def multiply(left: Instruction, right: Instruction) -> Instruction:
    return make("multiply", [left, right])


def divide(left: Instruction, right: Instruction) -> Instruction:
    return make("divide", [left, right])


def negate(node: Instruction) -> Instruction:
    return make("negate", [node])


def scale(node: Instruction, factor: float) -> Instruction:
    """node * factor, with the factor as a constant of node's dtype."""
    return multiply(node, full_like(node, factor))


def shift(node: Instruction, offset: float) -> Instruction:
    """node + offset, with the offset as a constant of node's dtype."""
    return add(node, full_like(node, offset))


def compare(left: Instruction, right: Instruction, direction: str) -> Instruction:
    return make("compare", [left, right], direction=direction)


def select(predicate: Instruction, on_true: Instruction, on_false: Instruction) -> Instruction:
    return make("select", [predicate, on_true, on_false])


def where_else_zero(predicate: Instruction, value: Instruction) -> Instruction:
    """value where predicate holds, 0 elsewhere (how a rule routes a cotangent to one branch)."""
    return select(predicate, value, zeros_like(value))


def sum_over(node: Instruction, dimensions) -> Instruction:
    """Sum over `dimensions` (none: node itself)."""
    dimensions = tuple(sorted(dimensions))
    if not dimensions:
        return node
    return make("reduce", [node], kind="sum", dimensions=dimensions)


def constant_scalar(node: Instruction):
    """The value of a node that is one scalar constant (maybe broadcast), else None.

    Rules use it to build smaller graphs for the common case `x ** 2`, where the exponent is
    a literal the frontend broadcast.
    """
    if node.opcode == "broadcast":
        node = node.operands[0]
    if node.opcode == "constant" and node.size == 1:
        return node.attr("literal").array.reshape(()).item()
    return None


def reshape_to(node: Instruction, shape) -> Instruction:
    """node reshaped to `shape` (node itself when it has that shape already)."""
    shape = tuple(shape)
    return node if node.shape == shape else make("reshape", [node], shape=shape)


def is_differentiable_dtype(dtype) -> bool:
    """Gradients flow through real floating values only (complex numbers are not supported)."""
    return dtypes.is_floating(dtype)


def no_gradient(instruction: Instruction, cotangent: Instruction) -> tuple[None, ...]:
    """The rule of ops through which no gradient flows.

    Ops with bool or integer results (compare, is-nan, argmax, and) never receive a cotangent;
    piecewise-constant float ops (floor, sign, round) have derivative zero wherever it exists.
    None tells the sweep "contributes nothing", which is cheaper than a tensor of zeros.
    """
    return (None,) * len(instruction.operands)


def no_operands(instruction: Instruction, cotangent: Instruction) -> tuple[()]:
    """The rule of leaves (parameter, constant, iota): there is nothing to pass a cotangent to."""
    return ()
