"""The array API `fft` extension (2024.12) with numpy.fft's signatures and results, lazily.

Transforms are custom-calls (targets `fft.*`, run by numpy.fft on the host). Inputs are
converted as NumPy converts them: integers and bools to float64; float32 and complex64 keep
single precision. NumPy computes float16 input in double precision with its normalization
factor (1/n or 1/sqrt(n)) taken in float16 precision, and casts the result to complex64 (or
float16 for the real-output transforms); lazyarr runs the target unnormalized in float64,
multiplies by that same factor and casts, so results agree (for non-finite values the complex
multiply may give NaN where NumPy scales each part alone). n-dimensional transforms with
repeated axes, float16 input or None lengths in `s` chain the one-dimensional transforms in
NumPy's order. fftfreq, rfftfreq, fftshift and ifftshift build iota, slices and concatenates.
"""

from __future__ import annotations

import functools
import operator
import warnings

import numpy as np

from .. import dtypes
from ..hlo import make
from ..hlo.ops.custom import custom_call_outputs
from . import elementwise
from .array import Array
from .core import as_array, convert, scalar_constant, wrap
from .node_layout import roll
from .reduction_support import normalize_axis_index, refuse_out

NORMS = ("backward", "ortho", "forward")
_SWAPPED = {"backward": "forward", "ortho": "ortho", "forward": "backward"}
# name -> (forward-type normalization, default length is 2 * (m - 1) instead of m)
_ONE_DIMENSIONAL = {
    "fft": (True, False),
    "ifft": (False, False),
    "rfft": (True, False),
    "irfft": (False, True),
    "hfft": (True, True),
    "ihfft": (False, False),
}
_REAL_INPUT = ("rfft", "ihfft", "rfftn")


def _checked_norm(name: str, norm) -> str:
    if norm is None:
        return "backward"
    if norm not in NORMS:
        raise ValueError(f'{name}: Invalid norm value {norm!r}; should be "backward", "ortho" or "forward".')
    return norm


@functools.cache
def _numpy_output_dtype(name: str, input_dtype: np.dtype) -> np.dtype:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return np.asarray(getattr(np.fft, name)(np.zeros(2, input_dtype))).dtype


def _prepared(name: str, x) -> Array:
    """The input converted to what NumPy computes in: ints, bools and float16 in float64."""
    array = as_array(x, where=name)
    if name in _REAL_INPUT and dtypes.is_complex(array.dtype):
        raise TypeError(f"{name}: expects real input, got {array.dtype}; use fft for complex input")
    if dtypes.is_integer(array.dtype) or dtypes.is_bool(array.dtype):
        return wrap(convert(array._node, dtypes.float64))
    if array.dtype == dtypes.float16:
        return wrap(convert(array._node, dtypes.float64))
    return array


def _points(name: str, n) -> int:
    points = operator.index(n)
    if points < 1:
        raise ValueError(f"{name}: Invalid number of FFT data points ({points}) specified.")
    return points


def _scale_factor(forward_type: bool, norm: str, points: int):
    """NumPy's normalization factor in float16 precision (float16 input), or None for 1."""
    kind = norm if forward_type else _SWAPPED[norm]
    if kind == "backward":
        return None
    if kind == "ortho":
        return np.reciprocal(np.sqrt(points, dtype=np.float16))
    return np.reciprocal(np.float16(points))


def _one_dimensional(name: str, x, n, axis, norm, out) -> Array:
    refuse_out(name, out)
    original = as_array(x, where=name)
    array = _prepared(name, original)
    norm = _checked_norm(name, norm)
    axis = normalize_axis_index(name, axis, array.ndim)
    forward_type, doubles = _ONE_DIMENSIONAL[name]
    if n is None:
        points = _points(name, 2 * (array.shape[axis] - 1) if doubles else array.shape[axis])
    else:
        points = _points(name, n)
    options = {"axis": axis, "norm": norm} | ({} if n is None else {"n": points})
    if original.dtype != dtypes.float16:
        return wrap(custom_call_outputs(f"fft.{name}", [array._node], **options)[0])
    # float16: transform unnormalized, then scale by NumPy's float16-precision factor.
    options["norm"] = "backward" if forward_type else "forward"
    result = wrap(custom_call_outputs(f"fft.{name}", [array._node], **options)[0])
    factor = _scale_factor(forward_type, norm, points)
    if factor is not None:
        factor_node = scalar_constant(factor, result.dtype)
        result = elementwise.multiply(result, wrap(factor_node))
    return wrap(convert(result._node, _numpy_output_dtype(name, dtypes.float16)))


def fft(x, /, n=None, axis=-1, norm="backward", out=None) -> Array:
    """One-dimensional discrete Fourier transform along `axis` (length n: crop or zero-pad).

    >>> la.fft.fft(la.asarray([1.0, 0.0, 0.0, 0.0]))   # [1, 1, 1, 1] complex128
    """
    return _one_dimensional("fft", x, n, axis, norm, out)


def ifft(x, /, n=None, axis=-1, norm="backward", out=None) -> Array:
    """Inverse of fft (scaled by 1/n with the default norm)."""
    return _one_dimensional("ifft", x, n, axis, norm, out)


def rfft(x, /, n=None, axis=-1, norm="backward", out=None) -> Array:
    """Transform of real input: n // 2 + 1 complex outputs along `axis`."""
    return _one_dimensional("rfft", x, n, axis, norm, out)


def irfft(x, /, n=None, axis=-1, norm="backward", out=None) -> Array:
    """Inverse of rfft: real output of length n (default 2 * (m - 1))."""
    return _one_dimensional("irfft", x, n, axis, norm, out)


def hfft(x, /, n=None, axis=-1, norm="backward", out=None) -> Array:
    """Transform of a Hermitian-symmetric signal: real output of length n (default 2 * (m - 1))."""
    return _one_dimensional("hfft", x, n, axis, norm, out)


def ihfft(x, /, n=None, axis=-1, norm="backward", out=None) -> Array:
    """Inverse of hfft for real input: n // 2 + 1 complex outputs."""
    return _one_dimensional("ihfft", x, n, axis, norm, out)


def _lengths_and_axes(name: str, array: Array, s, axes, inverse_real: bool):
    """NumPy's `_cook_nd_args`: transform lengths (None: that axis's default) and axes."""
    shapeless = s is None
    if axes is not None:
        axes = [normalize_axis_index(name, axis, array.ndim, argument="axes") for axis in axes]
    if shapeless:
        lengths = list(array.shape) if axes is None else [array.shape[axis] for axis in axes]
    else:
        lengths = list(s)
    if axes is None:
        if not shapeless:
            warnings.warn(
                f"{name}: `axes` should not be `None` if `s` is not `None` (deprecated in NumPy 2.0); "
                "pass the axes explicitly",
                DeprecationWarning,
                stacklevel=4,
            )
        if len(lengths) > array.ndim:
            raise ValueError(
                f"{name}: s {tuple(lengths)} has more entries than the input has axes ({array.shape})"
            )
        axes = list(range(array.ndim - len(lengths), array.ndim))
    if len(lengths) != len(axes):
        raise ValueError(
            f"{name}: Shape and axes have different lengths: s={tuple(lengths)}, axes={tuple(axes)}"
        )
    if inverse_real and shapeless and lengths:
        lengths[-1] = (array.shape[axes[-1]] - 1) * 2
    lengths = [array.shape[axis] if length == -1 else length for length, axis in zip(lengths, axes)]
    return lengths, axes, shapeless


def _n_dimensional(name: str, x, s, axes, norm, out) -> Array:
    refuse_out(name, out)
    original = as_array(x, where=name)
    norm = _checked_norm(name, norm)
    lengths, axes, shapeless = _lengths_and_axes(name, original, s, axes, name == "irfftn")
    if not axes:
        if name in ("fftn", "ifftn"):
            return original
        raise ValueError(f"{name}: at least one axis is required, got axes={tuple(axes)}")
    chain = len(set(axes)) != len(axes) or original.dtype == dtypes.float16 or None in lengths
    if chain:
        return _chained(name, original, lengths, axes, norm)
    for length in lengths:
        _points(name, length)
    array = _prepared(name, original)
    options = {"axes": tuple(axes), "norm": norm} | ({} if shapeless else {"s": tuple(lengths)})
    return wrap(custom_call_outputs(f"fft.{name}", [array._node], **options)[0])


def _chained(name, array, lengths, axes, norm) -> Array:
    """numpy.fft's own loop of one-dimensional transforms (`_raw_fftnd`, rfftn, irfftn)."""
    last = len(axes) - 1
    if name in ("fftn", "ifftn"):
        step = fft if name == "fftn" else ifft
        for index in reversed(range(len(axes))):
            array = step(array, lengths[index], axes[index], norm)
    elif name == "rfftn":
        array = rfft(array, lengths[last], axes[last], norm)
        for index in range(last - 1, -1, -1):
            array = fft(array, lengths[index], axes[index], norm)
    else:
        for index in range(last):
            array = ifft(array, lengths[index], axes[index], norm)
        array = irfft(array, lengths[last], axes[last], norm)
    return array


def fftn(x, /, s=None, axes=None, norm="backward", out=None) -> Array:
    """n-dimensional discrete Fourier transform over `axes` (default: all, or the last len(s))."""
    return _n_dimensional("fftn", x, s, axes, norm, out)


def ifftn(x, /, s=None, axes=None, norm="backward", out=None) -> Array:
    """n-dimensional inverse discrete Fourier transform."""
    return _n_dimensional("ifftn", x, s, axes, norm, out)


def rfftn(x, /, s=None, axes=None, norm="backward", out=None) -> Array:
    """n-dimensional transform of real input; the last of `axes` is halved."""
    return _n_dimensional("rfftn", x, s, axes, norm, out)


def irfftn(x, /, s=None, axes=None, norm="backward", out=None) -> Array:
    """Inverse of rfftn: real output; the last axis has length 2 * (m - 1) unless `s` gives it."""
    return _n_dimensional("irfftn", x, s, axes, norm, out)


def _frequencies(name, n, d, dtype, device, half: bool) -> Array:
    """iota-based frequencies: [0, 1, ..., then negatives] (fftfreq) or [0, ..., n // 2] times 1 / (n d)."""
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise ValueError(f"{name}: n should be an integer, got {type(n).__name__}")
    if device not in (None, "cpu"):
        raise ValueError(f"{name}: unknown device {device!r}; available: 'cpu'")
    n = int(n)
    spacing = 1.0 / (n * d)
    length = n // 2 + 1 if half else n
    index = make("iota", shape=(length,), dtype=dtypes.int64, dimension=0)
    if not half:

        def spread(value):
            return make("broadcast", [scalar_constant(value, dtypes.int64)], shape=(length,), dimensions=())

        positive = make("compare", [index, spread((n - 1) // 2 + 1)], direction="LT")
        index = make("select", [positive, index, make("subtract", [index, spread(n)])])
    result = elementwise.multiply(wrap(index), spacing)
    if dtype is not None:
        requested = dtypes.as_dtype(dtype, where=name)
        if not dtypes.is_floating(requested):
            raise ValueError(f"{name}: dtype must be a real floating-point dtype, got {requested}")
        result = wrap(convert(result._node, requested))
    return result


def fftfreq(n, /, d=1.0, *, dtype=None, device=None) -> Array:
    """Sample frequencies [0, 1, ..., -(n // 2), ..., -1] / (n * d) of an n-point fft.

    >>> la.fft.fftfreq(4)   # [0.0, 0.25, -0.5, -0.25]
    """
    return _frequencies("fftfreq", n, d, dtype, device, half=False)


def rfftfreq(n, /, d=1.0, *, dtype=None, device=None) -> Array:
    """Sample frequencies [0, 1, ..., n // 2] / (n * d) of an n-point rfft."""
    return _frequencies("rfftfreq", n, d, dtype, device, half=True)


def _shifted(name: str, x, axes, direction: int) -> Array:
    array = as_array(x, where=name)
    if array.ndim == 0:
        raise ValueError(
            f"{name}: expects an array with at least one dimension, got a 0-d array (as NumPy refuses)"
        )
    if axes is None:
        axes = tuple(range(array.ndim))
    elif not isinstance(axes, (tuple, list)):
        axes = (axes,)
    node = array._node
    for axis in axes:
        axis = normalize_axis_index(name, axis, array.ndim, argument="axes")
        node = roll(node, direction * (array.shape[axis] // 2), axis)
    return wrap(node)


def fftshift(x, /, axes=None) -> Array:
    """Move the zero-frequency term to the center (a roll by n // 2 along each axis)."""
    return _shifted("fftshift", x, axes, 1)


def ifftshift(x, /, axes=None) -> Array:
    """Inverse of fftshift (a roll by -(n // 2))."""
    return _shifted("ifftshift", x, axes, -1)


__all__ = [
    "fft",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "ifft",
    "ifftn",
    "ifftshift",
    "ihfft",
    "irfft",
    "irfftn",
    "rfft",
    "rfftfreq",
    "rfftn",
]
