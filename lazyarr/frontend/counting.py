"""bincount: how often each non-negative integer occurs, optionally summing weights.

The result's length is max(x) + 1 (or `minlength`), which depends on the values, so `x` is
evaluated, as `unique` and `nonzero` evaluate their input (inside `la.jit` this raises an
error naming `la.bincount`). Plain counts are computed on the evaluated values; weighted
counts stay lazy in the weights: a scatter-add of the float64 weights at the positions `x`,
in order, as NumPy's loop adds them.
"""

from __future__ import annotations

import operator
import warnings

import numpy as np

from .. import dtypes
from ..hlo import constant, make
from .array import Array
from .core import as_array, convert, from_numpy, wrap
from .node_layout import filled

__all__ = ["bincount"]


def _minimum_length(minlength) -> int:
    if minlength is None:
        raise TypeError("bincount: use 0 instead of None for minlength")
    try:
        length = operator.index(minlength)
    except TypeError:
        raise TypeError(
            f"bincount: '{type(minlength).__name__}' object cannot be interpreted as an integer (minlength)"
        ) from None
    if length < 0:
        raise ValueError("bincount: 'minlength' must not be negative")
    return length


def _depth_error(ndim: int, argument: str) -> ValueError:
    depth = "object of too small depth" if ndim == 0 else "object too deep"
    return ValueError(f"bincount: {depth} for desired array; `{argument}` must be 1-d, got {ndim}-d")


def _positions(x) -> np.ndarray:
    """The evaluated values of `x` as int64, checked as NumPy checks them."""
    if isinstance(x, (Array, np.ndarray)):
        value = np.asarray(x)
    else:  # a list: NumPy converts it to intp itself
        value = np.asarray(x)
        if value.size == 0 and value.dtype.kind == "f":  # an empty list: NumPy reads it as intp
            value = value.astype(np.int64)
        elif value.dtype.kind == "f":  # NumPy truncates float lists, with this warning
            warnings.warn(
                "Non-integer input passed to bincount. In a future version of NumPy, this will be an error.",
                DeprecationWarning, stacklevel=3,
            )
            value = value.astype(np.int64)
    if value.ndim != 1:
        raise _depth_error(value.ndim, "x")
    if not np.can_cast(value.dtype, np.int64, casting="safe"):
        raise TypeError(
            f"bincount: Cannot cast array data from dtype('{value.dtype}') to dtype('int64') according to "
            "the rule 'safe'"
        )
    value = value.astype(np.int64)
    if value.size and value.min() < 0:
        raise ValueError("bincount: 'list' argument must have no negative elements")
    return value


def bincount(x, weights=None, minlength=0) -> Array:
    """Counts of each value 0..max(x) in the non-negative integer 1-d `x` (int64), or the sums
    of `weights` (float64) at each value; at least `minlength` long. Evaluates `x`.

    >>> import lazyarr as la
    >>> la.bincount(la.asarray([0, 1, 1, 3])).tolist()
    [1, 2, 0, 1]
    >>> la.bincount(la.asarray([0, 1, 1]), weights=la.asarray([0.5, 1.0, 2.0])).tolist()
    [0.5, 3.0]
    """
    length = _minimum_length(minlength)
    if weights is not None:
        weights = as_array(weights, where="bincount")
        if weights.ndim != 1:
            raise _depth_error(weights.ndim, "weights")
        if not np.can_cast(weights.dtype, np.float64, casting="safe"):
            raise TypeError(
                f"bincount: Cannot cast array data from dtype('{weights.dtype}') to dtype('float64') "
                "according to the rule 'safe'"
            )
    positions = _positions(x)
    if weights is not None and weights.shape[0] != positions.shape[0]:
        raise ValueError(
            f"bincount: The weights and list don't have the same length ({weights.shape[0]} and "
            f"{positions.shape[0]})."
        )
    if positions.size:
        length = max(length, int(positions.max()) + 1)
    if weights is None or not positions.size:  # NumPy: empty x counts (int64) even with weights
        return from_numpy(np.bincount(positions, minlength=length).astype(np.int64))
    zeros = filled(0.0, dtypes.float64, (length,))
    index = constant(positions.reshape(-1, 1))
    summed = make("scatter", [zeros, index, convert(weights._node, dtypes.float64)], index_dims=(0,), mode="add")
    return wrap(summed)
