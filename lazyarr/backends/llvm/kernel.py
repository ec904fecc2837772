"""A fused computation -> one LLVM function: the loop nest, loads, stores and reductions.

Every kernel has the signature `void kernel(ptr* buffers, i64* sizes, i64 begin, i64 end)`:
`buffers` holds the computation's parameters then its outputs; `sizes` the real values of
placeholder sizes (lazyarr/symbolic_sizes.py; unused when every size is concrete); [begin,
end) is the slice of the outermost output dimension this call computes, so a thread pool can
split the work.
Loop kernels store each output element computed by the elemental emitter; input kernels
(a reduction is the root) keep accumulators in registers and run the reduced dimensions as
the innermost loops, reading the fused producers element by element.
"""

from __future__ import annotations

import llvmlite.ir as ir

from ... import dtypes
from ...hlo import Computation, post_order
from ...hlo.op import ELEMENTWISE
from ...passes.fusion_policy import CHEAP_ELEMENTWISE
from .arg_reduction import emit_arg_reduce
from .blas import emit_gemm, is_native_dot
from .buffer_access import buffer_alias_scopes, buffer_loader, element_loader, element_storer
from .elemental import ElementalEmitter, EmitContext, value_type
from .loops import INDEX, entry_alloca, for_range, index_constant, opaque_index, tile_alloca
from .reduction_arithmetic import (
    ACCUMULATOR,
    PAIRWISE_LEVELS,
    combine,
    pairwise_push,
    pairwise_total,
    reduction_identity,
)

POINTER = ir.PointerType()
KERNEL_TYPE = ir.FunctionType(ir.VoidType(), [POINTER, POINTER, INDEX, INDEX])

_SUM_BLOCK = 256  # elements per partial sum in float sums (see KernelBuilder._reduce)


def outer_extent(computation: Computation) -> int:
    """Size of the dimension [begin, end) ranges over (1 for 0-d outputs)."""
    shape = computation.outputs[0].shape
    return shape[0] if shape else 1


def is_split(output, extent: int) -> bool:
    """Whether calls compute `output`'s first dimension in [begin, end) slices.

    A multi-output kernel may hold outputs of different shapes (a loop root beside a
    reduction of it). Those whose first dimension is the kernel's extent are split; the
    others (0-d, or another first dimension) are computed whole by the call with begin == 0,
    which every launch makes once, so no output is missed, repeated or written out of bounds.
    """
    return bool(output.shape) and output.shape[0] == extent


def _reads_linearly(output) -> bool:
    """Whether a full `max` or `min` reduction may walk its operand as one flat range: every
    node of the operand's fused graph is an elementwise op (not `iota`, which reads its index)
    of the operand's shape, or a parameter or constant of that shape, or 0-d, or a broadcast of
    a 0-d value. Then element k of every value sits at offset k, so the index (0, ..., 0, k)
    reads what the multi-dimensional index of element k would. Max and min give the same
    result in any order; sums keep their rows (their blocks bound the rounding error)."""
    if output.attr("kind") not in ("max", "min"):
        return False
    (operand,) = output.operands
    if operand.ndim < 2:
        return False
    for node in post_order([operand]):
        if node.shape != () and node.shape != operand.shape:
            return False
        if node.opcode == "broadcast":
            if node.operands[0].shape != ():
                return False
        elif node.opcode not in ("parameter", "constant") and (node.opcode == "iota" or not node.op.has(ELEMENTWISE)):
            return False
    return True


def _flat_extent(ctx, operand):
    """The number of elements of `operand` (its extents multiplied at run time)."""
    extent = index_constant(1)
    for size in operand.shape:
        extent = ctx.builder.mul(extent, ctx.extent(size))
    return extent


class KernelBuilder:
    """Adds one function per fused computation to an LLVM module."""

    def __init__(self, module: ir.Module, math_table):
        self.module = module
        self.math_table = math_table

    def add(self, name: str, computation: Computation, partial_blocks: int = 0) -> str:
        """Define kernel `name` computing `computation`. With `partial_blocks` (every output a
        full reduction: `splits_into_partials`), its outputs are instead `partial_blocks`
        partial results each, of the accumulator's dtype: block b reduces the b-th of that many
        equal ranges of the outermost reduced axis, and [begin, end) ranges over blocks, so
        threads split the reduction; a second kernel combines the partials (cpu.py)."""
        function = ir.Function(self.module, KERNEL_TYPE, name=name)
        buffers, sizes, begin, end = function.args
        for argument in (buffers, sizes):
            argument.add_attribute("noalias")
        builder = ir.IRBuilder(function.append_basic_block("entry"))
        ctx = EmitContext(builder, self.math_table, sizes)
        pointers = [
            builder.load(builder.gep(buffers, [index_constant(position)], source_etype=POINTER), typ=POINTER)
            for position in range(len(computation.parameters) + len(computation.outputs))
        ]
        parameters = computation.parameters
        if is_native_dot(computation):  # one BLAS call (blas.py), by the call that starts at 0:
            # BLAS splits the product over its own threads, and two calls writing one output
            # at once would race (gemv zeroes y before accumulating into it)
            with builder.if_then(builder.icmp_signed("==", begin, index_constant(0))):
                emit_gemm(ctx, computation, pointers)
            builder.ret_void()
            return name
        scopes = buffer_alias_scopes(self.module, name, len(pointers))
        load = buffer_loader(ctx, pointers, parameters, scopes)
        emitter = ElementalEmitter(ctx, load)
        output_pointers = pointers[len(parameters):]
        if partial_blocks:
            for output, pointer in zip(computation.outputs, output_pointers):
                self._reduce_partials(emitter, output, begin, end, pointer, partial_blocks)
            builder.ret_void()
            return name
        extent = outer_extent(computation)
        if has_row_reductions(computation):
            pairs = list(zip(output_pointers, computation.outputs, scopes[len(parameters):]))
            stores = [element_storer(ctx, pointer, output, scope) for pointer, output, scope in pairs]
            loaders = [element_loader(ctx, pointer, output, scope) for pointer, output, scope in pairs]
            self._rows(emitter, computation, begin, end, stores, loaders)
            builder.ret_void()
            return name
        # Loop outputs of one shape share one loop nest: values they share (a loop's running
        # value, read by several outputs) are computed once per element, not once per output.
        loop_groups: dict[tuple, tuple[list, list]] = {}
        for position, output in enumerate(computation.outputs):
            output_scopes = scopes[len(parameters) + position]
            store = element_storer(ctx, output_pointers[position], output, output_scopes)
            split = is_split(output, extent)
            loops = self._split_loops if split else self._whole_loops
            if output.opcode == "cumulative":
                load = element_loader(ctx, output_pointers[position], output, output_scopes)
                self._scan(emitter, output, begin, end, store, load, split and output.attr("dimension") != 0)
            elif output.opcode == "reduce" and is_column_reduction(output):
                self._column_reduce(emitter, output, begin, end, store, split)
            elif output.opcode == "reduce":
                self._reduce(emitter, output, begin, end, store, loops)
            elif output.opcode in ("argmax", "argmin"):
                emit_arg_reduce(emitter, output, begin, end, store, loops)
            else:
                outputs, stores = loop_groups.setdefault((output.shape, loops), ([], []))
                outputs.append(output)
                stores.append(store)
        for (_, loops), (outputs, stores) in loop_groups.items():
            self._loop(builder, emitter, outputs, begin, end, stores, loops)
        builder.ret_void()
        return name

    @classmethod
    def _whole_loops(cls, ctx, shape, begin, end, body, inner=None):
        """Nested loops over all of `shape`, run only by the call with begin == 0."""
        builder = ctx.builder
        with builder.if_then(builder.icmp_signed("==", begin, index_constant(0))):
            if not shape:
                body([])
            else:
                cls._split_loops(ctx, shape, index_constant(0), ctx.extent(shape[0]), body, inner)

    @staticmethod
    def _split_loops(ctx, shape, begin, end, body, inner=None):
        """Nested loops over `shape`, the first dimension limited to [begin, end). `inner`,
        when given, emits the innermost loop itself: inner(outer index, start, stop)."""
        builder = ctx.builder
        index = []

        def nest(axis):
            start, stop = (begin, end) if axis == 0 else (index_constant(0), ctx.extent(shape[axis]))
            if inner is not None and axis + 1 == len(shape):
                inner(list(index), start, stop)
                return
            with for_range(builder, start, stop, name=f"d{axis}") as position:
                index.append(position)
                if axis + 1 < len(shape):
                    nest(axis + 1)
                else:
                    body(list(index))
                index.pop()

        nest(0)

    def _loop(self, builder, emitter, outputs, begin, end, stores, loops):
        order = post_order(outputs)

        def body(index):
            values = emitter.elements(order, [(output, index) for output in outputs])
            for store, value in zip(stores, values):
                store(index, value)

        inner = None
        if len(outputs) == 1 and outputs[0].opcode == "dynamic-update-slice" and outputs[0].shape:
            inner = self._window_loops(emitter, outputs[0], body)
        elif loops == self._split_loops and len(outputs[0].shape) >= 2 and transposes_innermost(order):
            loops = self._tiled_loops
        loops(emitter.ctx, outputs[0].shape, begin, end, body, inner)

    @staticmethod
    def _tiled_loops(ctx, shape, begin, end, body, inner=None):
        """`_split_loops` with the last two dimensions walked in _TRANSPOSE_TILE-square tiles:
        a kernel that reads an operand transposed (`x.T + y`) then reads each cache line of it
        for a whole tile of rows, not once per output row (XLA tiles its transposes the same
        way); its writes stay contiguous within a tile row."""
        builder = ctx.builder
        rank = len(shape)
        tile = index_constant(_TRANSPOSE_TILE)
        index = []

        def bounded(first, stop):
            last = builder.add(first, tile)
            return builder.select(builder.icmp_signed("<", last, stop), last, stop)

        def nest(axis):
            if axis < rank - 2:
                start, stop = (begin, end) if axis == 0 else (index_constant(0), ctx.extent(shape[axis]))
                with for_range(builder, start, stop, name=f"d{axis}") as position:
                    index.append(position)
                    nest(axis + 1)
                    index.pop()
                return
            rows_start, rows_stop = (begin, end) if axis == 0 else (index_constant(0), ctx.extent(shape[axis]))
            columns_stop = ctx.extent(shape[axis + 1])
            with for_range(builder, rows_start, rows_stop, name="tile.rows", step=tile) as first_row:
                with for_range(builder, 0, columns_stop, name="tile.columns", step=tile) as first_column:
                    with for_range(builder, first_row, bounded(first_row, rows_stop), name=f"d{axis}") as row:
                        with for_range(builder, first_column, bounded(first_column, columns_stop),
                                       name=f"d{axis + 1}") as column:
                            body([*index, row, column])

        nest(0)

    @staticmethod
    def _window_loops(emitter, update, body):
        """The innermost loops of a kernel whose output is a dynamic-update-slice (an
        assignment `u[1:-1, 1:-1] = ...`): three loops over the last dimension, before, inside
        and after the window, so no element tests or clamps its position along it. Tested per
        element, LLVM vectorized the window's reads as masked loads (heat's step kernel: 13 us
        for 256x256); the outer dimensions' tests are invariant in these loops."""

        def inner(prefix, start, stop):
            builder = emitter.ctx.builder

            def clamp(value):
                value = builder.select(builder.icmp_signed("<", value, start), start, value)
                return builder.select(builder.icmp_signed(">", value, stop), stop, value)

            window_begin, window_end = emitter.window_bounds(update)
            cuts = [start, clamp(window_begin), clamp(window_end), stop]
            for low, high, inside in zip(cuts, cuts[1:], (False, True, False)):
                emitter.known_window = (id(update), inside)
                with for_range(builder, low, high, name="window") as position:
                    body([*prefix, position])
            emitter.known_window = None

        return inner

    def _rows(self, emitter, computation, begin, end, stores, loaders):
        """A row kernel (passes/fusion_rows.py): for each row of rows [begin, end), first each
        of the row's reductions over the trailing dimensions, in dependency order (softmax: the
        row's max, then the sum of exp(x - max)), then the row's elements of the loop outputs,
        which read those reductions as known values. A row is read from memory once and
        revisited in cache, and no reduction is stored and read back by another kernel.

        An expensive value both a reduction and the loop outputs need at the loop's own index
        (softmax's exp) is computed once: the reduction's loop also stores it in a loop
        output's row (`staged_values`), which the output's loop reads back, still in cache,
        before it writes that element.
        """
        ctx = emitter.ctx
        order = post_order(computation.outputs)
        reductions = [node for node in order if node.opcode == "reduce"]
        rows = reductions[0].ndim
        shape = reductions[0].operands[0].shape
        outputs = computation.outputs
        reduction_stores = {id(output): store for output, store in zip(outputs, stores) if output.opcode == "reduce"}
        loop_outputs = [(output, store) for output, store in zip(outputs, stores) if output.opcode != "reduce"]
        staged = staged_values(order, reductions, [output for output, _ in loop_outputs], shape)
        buffer_of = {id(output): position for position, output in enumerate(outputs)}

        def row(row_index):
            emitter.known, emitter.loaded = {}, {}
            for reduction in reductions:
                stage = [(value, stores[buffer_of[id(output)]]) for value, (phase, output) in staged.items()
                         if phase is reduction]
                value = self._reduce_value(emitter, reduction, row_index, stage)
                emitter.known[id(reduction)] = value
                if id(reduction) in reduction_stores:
                    reduction_stores[id(reduction)](row_index, value)
            for value, (_, output) in staged.items():
                emitter.loaded[id(value)] = loaders[buffer_of[id(output)]]
            if loop_outputs:
                def element(inner_index):
                    index = [*row_index, *inner_index]
                    values = emitter.elements(order, [(output, index) for output, _ in loop_outputs])
                    for (_, store), value in zip(loop_outputs, values):
                        store(index, value)
                self._split_loops(ctx, shape[rows:], index_constant(0), ctx.extent(shape[rows]), element)
            emitter.known, emitter.loaded = {}, {}

        self._split_loops(ctx, shape[:rows], begin, end, row)

    def _reduce(self, emitter, output, begin, end, store, loops):
        if output.shape == () and _reads_linearly(output):  # (`float(abs(new - u).max())` of a solver)
            loops(emitter.ctx, output.shape, begin, end,
                  lambda index: store(index, self._reduce_whole(emitter, output)))
            return
        loops(emitter.ctx, output.shape, begin, end,
              lambda index: store(index, self._reduce_value(emitter, output, index)))

    def _reduce_whole(self, emitter, output):
        """A full `max` or `min` reduction that reads its operand linearly, as one flat loop
        (`_reduce_flat`): one horizontal step in all, not one per row (a (128, 128) float32
        maximum of a difference 9 -> 5 us), in the output's dtype."""
        builder = emitter.ctx.builder
        value = self._reduce_flat(emitter, output, index_constant(0), _flat_extent(emitter.ctx, output.operands[0]))
        if ACCUMULATOR.get(output.dtype, output.dtype) != output.dtype:
            value = builder.fptrunc(value, value_type(output.dtype))
        return value

    def _reduce_partials(self, emitter, output, begin, end, pointer, blocks):
        """Partial results of the full reduction `output` for blocks [begin, end) of `blocks`
        (see `add`). A block's range of the outermost reduced axis is a multiple of _SUM_BLOCK
        long, so float sums add the same blocks of elements as the whole reduction does; the
        partials depend on the extent only, not on how calls split the blocks."""
        ctx = emitter.ctx
        builder = ctx.builder
        (operand,) = output.operands
        flat = _reads_linearly(output)
        if flat:  # the blocks split the operand's elements in memory order
            extent = _flat_extent(ctx, operand)
        else:
            extent = ctx.extent(operand.shape[output.attr("dimensions")[0]])
        per_block = builder.udiv(builder.add(extent, index_constant(blocks * _SUM_BLOCK - 1)),
                                 index_constant(blocks * _SUM_BLOCK))
        per_block = builder.mul(per_block, index_constant(_SUM_BLOCK))
        accumulate_type = value_type(ACCUMULATOR.get(output.dtype, output.dtype))

        def clamp(value):
            return builder.select(builder.icmp_signed("<", value, extent), value, extent)

        with for_range(builder, begin, end, name="part") as number:
            low = clamp(builder.mul(number, per_block))
            high = clamp(builder.add(low, per_block))
            if flat:
                value = self._reduce_flat(emitter, output, low, high)
            else:
                value = self._reduce_value(emitter, output, [], outer=(low, high), accumulated=True)
            builder.store(value, builder.gep(pointer, [number], inbounds=True, source_etype=accumulate_type))

    def _reduce_flat(self, emitter, output, low, high):
        """A maximum or minimum of elements [low, high) of `output`'s operand in memory order
        (`_reads_linearly`), in the accumulator's dtype: one loop, which the vectorizer widens
        with one horizontal step at its end, where a loop per row took one per row (a float
        maximum's NaN-exact horizontal step is ~50 instructions: (2048, 64) 80 -> 21 us)."""
        ctx = emitter.ctx
        builder = ctx.builder
        (operand,) = output.operands
        kind = output.attr("kind")
        accumulate_dtype = ACCUMULATOR.get(output.dtype, output.dtype)
        slot = entry_alloca(builder, value_type(accumulate_dtype), name="accumulator")
        builder.store(reduction_identity(ctx, kind, accumulate_dtype), slot)
        order = post_order([operand])
        leading = [index_constant(0)] * (operand.ndim - 1)
        with for_range(builder, low, high, name="flat") as position:
            (value,) = emitter.elements(order, [(operand, [*leading, position])])
            if accumulate_dtype != operand.dtype:
                value = builder.fpext(value, value_type(accumulate_dtype))
            builder.store(combine(ctx, kind, accumulate_dtype, builder.load(slot), value), slot)
        return builder.load(slot)

    def _reduce_value(self, emitter, output, index, stage=(), outer=None, accumulated=False):
        """The reduction `output` at its element `index`: its reduced dimensions' loops, emitted
        where the builder is. `stage`: (value, store) pairs of values of the operand's loop
        index to store on the way (a row kernel's `staged_values`). `outer`: (low, high), the
        range of the outermost reduced axis to reduce (default: all of it); `accumulated`: the
        result in the accumulator's dtype (float16 sums stay float32)."""
        builder = emitter.ctx.builder
        (operand,) = output.operands
        kind, reduced = output.attr("kind"), output.attr("dimensions")
        order = post_order([operand])
        accumulate_dtype = ACCUMULATOR.get(output.dtype, output.dtype)
        kept = [axis for axis in range(operand.ndim) if axis not in reduced]
        ctx = emitter.ctx
        slot = entry_alloca(builder, value_type(accumulate_dtype), name="accumulator")
        builder.store(reduction_identity(ctx, kind, accumulate_dtype), slot)
        operand_index = [None] * operand.ndim
        for axis, position in zip(kept, index):
            operand_index[axis] = position

        loop_counters = []
        # Float sums add blocks of _SUM_BLOCK elements into a partial sum first, and the
        # blocks' partial sums pairwise (`pairwise_push`, across all reduced dimensions),
        # so the rounding error grows with block + log2(count / block) terms, not with the
        # count: as NumPy's pairwise sum, whatever LLVM's vectorizer decides.
        blocked = kind == "sum" and dtypes.is_floating(accumulate_dtype) and bool(reduced)
        target = entry_alloca(builder, value_type(accumulate_dtype), name="partial") if blocked else slot
        pairwise = None
        if blocked:
            pairwise = (tile_alloca(builder, value_type(accumulate_dtype), PAIRWISE_LEVELS, name="pairwise"),
                        entry_alloca(builder, INDEX, name="blocks"))
            builder.store(index_constant(0), pairwise[1])

        def inner(level):
            if level == len(reduced):
                value, *staged = emitter.elements(
                    order, [(operand, list(operand_index))] + [(node, list(operand_index)) for node, _ in stage])
                for (_, store_staged), staged_value in zip(stage, staged):
                    store_staged(list(operand_index), staged_value)
                if index and not all(depends_on(value, position) for position in index):
                    hide_trip_counts(builder, loop_counters)
                if accumulate_dtype != operand.dtype:
                    value = builder.fpext(value, value_type(accumulate_dtype))
                if reduced:
                    value = combine(ctx, kind, accumulate_dtype, builder.load(target), value)
                elif kind == "sum" and dtypes.is_floating(accumulate_dtype):
                    value = builder.fadd(reduction_identity(ctx, kind, accumulate_dtype), value)  # -0.0 -> +0.0
                builder.store(value, target)
                return
            axis = reduced[level]
            start, extent = (index_constant(0), ctx.extent(operand.shape[axis])) if level or outer is None else outer
            if blocked and level == len(reduced) - 1:
                self._blocks(ctx, start, extent, axis,
                             lambda: builder.store(reduction_identity(ctx, kind, accumulate_dtype), target),
                             lambda position: (operand_index.__setitem__(axis, position),
                                               loop_counters.append(position), inner(level + 1)),
                             lambda: pairwise_push(ctx, accumulate_dtype, pairwise, builder.load(target)))
                return
            with for_range(builder, start, extent, name=f"r{axis}") as position:
                operand_index[axis] = position
                loop_counters.append(position)
                inner(level + 1)

        # With no reduced dimensions (dimensions={}) each element is copied, as NumPy does.
        if all(operand.shape[axis] for axis in reduced):
            inner(0)
        if blocked:
            builder.store(pairwise_total(ctx, kind, accumulate_dtype, pairwise), slot)
        result = builder.load(slot)
        if accumulate_dtype != output.dtype and not accumulated:
            result = builder.fptrunc(result, value_type(output.dtype))
        return result


    def _column_reduce(self, emitter, output, begin, end, store, split):
        """A reduction that keeps the operand's innermost axis (`is_column_reduction`: a bias
        gradient `g.sum(axis=0)`, a column mean), in XLA's column-reduction shape: for each
        tile of _TILE contiguous output elements, the reduced axes are walked row by row and
        each row's tile is combined into a tile of accumulators on the stack. The inner loop
        runs along contiguous elements, so it vectorizes, and every element of the fused
        operand is computed once (the per-element order reads one strided column per output).
        Float sums add each block of _SUM_BLOCK rows into a partial tile first, as `_reduce`
        does: the same order of additions, so the same accuracy, as that path."""
        ctx = emitter.ctx
        builder = ctx.builder
        (operand,) = output.operands
        kind, reduced = output.attr("kind"), output.attr("dimensions")
        last = operand.ndim - 1
        outer_kept = [axis for axis in range(last) if axis not in reduced]
        accumulate_dtype = ACCUMULATOR.get(output.dtype, output.dtype)
        element_type = value_type(accumulate_dtype)
        totals = tile_alloca(builder, element_type, _TILE, name="totals")
        blocked = kind == "sum" and dtypes.is_floating(accumulate_dtype)
        partials = tile_alloca(builder, element_type, _TILE, name="partials") if blocked else totals
        identity = reduction_identity(ctx, kind, accumulate_dtype)
        order = post_order([operand])
        operand_index = [None] * operand.ndim

        def cell(tile, position):
            return builder.gep(tile, [position], inbounds=True, source_etype=element_type)

        def each(count, body, name):
            with for_range(builder, 0, count, name=name) as position:
                body(position)

        def fill(tile, count):
            each(count, lambda position: builder.store(identity, cell(tile, position)), "fill")

        def add_row(first, count):
            def body(position):
                operand_index[last] = builder.add(first, position)
                (value,) = emitter.elements(order, [(operand, list(operand_index))])
                if accumulate_dtype != operand.dtype:
                    value = builder.fpext(value, value_type(accumulate_dtype))
                accumulator = cell(partials, position)
                builder.store(combine(ctx, kind, accumulate_dtype, builder.load(accumulator), value), accumulator)
            each(count, body, "column")

        def fold_partials(count):
            def body(position):
                total, partial = cell(totals, position), cell(partials, position)
                builder.store(combine(ctx, kind, accumulate_dtype, builder.load(total), builder.load(partial)), total)
            each(count, body, "fold")

        def rows(level, first, count):
            if level == len(reduced):
                add_row(first, count)
                return
            axis = reduced[level]
            extent = ctx.extent(operand.shape[axis])
            if blocked and level == len(reduced) - 1:
                def row(position):
                    operand_index[axis] = position
                    rows(level + 1, first, count)
                self._blocks(ctx, index_constant(0), extent, axis, lambda: fill(partials, count), row,
                             lambda: fold_partials(count))
                return
            with for_range(builder, 0, extent, name=f"r{axis}") as position:
                operand_index[axis] = position
                rows(level + 1, first, count)

        def tiles(start, stop):
            tile = index_constant(_TILE)
            with for_range(builder, start, stop, name="tile", step=tile) as first:
                left = builder.sub(stop, first)
                count = builder.select(builder.icmp_signed("<", left, tile), left, tile)
                fill(totals, count)
                rows(0, first, count)

                def write(position):
                    result = builder.load(cell(totals, position))
                    if accumulate_dtype != output.dtype:
                        result = builder.fptrunc(result, value_type(output.dtype))
                    kept_index = [operand_index[axis] for axis in outer_kept]
                    store(kept_index + [builder.add(first, position)], result)
                each(count, write, "write")

        def outer(level):
            if level == len(outer_kept):
                whole = (0, ctx.extent(operand.shape[last]))
                tiles(*((begin, end) if split and not outer_kept else whole))
                return
            axis = outer_kept[level]
            start, stop = (begin, end) if split and level == 0 else (0, ctx.extent(operand.shape[axis]))
            with for_range(builder, start, stop, name=f"d{axis}") as position:
                operand_index[axis] = position
                outer(level + 1)

        if split:
            outer(0)
        else:
            with builder.if_then(builder.icmp_signed("==", begin, index_constant(0))):
                outer(0)

    def _scan(self, emitter, output, begin, end, store, load, split):
        """A cumulative sum or product along `dimension`, in NumPy's order: the first element
        as it is (-0.0 stays -0.0), then each one combined with the running value, one
        rounding per step as `np.add.accumulate`. Along the innermost axis the running value
        stays in a register; along another axis each element adds the previous row's output
        (read back, contiguous, so it vectorizes across the row). A scan along the first
        axis runs whole (`split` false): its rows depend on each other."""
        ctx = emitter.ctx
        builder = ctx.builder
        (operand,) = output.operands
        kind, dimension = output.attr("kind"), output.attr("dimension")
        order = post_order([operand])
        innermost = dimension == operand.ndim - 1
        running = entry_alloca(builder, value_type(output.dtype), name="running")
        floating = dtypes.is_floating(output.dtype)

        def step(previous, value):
            if kind == "sum":
                return builder.fadd(previous, value) if floating else builder.add(previous, value)
            return builder.fmul(previous, value) if floating else builder.mul(previous, value)

        def body(index):
            (value,) = emitter.elements(order, [(operand, list(index))])
            first = builder.icmp_signed("==", index[dimension], index_constant(0))
            if innermost:
                previous = builder.load(running)  # (unset before a row's first element: not chosen)
            else:
                previous_index = list(index)
                previous_index[dimension] = builder.select(
                    first, index[dimension], builder.sub(index[dimension], index_constant(1)))
                previous = load(previous_index)
            result = builder.select(first, value, step(previous, value))
            if innermost:
                builder.store(result, running)
            store(index, result)

        (self._split_loops if split else self._whole_loops)(ctx, output.shape, begin, end, body)

    @staticmethod
    def _blocks(ctx, first, extent, axis, start_block, body, end_block):
        """[first, extent) in blocks of _SUM_BLOCK: start_block(); body(position) for each
        position of the block; end_block() (float sums fold a block's partial sums into the
        total)."""
        builder = ctx.builder
        block = index_constant(_SUM_BLOCK)
        # Stepping through [first, extent) (rather than counting blocks) leaves the loop the same
        # guard as the kernel's other loops over the row, `first < extent`: LLVM then unswitches
        # nothing on a block count of 0 (a second copy of the row's loops, vectorized for rows
        # that are empty).
        with for_range(builder, first, extent, name=f"b{axis}", step=block) as start:
            end = builder.add(start, block)
            end = builder.select(builder.icmp_signed("<", end, extent), end, extent)
            start_block()
            with for_range(builder, start, end, name=f"r{axis}") as position:
                body(position)
            end_block()


# Column reductions: a tile of this many contiguous output elements is accumulated at once; the
# innermost kept axis must have at least _COLUMN_MIN elements (below, per-element accumulators).
_TILE = 64
_COLUMN_MIN = 4


def staged_values(order, reductions, loop_outputs, shape) -> dict:
    """A row kernel's values to compute once: {value: (the reduction whose loop computes it,
    the loop output whose row holds it)}. A candidate is an expensive elementwise value (not
    one of the ops cheaper to recompute than to store: fusion_policy.CHEAP_ELEMENTWISE) that
    a reduction's loop and the loop outputs both compute, each only at the loop's own index;
    the output is a loop output of its dtype, each holding one value (the one nearest the
    outputs first). Reading the output's element back before writing it is then safe: the
    element is read and written at the same index, by the same thread."""
    reduction_ids = {id(reduction) for reduction in reductions}
    final = _loop_indexed(loop_outputs, shape, reduction_ids)
    phases = {id(reduction): _loop_indexed([reduction.operands[0]], shape, reduction_ids)
              for reduction in reductions}
    candidates = []
    for node in reversed(order):  # nearest the outputs first
        if (node.opcode in CHEAP_ELEMENTWISE or not node.op.has(ELEMENTWISE) or node.shape != shape
                or node.dtype not in (dtypes.float32, dtypes.float64)
                or id(node) in reduction_ids or final.get(id(node)) != {"loop"}):
            continue
        phase = next((reduction for reduction in reductions if phases[id(reduction)].get(id(node)) == {"loop"}), None)
        if phase is not None:
            candidates.append((node, phase))
    staged, holders = {}, list(loop_outputs)
    for node, phase in candidates:
        holder = next((output for output in holders if output.dtype == node.dtype), None)
        if holder is not None and not any(id(node) in _reachable(value) for value in staged):
            holders.remove(holder)
            staged[node] = (phase, holder)
    return staged


def _loop_indexed(starts, shape, stops) -> dict[int, set[str]]:
    """For the instructions `starts` reach (not past `stops`): whether each is computed at the
    starts' own index ("loop": through elementwise ops of `shape` only) or also elsewhere."""
    statuses = {id(start): {"loop"} for start in starts}
    for node in reversed(post_order(starts, stops)):
        if id(node) in stops:
            continue
        for status in statuses.get(id(node), ()):
            inherited = "loop" if status == "loop" and node.op.has(ELEMENTWISE) and node.shape == shape else "other"
            for operand in node.operands:
                statuses.setdefault(id(operand), set()).add(inherited)
    return statuses


def _reachable(node) -> set[int]:
    return {id(member) for member in post_order([node])}


# Side of the square tiles a kernel that reads an operand transposed walks its output in: 16
# rows of 16 float32 columns read 16 cache lines of the transposed operand, reused across them
# (W7b, `x.T + y` at 4096x4096 on the 2-core AVX2 box: untiled 62-87 ms; tiles of 8: 24 ms,
# 16: 21 ms, 32: 36 ms, 64: 30 ms).
_TRANSPOSE_TILE = 16


def transposes_innermost(order) -> bool:
    """Whether some instruction of a kernel transposes its operand's innermost dimension away
    (reads it along another output dimension: `x.T`), so row-by-row output loops read it with
    a stride."""
    return any(node.opcode == "transpose" and node.attr("permutation")[-1] != node.ndim - 1 for node in order)


def has_row_reductions(computation: Computation) -> bool:
    """Whether some reduction of `computation` is read by another of its instructions (a row
    kernel: passes/fusion_rows.py), not only stored as an output."""
    return any(operand.opcode == "reduce" for node in computation.post_order() for operand in node.operands)


def is_column_reduction(output) -> bool:
    """Whether `output` (a reduce) runs as `KernelBuilder._column_reduce`: some axis is reduced,
    the operand's innermost axis is kept with at least _COLUMN_MIN elements (a placeholder
    size counts as large), and the dtype is not complex."""
    (operand,) = output.operands
    reduced = output.attr("dimensions")
    if not reduced or operand.ndim - 1 in reduced or dtypes.is_complex(output.dtype):
        return False
    return operand.shape[-1] >= _COLUMN_MIN


def depends_on(value: ir.Value, target: ir.Value) -> bool:
    """Whether `value` is computed from `target` (a walk over operands and phi incomings)."""
    stack, seen = [value], set()
    while stack:
        current = stack.pop()
        if current is target:
            return True
        if id(current) in seen or not isinstance(current, ir.Instruction):
            continue
        seen.add(id(current))
        stack.extend(current.operands)
        if isinstance(current, ir.PhiInstr):
            stack.extend(incoming for incoming, _ in current.incomings)
    return False


def hide_trip_counts(builder: ir.IRBuilder, counters) -> None:
    """Make the constant trip counts of these loops opaque to LLVM (`opaque_index`): a
    reduction whose values do not depend on some output index would otherwise, once its short
    loops are fully unrolled, leave a long chain of loop-invariant min/max selects in the
    output loop, which LLVM's vectorizer takes minutes over (21 elements were enough)."""
    for counter in counters:
        compare = counter.parent.instructions[1]  # header: phi, icmp, branch (see for_range)
        stop = compare.operands[1]
        if isinstance(stop, ir.Constant):
            compare.replace_usage(stop, opaque_index(builder, stop))
