"""Symbolic sizes: one executable for every module that differs only in its array sizes.

`symbolize(module)` replaces each size above `CONCRETE_UP_TO` by a placeholder (`shapes.placeholder(k,
size)` for the k-th distinct size met in post order; equal sizes share one) and returns that
module with the real sizes in placeholder order. The compile cache keys on the symbolic
module, so `f(x)` with x of 1000 and then 1001 elements reuses one executable; the backend
reads the real sizes from a runtime vector. Equal sizes must stay equal (elementwise ops need
them), so a new call whose sizes are equal in a different pattern compiles again.

Only modules built from ops whose generated code can take every size at run time are
symbolized (`SIZE_GENERIC_OPS`): elementwise ops, broadcast, transpose, reduce, reverse, iota,
dot, argmax/argmin, gather, dynamic slices and updates (their starts are runtime values; a
dask chunk of a 2-D block is one) and reshapes that only add or drop unit dimensions. Slices, pads and
concatenations carry sizes in their attributes only on the axes they cut, pad or join: the
sizes met on those axes are *pinned* (kept concrete wherever they occur in the module, so equal
sizes stay equal) and their other axes stay symbolic. `np.stack` of data-dependent means
(k-means' new centres) or a slice of a masked selection reuses one executable for every count.
Custom-calls and non-scalar constants carry sizes in attributes or data, so modules with them
keep concrete sizes (one executable per shape); large constants (index arrays) reach the
compiler as parameters (compile.build_module), so they do not count.
"""

from __future__ import annotations

from . import shapes
from .hlo import Computation, Instruction, Module, make
from .hlo.op import ELEMENTWISE

# Sizes up to this stay concrete in the code: a point's 3 coordinates, k-means' 4 features. A
# kernel that loops over such an axis (`(delta * delta).sum(axis=-1)` over xyz) runs its loop
# unrolled, with no size to read; with a placeholder it ran a loop of unknown length for every
# element. Measured, programs.py (this 2-core box): n-body 5.4 -> 2.0 ms (NumPy 59 ms), its la.jit
# form 4.7 -> 1.4 ms, k-means 3.5-3.8 -> 3.3-3.4 ms and its first run 190 -> 111 ms; 16 moved
# nothing further (the MLP's 10 classes). The price: a program whose size varies among 2..4
# compiles once per such size, as XLA does for every size.
CONCRETE_UP_TO = 4

SIZE_GENERIC_OPS = frozenset({
    "parameter", "iota", "broadcast", "transpose", "reduce", "reverse", "convert", "select",
    "clamp", "compare", "dot", "argmax", "argmin", "dynamic-slice", "dynamic-update-slice",
})


# Ops whose sizes sit in attributes on some axes only (`_pinned_axes`).
_PINNING_OPS = frozenset({"slice", "pad", "concatenate"})


def _pinned_axes(node: Instruction) -> list[int]:
    """The axes on which a slice, pad or concatenation depends on its sizes: the joined axis,
    the axes a slice cuts (not the whole axis, stride 1) and the axes a pad pads."""
    opcode = node.opcode
    if opcode == "concatenate":
        return [node.attr("dimension")]
    if opcode == "slice":
        size = node.operands[0].shape
        return [axis for axis, (start, limit, stride) in
                enumerate(zip(node.attr("start"), node.attr("limit"), node.attr("stride")))
                if (start, limit, stride) != (0, size[axis], 1)]
    return [axis for axis, edges in enumerate(zip(node.attr("low"), node.attr("high"), node.attr("interior")))
            if any(edges)]


def _pinned_sizes(nodes) -> set[int]:
    """Sizes that must stay concrete: those of every operand and result on a pinned axis."""
    pinned: set[int] = set()
    for node in nodes:
        if node.opcode in _PINNING_OPS:
            for axis in _pinned_axes(node):
                pinned.add(node.shape[axis])
                pinned.update(operand.shape[axis] for operand in node.operands if operand.ndim)
    return pinned


def _size_generic(node: Instruction) -> bool:
    opcode = node.opcode
    if opcode in SIZE_GENERIC_OPS or opcode in _PINNING_OPS or node.op.has(ELEMENTWISE):
        return True
    if opcode == "constant":
        return node.shape == ()
    if opcode == "gather":
        # Along one axis (`x[indices]`, `x[mask]`): the result's shape is the index array's
        # and the operand's, no size sits in an attribute. With more axes the index vector's
        # length must equal the count of index_dims, a size symbolization would hide.
        return len(node.attr("index_dims")) == 1
    if opcode == "reshape":
        operand = node.operands[0]
        return [size for size in node.shape if size != 1] == [size for size in operand.shape if size != 1]
    return False


def symbolize(module: Module) -> tuple[Module, tuple[int, ...]] | None:
    """(symbolic module, real sizes), or None when some op needs concrete sizes or no size
    is above CONCRETE_UP_TO (nothing to gain)."""
    placeholders: dict[int, int] = {}
    sizes: list[int] = []
    entry = module.entry
    order = (*entry.parameters, *entry.post_order())
    pinned = _pinned_sizes(order)

    def symbolic(shape):
        result = []
        for size in shape:
            if size > CONCRETE_UP_TO and size not in pinned:
                placeholder = placeholders.get(size)
                if placeholder is None:
                    placeholder = placeholders[size] = shapes.placeholder(len(sizes), size)
                    sizes.append(size)
                size = placeholder
            result.append(size)
        return tuple(result)

    mapping: dict[int, Instruction] = {}
    for node in order:
        if id(node) in mapping:
            continue
        if not _size_generic(node):
            return None
        operands = tuple(mapping[id(operand)] for operand in node.operands)
        attrs = dict(node.attrs)
        if "shape" in attrs:
            attrs["shape"] = symbolic(attrs["shape"])
        elif "sizes" in attrs:  # a dynamic-slice's block (its starts are runtime values)
            attrs["sizes"] = symbolic(attrs["sizes"])
        else:
            if node.opcode == "slice":  # a whole axis (limit = its size) follows its size
                whole = set(range(node.ndim)).difference(_pinned_axes(node))
                attrs["limit"] = tuple(symbolic((limit,))[0] if axis in whole else limit
                                       for axis, limit in enumerate(attrs["limit"]))
            symbolic(node.shape)  # number its sizes in order even when no attribute holds them
        mapping[id(node)] = make(node.op, operands, **attrs)
    if not sizes:
        return None
    parameters = tuple(mapping[id(parameter)] for parameter in entry.parameters)
    outputs = tuple(mapping[id(output)] for output in entry.outputs)
    return Module(module.name, Computation(entry.name, parameters, outputs)), tuple(sizes)

