"""Target machines, the O3 optimization pipeline and the process-wide MCJIT engine.

Everything here uses llvmlite's current API: no `llvm.initialize()` (it raises in 0.50),
opaque pointers, and the new pass manager (`create_pass_builder`). The host target machine is
tuned for this CPU (its name and feature string), so the loop and SLP vectorizers use the
widest vectors the host has; `cpu_features_key()` names that choice for compile caches.

Example:
    >>> engine = jit_engine()
    >>> engine.add_module('define i64 @seven() { ret i64 7 }')
    >>> import ctypes
    >>> ctypes.CFUNCTYPE(ctypes.c_int64)(engine.function_address("seven"))()
    7
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import threading
from collections.abc import Callable
from typing import NamedTuple

import llvmlite.binding as llvm
import llvmlite.ir as ir

from ... import _profiler
from . import vector_math

_INITIALIZE_LOCK = threading.Lock()

# LLVM command-line options, set once per process (they are LLVM's globals: they apply to
# every llvmlite user in the process, and change speed only, never results).
# The alias-set tracker gives up past 250 distinct pointers in a loop and treats every access as
# possibly aliasing every other, so the loop vectorizer finds no bounds for run-time checks and
# leaves the loop scalar. A float32 sin or cos reads its large-argument table at 4 pointers, so a
# kernel of 63 of them (a loop's unrolled `x = sin(x) * 0.5 + 0.1` steps) ran 6x slower than one
# of 62 (100k elements: 101 against 17 ms). A kernel holds at most FusionPolicy.max_instructions
# (256) instructions, so 2,000 pointers cover every kernel; the tracker's time stays small
# (the 63-sin kernel optimizes in 0.46 s vectorized, as the 62-sin one did).
# Epilogue vectorization (the remainder loop vectorized again, narrower) stays
# on although it is ~25 % of a kernel's LLVM time (softmax's kernel 73 -> 56 ms without it): a
# loop vectorized 16 float32 lanes wide and interleaved 4 times leaves up to 63 elements, which
# in short rows is much of the work. Without it `la.jit(heat)` (254-element rows) ran 0.62 ->
# 0.78 ms and `la.jit(mandelbrot)` (300-element rows, complex) 0.70 -> 1.06 ms.
# Runtime unrolling (loops of unknown trip count unrolled with a remainder) is off: a kernel's
# loops are vectorized and interleaved already, and what it unrolled (remainders, the tiled
# transpose's inner loops) ran no faster: W1-W7 and the programs' jitted runs equal to noise
# (single thread, three alternated runs), while cold first calls got shorter (W2 GELU 138-158 ->
# 111 ms, W3 softmax 73 -> 66, W7b 40 -> 30; the others unchanged).
# Measured and not taken (single thread, one run each against this pipeline, benchmarks/run.py
# and programs.py): O2 instead of O3 shortens cold compiles (W3 73 -> 64 ms, W4 76 -> 53) but
# W7b ran 14 % and `la.jit(heat)` 12 % slower; `-force-vector-interleave=1` (W3 cold 73 -> 64 ms)
# made W3's row reductions 35 % slower; with epilogue vectorization off as well (W3 cold 50 ms)
# `la.jit(mandelbrot)` ran 0.94 -> 1.41 ms. A per-loop choice (interleave elementwise loops once,
# reductions four times) is what would keep both.
# Loop strength reduction (in code generation: indices rewritten as pointer increments) is off:
# it was the costliest single pass of a kernel's compile (softmax's kernel: 23 of ~130 ms, its
# machine code 70 -> 40 ms; x + 1: 14 -> 7 ms) and the kernels run as fast without it (x86
# addressing modes take base + index * scale as they are): benchmarks/run.py W1-W7 and the
# programs' jitted runs equal to noise (two alternated runs each), cold W2 54 -> 40 ms, W3
# 146 -> 122 ms. (An earlier build ran heat's stencil 10 % and W7a 8 % slower without it; this
# one, compiled both ways in one process and alternated four times: W7a 2.43-2.53 ms without,
# 2.45-3.06 ms with it, la.jit(heat) 0.66-0.84 against 0.66-0.89 ms.) PTX keeps it
# (`loop_strength_reduction`): its code stays as it ran on the GPUs (the pass run on the IR
# instead changed the PTX), and no GPU was at hand to measure a change.
# Also measured and not taken: a per-loop interleave count of 1 (or 2) for loops of more than 24
# value instructions, through `!llvm.loop` hints (LLVM interleaves every reduction 4 times):
# softmax's exp-and-sum loop compiled ~20 % faster but ran 2.64 -> 3.2 ms (1) or 2.95 ms (2).
# Tail folding (`-prefer-predicate-over-epilogue=predicate-else-scalar-epilogue`: the last partial
# vector under AVX2 masks, no vectorized epilogue): softmax's row kernel's LLVM time 55 -> 33 ms,
# `exp(x) * 3.5`'s 30 -> 14 ms, but folded loops are not interleaved and every access is masked:
# W3 ran 2.5 -> 3.2 ms, W4 3.2 -> 4.4 ms, W7a 1.9 -> 2.6 ms (run.py, alternated twice). No
# vectorized epilogue (`-enable-epilogue-vectorization=false`): LLVM time 10-25 % lower (W3's
# kernel 54 -> 43 ms, GELU's 23 -> 18 ms), but a row's last <64 elements run scalar (softmax
# over rows of 1000: 40 scalar exps a row), for a cold W3 still twice JAX's.
_LLVM_OPTIONS: tuple[str, ...] = ("-alias-set-saturation-threshold=2000", "-unroll-runtime=false", "-disable-lsr")
_initialized = {"native": False, "all": False}


def initialize_native() -> None:
    """Register the host target, its assembly printer and parser with LLVM (idempotent), and
    libmvec's functions with the JIT linker (vector_math.py)."""
    with _INITIALIZE_LOCK:
        if _initialized["native"]:
            return
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        llvm.initialize_native_asmparser()
        for option in _LLVM_OPTIONS:
            llvm.set_option("lazyarr", option)
        _initialized["native"] = True
    vector_math.bind_symbols()  # (outside the lock: it asks for the host's features, which initialize)


def _initialize_all() -> None:
    """Register every target llvmlite was built with (for ahead-of-time cross compilation)."""
    initialize_native()
    if _initialized["all"]:
        return
    with _OPTIONS.writing(), _INITIALIZE_LOCK:  # (the registry is LLVM's global: no compile reads it meanwhile)
        if not _initialized["all"]:
            llvm.initialize_all_targets()
            llvm.initialize_all_asmprinters()
            _initialized["all"] = True


@functools.cache
def host_cpu_name() -> str:
    """LLVM's name for the host CPU ('znver4', 'sapphirerapids', 'neoverse-v2', ...)."""
    initialize_native()
    return llvm.get_host_cpu_name()


@functools.cache
def host_cpu_features() -> str:
    """The host's feature string ('+avx2,+fma,-avx512f,...'), sorted so that it is stable.

    With AVX-512, LLVM's tuning for most Intel CPUs still prefers 256-bit vectors (older
    parts slow their clocks for 512-bit code); array loops gain up to 2x from full-width
    vectors, as NumPy's own AVX-512 loops do, so the preference is turned off there.
    """
    initialize_native()
    try:
        features = llvm.get_host_cpu_features().flatten()
    except RuntimeError:  # LLVM cannot query features on this host: let the CPU name decide
        return ""
    if "+avx512f" in features.split(","):
        features += ",-prefer-256-bit"
    return features


def cpu_features_key() -> str:
    """Triple, CPU name and features of the host: code compiled for one key runs on that key only."""
    return f"{llvm.get_process_triple()}|{host_cpu_name()}|{host_cpu_features()}"


def create_host_target_machine() -> llvm.TargetMachine:
    """A new target machine for JIT code on this host (each compiling thread has its own:
    thread_compile.py); `host_target_machine()` is the shared one."""
    initialize_native()
    target = llvm.Target.from_triple(llvm.get_process_triple())
    # codemodel 'jitdefault' is what MCJIT needs on 64-bit hosts (sections may lie far apart).
    return target.create_target_machine(
        cpu=host_cpu_name(), features=host_cpu_features(), opt=3,
        reloc="default", codemodel="jitdefault", jit=True,
    )


_HOST_MACHINE_LOCK = threading.Lock()
_SHARED_HOST_MACHINE: list[llvm.TargetMachine] = []


def host_target_machine() -> llvm.TargetMachine:
    """The target machine for JIT code on this host (opt level 3, host CPU and features).

    Shared and cached: use it to optimize or print assembly. `JitEngine` never takes
    ownership of it (an execution engine disposes of its target machine) but makes its own.
    """
    with _HOST_MACHINE_LOCK:
        if not _SHARED_HOST_MACHINE:
            _SHARED_HOST_MACHINE.append(create_host_target_machine())
        return _SHARED_HOST_MACHINE[0]


def target_machine_for(triple: str, cpu: str = "", features: str = "") -> llvm.TargetMachine:
    """A target machine for ahead-of-time code ('x86_64-unknown-linux-gnu', 'aarch64-...').

    Position-independent code with the small code model, as shared libraries want it.
    An empty `cpu` means the triple's generic CPU.
    """
    _initialize_all()
    try:
        target = llvm.Target.from_triple(triple)
    except RuntimeError as error:
        raise ValueError(f"target_machine_for: unknown triple {triple!r}: {error}") from error
    return target.create_target_machine(
        cpu=cpu, features=features, opt=3, reloc="pic", codemodel="default",
    )


class Pipeline(NamedTuple):
    """LLVM's pass builder and the module pass manager it built."""

    builder: llvm.PassBuilder
    manager: llvm.ModulePassManager


def pipeline(module: llvm.ModuleRef, target_machine: llvm.TargetMachine, speed_level: int = 3, *,
             straight_line_vectorization: bool = False) -> Pipeline:
    """LLVM's default module pipeline (O`speed_level`) with loop vectorization, for `module`,
    which takes the target machine's triple and data layout first, so the vectorizers' cost
    model sees the real vector widths. `optimize` runs it.

    The SLP (straight-line) vectorizer is off unless asked for: a kernel is a loop, which the
    loop vectorizer widens; SLP only looked for more inside the widened body and cost up to
    half of a kernel's LLVM time (Mandelbrot's kernel of ten complex steps: 215 -> 50 ms; W1-W7
    and the programs' kernels run as fast without it, benchmarks/run.py and programs.py A/B).
    """
    module.triple = target_machine.triple
    module.data_layout = str(target_machine.target_data)
    tuning = llvm.create_pipeline_tuning_options(speed_level=speed_level)
    tuning.loop_vectorization = speed_level >= 2
    tuning.slp_vectorization = speed_level >= 2 and straight_line_vectorization
    tuning.loop_unrolling = speed_level >= 2
    builder = llvm.create_pass_builder(target_machine, tuning)
    return Pipeline(builder, builder.getModulePassManager())


def optimize(module: llvm.ModuleRef, target_machine: llvm.TargetMachine, speed_level: int = 3, *,
             straight_line_vectorization: bool = False) -> None:
    """Run `pipeline`'s passes on `module` (rewritten in place)."""
    passes = pipeline(module, target_machine, speed_level, straight_line_vectorization=straight_line_vectorization)
    with _profiler.span("LLVM optimize", "codegen", module.name):
        passes.manager.run(module, passes.builder)


@contextlib.contextmanager
def loop_strength_reduction():
    """Code generation inside the block runs loop strength reduction, which `_LLVM_OPTIONS`
    leaves out of the host's: for PTX, whose code must stay as it ran on the H100. The option is
    LLVM's global: the block waits until no `compile_object` runs (in any thread) and holds
    them off while it lasts (a module added to a `JitEngine` meanwhile may get the pass: the
    same results, a slower compile)."""
    initialize_native()
    with _OPTIONS.writing():
        llvm.set_option("lazyarr", "-disable-lsr=false")
        try:
            yield
        finally:
            llvm.set_option("lazyarr", "-disable-lsr=true")


class _ReadersWriter:
    """Many readers at once, or one writer: LLVM's global options are read by every compile
    and written by `loop_strength_reduction`, so a write waits until no thread compiles
    concurrently (thread_compile.py), and those compiles wait while it lasts."""

    def __init__(self):
        self._condition = threading.Condition()
        self._readers = 0
        self._writers_waiting = 0
        self._writing = False

    @contextlib.contextmanager
    def reading(self):
        """(Not re-entrant: a reader waits while a writer does, so none may read inside a read.)"""
        with self._condition:
            self._condition.wait_for(lambda: not self._writing and not self._writers_waiting)
            self._readers += 1
        try:
            yield
        finally:
            with self._condition:
                self._readers = max(0, self._readers - 1)  # (0 after a fork: forget_other_threads)
                self._condition.notify_all()

    @contextlib.contextmanager
    def writing(self):
        with self._condition:
            self._writers_waiting += 1
            try:
                self._condition.wait_for(lambda: not self._writing and not self._readers)
            finally:
                self._writers_waiting -= 1
            self._writing = True
        try:
            yield
        finally:
            with self._condition:
                self._writing = False
                self._condition.notify_all()

    def forget_other_threads(self) -> None:
        """After fork: the threads that were reading or writing are not in the child."""
        self.__init__()


_OPTIONS = _ReadersWriter()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_OPTIONS.forget_other_threads)


def shared_options():
    """Hold while compiling outside llvmlite's lock: LLVM's global options stay as they are."""
    return _OPTIONS.reading()


_MODULE_ID = re.compile(r"""; ModuleID = ["']([^"'\n]*)["']""")


def parse_module(source: str | ir.Module | llvm.ModuleRef) -> llvm.ModuleRef:
    """LLVM IR text, an llvmlite `ir.Module` or a parsed module -> a verified `ModuleRef`.

    Parsing uses LLVM's global context, which is not thread-safe: call it under a lock
    when other threads parse too (`JitEngine.add_module` does).
    """
    if isinstance(source, llvm.ModuleRef):
        module = source
    elif isinstance(source, ir.Module | str):
        text = str(source)
        try:
            module = llvm.parse_assembly(text)
        except RuntimeError as error:
            raise ValueError(f"parse_module: LLVM could not parse the IR: {error}") from error
        # The parser drops the "; ModuleID" comment; keep the name (object caches key on it).
        module.name = module_id(text) or module.name
    else:
        raise TypeError(
            f"parse_module: expected IR text, ir.Module or ModuleRef, got {type(source).__name__}"
        )
    verify(module)
    return module


def module_id(text: str) -> str | None:
    """The name in IR text's "; ModuleID" comment, which LLVM's parser drops."""
    found = _MODULE_ID.match(text)
    return found.group(1) if found else None


def verify(module: llvm.ModuleRef) -> None:
    """LLVM's verifier; a broken module raises ValueError naming it."""
    try:
        module.verify()
    except RuntimeError as error:
        raise ValueError(f"parse_module: module {module.name!r} fails verification: {error}") from error


_COMPILE_LOCK = threading.Lock()


def compile_object(source: str | ir.Module, speed_level: int = 3) -> bytes:
    """LLVM IR -> host object code: parse, verify, optimize (O`speed_level`), emit.

    The object goes to the persistent cache as it is and into a `JitEngine` with
    `add_objects`. Serialized: LLVM's global context is not thread-safe.
    """
    with _COMPILE_LOCK, shared_options(), _profiler.span("LLVM compile", "codegen"):
        module = parse_module(source)
        machine = host_target_machine()
        optimize(module, machine, speed_level)
        with _profiler.span("machine code", "codegen"):
            return machine.emit_object(module)


class JitEngine:
    """One MCJIT execution engine: add modules, then look functions up by name.

    Adding is serialized by a lock (parsing, optimizing and code generation are not
    thread-safe in LLVM); compiled modules live as long as the engine, and so do function
    addresses: whoever keeps an address keeps the engine too (or uses the process-wide
    `jit_engine()`). Function names must be unique across the engine's modules, so a second
    definition is refused (`fresh_name` hands out unused ones). A target machine passed in
    becomes the engine's (LLVM disposes of it with the engine), except the shared host one.
    """

    def __init__(self, target_machine: llvm.TargetMachine | None = None):
        initialize_native()
        # An execution engine owns (and finally disposes of) its target machine, so the shared,
        # cached host machine is never handed over: the engine gets an identical one of its own.
        if target_machine is None or any(target_machine is shared for shared in _SHARED_HOST_MACHINE):
            target_machine = create_host_target_machine()
        self.target_machine = target_machine
        self._lock = threading.RLock()
        backing = llvm.parse_assembly("")
        backing.name = "lazyarr_jit_backing"
        backing.triple = self.target_machine.triple
        backing.data_layout = str(self.target_machine.target_data)
        self._engine = llvm.create_mcjit_compiler(backing, self.target_machine)
        self._modules: list[llvm.ModuleRef] = [backing]
        self._functions: set[str] = set()
        self._reserved: set[str] = set()
        self._next_name = 0

    def add_module(self, source: str | ir.Module | llvm.ModuleRef, *, optimize_module: bool = True,
                   speed_level: int = 3) -> None:
        """Parse, verify, optimize (unless told not to), add and finalize (generate code)."""
        with self._lock, _profiler.span("LLVM compile", "codegen"):
            module = parse_module(source)
            defined = {function.name for function in module.functions if not function.is_declaration}
            duplicates = sorted(defined & self._functions)
            if duplicates:
                raise ValueError(f"JitEngine.add_module: functions already defined: {', '.join(duplicates)}")
            if optimize_module:
                optimize(module, self.target_machine, speed_level)
            else:
                module.triple = self.target_machine.triple
                module.data_layout = str(self.target_machine.target_data)
            self._engine.add_module(module)
            with _profiler.span("machine code", "codegen"):
                self._engine.finalize_object()
            self._modules.append(module)
            self._functions |= defined

    def defines(self, name: str) -> bool:
        """Whether a module or object added to this engine defines function `name`."""
        return name in self._functions

    @property
    def function_count(self) -> int:
        return len(self._functions)

    def add_objects(self, objects: list[tuple[bytes, list[str]]]) -> None:
        """Load compiled objects (`compile_object`, or read back from the persistent cache),
        each with the names of the functions it defines, and link them (MCJIT resolves their
        calls into the process, as for modules)."""
        with self._lock, _profiler.span("load objects", "codegen"):
            names = {name for _, defined in objects for name in defined}
            duplicates = sorted(names & self._functions)
            if duplicates:
                raise ValueError(f"JitEngine.add_objects: functions already defined: {', '.join(duplicates)}")
            for code, _ in objects:
                self._engine.add_object_file(llvm.ObjectFileRef.from_data(code))
            self._engine.finalize_object()
            self._functions |= names

    def function_address(self, name: str) -> int:
        """The address of a compiled function, for `ctypes.CFUNCTYPE(...)(address)`."""
        with self._lock:
            if name not in self._functions:
                raise KeyError(f"JitEngine.function_address: no compiled function named {name!r}")
            return self._engine.get_function_address(name)

    def global_address(self, name: str) -> int:
        """The address of a global variable defined by a module of this engine."""
        with self._lock:
            return self._engine.get_global_value_address(name)

    def fresh_name(self, prefix: str = "kernel") -> str:
        """A function name no module of this engine defines yet ('kernel_0', 'kernel_1', ...).

        Several compilers sharing one engine must not reuse names: MCJIT would resolve a
        second definition to the first one.
        """
        with self._lock:
            while True:
                name = f"{prefix}_{self._next_name}"
                self._next_name += 1
                if name not in self._functions and name not in self._reserved:
                    self._reserved.add(name)
                    return name

    def has_function(self, name: str) -> bool:
        with self._lock:
            return name in self._functions

    def set_object_cache(self, notify: Callable[[llvm.ModuleRef, bytes], None] | None = None,
                         get_buffer: Callable[[llvm.ModuleRef], bytes | None] | None = None) -> None:
        """Hooks for a persistent object cache (llvmlite's `ExecutionEngine.set_object_cache`).

        `notify(module, object_code)` is called after code generation; `get_buffer(module)`
        may return previously saved object code for the module (or None to compile it).
        """
        with self._lock:
            self._engine.set_object_cache(notify, get_buffer)


_ENGINE_LOCK = threading.Lock()
_engine: list[JitEngine] = []


def jit_engine() -> JitEngine:
    """The process-wide engine for host code, created on first use."""
    with _ENGINE_LOCK:
        if not _engine:
            _engine.append(JitEngine())
        return _engine[0]
