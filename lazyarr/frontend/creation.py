"""Array creation: asarray/array, filled arrays (zeros, ones, full, *_like), from_dlpack.

Filled arrays are a broadcast of a 0-d constant, so `zeros((1000, 1000))` is two
instructions, not a megabyte literal. Inputs that hold data (lists, NumPy arrays, DLPack
capsules) are copied into a private read-only buffer: a lazy array never changes when the
caller later mutates the original. A device buffer (a CuPy array) stays on its device, copied
there; `device=` puts the result on any available device (computed on the default device, then
copied over). Ranges (arange, linspace, logspace) live in
creation_ranges.py, matrices and grids (eye, tri, tril, meshgrid) in creation_matrices.py;
both are re-exported here.
"""

from __future__ import annotations

import operator

import numpy as np

from .. import dtypes
from ..backends import device_of, to_device, transfer_manager
from ..hlo import constant
from ..shapes import as_shape
from .array import Array, check_device, default_device, leaf_for
from .core import as_array, contains_lazy, convert, from_numpy, scalar_constant, wrap
from .creation_matrices import eye, identity, meshgrid, tri, tril, triu
from .creation_ranges import arange, linspace, logspace
from .manipulation_nodes import broadcast_node, reshape_node
from .templated_calls import replayed

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
    """ValueError for a device lazyarr does not have (the device's own error when it is known
    but cannot be used, as the GPU without CuPy)."""
    if device is not None:
        check_device(device, where)


def _placed(result: Array, device) -> Array:
    """`result` on `device`; None leaves it where its graph puts it."""
    return result if device is None else result.to_device(device)


_HOST_TYPES = (np.ndarray, np.generic, list, tuple, int, float, complex, bool, str, bytes, type(None))


def _buffer_device(value) -> str | None:
    """The device holding `value` when it is a device buffer (a CuPy array, a plug-in
    device's buffer), else None (host data for NumPy to convert)."""
    if isinstance(value, _HOST_TYPES):
        return None
    try:
        device = device_of(value)
    except TypeError:  # not any device's buffer: NumPy converts it (buffer protocol, __array__ ...)
        return None
    return None if device == "cpu" else device


def _from_device_buffer(buffer, source: str, target, copy, device, where: str) -> Array:
    """A lazy array bound to a private copy of device buffer `buffer` (on `source`), on
    `device` when given (one copy either way); a `target` dtype converts lazily there."""
    dtype = np.dtype(buffer.dtype)
    if dtype not in dtypes.SUPPORTED:
        raise TypeError(
            f"{where}: dtype {dtype} is not supported; lazyarr supports " + ", ".join(str(d) for d in dtypes.ALL)
        )
    if copy is False and target is not None and target != dtype:
        raise ValueError(f"{where}: {_NO_COPY} (dtype {dtype} -> {target})")
    if device is not None and device != source:
        private = to_device(buffer, device)  # through the host: a new buffer
    else:
        private = transfer_manager(source).copy(buffer)  # buffers are never mutated: not the caller's
    result = Array(leaf_for(private))
    return result if target is None or target == dtype else wrap(convert(result._node, target))


def _check_order(order, where: str, accepted: str = "CFAK") -> None:
    """NumPy's order check (any case); new arrays (`zeros`, `full`, ...) take "C" or "F" only."""
    if order is None:
        return
    if not (isinstance(order, str) and len(order) == 1 and order.upper() in accepted):
        if accepted == "CF":
            raise ValueError(f"{where}: only 'C' or 'F' order is permitted, got {order!r}")
        raise ValueError(f"{where}: order must be one of 'C', 'F', 'A', 'K', got {order!r}")


def asarray(obj, /, dtype=None, order=None, *, device=None, copy=None) -> Array:
    """`obj` as a lazy array: lazy arrays pass through (converted when `dtype` differs).

    Data from outside (lists, scalars, NumPy arrays, buffers) is always copied, also with
    copy=False where NumPy could have viewed a NumPy array: a lazy array owns an immutable
    buffer. copy=False still raises where NumPy raises (a list, or a dtype change).

    A device buffer (a CuPy array) is copied on its device and stays there. `device=` puts the
    result on that device (host data is copied in, then transferred); without it, host data
    goes to the default device (`--backend=gpu`: the GPU), as JAX's and CuPy's `asarray` do.

    >>> import lazyarr as la
    >>> la.asarray([1, 2, 3], dtype="float32").dtype
    dtype('float32')
    """
    if type(obj) is np.ndarray and dtype is None and order is None and device is None and copy is None:
        return from_numpy(obj, where="asarray")  # the commonest call: what the checks below would do
    _check_device(device, "asarray")
    _check_order(order, "asarray")
    if copy not in (None, True, False):
        raise ValueError(f"asarray: copy must be None, True or False, got {copy!r}")
    target = None if dtype is None else dtypes.as_dtype(dtype, where="asarray")
    if isinstance(obj, Array):
        if target is None or target == obj.dtype:
            return _placed(wrap(obj._node) if copy else obj, device)
        if copy is False:
            raise ValueError(f"asarray: {_NO_COPY} (dtype {obj.dtype} -> {target})")
        return _placed(wrap(convert(obj._node, target)), device)
    if isinstance(obj, (list, tuple)) and contains_lazy(obj):
        if copy is False:
            raise ValueError(f"asarray: {_NO_COPY} (a sequence of arrays)")
        result = as_array(obj, where="asarray")
        return _placed(result if target is None else wrap(convert(result._node, target)), device)
    source = _buffer_device(obj)
    if source is not None:
        return _from_device_buffer(obj, source, target, copy, device, "asarray")
    if copy is False:
        try:
            np.asarray(obj, dtype=target, copy=False)  # only asks NumPy whether a copy is needed
        except ValueError:
            raise ValueError(f"asarray: {_NO_COPY} (input {type(obj).__name__})") from None
    return _placed(from_numpy(obj, dtype=target, where="asarray", placed=device is None), device)


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
    return _filled_array("zeros", shape, 0, dtype, order, device)


def ones(shape, dtype=None, order="C", *, device=None) -> Array:
    """An array of ones (float64 by default)."""
    return _filled_array("ones", shape, 1, dtype, order, device)


def _filled_array(where: str, shape, value, dtype, order, device) -> Array:
    """zeros and ones; on the default device replayed per arguments (`zeros(n)` in a loop).
    Only a shape of exact ints is a key (`_exact_shape`)."""
    if device is None and _exact_shape(shape):
        result = replayed(where, lambda: _filled_array_made(where, shape, value, dtype, order, None), (),
                          (shape, dtype, order))
        if result is not None:
            return result
    return _filled_array_made(where, shape, value, dtype, order, device)


def _filled_array_made(where: str, shape, value, dtype, order, device) -> Array:
    _check_device(device, where)
    _check_order(order, where, "CF")
    return _placed(_filled(as_shape(shape, where=where), value, _default_dtype(dtype, where), where), device)


def empty(shape, dtype=None, order="C", *, device=None) -> Array:
    """NumPy leaves the values unspecified; lazyarr returns zeros (as cheap: one broadcast)."""
    _check_device(device, "empty")
    _check_order(order, "empty", "CF")
    return _placed(_filled(as_shape(shape, where="empty"), 0, _default_dtype(dtype, "empty"), "empty"), device)


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
    if device is None and type(fill_value) in _SCALAR_FILLS and _exact_shape(shape):
        # hot: `full(n, value)` in a loop: a function of its arguments alone
        result = replayed("full", lambda value: _full(shape, value, dtype, order, None), (fill_value,),
                          (shape, dtype, order))
        if result is not None:
            return result
    return _full(shape, fill_value, dtype, order, device)


_SCALAR_FILLS = frozenset({bool, int, float, complex})


def _exact_shape(shape) -> bool:
    """A shape that keys a template: an int or a tuple of ints (exact types: `(2.0, 3)` equals
    `(2, 3)` as a key but must raise NumPy's TypeError)."""
    return type(shape) is int or type(shape) is tuple and all(type(size) is int for size in shape)


def _full(shape, fill_value, dtype, order, device) -> Array:
    _check_device(device, "full")
    _check_order(order, "full", "CF")
    target = None if dtype is None else dtypes.as_dtype(dtype, where="full")
    return _placed(_fill_node(fill_value, target, as_shape(shape, where="full"), "full"), device)


def _like(prototype, dtype, shape, device, where: str) -> tuple[tuple[int, ...], np.dtype, str | None]:
    """The shape, dtype and device (None: the default) a *_like function produces, read
    without evaluating anything. Without `device=`, the result goes where `prototype` is (the
    array API's rule); a host prototype leaves it lazy on the default device."""
    _check_device(device, where)
    if isinstance(prototype, Array):
        source_shape, source_dtype = prototype.shape, prototype.dtype
        if device is None and (placement := prototype.device) != default_device():
            device = placement
    elif isinstance(prototype, (list, tuple)) and contains_lazy(prototype):
        lazy = as_array(prototype, where=where)
        source_shape, source_dtype = lazy.shape, lazy.dtype
    elif (source := _buffer_device(prototype)) is not None:
        source_shape, source_dtype = tuple(prototype.shape), dtypes.as_dtype(prototype.dtype, where=where)
        device = source if device is None else device
    else:
        value = np.asarray(prototype)
        source_shape, source_dtype = value.shape, dtypes.as_dtype(value.dtype, where=where)
    result_shape = source_shape if shape is None else as_shape(shape, where=where)
    result_dtype = source_dtype if dtype is None else dtypes.as_dtype(dtype, where=where)
    return result_shape, result_dtype, device


def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None) -> Array:
    """Zeros with the shape and dtype of `a` (or the `shape`/`dtype` given)."""
    result_shape, result_dtype, device = _like(a, dtype, shape, device, "zeros_like")
    return _placed(_filled(result_shape, 0, result_dtype, "zeros_like"), device)


def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None) -> Array:
    """Ones with the shape and dtype of `a` (or the `shape`/`dtype` given)."""
    result_shape, result_dtype, device = _like(a, dtype, shape, device, "ones_like")
    return _placed(_filled(result_shape, 1, result_dtype, "ones_like"), device)


def empty_like(prototype, /, dtype=None, order="K", subok=True, shape=None, *, device=None) -> Array:
    """As empty(): zeros with the shape and dtype of `prototype`."""
    result_shape, result_dtype, device = _like(prototype, dtype, shape, device, "empty_like")
    return _placed(_filled(result_shape, 0, result_dtype, "empty_like"), device)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None) -> Array:
    """`fill_value` cast (unsafely, as NumPy) to the dtype of `a`, in the shape of `a`.

    >>> import lazyarr as la
    >>> la.full_like(la.asarray([1, 2]), 2.7).tolist()
    [2, 2]
    """
    result_shape, result_dtype, device = _like(a, dtype, shape, device, "full_like")
    return _placed(_fill_node(fill_value, result_dtype, result_shape, "full_like"), device)


def from_dlpack(x, /, *, device=None, copy=None) -> Array:
    """An array from any DLPack exporter (torch, NumPy ...), copied in.

    A lazy array passes through; a device buffer lazyarr knows (a CuPy array) is copied on its
    device, as `asarray` does; other exporters are imported to the host by NumPy. With
    copy=False NumPy's import must succeed without a copy, but lazyarr still copies once into
    its own immutable buffer. `device=` puts the result there.
    """
    _check_device(device, "from_dlpack")
    if isinstance(x, Array):
        return _placed(wrap(x._node) if copy else x, device)
    source = _buffer_device(x)
    if source is not None:
        return _from_device_buffer(x, source, None, copy, device, "from_dlpack")
    try:
        value = np.from_dlpack(x, copy=copy)
    except (TypeError, ValueError, BufferError) as error:
        raise type(error)(f"from_dlpack: {error}") from None
    return _placed(from_numpy(value, where="from_dlpack"), device)
