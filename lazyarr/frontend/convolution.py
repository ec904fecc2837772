"""convolve and correlate of 1-d arrays (modes 'full', 'same', 'valid'), NumPy's way, lazily.

NumPy's `_pyarray_correlate` slides the shorter array along the longer one and takes one
dot product per output position, over the overlapping elements only (partial windows at
the ends in 'same' and 'full'). Here every output position gathers its window of the longer
array (positions outside it masked to zero, so an inf never meets a padding zero) and sums
the products: one fused gather-multiply-reduce. Dtypes follow NumPy's dot loops: integers
wrap in their own dtype, bool is `any(a and v)`, float16 accumulates in float32; float32,
float64 and complex sums may differ from NumPy's (BLAS) in the last bits, as their order of
summation does. correlate conjugates `v`; with `a` shorter than `v` NumPy swaps them and
reverses the result, and so does this.
"""

from __future__ import annotations

import operator

import numpy as np

from .. import dtypes
from ..hlo import constant, make
from . import elementwise as ew
from .array import Array
from .core import as_array, convert, wrap
from .reduction_support import reduce

__all__ = ["convolve", "correlate"]

_MODES = {"valid": 0, "same": 1, "full": 2}


def _mode(mode, where: str) -> int:
    """NumPy's mode converter: 'valid', 'same', 'full' or 0, 1, 2."""
    if isinstance(mode, str):
        if mode not in _MODES:
            raise ValueError(f"{where}: mode must be one of 'valid', 'same', or 'full' (got {mode!r})")
        return _MODES[mode]
    if isinstance(mode, (bool, np.bool_)) or not isinstance(mode, (int, np.integer)):
        raise TypeError(f"{where}: convolve/correlate mode not understood (got {mode!r})")
    number = operator.index(mode)
    if number not in (0, 1, 2):
        raise ValueError(f"{where}: integer convolve/correlate mode must be 0, 1, or 2 (got {number})")
    return number


def _vector(value, where: str, *, at_least_1d: bool) -> Array:
    array = as_array(value, where=where)
    if at_least_1d and array.ndim == 0:
        array = wrap(make("reshape", [array._node], shape=(1,)))
    if array.ndim != 1:
        depth = "object of too small depth" if array.ndim == 0 else "object too deep"
        raise ValueError(f"{where}: {depth} for desired array (got shape {array.shape}; 1-d arrays only)")
    return array


def _sliding_dot(long: Array, short: Array, mode: int) -> Array:
    """NumPy's `_pyarray_correlate` for len(long) >= len(short): out[k] = sum over j of
    long[k - left + j] * short[j], over the j where the index falls inside `long`."""
    from .indexing import take

    size, width = long.shape[0], short.shape[0]
    length, left = {0: (size - width + 1, 0), 1: (size, width // 2), 2: (size + width - 1, width - 1)}[mode]
    positions = np.arange(length)[:, None] - left + np.arange(width)[None, :]
    inside = (positions >= 0) & (positions < size)
    result_dtype = long.dtype
    if result_dtype == dtypes.float16:  # NumPy's HALF_dot sums in float32
        long, short = wrap(convert(long._node, dtypes.float32)), wrap(convert(short._node, dtypes.float32))
    windows = take(long, np.clip(positions, 0, size - 1).reshape(-1)).reshape(positions.shape)
    products = ew.multiply(windows, short[None, :])
    zero = wrap(convert(constant(np.zeros((), dtype=np.int8)), products.dtype))
    terms = ew.where(wrap(constant(inside)), products, zero)
    total = reduce(terms._node, "sum", (1,))
    return wrap(convert(total, result_dtype))


def _operands(a, v, where: str, *, at_least_1d: bool) -> tuple[Array, Array]:
    first = _vector(a, where, at_least_1d=at_least_1d)
    second = _vector(v, where, at_least_1d=at_least_1d)
    common = dtypes.result_type(first.dtype, second.dtype)
    return wrap(convert(first._node, common)), wrap(convert(second._node, common))


def correlate(a, v, mode="valid") -> Array:
    """Cross-correlation of two 1-d arrays: out[k] = sum_n a[n + k] * conj(v[n]) over the
    overlap, for the positions `mode` keeps ('valid': full overlap only; 'same': len(a)
    values centred; 'full': every overlap). Lazy.

    >>> import lazyarr as la
    >>> la.correlate(la.asarray([1.0, 2.0, 3.0]), [0.0, 1.0, 0.5]).tolist()
    [3.5]
    """
    mode = _mode(mode, "correlate")
    first, second = _operands(a, v, "correlate", at_least_1d=False)
    if first.shape[0] == 0:
        raise ValueError("correlate: first array argument cannot be empty")
    if second.shape[0] == 0:
        raise ValueError("correlate: second array argument cannot be empty")
    if dtypes.is_complex(second.dtype):
        second = ew.conj(second)
    if first.shape[0] < second.shape[0]:  # NumPy swaps the operands and reverses the result
        return _sliding_dot(second, first, mode)[::-1]
    return _sliding_dot(first, second, mode)


def convolve(a, v, mode="full") -> Array:
    """Discrete linear convolution of two 1-d arrays (scalars count as length 1):
    out[k] = sum_m a[m] * v[k - m] over the overlap, for the positions `mode` keeps
    ('full': every overlap; 'same': max(len(a), len(v)) values centred; 'valid': full
    overlap only). Lazy.

    >>> import lazyarr as la
    >>> la.convolve(la.asarray([1.0, 2.0, 3.0]), [0.0, 1.0, 0.5]).tolist()
    [0.0, 1.0, 2.5, 4.0, 1.5]
    """
    mode = _mode(mode, "convolve")
    first, second = _operands(a, v, "convolve", at_least_1d=True)
    if first.shape[0] == 0:
        raise ValueError("convolve: a cannot be empty")
    if second.shape[0] == 0:
        raise ValueError("convolve: v cannot be empty")
    if second.shape[0] > first.shape[0]:
        first, second = second, first
    return _sliding_dot(first, second[::-1], mode)
