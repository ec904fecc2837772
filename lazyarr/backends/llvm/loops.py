"""Loop and allocation helpers for llvmlite's IRBuilder (numba's cgutils, trimmed to our needs).

`for_range` emits a counted loop whose body is written inside a `with` block; `entry_alloca`
puts allocas in the function's entry block, where LLVM's mem2reg turns them into registers.
"""

from __future__ import annotations

import contextlib

import llvmlite.ir as ir

INDEX = ir.IntType(64)


def index_constant(value: int) -> ir.Constant:
    return ir.Constant(INDEX, value)


@contextlib.contextmanager
def for_range(builder: ir.IRBuilder, start, stop, name: str = "i", step=None):
    """`for i in range(start, stop, step)` (step 1 unless given; a positive i64); yields the
    loop variable `i` (i64).

    >>> # with for_range(builder, zero, n) as i: ... body using i ...
    """
    start = start if isinstance(start, ir.Value) else index_constant(start)
    stop = stop if isinstance(stop, ir.Value) else index_constant(stop)
    before = builder.block
    header = builder.append_basic_block(f"{name}.header")
    body = builder.append_basic_block(f"{name}.body")
    after = builder.append_basic_block(f"{name}.after")
    builder.branch(header)
    builder.position_at_end(header)
    counter = builder.phi(INDEX, name=name)
    counter.add_incoming(start, before)
    builder.cbranch(builder.icmp_signed("<", counter, stop), body, after)
    builder.position_at_end(body)
    yield counter
    step = index_constant(1) if step is None else step
    following = builder.add(counter, step, name=f"{name}.next", flags=("nsw",))
    counter.add_incoming(following, builder.block)
    builder.branch(header)
    builder.position_at_end(after)


@contextlib.contextmanager
def at_entry(builder: ir.IRBuilder, *, first: bool = False):
    """Emit into the function's entry block (which dominates every use), then return to where
    the builder was: at its start with `first` (allocas), else before its terminator."""
    current = builder.block
    entry = builder.function.entry_basic_block
    if first and entry.instructions:
        builder.position_before(entry.instructions[0])
    elif entry.is_terminated:
        builder.position_before(entry.instructions[-1])
    else:
        builder.position_at_end(entry)
    yield
    builder.position_at_end(current)


def entry_alloca(builder: ir.IRBuilder, value_type: ir.Type, name: str = "") -> ir.AllocaInstr:
    """An alloca in the entry block (so mem2reg can promote it), wherever the builder is."""
    with at_entry(builder, first=True):
        return builder.alloca(value_type, name=name)


def tile_alloca(builder: ir.IRBuilder, element_type: ir.Type, count: int, name: str = "") -> ir.AllocaInstr:
    """`count` elements on the stack, allocated in the entry block (a tile of accumulators)."""
    with at_entry(builder, first=True):
        return builder.alloca(element_type, size=index_constant(count), name=name)


def opaque_index(builder: ir.IRBuilder, value: ir.Value) -> ir.Value:
    """`value` passed through an empty inline asm in the entry block: LLVM cannot see it is
    a constant. A loop bounded by it is never fully unrolled, which matters where unrolling
    leaves long chains of loop-invariant values in an outer loop: LLVM 22's loop vectorizer
    (`vputils::isSingleScalar`) takes time exponential in such a chain's length."""
    register = "l" if builder.module.triple.startswith("nvptx") else "r"  # NVPTX: "l" is 64-bit
    opaque = ir.InlineAsm(ir.FunctionType(INDEX, [INDEX]), "", f"={register},0", side_effect=False)
    with at_entry(builder):
        return builder.call(opaque, [value])
