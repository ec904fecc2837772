"""The interpreter backend: evaluates the module with each op's NumPy reference.

It is the correctness oracle every compiled backend is tested against.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .. import _profiler
from ..hlo import Module, evaluate


@dataclass(frozen=True)
class InterpreterExecutable:
    module: Module

    def run(self, arguments: Sequence[np.ndarray]) -> list[np.ndarray]:
        with _profiler.span("interpreter run", "execute"):
            return evaluate(self.module.entry, arguments)


class InterpreterBackend:
    name = "interpreter"
    device = "cpu"

    def compile(self, module: Module, pipeline_dump=None) -> InterpreterExecutable:
        """No passes: the interpreter runs the graph as the user built it."""
        return InterpreterExecutable(module)


BACKEND = InterpreterBackend()
