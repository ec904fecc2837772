"""How a kernel's reductions combine values: each kind's identity and combining op, the
accumulator dtype (float16 sums in float32), and the pairwise combination of float block sums.

Shared by the CPU kernels (kernel.py) and the GPU kernels (gpu_kernel.py), so a reduction
kind is defined once for both code generators.
"""

from __future__ import annotations

import math

import llvmlite.ir as ir

from ... import dtypes
from .loops import INDEX, index_constant
from .scalar_ops import BINARY

# Accumulate float16 sums and products in float32, as NumPy's half loops do.
ACCUMULATOR = {dtypes.float16: dtypes.float32}

# Levels of the pairwise combination of block sums: 2**64 blocks, more than any extent.
PAIRWISE_LEVELS = 64


def pairwise_push(ctx, dtype, pairwise, value) -> None:
    """Add one block's sum to the pairwise combination (a binary counter of partial sums,
    `stack[level]` summing 2**level blocks): while the count's lowest bits are set, the new
    sum absorbs the sum of the equally many blocks before it, as a pairwise tree does."""
    builder = ctx.builder
    stack, count = pairwise
    number = builder.load(count)
    level, carry = _over_levels(
        builder, value,
        lambda level: builder.trunc(builder.lshr(number, level), ir.IntType(1)),
        lambda level, carry: builder.fadd(_held(builder, stack, level, value.type), carry))
    builder.store(carry, builder.gep(stack, [level], source_etype=value.type))
    builder.store(builder.add(number, index_constant(1)), count)


def pairwise_total(ctx, kind, dtype, pairwise) -> ir.Value:
    """The sum of all blocks pushed: the partial sums of the count's set bits, smallest first."""
    builder = ctx.builder
    stack, count = pairwise
    number = builder.load(count)
    identity = reduction_identity(ctx, kind, dtype)

    def add_if_held(level, total):
        held = _held(builder, stack, level, identity.type)
        return builder.select(builder.trunc(builder.lshr(number, level), ir.IntType(1)),
                              builder.fadd(held, total), total)

    return _over_levels(builder, identity,
                        lambda level: builder.icmp_unsigned("!=", builder.lshr(number, level), index_constant(0)),
                        add_if_held)[1]


def _held(builder, stack, level, value_type):
    return builder.load(builder.gep(stack, [level], source_etype=value_type), typ=value_type)


def _over_levels(builder, value, going_on, step) -> tuple[ir.Value, ir.Value]:
    """for level = 0, 1, ... while going_on(level): value = step(level, value). Returns the
    level it stopped at and the value then (a loop of a few trips: log2 of a block count)."""
    before = builder.block
    header = builder.append_basic_block("levels.header")
    body = builder.append_basic_block("levels.body")
    done = builder.append_basic_block("levels.done")
    builder.branch(header)
    builder.position_at_end(header)
    level = builder.phi(INDEX, name="level")
    level.add_incoming(index_constant(0), before)
    carried = builder.phi(value.type, name="carried")
    carried.add_incoming(value, before)
    builder.cbranch(going_on(level), body, done)
    builder.position_at_end(body)
    following = step(level, carried)
    level.add_incoming(builder.add(level, index_constant(1)), builder.block)
    carried.add_incoming(following, builder.block)
    builder.branch(header)
    builder.position_at_end(done)
    return level, carried


def reduction_identity(ctx, kind, dtype):
    if kind == "sum" or kind == "or":
        return ctx.constant(0, dtype)
    if kind == "prod" or kind == "and":
        return ctx.constant(1, dtype)
    if dtypes.is_floating(dtype):
        return ctx.constant(-math.inf if kind == "max" else math.inf, dtype)
    if dtype == dtypes.bool_:
        return ctx.constant(kind == "min", dtype)
    info = __import__("numpy").iinfo(dtype)
    return ctx.constant(info.min if kind == "max" else info.max, dtype)


class _Node:
    """The minimum an emitter reads from an instruction: its dtype."""

    def __init__(self, dtype):
        self.dtype = dtype


def combine(ctx, kind, dtype, accumulator, value):
    builder = ctx.builder
    if kind == "sum":
        if dtypes.is_floating(dtype):
            # Reassociation lets LLVM keep several vector accumulators (see README tolerance).
            return builder.fadd(accumulator, value, flags=("reassoc",))
        return builder.or_(accumulator, value) if dtype == dtypes.bool_ else builder.add(accumulator, value)
    if kind == "prod":
        if dtypes.is_floating(dtype):
            return builder.fmul(accumulator, value, flags=("reassoc",))
        return builder.and_(accumulator, value) if dtype == dtypes.bool_ else builder.mul(accumulator, value)
    if kind == "and":
        return builder.and_(accumulator, value)
    if kind == "or":
        return builder.or_(accumulator, value)
    if dtype in (dtypes.float32, dtypes.float64):
        return ctx.intrinsic("llvm.maximum" if kind == "max" else "llvm.minimum", accumulator, value)
    emit = BINARY["maximum" if kind == "max" else "minimum"]
    return emit(ctx, _Node(dtype), accumulator, value)


def arg_better(ctx, opcode: str, dtype, value: ir.Value, best: ir.Value) -> ir.Value:
    """Whether an argmax (argmin) moves from `best` to a later element `value`, as NumPy's does:
    to a strictly larger (smaller) value, so ties keep the first; and to the first NaN, which
    then stays (a NaN wins: np.argmax([1, nan, 3]) is 1). Bool compares as 0 and 1."""
    builder = ctx.builder
    direction = ">" if opcode == "argmax" else "<"
    if dtypes.is_floating(dtype):
        moved = builder.fcmp_ordered(direction, value, best)
        first_nan = builder.and_(builder.fcmp_unordered("uno", value, value), builder.fcmp_ordered("ord", best, best))
        return builder.or_(moved, first_nan)
    if dtypes.is_signed_integer(dtype):
        return builder.icmp_signed(direction, value, best)
    return builder.icmp_unsigned(direction, value, best)  # unsigned integers and bool (i1)


def arg_extremum(ctx, opcode: str, dtype, accumulator: ir.Value, value: ir.Value) -> ir.Value:
    """The running maximum (argmax) or minimum (argmin) of a line as its first pass finds it: a
    NaN wins (as in NumPy's argmax), so floats combine as `max` reductions do, which vectorize;
    bool as or / and."""
    kind = "max" if opcode == "argmax" else "min"
    if dtype == dtypes.bool_:
        return ctx.builder.or_(accumulator, value) if kind == "max" else ctx.builder.and_(accumulator, value)
    return combine(ctx, kind, dtype, accumulator, value)


def arg_match(ctx, dtype, value: ir.Value, extremum: ir.Value) -> ir.Value:
    """Whether `value` is the line's `extremum` (arg_extremum), so that the first such position
    is NumPy's argmax (argmin): the first element equal to it (ties keep the first; -0.0 and
    0.0 are equal, as they compare in NumPy's loop), or the first NaN where it is NaN."""
    builder = ctx.builder
    if dtypes.is_floating(dtype):
        equal = builder.fcmp_ordered("==", value, extremum)
        both_nan = builder.and_(builder.fcmp_unordered("uno", value, value),
                                builder.fcmp_unordered("uno", extremum, extremum))
        return builder.or_(equal, both_nan)
    return builder.icmp_unsigned("==", value, extremum)
