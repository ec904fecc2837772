"""Parsing a NumPy index key into an `IndexPlan`: which axes are sliced, fixed or gathered.

NumPy's indexing rules live here, separate from the graph building in `indexing.py`:

- basic entries: integers (negative wrap; out of range raises IndexError), slices with any
  step, `None` (a new axis of size 1) and one `Ellipsis`;
- advanced entries: integer arrays (lists, NumPy arrays, lazy arrays), boolean masks (turned
  into integer arrays with `np.nonzero`, which evaluates a lazy mask: the result shape depends
  on the data) and boolean scalars (a new axis of length 1 or 0). When any advanced entry is
  present, integers count as advanced too (0-d index arrays), as in NumPy;
- placement: the broadcast shape of the advanced entries replaces them in place when they are
  adjacent in the key, and goes first otherwise (an Ellipsis or None between them, even one
  that spans no axis, separates them).

Static index arrays are checked and wrapped now, so out-of-range indices raise before any
evaluation; lazy index arrays are checked by the gather/scatter op when evaluated. As in
NumPy, index arrays are checked only when the advanced indices select something: `x[[], [5]]`
is empty, not an error (their broadcast shape has no elements); integers are always checked,
and a boolean mask's axes of length 0 match any axis.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass

import numpy as np

from .. import dtypes
from ..hlo import Instruction, bind
from .array import Array, bound_buffer, evaluate_arrays, leaf_for
from .core import as_array, contains_lazy, convert

VALID_INDICES = (
    "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or "
    "boolean arrays are valid indices"
)
NOT_INTEGER_ARRAY = "arrays used as indices must be of integer (or boolean) type"


@dataclass(frozen=True)
class NewAxis:
    """`None` in the key: an output axis of size 1 that consumes no operand axis."""


@dataclass(frozen=True)
class EllipsisMarker:
    """Where the Ellipsis stood; it spans no axis itself but separates advanced entries."""


@dataclass(frozen=True)
class SliceIndex:
    """A slice along `axis`, normalized: `length` elements from `start` in steps of `step`."""

    axis: int
    start: int
    step: int
    length: int
    size: int  # the axis' extent

    @property
    def is_full(self) -> bool:
        return self.start == 0 and self.step == 1 and self.length == self.size

    def positions(self) -> np.ndarray:
        return self.start + self.step * np.arange(self.length, dtype=np.int64)


@dataclass(frozen=True)
class IntegerIndex:
    """A basic integer index along `axis` (already wrapped into range)."""

    axis: int
    value: int


@dataclass(frozen=True, eq=False)
class AdvancedIndex:
    """An index array (or a mask's arrays) on `axes`; `parts` holds one per axis.

    Each part is a NumPy int64 array (checked and non-negative; zeros when the advanced
    indices select nothing) or a lazy int64 Instruction.
    A boolean scalar indexes no axis: its parts are empty and its shape is (1,) or (0,).
    """

    axes: tuple[int, ...]
    parts: tuple
    shape: tuple[int, ...]


@dataclass(frozen=True, eq=False)
class IndexPlan:
    """A parsed key: entries in key order, the advanced broadcast shape and its placement."""

    entries: tuple
    advanced_shape: tuple[int, ...] | None  # None when the key is basic only
    advanced_first: bool                     # advanced dims go first (entries not adjacent)

    @property
    def is_advanced(self) -> bool:
        return self.advanced_shape is not None

    def advanced_entries(self) -> list[AdvancedIndex]:
        return [entry for entry in self.entries if isinstance(entry, AdvancedIndex)]

    def slices(self) -> list[SliceIndex]:
        return [entry for entry in self.entries if isinstance(entry, SliceIndex)]

    def slices_before_advanced(self) -> int:
        """How many slice dims precede the advanced dims in the result (adjacent placement)."""
        if self.advanced_first or not self.is_advanced:
            return 0
        count = 0
        for entry in self.entries:
            if isinstance(entry, AdvancedIndex):
                return count
            count += isinstance(entry, SliceIndex)
        return count

    def view_layout(self, dummy: np.ndarray) -> np.ndarray:
        """NumPy's view of `dummy` for this basic key: the step a view's stride dummy takes
        (views.py). Entries are normalized, so the key is rebuilt from them."""
        key = []
        for entry in self.entries:
            if isinstance(entry, NewAxis):
                key.append(None)
            elif isinstance(entry, IntegerIndex):
                key.append(entry.value)
            elif isinstance(entry, SliceIndex):
                stop = entry.start + entry.length * entry.step
                key.append(slice(entry.start, stop if stop >= 0 else None, entry.step))
        return dummy[tuple(key)]

    def result_shape(self, *, with_new_axes: bool = True) -> tuple[int, ...]:
        """The shape `array[key]` has (without the size-1 `None` axes if asked)."""
        dims: list[int] = []
        placed = self.advanced_first
        for entry in self.entries:
            if isinstance(entry, NewAxis) and with_new_axes:
                dims.append(1)
            elif isinstance(entry, SliceIndex):
                dims.append(entry.length)
            elif isinstance(entry, AdvancedIndex) and not placed:
                dims.extend(self.advanced_shape)
                placed = True
        if self.advanced_first:
            dims = list(self.advanced_shape) + dims
        return tuple(dims)


def format_shape(shape) -> str:
    """A shape as NumPy writes it in indexing errors: (2,3), (3,), ()."""
    if len(shape) == 1:
        return f"({shape[0]},)"
    return "(" + ",".join(str(size) for size in shape) + ")"


def out_of_bounds(value: int, axis: int, size: int) -> IndexError:
    return IndexError(f"index {value} is out of bounds for axis {axis} with size {size}")


def evaluated_mask(mask: Array) -> np.ndarray:
    """A lazy mask's values. Its computed operands are evaluated with it, in one module:
    programs test one array against several values (`X[labels == k]` for each k), and the
    next mask then reads `labels` from memory instead of computing it again (in a module
    compiled for that)."""
    if not mask.is_evaluated:
        values = _host_comparison(mask._node)
        if values is not None:
            bind(mask._node, values)
            mask._node = leaf_for(values)
            return values
        operands = [
            Array(operand) for operand in mask._node.operands
            if bound_buffer(operand) is None and not _is_constant(operand)
        ]
        evaluate_arrays([mask, *operands])
    return np.asarray(mask)


# NumPy's comparisons, which lazyarr's `compare` follows exactly (IEEE: NaN compares unequal).
_COMPARISONS = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
                "GT": np.greater, "GE": np.greater_equal}


def _host_comparison(node: Instruction) -> np.ndarray | None:
    """A mask that is one comparison of evaluated host arrays and scalars (`labels == k`), by
    NumPy now; None otherwise. A compiled evaluation would cost ~20 us for what NumPy does in
    one, and a program masks by each of several values in turn (k-means)."""
    if node.opcode != "compare" or node.dtype.kind == "c":
        return None
    direction = node.attr("direction")
    if direction not in ("EQ", "NE") and node.operands[0].dtype.kind == "c":
        return None  # ordering complex numbers: the compiled path's
    values = []
    for operand in node.operands:
        buffer = operand._bound
        if type(buffer) is not np.ndarray and operand.opcode == "broadcast" and _aligned_right(operand):
            operand = operand.operands[0]  # broadcast as NumPy broadcasts: NumPy does it itself
            buffer = operand._bound
        if type(buffer) is not np.ndarray:
            if operand.opcode != "constant" or operand.shape != ():
                return None
            buffer = operand.attr("literal").array
        values.append(buffer)
    result = _COMPARISONS[direction](*values)
    if type(result) is not np.ndarray or result.shape != node.shape:
        return None
    return result


def _aligned_right(broadcast: Instruction) -> bool:
    """Whether a broadcast maps its operand's axes onto the last axes of its shape (NumPy's rule)."""
    rank, dimensions = broadcast.operands[0].ndim, tuple(broadcast.attr("dimensions"))
    return dimensions == tuple(range(broadcast.ndim - rank, broadcast.ndim))


def _is_constant(node: Instruction) -> bool:
    while node.opcode in ("broadcast", "reshape", "convert"):
        node = node.operands[0]
    return node.opcode in ("constant", "parameter", "iota")


def _static_array(item) -> np.ndarray:
    """A list/tuple/NumPy index as a NumPy array; an empty list is an integer index, as in NumPy."""
    array = np.asarray(item)
    if array.size == 0 and array.dtype.kind not in "biu":
        array = array.astype(np.int64)
    return array


def _classify(item):
    """(kind, payload) for one key item; kinds: newaxis, ellipsis, slice, integer, bool,
    array (static NumPy integer array or lazy Array), mask (NumPy boolean array)."""
    if item is None:
        return "newaxis", None
    if item is Ellipsis:
        return "ellipsis", None
    if isinstance(item, slice):
        return "slice", item
    if isinstance(item, (bool, np.bool_)):
        return "bool", bool(item)
    if isinstance(item, (int, np.integer)):
        return "integer", int(item)
    if isinstance(item, (list, tuple, range)):
        item = as_array(item, where="__getitem__") if contains_lazy(item) else _static_array(item)
    if isinstance(item, Array):
        if dtypes.is_bool(item.dtype):
            value = evaluated_mask(item)  # a mask's selection depends on its values: evaluate
            return ("bool", bool(value)) if value.ndim == 0 else ("mask", value)
        if not dtypes.is_integer(item.dtype):
            raise IndexError(NOT_INTEGER_ARRAY)
        return "array", item
    if isinstance(item, np.ndarray):
        if item.dtype == np.bool_:
            return ("bool", bool(item)) if item.ndim == 0 else ("mask", item)
        if item.dtype.kind not in "iu":
            raise IndexError(NOT_INTEGER_ARRAY)
        # A 0-d integer array is an index array (NumPy: its result is a copy, never a view).
        return "array", item
    if hasattr(item, "__index__") and not isinstance(item, (float, complex)):
        return "integer", operator.index(item)
    raise IndexError(VALID_INDICES)


def _consumed(kind, payload) -> int:
    if kind in ("slice", "integer", "array"):
        return 1
    if kind == "mask":
        return payload.ndim
    return 0


def _static_part(array: np.ndarray, axis: int, size: int) -> np.ndarray:
    """Check a static index array against the axis and wrap negative entries (once the
    advanced indices are known to select something: `parse_key`)."""
    bad = (array < -size) | (array >= size)
    if np.any(bad):
        raise out_of_bounds(int(array[bad].flat[0]), axis, size)
    array = array.astype(np.int64)
    return np.where(array < 0, array + size, array)


def _slice_entry(item: slice, axis: int, size: int) -> SliceIndex:
    start, stop, step = item.indices(size)  # NumPy's (and Python's) clamping; step 0 raises
    length = len(range(start, stop, step))
    return SliceIndex(axis, start if length else 0, step, length, size)


def parse_key(shape: tuple[int, ...], key) -> IndexPlan:
    """Parse `key` for an array of `shape` into an IndexPlan (raises IndexError as NumPy)."""
    items = key if isinstance(key, tuple) else (key,)
    classified = [_classify(item) for item in items]
    if sum(kind == "ellipsis" for kind, _ in classified) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(_consumed(kind, payload) for kind, payload in classified)
    ndim = len(shape)
    if consumed > ndim:
        raise IndexError(
            f"too many indices for array: array is {ndim}-dimensional, but {consumed} were indexed"
        )
    advanced = any(kind in ("array", "mask", "bool") for kind, _ in classified)
    entries: list = []
    axis = 0
    for kind, payload in classified:
        if kind == "newaxis":
            entries.append(NewAxis())
        elif kind == "ellipsis":
            entries.append(EllipsisMarker())
            for _ in range(ndim - consumed):
                entries.append(_slice_entry(slice(None), axis, shape[axis]))
                axis += 1
        elif kind == "slice":
            entries.append(_slice_entry(payload, axis, shape[axis]))
            axis += 1
        elif kind == "integer":
            size = shape[axis]
            if not -size <= payload < size:
                raise out_of_bounds(payload, axis, size)
            value = payload % size
            if advanced:
                entries.append(AdvancedIndex((axis,), (np.array(value, np.int64),), ()))
            else:
                entries.append(IntegerIndex(axis, value))
            axis += 1
        elif kind == "bool":
            entries.append(AdvancedIndex((), (), (1,) if payload else (0,)))
        elif kind == "mask":
            entries.append(_mask_entry(payload, axis, shape))
            axis += payload.ndim
        else:  # "array"
            entries.append(_array_entry(payload, axis, shape[axis]))
            axis += 1
    while axis < ndim:
        entries.append(_slice_entry(slice(None), axis, shape[axis]))
        axis += 1
    if not advanced:
        return IndexPlan(tuple(entries), None, False)
    advanced_shape = _broadcast_advanced([e for e in entries if isinstance(e, AdvancedIndex)])
    selects = math.prod(advanced_shape) > 0
    entries = [_checked(entry, shape, selects) if type(entry) is _UncheckedArray else entry for entry in entries]
    positions = [index for index, entry in enumerate(entries) if isinstance(entry, AdvancedIndex)]
    adjacent = positions[-1] - positions[0] + 1 == len(positions)
    return IndexPlan(tuple(entries), advanced_shape, not adjacent)


def _mask_entry(mask: np.ndarray, axis: int, shape) -> AdvancedIndex:
    for offset, mask_size in enumerate(mask.shape):
        size = shape[axis + offset]
        if mask_size != size and mask_size:  # NumPy lets a length-0 mask axis pass
            raise IndexError(
                f"boolean index did not match indexed array along axis {axis + offset}; size of "
                f"axis is {size} but size of corresponding boolean axis is {mask_size}"
            )
    parts = tuple(part.astype(np.int64) for part in np.nonzero(mask))
    count = parts[0].shape[0]
    return AdvancedIndex(tuple(range(axis, axis + mask.ndim)), parts, (count,))


@dataclass(frozen=True, eq=False)
class _UncheckedArray(AdvancedIndex):
    """A static index array before its bounds check (parse_key checks it once the advanced
    indices' broadcast shape is known)."""


def _array_entry(array, axis: int, size: int) -> AdvancedIndex:
    if isinstance(array, Array):
        return AdvancedIndex((axis,), (convert(array._node, dtypes.int64),), tuple(array.shape))
    return _UncheckedArray((axis,), (array,), tuple(array.shape))


def _checked(entry: AdvancedIndex, shape, selects: bool) -> AdvancedIndex:
    """A static index array checked and wrapped; when the advanced indices select nothing,
    NumPy reads none of it, so any values pass (zeros stand in)."""
    (axis,), (array,) = entry.axes, entry.parts
    part = _static_part(array, axis, shape[axis]) if selects else np.zeros(array.shape, np.int64)
    return AdvancedIndex(entry.axes, (part,), entry.shape)


def _broadcast_advanced(entries: list[AdvancedIndex]) -> tuple[int, ...]:
    shapes = [entry.shape for entry in entries]
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        shown = " ".join(format_shape(shape) for shape in shapes)
        raise IndexError(
            f"shape mismatch: indexing arrays could not be broadcast together with shapes {shown} "
        ) from None
