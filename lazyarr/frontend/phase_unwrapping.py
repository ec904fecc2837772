"""unwrap: remove jumps larger than `discont` from a phase signal by adding multiples of the
period, NumPy's algorithm step for step (lazy).

The differences along `axis` are reduced modulo `period` into [-period/2, period/2) (a jump
of exactly +period/2 keeps its sign), the corrections where |difference| >= discont are
summed cumulatively and added to every sample after the first. Integer signals with an
integer period stay integers, as in NumPy.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..shapes import normalize_axis
from . import elementwise as ew
from .array import Array
from .core import as_array, broadcast_to, convert, is_python_scalar, scalar_constant, wrap
from .cumulative import cumsum
from .manipulation_joining import concatenate
from .manipulation_repeating import diff

__all__ = ["unwrap"]


def _in_dtype(value, dtype: np.dtype, shape) -> Array:
    """`value` as np.copyto writes it into an array of `dtype` (a Python scalar stays exact)."""
    if is_python_scalar(value):
        return wrap(broadcast_to(scalar_constant(value, dtype), shape))
    array = value if isinstance(value, Array) else as_array(value, where="unwrap")
    return wrap(broadcast_to(convert(array._node, dtype), shape))


def unwrap(p, discont=None, axis=-1, *, period=2 * math.pi) -> Array:
    """Unwrap a phase: jumps of at least `discont` (default period/2) between neighbours along
    `axis` are replaced by their complement modulo `period`.

    >>> import lazyarr as la
    >>> [round(value, 6) for value in la.unwrap(la.asarray([0.0, 4.0, 8.0])).tolist()]
    [0.0, -2.283185, -4.566371]
    """
    signal = p if isinstance(p, Array) else as_array(p, where="unwrap")
    steps = diff(signal, axis=axis)
    axis = normalize_axis(axis, signal.ndim, where="unwrap")
    if discont is None:
        discont = period / 2
    dtype = dtypes.result_type(steps, period)
    boundary_ambiguous = True
    if dtypes.is_integer(dtype):
        if is_python_scalar(period) or isinstance(period, np.generic):
            interval_high, remainder = divmod(period, 2)
            boundary_ambiguous = bool(remainder == 0)
        else:  # an integer period array: its parity stays lazy too
            interval_high = ew.floor_divide(period, 2)
            boundary_ambiguous = ew.equal(ew.remainder(period, 2), 0)
    else:
        interval_high = period / 2
    interval_low = -interval_high
    reduced = ew.add(ew.remainder(ew.subtract(steps, interval_low), period), interval_low)
    if boundary_ambiguous is not False:
        # The modulo sent a jump of exactly +period/2 to -period/2: give it back its sign (an
        # odd integer period has no such jump).
        flipped = ew.logical_and(ew.equal(reduced, interval_low), ew.greater(steps, 0))
        if boundary_ambiguous is not True:
            flipped = ew.logical_and(flipped, boundary_ambiguous)
        reduced = ew.where(flipped, _in_dtype(interval_high, reduced.dtype, reduced.shape), reduced)
    correction = ew.subtract(reduced, steps)
    small = ew.less(ew.absolute(steps), discont)
    correction = ew.where(small, _in_dtype(0, correction.dtype, correction.shape), correction)
    if signal.shape[axis] == 0:
        return wrap(convert(signal._node, dtype))
    head = tuple(slice(0, 1) if index == axis else slice(None) for index in range(signal.ndim))
    tail = tuple(slice(1, None) if index == axis else slice(None) for index in range(signal.ndim))
    corrected = ew.add(signal[tail], cumsum(correction, axis=axis))
    pieces = [wrap(convert(signal[head]._node, dtype)), wrap(convert(corrected._node, dtype))]
    return concatenate(pieces, axis=axis)
