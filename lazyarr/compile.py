"""The compile driver: lazy graph -> Module -> backend executable -> buffers.

It is the only place that runs both the passes and a backend. The frontend hands it output
instructions and a way to find the buffer already bound to a node (a materialized input or
an evaluated value); those nodes become the module's parameters, numbered in the order a
post-order walk first meets them, so the same computation on other buffers yields the same
module text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from . import _flags
from .backends import get_backend
from .hlo import Computation, Instruction, Module, make

BufferLookup = Callable[[Instruction], "np.ndarray | None"]


def _walk(outputs: Sequence[Instruction], bound: BufferLookup):
    """Post order of the unbound part of the graph; bound nodes are leaves (with buffers)."""
    order: list[tuple[Instruction, np.ndarray | None]] = []
    visited: set[int] = set()
    for root in outputs:
        if id(root) in visited:
            continue
        visited.add(id(root))
        stack = [(root, 0, bound(root))]
        while stack:
            node, next_operand, buffer = stack[-1]
            if buffer is None and next_operand < len(node.operands):
                stack[-1] = (node, next_operand + 1, buffer)
                operand = node.operands[next_operand]
                if id(operand) not in visited:
                    visited.add(id(operand))
                    stack.append((operand, 0, bound(operand)))
            else:
                stack.pop()
                order.append((node, buffer))
    return order


def build_module(
    outputs: Sequence[Instruction], bound: BufferLookup, name: str = "main"
) -> tuple[Module, list[np.ndarray]]:
    """Renumber bound nodes as parameters 0..n-1; return the module and their buffers.

    A node with a buffer is cut off from its operands: evaluated values are never recomputed.
    """
    mapping: dict[int, Instruction] = {}
    parameters: list[Instruction] = []
    buffers: list[np.ndarray] = []
    for node, buffer in _walk(outputs, bound):
        if buffer is not None:
            parameter = make(
                "parameter", number=len(parameters), shape=node.shape, dtype=node.dtype
            )
            parameters.append(parameter)
            buffers.append(buffer)
            mapping[id(node)] = parameter
        elif node.opcode == "parameter":
            raise ValueError(f"no buffer is bound to {node!r}; it cannot be evaluated")
        else:
            operands = tuple(mapping[id(operand)] for operand in node.operands)
            if operands == node.operands:
                mapping[id(node)] = node
            else:
                mapping[id(node)] = make(node.op, operands, **dict(node.attrs))
    entry = Computation(name, tuple(parameters), tuple(mapping[id(root)] for root in outputs))
    return Module(name, entry), buffers


def evaluate_graph(outputs: Sequence[Instruction], bound: BufferLookup) -> list[np.ndarray]:
    """Compile (or reuse) and run the computation of `outputs`; return one buffer each."""
    module, buffers = build_module(outputs, bound)
    if _flags.FLAGS.verify:
        from .hlo.verify import verify

        verify(module)
    executable = get_backend(_flags.FLAGS.backend).compile(module)
    return executable.run(buffers)
