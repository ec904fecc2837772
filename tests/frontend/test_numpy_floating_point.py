"""ldexp, frexp, spacing, bitwise_count, i0 and kaiser against NumPy 2, on the CPU backend and
the interpreter, lazily, through NumPy's own functions, inside la.jit, and as PTX.

ldexp, frexp, spacing and bitwise_count are HLO ops (exact: bits rearranged, or one rounding
of x * 2**n), so every value must equal NumPy's bit for bit on both backends, zero signs
included: every float16, float32/float64 bit patterns at random and at the edges (0, -0.0,
subnormals, the largest finite, inf, NaN), exponents within and far beyond every float's range,
every integer dtype's extremes. i0 (and kaiser, a ratio of two i0) repeat NumPy's Python
arithmetic step for step: bit for bit on the interpreter (it runs NumPy's own exp); on the CPU
backend exp is lazyarr's own (`I0_CPU_ULPS`). Each check is shape, then dtype, then values.
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from lazyarr.hlo import Computation, Module, make
from tests.assertions import assert_identical, outcome
from tests.strategies import ALL_DTYPES, REAL_DTYPES, arrays, elements

BACKENDS = ["cpu", "interpreter"]
FLOATS = [np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)]
INTEGERS = [dtype for dtype in REAL_DTYPES if dtype.kind in "iu"]
# The CPU backend's exp is within 4 ULP of NumPy's (README: Differences from NumPy; the same
# bound as tests/backends/test_cpu_elementwise.py's ULP_TOLERANCE). i0 is exp(|x|) times a
# Chebyshev sum whose operations are the interpreter's exactly, then (beyond 8) divided by
# sqrt: the product and the quotient round once each, so 4 + 2. kaiser divides two such
# values: their relative errors add, plus the division's rounding. (Measured over 5 * 10**5
# values: i0 at most 4 ULP apart, kaiser 3.)
I0_CPU_ULPS = 6
KAISER_CPU_ULPS = 2 * I0_CPU_ULPS + 1
# Few examples: each new shape or dtype compiles on the CPU backend (the exhaustive tables
# below carry the values).
EXAMPLES = settings(max_examples=12)
SHAPES = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=3)
unary_shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)


@contextlib.contextmanager
def backend(name: str):
    """Evaluate on backend `name` inside the block (hypothesis tests take no function fixtures)."""
    previous = la.get_backend_name()
    la.set_backend(name)
    try:
        yield
    finally:
        la.set_backend(previous)


def numpy_quietly(function, *args, **kwargs):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


def assert_within_ulps(got, want, ulps):
    """Shape, then dtype, then values within `ulps` units in the last place of NumPy's value
    (NaN where NumPy has NaN, infinities equal)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    with np.errstate(all="ignore"):
        allowed = ulps * np.spacing(np.abs(want).astype(want.dtype)).astype(np.float64)
        near = np.abs(got.astype(np.float64) - want.astype(np.float64)) <= allowed
    assert np.all(same | near), (got[~(same | near)], want[~(same | near)])


def bit_patterns(dtype, count, generator):
    """Every float16; else random bit patterns (all exponents, NaN payloads), random subnormals
    of both signs and the edge values."""
    if dtype == np.float16:
        return np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    unsigned = np.dtype(f"u{dtype.itemsize}")
    info = np.finfo(dtype)
    raw = generator.integers(0, np.iinfo(unsigned).max, count, dtype=unsigned, endpoint=True).view(dtype)
    subnormal = generator.integers(1, 1 << info.nmant, count // 4).astype(unsigned).view(dtype)
    edges = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, info.max, -info.max, info.tiny, -info.tiny,
                      info.smallest_subnormal, -info.smallest_subnormal, 1.0, -1.0, 0.5, -0.75, 3.0], dtype)
    return np.concatenate([edges, raw, subnormal, -subnormal])


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_every_float16_and_random_bit_patterns_of_float32_and_float64(backend_name):
    """frexp, spacing and ldexp on one module per backend: exact, zero signs included."""
    with backend(backend_name):
        generator = np.random.default_rng(20260214)
        cases = []
        for dtype in FLOATS:
            x = bit_patterns(dtype, 40_000, generator)
            # exponents: the overflow/underflow/subnormal boundaries of every float, then at random
            boundaries = np.array([0, 1, -1, 15, 16, -14, -24, -25, 127, 128, -126, -149, -150, 1023, 1024,
                                   -1022, -1074, -1075, 2**31 - 1, -2**31], np.int32)
            n = np.resize(np.concatenate([boundaries, generator.integers(-1200, 1200, 997).astype(np.int32)]), x.shape)
            wide = n.astype(np.int64) * 3
            lazy_x, lazy_n = la.asarray(x), la.asarray(n)
            mantissa, exponent = la.frexp(lazy_x)
            expected_mantissa, expected_exponent = numpy_quietly(np.frexp, x)
            cases += [(mantissa, expected_mantissa), (exponent, expected_exponent),
                      (la.spacing(lazy_x), numpy_quietly(np.spacing, x)),
                      (la.ldexp(lazy_x, lazy_n), numpy_quietly(np.ldexp, x, n)),
                      # int64 exponents beyond int32's range: NumPy's int64 loop clamps them
                      (la.ldexp(lazy_x, la.asarray(wide)), numpy_quietly(np.ldexp, x, wide))]
        la.eval(*(got for got, _ in cases))
        for got, want in cases:
            assert_identical(np.asarray(got), want)


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_edge_values_are_numpys(backend_name):
    """The cases named in NumPy's documentation and C's, spelled out."""
    with backend(backend_name):
        values = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, np.finfo(np.float64).max, -2.0])
        mantissa, exponent = la.frexp(la.asarray(values))
        assert_identical(np.asarray(mantissa), np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 0.5, -0.5,
                                                         np.nextafter(1.0, 0.0), -0.5]))
        assert_identical(np.asarray(exponent), np.array([0, 0, 0, 0, 0, -1073, -1073, 1024, 2], np.int32))
        smallest = 5e-324
        assert_identical(np.asarray(la.spacing(la.asarray(values))),
                         np.array([smallest, smallest, np.nan, np.nan, np.nan, smallest, -smallest, np.inf,
                                   -4.440892098500626e-16]))
        # overflow; one rounding into the subnormals: 0.75 up, ties (0.5, 1.5) to even
        scaled = la.ldexp(la.asarray([1.0, -1.0, 0.75, 0.5, 1.5]), la.asarray([1024, 1024, -1074, -1074, -1074]))
        assert_identical(np.asarray(scaled), np.array([np.inf, -np.inf, 5e-324, 0.0, 1e-323]))
        half_spacing = la.spacing(la.asarray(np.array([-1.0, 65504.0, -65504.0, -0.0], np.float16)))
        # NumPy's float16 spacing: positive, below a negative power of two, inf only for +max
        assert_identical(np.asarray(half_spacing), np.array([2.0**-11, np.inf, 32.0, 2.0**-24], np.float16))


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_bitwise_count_of_every_integer_dtype(backend_name):
    """Every int8/uint8 value, the extremes and random values of the wider ones, and bool:
    |x|'s set bits as uint8 (the most negative value counts one bit, as NumPy's)."""
    with backend(backend_name):
        generator = np.random.default_rng(7)
        cases = []
        for dtype in INTEGERS:
            info = np.iinfo(dtype)
            extremes = np.array([info.min, info.min + 1, info.max, 0, 1], dtype)
            if dtype.itemsize == 1:
                values = np.arange(info.min, info.max + 1).astype(dtype)
            else:
                random = generator.integers(info.min, info.max, 500, dtype=dtype, endpoint=True)
                values = np.concatenate([extremes, random])
            cases.append((la.bitwise_count(la.asarray(values)), np.bitwise_count(values)))
        cases.append((la.bitwise_count(la.asarray([True, False])), np.bitwise_count(np.array([True, False]))))
        la.eval(*(got for got, _ in cases))
        for got, want in cases:
            assert_identical(np.asarray(got), want)


def _operand(data, dtype, shape, label, values=None):
    """An array of `dtype` and `shape` with edge values (or `values`), or (for a 0-d shape,
    sometimes) a Python scalar of the dtype's kind (NEP 50: weak)."""
    value = data.draw(hnp.arrays(dtype, shape, elements=elements(dtype) if values is None else values), label=label)
    if shape == () and dtype.kind in "iuf" and data.draw(st.booleans(), label=f"{label} as Python scalar"):
        return value.item()
    return value


def _lazy(value):
    return la.asarray(value) if isinstance(value, np.ndarray) else value


@pytest.mark.parametrize("backend_name", BACKENDS)
@EXAMPLES
@given(data=st.data())
def test_ldexp_matches_numpy(backend_name, data):
    """Every real dtype pair (TypeError exactly where NumPy has no loop: float exponents,
    uint64), broadcasting shapes, 0-d and empty arrays, Python scalars on either side."""
    with backend(backend_name):
        shapes = data.draw(SHAPES, label="shapes").input_shapes
        x1_dtype = data.draw(st.sampled_from(REAL_DTYPES), label="x1 dtype")
        x2_dtype = data.draw(st.sampled_from(REAL_DTYPES), label="x2 dtype")
        x1 = _operand(data, x1_dtype, shapes[0], "x1")
        # integer exponents near every float's range too (wrapped where the dtype is narrower)
        nearby = st.integers(-1100, 1100).map(lambda value: np.array(value).astype(x2_dtype)[()])
        x2 = _operand(data, x2_dtype, shapes[1], "x2", elements(x2_dtype) | nearby if x2_dtype.kind in "iu" else None)
        expected, error = outcome(lambda: numpy_quietly(np.ldexp, x1, x2))
        if error is not None:
            with pytest.raises(error):
                la.ldexp(_lazy(x1), _lazy(x2))
            return
        assert_identical(np.asarray(la.ldexp(_lazy(x1), _lazy(x2))), np.asarray(expected))


UNARY = {"frexp": np.frexp, "spacing": np.spacing, "bitwise_count": np.bitwise_count}


@pytest.mark.parametrize("backend_name", BACKENDS)
@EXAMPLES
@given(data=st.data())
def test_frexp_spacing_and_bitwise_count_match_numpy(backend_name, data):
    """Every dtype (TypeError where NumPy has no loop: complex, floats for bitwise_count);
    integers and bools become floats as NumPy's loops take them."""
    with backend(backend_name):
        name = data.draw(st.sampled_from(sorted(UNARY)), label="function")
        dtype = data.draw(st.sampled_from(ALL_DTYPES), label="dtype")
        x = _operand(data, dtype, data.draw(unary_shapes, label="shape"), "x")
        expected, error = outcome(lambda: numpy_quietly(UNARY[name], x))
        if error is not None:
            with pytest.raises(error, match=name):
                getattr(la, name)(_lazy(x))
            return
        got = getattr(la, name)(_lazy(x))
        for got_part, want_part in zip(*((got, expected) if name == "frexp" else ((got,), (expected,)))):
            assert_identical(np.asarray(got_part), np.asarray(want_part))


@given(data=st.data())
def test_i0_matches_numpy_exactly_on_the_interpreter(data):
    """Bit for bit: the same operations in NumPy's order, each evaluated by NumPy (its exp
    included). Both branches (|x| <= 8 and beyond), overflow to inf, NaN for +-inf."""
    dtype = data.draw(st.sampled_from(REAL_DTYPES + [np.dtype(np.complex64)]), label="dtype")
    shape = data.draw(unary_shapes, label="shape")
    bounded = st.floats(-30, 30, width=8 * min(dtype.itemsize, 8)) if dtype.kind == "f" else elements(dtype)
    x = data.draw(hnp.arrays(dtype, shape, elements=elements(dtype) | bounded) if dtype.kind != "c"
                  else arrays(dtype, st.just(shape)), label="x")
    expected, error = outcome(lambda: numpy_quietly(np.i0, x))
    if error is not None:
        with pytest.raises(error, match="i0"):
            la.i0(la.asarray(x))
        return
    with backend("interpreter"):
        assert_identical(np.asarray(la.i0(la.asarray(x))), expected)


KAISER_CASES = [(5, 2.0), (0, 2.0), (-2, 2.0), (1, 3.0), (2, 0.0), (5.5, 2.0), (True, 2.0), (7, 14),
                (8, -3.0), (51, 8.6), (16, 700.0), (12, 720.0), (3, np.float32(2.5)), (6, np.nan)]


@pytest.mark.parametrize("M, beta", KAISER_CASES)
def test_kaiser_matches_numpy_exactly_on_the_interpreter(M, beta):
    """NumPy's arithmetic: M and beta as float64, empty below 1, [1.0] at 1, a fractional M
    (its arange) and NaN samples outside the window, i0(beta) overflowing for beta >= 714."""
    with backend("interpreter"):
        assert_identical(np.asarray(la.kaiser(M, beta)), numpy_quietly(np.kaiser, M, beta))


def test_i0_and_kaiser_on_the_cpu_backend(cpu_backend):
    """One module: i0 of every dtype on both branches and beyond exp's range, and the kaiser
    table; within I0_CPU_ULPS / KAISER_CPU_ULPS (module docstring), else identical."""
    generator = np.random.default_rng(3)
    samples = np.concatenate([generator.uniform(-30, 30, 3000), generator.uniform(-8.2, 8.2, 1000),
                              [0.0, -0.0, 8.0, -8.0, 700.0, 720.0, np.inf, -np.inf, np.nan]])
    cases = [(la.i0(la.asarray(samples.astype(dtype))), numpy_quietly(np.i0, samples.astype(dtype)), I0_CPU_ULPS)
             for dtype in FLOATS]
    cases.append((la.i0(la.asarray(np.arange(-5, 5, dtype=np.int16))), np.i0(np.arange(-5, 5, dtype=np.int16)),
                  I0_CPU_ULPS))
    cases += [(la.kaiser(M, beta), numpy_quietly(np.kaiser, M, beta), KAISER_CPU_ULPS) for M, beta in KAISER_CASES]
    la.eval(*(got for got, _, _ in cases))
    for got, want, ulps in cases:
        assert_within_ulps(got, want, ulps)


def test_errors_match_numpy():
    """NumPy's exception types, each message naming the function."""
    floats = la.asarray([1.5, -2.0])
    with pytest.raises(TypeError, match="ldexp"):
        la.ldexp(floats, 2.0)  # no float exponent loop
    with pytest.raises(TypeError, match="ldexp"):
        la.ldexp(floats, la.asarray(np.array([1, 2], np.uint64)))
    with pytest.raises(OverflowError, match="ldexp"):
        la.ldexp(floats, 2**40)  # a Python int meets the int32 loop, as NumPy's
    with pytest.raises(ValueError, match="ldexp"):
        la.ldexp(floats, la.asarray([1, 2, 3]))  # shapes (2,) and (3,)
    for name in ("frexp", "spacing", "i0"):
        with pytest.raises(TypeError, match=name):
            getattr(la, name)(la.asarray([1 + 2j]))
    with pytest.raises(TypeError, match="bitwise_count"):
        la.bitwise_count(floats)
    with pytest.raises(TypeError, match="kaiser"):
        la.kaiser(5, 1j)
    with pytest.raises(ValueError, match="kaiser"):
        la.kaiser(3, np.array([2.0]))
    # ldexp.reduce of integers folds them into a float accumulator (NumPy's "dl->d" loop):
    # refused by la.ldexp.reduce, answered by NumPy's own for np.ldexp.reduce(lazy).
    integers = np.array([[1, 2], [3, 4]], np.int8)
    with pytest.raises(NotImplementedError, match="ldexp.reduce"):
        la.ldexp.reduce(la.asarray(integers))
    assert_identical(np.asarray(np.ldexp.reduce(la.asarray(integers), axis=1)), np.ldexp.reduce(integers, axis=1))


def test_numpy_calls_on_lazy_arrays_stay_lazy(cpu_backend):
    """NumPy's ufuncs and i0 dispatch to lazyarr (__array_ufunc__, __array_function__): the
    results are pending lazy arrays with NumPy's values; ldexp's ufunc methods too."""
    values = np.array([-3.0, -0.0, 0.75, 5e-324, np.inf, np.nan])
    exponents = np.array([1, 2, -1080, 1030, 0, 3], np.int32)
    integers = np.array([-128, -1, 0, 7], np.int8)
    x, n, k = la.asarray(values), la.asarray(exponents), la.asarray(integers)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy's i0 of inf and NaN
        calls = [
            (np.ldexp(x, n), np.ldexp(values, exponents)),
            (np.ldexp(values, n), np.ldexp(values, exponents)),
            (*np.frexp(x), *np.frexp(values)),
            (np.spacing(x), np.spacing(values)),
            (np.bitwise_count(k), np.bitwise_count(integers)),
            (np.i0(x), np.i0(values)),
            (np.ldexp.outer(x[:3], n[:2]), np.ldexp.outer(values[:3], exponents[:2])),
        ]
    pairs = []
    for call in calls:
        half = len(call) // 2
        pairs += list(zip(call[:half], call[half:]))
    for got, _ in pairs:
        assert isinstance(got, la.Array) and not got.is_evaluated
    la.eval(*(got for got, _ in pairs))
    for got, want in pairs:
        assert_identical(np.asarray(got), want)
    at = la.asarray(values.copy())
    np.ldexp.at(at, [0, 0, 2], 2)  # in place on the lazy array, repeated indices in turn
    expected = values.copy()
    np.ldexp.at(expected, [0, 0, 2], 2)
    assert_identical(np.asarray(at), expected)


def test_inside_jit(cpu_backend):
    """One trace serves new values; the jitted results are the eager ones (NumPy's)."""
    traces = []

    @la.jit
    def decompose(x, n, k):
        traces.append(1)
        mantissa, exponent = la.frexp(x)
        return la.ldexp(mantissa, exponent + n), la.spacing(x), la.bitwise_count(k), la.i0(x) / la.i0(1.0)

    generator = np.random.default_rng(11)
    for _ in range(2):
        x = generator.normal(0, 10, 17) * 2.0 ** generator.integers(-60, 60, 17)
        n = generator.integers(-3, 3, 17).astype(np.int32)
        k = generator.integers(-2**62, 2**62, 17)
        rebuilt, spacing, count, i0_ratio = decompose(x, n, k)
        assert_identical(np.asarray(rebuilt), np.ldexp(x, n))  # exact for these (no overflow)
        assert_identical(np.asarray(spacing), np.spacing(x))
        assert_identical(np.asarray(count), np.bitwise_count(k))
        assert_within_ulps(i0_ratio, numpy_quietly(np.i0, x) / np.i0(1.0), KAISER_CPU_ULPS)
    assert len(traces) == 1


@pytest.fixture
def ptxas():
    from lazyarr.backends.llvm.nvptx import ptxas_path

    if ptxas_path() is None:
        pytest.skip("ptxas is not installed (it comes with the CUDA toolkit): PTX cannot be checked")


def test_new_ops_assemble_for_sm_90_without_calls(ptxas):
    """ldexp, frexp-mantissa/-exponent, spacing (every float dtype) and popcount (every integer
    dtype) in one module: its PTX assembles, and no op became a call (a libm ldexp or frexp)."""
    from lazyarr.backends.gpu_compile import compile_program
    from lazyarr.backends.llvm.nvptx import assemble

    parameters, outputs = [], []

    def parameter(dtype):
        parameters.append(make("parameter", number=len(parameters), shape=(5, 7), dtype=np.dtype(dtype)))
        return parameters[-1]

    exponent = parameter(np.int32)
    for dtype in FLOATS:
        x = parameter(dtype)
        outputs += [make("ldexp", [x, exponent]), make("frexp-mantissa", [x]), make("frexp-exponent", [x]),
                    make("spacing", [x])]
    outputs += [make("popcount", [parameter(dtype)]) for dtype in INTEGERS]
    program = compile_program(Module("ops", Computation("ops", tuple(parameters), tuple(outputs))), "sm_90")
    assemble(program.ptx, "sm_90")
    assert ".extern" not in program.ptx and "call" not in program.ptx
