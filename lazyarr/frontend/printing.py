"""NumPy's text forms of arrays and numbers: array2string, array_repr, array_str,
format_float_positional, format_float_scientific, base_repr, binary_repr, typename, and the
print options (set_printoptions, get_printoptions, printoptions).

Printing a lazy array evaluates it and formats its values with NumPy's own functions, so the
text is NumPy's for the same values ("array([1., 2.])" from array_repr; `repr(x)` itself
says "Array(...)"). The print options are NumPy's, not a copy: `la.set_printoptions is
np.set_printoptions`, so one setting governs both libraries, including `repr`/`str` of lazy
arrays (which format through np.array_repr and str), and `la.printoptions(...)` is NumPy's
context manager.
"""

from __future__ import annotations

import numpy as np

from .array import Array
from .interop import to_numpy

__all__ = [
    "array2string", "array_repr", "array_str", "base_repr", "binary_repr", "format_float_positional",
    "format_float_scientific", "get_printoptions", "printoptions", "set_printoptions", "typename",
]

# NumPy's own (one state for both libraries); typename never sees an array.
set_printoptions = np.set_printoptions
get_printoptions = np.get_printoptions
printoptions = np.printoptions
typename = np.typename


def _values(value):
    """A lazy array's values; anything else as it is, for NumPy to format or refuse (a list
    raises NumPy's AttributeError, lazy arrays in it or not)."""
    return value.numpy() if isinstance(value, Array) else to_numpy(value)


def _number(value):
    """A lazy 0-d array as the NumPy scalar it stands for (`x[i]` of a NumPy array: a float32
    keeps float32's shortest digits, where NumPy would read a 0-d array as a Python float);
    anything else as `_values` gives it, for NumPy to accept or refuse."""
    if isinstance(value, Array) and value.ndim == 0:
        return value.numpy()[()]
    return _values(value)


def array2string(a, *args, **kwargs) -> str:
    """NumPy's text of `a`'s values (np.array2string: max_line_width, precision, separator,
    prefix, formatter, threshold, ...; unset ones from the print options). Evaluates.

    >>> import lazyarr as la
    >>> la.array2string(la.arange(3) / 4, precision=2, separator=", ")
    '[0.  , 0.25, 0.5 ]'
    """
    return np.array2string(_values(a), *args, **kwargs)


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None) -> str:
    """NumPy's repr of an array with `arr`'s values: "array([...])", with the dtype where NumPy
    shows it. Evaluates.

    >>> import lazyarr as la
    >>> la.array_repr(la.ones(2, dtype="float32"))
    'array([1., 1.], dtype=float32)'
    """
    return np.array_repr(_values(arr), max_line_width, precision, suppress_small)


def array_str(a, max_line_width=None, precision=None, suppress_small=None) -> str:
    """NumPy's str of an array with `a`'s values (what print shows). Evaluates.

    >>> import lazyarr as la
    >>> la.array_str(la.asarray([1.0, 2.5]))
    '[1.  2.5]'
    """
    return np.array_str(_values(a), max_line_width, precision, suppress_small)


def format_float_positional(x, *args, **kwargs) -> str:
    """NumPy's positional text of one floating-point value: a Python float, a NumPy scalar, or a
    lazy 0-d array, evaluated and read as the NumPy scalar of its dtype (whose precision sets
    the shortest unique digits: float32's 0.1 is '0.1').

    >>> import lazyarr as la
    >>> la.format_float_positional(la.asarray(0.1, dtype="float32"))
    '0.1'
    """
    return np.format_float_positional(_number(x), *args, **kwargs)


def format_float_scientific(x, *args, **kwargs) -> str:
    """NumPy's scientific text of one floating-point value (as format_float_positional).

    >>> import lazyarr as la
    >>> la.format_float_scientific(la.asarray(1234.5), precision=2)
    '1.23e+03'
    """
    return np.format_float_scientific(_number(x), *args, **kwargs)


def base_repr(number, base=2, padding=0) -> str:
    """`number` (an integer, a lazy 0-d array evaluated) written in `base` (NumPy's base_repr).

    >>> import lazyarr as la
    >>> la.base_repr(la.asarray(-10), 3, padding=2)
    '-00101'
    """
    return np.base_repr(_number(number), base, padding)


def binary_repr(num, width=None) -> str:
    """`num` in binary; with `width`, negative numbers in two's complement (NumPy's binary_repr).

    >>> import lazyarr as la
    >>> la.binary_repr(la.asarray(-3, dtype="int8"), width=8)
    '11111101'
    """
    return np.binary_repr(_number(num), width)
