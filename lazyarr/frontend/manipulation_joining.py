"""Joining and splitting: concatenate, stack and friends, split, array_split, unstack.

Joining is one HLO `concatenate` of converted operands (NumPy's result dtype, or the `dtype`
asked for under the `casting` rule); splitting is one static `slice` per piece, a view of the
input as in NumPy (basic indexing: writes to a piece reach the input). Errors name the
function and show every operand's shape.
"""

from __future__ import annotations

import operator

from .. import dtypes
from ..hlo import make
from ..hlo.template import Templates
from ..shapes import normalize_axis
from .array import Array
from .core import as_array, convert, wrap
from .indexing import getitem
from .manipulation_layout import atleast_1d, atleast_2d, atleast_3d
from .manipulation_nodes import check_casting, reshape_node
from .templated_calls import replayed

__all__ = [
    "concatenate", "concat", "stack", "hstack", "vstack", "dstack", "column_stack",
    "split", "array_split", "unstack",
]


def _sequence_items(arrays, where: str) -> list:
    """The items of a sequence of arrays; a lazy array iterates over its first axis."""
    if isinstance(arrays, Array):
        return list(unstack(arrays)) if arrays.ndim else [arrays]
    if isinstance(arrays, (list, tuple)) or (hasattr(arrays, "__getitem__") and hasattr(arrays, "__len__")):
        return list(arrays)
    raise TypeError(
        f'{where}: arrays to stack must be passed as a "sequence" type such as list or tuple, '
        f"got {type(arrays).__name__}"
    )


def _shapes(arrays) -> str:
    return ", ".join(str(array.shape) for array in arrays)


def _join(arrays: list[Array], axis: int, dtype, casting: str, where: str) -> Array:
    """Concatenate same-rank arrays on a normalized `axis`, with NumPy's dtype rules."""
    if dtype is None:
        target = dtypes.result_type(*(array.dtype for array in arrays))
    else:
        target = dtypes.as_dtype(dtype, where=where)
    for array in arrays:
        check_casting(array.dtype, target, casting, where)
    nodes = [convert(array._node, target) for array in arrays]
    if len(nodes) == 1:
        return wrap(nodes[0])
    return wrap(make("concatenate", nodes, dimension=axis))


def concatenate(arrays, /, axis=0, out=None, *, dtype=None, casting="same_kind") -> Array:
    """Join arrays along an existing axis (axis=None flattens them first).

    The result dtype is NumPy's result_type of the inputs, or `dtype` when given (each input
    must cast to it under `casting`). `out=` is refused: lazy arrays are immutable.

    >>> import lazyarr as la
    >>> la.concatenate([la.zeros((2, 3)), la.ones((1, 3))]).shape
    (3, 3)
    """
    if out is not None:
        raise TypeError("concatenate: out= is not supported (lazy arrays are immutable); use the result")
    if type(arrays) in (list, tuple) and dtype is None and casting == "same_kind" and type(axis) in (int, type(None)):
        # lazy arrays alone (a loop joining new values every step): the first call's graph replayed
        result = replayed("concatenate", lambda *items: _concatenate(items, axis, None, casting), tuple(arrays), axis)
        if result is not None:
            return result
    return _concatenate(arrays, axis, dtype, casting)


def _concatenate(arrays, axis, dtype, casting) -> Array:
    items = [as_array(item, where="concatenate") for item in _sequence_items(arrays, "concatenate")]
    if not items:
        raise ValueError("concatenate: need at least one array to concatenate")
    if axis is None:
        items = [wrap(reshape_node(item._node, (item.size,))) for item in items]
        axis = 0
    if any(item.ndim == 0 for item in items):
        raise ValueError(
            f"concatenate: zero-dimensional arrays cannot be concatenated, got shapes {_shapes(items)}"
        )
    axis = normalize_axis(axis, items[0].ndim, where="concatenate")
    first = items[0]
    for index, item in enumerate(items[1:], start=1):
        if item.ndim != first.ndim:
            raise ValueError(
                "concatenate: all the input arrays must have same number of dimensions, but the "
                f"array at index 0 has {first.ndim} dimension(s) and the array at index {index} has "
                f"{item.ndim} dimension(s); shapes: {_shapes(items)}"
            )
        for dimension in range(first.ndim):
            if dimension != axis and item.shape[dimension] != first.shape[dimension]:
                raise ValueError(
                    "concatenate: all the input array dimensions except for the concatenation axis "
                    f"must match exactly, but along dimension {dimension}, the array at index 0 has "
                    f"size {first.shape[dimension]} and the array at index {index} has size "
                    f"{item.shape[dimension]}; shapes: {_shapes(items)}"
                )
    return _join(items, axis, dtype, casting, "concatenate")


def concat(arrays, /, axis=0, out=None, *, dtype=None, casting="same_kind") -> Array:
    """The array API's name for concatenate."""
    return concatenate(arrays, axis, out, dtype=dtype, casting=casting)


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind") -> Array:
    """Join same-shaped arrays along a new axis.

    >>> import lazyarr as la
    >>> la.stack([la.zeros(3), la.ones(3)], axis=1).shape
    (3, 2)
    """
    if out is not None:
        raise TypeError("stack: out= is not supported (lazy arrays are immutable); use the result")
    if type(arrays) in (list, tuple) and dtype is None and casting == "same_kind" and type(axis) is int:
        nodes = [item._node for item in arrays if type(item) is Array]
        if nodes and len(nodes) == len(arrays):
            # Lazy arrays alone (a loop stacking new values every step, k-means' centres): the
            # graph of the first such call, replayed (hlo/template.py) without the checks.
            key = (axis, *[(node.shape, node.dtype) for node in nodes])
            return Array(_STACKS.build(key, lambda *parameters: _stack(list(map(Array, parameters)), axis)._node,
                                       *nodes))
    return _stack([as_array(item, where="stack") for item in _sequence_items(arrays, "stack")], axis, dtype, casting)


_STACKS = Templates()


def _stack(items: list[Array], axis, dtype=None, casting="same_kind") -> Array:
    if not items:
        raise ValueError("stack: need at least one array to stack")
    if any(item.shape != items[0].shape for item in items):
        raise ValueError(f"stack: all input arrays must have the same shape, got {_shapes(items)}")
    position = normalize_axis(axis, items[0].ndim + 1, where="stack")
    shape = items[0].shape[:position] + (1,) + items[0].shape[position:]
    expanded = [wrap(reshape_node(item._node, shape)) for item in items]
    return _join(expanded, position, dtype, casting, "stack")


def hstack(tup, *, dtype=None, casting="same_kind") -> Array:
    """Concatenate along the second axis (the first for 1-d inputs)."""
    arrays = _as_tuple(atleast_1d(*_sequence_items(tup, "hstack")))
    if not arrays:
        raise ValueError("hstack: need at least one array to concatenate")
    axis = 0 if arrays[0].ndim == 1 else 1
    return concatenate(arrays, axis, dtype=dtype, casting=casting)


def vstack(tup, *, dtype=None, casting="same_kind") -> Array:
    """Concatenate along the first axis after making inputs at least 2-d ((n,) -> (1, n))."""
    arrays = _as_tuple(atleast_2d(*_sequence_items(tup, "vstack")))
    return concatenate(arrays, 0, dtype=dtype, casting=casting)


def dstack(tup) -> Array:
    """Concatenate along the third axis after making inputs at least 3-d."""
    arrays = _as_tuple(atleast_3d(*_sequence_items(tup, "dstack")))
    return concatenate(arrays, 2)


def column_stack(tup) -> Array:
    """Stack 1-d arrays as columns of a 2-d array; 2-d arrays are joined as they are."""
    columns = []
    for item in _sequence_items(tup, "column_stack"):
        array = as_array(item, where="column_stack")
        if array.ndim < 2:
            array = wrap(reshape_node(array._node, (array.size, 1)))
        columns.append(array)
    return concatenate(columns, 1)


def _as_tuple(result) -> tuple:
    return result if isinstance(result, tuple) else (result,)


# -- splitting -----------------------------------------------------------------------------------
def array_split(ary, indices_or_sections, axis=0) -> list[Array]:
    """Split into `sections` nearly equal pieces (the first ones one longer), or at `indices`.

    Indices follow Python slicing: negative ones count from the end, out-of-range ones clamp.

    >>> import lazyarr as la
    >>> [piece.shape for piece in la.array_split(la.zeros(5), 2)]
    [(3,), (2,)]
    """
    array = as_array(ary, where="array_split")
    if array.ndim == 0:
        raise ValueError("array_split: cannot split a 0-d array; it has no axis to split along")
    axis = normalize_axis(axis, array.ndim, where="array_split")
    total = array.shape[axis]
    if isinstance(indices_or_sections, Array):
        indices_or_sections = indices_or_sections.numpy()  # split points are static: evaluate
    try:
        count = len(indices_or_sections)
    except TypeError:
        count = None
    if count is None:
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError(f"array_split: number sections must be larger than 0, got {sections}")
        each, extras = divmod(total, sections)
        sizes = [each + 1] * extras + [each] * (sections - extras)
        points = [0]
        for size in sizes:
            points.append(points[-1] + size)
    else:
        try:
            points = [0] + [operator.index(index) for index in indices_or_sections] + [total]
        except TypeError:
            raise TypeError(
                f"array_split: indices must be integers, got {indices_or_sections!r}"
            ) from None
    pieces = []
    leading = (slice(None),) * axis
    for begin, end in zip(points[:-1], points[1:]):
        start, stop, _ = slice(begin, end).indices(total)
        pieces.append(getitem(array, leading + (slice(start, max(start, stop)),)))
    return pieces


def split(ary, indices_or_sections, axis=0) -> list[Array]:
    """Split into equal sections (an error when they do not divide evenly) or at indices.

    >>> import lazyarr as la
    >>> [piece.shape for piece in la.split(la.zeros((4, 2)), 2)]
    [(2, 2), (2, 2)]
    """
    try:
        len(indices_or_sections)
    except TypeError:
        array = as_array(ary, where="split")
        if array.ndim == 0:
            raise ValueError("split: cannot split a 0-d array; it has no axis to split along") from None
        total = array.shape[normalize_axis(axis, array.ndim, where="split")]
        sections = indices_or_sections
        if sections and total % sections:
            raise ValueError(
                f"split: array split does not result in an equal division ({total} elements "
                f"into {sections} sections)"
            ) from None
    return array_split(ary, indices_or_sections, axis)


def unstack(x, /, *, axis=0) -> tuple[Array, ...]:
    """The slices of `x` along `axis`, each without that axis (the array API's unstack).

    >>> import lazyarr as la
    >>> [piece.shape for piece in la.unstack(la.zeros((2, 3)), axis=1)]
    [(2,), (2,), (2,)]
    """
    array = as_array(x, where="unstack")
    if array.ndim == 0:
        raise ValueError("unstack: input array must be at least 1-d, got a 0-d array")
    axis = normalize_axis(axis, array.ndim, where="unstack")
    leading = (slice(None),) * axis
    return tuple(getitem(array, leading + (index,)) for index in range(array.shape[axis]))
