"""Building blocks for the math emitters: operand kinds, splat constants, intrinsics, bit tricks.

Every helper works on scalars and on `ir.VectorType` operands alike (constants are splatted,
comparisons give `<N x i1>` masks, `select` chooses per lane), so one emitter serves both.
No helper branches or calls a library function: code built from them stays vectorizable.
Nothing here sets fast-math flags, because NaN, infinities and -0.0 must come out as NumPy's.
"""

from __future__ import annotations

import struct

import llvmlite.ir as ir

from . import vector_math

FLOAT32 = ir.FloatType()
FLOAT64 = ir.DoubleType()


class FloatKind:
    """The shape of a float operand: element type, lane count and its IEEE layout."""

    def __init__(self, type_: ir.Type):
        self.type = type_
        self.lanes = type_.count if isinstance(type_, ir.VectorType) else None
        self.element = type_.element if self.lanes else type_
        if isinstance(self.element, ir.FloatType):
            self.bits, self.mantissa_bits, self.bias, self.dtype = 32, 23, 127, "float32"
        elif isinstance(self.element, ir.DoubleType):
            self.bits, self.mantissa_bits, self.bias, self.dtype = 64, 52, 1023, "float64"
        else:
            raise TypeError(
                f"math emitters accept float or double scalars or vectors, got {type_} "
                "(compute float16 in float32 and truncate)"
            )
        self.int_type = self.like(ir.IntType(self.bits))
        self.bool_type = self.like(ir.IntType(1))

    def like(self, element: ir.Type) -> ir.Type:
        """`element`, or a vector of it with this kind's lane count."""
        return ir.VectorType(element, self.lanes) if self.lanes else element

    def constant(self, value: float) -> ir.Constant:
        """A float constant of this kind (rounded to float32 for float kinds of 32 bits)."""
        return ir.Constant(self.type, float(value))

    def int_constant(self, value: int) -> ir.Constant:
        return ir.Constant(self.int_type, int(value))

    @property
    def suffix(self) -> str:
        """The overload suffix of intrinsic names: 'f32', 'v8f32', 'f64', ..."""
        base = f"f{self.bits}"
        return f"v{self.lanes}{base}" if self.lanes else base


def kind_of(value: ir.Value) -> FloatKind:
    return FloatKind(value.type)


def declare(module: ir.Module, name: str, return_type: ir.Type, argument_types: list[ir.Type]) -> ir.Function:
    """The function `name` of `module`, declared on first use with the given signature."""
    function_type = ir.FunctionType(return_type, argument_types)
    existing = module.globals.get(name)
    if existing is not None:
        if existing.function_type != function_type:
            raise TypeError(f"{name} is already declared as {existing.function_type}, wanted {function_type}")
        return existing
    return ir.Function(module, function_type, name=name)


def intrinsic(builder: ir.IRBuilder, name: str, *operands: ir.Value) -> ir.Value:
    """Call the float intrinsic `name` ('llvm.fmuladd', 'llvm.fabs', ...) overloaded on the operands' type."""
    type_ = operands[0].type
    function = declare(builder.module, f"{name}.{FloatKind(type_).suffix}", type_, [type_] * len(operands))
    return builder.call(function, list(operands))


def fmuladd(builder, a, b, c):
    """a*b + c, fused where the target has fast FMA (the math here is exact either way)."""
    return intrinsic(builder, "llvm.fmuladd", a, b, c)


def fabs(builder, x):
    return intrinsic(builder, "llvm.fabs", x)


def copysign(builder, magnitude, sign):
    return intrinsic(builder, "llvm.copysign", magnitude, sign)


def polynomial(builder, x, coefficients):
    """Horner's rule: coefficients[0]*x^(n-1) + ... + coefficients[-1], by fused multiply-adds."""
    kind = kind_of(x)
    result = kind.constant(coefficients[0])
    for coefficient in coefficients[1:]:
        result = fmuladd(builder, result, x, kind.constant(coefficient))
    return result


def compare(builder, operator, a, b):
    """Ordered comparison (false when either side is NaN): '<', '<=', '>', '>=', '==', '!='."""
    return builder.fcmp_ordered(operator, a, b)


def is_nan(builder, x):
    return builder.fcmp_unordered("uno", x, x)


def clamp(builder, x, low: float, high: float):
    """x limited to [low, high]; NaN stays NaN (ordered compares are false for it)."""
    kind = kind_of(x)
    x = builder.select(compare(builder, "<", x, kind.constant(low)), kind.constant(low), x)
    return builder.select(compare(builder, ">", x, kind.constant(high)), kind.constant(high), x)


def where(builder, condition, if_true, if_false):
    return builder.select(condition, if_true, if_false)


def to_bits(builder, x):
    return builder.bitcast(x, kind_of(x).int_type)


def from_bits(builder, bits, kind: FloatKind):
    return builder.bitcast(bits, kind.type)


def round_to_integer(builder, y):
    """(rint(y) as float, as integer) for |y| < 2^(mantissa bits - 1), without rint.

    Adding 1.5 * 2^mantissa_bits rounds to an integer (ties to even) in the ordinary rounding
    mode, and the integer then sits in the low bits of the sum (two's complement).
    """
    kind = kind_of(y)
    magic_value = 1.5 * 2.0 ** kind.mantissa_bits
    magic = kind.constant(magic_value)
    shifted = builder.fadd(y, magic)
    rounded = builder.fsub(shifted, magic)
    magic_bits = int.from_bytes(struct.pack("<f" if kind.bits == 32 else "<d", magic_value), "little")
    integer = builder.sub(to_bits(builder, shifted), kind.int_constant(magic_bits))
    return rounded, integer


def power_of_two(builder, exponent, kind: FloatKind):
    """2^exponent for an integer exponent within the normal range (built from its bits)."""
    biased = builder.add(exponent, kind.int_constant(kind.bias))
    return from_bits(builder, builder.shl(biased, kind.int_constant(kind.mantissa_bits)), kind)


def scale_by_power_of_two(builder, value, exponent, kind: FloatKind):
    """value * 2^exponent for |exponent| up to twice the normal range, rounded once.

    Two factors 2^(e/2) and 2^(e - e/2) are each normal, so results that overflow become
    inf and results in the subnormal range round correctly (one inexact multiply).
    """
    half = builder.ashr(exponent, kind.int_constant(1))
    rest = builder.sub(exponent, half)
    value = builder.fmul(value, power_of_two(builder, half, kind))
    return builder.fmul(value, power_of_two(builder, rest, kind))


def any_lane(builder, mask):
    """An i1 that is true when any lane of `mask` is (the mask itself for scalars)."""
    if not isinstance(mask.type, ir.VectorType):
        return mask
    packed = builder.bitcast(mask, ir.IntType(mask.type.count))
    return builder.icmp_unsigned("!=", packed, ir.Constant(packed.type, 0))


def call_per_lane(builder, function: ir.Function, *operands):
    """Call a scalar function on each lane of vector operands (or once, for scalars)."""
    type_ = operands[0].type
    if not isinstance(type_, ir.VectorType):
        return builder.call(function, list(operands))
    result = ir.Constant(type_, ir.Undefined)
    for lane in range(type_.count):
        index = ir.Constant(ir.IntType(32), lane)
        lane_operands = [builder.extract_element(operand, index) for operand in operands]
        result = builder.insert_element(result, builder.call(function, lane_operands), index)
    return result


def declare_libm(builder, names: dict[str, str], operands) -> ir.Function:
    """The C math library's scalar function for the operands' dtype, e.g. {'float32': 'tanf'};
    declared as touching no memory where libmvec has a vector version of it, so that LLVM
    vectorizes its calls (vector_math.py)."""
    kind = kind_of(operands[0])
    if kind.dtype not in names:
        raise TypeError(f"no C library function for {kind.dtype} among {names}")
    function = declare(builder.module, names[kind.dtype], kind.element, [kind.element] * len(operands))
    if vector_math.vectorizable(function.name) and "readnone" not in function.attributes:
        function.attributes.add("readnone")
        function.attributes.add("nounwind")
    return function
