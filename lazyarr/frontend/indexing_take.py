"""take, take_along_axis, put_along_axis, compress and ix_: NumPy's indexing helpers.

Each one is an ordinary key handed to `getitem`/`setitem`, so it shares their lowering
(gather/scatter) and their errors. `put_along_axis` rebinds its array argument, as NumPy
modifies it in place (lazyarr arrays are immutable: the name now holds a new graph node).
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..hlo import make
from ..shapes import normalize_axis
from . import elementwise
from .array import Array, leaf_for
from .core import as_array, convert, from_numpy, wrap
from .views import assign


def _flattened(array: Array) -> Array:
    if array.ndim == 1:
        return array
    return wrap(make("reshape", [array._node], shape=(array.size,)))


def _index_operand(indices, where: str):
    """A static NumPy array, or a lazy array, of indices as given."""
    if isinstance(indices, Array):
        return indices
    if isinstance(indices, (list, tuple)) and any(isinstance(item, Array) for item in indices):
        return as_array(indices, where=where)
    array = np.asarray(indices)
    if array.size == 0 and array.dtype.kind not in "biu":
        array = array.astype(np.int64)
    return array


def static_integer_indices(indices) -> bool:
    """Whether `indices` are integers known now: a non-empty list of Python ints, or a NumPy
    integer array of at least one dimension (a 0-d one picks a single element)."""
    if type(indices) is list:
        return bool(indices) and all(type(item) is int for item in indices)
    return type(indices) is np.ndarray and indices.dtype.kind in "iu" and indices.ndim > 0


def _host_take(a, indices, axis, mode) -> Array | None:
    """`take` of an evaluated host array with static integer indices (a NumPy integer array, a
    list of Python ints) by NumPy's own take: the same elements as the gather the general path
    builds, a copy, in a microsecond and no compiled run. None where the general path applies
    (a lazy array, other indices, an error: lazyarr's names the call)."""
    if type(a) is not Array or not (axis is None or type(axis) is int):
        return None
    buffer = a._node._bound
    if type(buffer) is not np.ndarray or not static_integer_indices(indices):
        return None
    try:
        if mode == "wrap":  # (NumPy's wrap steps by the axis size, one step at a time: 2**62 would hang)
            size = buffer.size if axis is None else buffer.shape[axis]
            if size:
                indices, mode = np.mod(indices, size), "raise"
        return Array(leaf_for(np.asarray(np.take(buffer, indices, axis=axis, mode=mode))))  # (new: contiguous)
    except (IndexError, ValueError, TypeError):
        return None


def take(a, indices, axis=None, out=None, mode="raise") -> Array:
    """Elements of `a` at `indices` along `axis` (NumPy's and the array API's take).

    axis=None takes from the flattened array. `mode` is NumPy's: 'raise' (out-of-range
    indices raise IndexError), 'wrap' (modulo the axis size) or 'clip' (into [0, size-1]).

    >>> import numpy as np, lazyarr as la
    >>> np.asarray(take(la.asarray([[1, 2], [3, 4]]), [1, 0], axis=1))
    array([[2, 1],
           [4, 3]])
    """
    from .indexing import getitem

    if out is not None:
        raise TypeError("take: out= is not supported; lazyarr arrays are immutable, use the result")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"take: clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    taken = _host_take(a, indices, axis, mode)
    if taken is not None:
        return taken
    array = as_array(a, where="take")
    if axis is None:
        array, axis = _flattened(array), 0
    else:
        axis = normalize_axis(axis, array.ndim, where="take")
    index = _index_operand(indices, "take")
    if dtypes.is_complex(index.dtype) or (isinstance(indices, (np.ndarray, Array)) and dtypes.is_floating(index.dtype)):
        # NumPy casts index arrays 'same_kind' (bool, not float); lists and scalars are converted
        raise TypeError(f"take: cannot cast indices of dtype {index.dtype} to int64 according to the rule 'same_kind'")
    size = array.shape[axis]
    if not dtypes.is_integer(index.dtype):  # NumPy casts bool indices, and float lists, to intp
        index = wrap(convert(index._node, np.int64)) if isinstance(index, Array) else index.astype(np.int64)
    if size == 0 and index.size:
        raise IndexError("take: cannot do a non-empty take from an empty axes.")
    if mode == "wrap" and size:
        index = _lazy_or_static(index, lambda i: np.mod(i, size), lambda i: elementwise.remainder(i, size))
    elif mode == "clip" and size:
        index = _lazy_or_static(
            index, lambda i: np.clip(i, 0, size - 1), lambda i: elementwise.clip(i, 0, size - 1)
        )
    return getitem(array, (slice(None),) * axis + (index,))


def _lazy_or_static(index, static, lazy):
    return lazy(index) if isinstance(index, Array) else static(index)


def _along_axis_key(array: Array, indices, axis, where: str):
    """(array, key) selecting `indices` along `axis` and the matching position elsewhere."""
    index = _index_operand(indices, where)
    if axis is None:
        if index.ndim != 1:
            raise ValueError(f"{where}: when axis=None, `indices` must have a single dimension.")
        array, axis = _flattened(array), 0
    else:
        axis = normalize_axis(axis, array.ndim, where=where)
        if index.ndim != array.ndim:
            raise ValueError(
                f"{where}: `indices` and `arr` must have the same number of dimensions "
                f"(indices {index.shape}, arr {array.shape})"
            )
    if not dtypes.is_integer(index.dtype):
        raise IndexError(f"{where}: `indices` must be an integer array, got dtype {index.dtype}")
    key = []
    for dimension, size in enumerate(array.shape):
        if dimension == axis:
            key.append(index)
        else:
            view = [1] * array.ndim
            view[dimension] = size
            key.append(np.arange(size, dtype=np.int64).reshape(view))
    return array, tuple(key)


def take_along_axis(arr, indices, axis=-1) -> Array:
    """`arr` at `indices` along `axis`, matching positions elsewhere (NumPy; array API 2024.12).

    >>> import numpy as np, lazyarr as la
    >>> x = la.asarray([[10, 30, 20]])
    >>> np.asarray(take_along_axis(x, la.argsort(x, axis=1), axis=1))
    array([[10, 20, 30]])
    """
    from .indexing import getitem

    array, key = _along_axis_key(as_array(arr, where="take_along_axis"), indices, axis, "take_along_axis")
    return getitem(array, key)


def put_along_axis(arr, indices, values, axis) -> None:
    """Write `values` into `arr` at `indices` along `axis`; rebinds `arr` (NumPy edits in place).

    >>> import lazyarr as la
    >>> x = la.asarray([[1, 2, 3]])
    >>> put_along_axis(x, la.asarray([[0]]), 9, axis=1); x.tolist()
    [[9, 2, 3]]
    """
    from .indexing import setitem

    if not isinstance(arr, Array):
        raise TypeError(
            f"put_along_axis: arr must be a lazyarr array (it is updated in place), "
            f"got {type(arr).__name__}"
        )
    if axis is None and arr.ndim != 1:
        raise ValueError("put_along_axis: axis=None needs a 1-d array (lazyarr rebinds arr, not a view)")
    array, key = _along_axis_key(arr, indices, axis, "put_along_axis")
    assign(arr, setitem(array, key, values))


def compress(condition, a, axis=None, out=None) -> Array:
    """The slices of `a` along `axis` where `condition` is true (evaluates `condition`).

    >>> import lazyarr as la
    >>> compress([False, True, True], la.asarray([1, 2, 3])).tolist()
    [2, 3]
    """
    if out is not None:
        raise TypeError("compress: out= is not supported; lazyarr arrays are immutable, use the result")
    mask = np.asarray(condition)
    if mask.ndim != 1:
        raise ValueError(f"compress: condition must be a 1-d array, got shape {mask.shape}")
    positions = np.nonzero(mask)[0].astype(np.int64)
    return take(a, positions, axis=axis)


def ix_(*args) -> tuple[Array, ...]:
    """Open-mesh index arrays from 1-d sequences (boolean ones through nonzero, evaluated).

    >>> import lazyarr as la
    >>> rows, columns = ix_([0, 1], [2, 0])
    >>> rows.shape, columns.shape
    ((2, 1), (1, 2))
    """
    count = len(args)
    result = []
    for position, sequence in enumerate(args):
        index = _index_operand(sequence, "ix_")
        if index.ndim != 1:
            raise ValueError(
                f"ix_: Cross index must be 1 dimensional, argument {position} has shape {index.shape}"
            )
        if dtypes.is_bool(index.dtype):
            index = np.nonzero(np.asarray(index))[0].astype(np.int64)
        view = (1,) * position + (index.shape[0],) + (1,) * (count - position - 1)
        if isinstance(index, Array):
            result.append(wrap(make("reshape", [index._node], shape=view)))
        else:
            result.append(from_numpy(index.reshape(view), where="ix_"))
    return tuple(result)

