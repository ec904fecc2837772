"""Small shape and dtype rules that several op families share."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ... import dtypes
from ..op import HloError


def describe(operands) -> str:
    return ", ".join(f"{dtypes.short_name(o.dtype)}{list(o.shape)}" for o in operands)


def require_dtypes(name: str, operands, accepted: Sequence[np.dtype], which=None) -> None:
    """Raise naming the op, the operand and the accepted dtypes when an operand is refused."""
    for index, operand in enumerate(operands):
        if which is not None and index not in which:
            continue
        if operand.dtype not in accepted:
            raise HloError(
                f"{name}: operand {index} has dtype {operand.dtype}; accepted: "
                + ", ".join(str(d) for d in accepted)
            )


def same_shape(name: str, operands) -> tuple[int, ...]:
    shapes = {operand.shape for operand in operands}
    if len(shapes) > 1:
        raise HloError(f"{name}: operands must have equal shapes, got {describe(operands)}")
    return operands[0].shape


def same_dtype(name: str, operands) -> np.dtype:
    kinds = {operand.dtype for operand in operands}
    if len(kinds) > 1:
        raise HloError(f"{name}: operands must have equal dtypes, got {describe(operands)}")
    return operands[0].dtype


def check_axes(name: str, axes, ndim: int, what: str = "dimensions") -> tuple[int, ...]:
    axes = tuple(axes)
    if any(not isinstance(axis, int) or not 0 <= axis < ndim for axis in axes):
        raise HloError(f"{name}: {what} {axes} out of range for rank {ndim}")
    if len(set(axes)) != len(axes):
        raise HloError(f"{name}: repeated entries in {what} {axes}")
    return axes


def check_int_tuple(name: str, what: str, value, length: int | None = None, minimum=None):
    if not isinstance(value, tuple) or any(not isinstance(v, int) for v in value):
        raise HloError(f"{name}: attribute {what} must be a tuple of ints, got {value!r}")
    if length is not None and len(value) != length:
        raise HloError(f"{name}: attribute {what} must have {length} entries, got {value}")
    if minimum is not None and any(v < minimum for v in value):
        raise HloError(f"{name}: attribute {what} entries must be >= {minimum}, got {value}")
    return value
