"""NumPy's functions that change their first argument in place: place, putmask, copyto and
fill_diagonal.

A lazy array's graph is immutable, so each records the new value (a `select` between the
old value and the values written, or a scatter) and moves the array object to it, as
`x[key] = value` does (views.assign): every reference to the array sees the change, a view
writes through to its base, and an array that was copied earlier (`y = x.copy()`) keeps its
value. Nothing is evaluated, also with a lazy mask, except where NumPy's answer depends on
the mask's values (`place` with no values to write). A NumPy array as first argument (NumPy
dispatching `np.copyto(numpy_array, lazy_array)` here) is written by NumPy itself, with the
other arguments evaluated.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..hlo import Instruction, constant, make
from .array import Array
from .axis_positions import fitted, numpy_call
from .core import as_array, broadcast_to, contains_lazy, convert
from .cumulative import cumsum
from .elementwise import remainder, subtract
from .manipulation_nodes import check_casting, reshape_node
from .views import assign

__all__ = ["copyto", "fill_diagonal", "place", "putmask"]


def _is_lazy(value) -> bool:
    return isinstance(value, Array) or (isinstance(value, (list, tuple)) and contains_lazy(value))


def _evaluated(value):
    """`value` with lazy arrays replaced by their NumPy values (for NumPy's own function)."""
    return as_array(value).numpy() if _is_lazy(value) else value


def _target(array, where: str, argument: str) -> bool:
    """Whether the first argument is a lazy array (else a NumPy array, written by NumPy)."""
    if isinstance(array, Array):
        return True
    if isinstance(array, np.ndarray):
        return False
    raise TypeError(
        f"{where}: {argument} must be a lazyarr or NumPy array (it is changed in place), got {type(array).__name__}"
    )


def _flat_truth(mask, array: Array, where: str) -> Instruction:
    """The truth of `mask` (NumPy's cast to bool) as a 1-d node of `array`'s size."""
    if _is_lazy(mask):
        truth = convert(as_array(mask, where=where)._node, dtypes.bool_)
    else:
        truth = as_array(np.asarray(mask).astype(bool), where=where)._node
    if truth.size != array.size:
        raise ValueError(
            f"{where}: mask and data must be the same size (mask has {truth.size} elements, data {array.size})"
        )
    return reshape_node(truth, (array.size,))


def _flat_values(values, dtype, where: str) -> Instruction:
    """`values` converted to `dtype` as NumPy converts them here, flattened: arrays (NumPy's,
    0-d ones too, and lazy ones) under the 'safe' casting rule (TypeError otherwise, nothing
    written); Python scalars, NumPy scalars and sequences by NumPy's conversion (a Python int
    out of range raises OverflowError)."""
    if isinstance(values, (np.ndarray, Array)):
        check_casting(values.dtype, dtype, "safe", where)
    if _is_lazy(values):
        node = convert(as_array(values, where=where)._node, dtype)
    else:
        node = as_array(numpy_call(np.asarray, where, values, dtype=dtype), where=where)._node
    return reshape_node(node, (node.size,))


def _write_selected(array: Array, truth: Instruction, values: Instruction, source: Instruction | None) -> None:
    """array.flat[i] = values[source[i]] wherever truth[i] (source None: values[i])."""
    picked = values
    if source is not None:
        picked = make("gather", [values, reshape_node(source, (source.size, 1))], index_dims=(0,))
    flat = reshape_node(array._node, (array.size,))
    assign(array, reshape_node(make("select", [truth, picked, flat]), array.shape))


def place(arr, mask, vals) -> None:
    """Write `vals` in order (repeating them as needed) into `arr` where `mask` is true, in
    place (NumPy's place; `mask` has arr's size). Stays lazy, also with a lazy mask.

    >>> import lazyarr as la
    >>> x = la.asarray([1, 2, 3, 4])
    >>> la.place(x, x > 1, [10, 20])
    >>> x.tolist()
    [1, 10, 20, 10]
    """
    if not _target(arr, "place", "arr"):
        return np.place(arr, _evaluated(mask), _evaluated(vals))
    truth = _flat_truth(mask, arr, "place")
    values = _flat_values(vals, arr.dtype, "place")
    if values.size == 0:
        if np.any(as_array(mask, where="place").numpy()):  # NumPy's error depends on the mask's values
            raise ValueError("place: Cannot insert from an empty array! (mask has true entries, vals is empty)")
        return None
    # The k-th true entry takes vals[k % len(vals)]: k is the running count of true entries.
    counts = cumsum(Array(truth), dtype=dtypes.int64)
    source = remainder(subtract(counts, 1), values.size)._node
    _write_selected(arr, truth, values, source)
    return None


def putmask(a, mask, values) -> None:
    """Set `a.flat[n] = values.flat[n % len(values)]` wherever `mask.flat[n]` is true, in place
    (NumPy's putmask; `mask` has a's size, empty `values` write nothing). Stays lazy.

    >>> import lazyarr as la
    >>> x = la.asarray([1, 2, 3, 4])
    >>> la.putmask(x, x > 2, [7, 8])
    >>> x.tolist()
    [1, 2, 7, 8]
    """
    if not _target(a, "putmask", "a"):
        return np.putmask(a, _evaluated(mask), _evaluated(values))
    truth = _flat_truth(mask, a, "putmask")
    flat_values = _flat_values(values, a.dtype, "putmask")
    count = flat_values.size
    if count == 0:
        return None
    source = None if count == a.size else constant(np.arange(a.size, dtype=np.int64) % count)
    _write_selected(a, truth, flat_values, source)
    return None


def _where_mask(where, shape) -> Instruction | None:
    """The `where=` of copyto as a bool node broadcast to `shape` (None: everywhere)."""
    if where is True:
        return None
    if _is_lazy(where):
        mask = as_array(where, where="copyto")
        if not dtypes.is_bool(mask.dtype):
            raise TypeError(
                f"copyto: Cannot cast array data from {mask.dtype!r} to dtype('bool') according to the rule 'safe'"
            )
        node = mask._node
    else:
        if isinstance(where, np.ndarray) and where.dtype != np.bool_:
            raise TypeError(
                f"copyto: Cannot cast array data from {where.dtype!r} to dtype('bool') according to the rule 'safe'"
            )
        node = as_array(np.asarray(where, dtype=bool), where="copyto")._node
    offset = len(shape) - node.ndim
    if offset < 0 or any(size not in (1, shape[offset + axis]) for axis, size in enumerate(node.shape)):
        raise ValueError(f"copyto: could not broadcast where mask from shape {node.shape} into shape {shape}")
    return broadcast_to(node, shape)


_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def copyto(dst, src, casting="same_kind", where=True) -> None:
    """Copy `src` (broadcast to dst's shape) into `dst` in place, where `where` is true.

    `casting` is checked as NumPy checks it (Python scalars weak: `copyto(int8_array, 5)` is
    fine, `copyto(int8_array, 1.5)` raises TypeError, 1000 raises OverflowError). Stays lazy.

    >>> import lazyarr as la
    >>> x = la.zeros(3)
    >>> la.copyto(x, la.asarray([1.0, 2.0, 3.0]), where=la.asarray([True, False, True]))
    >>> x.tolist()
    [1.0, 0.0, 3.0]
    """
    if casting not in _CASTINGS:
        raise ValueError(f"copyto: casting must be one of {', '.join(map(repr, _CASTINGS))} (got {casting!r})")
    if not _target(dst, "copyto", "dst"):
        return np.copyto(dst, _evaluated(src), casting=casting, where=_evaluated(where))
    if _is_lazy(src):
        source = as_array(src, where="copyto")
        check_casting(source.dtype, dst.dtype, casting, "copyto")
        node = convert(source._node, dst.dtype)
    else:
        # NumPy's own cast into a scratch array of src's shape: its casting checks, its
        # conversion (and OverflowError for a Python int out of range), nothing else.
        converted = np.empty(numpy_call(np.shape, "copyto", src), dtype=dst.dtype)
        numpy_call(np.copyto, "copyto", converted, src, casting=casting)
        node = as_array(converted, where="copyto")._node
    mask = _where_mask(where, dst.shape)
    update = fitted(node, dst.shape, "copyto", advanced=False)
    assign(dst, update if mask is None else make("select", [mask, update, dst._node]))
    return None


def fill_diagonal(a, val, wrap=False) -> None:
    """Write `val` (repeated as needed) on the main diagonal of `a` in place: entries
    a[i, i, ..., i] of an array whose dimensions are equal, or a[i, i] of a 2-d one (a tall
    matrix restarts its diagonal every columns + 1 rows with `wrap=True`). Stays lazy.

    >>> import lazyarr as la
    >>> x = la.zeros((2, 2), dtype=int)
    >>> la.fill_diagonal(x, 5)
    >>> x.tolist()
    [[5, 0], [0, 5]]
    """
    if not _target(a, "fill_diagonal", "a"):
        return np.fill_diagonal(a, _evaluated(val), wrap=wrap)
    if a.ndim < 2:
        raise ValueError(f"fill_diagonal: array must be at least 2-d, got shape {a.shape}")
    end = None
    if a.ndim == 2:
        step = a.shape[1] + 1
        if not wrap:
            end = a.shape[1] * a.shape[1]  # a tall matrix's diagonal does not wrap
    else:
        if len(set(a.shape)) != 1:
            raise ValueError(f"fill_diagonal: All dimensions of input must be of equal length, got shape {a.shape}")
        step = 1 + int(np.cumprod(a.shape[:-1]).sum())
    positions = np.arange(a.size, dtype=np.int64)[:end:step]
    if positions.size == 0:
        return None
    values = _flat_values(val, a.dtype, "fill_diagonal")
    if values.size == 0:
        return None
    cycle = constant((np.arange(positions.size, dtype=np.int64) % values.size).reshape(-1, 1))
    cycled = values if values.size == positions.size else make("gather", [values, cycle], index_dims=(0,))
    flat = reshape_node(a._node, (a.size,))
    written = make("scatter", [flat, constant(positions.reshape(-1, 1)), cycled], index_dims=(0,), mode="set")
    assign(a, reshape_node(written, a.shape))
    return None
