"""Per-element arithmetic for the elementwise HLO ops, with NumPy's exact semantics.

Each emitter takes the EmitContext, the instruction and its operands' values at one index,
and returns the result value. Integer division by zero gives 0 and INT_MIN // -1 wraps, as
NumPy defines them, with no undefined behaviour reaching LLVM; maximum/minimum propagate NaN;
shifts by the bit width or more give 0 (or -1 for negative values shifted right).
Transcendental functions come from the target's math table (`context.math`), so the same
emitters serve the CPU and, later, NVPTX.
"""

from __future__ import annotations

import llvmlite.ir as ir

from ... import dtypes
from .float_bits import BINARY as FLOAT_BITS_BINARY
from .loops import entry_alloca, for_range, index_constant, opaque_index

_COMPARE_SIGNED = {"EQ": "==", "NE": "!=", "LT": "<", "LE": "<=", "GT": ">", "GE": ">="}


def _is_float(dtype) -> bool:
    return dtypes.is_floating(dtype)


def _signed(dtype) -> bool:
    return dtypes.is_signed_integer(dtype)


def _zero(value):
    return ir.Constant(value.type, 0)


def _one(value, ctx, dtype):
    return ctx.constant(1, dtype)


def _add(ctx, instr, a, b):
    builder, dtype = ctx.builder, instr.dtype
    if _is_float(dtype):
        return builder.fadd(a, b)
    if dtypes.is_bool(dtype):
        return builder.or_(a, b)
    return builder.add(a, b)


def _subtract(ctx, instr, a, b):
    return ctx.builder.fsub(a, b) if _is_float(instr.dtype) else ctx.builder.sub(a, b)


def _multiply(ctx, instr, a, b):
    builder, dtype = ctx.builder, instr.dtype
    if _is_float(dtype):
        return builder.fmul(a, b)
    if dtypes.is_bool(dtype):
        return builder.and_(a, b)
    return builder.mul(a, b)


def _divide(ctx, instr, a, b):
    return ctx.builder.fdiv(a, b)


def _safe_divisor(ctx, dtype, a, b):
    """Divisor with 0 and (for signed) -1 replaced by 1, so LLVM never sees UB; plus the masks."""
    builder = ctx.builder
    is_zero = builder.icmp_unsigned("==", b, _zero(b))
    unsafe = is_zero
    is_minus_one = None
    if _signed(dtype):
        is_minus_one = builder.icmp_signed("==", b, ctx.constant(-1, dtype))
        unsafe = builder.or_(is_zero, is_minus_one)
    return builder.select(unsafe, ctx.constant(1, dtype), b), is_zero, is_minus_one


def _floor_divide(ctx, instr, a, b):
    builder, dtype = ctx.builder, instr.dtype
    if _is_float(dtype):
        # NumPy's npy_floor_divide: through fmod so that the result is consistent with remainder.
        quotient = builder.fdiv(a, b)
        modulo = ctx.math("fmod", dtype, a, b)  # exact; the target's table says how
        div = builder.fdiv(builder.fsub(a, modulo), b)
        zero = ir.Constant(a.type, 0.0)
        fix = builder.and_(
            builder.fcmp_unordered("!=", modulo, zero),
            builder.xor(builder.fcmp_ordered("<", b, zero), builder.fcmp_ordered("<", modulo, zero)),
        )
        div = builder.select(fix, builder.fsub(div, ir.Constant(a.type, 1.0)), div)
        floored = ctx.intrinsic("llvm.floor", div)
        floored = builder.select(
            builder.fcmp_ordered(">", builder.fsub(div, floored), ir.Constant(a.type, 0.5)),
            builder.fadd(floored, ir.Constant(a.type, 1.0)),
            floored,
        )
        signed_zero = ctx.intrinsic("llvm.copysign", zero, quotient)
        result = builder.select(builder.fcmp_unordered("!=", div, zero), floored, signed_zero)
        return builder.select(builder.fcmp_ordered("==", b, zero), quotient, result)
    divisor, is_zero, is_minus_one = _safe_divisor(ctx, dtype, a, b)
    if not _signed(dtype):
        return builder.select(is_zero, _zero(a), builder.udiv(a, divisor))
    quotient = builder.sdiv(a, divisor)
    remainder = builder.srem(a, divisor)
    needs_fix = builder.and_(
        builder.icmp_signed("!=", remainder, _zero(a)),
        builder.xor(builder.icmp_signed("<", remainder, _zero(a)), builder.icmp_signed("<", b, _zero(b))),
    )
    quotient = builder.select(needs_fix, builder.sub(quotient, ctx.constant(1, dtype)), quotient)
    quotient = builder.select(is_minus_one, builder.sub(_zero(a), a), quotient)
    return builder.select(is_zero, _zero(a), quotient)


def _remainder(ctx, instr, a, b):
    builder, dtype = ctx.builder, instr.dtype
    if _is_float(dtype):
        zero = ir.Constant(a.type, 0.0)
        modulo = ctx.math("fmod", dtype, a, b)  # exact; the target's table says how
        nonzero = builder.fcmp_unordered("!=", modulo, zero)
        fix = builder.and_(
            nonzero,
            builder.xor(builder.fcmp_ordered("<", b, zero), builder.fcmp_ordered("<", modulo, zero)),
        )
        adjusted = builder.select(fix, builder.fadd(modulo, b), modulo)
        return builder.select(nonzero, adjusted, ctx.intrinsic("llvm.copysign", zero, b))
    divisor, is_zero, is_minus_one = _safe_divisor(ctx, dtype, a, b)
    if not _signed(dtype):
        return builder.select(is_zero, _zero(a), builder.urem(a, divisor))
    remainder = builder.srem(a, divisor)
    fix = builder.and_(
        builder.icmp_signed("!=", remainder, _zero(a)),
        builder.xor(builder.icmp_signed("<", remainder, _zero(a)), builder.icmp_signed("<", b, _zero(b))),
    )
    remainder = builder.select(fix, builder.add(remainder, b), remainder)
    return builder.select(builder.or_(is_zero, is_minus_one), _zero(a), remainder)


def _fmod(ctx, instr, a, b):
    """C's fmod (NumPy's): exact for floats (the target's math table); for integers C's `%`
    truncating toward zero, 0 for a zero divisor (NumPy's value) and for -1 (never LLVM's UB)."""
    builder, dtype = ctx.builder, instr.dtype
    if _is_float(dtype):
        return ctx.math("fmod", dtype, a, b)
    divisor, is_zero, is_minus_one = _safe_divisor(ctx, dtype, a, b)
    if not _signed(dtype):
        return builder.select(is_zero, _zero(a), builder.urem(a, divisor))
    return builder.select(builder.or_(is_zero, is_minus_one), _zero(a), builder.srem(a, divisor))


def _magnitudes(ctx, dtype, a, b):
    """|a| and |b| as NumPy's npy_gcd takes them: the negation wraps (the most negative value
    stays itself) and the bits are then read as unsigned, so its magnitude is right."""
    if not _signed(dtype):
        return a, b
    builder = ctx.builder
    return tuple(builder.select(builder.icmp_signed("<", value, _zero(value)), builder.neg(value), value)
                 for value in (a, b))


def _euclid(ctx, a, b):
    """gcd of two magnitudes (unsigned bits): Euclid's loop inside the element's code."""
    builder = ctx.builder
    before = builder.block
    header = builder.append_basic_block("gcd.header")
    body = builder.append_basic_block("gcd.body")
    after = builder.append_basic_block("gcd.after")
    builder.branch(header)
    builder.position_at_end(header)
    divisor = builder.phi(a.type, name="gcd.a")
    value = builder.phi(a.type, name="gcd.b")
    divisor.add_incoming(a, before)
    value.add_incoming(b, before)
    builder.cbranch(builder.icmp_unsigned("!=", divisor, _zero(a)), body, after)
    builder.position_at_end(body)
    remainder = builder.urem(value, divisor)  # (the divisor is not 0 here)
    divisor.add_incoming(remainder, body)
    value.add_incoming(divisor, body)
    builder.branch(header)
    builder.position_at_end(after)
    return value


def _gcd(ctx, instr, a, b):
    """NumPy's npy_gcd: Euclid on the magnitudes, unsigned (gcd(-128, 0) is -128 in int8)."""
    return _euclid(ctx, *_magnitudes(ctx, instr.dtype, a, b))


def _lcm(ctx, instr, a, b):
    """NumPy's npy_lcm: on the magnitudes, unsigned: 0 when the gcd is 0, else |a| / gcd * |b|
    (wrapping: the product's low bits, as NumPy's cast back to the type)."""
    builder = ctx.builder
    a, b = _magnitudes(ctx, instr.dtype, a, b)
    divisor = _euclid(ctx, a, b)
    is_zero = builder.icmp_unsigned("==", divisor, _zero(a))
    safe = builder.select(is_zero, ctx.constant(1, instr.dtype), divisor)
    return builder.select(is_zero, _zero(a), builder.mul(builder.udiv(a, safe), b))


def _constant_exponent(node):
    """A small integer exponent known at compile time (broadcast of a constant), else None."""
    while node.opcode in ("broadcast", "reshape"):
        node = node.operands[0]
    if node.opcode != "constant" or node.size != 1:
        return None
    value = float(node.attr("literal").array.reshape(-1)[0])
    return int(value) if value in (2.0, 3.0, 4.0) else None


def _multiplies(builder, base, exponent):
    """x**2, x**3, x**4 as multiplies: vectorizes; within 2 ULP of pow (README tolerance)."""
    square = builder.fmul(base, base)
    if exponent == 2:
        return square
    return builder.fmul(square, base) if exponent == 3 else builder.fmul(square, square)


def _power(ctx, instr, a, b):
    builder, dtype = ctx.builder, instr.dtype
    if _is_float(dtype):
        exponent = _constant_exponent(instr.operands[1])
        if exponent is not None:
            return _multiplies(builder, a, exponent)
        return ctx.math("power", dtype, a, b)
    # Exponentiation by squaring, one loop trip per exponent bit. The trip count is opaque so
    # LLVM keeps the loop: 64 unrolled steps per element made O3 take seconds per kernel, and
    # minutes when the base is loop-invariant (a scalar ** array; see loops.opaque_index).
    slots = [entry_alloca(builder, a.type, name) for name in ("result", "base", "exponent")]
    for slot, initial in zip(slots, (ctx.constant(1, dtype), a, b)):
        builder.store(initial, slot)
    with for_range(builder, 0, opaque_index(builder, index_constant(dtype.itemsize * 8)), name="bit"):
        result, base, exponent = (builder.load(slot) for slot in slots)
        odd = builder.trunc(exponent, ir.IntType(1))
        builder.store(builder.select(odd, builder.mul(result, base), result), slots[0])
        builder.store(builder.mul(base, base), slots[1])
        builder.store(builder.lshr(exponent, ctx.constant(1, dtype)), slots[2])
    result = builder.load(slots[0])
    if not _signed(dtype):
        return result
    # lazyarr's rule for x ** -n: 1 for x == 1, +-1 for x == -1, else 0.
    negative = builder.icmp_signed("<", b, _zero(b))
    one, minus_one = ctx.constant(1, dtype), ctx.constant(-1, dtype)
    odd_exponent = builder.trunc(b, ir.IntType(1))
    inverse = builder.select(builder.icmp_signed("==", a, one), one, _zero(a))
    minus = builder.select(odd_exponent, minus_one, one)
    inverse = builder.select(builder.icmp_signed("==", a, minus_one), minus, inverse)
    return builder.select(negative, inverse, result)


def _extremum(strictly, nan_from):
    """maximum/minimum (NaN-propagating) and fmax/fmin (NaN-ignoring), as NumPy computes them.

    maximum picks `a` only when strictly greater (or NaN), so maximum(0.0, -0.0) is -0.0 as
    in NumPy; fmax/fmin follow C's fmax: between equal zeros, +0.0 for fmax, -0.0 for fmin.
    """

    def emit(ctx, instr, a, b):
        builder, dtype = ctx.builder, instr.dtype
        if _is_float(dtype):
            prefer_a = builder.fcmp_ordered(strictly, a, b)
            if nan_from == "either":
                prefer_a = builder.or_(prefer_a, builder.fcmp_unordered("uno", a, a))
            else:
                width = ir.IntType(dtype.itemsize * 8)
                negative_a = builder.icmp_signed("<", builder.bitcast(a, width), ir.Constant(width, 0))
                want_negative = ir.Constant(ir.IntType(1), int(strictly == "<"))
                tie = builder.and_(
                    builder.fcmp_ordered("==", a, b),
                    builder.icmp_unsigned("==", negative_a, want_negative),
                )
                prefer_a = builder.or_(builder.or_(prefer_a, tie), builder.fcmp_unordered("uno", b, b))
            return builder.select(prefer_a, a, b)
        compare = builder.icmp_signed if _signed(dtype) else builder.icmp_unsigned
        return builder.select(compare(strictly, a, b), a, b)

    return emit


def _bitwise(name):
    def emit(ctx, instr, a, b):
        return getattr(ctx.builder, name)(a, b)

    return emit


def _masked_shift_amount(ctx, b, dtype):
    """The shift amount's low bits (`b & (width - 1)`): a defined shift for any `b`, which the
    caller's `b < width` select overrides. Not `select(b < width, b, 0)`: LLVM folds that select
    and the shift's into one NVPTX `shl`, which clamps only its 32-bit amount, so a 64-bit
    amount of 2**32 or more shifted by its low half (1 << 2**32 gave 1 on an H100)."""
    return ctx.builder.and_(b, ctx.constant(dtype.itemsize * 8 - 1, dtype))


def _shift_left(ctx, instr, a, b):
    builder, dtype = ctx.builder, instr.dtype
    width = ctx.constant(dtype.itemsize * 8, dtype)
    in_range = builder.icmp_unsigned("<", b, width)
    safe = _masked_shift_amount(ctx, b, dtype)
    return builder.select(in_range, builder.shl(a, safe), _zero(a))


def _shift_right(ctx, instr, a, b):
    builder, dtype = ctx.builder, instr.dtype
    width = ctx.constant(dtype.itemsize * 8, dtype)
    in_range = builder.icmp_unsigned("<", b, width)
    safe = _masked_shift_amount(ctx, b, dtype)
    if _signed(dtype):
        saturated = builder.select(builder.icmp_signed("<", a, _zero(a)), ctx.constant(-1, dtype), _zero(a))
        return builder.select(in_range, builder.ashr(a, safe), saturated)
    return builder.select(in_range, builder.lshr(a, safe), _zero(a))


def _compare(ctx, instr, a, b):
    builder, dtype, direction = ctx.builder, instr.operands[0].dtype, instr.attr("direction")
    operator = _COMPARE_SIGNED[direction]
    if _is_float(dtype):
        if direction == "NE":
            return builder.fcmp_unordered("!=", a, b)
        return builder.fcmp_ordered(operator, a, b)
    if _signed(dtype):
        return builder.icmp_signed(operator, a, b)
    return builder.icmp_unsigned(operator, a, b)


def _libm_binary(name):
    def emit(ctx, instr, a, b):
        return ctx.math(name, instr.dtype, a, b)

    return emit


def _nextafter(ctx, instr, a, b):
    """C's nextafter on the bit pattern, for every float width (float16 has no libm version)."""
    builder = ctx.builder
    width = ir.IntType(instr.dtype.itemsize * 8)
    bits = builder.bitcast(a, width)
    toward_larger_magnitude = builder.xor(
        builder.fcmp_ordered("<", a, b), builder.icmp_signed("<", bits, ir.Constant(width, 0))
    )
    stepped = builder.select(
        toward_larger_magnitude,
        builder.add(bits, ir.Constant(width, 1)),
        builder.sub(bits, ir.Constant(width, 1)),
    )
    smallest = builder.bitcast(ir.Constant(width, 1), a.type)
    from_zero = ctx.intrinsic("llvm.copysign", smallest, b)
    zero = ir.Constant(a.type, 0.0)
    result = builder.select(builder.fcmp_ordered("==", a, zero), from_zero, builder.bitcast(stepped, a.type))
    # On equal arguments C returns y; NumPy's own float16 version returns x (differs for +-0).
    equal_result = a if instr.dtype == dtypes.float16 else b
    result = builder.select(builder.fcmp_ordered("==", a, b), equal_result, result)
    either_nan = builder.fcmp_unordered("uno", a, b)
    return builder.select(either_nan, builder.fadd(a, b), result)


def _copysign(ctx, instr, a, b):
    return ctx.intrinsic("llvm.copysign", a, b)


def _logaddexp(ctx, instr, a, b):
    """NumPy's npy_logaddexp: x + log1p(exp(y - x)) around the larger argument."""
    builder, dtype = ctx.builder, instr.dtype
    difference = builder.fsub(a, b)
    zero = ir.Constant(a.type, 0.0)
    negative_magnitude = builder.fneg(ctx.intrinsic("llvm.fabs", difference))
    tail = ctx.math("log1p", dtype, ctx.math("exp", dtype, negative_magnitude))
    larger = builder.select(builder.fcmp_ordered(">", difference, zero), a, b)
    general = builder.fadd(larger, tail)
    general = builder.select(builder.fcmp_unordered("uno", difference, difference), difference, general)
    log2 = ir.Constant(a.type, 0.6931471805599453)
    return builder.select(builder.fcmp_ordered("==", a, b), builder.fadd(a, log2), general)


BINARY = {
    "add": _add, "subtract": _subtract, "multiply": _multiply, "divide": _divide,
    "floor-divide": _floor_divide, "remainder": _remainder, "fmod": _fmod, "power": _power,
    "gcd": _gcd, "lcm": _lcm,
    "maximum": _extremum(">", "either"), "minimum": _extremum("<", "either"),
    "fmax": _extremum(">", "second"), "fmin": _extremum("<", "second"),
    "and": _bitwise("and_"), "or": _bitwise("or_"), "xor": _bitwise("xor"),
    "shift-left": _shift_left, "shift-right": _shift_right, "compare": _compare,
    "atan2": _libm_binary("atan2"), "hypot": _libm_binary("hypot"), "nextafter": _nextafter,
    "copysign": _copysign, "logaddexp": _logaddexp, **FLOAT_BITS_BINARY,
}
