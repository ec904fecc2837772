"""NumPy's products and diagonals: matmul, dot, vdot, inner, tensordot, vecdot, diagonal, trace.

einsum (module `einsum`) and the products built from elementwise multiplies, outer, kron and
cross (module `tensor_products`), are re-exported here, so `linalg.__all__` lists them all.

Every product lowers to the HLO `dot` (XLA's dot_general: batch dims, contracting dims), so
no operand is materialized by a transpose or a broadcast of its own. Result dtypes are NumPy's
promotion of the operand dtypes (int8 @ int8 stays int8 and wraps, bool @ bool is bool), and
the errors repeat NumPy's wording with the shapes. diagonal is a transpose, a reshape and a
strided slice (index remapping only), so it fuses into its consumer.
"""

from __future__ import annotations

import operator

import numpy as np

from .. import dtypes
from ..hlo import Instruction, make
from ..hlo.template import Templates
from ..shapes import broadcast_shapes
from . import elementwise
from .array import Array
from .core import as_array, broadcast_to, convert, wrap
from .node_layout import move_axes_to_end, reshape, slice_axis
from .reduction_support import normalize_axis_index, optional_dtype, refuse_out
from .views import make_view, read_only

MATMUL_SIGNATURE = "(n?,k),(k,m?)->(n?,m?)"
VECDOT_SIGNATURE = "(n),(n)->()"


def shape_text(shape) -> str:
    """A shape as NumPy prints it in errors: (2,3) and (4,)."""
    return "(" + ",".join(str(size) for size in shape) + ("," if len(shape) == 1 else "") + ")"


def dot_general(
    left: Instruction,
    right: Instruction,
    *,
    left_contracting=(),
    right_contracting=(),
    left_batch=(),
    right_batch=(),
) -> Instruction:
    return make(
        "dot",
        [left, right],
        lhs_batch=tuple(left_batch),
        rhs_batch=tuple(right_batch),
        lhs_contracting=tuple(left_contracting),
        rhs_contracting=tuple(right_contracting),
    )


def _result_dtype(name, left, right, dtype=None):
    requested = optional_dtype(name, dtype)
    if requested is None:
        return dtypes.result_type(left, right)
    for operand in (left, right):
        if not np.can_cast(operand.dtype, requested, casting="same_kind"):
            raise TypeError(
                f"{name}: cannot cast input from {operand.dtype} to dtype={requested} with "
                "casting rule 'same_kind'"
            )
    return requested


def _core_dimensions_error(name, signature, index, ndim, required):
    return ValueError(
        f"{name}: Input operand {index} does not have enough dimensions (has {ndim}, gufunc core "
        f"with signature {signature} requires {required})"
    )


def _batch_shape(name, left_shape, right_shape, left_batch, right_batch):
    try:
        return broadcast_shapes(left_batch, right_batch, where=name)
    except ValueError:
        raise ValueError(
            f"{name}: operands could not be broadcast together: batch dimensions "
            f"{shape_text(left_batch)} and {shape_text(right_batch)} of shapes "
            f"{shape_text(left_shape)} and {shape_text(right_shape)}"
        ) from None


def matmul(x1, x2, /, out=None, *, dtype=None) -> Array:
    """Matrix product with NumPy's rules: batch dims broadcast, 1-d operands are promoted.

    >>> la.matmul(la.ones((5, 2, 3)), la.ones((3, 4))).shape   # (5, 2, 4)
    """
    refuse_out("matmul", out)
    if dtype is None and type(x1) is Array and type(x2) is Array:  # hot: `X @ w` in a loop
        left, right = x1._node, x2._node
        signature = (left.shape, left.dtype, right.shape, right.dtype)
        return wrap(MATMUL_TEMPLATES.build(signature, _plain_matmul, left, right))
    first, second = as_array(x1, where="matmul"), as_array(x2, where="matmul")
    return wrap(_matmul_plan(first, second, dtype).build(first._node, second._node))


class _MatmulPlan:
    """What `matmul` decides from its operands' shapes and dtypes alone (checks passed, result
    dtype, the dot's dimensions), memoized per signature; `build` makes the nodes."""

    __slots__ = ("dtype", "vector", "batch", "shape")

    def __init__(self, dtype, vector: bool, batch: tuple, shape: tuple):
        self.dtype, self.vector, self.batch, self.shape = dtype, vector, batch, shape

    def build(self, left: Instruction, right: Instruction) -> Instruction:
        left, right = convert(left, self.dtype), convert(right, self.dtype)
        if self.vector:
            # A vector side contracts as it is (matrix-vector, vector-matrix, inner product): no
            # reshapes to (n, 1) and back, which would be copy kernels around the BLAS call.
            return dot_general(left, right, left_contracting=(left.ndim - 1,),
                               right_contracting=(max(right.ndim - 2, 0),))
        return reshape(batched_matmul(left, right, self.batch), self.shape)


# Plain `x1 @ x2` by operand signature: the graph replayed (hlo/template.py), checks and
# dimension rules skipped; `Array.__matmul__`'s C slot replays them too (fast_paths.py).
MATMUL_TEMPLATES = Templates()


def _plain_matmul(left: Instruction, right: Instruction) -> Instruction:
    return _matmul_plan(wrap(left), wrap(right), None).build(left, right)


def _matmul_plan(first: Array, second: Array, dtype) -> _MatmulPlan:
    """Check `first @ second` as NumPy does (errors name the shapes) and plan its nodes."""
    for index, operand in enumerate((first, second)):
        if operand.ndim == 0:
            raise _core_dimensions_error("matmul", MATMUL_SIGNATURE, index, 0, 1)
    result_dtype = _result_dtype("matmul", first, second, dtype)
    left = first.shape if first.ndim >= 2 else (1,) + first.shape
    right = second.shape if second.ndim >= 2 else second.shape + (1,)
    if left[-1] != right[-2]:
        raise ValueError(
            f"matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
            f"{MATMUL_SIGNATURE} (size {right[-2]} is different from {left[-1]}); "
            f"shapes {shape_text(first.shape)} and {shape_text(second.shape)}"
        )
    batch = _batch_shape("matmul", first.shape, second.shape, left[:-2], right[:-2])
    shape = batch + (left[-2],) * (first.ndim >= 2) + (right[-1],) * (second.ndim >= 2)
    return _MatmulPlan(result_dtype, first.ndim == 1 or second.ndim == 1, batch, shape)


def batched_matmul(left: Instruction, right: Instruction, batch) -> Instruction:
    """(..., n, k) @ (..., k, m) -> batch + (n, m); an unbatched side stays unbroadcast."""
    count = len(batch)
    if right.ndim == 2:
        return dot_general(left, right, left_contracting=(left.ndim - 1,), right_contracting=(0,))
    if left.ndim == 2:
        product = dot_general(left, right, left_contracting=(1,), right_contracting=(right.ndim - 2,))
        # (n,) + batch + (m,) -> batch + (n, m)
        return make("transpose", [product], permutation=tuple(range(1, count + 1)) + (0, count + 1))
    left = broadcast_to(left, batch + left.shape[-2:])
    right = broadcast_to(right, batch + right.shape[-2:])
    return dot_general(
        left,
        right,
        left_batch=range(count),
        right_batch=range(count),
        left_contracting=(count + 1,),
        right_contracting=(count,),
    )


def _not_aligned(name, left_shape, right_shape, left_axis, right_axis):
    return ValueError(
        f"{name}: shapes {shape_text(left_shape)} and {shape_text(right_shape)} not aligned: "
        f"{left_shape[left_axis]} (dim {left_axis}) != {right_shape[right_axis]} (dim {right_axis})"
    )


def dot(a, b, out=None) -> Array:
    """NumPy's dot: a product for 0-d, the inner product for 1-d, else a's last axis with b's
    second-to-last (b's only axis when 1-d)."""
    refuse_out("dot", out)
    left, right = as_array(a, where="dot"), as_array(b, where="dot")
    if left.ndim == 0 or right.ndim == 0:
        return elementwise.multiply(left, right)
    left_axis = left.ndim - 1
    right_axis = 0 if right.ndim == 1 else right.ndim - 2
    if left.shape[left_axis] != right.shape[right_axis]:
        raise _not_aligned("dot", left.shape, right.shape, left_axis, right_axis)
    if left.ndim <= 2 and right.ndim <= 2 and type(left) is Array and type(right) is Array:
        return matmul(left, right)  # (vectors and matrices: dot is matmul, whose graph is a memoized template)
    result_dtype = dtypes.result_type(left, right)
    return wrap(
        dot_general(
            convert(left._node, result_dtype),
            convert(right._node, result_dtype),
            left_contracting=(left_axis,),
            right_contracting=(right_axis,),
        )
    )


def vdot(a, b, /) -> Array:
    """Dot product of the flattened inputs, conjugating the first (NumPy's vdot)."""
    left, right = as_array(a, where="vdot"), as_array(b, where="vdot")
    if left.size != right.size:
        raise ValueError(
            f"vdot: vectors have different lengths: {left.size} elements (shape "
            f"{shape_text(left.shape)}) and {right.size} (shape {shape_text(right.shape)})"
        )
    result_dtype = dtypes.result_type(left, right)
    left_node = reshape(convert(left._node, result_dtype), (left.size,))
    right_node = reshape(convert(right._node, result_dtype), (right.size,))
    if dtypes.is_complex(result_dtype):
        left_node = make("conj", [left_node])
    return wrap(dot_general(left_node, right_node, left_contracting=(0,), right_contracting=(0,)))


def inner(a, b, /) -> Array:
    """Sum product over the last axes of a and b (a product when either is 0-d)."""
    left, right = as_array(a, where="inner"), as_array(b, where="inner")
    if left.ndim == 0 or right.ndim == 0:
        return elementwise.multiply(left, right)
    if left.shape[-1] != right.shape[-1]:
        raise _not_aligned("inner", left.shape, right.shape, left.ndim - 1, right.ndim - 1)
    result_dtype = dtypes.result_type(left, right)
    return wrap(
        dot_general(
            convert(left._node, result_dtype),
            convert(right._node, result_dtype),
            left_contracting=(left.ndim - 1,),
            right_contracting=(right.ndim - 1,),
        )
    )


def _axis_list(value):
    try:
        return list(value)
    except TypeError:
        return [value]


def tensordot(a, b, axes=2) -> Array:
    """Sum products over `axes` (an int N: a's last N with b's first N; or two axis lists)."""
    left, right = as_array(a, where="tensordot"), as_array(b, where="tensordot")
    try:
        iter(axes)
    except TypeError:
        count = operator.index(axes)
        left_axes, right_axes = list(range(-count, 0)), list(range(count))
    else:
        left_axes, right_axes = axes
    left_axes, right_axes = _axis_list(left_axes), _axis_list(right_axes)
    for axis_list in (left_axes, right_axes):
        if len(set(axis_list)) != len(axis_list):
            raise ValueError(f"tensordot: duplicate axes are not allowed in tensordot, got {axis_list}")
    if len(left_axes) != len(right_axes):
        raise ValueError(f"tensordot: shape-mismatch for sum: axes {left_axes} and {right_axes}")
    left_axes = [normalize_axis_index("tensordot", axis, left.ndim, argument="axes[0]") for axis in left_axes]
    right_axes = [
        normalize_axis_index("tensordot", axis, right.ndim, argument="axes[1]") for axis in right_axes
    ]
    for left_axis, right_axis in zip(left_axes, right_axes):
        if left.shape[left_axis] != right.shape[right_axis]:
            raise ValueError(
                f"tensordot: shape-mismatch for sum: {shape_text(left.shape)} axis {left_axis} and "
                f"{shape_text(right.shape)} axis {right_axis}"
            )
    result_dtype = dtypes.result_type(left, right)
    return wrap(
        dot_general(
            convert(left._node, result_dtype),
            convert(right._node, result_dtype),
            left_contracting=left_axes,
            right_contracting=right_axes,
        )
    )


def vecdot(x1, x2, /, *, axis=-1) -> Array:
    """Dot products of vectors along `axis` (x1 conjugated), batch dims broadcast."""
    first, second = as_array(x1, where="vecdot"), as_array(x2, where="vecdot")
    for index, operand in enumerate((first, second)):
        if operand.ndim == 0:
            raise _core_dimensions_error("vecdot", VECDOT_SIGNATURE, index, 0, 1)
    first_axis = normalize_axis_index("vecdot", axis, first.ndim)
    second_axis = normalize_axis_index("vecdot", axis, second.ndim)
    length = first.shape[first_axis]
    if second.shape[second_axis] != length:
        raise ValueError(
            f"vecdot: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
            f"{VECDOT_SIGNATURE} (size {second.shape[second_axis]} is different from {length})"
        )
    result_dtype = dtypes.result_type(first, second)
    left = move_axes_to_end(convert(first._node, result_dtype), (first_axis,))
    right = move_axes_to_end(convert(second._node, result_dtype), (second_axis,))
    batch = _batch_shape("vecdot", first.shape, second.shape, left.shape[:-1], right.shape[:-1])
    if dtypes.is_complex(result_dtype):
        left = make("conj", [left])
    left, right = broadcast_to(left, batch + (length,)), broadcast_to(right, batch + (length,))
    count = len(batch)
    return wrap(
        dot_general(
            left,
            right,
            left_batch=range(count),
            right_batch=range(count),
            left_contracting=(count,),
            right_contracting=(count,),
        )
    )


def diagonal(a, offset=0, axis1=0, axis2=1) -> Array:
    """The diagonal over (axis1, axis2) as the last axis (NumPy's diagonal), lazily: a
    read-only view, as NumPy's (it follows later writes to `a`; writing it raises ValueError).

    >>> la.diagonal(la.asarray([[1, 2], [3, 4]]))   # [1, 4]
    """
    array = as_array(a, where="diagonal")
    first, second, offset = _diagonal_axes(array, offset, axis1, axis2)
    return make_view(
        array, lambda base: _diagonal_node(base, offset, first, second), None,
        layout=lambda dummy: dummy.diagonal(offset, first, second), refusal=read_only("diagonal"),
    )


def _diagonal_axes(array: Array, offset, axis1, axis2) -> tuple[int, int, int]:
    """diagonal's arguments checked as NumPy checks them: (axis1, axis2, offset)."""
    if array.ndim < 2:
        raise ValueError(
            f"diagonal: diag requires an array of at least two dimensions, got shape {array.shape}"
        )
    first = normalize_axis_index("diagonal", axis1, array.ndim, argument="axis1")
    second = normalize_axis_index("diagonal", axis2, array.ndim, argument="axis2")
    if first == second:
        raise ValueError(f"diagonal: axis1 and axis2 cannot be the same (both are {first})")
    return first, second, operator.index(offset)


def _diagonal_node(node: Instruction, offset: int, first: int, second: int) -> Instruction:
    """The diagonal of `node` over axes (first, second), as a slice of their flattening."""
    rows, columns = node.shape[first], node.shape[second]
    if offset >= 0:
        length, start = max(0, min(rows, columns - offset)), offset
    else:
        length, start = max(0, min(rows + offset, columns)), -offset * columns
    moved = move_axes_to_end(node, (first, second))
    flat = reshape(moved, moved.shape[:-2] + (rows * columns,))
    if length == 0:
        return slice_axis(flat, flat.ndim - 1, 0, 0)
    limit = start + (length - 1) * (columns + 1) + 1
    return slice_axis(flat, flat.ndim - 1, start, limit, columns + 1)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None) -> Array:
    """Sum of the diagonal (NumPy's trace: int8 and bool sum in int64)."""
    from .reductions import sum as sum_

    refuse_out("trace", out)
    array = as_array(a, where="diagonal")
    first, second, offset = _diagonal_axes(array, offset, axis1, axis2)
    return sum_(wrap(_diagonal_node(array._node, offset, first, second)), axis=-1, dtype=dtype)


from .einsum import einsum  # noqa: E402
from .tensor_products import cross, kron, outer  # noqa: E402

__all__ = [
    "cross",
    "diagonal",
    "dot",
    "einsum",
    "inner",
    "kron",
    "matmul",
    "outer",
    "tensordot",
    "trace",
    "vdot",
    "vecdot",
]
