"""Products built from elementwise multiplies rather than a dot: outer, kron and cross.

They follow NumPy's code step by step (the same multiplies and subtractions in the same
dtype), so their values equal NumPy's exactly, NaN, infinities and signed zeros included.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..hlo import Instruction
from ..shapes import broadcast_shapes
from . import elementwise
from .array import Array
from .core import as_array, broadcast_to, convert, wrap
from .node_layout import move_axes_to_end, move_last_axis_to, reshape, slice_axis, stack_last
from .reduction_support import normalize_axis_index, refuse_out
from .templated_calls import replayed


def outer(a, b, out=None) -> Array:
    """out[i, j] = a.ravel()[i] * b.ravel()[j]."""
    refuse_out("outer", out)
    result = replayed("outer", _outer, (a, b))  # hot: `outer(u, v)` in a loop
    return result if result is not None else _outer(a, b)


def _outer(a, b) -> Array:
    left, right = as_array(a, where="outer"), as_array(b, where="outer")
    return elementwise.multiply(
        wrap(reshape(left._node, (left.size, 1))), wrap(reshape(right._node, (1, right.size)))
    )


def _component(node: Instruction, index: int) -> Array:
    """node[..., index] as a lazy array."""
    part = slice_axis(node, node.ndim - 1, index, index + 1)
    return wrap(reshape(part, node.shape[:-1]))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None) -> Array:
    """Cross product of 3-element (or NumPy's deprecated 2-element) vectors, broadcast."""
    if axis is not None:
        axisa = axisb = axisc = axis
    left, right = as_array(a, where="cross"), as_array(b, where="cross")
    if left.ndim < 1 or right.ndim < 1:
        raise ValueError("cross: At least one array has zero dimension")
    left_node = move_axes_to_end(
        left._node, (normalize_axis_index("cross", axisa, left.ndim, argument="axisa"),)
    )
    right_node = move_axes_to_end(
        right._node, (normalize_axis_index("cross", axisb, right.ndim, argument="axisb"),)
    )
    sizes = (left_node.shape[-1], right_node.shape[-1])
    if sizes[0] not in (2, 3) or sizes[1] not in (2, 3):
        raise ValueError(
            f"cross: incompatible dimensions for cross product (dimension must be 2 or 3), got {sizes}"
        )
    if 2 in sizes:
        warnings.warn(
            "cross: Arrays of 2-dimensional vectors are deprecated. Use arrays of 3-dimensional "
            "vectors instead. (deprecated in NumPy 2.0)",
            DeprecationWarning,
            stacklevel=2,
        )
    shape = broadcast_shapes(left_node.shape[:-1], right_node.shape[:-1], where="cross")
    result_dtype = np.promote_types(left.dtype, right.dtype)
    left_node, right_node = convert(left_node, result_dtype), convert(right_node, result_dtype)
    a0, a1 = _component(left_node, 0), _component(left_node, 1)
    b0, b1 = _component(right_node, 0), _component(right_node, 1)
    multiply, subtract = elementwise.multiply, elementwise.subtract
    z = subtract(multiply(a0, b1), multiply(a1, b0))
    if sizes == (2, 2):
        return wrap(broadcast_to(z._node, shape))
    if sizes[0] == 2:
        b2 = _component(right_node, 2)
        x, y = multiply(a1, b2), elementwise.negative(multiply(a0, b2))
    elif sizes[1] == 2:
        a2 = _component(left_node, 2)
        x, y = elementwise.negative(multiply(a2, b1)), multiply(a2, b0)
    else:
        a2, b2 = _component(left_node, 2), _component(right_node, 2)
        x = subtract(multiply(a1, b2), multiply(a2, b1))
        y = subtract(multiply(a2, b0), multiply(a0, b2))
    product = stack_last([broadcast_to(part._node, shape) for part in (x, y, z)])
    destination = normalize_axis_index("cross", axisc, product.ndim, argument="axisc")
    return wrap(move_last_axis_to(product, destination))


def kron(a, b) -> Array:
    """Kronecker product: blocks a[i, j] * b, for any number of dimensions."""
    left, right = as_array(a, where="kron"), as_array(b, where="kron")
    if left.ndim == 0 or right.ndim == 0:
        return elementwise.multiply(left, right)
    ndim = max(left.ndim, right.ndim)
    left_shape = (1,) * (ndim - left.ndim) + left.shape
    right_shape = (1,) * (ndim - right.ndim) + right.shape
    interleaved_left = tuple(size for pair in zip(left_shape, (1,) * ndim) for size in pair)
    interleaved_right = tuple(size for pair in zip((1,) * ndim, right_shape) for size in pair)
    product = elementwise.multiply(
        wrap(reshape(left._node, interleaved_left)), wrap(reshape(right._node, interleaved_right))
    )
    shape = tuple(left_size * right_size for left_size, right_size in zip(left_shape, right_shape))
    return wrap(reshape(product._node, shape))


__all__ = ["cross", "kron", "outer"]
