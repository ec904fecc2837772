"""nanvar, nanstd, nancumsum and nancumprod: NumPy's NaN-ignoring forms, step by step, lazily.

NumPy's `_nanfunctions_impl` replaces NaN by 0 (or 1) and reuses the plain function; nanvar
counts the non-NaN values per slice (intp), divides the keepdims sum by that count in the
dtype promoted with intp and casts back (its `_divide_by_count` writes into the sum), subtracts
the mean in the promoted dtype and casts back into the data's dtype, zeroes the NaN places,
squares (`(x * conj(x)).real` for complex), sums and divides by `count - ddof`; a slice with
no degrees of freedom left gives NaN. These functions build the same steps, so the values
agree with NumPy on the interpreter bit for bit.
"""

from __future__ import annotations

import math

from .. import dtypes
from ..hlo import make
from . import elementwise as ew
from .array import Array
from .core import as_array, convert, wrap
from .node_layout import filled
from .reduction_support import NO_VALUE, is_given, keepdims_flag, optional_dtype, reduction_axes, refuse_out
from .statistics import replace_nan

__all__ = ["nancumprod", "nancumsum", "nanstd", "nanvar"]


def _divide_by_count(total: Array, count: Array) -> Array:
    """NumPy's `_divide_by_count`: total / count in the promoted dtype, cast back to total's."""
    return wrap(convert(ew.divide(total, count)._node, total.dtype))


def _nan_variance(name: str, a, axis, dtype, out, ddof, keepdims, where, mean, correction) -> Array:
    from .reductions import sum as sum_
    from .statistics import var

    array = as_array(a, where=name)
    replaced, is_nan = replace_nan(array, 0)
    if is_nan is None:  # no NaN possible: NumPy calls var
        return var(array, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, where=where,
                   mean=mean, correction=correction)
    refuse_out(name, out)
    if is_given(where) and where is not True:
        raise NotImplementedError(f"{name}: where= is not supported; select the values first (la.where)")
    dtype = optional_dtype(name, dtype)
    if dtype is not None and not dtypes.is_inexact(dtype):
        raise TypeError(f"{name}: If a is inexact, then dtype must be inexact; got dtype={dtype}")
    if is_given(correction):
        if ddof != 0:
            raise ValueError(f"{name}: ddof and correction can't be provided simultaneously.")
        ddof = correction
    axes = reduction_axes(name, axis, array.ndim)
    present = wrap(convert(make("not", [is_nan]), dtypes.int64))
    count = sum_(present, axis=axes, keepdims=True)
    if is_given(mean):
        center = as_array(mean, where=name)
    else:
        center = _divide_by_count(sum_(replaced, axis=axes, dtype=dtype, keepdims=True), count)
    deviation = wrap(convert(ew.subtract(replaced, center)._node, replaced.dtype))  # NumPy: out=arr
    deviation = ew.where(wrap(is_nan), wrap(filled(0, deviation.dtype, ())), deviation)
    if dtypes.is_complex(deviation.dtype):
        squared = ew.real(ew.multiply(deviation, ew.conj(deviation)))
    else:
        squared = ew.multiply(deviation, deviation)
    total = sum_(squared, axis=axes, dtype=dtype, keepdims=keepdims_flag(keepdims))
    if not keepdims_flag(keepdims):
        count = sum_(present, axis=axes)
    freedom = ew.subtract(count, ddof)
    variance = _divide_by_count(total, freedom)
    return ew.where(ew.less_equal(freedom, 0), wrap(filled(math.nan, variance.dtype, ())), variance)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=NO_VALUE, *, where=NO_VALUE, mean=NO_VALUE,
           correction=NO_VALUE) -> Array:
    """Variance of the non-NaN values over `axis` with `ddof` (complex gives real); a slice
    with `count - ddof <= 0` gives NaN (NumPy also warns). Integers: la.var. Lazy.

    >>> import lazyarr as la
    >>> float(la.nanvar(la.asarray([1.0, float("nan"), 3.0])))
    1.0
    """
    return _nan_variance("nanvar", a, axis, dtype, out, ddof, keepdims, where, mean, correction)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=NO_VALUE, *, where=NO_VALUE, mean=NO_VALUE,
           correction=NO_VALUE) -> Array:
    """Standard deviation of the non-NaN values: the square root of `nanvar`. Lazy.

    >>> import lazyarr as la
    >>> float(la.nanstd(la.asarray([1.0, float("nan"), 3.0])))
    1.0
    """
    return ew.sqrt(_nan_variance("nanstd", a, axis, dtype, out, ddof, keepdims, where, mean, correction))


def nancumsum(a, axis=None, dtype=None, out=None) -> Array:
    """Cumulative sum treating NaN as zero (axis=None: of the flattened array). Lazy.

    >>> import lazyarr as la
    >>> la.nancumsum(la.asarray([1.0, float("nan"), 3.0])).tolist()
    [1.0, 1.0, 4.0]
    """
    from .cumulative import cumsum

    refuse_out("nancumsum", out)
    replaced, _ = replace_nan(as_array(a, where="nancumsum"), 0)
    return cumsum(replaced, axis=axis, dtype=dtype)


def nancumprod(a, axis=None, dtype=None, out=None) -> Array:
    """Cumulative product treating NaN as one (axis=None: of the flattened array). Lazy.

    >>> import lazyarr as la
    >>> la.nancumprod(la.asarray([2.0, float("nan"), 3.0])).tolist()
    [2.0, 2.0, 6.0]
    """
    from .cumulative import cumprod

    refuse_out("nancumprod", out)
    replaced, _ = replace_nan(as_array(a, where="nancumprod"), 1)
    return cumprod(replaced, axis=axis, dtype=dtype)
