"""Evenly spaced values: arange, linspace, logspace, built from `iota` (no materialized data).

Each function repeats NumPy's arithmetic in NumPy's order and dtype, so the values are the
same bits: arange stores `start` and `start + step` and fills i >= 2 with
`first + i * (second - first)` computed in the output dtype (float16 in float32), as
NumPy's fill functions do; linspace is NumPy's `arange(num) * step + start` with its
special cases (denormal steps, the exact endpoint, flooring for integer dtypes).
"""

from __future__ import annotations

import math
import operator

import numpy as np

from .. import dtypes
from ..hlo import constant, make
from ..shapes import broadcast_shapes
from . import elementwise
from .array import Array, check_device
from .core import as_array, convert, is_python_scalar, scalar_constant, wrap
from .manipulation_layout import moveaxis
from .manipulation_nodes import broadcast_node, reshape_node, slice_node
from .templated_calls import replayed

__all__ = ["arange", "linspace", "logspace"]

_MAX_INTP = np.iinfo(np.intp).max


def _static_scalar(value, where: str):
    """A Python or NumPy scalar; lazy and 0-d arrays are read (the length depends on them)."""
    if isinstance(value, Array):
        value = value.numpy()
    if isinstance(value, np.ndarray):
        if value.ndim:
            raise TypeError(
                f"{where}: only 0-dimensional arrays can be used as scalars, got shape {value.shape}"
            )
        value = value[()]
    return value


def _ceil_length(value: float) -> int:
    """NumPy's _arange_safe_ceil_to_intp, with its errors."""
    rounded = math.ceil(value) if math.isfinite(value) else value
    if rounded != rounded:
        raise ValueError("arange: cannot compute length")
    if not -_MAX_INTP - 1 <= rounded <= _MAX_INTP:
        raise ValueError("arange: Maximum allowed size exceeded")
    return int(rounded)


def _arange_length(start, stop, step, complex_result: bool) -> int:
    """NumPy's _calc_length: ceil((stop - start) / step) on the arguments' own arithmetic."""
    difference = stop - start
    nonzero = bool(difference != 0)
    quotient = difference / step
    if complex_result and isinstance(quotient, complex):
        return min(_ceil_length(quotient.real), _ceil_length(quotient.imag))
    value = float(quotient)
    if value == 0 and nonzero:
        return 0 if math.copysign(1.0, value) < 0 else 1
    return _ceil_length(value)


def _ramp(first, second, length: int, compute: np.dtype):
    """first + i * (second - first) for i < length, in `compute` (NumPy's fill loop)."""
    first = np.asarray(first).astype(compute)
    with np.errstate(all="ignore"):
        delta = (np.asarray(second).astype(compute) - first).astype(compute)
    shape = (length,)
    ramp = make("iota", [], shape=shape, dtype=compute, dimension=0)
    scaled = make("multiply", [ramp, broadcast_node(constant(delta), shape, where="arange")])
    return make("add", [scaled, broadcast_node(constant(first), shape, where="arange")])


def arange(start, /, stop=None, step=1, *, dtype=None, device=None) -> Array:
    """Values from `start` to `stop` (exclusive) by `step`: NumPy's length, dtype and values.

    The default dtype is NumPy's: at least int64, else the arguments' promoted dtype (so
    float32 arguments give float64, as NumPy gives).

    >>> import lazyarr as la
    >>> la.arange(1, 2, 0.25).tolist()
    [1.0, 1.25, 1.5, 1.75]
    """
    if device is not None:
        check_device(device, "arange")
        return arange(start, stop, step, dtype=dtype).to_device(device)
    if not (isinstance(start, Array) or isinstance(stop, Array) or isinstance(step, Array)):
        # hot: `arange(n)` in a loop: a function of Python scalars alone (a lazy bound is
        # evaluated: never recorded on a template's bufferless parameters)
        result = replayed("arange", lambda *bounds: _arange(*bounds, dtype), (start, stop, step), dtype)
        if result is not None:
            return result
    return _arange(start, stop, step, dtype)


def _arange(start, stop, step, dtype) -> Array:
    step = 1 if step is None else step
    arguments = [_static_scalar(value, "arange") for value in (start, stop, step) if value is not None]
    start, step = arguments[0], arguments[-1]
    stop = arguments[1] if stop is not None else None
    if dtype is None:
        discovered = np.result_type(np.intp, *(np.asarray(value).dtype for value in arguments))
        target = dtypes.as_dtype(discovered, where="arange")
    else:
        target = dtypes.as_dtype(dtype, where="arange")
    if stop is None:
        start, stop = 0, start
    try:
        length = max(_arange_length(start, stop, step, dtypes.is_complex(target)), 0)
        second = start + step if length > 0 else None
    except OverflowError:  # NumPy reports overflow in its length (and start + step) arithmetic so
        raise ValueError("arange: Maximum allowed size exceeded") from None
    if length * target.itemsize > _MAX_INTP:
        raise ValueError(f"arange: array is too big ({length} elements of {target})")
    if target == dtypes.bool_ and length > 2:
        raise TypeError(
            "arange: arange() is only supported for booleans when the result has at most length 2."
        )
    # NumPy stores the first two values by item assignment (its conversion rules and errors).
    stored = np.zeros(2, dtype=target)
    if length:
        stored[0] = start
    if length > 1:
        stored[1] = second
    if length <= 2:
        return wrap(constant(stored[:length]))
    return wrap(_fill(stored, length, target))


def _fill(stored: np.ndarray, length: int, target: np.dtype):
    """NumPy's dtype fill function for i >= 2; the first two values are the stored ones."""
    if dtypes.is_integer(target):
        # Integer arithmetic wraps modulo 2**bits, so computing wider and converting is exact.
        compute = dtypes.uint64 if target == dtypes.uint64 else dtypes.int64
        values = convert(_ramp(stored[0], stored[1], length, compute), target)
    elif dtypes.is_complex(target):
        # NumPy fills real and imaginary parts separately; joining them as re + im * 1j matches
        # it for finite parts except that a -0.0 part may come back as +0.0.
        compute = dtypes.real_dtype(target)
        real = convert(_ramp(stored[0].real, stored[1].real, length, compute), target)
        imaginary = convert(_ramp(stored[0].imag, stored[1].imag, length, compute), target)
        unit = broadcast_node(scalar_constant(1j, target), (length,), where="arange")
        values = make("add", [real, make("multiply", [imaginary, unit])])
    else:
        compute = dtypes.float32 if target == dtypes.float16 else target
        values = convert(_ramp(stored[0], stored[1], length, compute), target)
    rest = slice_node(values, 0, 2, length)
    return make("concatenate", [constant(stored), rest], dimension=0)


# -- linspace / logspace -------------------------------------------------------------------------
def _operand(value, keep_weak: bool):
    """linspace's view of start/stop: a weak Python scalar, or a lazy array."""
    if keep_weak and is_python_scalar(value):
        return value
    return as_array(value, where="linspace")


def _node_in(value, dtype, shape):
    node = scalar_constant(value, dtype) if is_python_scalar(value) else convert(value._node, dtype)
    return broadcast_node(node, shape, where="linspace")


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    """`num` evenly spaced values from `start` to `stop` (inclusive unless endpoint=False).

    start and stop may be arrays: the samples then run along `axis` of the result. With
    retstep=True, returns (samples, step).

    >>> import lazyarr as la
    >>> la.linspace(0, 1, 5).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    if device is not None:
        check_device(device, "linspace")
        result = linspace(start, stop, num, endpoint, retstep, dtype, axis)
        if retstep:
            samples, step = result
            return samples.to_device(device), (step.to_device(device) if isinstance(step, Array) else step)
        return result.to_device(device)
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"linspace: Number of samples, {num}, must be non-negative.")
    if not retstep and type(axis) is int and axis == 0 and type(endpoint) is bool:
        # (a graph of ~20 nodes, replayed per the bounds' values or shapes and dtypes: ~4x cheaper)
        bounds = (start, stop)
        if is_python_scalar(start) and is_python_scalar(stop):  # (both become arrays: see _linspace)
            bounds = (as_array(start, where="linspace"), as_array(stop, where="linspace"))
        result = replayed("linspace", lambda first, last: _linspace(first, last, num, endpoint, dtype, 0)[0],
                          bounds, (num, endpoint, dtype))
        if result is not None:
            return result
    result, step = _linspace(start, stop, num, endpoint, dtype, axis)
    return (result, step) if retstep else result


def _linspace(start, stop, num: int, endpoint, dtype, axis) -> tuple[Array, object]:
    """linspace's samples and step for checked arguments."""
    divisions = num - 1 if endpoint else num
    # NumPy keeps Python scalars weak only when the other bound is an array.
    keep_weak = not (is_python_scalar(start) and is_python_scalar(stop))
    start, stop = _operand(start, keep_weak), _operand(stop, keep_weak)
    inexact = dtypes.result_type(start, stop, 0.0)
    kinds = [value for value in (start, stop) if not is_python_scalar(value)]
    bounds_shape = broadcast_shapes(*(value.shape for value in kinds), where="linspace")
    shape = (num,) + bounds_shape
    delta = make("subtract", [_node_in(stop, inexact, bounds_shape), _node_in(start, inexact, bounds_shape)])
    ramp = make("iota", [], shape=shape, dtype=inexact, dimension=0)
    if divisions > 0:
        divisor = scalar_constant(divisions, inexact)
        step = make("divide", [delta, broadcast_node(divisor, bounds_shape, where="linspace")])
        by_step = make("multiply", [ramp, broadcast_node(step, shape, where="linspace")])
        # NumPy's denormal guard (gh-5437): if any step is 0, scale by delta / divisions instead.
        zero = broadcast_node(scalar_constant(0, inexact), bounds_shape, where="linspace")
        step_is_zero = make("compare", [step, zero], direction="EQ")
        if step_is_zero.ndim:
            every_axis = tuple(range(len(bounds_shape)))
            step_is_zero = make("reduce", [step_is_zero], kind="or", dimensions=every_axis)
        fraction = make("divide", [ramp, broadcast_node(divisor, shape, where="linspace")])
        by_delta = make("multiply", [fraction, broadcast_node(delta, shape, where="linspace")])
        choose = broadcast_node(step_is_zero, shape, where="linspace")
        samples = make("select", [choose, by_delta, by_step])
        step_result = wrap(step)
    else:
        samples = make("multiply", [ramp, broadcast_node(delta, shape, where="linspace")])
        step_result = math.nan
    samples = convert(elementwise.add(wrap(samples), start)._node, inexact)
    if endpoint and num > 1:
        last = reshape_node(_node_in(stop, inexact, bounds_shape), (1,) + bounds_shape)
        samples = make("concatenate", [slice_node(samples, 0, 0, num - 1), last], dimension=0)
    result = wrap(samples)
    if axis != 0:
        result = moveaxis(result, 0, axis)
    if dtype is not None:
        target = dtypes.as_dtype(dtype, where="linspace")
        if dtypes.is_integer(target):
            result = elementwise.floor(result)
        result = wrap(convert(result._node, target))
    return result, step_result


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0) -> Array:
    """`base ** linspace(start, stop, ...)`: samples evenly spaced on a log scale.

    >>> import lazyarr as la
    >>> la.logspace(0, 2, 3).tolist()
    [1.0, 10.0, 100.0]
    """
    if not isinstance(base, (float, int)) and _ndim(base):
        arrays = [as_array(value, where="logspace") for value in (start, stop, base)]
        ndim = len(broadcast_shapes(*(array.shape for array in arrays), where="logspace"))
        start, stop, base = (
            wrap(reshape_node(array._node, (1,) * (ndim - array.ndim) + array.shape)) for array in arrays
        )
        base = wrap(reshape_node(base._node, _inserted(base.shape, axis)))
    samples = linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    result = elementwise.power(base, samples)
    if dtype is None:
        return result
    return wrap(convert(result._node, dtypes.as_dtype(dtype, where="logspace")))


def _ndim(value) -> int:
    return value.ndim if isinstance(value, Array) else np.ndim(value)


def _inserted(shape, axis) -> tuple[int, ...]:
    """`shape` with a unit axis at `axis` (expand_dims' placement)."""
    from ..shapes import normalize_axis

    position = normalize_axis(axis, len(shape) + 1, where="logspace")
    return shape[:position] + (1,) + shape[position:]
