"""The LLVM math emitters against NumPy, in ULPs, scalar and <N x float> vector code alike.

Each emitter is JIT-compiled inside `void kernel(T* in..., T* out, i64 n)` loops (one scalar
loop, one loop over <8 x float> / <4 x double> vectors) and run on NumPy buffers through
ctypes. The reference is NumPy's own function evaluated in long double and rounded to the
dtype, i.e. the correctly rounded result (NumPy's float32 SIMD loops are themselves up to
~3 ULP from it, so measuring against them would hide our error inside theirs). Special
values (NaN, ±inf, ±0.0, log(0), exp overflow, ...) must match bit for bit.
"""

import ctypes
import functools
import itertools
import math
import re
from dataclasses import dataclass

import llvmlite.ir as ir
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lazyarr.backends.llvm import math as llvm_math
from lazyarr.backends.llvm import math_trig
from lazyarr.backends.llvm.target import (
    host_cpu_features,
    host_target_machine,
    jit_engine,
    optimize,
    parse_module,
)
from lazyarr.hlo import op as hlo_op
from tests.strategies import elements

DTYPES = ["float32", "float64"]
IR_TYPES = {"float32": ir.FloatType(), "float64": ir.DoubleType()}
LANES = {"float32": 8, "float64": 4}
INDEX = ir.IntType(64)
WIDE_IS_WIDER = np.finfo(np.longdouble).nmant > np.finfo(np.float64).nmant
WIDE = np.longdouble if WIDE_IS_WIDER else np.float64


@dataclass(frozen=True)
class Record:
    name: str  # key in MATH_FUNCTIONS
    reference: object  # NumPy function, evaluated in long double
    float32_ulp: float
    float64_ulp: float
    arity: int = 1

    def tolerance(self, dtype: str) -> float:
        tolerance = self.float32_ulp if dtype == "float32" else self.float64_ulp
        # Without a wider long double the float64 reference is NumPy's own (<= 1 ULP off).
        return tolerance + (1 if dtype == "float64" and not WIDE_IS_WIDER else 0)


def _logistic(x):
    return 1 / (1 + np.exp(-x))


_erf = np.vectorize(math.erf, otypes=[np.float64])

# Tolerances in ULP against the correctly rounded result. Measured maxima over these tests
# and 6*10^5 random inputs per function: 1 ULP for exp/exp2/expm1/log/log2/log10/log1p/tanh/
# sin/cos (exact reductions, polynomials good to < 0.5 ULP, one or two final roundings) and
# 2 ULP for logistic and logaddexp (built from exp and log1p; logaddexp's cancellation is
# measured in ULPs of its larger input, see check_ulp). One ULP is added on top of each for
# targets without FMA, where llvm.fmuladd rounds twice. C library calls: 4 ULP (glibc's
# double cbrt is 3 ULP off here, its other float/double functions here at most 2; other C
# libraries may be a little worse); sqrt and nextafter are exact.
RECORDS = [
    Record("exp", np.exp, 2, 2),
    Record("exp2", np.exp2, 2, 2),
    Record("expm1", np.expm1, 2, 2),
    Record("log", np.log, 2, 2),
    Record("log2", np.log2, 2, 2),
    Record("log10", np.log10, 2, 2),
    Record("log1p", np.log1p, 2, 2),
    Record("tanh", np.tanh, 2, 2),
    Record("sin", np.sin, 2, 2),
    Record("cos", np.cos, 2, 2),
    Record("logistic", _logistic, 3, 3),
    Record("sqrt", np.sqrt, 0, 0),  # llvm.sqrt is correctly rounded
    Record("logaddexp", np.logaddexp, 3, 3, arity=2),
    *(Record(name, function, 4, 4) for name, function in [
        ("tan", np.tan), ("asin", np.arcsin), ("acos", np.arccos), ("atan", np.arctan),
        ("sinh", np.sinh), ("cosh", np.cosh), ("asinh", np.arcsinh), ("acosh", np.arccosh),
        ("atanh", np.arctanh), ("cbrt", np.cbrt)]),
    Record("erf", _erf, 4, 0),  # float64 calls the same erf as the reference
    Record("atan2", np.arctan2, 4, 4, arity=2),
    Record("hypot", np.hypot, 4, 4, arity=2),
    Record("power", np.power, 4, 4, arity=2),
    Record("nextafter", np.nextafter, 0, 0, arity=2),
]
CASES = [pytest.param(record, dtype, id=f"{record.name}-{dtype}") for record in RECORDS for dtype in DTYPES]


def reference(record: Record, dtype: str, *arrays):
    """The correctly rounded result (long double evaluation, rounded to `dtype`)."""
    with np.errstate(all="ignore"):
        if record.name in ("nextafter", "sqrt"):  # IEEE-exact in the dtype itself
            return record.reference(*arrays)
        if record.name == "erf":
            return _erf(*[array.astype(np.float64) for array in arrays]).astype(dtype)
        return np.asarray(record.reference(*[array.astype(WIDE) for array in arrays])).astype(dtype)


@functools.cache
def compiled(name: str, dtype: str, vector: bool, **options):
    """JIT-compile a loop applying MATH_FUNCTIONS[name, dtype]; return a NumPy-level runner."""
    entry = llvm_math.math_function(name, dtype)
    lanes = LANES[dtype] if vector else 1
    element = IR_TYPES[dtype]
    value_type = ir.VectorType(element, lanes) if vector else element
    symbol = f"math_{name}_{dtype}_{'vector' if vector else 'scalar'}_{len(options)}"
    module = ir.Module(name=symbol)
    signature = ir.FunctionType(ir.VoidType(), [ir.PointerType()] * (entry.arity + 1) + [INDEX])
    function = ir.Function(module, signature, name=symbol)
    *pointers, count = function.args
    entry_block, body, done = (function.append_basic_block(label) for label in ("entry", "body", "done"))
    builder = ir.IRBuilder(entry_block)
    builder.cbranch(builder.icmp_signed(">", count, ir.Constant(INDEX, 0)), body, done)
    builder.position_at_end(body)
    index = builder.phi(INDEX)
    index.add_incoming(ir.Constant(INDEX, 0), entry_block)
    operands = [builder.load(builder.gep(pointer, [index], source_etype=element), typ=value_type, align=4)
                for pointer in pointers[:-1]]
    emit = functools.partial(entry.emit, **options) if options else entry
    result = emit(builder, *operands)
    builder.store(result, builder.gep(pointers[-1], [index], source_etype=element), align=4)
    following = builder.add(index, ir.Constant(INDEX, lanes))
    index.add_incoming(following, builder.block)  # the emitter may have added blocks
    builder.cbranch(builder.icmp_signed("<", following, count), body, done)
    builder.position_at_end(done)
    builder.ret_void()
    engine = jit_engine()
    engine.add_module(module)
    kernel = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * (entry.arity + 1), ctypes.c_int64)(
        engine.function_address(symbol))

    def run(*arrays):
        size = arrays[0].size
        padded = -(-size // lanes) * lanes  # vector loops take whole vectors
        inputs = [np.resize(np.ascontiguousarray(array, dtype=dtype), padded) for array in arrays]
        out = np.empty(padded, dtype=dtype)
        kernel(*[array.ctypes.data for array in inputs], out.ctypes.data, padded)
        return out[:size]

    return run


def ulp_distance(actual: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Number of representable values between the two (0 for NaN vs NaN, inf for NaN vs number)."""
    integer = np.int32 if actual.dtype == np.float32 else np.int64
    lowest = np.iinfo(integer).min

    def ordered(values):  # monotonic integer line through -0.0 == +0.0
        bits = values.view(integer)
        return np.where(bits < 0, lowest - bits, bits).astype(np.int64)

    left, right = ordered(actual), ordered(expected)
    same_side = (left >= 0) == (right >= 0)
    distance = np.where(same_side, np.abs(np.where(same_side, left - right, 0)).astype(np.float64),
                        np.abs(left.astype(np.float64)) + np.abs(right.astype(np.float64)))
    nan_actual, nan_expected = np.isnan(actual), np.isnan(expected)
    distance = np.where(nan_actual | nan_expected, np.where(nan_actual & nan_expected, 0.0, np.inf), distance)
    return distance


def check_ulp(record: Record, dtype: str, arrays, actual):
    expected = reference(record, dtype, *arrays)
    assert actual.shape == expected.shape
    assert actual.dtype == expected.dtype
    distance = ulp_distance(actual, expected)
    if record.name == "logaddexp":
        # max(a, b) + log1p(e^-|a-b|) cancels when the two terms nearly cancel (NumPy's own
        # result is then 4 ULP off too): count ULPs of the larger input there.
        scale = np.maximum(np.abs(expected), np.abs(np.fmax(*arrays)))
        with np.errstate(all="ignore"):
            absolute = np.abs(actual.astype(np.float64) - expected) / np.spacing(scale.astype(dtype))
        distance = np.where(np.isfinite(absolute), np.minimum(distance, absolute), distance)
    worst = int(np.argmax(distance)) if distance.size else 0
    assert distance.size == 0 or distance[worst] <= record.tolerance(dtype), (
        f"{record.name}({', '.join(repr(array[worst]) for array in arrays)}) = {actual[worst]!r}, "
        f"expected {expected[worst]!r}: {distance[worst]} ULP > {record.tolerance(dtype)}"
    )


def edge_values(dtype: str) -> np.ndarray:
    """NaN, ±inf, ±0, subnormals, ±max, thresholds of exp/log/tanh/sin, multiples of pi/2."""
    info = np.finfo(dtype)
    cast = np.dtype(dtype).type
    values = [np.nan, np.inf, -np.inf, 0.0, -0.0, info.max, info.tiny, info.smallest_subnormal,
              info.tiny / 2, info.tiny - info.smallest_subnormal, 1.0, 0.5, 2.0, 3.0, 1e-3, 0.1, 9.0, 10.0,
              11.0, 20.0, 22.0, 23.0, 0.625, 0.3465, 0.3467, 0.7, 1e4, 1e5, 1e6, 2.0**20, 1e7, 1e15, 1e30,
              np.log(info.max), np.log(info.tiny), np.log(info.smallest_subnormal),
              np.log(info.smallest_subnormal) - 0.7, np.log2(info.max), np.log2(info.tiny) - info.nmant,
              info.eps, info.eps / 2, 1 - info.epsneg, 1 + info.eps]
    values += [k * np.pi / 2 for k in (1, 2, 3, 4, 5, 7, 10, 100, 1000, 12345, 65536, 100000, 2**19 + 1)]
    base = np.array([cast(v) for v in values if abs(v) <= info.max], dtype=dtype)
    base = np.concatenate([base, -base])
    with np.errstate(all="ignore"):
        neighbors = [np.nextafter(base, cast(np.inf)), np.nextafter(base, cast(-np.inf))]
    return np.concatenate([base, *neighbors, np.array([-1.0, 1 - info.epsneg, -1 - info.eps], dtype=dtype)])


@pytest.mark.parametrize("record, dtype", CASES)
def test_edge_values_within_tolerance(record, dtype):
    values = edge_values(dtype)
    if record.arity == 1:
        arrays = (values,)
    else:  # every pair of a shorter list of edge values
        few = values[:: max(1, len(values) // 40)]
        arrays = tuple(np.array(column, dtype=dtype) for column in zip(*itertools.product(few, few)))
    for vector in (False, True):
        check_ulp(record, dtype, arrays, compiled(record.name, dtype, vector)(*arrays))


SPECIAL_INPUTS = [np.nan, np.inf, -np.inf, 0.0, -0.0, -1.0, -2.0, 1.0, 1e4, -1e4, 1e30, -1e30]


@pytest.mark.parametrize("record, dtype", [case for case in CASES if case.values[0].arity == 1])
def test_special_values_exactly(record, dtype):
    """exp(NaN) = NaN, exp(±inf) = inf/0, log(0) = -inf, log(-1) = NaN, tanh(-0.0) = -0.0, ..."""
    values = np.array(SPECIAL_INPUTS, dtype=dtype)
    expected = reference(record, dtype, values)
    for vector in (False, True):
        actual = compiled(record.name, dtype, vector)(values)
        np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected))
        finite_or_infinite = ~np.isnan(expected)
        exact = np.isinf(expected) | (expected == 0)
        # Infinities and zeros (with their sign) exactly; other values within tolerance.
        assert (actual[exact] == expected[exact]).all(), (values[exact], actual[exact], expected[exact])
        np.testing.assert_array_equal(np.signbit(actual[exact]), np.signbit(expected[exact]))
        check_ulp(record, dtype, (values[finite_or_infinite],), actual[finite_or_infinite])


@pytest.mark.parametrize("dtype", DTYPES)
def test_logaddexp_special_pairs(dtype):
    cast = np.dtype(dtype).type
    pairs = [(np.inf, np.inf), (-np.inf, -np.inf), (np.inf, -np.inf), (-np.inf, 1.0), (np.nan, 1.0),
             (1.0, np.nan), (0.0, 0.0), (1e30, -1e30)]
    left, right = (np.array([cast(pair[side]) for pair in pairs]) for side in (0, 1))
    with np.errstate(invalid="ignore"):
        expected = np.logaddexp(left, right)
    for vector in (False, True):
        actual = compiled("logaddexp", dtype, vector)(left, right)
        np.testing.assert_array_equal(actual, expected)  # NaN positions match too


@pytest.mark.parametrize("record, dtype", CASES)
@given(data=st.data())
def test_random_arrays_within_tolerance(record, dtype, data):
    size = data.draw(st.integers(min_value=1, max_value=48))
    arrays = tuple(data.draw(hnp.arrays(dtype, size, elements=elements(dtype))) for _ in range(record.arity))
    vector = data.draw(st.booleans())
    check_ulp(record, dtype, arrays, compiled(record.name, dtype, vector)(*arrays))


@pytest.mark.parametrize("dtype", DTYPES)
def test_vector_and_scalar_code_agree_bit_for_bit(dtype):
    """One emitter, two operand shapes: the vector code is the scalar code lane by lane."""
    values = np.concatenate([edge_values(dtype), np.linspace(-30, 30, 203, dtype=dtype)])
    for name in ("exp", "expm1", "log", "log1p", "tanh", "sin", "cos", "log10", "logaddexp"):
        operands = (values,) * llvm_math.math_function(name, dtype).arity
        scalar = compiled(name, dtype, False)(*operands)
        vector = compiled(name, dtype, True)(*operands)
        np.testing.assert_array_equal(scalar.view(f"u{scalar.itemsize}"), vector.view(f"u{vector.itemsize}"))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_cos_without_the_large_argument_paths(name, dtype):
    """large_arguments='nan': the same results below 2^20, NaN from there on."""
    values = np.array([0.5, -3.0, 1e4, 2.0**20 - 1, -(2.0**20 - 1), 2.0**20, 2.0**21, 1e30, np.inf],
                      dtype=dtype)
    fast = compiled(name, dtype, False, large_arguments="nan")(values)
    exact = compiled(name, dtype, False)(values)
    np.testing.assert_array_equal(fast[:5], exact[:5])
    assert np.isnan(fast[5:]).all()
    assert not np.isnan(exact[5:-1]).any()


def test_float32_sin_cos_reduce_huge_arguments_exactly():
    """The table reduction: float32 arguments over the whole exponent range, to 1 ULP."""
    rng = np.random.default_rng(7)
    magnitudes = np.exp(rng.uniform(np.log(2.0**20), np.log(3.4e38), 4000))
    values = (magnitudes * rng.choice([-1.0, 1.0], magnitudes.size)).astype(np.float32)
    # 16367173 * 2^72 lies within 2^-29 of a multiple of pi/2 (a known hard case for reduction)
    values = np.concatenate([values, np.float32([16367173 * 2.0**72, np.finfo(np.float32).max])])
    for name in ("sin", "cos"):
        record = next(record for record in RECORDS if record.name == name)
        for vector in (False, True):
            check_ulp(record, "float32", (values,), compiled(name, "float32", vector)(values))


def test_two_over_pi_bits_match_the_double_constant():
    bits = math_trig._two_over_pi_bits(200)
    assert bits >> (200 - 52) == int(math_trig.TWO_OVER_PI * 2.0**52)
    assert hex(bits).startswith("0xa2f9836e4e441529fc2757d1f534ddc0db6295993c439041fe")  # fdlibm's ipio2


def straight_line_loop(name: str, dtype: str) -> str:
    """The optimized IR of a scalar loop over MATH_FUNCTIONS[name, dtype]."""
    entry = llvm_math.math_function(name, dtype)
    element = IR_TYPES[dtype]
    module = ir.Module(name=f"vectorize_{name}")
    function = ir.Function(module, ir.FunctionType(
        ir.VoidType(), [ir.PointerType()] * (entry.arity + 1) + [INDEX]), name="loop")
    *pointers, count = function.args
    for pointer in pointers:
        pointer.add_attribute("noalias")
    first, body, done = (function.append_basic_block(label) for label in ("entry", "body", "done"))
    builder = ir.IRBuilder(first)
    builder.cbranch(builder.icmp_signed(">", count, ir.Constant(INDEX, 0)), body, done)
    builder.position_at_end(body)
    index = builder.phi(INDEX)
    index.add_incoming(ir.Constant(INDEX, 0), first)
    operands = [builder.load(builder.gep(pointer, [index], source_etype=element), typ=element)
                for pointer in pointers[:-1]]
    builder.store(entry(builder, *operands), builder.gep(pointers[-1], [index], source_etype=element))
    following = builder.add(index, ir.Constant(INDEX, 1))
    index.add_incoming(following, builder.block)
    builder.cbranch(builder.icmp_signed("<", following, count), body, done)
    builder.position_at_end(done)
    builder.ret_void()
    parsed = parse_module(module)
    optimize(parsed, host_target_machine())
    return str(parsed)


@pytest.mark.parametrize("name", [name for (name, dtype), entry in llvm_math.MATH_FUNCTIONS.items()
                                  if dtype == "float32" and entry.straight_line])
def test_straight_line_functions_vectorize_in_float32_loops(name):
    text = straight_line_loop(name, "float32")
    calls = set(re.findall(r"call [^@]*@([\w.]+)", text))
    assert all(callee.startswith("llvm.") for callee in calls), f"{name} calls {calls}"
    if name in ("sin", "cos") and "+avx2" not in host_cpu_features():
        return  # their table loads need gathers to vectorize well; the cost model may say no
    assert re.search(r"<(4|8|16) x float>", text), f"{name}: the loop was not vectorized"


def test_table_names_are_hlo_ops_with_matching_arity():
    not_yet_ops = {"logistic", "erf"}  # emitters ready for ops lazyarr does not define yet
    for (name, dtype), entry in llvm_math.MATH_FUNCTIONS.items():
        assert dtype in DTYPES
        assert entry.name == name and entry.dtype == dtype
        if name not in not_yet_ops:
            assert hlo_op.get(name).arity == entry.arity, name
    assert {record.name for record in RECORDS} == {name for name, _ in llvm_math.MATH_FUNCTIONS}


def test_lookup_errors_say_what_exists():
    with pytest.raises(KeyError, match="compute float16 in float32"):
        llvm_math.math_function("exp", "float16")
    with pytest.raises(KeyError, match="known: .*tanh"):
        llvm_math.math_function("gamma", "float32")
    function = ir.Function(ir.Module(), ir.FunctionType(ir.VoidType(), []), "f")
    builder = ir.IRBuilder(function.append_basic_block())
    with pytest.raises(TypeError, match="takes 2 operands, got 1"):
        llvm_math.MATH_FUNCTIONS["atan2", "float32"](builder, ir.Constant(ir.FloatType(), 1.0))
    with pytest.raises(TypeError, match="compute float16 in float32"):
        llvm_math.emit_exp(builder, ir.Constant(ir.HalfType(), 1.0))


class _ScalarContext:
    """What the math tables ask of an emitter context: a module, a builder, intrinsics."""

    def __init__(self, module, builder):
        self.module, self.builder = module, builder

    def intrinsic(self, name, *arguments):
        kind = arguments[0].type
        signature = ir.FunctionType(kind, [argument.type for argument in arguments])
        return self.builder.call(self.module.declare_intrinsic(name, [kind], signature), arguments)


@functools.cache
def _gpu_table_hypotf():
    """The GPU math table's float32 hypot as a host function `float f(float, float)`: its IR is
    target-independent arithmetic (double multiplies, adds, sqrt, a narrowing), so the host
    computes what the GPU does."""
    from lazyarr import dtypes
    from lazyarr.backends.llvm.math_table import gpu_math

    module = ir.Module(name="gpu_hypotf")
    function = ir.Function(module, ir.FunctionType(ir.FloatType(), [ir.FloatType()] * 2), name="gpu_hypotf")
    builder = ir.IRBuilder(function.append_basic_block())
    builder.ret(gpu_math(_ScalarContext(module, builder), "hypot", dtypes.float32, *function.args))
    text = str(module)
    assert "__nv_" not in text  # computed inline, not libdevice's 3-ulp __nv_hypotf
    engine = jit_engine()
    engine.add_module(parse_module(text))
    return ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_float, ctypes.c_float)(engine.function_address("gpu_hypotf"))


@given(st.lists(st.tuples(elements(np.float32), elements(np.float32)), min_size=1, max_size=50))
def test_gpu_float32_hypot_is_numpys_bit_for_bit(pairs):
    """NumPy's float32 hypot is the C library's hypotf (glibc: correctly rounded); the GPU's
    must equal it exactly, or complex64 `sign` (z / hypot) differs from NumPy's in the last bit
    (found on an H200 with libdevice's hypotf). NaN against NaN compares equal; inf beats NaN."""
    hypotf = _gpu_table_hypotf()
    x, y = (np.array(values, dtype=np.float32) for values in zip(*pairs))
    got = np.array([hypotf(a, b) for a, b in zip(x.tolist(), y.tolist())], dtype=np.float32)
    with np.errstate(all="ignore"):
        want = np.hypot(x, y)
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.isnan(got), np.isnan(want))
