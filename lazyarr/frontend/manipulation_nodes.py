"""Node-level helpers shared by the frontend modules: layout instructions built only when
needed (no instruction for an identity reshape or transpose), static argument parsing
(shapes, axes, -1 inference) and NumPy's casting-rule check, with NumPy's error wording.
"""

from __future__ import annotations

import math

import numpy as np

from ..hlo import Instruction, Maker, make
from ..shapes import normalize_axis, size_index
from .array import Array
from .core import broadcast_to


def reshape_node(node: Instruction, shape) -> Instruction:
    """`node` reshaped (row-major) to `shape`; no instruction when the shape is unchanged."""
    shape = tuple(shape)
    if node.shape == shape:
        return node
    maker = _RESHAPES.get(shape)
    if maker is None:
        if len(_RESHAPES) >= 1024:
            _RESHAPES.clear()
        maker = _RESHAPES[shape] = Maker("reshape", shape=shape)
    return maker(node)


# Target shape -> the Maker of reshapes to it: a loop reshaping to the same shape (`x.reshape(-1)`,
# `v[:, None]`) makes its node with one intern lookup (the node make() gives).
_RESHAPES: dict[tuple, Maker] = {}


def transpose_node(node: Instruction, permutation) -> Instruction:
    permutation = tuple(permutation)
    if permutation == tuple(range(node.ndim)):
        return node
    return make("transpose", [node], permutation=permutation)


def slice_node(node: Instruction, axis: int, start: int, stop: int, step: int = 1) -> Instruction:
    """node[..., start:stop:step, ...] on `axis` (0 <= start <= stop <= size, step > 0)."""
    if (start, stop, step) == (0, node.shape[axis], 1):
        return node
    starts, limits, strides = [0] * node.ndim, list(node.shape), [1] * node.ndim
    starts[axis], limits[axis], strides[axis] = start, stop, step
    return make("slice", [node], start=tuple(starts), limit=tuple(limits), stride=tuple(strides))


def as_items(value) -> tuple:
    """An int-or-sequence argument (shape, axes, reps) as a tuple; NumPy arrays count as
    sequences, and a lazy one is read (these arguments are static)."""
    if isinstance(value, Array):
        value = value.numpy()
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (str, bytes)):
        return (value,)
    try:
        return tuple(value)
    except TypeError:
        return (value,)


def normalize_axis_tuple(axis, ndim: int, *, where: str, argument: str = "axis") -> tuple[int, ...]:
    """int or sequence -> non-negative axes in the given order; repeated axes raise."""
    items = as_items(axis)
    axes = tuple(normalize_axis(item, ndim, where=where) for item in items)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{where}: repeated axis in `{argument}` argument {items}")
    return axes


def _show_shape(shape) -> str:
    """A requested shape as NumPy prints it in reshape errors: (4,newaxis)."""
    parts = ["newaxis" if size < 0 else str(size) for size in shape]
    return "(" + ",".join(parts) + ("," if len(parts) == 1 else "") + ")"


def _reshape_problem(where: str, size: int, requested: tuple) -> str:
    return f"{where}: cannot reshape array of size {size} into shape {_show_shape(requested)}"


def resolve_shape(size: int, shape, *, where: str = "reshape") -> tuple[int, ...]:
    """Fill in the one unknown (negative) dimension of `shape` for an array of `size` elements.

    >>> resolve_shape(6, (3, -1))
    (3, 2)
    """
    kind = type(shape)
    # Memoized for Python ints only (a loop's `x.reshape(-1)` parses its shape once): 3.0 == 3
    # and True == 1 as dict keys, but NumPy rejects a float where it takes a bool.
    if kind is int or kind is tuple and all(type(item) is int for item in shape):
        key = (size, shape)
        resolved = _RESOLVED.get(key)
        if resolved is None:
            resolved = _resolve_shape(size, shape, where)
            if len(_RESOLVED) >= 4096:
                _RESOLVED.clear()
            _RESOLVED[key] = resolved
        return resolved
    return _resolve_shape(size, shape, where)


_RESOLVED: dict[tuple, tuple[int, ...]] = {}


def _resolve_shape(size: int, shape, where: str) -> tuple[int, ...]:
    items = as_items(shape)
    try:
        requested = tuple(size_index(item) for item in items)
    except TypeError:
        raise TypeError(f"{where}: shape must be an int or a tuple of ints, got {shape!r}") from None
    if any(not -(1 << 63) <= extent < 1 << 63 for extent in requested):  # (NumPy's dimensions are int64)
        raise ValueError(f"{where}: Maximum allowed dimension exceeded, got shape {requested}")
    unknown = [axis for axis, extent in enumerate(requested) if extent < 0]
    if len(unknown) > 1:
        raise ValueError(f"{where}: can only specify one unknown dimension, got shape {requested}")
    known = math.prod(extent for extent in requested if extent >= 0)
    if not unknown:
        if known != size:
            raise ValueError(_reshape_problem(where, size, requested))
        return requested
    if known == 0 or size % known:
        raise ValueError(_reshape_problem(where, size, requested))
    resolved = list(requested)
    resolved[unknown[0]] = size // known
    return tuple(resolved)


def broadcast_node(node: Instruction, shape, *, where: str) -> Instruction:
    """NumPy-style broadcast of `node` to `shape`; the error shows both shapes."""
    shape = tuple(shape)
    offset = len(shape) - node.ndim
    if offset < 0 or any(
        size not in (1, shape[offset + axis]) for axis, size in enumerate(node.shape)
    ):
        raise ValueError(
            f"{where}: cannot broadcast an array of shape {node.shape} to the requested shape {shape}"
        )
    return broadcast_to(node, shape)  # (its prepared reshape and broadcast, memoized per shapes)


_CASTING_RULES = ("no", "equiv", "safe", "same_kind", "unsafe")


def check_casting(from_dtype, to_dtype, casting: str, where: str) -> None:
    """Raise NumPy's TypeError when `casting` forbids from_dtype -> to_dtype."""
    if casting not in _CASTING_RULES:
        raise ValueError(
            f"{where}: casting must be one of {', '.join(map(repr, _CASTING_RULES))} (got {casting!r})"
        )
    if not np.can_cast(from_dtype, to_dtype, casting=casting):
        raise TypeError(
            f"{where}: Cannot cast array data from {np.dtype(from_dtype)!r} to "
            f"{np.dtype(to_dtype)!r} according to the rule {casting!r}"
        )
