"""Generated arrays: geomspace, fromfunction, and NumPy's window functions (hamming, hanning,
blackman, bartlett, kaiser, with kaiser's Bessel function i0).

Each repeats NumPy's arithmetic with lazyarr's ops in NumPy's order (geomspace through
logspace with its endpoints put back, the windows through arange and cos, i0 through Cephes'
Chebyshev series as NumPy's Python code sums them), so dtypes are NumPy's and values are too,
up to the last bits of NumPy's cos/power/exp kernels. All are lazy, except that a window's
length M is read (the length depends on it).
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

__all__ = ["bartlett", "blackman", "fromfunction", "geomspace", "hamming", "hanning", "i0", "kaiser"]


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


# Cephes' Chebyshev coefficients of exp(-x) I0(x) on [0, 8] and of exp(-x) sqrt(x) I0(x) on
# (8, inf), as NumPy's _i0A and _i0B hold them.
_I0_INNER = (
    -4.4153416464793395e-18, 3.3307945188222384e-17, -2.431279846547955e-16,
    1.715391285555133e-15, -1.1685332877993451e-14, 7.676185498604936e-14,
    -4.856446783111929e-13, 2.95505266312964e-12, -1.726826291441556e-11,
    9.675809035373237e-11, -5.189795601635263e-10, 2.6598237246823866e-09,
    -1.300025009986248e-08, 6.046995022541919e-08, -2.670793853940612e-07,
    1.1173875391201037e-06, -4.4167383584587505e-06, 1.6448448070728896e-05,
    -5.754195010082104e-05, 0.00018850288509584165, -0.0005763755745385824,
    0.0016394756169413357, -0.004324309995050576, 0.010546460394594998,
    -0.02373741480589947, 0.04930528423967071, -0.09490109704804764,
    0.17162090152220877, -0.3046826723431984, 0.6767952744094761,
)
_I0_OUTER = (
    -7.233180487874754e-18, -4.830504485944182e-18, 4.46562142029676e-17,
    3.461222867697461e-17, -2.8276239805165836e-16, -3.425485619677219e-16,
    1.7725601330565263e-15, 3.8116806693526224e-15, -9.554846698828307e-15,
    -4.150569347287222e-14, 1.54008621752141e-14, 3.8527783827421426e-13,
    7.180124451383666e-13, -1.7941785315068062e-12, -1.3215811840447713e-11,
    -3.1499165279632416e-11, 1.1889147107846439e-11, 4.94060238822497e-10,
    3.3962320257083865e-09, 2.266668990498178e-08, 2.0489185894690638e-07,
    2.8913705208347567e-06, 6.889758346916825e-05, 0.0033691164782556943,
    0.8044904110141088,
)


def _chebyshev_series(x: Array, coefficients) -> Array:
    """NumPy's _chbevl step for step: Clenshaw's recurrence with the coefficients as weak
    Python floats (so float16 and float32 x stay in their dtype, as in NumPy)."""
    newest, previous, oldest = coefficients[0], 0.0, 0.0
    for coefficient in coefficients[1:]:
        oldest, previous = previous, newest
        newest = ew.add(ew.subtract(ew.multiply(x, previous), oldest), coefficient)
    return ew.multiply(0.5, ew.subtract(newest, oldest))


def i0(x) -> Array:
    """The modified Bessel function of the first kind, order 0, by NumPy's algorithm: Cephes'
    Chebyshev series on |x| <= 8 and beyond, in x's float dtype (integers and bools in
    float64); NaN for +-inf and NaN, inf once exp(|x|) overflows. Complex x is refused.

    >>> import lazyarr as la
    >>> [round(value, 12) for value in la.i0(la.asarray([0.0, 1.0, -10.0])).tolist()]
    [1.0, 1.266065877752, 2815.716628466254]
    """
    array = x if isinstance(x, Array) else as_array(x, where="i0")
    if dtypes.is_complex(array.dtype):
        raise TypeError(f"i0: not supported for complex values (got {array.dtype})")
    if not dtypes.is_floating(array.dtype):
        array = wrap(convert(array._node, dtypes.float64))
    magnitude = ew.absolute(array)
    # NumPy's piecewise(x, [x <= 8.0], [_i0_1, _i0_2]): each element takes one formula.
    inner = ew.multiply(ew.exp(magnitude),
                        _chebyshev_series(ew.subtract(ew.divide(magnitude, 2.0), 2), _I0_INNER))
    outer = ew.divide(
        ew.multiply(ew.exp(magnitude),
                    _chebyshev_series(ew.subtract(ew.divide(32.0, magnitude), 2.0), _I0_OUTER)),
        ew.sqrt(magnitude),
    )
    return ew.where(ew.less_equal(magnitude, 8.0), inner, outer)


def kaiser(M, beta) -> Array:  # noqa: N803 (NumPy's argument name)
    """The Kaiser window of M points: i0(beta sqrt(1 - ((n - alpha) / alpha)**2)) / i0(beta)
    for n = 0 .. M-1, alpha = (M - 1) / 2, float64 (NumPy's arithmetic: M and beta read as
    float64, empty for M < 1, [1.0] for M == 1). A lazy 0-d `beta` stays lazy.

    >>> import lazyarr as la
    >>> [round(value, 6) for value in la.kaiser(5, 2.0).tolist()]
    [0.438676, 0.834761, 1.0, 0.834761, 0.438676]
    """
    if isinstance(M, Array):
        M = M.numpy()  # noqa: N806 (the length depends on it)
    lazy_beta = beta if isinstance(beta, Array) and not beta.is_evaluated else None
    known_beta = 0.0 if lazy_beta is not None else (beta.numpy() if isinstance(beta, Array) else beta)
    try:
        values = np.array([0.0, M, known_beta])  # NumPy's float64 (complex for a complex beta)
    except (TypeError, ValueError) as error:
        raise type(error)(f"kaiser: M and beta must be real numbers, got {M!r} and {beta!r} ({error})") from None
    if values.dtype.kind not in "fc":
        raise TypeError(f"kaiser: M and beta must be real numbers, got {M!r} and {beta!r}")
    if lazy_beta is not None:
        if lazy_beta.ndim != 0:
            raise ValueError(f"kaiser: beta must be a scalar, got an array of shape {lazy_beta.shape}")
        values = values.astype(np.result_type(values.dtype, lazy_beta.dtype, 0.0))
    length = values[1]
    if length == 1:
        return from_numpy(np.ones(1, dtype=values.dtype), where="kaiser")
    if dtypes.is_complex(values.dtype):
        raise TypeError("kaiser: i0 not supported for complex values (a complex beta)")
    shape = values[2] if lazy_beta is None else wrap(convert(lazy_beta._node, dtypes.float64))
    n = arange(0, length)
    alpha = (length - 1) / 2.0
    # ((n - alpha) / alpha)**2.0: NumPy's array ** 2.0 is its square (fast_scalar_power)
    ratio = ew.divide(ew.subtract(n, alpha), alpha)
    return ew.divide(i0(ew.multiply(shape, ew.sqrt(ew.subtract(1, ew.square(ratio))))), i0(shape))
