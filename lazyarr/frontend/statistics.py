"""mean, var, std and the NaN-ignoring reductions, following NumPy's own formulas step by step.

NumPy's `_methods._mean` and `_var` decide the precision of every step: integers accumulate
in float64, a float16 mean accumulates in float32 and casts back, a variance subtracts the
keepdims mean, squares (real**2 + imag**2 for complex, so the result is real) and sums again,
and every division by a count runs in the dtype promoted with intp before casting back (as
NumPy's true_divide(..., out=total, casting='unsafe') does). These functions build the same
steps lazily so the values agree with NumPy bit for bit on the interpreter.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .. import dtypes
from ..hlo import Instruction, make
from . import elementwise
from .array import Array
from .core import as_array, convert, scalar_constant, wrap
from .node_layout import filled
from .reduction_support import (
    NO_VALUE,
    count_of,
    is_given,
    keep_dimensions,
    keepdims_flag,
    optional_dtype,
    reduce,
    reduction_axes,
    refuse_out,
)


def _reductions():
    """The reductions module, imported late: it re-exports this module's functions."""
    from . import reductions

    return reductions


def _refuse_where(name: str, where) -> None:
    if is_given(where) and where is not True:
        raise NotImplementedError(
            f"{name}: where= is not supported; NumPy skips masked elements in a summation order "
            "lazyarr does not reproduce. Select the elements first (la.where(mask, x, 0))."
        )


def _sum_in(node: Instruction, axes, dtype) -> Instruction:
    return reduce(convert(node, dtype), "sum", axes)


def divide_by_count(node: Instruction, count) -> Instruction:
    """node / count in the dtype NumPy promotes to with count's dtype, cast back to node's."""
    count = np.asarray(count)
    quotient = elementwise.divide(wrap(node), wrap(scalar_constant(count, count.dtype)))._node
    return convert(quotient, node.dtype)


def mean(a, axis=None, dtype=None, out=None, keepdims=NO_VALUE, *, where=NO_VALUE) -> Array:
    """Arithmetic mean over `axis` (integers give float64; float16 accumulates in float32).

    An empty reduction gives NaN (NumPy also warns; lazyarr does not).

    >>> la.mean(la.asarray([1, 2, 3, 4]))   # 2.5
    """
    array = as_array(a, where="mean")
    refuse_out("mean", out)
    _refuse_where("mean", where)
    axes = reduction_axes("mean", axis, array.ndim, scalar_axis=False)
    accumulate = optional_dtype("mean", dtype)
    float16_result = False
    if accumulate is None:
        if dtypes.is_integer(array.dtype) or dtypes.is_bool(array.dtype):
            accumulate = dtypes.float64
        elif array.dtype == dtypes.float16:
            accumulate, float16_result = dtypes.float32, True
        else:
            accumulate = array.dtype
    total = _sum_in(array._node, axes, accumulate)
    result = divide_by_count(total, np.intp(count_of(array.shape, axes)))
    if float16_result:
        result = convert(result, dtypes.float16)
    return wrap(keep_dimensions(result, array.shape, axes, keepdims_flag(keepdims)))


def _degrees_of_freedom(name, ddof, correction):
    if is_given(correction):
        if ddof != 0:
            raise ValueError(f"{name}: ddof and correction can't be provided simultaneously.")
        ddof = correction
    if isinstance(ddof, Array) or not isinstance(ddof, (numbers.Number, np.generic)):
        raise TypeError(
            f"{name}: ddof/correction must be a Python or NumPy number, got {type(ddof).__name__}"
        )
    return ddof


def _variance(name, a, axis, dtype, out, ddof, keepdims, where, mean_value, correction) -> Instruction:
    array = as_array(a, where=name)
    refuse_out(name, out)
    _refuse_where(name, where)
    ddof = _degrees_of_freedom(name, ddof, correction)
    axes = reduction_axes(name, axis, array.ndim, scalar_axis=False)
    accumulate = optional_dtype(name, dtype)
    if accumulate is None and (dtypes.is_integer(array.dtype) or dtypes.is_bool(array.dtype)):
        accumulate = dtypes.float64
    count = count_of(array.shape, axes)
    if is_given(mean_value):
        center = as_array(mean_value, where=name)
    else:
        total = _sum_in(array._node, axes, accumulate or array.dtype)
        total = keep_dimensions(total, array.shape, axes, True)
        center = wrap(divide_by_count(total, np.intp(count)))
    deviation = elementwise.subtract(array, center)
    if dtypes.is_complex(deviation.dtype):
        parts = (elementwise.real(deviation), elementwise.imag(deviation))
        squared = elementwise.add(elementwise.square(parts[0]), elementwise.square(parts[1]))
    else:
        squared = elementwise.square(deviation)
    result = _sum_in(squared._node, axes, accumulate or squared.dtype)
    with np.errstate(all="ignore"):
        divisor = np.maximum(np.intp(count) - ddof, 0)
    result = divide_by_count(result, divisor)
    return keep_dimensions(result, array.shape, axes, keepdims_flag(keepdims))


def var(
    a,
    axis=None,
    dtype=None,
    out=None,
    ddof=0,
    keepdims=NO_VALUE,
    *,
    where=NO_VALUE,
    mean=NO_VALUE,
    correction=NO_VALUE,
) -> Array:
    """Variance over `axis` with `ddof` (or the array API's `correction`); complex gives real.

    >>> la.var(la.asarray([1.0, 2.0, 3.0, 4.0]), correction=1)   # 1.666...
    """
    return wrap(_variance("var", a, axis, dtype, out, ddof, keepdims, where, mean, correction))


def std(
    a,
    axis=None,
    dtype=None,
    out=None,
    ddof=0,
    keepdims=NO_VALUE,
    *,
    where=NO_VALUE,
    mean=NO_VALUE,
    correction=NO_VALUE,
) -> Array:
    """Standard deviation: the square root of `var` with the same arguments."""
    variance = _variance("std", a, axis, dtype, out, ddof, keepdims, where, mean, correction)
    return elementwise.sqrt(wrap(variance))


def _replace_nan(name: str, array: Array, value) -> tuple[Array, Instruction | None]:
    """(array with NaN replaced by `value`, the NaN mask) for inexact dtypes; else (array, None)."""
    if not dtypes.is_inexact(array.dtype):
        return array, None
    is_nan = make("is-nan", [array._node])
    replaced = make("select", [is_nan, filled(value, array.dtype, array.shape), array._node])
    return wrap(replaced), is_nan


def nansum(a, axis=None, dtype=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE, where=NO_VALUE) -> Array:
    """Sum treating NaN as zero (an element with a NaN in either complex part counts as NaN)."""
    replaced, _ = _replace_nan("nansum", as_array(a, where="nansum"), 0)
    return _reductions().sum(replaced, axis, dtype, out, keepdims, initial, where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE, where=NO_VALUE) -> Array:
    """Product treating NaN as one."""
    replaced, _ = _replace_nan("nanprod", as_array(a, where="nanprod"), 1)
    return _reductions().prod(replaced, axis, dtype, out, keepdims, initial, where)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=NO_VALUE, *, where=NO_VALUE) -> Array:
    """Mean of the non-NaN elements; all-NaN slices give NaN (NumPy also warns)."""
    array = as_array(a, where="nanmean")
    replaced, is_nan = _replace_nan("nanmean", array, 0)
    if is_nan is None:
        return mean(array, axis, dtype, out, keepdims, where=where)
    refuse_out("nanmean", out)
    _refuse_where("nanmean", where)
    dtype = optional_dtype("nanmean", dtype)
    if dtype is not None and not dtypes.is_inexact(dtype):
        raise TypeError(f"nanmean: if a is inexact, then dtype must be inexact; got dtype={dtype}")
    axes = reduction_axes("nanmean", axis, array.ndim)
    present = convert(make("not", [is_nan]), dtypes.int64)
    count = reduce(present, "sum", axes)
    total = _reductions().sum(replaced, axis, dtype)._node
    quotient = elementwise.divide(wrap(total), wrap(count))._node
    result = convert(quotient, total.dtype)
    return wrap(keep_dimensions(result, array.shape, axes, keepdims_flag(keepdims)))


def _nan_extreme(name, numpy_name, kind, a, axis, out, keepdims, initial, where) -> Array:
    array = as_array(a, where=name)
    extreme = _reductions().max if kind == "max" else _reductions().min
    if not dtypes.is_inexact(array.dtype):
        return extreme(array, axis, out, keepdims, initial, where)
    if dtypes.is_complex(array.dtype):
        raise NotImplementedError(f"{name}: complex input is not supported")
    refuse_out(name, out)
    _refuse_where(name, where)
    axes = reduction_axes(name, axis, array.ndim)
    has_initial = is_given(initial) and initial is not None
    if any(array.shape[axis] == 0 for axis in axes) and not has_initial:
        raise ValueError(
            f"{name}: zero-size array to reduction operation {numpy_name} which has no identity "
            f"(shape {array.shape}, axis {axis})"
        )
    worst = -math.inf if kind == "max" else math.inf
    replaced, is_nan = _replace_nan(name, array, worst)
    best = extreme(replaced, axis, initial=initial)._node
    all_nan = reduce(is_nan, "and", axes)
    fallback = filled(initial if has_initial else math.nan, array.dtype, best.shape)
    result = make("select", [all_nan, fallback, best])
    return wrap(keep_dimensions(result, array.shape, axes, keepdims_flag(keepdims)))


def nanmax(a, axis=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE, where=NO_VALUE) -> Array:
    """Maximum ignoring NaN (NumPy's fmax reduction); all-NaN slices give NaN."""
    return _nan_extreme("nanmax", "fmax", "max", a, axis, out, keepdims, initial, where)


def nanmin(a, axis=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE, where=NO_VALUE) -> Array:
    """Minimum ignoring NaN (NumPy's fmin reduction); all-NaN slices give NaN."""
    return _nan_extreme("nanmin", "fmin", "min", a, axis, out, keepdims, initial, where)


__all__ = ["mean", "nanmax", "nanmean", "nanmin", "nanprod", "nansum", "std", "var"]
