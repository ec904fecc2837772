"""Every astype pair and every float16 reduction on the CPU backend, held to NumPy.

float64 -> float16 used to call the soft-float helper `__truncdfhf2`, which the JIT cannot
resolve: the process died (SIGSEGV), or aborted at the next compile. Each case runs in this
process, so a regression crashes the test run loudly. Casts are compared bit for bit
(NumPy's conversions are correctly rounded, and so are lazyarr's); float -> integer casts
get only values NumPy defines (finite and in range: outside it NumPy's result is undefined
and compiled code saturates, as the README's Differences table says).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarr as la
from tests.assertions import assert_identical
from tests.strategies import REAL_DTYPES, arrays, shapes

# NumPy, the oracle, warns about overflowing casts and empty means; the values are what matter.
pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"), pytest.mark.usefixtures("cpu_backend")]


def _defined_range(source: np.dtype, target: np.dtype) -> dict:
    """Element options for `source` values whose cast to `target` NumPy defines."""
    if source.kind == "f" and target.kind in "iub":
        if target.kind == "b":
            return {}
        info = np.iinfo(target)
        # The largest source values strictly inside the target's range (float16 tops at 65504).
        high = min(float(np.nextafter(source.type(info.max), source.type(0))), float(np.finfo(source).max))
        low = max(float(np.nextafter(source.type(info.min), source.type(0))), -float(np.finfo(source).max))
        return {"allow_edge": False, "min_value": low, "max_value": high}
    return {}


CAST_PAIRS = [(np.dtype(source), np.dtype(target)) for source in REAL_DTYPES for target in REAL_DTYPES]


@pytest.mark.parametrize("source, target", CAST_PAIRS, ids=[f"{s}->{t}" for s, t in CAST_PAIRS])
@settings(max_examples=8)  # x 144 pairs; the edge values of each dtype are mixed into every example
@given(data=st.data())
def test_astype_every_dtype_pair_matches_numpy(source, target, data):
    value = data.draw(arrays(source, shapes, **_defined_range(source, target)))
    assert_identical(np.asarray(la.asarray(value).astype(target)), value.astype(target))


def _half_midpoints(count: int, seed: int) -> np.ndarray:
    """float64 values at, just below and just above midpoints between neighbouring float16
    values (normal, subnormal and near the overflow threshold): where double rounding through
    float32 would go wrong."""
    rng = np.random.default_rng(seed)
    halves = rng.integers(0, 0x7BFF, count, dtype=np.uint16).view(np.float16)
    halves = np.concatenate([halves, np.array([65504.0, 6.1e-5, 6e-8, 0.0], np.float16)])
    low = halves.astype(np.float64)
    high = np.nextafter(halves, np.float16(np.inf)).astype(np.float64)
    middle = (low + high) / 2
    offsets = [np.nextafter(middle, -np.inf), middle, np.nextafter(middle, np.inf),
               middle * (1 + 2.0 ** -30), middle * (1 - 2.0 ** -30)]
    values = np.concatenate(offsets)
    return np.concatenate([values, -values, [np.nan, np.inf, -np.inf, 1e300, -1e-300, 65520.0, 65519.99]])


def test_float64_to_float16_rounds_once_to_nearest_even():
    values = _half_midpoints(2000, seed=0)
    assert_identical(np.asarray(la.asarray(values).astype(np.float16)), values.astype(np.float16))


HALF_REDUCTIONS = ["sum", "prod", "mean", "var", "std", "max", "min", "argmax", "argmin", "cumsum"]


@pytest.mark.parametrize("name", HALF_REDUCTIONS)
@settings(max_examples=15)
@given(data=st.data())
def test_float16_reductions_match_numpy(name, data):
    value = data.draw(arrays(np.float16, shapes, min_value=-4.0, max_value=4.0, allow_edge=False))
    axis = data.draw(st.sampled_from([None, *range(value.ndim)]))
    if name in ("argmax", "argmin", "max", "min") and value.size and not (axis is None or value.shape[axis]):
        return  # NumPy raises for an empty reduction without identity; tested in the frontend
    if name in ("argmax", "argmin", "max", "min") and not value.size:
        return
    want = getattr(np, name)(value, axis=axis)
    got = np.asarray(getattr(la, name)(la.asarray(value), axis=axis))
    assert got.shape == np.shape(want) and got.dtype == np.asarray(want).dtype
    # NumPy and lazyarr both accumulate float16 in float32 and round once to float16, in
    # different orders: the float32 partial sums differ by ~n * 2**-24 relative, far below a
    # float16 ULP (2**-11), so results agree within one float16 ULP of the largest term
    # involved. var/std round their intermediates (x - mean)**2 to float16 as NumPy does;
    # cancellation there can cost a few ULPs of the mean's scale: 4 ULPs of |value|'s max.
    scale = float(np.max(np.abs(value.astype(np.float32)), initial=1.0))
    ulp = 2.0 ** -10 * scale
    if name in ("sum", "mean", "cumsum"):
        ulp *= max(value.size, 1)
    if name == "prod":
        ulp = 2.0 ** -10 * float(np.max(np.abs(np.asarray(want, np.float32)), initial=1.0)) * max(value.size, 1)
    if name in ("var", "std"):
        ulp = 4 * 2.0 ** -10 * scale * scale * max(value.size, 1) if name == "var" else 4 * 2.0 ** -10 * scale
    np.testing.assert_allclose(got.astype(np.float64), np.asarray(want, np.float64), rtol=0, atol=ulp)


def test_float16_std_of_empty_rows_then_another_compile():
    # Used to abort (SIGABRT: symbol not found) at the compile after the first one.
    want = np.std(np.zeros((0, 4), np.float16), axis=1)
    assert_identical(np.asarray(la.std(la.asarray(np.zeros((0, 4), np.float16)), axis=1)), want)
    assert_identical(np.asarray(la.asarray(np.ones(3)) * 7 + 1), np.ones(3) * 7 + 1)
    assert float(la.asarray(np.ones(3, np.float16)).std()) == 0.0
