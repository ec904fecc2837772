"""partition and argpartition: the k-th smallest elements in their sorted places.

NumPy promises only that the element at each `kth` position is the one a full sort would
put there, with no larger element before it and no smaller one after it; the order within
the two sides is unspecified. A full sort satisfies that promise, so both functions are the
lazy (stable) sort and argsort along the axis, after NumPy's checks of `kth`.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..shapes import normalize_axis
from .array import Array
from .core import as_array

__all__ = ["argpartition", "partition"]


def _check_options(where: str, kind, order) -> None:
    if kind != "introselect":
        raise ValueError(f"{where}: select kind must be 'introselect' (got {kind!r})")
    if order is not None:
        raise ValueError(f"{where}: Cannot specify order when the array has no fields.")


def _check_kth(kth, length: int, check_range: bool, where: str) -> None:
    """NumPy's checks: integer (not bool) positions, at most 1-d, each in [-length, length)."""
    positions = np.asarray(kth)
    if positions.dtype == np.bool_:
        raise ValueError(f"{where}: Booleans unacceptable as partition index")
    if positions.dtype.kind not in "iu":
        raise TypeError(f"{where}: Partition index must be integer, got {positions.dtype}")
    if positions.ndim > 1:
        raise ValueError(f"{where}: object too deep for desired array (kth must be at most 1-d)")
    if not check_range:  # nothing to partition: NumPy checks no position
        return
    for position in positions.reshape(-1).tolist():
        normalized = position + length if position < 0 else position
        if not 0 <= normalized < length:
            raise ValueError(f"{where}: kth(={normalized}) out of bounds ({length})")


def _operand(a, kth, axis, kind, order, where: str, *, flatten_scalar: bool) -> tuple[Array, int | None]:
    _check_options(where, kind, order)
    array = as_array(a, where=where)
    if dtypes.is_complex(array.dtype):
        raise TypeError(
            f"{where}: dtype {array.dtype} is not supported; accepted: bool, integer and real floating "
            "dtypes (complex sorting is not implemented)"
        )
    if axis is None or (flatten_scalar and array.ndim == 0):
        length = array.size
    else:
        length = array.shape[normalize_axis(axis, array.ndim, where=where)]
    _check_kth(kth, length, array.size > 0, where)
    return array, axis


def partition(a, kth, axis=-1, kind="introselect", order=None) -> Array:
    """A copy of `a` with the element at each `kth` position where a sort puts it, smaller or
    equal ones before and larger or equal ones after (this one is fully sorted). Lazy.

    >>> import lazyarr as la
    >>> int(la.partition(la.asarray([3, 4, 2, 1]), 2)[2])
    3
    """
    from .searching import sort

    array, axis = _operand(a, kth, axis, kind, order, "partition", flatten_scalar=False)
    return sort(array, axis=axis)


def argpartition(a, kth, axis=-1, kind="introselect", order=None) -> Array:
    """Indices (int64) that partition `a` at `kth` along `axis` (here: a stable argsort). Lazy.

    >>> import lazyarr as la
    >>> int(la.argpartition(la.asarray([3, 4, 2, 1]), 0)[0])
    3
    """
    from .searching import argsort

    array, axis = _operand(a, kth, axis, kind, order, "argpartition", flatten_scalar=True)
    return argsort(array, axis=axis)
