"""NumPy's may_share_memory and shares_memory, answered from lazyarr's view relationships.

A lazy array may not have a buffer yet, and its buffer is never written in place (a write
rebinds the array to a new graph node), so memory addresses say nothing useful. What NumPy's
answer means for a program is whether a write to one array can change the other, and in
lazyarr that happens exactly between views of one owner (views.py: a write to a view writes
its owner, and every live view re-reads it). So:

* two lazy arrays with different owners share nothing (copies, results of arithmetic, arrays
  made from the same NumPy array: la.asarray copies);
* a lazy array and anything else (a NumPy array, a list) share nothing: lazyarr copies NumPy
  data in, and `np.asarray(lazy)` is a read-only snapshot that later writes to the lazy array
  do not change;
* two views of one owner share memory where NumPy's views would: both are replayed on stride
  dummies (views.strided: NumPy's strides for the same view chain, pointing at one scratch
  element, never read) and NumPy's own test runs on those, with the same `max_work` (so
  may_share_memory is NumPy's bounds check, shares_memory its exact answer);
* where lazyarr cannot tell a view's layout, the answer is True (for a non-empty array): the
  conservative answer, since a copy made because of it is never wrong.

Two NumPy arrays (no lazy array) go to NumPy. Never evaluates.
"""

from __future__ import annotations

import numpy as np

from .array import Array
from .views import strided

__all__ = ["may_share_memory", "shares_memory"]


def _owner(array: Array) -> Array:
    """The array that owns `array`'s value: up the chain of views."""
    while array._base is not None:
        array = array._base.base
    return array


def _overlap(a, b, numpy_test, max_work) -> bool:
    if not isinstance(a, Array) and not isinstance(b, Array):
        return bool(numpy_test(a, b, max_work=max_work))
    if not (isinstance(a, Array) and isinstance(b, Array)) or _owner(a) is not _owner(b):
        return False
    if a.size == 0 or b.size == 0:
        return False  # as NumPy: an empty array holds no memory
    owner_layout = strided(_owner(a))
    layout_a, layout_b = _layout_in(a, owner_layout), _layout_in(b, owner_layout)
    if layout_a is None or layout_b is None:
        return True  # a layout lazyarr cannot tell: the conservative answer
    return bool(numpy_test(layout_a, layout_b, max_work=max_work))


def _layout_in(array: Array, owner_layout: np.ndarray | None) -> np.ndarray | None:
    """`array`'s stride dummy where it is a view into its owner's (a non-empty view's memory
    lies within its owner's); None where lazyarr cannot tell, or where the layout step gave
    something else (an element picked out as a NumPy scalar, not a 0-d view)."""
    layout = strided(array)
    if not isinstance(layout, np.ndarray) or owner_layout is None:
        return None
    return layout if np.may_share_memory(layout, owner_layout) else None


def may_share_memory(a, b, /, max_work=0) -> bool:
    """Whether writes to `a` might change `b` (NumPy's may_share_memory: by default a bounds
    check, which may say True for interleaved views that never meet). Lazy arrays share only
    with views of the same owner; see the module docstring.

    >>> import lazyarr as la
    >>> x = la.zeros(6)
    >>> la.may_share_memory(x[::2], x[1::2]), la.may_share_memory(x, x + 0)
    (True, False)
    """
    return _overlap(a, b, np.may_share_memory, max_work)


def shares_memory(a, b, /, max_work=-1) -> bool:
    """Whether `a` and `b` have an element in common: NumPy's exact answer for the same views
    (raising NumPy's TooHardError past `max_work`). Lazy arrays share only with views of the
    same owner; see the module docstring.

    >>> import lazyarr as la
    >>> x = la.zeros(6)
    >>> la.shares_memory(x[::2], x[1::2]), la.shares_memory(x[:4], x[3:])
    (False, True)
    """
    return _overlap(a, b, np.shares_memory, max_work)
