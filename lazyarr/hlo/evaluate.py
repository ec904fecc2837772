"""The NumPy evaluator: runs a Computation by calling each op's reference.

It is the interpreter backend and the oracle every compiler is held to, and constant folding
uses it. Intermediate values are dropped as soon as their last user has run, so peak memory
stays close to what the graph needs live at once.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .module import Computation, users_of
from .op import HloError


def evaluate(computation: Computation, arguments: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Evaluate `computation` on `arguments` (one NumPy array per parameter, in order).

    >>> from lazyarr.hlo import text
    >>> module = text.parse('''
    ... HloModule m
    ... ENTRY main {
    ...   p0 = f32[2] parameter(0)
    ...   ROOT r = f32[2] negate(p0)
    ... }''')
    >>> evaluate(module.entry, [np.array([1, 2], np.float32)])
    [array([-1., -2.], dtype=float32)]
    """
    if len(arguments) != len(computation.parameters):
        raise HloError(
            f"evaluate {computation.name}: expects {len(computation.parameters)} arguments, "
            f"got {len(arguments)}"
        )
    values: dict[int, np.ndarray] = {}
    for parameter, argument in zip(computation.parameters, arguments):
        argument = np.asarray(argument)
        if argument.shape != parameter.shape or argument.dtype != parameter.dtype:
            raise HloError(
                f"evaluate {computation.name}: parameter {parameter.attr('number')} expects "
                f"{parameter.dtype}{list(parameter.shape)}, got {argument.dtype}{list(argument.shape)}"
            )
        values[id(parameter)] = argument
    order = computation.post_order()
    users = users_of(order)
    remaining = {key: len(value) for key, value in users.items()}
    keep = {id(output) for output in computation.outputs}
    for node in order:
        if node.opcode != "parameter":
            result = node.op.reference([values[id(operand)] for operand in node.operands], node.attributes)
            values[id(node)] = _checked(node, result)
        for operand in node.operands:
            remaining[id(operand)] -= 1
            if remaining[id(operand)] == 0 and id(operand) not in keep:
                del values[id(operand)]
    return [values[id(output)] for output in computation.outputs]


def _checked(node, result) -> np.ndarray:
    """Hold every reference to its op's shape and dtype rules."""
    result = np.asarray(result)
    if result.shape != node.shape or result.dtype != node.dtype:
        if result.shape == node.shape and np.can_cast(result.dtype, node.dtype, "same_kind"):
            return result.astype(node.dtype)
        raise HloError(
            f"{node.opcode}: reference returned {result.dtype}{list(result.shape)}, "
            f"rules say {node.dtype}{list(node.shape)}"
        )
    return result
