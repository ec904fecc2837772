"""Kernels of any module: a fused computation's placeholder sizes in its own numbering.

Modules number their placeholder sizes (symbolic_sizes.py) in the order they meet them, so the
same fused kernel gets different numbers in different modules (a loop's pieces, a graph whose
leaves come in another order). Renumbered in the kernel's own order, it has one fingerprint, is
compiled once, and reads a size vector of its own at run time.
"""

from __future__ import annotations

from .. import shapes
from ..hlo import Computation, Instruction, make


def canonical_sizes(computation: Computation) -> tuple[Computation, tuple[int, ...]]:
    """`computation` with its placeholders renumbered 0, 1, ... in the order it first meets
    them, and the module's placeholder number behind each: a fused kernel compiled once serves
    every module that holds it, whatever numbers the module gave its sizes (the kernel then
    reads a size vector of its own, `module sizes[k]` for each k of the mapping)."""
    renumbered: dict[int, int] = {}

    def canonical(shape):
        result = []
        for size in shape:
            if shapes.is_symbolic_size(size):
                size = shapes.renumbered_placeholder(
                    size, renumbered.setdefault(shapes.placeholder_index(size), len(renumbered)))
            result.append(size)
        return tuple(result)

    order = (*computation.parameters, *computation.post_order())
    for node in order:
        canonical(node.shape)
        for name in shapes.SIZE_ATTRIBUTES:
            if name in node.attributes:
                canonical(node.attributes[name])
    size_map = tuple(renumbered)
    if size_map == tuple(range(len(size_map))):
        return computation, size_map
    mapping: dict[int, Instruction] = {}
    for node in order:
        if id(node) in mapping:
            continue
        attrs = dict(node.attrs)
        for name in shapes.SIZE_ATTRIBUTES:
            if name in attrs:
                attrs[name] = canonical(attrs[name])
        mapping[id(node)] = make(node.op, tuple(mapping[id(operand)] for operand in node.operands), **attrs)
    return Computation(computation.name, tuple(mapping[id(parameter)] for parameter in computation.parameters),
                       tuple(mapping[id(output)] for output in computation.outputs)), size_map
