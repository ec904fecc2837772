"""Buffer assignment: which values of the entry computation share memory (XLA's
`BufferAssignment`, simplified to one value per allocation at a time).

The entry, after fusion, runs as a sequence of steps in post order: each step launches one
kernel or instruction. A multi-output fusion is one launch: its `fusion` instructions (one per
output, same computation and operands) are all defined at the step of the first, each in a
buffer of its own. A value is live from its step to the last step that reads it.

* parameters are given by the caller: `parameter` allocations, never reused;
* constants are `constant` allocations, never reused;
* module outputs are live-out: an `output` allocation each, never reused and never a
  parameter's or constant's buffer (an output that *is* a parameter or constant gets an
  output allocation of its own, which the backend fills by copying; see `output_slots`);
* every other value is a `temp`: it takes the smallest free temp allocation that fits
  (best fit; free means the last value held there was last read at an earlier step), or a
  new one. Sizes are rounded up to 64 bytes (one cache line; at least one).

The pass leaves the graph alone and returns False: it only stores its `BufferAssignment` in
`module.notes["buffer-assignment"]`, where the backend finds it.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from ..hlo import Instruction, Module
from ..hlo.text import format_type, instruction_names
from ..shapes import is_symbolic_size

ALIGNMENT = 64
KINDS = ("temp", "output", "parameter", "constant")


def aligned_size(instruction: Instruction) -> int:
    """Bytes of the instruction's value rounded up to `ALIGNMENT` (at least `ALIGNMENT`)."""
    size = max(instruction.size * instruction.dtype.itemsize, 1)
    return -(-size // ALIGNMENT) * ALIGNMENT


@dataclass(frozen=True)
class Allocation:
    """One buffer: `kind` is temp, output, parameter or constant; `size_bytes` is aligned."""

    index: int
    size_bytes: int
    kind: str


@dataclass
class BufferAssignment:
    """Allocations and the allocation holding each instruction's value.

    `slot_of[instruction]` is the allocation index of every entry instruction's value;
    `output_slots[i]` that of module output i (the same, except for outputs that are
    parameters or constants: those are copied into an output allocation).
    `live_range[instruction]` is (defining step, last reading step); outputs end at the number
    of steps (the caller reads them after the last step).
    `total_bytes` sums the temp, output and constant allocations (parameters are given);
    `reused_bytes` sums the aligned sizes of values placed in a temp allocation that an
    earlier, dead value had used (what reuse saved).
    """

    allocations: list[Allocation] = field(default_factory=list)
    slot_of: dict[Instruction, int] = field(default_factory=dict)
    output_slots: list[int] = field(default_factory=list)
    live_range: dict[Instruction, tuple[int, int]] = field(default_factory=dict)
    total_bytes: int = 0
    reused_bytes: int = 0
    names: dict[int, str] = field(default_factory=dict, repr=False)

    def __str__(self) -> str:
        lines = [
            f"BufferAssignment: {len(self.allocations)} allocations, total {_bytes(self.total_bytes)}, "
            f"reused {_bytes(self.reused_bytes)}"
        ]
        held: dict[int, list[Instruction]] = {}
        for instruction, index in self.slot_of.items():
            held.setdefault(index, []).append(instruction)
        outputs: dict[int, list[int]] = {}
        for number, index in enumerate(self.output_slots):
            outputs.setdefault(index, []).append(number)
        for allocation in self.allocations:
            label = allocation.kind
            if allocation.index in outputs:
                label += " " + ", ".join(str(number) for number in outputs[allocation.index])
            lines.append(f"allocation {allocation.index}: size {_bytes(allocation.size_bytes, unit='')}, {label}:")
            for instruction in held.get(allocation.index, []):
                start, end = self.live_range[instruction]
                name = self.names.get(id(instruction), instruction.opcode)
                value_type = format_type(instruction.shape, instruction.dtype)
                lines.append(f"  value {name} {value_type} live [{start}, {end}]")
        return "\n".join(lines)


def _bytes(count: int, unit: str = " bytes") -> str:
    """A byte count, or what it is when a symbolic size (a placeholder, shapes.placeholder) went
    into it: its number means nothing then, the size is known at run time."""
    return "known at run time" if is_symbolic_size(count) else f"{count}{unit}"


class BufferAssigner:
    """The buffer-assignment pass over `module.entry` (run it after fusion)."""

    name = "buffer-assignment"

    def run(self, module: Module) -> bool:
        module.notes[self.name] = assign_buffers(module)
        return False


def assign_buffers(module: Module) -> BufferAssignment:
    """Liveness over the entry's launch steps, then best-fit reuse of temp allocations.

    >>> from lazyarr.hlo import text
    >>> module = text.parse('''HloModule m
    ... ENTRY main {
    ...   p0 = f32[16] parameter(0)
    ...   negate.1 = f32[16] negate(p0)
    ...   negate.2 = f32[16] negate(negate.1)
    ...   negate.3 = f32[16] negate(negate.2)
    ...   ROOT negate.4 = f32[16] negate(negate.3)
    ... }''')
    >>> assignment = assign_buffers(module)
    >>> [allocation.kind for allocation in assignment.allocations]
    ['parameter', 'temp', 'temp', 'output']
    >>> assignment.reused_bytes  # negate.3 reuses negate.1's buffer
    64
    """
    entry = module.entry
    order = entry.post_order()
    steps, step_of = _schedule(order)
    last_read: dict[int, int] = {}
    for node in order:
        for operand in node.operands:
            last_read[id(operand)] = max(last_read.get(id(operand), -1), step_of[id(node)])
    result = BufferAssignment(names=instruction_names(order))
    end = len(steps)
    outputs = {id(output) for output in entry.outputs}
    free: list[tuple[int, int]] = []  # (size, allocation index) of dead temp allocations, sorted
    releases: dict[int, list[int]] = {}  # step -> temp allocations whose value dies there

    def allocate(size: int, kind: str) -> int:
        allocation = Allocation(len(result.allocations), size, kind)
        result.allocations.append(allocation)
        if kind != "parameter":
            result.total_bytes += size
        return allocation.index

    for step, launched in enumerate(steps):
        for node in launched:
            size = aligned_size(node)
            last = end if id(node) in outputs else last_read.get(id(node), step)
            result.live_range[node] = (step, last)
            if node.opcode in ("parameter", "constant"):
                result.slot_of[node] = allocate(size, node.opcode)
            elif id(node) in outputs:
                result.slot_of[node] = allocate(size, "output")
            else:
                position = bisect.bisect_left(free, (size, -1))
                if position < len(free):
                    _, index = free.pop(position)
                    result.reused_bytes += size
                else:
                    index = allocate(size, "temp")
                result.slot_of[node] = index
                releases.setdefault(last, []).append(index)
        for index in releases.pop(step, ()):
            bisect.insort(free, (result.allocations[index].size_bytes, index))
    copied: dict[int, int] = {}
    for output in entry.outputs:
        if output.opcode in ("parameter", "constant"):
            if id(output) not in copied:
                copied[id(output)] = allocate(aligned_size(output), "output")
            result.output_slots.append(copied[id(output)])
        else:
            result.output_slots.append(result.slot_of[output])
    return result


def _schedule(order: list[Instruction]) -> tuple[list[list[Instruction]], dict[int, int]]:
    """Launch steps in post order; the `fusion` outputs of one kernel share the first's step."""
    steps: list[list[Instruction]] = []
    step_of: dict[int, int] = {}
    kernels: dict[tuple, int] = {}
    for node in order:
        if node.opcode == "fusion":
            key = (id(node.attr("computation")), tuple(id(operand) for operand in node.operands))
            if key in kernels:
                step_of[id(node)] = kernels[key]
                steps[kernels[key]].append(node)
                continue
            kernels[key] = len(steps)
        step_of[id(node)] = len(steps)
        steps.append([node])
    return steps, step_of
