"""Computation and Module: a graph with named parameters and outputs, walked iteratively.

A Computation is a set of output instructions over parameter leaves numbered 0..n-1.
Several outputs (for `la.eval(a, b)`) share their common subgraphs because instructions are
interned. A Module holds the entry computation and, once fusion runs, the fused computations
it calls. Every walk is iterative, so graphs of a million chained ops never hit the
recursion limit.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from .instruction import Instruction
from .op import HloError


def post_order(outputs: Iterable[Instruction], stops: frozenset[int] | set[int] = frozenset()) -> list[Instruction]:
    """Every instruction reachable from `outputs`, operands before users, each once; the
    operands of nodes whose id is in `stops` are not visited (they act as leaves).

    Deterministic: operands are visited left to right, outputs in order.
    """
    order: list[Instruction] = []
    visited: set[Instruction] = set()  # the nodes themselves (identity hashing): no id() calls
    visit = visited.add
    for root in outputs:
        if root in visited:
            continue
        visit(root)
        # (node, the operands still to walk, the next one's index): a pass walks every node
        stack = [(root, () if stops and id(root) in stops else root.operands, 0)]
        while stack:
            node, operands, next_operand = stack[-1]
            if next_operand < len(operands):
                stack[-1] = (node, operands, next_operand + 1)
                operand = operands[next_operand]
                if operand not in visited:
                    visit(operand)
                    stack.append((operand, () if stops and id(operand) in stops else operand.operands, 0))
            else:
                stack.pop()
                order.append(node)
    return order


def users_of(order: Sequence[Instruction]) -> dict[int, list[Instruction]]:
    """Map id(instruction) -> the instructions in `order` that use it (once per use)."""
    users: dict[int, list[Instruction]] = {id(node): [] for node in order}
    for node in order:
        for operand in node.operands:
            users[id(operand)].append(node)
    return users


def replace_all(
    outputs: Sequence[Instruction], rewrite
) -> tuple[Instruction, ...]:
    """Rebuild the graph bottom-up: `rewrite(node, new_operands)` returns the new node.

    The workhorse of immutable-graph passes: it visits each node once, iteratively, and
    only rebuilds what changed below.
    """
    mapping: dict[Instruction, Instruction] = {}  # keyed by the nodes (identity hashing)
    for node in post_order(outputs):
        operands = node.operands
        if len(operands) == 1:  # unrolled: most nodes have one or two operands
            new_operands = (mapping[operands[0]],)
        elif len(operands) == 2:
            new_operands = (mapping[operands[0]], mapping[operands[1]])
        else:
            new_operands = tuple([mapping[operand] for operand in operands])
        mapping[node] = rewrite(node, new_operands)
    return tuple([mapping[root] for root in outputs])


@dataclass(frozen=True)
class Computation:
    """Outputs over parameters `parameter(0..n-1)`; `parameters[i]` is parameter number i."""

    name: str
    parameters: tuple[Instruction, ...]
    outputs: tuple[Instruction, ...]

    def __post_init__(self):
        for index, parameter in enumerate(self.parameters):
            if parameter.opcode != "parameter" or parameter.attr("number") != index:
                raise HloError(
                    f"computation {self.name}: parameters[{index}] must be parameter({index}), "
                    f"got {parameter!r}"
                )

    def post_order(self) -> list[Instruction]:
        order = post_order(self.outputs)
        listed = {id(parameter) for parameter in self.parameters}
        stray = [node for node in order if node.opcode == "parameter" and id(node) not in listed]
        if stray:
            raise HloError(f"computation {self.name}: uses unlisted parameter {stray[0]!r}")
        # Unused parameters still belong to the signature; list them first, in number order.
        used = {id(node) for node in order}
        unused = [parameter for parameter in self.parameters if id(parameter) not in used]
        return unused + order

    def __iter__(self) -> Iterator[Instruction]:
        return iter(self.post_order())


@dataclass
class Module:
    """The unit of compilation: an entry computation plus the computations it calls.

    Graphs are immutable; a Module is the one mutable holder a pass rewrites, by replacing
    `entry` (and `computations`). `notes` carries what passes report for `la.explain`
    (fusion decisions, buffer assignment), keyed by pass name.
    """

    name: str
    entry: Computation
    computations: dict[str, Computation] = field(default_factory=dict)
    notes: dict[str, object] = field(default_factory=dict)
