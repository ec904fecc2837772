"""NumPy's real/complex checks and repairs: isreal, iscomplex, isrealobj, iscomplexobj,
real_if_close and nan_to_num (NumPy's lib/_type_check_impl).

All are lazy except real_if_close on complex input, whose result dtype depends on the values
(real when every imaginary part is small): it evaluates that one test, and inside `la.jit` it
raises lazyarr's error for data-dependent results. `iscomplexobj`/`isrealobj` read only the
dtype, never the values.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..hlo import make
from ..shapes import broadcast_shapes
from . import elementwise as ew
from .array import Array
from .core import as_array, broadcast_to, contains_lazy, convert, from_numpy, is_python_scalar, scalar_constant, wrap
from .views import assign_result

__all__ = ["iscomplex", "iscomplexobj", "isreal", "isrealobj", "nan_to_num", "real_if_close"]


def _operand(value, where: str) -> Array:
    return value if isinstance(value, Array) else as_array(value, where=where)


def iscomplexobj(x) -> bool:
    """Whether x has a complex dtype (its values are not read; NumPy's iscomplexobj).

    >>> import lazyarr as la
    >>> la.iscomplexobj(la.asarray([1.0, 2.0]) * 1j), la.iscomplexobj([1, 2])
    (True, False)
    """
    dtype = getattr(x, "dtype", None)
    if not isinstance(dtype, np.dtype):
        if isinstance(x, (list, tuple)) and contains_lazy(x):
            dtype = as_array(x, where="iscomplexobj", placed=False).dtype
        else:
            dtype = np.asarray(x).dtype  # anything NumPy accepts, strings included
    return issubclass(dtype.type, np.complexfloating)


def isrealobj(x) -> bool:
    """Whether x does not have a complex dtype (NumPy's isrealobj: `not iscomplexobj(x)`).

    >>> import lazyarr as la
    >>> la.isrealobj(la.asarray([1.0])), la.isrealobj(1j)
    (True, False)
    """
    return not iscomplexobj(x)


def isreal(x) -> Array:
    """Elementwise: whether the imaginary part is zero (True for every real element).

    >>> import lazyarr as la
    >>> la.isreal(la.asarray([1 + 1j, 2 + 0j])).tolist()
    [False, True]
    """
    return ew.equal(ew.imag(_operand(x, "isreal")), 0)


def iscomplex(x) -> Array:
    """Elementwise: whether the imaginary part is nonzero (all False for a real dtype).

    >>> import lazyarr as la
    >>> la.iscomplex(la.asarray([1 + 1j, 2 + 0j])).tolist()
    [True, False]
    """
    array = _operand(x, "iscomplex")
    if dtypes.is_complex(array.dtype):
        return ew.not_equal(ew.imag(array), 0)
    return wrap(broadcast_to(scalar_constant(False, dtypes.bool_), array.shape))


def real_if_close(a, tol=100) -> Array:
    """The real part of a complex array whose imaginary parts are all below `tol` (in units of
    the dtype's machine epsilon when tol > 1), else `a` itself; real input is returned as is.

    The result's dtype depends on the values, so for complex input this evaluates the test
    (inside `la.jit` it raises lazyarr's data-dependent error).

    >>> import lazyarr as la
    >>> la.real_if_close(la.asarray([2.1 + 4e-14j, 5.2 + 3e-15j]), tol=1000).tolist()
    [2.1, 5.2]
    """
    from .reductions import all as all_

    array = _operand(a, "real_if_close")
    if not dtypes.is_complex(array.dtype):
        return array
    if tol > 1:
        tol = np.finfo(array.dtype).eps * tol  # a NumPy scalar of the real dtype, as in NumPy
    if bool(all_(ew.less(ew.absolute(ew.imag(array)), tol))):
        return ew.real(array)
    return array


def _replacement(value, dtype: np.dtype, shape: tuple[int, ...], argument: str):
    """`value` as np.copyto(d, value) writes it into a real array of `dtype` and `shape`:
    cast with the 'same_kind' rule, broadcast one way."""
    if is_python_scalar(value):
        if isinstance(value, complex):
            raise TypeError(
                f"nan_to_num: Cannot cast scalar from dtype('complex128') to dtype('{dtype}') according "
                f"to the rule 'same_kind' ({argument}={value!r})"
            )
        return broadcast_to(scalar_constant(value, dtype), shape)
    array = as_array(value, where="nan_to_num")
    if not np.can_cast(array.dtype, dtype, casting="same_kind"):
        raise TypeError(
            f"nan_to_num: Cannot cast {argument} from dtype('{array.dtype}') to dtype('{dtype}') according "
            "to the rule 'same_kind'"
        )
    try:
        fits = broadcast_shapes(array.shape, shape, where="nan_to_num") == shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"nan_to_num: could not broadcast input array from shape {array.shape} into shape {shape} "
            f"({argument})"
        )
    return broadcast_to(convert(array._node, dtype), shape)


def _replaced(part: Array, nan, posinf, neginf) -> Array:
    """One real part with NaN, +inf and -inf replaced (masks from the original values)."""
    shape, dtype = part.shape, part.dtype
    is_nan, is_inf, negative = ew.isnan(part), ew.isinf(part), ew.signbit(part)
    result = part._node
    for mask, value, argument in (
        (is_nan, nan, "nan"),
        (ew.logical_and(is_inf, ew.logical_not(negative)), posinf, "posinf"),
        (ew.logical_and(is_inf, negative), neginf, "neginf"),
    ):
        result = make("select", [mask._node, _replacement(value, dtype, shape, argument), result])
    return wrap(result)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None) -> Array:
    """NaN -> `nan`, +inf -> `posinf`, -inf -> `neginf` (default: the dtype's largest and most
    negative finite values); complex arrays have both parts repaired; other dtypes pass.

    With copy=False a lazy array is changed in place (every reference sees it, as NumPy's
    in-place operations), and so is a NumPy array (by NumPy itself).

    >>> import lazyarr as la
    >>> la.nan_to_num(la.asarray([float("nan"), -float("inf"), 1.5]), posinf=9.0).tolist()
    [0.0, -1.7976931348623157e+308, 1.5]
    """
    if isinstance(x, np.ndarray) and not copy:
        from .interop import to_numpy

        np.nan_to_num(x, copy=False, nan=to_numpy(nan), posinf=to_numpy(posinf), neginf=to_numpy(neginf))
        return from_numpy(x, where="nan_to_num")
    array = _operand(x, "nan_to_num")
    if not dtypes.is_inexact(array.dtype):
        return array if not copy and isinstance(x, Array) else wrap(array._node)
    real_dtype = dtypes.real_dtype(array.dtype)
    information = np.finfo(real_dtype)
    posinf = information.max if posinf is None else posinf
    neginf = information.min if neginf is None else neginf
    if dtypes.is_complex(array.dtype):
        parts = [_replaced(part, nan, posinf, neginf) for part in (ew.real(array), ew.imag(array))]
        result = wrap(make("complex", [parts[0]._node, parts[1]._node]))
    else:
        result = _replaced(array, nan, posinf, neginf)
    if not copy and isinstance(x, Array):
        assign_result(x, lambda: result)
        return x
    return result
