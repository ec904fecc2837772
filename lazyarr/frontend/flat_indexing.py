"""Indexing an array as if it were 1-d: `a.flat` (read, write, iterate) and `put`.

`a.flat[key]` reads the C-order flattening of `a` with an integer, slice, Ellipsis or 1-d
boolean mask, or an integer array (the result has the index's shape). `a.flat[key] = v` and
`put(a, ind, v)` write in place as NumPy does: every reference to `a` sees the change and a
view writes through to its base (views.assign), the values repeat cyclically when fewer than
the positions, and a repeated position keeps its last value. A write records one scatter on
the flattened array, so it stays lazy; positions given statically are checked now, lazy
positions when evaluated (IndexError, as for indexing).

This module binds `Array.flat` (importing lazyarr imports it).
"""

from __future__ import annotations

import operator

import numpy as np

from .. import dtypes
from ..hlo import Instruction, constant, make
from . import elementwise
from .array import Array
from .core import as_array, convert, wrap
from .views import assign

__all__ = ["put"]

_MODES = ("raise", "wrap", "clip")


def _flattened(array: Array) -> Array:
    return wrap(make("reshape", [array._node], shape=(array.size,)))


def _static_positions(ind, where: str) -> np.ndarray:
    positions = np.asarray(ind)
    if positions.dtype.kind in "fb" and positions.size == 0:
        positions = positions.astype(np.int64)
    if positions.dtype.kind not in "iuf":
        raise TypeError(f"{where}: indices must be integers, got dtype {positions.dtype}")
    return positions.astype(np.int64).reshape(-1)  # NumPy casts float indices (truncating)


def _apply_mode(positions, mode: str, size: int, where: str):
    """Positions in [-size, size) after NumPy's clip mode (static ones checked now)."""
    if isinstance(positions, Array):
        if mode == "wrap":
            return elementwise.remainder(positions, size)
        if mode == "clip":
            return elementwise.clip(positions, 0, size - 1)
        return positions  # the scatter raises IndexError for out-of-range ones when evaluated
    if mode == "wrap":
        return np.mod(positions, size)
    if mode == "clip":
        return np.clip(positions, 0, size - 1)
    bad = (positions < -size) | (positions >= size)
    if bad.any():
        raise IndexError(f"{where}: index {int(positions[bad][0])} is out of bounds for axis 0 with size {size}")
    return positions


def _cycled_values(v, dtype, count: int, where: str) -> Instruction | None:
    """`v` converted to `dtype` as NumPy converts it, flattened and repeated (or cut) to
    `count` values; None when `v` is empty (nothing is written)."""
    if not isinstance(v, Array):
        try:
            values = np.asarray(v, dtype=dtype).reshape(-1)
        except (TypeError, ValueError, OverflowError) as error:
            raise type(error)(f"{where}: {error}") from None
        return constant(np.resize(values, count)) if values.size else None
    if v.size == 0:
        return None
    flat = make("reshape", [convert(v._node, dtype)], shape=(v.size,))
    if v.size == count:
        return flat
    cycle = constant((np.arange(count, dtype=np.int64) % v.size).reshape(count, 1))
    return make("gather", [flat, cycle], index_dims=(0,))


def _write(array: Array, positions, v, mode: str, where: str) -> None:
    """array.flat[positions] = v (cycled), as one scatter; positions static (int64) or lazy."""
    count = positions.size
    if count == 0:
        return
    if array.size == 0:
        raise IndexError(f"{where}: cannot replace elements of an empty array")
    values = _cycled_values(v, array.dtype, count, where)
    if values is None:
        return
    positions = _apply_mode(positions, mode, array.size, where)
    if isinstance(positions, Array):
        index = make("reshape", [convert(positions._node, dtypes.int64)], shape=(count, 1))
    else:
        index = constant(positions.reshape(count, 1))
    flat = make("reshape", [array._node], shape=(array.size,))
    written = make("scatter", [flat, index, values], index_dims=(0,), mode="set")
    assign(array, make("reshape", [written], shape=array.shape))


def put(a, ind, v, mode="raise") -> None:
    """Set the flattened `a` at positions `ind` to `v` in place (NumPy's put): `v` repeats when
    shorter than `ind`; mode 'raise' (IndexError for out-of-range positions), 'wrap' or 'clip'.

    >>> import lazyarr as la
    >>> x = la.zeros(5, dtype=int)
    >>> la.put(x, [0, 2, 4], [7, 8])
    >>> x.tolist()
    [7, 0, 8, 0, 7]
    """
    if not isinstance(a, Array):
        raise TypeError(
            f"put: a must be a lazyarr array (it is changed in place), got {type(a).__name__}"
        )
    if mode not in _MODES:
        raise ValueError(f"put: clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    if isinstance(ind, Array) or (isinstance(ind, (list, tuple)) and any(isinstance(i, Array) for i in ind)):
        positions = as_array(ind, where="put")
        if not dtypes.is_integer(positions.dtype):
            raise TypeError(f"put: indices must be integers, got dtype {positions.dtype}")
        positions = _flattened(wrap(convert(positions._node, dtypes.int64)))
    else:
        positions = _static_positions(ind, "put")
    _write(a, positions, v, mode, "put")


class FlatIterator:
    """`a.flat`: the array seen as 1-d in C order (NumPy's flatiter). Reading gives lazy
    arrays; writing changes `a` in place; iteration yields lazy 0-d elements."""

    __slots__ = ("base",)

    def __init__(self, base: Array):
        self.base = base

    def __len__(self) -> int:
        return self.base.size

    def __iter__(self):
        return iter(_flattened(self.base))

    def __array__(self, dtype=None, copy=None):
        return _flattened(self.base).__array__(dtype=dtype, copy=copy)

    def copy(self) -> Array:
        """The flattened array (a new array, not a view)."""
        return _flattened(self.base)

    def __repr__(self) -> str:
        return f"<lazyarr flat iterator over an array of shape {self.base.shape}>"

    def __getitem__(self, key) -> Array:
        from .indexing import getitem

        return getitem(_flattened(self.base), _flat_key(key, self.base.size))

    def __setitem__(self, key, value) -> None:
        key = _flat_key(key, self.base.size)
        size = self.base.size
        if _is_integer(key):
            position = operator.index(key)
            if not -size <= position < size:
                raise IndexError(f"flat: index {position} is out of bounds for size {size}")
            if np.ndim(value) != 0:
                raise ValueError("flat: Error setting single item of array (the value must be a scalar).")
            positions = np.array([position], dtype=np.int64)
        elif isinstance(key, slice) or key is Ellipsis:
            positions = np.arange(size, dtype=np.int64)[key]
        elif isinstance(key, Array):
            if dtypes.is_bool(key.dtype):
                positions = np.flatnonzero(key.numpy())  # how many: data-dependent, evaluates the mask
            else:
                positions = _flattened(wrap(convert(key._node, dtypes.int64)))
        elif np.asarray(key).dtype == np.bool_:
            positions = np.flatnonzero(np.asarray(key))
        else:
            positions = _static_positions(key, "flat")
        _write(self.base, positions, value, "raise", "flat")


def _is_integer(key) -> bool:
    """A Python or NumPy integer (a lazy 0-d array is an index array: reading it would evaluate)."""
    if isinstance(key, (bool, np.bool_, Array)):
        return False
    try:
        operator.index(key)
    except TypeError:
        return False
    return True


def _flat_key(key, size: int):
    """A key for `a.flat` as a key on the 1-d flattening, refusing what NumPy's flatiter refuses."""
    if isinstance(key, tuple):
        if len(key) != 1:
            raise IndexError(
                f"too many indices for flat iterator: flat iterator is 1-dimensional, but {len(key)} were indexed"
            )
        key = key[0]
    if key is None or isinstance(key, (bool, np.bool_, float, np.floating)):
        raise IndexError(
            "flat: only integers, slices (`:`), ellipsis (`...`) and integer or boolean arrays are valid indices"
        )
    if isinstance(key, Array) or isinstance(key, (slice, type(Ellipsis))) or _is_integer(key):
        mask_shape = key.shape if isinstance(key, Array) and dtypes.is_bool(key.dtype) else None
    else:
        static = np.asarray(key)
        mask_shape = static.shape if static.dtype == np.bool_ else None
    if mask_shape is not None and mask_shape != (size,):
        if len(mask_shape) != 1:
            raise IndexError(
                f"too many indices for flat iterator: flat iterator is 1-dimensional, but {len(mask_shape)} "
                "were indexed"
            )
        raise IndexError(
            "boolean index did not match indexed flat iterator along axis 0; size of axis is "
            f"{size} but size of corresponding boolean axis is {mask_shape[0]}"
        )
    return key


Array.flat = property(FlatIterator, doc="A 1-d iterator over the array (NumPy's `a.flat`): index, assign, iterate.")
