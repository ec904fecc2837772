"""Array creation: asarray/array, filled arrays (zeros, ones, full, *_like), from_dlpack.

Filled arrays are a broadcast of a 0-d constant, so `zeros((1000, 1000))` is two
instructions, not a megabyte literal. Inputs that hold data (lists, NumPy arrays, DLPack
capsules) are copied into a private read-only buffer: a lazy array never changes when the
caller later mutates the original. Ranges (arange, linspace, logspace) live in
creation_ranges.py, matrices and grids (eye, tri, tril, meshgrid) in creation_matrices.py;
both are re-exported here.
"""

from __future__ import annotations

import operator

import numpy as np

from .. import dtypes
from ..hlo import constant
from ..shapes import as_shape
from .array import Array
from .core import as_array, contains_lazy, convert, from_numpy, scalar_constant, wrap
from .creation_matrices import eye, identity, meshgrid, tri, tril, triu
from .creation_ranges import arange, linspace, logspace
from .manipulation_nodes import broadcast_node, reshape_node

__all__ = [
    "asarray", "array", "zeros", "ones", "empty", "full", "zeros_like", "ones_like",
    "empty_like", "full_like", "from_dlpack", "arange", "linspace", "logspace", "eye",
    "identity", "tri", "tril", "triu", "meshgrid",
]

_NO_COPY = (
    "Unable to avoid copy while creating an array as requested. lazyarr keeps a private copy "
    "of data from outside; pass copy=None to allow it"
)


def _check_device(device, where: str) -> None:
    if device not in (None, "cpu"):
        raise ValueError(f"{where}: unknown device {device!r}; lazyarr arrays live on 'cpu'")


def _check_order(order, where: str) -> None:
    if order not in (None, "C", "F", "A", "K"):
        raise ValueError(f"{where}: order must be one of 'C', 'F', 'A', 'K', got {order!r}")


def asarray(obj, /, dtype=None, order=None, *, device=None, copy=None) -> Array:
    """`obj` as a lazy array: lazy arrays pass through (converted when `dtype` differs).

    Data from outside (lists, scalars, NumPy arrays, buffers) is always copied, also with
    copy=False where NumPy could have viewed a NumPy array: a lazy array owns an immutable
    buffer. copy=False still raises where NumPy raises (a list, or a dtype change).

    >>> import lazyarr as la
    >>> la.asarray([1, 2, 3], dtype="float32").dtype
    dtype('float32')
    """
    _check_device(device, "asarray")
    _check_order(order, "asarray")
    if copy not in (None, True, False):
        raise ValueError(f"asarray: copy must be None, True or False, got {copy!r}")
    target = None if dtype is None else dtypes.as_dtype(dtype, where="asarray")
    if isinstance(obj, Array):
        if target is None or target == obj.dtype:
            return wrap(obj._node) if copy else obj
        if copy is False:
            raise ValueError(f"asarray: {_NO_COPY} (dtype {obj.dtype} -> {target})")
        return wrap(convert(obj._node, target))
    if isinstance(obj, (list, tuple)) and contains_lazy(obj):
        if copy is False:
            raise ValueError(f"asarray: {_NO_COPY} (a sequence of arrays)")
        result = as_array(obj, where="asarray")
        return result if target is None else wrap(convert(result._node, target))
    if copy is False:
        try:
            np.asarray(obj, dtype=target, copy=False)  # only asks NumPy whether a copy is needed
        except ValueError:
            raise ValueError(f"asarray: {_NO_COPY} (input {type(obj).__name__})") from None
    return from_numpy(obj, dtype=target, where="asarray")


def array(object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0) -> Array:  # noqa: A002
    """NumPy's array(): asarray, plus `ndmin` leading unit axes.

    >>> import lazyarr as la
    >>> la.array([1, 2], ndmin=3).shape
    (1, 1, 2)
    """
    result = asarray(object, dtype, order, copy=copy)
    ndmin = operator.index(ndmin)
    if result.ndim < ndmin:
        result = wrap(reshape_node(result._node, (1,) * (ndmin - result.ndim) + result.shape))
    return result


# -- filled arrays ---------------------------------------------------------------------------
def _filled(shape, value, dtype, where: str) -> Array:
    """A broadcast of the 0-d constant `value` of `dtype` (the graph stays O(1))."""
    return wrap(broadcast_node(scalar_constant(value, dtype), shape, where=where))


def _default_dtype(dtype, where: str) -> np.dtype:
    return dtypes.float64 if dtype is None else dtypes.as_dtype(dtype, where=where)


def zeros(shape, dtype=None, order="C", *, device=None) -> Array:
    """An array of zeros (float64 by default).

    >>> import lazyarr as la
    >>> la.zeros((2, 3), dtype="int32").tolist()
    [[0, 0, 0], [0, 0, 0]]
    """
    _check_device(device, "zeros")
    _check_order(order, "zeros")
    return _filled(as_shape(shape, where="zeros"), 0, _default_dtype(dtype, "zeros"), "zeros")


def ones(shape, dtype=None, order="C", *, device=None) -> Array:
    """An array of ones (float64 by default)."""
    _check_device(device, "ones")
    _check_order(order, "ones")
    return _filled(as_shape(shape, where="ones"), 1, _default_dtype(dtype, "ones"), "ones")


def empty(shape, dtype=None, order="C", *, device=None) -> Array:
    """NumPy leaves the values unspecified; lazyarr returns zeros (as cheap: one broadcast)."""
    _check_device(device, "empty")
    _check_order(order, "empty")
    return _filled(as_shape(shape, where="empty"), 0, _default_dtype(dtype, "empty"), "empty")


def _fill_node(fill_value, dtype, shape, where: str):
    """`fill_value` converted to `dtype` (NumPy's unsafe copyto) and broadcast to `shape`."""
    if isinstance(fill_value, Array):
        node = convert(fill_value._node, fill_value.dtype if dtype is None else dtype)
    else:
        if dtype is None:
            literal = np.array(fill_value)
            dtypes.as_dtype(literal.dtype, where=where)
        else:
            literal = np.empty(np.shape(fill_value), dtype=dtype)
            np.copyto(literal, fill_value, casting="unsafe")
        node = constant(literal)
    offset = len(shape) - node.ndim
    if offset < 0 or any(size not in (1, shape[offset + axis]) for axis, size in enumerate(node.shape)):
        raise ValueError(
            f"{where}: could not broadcast fill_value from shape {node.shape} into shape {shape}"
        )
    return wrap(broadcast_node(node, shape, where=where))


def full(shape, fill_value, dtype=None, order="C", *, device=None) -> Array:
    """An array of `fill_value` (a scalar or an array broadcastable to `shape`).

    The dtype is `fill_value`'s (NumPy's asarray of it) unless `dtype` is given, in which
    case the value is cast as NumPy casts it (unsafe: 2.7 fills an int array with 2).

    >>> import lazyarr as la
    >>> la.full((2,), 7).tolist()
    [7, 7]
    """
    _check_device(device, "full")
    _check_order(order, "full")
    target = None if dtype is None else dtypes.as_dtype(dtype, where="full")
    return _fill_node(fill_value, target, as_shape(shape, where="full"), "full")


def _like(prototype, dtype, shape, device, where: str) -> tuple[tuple[int, ...], np.dtype]:
    """The shape and dtype a *_like function produces, read without evaluating anything."""
    _check_device(device, where)
    if isinstance(prototype, Array):
        source_shape, source_dtype = prototype.shape, prototype.dtype
    elif isinstance(prototype, (list, tuple)) and contains_lazy(prototype):
        lazy = as_array(prototype, where=where)
        source_shape, source_dtype = lazy.shape, lazy.dtype
    else:
        value = np.asarray(prototype)
        source_shape, source_dtype = value.shape, dtypes.as_dtype(value.dtype, where=where)
    result_shape = source_shape if shape is None else as_shape(shape, where=where)
    result_dtype = source_dtype if dtype is None else dtypes.as_dtype(dtype, where=where)
    return result_shape, result_dtype


def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None) -> Array:
    """Zeros with the shape and dtype of `a` (or the `shape`/`dtype` given)."""
    result_shape, result_dtype = _like(a, dtype, shape, device, "zeros_like")
    return _filled(result_shape, 0, result_dtype, "zeros_like")


def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None) -> Array:
    """Ones with the shape and dtype of `a` (or the `shape`/`dtype` given)."""
    result_shape, result_dtype = _like(a, dtype, shape, device, "ones_like")
    return _filled(result_shape, 1, result_dtype, "ones_like")


def empty_like(prototype, /, dtype=None, order="K", subok=True, shape=None, *, device=None) -> Array:
    """As empty(): zeros with the shape and dtype of `prototype`."""
    result_shape, result_dtype = _like(prototype, dtype, shape, device, "empty_like")
    return _filled(result_shape, 0, result_dtype, "empty_like")


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None) -> Array:
    """`fill_value` cast (unsafely, as NumPy) to the dtype of `a`, in the shape of `a`.

    >>> import lazyarr as la
    >>> la.full_like(la.asarray([1, 2]), 2.7).tolist()
    [2, 2]
    """
    result_shape, result_dtype = _like(a, dtype, shape, device, "full_like")
    return _fill_node(fill_value, result_dtype, result_shape, "full_like")


def from_dlpack(x, /, *, device=None, copy=None) -> Array:
    """An array from any DLPack exporter (torch, cupy on host, NumPy ...), copied in.

    A lazy array passes through. With copy=False NumPy's import must succeed without a
    copy, but lazyarr still copies once into its own immutable buffer.
    """
    if isinstance(x, Array):
        return wrap(x._node) if copy else x
    kwargs = {} if device is None else {"device": device}
    try:
        value = np.from_dlpack(x, copy=copy, **kwargs)
    except (TypeError, ValueError, BufferError) as error:
        raise type(error)(f"from_dlpack: {error}") from None
    return from_numpy(value, where="from_dlpack")
