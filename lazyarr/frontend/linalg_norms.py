"""Vector and matrix norms: NumPy's linalg.norm and the array API's vector_norm / matrix_norm.

The code follows numpy.linalg.norm branch by branch, so each norm uses the same operations in
the same precision as NumPy: integers become float64 (float16 stays float16), the 2-norm of a
flattened array is sqrt(x . x), the Frobenius norm sqrt(sum(real(conj(x) * x))), and the
spectral and nuclear norms reduce the singular values (`svdvals`, a custom-call).
"""

from __future__ import annotations

import math
import operator

import numpy as np

from .. import dtypes
from . import elementwise
from . import linalg as core
from .array import Array
from .core import as_array, convert, wrap
from .node_layout import move_axes_to_end, reshape, transpose
from .reduction_support import normalize_axis_index, reduced_shape, reduction_axes
from .templated_calls import replayed


def _reductions():
    from . import reductions

    return reductions


def _squared_magnitude(array: Array) -> Array:
    """real(conj(x) * x), NumPy's (x.conj() * x).real."""
    return elementwise.real(elementwise.multiply(elementwise.conj(array), array))


def _flat_two_norm(array: Array, keepdims: bool) -> Array:
    flat = wrap(reshape(array._node, (array.size,)))
    if dtypes.is_complex(flat.dtype):
        real, imag = elementwise.real(flat), elementwise.imag(flat)
        squared = elementwise.add(core.dot(real, real), core.dot(imag, imag))
    else:
        squared = core.dot(flat, flat)
    result = elementwise.sqrt(squared)
    return wrap(reshape(result._node, (1,) * array.ndim)) if keepdims else result


def _vector_norm(array: Array, order, axis: tuple, keepdims: bool) -> Array:
    reductions = _reductions()
    if order == math.inf:
        return reductions.max(elementwise.absolute(array), axis=axis, keepdims=keepdims, initial=0)
    if order == -math.inf:
        return reductions.min(elementwise.absolute(array), axis=axis, keepdims=keepdims)
    if order == 0:
        nonzero = elementwise.not_equal(array, 0)
        counts = wrap(convert(nonzero._node, dtypes.real_dtype(array.dtype)))
        return reductions.sum(counts, axis=axis, keepdims=keepdims)
    if order == 1:
        return reductions.sum(elementwise.absolute(array), axis=axis, keepdims=keepdims)
    if order is None or order == 2:
        return elementwise.sqrt(reductions.sum(_squared_magnitude(array), axis=axis, keepdims=keepdims))
    if isinstance(order, str):
        raise ValueError(f"norm: Invalid norm order '{order}' for vectors")
    magnitude = elementwise.absolute(array)
    powered = wrap(convert(elementwise.power(magnitude, order)._node, magnitude.dtype))
    total = reductions.sum(powered, axis=axis, keepdims=keepdims)
    exponent = np.reciprocal(order, dtype=total.dtype)
    return wrap(convert(elementwise.power(total, exponent)._node, total.dtype))


def _singular_value_norm(array: Array, row_axis, column_axis, reduction, initial=None) -> Array:
    from .linalg_extension import svdvals

    moved = wrap(move_axes_to_end(array._node, (row_axis, column_axis)))
    keywords = {} if initial is None else {"initial": initial}
    return reduction(svdvals(moved), axis=-1, **keywords)


def _matrix_norm(array: Array, order, axis: tuple, keepdims: bool) -> Array:
    reductions = _reductions()
    row_axis = normalize_axis_index("norm", axis[0], array.ndim)
    column_axis = normalize_axis_index("norm", axis[1], array.ndim)
    if row_axis == column_axis:
        raise ValueError(f"norm: Duplicate axes given: {axis}")
    if order == 2:
        result = _singular_value_norm(array, row_axis, column_axis, reductions.max, 0)
    elif order == -2:
        result = _singular_value_norm(array, row_axis, column_axis, reductions.min)
    elif order in (1, -1):
        reduced_column = column_axis - 1 if column_axis > row_axis else column_axis
        sums = reductions.sum(elementwise.absolute(array), axis=row_axis)
        if order == 1:
            result = reductions.max(sums, axis=reduced_column, initial=0)
        else:
            result = reductions.min(sums, axis=reduced_column)
    elif order in (math.inf, -math.inf):
        reduced_row = row_axis - 1 if row_axis > column_axis else row_axis
        sums = reductions.sum(elementwise.absolute(array), axis=column_axis)
        if order == math.inf:
            result = reductions.max(sums, axis=reduced_row, initial=0)
        else:
            result = reductions.min(sums, axis=reduced_row)
    elif order in (None, "fro", "f"):
        result = elementwise.sqrt(reductions.sum(_squared_magnitude(array), axis=axis))
    elif order == "nuc":
        result = _singular_value_norm(array, row_axis, column_axis, reductions.sum, 0)
    else:
        raise ValueError(f"norm: Invalid norm order {order!r} for matrices.")
    if keepdims:
        result = wrap(reshape(result._node, reduced_shape(array.shape, (row_axis, column_axis), True)))
    return result


def norm(x, ord=None, axis=None, keepdims=False) -> Array:  # noqa: A002 (NumPy's name)
    """NumPy's linalg.norm: vector norms for one axis, matrix norms for two, 2-norm of all.

    >>> la.linalg.norm(la.asarray([3.0, 4.0]))   # 5.0
    """
    if (type(ord) in _ORDER_TYPES and type(keepdims) is bool
            and (axis is None or type(axis) is int or type(axis) is tuple and all(type(item) is int for item in axis))):
        # hot: a convergence test `norm(new - old)` in a loop; exact types only in the key
        result = replayed("norm", lambda array: _norm(array, ord, axis, keepdims), (x,),
                          (type(ord), ord, axis, keepdims))
        if result is not None:
            return result
    return _norm(x, ord, axis, keepdims)


_ORDER_TYPES = frozenset({type(None), int, float, str})


def _norm(x, ord, axis, keepdims) -> Array:  # noqa: A002
    array = as_array(x, where="norm")
    if not dtypes.is_inexact(array.dtype):
        array = wrap(convert(array._node, dtypes.float64))
    if axis is None:
        if ord is None or (ord in ("f", "fro") and array.ndim == 2) or (ord == 2 and array.ndim == 1):
            return _flat_two_norm(array, keepdims)
        axis = tuple(range(array.ndim))
    elif not isinstance(axis, tuple):
        try:
            axis = (operator.index(axis),)
        except TypeError:
            raise TypeError(
                f"norm: 'axis' must be None, an integer or a tuple of integers, got {axis!r}"
            ) from None
    if len(axis) == 1:
        return _vector_norm(array, ord, axis, keepdims)
    if len(axis) == 2:
        return _matrix_norm(array, ord, axis, keepdims)
    raise ValueError(f"norm: Improper number of dimensions to norm: axis {axis} for shape {array.shape}")


def matrix_norm(x, /, *, keepdims=False, ord="fro") -> Array:  # noqa: A002
    """Norm of the matrices formed by the last two axes ('fro', 'nuc', 1, -1, 2, -2, inf, -inf)."""
    return norm(x, axis=(-2, -1), keepdims=keepdims, ord=ord)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2) -> Array:  # noqa: A002
    """p-norm over `axis` (None: all elements; a tuple: those axes flattened together)."""
    array = as_array(x, where="vector_norm")
    shape = array.shape
    if axis is None:
        flat = wrap(reshape(array._node, (array.size,)))
        result = norm(flat, axis=0, ord=ord)
    elif isinstance(axis, tuple):
        axes = [normalize_axis_index("vector_norm", item, array.ndim) for item in axis]
        if len(set(axes)) != len(axes):
            raise ValueError(f"vector_norm: repeated axis in {axis}")
        rest = [index for index in range(array.ndim) if index not in axes]
        moved = transpose(array._node, axes + rest)
        length = math.prod(shape[index] for index in axes)
        flat = reshape(moved, (length,) + tuple(shape[index] for index in rest))
        result = norm(wrap(flat), axis=0, ord=ord)
    else:
        result = norm(array, axis=axis, ord=ord)
    if keepdims:
        axes = reduction_axes("vector_norm", axis, len(shape), scalar_axis=False)
        result = wrap(reshape(result._node, reduced_shape(shape, axes, True)))
    return result


__all__ = ["matrix_norm", "norm", "vector_norm"]
