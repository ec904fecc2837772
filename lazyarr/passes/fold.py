"""ConstantFolder: evaluate small instructions whose operands are all constants.

An instruction over constants only is computed now, with its op's NumPy reference (the same
function the evaluator calls, so the folded value is the evaluated value bit for bit), and
replaced by a `constant`. Folding stops at a size limit (64 elements by default) so that a
graph never swells into large literals, and it skips:

- leaves (parameter, constant, iota): nothing to fold, and an iota is cheaper than its values;
- custom-calls, fusions and anything with the HOST trait: they run where the backend says;
- a broadcast of one element: it is the splat the simplifier's rules recognize, free inside
  a fused kernel, and the evaluator hands it to power's reference as a zero-stride scalar,
  which a folded dense constant is not (see simplify.py `_scalar_exponent`);
- anything whose reference raises (a gather with an out-of-range index): the instruction
  stays, and evaluation raises the error where NumPy would.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..hlo.instruction import Instruction, constant
from ..hlo.module import Module
from ..hlo.op import HOST, LEAF
from ..hlo.op import get as get_op
from .pipeline import rebuild, rewrite_entry

NEVER_FOLDED = frozenset({"custom-call", "fusion"})
_CONSTANT = get_op("constant")


class ConstantFolder:
    """Replace instructions over constants with their value, up to `max_elements` elements.

    >>> from lazyarr.hlo import text
    >>> module = text.parse('''HloModule m
    ... ENTRY main {
    ...   a = f32[2] constant({1, 2})
    ...   ROOT r = f32[2] negate(a)
    ... }''')
    >>> ConstantFolder().run(module), module.entry.outputs[0].attr("literal").array.tolist()
    (True, [-1.0, -2.0])
    """

    name = "fold"

    def __init__(self, max_elements: int = 64):
        self.max_elements = max_elements

    def run(self, module: Module) -> bool:
        return rewrite_entry(module, self._fold)

    def foldable(self, node: Instruction) -> bool:
        """Whether `node` is small, not a leaf or host op, and computes from constants only."""
        for operand in node.operands:  # first: almost every node reads a computed value
            if operand.op is not _CONSTANT:
                return False
        if node.op.has(LEAF) or node.op.has(HOST) or node.opcode in NEVER_FOLDED:
            return False
        if node.size > self.max_elements:
            return False
        return not (node.opcode == "broadcast" and node.operands[0].size == 1)

    def _fold(self, node: Instruction, operands: tuple[Instruction, ...]) -> Instruction:
        node = rebuild(node, operands)
        if not self.foldable(node):
            return node
        value = _value(node)
        return node if value is None else constant(value, node.dtype)


def _value(node: Instruction) -> np.ndarray | None:
    """`node`'s value from its reference, or None when the reference raises or breaks the
    op's rules (evaluation then reports it, as it would have without folding)."""
    arguments = [operand.attr("literal").array for operand in node.operands]
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = np.asarray(node.op.reference(arguments, node.attributes))
    except Exception:  # any reference error stays for evaluation to raise
        return None
    if result.shape != node.shape:
        return None
    if result.dtype != node.dtype:
        # The evaluator accepts a same-kind result and converts it (evaluate.py `_checked`).
        if not np.can_cast(result.dtype, node.dtype, "same_kind"):
            return None
        result = result.astype(node.dtype)
    return result
