"""Fused computations -> NVPTX kernels: the GPU skeletons around the shared elemental emitter.

The elements are computed by the same `ElementalEmitter` as on the CPU; only the skeleton (who
computes which element) and the math table (`gpu_math`: libdevice) differ. Three skeletons:

- loop: outputs of one shape, a grid-stride loop over their elements (one thread per element
  per step; adjacent threads touch adjacent memory).
- row reduction (the operand's last dimension is reduced, or every dimension is): a block of
  BLOCK threads per output element; threads stride over the reduced elements (coalesced),
  then combine through warp shuffles and shared memory.
- column reduction (the last dimension is kept): one thread per output element, adjacent
  threads on adjacent columns (coalesced), each running over its reduced elements.
- rows (a row kernel: passes/fusion_rows.py, softmax, layernorm): a block per row; for each
  of the row's reductions in dependency order, the threads stride over the row and combine
  as a row reduction does, every thread getting the result; then they stride over the row
  again computing its elements, which read those results. The row is read from memory once
  and revisited in L1/L2; no reduction goes through memory to another kernel.

A reduction with few output elements is split: `splits` blocks share each output element
(gridDim.y), write partial results to a scratch buffer, and the last block to finish (an
atomic ticket per output tile, after a memory fence: CUDA's threadFenceReduction pattern)
combines them in a fixed order, so results are deterministic. `splits` and the grid are
chosen at launch from the real sizes (gpu.py), so one kernel serves every size.

Kernel ABI (every kernel, so one launcher serves all):
    void kernel(ptr parameter_0, ..., ptr output_0, ..., ptr scratch, ptr counters,
                i64 size_0, ..., i64 size_{K-1}, i64 splits)
`size_k` are the module's placeholder sizes (lazyarr/symbolic_sizes.py), by value; scratch
holds 8-byte partial slots, counters one zeroed i32 per output tile (both unused unless
splits > 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import llvmlite.ir as ir

from ...hlo import Computation, post_order
from .buffer_access import buffer_loader, element_storer
from .elemental import ElementalEmitter, EmitContext, delinearize, value_type
from .kernel import has_row_reductions
from .loops import entry_alloca, for_range, index_constant
from .reduction_arithmetic import ACCUMULATOR, combine, reduction_identity

BLOCK = 256  # threads per block (8 warps)
WARP = 32
POINTER = ir.PointerType()
SHARED = 3  # NVPTX address space of shared memory
I32 = ir.IntType(32)
I64 = ir.IntType(64)


@dataclass(frozen=True)
class KernelPlan:
    """One kernel of a fused computation: which outputs it writes and how it is launched.

    kind: "loop", "row", "column" or "rows". shape: the loop's output shape, or the reductions'
    operand shape (placeholder sizes stay placeholders; the launcher resolves them).
    reduced: the reduced dimensions (reductions; "rows": the trailing ones, a row's).
    outputs: positions in the computation's outputs, in the order the kernel's output
    pointers take them.
    """

    name: str
    kind: str
    outputs: tuple[int, ...]
    shape: tuple[int, ...]
    reduced: tuple[int, ...] = ()

    @property
    def kept_shape(self) -> tuple[int, ...]:
        return tuple(size for axis, size in enumerate(self.shape) if axis not in self.reduced)

    @property
    def reduced_shape(self) -> tuple[int, ...]:
        return tuple(self.shape[axis] for axis in self.reduced)


def plan_kernels(computation: Computation, name: str) -> list[KernelPlan]:
    """Group a fusion's outputs into kernels: loop outputs by shape; reductions by operand
    shape and reduced dimensions (sibling reductions such as sum(x) and sum(x*x) share one
    pass over the operand). A row kernel is one "rows" plan writing every output."""
    if has_row_reductions(computation):
        reductions = [node for node in computation.post_order() if node.opcode == "reduce"]
        shape, rows = reductions[0].operands[0].shape, reductions[0].ndim
        return [KernelPlan(f"{name}_0", "rows", tuple(range(len(computation.outputs))), shape,
                           tuple(range(rows, len(shape))))]
    groups: dict[tuple, list[int]] = {}
    for position, output in enumerate(computation.outputs):
        if output.opcode == "reduce":
            (operand,) = output.operands
            reduced = tuple(sorted(output.attr("dimensions")))
            last_reduced = not operand.shape or (operand.ndim - 1) in reduced
            kind = "row" if last_reduced else "column"
            key = (kind, operand.shape, reduced)
        else:
            key = ("loop", output.shape, ())
        groups.setdefault(key, []).append(position)
    return [
        KernelPlan(f"{name}_{number}", kind, tuple(positions), shape, reduced)
        for number, ((kind, shape, reduced), positions) in enumerate(groups.items())
    ]


def kernel_type(parameter_count: int, output_count: int, size_count: int) -> ir.FunctionType:
    return ir.FunctionType(ir.VoidType(), [POINTER] * (parameter_count + output_count + 2) + [I64] * (size_count + 1))


class GpuKernelBuilder:
    """Adds one `ptx_kernel` function per KernelPlan to an LLVM module."""

    def __init__(self, module: ir.Module, math_table, size_count: int):
        self.module = module
        self.math_table = math_table
        self.size_count = size_count

    def add(self, plan: KernelPlan, computation: Computation) -> None:
        parameters = computation.parameters
        outputs = [computation.outputs[position] for position in plan.outputs]
        function = ir.Function(self.module, kernel_type(len(parameters), len(outputs), self.size_count), plan.name)
        function.calling_convention = "ptx_kernel"
        arguments = list(function.args)
        for argument in arguments[:len(parameters) + len(outputs)]:
            argument.add_attribute("noalias")
        pointers = arguments[:len(parameters)]
        output_pointers = arguments[len(parameters):len(parameters) + len(outputs)]
        scratch, counters = arguments[len(parameters) + len(outputs):len(parameters) + len(outputs) + 2]
        sizes, splits = arguments[-1 - self.size_count:-1], arguments[-1]
        builder = ir.IRBuilder(function.append_basic_block("entry"))
        ctx = EmitContext(builder, self.math_table, list(sizes))
        emitter = ElementalEmitter(ctx, buffer_loader(ctx, pointers, parameters))
        stores = [element_storer(ctx, pointer, output) for pointer, output in zip(output_pointers, outputs)]
        threads = _Threads(builder)
        if plan.kind == "loop":
            self._loop(ctx, emitter, threads, plan, outputs, stores)
        elif plan.kind == "rows":
            _rows(ctx, emitter, threads, plan, outputs, stores, (scratch, counters, splits))
        else:
            reduction = _Reduction(ctx, emitter, threads, plan, outputs, stores, scratch, counters, splits)
            reduction.emit_row() if plan.kind == "row" else reduction.emit_column()
        builder.ret_void()

    @staticmethod
    def _loop(ctx, emitter, threads, plan, outputs, stores):
        builder = ctx.builder
        order = post_order(outputs)
        count = _product(ctx, plan.shape)
        start = builder.add(builder.mul(threads.block_x, index_constant(BLOCK)), threads.thread)
        step = builder.mul(threads.grid_x, index_constant(BLOCK))
        with for_range(builder, start, count, name="element", step=step) as linear:
            index = delinearize(ctx, linear, plan.shape, bounded=True)
            values = emitter.elements(order, [(output, index) for output in outputs])
            for store, value in zip(stores, values):
                store(index, value)


class _Threads:
    """This thread's coordinates (i64), read once in the entry block."""

    def __init__(self, builder: ir.IRBuilder):
        def special(register):
            function = builder.module.declare_intrinsic(
                f"llvm.nvvm.read.ptx.sreg.{register}", fnty=ir.FunctionType(I32, []))
            return builder.zext(builder.call(function, []), I64)

        self.thread = special("tid.x")
        self.block_x, self.block_y = special("ctaid.x"), special("ctaid.y")
        self.grid_x = special("nctaid.x")


class _Reduction:
    """The row and column reduction skeletons for a group of reductions over one operand shape."""

    def __init__(self, ctx, emitter, threads, plan, outputs, stores, scratch, counters, splits):
        self.ctx, self.builder, self.emitter, self.threads = ctx, ctx.builder, emitter, threads
        self.plan, self.outputs, self.stores = plan, outputs, stores
        self.scratch, self.counters, self.splits = scratch, counters, splits
        self.kinds = [output.attr("kind") for output in outputs]
        self.accumulate = [ACCUMULATOR.get(output.dtype, output.dtype) for output in outputs]
        self.operands = [output.operands[0] for output in outputs]
        self.order = post_order(self.operands)
        self.kept_count = _product(ctx, plan.kept_shape)
        self.reduced_count = _product(ctx, plan.reduced_shape)

    # -- pieces ------------------------------------------------------------------------------
    def _identities(self):
        return [reduction_identity(self.ctx, kind, dtype) for kind, dtype in zip(self.kinds, self.accumulate)]

    def _combine_all(self, accumulators, values):
        return [combine(self.ctx, kind, dtype, accumulator, value)
                for kind, dtype, accumulator, value in zip(self.kinds, self.accumulate, accumulators, values)]

    def _slots(self, name):
        slots = [entry_alloca(self.builder, value_type(dtype), name=name) for dtype in self.accumulate]
        for slot, identity in zip(slots, self._identities()):
            self.builder.store(identity, slot)
        return slots

    def _accumulate_element(self, slots, kept_index, reduced_linear):
        """slots op= operand elements at (kept_index, position reduced_linear of the reduced dims)."""
        builder, plan = self.builder, self.plan
        reduced_index = delinearize(self.ctx, reduced_linear, plan.reduced_shape, bounded=True)
        index, kept, reduced = [], iter(kept_index), iter(reduced_index)
        for axis in range(len(plan.shape)):
            index.append(next(reduced) if axis in plan.reduced else next(kept))
        values = self.emitter.elements(self.order, [(operand, index) for operand in self.operands])
        values = [
            builder.fpext(value, value_type(dtype)) if dtype != operand.dtype else value
            for value, dtype, operand in zip(values, self.accumulate, self.operands)
        ]
        current = [builder.load(slot) for slot in slots]
        for slot, value in zip(slots, self._combine_all(current, values)):
            builder.store(value, slot)

    def _store_results(self, kept_index, values):
        builder = self.builder
        for store, value, dtype, output in zip(self.stores, values, self.accumulate, self.outputs):
            if dtype != output.dtype:
                value = builder.fptrunc(value, value_type(output.dtype))
            store(kept_index, value)

    def _partial_address(self, number, kept_linear, split):
        """Slot of output `number`'s partial for (output element, split): scratch is
        [outputs][output elements][splits] of 8-byte slots."""
        builder = self.builder
        row = builder.add(builder.mul(index_constant(number), self.kept_count), kept_linear)
        position = builder.add(builder.mul(row, self.splits), split)
        return builder.gep(self.scratch, [position], source_etype=I64)

    def _write_partials(self, kept_linear, values):
        for number, value in enumerate(values):
            address = self._partial_address(number, kept_linear, self.threads.block_y)
            self.builder.store(_widen(self.builder, to_bits(self.builder, value)), address)

    def _read_partial(self, number, kept_linear, split):
        address = self._partial_address(number, kept_linear, split)
        bits = self.builder.load_atomic(address, "monotonic", 8, typ=I64)
        return from_bits(self.builder, bits, value_type(self.accumulate[number]))

    def _arrive(self, tile):
        """The ticket of this block for `tile` (thread 0 only): 1 + how many blocks of the tile
        arrived before. Writes before it are made visible to the other blocks first."""
        builder = self.builder
        _fence(builder)
        counter = builder.gep(self.counters, [tile], source_etype=I32)
        return builder.atomic_rmw("add", counter, ir.Constant(I32, 1), "monotonic")

    def _is_last(self, ticket):
        return self.builder.icmp_unsigned("==", self.builder.zext(ticket, I64),
                                          self.builder.sub(self.splits, index_constant(1)))

    def _block_reduce(self, values):
        """Combine `values` over the block; every thread gets the result. Butterfly shuffles
        within each warp, one shared slot per warp, then every warp combines the slots in
        the same order (so all threads agree, and no broadcast is needed)."""
        builder, threads = self.builder, self.threads
        values = self._warp_reduce(values)
        lane = builder.and_(threads.thread, index_constant(WARP - 1))
        warp = builder.lshr(threads.thread, index_constant(5))
        tables = [_shared_array(builder.module, WARP, I64) for _ in values]
        with builder.if_then(builder.icmp_unsigned("==", lane, index_constant(0))):
            for table, value in zip(tables, values):
                slot = builder.gep(table, [warp], source_etype=I64)
                builder.store(_widen(builder, to_bits(builder, value)), slot)
        _barrier(builder)
        present = builder.icmp_unsigned("<", lane, index_constant(BLOCK // WARP))
        safe_lane = builder.select(present, lane, index_constant(0))
        gathered = []
        for table, value, identity in zip(tables, values, self._identities()):
            slot = builder.gep(table, [safe_lane], source_etype=I64)
            loaded = from_bits(builder, builder.load(slot, typ=I64), value.type)
            gathered.append(builder.select(present, loaded, identity))
        result = self._warp_reduce(gathered)
        _barrier(builder)  # the slots may be written again by the next tile
        return result

    def _warp_reduce(self, values):
        for offset in (16, 8, 4, 2, 1):
            others = [_shuffle_xor(self.builder, value, offset) for value in values]
            values = self._combine_all(values, others)
        return values

    # -- skeletons ---------------------------------------------------------------------------
    def emit_row(self):
        """A block per output element (tile); threads stride over the reduced elements."""
        builder, threads, plan = self.builder, self.threads, self.plan
        flag_slot = _shared_array(builder.module, 1, I32)
        with for_range(builder, threads.block_x, self.kept_count, name="tile", step=threads.grid_x) as tile:
            kept_index = delinearize(self.ctx, tile, plan.kept_shape, bounded=True)
            slots = self._slots("accumulator")
            start = builder.add(builder.mul(threads.block_y, index_constant(BLOCK)), threads.thread)
            step = builder.mul(self.splits, index_constant(BLOCK))
            with for_range(builder, start, self.reduced_count, name="r", step=step) as position:
                self._accumulate_element(slots, kept_index, position)
            results = self._block_reduce([builder.load(slot) for slot in slots])
            first = builder.icmp_unsigned("==", threads.thread, index_constant(0))
            whole = builder.icmp_unsigned("==", self.splits, index_constant(1))
            with builder.if_else(whole) as (single, split):
                with single:
                    with builder.if_then(first):
                        self._store_results(kept_index, results)
                with split:
                    with builder.if_then(first):
                        self._write_partials(tile, results)
                        ticket = self._arrive(tile)
                        builder.store(builder.zext(self._is_last(ticket), I32), flag_slot)
                    _barrier(builder)
                    last = builder.icmp_unsigned("!=", builder.load(flag_slot, typ=I32), ir.Constant(I32, 0))
                    with builder.if_then(last):
                        _fence(builder)
                        slots = self._slots("combined")
                        with for_range(builder, threads.thread, self.splits, name="split",
                                       step=index_constant(BLOCK)) as split_number:
                            partials = [self._read_partial(number, tile, split_number)
                                        for number in range(len(self.outputs))]
                            current = [builder.load(slot) for slot in slots]
                            for slot, value in zip(slots, self._combine_all(current, partials)):
                                builder.store(value, slot)
                        combined = self._block_reduce([builder.load(slot) for slot in slots])
                        with builder.if_then(first):
                            self._store_results(kept_index, combined)
                    _barrier(builder)  # the flag is written again by the next tile

    def emit_column(self):
        """A thread per output element, BLOCK adjacent ones per tile; split s of `splits`
        runs over the s-th chunk of the reduced elements."""
        builder, threads, plan = self.builder, self.threads, self.plan
        flag_slot = _shared_array(builder.module, 1, I32)
        tiles = _ceil_div(builder, self.kept_count, index_constant(BLOCK))
        chunk = _ceil_div(builder, self.reduced_count, self.splits)
        begin = builder.mul(threads.block_y, chunk)
        end = builder.add(begin, chunk)
        end = builder.select(builder.icmp_signed("<", end, self.reduced_count), end, self.reduced_count)
        with for_range(builder, threads.block_x, tiles, name="tile", step=threads.grid_x) as tile:
            element = builder.add(builder.mul(tile, index_constant(BLOCK)), threads.thread)
            active = builder.icmp_signed("<", element, self.kept_count)
            slots = self._slots("accumulator")
            with builder.if_then(active):
                kept_index = delinearize(self.ctx, element, plan.kept_shape, bounded=True)
                with for_range(builder, begin, end, name="r") as position:
                    self._accumulate_element(slots, kept_index, position)
            whole = builder.icmp_unsigned("==", self.splits, index_constant(1))
            with builder.if_else(whole) as (single, split):
                with single:
                    with builder.if_then(active):
                        self._store_results(delinearize(self.ctx, element, plan.kept_shape, bounded=True),
                                            [builder.load(slot) for slot in slots])
                with split:
                    with builder.if_then(active):
                        self._write_partials(element, [builder.load(slot) for slot in slots])
                        _fence(builder)
                    _barrier(builder)
                    with builder.if_then(builder.icmp_unsigned("==", threads.thread, index_constant(0))):
                        ticket = self._arrive(tile)
                        builder.store(builder.zext(self._is_last(ticket), I32), flag_slot)
                    _barrier(builder)
                    last = builder.icmp_unsigned("!=", builder.load(flag_slot, typ=I32), ir.Constant(I32, 0))
                    with builder.if_then(builder.and_(last, active)):
                        _fence(builder)
                        combined = self._slots("combined")
                        with for_range(builder, 0, self.splits, name="split") as split_number:
                            partials = [self._read_partial(number, element, split_number)
                                        for number in range(len(self.outputs))]
                            current = [builder.load(slot) for slot in combined]
                            for slot, value in zip(combined, self._combine_all(current, partials)):
                                builder.store(value, slot)
                        self._store_results(delinearize(self.ctx, element, plan.kept_shape, bounded=True),
                                            [builder.load(slot) for slot in combined])
                    _barrier(builder)  # the flag is written again by the next tile


def _rows(ctx, emitter, threads, plan, outputs, stores, split_arguments):
    """The "rows" skeleton (module docstring): a block per row, rows grid-strided."""
    builder = ctx.builder
    order = post_order(outputs)
    reductions = [node for node in order if node.opcode == "reduce"]
    store_of = {id(output): store for output, store in zip(outputs, stores)}
    loop_outputs = [(output, store) for output, store in zip(outputs, stores) if output.opcode != "reduce"]
    # One _Reduction per reduction, for its accumulation and block combine (never split).
    passes = [_Reduction(ctx, emitter, threads, plan, [reduction], [None], *split_arguments)
              for reduction in reductions]
    row_count, row_length = _product(ctx, plan.kept_shape), _product(ctx, plan.reduced_shape)
    first = builder.icmp_unsigned("==", threads.thread, index_constant(0))
    with for_range(builder, threads.block_x, row_count, name="row", step=threads.grid_x) as row:
        kept_index = delinearize(ctx, row, plan.kept_shape, bounded=True)
        emitter.known = {}
        for reduction, reduction_pass in zip(reductions, passes):
            slots = reduction_pass._slots("accumulator")
            with for_range(builder, threads.thread, row_length, name="r", step=index_constant(BLOCK)) as position:
                reduction_pass._accumulate_element(slots, kept_index, position)
            (value,) = reduction_pass._block_reduce([builder.load(slot) for slot in slots])
            if reduction_pass.accumulate[0] != reduction.dtype:
                value = builder.fptrunc(value, value_type(reduction.dtype))
            emitter.known[id(reduction)] = value
            if id(reduction) in store_of:
                with builder.if_then(first):
                    store_of[id(reduction)](kept_index, value)
        if loop_outputs:
            with for_range(builder, threads.thread, row_length, name="element", step=index_constant(BLOCK)) as position:
                index = [*kept_index, *delinearize(ctx, position, plan.reduced_shape, bounded=True)]
                values = emitter.elements(order, [(output, index) for output, _ in loop_outputs])
                for (_, store), value in zip(loop_outputs, values):
                    store(index, value)
        emitter.known = {}


# -- NVPTX primitives -----------------------------------------------------------------------


def _product(ctx, shape):
    builder, total = ctx.builder, index_constant(1)
    for size in shape:
        total = builder.mul(total, ctx.extent(size))
    return total


def _ceil_div(builder, numerator, denominator):
    return builder.udiv(builder.add(numerator, builder.sub(denominator, index_constant(1))), denominator)


def _barrier(builder):
    """__syncthreads(): every thread of the block reaches this point."""
    function = builder.module.declare_intrinsic("llvm.nvvm.barrier0", fnty=ir.FunctionType(ir.VoidType(), []))
    builder.call(function, [])


def _fence(builder):
    """__threadfence(): this thread's writes are seen by the whole GPU before its later ones."""
    builder.fence("seq_cst", targetscope="device")


def _shared_array(module: ir.Module, length: int, element: ir.Type) -> ir.Value:
    """A new block-shared array of `length` elements, as a pointer to its first element."""
    number = sum(1 for name in module.globals if name.startswith("shared_"))
    array = ir.GlobalVariable(module, ir.ArrayType(element, length), f"shared_{number}", addrspace=SHARED)
    array.linkage = "internal"
    array.initializer = ir.Constant(array.value_type, ir.Undefined)
    array.align = 8
    array.type = ir.PointerType(addrspace=SHARED)  # opaque, so llvmlite lets us store i64 through it
    return array


def to_bits(builder, value):
    """`value` as an i32 (values of up to 32 bits) or i64, the widths shuffles and 8-byte
    slots move; `from_bits` undoes it."""
    kind = value.type
    if isinstance(kind, ir.IntType):
        return value if kind.width in (32, 64) else builder.zext(value, I32)
    if isinstance(kind, ir.HalfType):
        return builder.zext(builder.bitcast(value, ir.IntType(16)), I32)
    return builder.bitcast(value, I32 if isinstance(kind, ir.FloatType) else I64)


def from_bits(builder, bits, kind: ir.Type):
    if isinstance(kind, ir.IntType):
        if kind.width == bits.type.width:
            return bits
        return builder.trunc(bits, kind)
    if isinstance(kind, ir.HalfType):
        return builder.bitcast(builder.trunc(bits, ir.IntType(16)), kind)
    width = 32 if isinstance(kind, ir.FloatType) else 64
    if bits.type.width != width:
        bits = builder.trunc(bits, ir.IntType(width))
    return builder.bitcast(bits, kind)


def _widen(builder, bits):
    return bits if bits.type.width == 64 else builder.zext(bits, I64)


def _shuffle_xor(builder, value, lane_mask: int):
    """The `value` of the lane whose number differs from this lane's by xor `lane_mask`."""
    function = builder.module.declare_intrinsic(
        "llvm.nvvm.shfl.sync.bfly.i32", fnty=ir.FunctionType(I32, [I32, I32, I32, I32]))
    full_warp, mask, clamp = ir.Constant(I32, -1), ir.Constant(I32, lane_mask), ir.Constant(I32, WARP - 1)
    bits = to_bits(builder, value)
    if bits.type.width == 32:
        moved = builder.call(function, [full_warp, bits, mask, clamp])
    else:
        low = builder.call(function, [full_warp, builder.trunc(bits, I32), mask, clamp])
        high = builder.call(function, [full_warp, builder.trunc(builder.lshr(bits, ir.Constant(I64, 32)), I32),
                                       mask, clamp])
        moved = builder.or_(builder.zext(low, I64), builder.shl(builder.zext(high, I64), ir.Constant(I64, 32)))
    return from_bits(builder, moved, value.type)


def launch_splits(plan: KernelPlan, kept: int, reduced: int, sm_count: int) -> tuple[int, int]:
    """(blocks along x, splits) for a reduction with `kept` output elements over `reduced`
    elements each: enough blocks to fill the GPU (8 per SM), splitting the reduced elements
    only when the output elements alone cannot fill it."""
    target = 8 * sm_count
    if plan.kind == "rows":  # a block per row, never split (a row's reductions feed its elements)
        return max(1, min(kept, target * 4, 2**31 - 1)), 1
    tiles = kept if plan.kind == "row" else math.ceil(kept / BLOCK)
    grid_x = max(1, min(tiles, target * 4, 2**31 - 1))
    per_split = BLOCK * 4 if plan.kind == "row" else 64  # elements one split should at least cover
    splits = 1
    if tiles < target and reduced > per_split:
        splits = min(math.ceil(reduced / per_split), max(1, target // max(tiles, 1)), 65535)
    return grid_x, splits
