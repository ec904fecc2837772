"""Array manipulation: the public names, and the Array methods that forward to them.

The functions live by purpose in manipulation_layout.py (reshape, transpose, squeeze,
broadcast, flip, astype), manipulation_joining.py (concatenate, stack, split) and
manipulation_repeating.py (tile, repeat, roll, pad, diff). `METHODS` and `PROPERTIES` map
NumPy's ndarray method names to adapters with NumPy's method signatures
(`x.reshape(2, 3)` as well as `x.reshape((2, 3))`, `x.transpose(1, 0)`), for binding onto Array.
"""

from __future__ import annotations

import operator

from .. import dtypes
from .array import Array
from .manipulation_joining import (
    array_split,
    column_stack,
    concat,
    concatenate,
    dstack,
    hstack,
    split,
    stack,
    unstack,
    vstack,
)
from .manipulation_layout import (
    astype,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    broadcast_arrays,
    broadcast_shapes,
    broadcast_to,
    expand_dims,
    flip,
    matrix_transpose,
    moveaxis,
    permute_dims,
    ravel,
    reshape,
    squeeze,
    swapaxes,
    transpose,
)
from .manipulation_nodes import check_casting
from .manipulation_repeating import diff, pad, repeat, roll, tile
from .views import NOTING_VIEW_CHAINS, note_view_chain

__all__ = [
    "reshape", "ravel", "transpose", "permute_dims", "matrix_transpose", "swapaxes",
    "moveaxis", "expand_dims", "squeeze", "broadcast_to", "broadcast_arrays", "broadcast_shapes",
    "astype",
    "atleast_1d", "atleast_2d", "atleast_3d", "flip",
    "concatenate", "concat", "stack", "hstack", "vstack", "dstack", "column_stack",
    "split", "array_split", "unstack",
    "tile", "repeat", "roll", "pad", "diff",
]


def _shape_arguments(arguments):
    """NumPy's method convention: f(2, 3) and f((2, 3)) mean the same; f() means None."""
    if not arguments:
        return None
    if len(arguments) == 1:
        try:
            operator.index(arguments[0])
        except TypeError:
            return arguments[0]  # one sequence (or None)
    return arguments


def reshape_method(self, *shape, order="C", copy=None):
    """x.reshape(2, 3) or x.reshape((2, 3)) (NumPy's ndarray.reshape)."""
    requested = _shape_arguments(shape)
    if requested is None:
        raise TypeError("reshape: missing the new shape")
    result = reshape(self, requested, order=order, copy=copy)
    if (NOTING_VIEW_CHAINS[0] and type(self) is Array and self._base is None and order == "C" and copy is None
            and plain_shape_arguments(shape)):
        # the view's chain, for the C slot's `x.reshape(...)` with these arguments (views.VIEW_CHAINS)
        link = result._base
        note_view_chain((self.shape, self.dtype, ("reshape", shape)), self._node, link.read, link.write, link.layout)
    return result


def plain_shape_arguments(arguments: tuple) -> bool:
    """Whether a reshape's arguments are exact ints, or one tuple of exact ints (a dict key
    that hashes and compares as the shape it means: no float or bool equal to an int)."""
    if len(arguments) == 1 and type(arguments[0]) is tuple:
        arguments = arguments[0]
    return all(type(argument) is int for argument in arguments)


def transpose_method(self, *axes):
    """x.transpose(), x.transpose(1, 0) or x.transpose((1, 0))."""
    return transpose(self, _shape_arguments(axes))


def flatten_method(self, order="C"):
    """x.flatten(): the elements as a new 1-d array (a copy, as NumPy's; ravel may be a view)."""
    return ravel(self, order).__copy__()


def astype_method(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
    """x.astype(dtype, casting=...): NumPy's method, which checks `casting` before converting."""
    check_casting(self.dtype, dtypes.as_dtype(dtype, where="astype"), casting, "astype")
    return astype(self, dtype, copy=copy)


def _matrix_transpose_property(self):
    if self.ndim < 2:
        raise ValueError(f"mT: matrix transpose with ndim < 2 is undefined (ndim is {self.ndim})")
    return matrix_transpose(self)


# ndarray method name -> function(self, ...) with NumPy's method signature
METHODS = {
    "reshape": reshape_method,
    "ravel": ravel,
    "flatten": flatten_method,
    "transpose": transpose_method,
    "swapaxes": swapaxes,
    "squeeze": squeeze,
    "astype": astype_method,
    "repeat": repeat,
}

# ndarray property name -> getter
PROPERTIES = {
    "T": transpose,
    "mT": _matrix_transpose_property,
}
