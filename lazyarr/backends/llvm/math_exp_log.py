"""exp, expm1, exp2, log, log1p, log2, log10, tanh, sigmoid and logaddexp as straight-line IR.

exp family: Cody-Waite reduction x = n*ln2 + r (|r| <= ln2/2, ln2 split in two so n*ln2_hi
is exact), then exp(r) = 1 + r + r^2*P(r) (Cephes' minimax P for float32, Taylor terms to
r^13/13! for float64), scaled by 2^n in two exact steps (overflow -> inf, subnormals rounded
once). log family: x = 2^k * m with m in [sqrt(1/2), sqrt(2)), f = m - 1, then Cephes'
polynomial (float32) or fdlibm's s = f/(2+f) series (float64); subnormal inputs are scaled up
first. Special values follow NumPy: exp(-inf) = 0, log(0) = -inf, log(x<0) = NaN, NaN -> NaN.
Accuracy against correctly rounded results is measured in tests/backends/test_llvm_math.py.
"""

from __future__ import annotations

import math

from .math_common import (
    FloatKind,
    clamp,
    compare,
    copysign,
    fabs,
    fmuladd,
    from_bits,
    is_nan,
    kind_of,
    polynomial,
    power_of_two,
    round_to_integer,
    scale_by_power_of_two,
    to_bits,
    where,
)

LOG2_E = 1.4426950408889634
LN2 = 0.6931471805599453
LOG10_E = 0.4342944819032518
LOG10_2_HIGH, LOG10_2_LOW = 0.30078125, 0.30102999566398120 - 0.30078125  # 7-bit head: k*head exact

# Per dtype: ln2 split for Cody-Waite (the head has trailing zeros, so n*head is exact), the
# clamp bounds of exp's argument (beyond them the result is inf or 0 anyway), expm1's lower
# clamp (expm1 rounds to -1 below it) and exp's polynomial P (highest power first).
EXP_CONSTANTS = {
    "float32": {
        "ln2_high": 0.693359375, "ln2_low": -2.12194440e-4,
        "low": -104.0, "high": 89.0, "expm1_low": -20.0,
        "polynomial": [1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3,
                       4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1],
    },
    "float64": {
        "ln2_high": 6.93147180369123816490e-01, "ln2_low": 1.90821492927058770002e-10,
        "low": -746.0, "high": 710.0, "expm1_low": -40.0,
        "polynomial": [1.0 / math.factorial(power) for power in range(13, 1, -1)],
    },
}


def _exp_reduced(builder, x, low: float | None, high: float | None):
    """(n as integer, r, r^2*P(r)) with x = n*ln2 + r after clamping x to [low, high] (no
    clamp when they are None: the caller's x lies within exp's range already).

    exp(r) - 1 = r + r^2*P(r); callers add the two parts in the order that suits them.
    """
    kind = kind_of(x)
    constants = EXP_CONSTANTS[kind.dtype]
    if low is not None:
        x = clamp(builder, x, low, high)
    n_float, n_integer = round_to_integer(builder, builder.fmul(x, kind.constant(LOG2_E)))
    minus_n = builder.fneg(n_float)
    r = fmuladd(builder, minus_n, kind.constant(constants["ln2_high"]), x)  # exact
    r = fmuladd(builder, minus_n, kind.constant(constants["ln2_low"]), r)
    p = polynomial(builder, r, constants["polynomial"])
    return n_integer, r, builder.fmul(builder.fmul(r, r), p)


def emit_exp(builder, x):
    """e^x. NaN -> NaN, +inf -> inf (also on overflow), -inf -> 0 (also on underflow)."""
    kind = kind_of(x)
    constants = EXP_CONSTANTS[kind.dtype]
    n, r, correction = _exp_reduced(builder, x, constants["low"], constants["high"])
    q = builder.fadd(r, correction)
    return scale_by_power_of_two(builder, builder.fadd(q, kind.constant(1.0)), n, kind)


def emit_exp2(builder, x):
    """2^x: x = n + f exactly, 2^f = e^(f*ln2) by exp's polynomial, scaled by 2^n."""
    kind = kind_of(x)
    constants = EXP_CONSTANTS[kind.dtype]
    x = clamp(builder, x, constants["low"] * LOG2_E, constants["high"] * LOG2_E)
    n_float, n = round_to_integer(builder, x)
    r = builder.fmul(builder.fsub(x, n_float), kind.constant(LN2))
    p = polynomial(builder, r, constants["polynomial"])
    q = fmuladd(builder, builder.fmul(r, r), p, r)
    return scale_by_power_of_two(builder, builder.fadd(q, kind.constant(1.0)), n, kind)


def emit_expm1(builder, x):
    """e^x - 1 without cancellation near 0: 2^n*(r + r^2*P) + (2^n - 1) while 2^n - 1 is exact.

    e^-inf - 1 = -1, -0.0 keeps its sign, overflow gives inf.
    """
    kind = kind_of(x)
    constants = EXP_CONSTANTS[kind.dtype]
    n, r, correction = _exp_reduced(builder, x, constants["expm1_low"], constants["high"])
    limit = kind.int_constant(kind.mantissa_bits + 2)
    large = builder.icmp_signed(">", n, limit)
    # 2^n for n <= mantissa_bits + 2: t - 1 is exact there; beyond it e^x - 1 rounds like e^x.
    one = kind.constant(1.0)
    t = scale_by_power_of_two(builder, one, builder.select(large, limit, n), kind)
    # (t*r + (t - 1)) + t*r^2*P(r): t*r is exact, so q = r + r^2*P is never rounded on its own.
    near = fmuladd(builder, t, correction, fmuladd(builder, t, r, builder.fsub(t, one)))
    q = builder.fadd(r, correction)
    far = builder.fsub(scale_by_power_of_two(builder, builder.fadd(q, one), n, kind), one)
    result = where(builder, large, far, near)
    return where(builder, compare(builder, "==", x, kind.constant(0.0)), x, result)  # keeps -0.0


def _log_reduced(builder, x):
    """(k, f, tail) with log(x) = k*ln2 + f + tail for positive finite x (others give garbage).

    m = x / 2^k lies in [sqrt(1/2), sqrt(2)), f = m - 1 is exact and tail is small.
    """
    kind = kind_of(x)
    if kind.bits == 32:
        return _log_reduced_float32(builder, x, kind)
    return _log_reduced_float64(builder, x, kind)


def _log_reduced_float32(builder, x, kind: FloatKind):
    subnormal = compare(builder, "<", x, kind.constant(2.0 ** -126))
    x = where(builder, subnormal, builder.fmul(x, kind.constant(2.0 ** 23)), x)
    bits = to_bits(builder, x)
    exponent = builder.sub(builder.lshr(bits, kind.int_constant(23)), kind.int_constant(126))
    exponent = builder.sub(exponent, builder.select(subnormal, kind.int_constant(23), kind.int_constant(0)))
    mantissa_bits = builder.and_(bits, kind.int_constant(0x007FFFFF))
    mantissa_bits = builder.or_(mantissa_bits, kind.int_constant(0x3F000000))
    m = from_bits(builder, mantissa_bits, kind)  # in [0.5, 1)
    below = compare(builder, "<", m, kind.constant(0.707106781186547524))
    one = kind.constant(1.0)
    f = where(builder, below, builder.fsub(builder.fadd(m, m), one), builder.fsub(m, one))
    exponent = builder.sub(exponent, builder.select(below, kind.int_constant(1), kind.int_constant(0)))
    z = builder.fmul(f, f)
    p = polynomial(builder, f, [
        7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
        -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1,
    ])
    tail = fmuladd(builder, kind.constant(-0.5), z, builder.fmul(builder.fmul(f, z), p))
    return builder.sitofp(exponent, kind.type), f, tail


def _log_reduced_float64(builder, x, kind: FloatKind):
    """fdlibm's __ieee754_log without branches (both of its final forms, chosen by select)."""
    subnormal = compare(builder, "<", x, kind.constant(2.0 ** -1022))
    x = where(builder, subnormal, builder.fmul(x, kind.constant(2.0 ** 54)), x)
    bits = to_bits(builder, x)
    high = builder.lshr(bits, kind.int_constant(32))
    k = builder.sub(builder.lshr(high, kind.int_constant(20)), kind.int_constant(1023))
    k = builder.sub(k, builder.select(subnormal, kind.int_constant(54), kind.int_constant(0)))
    high_mantissa = builder.and_(high, kind.int_constant(0x000FFFFF))
    # Mantissas at or above sqrt(2)'s go down one binade: exponent 0x3fe instead of 0x3ff.
    upper = builder.and_(builder.add(high_mantissa, kind.int_constant(0x95F64)), kind.int_constant(0x100000))
    new_high = builder.or_(high_mantissa, builder.xor(upper, kind.int_constant(0x3FF00000)))
    low_word = builder.and_(bits, kind.int_constant(0xFFFFFFFF))
    m = from_bits(builder, builder.or_(builder.shl(new_high, kind.int_constant(32)), low_word), kind)
    k = builder.add(k, builder.lshr(upper, kind.int_constant(20)))
    f = builder.fsub(m, kind.constant(1.0))
    s = builder.fdiv(f, builder.fadd(kind.constant(2.0), f))
    z = builder.fmul(s, s)
    w = builder.fmul(z, z)
    t1 = builder.fmul(w, polynomial(builder, w, [1.531383769920937332e-01, 2.222219843214978396e-01,
                                                 3.999999999940941908e-01]))
    t2 = builder.fmul(z, polynomial(builder, w, [1.479819860511658591e-01, 1.818357216161805012e-01,
                                                 2.857142874366239149e-01, 6.666666666666735130e-01]))
    r = builder.fadd(t2, t1)
    half_f_squared = builder.fmul(builder.fmul(kind.constant(0.5), f), f)
    # fdlibm: f - (hfsq - s*(hfsq + R)) when m is far from 1, f - s*(f - R) near it.
    far_tail = builder.fsub(builder.fmul(s, builder.fadd(half_f_squared, r)), half_f_squared)
    near_tail = builder.fneg(builder.fmul(s, builder.fsub(f, r)))
    window = builder.or_(builder.sub(high_mantissa, kind.int_constant(0x6147A)),
                         builder.sub(kind.int_constant(0x6B851), high_mantissa))
    far = builder.icmp_signed(">", window, kind.int_constant(0))
    return builder.sitofp(k, kind.type), f, where(builder, far, far_tail, near_tail)


def _log_specials(builder, x, result):
    """NumPy's values: log(+inf) = inf, log(x < 0) = NaN, log(±0) = -inf, log(NaN) = NaN."""
    kind = kind_of(x)
    infinity = kind.constant(math.inf)
    result = where(builder, compare(builder, "==", x, infinity), infinity, result)
    result = where(builder, compare(builder, "<", x, kind.constant(0.0)), kind.constant(math.nan), result)
    result = where(builder, compare(builder, "==", x, kind.constant(0.0)), kind.constant(-math.inf), result)
    return where(builder, is_nan(builder, x), x, result)


def _log_combine(builder, k, f, tail, kind: FloatKind):
    """k*ln2_high + (f + (tail + k*ln2_low)): the small terms first, the exact product last."""
    constants = EXP_CONSTANTS[kind.dtype]
    tail = fmuladd(builder, k, kind.constant(constants["ln2_low"]), tail)
    return fmuladd(builder, k, kind.constant(constants["ln2_high"]), builder.fadd(f, tail))


def emit_log(builder, x):
    """Natural logarithm."""
    k, f, tail = _log_reduced(builder, x)
    return _log_specials(builder, x, _log_combine(builder, k, f, tail, kind_of(x)))


def emit_log2(builder, x):
    """Base-2 logarithm: k + log(m)*log2(e), exact for powers of two."""
    kind = kind_of(x)
    k, f, tail = _log_reduced(builder, x)
    log2_e = kind.constant(LOG2_E)
    fraction = fmuladd(builder, f, log2_e, builder.fmul(tail, log2_e))
    return _log_specials(builder, x, builder.fadd(k, fraction))


def emit_log10(builder, x):
    """Base-10 logarithm: k*log10(2) (split in two) + log(m)*log10(e)."""
    kind = kind_of(x)
    k, f, tail = _log_reduced(builder, x)
    log10_e = kind.constant(LOG10_E)
    fraction = fmuladd(builder, f, log10_e, builder.fmul(tail, log10_e))
    fraction = fmuladd(builder, k, kind.constant(LOG10_2_LOW), fraction)
    return _log_specials(builder, x, fmuladd(builder, k, kind.constant(LOG10_2_HIGH), fraction))


def emit_log1p(builder, x):
    """log(1 + x) accurate near 0: log of u = 1 + x plus the rounding error of u, c/u (as fdlibm).

    c = x - (u - 1) for u < 2 and 1 - (u - x) above, both exact (Sterbenz), so that
    log1p(x) = log(u) + c/u to first order; -0.0 keeps its sign.
    """
    kind = kind_of(x)
    one = kind.constant(1.0)
    u = builder.fadd(x, one)
    k, f, tail = _log_reduced(builder, u)
    correction = where(builder, compare(builder, ">=", u, kind.constant(2.0)),
                       builder.fsub(one, builder.fsub(u, x)), builder.fsub(x, builder.fsub(u, one)))
    tail = builder.fadd(tail, builder.fdiv(correction, u))
    result = _log_specials(builder, u, _log_combine(builder, k, f, tail, kind))
    return where(builder, compare(builder, "==", x, kind.constant(0.0)), x, result)


# Cephes' tanh near 0 (|x| < 0.625): x + x*s*P(s) for float32, x + x*s*P(s)/Q(s) for float64,
# s = x^2 (coefficients highest power first; Q's leading 1 included).
TANH_SMALL = {
    "float32": ([-5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2, 1.33314422036e-1,
                 -3.33332819422e-1], None),
    "float64": ([-9.64399179425052238628e-1, -9.92877231001918586564e1, -1.61468768441708447952e3],
                [1.0, 1.12811678491632931402e2, 2.23548839060100448583e3, 4.84406305325125486048e3]),
}


def emit_tanh(builder, x):
    """tanh(x): Cephes' x + x^3*R(x^2) for |x| < 0.625, else sign(x) * (1 - 2/(e^(2|x|) + 1)).

    e^(2|x|) >= 3.4 where it is used, so adding 1 loses nothing (no expm1 needed). |x| is
    clamped where tanh rounds to 1 (10 for float32, 22 for float64), so ±inf -> ±1; -0.0
    keeps its sign.
    """
    kind = kind_of(x)
    magnitude = clamp(builder, fabs(builder, x), 0.0, 10.0 if kind.bits == 32 else 22.0)
    # e^(2|x|) for 2|x| in [0, 44]: exp's clamp is a no-op there and 2^n (n <= 64) is normal, so
    # one multiply scales it, exactly as exp's two do (~15 % less work for a float32 tanh).
    n, r, correction = _exp_reduced(builder, builder.fadd(magnitude, magnitude), None, None)
    exponential = builder.fmul(builder.fadd(builder.fadd(r, correction), kind.constant(1.0)),
                               power_of_two(builder, n, kind))
    one = kind.constant(1.0)
    ratio = builder.fsub(one, builder.fdiv(kind.constant(2.0), builder.fadd(exponential, one)))
    numerator, denominator = TANH_SMALL[kind.dtype]
    s = builder.fmul(x, x)
    rational = polynomial(builder, s, numerator)
    if denominator:
        rational = builder.fdiv(rational, polynomial(builder, s, denominator))
    small = fmuladd(builder, builder.fmul(x, s), rational, x)
    small = where(builder, compare(builder, "==", x, kind.constant(0.0)), x, small)  # keeps -0.0
    large = copysign(builder, ratio, x)
    return where(builder, compare(builder, "<", magnitude, kind.constant(0.625)), small, large)


def emit_sigmoid(builder, x):
    """1 / (1 + e^-x), as e^x / (1 + e^x) for x < 0 so that tiny results keep their precision."""
    kind = kind_of(x)
    e = emit_exp(builder, builder.fneg(fabs(builder, x)))
    numerator = where(builder, compare(builder, ">=", x, kind.constant(0.0)), kind.constant(1.0), e)
    return builder.fdiv(numerator, builder.fadd(kind.constant(1.0), e))


def emit_logaddexp(builder, a, b):
    """log(e^a + e^b) = max(a, b) + log1p(e^-|a - b|), with NumPy's rules for equal and NaN inputs."""
    kind = kind_of(a)
    difference = builder.fsub(a, b)
    larger = where(builder, compare(builder, ">", a, b), a, b)
    tail = emit_log1p(builder, emit_exp(builder, builder.fneg(fabs(builder, difference))))
    result = builder.fadd(larger, tail)
    result = where(builder, is_nan(builder, difference), difference, result)
    # a == b (infinities included): a + ln2, as NumPy's npy_logaddexp does first.
    return where(builder, compare(builder, "==", a, b), builder.fadd(a, kind.constant(LN2)), result)
