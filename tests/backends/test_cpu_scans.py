"""Cumulative sums and products compiled as kernel roots (`KernelBuilder._scan`).

`cumulative` runs in a kernel with its producers fused, in NumPy's order (the first element as
it is, then one rounding per step), so results equal `np.cumsum` / `np.cumprod` bit for bit:
along the innermost axis (a running value in a register) and along outer axes (the previous
row read back), for integer dtypes (wrapping as NumPy's) and floats with NaN, infinities and
-0.0 (a NaN's sign and payload are the hardware's choice and not compared), empty arrays,
and kernels split over the thread pool (a scan along the first axis runs whole). float16
stays on the host (NumPy rounds each running value to half).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lazyarr.backends.llvm.elemental import emit_refusal
from lazyarr.backends.slots import HostStep
from lazyarr.compile import compile_module
from lazyarr.hlo import Computation, Module, make

_NUMPY = {"sum": np.cumsum, "prod": np.cumprod}
_DTYPES = [np.float32, np.float64, np.int8, np.int32, np.int64, np.uint8]


@st.composite
def _cases(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(0, 9)) for _ in range(ndim))
    dtype = np.dtype(draw(st.sampled_from(_DTYPES)))
    return shape, draw(st.integers(0, ndim - 1)), dtype, draw(st.sampled_from(sorted(_NUMPY)))


def _values(rng, shape, dtype):
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        values = rng.integers(-3 if dtype.kind == "i" else 0, 4, shape).astype(dtype)
        chosen = rng.random(shape) < 0.1
        values[chosen] = rng.choice(np.array([info.min, info.max], dtype), size=int(chosen.sum()))
        return values
    values = rng.standard_normal(shape).astype(dtype)
    chosen = rng.random(shape) < 0.1
    values[chosen] = rng.choice(np.array([np.nan, np.inf, -np.inf, -0.0], dtype), size=int(chosen.sum()))
    return values


def _scan(shape, dimension, dtype, kind, x):
    """cumulative(kind) along `dimension` of `-x` (a fused producer; unsigned values wrap)."""
    parameter = make("parameter", number=0, shape=shape, dtype=dtype)
    operand = make("negate", [parameter])
    root = make("cumulative", [operand], kind=kind, dimension=dimension)
    executable = compile_module(Module("main", Computation("main", (parameter,), (root,))), "cpu")
    assert not any(isinstance(step, HostStep) for step in executable.steps)
    (result,) = executable.run([x])
    with np.errstate(all="ignore"):
        return result, _NUMPY[kind](np.negative(x), axis=dimension, dtype=dtype)


@pytest.mark.usefixtures("cpu_backend")
@settings(max_examples=50, deadline=None)
@given(_cases(), st.integers(0, 2**32 - 1))
def test_scans_equal_numpy_bit_for_bit(case, seed):
    shape, dimension, dtype, kind = case
    result, expected = _scan(shape, dimension, dtype, kind, _values(np.random.default_rng(seed), shape, dtype))
    assert result.dtype == expected.dtype and result.shape == expected.shape
    _assert_bitwise_equal(result, expected)


def _assert_bitwise_equal(result, expected):
    """Every bit equal, zero signs included, except a NaN's sign and payload (IEEE leaves them
    to the hardware's choice of operand: NaN where NumPy has NaN is all that is compared)."""
    if result.dtype.kind == "f":
        nan = np.isnan(expected)
        np.testing.assert_array_equal(np.isnan(result), nan)
        result, expected = result[~nan], expected[~nan]
    assert result.tobytes() == expected.tobytes()


@pytest.mark.usefixtures("thread_pool_kernels")
@pytest.mark.parametrize("dimension", [0, 1, 2])
def test_scans_split_over_threads(dimension):
    """A kernel split over the pool slices its first axis: a scan along it runs whole."""
    shape = (40, 30, 20)
    x = np.random.default_rng(dimension).standard_normal(shape)
    result, expected = _scan(shape, dimension, np.dtype(np.float64), "sum", x)
    _assert_bitwise_equal(result, expected)


@pytest.mark.usefixtures("cpu_backend")
def test_a_long_scan_equals_numpy():
    x = np.random.default_rng(5).random(100_003).astype(np.float32)
    result, expected = _scan(x.shape, 0, np.dtype(np.float32), "sum", x)
    _assert_bitwise_equal(result, expected)


def test_float16_scans_stay_on_the_host():
    parameter = make("parameter", number=0, shape=(5,), dtype=np.dtype(np.float16))
    assert "float16" in emit_refusal(make("cumulative", [parameter], kind="sum", dimension=0))
    assert emit_refusal(make("cumulative", [make("convert", [parameter], dtype=np.dtype(np.float32))],
                             kind="sum", dimension=0)) is None
