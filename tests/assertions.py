"""Assertions shared by the test files."""

from __future__ import annotations

import numpy as np

from lazyarr import dtypes


def assert_identical(got, want):
    """Shape, then dtype, then values: equal with NaNs equal, and zeros of equal sign."""
    assert got.shape == want.shape
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    if dtypes.is_inexact(want.dtype):
        parts = [(got, want)]
        if dtypes.is_complex(want.dtype):
            parts = [(got.real, want.real), (got.imag, want.imag)]
        for got_part, want_part in parts:
            zeros = want_part == 0
            assert np.array_equal(np.signbit(got_part[zeros]), np.signbit(want_part[zeros]))


def assert_lazy_matches(got, expected):
    """A lazyarr result against NumPy's: shape, then dtype, then values (NaNs equal); tuples and
    lists part by part."""
    import lazyarr as la

    if isinstance(expected, (tuple, list)):
        assert type(got) is type(expected) and len(got) == len(expected)
        for got_part, expected_part in zip(got, expected):
            assert_lazy_matches(got_part, expected_part)
        return
    assert isinstance(got, la.Array), type(got)
    expected = np.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    np.testing.assert_array_equal(np.asarray(got), expected)


def outcome(function):
    """(result, None) or (None, exception kind): NumPy and lazyarr must agree on either.

    NumPy's casting errors are private TypeError subclasses: the public kind is compared."""
    try:
        with np.errstate(all="ignore"):
            return function(), None
    except (TypeError, ValueError, OverflowError, ZeroDivisionError) as error:
        kind = next(kind for kind in (OverflowError, ZeroDivisionError, TypeError, ValueError)
                    if isinstance(error, kind))
        return None, kind
