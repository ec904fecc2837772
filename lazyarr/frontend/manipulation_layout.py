"""Shape and axis manipulation that only remaps indices: reshape, transpose, squeeze, flip ...

Every function here builds one (or no) HLO layout instruction, so a chain of them keeps the
graph O(1) in size and a compiler emits them by rewriting indices, never by copying. Lazy
arrays have no memory layout: NumPy's memory-order options ('K', 'A') act as 'C' (see each
docstring). Errors follow NumPy's wording, prefixed with the function's name.

Where NumPy returns a view, so does lazyarr (views.py): writes to the result reach the input.
That is every transpose, squeeze, expand_dims, atleast_*d and flip; reshape and ravel when
NumPy's would need no copy (decided from NumPy's strides for the input's view chain:
`A.reshape(12)` and `A[1:].ravel()` are views, `A.T.reshape(-1)` and `A[:, ::2].ravel()`
copies); and broadcast_to, read-only as in NumPy.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes, shapes
from ..hlo import Maker, make
from ..shapes import normalize_axis, size_index
from .array import Array
from .core import as_array, convert, wrap
from .manipulation_nodes import (
    as_items,
    broadcast_node,
    normalize_axis_tuple,
    reshape_node,
    resolve_shape,
    transpose_node,
)
from .views import (
    NOTING_VIEW_CHAINS,
    is_owner,
    make_view,
    note_view_chain,
    numpy_reshape,
    read_only,
    strided,
    undecided,
)

__all__ = [
    "reshape", "ravel", "transpose", "permute_dims", "matrix_transpose", "swapaxes",
    "moveaxis", "expand_dims", "squeeze", "broadcast_to", "broadcast_arrays", "broadcast_shapes",
    "astype",
    "atleast_1d", "atleast_2d", "atleast_3d", "flip",
]


def _check_order(order, where: str, accepted=("C", "F", "A", "K")) -> str:
    if order is None:
        return "C"
    if not isinstance(order, str) or order.upper() not in accepted:
        raise ValueError(f"{where}: order must be one of {', '.join(map(repr, accepted))}, got {order!r}")
    return order.upper()


# -- reshaping -------------------------------------------------------------------------------
def reshape(a, /, shape=None, order="C", *, newshape=None, copy=None) -> Array:
    """A new shape for the same elements; one dimension may be -1 (inferred).

    order='F' reads and writes in column-major order (a transpose on each side); 'A' acts as
    'C' because lazy arrays have no memory layout. As in NumPy the result is a view of `a`
    (writes to it reach `a`) unless NumPy's reshape would copy, or `copy=True`; `copy=False`
    raises ValueError where NumPy's would copy. `newshape` is NumPy's older name for `shape`.

    >>> import lazyarr as la
    >>> la.reshape(la.asarray([1, 2, 3, 4, 5, 6]), (2, -1)).shape
    (2, 3)
    """
    if newshape is not None:
        if shape is not None:
            raise TypeError("reshape: pass only one of shape and newshape")
        shape = newshape
    if shape is None:
        raise TypeError("reshape: missing required argument 'shape'")
    _check_copy(copy, "reshape")
    order = _check_order(order, "reshape", ("C", "F", "A"))
    array = as_array(a, where="reshape")
    return _reshaped(array, resolve_shape(array.size, shape), order, copy, "reshape")


def _check_copy(copy, where: str) -> None:
    if copy not in (None, True, False):
        raise ValueError(f"{where}: copy must be None, True or False, got {copy!r}")


def ravel(a, order="C") -> Array:
    """The elements as a 1-d array, row-major; 'F' is column-major; 'A' and 'K' act as 'C'.

    As in NumPy the result is a view of `a` when `a` is contiguous in that order (a lazyarr
    array that owns its value is C-contiguous), else a copy.

    >>> import lazyarr as la
    >>> la.ravel(la.asarray([[1, 2], [3, 4]])).shape
    (4,)
    """
    order = _check_order(order, "ravel")
    array = as_array(a, where="ravel")
    return _reshaped(array, (array.size,), order, None, "ravel", ravel=True)


def _reshape_node(node, shape, order: str):
    """`node` reshaped to `shape`, its elements read and written in `order` ('C' or 'F')."""
    if order == "F":
        reversed_node = transpose_node(node, range(node.ndim - 1, -1, -1))
        flipped = reshape_node(reversed_node, tuple(shape)[::-1])
        return transpose_node(flipped, range(len(shape) - 1, -1, -1))
    return reshape_node(node, shape)


def _reshaped(array: Array, target, order: str, copy, where: str, ravel: bool = False) -> Array:
    """reshape/ravel of `array`: a view exactly where NumPy's is one (module docstring)."""
    element_order = "F" if order == "F" else "C"
    if copy:
        return wrap(_reshape_node(array._node, target, element_order))
    if is_owner(array) and order != "F":  # C-contiguous: NumPy's C-order result is a view
        return _reshape_view(array, target, element_order, None, lambda dummy: dummy.reshape(target))
    dummy = strided(array)
    if dummy is None:
        return _reshape_view(array, target, element_order, undecided(f"{where} of this view"), None)
    result, refusal = numpy_reshape(dummy, target, order, ravel, where)
    if result is None:  # NumPy copies
        if copy is False:
            raise ValueError(f"{where}: Unable to avoid creating a copy while reshaping.")
        return wrap(_reshape_node(array._node, target, element_order))
    view = _reshape_view(array, target, element_order, refusal, None)
    view._base.strided = result
    return view


def _reshape_view(array: Array, target, order: str, refusal, layout) -> Array:
    source = array.shape
    write = None if refusal else (lambda base, value: _reshape_node(value, source, order))
    return make_view(array, lambda base: _reshape_node(base, target, order), write,
                     layout=layout, refusal=refusal)


# -- axis permutations -----------------------------------------------------------------------
def _transposed_view(array: Array, permutation) -> Array:
    """`array` with its axes permuted, as a view (NumPy's transposes are views: a write to
    `x.T[0]` writes column 0 of `x`)."""
    permutation = tuple(permutation)
    steps = _TRANSPOSITIONS.get(permutation)
    if steps is None:
        if len(_TRANSPOSITIONS) >= 1024:
            _TRANSPOSITIONS.clear()
        steps = _TRANSPOSITIONS[permutation] = _Transposition(permutation)
    return make_view(array, steps.read, steps.write, layout=steps.layout)


class _Transposition:
    """The read, write and layout steps of a view permuting axes by `permutation`, made once
    per permutation (`X.T` in a loop builds no functions)."""

    __slots__ = ("permutation", "forward", "backward")

    def __init__(self, permutation: tuple[int, ...]):
        self.permutation = permutation
        inverse = tuple(int(axis) for axis in np.argsort(permutation))
        identity = permutation == tuple(range(len(permutation)))
        self.forward = None if identity else Maker("transpose", permutation=permutation)
        self.backward = None if identity else Maker("transpose", permutation=inverse)

    def read(self, base):
        return base if self.forward is None else self.forward(base)

    def write(self, base, value):
        return value if self.backward is None else self.backward(value)

    def layout(self, dummy):
        return dummy.transpose(self.permutation)


_TRANSPOSITIONS: dict[tuple[int, ...], _Transposition] = {}


def transpose(a, axes=None) -> Array:
    """Permute the axes; reversed by default. Negative axes count from the end.

    >>> import lazyarr as la
    >>> la.transpose(la.zeros((2, 3, 4)), (2, 0, 1)).shape
    (4, 2, 3)
    """
    array = as_array(a, where="transpose")
    if axes is None:
        view = _transposed_view(array, range(array.ndim - 1, -1, -1))
        if NOTING_VIEW_CHAINS[0] and type(array) is Array:  # for `.T` in C (views.VIEW_CHAINS)
            link = view._base
            note_view_chain((array.shape, array.dtype, "T"), array._node, link.read, link.write, link.layout)
        return view
    items = as_items(axes)
    if len(items) != array.ndim:
        raise ValueError(
            f"transpose: axes don't match array: got {len(items)} axes {items} for an array "
            f"of dimension {array.ndim}"
        )
    permutation = tuple(normalize_axis(axis, array.ndim, where="transpose") for axis in items)
    if len(set(permutation)) != len(permutation):
        raise ValueError(f"transpose: repeated axis in transpose {items}")
    return _transposed_view(array, permutation)


def permute_dims(a, axes=None) -> Array:
    """The array API's name for transpose."""
    return transpose(a, axes)


def matrix_transpose(x, /) -> Array:
    """Swap the last two axes (a stack of matrices transposed).

    >>> import lazyarr as la
    >>> la.matrix_transpose(la.zeros((5, 2, 3))).shape
    (5, 3, 2)
    """
    array = as_array(x, where="matrix_transpose")
    if array.ndim < 2:
        raise ValueError(
            f"matrix_transpose: input array must be at least 2-dimensional, but it is {array.ndim}"
        )
    permutation = list(range(array.ndim))
    permutation[-2:] = permutation[-1], permutation[-2]
    return _transposed_view(array, permutation)


def swapaxes(a, axis1, axis2) -> Array:
    """Interchange two axes.

    >>> import lazyarr as la
    >>> la.swapaxes(la.zeros((2, 3, 4)), 0, -1).shape
    (4, 3, 2)
    """
    array = as_array(a, where="swapaxes")
    first = normalize_axis(axis1, array.ndim, where="swapaxes axis1")
    second = normalize_axis(axis2, array.ndim, where="swapaxes axis2")
    permutation = list(range(array.ndim))
    permutation[first], permutation[second] = second, first
    return _transposed_view(array, permutation)


def moveaxis(a, source, destination) -> Array:
    """Move axes to new positions; the other axes keep their order.

    >>> import lazyarr as la
    >>> la.moveaxis(la.zeros((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    array = as_array(a, where="moveaxis")
    sources = normalize_axis_tuple(source, array.ndim, where="moveaxis", argument="source")
    targets = normalize_axis_tuple(destination, array.ndim, where="moveaxis", argument="destination")
    if len(sources) != len(targets):
        raise ValueError(
            "moveaxis: `source` and `destination` arguments must have the same number of "
            f"elements, got {len(sources)} and {len(targets)}"
        )
    order = [axis for axis in range(array.ndim) if axis not in sources]
    for target, source_axis in sorted(zip(targets, sources)):
        order.insert(target, source_axis)
    return _transposed_view(array, order)


# -- adding and removing unit axes -------------------------------------------------------------
def expand_dims(a, axis) -> Array:
    """Insert size-1 axes at the positions `axis` (an int or a tuple) of the result.

    >>> import lazyarr as la
    >>> la.expand_dims(la.zeros((2, 3)), (0, -1)).shape
    (1, 2, 3, 1)
    """
    array = as_array(a, where="expand_dims")
    count = len(as_items(axis))
    new_axes = normalize_axis_tuple(axis, array.ndim + count, where="expand_dims")
    sizes = iter(array.shape)
    shape = tuple(1 if position in new_axes else next(sizes) for position in range(array.ndim + count))
    return _unit_axes_view(array, shape, lambda dummy: np.expand_dims(dummy, new_axes))


def _unit_axes_view(array: Array, shape, layout) -> Array:
    """A view of `array` with size-1 axes added or removed (NumPy's are views too)."""
    source = array.shape
    return make_view(array, lambda base: reshape_node(base, shape),
                     lambda base, value: reshape_node(value, source), layout=layout)


def squeeze(a, axis=None) -> Array:
    """Remove size-1 axes (all of them, or those named by `axis`; others raise).

    >>> import lazyarr as la
    >>> la.squeeze(la.zeros((1, 2, 1))).shape
    (2,)
    """
    array = as_array(a, where="squeeze")
    if axis is None:
        removed = {position for position, size in enumerate(array.shape) if size == 1}
    else:
        removed = set(normalize_axis_tuple(axis, array.ndim, where="squeeze"))
        for position in sorted(removed):
            if array.shape[position] != 1:
                raise ValueError(
                    "squeeze: cannot select an axis to squeeze out which has size not equal to "
                    f"one (axis {position} has size {array.shape[position]} in shape {array.shape})"
                )
    if not removed:
        return array  # NumPy returns the array itself
    shape = tuple(size for position, size in enumerate(array.shape) if position not in removed)
    axes = tuple(sorted(removed))
    return _unit_axes_view(array, shape, lambda dummy: dummy.squeeze(axis=axes))


def _at_least(arrays, ndim: int, where: str, place, numpy_function):
    """Each array with unit axes added up to `ndim` (a view, as NumPy's), or itself."""
    results = []
    for value in arrays:
        array = as_array(value, where=where)
        if array.ndim < ndim:
            array = _unit_axes_view(array, place(array.shape), numpy_function)
        results.append(array)
    return results[0] if len(results) == 1 else tuple(results)


def atleast_1d(*arys):
    """Arrays with at least one dimension (0-d becomes shape (1,)); one array or a tuple."""
    return _at_least(arys, 1, "atleast_1d", lambda shape: (1,), np.atleast_1d)


def atleast_2d(*arys):
    """Arrays with at least two dimensions: (n,) becomes (1, n), 0-d becomes (1, 1)."""
    return _at_least(arys, 2, "atleast_2d", lambda shape: (1,) * (2 - len(shape)) + shape, np.atleast_2d)


def atleast_3d(*arys):
    """At least three dimensions: 0-d -> (1, 1, 1), (n,) -> (1, n, 1), (m, n) -> (m, n, 1)."""
    def place(shape):
        return {0: (1, 1, 1), 1: (1,) + shape + (1,), 2: shape + (1,)}[len(shape)]

    return _at_least(arys, 3, "atleast_3d", place, np.atleast_3d)


# -- broadcasting --------------------------------------------------------------------------------
def broadcast_to(array, shape, subok=False) -> Array:
    """`array` repeated (without copying) to `shape` by NumPy's broadcasting rules: a read-only
    view, as NumPy's (writing it raises ValueError; it follows later writes to `array`).

    >>> import lazyarr as la
    >>> la.broadcast_to(la.asarray([1, 2, 3]), (2, 3)).shape
    (2, 3)
    """
    source = as_array(array, where="broadcast_to")
    items = as_items(shape)
    try:
        target = tuple(size_index(item) for item in items)
    except TypeError:
        raise TypeError(f"broadcast_to: shape must be an int or a tuple of ints, got {shape!r}") from None
    if any(size < 0 for size in target):
        raise ValueError(f"broadcast_to: all elements of broadcast shape must be non-negative, got {target}")
    node = broadcast_node(source._node, target, where="broadcast_to")
    return make_view(source, lambda base: broadcast_node(base, target, where="broadcast_to"), None, node,
                     layout=lambda dummy: np.broadcast_to(dummy, target), refusal=read_only("broadcast_to"))


def broadcast_arrays(*args, subok=False) -> tuple[Array, ...]:
    """All arguments broadcast to their common shape (a tuple, as NumPy 2 returns).

    An argument already of that shape comes back itself, as in NumPy; the others are views
    that follow their input but refuse writes (ValueError): their elements repeat, and NumPy
    deprecates writing them (it warns, then writes each repeated element in turn).

    >>> import lazyarr as la
    >>> [x.shape for x in la.broadcast_arrays(la.zeros((3, 1)), la.zeros(4))]
    [(3, 4), (3, 4)]
    """
    arrays = [as_array(value, where="broadcast_arrays") for value in args]
    shape = shapes.broadcast_shapes(*(array.shape for array in arrays), where="broadcast_arrays")
    return tuple(array if array.shape == shape else _broadcast_view(array, shape) for array in arrays)


def _broadcast_view(array: Array, shape) -> Array:
    refusal = (
        f"broadcast_arrays: this result repeats the elements of an input of shape {array.shape} "
        f"over shape {shape}; NumPy deprecates writing it (a DeprecationWarning, then overlapping "
        "writes) and lazyarr refuses; write to a .copy() of it, or to the input"
    )
    return make_view(array, lambda base: broadcast_node(base, shape, where="broadcast_arrays"), None,
                     layout=lambda dummy: np.broadcast_to(dummy, shape), refusal=refusal)


def broadcast_shapes(*args) -> tuple[int, ...]:
    """The shape that shapes `args` broadcast to (NumPy's, and the array API's since 2025.12);
    an int stands for a 1-d shape, no shape gives (). A ValueError shows every shape.

    >>> import lazyarr as la
    >>> la.broadcast_shapes((3, 1), (4,), 4)
    (3, 4)
    """
    return shapes.broadcast_shapes(
        *(shapes.as_shape(shape, where="broadcast_shapes") for shape in args), where="broadcast_shapes"
    )


# -- reversal and dtype ----------------------------------------------------------------------------
def flip(m, axis=None) -> Array:
    """Reverse the order of elements along `axis` (all axes by default): a view, as NumPy's
    (a 0-d array gives a copy: NumPy gives a scalar).

    >>> import lazyarr as la
    >>> la.flip(la.asarray([1, 2, 3])).tolist()
    [3, 2, 1]
    """
    array = as_array(m, where="flip")
    if axis is None:
        axes = tuple(range(array.ndim))
    else:
        axes = tuple(sorted(normalize_axis_tuple(axis, array.ndim, where="flip")))
    if not axes:
        return array if array.ndim else wrap(array._node)
    return make_view(array, lambda base: make("reverse", [base], dimensions=axes),
                     lambda base, value: make("reverse", [value], dimensions=axes),
                     layout=lambda dummy: np.flip(dummy, axes))


def astype(x, dtype, /, *, copy=True, device=None) -> Array:
    """`x` converted to `dtype` with NumPy's (unsafe) casting: floats truncate toward zero,
    complex to real drops the imaginary part. With copy=False and the same dtype, `x` itself.

    >>> import lazyarr as la
    >>> la.astype(la.asarray([1.7, -1.7]), "int32").tolist()
    [1, -1]
    """
    if not isinstance(x, (Array, np.ndarray, np.generic)):
        raise TypeError(f"astype: input should be an array, it is a {type(x).__name__}")
    if device not in (None, "cpu"):
        raise ValueError(f"astype: unknown device {device!r}; available: 'cpu'")
    _check_copy(copy, "astype")
    array = as_array(x, where="astype")
    target = dtypes.as_dtype(dtype, where="astype")
    if target == array.dtype:
        return array if copy is False or not isinstance(x, Array) else wrap(array._node)
    return wrap(convert(array._node, target))
