"""Sorting targets: sort and argsort along an axis (stable; NaN sorts last, as in NumPy)."""

from __future__ import annotations

import numpy as np

from .... import dtypes
from ...op import HloError
from ..custom import CustomCallTarget, register_target

_SORTABLE = (dtypes.bool_,) + dtypes.INTEGER + dtypes.FLOATING


def _check(name, operands, options):
    (operand,) = operands
    if operand.dtype not in _SORTABLE:
        raise HloError(f"{name}: dtype {operand.dtype} is not sortable; accepted: real dtypes")
    axis = options["axis"]
    if not 0 <= axis < max(operand.ndim, 1) or operand.ndim == 0:
        raise HloError(f"{name}: axis {axis} out of range for rank {operand.ndim}")
    return operand


def _sorted_order(value, options):
    """Stable ascending order; descending keeps equal elements in their original order."""
    axis = options["axis"]
    if not options.get("descending", False):
        return np.argsort(value, axis=axis, kind="stable")
    flipped = np.flip(value, axis=axis)
    order = np.argsort(flipped, axis=axis, kind="stable")
    order = np.flip(order, axis=axis)
    return value.shape[axis] - 1 - order


def _sort(values, options):
    (value,) = values
    order = _sorted_order(value, options)
    return (np.take_along_axis(value, order, axis=options["axis"]),)


def _argsort(values, options):
    (value,) = values
    return (_sorted_order(value, options).astype(np.int64),)


register_target(CustomCallTarget(
    name="sort",
    infer=lambda operands, options: [
        (_check("sort", operands, options).shape, operands[0].dtype)
    ],
    implementation=_sort,
    doc="Stable sort along options['axis']; options['descending'] reverses the order.",
))

register_target(CustomCallTarget(
    name="argsort",
    infer=lambda operands, options: [
        (_check("argsort", operands, options).shape, dtypes.int64)
    ],
    implementation=_argsort,
    doc="Indices that stably sort along options['axis'] (descending keeps ties in order).",
))
