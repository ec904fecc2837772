"""Complex elements in kernels: complex64/complex128 arithmetic as NumPy's loops compute it.

A complex element is an LLVM struct of two floats, `{float, float}` for complex64 and
`{double, double}` for complex128: NumPy's memory layout (real part first), so kernels load
and store a whole element at once, and LLVM splits the struct into its parts (InstCombine,
SROA) before vectorizing. Each emitter takes the parts apart (`split`), computes them as
NumPy's loop for the op does, and puts the result together (`join`).

NumPy's formulas, operation for operation, so results are bit-identical (NaN payloads aside):

- add, subtract, negate, conj: part by part.
- multiply (its SIMD loop, numpy/_core/src/umath/loops_arithm_fp.dispatch.c.src `simd_cmul`):
  real = fma(ar, br, -(ai*bi)), imag = fma(ar, bi, ai*br), fused where the host has FMA (as
  NumPy's `npyv_muladdsub` is there), separate products and sums elsewhere. No C99 Annex G
  recovery of infinities: (inf + 0j) * (0 + 1j) has NaN parts, as in NumPy.
- divide (loops.c.src): Smith's method around the divisor's larger part; a zero divisor
  divides the parts by +0.0 (x/0 -> +-inf, 0/0 -> NaN).
- abs (loops_unary_complex.dispatch: NumPy 2's SIMD loop, not hypot): an infinite part makes
  inf, a NaN part NaN, else larger * sqrt(fma(ratio, ratio, 1)) with ratio = smaller / larger.
- sign (z / hypot(re, im), C's hypot), reciprocal (Smith's), compare (lexicographic, as
  NumPy's CGT/CGE/...), maximum/minimum/fmax/fmin (NaN rules of loops.c.src), is-nan, is-inf,
  is-finite, real, imag, complex(re, im), and converts from and to every dtype.

Complex exp/log/sqrt/power and the trigonometric functions are left to the host (NumPy's
npy_c* functions: many special cases each), and so are complex reductions (the kernel
skeletons accumulate real values).
"""

from __future__ import annotations

import math

import llvmlite.ir as ir

from ... import dtypes

_PART_TYPES = {dtypes.complex64: ir.FloatType(), dtypes.complex128: ir.DoubleType()}
_COMPLEX_TYPES = {dtype: ir.LiteralStructType([part, part]) for dtype, part in _PART_TYPES.items()}


def complex_type(dtype) -> ir.LiteralStructType:
    """The register and memory type of a complex element: {float, float} or {double, double}."""
    return _COMPLEX_TYPES[dtype]


def complex_constant(value, dtype) -> ir.Constant:
    """A complex constant (parts kept as they are: -0.0, inf and NaN included)."""
    value = complex(value)
    part = _PART_TYPES[dtype]
    return ir.Constant(_COMPLEX_TYPES[dtype], [ir.Constant(part, value.real), ir.Constant(part, value.imag)])


def split(builder: ir.IRBuilder, value) -> tuple[ir.Value, ir.Value]:
    """(real part, imaginary part) of a complex value."""
    return builder.extract_value(value, 0), builder.extract_value(value, 1)


def join(builder: ir.IRBuilder, real, imaginary) -> ir.Value:
    """The complex value with these parts."""
    kind = ir.LiteralStructType([real.type, real.type])
    return builder.insert_value(builder.insert_value(ir.Constant(kind, ir.Undefined), real, 0), imaginary, 1)


def select_value(builder: ir.IRBuilder, condition, on_true, on_false) -> ir.Value:
    """`select` for any element: complex values part by part (plain selects vectorize)."""
    if not isinstance(on_true.type, ir.LiteralStructType):
        return builder.select(condition, on_true, on_false)
    true_parts, false_parts = split(builder, on_true), split(builder, on_false)
    return join(builder, *(builder.select(condition, a, b) for a, b in zip(true_parts, false_parts)))


def _part_dtype(instr):
    """The float dtype of the complex values an instruction works on (its operand's)."""
    operand = instr.operands[0] if instr.operands else instr
    return dtypes.real_dtype(operand.dtype if dtypes.is_complex(operand.dtype) else instr.dtype)


def _constant(value, like) -> ir.Constant:
    return ir.Constant(like.type, value)


def _fabs(ctx, value):
    return ctx.intrinsic("llvm.fabs", value)


def _is_nan(builder, value):
    return builder.fcmp_unordered("uno", value, value)


def _multiply_add(ctx, instr, a, b, c):
    """a*b + c as NumPy's SIMD complex loops compute it on this target (see the math tables)."""
    return ctx.math("fma", _part_dtype(instr), a, b, c)


# -- unary ----------------------------------------------------------------------------------


def _negate(ctx, instr, z):
    builder = ctx.builder
    real, imaginary = split(builder, z)
    return join(builder, builder.fneg(real), builder.fneg(imaginary))


def _conj(ctx, instr, z):
    builder = ctx.builder
    real, imaginary = split(builder, z)
    return join(builder, real, builder.fneg(imaginary))


def _real(ctx, instr, z):
    return ctx.builder.extract_value(z, 0)


def _imag(ctx, instr, z):
    return ctx.builder.extract_value(z, 1)


def _abs(ctx, instr, z):
    """NumPy 2's SIMD complex absolute (loops_unary_complex.dispatch `OpCabs`), lane for lane."""
    builder = ctx.builder
    real, imaginary = (_fabs(ctx, part) for part in split(builder, z))
    infinity, nan = _constant(math.inf, real), _constant(math.nan, real)
    # An infinite part makes both infinite (inf + j*nan is inf), then a NaN part both NaN.
    real_infinite = builder.fcmp_ordered("==", real, infinity)
    imaginary_infinite = builder.fcmp_ordered("==", imaginary, infinity)
    imaginary = builder.select(real_infinite, infinity, imaginary)
    real = builder.select(imaginary_infinite, infinity, real)
    real_nan, imaginary_nan = _is_nan(builder, real), _is_nan(builder, imaginary)
    imaginary = builder.select(real_nan, nan, imaginary)
    real = builder.select(imaginary_nan, nan, real)
    larger = builder.select(builder.fcmp_ordered(">", real, imaginary), real, imaginary)
    smaller = builder.select(builder.fcmp_ordered("<", imaginary, real), imaginary, real)
    # The ratio is 0 where it would be 0/0 or inf/inf (MaskedDiv).
    divides = builder.not_(builder.or_(
        builder.fcmp_ordered("==", larger, _constant(0.0, larger)),
        builder.fcmp_ordered("==", smaller, infinity),
    ))
    ratio = builder.select(divides, builder.fdiv(smaller, larger), _constant(0.0, larger))
    root = ctx.intrinsic("llvm.sqrt", _multiply_add(ctx, instr, ratio, ratio, _constant(1.0, ratio)))
    return builder.fmul(root, larger)


def _sign(ctx, instr, z):
    """NumPy's complex sign (loops.c.src): z / hypot(z); NaN for NaN and for inf + inf j;
    +-1 on the infinite axis; 0 for 0."""
    builder = ctx.builder
    real, imaginary = split(builder, z)
    magnitude = ctx.math("hypot", _part_dtype(instr), real, imaginary)
    zero, one, infinity, nan = (_constant(value, real) for value in (0.0, 1.0, math.inf, math.nan))
    minus_one = _constant(-1.0, real)
    real_infinite = builder.fcmp_ordered("==", _fabs(ctx, real), infinity)
    imaginary_infinite = builder.fcmp_ordered("==", _fabs(ctx, imaginary), infinity)
    unit = lambda part: builder.select(builder.fcmp_ordered(">", part, zero), one, minus_one)  # noqa: E731
    # |z| infinite: the infinite axis' sign (inf + inf j has no direction: NaN).
    infinite_real = builder.select(real_infinite, builder.select(imaginary_infinite, nan, unit(real)), zero)
    infinite_imaginary = builder.select(
        real_infinite, builder.select(imaginary_infinite, nan, zero), unit(imaginary))
    finite_real = builder.fdiv(real, magnitude)
    finite_imaginary = builder.fdiv(imaginary, magnitude)
    is_zero = builder.fcmp_ordered("==", magnitude, zero)
    finite_real = builder.select(is_zero, zero, finite_real)
    finite_imaginary = builder.select(is_zero, zero, finite_imaginary)
    is_infinite = builder.fcmp_ordered("==", magnitude, infinity)
    result_real = builder.select(is_infinite, infinite_real, finite_real)
    result_imaginary = builder.select(is_infinite, infinite_imaginary, finite_imaginary)
    is_nan = _is_nan(builder, magnitude)
    return join(builder, builder.select(is_nan, nan, result_real), builder.select(is_nan, nan, result_imaginary))


def _reciprocal(ctx, instr, z):
    """NumPy's complex reciprocal (loops.c.src), Smith's method around the larger part:
    |im| <= |re|: r = im/re, d = re + im*r, 1/z = (1/d, -r/d); else r = re/im, d = re*r + im,
    1/z = (r/d, -1/d)."""
    builder = ctx.builder
    real, imaginary = split(builder, z)
    real_larger = builder.fcmp_ordered("<=", _fabs(ctx, imaginary), _fabs(ctx, real))
    larger = builder.select(real_larger, real, imaginary)
    other = builder.select(real_larger, imaginary, real)
    ratio = builder.fdiv(other, larger)
    denominator = builder.fadd(larger, builder.fmul(other, ratio))  # re + im*r, or im + re*r
    numerator_real = builder.select(real_larger, _constant(1.0, ratio), ratio)
    numerator_imaginary = builder.select(real_larger, builder.fneg(ratio), _constant(-1.0, ratio))
    return join(builder, builder.fdiv(numerator_real, denominator), builder.fdiv(numerator_imaginary, denominator))


def _is_nan_op(ctx, instr, z):
    real, imaginary = split(ctx.builder, z)
    return ctx.builder.fcmp_unordered("uno", real, imaginary)


def _magnitudes_against_infinity(ctx, z, comparison, join):
    """join(|re| comparison inf, |im| comparison inf): is-inf (==, or) and is-finite (<, and)."""
    builder = ctx.builder
    real, imaginary = split(builder, z)
    infinity = _constant(math.inf, real)
    return join(builder.fcmp_ordered(comparison, _fabs(ctx, real), infinity),
                builder.fcmp_ordered(comparison, _fabs(ctx, imaginary), infinity))


def _is_inf(ctx, instr, z):
    return _magnitudes_against_infinity(ctx, z, "==", ctx.builder.or_)


def _is_finite(ctx, instr, z):
    return _magnitudes_against_infinity(ctx, z, "<", ctx.builder.and_)


# -- binary ---------------------------------------------------------------------------------


def _part_by_part(method):
    def emit(ctx, instr, a, b):
        builder = ctx.builder
        (a_real, a_imaginary), (b_real, b_imaginary) = split(builder, a), split(builder, b)
        operation = getattr(builder, method)
        return join(builder, operation(a_real, b_real), operation(a_imaginary, b_imaginary))

    return emit


def _multiply(ctx, instr, a, b):
    """NumPy's `simd_cmul`: (ar*br - ai*bi) + (ar*bi + ai*br)j with the first product of each
    part fused into the sum (`npyv_muladdsub`)."""
    builder = ctx.builder
    (a_real, a_imaginary), (b_real, b_imaginary) = split(builder, a), split(builder, b)
    real = _multiply_add(ctx, instr, a_real, b_real, builder.fneg(builder.fmul(a_imaginary, b_imaginary)))
    imaginary = _multiply_add(ctx, instr, a_real, b_imaginary, builder.fmul(a_imaginary, b_real))
    return join(builder, real, imaginary)


def _divide(ctx, instr, a, b):
    """NumPy's complex divide (loops.c.src), both of Smith's branches as selects:

        |br| >= |bi|: rat = bi/br, scl = 1/(br + bi*rat), ((ar + ai*rat)*scl, (ai - ar*rat)*scl)
        otherwise:    rat = br/bi, scl = 1/(bi + br*rat), ((ar*rat + ai)*scl, (ai*rat - ar)*scl)
        b == 0:       (ar/|br|, ai/|bi|)

    (x + y equals y + x exactly, so one sum serves both branches' real part.) NumPy 2.3 added
    cases that pick which NaN a NaN result carries; the results are NaN there as well.
    """
    builder = ctx.builder
    (a_real, a_imaginary), (b_real, b_imaginary) = split(builder, a), split(builder, b)
    real_magnitude, imaginary_magnitude = _fabs(ctx, b_real), _fabs(ctx, b_imaginary)
    real_larger = builder.fcmp_ordered(">=", real_magnitude, imaginary_magnitude)
    larger = builder.select(real_larger, b_real, b_imaginary)
    other = builder.select(real_larger, b_imaginary, b_real)
    ratio = builder.fdiv(other, larger)
    scale = builder.fdiv(_constant(1.0, ratio), builder.fadd(larger, builder.fmul(other, ratio)))
    first = builder.select(real_larger, a_real, a_imaginary)
    second = builder.select(real_larger, a_imaginary, a_real)
    real = builder.fmul(builder.fadd(first, builder.fmul(second, ratio)), scale)
    minuend = builder.select(real_larger, a_imaginary, builder.fmul(a_imaginary, ratio))
    subtrahend = builder.select(real_larger, builder.fmul(a_real, ratio), a_real)
    imaginary = builder.fmul(builder.fsub(minuend, subtrahend), scale)
    zero = _constant(0.0, ratio)
    by_zero = builder.and_(builder.fcmp_ordered("==", real_magnitude, zero),
                           builder.fcmp_ordered("==", imaginary_magnitude, zero))
    real = builder.select(by_zero, builder.fdiv(a_real, real_magnitude), real)
    imaginary = builder.select(by_zero, builder.fdiv(a_imaginary, imaginary_magnitude), imaginary)
    return join(builder, real, imaginary)


def _lexicographic(builder, direction, a, b):
    """NumPy's complex comparisons (loops.c.src CGT, CGE, CLT, CLE, CEQ, CNE): real parts
    first (only when neither imaginary part is NaN), imaginary parts on equal real parts."""
    (a_real, a_imaginary), (b_real, b_imaginary) = split(builder, a), split(builder, b)
    if direction == "EQ":
        return builder.and_(builder.fcmp_ordered("==", a_real, b_real),
                            builder.fcmp_ordered("==", a_imaginary, b_imaginary))
    if direction == "NE":
        return builder.or_(builder.fcmp_unordered("!=", a_real, b_real),
                           builder.fcmp_unordered("!=", a_imaginary, b_imaginary))
    strict = {"GT": ">", "GE": ">", "LT": "<", "LE": "<"}[direction]
    imaginary_order = {"GT": ">", "GE": ">=", "LT": "<", "LE": "<="}[direction]
    by_real = builder.and_(builder.fcmp_ordered(strict, a_real, b_real),
                           builder.fcmp_ordered("ord", a_imaginary, b_imaginary))
    by_imaginary = builder.and_(builder.fcmp_ordered("==", a_real, b_real),
                                builder.fcmp_ordered(imaginary_order, a_imaginary, b_imaginary))
    return builder.or_(by_real, by_imaginary)


def _compare(ctx, instr, a, b):
    return _lexicographic(ctx.builder, instr.attr("direction"), a, b)


def _has_nan(builder, z):
    real, imaginary = split(builder, z)
    return builder.fcmp_unordered("uno", real, imaginary)


def _extremum(direction, nan_from):
    """maximum/minimum keep `a` when it has a NaN part or compares GE/LE to `b`; fmax/fmin
    keep `a` when `b` has a NaN part or `a` compares GE/LE (loops.c.src)."""

    def emit(ctx, instr, a, b):
        builder = ctx.builder
        keep = _lexicographic(builder, direction, a, b)
        keep = builder.or_(keep, _has_nan(builder, a if nan_from == "first" else b))
        return select_value(builder, keep, a, b)

    return emit


def _complex(ctx, instr, real, imaginary):
    return join(ctx.builder, real, imaginary)


# Ops with a complex operand or result; "real", "imag" and "abs" give real results, "complex"
# takes real operands, compare gives bool.
COMPLEX_OPS = {
    "negate": _negate, "conj": _conj, "real": _real, "imag": _imag, "abs": _abs, "sign": _sign,
    "reciprocal": _reciprocal, "is-nan": _is_nan_op, "is-inf": _is_inf, "is-finite": _is_finite,
    "add": _part_by_part("fadd"), "subtract": _part_by_part("fsub"), "multiply": _multiply,
    "divide": _divide, "compare": _compare,
    "maximum": _extremum("GE", "first"), "minimum": _extremum("LE", "first"),
    "fmax": _extremum("GE", "second"), "fmin": _extremum("LE", "second"),
    "complex": _complex,
}


def touches_complex(instr) -> bool:
    """Whether an instruction reads or makes complex values (elementwise operands share one
    dtype, so the first operand speaks for all)."""
    return dtypes.is_complex(instr.dtype) or bool(instr.operands) and dtypes.is_complex(instr.operands[0].dtype)


def convert_complex(ctx, value, source, target, convert_real):
    """NumPy's astype where `source` or `target` is complex: real -> complex puts the value,
    converted to the part dtype, beside a +0.0 imaginary part; complex -> complex converts
    both parts; complex -> bool is "either part nonzero" (NaN counts); complex -> real or
    integer converts the real part (`convert_real` converts between real dtypes)."""
    builder = ctx.builder
    if source == target:
        return value
    if dtypes.is_complex(target):
        part = dtypes.real_dtype(target)
        if dtypes.is_complex(source):
            parts = split(builder, value)
            return join(builder, *(convert_real(ctx, piece, dtypes.real_dtype(source), part) for piece in parts))
        return join(builder, convert_real(ctx, value, source, part), ir.Constant(_PART_TYPES[target], 0.0))
    real, imaginary = split(builder, value)
    if target == dtypes.bool_:
        zero = _constant(0.0, real)
        return builder.or_(builder.fcmp_unordered("!=", real, zero), builder.fcmp_unordered("!=", imaginary, zero))
    return convert_real(ctx, real, dtypes.real_dtype(source), target)
