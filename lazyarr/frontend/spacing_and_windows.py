"""Generated arrays: geomspace, fromfunction, and NumPy's window functions (hamming, hanning,
blackman, bartlett).

Each repeats NumPy's arithmetic with lazyarr's ops in NumPy's order (geomspace through
logspace with its endpoints put back, the windows through arange and cos), so dtypes are
NumPy's and values are too, up to the last bits of NumPy's cos/power kernels. All are lazy,
except that a window's length M is read (the length depends on it).
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from . import elementwise as ew
from .array import Array
from .core import as_array, convert, from_numpy, wrap
from .creation_ranges import arange, logspace
from .index_arithmetic import indices
from .manipulation_layout import moveaxis

__all__ = ["bartlett", "blackman", "fromfunction", "geomspace", "hamming", "hanning"]


def _known_values(array: Array) -> np.ndarray | None:
    """The values of an array that holds them already (None for a pending or traced one)."""
    return array.numpy() if array.is_evaluated else None


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0) -> Array:
    """`num` samples from `start` to `stop` evenly spaced on a log scale (negative and complex
    bounds allowed); the endpoints are exactly start and stop, as in NumPy.

    The dtype is NumPy's: result_type(start, stop, float(num), dtype or float64), so float32
    bounds give float64 unless dtype=float32. NumPy refuses a zero bound; known bounds are
    checked now, a zero in lazy bounds (not read, to stay lazy) gives NaN samples.

    >>> import lazyarr as la
    >>> la.geomspace(1, 1000, num=4).tolist()
    [1.0, 10.0, 100.0, 1000.0]
    """
    start = start if isinstance(start, Array) else as_array(start, where="geomspace")
    stop = stop if isinstance(stop, Array) else as_array(stop, where="geomspace")
    for bound in (start, stop):
        values = _known_values(bound)
        if values is not None and np.any(values == 0):
            raise ValueError("geomspace: Geometric sequence cannot include zero")
    requested = dtypes.float64 if dtype is None else dtypes.as_dtype(dtype, where="geomspace")
    computed = dtypes.as_dtype(np.result_type(start.dtype, stop.dtype, float(num), requested), where="geomspace")
    start = wrap(convert(start._node, computed))
    stop = wrap(convert(stop._node, computed))
    # Rotate start onto the positive real axis, sample, rotate back (NumPy's way to allow
    # negative and complex bounds without NaN from log10).
    sign = ew.sign(start)
    start = ew.divide(start, sign)
    stop = ew.divide(stop, sign)
    result = logspace(ew.log10(start), ew.log10(stop), num=num, endpoint=endpoint, base=10.0, dtype=computed)
    if num > 0:
        result[0] = start
        if num > 1 and endpoint:
            result[-1] = stop
    result = ew.multiply(result, sign)
    if axis != 0:
        result = moveaxis(result, 0, axis)
    return wrap(convert(result._node, requested if dtype is not None else computed))


def fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    """`function(*indices)`: called once with one lazy index grid per dimension (NumPy's
    fromfunction; `dtype` is the grids' dtype, float64 by default).

    >>> import lazyarr as la
    >>> la.fromfunction(lambda i, j: i + 2 * j, (2, 3), dtype=int).tolist()
    [[0, 2, 4], [1, 3, 5]]
    """
    if like is not None and not isinstance(like, (Array, np.ndarray)):
        raise TypeError(
            "fromfunction: The `like` argument must be an array-like that implements the "
            f"`__array_function__` protocol, got {type(like).__name__}"
        )
    grids = indices(shape, dtype=dtype)
    return function(*(grids[axis] for axis in range(grids.shape[0] if grids.ndim > 1 else 0)), **kwargs)


def _window(name: str, M, body) -> Array:  # noqa: N803 (NumPy's argument name)
    """NumPy's frame of the windows: M read as float64, empty below 1, [1.0] at 1, else
    body(n, M) with n = arange(1 - M, M, 2)."""
    if isinstance(M, Array):
        M = M.numpy()  # noqa: N806 (the length depends on it)
    try:
        values = np.array([0.0, M])
        length = values[1]
        small, single = length < 1, length == 1
    except (TypeError, ValueError) as error:
        raise TypeError(f"{name}: M must be a real number, got {M!r} ({error})") from None
    if small:
        return from_numpy(np.array([], dtype=values.dtype), where=name)
    if single:
        return from_numpy(np.ones(1, dtype=values.dtype), where=name)
    return body(arange(1 - length, length, 2), length)


def _cosine_term(weight: float, frequency: float, n: Array, length) -> Array:
    """weight * cos(frequency * n / (M - 1)) in NumPy's order of operations."""
    return ew.multiply(weight, ew.cos(ew.divide(ew.multiply(frequency, n), length - 1)))


def hamming(M) -> Array:  # noqa: N803
    """The Hamming window of M points: 0.54 + 0.46 cos(pi n / (M - 1)), float64.

    >>> import lazyarr as la
    >>> [round(value, 6) for value in la.hamming(3).tolist()]
    [0.08, 1.0, 0.08]
    """
    return _window("hamming", M, lambda n, length: ew.add(0.54, _cosine_term(0.46, math.pi, n, length)))


def hanning(M) -> Array:  # noqa: N803
    """The Hann window of M points: 0.5 + 0.5 cos(pi n / (M - 1)), float64.

    >>> import lazyarr as la
    >>> [round(value, 6) for value in la.hanning(3).tolist()]
    [0.0, 1.0, 0.0]
    """
    return _window("hanning", M, lambda n, length: ew.add(0.5, _cosine_term(0.5, math.pi, n, length)))


def blackman(M) -> Array:  # noqa: N803
    """The Blackman window of M points: 0.42 + 0.5 cos(pi n / (M-1)) + 0.08 cos(2 pi n / (M-1)).

    >>> import lazyarr as la
    >>> [round(value, 6) for value in la.blackman(3).tolist()]
    [-0.0, 1.0, -0.0]
    """
    def body(n, length):
        first = ew.add(0.42, _cosine_term(0.5, math.pi, n, length))
        return ew.add(first, _cosine_term(0.08, 2.0 * math.pi, n, length))

    return _window("blackman", M, body)


def bartlett(M) -> Array:  # noqa: N803
    """The Bartlett (triangular) window of M points, float64.

    >>> import lazyarr as la
    >>> la.bartlett(5).tolist()
    [0.0, 0.5, 1.0, 0.5, 0.0]
    """
    def body(n, length):
        ramp = ew.divide(n, length - 1)
        return ew.where(ew.less_equal(n, 0), ew.add(1, ramp), ew.subtract(1, ramp))

    return _window("bartlett", M, body)
