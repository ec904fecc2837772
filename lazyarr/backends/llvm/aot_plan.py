"""Ahead-of-time plans: a module -> the kernels an entry point calls, in order, and their memory.

The CPU backend's pipeline (its fusion policy, then buffer assignment) plans the module, as
for the JIT. Every fusion is one step. Every dot is a step too, since NumPy's BLAS is not there
at run time: `dot_computation` turns it into a loop nest the kernel builder compiles, with the
contracting dimensions innermost. That loop reads both operands along the contracting
dimensions, so an operand whose contracting dimensions are not its last ones (the rhs of
`x @ w`) is first copied, transposed, into scratch by a step of its own, and then read
contiguously (vectorized; about 10x faster than reading it strided). A constant operand is
transposed at compile time instead. Anything else that the CPU backend runs on the host
(custom-calls such as sort, linalg and fft, scatter, gather, complex dtypes) needs Python:
`host_only_error` says so.

Scratch holds, at fixed 64-byte aligned offsets: the buffer assignment's temp allocations,
then the outputs of multi-output kernels that nothing reads, then one area that each dot's
transposed operand copies reuse (they live only during their dot).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import dtypes
from ...hlo import Computation, Instruction, Module, constant, make
from ...passes.buffers import BufferAssignment, aligned_size, assign_buffers
from ...passes.default import default_pipeline
from ..cpu import CpuFusionPolicy
from .elemental import COMPILED_DTYPES


@dataclass(frozen=True)
class ScratchRegion:
    """Memory in scratch that no value of the buffer assignment holds: `offset` bytes into
    `area` ('unread outputs' or 'dot operands'; see `AotPlan.area_offsets`)."""

    area: str
    offset: int


@dataclass
class Step:
    """One kernel call: `computation` over `inputs`, writing `outputs`.

    Inputs and outputs are entry instructions (their buffer-assignment allocation; constants
    made by planning are data of their own) or `ScratchRegion`s.
    """

    computation: Computation
    inputs: list
    outputs: list


@dataclass
class AotPlan:
    """The steps of an entry point and the layout of its scratch memory."""

    module: Module
    assignment: BufferAssignment
    steps: list[Step]
    temp_offsets: dict[int, int]  # temp allocation index -> byte offset in scratch
    area_offsets: dict[str, int]  # ScratchRegion area -> byte offset in scratch
    scratch_bytes: int


def plan(module: Module) -> AotPlan:
    """Fuse and assign buffers on a copy of `module` (the caller's is left alone), then plan."""
    planned = Module(module.name, module.entry, dict(module.computations))
    default_pipeline(CpuFusionPolicy()).run(planned)
    assignment = planned.notes.get("buffer-assignment") or assign_buffers(planned)
    steps, kernels, dot_operand_bytes = [], {}, 0
    for instruction in planned.entry.post_order():
        opcode = instruction.opcode
        if opcode in ("parameter", "constant"):
            continue
        if opcode == "dot" and instruction.dtype in COMPILED_DTYPES:
            dot_steps, copied_bytes = _dot_steps(instruction)
            steps += dot_steps
            dot_operand_bytes = max(dot_operand_bytes, copied_bytes)
        elif opcode == "fusion":
            computation = instruction.attr("computation")
            key = (id(computation), tuple(id(operand) for operand in instruction.operands))
            if key not in kernels:  # one launch computes every output of a multi-output fusion
                kernels[key] = Step(computation, list(instruction.operands), [None] * len(computation.outputs))
                steps.append(kernels[key])
            kernels[key].outputs[instruction.attr("output_index")] = instruction
        else:
            raise host_only_error(instruction)
    temp_offsets, total = {}, 0
    for allocation in assignment.allocations:
        if allocation.kind == "temp":
            temp_offsets[allocation.index] = total
            total += allocation.size_bytes
    unread_bytes = 0
    for step in steps:
        for position, result in enumerate(step.outputs):
            if result is None:  # a kernel output nothing reads still needs memory to be written to
                step.outputs[position] = ScratchRegion("unread outputs", unread_bytes)
                unread_bytes += aligned_size(step.computation.outputs[position])
    area_offsets = {"unread outputs": total, "dot operands": total + unread_bytes}
    return AotPlan(planned, assignment, steps, temp_offsets, area_offsets, total + unread_bytes + dot_operand_bytes)


def host_only_error(instruction: Instruction) -> NotImplementedError:
    """The error for an instruction the CPU backend would run through NumPy on the host."""
    opcode = instruction.opcode
    what = repr(instruction.attr("target")) if opcode == "custom-call" else repr(opcode)
    kinds = {operand.dtype for operand in instruction.operands} | {instruction.dtype}
    uncompiled = sorted(str(dtype) for dtype in kinds if dtype not in COMPILED_DTYPES)
    reason = f" on {', '.join(uncompiled)}" if uncompiled else ""
    return NotImplementedError(
        f"aot: op {what}{reason} needs the Python runtime (the CPU backend runs it on the host "
        "through NumPy); ahead-of-time code supports elementwise, layout, reduction and scan ops and dot "
        f"on {', '.join(sorted(str(dtype) for dtype in COMPILED_DTYPES))}"
    )


def _dot_steps(dot: Instruction) -> tuple[list[Step], int]:
    """Steps computing `dot` with both operands laid out (batch, free, contracting), and the
    scratch bytes its transposed operand copies take."""
    lhs, rhs = dot.operands
    steps, inputs, copied_bytes = [], [], 0
    for operand, order in zip((lhs, rhs), _operand_orders(dot)):
        if order == tuple(range(operand.ndim)):
            inputs.append(operand)
        elif operand.opcode == "constant":
            inputs.append(constant(np.transpose(operand.attr("literal").array, order)))
        else:
            source = make("parameter", number=0, shape=operand.shape, dtype=operand.dtype)
            moved = make("transpose", [source], permutation=order)
            region = ScratchRegion("dot operands", copied_bytes)
            copied_bytes += aligned_size(moved)
            steps.append(Step(Computation("transposed_dot_operand", (source,), (moved,)), [operand], [region]))
            inputs.append(region)
    batch = len(dot.attr("lhs_batch"))
    canonical = make(
        "dot",
        [make("parameter", number=position, shape=_permuted(operand.shape, order), dtype=operand.dtype)
         for position, (operand, order) in enumerate(zip((lhs, rhs), _operand_orders(dot)))],
        lhs_batch=tuple(range(batch)), rhs_batch=tuple(range(batch)),
        lhs_contracting=tuple(range(lhs.ndim - len(dot.attr("lhs_contracting")), lhs.ndim)),
        rhs_contracting=tuple(range(rhs.ndim - len(dot.attr("rhs_contracting")), rhs.ndim)),
    )
    steps.append(Step(dot_computation(canonical), inputs, [dot]))
    return steps, copied_bytes


def _operand_orders(dot: Instruction) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """For lhs and rhs: their dimensions in (batch, free, contracting) order."""
    orders = []
    for side, operand in zip(("lhs", "rhs"), dot.operands):
        batch, contracting = tuple(dot.attr(f"{side}_batch")), tuple(dot.attr(f"{side}_contracting"))
        free = tuple(axis for axis in range(operand.ndim) if axis not in batch + contracting)
        orders.append(batch + free + contracting)
    return orders[0], orders[1]


def _permuted(shape, order) -> tuple[int, ...]:
    return tuple(shape[axis] for axis in order)


def dot_computation(dot: Instruction) -> Computation:
    """A dot as a fused computation the kernel builder compiles: a loop nest, no BLAS.

    before: dot(lhs, rhs)
    after:  reduce(multiply(broadcast(transpose(lhs)), broadcast(transpose(rhs))), contracting)
    The product's dims are batch, lhs free, rhs free, contracting: the reduce runs the
    contracting dims as the innermost loops with a register accumulator, and nothing the size
    of the product is ever stored. Operands already in (batch, free, contracting) order need
    no transpose, and the innermost loop then reads both contiguously.
    """
    lhs, rhs = dot.operands
    lhs_order, rhs_order = _operand_orders(dot)
    batch = len(dot.attr("lhs_batch"))
    left = lhs.ndim - batch - len(dot.attr("lhs_contracting"))
    right = rhs.ndim - batch - len(dot.attr("rhs_contracting"))
    product_shape = tuple(dot.shape) + tuple(lhs.shape[axis] for axis in dot.attr("lhs_contracting"))
    contracting_dims = tuple(range(batch + left + right, len(product_shape)))
    lhs_parameter = make("parameter", number=0, shape=lhs.shape, dtype=lhs.dtype)
    rhs_parameter = make("parameter", number=1, shape=rhs.shape, dtype=rhs.dtype)
    lhs_spread = make(
        "broadcast", [_transposed(lhs_parameter, lhs_order)], shape=product_shape,
        dimensions=tuple(range(batch + left)) + contracting_dims,
    )
    rhs_spread = make(
        "broadcast", [_transposed(rhs_parameter, rhs_order)], shape=product_shape,
        dimensions=tuple(range(batch)) + tuple(range(batch + left, batch + left + right)) + contracting_dims,
    )
    product = make("multiply", [lhs_spread, rhs_spread])
    kind = "or" if dot.dtype == dtypes.bool_ else "sum"  # NumPy's boolean matmul: any(a and b)
    root = make("reduce", [product], dimensions=contracting_dims, kind=kind)
    return Computation("dot_computation", (lhs_parameter, rhs_parameter), (root,))


def _transposed(value: Instruction, permutation: tuple[int, ...]) -> Instruction:
    if permutation == tuple(range(value.ndim)):
        return value
    return make("transpose", [value], permutation=permutation)
