"""fromiter: a 1-d array from a Python iterable, consumed now (an iterator can be read once)."""

from __future__ import annotations

import numpy as np

from .. import dtypes
from .array import Array
from .core import from_numpy

__all__ = ["fromiter"]


def fromiter(iter, dtype, count=-1, *, like=None) -> Array:  # noqa: A002 (NumPy's name)
    """A new 1-d array holding the items of `iter` converted to `dtype` (NumPy's rules; the
    first `count` items when count >= 0, ValueError when there are fewer).

    >>> import lazyarr as la
    >>> la.fromiter((value * value for value in range(4)), dtype=int).tolist()
    [0, 1, 4, 9]
    """
    if like is not None:
        raise TypeError("fromiter: like= is not supported (lazyarr has one array type)")
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype, where="fromiter")
    try:
        values = np.fromiter(iter, dtype=dtype, count=count)
    except (TypeError, ValueError, OverflowError) as error:
        raise type(error)(f"fromiter: {error}") from None
    return from_numpy(values, where="fromiter")
