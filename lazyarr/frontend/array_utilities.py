"""NumPy's small array utilities: asarray_chkfinite, asfortranarray, require, isfortran,
iterable, ndenumerate and ndindex.

Memory order follows lazyarr's layout model (views.py): an array that owns its value counts as
C-contiguous, and a view as NumPy's strides for the same view would say (`a.T` of a 2-d owner
is Fortran-contiguous). asfortranarray returns its input where NumPy would (an array already
Fortran-contiguous) and otherwise a *Fortran-ordered copy*: an owner holding the transposed
values, viewed through a transpose, so that NumPy's layout questions about it (`isfortran`,
whether a later reshape is a view, the order np.save records) get NumPy's answers. require
combines those with NumPy's requirement letters.

asarray_chkfinite evaluates (the check needs the values: one module for the array and the
check); the others never evaluate. iterable, ndenumerate and ndindex are NumPy's own: iterating
a lazy array is lazy, and ndenumerate reads the values through `np.asarray` (one evaluation).
"""

from __future__ import annotations

import numpy as np

from .array import Array, evaluate_arrays
from .core import as_array, wrap
from .creation import asarray
from .elementwise import isfinite
from .manipulation_layout import atleast_1d, transpose
from .manipulation_nodes import transpose_node
from .reductions import all as all_of
from .views import make_view, strided, undecided

__all__ = ["asarray_chkfinite", "asfortranarray", "isfortran", "iterable", "ndenumerate", "ndindex", "require"]

# NumPy's own: they only iterate (a lazy array's iteration is lazy) or read values through
# np.asarray (ndenumerate evaluates once), or never see an array (ndindex).
iterable = np.iterable
ndenumerate = np.ndenumerate
ndindex = np.ndindex

# require's letters and names, as NumPy spells them
_REQUIREMENTS = {
    "C": "C", "C_CONTIGUOUS": "C", "CONTIGUOUS": "C",
    "F": "F", "F_CONTIGUOUS": "F", "FORTRAN": "F",
    "A": "A", "ALIGNED": "A",
    "W": "W", "WRITEABLE": "W",
    "O": "O", "OWNDATA": "O",
    "E": "E", "ENSUREARRAY": "E",
}


def check_like(like, where: str) -> None:
    """NumPy's check of `like=`: an array (lazy or NumPy) or None; the result is lazy anyway."""
    if like is not None and not isinstance(like, (Array, np.ndarray)):
        raise TypeError(
            f"{where}: The `like` argument must be an array-like that implements the "
            f"`__array_function__` protocol, got {type(like).__name__}"
        )


def contiguity(array: Array) -> tuple[bool, bool] | None:
    """(C-contiguous, Fortran-contiguous), as NumPy's flags say for `array` in lazyarr's layout
    model; None for a view whose layout lazyarr cannot tell."""
    layout = strided(array)
    if layout is None:
        return None
    return bool(layout.flags.c_contiguous), bool(layout.flags.f_contiguous)


def fortran_copy(array: Array) -> Array:
    """A copy of `array` laid out in Fortran order: an owner of the transposed values, seen
    through a transpose (the layout NumPy's Fortran-ordered copy has)."""
    reverse = tuple(range(array.ndim - 1, -1, -1))
    return transpose(wrap(transpose_node(array._node, reverse)))


def in_order(array: Array, order: str, where: str) -> Array:
    """`array` contiguous in `order` ('C' or 'F'): itself where it already is (NumPy returns its
    input), else a copy in that order. A view whose layout lazyarr cannot tell gives a result
    that follows `array` but refuses writes (they may or may not reach `array` in NumPy)."""
    flags = contiguity(array)
    if flags is None:
        return make_view(array, lambda base: base, None, refusal=undecided(where))
    contiguous = flags[0] if order == "C" else flags[1]
    if contiguous:
        return array
    return wrap(array._node) if order == "C" else fortran_copy(array)


def writeable(array: Array) -> bool:
    """Whether writes to `array` are accepted: no view on the way to its owner refuses them
    (NumPy's read-only views: broadcast_to, diagonal)."""
    current = array
    while current._base is not None:
        if current._base.write is None:
            return False
        current = current._base.base
    return True


def isfortran(a) -> bool:
    """Whether `a` is Fortran-contiguous and not C-contiguous (NumPy's isfortran), in
    lazyarr's layout model: an owner never is; `a.T` of a 2-d owner is. A view whose layout
    lazyarr cannot tell answers False. Never evaluates.

    >>> import lazyarr as la
    >>> x = la.zeros((2, 3))
    >>> la.isfortran(x), la.isfortran(x.T), la.isfortran(la.asfortranarray(x))
    (False, True, True)
    """
    if not isinstance(a, Array):
        return np.isfortran(a)
    flags = contiguity(a)
    return flags is not None and flags[1] and not flags[0]


def asfortranarray(a, dtype=None, *, like=None) -> Array:
    """`a` as an array of at least one dimension laid out in Fortran order: `a` itself where
    NumPy returns it (already Fortran-contiguous: `x.T`, any 1-d owner), else a Fortran-ordered
    copy (writes to it do not reach `a`). Never evaluates.

    >>> import lazyarr as la
    >>> la.asfortranarray(la.asarray([[1, 2], [3, 4]])).tolist()
    [[1, 2], [3, 4]]
    """
    check_like(like, "asfortranarray")
    array = as_array(a, where="asfortranarray")
    if dtype is not None:
        array = asarray(array, dtype=dtype)
    if array.ndim == 0:
        return atleast_1d(array)
    return in_order(array, "F", "asfortranarray")


def require(a, dtype=None, requirements=None, *, like=None) -> Array:
    """`a` as an array of `dtype` meeting `requirements` (NumPy's letters or names: 'C', 'F',
    'A' aligned, 'W' writeable, 'O' owns its data, 'E' a base-class array), copying only where
    NumPy would: 'C'/'F' as ascontiguousarray/asfortranarray (without their 1-d minimum), 'W'
    copies a read-only view (`broadcast_to`, `diagonal`), 'O' copies any view. Never evaluates.

    >>> import lazyarr as la
    >>> x = la.zeros((2, 3))
    >>> la.require(x, requirements="C") is x, la.isfortran(la.require(x, "float32", ["F", "W"]))
    (True, True)
    """
    check_like(like, "require")
    if not requirements:
        return asarray(a, dtype=dtype)
    wanted = {_REQUIREMENTS[requirement.upper()] for requirement in requirements}  # KeyError as NumPy
    wanted.discard("E")  # lazyarr has no array subclasses
    if {"C", "F"} <= wanted:
        raise ValueError('Cannot specify both "C" and "F" order')
    order = "C" if "C" in wanted else "F" if "F" in wanted else "A"
    array = asarray(a, dtype=dtype)
    if order != "A":
        array = in_order(array, order, "require")
    if ("W" in wanted and not writeable(array)) or ("O" in wanted and array._base is not None):
        fortran = order == "F" or (order == "A" and isfortran(array))  # ndarray.copy(order)
        array = fortran_copy(array) if fortran else wrap(array._node)
    return array


def asarray_chkfinite(a, dtype=None, order=None) -> Array:
    """`a` as an array, raising ValueError if it is of a float or complex dtype and holds an
    infinity or a NaN (NumPy's asarray_chkfinite). Evaluates: the array and the check in one
    module (the array then holds its value).

    >>> import lazyarr as la
    >>> la.asarray_chkfinite([1.0, 2.0]).tolist()
    [1.0, 2.0]
    """
    array = asarray(a, dtype=dtype, order=order)
    if array.dtype.kind in "fc":
        finite = all_of(isfinite(array))
        evaluate_arrays([array, finite])
        if not finite.numpy():
            raise ValueError("array must not contain infs or NaNs")
    return array
