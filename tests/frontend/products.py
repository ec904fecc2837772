"""Operands whose products are exact in any summation order, and the product tests' assertion.

Shared by the matmul-family and einsum tables: exact inputs make every comparison with NumPy
bit-exact whatever order a backend sums in.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la

PRODUCT_DTYPES = [
    np.dtype(name)
    for name in (
        "bool",
        "int8",
        "uint8",
        "int32",
        "int64",
        "uint64",
        "float16",
        "float32",
        "float64",
        "complex64",
        "complex128",
    )
]


def exact_elements(dtype, small=False):
    """Full range for bool/integers; small integers for inexact dtypes (exact in any order),
    and for every operand when the result is inexact (large integers would round)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b" or (dtype.kind in "iu" and not small):
        return hnp.from_dtype(dtype)
    if dtype.kind in "iu":
        return st.integers(0 if dtype.kind == "u" else -8, 8)
    small = st.integers(-8, 8)
    if dtype.kind == "c":
        return st.builds(complex, small, small)
    return small.map(float)


def exact_array(data, dtype, shape, label, dtypes=()):
    """An operand whose products with the others (of `dtypes`) are exact in any order."""
    small = bool(dtypes) and np.result_type(*dtypes).kind in "fc"  # uint64 with int32: float64
    return data.draw(hnp.arrays(dtype, shape, elements=exact_elements(dtype, small)), label=label)


def assert_matches(result, expected, tolerance=None):
    """Shape, then dtype, then values (exact unless a tolerance is given)."""
    assert isinstance(result, la.Array), type(result)
    expected = np.asarray(expected)
    assert result.shape == expected.shape, (result.shape, expected.shape)
    assert result.dtype == expected.dtype, (result.dtype, expected.dtype)
    if tolerance is None:
        np.testing.assert_array_equal(np.asarray(result), expected, strict=True)
    else:
        np.testing.assert_allclose(
            np.asarray(result), expected, rtol=tolerance, atol=tolerance, equal_nan=True
        )
