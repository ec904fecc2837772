"""gradient, trapezoid and ediff1d: differences and integration, NumPy's arithmetic, lazily.

Each repeats NumPy's expressions in NumPy's order, with the same mix of Python scalars (weak)
and NumPy scalars or arrays (strong), so dtypes and values agree: gradient's central
differences inside and one- or two-sided differences at the ends, each piece cast to the
result dtype as NumPy's assignments into `out` cast it; trapezoid's
`(d * (y[1:] + y[:-1]) / 2.0).sum(axis)`; ediff1d's `ary[1:] - ary[:-1]` between `to_begin`
and `to_end`. Spacing given as NumPy values is worked out on the host as NumPy does;
spacing given as a lazy array stays lazy (see `gradient`).
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from . import elementwise as ew
from .array import Array
from .core import as_array, convert, wrap
from .manipulation_nodes import normalize_axis_tuple
from .reduction_support import normalize_axis_index

__all__ = ["ediff1d", "gradient", "trapezoid"]


def _cast(array: Array, dtype) -> Array:
    return wrap(convert(array._node, dtype))


def _along(ndim: int, axis: int, key) -> tuple:
    return tuple(key if position == axis else slice(None) for position in range(ndim))


def _check_subtractable(array: Array, where: str) -> None:
    if dtypes.is_bool(array.dtype):
        raise TypeError(f"{where}: numpy boolean subtract, the `-` operator, is not supported, use the "
                        "bitwise_xor, the `^` operator, or the logical_xor function instead.")


# -- gradient ---------------------------------------------------------------------------------


def _spacing(distances, length: int):
    """One axis's 1-d coordinates as NumPy's gradient reads them: their differences, or the
    first difference (a NumPy scalar) when all are equal. Lazy coordinates give (differences,
    their first, whether all are equal), all lazy."""
    from .manipulation_repeating import diff
    from .reductions import all as all_

    if isinstance(distances, Array) and not distances.is_evaluated:
        if distances.ndim != 1:
            raise ValueError("gradient: distances must be either scalars or 1d")
        if distances.shape[0] != length:
            raise ValueError("gradient: when 1d, distances must match the length of the corresponding dimension")
        if dtypes.is_integer(distances.dtype):
            distances = _cast(distances, dtypes.float64)
        steps = diff(distances)
        if steps.shape[0] == 0:
            raise IndexError("gradient: index 0 is out of bounds for axis 0 with size 0")
        return steps, steps[0], all_(ew.equal(steps, steps[0]))
    values = np.asanyarray(distances.numpy() if isinstance(distances, Array) else distances)
    if values.ndim != 1:
        raise ValueError("gradient: distances must be either scalars or 1d")
    if len(values) != length:
        raise ValueError("gradient: when 1d, distances must match the length of the corresponding dimension")
    if np.issubdtype(values.dtype, np.integer):
        values = values.astype(np.float64)
    steps = np.diff(values)
    return steps[0] if (steps == steps[0]).all() else steps


def _reshaped(value, shape):
    return value.reshape(shape) if isinstance(value, (np.ndarray, Array)) else value


def _uniform(f: Array, axis: int, step, edge_order: int, result_dtype) -> Array:
    """NumPy's gradient along one axis for a scalar step (Python, NumPy or lazy 0-d)."""
    from .manipulation_joining import concatenate

    ndim, size = f.ndim, f.shape[axis]
    part = lambda key: f[_along(ndim, axis, key)]  # noqa: E731
    interior = (part(slice(2, None)) - part(slice(None, -2))) / (2. * step)
    if edge_order == 1:
        first = (part(slice(1, 2)) - part(slice(0, 1))) / step
        last = (part(slice(size - 1, size)) - part(slice(size - 2, size - 1))) / step
    else:
        a, b, c = -1.5 / step, 2. / step, -0.5 / step
        first = a * part(slice(0, 1)) + b * part(slice(1, 2)) + c * part(slice(2, 3))
        a, b, c = 0.5 / step, -2. / step, 1.5 / step
        last = a * part(slice(size - 3, size - 2)) + b * part(slice(size - 2, size - 1)) + c * part(
            slice(size - 1, size))
    pieces = [as_array(piece) for piece in (first, interior, last)]
    return concatenate([_cast(piece, result_dtype) for piece in pieces], axis=axis)


def _uneven(f: Array, axis: int, steps, edge_order: int, result_dtype) -> Array:
    """NumPy's gradient along one axis for 1-d steps between the coordinates."""
    from .manipulation_joining import concatenate

    ndim, size = f.ndim, f.shape[axis]
    part = lambda key: f[_along(ndim, axis, key)]  # noqa: E731
    shape = tuple(-1 if position == axis else 1 for position in range(ndim))
    dx1, dx2 = steps[0:-1], steps[1:]
    a = -(dx2) / (dx1 * (dx1 + dx2))
    b = (dx2 - dx1) / (dx1 * dx2)
    c = dx1 / (dx2 * (dx1 + dx2))
    a, b, c = (_reshaped(value, shape) for value in (a, b, c))
    interior = a * part(slice(None, -2)) + b * part(slice(1, -1)) + c * part(slice(2, None))
    count = steps.shape[0]
    if edge_order == 1:
        first = (part(slice(1, 2)) - part(slice(0, 1))) / steps[0]
        last = (part(slice(size - 1, size)) - part(slice(size - 2, size - 1))) / steps[count - 1]
    else:
        dx1, dx2 = steps[0], steps[1]
        a = -(2. * dx1 + dx2) / (dx1 * (dx1 + dx2))
        b = (dx1 + dx2) / (dx1 * dx2)
        c = - dx1 / (dx2 * (dx1 + dx2))
        first = a * part(slice(0, 1)) + b * part(slice(1, 2)) + c * part(slice(2, 3))
        dx1, dx2 = steps[count - 2], steps[count - 1]
        a = (dx2) / (dx1 * (dx1 + dx2))
        b = - (dx2 + dx1) / (dx1 * dx2)
        c = (2. * dx2 + dx1) / (dx2 * (dx1 + dx2))
        last = a * part(slice(size - 3, size - 2)) + b * part(slice(size - 2, size - 1)) + c * part(
            slice(size - 1, size))
    pieces = [as_array(piece) for piece in (first, interior, last)]
    return concatenate([_cast(piece, result_dtype) for piece in pieces], axis=axis)


def _spacings(varargs, f: Array, axes) -> list:
    count = len(varargs)
    if count == 0:
        return [1.0] * len(axes)
    if count == 1 and np.ndim(varargs[0]) == 0:
        return [varargs[0]] * len(axes)
    if count != len(axes):
        raise TypeError(f"gradient: invalid number of arguments ({count} spacings for {len(axes)} axes)")
    spacings = []
    for axis, distances in zip(axes, varargs):
        if np.ndim(distances) == 0:
            spacings.append(np.asanyarray(distances) if isinstance(distances, np.ndarray) else distances)
        else:
            spacings.append(_spacing(distances, f.shape[axis]))
    return spacings


def gradient(f, *varargs, axis=None, edge_order=1):
    """The gradient of `f` along each axis (a tuple, or one array for one axis): central
    differences inside, one-sided (edge_order 1) or second-order (2) differences at the ends.
    Spacing: none (1), one scalar for all axes, or one scalar or 1-d coordinates per axis.
    Integers give float64. Lazy (also in lazy coordinates: NumPy's choice between its
    even-step and uneven-step formulas, made on the values, becomes a select).

    >>> import lazyarr as la
    >>> la.gradient(la.asarray([1.0, 2.0, 4.0, 7.0])).tolist()
    [1.0, 1.5, 2.5, 3.0]
    """
    array = as_array(f, where="gradient")
    axes = tuple(range(array.ndim)) if axis is None else normalize_axis_tuple(axis, array.ndim, where="gradient")
    spacings = _spacings(varargs, array, axes)
    if edge_order > 2:
        raise ValueError("gradient: 'edge_order' greater than 2 not supported")
    result_dtype = array.dtype
    if not dtypes.is_inexact(result_dtype):
        if dtypes.is_integer(result_dtype):
            array = _cast(array, dtypes.float64)
        result_dtype = dtypes.float64
    results = []
    for axis, step in zip(axes, spacings):
        if array.shape[axis] < edge_order + 1:
            raise ValueError("gradient: Shape of array too small to calculate a numerical gradient, at least "
                             f"(edge_order + 1) elements are required (axis {axis} has {array.shape[axis]}).")
        _check_subtractable(array, "gradient")
        if isinstance(step, tuple):  # lazy coordinates: both of NumPy's formulas, chosen on the values
            steps, first_step, even = step
            results.append(ew.where(even, _uniform(array, axis, first_step, edge_order, result_dtype),
                                    _uneven(array, axis, steps, edge_order, result_dtype)))
        elif np.ndim(step) == 0:
            results.append(_uniform(array, axis, step, edge_order, result_dtype))
        else:
            results.append(_uneven(array, axis, step, edge_order, result_dtype))
    return results[0] if len(axes) == 1 else tuple(results)


# -- trapezoid and ediff1d ---------------------------------------------------------------------


def trapezoid(y, x=None, dx=1.0, axis=-1) -> Array:
    """The integral of `y` along `axis` by the trapezoidal rule, with sample points `x` (1-d,
    or shaped like y) or a constant spacing `dx`: sum(d * (y[1:] + y[:-1]) / 2). Lazy.

    >>> import lazyarr as la
    >>> float(la.trapezoid(la.asarray([1.0, 2.0, 3.0]), x=[0.0, 1.0, 3.0]))
    6.5
    """
    from .manipulation_repeating import diff
    from .reductions import sum as sum_

    values = as_array(y, where="trapezoid")
    ndim = values.ndim
    axis = normalize_axis_index("trapezoid", axis, ndim)  # AxisError, an IndexError as NumPy's
    if x is None:
        step = dx
    else:
        points = as_array(x, where="trapezoid")
        if points.ndim == 1:
            step = diff(points)
            step = step.reshape(tuple(step.shape[0] if position == axis else 1 for position in range(ndim)))
        else:
            step = diff(points, axis=axis)
    upper = values[_along(ndim, axis, slice(1, None))]
    lower = values[_along(ndim, axis, slice(None, -1))]
    return sum_(as_array(step * (upper + lower) / 2.0), axis=axis)


def _boundary(value, dtype, name: str) -> Array:
    array = as_array(value, where="ediff1d")
    if not np.can_cast(array.dtype, dtype, casting="same_kind"):
        raise TypeError(f"ediff1d: dtype of `{name}` must be compatible with input `ary` under the `same_kind` "
                        f"rule (got {array.dtype} for {dtype}).")
    return _cast(array.reshape(-1), dtype)


def ediff1d(ary, to_end=None, to_begin=None) -> Array:
    """Differences between consecutive elements of the flattened array, with `to_begin`
    and `to_end` (cast to its dtype) before and after. Lazy.

    >>> import lazyarr as la
    >>> la.ediff1d(la.asarray([1, 2, 4, 7]), to_begin=-99).tolist()
    [-99, 1, 2, 3]
    """
    from .manipulation_joining import concatenate

    flat = as_array(ary, where="ediff1d").reshape(-1)
    _check_subtractable(flat, "ediff1d")
    differences = flat[1:] - flat[:-1]
    if to_begin is None and to_end is None:
        return differences
    pieces = [_cast(differences, flat.dtype)]
    if to_begin is not None:
        pieces.insert(0, _boundary(to_begin, flat.dtype, "to_begin"))
    if to_end is not None:
        pieces.append(_boundary(to_end, flat.dtype, "to_end"))
    return concatenate(pieces)
