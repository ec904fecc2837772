"""Reverse-mode differentiation as a graph transform: from outputs and their cotangents to the
cotangents of chosen nodes, built by the ops' VJP rules (`OpDef.vjp`).

The sweep walks the graph once forward, marking the *active* nodes (real floating values that
depend on a node we differentiate with respect to), then once backward in reverse post order,
handing each active node's accumulated cotangent to its op's rule and adding the results into
its active operands (a node with several users sums their contributions). Nodes we
differentiate with respect to are treated as independent leaves: the sweep stops at them.
Both walks are iterative, so graphs 10^5 nodes deep are fine.

Nothing is evaluated: the result is more graph, which can be compiled, or differentiated again
when the rules used only differentiable ops.

>>> import numpy as np
>>> from lazyarr.hlo import make, fresh_parameter
>>> x = fresh_parameter((3,), np.float64)
>>> y = make("multiply", [x, x])
>>> (dx,) = vjp_graph([y], [x], [make("broadcast", [y], shape=(3,), dimensions=(0,))])
>>> dx.opcode
'add'
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import dtypes
from .instruction import Instruction, fresh_parameter
from .module import post_order
from .op import HloError
from .ops._vjp_support import add, is_differentiable_dtype, zeros_like
from .template import Template, capture


def _label(node: Instruction) -> str:
    """How an error names an op: custom-calls by their target ('sort')."""
    if node.opcode == "custom-call":
        return f"'{node.attr('target')}' (a custom-call)"
    return f"'{node.opcode}'"


def _active_nodes(order: list[Instruction], wrt_ids: set[int], where: str) -> set[int]:
    """ids of the real floating nodes that depend on a wrt node (what cotangents flow through).

    A float value computed from a complex one that depends on a wrt node would need complex
    cotangents, which are not supported: TypeError naming the op.
    """
    active: set[int] = set()
    reaching: set[int] = set()  # depends on a wrt node, whatever its dtype
    for node in order:
        if id(node) in wrt_ids:
            active.add(id(node))
            reaching.add(id(node))
            continue
        if not any(id(operand) in reaching for operand in node.operands):
            continue
        reaching.add(id(node))
        if not is_differentiable_dtype(node.dtype):
            continue
        for operand in node.operands:
            if id(operand) in reaching and dtypes.is_complex(operand.dtype):
                raise TypeError(
                    f"{where}: complex numbers are not supported: op {_label(node)} computes "
                    f"{node.dtype} from a {operand.dtype} value that depends on a differentiated input"
                )
        if any(id(operand) in active for operand in node.operands):
            active.add(id(node))
    return active


def _typed(node: Instruction) -> str:
    return f"{dtypes.short_name(node.dtype)}{list(node.shape)}"


def _checked_cotangent(node: Instruction, index: int, operand: Instruction, cotangent) -> Instruction:
    if not isinstance(cotangent, Instruction) or cotangent.shape != operand.shape or cotangent.dtype != operand.dtype:
        received = _typed(cotangent) if isinstance(cotangent, Instruction) else repr(cotangent)
        raise HloError(
            f"{node.opcode}: VJP rule returned {received} for operand {index}, which is {_typed(operand)}"
        )
    return cotangent


def vjp_graph(
    outputs: Sequence[Instruction],
    wrt: Sequence[Instruction],
    cotangents: Sequence[Instruction],
    *,
    where: str = "vjp_graph",
) -> tuple[Instruction, ...]:
    """The cotangent of each node in `wrt`, given the cotangent of each output.

    `cotangents[i]` has the shape and dtype of `outputs[i]`. The result has one instruction
    per wrt node, shaped and typed like it (zeros where no output depends on it). An op on the
    path without a VJP rule raises NotImplementedError naming it; `where` prefixes messages.
    """
    outputs, wrt, cotangents = tuple(outputs), tuple(wrt), tuple(cotangents)
    if len(outputs) != len(cotangents):
        raise HloError(f"{where}: {len(outputs)} outputs but {len(cotangents)} cotangents")
    for index, (output, cotangent) in enumerate(zip(outputs, cotangents)):
        if cotangent.shape != output.shape or cotangent.dtype != output.dtype:
            raise HloError(f"{where}: cotangent {index} is {_typed(cotangent)}, but its output is {_typed(output)}")
    for index, node in enumerate(wrt):
        if not is_differentiable_dtype(node.dtype):
            raise TypeError(
                f"{where}: cannot differentiate with respect to {node.dtype} values (wrt {index}); "
                f"accepted: " + ", ".join(str(dtype) for dtype in dtypes.FLOATING)
            )
    wrt_ids = {id(node) for node in wrt}
    order = post_order(outputs, wrt_ids)
    key = _structure(order, outputs, wrt, wrt_ids)
    if key is None:
        return _sweep(order, outputs, wrt, wrt_ids, cotangents, where)
    recorded = _BACKWARDS.get(key, _MISSING)
    if recorded is _MISSING:
        # The rules run on stand-ins for the seeds, so the recorded graph is a function of
        # them (never a node the rules or the forward graph made that a seed happened to be).
        seeds = [fresh_parameter(cotangent.shape, cotangent.dtype) for cotangent in cotangents]
        recorded = capture(_sweep(order, outputs, wrt, wrt_ids, seeds, where), [*order, *wrt, *seeds])
        if len(_BACKWARDS) >= _BACKWARDS_LIMIT:
            _BACKWARDS.clear()
        _BACKWARDS[key] = recorded
    if recorded is None:
        return _sweep(order, outputs, wrt, wrt_ids, cotangents, where)
    return recorded.all_outputs([*order, *wrt, *cotangents])


# The structure of a differentiated graph (`_structure`) -> its cotangents' graph over the
# forward nodes, the wrt nodes and the seeds (template.capture), or None where that graph
# reads anything else. An eager training loop differentiates the same step every call; its
# backward graph is then made again at interning speed, without running the VJP rules.
_BACKWARDS: dict[tuple, Template | None] = {}
_BACKWARDS_LIMIT = 128
_MISSING = object()
# Graphs remembered at most this large, with constants of at most this many elements (a rule
# reads a scalar constant; a large one, an index array of a minibatch, would be a new key
# every step and kept alive by the table).
_REMEMBERED_NODES = 4096
_REMEMBERED_CONSTANT_ELEMENTS = 64


def _structure(order, outputs, wrt, wrt_ids) -> tuple | None:
    """Everything the VJP rules see: per forward node its op and attributes (a constant's value
    too: `x ** 2` gets its own rule) and operands' positions, a leaf's shape and dtype, which
    leaves are the wrt nodes, the seeds' shapes and dtypes (those of the outputs). None where
    the graph is not remembered: wrt nodes that are not distinct parameter leaves (the
    frontend's stand-ins always are), a large graph or a large constant."""
    if len(wrt_ids) != len(wrt) or len(order) > _REMEMBERED_NODES:
        return None
    for node in wrt:
        if node.operands or node.op.name != "parameter":
            return None
    position: dict[int, int] = {}
    wrt_index = {id(node): index for index, node in enumerate(wrt)}
    signature = []
    for node in order:
        index = wrt_index.get(id(node))
        if index is not None:
            entry = ("wrt", index, node.shape, node.dtype)
        elif not node.operands:
            if node.op.name == "parameter":
                entry = ("leaf", node.shape, node.dtype)  # (a parameter's number is not structure)
            elif node.size > _REMEMBERED_CONSTANT_ELEMENTS:
                return None
            else:
                entry = (node._identity, node.shape, node.dtype)
        else:
            entry = (node._identity, *[position[id(operand)] for operand in node.operands])
        position[id(node)] = len(signature)
        signature.append(entry)
    return (tuple(signature), tuple([position[id(output)] for output in outputs]),
            tuple([(node.shape, node.dtype, position.get(id(node))) for node in wrt]))


def _sweep(order, outputs, wrt, wrt_ids, cotangents, where) -> tuple[Instruction, ...]:
    """The backward sweep itself (see the module docstring)."""
    active = _active_nodes(order, wrt_ids, where)

    accumulated: dict[int, Instruction] = {}

    def accumulate(node: Instruction, cotangent: Instruction) -> None:
        existing = accumulated.get(id(node))
        accumulated[id(node)] = cotangent if existing is None else add(existing, cotangent)

    for output, cotangent in zip(outputs, cotangents):
        if id(output) in active:
            accumulate(output, cotangent)
    for node in reversed(order):
        if id(node) in wrt_ids:
            continue  # an independent leaf for this sweep: its cotangent is the answer
        cotangent = accumulated.pop(id(node), None)
        if cotangent is None:
            continue
        rule = node.op.vjp
        if rule is None:
            raise NotImplementedError(
                f"{where}: no VJP rule for op {_label(node)}, so it cannot be differentiated through"
            )
        results = tuple(rule(node, cotangent))
        if len(results) != len(node.operands):
            raise HloError(
                f"{node.opcode}: VJP rule returned {len(results)} cotangents for {len(node.operands)} operands"
            )
        for index, (operand, operand_cotangent) in enumerate(zip(node.operands, results)):
            if operand_cotangent is None or id(operand) not in active:
                continue
            accumulate(operand, _checked_cotangent(node, index, operand, operand_cotangent))
    return tuple(accumulated[id(node)] if id(node) in accumulated else zeros_like(node) for node in wrt)
