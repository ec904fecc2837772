"""Math functions for LLVM code generation, and the table of them by HLO op name and dtype.

Each emitter takes an `ir.IRBuilder` and float/double operands, scalar or `ir.VectorType`,
and returns the result of the same type. exp, expm1, exp2, log, log1p, log2, log10, tanh,
sigmoid, logaddexp (math_exp_log.py) and float32 sin and cos (math_trig.py) are straight-line
code without calls, so loops around them vectorize; float64 sin and cos are too except for
a cold branch that hands arguments beyond 2^20 to the C library. The other functions call
the C math library (MCJIT resolves `tanf`, `atan2`, ... from the process), lane by lane for
vectors.

float16 has no entries: the caller computes in float32 and truncates, as NumPy's float16
loops do. Table entries record whether they are straight-line and their measured error.

Example:
    >>> entry = MATH_FUNCTIONS[("exp", "float32")]
    >>> entry.straight_line, entry.arity
    (True, 1)
    >>> # result = entry(builder, value)   # value: float or <8 x float>
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import llvmlite.ir as ir

from .math_common import call_per_lane, declare_libm, intrinsic
from .math_exp_log import (
    emit_exp,
    emit_exp2,
    emit_expm1,
    emit_log,
    emit_log1p,
    emit_log2,
    emit_log10,
    emit_logaddexp,
    emit_sigmoid,
    emit_tanh,
)
from .math_trig import emit_cos, emit_sin

__all__ = [
    "MATH_FUNCTIONS", "MathFunction", "emit_cos", "emit_erf", "emit_exp", "emit_exp2", "emit_expm1",
    "emit_libm", "emit_log", "emit_log1p", "emit_log2", "emit_log10", "emit_logaddexp", "emit_sigmoid",
    "emit_sin", "emit_sqrt", "emit_tanh", "math_function",
]


def emit_libm(builder: ir.IRBuilder, names: dict[str, str], *operands: ir.Value) -> ir.Value:
    """Call the C library function for the operands' dtype (names: {'float32': 'tanf', ...}).

    Vector operands are split into lanes, one call each. The call keeps loops scalar, except
    where libmvec has a vector version (declare_libm, vector_math.py).
    """
    return call_per_lane(builder, declare_libm(builder, names, operands), *operands)


def emit_sqrt(builder: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """Correctly rounded square root (llvm.sqrt: one instruction, vectorizes)."""
    return intrinsic(builder, "llvm.sqrt", x)


def emit_erf(builder: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """The error function, from the C library (erff / erf)."""
    return emit_libm(builder, {"float32": "erff", "float64": "erf"}, x)


@dataclass(frozen=True)
class MathFunction:
    """One math function for one dtype: call it as `entry(builder, *operands)`.

    straight_line: no calls and no new basic blocks, so a loop around it can vectorize.
    Otherwise the emitter may leave the builder in a new block (sin/cos for float64): read
    `builder.block` afterwards rather than a block saved before the call.
    max_ulp: the error bound, in ULPs of correctly rounded results, that the tests measure
    (None for C library calls, whose error is the library's).
    """

    name: str
    dtype: str
    emit: Callable[..., ir.Value]
    arity: int = 1
    straight_line: bool = True
    max_ulp: float | None = None

    def __call__(self, builder: ir.IRBuilder, *operands: ir.Value) -> ir.Value:
        if len(operands) != self.arity:
            raise TypeError(f"math function {self.name} takes {self.arity} operands, got {len(operands)}")
        return self.emit(builder, *operands)


# HLO op name -> (emitter, arity, straight-line for float32 and for float64, max ULP for float32
# and for float64), the ULPs as measured against correctly rounded results on an FMA target.
_EMITTED = {
    "exp": (emit_exp, 1, (True, True), (1, 1)),
    "exp2": (emit_exp2, 1, (True, True), (1, 1)),
    "expm1": (emit_expm1, 1, (True, True), (1, 1)),
    "log": (emit_log, 1, (True, True), (1, 1)),
    "log2": (emit_log2, 1, (True, True), (1, 1)),
    "log10": (emit_log10, 1, (True, True), (1, 1)),
    "log1p": (emit_log1p, 1, (True, True), (1, 1)),
    "tanh": (emit_tanh, 1, (True, True), (1, 1)),
    "logistic": (emit_sigmoid, 1, (True, True), (2, 2)),
    "logaddexp": (emit_logaddexp, 2, (True, True), (2.5, 2)),  # in ULPs of max(|result|, |max(a, b)|)
    "sin": (emit_sin, 1, (True, False), (1, 1)),
    "cos": (emit_cos, 1, (True, False), (1, 1)),
    "sqrt": (emit_sqrt, 1, (True, True), (0.5, 0.5)),
}

# HLO op name -> (float32 name, float64 name, arity) in the C math library.
_LIBM = {
    "tan": ("tanf", "tan", 1), "asin": ("asinf", "asin", 1), "acos": ("acosf", "acos", 1),
    "atan": ("atanf", "atan", 1), "sinh": ("sinhf", "sinh", 1), "cosh": ("coshf", "cosh", 1),
    "asinh": ("asinhf", "asinh", 1), "acosh": ("acoshf", "acosh", 1), "atanh": ("atanhf", "atanh", 1),
    "cbrt": ("cbrtf", "cbrt", 1), "erf": ("erff", "erf", 1), "atan2": ("atan2f", "atan2", 2),
    "hypot": ("hypotf", "hypot", 2), "power": ("powf", "pow", 2), "nextafter": ("nextafterf", "nextafter", 2),
}


def _libm_emitter(names: dict[str, str]) -> Callable[..., ir.Value]:
    def emit(builder, *operands):
        return emit_libm(builder, names, *operands)

    return emit


def _build_table() -> dict[tuple[str, str], MathFunction]:
    table = {}
    for name, (emit, arity, straight_lines, ulps) in _EMITTED.items():
        for dtype, straight_line, ulp in zip(("float32", "float64"), straight_lines, ulps):
            table[name, dtype] = MathFunction(name, dtype, emit, arity, straight_line, ulp)
    for name, (name32, name64, arity) in _LIBM.items():
        emit = _libm_emitter({"float32": name32, "float64": name64})
        for dtype in ("float32", "float64"):
            table[name, dtype] = MathFunction(name, dtype, emit, arity, straight_line=False)
    return table


MATH_FUNCTIONS: dict[tuple[str, str], MathFunction] = _build_table()


def math_function(name: str, dtype: str) -> MathFunction:
    """The table entry for HLO op `name` on `dtype` ('float32' / 'float64'), or a clear error."""
    try:
        return MATH_FUNCTIONS[name, str(dtype)]
    except KeyError:
        known = sorted({op for op, _ in MATH_FUNCTIONS})
        raise KeyError(
            f"no math function {name!r} for dtype {dtype!s} (float32 and float64 only; "
            f"compute float16 in float32); known: {', '.join(known)}"
        ) from None
