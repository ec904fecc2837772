"""Every compiled elementwise op agrees with the interpreter on the CPU backend.

The table is the HLO op set itself: each elementwise op with every dtype its rules accept
that the CPU compiles, on inputs with edge values (NaN, inf, -0.0, integer extremes).
Integer and exact float ops must be bit-identical. Transcendentals may differ in the last
bits from NumPy's (libm or polynomial vs NumPy's SIMD loops): 4 ULP, see ULP_TOLERANCE.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr.backends.cpu as cpu
from lazyarr import dtypes
from lazyarr.compile import compile_module
from lazyarr.hlo import Computation, HloError, Module, evaluate, make
from lazyarr.hlo.ops.elementwise import BINARY, UNARY
from tests.strategies import arrays, elements

# Ops computed by a math library (polynomial or libm) rather than exactly rounded arithmetic:
# NumPy's own float32 loops are within a few ULP of correct rounding, and so are ours.
ULP_TOLERANCE = {
    "exp": 4, "exp2": 4, "expm1": 4, "log": 4, "log2": 4, "log10": 4, "log1p": 4, "sin": 4,
    "cos": 4, "tan": 4, "asin": 4, "acos": 4, "atan": 4, "sinh": 4, "cosh": 4, "tanh": 4,
    "asinh": 4, "acosh": 4, "atanh": 4, "cbrt": 4, "atan2": 4, "hypot": 4, "power": 4,
    "logaddexp": 4,
}
COMPILED = sorted(cpu.COMPILED_DTYPES, key=lambda dtype: dtype.num)
# Few shapes, each compiled once per op and dtype (the compile cache keys on them): 0-d,
# empty, and one that is not a multiple of the vector width with a broadcast-free 3-d nest.
SHAPE = st.sampled_from([(), (0, 3), (2, 3, 17)])


def accepted(name, arity):
    result = []
    for dtype in COMPILED:
        parameters = [make("parameter", number=i, shape=(2,), dtype=dtype) for i in range(arity)]
        try:
            make(name, parameters)
        except HloError:
            continue
        result.append(dtype)
    return result


CASES = [(name, 1, dtype) for name, *_ in UNARY for dtype in accepted(name, 1)] + [
    (name, 2, dtype) for name, *_ in BINARY for dtype in accepted(name, 2)
]
# ldexp's operands differ in dtype (float x, int32 exponent): a table of its own.
LDEXP_DTYPES = [dtype for dtype in COMPILED if dtypes.is_floating(dtype)]
INT32 = np.dtype("int32")


def ldexp_case(data, dtype):
    """(computation, values) of ldexp: x with edge values (subnormals too), exponents in and
    far beyond every float's range."""
    shape = data.draw(SHAPE)
    exponents = st.one_of(st.integers(-1100, 1100), st.integers(-40, 40), elements(INT32))
    values = [data.draw(arrays(dtype, st.just(shape))), data.draw(hnp.arrays(INT32, shape, elements=exponents))]
    parameters = tuple(make("parameter", number=i, shape=shape, dtype=value.dtype) for i, value in enumerate(values))
    return Computation("main", parameters, (make("ldexp", parameters),)), values


def ulp_distance(left, right):
    kind = {2: np.int16, 4: np.int32, 8: np.int64}[left.dtype.itemsize]
    a, b = left.view(kind).astype(np.int64), right.view(kind).astype(np.int64)
    a = np.where(a < 0, np.iinfo(kind).min - a, a)
    b = np.where(b < 0, np.iinfo(kind).min - b, b)
    return np.abs(a - b)


# NumPy returns either zero for (0.0, -0.0) depending on the loop it picks (dtype, array size,
# SIMD path: float16 minimum keeps the first operand, float32 the second); lazyarr answers the
# same way for every dtype and size. clip (HLO clamp) likewise: NumPy 2.4's clip returns x for
# 0-d operands but minimum(maximum(x, low), high)'s zero for arrays (found by the fuzz test).
ZERO_SIGN_UNSPECIFIED = {"fmax", "fmin", "maximum", "minimum", "clip", "clamp"}


def assert_agrees(name, got, want, tolerances=ULP_TOLERANCE):
    """Shape, dtype, then values: exact ops bit-identical (signs of zeros too), functions in
    `tolerances` within that many ULP (the GPU suite passes libdevice's)."""
    assert got.shape == want.shape
    assert got.dtype == want.dtype
    if not dtypes.is_floating(want.dtype) or name not in tolerances:
        np.testing.assert_array_equal(got, want)
        if dtypes.is_floating(want.dtype) and name not in ZERO_SIGN_UNSPECIFIED:
            numbers = ~np.isnan(want)  # the sign of a NaN result is unspecified (IEEE 754)
            np.testing.assert_array_equal(np.signbit(got[numbers]), np.signbit(want[numbers]))
        return
    same_nan = np.isnan(got) == np.isnan(want)
    assert same_nan.all(), f"{name}: NaN mismatch"
    finite = ~np.isnan(want)
    distance = ulp_distance(got[finite], want[finite])
    assert (distance <= tolerances[name]).all(), f"{name}: {distance.max(initial=0)} ULP apart"


def run_both(computation, values):
    want = evaluate(computation, values)
    got = compile_module(Module("main", computation), "cpu").run(values)
    return got, want


@pytest.mark.parametrize("name, arity, dtype", CASES, ids=[f"{n}-{d}" for n, _, d in CASES])
@settings(max_examples=max(settings().max_examples // 5, 6))  # ~400 cases; each example is 102 values
@given(data=st.data())
def test_elementwise_op_matches_interpreter(name, arity, dtype, data):
    shape = data.draw(SHAPE)
    values = [data.draw(arrays(dtype, st.just(shape))) for _ in range(arity)]
    parameters = tuple(make("parameter", number=i, shape=shape, dtype=dtype) for i in range(arity))
    computation = Computation("main", parameters, (make(name, parameters),))
    got, want = run_both(computation, values)
    assert_agrees(name, got[0], want[0])


@pytest.mark.parametrize("dtype", LDEXP_DTYPES, ids=str)
@settings(max_examples=max(settings().max_examples // 5, 6))
@given(data=st.data())
def test_ldexp_matches_interpreter(dtype, data):
    computation, values = ldexp_case(data, dtype)
    got, want = run_both(computation, values)
    assert_agrees("ldexp", got[0], want[0])
