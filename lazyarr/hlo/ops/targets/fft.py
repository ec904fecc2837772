"""FFT targets: the array API's `fft` extension (2024.12), run by `numpy.fft`.

One-dimensional transforms take options `axis` (required, non-negative), `n` (the transform
length; omitted means the input's length, or 2 * (m - 1) for irfft and hfft) and `norm`
('backward' by default, 'ortho' or 'forward'). The n-dimensional ones take `axes` (required,
non-empty, no repeats), `s` (omitted, or one length per axis where -1 means the input's
length, as in NumPy 2) and `norm`; the last of `axes` is the real axis of rfftn and irfftn.
Operands must be float32, float64, complex64 or complex128 (the frontend converts integers).
Precision is kept, as NumPy 2 does: float32 and complex64 give complex64 (or float32 for the
complex-to-real irfft, hfft and irfftn). rfft, rfftn and ihfft want a real operand.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .... import dtypes
from ...op import HloError
from .._rules import describe
from ..custom import CustomCallTarget, register_target

REAL = (dtypes.float32, dtypes.float64)
ACCEPTED = REAL + (dtypes.complex64, dtypes.complex128)
NORMS = ("backward", "ortho", "forward")

# How a transform's last axis relates input length m, transform length n and output length.
FULL = "full"            # n defaults to m; output n (fft, ifft)
HALF = "half"            # n defaults to m; output n // 2 + 1 (rfft, ihfft)
HERMITIAN = "hermitian"  # n defaults to 2 * (m - 1); output n (irfft, hfft)


@dataclass(frozen=True)
class Transform:
    """One FFT target: its NumPy function, accepted dtypes, output kind and last-axis rule."""

    name: str
    function: Callable[..., np.ndarray]
    accepted: tuple
    real_output: bool
    last_axis: str
    dimensions: str  # "one" (options n, axis) or "many" (options s, axes)
    doc: str


def _operand(transform, operands):
    if len(operands) != 1:
        raise HloError(f"{transform.name}: expects 1 operand, got {len(operands)} ({describe(operands)})")
    (operand,) = operands
    if operand.dtype not in transform.accepted:
        raise HloError(
            f"{transform.name}: operand {describe([operand])} has dtype {operand.dtype}; accepted: "
            + ", ".join(str(dtype) for dtype in transform.accepted)
            + " (convert integers to float64 first)"
        )
    return operand


def _check_options(transform, options):
    accepted = ("n", "axis", "norm") if transform.dimensions == "one" else ("s", "axes", "norm")
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise HloError(f"{transform.name}: unknown option(s) {unknown}; accepted: {list(accepted)}")
    norm = options.get("norm", "backward")
    if norm not in NORMS:
        raise HloError(f"{transform.name}: option norm must be one of {NORMS}, got {norm!r}")
    return norm


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _axes_of(transform, operand, options):
    """The transformed axes: `axis` as a 1-tuple, or `axes`, checked against the rank."""
    rank = len(operand.shape)
    if transform.dimensions == "one":
        if "axis" not in options:
            raise HloError(f"{transform.name}: option axis is required")
        axes = (options["axis"],)
    else:
        if "axes" not in options:
            raise HloError(f"{transform.name}: option axes is required (a tuple of non-negative ints)")
        axes = options["axes"]
        if not isinstance(axes, tuple) or not axes:
            raise HloError(f"{transform.name}: option axes must be a non-empty tuple, got {axes!r}")
    for axis in axes:
        if not _is_int(axis) or not 0 <= axis < rank:
            raise HloError(
                f"{transform.name}: axis {axis!r} out of range for operand {describe([operand])} "
                f"of rank {rank}; accepted: 0 <= axis < {rank}"
            )
    if len(set(axes)) != len(axes):
        raise HloError(f"{transform.name}: repeated axes {axes}")
    return axes


def _requested_lengths(transform, operand, options, axes):
    """Per axis: the requested transform length, or None for the default (`n`/`s` omitted;
    an explicit None is refused, as HLO text cannot print it)."""
    if transform.dimensions == "one":
        if "n" not in options:
            return (None,)
        length = options["n"]
        if not _is_int(length) or length < 1:
            raise HloError(
                f"{transform.name}: option n must be an int >= 1 (omit it for the default), "
                f"got {length!r}"
            )
        return (length,)
    if "s" not in options:
        return (None,) * len(axes)
    lengths = options["s"]
    if (
        not isinstance(lengths, tuple)
        or len(lengths) != len(axes)
        or any(not _is_int(length) or (length < 1 and length != -1) for length in lengths)
    ):
        raise HloError(
            f"{transform.name}: option s must be a tuple of {len(axes)} ints, each >= 1 or -1 "
            f"(one per axis of {axes}; omit s for the default), got {lengths!r}"
        )
    return tuple(
        operand.shape[axis] if length == -1 else length for length, axis in zip(lengths, axes)
    )


def _output_length(transform, operand, axis, requested, rule):
    """Output length along `axis`; a transform length below 1 is refused as NumPy does."""
    input_length = operand.shape[axis]
    if requested is not None:
        points = requested
    elif rule == HERMITIAN:
        points = 2 * (input_length - 1)
    else:
        points = input_length
    if points < 1:
        raise HloError(
            f"{transform.name}: transform length {points} along axis {axis} of operand "
            f"{describe([operand])} is below 1; pass a length >= 1"
        )
    return points // 2 + 1 if rule == HALF else points


def _infer(transform):
    def infer(operands, options):
        operand = _operand(transform, operands)
        _check_options(transform, options)
        axes = _axes_of(transform, operand, options)
        requested = _requested_lengths(transform, operand, options, axes)
        shape = list(operand.shape)
        for position, (axis, length) in enumerate(zip(axes, requested)):
            rule = transform.last_axis if position == len(axes) - 1 else FULL
            shape[axis] = _output_length(transform, operand, axis, length, rule)
        real = dtypes.real_dtype(operand.dtype)
        dtype = real if transform.real_output else np.result_type(real, dtypes.complex64)
        return [(tuple(shape), np.dtype(dtype))]

    return infer


def _implementation(transform, infer):
    """Call NumPy with the options spelled out; cast to `infer`'s dtype."""

    def implementation(values, options):
        ((_, dtype),) = infer(values, options)
        norm = options.get("norm", "backward")
        if transform.dimensions == "one":
            result = transform.function(values[0], n=options.get("n"), axis=options["axis"], norm=norm)
        else:
            result = transform.function(values[0], s=options.get("s"), axes=options["axes"], norm=norm)
        return (np.asarray(result).astype(dtype, copy=False),)

    return implementation


TRANSFORMS = (
    Transform("fft.fft", np.fft.fft, ACCEPTED, False, FULL, "one",
              "Discrete Fourier transform along options['axis']."),
    Transform("fft.ifft", np.fft.ifft, ACCEPTED, False, FULL, "one",
              "Inverse discrete Fourier transform along options['axis']."),
    Transform("fft.rfft", np.fft.rfft, REAL, False, HALF, "one",
              "Fourier transform of real input; n // 2 + 1 outputs along the axis."),
    Transform("fft.irfft", np.fft.irfft, ACCEPTED, True, HERMITIAN, "one",
              "Inverse of rfft; real output of length n (default 2 * (m - 1))."),
    Transform("fft.hfft", np.fft.hfft, ACCEPTED, True, HERMITIAN, "one",
              "Fourier transform of a Hermitian-symmetric signal; real output of length n."),
    Transform("fft.ihfft", np.fft.ihfft, REAL, False, HALF, "one",
              "Inverse of hfft for real input; n // 2 + 1 outputs along the axis."),
    Transform("fft.fftn", np.fft.fftn, ACCEPTED, False, FULL, "many",
              "n-dimensional discrete Fourier transform over options['axes']."),
    Transform("fft.ifftn", np.fft.ifftn, ACCEPTED, False, FULL, "many",
              "n-dimensional inverse discrete Fourier transform over options['axes']."),
    Transform("fft.rfftn", np.fft.rfftn, REAL, False, HALF, "many",
              "n-dimensional transform of real input; the last of axes is halved."),
    Transform("fft.irfftn", np.fft.irfftn, ACCEPTED, True, HERMITIAN, "many",
              "Inverse of rfftn; real output, last axis 2 * (m - 1) unless s gives it."),
)

for _transform in TRANSFORMS:
    _infer_rule = _infer(_transform)
    register_target(CustomCallTarget(
        _transform.name, _infer_rule, _implementation(_transform, _infer_rule), _transform.doc
    ))
