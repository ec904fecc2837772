"""The elemental emitter: the element of any fused instruction at an index, as LLVM IR.

A fused computation is a composition of generators (XLA's elemental_ir_emitter): asking for
an instruction's element at an index asks its operands for their elements at the same index
(elementwise ops) or at a remapped index (broadcast, transpose, slice, reverse, pad,
concatenate, reshape), and leaves read memory. Intermediates never reach memory.
Values are cached per (instruction, index) inside one loop body, so diamonds in the graph
do not multiply the IR.

`emit_refusal(instruction)` tells the fusion policy which instructions this emitter cannot
generate, and why; those run on the host through their NumPy reference. Complex values are
structs of two floats; their ops are in complex_ops.py.
"""

from __future__ import annotations

import math

import llvmlite.ir as ir

from ... import dtypes
from ...shapes import is_symbolic_size, placeholder_index
from . import float_bits
from .blas import native_dot_refusal
from .complex_ops import COMPLEX_OPS, complex_constant, complex_type, convert_complex, select_value, touches_complex
from .loops import INDEX, at_entry, index_constant
from .scalar_ops import BINARY

_IR_TYPES = {
    dtypes.bool_: ir.IntType(1),
    dtypes.int8: ir.IntType(8), dtypes.uint8: ir.IntType(8),
    dtypes.int16: ir.IntType(16), dtypes.uint16: ir.IntType(16),
    dtypes.int32: ir.IntType(32), dtypes.uint32: ir.IntType(32),
    dtypes.int64: ir.IntType(64), dtypes.uint64: ir.IntType(64),
    dtypes.float16: ir.HalfType(), dtypes.float32: ir.FloatType(), dtypes.float64: ir.DoubleType(),
}
# The real dtypes: every op, reductions and dots compile on them (and ahead-of-time entry points
# take them). Complex dtypes compile in elementwise and layout ops (`emit_refusal`).
COMPILED_DTYPES = frozenset(_IR_TYPES)


def value_type(dtype) -> ir.Type:
    """The register type of an element (bool is i1; complex a struct of two floats)."""
    kind = _IR_TYPES.get(dtype)
    return kind if kind is not None else complex_type(dtype)


def memory_type(dtype) -> ir.Type:
    """The in-memory type of an element (bool is one byte, as NumPy stores it)."""
    return ir.IntType(8) if dtype == dtypes.bool_ else value_type(dtype)


class EmitContext:
    """What emitters share: the builder, the math table, and the per-index value cache."""

    def __init__(self, builder: ir.IRBuilder, math_table, sizes: ir.Value | list[ir.Value] | None = None):
        self.builder = builder
        self.module = builder.module
        self._math_table = math_table
        self._sizes = sizes
        self._extents: dict[int, ir.Value] = {}
        self.cache: dict[tuple, ir.Value] = {}
        # id(constant instruction) -> its global array, for constants of several elements.
        self.constant_tables: dict[int, ir.GlobalVariable] = {}

    def extent(self, size: int) -> ir.Value:
        """A dimension's size as an i64: an immediate, or for a placeholder size (see
        shapes.placeholder) the real size: loaded once from the kernel's size vector
        (CPU kernels), or one of the kernel's i64 arguments (GPU kernels: `sizes` is a list)."""
        if not is_symbolic_size(size):
            return index_constant(size)
        if isinstance(self._sizes, list):
            return self._sizes[placeholder_index(size)]
        value = self._extents.get(size)
        if value is None:
            if self._sizes is None:
                raise ValueError(f"a symbolic size {size:#x} in a kernel without a size vector")
            builder = self.builder
            with at_entry(builder):
                address = builder.gep(self._sizes, [index_constant(placeholder_index(size))], source_etype=INDEX)
                value = self._extents[size] = builder.load(address, typ=INDEX)
        return value

    def constant(self, value, dtype) -> ir.Constant:
        if dtypes.is_complex(dtype):
            return complex_constant(value, dtype)
        kind = value_type(dtype)
        if dtypes.is_floating(dtype):
            return ir.Constant(kind, float(value))
        if dtype == dtypes.bool_:
            return ir.Constant(kind, int(bool(value)))
        return ir.Constant(kind, int(value) & ((1 << kind.width) - 1))

    def intrinsic(self, name: str, *arguments):
        kind = arguments[0].type
        signature = ir.FunctionType(kind, [argument.type for argument in arguments])
        function = self.module.declare_intrinsic(name, [kind], signature)
        return self.builder.call(function, arguments)

    def math(self, name: str, dtype, *arguments):
        """A transcendental function from the target's math table (float16 goes through float32)."""
        if dtype == dtypes.float16:
            wide = [self.builder.fpext(argument, ir.FloatType()) for argument in arguments]
            result = self._math_table(self, name, dtypes.float32, *wide)
            return self.builder.fptrunc(result, ir.HalfType())
        return self._math_table(self, name, dtype, *arguments)


# -- unary elementwise ----------------------------------------------------------------------


def _negate(ctx, instr, x):
    return ctx.builder.fneg(x) if dtypes.is_floating(instr.dtype) else ctx.builder.sub(ir.Constant(x.type, 0), x)


def _abs(ctx, instr, x):
    if dtypes.is_floating(instr.dtype):
        return ctx.intrinsic("llvm.fabs", x)
    if instr.dtype == dtypes.bool_ or dtypes.is_unsigned_integer(instr.dtype):
        return x
    negative = ctx.builder.icmp_signed("<", x, ir.Constant(x.type, 0))
    return ctx.builder.select(negative, ctx.builder.sub(ir.Constant(x.type, 0), x), x)


def _sign(ctx, instr, x):
    builder, dtype = ctx.builder, instr.dtype
    one, minus_one, zero = ctx.constant(1, dtype), ctx.constant(-1, dtype), ctx.constant(0, dtype)
    if dtypes.is_floating(dtype):
        result = builder.select(builder.fcmp_ordered("<", x, zero), minus_one, builder.select(
            builder.fcmp_ordered("==", x, zero), zero, x))
        return builder.select(builder.fcmp_ordered(">", x, zero), one, result)
    if dtypes.is_unsigned_integer(dtype):
        return builder.select(builder.icmp_unsigned("!=", x, zero), one, zero)
    result = builder.select(builder.icmp_signed("<", x, zero), minus_one, zero)
    return builder.select(builder.icmp_signed(">", x, zero), one, result)


def _intrinsic_or_identity(name):
    def emit(ctx, instr, x):
        return ctx.intrinsic(name, x) if dtypes.is_floating(instr.dtype) else x

    return emit


def _math_unary(name):
    def emit(ctx, instr, x):
        return ctx.math(name, instr.dtype, x)

    return emit


def _not(ctx, instr, x):
    return ctx.builder.xor(x, ir.Constant(x.type, -1 if x.type.width > 1 else 1))


def _is_nan(ctx, instr, x):
    if not dtypes.is_floating(instr.operands[0].dtype):
        return ir.Constant(ir.IntType(1), 0)
    return ctx.builder.fcmp_unordered("uno", x, x)


def _is_inf(ctx, instr, x):
    if not dtypes.is_floating(instr.operands[0].dtype):
        return ir.Constant(ir.IntType(1), 0)
    return ctx.builder.fcmp_ordered("==", ctx.intrinsic("llvm.fabs", x), ir.Constant(x.type, math.inf))


def _is_finite(ctx, instr, x):
    if not dtypes.is_floating(instr.operands[0].dtype):
        return ir.Constant(ir.IntType(1), 1)
    return ctx.builder.fcmp_ordered("<", ctx.intrinsic("llvm.fabs", x), ir.Constant(x.type, math.inf))


def _signbit(ctx, instr, x):
    bits = ctx.builder.bitcast(x, ir.IntType(instr.operands[0].dtype.itemsize * 8))
    return ctx.builder.icmp_signed("<", bits, ir.Constant(bits.type, 0))


def _reciprocal(ctx, instr, x):
    return ctx.builder.fdiv(ir.Constant(x.type, 1.0), x)


def _identity(ctx, instr, x):
    return x


def _zeros(ctx, instr, x):
    return ctx.constant(0, instr.dtype)


def _popcount(ctx, instr, x):
    """The set bits of the pattern, as uint8 (every count fits)."""
    count = ctx.intrinsic("llvm.ctpop", x)
    return ctx.builder.trunc(count, ir.IntType(8)) if count.type.width > 8 else count


UNARY = {
    "negate": _negate, "abs": _abs, "sign": _sign, "not": _not,
    "sqrt": _intrinsic_or_identity("llvm.sqrt"), "floor": _intrinsic_or_identity("llvm.floor"),
    "ceil": _intrinsic_or_identity("llvm.ceil"), "trunc": _intrinsic_or_identity("llvm.trunc"),
    "round-nearest-even": _intrinsic_or_identity("llvm.roundeven"),
    "is-nan": _is_nan, "is-inf": _is_inf, "is-finite": _is_finite, "signbit": _signbit,
    "reciprocal": _reciprocal, "real": _identity, "conj": _identity, "imag": _zeros,
    "popcount": _popcount, **float_bits.UNARY,
    **{name: _math_unary(name) for name in (
        "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin",
        "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "cbrt")},
}


def narrow_float(builder: ir.IRBuilder, value, target_type: ir.Type):
    """fptrunc, correctly rounded without soft-float helpers.

    float64 -> float16 has no instruction on x86-64, and LLVM calls `__truncdfhf2`, which the
    JIT cannot resolve (a crash). Instead round to float32 *to odd* (truncate toward zero, set
    the last bit when inexact), then to float16: float32 keeps more than 11 + 2 bits, so the
    second rounding is exact to nearest-even (the round-to-odd theorem). NaN and inf keep
    their bits; overflow becomes FLT_MAX, which still rounds to float16 inf.
    """
    if not (isinstance(value.type, ir.DoubleType) and isinstance(target_type, ir.HalfType)):
        return builder.fptrunc(value, target_type)
    single, bits_type = ir.FloatType(), ir.IntType(32)
    rounded = builder.fptrunc(value, single)
    back = builder.fpext(rounded, value.type)
    exact = builder.fcmp_unordered("==", back, value)  # exact, or NaN
    magnitude = lambda number: builder.call(  # noqa: E731
        builder.module.declare_intrinsic("llvm.fabs", [number.type]), [number])
    away = builder.fcmp_ordered(">", magnitude(back), magnitude(value))  # rounded away from zero
    bits = builder.bitcast(rounded, bits_type)
    toward_zero = builder.select(away, builder.sub(bits, ir.Constant(bits_type, 1)), bits)
    odd = builder.or_(toward_zero, ir.Constant(bits_type, 1))
    single_value = builder.bitcast(builder.select(exact, bits, odd), single)
    return builder.fptrunc(single_value, target_type)


def _truncate_or_minimum(builder: ir.IRBuilder, value, bits: int):
    """x86-64's cvttss2si/cvttsd2si: `value` truncated to a signed `bits`-bit integer, or the
    "integer indefinite" INT_MIN when it is NaN or its truncation is out of range.

    The range test is `-2**(bits-1) <= value < 2**(bits-1)` (both bounds are floats of every
    width); values just below the lower bound truncate to INT_MIN anyway. fptosi is only given
    in-range values (LLVM makes it poison otherwise), then a select puts INT_MIN back.
    """
    limit = 2.0 ** (bits - 1)
    integer_type = ir.IntType(bits)
    inside = builder.and_(
        builder.fcmp_ordered(">=", value, ir.Constant(value.type, -limit)),
        builder.fcmp_ordered("<", value, ir.Constant(value.type, limit)),
    )
    safe = builder.select(inside, value, ir.Constant(value.type, 0.0))
    truncated = builder.fptosi(safe, integer_type)
    return builder.select(inside, truncated, ir.Constant(integer_type, 1 << (bits - 1)))


def _unsigned_by_halves(builder: ir.IRBuilder, value, bits: int):
    """The unsigned conversion C compilers emit on x86-64 (and NumPy's casts run): values from
    2**(bits-1) up convert `value - 2**(bits-1)` and set the top bit back, others convert as
    signed. The subtraction is exact where it matters (Sterbenz: value <= 2**bits)."""
    half = ir.Constant(value.type, 2.0 ** (bits - 1))
    high = builder.fcmp_ordered(">=", value, half)
    shifted = builder.fsub(builder.select(high, value, half), half)
    top_bit = ir.Constant(ir.IntType(bits), 1 << (bits - 1))
    upper = builder.xor(_truncate_or_minimum(builder, shifted, bits), top_bit)
    return builder.select(high, upper, _truncate_or_minimum(builder, value, bits))


def float_to_integer(builder: ir.IRBuilder, value, source, target):
    """NumPy's float -> integer astype as it computes on x86-64, for every value: NaN, inf and
    out-of-range floats give what NumPy's loops give there (C leaves them undefined).

    Through int32 for int8/16/32 and uint8/16 (then wrapped: NaN -> 0 for int8), through
    int64 for int64 (NaN -> INT64_MIN), by halves for uint64 (NaN -> 2**63); uint32 by halves
    of 32 bits as NumPy's vectorized loop does (NaN -> 2**31; its scalar loop, used for
    strided inputs and array tails, differs: README, Differences from NumPy), except from
    float16, which NumPy converts through int64 (NaN -> 0). The interpreter's reference is the
    same rule (hlo/ops/elementwise.py); `tests/frontend/test_manipulation.py` holds every pair
    to NumPy.
    """
    if isinstance(value.type, ir.HalfType):
        value = builder.fpext(value, ir.FloatType())  # exact
    target_type = value_type(target)
    if target == dtypes.uint64:
        return _unsigned_by_halves(builder, value, 64)
    if target == dtypes.uint32 and source != dtypes.float16:
        return _unsigned_by_halves(builder, value, 32)
    if target == dtypes.int64 or target == dtypes.uint32:
        wide = _truncate_or_minimum(builder, value, 64)
    else:
        wide = _truncate_or_minimum(builder, value, 32)
    return builder.trunc(wide, target_type) if target_type.width < wide.type.width else wide


def convert_value(ctx: EmitContext, value, source, target):
    """NumPy's astype for one element (float -> int as NumPy computes it on x86-64)."""
    builder = ctx.builder
    if source == target:
        return value
    if dtypes.is_complex(source) or dtypes.is_complex(target):
        return convert_complex(ctx, value, source, target, convert_value)
    target_type = value_type(target)
    if target == dtypes.bool_:
        if dtypes.is_floating(source):
            return builder.fcmp_unordered("!=", value, ir.Constant(value.type, 0.0))
        return builder.icmp_unsigned("!=", value, ir.Constant(value.type, 0))
    if dtypes.is_floating(target):
        if dtypes.is_floating(source):
            wider = source.itemsize < target.itemsize
            return builder.fpext(value, target_type) if wider else narrow_float(builder, value, target_type)
        # Integers reach float16 through float32: exact below 2**24, and every larger integer is
        # beyond float16's range either way; no soft-float helper (__floatdihf) is called.
        wide_type = ir.FloatType() if target == dtypes.float16 else target_type
        widened = builder.sitofp(value, wide_type) if dtypes.is_signed_integer(source) else builder.uitofp(
            value, wide_type)
        return builder.fptrunc(widened, target_type) if wide_type is not target_type else widened
    if dtypes.is_floating(source):
        return float_to_integer(builder, value, source, target)
    width, target_width = value.type.width, target_type.width
    if target_width < width:
        return builder.trunc(value, target_type)
    if target_width > width:
        extend = builder.sext if dtypes.is_signed_integer(source) else builder.zext
        return extend(value, target_type)
    return value


# -- index remapping ------------------------------------------------------------------------


def _broadcast_index(instr, index):
    operand = instr.operands[0]
    return [
        index_constant(0) if operand.shape[axis] == 1 else index[target]
        for axis, target in enumerate(instr.attr("dimensions"))
    ]


def _transpose_index(instr, index):
    operand_index = [None] * len(index)
    for position, axis in enumerate(instr.attr("permutation")):
        operand_index[axis] = index[position]
    return operand_index


def linearize(ctx, index, shape):
    """Row-major offset of `index` in `shape`."""
    builder = ctx.builder
    linear = index_constant(0)
    for position, size in zip(index, shape):
        linear = builder.add(builder.mul(linear, ctx.extent(size)), position)
    return linear


def delinearize(ctx, linear, shape, *, bounded: bool = False):
    """The index of row-major offset `linear` in `shape`; `bounded`: the caller knows that
    linear < size of shape, so the outermost position needs no remainder."""
    builder = ctx.builder
    index = []
    for axis in reversed(range(len(shape))):
        size = shape[axis]
        if size == 1:
            index.append(index_constant(0))
        elif axis == 0 and bounded:
            index.append(linear)
        else:
            extent = ctx.extent(size)
            index.append(builder.urem(linear, extent))
            linear = builder.udiv(linear, extent)
    return list(reversed(index))


def _reshape_index(ctx, instr, index):
    operand = instr.operands[0]
    kept_output = [position for axis, position in enumerate(index) if instr.shape[axis] != 1]
    if [size for size in instr.shape if size != 1] == [size for size in operand.shape if size != 1]:
        # Only unit dims added or removed: map the non-unit dims one to one.
        positions = iter(kept_output)
        return [index_constant(0) if size == 1 else next(positions) for size in operand.shape]
    return delinearize(ctx, linearize(ctx, index, instr.shape), operand.shape)


def _slice_index(ctx, instr, index):
    builder = ctx.builder
    return [
        builder.add(builder.mul(position, index_constant(stride)), index_constant(start))
        for position, start, stride in zip(index, instr.attr("start"), instr.attr("stride"))
    ]


def _reverse_index(ctx, instr, index):
    reversed_axes = set(instr.attr("dimensions"))
    return [
        ctx.builder.sub(ctx.builder.sub(ctx.extent(size), index_constant(1)), position)
        if axis in reversed_axes else position
        for axis, (position, size) in enumerate(zip(index, instr.shape))
    ]


def _clamped(builder, position, size):
    """`position` if 0 <= position < size (as signed), else 0: always a safe address."""
    return _clamped_to(builder, position, index_constant(size))


def _clamped_to(builder, position, size: ir.Value):
    """`_clamped` for a size computed at run time (a placeholder size)."""
    inside = builder.and_(
        builder.icmp_signed(">=", position, index_constant(0)),
        builder.icmp_signed("<", position, size),
    )
    return builder.select(inside, position, index_constant(0)), inside


def _pad_plan(ctx, instr, index):
    """Operand index for pad, and whether the output element comes from the operand."""
    builder = ctx.builder
    operand = instr.operands[0]
    valid = ir.Constant(ir.IntType(1), 1)
    operand_index = []
    for position, low, interior, size in zip(index, instr.attr("low"), instr.attr("interior"), operand.shape):
        shifted = builder.sub(position, index_constant(low))
        step = interior + 1
        source = builder.sdiv(shifted, index_constant(step)) if step > 1 else shifted
        if step > 1:
            on_grid = builder.icmp_signed("==", builder.srem(shifted, index_constant(step)), index_constant(0))
            valid = builder.and_(valid, on_grid)
        safe, inside = _clamped_to(builder, source, ctx.extent(size))  # (a placeholder on an unpadded axis)
        valid = builder.and_(valid, inside)
        operand_index.append(safe)
    return [operand_index, []], valid


def _concatenate_plan(ctx, instr, index):
    builder = ctx.builder
    dimension = instr.attr("dimension")
    offset = 0
    indices, masks = [], []
    for operand in instr.operands:
        local = builder.sub(index[dimension], index_constant(offset))
        safe, inside = _clamped(builder, local, operand.shape[dimension])
        indices.append([safe if axis == dimension else position for axis, position in enumerate(index)])
        masks.append(inside)
        offset += operand.shape[dimension]
    return indices, masks


_SIMPLE_REMAPS = {
    "broadcast": lambda ctx, instr, index: _broadcast_index(instr, index),
    "transpose": lambda ctx, instr, index: _transpose_index(instr, index),
    "reshape": _reshape_index,
    "slice": _slice_index,
    "reverse": _reverse_index,
}

EMITTABLE = frozenset(UNARY) | frozenset(BINARY) | frozenset(_SIMPLE_REMAPS) | {
    "parameter", "constant", "iota", "convert", "select", "clamp", "pad", "concatenate",
    "dynamic-update-slice", "dynamic-slice",
}

# What compiles when an operand or the result is complex (complex_ops.py; no reductions).
COMPLEX_EMITTABLE = frozenset(COMPLEX_OPS) | frozenset(_SIMPLE_REMAPS) | {
    "parameter", "constant", "iota", "convert", "select", "pad", "concatenate",
}


def emit_refusal(instruction) -> str | None:
    """Why a kernel cannot compute `instruction` (it then runs on the host through its NumPy
    reference), completing "... is ": "a sqrt on complex64, which runs on the host (...)";
    None when it can. Reductions, argmax/argmin and scans are kernel roots (kernel.py), on real
    dtypes only.

    Complex values of no elements stay on the host: a kernel reading an empty operand (pad,
    concatenate) uses a zero of the element type in its place, which kernel.py spells for
    scalars only; there is nothing to compute anyway.
    """
    opcode = instruction.opcode
    if touches_complex(instruction):
        complex_dtype = next(node.dtype for node in (instruction, *instruction.operands)
                             if dtypes.is_complex(node.dtype))
        if opcode not in COMPLEX_EMITTABLE:
            return (f"a {opcode} on {complex_dtype}, which runs on the host (complex {opcode} has no "
                    "code generator yet)")
        if any(0 in node.shape for node in (instruction, *instruction.operands)):
            return f"a {opcode} of an empty {complex_dtype} array (runs on the host)"
        return None
    if opcode == "cumulative" and instruction.dtype == dtypes.float16:
        return "a cumulative on float16, which runs on the host (NumPy rounds each running value to half)"
    if opcode == "dot" and native_dot_refusal(instruction) is None:
        return "a dot, a BLAS gemm kernel of its own (its elementwise consumers are the next kernel)"
    if opcode not in EMITTABLE and opcode not in ("reduce", "cumulative", "argmax", "argmin"):
        return f"a {opcode}, which has no code generator yet (runs on the host)"
    return None


def _constant_element(ctx, node, index):
    """A constant's element at `index`: an immediate for one element, else a load from a
    private global array (the fusion policy inlines constants of several elements)."""
    array = node.attr("literal").array
    if array.size == 1:
        return ctx.constant(array.reshape(-1)[0].item(), node.dtype)
    element_type = memory_type(node.dtype)
    table = ctx.constant_tables.get(id(node))
    if table is None:
        storage = dtypes.uint8 if node.dtype == dtypes.bool_ else node.dtype
        table_type = ir.ArrayType(element_type, array.size)
        table = ir.GlobalVariable(ctx.module, table_type, name=ctx.module.get_unique_name("constant"))
        table.initializer = ir.Constant(
            table_type, [ctx.constant(value, storage) for value in array.reshape(-1).tolist()]
        )
        table.global_constant = True
        table.linkage = "private"
        ctx.constant_tables[id(node)] = table
    builder = ctx.builder
    address = builder.gep(table, [linearize(ctx, index, node.shape)], source_etype=element_type)
    value = builder.load(address, typ=element_type)
    if node.dtype == dtypes.bool_:
        return builder.icmp_unsigned("!=", value, ir.Constant(element_type, 0))
    return value


def _key(index) -> tuple:
    return tuple(id(position) for position in index)


class ElementalEmitter:
    """Emits the elements of a fused computation's instructions at given indices.

    `load(parameter_number, index)` is supplied by the kernel (it knows the buffers).
    Planning walks users before operands and emitting walks operands before users, both
    iteratively, so a fused chain of any depth compiles without recursion.
    """

    def __init__(self, ctx: EmitContext, load):
        self.ctx = ctx
        self.load = load
        # (id of a dynamic-update-slice, whether the index's last dimension lies in its
        # window): set by a kernel whose loop splits that dimension at the window's edges
        # (kernel.py), so the window test and clamp of that dimension vanish from the loop.
        self.known_window: tuple[int, bool] | None = None
        # id of an instruction -> its value, already computed where it is needed (a row
        # kernel's reductions of the current row: kernel.py `_rows`); never planned further.
        self.known: dict[int, ir.Value] = {}
        # id of an instruction -> load(index): its elements, already stored where it is needed
        # (a row kernel's value staged in an output's row: kernel.py `_rows`).
        self.loaded: dict[int, object] = {}

    def window_bounds(self, node):
        """(begin, end) of a dynamic-update-slice's window in its last dimension (clamped
        starts, as XLA's), emitted where the builder is."""
        operand, update, *starts = node.operands
        begin = self._clamped_starts(starts[-1:], operand.shape[-1:], update.shape[-1:])[0]
        return begin, self.ctx.builder.add(begin, self.ctx.extent(update.shape[-1]))

    def elements(self, order, requests):
        """Values of `requests` [(instruction, index)], emitted over post-order `order`."""
        # id(node) -> index key -> [index, operand indices, auxiliary data from planning]
        needed: dict[int, dict[tuple, list]] = {id(node): {} for node in order}
        for node, index in requests:
            needed[id(node)].setdefault(_key(index), [index, None, None])
        known, loaded = self.known, self.loaded
        for node in reversed(order):
            if id(node) in known or id(node) in loaded:
                continue
            for entry in needed[id(node)].values():
                entry[1], entry[2] = self._plan(node, entry[0])
                for operand, operand_index in zip(node.operands, entry[1]):
                    needed[id(operand)].setdefault(_key(operand_index), [operand_index, None, None])
        values: dict[tuple, ir.Value] = {}
        for node in order:
            if id(node) in known:
                for key in needed[id(node)]:
                    values[(id(node), key)] = known[id(node)]
                continue
            if id(node) in loaded:
                for key, (index, _, _) in needed[id(node)].items():
                    values[(id(node), key)] = loaded[id(node)](index)
                continue
            for key, (index, operand_indices, plan) in needed[id(node)].items():
                operands = [
                    values[(id(operand), _key(operand_index))]
                    for operand, operand_index in zip(node.operands, operand_indices)
                ]
                values[(id(node), key)] = self._emit(node, index, operands, plan)
        return [values[(id(node), _key(index))] for node, index in requests]

    def _plan(self, node, index):
        """(operand indices, auxiliary data) for one element of `node`."""
        opcode = node.opcode
        if opcode in _SIMPLE_REMAPS:
            return [_SIMPLE_REMAPS[opcode](self.ctx, node, index)], None
        if opcode == "pad":
            return _pad_plan(self.ctx, node, index)
        if opcode == "concatenate":
            return _concatenate_plan(self.ctx, node, index)
        if opcode == "dynamic-update-slice":
            return self._update_slice_plan(node, index)
        if opcode == "dynamic-slice":
            operand, *starts = node.operands
            begins = self._clamped_starts(starts, operand.shape, node.shape)
            return [[self.ctx.builder.add(position, begin) for position, begin in zip(index, begins)]] + (
                [[]] * len(starts)), None
        return [index] * len(node.operands), None

    def _clamped_starts(self, starts, extents, sizes) -> list:
        """Run-time start of each dimension, clamped to [0, extent - size] as XLA's
        dynamic-slice and dynamic-update-slice clamp them."""
        builder = self.ctx.builder
        begins = []
        for start, extent, size in zip(starts, extents, sizes):
            begin = convert_value(self.ctx, self._scalar(start), start.dtype, dtypes.int64)
            last = builder.sub(self.ctx.extent(extent), self.ctx.extent(size))
            begin = builder.select(builder.icmp_signed("<", begin, index_constant(0)), index_constant(0), begin)
            begins.append(builder.select(builder.icmp_signed(">", begin, last), last, begin))
        return begins

    def _update_slice_plan(self, node, index):
        """dynamic-update-slice(operand, update, *starts) at `index`: the update's element where
        `index` falls in the (clamped) window, else the operand's; the mask is the plan.

        An assignment `u[1:-1, 1:-1] = expression` becomes one kernel over the whole array,
        with the expression computed inside it, instead of a copy of `u` and a host write."""
        builder = self.ctx.builder
        operand, update, *starts = node.operands
        inside = ir.Constant(ir.IntType(1), 1)
        update_index = []
        begins = self._clamped_starts(starts, operand.shape, update.shape)
        known = self.known_window[1] if self.known_window and self.known_window[0] == id(node) else None
        for dimension, (position, begin, size) in enumerate(zip(index, begins, update.shape)):
            local = builder.sub(position, begin)
            if known and dimension == len(index) - 1:  # inside by the loop's bounds
                update_index.append(local)
                continue
            safe, within = _clamped_to(builder, local, self.ctx.extent(size))
            inside = builder.and_(inside, within)
            update_index.append(safe)
        if known is False:
            inside = ir.Constant(ir.IntType(1), 0)  # outside by the loop's bounds: the operand
        return [index, update_index] + [[]] * len(starts), inside

    def _scalar(self, node):
        """The value of a 0-d member (a start index), emitted where it is needed while planning."""
        if node.opcode == "parameter":
            return self.load(node.attr("number"), [])
        if node.opcode == "constant":
            return _constant_element(self.ctx, node, [])
        order, seen, stack = [], set(), [node]
        while stack:  # post order of the members it depends on
            member = stack[-1]
            waiting = [operand for operand in member.operands if id(operand) not in seen]
            if waiting:
                stack.extend(waiting)
                continue
            stack.pop()
            if id(member) not in seen:
                seen.add(id(member))
                order.append(member)
        return self.elements(order, [(node, [])])[0]

    def _emit(self, node, index, operands, plan):
        ctx, builder, opcode = self.ctx, self.ctx.builder, node.opcode
        if opcode == "parameter":
            return self.load(node.attr("number"), index)
        if opcode == "constant":
            return _constant_element(ctx, node, index)
        if opcode == "iota":
            return convert_value(ctx, index[node.attr("dimension")], dtypes.int64, node.dtype)
        if opcode in COMPLEX_OPS and touches_complex(node):
            return COMPLEX_OPS[opcode](ctx, node, *operands)
        if opcode in UNARY:
            return UNARY[opcode](ctx, node, *operands)
        if opcode in BINARY:
            return BINARY[opcode](ctx, node, *operands)
        if opcode in _SIMPLE_REMAPS:
            return operands[0]
        if opcode == "convert":
            return convert_value(ctx, operands[0], node.operands[0].dtype, node.dtype)
        if opcode == "select":
            return select_value(builder, *operands)
        if opcode == "clamp":
            low, value, high = operands
            maximum, minimum = BINARY["maximum"], BINARY["minimum"]
            return minimum(ctx, node, maximum(ctx, node, value, low), high)
        if opcode == "pad":
            return select_value(builder, plan, operands[0], operands[1])
        if opcode == "dynamic-update-slice":
            return builder.select(plan, operands[1], operands[0])
        if opcode == "dynamic-slice":
            return operands[0]
        if opcode == "concatenate":
            result = operands[-1]
            for value, inside in zip(reversed(operands[:-1]), reversed(plan[:-1])):
                result = select_value(builder, inside, value, result)
            return result
        raise NotImplementedError(f"elemental emitter: no rule for {opcode}")
