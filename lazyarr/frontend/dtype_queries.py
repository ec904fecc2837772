"""NumPy's questions about types: isscalar, issubdtype, promote_types, min_scalar_type,
common_type and mintypecode.

lazyarr's dtypes are NumPy's dtype objects, so these defer to NumPy's answers. They take
lazyarr dtypes and arrays wherever NumPy takes dtypes and arrays, and read an array's dtype
rather than its values (never calling a NumPy function with a lazy array, which would come
back here through `__array_function__`). Only min_scalar_type of a 0-d array reads a value,
as NumPy's answer depends on it.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from .array import Array
from .core import as_array, contains_lazy

__all__ = ["common_type", "isscalar", "issubdtype", "min_scalar_type", "mintypecode", "promote_types"]

# NumPy's common_type tables: precision per scalar type, and the type for (complex, precision).
_PRECISION = {
    np.half: 0, np.single: 1, np.double: 2, np.longdouble: 3,
    np.csingle: 1, np.cdouble: 2, np.clongdouble: 3,
}
_TYPES = ((np.half, np.single, np.double, np.longdouble), (None, np.csingle, np.cdouble, np.clongdouble))
# NumPy's mintypecode order: larger (and complex) types first.
_TYPECODES_BY_SIZE = "GDFgdfQqLlIiHhBb?"


def _canonical(dtype: np.dtype) -> np.dtype:
    """lazyarr's dtype object for a dtype it supports (NumPy's own otherwise)."""
    return dtypes.as_dtype(dtype) if dtype in dtypes.SUPPORTED else dtype


def _refuse_array(name: str, value) -> None:
    if isinstance(value, (Array, np.ndarray)):
        raise TypeError(f"{name}: Cannot construct a dtype from an array (pass its .dtype)")


def isscalar(element) -> bool:
    """Whether `element` is a scalar (a Python or NumPy number, str, bytes...); arrays, 0-d
    ones included, are not (NumPy's isscalar).

    >>> import lazyarr as la
    >>> la.isscalar(3.1), la.isscalar(la.asarray(3.1)), la.isscalar([3.1])
    (True, False, False)
    """
    if isinstance(element, Array):
        return False
    return bool(np.isscalar(element))


def issubdtype(arg1, arg2) -> bool:
    """Whether dtype `arg1` is below `arg2` in NumPy's type hierarchy (np.floating, np.integer,
    ... or a dtype); takes lazyarr dtypes, NumPy types and dtype names, as NumPy.

    >>> import lazyarr as la
    >>> la.issubdtype(la.float32, la.float32), la.issubdtype(la.float32, float)
    (True, False)
    """
    for argument in (arg1, arg2):
        _refuse_array("issubdtype", argument)
    return bool(np.issubdtype(arg1, arg2))


def promote_types(type1, type2) -> np.dtype:
    """The smallest dtype both cast to safely (NumPy's promote_types: no value-based rules).

    >>> import lazyarr as la
    >>> la.promote_types(la.int8, la.uint8), la.promote_types("f4", la.int64)
    (dtype('int16'), dtype('float64'))
    """
    for argument in (type1, type2):
        _refuse_array("promote_types", argument)
    try:
        return _canonical(np.promote_types(type1, type2))
    except TypeError as error:
        raise TypeError(f"promote_types: {error}") from None


def min_scalar_type(a, /) -> np.dtype:
    """The smallest dtype holding the scalar `a` (an array's own dtype unless it is 0-d, whose
    value decides, as in NumPy; a lazy 0-d array is evaluated).

    >>> import lazyarr as la
    >>> la.min_scalar_type(10), la.min_scalar_type(-260.0), la.min_scalar_type(la.ones(3))
    (dtype('uint8'), dtype('float16'), dtype('float64'))
    """
    if isinstance(a, (list, tuple)) and contains_lazy(a):
        a = as_array(a, where="min_scalar_type")
    if isinstance(a, Array):
        if a.ndim:
            return a.dtype
        a = a.numpy()  # NumPy's answer depends on the value
    return _canonical(np.min_scalar_type(a))


def common_type(*arrays) -> type:
    """The inexact scalar type of NumPy's common_type: integers count as float64, float16 and
    float32 keep their precision, any complex array makes it complex (dtypes only).

    >>> import lazyarr as la
    >>> la.common_type(la.ones(2, la.float32), la.asarray([1, 2]))
    <class 'numpy.float64'>
    """
    is_complex = False
    precision = 0
    for array in arrays:
        scalar_type = array.dtype.type  # as NumPy: an object without a dtype raises AttributeError
        if issubclass(scalar_type, np.complexfloating):
            is_complex = True
        if issubclass(scalar_type, np.integer):
            found = _PRECISION[np.double]
        else:
            found = _PRECISION.get(scalar_type)
            if found is None:
                raise TypeError(f"common_type: can't get common type for non-numeric array (dtype {array.dtype})")
        precision = max(precision, found)
    return _TYPES[is_complex][precision]


def mintypecode(typechars, typeset="GDFgdf", default="d") -> str:
    """The type character from `typeset` that the given type characters (or arrays: their
    dtypes) all safely cast to, smallest first; `default` when none is in typeset.

    >>> import lazyarr as la
    >>> la.mintypecode(["d", "f", "S"]), la.mintypecode([la.ones(2, la.float32)])
    ('d', 'f')
    """
    codes = []
    for item in typechars:
        if isinstance(item, str) and item:
            codes.append(item)
        elif isinstance(item, Array):
            codes.append(item.dtype.char)
        elif isinstance(item, (list, tuple)) and contains_lazy(item):
            codes.append(as_array(item, where="mintypecode", placed=False).dtype.char)
        else:
            codes.append(np.asarray(item).dtype.char)
    intersection = {code for code in codes if code in typeset}
    if not intersection:
        return default
    if "F" in intersection and "d" in intersection:
        return "D"
    return min(intersection, key=_TYPECODES_BY_SIZE.index)
