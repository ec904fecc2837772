"""The entry computation as steps over numbered buffer slots, shared by the CPU and GPU backends.

A compiled backend runs its module's entry as a list of steps (kernels, library calls, host
steps), each reading and writing slots: one per instruction value, parameters and constants
included. `Slots` numbers them while a backend walks the entry; `HostStep` is the step for an
instruction that runs its NumPy reference on the host.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..hlo import Instruction, Module
from ..shapes import SIZE_ATTRIBUTES, is_symbolic_size, resolve_shape


@dataclass
class HostStep:
    """One instruction run through its NumPy reference on the host."""

    instruction: Instruction
    inputs: list[int]
    output: int
    symbolic_attributes: tuple[str, ...] = ()  # its size attributes (shapes.SIZE_ATTRIBUTES) holding placeholders

    def attributes_at(self, sizes) -> dict:
        """The instruction's attributes with the real sizes in place of placeholders."""
        attributes = self.instruction.attributes
        if self.symbolic_attributes:
            attributes = {**attributes, **{name: resolve_shape(attributes[name], sizes)
                                           for name in self.symbolic_attributes}}
        return attributes


class Slots:
    """Slot numbers for a module's entry values; parameters and constants are numbered first
    as the walk meets them."""

    def __init__(self, module: Module):
        self.module = module
        self._numbers: dict[object, int] = {}
        self.constants: dict[int, np.ndarray] = {}
        self.parameters = [self.of(parameter) for parameter in module.entry.parameters]

    def of(self, instruction: Instruction) -> int:
        return self._numbers.setdefault(id(instruction), len(self._numbers))

    def fresh(self) -> int:
        """A slot for a kernel output that no instruction reads (it is still written)."""
        return self._numbers.setdefault(("unread", len(self._numbers)), len(self._numbers))

    @property
    def count(self) -> int:
        return len(self._numbers)

    @property
    def outputs(self) -> list[int]:
        return [self._numbers[id(output)] for output in self.module.entry.outputs]

    def instructions(self) -> Iterator[Instruction]:
        """The entry's instructions in post order, except parameters and constants (recorded in
        `constants` by slot)."""
        for instruction in self.module.entry.post_order():
            if instruction.opcode == "parameter":
                continue
            if instruction.opcode == "constant":
                self.constants[self.of(instruction)] = instruction.attr("literal").array
                continue
            yield instruction

    def host_step(self, instruction: Instruction) -> HostStep:
        return HostStep(
            instruction, [self.of(operand) for operand in instruction.operands], self.of(instruction),
            symbolic_attributes=tuple(name for name in SIZE_ATTRIBUTES
                                      if any(map(is_symbolic_size, instruction.attributes.get(name, ())))),
        )
