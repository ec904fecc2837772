"""Row kernels: which reductions a kernel may compute per row, before the row's elements.

Softmax, layernorm and log-softmax reduce each row of `x` and then compute every element of
the row from the reductions: `exp(x - max(x, -1)[:, None]) / sum(...)[:, None]`. Kept apart,
each reduction is a kernel of its own and the row is read from memory once per kernel; in one
row kernel (llvm/kernel.py `_rows`) the row is read once, revisited in cache, and no
reduction is stored and read back.

A reduction fits a kernel when it reduces the trailing dimensions of the kernel's loop shape
and the kernel only ever asks for it at the index of the row being computed. `RowIndices`
tracks, as a group grows from its root toward its inputs, at which indices each member is
computed: "loop" (the loop element being computed), "row" (that element's row: the leading
`rows` positions, the rest size-1 dimensions as `keepdims` leaves them) or "other" (any index
a remap makes). Users join a group before their operands, so a member's set is complete when
it joins and its operands learn theirs then: linear in the group's size.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..hlo import Instruction
from ..hlo.op import ELEMENTWISE

LOOP, ROW, OTHER = "loop", "row", "other"


def is_row_reduction(node: Instruction, shape, rows: int | None = None) -> bool:
    """Whether `node` reduces an operand of `shape` over its trailing dimensions (at least
    one) to the leading ones (at least one; `rows` of them when given)."""
    if node.opcode != "reduce" or not node.ndim or node.operands[0].shape != shape:
        return False
    if rows is not None and node.ndim != rows:
        return False
    return tuple(node.attr("dimensions")) == tuple(range(node.ndim, len(shape)))


@dataclass(eq=False)
class RowIndices:
    """The indices each member of one growing fusion group is computed at (module docstring).

    `shape` is the kernel's loop shape; `rows` how many leading dimensions make a row, fixed
    by the root (a row reduction) or by the first broadcast of a row value the loop reads."""

    shape: tuple | None
    rows: int | None = None
    statuses: dict[int, set[str]] = field(default_factory=dict)

    @staticmethod
    def of(root: Instruction) -> RowIndices:
        if root.opcode == "reduce":
            if not is_row_reduction(root, root.operands[0].shape):
                return RowIndices(None)
            indices = RowIndices(root.operands[0].shape, root.ndim)
            indices.statuses[id(root)] = {ROW}
            return indices
        if not (root.op.has(ELEMENTWISE) or root.opcode == "broadcast"):
            return RowIndices(None)  # remapping roots, scans, arg-reductions: no row kernels
        indices = RowIndices(root.shape)
        indices.statuses[id(root)] = {LOOP}
        return indices

    def is_per_row(self, node: Instruction) -> bool:
        """Whether the kernel computes `node` only at its rows' indices (once per row)."""
        return self.shape is not None and self.statuses.get(id(node)) == {ROW}

    def reduction_fits(self, producer: Instruction) -> bool:
        """Whether reduction `producer`, asked for only per row, can run in the row phase."""
        return self.is_per_row(producer) and is_row_reduction(producer, self.shape, self.rows)

    def add(self, member: Instruction) -> None:
        """`member` joined the group (its own set is complete): give its operands theirs."""
        if self.shape is None:
            return
        for status in self.statuses.get(id(member), ()):
            operand_status = self._operand_status(member, status)
            for operand in member.operands:
                self.statuses.setdefault(id(operand), set()).add(operand_status)

    def _operand_status(self, member: Instruction, status: str) -> str:
        shape = self.shape
        if status == LOOP:
            if member.op.has(ELEMENTWISE) and member.shape == shape:
                return LOOP
            rows = self._broadcast_rows(member)
            if rows is not None and self.rows in (None, rows):
                self.rows = rows
                return ROW
        elif status == ROW:
            if is_row_reduction(member, shape, self.rows):
                return LOOP  # its row's elements, in the row phase
            if ((member.op.has(ELEMENTWISE) or member.opcode == "reshape") and self._row_like(member.shape)
                    and all(self._row_like(operand.shape) for operand in member.operands)):
                return ROW
        return OTHER

    def _row_like(self, shape) -> bool:
        rows = self.rows
        return len(shape) >= rows and tuple(shape[:rows]) == tuple(self.shape[:rows]) and all(
            size == 1 for size in shape[rows:])

    def _broadcast_rows(self, node: Instruction) -> int | None:
        """The row count of a broadcast of row values over the loop shape (`m[:, None]` of a
        row reduction `m`, as `keepdims` or a plain `[:, None]` make it), else None."""
        if node.opcode != "broadcast" or node.shape != self.shape:
            return None
        (operand,) = node.operands
        if tuple(node.attr("dimensions")) != tuple(range(operand.ndim)):
            return None
        rows = operand.ndim
        while rows and operand.shape[rows - 1] == 1 and self.shape[rows - 1] != 1:
            rows -= 1
        if not rows or tuple(operand.shape[:rows]) != tuple(self.shape[:rows]):
            return None
        return rows
