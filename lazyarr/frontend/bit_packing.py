"""packbits and unpackbits: eight truth values per uint8 and back, along an axis.

Both are index arithmetic and elementwise bit operations, so they stay lazy: packbits pads
the axis to a multiple of 8 with zeros, splits it into groups of 8 and sums each group's
bits weighted by their place values; unpackbits broadcasts each byte over 8 places, shifts
and masks, then cuts or zero-pads the bits to `count`.
"""

from __future__ import annotations

import operator

import numpy as np

from .. import dtypes
from ..hlo import Instruction, constant, make
from ..shapes import normalize_axis
from .array import Array
from .core import as_array, broadcast_to, convert, scalar_constant, wrap
from .node_layout import move_axes_to_end, move_last_axis_to

__all__ = ["packbits", "unpackbits"]


def _check_bitorder(bitorder, where: str) -> None:
    if bitorder not in ("big", "little"):
        raise ValueError(f"{where}: 'order' must be either 'little' or 'big' (got {bitorder!r})")


def _along_last(array: Array, axis, where: str) -> tuple[Instruction, int | None]:
    """The operand with the packing axis last (flattened when axis is None; 0-d counts as 1-d),
    and the axis to move the result's last axis back to (None: leave it last)."""
    node = array._node
    if axis is None or node.ndim == 0:
        if axis is not None:
            normalize_axis(axis, 1, where=where)
        return make("reshape", [node], shape=(node.size,)), None
    axis = normalize_axis(axis, node.ndim, where=where)
    return move_axes_to_end(node, (axis,)), axis


def _place_values(bitorder: str) -> np.ndarray:
    """The value of each of a byte's 8 places: 128..1 (big) or 1..128 (little)."""
    values = 1 << np.arange(8, dtype=np.uint8)
    return values[::-1].copy() if bitorder == "big" else values


def _restored(node: Instruction, axis: int | None) -> Array:
    return wrap(node if axis is None else move_last_axis_to(node, axis))


def packbits(a, /, axis=None, bitorder="big") -> Array:
    """Pack the truth values of `a` (nonzero: 1) along `axis` (None: flattened) into uint8,
    eight per byte, the first one in the highest bit ('big') or the lowest ('little').

    >>> import lazyarr as la
    >>> la.packbits(la.asarray([1, 0, 1])).tolist()
    [160]
    """
    _check_bitorder(bitorder, "packbits")
    array = as_array(a, where="packbits")
    if not (dtypes.is_integer(array.dtype) or dtypes.is_bool(array.dtype)):
        raise TypeError(f"packbits: Expected an input array of integer or boolean data type, got {array.dtype}")
    node, axis = _along_last(array, axis, "packbits")
    bits = make("compare", [node, broadcast_to(scalar_constant(0, node.dtype), node.shape)], direction="NE")
    bits = convert(bits, dtypes.uint8)
    batch, length = node.shape[:-1], node.shape[-1]
    groups = -(-length // 8)
    if groups * 8 != length:
        zero = scalar_constant(0, dtypes.uint8)
        bits = make("pad", [bits, zero], low=(0,) * node.ndim, high=(0,) * len(batch) + (groups * 8 - length,),
                    interior=(0,) * node.ndim)
    shape = batch + (groups, 8)
    grouped = make("reshape", [bits], shape=shape)
    weights = make("broadcast", [constant(_place_values(bitorder))], shape=shape, dimensions=(len(shape) - 1,))
    packed = make("reduce", [make("multiply", [grouped, weights])], kind="sum", dimensions=(len(shape) - 1,))
    return _restored(packed, axis)


def _bit_count(count, available: int) -> int:
    if count is None:
        return available
    try:
        count = operator.index(count)
    except TypeError:
        raise TypeError(f"unpackbits: '{type(count).__name__}' object cannot be interpreted as an integer") from None
    if count >= 0:
        return count
    if available + count < 0:
        raise ValueError("unpackbits: -count larger than number of elements")
    return available + count


def unpackbits(a, /, axis=None, count=None, bitorder="big") -> Array:
    """Unpack each uint8 of `a` along `axis` (None: flattened) into 8 bits (uint8 0/1), keeping
    `count` bits (negative: drop that many from the end; beyond the bits: zero-padded).

    >>> import lazyarr as la
    >>> import numpy as np
    >>> la.unpackbits(la.asarray(np.array([5], np.uint8))).tolist()
    [0, 0, 0, 0, 0, 1, 0, 1]
    """
    _check_bitorder(bitorder, "unpackbits")
    array = as_array(a, where="unpackbits")
    if array.dtype != dtypes.uint8:
        raise TypeError(f"unpackbits: Expected an input array of unsigned byte data type, got {array.dtype}")
    node, axis = _along_last(array, axis, "unpackbits")
    batch, length = node.shape[:-1], node.shape[-1]
    wanted = _bit_count(count, length * 8)
    shape = batch + (length, 8)
    spread = make("broadcast", [node], shape=shape, dimensions=tuple(range(node.ndim)))
    shifts = np.arange(8, dtype=np.uint8)
    shifts = shifts[::-1].copy() if bitorder == "big" else shifts
    shift_node = make("broadcast", [constant(shifts)], shape=shape, dimensions=(len(shape) - 1,))
    one = broadcast_to(scalar_constant(1, dtypes.uint8), shape)
    bits = make("and", [make("shift-right", [spread, shift_node]), one])
    bits = make("reshape", [bits], shape=batch + (length * 8,))
    kept = min(wanted, length * 8)
    if kept != length * 8:
        bits = make("slice", [bits], start=(0,) * bits.ndim, limit=batch + (kept,), stride=(1,) * bits.ndim)
    if wanted > kept:
        zero = scalar_constant(0, dtypes.uint8)
        bits = make("pad", [bits, zero], low=(0,) * bits.ndim, high=(0,) * len(batch) + (wanted - kept,),
                    interior=(0,) * bits.ndim)
    return _restored(bits, axis)
