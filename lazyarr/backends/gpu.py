"""The GPU backend: PTX kernels launched through CuPy, buffers held as CuPy arrays.

Importing this module needs CuPy and a CUDA device; without either it raises one
`GpuUnavailable` error saying what to install (`import lazyarr` never imports it: the backend
and transfer registries load it on the first request for the GPU). Code generation itself
(gpu_compile.py, llvm/gpu_kernel.py, llvm/nvptx.py) needs neither.

`compile(module)` turns the module into a GpuProgram (PTX + steps), loads the PTX into the
device once (the driver compiles it for the exact GPU), and `run` launches the kernels on
CuPy's current stream: no host synchronization between kernels; results are CuPy arrays
that stay on the device until someone asks for their values.
"""

from __future__ import annotations

import math
import os
import tempfile
import threading
from collections.abc import Sequence

import numpy as np

from .. import _profiler
from ..hlo import Module
from ..hlo.ops.linalg import dot_general
from ..shapes import resolve_shape
from .gpu_compile import PTX_COUNTS, DotStep, GpuFusionPolicy, GpuProgram, LaunchStep, compile_program
from .llvm.gpu_kernel import BLOCK, launch_splits

INSTALL_HINT = (
    "install CuPy with the `gpu` extra: pip install 'lazyarr[gpu]' (CUDA 12) or "
    "'lazyarr[gpu-cuda13]' (CUDA 13)"
)


class GpuUnavailable(RuntimeError):
    """The GPU was asked for, but CuPy or a CUDA device is missing."""


def _load_cupy():
    try:
        import cupy
    except ImportError as error:
        raise GpuUnavailable(f"the GPU backend needs CuPy, which is not installed ({error}); {INSTALL_HINT}") from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:  # CUDARuntimeError: no driver, or no device
        raise GpuUnavailable(f"CuPy is installed but found no CUDA device ({error}); {INSTALL_HINT}") from None
    if count == 0:
        raise GpuUnavailable(f"CuPy is installed but found no CUDA device; {INSTALL_HINT}")
    return cupy


cupy = _load_cupy()


def host_to_device(array) -> cupy.ndarray:
    """A device copy of a host array, its bytes copied as they are. Not `cupy.asarray`: it fills a
    0-d array with its value, and its fill clears memory for any value `== 0`, so -0.0 arrived
    as +0.0 (seen on an H100 with CuPy 14)."""
    # np.asarray(order="C"), not np.ascontiguousarray: the latter turns 0-d arrays into shape (1,).
    host = np.asarray(array, order="C")
    device = cupy.empty(host.shape, host.dtype)
    if host.size:
        device.set(host)
    return device


class _DeviceScalars:
    """Device copies of 0-d host arguments (lifted Python scalars: GELU's 0.5 and 0.044715,
    layernorm's epsilon), kept by value so that an evaluation does not copy each again (a
    host-to-device copy of a few bytes costs ~10 µs of the host's time, every call). Kernels
    never write their parameters, so one copy serves every executable; a module output that is
    one of them is copied (`private`), so no caller holds a shared one."""

    LIMIT = 256

    def __init__(self):
        self._copies: dict[tuple, object] = {}  # (dtype, bytes) -> device copy, oldest first
        self._ids: set[int] = set()  # ids of the copies (kept alive by _copies)
        self._lock = threading.Lock()

    def get(self, value: np.ndarray):
        key = (value.dtype.str, value.tobytes())
        found = self._copies.get(key)
        if found is None:
            found = host_to_device(value)
            with self._lock:
                if len(self._copies) >= self.LIMIT:
                    self._ids.discard(id(self._copies.pop(next(iter(self._copies)))))
                self._copies[key] = found
                self._ids.add(id(found))
        return found

    def private(self, result):
        """`result`, or a copy of it when it is one of the shared copies."""
        return result.copy() if id(result) in self._ids else result


_DEVICE_SCALARS = _DeviceScalars()


class GpuTransferManager:
    """Host <-> GPU copies through CuPy (device 'gpu' is CuPy's current device)."""

    device = "gpu"

    def owns(self, buffer) -> bool:
        return isinstance(buffer, cupy.ndarray)

    def to_host(self, buffer) -> np.ndarray:
        return cupy.asnumpy(buffer)

    def from_host(self, array: np.ndarray):
        return host_to_device(array)

    def copy(self, buffer):
        return buffer.copy(order="C")

    def contiguous_view(self, buffer, key):
        try:
            view = buffer[key]  # (kernels take a view's pointer, element-aligned as any buffer's)
        except (IndexError, TypeError, ValueError):
            return None
        return view if view.flags.c_contiguous else None


TRANSFER_MANAGER = GpuTransferManager()


class _Device:
    """Properties of the current device that code generation and launches need."""

    def __init__(self):
        device = cupy.cuda.Device()
        major, minor = device.compute_capability[:-1], device.compute_capability[-1]
        self.arch = f"sm_{major}{minor}"
        self.sm_count = device.attributes["MultiProcessorCount"]


_DEVICE: list[_Device] = []


def current_device() -> _Device:
    if not _DEVICE:
        _DEVICE.append(_Device())
    return _DEVICE[0]


class GpuExecutable:
    """A loaded GPU program: `run(arguments, sizes)` launches its steps and returns CuPy arrays."""

    def __init__(self, program: GpuProgram, functions: dict[str, object]):
        self.program = program
        self.module = program.module
        self.llvm_ir = program.llvm_ir
        self.ptx = program.ptx
        self.compile_seconds = program.compile_seconds
        self._functions = functions
        self._constants = {slot: host_to_device(value) for slot, value in program.constants.items()}

    def run(self, arguments: Sequence[object], sizes: Sequence[int] = ()) -> list[object]:
        program = self.program
        slots: list[object] = [None] * program.slot_count
        for slot, argument in zip(program.parameter_slots, arguments):
            # Host arguments (lifted Python scalars, host 0-d arrays) are copied to the device.
            if not isinstance(argument, cupy.ndarray):
                argument = np.asarray(argument)
                argument = _DEVICE_SCALARS.get(argument) if argument.ndim == 0 else host_to_device(argument)
            slots[slot] = argument
        for slot, value in self._constants.items():
            slots[slot] = value
        # Kernels take the placeholder sizes their module still uses after optimization.
        size_arguments = [np.int64(size) for size in sizes[:program.size_count]]
        for step in program.steps:
            if isinstance(step, LaunchStep):
                with _profiler.span("kernel", "execute", step.plan.name):
                    self._launch(step, slots, sizes, size_arguments)
            elif isinstance(step, DotStep):
                with _profiler.span("cuBLAS dot", "execute"):
                    values = [slots[slot] for slot in step.inputs]
                    result = dot_general(values, step.instruction.attributes, cupy.matmul)
                    # astype(copy=False) keeps 0-d results 0-d (ascontiguousarray would make them 1-d).
                    slots[step.output] = result.astype(step.instruction.dtype, order="C", copy=False)
            else:
                with _profiler.span("host step", "execute", step):
                    values = [cupy.asnumpy(slots[slot]) for slot in step.inputs]
                    result = step.instruction.op.reference(values, step.attributes_at(sizes))
                    slots[step.output] = host_to_device(np.asarray(result, dtype=step.instruction.dtype))
        return [_DEVICE_SCALARS.private(slots[slot]) for slot in program.output_slots]

    def _launch(self, step: LaunchStep, slots, sizes, size_arguments):
        plan = step.plan
        outputs = [cupy.empty(resolve_shape(shape, sizes), dtype) for shape, dtype in step.output_specs]
        for slot, output in zip(step.outputs, outputs):
            slots[slot] = output
        shape = resolve_shape(plan.shape, sizes)
        null = np.uint64(0)
        scratch = counters = null
        if plan.kind == "loop":
            count = math.prod(shape)
            if count == 0:
                return
            grid, splits = (min(math.ceil(count / BLOCK), 32 * current_device().sm_count), 1, 1), 1
        else:
            kept = math.prod(size for axis, size in enumerate(shape) if axis not in plan.reduced)
            reduced = math.prod(shape[axis] for axis in plan.reduced)
            if kept == 0:
                return
            grid_x, splits = launch_splits(plan, kept, reduced, current_device().sm_count)
            grid = (grid_x, splits, 1)
            if splits > 1:
                tiles = kept if plan.kind == "row" else math.ceil(kept / BLOCK)
                scratch = cupy.empty(len(outputs) * kept * splits, dtype=np.int64)
                counters = cupy.zeros(tiles, dtype=np.int32)
        arguments = (
            *(slots[slot] for slot in step.inputs), *outputs, scratch, counters,
            *size_arguments, np.int64(splits),
        )
        self._functions[plan.name](grid, (BLOCK, 1, 1), arguments)


class GpuBackend:
    name = "gpu"
    device = "gpu"
    symbolic_sizes = True  # kernels take placeholder sizes as arguments (symbolic_sizes.py)

    def __init__(self):
        self.fusion_policy = GpuFusionPolicy()
        self._lock = threading.Lock()

    @staticmethod
    def kernel_counts() -> dict[str, int]:
        """Kernels whose PTX was generated, and kernels whose PTX the persistent cache held
        (`la.cache_info()`; a GPU module's kernels are one PTX, so none is reused alone)."""
        return {"compiled": PTX_COUNTS["compiled"], "reused": 0, "loaded": PTX_COUNTS["loaded"]}

    def compile(self, module: Module, pipeline_dump=None) -> GpuExecutable:
        program = compile_program(module, current_device().arch, self.fusion_policy, pipeline_dump)
        functions = {}
        if program.kernel_names:
            with self._lock, _profiler.span("load PTX", "codegen"):
                # RawModule(path=...) is CuPy's documented way to load PTX; the driver compiles
                # it for this exact GPU when the module loads.
                with tempfile.TemporaryDirectory() as directory:
                    path = os.path.join(directory, f"{module.name}.ptx")
                    with open(path, "w") as file:
                        file.write(program.ptx)
                    loaded = cupy.RawModule(path=path)
                    functions = {name: loaded.get_function(name) for name in program.kernel_names}
        return GpuExecutable(program, functions)


BACKEND = GpuBackend()
