"""sin and cos: reduction by pi/2, polynomials on [-pi/4, pi/4], quadrant by select.

float32 works in float64 inside. Up to 2^20, Cody-Waite: q = rint(x*2/pi), r = x - q*pi/2
with pi/2 in two parts (33 + 53 bits; q*head is exact). Beyond, a vectorizable Payne-Hanek:
x = M*2^e (M the 24-bit significand), and a table holds (2^e * 2/pi) mod 4 per exponent in
four 28-bit pieces, so that M*piece is exact and x*2/pi mod 4 comes out to ~2^-86. fdlibm's
polynomials in double then give results within about 0.5 ULP after rounding to float; the
whole float32 path is straight-line code (the table loads become gathers).

float64 follows fdlibm: three-part pi/2 (the medium case of __ieee754_rem_pio2, always
refined to its third step) gives the reduced argument as a double-double, and fdlibm's
__kernel_sin/__kernel_cos use its tail. That is exact for |x| < 2^20; larger finite float64
arguments (rare) go to the C library's sin/cos in a cold branch, so the code then has basic
blocks and a call, and loops around it stay scalar.

`large_arguments="exact"` (the default) is all of the above. `large_arguments="nan"` skips
the large-argument paths, giving NaN for |x| >= 2^20: straight-line code for float64 and
about 2.5x cheaper float32 code (the table loads are gathers), for callers that know their
arguments are small.
"""

from __future__ import annotations

import functools
import math

import llvmlite.ir as ir

from .math_common import (
    FLOAT64,
    FloatKind,
    any_lane,
    call_per_lane,
    compare,
    declare_libm,
    fabs,
    fmuladd,
    kind_of,
    polynomial,
    round_to_integer,
    to_bits,
    where,
)

TWO_OVER_PI = 6.36619772367581382433e-01
LARGE_ARGUMENT = 2.0 ** 20
# pi/2 in parts with trailing zeros (fdlibm's pio2_1, pio2_2, pio2_3) and their tails.
PIO2_1, PIO2_1_TAIL = 1.57079632673412561417e+00, 6.07710050650619224932e-11
PIO2_2, PIO2_2_TAIL = 6.07710050630396597660e-11, 2.02226624879595063154e-21
PIO2_3, PIO2_3_TAIL = 2.02226624871116645580e-21, 8.47842766036889956997e-32

# fdlibm's __kernel_sin / __kernel_cos minimax coefficients on [-pi/4, pi/4].
SIN_COEFFICIENTS = [-1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04,
                    2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10]
COS_COEFFICIENTS = [4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05,
                    -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11]
LIBM_NAMES = {"sin": {"float32": "sinf", "float64": "sin"}, "cos": {"float32": "cosf", "float64": "cos"}}


def _reduce_short(builder, x):
    """(r, quadrant) with x = quadrant*pi/2 + r, for double x whose quotient fits 20 bits."""
    kind = kind_of(x)
    q, quadrant = round_to_integer(builder, builder.fmul(x, kind.constant(TWO_OVER_PI)))
    minus_q = builder.fneg(q)
    r = fmuladd(builder, minus_q, kind.constant(PIO2_1), x)  # exact
    return fmuladd(builder, minus_q, kind.constant(PIO2_1_TAIL), r), quadrant


def _two_over_pi_bits(bits: int) -> int:
    """floor(2/pi * 2^bits), from Machin's formula pi = 16 atan(1/5) - 4 atan(1/239) in integers."""
    guard = 64
    one = 1 << (bits + guard)

    def arctan_of_inverse(denominator: int) -> int:
        term = total = one // denominator
        power, sign = 1, -1
        while term:
            term //= denominator * denominator
            power += 2
            total += sign * (term // power)
            sign = -sign
        return total

    pi = 16 * arctan_of_inverse(5) - 4 * arctan_of_inverse(239)
    return ((2 * one * one) // pi) >> guard


# float32 arguments >= 2^20 have exponents e = -3 .. 104 (x = M * 2^e, M < 2^24); per e the
# table holds (2^e * 2/pi) mod 4 as four pieces of 28 bits each (weights 2^1 .. 2^-110).
LARGE_EXPONENTS = range(-3, 105)
PIECES, PIECE_BITS = 4, 28


@functools.cache
def _large_reduction_table() -> tuple[float, ...]:
    fraction_bits = 400
    two_over_pi = _two_over_pi_bits(fraction_bits)
    mask = (1 << PIECE_BITS) - 1
    table = []
    for exponent in LARGE_EXPONENTS:
        scaled = two_over_pi << exponent if exponent >= 0 else two_over_pi >> -exponent
        scaled %= 4 << fraction_bits
        for piece in range(PIECES):
            weight = (piece + 1) * PIECE_BITS - 2  # the piece's lowest bit is 2^-weight
            table.append(math.ldexp((scaled >> (fraction_bits - weight)) & mask, -weight))
    return tuple(table)


def _table_loads(builder, index, piece: int):
    """table[index*PIECES + piece] per lane (scalar loads; loop vectorizers make gathers of them)."""
    module = builder.module
    table = module.globals.get("lazyarr_two_over_pi_table")
    if table is None:
        values = _large_reduction_table()
        array_type = ir.ArrayType(FLOAT64, len(values))
        table = ir.GlobalVariable(module, array_type, name="lazyarr_two_over_pi_table")
        table.linkage = "internal"
        table.global_constant = True
        table.initializer = ir.Constant(array_type, list(values))

    def load(lane_index):
        position = builder.add(builder.mul(lane_index, ir.Constant(lane_index.type, PIECES)),
                               ir.Constant(lane_index.type, piece))
        return builder.load(builder.gep(table, [ir.Constant(ir.IntType(64), 0), position]), typ=FLOAT64)

    if not isinstance(index.type, ir.VectorType):
        return load(index)
    result = ir.Constant(ir.VectorType(FLOAT64, index.type.count), ir.Undefined)
    for lane in range(index.type.count):
        position = ir.Constant(ir.IntType(32), lane)
        result = builder.insert_element(result, load(builder.extract_element(index, position)), position)
    return result


def _reduce_float32_large(builder, x):
    """(r, quadrant) with x = quadrant*pi/2 + r for finite float32 |x| >= 2^20, r in double."""
    kind = kind_of(x)
    wide = FloatKind(kind.like(FLOAT64))
    index_type = wide.int_type
    bits = to_bits(builder, x)
    biased = builder.and_(builder.lshr(bits, kind.int_constant(23)), kind.int_constant(0xFF))
    index = builder.zext(builder.sub(biased, kind.int_constant(127 + 23 + LARGE_EXPONENTS[0])), index_type)
    # Smaller arguments take the Cody-Waite path; keep their (unused) loads inside the table.
    last = ir.Constant(index_type, len(LARGE_EXPONENTS) - 1)
    index = builder.select(builder.icmp_unsigned(">", index, last), last, index)
    significand = builder.or_(builder.and_(bits, kind.int_constant(0x7FFFFF)), kind.int_constant(0x800000))
    significand = builder.sitofp(significand, wide.type)  # exact
    p0, p1, p2, p3 = (builder.fmul(significand, _table_loads(builder, index, piece))
                      for piece in range(PIECES))
    # p0 < 2^26 with bits down to 2^-26: p0 mod 4 is exact; p1..p3 < 2^-2 are exact products.
    multiple_of_four, _ = round_to_integer(builder, builder.fmul(p0, wide.constant(0.25)))
    f0 = fmuladd(builder, multiple_of_four, wide.constant(-4.0), p0)
    q, quadrant = round_to_integer(builder, builder.fadd(f0, p1))
    t = builder.fsub(f0, q)  # exact
    head = builder.fadd(t, p1)
    p1_part = builder.fsub(head, t)  # TwoSum: head + error == t + p1 exactly
    error = builder.fadd(builder.fsub(t, builder.fsub(head, p1_part)), builder.fsub(p1, p1_part))
    r = builder.fadd(head, builder.fadd(error, builder.fadd(p2, p3)))
    r = builder.fmul(r, wide.constant(math.pi / 2))
    negative = compare(builder, "<", x, kind.constant(0.0))
    r = where(builder, negative, builder.fneg(r), r)
    return r, where(builder, negative, builder.neg(quadrant), quadrant)


def _reduce_long(builder, x):
    """(head, tail, quadrant): fdlibm's medium reduction, refined with pi/2's 2nd and 3rd parts."""
    kind = kind_of(x)
    q, quadrant = round_to_integer(builder, builder.fmul(x, kind.constant(TWO_OVER_PI)))
    minus_q = builder.fneg(q)
    r = fmuladd(builder, minus_q, kind.constant(PIO2_1), x)  # exact
    for part, tail in ((PIO2_2, PIO2_2_TAIL), (PIO2_3, PIO2_3_TAIL)):
        t = r
        w = builder.fmul(q, kind.constant(part))  # exact: q < 2^20, part has 33 bits
        r = builder.fsub(t, w)
        # w = q*tail - (rounding error of t - w)
        w = builder.fsub(builder.fmul(q, kind.constant(tail)), builder.fsub(builder.fsub(t, r), w))
    head = builder.fsub(r, w)  # w is set: the loop runs twice
    return head, builder.fsub(builder.fsub(r, head), w), quadrant


def _kernels_short(builder, r):
    """(sin r, cos r) for |r| <= pi/4 + tiny, in double, for float32 results."""
    kind = kind_of(r)
    z = builder.fmul(r, r)
    sine = fmuladd(builder, builder.fmul(r, z), polynomial(builder, z, SIN_COEFFICIENTS[::-1]), r)
    cosine_tail = builder.fmul(builder.fmul(z, z), polynomial(builder, z, COS_COEFFICIENTS[::-1]))
    cosine = builder.fadd(fmuladd(builder, kind.constant(-0.5), z, kind.constant(1.0)), cosine_tail)
    return sine, cosine


def _kernels_long(builder, x, y):
    """fdlibm's __kernel_sin(x, y, 1) and __kernel_cos(x, y) for x + y in [-pi/4, pi/4]."""
    kind = kind_of(x)
    z = builder.fmul(x, x)
    v = builder.fmul(z, x)
    # sin: x - ((z*(y/2 - v*r) - y) - v*S1), r = S2 + z*(S3 + ...)
    r = polynomial(builder, z, SIN_COEFFICIENTS[:0:-1])
    inner = builder.fsub(builder.fmul(kind.constant(0.5), y), builder.fmul(v, r))
    inner = builder.fsub(builder.fmul(z, inner), y)
    sine = builder.fsub(x, builder.fsub(inner, builder.fmul(v, kind.constant(SIN_COEFFICIENTS[0]))))
    # cos: w + (((1 - w) - hz) + (z*r - x*y)), w = 1 - hz, r = z*(C1 + z*(C2 + ...))
    r = builder.fmul(z, polynomial(builder, z, COS_COEFFICIENTS[::-1]))
    half_z = builder.fmul(kind.constant(0.5), z)
    one = kind.constant(1.0)
    head = builder.fsub(one, half_z)
    correction = builder.fsub(builder.fsub(one, head), half_z)
    correction = builder.fadd(correction, builder.fsub(builder.fmul(z, r), builder.fmul(x, y)))
    return sine, builder.fadd(head, correction)


def _by_quadrant(builder, sine, cosine, quadrant, shift: int):
    """sin(x) (shift 0) or cos(x) = sin(x + pi/2) (shift 1) from sin r, cos r and the quadrant."""
    integer_type = quadrant.type
    lanes = getattr(integer_type, "count", None)
    bool_type = ir.VectorType(ir.IntType(1), lanes) if lanes else ir.IntType(1)
    if shift:
        quadrant = builder.add(quadrant, ir.Constant(integer_type, shift))
    odd = builder.trunc(quadrant, bool_type)
    negative = builder.trunc(builder.lshr(quadrant, ir.Constant(integer_type, 1)), bool_type)
    value = where(builder, odd, cosine, sine)
    return where(builder, negative, builder.fneg(value), value)


def _sin_or_cos(builder, x, shift: int, large_arguments: str):
    kind = kind_of(x)
    if large_arguments not in ("exact", "nan"):
        raise ValueError(f"large_arguments must be 'exact' or 'nan', got {large_arguments!r}")
    magnitude = fabs(builder, x)
    large = builder.and_(compare(builder, ">=", magnitude, kind.constant(LARGE_ARGUMENT)),
                         compare(builder, "!=", magnitude, kind.constant(math.inf)))
    if kind.bits == 32:
        r, quadrant = _reduce_short(builder, builder.fpext(x, kind.like(FLOAT64)))
        if large_arguments == "exact":
            r_large, quadrant_large = _reduce_float32_large(builder, x)
            r = where(builder, large, r_large, r)
            quadrant = where(builder, large, quadrant_large, quadrant)
        sine, cosine = _kernels_short(builder, r)
        value = builder.fptrunc(_by_quadrant(builder, sine, cosine, quadrant, shift), kind.type)
    else:
        head, tail, quadrant = _reduce_long(builder, x)
        sine, cosine = _kernels_long(builder, head, tail)
        value = _by_quadrant(builder, sine, cosine, quadrant, shift)
    if shift == 0:  # sin(-0.0) = -0.0
        value = where(builder, compare(builder, "==", x, kind.constant(0.0)), x, value)
    if large_arguments == "nan":
        return where(builder, large, kind.constant(math.nan), value)
    if kind.bits == 32:
        return value
    function = declare_libm(builder, LIBM_NAMES["cos" if shift else "sin"], [x])
    before = builder.block
    with builder.if_then(any_lane(builder, large), likely=False):
        exact = where(builder, large, call_per_lane(builder, function, x), value)
        slow_end = builder.block
    merged = builder.phi(kind.type)
    merged.add_incoming(value, before)
    merged.add_incoming(exact, slow_end)
    return merged


def emit_sin(builder, x, large_arguments: str = "exact"):
    """sin(x): within 1 ULP; sin(±inf) = sin(NaN) = NaN, sin(-0.0) = -0.0.

    float32: straight-line code. float64: adds basic blocks (the builder ends in a new one)
    for the C library fallback at |x| >= 2^20, unless large_arguments="nan".
    """
    return _sin_or_cos(builder, x, 0, large_arguments)


def emit_cos(builder, x, large_arguments: str = "exact"):
    """cos(x): within 1 ULP; cos(±inf) = cos(NaN) = NaN. Blocks as for emit_sin."""
    return _sin_or_cos(builder, x, 1, large_arguments)
