"""Ahead-of-time programs: a plan (aot_plan.py) -> one LLVM module with an exported C entry point.

The entry point calls the plan's kernels (built by `KernelBuilder`, as for the JIT) in order,
single-threaded, each over its whole range. Entry ABI, for parameters p0..pn-1 and outputs
o0..om-1 in the module's order:

    int32_t name(const T* p0, ..., T* o0, ..., void* scratch);   // 0: done, 1: out of memory
    size_t name_scratch_bytes(void);

Every array is dense, row-major, naturally aligned; outputs must not overlap the inputs.
Intermediates live in `scratch`: `name_scratch_bytes()` bytes from the caller (aligned to 16
bytes at least; 64 is best), or NULL to let the entry `malloc` and `free` them itself. Values
whose live ranges are disjoint share scratch (the buffer assignment's temp allocations).
Outputs that are parameters, constants or repeat another output are copied (`memcpy`).
Constants too large to inline are read-only data in the object. Kernels are internal symbols,
so several AOT objects link into one program.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np

from ...hlo import Computation, Instruction, Module
from ...passes.buffers import ALIGNMENT
from .aot_plan import AotPlan, ScratchRegion, plan
from .elemental import COMPILED_DTYPES
from .kernel import POINTER, KernelBuilder, outer_extent
from .loops import entry_alloca, index_constant
from .math_table import cpu_math
from .target import optimize, parse_module

STATUS = ir.IntType(32)
BYTE = ir.IntType(8)
STATUS_OUT_OF_MEMORY = 1


@dataclass(frozen=True)
class AotProgram:
    """The LLVM module of one entry point, and what its C declaration needs to know.

    `parameters` and `outputs` are (shape, dtype) in entry-argument order; `scratch_bytes` is
    what `name_scratch_bytes()` returns; `kernels` counts the kernel functions called.
    """

    name: str
    llvm_module: ir.Module
    parameters: tuple[tuple[tuple[int, ...], np.dtype], ...]
    outputs: tuple[tuple[tuple[int, ...], np.dtype], ...]
    scratch_bytes: int
    kernels: int


def build_program(module: Module, name: str, *, triple: str, data_layout: str) -> AotProgram:
    """Plan `module` (aot_plan.plan) and emit its kernels and entry point `name`."""
    _check_signature(module)
    aot_plan = plan(module)
    llvm_module = ir.Module(name=name)
    llvm_module.triple = triple
    llvm_module.data_layout = data_layout
    emitter = _EntryEmitter(llvm_module, name, aot_plan, data_layout)
    emitter.emit()
    entry = aot_plan.module.entry
    return AotProgram(
        name=name,
        llvm_module=llvm_module,
        parameters=tuple((tuple(node.shape), node.dtype) for node in entry.parameters),
        outputs=tuple((tuple(node.shape), node.dtype) for node in entry.outputs),
        scratch_bytes=aot_plan.scratch_bytes,
        kernels=emitter.kernel_count,
    )


def emit_object(program: AotProgram, target_machine: llvm.TargetMachine) -> bytes:
    """Verify, optimize (O3 for the target machine) and compile `program` to an object file."""
    compiled = parse_module(program.llvm_module)
    optimize(compiled, target_machine)
    return target_machine.emit_object(compiled)


def host_triple() -> str:
    """This machine's LLVM triple ('x86_64-unknown-linux-gnu'), the default AOT target."""
    return llvm.get_process_triple()


def call_kernel(builder: ir.IRBuilder, kernel: ir.Function, buffers: Sequence[ir.Value],
                computation: Computation) -> None:
    """Call one kernel over its whole range: the only code here that knows the kernel ABI.

    kernel.py's ABI is `void kernel(ptr* buffers, i64* sizes, i64 begin, i64 end)`: buffers
    are the computation's parameters then its outputs; `sizes` holds the values of placeholder
    sizes, which AOT modules never have (every size is fixed at compile time: null); [begin,
    end) is a slice of the outermost output dimension, and one call from 0 to the extent
    computes everything.
    """
    array = _entry_array(builder, POINTER, len(buffers))
    for position, pointer in enumerate(buffers):
        builder.store(pointer, builder.gep(array, [index_constant(position)], source_etype=POINTER))
    no_sizes = ir.Constant(POINTER, None)
    builder.call(kernel, [array, no_sizes, index_constant(0), index_constant(outer_extent(computation))])


def _entry_array(builder: ir.IRBuilder, element: ir.Type, count: int) -> ir.AllocaInstr:
    """`count` elements of stack memory, allocated in the entry block (typed as element*)."""
    current = builder.block
    entry = builder.function.entry_basic_block
    builder.position_before(entry.instructions[0]) if entry.instructions else builder.position_at_end(entry)
    array = builder.alloca(element, size=index_constant(count), name="kernel_buffers")
    builder.position_at_end(current)
    return array


def _check_signature(module: Module) -> None:
    for role, nodes in (("parameter", module.entry.parameters), ("output", module.entry.outputs)):
        for position, node in enumerate(nodes):
            if node.dtype not in COMPILED_DTYPES:
                raise NotImplementedError(
                    f"aot: {role} {position} is {node.dtype}{list(node.shape)}; ahead-of-time entry points "
                    f"take and return {', '.join(sorted(str(dtype) for dtype in COMPILED_DTYPES))}"
                )


def _pointer_bits(data_layout: str) -> int:
    """Pointer width of the target (`p:32:32` in a 32-bit data layout), for size_t."""
    match = re.search(r"(?:^|-)p0?:(\d+)", data_layout)
    return int(match.group(1)) if match else 64


class _EntryEmitter:
    """Emits the kernels, the constants and the entry function of one plan."""

    def __init__(self, llvm_module: ir.Module, name: str, aot_plan: AotPlan, data_layout: str):
        self.module = llvm_module
        self.name = name
        self.plan = aot_plan
        self.assignment = aot_plan.assignment
        self.big_endian = "E" in data_layout.split("-")
        self.size_type = ir.IntType(_pointer_bits(data_layout))
        self.kernels = KernelBuilder(llvm_module, cpu_math)
        self.kernel_count = 0
        self.constants: dict[int, ir.GlobalVariable] = {}

    def emit(self) -> None:
        entry = self.plan.module.entry
        argument_count = len(entry.parameters) + len(entry.outputs) + 1
        function = ir.Function(self.module, ir.FunctionType(STATUS, [POINTER] * argument_count), name=self.name)
        arguments = list(function.args)
        parameters = arguments[:len(entry.parameters)]
        outputs = arguments[len(entry.parameters):-1]
        scratch = arguments[-1]
        for prefix, group in (("parameter", parameters), ("output", outputs)):
            for position, argument in enumerate(group):
                argument.name = f"{prefix}{position}"
                argument.add_attribute("noalias")
        scratch.name = "scratch"
        self.builder = ir.IRBuilder(function.append_basic_block("entry"))
        self.base = self._acquire_scratch(scratch)
        self.pointers = self._allocation_pointers(parameters, outputs)
        for step in self.plan.steps:
            buffers = [self._pointer(reference) for reference in step.inputs + step.outputs]
            self._launch(step.computation, buffers)
        self._copy_outputs(outputs)
        self._release_scratch(scratch)
        self.builder.ret(ir.Constant(STATUS, 0))
        self._emit_scratch_bytes()

    # -- memory -------------------------------------------------------------------------------

    def _acquire_scratch(self, scratch: ir.Value) -> ir.Value:
        """The scratch base: the caller's pointer, or malloc's when the caller passed NULL."""
        builder = self.builder
        if self.plan.scratch_bytes == 0:
            return scratch
        slot = entry_alloca(builder, POINTER, name="scratch_base")
        builder.store(scratch, slot)
        with builder.if_then(builder.icmp_unsigned("==", scratch, ir.Constant(POINTER, None)), likely=False):
            malloc = self._libc("malloc", POINTER, [self.size_type])
            allocated = builder.call(malloc, [ir.Constant(self.size_type, self.plan.scratch_bytes)])
            with builder.if_then(builder.icmp_unsigned("==", allocated, ir.Constant(POINTER, None)), likely=False):
                builder.ret(ir.Constant(STATUS, STATUS_OUT_OF_MEMORY))
            builder.store(allocated, slot)
        return builder.load(slot, typ=POINTER)

    def _release_scratch(self, scratch: ir.Value) -> None:
        if self.plan.scratch_bytes == 0:
            return
        builder = self.builder
        with builder.if_then(builder.icmp_unsigned("==", scratch, ir.Constant(POINTER, None)), likely=False):
            builder.call(self._libc("free", ir.VoidType(), [POINTER]), [self.base])

    def _libc(self, symbol: str, return_type: ir.Type, argument_types: list[ir.Type]) -> ir.Function:
        existing = self.module.globals.get(symbol)
        if existing is not None:
            return existing
        return ir.Function(self.module, ir.FunctionType(return_type, argument_types), name=symbol)

    def _emit_scratch_bytes(self) -> None:
        function = ir.Function(self.module, ir.FunctionType(self.size_type, []), name=f"{self.name}_scratch_bytes")
        builder = ir.IRBuilder(function.append_basic_block("entry"))
        builder.ret(ir.Constant(self.size_type, self.plan.scratch_bytes))

    def _scratch_at(self, offset: int) -> ir.Value:
        return self.builder.gep(self.base, [index_constant(offset)], source_etype=BYTE)

    def _allocation_pointers(self, parameters, outputs) -> dict[int, ir.Value]:
        """Allocation index -> pointer: a parameter, an output, a constant's data or scratch."""
        assignment = self.assignment
        pointers: dict[int, ir.Value] = {}
        for node, argument in zip(self.plan.module.entry.parameters, parameters):
            pointers[assignment.slot_of[node]] = argument
        for position, index in enumerate(assignment.output_slots):
            pointers.setdefault(index, outputs[position])  # a repeated output is copied later
        for node, index in assignment.slot_of.items():
            if node.opcode == "constant":
                pointers[index] = self._constant_data(node)
        for index, offset in self.plan.temp_offsets.items():
            pointers[index] = self._scratch_at(offset)
        return pointers

    def _pointer(self, reference: Instruction | ScratchRegion) -> ir.Value:
        """The memory of a step's input or output."""
        if isinstance(reference, ScratchRegion):
            return self._scratch_at(self.plan.area_offsets[reference.area] + reference.offset)
        if reference in self.assignment.slot_of:
            return self.pointers[self.assignment.slot_of[reference]]
        return self._constant_data(reference)  # a constant made by planning (a transposed operand)

    def _constant_data(self, node: Instruction) -> ir.GlobalVariable:
        """A constant's elements as read-only data in the object, in the target's byte order."""
        table = self.constants.get(id(node))
        if table is not None:
            return table
        array = np.ascontiguousarray(node.attr("literal").array)
        if self.big_endian and array.dtype.itemsize > 1:
            array = array.astype(array.dtype.newbyteorder(">"))
        data = array.tobytes() or b"\0"
        kind = ir.ArrayType(BYTE, len(data))
        table = ir.GlobalVariable(self.module, kind, name=self.module.get_unique_name(f"{self.name}_constant"))
        table.initializer = ir.Constant(kind, bytearray(data))
        table.global_constant = True
        table.linkage = "private"
        table.align = ALIGNMENT
        self.constants[id(node)] = table
        return table

    # -- steps --------------------------------------------------------------------------------

    def _launch(self, computation: Computation, buffers: list[ir.Value]) -> None:
        name = f"{self.name}_kernel_{self.kernel_count}"
        self.kernel_count += 1
        self.kernels.add(name, computation)
        kernel = self.module.get_global(name)
        kernel.linkage = "internal"  # several AOT objects may be linked into one program
        call_kernel(self.builder, kernel, buffers, computation)

    def _copy_outputs(self, outputs: list[ir.Value]) -> None:
        """Outputs that are parameters or constants, or repeat an earlier output, are copies."""
        assignment, builder = self.assignment, self.builder
        first_output: dict[int, int] = {}
        for position, (node, index) in enumerate(zip(self.plan.module.entry.outputs, assignment.output_slots)):
            if index in first_output:
                source = outputs[first_output[index]]
            else:
                first_output[index] = position
                if node.opcode not in ("parameter", "constant"):
                    continue
                source = self.pointers[assignment.slot_of[node]]
            size = node.size * node.dtype.itemsize
            if size:
                length = ir.Constant(ir.IntType(64), size)
                builder.call(self._memcpy(), [outputs[position], source, length, ir.Constant(ir.IntType(1), 0)])

    def _memcpy(self) -> ir.Function:
        signature = ir.FunctionType(ir.VoidType(), [POINTER, POINTER, ir.IntType(64), ir.IntType(1)])
        return self.module.declare_intrinsic("llvm.memcpy", [POINTER, POINTER, ir.IntType(64)], signature)
