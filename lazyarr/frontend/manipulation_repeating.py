"""Repeating, rotating and padding: tile, repeat, roll, pad, diff.

tile and integer repeat are one broadcast plus one reshape (O(1) graph, no copy until a
consumer reads); roll is two slices and a concatenate per rolled axis; pad is HLO `pad`.
Only array-valued `repeats` needs an index constant (its output length depends on it).
"""

from __future__ import annotations

import math
import operator

import numpy as np

from .. import dtypes
from ..hlo import constant, make
from ..shapes import normalize_axis
from . import elementwise
from .array import Array
from .core import as_array, convert, wrap
from .manipulation_joining import concatenate
from .manipulation_nodes import (
    as_items,
    broadcast_node,
    reshape_node,
    slice_node,
    transpose_node,
)
from .templated_calls import replayed

__all__ = ["tile", "repeat", "roll", "pad", "diff"]


def tile(A, reps) -> Array:
    """`A` repeated `reps` times along each axis (reps is an int or a tuple).

    >>> import lazyarr as la
    >>> la.tile(la.asarray([1, 2]), (2, 2)).tolist()
    [[1, 2, 1, 2], [1, 2, 1, 2]]
    """
    array = as_array(A, where="tile")
    items = as_items(reps)
    try:
        counts = tuple(operator.index(item) for item in items)
    except TypeError:
        raise TypeError(f"tile: reps must be an int or a tuple of ints, got {reps!r}") from None
    if any(count < 0 for count in counts):
        raise ValueError(f"tile: negative dimensions are not allowed, got reps {counts}")
    ndim = max(len(counts), array.ndim)
    counts = (1,) * (ndim - len(counts)) + counts
    shape = (1,) * (ndim - array.ndim) + array.shape
    node = reshape_node(array._node, shape)
    if all(count == 1 for count in counts):
        return wrap(node)
    # (s0, s1) -> broadcast to (t0, s0, t1, s1) -> reshape to (t0*s0, t1*s1)
    interleaved = tuple(size for pair in zip(counts, shape) for size in pair)
    spread = make("broadcast", [node], shape=interleaved, dimensions=tuple(range(1, 2 * ndim, 2)))
    return wrap(reshape_node(spread, tuple(count * size for count, size in zip(counts, shape))))


def _static_repeats(repeats):
    """`repeats` as a NumPy intp array, converted as NumPy converts it: arrays (a lazy one is
    evaluated, since it sets the output length) must cast safely to intp; Python numbers and
    lists are truncated like int()."""
    if isinstance(repeats, Array):
        repeats = repeats.numpy()
    if isinstance(repeats, np.ndarray):
        if not np.can_cast(repeats.dtype, np.intp, casting="safe"):
            raise TypeError(
                f"repeat: Cannot cast array data from {repeats.dtype!r} to {np.dtype(np.intp)!r} "
                "according to the rule 'safe'"
            )
        counts = repeats.astype(np.intp)
    else:
        counts = np.asarray(repeats)
        if counts.dtype.kind not in "biuf":
            raise TypeError(f"repeat: repeats must be integers, got {repeats!r}")
        counts = counts.astype(np.intp)
    if counts.ndim > 1:
        raise ValueError(f"repeat: repeats must be an int or a 1-d sequence, got shape {counts.shape}")
    return counts


def repeat(a, repeats, axis=None) -> Array:
    """Repeat each element `repeats` times (an int, or one count per element along `axis`).

    axis=None works on the flattened array. An int count is a broadcast and a reshape; a
    sequence of counts gathers with a constant index computed from the counts.

    >>> import lazyarr as la
    >>> la.repeat(la.asarray([1, 2]), [1, 3]).tolist()
    [1, 2, 2, 2]
    """
    array = as_array(a, where="repeat")
    if axis is None:
        array = wrap(reshape_node(array._node, (array.size,)))
        axis = 0
    else:
        axis = normalize_axis(axis, array.ndim, where="repeat")
    counts = _static_repeats(repeats)
    size = array.shape[axis]
    if counts.size == 1:
        count = int(counts.reshape(()))
        if count < 0:
            raise ValueError(f"repeat: negative dimensions are not allowed, got repeats={count}")
        widened = array.shape[: axis + 1] + (count,) + array.shape[axis + 1:]
        dimensions = tuple(range(axis + 1)) + tuple(range(axis + 2, array.ndim + 1))
        spread = make("broadcast", [array._node], shape=widened, dimensions=dimensions)
        shape = array.shape[:axis] + (size * count,) + array.shape[axis + 1:]
        return wrap(reshape_node(spread, shape))
    if counts.shape != (size,):
        raise ValueError(
            f"repeat: operands could not be broadcast together with shape ({size},) {counts.shape} "
            f"(array of shape {array.shape}, axis {axis})"
        )
    if np.any(counts < 0):
        raise ValueError("repeat: repeats may not contain negative values.")
    index = np.repeat(np.arange(size, dtype=np.int64), counts).reshape(-1, 1)
    gathered = make("gather", [array._node, constant(index)], index_dims=(axis,))
    # gather puts the indexed axis first; move it back to `axis`.
    order = list(range(1, axis + 1)) + [0] + list(range(axis + 1, array.ndim))
    return wrap(transpose_node(gathered, order))


def roll(a, shift, axis=None) -> Array:
    """Rotate elements along `axis` by `shift` (elements leaving one end enter at the other).

    The nodes are replayed from a template per (shape, dtype, shift, axis): a stencil loop
    with periodic edges rolls the same way every step (13.5 -> ~4 us a call).

    >>> import lazyarr as la
    >>> la.roll(la.asarray([1, 2, 3, 4]), 1).tolist()
    [4, 1, 2, 3]
    """
    if type(shift) is int and (axis is None or type(axis) is int):  # hot: `roll(u, 1, axis=0)` in a loop
        result = replayed("roll", lambda array: wrap(_rolled(array._node, shift, axis)), (a,), (shift, axis))
        if result is not None:
            return result
    return wrap(_rolled(as_array(a, where="roll")._node, shift, axis))


def _rolled(node, shift, axis):
    """The node of `roll(node, shift, axis)`: two slices and a concatenate per rolled axis."""
    if axis is None:
        flat = reshape_node(node, (math.prod(node.shape),))
        return reshape_node(_rolled(flat, shift, 0), node.shape)
    ndim = len(node.shape)
    axes = tuple(normalize_axis(item, ndim, where="roll") for item in as_items(axis))
    shifts = as_items(shift)
    if any(isinstance(item, (tuple, list)) for item in shifts):
        raise ValueError("roll: 'shift' and 'axis' should be scalars or 1D sequences")
    if len(shifts) != len(axes) and 1 not in (len(shifts), len(axes)):
        raise ValueError(
            f"roll: shift {shift!r} and axis {axis!r} could not be broadcast together "
            f"(lengths {len(shifts)} and {len(axes)})"
        )
    total = dict.fromkeys(range(ndim), 0)
    count = 0 if 0 in (len(shifts), len(axes)) else max(len(shifts), len(axes))
    for position in range(count):
        step = shifts[0 if len(shifts) == 1 else position]
        total[axes[0 if len(axes) == 1 else position]] += operator.index(step)
    for dimension, amount in total.items():
        size = node.shape[dimension]
        if size == 0 or amount % size == 0:
            continue
        cut = size - amount % size
        tail = slice_node(node, dimension, cut, size)
        head = slice_node(node, dimension, 0, cut)
        node = make("concatenate", [tail, head], dimension=dimension)
    return node


# -- pad -----------------------------------------------------------------------------------------
_PAD_MODES = {
    "constant": ("constant_values",), "empty": (), "edge": (), "wrap": (),
    "linear_ramp": ("end_values",), "maximum": ("stat_length",), "mean": ("stat_length",),
    "median": ("stat_length",), "minimum": ("stat_length",), "reflect": ("reflect_type",),
    "symmetric": ("reflect_type",),
}


def _pairs(value, ndim: int, *, as_index: bool) -> list[tuple]:
    """NumPy's `_as_pairs`: a scalar, a (before, after) pair or one pair per axis -> ndim pairs."""
    values = np.array(value)
    if as_index:
        values = np.round(values).astype(np.intp, copy=False)
    if values.ndim < 3:
        if values.size == 1:
            single = values.ravel()[0]
            if as_index and single < 0:
                raise ValueError(f"pad: index can't contain negative values, got pad_width {value!r}")
            return [(single, single)] * ndim
        if values.size == 2 and values.shape != (2, 1):
            first, second = values.ravel()
            if as_index and (first < 0 or second < 0):
                raise ValueError(f"pad: index can't contain negative values, got pad_width {value!r}")
            return [(first, second)] * ndim
    if as_index and values.size and values.min() < 0:
        raise ValueError(f"pad: index can't contain negative values, got pad_width {value!r}")
    try:
        return [tuple(pair) for pair in np.broadcast_to(values, (ndim, 2)).tolist()]
    except ValueError:
        raise ValueError(
            f"pad: {'pad_width' if as_index else 'constant_values'} of shape {values.shape} cannot "
            f"be broadcast to ({ndim}, 2), one (before, after) pair per axis"
        ) from None


def _pad_value_node(value, dtype):
    """A 0-d node holding `value` converted as NumPy's slice assignment converts it."""
    if isinstance(value, Array) and value.ndim == 0:
        return convert(value._node, dtype)
    cell = np.empty((1,), dtype=dtype)
    cell[0:1] = value
    return constant(cell.reshape(()))


def pad(array, pad_width, mode="constant", **kwargs) -> Array:
    """Pad with a constant (`constant_values`, default 0; one per axis side if given so), or
    with the array's own elements: modes 'edge', 'wrap', 'reflect' and 'symmetric'.

    'empty' pads with zeros (its values are unspecified). NumPy's statistical modes
    ('mean', 'linear_ramp', ...), callables and reflect_type='odd' raise NotImplementedError.

    >>> import lazyarr as la
    >>> la.pad(la.asarray([1, 2]), (1, 2), constant_values=9).tolist()
    [9, 1, 2, 9, 9]
    """
    source = as_array(array, where="pad")
    if isinstance(pad_width, dict):
        widths = [(0, 0)] * source.ndim
        for key, width in pad_width.items():
            widths[normalize_axis(key, source.ndim, where="pad")] = (
                (width, width) if not isinstance(width, (tuple, list)) else tuple(width)
            )
        pad_width = widths
    if isinstance(pad_width, Array):
        pad_width = pad_width.numpy()
    if np.asarray(pad_width).dtype.kind != "i":
        raise TypeError(f"pad: `pad_width` must be of integral type, got {pad_width!r}")
    widths = [(int(before), int(after)) for before, after in _pairs(pad_width, source.ndim, as_index=True)]
    if callable(mode) or mode not in _PAD_MODES:
        if callable(mode):
            raise NotImplementedError("pad: a callable mode is not supported by lazyarr; use mode='constant'")
        raise ValueError(f"pad: mode {mode!r} is not supported; modes: {', '.join(_PAD_MODES)}")
    unsupported = set(kwargs) - set(_PAD_MODES[mode])
    if unsupported:
        raise ValueError(f"pad: unsupported keyword arguments for mode '{mode}': {unsupported}")
    if mode in _INDEXED_MODES:
        return _pad_repeating(source, widths, mode, kwargs.get("reflect_type", "even"))
    if mode not in ("constant", "empty"):
        raise NotImplementedError(
            f"pad: mode {mode!r} is not implemented by lazyarr; 'constant', 'empty', 'edge', 'wrap', "
            "'reflect' and 'symmetric' are"
        )
    values = kwargs.get("constant_values", 0)
    if isinstance(values, Array) and values.ndim == 0:
        value_pairs = [(values, values)] * source.ndim
    else:
        if isinstance(values, Array):
            values = values.numpy()
        value_pairs = _pairs(values, source.ndim, as_index=False)
    node = source._node
    zeros = [0] * source.ndim
    # NumPy fills axis by axis, so corners take the value of the last axis padded there.
    for axis, ((before, after), (low_value, high_value)) in enumerate(zip(widths, value_pairs)):
        for width, value, side in ((before, low_value, "low"), (after, high_value, "high")):
            if width == 0:
                continue
            sizes = list(zeros)
            sizes[axis] = width
            padding = {"low": tuple(zeros), "high": tuple(zeros), "interior": tuple(zeros)}
            padding[side] = tuple(sizes)
            node = make("pad", [node, _pad_value_node(value, node.dtype)], **padding)
    return wrap(node)


def _pad_repeating(source: Array, widths: list[tuple[int, int]], mode: str, reflect_type: str) -> Array:
    """Modes whose padding repeats the array's own elements, along each axis in turn (as NumPy
    pads, so corners come from the axes padded before): the padding is slices of the axis
    (reversed to reflect, a size-1 slice broadcast for 'edge') joined to it, which fuse into
    one copy; a width beyond what one reflection or wrap reaches takes every padded element's
    source position instead (a static `take`, NumPy's repeated periods)."""
    if reflect_type == "odd":  # (NumPy takes any other value as 'even')
        raise NotImplementedError("pad: reflect_type='odd' is not implemented by lazyarr; the default 'even' is")
    from .indexing_take import take

    node = source._node
    for axis, (before, after) in enumerate(widths):
        if before == 0 and after == 0:
            continue
        size = node.shape[axis]
        if size == 0:
            raise ValueError(f"pad: can't extend empty axis {axis} using modes other than 'constant' or 'empty'")
        pieces = _padding_slices(node, axis, before, after, mode)
        if pieces is None:
            positions = _INDEXED_MODES[mode](np.arange(-before, size + after), size)
            node = take(wrap(node), positions, axis=axis)._node
        else:
            node = make("concatenate", [piece for piece in pieces if piece.shape[axis]], dimension=axis)
    return wrap(node)


def _padding_slices(node, axis: int, before: int, after: int, mode: str) -> list | None:
    """[before, node, after] along `axis` as slices of `node`, or None when a width exceeds
    what one copy of the mode's period covers."""
    size = node.shape[axis]
    if mode == "edge":
        shape = list(node.shape)

        def edge(start, width):
            shape[axis] = width
            return broadcast_node(slice_node(node, axis, start, start + 1), shape, where="pad")

        return [edge(0, before), node, edge(size - 1, after)]
    reach = size - 1 if mode == "reflect" else size
    if before > reach or after > reach or (mode == "reflect" and size == 1):
        return None
    if mode == "wrap":
        return [slice_node(node, axis, size - before, size), node, slice_node(node, axis, 0, after)]
    skip = 1 if mode == "reflect" else 0  # reflect leaves the edge element out, symmetric repeats it

    def mirrored(start, stop):
        return make("reverse", [slice_node(node, axis, start, stop)], dimensions=(axis,))

    return [mirrored(skip, skip + before), node, mirrored(size - skip - after, size - skip)]


def _reflected(positions: np.ndarray, size: int) -> np.ndarray:
    """Mirror about the end elements, which are not repeated (period 2 * (size - 1))."""
    if size == 1:
        return np.zeros_like(positions)
    period = 2 * (size - 1)
    folded = positions % period
    return np.where(folded < size, folded, period - folded)


def _symmetric(positions: np.ndarray, size: int) -> np.ndarray:
    """Mirror about the array's edges, which are repeated (period 2 * size)."""
    folded = positions % (2 * size)
    return np.where(folded < size, folded, 2 * size - 1 - folded)


# mode -> (positions along the padded axis relative to the source's first element, the source
# axis size) -> the source position each padded element reads
_INDEXED_MODES = {
    "edge": lambda positions, size: np.clip(positions, 0, size - 1),
    "wrap": lambda positions, size: positions % size,
    "reflect": _reflected,
    "symmetric": _symmetric,
}


# -- diff ----------------------------------------------------------------------------------------
_NO_VALUE = object()


def diff(a, n=1, axis=-1, prepend=_NO_VALUE, append=_NO_VALUE) -> Array:
    """n-th discrete difference along `axis` (not_equal for booleans, as NumPy).

    >>> import lazyarr as la
    >>> la.diff(la.asarray([1, 4, 9, 16])).tolist()
    [3, 5, 7]
    """
    if type(n) is int and n > 0 and type(axis) is int and prepend is _NO_VALUE and append is _NO_VALUE:
        result = replayed("diff", lambda array: _diff(array, n, axis), (a,), (n, axis))  # hot: `diff(x)` in a loop
        if result is not None:
            return result
    return _diff(a, n, axis, prepend, append)


def _diff(a, n=1, axis=-1, prepend=_NO_VALUE, append=_NO_VALUE) -> Array:
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"diff: order must be non-negative but got {n}")
    array = as_array(a, where="diff")
    if n == 0:
        return array
    if array.ndim == 0:
        raise ValueError("diff: diff requires input that is at least one dimensional")
    axis = normalize_axis(axis, array.ndim, where="diff")
    combined = []
    for extra in (prepend, append):
        if extra is _NO_VALUE:
            combined.append(None)
            continue
        extra = as_array(extra, where="diff")
        if extra.ndim == 0:
            shape = array.shape[:axis] + (1,) + array.shape[axis + 1:]
            extra = wrap(broadcast_node(extra._node, shape, where="diff"))
        combined.append(extra)
    if combined[0] is not None or combined[1] is not None:
        parts = [combined[0], array, combined[1]]
        array = concatenate([part for part in parts if part is not None], axis)
    operation = elementwise.not_equal if array.dtype == dtypes.bool_ else elementwise.subtract
    for _ in range(n):
        size = array.shape[axis]
        later = wrap(slice_node(array._node, axis, min(1, size), size))
        earlier = wrap(slice_node(array._node, axis, 0, max(size - 1, 0)))
        array = operation(later, earlier)
    return array
