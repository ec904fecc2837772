"""Shape arithmetic shared by the IR and the frontend; errors quote the user's shapes."""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable, Sequence

import numpy as np

Shape = tuple[int, ...]


def as_shape(value, *, where: str = "shape") -> Shape:
    """Normalize an int or a sequence of ints to a shape tuple, refusing negative sizes."""
    if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
        items = tuple(value)
    else:
        items = (value,)
    try:
        shape = tuple(size_index(item) for item in items)
    except TypeError:
        raise TypeError(f"{where}: expected a tuple of ints, got {value!r}") from None
    if any(size < 0 for size in shape):
        raise ValueError(f"{where}: negative dimensions are not allowed, got {shape}")
    return shape


def size_index(value) -> int:
    """`operator.index(value)`, refusing a bool: an int to Python, never a size to NumPy
    ("an integer is required")."""
    if type(value) is bool:
        raise TypeError(f"a size must be an integer, got {value!r}")
    return operator.index(value)


def size_of(shape: Sequence[int]) -> int:
    return math.prod(shape)


def broadcast_shapes(*shapes: Sequence[int], where: str = "broadcast") -> Shape:
    """NumPy broadcasting; the error names the call and shows every operand's shape.

    >>> broadcast_shapes((3, 1), (4,))
    (3, 4)
    """
    ndim = max((len(shape) for shape in shapes), default=0)
    result = []
    for axis in range(-ndim, 0):
        size = 1
        for shape in shapes:
            if -axis > len(shape):
                continue
            this = shape[axis]
            if this == 1 or this == size:
                continue
            if size != 1:
                shown = " ".join(str(tuple(s)) for s in shapes)
                raise ValueError(
                    f"{where}: operands could not be broadcast together with shapes {shown}"
                )
            size = this
        result.append(size)
    return tuple(result)


def is_contiguous_block(bounds: Sequence[tuple[int, int]], shape: Sequence[int]) -> bool:
    """Whether the block of `shape` with (begin, end) per axis is one contiguous stretch of a
    row-major buffer: single indices, then one axis with any range, then whole axes."""
    first = next((axis for axis, (begin, end) in enumerate(bounds) if end - begin != 1), len(bounds))
    return all((begin, end) == (0, size) for (begin, end), size in zip(bounds[first + 1:], shape[first + 1:]))


def normalize_axis(axis, ndim: int, *, where: str = "axis") -> int:
    """Map a possibly negative axis into [0, ndim), as NumPy's AxisError would check it."""
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"{where}: axis must be an integer, got {axis!r}") from None
    if not -ndim <= axis < ndim:
        # NumPy's AxisError is both a ValueError and an IndexError.
        raise np.exceptions.AxisError(
            f"{where}: axis {axis} is out of bounds for array of dimension {ndim}"
        )
    return axis % ndim if ndim else 0


def normalize_axes(axis, ndim: int, *, where: str = "axis") -> tuple[int, ...]:
    """None -> all axes; int or tuple -> sorted unique non-negative axes (duplicates raise)."""
    if axis is None:
        return tuple(range(ndim))
    if not isinstance(axis, (tuple, list)):
        axis = (axis,)
    axes = tuple(normalize_axis(each, ndim, where=where) for each in axis)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{where}: repeated axis in {tuple(axis)}")
    return tuple(sorted(axes))


# -- symbolic sizes -----------------------------------------------------------------------
# A compiled module may stand for every module that differs only in its array sizes: each size
# above symbolic_sizes.CONCRETE_UP_TO (4) is replaced by a placeholder, `placeholder(k, size)` for
# the k-th distinct size, and generated code reads the real sizes from a runtime vector
# (lazyarr/symbolic_sizes.py). Sizes 0 and 1 change what code is generated (broadcasting,
# emptiness); 2 to 4 run faster unrolled (a point's coordinates).
# Placeholders are far above any size the frontend can allocate, so they never collide.
# A placeholder also says whether its size is at most SMALL_SIZE: fusion treats tiny values
# differently from large ones (fusion_policy.max_tiny_elements), so small and large sizes
# compile apart; inside each class one executable serves every size.
SYMBOLIC_SIZE_BASE = 1 << 40
SMALL_SIZE = 1024


# Attributes that hold sizes, which may be placeholders in a symbolic module: broadcast's, iota's
# and reshape's "shape", dynamic-slice's "sizes", and a slice's "limit" on the axes it keeps whole.
SIZE_ATTRIBUTES = ("shape", "sizes", "limit")


def is_symbolic_size(size: int) -> bool:
    return size >= SYMBOLIC_SIZE_BASE


def placeholder(index: int, size: int) -> int:
    """The placeholder for the `index`-th distinct size of a module, whose real value is `size`."""
    return SYMBOLIC_SIZE_BASE + 2 * index + (size <= SMALL_SIZE)


def placeholder_index(size: int) -> int:
    """k for the k-th placeholder: where its real value sits in the size vector."""
    return (size - SYMBOLIC_SIZE_BASE) >> 1


def renumbered_placeholder(size: int, index: int) -> int:
    """Placeholder `size` as the `index`-th placeholder (keeps whether it is small)."""
    return SYMBOLIC_SIZE_BASE + 2 * index + (size & 1)


def size_bound(size: int) -> int | None:
    """The most a size can be: itself, SMALL_SIZE for a small placeholder, None if unbounded."""
    if size < SYMBOLIC_SIZE_BASE:
        return size
    return SMALL_SIZE if size & 1 else None


def elements_bound(shape: Shape) -> int | None:
    """The most elements an array of `shape` can have, or None when a size is unbounded."""
    total = 1
    for size in shape:
        bound = size_bound(size)
        if bound is None:
            return None
        total *= bound
    return total


def resolve_shape(shape: Shape, sizes: Sequence[int]) -> Shape:
    """A shape with placeholders replaced by the real sizes (`sizes[k]` for placeholder k)."""
    return tuple(sizes[(size - SYMBOLIC_SIZE_BASE) >> 1] if size >= SYMBOLIC_SIZE_BASE else size for size in shape)
