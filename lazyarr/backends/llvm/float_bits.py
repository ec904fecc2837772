"""Floating-point representation ops on the bit pattern: ldexp, frexp and spacing, exactly.

Each is straight-line LLVM IR (integer ops on the float's bits, selects and exact multiplies
by powers of two), so one emitter serves the CPU and NVPTX and loops over it can vectorize, with
no libm call and no branch. (LLVM 22's intrinsics would not: on x86-64 `llvm.frexp` becomes a
call of libm's `frexp` through memory, and `llvm.ldexp` a call of `ldexp` unless AVX-512
gives `vscalefsd`; NVPTX expands both inline, as this module does.)

    ldexp           musl's scalbn: at most two scalings by 2**±(range), then one multiply by
                    2**n built from bits; only the last multiply rounds (in the subnormal
                    range the earlier ones are exact: the pre-scale leaves n < -mantissa bits)
    frexp-mantissa  the exponent field replaced by the bias - 1 (subnormals first scaled
    frexp-exponent  into the normal range); 0, inf and NaN give themselves and exponent 0
    spacing         NumPy's npy_spacing: the next value away from zero minus x (+0 and -0 both
                    give the smallest subnormal), NaN for inf; float16 is NumPy's own
                    npy_half_spacing on the 16 bits, which differs (see `_half_spacing`)

float16 ldexp and frexp go through float32 as NumPy's half loops do (npy_ldexpf, npy_frexpf,
then rounded to half), so results are NumPy's by construction.
"""

from __future__ import annotations

import llvmlite.ir as ir

from ... import dtypes

I32 = ir.IntType(32)


class _Layout:
    """Bit layout of a binary float: width, explicit mantissa bits, exponent bias."""

    def __init__(self, width: int, mantissa_bits: int, bias: int):
        self.width, self.mantissa_bits, self.bias = width, mantissa_bits, bias
        self.bits = ir.IntType(width)
        self.exponent_mask = (1 << (width - 1 - mantissa_bits)) - 1

    def integer(self, value: int) -> ir.Constant:
        return ir.Constant(self.bits, value & ((1 << self.width) - 1))


_LAYOUTS = {
    dtypes.float16: _Layout(16, 10, 15),
    dtypes.float32: _Layout(32, 23, 127),
    dtypes.float64: _Layout(64, 52, 1023),
}


def _power_of_two(kind: ir.Type, exponent: int) -> ir.Constant:
    return ir.Constant(kind, 2.0 ** exponent)


def _widened(ctx, dtype, value):
    """float16 values as float32 (exact), as NumPy's half loops compute; others unchanged."""
    if dtype == dtypes.float16:
        return dtypes.float32, ctx.builder.fpext(value, ir.FloatType())
    return dtype, value


# -- ldexp ----------------------------------------------------------------------------------------


def _scalbn(builder: ir.IRBuilder, layout: _Layout, x, exponent):
    """x * 2**exponent (i32) rounded once, as musl's scalbn, with selects for its branches."""
    kind = x.type
    largest = layout.bias                          # 1023: 2**1023 is the largest power of two
    smallest = 1 - layout.bias                     # -1022: 2**-1022 the smallest normal one
    down_step = layout.bias - 2 - layout.mantissa_bits   # 969: scale by 2**-1022 * 2**53
    up, down = _power_of_two(kind, largest), _power_of_two(kind, -down_step)
    for _ in range(2):
        too_big = builder.icmp_signed(">", exponent, ir.Constant(I32, largest))
        too_small = builder.icmp_signed("<", exponent, ir.Constant(I32, smallest))
        x = builder.select(too_big, builder.fmul(x, up), builder.select(too_small, builder.fmul(x, down), x))
        # (the unselected sum may wrap for extreme exponents: integer wrap is defined)
        exponent = builder.select(
            too_big, builder.sub(exponent, ir.Constant(I32, largest)),
            builder.select(too_small, builder.add(exponent, ir.Constant(I32, down_step)), exponent),
        )
    exponent = builder.select(builder.icmp_signed(">", exponent, ir.Constant(I32, largest)),
                              ir.Constant(I32, largest), exponent)
    exponent = builder.select(builder.icmp_signed("<", exponent, ir.Constant(I32, smallest)),
                              ir.Constant(I32, smallest), exponent)
    biased = builder.add(exponent, ir.Constant(I32, layout.bias))  # in [1, 2 * bias]: a normal float
    if layout.width > 32:
        biased = builder.zext(biased, layout.bits)
    scale = builder.bitcast(builder.shl(biased, layout.integer(layout.mantissa_bits)), kind)
    return builder.fmul(x, scale)


def ldexp(ctx, instr, x, exponent):
    """NumPy's ldexp(x, n) for float x and int32 n (float16 through npy_ldexpf)."""
    dtype, wide = _widened(ctx, instr.dtype, x)
    result = _scalbn(ctx.builder, _LAYOUTS[dtype], wide, exponent)
    return ctx.builder.fptrunc(result, x.type) if result.type != x.type else result


# -- frexp ----------------------------------------------------------------------------------------


def _frexp(builder: ir.IRBuilder, layout: _Layout, x):
    """(mantissa in [0.5, 1) with x's sign, i32 exponent) with x = mantissa * 2**exponent;
    (x, 0) for 0, inf and NaN (C's frexp, as glibc and NumPy give them)."""
    scale_bits = 64  # musl's: brings every subnormal into the normal range
    bits = builder.bitcast(x, layout.bits)
    magnitude = builder.and_(bits, layout.integer((1 << (layout.width - 1)) - 1))
    subnormal = builder.icmp_unsigned("<", magnitude, layout.integer(1 << layout.mantissa_bits))
    scaled = builder.select(subnormal, builder.fmul(x, _power_of_two(x.type, scale_bits)), x)
    scaled_bits = builder.bitcast(scaled, layout.bits)
    field = builder.and_(builder.lshr(scaled_bits, layout.integer(layout.mantissa_bits)),
                         layout.integer(layout.exponent_mask))
    if layout.width > 32:
        field = builder.trunc(field, I32)
    exponent = builder.sub(field, builder.select(subnormal, ir.Constant(I32, layout.bias - 1 + scale_bits),
                                                 ir.Constant(I32, layout.bias - 1)))
    field_mask = layout.integer(layout.exponent_mask << layout.mantissa_bits)
    mantissa_bits = builder.or_(builder.and_(scaled_bits, builder.xor(field_mask, layout.integer(-1))),
                                layout.integer((layout.bias - 1) << layout.mantissa_bits))
    infinity = layout.integer(layout.exponent_mask << layout.mantissa_bits)
    special = builder.or_(builder.icmp_unsigned("==", magnitude, layout.integer(0)),
                          builder.icmp_unsigned(">=", magnitude, infinity))  # 0, inf, NaN
    mantissa = builder.select(special, x, builder.bitcast(mantissa_bits, x.type))
    return mantissa, builder.select(special, ir.Constant(I32, 0), exponent)


def _frexp_of(ctx, instr, x):
    dtype, wide = _widened(ctx, instr.operands[0].dtype, x)
    mantissa, exponent = _frexp(ctx.builder, _LAYOUTS[dtype], wide)
    if mantissa.type != x.type:
        mantissa = ctx.builder.fptrunc(mantissa, x.type)  # exact: 11 bits or fewer
    return mantissa, exponent


def frexp_mantissa(ctx, instr, x):
    return _frexp_of(ctx, instr, x)[0]


def frexp_exponent(ctx, instr, x):
    return _frexp_of(ctx, instr, x)[1]


# -- spacing --------------------------------------------------------------------------------------


def _float_spacing(builder: ir.IRBuilder, layout: _Layout, x):
    """npy_spacing: _next(x, away from zero) - x (exact: adjacent floats); NaN for inf."""
    bits = builder.bitcast(x, layout.bits)
    following = builder.bitcast(builder.add(bits, layout.integer(1)), x.type)  # max -> inf
    zero = ir.Constant(x.type, 0.0)
    smallest = builder.bitcast(layout.integer(1), x.type)
    following = builder.select(builder.fcmp_ordered("==", x, zero), smallest, following)  # -0 too
    infinite = builder.fcmp_ordered("==", builder.call(
        builder.module.declare_intrinsic("llvm.fabs", [x.type]), [x]), ir.Constant(x.type, float("inf")))
    return builder.select(infinite, ir.Constant(x.type, float("nan")), builder.fsub(following, x))


def _half_spacing(builder: ir.IRBuilder, x):
    """NumPy's npy_half_spacing, line for line on the 16 bits: always positive; NaN for inf and
    NaN; inf for the largest half (not for its negative); for a negative power of two (and
    -0) the spacing *below* it, toward zero; otherwise the spacing above |x|."""
    bits_type = ir.IntType(16)

    def half(value):
        return ir.Constant(bits_type, value)

    def above(left, value):
        return builder.icmp_unsigned(">", left, half(value))

    def shifted_one(field_shift, offset):
        # 1 << ((h_exp >> 10) - offset), the amount masked so the unselected arm stays defined
        amount = builder.and_(builder.sub(field_shift, half(offset)), half(15))
        return builder.shl(half(1), amount)

    bits = builder.bitcast(x, bits_type)
    exponent_field = builder.and_(bits, half(0x7C00))
    fraction = builder.and_(bits, half(0x03FF))
    field_shift = builder.lshr(exponent_field, half(10))
    toward_zero = builder.select(
        above(exponent_field, 0x2C00), builder.sub(exponent_field, half(0x2C00)),
        builder.select(above(exponent_field, 0x0400), shifted_one(field_shift, 2), half(1)))
    ordinary = builder.select(
        above(exponent_field, 0x2800), builder.sub(exponent_field, half(0x2800)),
        builder.select(above(exponent_field, 0x0400), shifted_one(field_shift, 1), half(1)))
    negative_boundary = builder.and_(builder.icmp_unsigned(">=", bits, half(0x8000)),
                                     builder.icmp_unsigned("==", fraction, half(0)))
    result = builder.select(negative_boundary, toward_zero, ordinary)
    result = builder.select(builder.icmp_unsigned("==", bits, half(0x7BFF)), half(0x7C00), result)
    result = builder.select(builder.icmp_unsigned("==", exponent_field, half(0x7C00)), half(0x7E00), result)
    return builder.bitcast(result, x.type)


def spacing(ctx, instr, x):
    if instr.dtype == dtypes.float16:
        return _half_spacing(ctx.builder, x)
    return _float_spacing(ctx.builder, _LAYOUTS[instr.dtype], x)


UNARY = {"frexp-mantissa": frexp_mantissa, "frexp-exponent": frexp_exponent, "spacing": spacing}
BINARY = {"ldexp": ldexp}
