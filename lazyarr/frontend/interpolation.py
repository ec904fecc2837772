"""interp: one-dimensional piecewise-linear interpolation, NumPy's arithmetic bit for bit.

Lazy in all three arrays. For each x, the interval j with xp[j] <= x < xp[j + 1] is
`searchsorted(xp, x, 'right') - 1` (lazy), the interval's ends are gathered, and the value
is NumPy's: `slope * (x - xp[j]) + fp[j]` with `slope = (fp[j+1] - fp[j]) / (xp[j+1] - xp[j])`,
retried from the right end when that is NaN, `fp[j]` where x equals xp[j] or the last point,
`left`/`right` outside, NaN for NaN. Everything is float64 (complex128 for complex fp, whose
slope NumPy computes as a difference times 1 / (xp[j+1] - xp[j]), part by part).
"""

from __future__ import annotations

from .. import dtypes
from ..hlo import make
from . import elementwise as ew
from .array import Array
from .core import as_array, convert, wrap
from .node_layout import filled

__all__ = ["interp"]


def _float64(value, where: str) -> Array:
    array = as_array(value, where=where)
    if dtypes.is_complex(array.dtype):
        raise TypeError(f"{where}: x and xp must be real, got dtype {array.dtype}")
    return wrap(convert(array._node, dtypes.float64))


def _sample_points(xp, fp, where: str) -> tuple[Array, Array]:
    points = _float64(xp, where)
    values = as_array(fp, where=where)
    target = dtypes.complex128 if dtypes.is_complex(values.dtype) else dtypes.float64
    values = wrap(convert(values._node, target))
    for name, array in (("xp", points), ("fp", values)):
        if array.ndim != 1:
            depth = "object of too small depth" if array.ndim == 0 else "object too deep"
            raise ValueError(f"{where}: {depth} for desired array; {name} must be 1-d, got shape {array.shape}")
    if values.shape != points.shape:
        raise ValueError(f"{where}: fp and xp are not of the same length ({values.shape[0]} and {points.shape[0]}).")
    return points, values


def _periodic(x: Array, points: Array, values: Array, period) -> tuple[Array, Array, Array]:
    """NumPy's periodic form: everything modulo the period, the points sorted and extended by
    one point on each side from the other end."""
    from .indexing import take
    from .manipulation import concatenate
    from .searching import argsort

    if period == 0:
        raise ValueError("interp: period must be a non-zero value")
    period = abs(period)
    x = ew.remainder(x, period)
    points = ew.remainder(points, period)
    order = argsort(points)
    points, values = take(points, order), take(values, order)
    points = concatenate([ew.subtract(points[-1:], period), points, ew.add(points[0:1], period)])
    values = concatenate([values[-1:], values, values[0:1]])
    return x, points, values


def _fill(value, default: Array, dtype, where: str) -> Array:
    """`left`/`right` (a number, NumPy converts it to a Python float or complex), or the end value."""
    if value is None:
        return default
    array = as_array(value, where=where)
    if array.ndim != 0:
        raise TypeError(f"{where}: left and right must be scalars, got shape {array.shape}")
    if dtypes.is_complex(array.dtype) and not dtypes.is_complex(dtype):
        raise TypeError(f"{where}: a complex left/right needs a complex fp")
    return wrap(convert(array._node, dtype))


def _linear(x, below_x, above_x, below_f, above_f, reciprocal_width: bool) -> Array:
    """NumPy's formula between the ends of x's interval, for real values."""
    if reciprocal_width:
        slope = ew.multiply(ew.subtract(above_f, below_f), ew.divide(1.0, ew.subtract(above_x, below_x)))
    else:
        slope = ew.divide(ew.subtract(above_f, below_f), ew.subtract(above_x, below_x))
    from_below = ew.add(ew.multiply(slope, ew.subtract(x, below_x)), below_f)
    from_above = ew.add(ew.multiply(slope, ew.subtract(x, above_x)), above_f)
    flat = ew.logical_and(ew.isnan(from_above), ew.equal(below_f, above_f))
    retried = ew.where(flat, below_f, from_above)
    return ew.where(ew.isnan(from_below), retried, from_below)


def interp(x, xp, fp, left=None, right=None, period=None) -> Array:
    """Values at `x` of the piecewise-linear function through (xp, fp); `xp` increasing.
    float64 (complex128 for complex fp), shaped like `x`; lazy.

    >>> import lazyarr as la
    >>> la.interp(la.asarray([0.5, 2.5, 9.0]), [0.0, 1.0, 3.0], [0.0, 10.0, 30.0]).tolist()
    [5.0, 25.0, 30.0]
    """
    from .indexing import take
    from .searching import searchsorted

    x = _float64(x, "interp")
    points, values = _sample_points(xp, fp, "interp")
    if period is not None:
        x, points, values = _periodic(x, points, values, period)
        left = right = None
    count = points.shape[0]
    if count == 0:
        raise ValueError("interp: array of sample points is empty")
    left = _fill(left, values[0], values.dtype, "interp")
    right = _fill(right, values[count - 1], values.dtype, "interp")
    if count == 1:
        # NumPy's one-point rule: left below, right above, fp[0] otherwise (NaN included).
        inside = ew.where(ew.greater(x, points[0]), right, values[0])
        return ew.where(ew.less(x, points[0]), left, inside)
    interval = ew.subtract(searchsorted(points, x, side="right"), 1)
    lower = ew.clip(interval, 0, count - 2)
    upper = ew.add(lower, 1)
    below_x, above_x = take(points, lower), take(points, upper)
    below_f, above_f = take(values, lower), take(values, upper)
    if dtypes.is_complex(values.dtype):
        parts = [
            _linear(x, below_x, above_x, part(below_f), part(above_f), reciprocal_width=True)
            for part in (ew.real, ew.imag)
        ]
        between = wrap(make("complex", [parts[0]._node, parts[1]._node]))
        nan_value = wrap(make("complex", [x._node, filled(0.0, dtypes.float64, x.shape)]))  # NumPy: (x, 0)
    else:
        between = _linear(x, below_x, above_x, below_f, above_f, reciprocal_width=False)
        nan_value = x
    result = ew.where(ew.equal(below_x, x), below_f, between)
    result = ew.where(ew.equal(interval, count - 1), values[count - 1], result)  # x is the last point
    result = ew.where(ew.greater(x, points[count - 1]), right, result)
    result = ew.where(ew.less(x, points[0]), left, result)
    return ew.where(ew.isnan(x), nan_value, result)
