"""NumPy's floating-point decomposition: frexp, the inverse of ldexp.

`ldexp`, `spacing` and `bitwise_count` have one output each: they are rows of
`elementwise.UFUNCS` (NumPy's type resolution, broadcasting, ufunc methods such as
`la.ldexp.outer`, and `np.ldexp(lazy)` dispatch come with the row). frexp has two outputs,
so it is a function here, over the HLO ops `frexp-mantissa` and `frexp-exponent` (both exact:
the bits of x rearranged, subnormals included; backends/llvm/float_bits.py). Lazy.
"""

from __future__ import annotations

import numpy as np

from ..hlo import make
from . import elementwise as ew
from .array import Array
from .core import as_array, convert, wrap

__all__ = ["frexp"]


def frexp(x, /) -> tuple[Array, Array]:
    """(mantissa, exponent) with x = mantissa * 2**exponent and 0.5 <= |mantissa| < 1, as
    NumPy's frexp (C's): the mantissa in x's float dtype (integers and bools become floats as
    in NumPy), the exponent int32; 0, inf and NaN give (x, 0), -0.0 gives (-0.0, 0).

    >>> import lazyarr as la
    >>> [part.tolist() for part in la.frexp(la.asarray([8.0, -0.75, 0.0]))]
    [[0.5, -0.75, 0.0], [4, 0, 0]]
    """
    array = x if isinstance(x, Array) else as_array(x, where="frexp")
    (loop,), _ = ew.resolve("frexp", np.frexp, (array,))  # NumPy's loop; complex: its TypeError
    node = convert(array._node, loop)
    return wrap(make("frexp-mantissa", [node])), wrap(make("frexp-exponent", [node]))
