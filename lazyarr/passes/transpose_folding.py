"""TransposeFolding: a transpose feeding a dot becomes the dot's dimension numbers (XLA's pass).

`x.T @ y` records dot(transpose(x), y). Run as written, the transpose is a copy kernel of x
before every BLAS call; but a dot names its contracting and batch dimensions, and BLAS reads
a transposed matrix as it lies in memory (its trans flag), so

    dot(transpose(x, perm), y, lhs_contracting=c, lhs_batch=b)
        -> dot(x, y, lhs_contracting=perm[c], lhs_batch=perm[b])

and the same on the right. The dot's result lists the operand's free dimensions in operand
order, so a transpose folds only when it keeps its free dimensions in the same relative order
(it moves contracting or batch dimensions only); otherwise the result would come out permuted.

Not an algebraic simplification (simplify.py promises bit-exact rewrites): BLAS may sum a
transposed operand in another order, so results can differ in the last bits, as any two
BLAS calls may (dot results are held to the dot tolerance of the tests).
"""

from __future__ import annotations

from ..hlo.instruction import Instruction, make
from ..hlo.module import Module
from .pipeline import rebuild, rewrite_entry


def _free_axes(ndim: int, batch, contracting) -> list[int]:
    return [axis for axis in range(ndim) if axis not in batch and axis not in contracting]


def _folded(operand: Instruction, batch: tuple, contracting: tuple):
    """(x, batch, contracting) with `operand` = transpose(x) folded away, or None."""
    if operand.opcode != "transpose":
        return None
    permutation = operand.attr("permutation")
    free = [permutation[axis] for axis in _free_axes(operand.ndim, batch, contracting)]
    if free != sorted(free):
        return None
    return (operand.operands[0], tuple(permutation[axis] for axis in batch),
            tuple(permutation[axis] for axis in contracting))


def fold_transposes(node: Instruction, operands: tuple[Instruction, ...]) -> Instruction:
    if node.opcode != "dot":
        return rebuild(node, operands)
    lhs, rhs = operands
    attrs = dict(node.attrs)
    left = _folded(lhs, attrs["lhs_batch"], attrs["lhs_contracting"])
    if left is not None:
        lhs, attrs["lhs_batch"], attrs["lhs_contracting"] = left
    right = _folded(rhs, attrs["rhs_batch"], attrs["rhs_contracting"])
    if right is not None:
        rhs, attrs["rhs_batch"], attrs["rhs_contracting"] = right
    if left is None and right is None:
        return rebuild(node, operands)
    return make(node.op, (lhs, rhs), **attrs)


class TransposeFolding:
    """Fold transposes into the dots that read them (see the module docstring).

    >>> from lazyarr.hlo import text
    >>> module = text.parse('''HloModule m
    ... ENTRY main {
    ...   p0 = f32[5,3] parameter(0)
    ...   p1 = f32[5] parameter(1)
    ...   t = f32[3,5] transpose(p0), permutation={1,0}
    ...   ROOT d = f32[3] dot(t, p1), lhs_batch={}, rhs_batch={}, lhs_contracting={1}, rhs_contracting={0}
    ... }''')
    >>> TransposeFolding().run(module)
    True
    >>> dot = module.entry.outputs[0]
    >>> dot.operands[0].opcode, dot.attr("lhs_contracting")
    ('parameter', (0,))
    """

    name = "transpose-folding"

    def run(self, module: Module) -> bool:
        return rewrite_entry(module, fold_transposes)
