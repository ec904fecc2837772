"""array_equal and array_equiv: whether two arrays hold the same values (a Python bool).

Both answer a question about values, so they evaluate (one module for the comparison and its
reduction). Shapes are compared without evaluating: arrays of different shapes (or, for
array_equiv, shapes that do not broadcast) are unequal at once, as in NumPy.
"""

from __future__ import annotations

from .. import dtypes
from ..shapes import broadcast_shapes
from . import elementwise
from .array import Array
from .core import as_array

__all__ = ["array_equal", "array_equiv"]


def _operands(a1, a2, where: str) -> tuple[Array, Array] | None:
    """Both operands as arrays, or None when one cannot be an array (NumPy: unequal)."""
    try:
        return as_array(a1, where=where), as_array(a2, where=where)
    except (TypeError, ValueError, OverflowError):
        return None


def _all_equal(first: Array, second: Array, equal_nan: bool) -> bool:
    from .reductions import all as all_

    same = elementwise.equal(first, second)
    can_hold_nan = dtypes.is_inexact(first.dtype) or dtypes.is_inexact(second.dtype)
    if equal_nan and can_hold_nan:
        # NaN positions must agree; elsewhere the values must be equal (complex: NaN in either part).
        first_nan, second_nan = elementwise.isnan(first), elementwise.isnan(second)
        either_nan = elementwise.logical_or(first_nan, second_nan)
        same = elementwise.where(either_nan, elementwise.logical_and(first_nan, second_nan), same)
    return bool(all_(same))


def array_equal(a1, a2, equal_nan=False) -> bool:
    """True when both arrays have the same shape and equal elements (NaNs equal each other when
    `equal_nan`). Evaluates.

    >>> import lazyarr as la
    >>> la.array_equal(la.asarray([1.0, float("nan")]), [1.0, float("nan")], equal_nan=True)
    True
    """
    operands = _operands(a1, a2, "array_equal")
    if operands is None or operands[0].shape != operands[1].shape:
        return False
    return _all_equal(*operands, equal_nan=bool(equal_nan))


def array_equiv(a1, a2) -> bool:
    """True when the arrays broadcast to one shape and are equal there. Evaluates.

    >>> import lazyarr as la
    >>> la.array_equiv(la.asarray([1, 2]), [[1, 2], [1, 2]])
    True
    """
    operands = _operands(a1, a2, "array_equiv")
    if operands is None:
        return False
    try:
        broadcast_shapes(operands[0].shape, operands[1].shape, where="array_equiv")
    except ValueError:
        return False
    return _all_equal(*operands, equal_nan=False)
