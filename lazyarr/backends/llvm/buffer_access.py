"""A kernel's reads and writes of its buffers: row-major element access, each access tagged
with alias-scope metadata saying no two buffers overlap. Shared by the CPU kernels
(kernel.py) and the GPU kernel skeletons (gpu_kernel.py)."""

from __future__ import annotations

import llvmlite.ir as ir

from ... import dtypes
from .elemental import linearize, memory_type, value_type


def buffer_alias_scopes(module: ir.Module, name: str, count: int) -> list[tuple]:
    """(`alias.scope`, `noalias`) metadata for each of a kernel's `count` buffers: every
    access to buffer k is in scope k and aliases no other buffer (XLA's alias analysis does
    the same from its buffer assignment).

    True by construction: a kernel's outputs are fresh allocations, or in an arena, buffers
    whose values are not live while the kernel runs (passes/buffers.py), so no output overlaps
    an input or another output; inputs may repeat, but are only read. Without it, LLVM's
    vectorizer guards every loop with run-time overlap checks and a second, scalar copy of
    the loop: twice the code to optimize and emit, and slower small kernels.
    """
    domain = module.add_metadata([f"lazyarr.{name}"])
    scopes = [module.add_metadata([f"lazyarr.{name}.buffer{position}", domain]) for position in range(count)]
    return [(module.add_metadata([scope]), module.add_metadata([other for other in scopes if other is not scope]))
            for scope in scopes]


def _annotate(instruction, scopes) -> None:
    if scopes is not None:
        scope, others = scopes
        instruction.set_metadata("alias.scope", scope)
        instruction.set_metadata("noalias", others)


def buffer_loader(ctx, pointers, parameters, scopes=None):
    """`load(number, index)`: the element of parameter `number` at `index`, read from its
    buffer (`pointers[number]`, row-major). Shared by the CPU and GPU kernel skeletons.
    `scopes`: the buffers' alias metadata (`buffer_alias_scopes`), or None for none."""
    builder = ctx.builder

    def load(number, index):
        parameter = parameters[number]
        if parameter.size == 0:
            # pad/concatenate may ask for an element of an empty operand and discard it:
            # never touch an empty buffer's memory.
            return ir.Constant(value_type(parameter.dtype), 0)
        address = builder.gep(
            pointers[number], [linearize(ctx, index, parameter.shape)], source_etype=memory_type(parameter.dtype),
        )
        value = builder.load(address, typ=memory_type(parameter.dtype))
        _annotate(value, scopes and scopes[number])
        if parameter.dtype == dtypes.bool_:
            return builder.icmp_unsigned("!=", value, ir.Constant(value.type, 0))
        return value

    return load


def element_loader(ctx, pointer, output, scopes=None):
    """`load(index)`: read back an element of `output` already stored (a scan reads its
    previous row, `KernelBuilder._scan`)."""
    builder = ctx.builder

    def load(index):
        address = builder.gep(pointer, [linearize(ctx, index, output.shape)], source_etype=memory_type(output.dtype))
        value = builder.load(address, typ=memory_type(output.dtype))
        _annotate(value, scopes)
        return value

    return load


def element_storer(ctx, pointer, output, scopes=None):
    """`store(index, value)`: write one element of `output` to its row-major buffer (alias
    metadata `scopes` as in `buffer_loader`)."""
    builder = ctx.builder

    def store(index, value):
        if output.dtype == dtypes.bool_:
            value = builder.zext(value, ir.IntType(8))
        address = builder.gep(pointer, [linearize(ctx, index, output.shape)], source_etype=memory_type(output.dtype))
        _annotate(builder.store(value, address), scopes)

    return store
