"""The CPU backend: fused kernels compiled by llvmlite, host steps for everything else.

`compile(module)` runs the target-independent pipeline with this backend's fusion policy,
turns every fusion into an LLVM function (all of a module's kernels go into one LLVM module,
optimized at O3 for the host CPU and JIT-compiled once), and plans the entry computation
as a list of steps over buffer slots: kernels (a float matrix product is a kernel calling
NumPy's own CBLAS gemm, llvm/blas.py), and host steps that run an instruction's NumPy
reference (batched or integer dots, custom-calls, scatter), as XLA's auto-clustering leaves
unsupported ops to TensorFlow. Kernels split their outermost output dimension over a
thread pool when the output is large; ctypes releases the GIL during each call.
"""

from __future__ import annotations

import ctypes
import functools
import math
import os
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field

import llvmlite.binding as llvm
import numpy as np

from .. import _flags, _profiler
from ..hlo import Computation, Instruction, Module, make
from ..passes.default import default_pipeline
from ..passes.fusion import FusionDecision, FusionPolicy
from ..shapes import is_contiguous_block, is_symbolic_size, placeholder_index, resolve_shape
from . import host_buffers
from .host_buffers import kernel_output as _output
from .host_buffers import output_allocator
from .kernel_sizes import canonical_sizes
from .llvm import dispatch, threads
from .llvm.blas import is_native_dot, native_dot_refusal

try:  # the optional C extension (setup.py): direct calls without Python steps
    from . import _direct_call
    _direct_call.configure(np.ndarray)
except ImportError:  # built without a C compiler: the Python closure does it
    _direct_call = None
from .cpu_kernels import _KERNELS, _NEWEST_ENGINE, KERNEL_COUNTS, _compile_kernels, _remember, kernel_fingerprint
from .llvm.elemental import COMPILED_DTYPES, emit_refusal  # noqa: F401 (tests read COMPILED_DTYPES here)
from .llvm.kernel import outer_extent
from .llvm.reduction_arithmetic import ACCUMULATOR
from .slots import HostStep, Slots
from .split_reductions import COMBINE_NAME, PARTIAL_BLOCKS, combining_computation, splits_into_partials

# A kernel runs on several threads when its estimated work (elements touched times its cost per
# element, see `work_per_element`) reaches this; below it, on the calling thread. Through
# OpenMP's threads (llvm/threads.py) a split costs ~1-2 µs and pays from ~2^17 (`x + y` of 32k
# float32: 17.5 -> 15.8 µs, 128k: 35 -> 26 µs); the threshold is 2^19 because a team woken
# between small kernels and gemms contends with BLAS's own threads on few cores (a jitted MLP
# step of 128x128 kernels ran 2x slower at 2^17, level at 2^19). Without an OpenMP runtime,
# handing a kernel to the Python pool and back costs ~70-150 µs here (2-core box: Python
# futures, thread wake-ups), so the split must save more than that. Measured, serial vs pool:
# `x + y` breaks even at ~2M float32 elements (cost 4), `exp(x) * y + 1` at ~1M (cost 13),
# Black-Scholes' kernel (cost ~100) wins from ~100k.
_NATIVE_PARALLEL_WORK = 1 << 19
_PARALLEL_WORK = 1 << 23
# Cost per element of an op, relative to an add; calls into the math library cost more.
_HEAVY_OPS = frozenset({"exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin",
                        "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "cbrt", "atan2",
                        "hypot", "power", "nextafter", "erf", "fmod"})
_HEAVY_OP_COST, _DIVIDE_COST = 8, 2


@dataclass
class CpuFusionPolicy(FusionPolicy):
    """Fuse what the elemental emitter can generate, for the dtypes it compiles; row kernels
    (a row's reductions, then its elements: llvm/kernel.py `_rows`) included."""

    row_reductions: bool = True

    def is_fusible(self, instruction: Instruction) -> FusionDecision:
        refusal = emit_refusal(instruction)  # dtypes and ops the elemental emitter lacks
        if refusal is not None:
            return FusionDecision.no(refusal)
        if is_buffer_view(instruction):
            return FusionDecision.no(
                "a contiguous slice of a buffer (a view of it: no copy, and kernels reading it "
                "do not depend on where it starts)"
            )
        if instruction.opcode == "dynamic-update-slice":
            return FusionDecision.yes()  # a select between update and operand per element
        return super().is_fusible(instruction)


def dot_kernel(dot: Instruction) -> tuple[Computation, tuple[Instruction, ...]]:
    """`dot` as a kernel of its own (one BLAS call, llvm/blas.py) and the operands it reads:
    the dot of parameters 0 (and 1, unless both operands are one value: `x @ x.T`)."""
    operands = tuple(dict.fromkeys(dot.operands))
    parameters = tuple(make("parameter", number=number, shape=operand.shape, dtype=operand.dtype)
                       for number, operand in enumerate(operands))
    standing_for = dict(zip(operands, parameters))
    root = make("dot", [standing_for[operand] for operand in dot.operands], **dot.attributes)
    return Computation("dot", parameters, (root,)), operands


def is_buffer_view(instruction: Instruction) -> bool:
    """A slice of a parameter that is one contiguous stretch of its buffer (`x[a:b]`, rows
    `x[a:b, :]`, `x[i, a:b]`): NumPy's slicing makes it a view. As a host step it costs a
    view, not a kernel; its readers get a buffer of their own, so the same kernel serves
    every offset (a loop over batches `x[i*n:(i+1)*n]` compiles once)."""
    if instruction.opcode != "slice" or instruction.operands[0].opcode != "parameter":
        return False
    operand = instruction.operands[0]
    if any(step != 1 for step in instruction.attr("stride")) or instruction.shape == operand.shape:
        return False
    return is_contiguous_block(list(zip(instruction.attr("start"), instruction.attr("limit"))), operand.shape)


@dataclass
class KernelStep:
    """One fused kernel: reads `inputs` slots, writes `outputs` slots."""

    function: object
    inputs: list[int]
    outputs: list[int]
    output_specs: list[tuple[tuple[int, ...], np.dtype]]
    extent: int
    parallel: int  # threads to split it over (0: the calling thread alone; `_parallel`)
    # Shapes of what the kernel touches, when some size is a placeholder (symbolic_sizes.py):
    # then extent, output shapes and the threading decision are resolved at each run.
    symbolic_work: list[tuple[int, ...]] | None = None
    work_per_element: int = 1  # estimated cost per touched element (`work_per_element`)
    # The module's placeholder number behind each of the kernel's own (kernel_sizes.py): the
    # kernel reads `sizes[k]` for each k here, in this order.
    size_map: tuple[int, ...] = ()
    splittable: bool = True  # False for a gemm kernel: BLAS runs its own threads
    label: str = ""  # what `la.explain` calls it: the fused computation, and its part of a split


# The size vector of kernels without placeholder sizes (they never read it).
_NO_SIZES = (ctypes.c_int64 * 1)(0)


def _kernel_sizes(kernel: KernelStep, sizes):
    """The placeholder sizes `kernel` reads, as a native vector."""
    if not kernel.size_map:
        return _NO_SIZES
    return (ctypes.c_int64 * len(kernel.size_map))(*[sizes[k] for k in kernel.size_map])


@dataclass
class NativeRun:
    """Consecutive kernels run by one native dispatch call (llvm/dispatch.py), those marked
    parallel on OpenMP's threads (llvm/threads.py). Kernels with placeholder sizes resolve
    their extents and whether they want threads at each run; without OpenMP, a run where one
    wants threads goes step by step instead (the Python pool)."""

    kernels: list[KernelStep]
    program: object  # the dispatch program (a ctypes int64 array)
    starts: list[int]  # where each kernel's words begin in the program
    symbolic: bool
    outputs: list[tuple[int, tuple, np.dtype]] = field(default_factory=list)  # (slot, shape, dtype)
    # real sizes -> (program with their extents, or None to go step by step; outputs)
    sized: dict = field(default_factory=dict)
    # Slots only this run reads (`native_runs`): their buffers are kept for the next run.
    internal: frozenset = frozenset()
    scratch: dict = field(default_factory=dict)  # real sizes of scratch_sizes -> {slot: buffer}
    scratch_lock: threading.Lock = field(default_factory=threading.Lock)
    # The placeholders (their positions in the size vector) in the shapes of the buffers it
    # keeps: only their real values change those buffers. A run whose other sizes change every
    # call (k-means: the count of each mask) keeps one set, not one per call.
    scratch_sizes: tuple[int, ...] = ()

    def __post_init__(self):
        self.address = ctypes.addressof(self.program)  # (what the dispatch call takes)
        self.dispatch = dispatch.dispatcher()  # (native runs exist only where it is not None)
        self.outputs = [(slot, shape, dtype) for kernel in self.kernels
                        for slot, (shape, dtype) in zip(kernel.outputs, kernel.output_specs)]
        self.scratch_sizes = tuple(sorted({placeholder_index(size) for slot, shape, _ in self.outputs
                                           if slot in self.internal for size in shape if is_symbolic_size(size)}))


def _sized_plan(run: NativeRun, sizes) -> tuple:
    """What a run with placeholder sizes does at these real sizes (remembered per sizes)."""
    if len(run.sized) >= 64:
        run.sized.clear()
    program = type(run.program).from_buffer_copy(run.program)  # the template stays as it is
    vectors = []
    for kernel, start in zip(run.kernels, run.starts):
        if kernel.symbolic_work is not None:
            extent = resolve_shape((kernel.extent,), sizes)[0]
            parallel = _threads_at(kernel, extent, sizes)
            if parallel and not dispatch.native_threads():
                return None, (), ()
            program[start + 1] = extent
            program[start + dispatch.PARALLEL] = parallel
        vector = _kernel_sizes(kernel, sizes)
        vectors.append(vector)
        program[start + 2] = ctypes.addressof(vector)
    outputs = [(slot, resolve_shape(shape, sizes), dtype) for slot, shape, dtype in run.outputs]
    # (the program's address: dispatch takes an int faster than a ctypes array; the plan keeps
    # the program and the size vectors it points to alive)
    return ctypes.addressof(program), outputs, (program, vectors)


def native_runs(steps: list, output_slots=()) -> list:
    """`steps` with each stretch of single-threaded kernels replaced by a NativeRun (even one
    kernel: a dispatch call costs less than a ctypes call with a pointer array); unchanged
    where native dispatch is not available. A run's `internal` slots are those it writes that
    no later step reads and that are not among the module's `output_slots`."""
    if dispatch.dispatcher() is None:
        return steps
    # Views of arguments (`is_buffer_view`: `inputs[rows]` of a batch loop) read parameters
    # only, and every value has a slot of its own: they go first, so that the kernels around
    # them stay one run (a jitted loop over 10 batches made 21 native runs of its 133 kernels).
    views = [step for step in steps if isinstance(step, HostStep) and is_buffer_view(step.instruction)]
    if views:
        hoisted = {id(view) for view in views}
        steps = views + [step for step in steps if id(step) not in hoisted]
    read_after = [set(output_slots)]  # read_after[i]: slots read by steps[i:] or returned
    for step in reversed(steps):
        read = step.inputs
        read_after.append(read_after[-1].union(read))
    read_after.reverse()
    grouped, stretch = [], []

    def close(position):
        """End the stretch before steps[position]."""
        if stretch:
            kernels = list(stretch)
            words = [(ctypes.cast(kernel.function, ctypes.c_void_p).value,
                      kernel.extent if kernel.symbolic_work is None else 0, ctypes.addressof(_NO_SIZES),
                      kernel.parallel, kernel.inputs + kernel.outputs) for kernel in kernels]
            program, positions = dispatch.program(words)
            written = {slot for kernel in kernels for slot in kernel.outputs}
            # A kernel reads placeholder sizes when its size_map is not empty, also when none
            # sits in its inputs or outputs (sum(ones(n)): only the inner broadcast has n); the
            # template's size vectors are empty, so such a run must be planned per sizes.
            grouped.append(NativeRun(kernels, program, positions,
                                     any(kernel.symbolic_work is not None or kernel.size_map for kernel in kernels),
                                     internal=frozenset(written - read_after[position])))
            stretch.clear()

    native = dispatch.native_threads()  # parallel kernels join runs (else: the Python pool's steps)
    for position, step in enumerate(steps):
        if isinstance(step, KernelStep) and (native or not step.parallel):
            stretch.append(step)
        else:
            close(position)
            grouped.append(step)
    close(len(steps))
    return grouped


@dataclass
class CpuExecutable:
    module: Module
    steps: list
    parameter_slots: list[int]
    output_slots: list[int]
    constants: dict[int, np.ndarray]
    slot_count: int
    kernel_ir: list[str] = field(default_factory=list)  # the LLVM module of each kernel compiled for it
    compile_seconds: float = 0.0
    keepalive: list = field(default_factory=list)

    def run(self, arguments: Sequence[np.ndarray], sizes: Sequence[int] = ()) -> list[np.ndarray]:
        """Run on `arguments` (one buffer per parameter); `sizes` are the real values of the
        module's placeholder sizes, if it has any (see lazyarr/symbolic_sizes.py)."""
        slots = self._placed(arguments)
        if _profiler._ACTIVE is None:  # one native call per run of kernels
            for step in self.dispatched:
                if type(step) is NativeRun:
                    _run_native(step, slots, sizes)
                elif type(step) is HostStep:
                    _run_host_step(step, slots, sizes)
                else:
                    _run_kernel(step, slots, sizes)
            return list(map(slots.__getitem__, self.output_slots))
        for step in self.steps:
            if isinstance(step, HostStep):
                with _profiler.span("host step", "execute", step):
                    _run_host_step(step, slots, sizes)
            else:
                _run_kernel(step, slots, sizes)  # (its span times the kernel's call alone)
        return [slots[slot] for slot in self.output_slots]

    def _placed(self, arguments: Sequence[np.ndarray]) -> list:
        """A run's slots: the constants, and each argument in its parameter's slot as a
        C-contiguous array (a list: native dispatch reads it, llvm/dispatch.py)."""
        if len(arguments) != len(self.parameter_slots):  # (a slot left empty would be read as an array)
            raise ValueError(f"{self.module.name}: {len(self.parameter_slots)} arguments expected, "
                             f"got {len(arguments)}")
        slots = self.blank_slots.copy()
        for slot, argument in zip(self.parameter_slots, arguments):
            if type(argument) is not _NDARRAY or not argument.flags.c_contiguous:  # (the usual case: as is)
                # np.asarray, not np.ascontiguousarray: the latter turns 0-d arrays into shape (1,).
                argument = np.asarray(argument, order="C")
            slots[slot] = argument
        return slots

    def direct_call(self, sizes: tuple[int, ...] = ()):
        """`lambda arguments: self.run(arguments, sizes)` with the fewest Python steps, for an
        executable that is one native run (W5, a solver's test, most jitted functions); None for
        any other. Its plan at `sizes` is resolved once, here; its temporaries take the buffers
        the run keeps (`_scratch_buffers`, under the run's lock, as `_run_native` does)."""
        if len(self.dispatched) != 1 or type(self.dispatched[0]) is not NativeRun:
            return None
        run = self.dispatched[0]
        if run.symbolic:
            address, outputs, keep = _sized_plan(run, sizes)
            if address is None:  # threads wanted at these sizes, without native threads
                return None
        else:
            address, outputs, keep = run.address, run.outputs, run.program
        allocations = [(slot, output_allocator(shape, dtype), shape, dtype) for slot, shape, dtype in outputs]
        placed, output_slots, dispatch_run = self._placed, self.output_slots, run.dispatch
        key = tuple([sizes[index] for index in run.scratch_sizes]) if run.scratch_sizes else ()
        internal, lock = bool(run.internal), run.scratch_lock

        def call(arguments):
            if _profiler._ACTIVE is not None:
                return self.run(arguments, sizes)
            slots = placed(arguments)
            if not internal or not lock.acquire(blocking=False):  # (busy: another thread runs it)
                for slot, allocate, shape, dtype in allocations:
                    slots[slot] = allocate(shape, dtype)
                dispatch_run(address, id(slots))
                return [slots[slot] for slot in output_slots]
            try:
                scratch = run.scratch.get(key)
                if scratch is None:
                    scratch = _scratch_buffers(run, outputs, key)
                for slot, allocate, shape, dtype in allocations:
                    kept = scratch.get(slot)
                    slots[slot] = allocate(shape, dtype) if kept is None else kept
                dispatch_run(address, id(slots))
            finally:
                lock.release()
            return [slots[slot] for slot in output_slots]

        call.keep = keep  # (the sized program and size vectors the address points into)
        if _direct_call is None or not _flags.FLAGS.c_extensions:
            return call
        # The same steps in C (`_direct_call.c`), the closure for every other case: ~1.5 us less a call.
        return _direct_call.DirectCall(
            list(self.blank_slots), tuple(self.parameter_slots), tuple(tuple(entry) for entry in allocations),
            tuple(output_slots), address, ctypes.cast(dispatch_run, ctypes.c_void_p).value, keep, call, _profiler,
            run.scratch if internal else None, key, lock)

    def describe_steps(self) -> str:
        """One line per step, in order: what it runs and on how many threads (`la.explain`)."""
        lines = []
        for step in self.steps:
            if isinstance(step, HostStep):
                lines.append(f"host step: {step.instruction.opcode} (NumPy)")
                continue
            if not step.splittable:
                threads_used = "BLAS's own threads"
            elif step.symbolic_work is not None:
                threads_used = "threads decided at each run from its sizes"
            else:
                threads_used = f"{step.parallel} threads" if step.parallel else "the calling thread"
            lines.append(f"kernel {step.label or '?'}: {threads_used}")
        where = "OpenMP's threads, llvm/threads.py" if dispatch.native_threads() else "a Python thread pool"
        lines.append(f"(kernels split over threads from {_split_threshold():,} work units: {where})")
        return "\n".join(lines)

    @functools.cached_property
    def llvm_ir(self) -> str:
        """The kernels compiled for this executable as one LLVM module (for dumps and explain;
        each was compiled as a module of its own). Empty when all came from a cache."""
        if len(self.kernel_ir) <= 1:
            return "".join(self.kernel_ir)
        linked = llvm.parse_assembly(self.kernel_ir[0])
        for text in self.kernel_ir[1:]:
            linked.link_in(llvm.parse_assembly(text))
        return str(linked)

    @functools.cached_property
    def dispatched(self) -> list:
        return native_runs(self.steps, self.output_slots)

    @functools.cached_property
    def blank_slots(self) -> list:
        """The slots of a run before its arguments are placed: the constants, else None."""
        slots: list[np.ndarray | None] = [None] * self.slot_count
        for slot, value in self.constants.items():
            slots[slot] = value
        return slots


_NDARRAY = np.ndarray


def _run_host_step(step: HostStep, slots, sizes) -> None:
    values = [slots[slot] for slot in step.inputs]
    result = step.instruction.op.reference(values, step.attributes_at(sizes))
    slots[step.output] = np.asarray(result, dtype=step.instruction.dtype, order="C")


def _run_native(run: NativeRun, slots, sizes) -> None:
    if run.symbolic:
        plan = run.sized.get(sizes)
        if plan is None:
            plan = run.sized[sizes] = _sized_plan(run, sizes)
        program, outputs, _ = plan
        if program is None:  # big enough for threads at these sizes: step by step
            for kernel in run.kernels:
                _run_kernel(kernel, slots, sizes)
            return
    else:
        program, outputs = run.address, run.outputs
    if not run.internal or not run.scratch_lock.acquire(blocking=False):  # (busy: another thread runs it)
        for slot, shape, dtype in outputs:
            slots[slot] = _output(shape, dtype)
        run.dispatch(program, id(slots))  # (the list: see llvm/dispatch.py)
        return
    try:
        # (the usual case, temporaries of concrete shapes: one set of buffers, key ())
        key = tuple([sizes[index] for index in run.scratch_sizes]) if run.scratch_sizes else ()
        scratch = run.scratch.get(key)
        if scratch is None:
            scratch = _scratch_buffers(run, outputs, key)
        for slot, shape, dtype in outputs:
            buffer = scratch.get(slot)
            slots[slot] = _output(shape, dtype) if buffer is None else buffer
        run.dispatch(program, id(slots))  # (the list: see llvm/dispatch.py)
    finally:
        run.scratch_lock.release()


# A run keeps the buffers of values only it reads (temporaries between its kernels) for its
# next call, so a loop calling the same executable allocates only what it returns. Each kept
# buffer is at most _SCRATCH_BYTES (larger ones come and go with each run), and a run keeps
# buffers for at most _SCRATCH_SIZES sets of placeholder sizes.
_SCRATCH_BYTES = 1 << 22
_SCRATCH_SIZES = 4


def _scratch_buffers(run: NativeRun, outputs, sizes) -> dict[int, np.ndarray]:
    """The buffers `run` keeps for its internal slots at these sizes (made on first use:
    `_scratch_layout`)."""
    if len(run.scratch) >= _SCRATCH_SIZES:
        run.scratch.clear()
    scratch = run.scratch[sizes] = _scratch_layout(run, outputs)
    return scratch


def _scratch_layout(run: NativeRun, outputs) -> dict[int, np.ndarray]:
    """New buffers for `run`'s internal slots (`outputs`: every slot it writes, its real shape).

    Slots whose values are dead by the time another is written share its buffer (same shape
    and dtype; a kernel never writes a buffer it reads): a chain of steps (a stencil loop)
    cycles through two or three buffers that stay in cache, not one buffer per step. No kept
    buffer aliases a value read after the run: each holds only values written and read within it."""
    layout = {slot: (shape, dtype) for slot, shape, dtype in outputs
              if slot in run.internal and math.prod(shape) * dtype.itemsize <= _SCRATCH_BYTES}
    last_read = {slot: position for position, kernel in enumerate(run.kernels)
                 for slot in kernel.inputs if slot in layout}
    free: dict[tuple, list[np.ndarray]] = {}  # (shape, dtype) -> buffers whose values are dead
    scratch: dict[int, np.ndarray] = {}
    for position, kernel in enumerate(run.kernels):
        for slot in kernel.outputs:
            if slot in layout:
                spare = free.get(layout[slot])
                scratch[slot] = spare.pop() if spare else _output(*layout[slot])
        for slot in {*kernel.inputs, *kernel.outputs}:  # dead after this kernel: its buffer is free
            if slot in scratch and last_read.get(slot, -1) <= position:
                free.setdefault(layout[slot], []).append(scratch[slot])
    return scratch


def _run_kernel(step: KernelStep, slots, sizes):
    specs, extent, parallel = step.output_specs, step.extent, step.parallel
    size_vector = _kernel_sizes(step, sizes)
    if step.symbolic_work is not None:
        specs = [(resolve_shape(shape, sizes), dtype) for shape, dtype in specs]
        extent = resolve_shape((extent,), sizes)[0]
        parallel = _threads_at(step, extent, sizes)
    outputs = [_output(shape, dtype) for shape, dtype in specs]
    buffers = [slots[slot] for slot in step.inputs] + outputs
    pointer_array = (ctypes.c_void_p * len(buffers))(*(buffer.ctypes.data for buffer in buffers))
    caller = dispatch.parallel_caller() if parallel else None
    # A profile's "kernel" event times the kernel itself: the step's setup above (outputs,
    # ctypes pointer arrays: ~15 us, none of which a native run pays) would triple a small
    # kernel's time in la.profile.
    with _profiler.span("kernel", "execute", step):
        if caller is not None:
            caller(ctypes.cast(step.function, ctypes.c_void_p).value, pointer_array, size_vector, extent, parallel)
        elif parallel:
            workers = _pool()._max_workers
            bounds = np.linspace(0, extent, workers + 1).astype(np.int64)
            chunk = _profiler.traced(step.function, "kernel chunk", "execute")
            futures = [
                _pool().submit(chunk, pointer_array, size_vector, int(begin), int(end))
                for begin, end in zip(bounds[:-1], bounds[1:]) if end > begin
            ]
            try:
                for future in futures:
                    future.result()
            finally:  # interrupted or failed: no chunk may go on writing into buffers given up
                wait(futures)
        else:
            step.function(pointer_array, size_vector, 0, extent)
    for slot, output in zip(step.outputs, outputs):
        slots[slot] = output


def _parallel(extent: int, work_shapes, work_per_element: int) -> int:
    """How many threads a kernel runs on (0: the calling thread alone). Split when it does
    enough work: the largest of its inputs and outputs (a row reduction has a small output and
    big inputs) times its cost per element. On OpenMP's threads, one per half of the threshold
    of work, at most the team and the extent: a kernel just above it runs on 2 threads, not on
    every core of a large machine (whose region would cost more than the work it shares out)."""
    if extent <= 1:
        return 0
    work = max(math.prod(shape) for shape in work_shapes) * work_per_element
    least = _split_threshold()
    if not dispatch.native_threads():
        return 2 if work >= least else 0  # (the Python pool splits over all its workers)
    team = threads.team_size()
    if work < least or team < 2:
        return 0
    return max(2, min(team, extent, work // max(1, least // 2)))


def _threads_at(step: KernelStep, extent: int, sizes) -> int:
    """`_parallel` for a kernel with placeholder sizes at these real sizes (0 for a gemm)."""
    if not step.splittable:
        return 0
    return _parallel(extent, (resolve_shape(shape, sizes) for shape in step.symbolic_work), step.work_per_element)


def _split_threshold() -> int:
    """The work from which a kernel splits: OpenMP's threads cost far less than the pool's."""
    return _NATIVE_PARALLEL_WORK if dispatch.native_threads() else _PARALLEL_WORK


def work_per_element(computation: Computation) -> int:
    """A fused kernel's estimated cost per element: one per parameter and output (memory), one
    per op, more for divides and math-library calls. Only thread splits depend on it."""
    cost = len(computation.outputs)
    for node in computation.post_order():
        opcode = node.opcode
        cost += _HEAVY_OP_COST if opcode in _HEAVY_OPS else _DIVIDE_COST if opcode in ("divide", "sqrt") else 1
    return cost


_POOL: ThreadPoolExecutor | None = None


def _pool() -> ThreadPoolExecutor:
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="lazyarr-cpu")
    return _POOL


def _forget_pool_in_child() -> None:
    """A forked child has none of its parent's worker threads: work handed to the inherited
    pool would wait forever, so the child makes a pool of its own on first use."""
    global _POOL
    _POOL = None


os.register_at_fork(after_in_child=_forget_pool_in_child)


class CpuBackend:
    name = "cpu"
    device = "cpu"
    symbolic_sizes = True  # kernels read placeholder sizes at run time (symbolic_sizes.py)

    def __init__(self):
        self.fusion_policy = CpuFusionPolicy()

    @staticmethod
    def clear_kernel_cache() -> None:
        """Forget compiled kernels (`la.clear_cache()`): the next modules compile theirs again.
        The recycled output buffers go too (host_buffers.py)."""
        host_buffers.release()
        _KERNELS.clear()
        _NEWEST_ENGINE.clear()
        KERNEL_COUNTS.update(compiled=0, reused=0, loaded=0)

    @staticmethod
    def kernel_counts() -> dict[str, int]:
        """Kernels compiled, kernels a module took from the kernel cache instead, and kernels
        loaded from the persistent cache."""
        return dict(KERNEL_COUNTS)

    @staticmethod
    def _launch(computation, inputs, slots, new_kernels, partial_blocks=0) -> KernelStep:
        """The step running kernel `computation` on slots `inputs` (its outputs' slots are set
        later, except a partials kernel's: fresh slots), its kernel noted in `new_kernels`
        unless already compiled."""
        kernel_computation, size_map = canonical_sizes(computation)
        fingerprint = kernel_fingerprint(kernel_computation)
        if partial_blocks:
            fingerprint += (("partials", partial_blocks),)
        if fingerprint in _KERNELS:
            _KERNELS.move_to_end(fingerprint)
            KERNEL_COUNTS["reused"] += 1
        elif fingerprint in new_kernels:
            KERNEL_COUNTS["reused"] += 1
        else:
            new_kernels[fingerprint] = (kernel_computation, partial_blocks)
        work = [node.shape for node in computation.outputs + computation.parameters]
        symbolic = any(is_symbolic_size(size) for shape in work for size in shape)
        cost = work_per_element(computation)
        # A gemm kernel is never split over threads: BLAS runs its own.
        splittable = not is_native_dot(computation)
        if partial_blocks:
            extent = partial_blocks
            specs = [((partial_blocks,), ACCUMULATOR.get(output.dtype, output.dtype)) for output in computation.outputs]
            outputs = [slots.fresh() for _ in specs]
        else:
            extent = outer_extent(computation)
            specs = [(output.shape, output.dtype) for output in computation.outputs]
            outputs = [None] * len(specs)
        if partial_blocks:
            label = f"{computation.name}: {partial_blocks} partial results of its full reductions"
        elif computation.name == COMBINE_NAME:
            label = f"{computation.name}: the partial results combined"
        else:
            label = "a gemm (BLAS)" if is_native_dot(computation) else computation.name
        return KernelStep(
            fingerprint, list(inputs), outputs, specs, extent,
            parallel=not symbolic and splittable and _parallel(extent, work, cost),
            symbolic_work=work if symbolic else None, size_map=size_map, work_per_element=cost,
            splittable=splittable, label=label,
        )

    def compile(self, module: Module, pipeline_dump=None) -> CpuExecutable:
        start = time.perf_counter()
        dispatch.dispatcher()  # the native dispatcher is built with the first module (cached after)
        with _profiler.span("pipeline", "compile"):
            default_pipeline(self.fusion_policy, dump=pipeline_dump).run(module)
        slots = Slots(module)
        steps, pending = [], []
        launched: dict[tuple, KernelStep] = {}
        new_kernels: dict[tuple, tuple] = {}  # fingerprint -> (kernel, partial blocks), compiled below
        for instruction in slots.instructions():
            if instruction.opcode == "fusion":
                computation, operands = instruction.attr("computation"), instruction.operands
                key = (id(computation), tuple(id(o) for o in operands))
                output_index = instruction.attr("output_index")
            elif instruction.opcode == "dot" and native_dot_refusal(instruction) is None:
                computation, operands = dot_kernel(instruction)
                key, output_index = (id(instruction),), 0
            else:
                steps.append(slots.host_step(instruction))
                continue
            if key not in launched:
                if splits_into_partials(computation):
                    partials = self._launch(computation, [slots.of(o) for o in operands], slots, new_kernels,
                                            partial_blocks=PARTIAL_BLOCKS)
                    steps.append(partials)
                    pending.append(partials)
                    computation = combining_computation(computation)
                    operands = partials.outputs
                else:
                    operands = [slots.of(o) for o in operands]
                step = launched[key] = self._launch(computation, operands, slots, new_kernels)
                steps.append(step)
                pending.append(step)
            launched[key].outputs[output_index] = slots.of(instruction)
        for step in pending:
            step.outputs = [slot if slot is not None else slots.fresh() for slot in step.outputs]
        compiled, texts = _compile_kernels(new_kernels) if new_kernels else ({}, [])
        engines = {}
        for step in pending:
            kernel = compiled.get(step.function) or _KERNELS[step.function]
            step.function = kernel.function
            engines[id(kernel.engine)] = kernel.engine
        _remember(compiled)
        return CpuExecutable(
            module=module,
            steps=steps,
            parameter_slots=slots.parameters,
            output_slots=slots.outputs,
            constants=slots.constants,
            slot_count=slots.count,
            kernel_ir=texts,
            compile_seconds=time.perf_counter() - start,
            keepalive=list(engines.values()),  # the code of its kernels
        )

BACKEND = CpuBackend()
