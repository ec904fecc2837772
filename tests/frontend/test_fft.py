"""la.fft (the array API fft extension) against numpy.fft, run with hypothesis.

Transforms are custom-calls whose implementation is numpy.fft itself, on the operand converted
as NumPy converts it (integers and bools to float64; float16 computed in float64 with NumPy's
float16-precision scale factor), so results must be identical: no tolerance. Inputs are
finite (a NaN or inf spreads over the whole transform, which the test would only repeat) and
include every dtype, lengths 1..6 (prime, odd and even), crop/pad lengths n and s, negative
axes, repeated axes in the n-dimensional transforms and all three norms. fftfreq, rfftfreq,
fftshift and ifftshift are built from iota, slices and concatenates and compare exactly too.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from lazyarr.frontend import fft_extension
from tests.strategies import ALL_DTYPES, arrays

NORMS = ["backward", "ortho", "forward", None]
REAL_DTYPES = [dtype for dtype in ALL_DTYPES if dtype.kind != "c"]
ONE_DIMENSIONAL = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_DIMENSIONAL = ["fftn", "ifftn", "rfftn", "irfftn"]


def finite(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind in "iu":
        return hnp.from_dtype(dtype, min_value=0 if dtype.kind == "u" else -100, max_value=100)
    if dtype.kind == "c":
        return hnp.from_dtype(dtype, allow_nan=False, allow_infinity=False, max_magnitude=100)
    return hnp.from_dtype(dtype, allow_nan=False, allow_infinity=False, min_value=-100, max_value=100)


def draw_input(data, name):
    dtypes = REAL_DTYPES if name in ("rfft", "ihfft", "rfftn") else ALL_DTYPES
    dtype = data.draw(st.sampled_from(dtypes), label="dtype")
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6), label="shape")
    return data.draw(hnp.arrays(dtype, shape, elements=finite(dtype)), label="x")


def outcome(function):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return function(), None
        except (ValueError, TypeError, IndexError) as error:
            return None, error


def assert_matches(result, expected):
    expected = np.asarray(expected)
    assert isinstance(result, la.Array), type(result)
    assert result.shape == expected.shape, (result.shape, expected.shape)
    assert result.dtype == expected.dtype, (result.dtype, expected.dtype)
    np.testing.assert_array_equal(np.asarray(result), expected, strict=True)


def check(lazy_call, numpy_call):
    expected, error = outcome(numpy_call)
    if error is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # as NumPy warns for s without axes
            assert_matches(lazy_call(), expected)
        return
    with pytest.raises(type(error)):
        lazy_call()


@pytest.mark.parametrize("name", ONE_DIMENSIONAL)
@given(data=st.data(), norm=st.sampled_from(NORMS))
def test_one_dimensional(name, data, norm):
    value = draw_input(data, name)
    axis = data.draw(st.integers(-value.ndim, value.ndim - 1), label="axis")
    n = data.draw(st.one_of(st.none(), st.integers(1, 7)), label="n")
    check(
        lambda: getattr(la.fft, name)(la.asarray(value), n=n, axis=axis, norm=norm),
        lambda: getattr(np.fft, name)(value, n=n, axis=axis, norm=norm),
    )


@pytest.mark.parametrize("name", N_DIMENSIONAL)
@given(data=st.data(), norm=st.sampled_from(NORMS))
def test_n_dimensional(name, data, norm):
    value = draw_input(data, name)
    ndim = value.ndim
    axes = data.draw(
        st.one_of(st.none(), st.lists(st.integers(-ndim, ndim - 1), min_size=1, max_size=3).map(tuple)),
        label="axes",
    )
    s = None
    if data.draw(st.booleans(), label="use s"):
        count = len(axes) if axes is not None else data.draw(st.integers(1, ndim))
        s = tuple(
            data.draw(st.lists(st.one_of(st.integers(1, 5), st.just(-1)), min_size=count, max_size=count))
        )
    check(
        lambda: getattr(la.fft, name)(la.asarray(value), s=s, axes=axes, norm=norm),
        lambda: getattr(np.fft, name)(value, s=s, axes=axes, norm=norm),
    )


@given(n=st.integers(1, 12), d=st.sampled_from([1.0, 0.5, 3, np.float32(0.25)]))
def test_frequencies(n, d):
    check(lambda: la.fft.fftfreq(n, d=d), lambda: np.fft.fftfreq(n, d=d))
    check(lambda: la.fft.rfftfreq(n, d=d), lambda: np.fft.rfftfreq(n, d=d))


@given(data=st.data())
def test_shifts(data):
    dtype = data.draw(st.sampled_from(ALL_DTYPES))
    value = data.draw(arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5)))
    choices = [st.none()]
    if value.ndim:
        choices += [
            st.integers(-value.ndim, value.ndim - 1),
            st.lists(st.integers(-value.ndim, value.ndim - 1), max_size=3).map(tuple),
        ]
    axes = data.draw(st.one_of(choices), label="axes")
    check(lambda: la.fft.fftshift(la.asarray(value), axes=axes), lambda: np.fft.fftshift(value, axes=axes))
    check(lambda: la.fft.ifftshift(la.asarray(value), axes=axes), lambda: np.fft.ifftshift(value, axes=axes))


def test_fftfreq_dtype_and_errors():
    result = la.fft.fftfreq(4, dtype=np.float32)
    assert result.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(result), np.fft.fftfreq(4).astype(np.float32))
    with pytest.raises(ValueError, match="n should be an integer"):
        la.fft.fftfreq(2.5)
    with pytest.raises(ValueError, match="real floating"):
        la.fft.rfftfreq(4, dtype=np.int32)


def test_errors():
    with pytest.raises(ValueError, match=r"Invalid number of FFT data points \(0\)"):
        la.fft.fft(la.asarray(np.ones(3)), n=0)
    with pytest.raises(ValueError, match=r"Invalid number of FFT data points \(0\)"):
        la.fft.irfft(la.asarray(np.ones(1)))
    with pytest.raises(ValueError, match="Invalid norm value"):
        la.fft.fft(la.asarray(np.ones(3)), norm="sideways")
    with pytest.raises(np.exceptions.AxisError):
        la.fft.fft(la.asarray(np.ones(3)), axis=1)
    with pytest.raises(TypeError, match="real input"):
        la.fft.rfft(la.asarray(np.ones(3, complex)))
    with pytest.raises(ValueError, match="different lengths"):
        la.fft.fftn(la.asarray(np.ones((2, 2))), s=(2,), axes=(0, 1))
    with pytest.raises(TypeError, match="out="):
        la.fft.fft(la.asarray(np.ones(3)), out=np.ones(3, complex))


def test_transforms_are_lazy():
    signal = la.asarray(np.arange(8.0))
    results = [
        la.fft.fft(signal),
        la.fft.rfftn(signal),
        la.fft.fftshift(signal),
        la.fft.fftfreq(8),
        la.fft.fft(la.asarray(np.ones(5, np.float16)), norm="ortho"),
    ]
    assert not any(result.is_evaluated for result in results)


def test_namespace_exports_everything():
    for name in fft_extension.__all__:
        assert getattr(la.fft, name) is getattr(fft_extension, name)
