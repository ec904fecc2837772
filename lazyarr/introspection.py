"""`la.explain` and the XLA-style dump files: what the compiler did with a graph, and why.

Both sit at the driver's layer: they see the module before and after the pipeline, the
fusion report, the buffer assignment and the generated LLVM IR.
"""

from __future__ import annotations

import itertools
import os
import re
import warnings
from dataclasses import dataclass, field

from . import shapes
from ._files import create_new
from .hlo.text import print_module


@dataclass
class Explanation:
    """The compile report of one evaluation; `str()` is meant for a terminal."""

    backend: str
    hlo_before: str
    hlo_after: str
    num_kernels: int
    fusion_decisions: list = field(default_factory=list)
    fusion_report: object = None
    buffer_assignment: object = None
    llvm_ir: str = ""
    ptx: str = ""  # GPU backend: the PTX of the kernels (`print(la.explain(y).ptx)`)
    cache_hit: bool = False
    steps: str = ""  # CPU backend: each step run, in order, and its threads

    def __str__(self) -> str:
        parts = [
            f"backend: {self.backend}; kernels: {self.num_kernels}"
            + ("; (compiled earlier: cache hit)" if self.cache_hit else ""),
            "== HLO before optimization ==", self.hlo_before.rstrip(),
            "== HLO after optimization ==", self.hlo_after.rstrip(),
        ]
        if self.fusion_report is not None:
            parts += ["== fusion ==", str(self.fusion_report).rstrip()]
        if self.buffer_assignment is not None:
            parts += ["== buffer assignment ==", named_symbolic_sizes(str(self.buffer_assignment)).rstrip()]
        if self.steps:
            parts += ["== steps ==", self.steps.rstrip()]
        return "\n".join(parts) + "\n"

    def _repr_pretty_(self, printer, cycle):  # IPython
        printer.text(str(self))


def explanation_for(backend_name: str, hlo_before: str, executable, cache_hit: bool) -> Explanation:
    module = getattr(executable, "module", None)
    notes = module.notes if module is not None else {}
    report = notes.get("fusion")
    kernels = 0
    if module is not None:
        kernels = len({
            id(node.attr("computation")) for node in module.entry.post_order() if node.opcode == "fusion"
        })
    return Explanation(
        backend=backend_name,
        hlo_before=hlo_before,
        hlo_after=named_symbolic_sizes(print_module(module)) if module is not None else hlo_before,
        num_kernels=kernels,
        fusion_decisions=list(getattr(report, "decisions", []) or []),
        fusion_report=report,
        buffer_assignment=notes.get("buffer-assignment"),
        llvm_ir=getattr(executable, "llvm_ir", ""),
        ptx=getattr(executable, "ptx", ""),
        cache_hit=cache_hit,
        steps=executable.describe_steps() if hasattr(executable, "describe_steps") else "",
    )


_LARGE_INTEGER = re.compile(r"\d{13,}")


def named_symbolic_sizes(text: str) -> str:
    """HLO text with each symbolic size (a placeholder, shapes.placeholder) shown as `s<k>`, the
    k-th size the executable reads at run time, instead of the placeholder's raw number."""
    def name(match):
        value = int(match.group())
        return f"s{shapes.placeholder_index(value)}" if shapes.is_symbolic_size(value) else match.group()

    named = _LARGE_INTEGER.sub(name, text)
    if named == text:
        return text
    return "// s0, s1, ...: symbolic sizes (one executable serves every size; read at run time)\n" + named


_MODULE_NUMBERS = itertools.count()
_FAILED_DIRECTORIES: set[str] = set()  # --dump_to paths that could not be written: warned about once


class DumpWriter:
    """Writes `module_NNNN.<name>.<stage>.txt` files into the --dump_to directory (and
    `.ir-no-opt.ll`, `.ir-with-opt.ll` for the CPU, `.ir-no-opt.ll`, `.ptx` for the GPU).

    Every file is created new, never written through a symlink or over an existing file: the
    first file of a module claims the next number whose name is free, so processes dumping
    into one directory keep each other's files. A path that cannot be written (a file, a
    directory without permission) gets one warning naming --dump_to, the path and the OS
    error; evaluation goes on, without dumps there.
    """

    def __init__(self, directory: str, module_name: str):
        self.directory = directory
        self.module_name = module_name
        self.prefix = ""  # module_NNNN.<name>, claimed by the first file written
        self.enabled = directory not in _FAILED_DIRECTORIES
        self._pass_numbers = itertools.count()
        self._guarded(os.makedirs, directory, exist_ok=True)

    def write(self, suffix: str, text: str) -> None:
        self._guarded(self._write, suffix, text)

    def _write(self, suffix: str, text: str) -> None:
        if self.prefix:
            create_new(f"{self.prefix}.{suffix}", text)
            return
        while True:
            prefix = os.path.join(self.directory, f"module_{next(_MODULE_NUMBERS):04d}.{self.module_name}")
            try:
                create_new(f"{prefix}.{suffix}", text)
            except FileExistsError:  # another process's module (or a planted link): the next number
                continue
            self.prefix = prefix
            return

    def _guarded(self, action, *arguments, **keywords) -> None:
        """Run a file operation unless dumping here failed; an OSError turns dumping off."""
        if not self.enabled:
            return
        try:
            action(*arguments, **keywords)
        except OSError as error:
            self.enabled = False
            if self.directory not in _FAILED_DIRECTORIES:
                _FAILED_DIRECTORIES.add(self.directory)
                # stacklevel 1: any evaluation may compile, so no caller's line is the one to blame
                warnings.warn(f"LAZYARR_FLAGS --dump_to={self.directory}: cannot write dumps there "
                              f"({error}); evaluating without dumps", RuntimeWarning, stacklevel=1)

    def pass_hook(self, pass_name: str, module) -> None:
        """For Pipeline(dump=...): the HLO after each pass, numbered in run order."""
        if self.enabled:
            self.write(f"{next(self._pass_numbers):04d}.{pass_name}.after.txt", print_module(module))

    def finish(self, executable) -> None:
        if not self.enabled:
            return
        module = getattr(executable, "module", None)
        if module is not None:
            self.write("after_optimizations.txt", print_module(module))
            assignment = module.notes.get("buffer-assignment")
            if assignment is not None:
                self.write("buffer_assignment.txt", str(assignment))
        llvm_ir = getattr(executable, "llvm_ir", "")
        if hasattr(executable, "ptx"):  # GPU: the IR before optimization, and the PTX LLVM made of it
            if llvm_ir:
                self.write("ir-no-opt.ll", llvm_ir)
            if executable.ptx:
                self.write("ptx", executable.ptx)
            return
        if llvm_ir:
            self.write("ir-no-opt.ll", llvm_ir)
            from .backends.llvm.target import host_target_machine, optimize, parse_module

            optimized = parse_module(llvm_ir)
            optimize(optimized, host_target_machine())
            self.write("ir-with-opt.ll", str(optimized))
