"""Pass, Pipeline and FixedPoint: the explicit, ordered running of HLO passes.

A pass rewrites a Module (graphs are immutable, so it replaces `module.entry` and
`module.computations`) and says whether it changed anything. A Pipeline runs its passes top
to bottom, as XLA's `HloPassPipeline` does: it skips the disabled ones, times each run, runs
the verifier after each pass when asked (so a miscompile is reported by the pass that made
it), and hands the module to a dump hook after each pass. FixedPoint repeats a group of passes
until none changes the module, with an iteration cap so it never loops forever.

    pipeline = Pipeline([FixedPoint([AlgebraicSimplifier(), ConstantFolder()]), DeadCodeEliminator()])
    changed = pipeline.run(module)
    pipeline.timings   # [("simplify", 0.0012, True), ("fold", 0.0003, False), ...]
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol, runtime_checkable

from .. import _flags, _profiler
from ..hlo.instruction import Instruction, remake
from ..hlo.module import Computation, Module, replace_all
from ..hlo.op import HloError
from ..hlo.verify import verify as verify_module

DumpHook = Callable[[str, Module], None]


@runtime_checkable
class Pass(Protocol):
    """A module rewrite: `name` (matching its file, e.g. "simplify") and `run(module) -> changed`."""

    name: str

    def run(self, module: Module) -> bool: ...


class FixedPoint(Pass):
    """Run `passes` in order, again and again, until one round changes nothing.

    At most `max_iterations` rounds: a group of passes that keeps undoing each other stops
    there instead of looping forever. Each run appends `{"iterations", "converged"}` to
    `module.notes[name]` (and sets `iterations` / `converged` on the instance), so a pass
    group that failed to settle is visible in `explain` output rather than an error.

    >>> FixedPoint([], name="nothing").run(Module("m", Computation("m", (), ())))
    False
    """

    def __init__(self, passes: Sequence[Pass], *, name: str = "fixed-point", max_iterations: int = 25):
        if max_iterations < 1:
            raise ValueError(f"FixedPoint {name}: max_iterations must be >= 1, got {max_iterations}")
        self.passes = tuple(passes)
        self.name = name
        self.max_iterations = max_iterations
        self.iterations = 0
        self.converged = False

    def run(self, module: Module) -> bool:
        return self.run_with(module, lambda each, target: each.run(target))

    def run_with(self, module: Module, run_one: Callable[[Pass, Module], bool]) -> bool:
        """Iterate with `run_one(pass, module)` running each sub-pass (a Pipeline passes its
        own, which skips disabled passes, times, verifies and dumps).

        A pass is not run again while nothing changed since it last changed nothing, nor right
        after a run that left it `settled` (a pass that iterates to its own fixed point says so
        in that attribute): rerunning it could change nothing. The rounds end when every pass
        is settled, often one round early (a whole-graph walk per pass saved: a loop's 50
        unrolled steps are 1,000 instructions)."""
        changed_at_all = False
        self.converged = False
        self.iterations = 0
        settled = [False] * len(self.passes)
        while self.iterations < self.max_iterations:
            self.iterations += 1
            for position, each in enumerate(self.passes):
                if settled[position]:
                    continue
                if run_one(each, module):
                    changed_at_all = True
                    settled = [False] * len(self.passes)
                    settled[position] = bool(getattr(each, "settled", False))
                else:
                    settled[position] = True
            if all(settled):
                self.converged = True
                break
        module.notes.setdefault(self.name, []).append(
            {"iterations": self.iterations, "converged": self.converged}
        )
        return changed_at_all

    def __repr__(self):
        return f"FixedPoint({list(self.passes)!r}, name={self.name!r}, max_iterations={self.max_iterations})"


class Pipeline:
    """An explicit ordered list of passes, run top to bottom by `run(module) -> changed`.

    `disabled`: pass names to skip, anywhere in the pipeline (a FixedPoint's own name skips
    the whole group); default `LAZYARR_FLAGS=--disable_passes=...`. A name that no pass here
    has raises ValueError listing the names there are, so a typo never silently disables nothing.
    `verify`: run the HLO verifier after every pass (default `--verify`); a failure is an
    HloError naming the pass. `dump(stage_name, module)`: called after every pass with the
    pass's name, in run order (the compile driver numbers the calls to name its dump files).
    `timings` holds `(pass name, seconds, changed)` for every pass run of the last `run`.
    """

    def __init__(
        self,
        passes: Iterable[Pass],
        *,
        disabled: Iterable[str] | None = None,
        verify: bool | None = None,
        dump: DumpHook | None = None,
    ):
        self.passes = tuple(passes)
        for each in self.passes:
            if not isinstance(getattr(each, "name", None), str) or not callable(getattr(each, "run", None)):
                raise TypeError(f"Pipeline: {each!r} is not a Pass (needs a str `name` and `run(module)`)")
        self.disabled = frozenset(_flags.FLAGS.disable_passes if disabled is None else disabled)
        unknown = sorted(self.disabled - set(self.pass_names()))
        if unknown:
            raise ValueError(
                f"Pipeline: cannot disable unknown pass name(s) {unknown}; "
                f"this pipeline's passes are: {', '.join(sorted(set(self.pass_names())))}"
            )
        self.verify = _flags.FLAGS.verify if verify is None else bool(verify)
        self.dump = dump
        self.timings: list[tuple[str, float, bool]] = []

    def pass_names(self) -> list[str]:
        """Every pass name in run order, FixedPoint groups and their members included."""
        names: list[str] = []
        stack = list(reversed(self.passes))
        while stack:
            each = stack.pop()
            names.append(each.name)
            if isinstance(each, FixedPoint):
                stack.extend(reversed(each.passes))
        return names

    def run(self, module: Module) -> bool:
        """Run every enabled pass in order; True if any changed the module."""
        if not isinstance(module, Module):
            raise TypeError(f"Pipeline.run: expected a Module, got {type(module).__name__}")
        self.timings = []
        changed = False
        for each in self.passes:
            changed = self._run_one(each, module) or changed
        return changed

    def _run_one(self, each: Pass, module: Module) -> bool:
        if each.name in self.disabled:
            return False
        if isinstance(each, FixedPoint):
            with _profiler.span(each.name, "pass"):
                return each.run_with(module, self._run_one)
        start = time.perf_counter()
        with _profiler.span(each.name, "pass"):
            changed = bool(each.run(module))
        self.timings.append((each.name, time.perf_counter() - start, changed))
        if self.verify:
            try:
                verify_module(module)
            except HloError as error:
                raise HloError(f"after pass {each.name}: {error}") from error
        if self.dump is not None:
            self.dump(each.name, module)
        return changed

    def __repr__(self):
        return f"Pipeline({list(self.passes)!r}, disabled={sorted(self.disabled)})"


# ----------------------------------------------------------------------- helpers for passes


def rebuild(node: Instruction, operands: Sequence[Instruction]) -> Instruction:
    """`node` with `operands` in place of its own: the same object when none changed."""
    old = node.operands
    if len(operands) == len(old):
        if len(old) == 1:  # unrolled: every pass asks this of every node
            if operands[0] is old[0]:
                return node
        elif len(old) == 2:
            if operands[0] is old[0] and operands[1] is old[1]:
                return node
        elif all(new is previous for new, previous in zip(operands, old)):
            return node
    return remake(node, operands)


Rewrite = Callable[[Instruction, tuple[Instruction, ...]], Instruction]


def rewrite_entry(module: Module, rewrite: Rewrite) -> bool:
    """Rebuild the entry bottom-up with `rewrite(node, new_operands)` (see `replace_all`);
    install the result and return whether any output changed. Parameters stay as they are:
    an unused parameter is still part of the computation's signature."""
    entry = module.entry
    outputs = replace_all(entry.outputs, rewrite)
    if all(new is old for new, old in zip(outputs, entry.outputs)):
        return False
    module.entry = Computation(entry.name, entry.parameters, outputs)
    return True
