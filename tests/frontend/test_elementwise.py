"""Every public elementwise function against NumPy, as a table run with hypothesis.

One record per function: its name in `lazyarr.frontend.elementwise`, the NumPy counterpart,
its arity and the dtypes tried. Which dtype combinations NumPy accepts is asked of NumPy
itself (`ufunc.resolve_dtypes`, or a call on tiny arrays for the non-ufunc functions); lazyarr
must raise TypeError exactly where NumPy does. Values are drawn with hypothesis
(`mutually_broadcastable_shapes`: 0-d, empty and size-1 dims; edge values NaN, +-inf, -0.0,
integer extremes) and each result is checked for shape, then dtype, then values.

Tolerance: none, except for the few kernels listed in LAYOUT_DEPENDENT. The interpreter
evaluates every op with NumPy's own function on operands converted exactly as NumPy's loops
convert them, so results are bit-identical: values compare with NaN == NaN, complex parts
compare separately and zeros compare by sign.

Operand kinds: lazy + lazy, lazy + NumPy array, NumPy array + lazy (function form), Python
scalars on either side (NEP 50 weak promotion, OverflowError for out-of-range ints), the
Python operators (including `numpy_array + lazy`, reflected) and NumPy ufuncs called on lazy
operands (`np.add(numpy_array, lazy)`, only once Array defines `__array_ufunc__`).
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context
from hypothesis.extra import numpy as hnp

import lazyarr as la
from lazyarr import dtypes
from lazyarr.frontend import elementwise
from lazyarr.frontend.array import Array
from lazyarr.frontend.core import as_array
from tests.assertions import assert_identical
from tests.strategies import elements

ALL_DTYPES = tuple(dtypes.ALL)


@dataclass(frozen=True)
class Record:
    """One public function: how to call it and the NumPy function it must equal."""

    name: str                      # attribute of lazyarr.frontend.elementwise
    numpy_function: Callable       # NumPy's counterpart, called with the same arguments
    arity: int                     # number of array operands
    dtypes: tuple = ALL_DTYPES     # dtypes tried for every operand (acceptance asked of NumPy)
    tolerance: int | None = None   # ulps allowed for results of the kinds below; None: exact
    tolerance_kinds: str = "fc"    # result dtype kinds the tolerance applies to
    keywords: st.SearchStrategy = st.just({})   # keyword arguments drawn per example
    zero_signs: bool = True        # whether the signs of zero results are NumPy's own

    @property
    def function(self):
        return getattr(elementwise, self.name)

    @property
    def is_ufunc(self) -> bool:
        return isinstance(self.numpy_function, np.ufunc)


UNARY_UFUNCS = """
    negative positive absolute abs fabs sign sqrt cbrt square reciprocal exp exp2 expm1 log log2
    log10 log1p sin cos tan arcsin arccos arctan asin acos atan sinh cosh tanh arcsinh arccosh
    arctanh asinh acosh atanh floor ceil trunc rint isnan isinf isfinite signbit logical_not
    invert bitwise_not bitwise_invert conjugate conj spacing bitwise_count
""".split()
BINARY_UFUNCS = """
    add subtract multiply divide true_divide floor_divide remainder mod fmod gcd lcm ldexp power pow float_power
    arctan2 atan2 hypot maximum minimum fmax fmin copysign nextafter logaddexp logical_and
    logical_or logical_xor bitwise_and bitwise_or bitwise_xor left_shift right_shift
    bitwise_left_shift bitwise_right_shift equal not_equal less less_equal greater greater_equal
""".split()

_TOLERANCES = st.fixed_dictionaries({
    "rtol": st.sampled_from([1e-05, 0.0, 0.25]),
    "atol": st.sampled_from([1e-08, 0.0, 1.0]),
    "equal_nan": st.booleans(),
})

# NumPy picks its SIMD kernel by memory layout (contiguous, stride-0 "scalar" operand, other
# strides), and a few kernels round differently from each other: complex multiply and divide
# use FMA in some kernels only; float power uses SVML's vector pow for arrays but exact
# shortcuts for a scalar exponent (x ** 0.5 is sqrt(x), x ** -1 is 1 / x); float_power calls
# libm's pow (float_power(117, -1) = 0.008547008547008548, power(117.0, -1.0) = ...546, and
# lazyarr has one HLO power op). The interpreter sees lazyarr's strict, broadcast operands
# (a stride-0 view where NumPy saw a size-1 array, and the reverse), so for these results a few
# ulps (normwise for complex) are allowed, and where one kernel overflows to inf the other may
# give NaN. Every other record is bit-identical.
LAYOUT_DEPENDENT = {  # name: (ulps, result kinds)
    "power": (4, "fc"), "pow": (4, "fc"), "float_power": (4, "fc"),
    "multiply": (4, "c"), "divide": (4, "c"), "true_divide": (4, "c"), "square": (4, "c"),
    "reciprocal": (4, "c"),
}


# On a compiling backend (the CPU's llvmlite code), what may differ from NumPy and why. NumPy's
# own loops differ among themselves here (SIMD vs scalar vs float16 paths), so these are not
# semantics NumPy defines.
COMPILED_ULPS = 4  # transcendental kernels: ours are within 1 ulp of correctly rounded, NumPy's
#                    (SVML / libm) within 1-4 ulp; their difference stays within 4 ulp.
COMPILED_TRANSCENDENTAL = set("""
    cbrt exp exp2 expm1 log log2 log10 log1p sin cos tan arcsin arccos arctan asin acos atan sinh
    cosh tanh arcsinh arccosh arctanh asinh acosh atanh arctan2 atan2 hypot logaddexp power pow
    float_power angle
""".split())
# The GPU's float64 hypot is libdevice's (within 2 ulp of correctly rounded, NumPy's glibc hypot
# is correctly rounded; float32's is computed as glibc does, bit for bit): complex128 sign,
# z / hypot(z), then differs by hypot's 2 ulp and the division's rounding.
GPU_COMPLEX128_SIGN_ULPS = 3
# Which of two equal zeros maximum/minimum return is loop-dependent in NumPy itself.
COMPILED_ANY_ZERO_SIGN = {"maximum", "minimum", "fmax", "fmin", "clip"}
# Integer reciprocal is `(int)(1.0 / x)`: for x = 0 a float -> int cast of inf, undefined in C;
# NumPy on x86 gives 0 or INT_MIN, compiled code saturates (README: Differences from NumPy).
COMPILED_SATURATING_CASTS = {"reciprocal"}


def compiled_backend() -> bool:
    import lazyarr

    return lazyarr.get_backend_name() != "interpreter"


def _on_gpu() -> bool:
    import lazyarr

    return lazyarr.get_backend_name() == "gpu"


def _ufunc_record(name, arity):
    ulps, kinds = LAYOUT_DEPENDENT.get(name, (None, "fc"))
    return Record(name, getattr(np, name), arity, tolerance=ulps, tolerance_kinds=kinds)


RECORDS = (
    [_ufunc_record(name, 1) for name in UNARY_UFUNCS]
    + [_ufunc_record(name, 2) for name in BINARY_UFUNCS]
    + [
        Record("real", np.real, 1),
        Record("imag", np.imag, 1),
        Record("angle", np.angle, 1, keywords=st.fixed_dictionaries({"deg": st.booleans()})),
        Record("where", np.where, 3),
        # NumPy's clip loop has two paths whose zero signs differ: np.clip(-0.0, 0.0, 1.0) is
        # -0.0 with scalar bounds, +0.0 with array bounds; lazyarr's bounds are broadcast views,
        # so size-1 operands may take the other path. Values are checked, zero signs are not.
        Record("clip", np.clip, 3, zero_signs=False),
        Record("round", np.round, 1,
               keywords=st.fixed_dictionaries({"decimals": st.integers(-3, 3)})),
        Record("isclose", np.isclose, 2, keywords=_TOLERANCES),
        Record("allclose", np.allclose, 2, keywords=_TOLERANCES),
    ]
)
RECORD_BY_NAME = {record.name: record for record in RECORDS}
BINARY_UFUNC_RECORDS = [record for record in RECORDS if record.is_ufunc and record.arity == 2]

# Integer power with a negative exponent *array*: NumPy raises when it sees the data, lazyarr
# cannot raise without evaluating, so it defines the value (README "Differences from NumPy";
# pinned by test_integer_power_by_negative_array_is_defined). Value tests draw exponents >= 0.
POWER_NAMES = {"power", "pow"}


def _ids(records):
    return [record.name for record in records]


# --- NumPy as the oracle ---------------------------------------------------------------------


def numpy_call(function, *args, **kwargs):
    """NumPy's result, or the exception it raises (floating-point warnings silenced)."""
    with np.errstate(all="ignore"):
        try:
            return function(*args, **kwargs), None
        except Exception as error:  # noqa: BLE001  (any NumPy error is the expected error)
            return None, error


@functools.cache
def numpy_accepts(record: Record, combination: tuple, keywords_key=()) -> bool:
    """Whether NumPy has a loop for these operand dtypes (its own type resolution)."""
    if record.is_ufunc:
        ufunc = record.numpy_function
        try:
            ufunc.resolve_dtypes(combination + (None,) * ufunc.nout)
        except TypeError:
            return False
        return True
    operands = [np.zeros(1, dtype) for dtype in combination]
    _, error = numpy_call(record.numpy_function, *operands, **dict(keywords_key))
    return not isinstance(error, TypeError)


@functools.cache
def accepted_combinations(record: Record) -> list[tuple]:
    return [
        combination
        for combination in itertools.product(record.dtypes, repeat=record.arity)
        if numpy_accepts(record, combination)
    ]


# --- assertions ------------------------------------------------------------------------------


def assert_zero_signs(values: np.ndarray, expected: np.ndarray) -> None:
    zeros = expected == 0
    np.testing.assert_array_equal(np.signbit(values[zeros]), np.signbit(expected[zeros]),
                                  err_msg="signs of zeros differ")


def assert_close_in_ulps(values: np.ndarray, expected: np.ndarray, ulps: int) -> None:
    """Equal, or both finite within `ulps` of |expected| (normwise for complex), or both non-finite."""
    wide = np.complex128 if expected.dtype.kind == "c" else np.float64
    got, want = values.astype(wide), expected.astype(wide)
    equal = (got == want) | (np.isnan(got) & np.isnan(want))
    finite = np.isfinite(got) & np.isfinite(want)
    with np.errstate(all="ignore"):
        close = np.abs(got - want) <= ulps * np.finfo(expected.dtype).eps * np.abs(want)
    overflowed = ~np.isfinite(got) & ~np.isfinite(want)
    bad = ~(equal | (finite & close) | overflowed)
    assert not bad.any(), f"beyond {ulps} ulps: got {values[bad]}, NumPy {expected[bad]}"


def assert_same(result, expected, record=None) -> None:
    """Shape, then dtype, then values: bit-identical (NaN == NaN, signed zeros, complex parts),
    or within the ulps a record justifies (LAYOUT_DEPENDENT)."""
    assert isinstance(result, Array), f"expected a lazy Array, got {type(result).__name__}"
    expected = np.asarray(expected)
    assert result.shape == expected.shape, (result.shape, expected.shape)
    assert result.dtype == expected.dtype, (result.dtype, expected.dtype)
    values = np.asarray(result)
    assert values.shape == expected.shape and values.dtype == expected.dtype
    compiled = record is not None and compiled_backend()
    if compiled and record.name in COMPILED_SATURATING_CASTS and expected.dtype.kind in "iu":
        limits = np.iinfo(expected.dtype)
        saturated = (values == limits.max) | (values == limits.min)
        values, expected = values[~saturated], expected[~saturated]
    if compiled and record.name in COMPILED_TRANSCENDENTAL and expected.dtype.kind in "fc":
        assert_close_in_ulps(values, expected, max(COMPILED_ULPS, record.tolerance or 0))
        return
    if record is not None and record.tolerance is not None and expected.dtype.kind in record.tolerance_kinds:
        assert_close_in_ulps(values, expected, record.tolerance)
        return
    if record is not None and record.name == "sign" and expected.dtype == np.complex128 and _on_gpu():
        assert_close_in_ulps(values, expected, GPU_COMPLEX128_SIGN_ULPS)
        return
    zero_signs = record is None or (record.zero_signs and not (compiled and record.name in COMPILED_ANY_ZERO_SIGN))
    parts = [(values.real, expected.real), (values.imag, expected.imag)] if expected.dtype.kind == "c" \
        else [(values, expected)]
    for got, want in parts:
        np.testing.assert_array_equal(got, want, strict=True)
        if want.dtype.kind == "f" and zero_signs:
            assert_zero_signs(got, want)


def builtin_exception_type(error: Exception) -> type:
    """The Python exception NumPy's error derives from (UFuncTypeError -> TypeError)."""
    return next(kind for kind in type(error).__mro__ if kind.__module__ == "builtins")


def check_against_numpy(call_lazy, call_numpy, record=None):
    """Run both; the lazy call must raise the same exception type NumPy raises, or match."""
    expected, error = numpy_call(call_numpy)
    if error is not None:
        if currently_in_test_context():
            note(f"NumPy raises {type(error).__name__}: {error}")
        with pytest.raises(builtin_exception_type(error)):
            np.asarray(call_lazy())
        return
    result = call_lazy()
    if isinstance(expected, (bool, np.bool_)) and not isinstance(result, Array):
        assert type(result) is bool and result == bool(expected)  # allclose gives a Python bool
        return
    assert_same(result, expected, record)


# --- strategies ------------------------------------------------------------------------------


def _draw_operands(data, record: Record, combination, shapes):
    operands = []
    for position, (dtype, shape) in enumerate(zip(combination, shapes)):
        value = data.draw(hnp.arrays(dtype, shape, elements=elements(dtype)), label=f"operand {position}")
        operands.append(value)
    return _without_negative_integer_exponents(record, operands)


def _without_negative_integer_exponents(record: Record, operands, exponent_position=1):
    if record.name not in POWER_NAMES or len(operands) <= exponent_position:
        return operands
    exponent = operands[exponent_position]
    if isinstance(exponent, np.ndarray) and exponent.dtype.kind == "i":
        operands = list(operands)
        # ~e == -(e + 1) maps [min, -1] onto [0, max] without overflowing at the minimum.
        operands[exponent_position] = np.where(exponent < 0, ~exponent, exponent).astype(exponent.dtype)
    return operands


def broadcastable_shapes(arity):
    return hnp.mutually_broadcastable_shapes(num_shapes=arity, min_dims=0, max_dims=3, min_side=0, max_side=4)


# --- completeness ----------------------------------------------------------------------------


def test_every_public_elementwise_function_has_a_record():
    public = set(getattr(elementwise, "__all__", None) or [*elementwise.UFUNCS, "real", "imag", "angle",
                                                            "where", "clip", "round", "isclose", "allclose"])
    assert public - set(RECORD_BY_NAME) == set(), "public elementwise functions without a table record"
    assert set(RECORD_BY_NAME) - public == set(), "table records for functions that are not public"
    assert len(RECORDS) == len(RECORD_BY_NAME), "a function has two records"


@pytest.mark.parametrize("record", RECORDS, ids=_ids(RECORDS))
def test_record_arity_matches_numpy(record):
    if record.is_ufunc:
        assert record.numpy_function.nin == record.arity


# --- dtypes: accepted exactly where NumPy accepts, with NumPy's result dtype ---------------------


@pytest.mark.parametrize("record", RECORDS, ids=_ids(RECORDS))
def test_dtype_acceptance_and_result_dtype_match_numpy(record):
    """Every dtype combination: TypeError exactly where NumPy has no loop, else NumPy's dtype.

    Nothing is evaluated: the result dtype of a lazy array is known when it is built.
    """
    leaves = {dtype: as_array(np.zeros(1, dtype)) for dtype in record.dtypes}
    mismatches = []
    for combination in itertools.product(record.dtypes, repeat=record.arity):
        accepted = numpy_accepts(record, combination)
        try:
            result = record.function(*(leaves[dtype] for dtype in combination))
        except TypeError as error:
            if accepted:
                mismatches.append(f"{combination}: NumPy accepts, lazyarr raised {error}")
            continue
        if not accepted:
            mismatches.append(f"{combination}: NumPy raises TypeError, lazyarr accepted")
            continue
        if record.name == "allclose":
            continue  # a Python bool, no dtype
        expected, _ = numpy_call(record.numpy_function, *(np.zeros(1, dtype) for dtype in combination))
        if result.dtype != np.asarray(expected).dtype:
            mismatches.append(f"{combination}: dtype {result.dtype}, NumPy {np.asarray(expected).dtype}")
    assert not mismatches, "\n".join(mismatches[:20])


# --- values ------------------------------------------------------------------------------------


def _function_forms(record, operands, keywords):
    """lazy+lazy, lazy+NumPy, NumPy+lazy (all positions lazy, then each position NumPy)."""
    function = record.function
    forms = {"all lazy": lambda: function(*(as_array(value) for value in operands), **keywords)}
    for position in range(record.arity):
        def mixed(position=position):
            mixed_operands = [value if index == position else as_array(value)
                              for index, value in enumerate(operands)]
            return function(*mixed_operands, **keywords)
        if record.arity > 1:
            forms[f"NumPy operand {position}"] = mixed
    return forms


@pytest.mark.parametrize("record", RECORDS, ids=_ids(RECORDS))
@given(data=st.data())
def test_values_match_numpy(record, data):
    combination = data.draw(st.sampled_from(accepted_combinations(record)), label="dtypes")
    shapes = data.draw(broadcastable_shapes(record.arity), label="shapes").input_shapes
    operands = _draw_operands(data, record, combination, shapes)
    keywords = data.draw(record.keywords, label="keywords")
    for form, call in _function_forms(record, operands, keywords).items():
        note(f"form: {form}")
        check_against_numpy(call, lambda: record.numpy_function(*operands, **keywords), record)


# --- Python scalars: weak promotion (NEP 50) -------------------------------------------------

PYTHON_INTEGERS = st.one_of(
    st.integers(-(2**65), 2**65),
    st.sampled_from([0, 1, -1, 2, 127, 128, -128, -129, 255, 256, 300, -300, 2**15, 2**31, 2**32,
                     2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64 - 1, 2**64]),
)
PYTHON_SCALARS = st.one_of(
    st.booleans(),
    PYTHON_INTEGERS,
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([-0.0, 0.0, 0.5, 2.5, 1e300, -1e300, float("nan"), float("inf")]),
    st.complex_numbers(allow_nan=True, allow_infinity=True),
    st.sampled_from([1j, complex(-0.0, 0.0), complex(float("nan"), 1.0)]),
)


@pytest.mark.parametrize("record", BINARY_UFUNC_RECORDS, ids=_ids(BINARY_UFUNC_RECORDS))
@given(data=st.data())
def test_python_scalar_operands_match_numpy(record, data):
    dtype = data.draw(st.sampled_from(ALL_DTYPES), label="dtype")
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3), label="shape")
    scalar = data.draw(PYTHON_SCALARS, label="scalar")
    array = data.draw(hnp.arrays(dtype, shape, elements=elements(dtype)), label="array")
    function, numpy_function = record.function, record.numpy_function
    note("array first")
    if record.name in POWER_NAMES and array.size == 0 and type(scalar) is int and scalar < 0:
        scalar = -scalar  # NumPy checks exponents per element; pinned in test_negative_int_power_raises_*
    check_against_numpy(lambda: function(as_array(array), scalar), lambda: numpy_function(array, scalar),
                        record)
    note("scalar first")
    (exponent,) = _without_negative_integer_exponents(record, [scalar, array])[1:]
    check_against_numpy(lambda: function(scalar, as_array(exponent)),
                        lambda: numpy_function(scalar, exponent),
                        record)


@pytest.mark.parametrize("record", [RECORD_BY_NAME["where"], RECORD_BY_NAME["clip"]], ids=["where", "clip"])
@given(data=st.data())
def test_python_scalars_in_where_and_clip(record, data):
    dtype = data.draw(st.sampled_from(ALL_DTYPES), label="dtype")
    array = data.draw(hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=2, max_side=3),
                                 elements=elements(dtype)), label="array")
    first = data.draw(st.one_of(st.none(), PYTHON_SCALARS), label="first scalar") if record.name == "clip" \
        else data.draw(hnp.arrays(np.bool_, array.shape), label="condition")
    second = data.draw(st.one_of(st.none(), PYTHON_SCALARS) if record.name == "clip" else PYTHON_SCALARS,
                       label="second scalar")
    if record.name == "where":
        arguments = (first, array, second)
        if isinstance(second, int) and not isinstance(second, bool) and dtype.kind in "iu":
            info = np.iinfo(dtype)
            if not info.min <= second <= info.max:
                # NumPy 2.4 wraps the int silently (numpy/numpy#27006; NumPy 2.5 raises); lazyarr
                # raises OverflowError like every ufunc. Pinned in test_where_refuses_out_of_range_int.
                return
        lazy_arguments = (as_array(first), as_array(array), second)
    else:
        arguments = (array, first, second)
        lazy_arguments = (as_array(array), first, second)
    check_against_numpy(lambda: record.function(*lazy_arguments), lambda: record.numpy_function(*arguments),
                        record)


def test_int8_array_plus_300_raises_overflow_error_like_numpy():
    array = np.arange(3, dtype=np.int8)
    with pytest.raises(OverflowError):
        np.add(array, 300)
    with pytest.raises(OverflowError, match="300"):
        elementwise.add(as_array(array), 300)
    with pytest.raises(OverflowError, match="300"):
        as_array(array) + 300


@pytest.mark.parametrize("scalar", [np.float64(1.5), np.complex128(1j), np.float32(2.0), np.int64(-3)],
                         ids=lambda value: type(value).__name__)
@pytest.mark.parametrize("dtype", [np.int8, np.float16, np.float32], ids=str)
def test_numpy_scalars_are_strong_operands(dtype, scalar):
    """np.float64 subclasses float but is a strong float64 operand (NEP 50)."""
    array = np.array([1, 2, 3], dtype)
    for name in ("add", "maximum", "less", "copysign"):
        function, numpy_function = getattr(elementwise, name), getattr(np, name)
        check_against_numpy(lambda: function(as_array(array), scalar), lambda: numpy_function(array, scalar))
        check_against_numpy(lambda: function(scalar, as_array(array)), lambda: numpy_function(scalar, array))
    check_against_numpy(lambda: elementwise.where(as_array(array > 1), as_array(array), scalar),
                        lambda: np.where(array > 1, array, scalar))


def test_weak_scalars_keep_the_array_dtype():
    assert elementwise.multiply(as_array(np.ones(2, np.float32)), 2.0).dtype == np.float32
    assert elementwise.add(as_array(np.ones(2, np.int8)), True).dtype == np.int8
    assert elementwise.add(as_array(np.ones(2, np.uint8)), 2).dtype == np.uint8
    assert elementwise.add(as_array(np.ones(2, np.int8)), 2.0).dtype == np.float64
    assert elementwise.add(as_array(np.ones(2, np.float16)), 1j).dtype == np.complex64


# --- operators ----------------------------------------------------------------------------------

BINARY_OPERATORS = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "&": operator.and_,
    "|": operator.or_, "^": operator.xor, "<<": operator.lshift, ">>": operator.rshift,
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
    ">": operator.gt, ">=": operator.ge,
}
UNARY_OPERATORS = {"-x": operator.neg, "+x": operator.pos, "~x": operator.invert, "abs(x)": abs}
OPERATOR_FUNCTIONS = {  # the elementwise function each operator forwards to
    "+": "add", "-": "subtract", "*": "multiply", "/": "divide", "//": "floor_divide",
    "%": "remainder", "**": "power", "&": "bitwise_and", "|": "bitwise_or", "^": "bitwise_xor",
    "<<": "left_shift", ">>": "right_shift", "==": "equal", "!=": "not_equal", "<": "less",
    "<=": "less_equal", ">": "greater", ">=": "greater_equal",
    "-x": "negative", "+x": "positive", "~x": "invert", "abs(x)": "absolute",
}


@functools.cache
def operator_combinations(symbol: str) -> list[tuple]:
    function = BINARY_OPERATORS[symbol]
    return [
        (left, right) for left, right in itertools.product(ALL_DTYPES, repeat=2)
        if not isinstance(numpy_call(function, np.zeros(1, left), np.zeros(1, right))[1], TypeError)
    ]


@pytest.mark.parametrize("symbol", list(BINARY_OPERATORS))
@given(data=st.data())
def test_binary_operators_match_numpy(symbol, data):
    function = BINARY_OPERATORS[symbol]
    left_dtype, right_dtype = data.draw(st.sampled_from(operator_combinations(symbol)), label="dtypes")
    shapes = data.draw(broadcastable_shapes(2), label="shapes").input_shapes
    left = data.draw(hnp.arrays(left_dtype, shapes[0], elements=elements(left_dtype)), label="left")
    right = data.draw(hnp.arrays(right_dtype, shapes[1], elements=elements(right_dtype)), label="right")
    if symbol == "**":
        left, right = _without_negative_integer_exponents(RECORD_BY_NAME["power"], [left, right])
    scalar = data.draw(PYTHON_SCALARS, label="scalar")
    expected_call = lambda: function(left, right)  # noqa: E731
    forms = {
        "lazy op lazy": (lambda: function(as_array(left), as_array(right)), expected_call),
        "lazy op numpy": (lambda: function(as_array(left), right), expected_call),
        # ndarray defers to Array (higher __array_priority__ / __array_ufunc__): reflected.
        "numpy op lazy": (lambda: function(left, as_array(right)), expected_call),
        "lazy op scalar": (lambda: function(as_array(left), scalar), lambda: function(left, scalar)),
    }
    exponent = _without_negative_integer_exponents(RECORD_BY_NAME["power"], [scalar, right])[1] \
        if symbol == "**" else right
    if symbol == "**" and left.size == 0 and type(scalar) is int and scalar < 0:
        scalar = -scalar  # NumPy checks exponents per element; pinned in test_negative_int_power_raises_*
    forms["scalar op lazy"] = (lambda: function(scalar, as_array(exponent)),
                               lambda: function(scalar, exponent))
    for form, (call_lazy, call_numpy) in forms.items():
        note(f"form: {form}")
        check_against_numpy(call_lazy, call_numpy, RECORD_BY_NAME[OPERATOR_FUNCTIONS[symbol]])


@pytest.mark.parametrize("symbol", list(UNARY_OPERATORS))
@given(data=st.data())
def test_unary_operators_match_numpy(symbol, data):
    function = UNARY_OPERATORS[symbol]
    dtype = data.draw(st.sampled_from(ALL_DTYPES), label="dtype")
    array = data.draw(hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
                                 elements=elements(dtype)), label="array")
    check_against_numpy(lambda: function(as_array(array)), lambda: function(array),
                        RECORD_BY_NAME[OPERATOR_FUNCTIONS[symbol]])


@pytest.mark.parametrize("record", BINARY_UFUNC_RECORDS, ids=_ids(BINARY_UFUNC_RECORDS))
@given(data=st.data())
def test_numpy_ufunc_on_numpy_and_lazy_dispatches_to_lazyarr(record, data):
    """np.add(numpy_array, lazy) must come back lazy and equal: Array.__array_ufunc__."""
    if getattr(Array, "__array_ufunc__", None) is None:
        pytest.skip("Array.__array_ufunc__ is not defined yet; np.<ufunc>(ndarray, lazy) would evaluate")
    combination = data.draw(st.sampled_from(accepted_combinations(record)), label="dtypes")
    shapes = data.draw(broadcastable_shapes(2), label="shapes").input_shapes
    left, right = _draw_operands(data, record, combination, shapes)
    ufunc = record.numpy_function
    check_against_numpy(lambda: ufunc(left, as_array(right)), lambda: ufunc(left, right), record)
    check_against_numpy(lambda: ufunc(as_array(left), right), lambda: ufunc(left, right), record)


# --- pinned differences and specific behaviours ------------------------------------------------------


def test_integer_power_by_a_negative_known_array_raises_like_numpy():
    """NumPy raises on seeing the data; so does lazyarr where the exponent's values are known:
    a NumPy array, an evaluated lazy one, a NumPy integer (np.power, `**`, both operand orders)."""
    base = np.array([1, -1, -1, 2, 0, -3], np.int16)
    exponent = np.array([-3, -3, -2, -1, -1, -2], np.int16)
    with pytest.raises(ValueError):
        np.power(base, exponent)
    for known in (exponent, as_array(exponent), np.int16(-1)):
        with pytest.raises(ValueError, match="negative integer powers"):
            elementwise.power(as_array(base), known)
        with pytest.raises(ValueError, match="negative integer powers"):
            np.power(base, as_array(exponent) if known is exponent else known)
    with pytest.raises(ValueError, match="negative integer powers"):
        as_array(base) ** as_array(exponent)
    np.testing.assert_array_equal(np.asarray(as_array(base) ** as_array(-exponent)), base ** -exponent)


def test_integer_power_by_a_negative_pending_array_is_defined():
    """A pending exponent is not evaluated to be checked (lazy: it cannot look): its kernel
    truncates 1 / x**n to zero where NumPy would raise."""
    base = np.array([1, -1, -1, 2, 0, -3], np.int16)
    exponent = np.array([-3, -3, -2, -1, -1, -2], np.int16)
    pending = as_array(exponent) + np.int16(0)
    result = elementwise.power(as_array(base), pending)
    assert result.dtype == np.int16
    np.testing.assert_array_equal(np.asarray(result), np.array([1, -1, 1, 0, 0, 0], np.int16))


def test_integer_power_by_negative_python_int_raises_like_numpy():
    with pytest.raises(ValueError, match="negative integer powers"):
        elementwise.power(as_array(np.arange(3)), -1)


def test_where_refuses_out_of_range_int():
    """NumPy 2.4 wraps 300 to 44 in int8 (numpy/numpy#27006, raises from NumPy 2.5); lazyarr raises."""
    with pytest.raises(OverflowError):
        elementwise.where(as_array(np.array([True, False])), as_array(np.ones(2, np.int8)), 300)


@pytest.mark.parametrize("value", [300, -300, 2**64, -(2**64)])
@pytest.mark.parametrize("name", ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"])
def test_comparison_with_out_of_range_int_is_exact(name, value):
    """NumPy 2 compares out-of-range Python ints mathematically instead of raising."""
    array = np.array([-128, 0, 127], np.int8)
    expected = getattr(np, name)(array, value)
    assert_same(getattr(elementwise, name)(as_array(array), value), expected)
    assert_same(getattr(elementwise, name)(value, as_array(array)), getattr(np, name)(value, array))


@pytest.mark.parametrize("name", ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"])
def test_int64_uint64_comparison_is_exact(name):
    signed = np.array([-1, 0, 2**63 - 1, -(2**63), 5], np.int64)
    unsigned = np.array([2**64 - 1, 0, 2**63 - 1, 0, 2**63], np.uint64)
    function = getattr(elementwise, name)
    assert_same(function(as_array(signed), as_array(unsigned)), getattr(np, name)(signed, unsigned))
    assert_same(function(as_array(unsigned), as_array(signed)), getattr(np, name)(unsigned, signed))


def test_clip_with_one_or_no_bound():
    array = np.array([-5, 0, 7], np.int8)
    for low, high in [(None, 3), (-1, None), (-1000, 1000), (None, None)]:
        check_against_numpy(lambda: elementwise.clip(as_array(array), low, high),
                            lambda: np.clip(array, low, high), RECORD_BY_NAME["clip"])


@pytest.mark.parametrize("decimals", [-2, -1, 1, 2])
def test_round_complex_rounds_parts_separately(decimals):
    values = np.array([0.35 + 1.25j, -0.0 - 2.675j, complex(np.inf, 0.15), complex(np.nan, -0.0)],
                      np.complex128)
    assert_same(elementwise.round(as_array(values), decimals), np.round(values, decimals))


def test_negative_nan_scalar_keeps_its_sign():
    result = elementwise.copysign(as_array(np.array([1.0, 2.0])), float("-nan"))
    assert_same(result, np.copysign(np.array([1.0, 2.0]), float("-nan")))


def test_core_scalar_constant_keeps_the_sign_of_nan():
    from lazyarr.frontend.core import scalar_constant

    assert np.signbit(scalar_constant(float("-nan"), np.float64).attr("literal").array)


_EDGE_SCALARS = [0.0, -0.0, 1.5, float("nan"), -float("nan"), float("inf"), -float("inf"), 5e-324, 1e-46,
                 65504.0, 65505.0, 3.4028234663852886e38, 3.5e38, 1e300, 0, 1, -1, 127, 128, -129, 255, 256,
                 65504, 65520, 2**31, 2**53 + 1, 2**62 - 1, 2**63 - 1, -(2**63), 2**64 - 1, True, False]
_SCALAR_DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "uint64", "float16", "float32", "float64"]


@pytest.mark.filterwarnings("error")  # a quiet conversion never warns (astype's are silenced)
@settings(max_examples=300, deadline=None)
@given(st.one_of(st.sampled_from(_EDGE_SCALARS), st.floats(), st.integers(-(2**64), 2**64), st.booleans()),
       st.sampled_from(_SCALAR_DTYPES))
def test_core_scalar_constant_is_numpys_astype_bit_for_bit(value, dtype):
    """A Python scalar's constant is `np.asarray(value).astype(dtype)`'s value, whether it takes
    the quiet conversion (in range: no errstate) or astype itself (out of range, NaN to int)."""
    from lazyarr.frontend.core import scalar_constant

    dtype = np.dtype(dtype)
    try:
        with np.errstate(all="ignore"):
            expected = np.asarray(value).astype(dtype)
    except (OverflowError, TypeError, ValueError):  # (an int beyond uint64: NumPy has no array for it)
        return
    literal = scalar_constant(value, dtype).attr("literal").array
    assert literal.dtype == dtype and literal.tobytes() == expected.tobytes()


def test_functions_are_lazy():
    """Building a result evaluates nothing: the operands stay as graph nodes."""
    array = as_array(np.arange(4.0))
    result = elementwise.clip(elementwise.round(elementwise.angle(elementwise.add(array, 1)), 2), 0, 1)
    closeness = elementwise.isclose(result, array)
    assert not result.is_evaluated and not closeness.is_evaluated


MULTI_OPERAND_RECORDS = [record for record in RECORDS if record.arity > 1]


@pytest.mark.parametrize("record", MULTI_OPERAND_RECORDS, ids=_ids(MULTI_OPERAND_RECORDS))
def test_broadcast_errors_name_the_function_and_shapes(record):
    combination = accepted_combinations(record)[-1]
    shapes = [(4,), (3,)] + [()] * (record.arity - 2)
    operands = [as_array(np.zeros(shape, dtype)) for shape, dtype in zip(shapes, combination)]
    with pytest.raises(ValueError) as info:
        record.function(*operands)
    message = str(info.value)
    assert "(4,)" in message and "(3,)" in message, message


@settings(max_examples=20)
@given(data=st.data())
def test_isclose_with_mixed_precision_matches_numpy(data):
    """NumPy converts only b to result_type(b, 1.0), so atol/rtol act in b's precision."""
    first, second = data.draw(st.sampled_from(list(itertools.product(dtypes.FLOATING, repeat=2))))
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=1, max_side=6))
    a = data.draw(hnp.arrays(first, shape, elements=elements(first)))
    b = data.draw(hnp.arrays(second, shape, elements=elements(second)))
    check_against_numpy(lambda: elementwise.isclose(as_array(a), as_array(b)), lambda: np.isclose(a, b))


@pytest.mark.parametrize("exponent", [2, 3, 0, 1, 2.0, np.int64(2)])
def test_bool_power_operator_dtype_follows_numpys_fast_path(exponent):
    # ndarray.__pow__ turns `** 2` into square (int8 for bool); np.power gives int64.
    values = np.array([True, False])
    assert_identical(np.asarray(la.asarray(values) ** exponent), values ** exponent)
    assert_identical(np.asarray(la.power(la.asarray(values), exponent)), np.power(values, exponent))


def test_empty_integer_array_to_a_negative_power_is_empty():
    values = np.zeros((3, 0), np.int32)
    assert_identical(np.asarray(la.asarray(values) ** -4), values ** -4)
    with pytest.raises(ValueError, match="negative integer powers"):
        la.asarray(np.zeros((3, 1), np.int32)) ** -4


_INEXACT = [np.dtype(name) for name in ("float16", "float32", "float64", "complex64", "complex128")]


@given(data=st.data(), dtype=st.sampled_from(_INEXACT))
def test_power_by_a_scalar_takes_numpys_fast_paths(data, dtype):
    """`x ** -1`, `x ** 2` and `x ** 0.5` are NumPy's reciprocal, square and sqrt (the operator's
    fast path for a Python int -1 or 2 or a Python float 0.5; for float32/float64 np.power's loop
    too, for any scalar -1 or 0.5): exactly 1 / x, and sqrt's -0.0 and NaN for -0.0 and -inf
    where pow gives +0.0 and inf. Every zero's sign and every NaN as NumPy's, bit for bit.
    (A NumPy scalar exponent is data to lazyarr: README, Differences.)"""
    exponents = [-1, 2, 0.5] + ([-1.0, 2.0] if dtype in (np.float32, np.float64) else [])
    exponent = data.draw(st.sampled_from(exponents))
    values = data.draw(hnp.arrays(dtype, st.integers(0, 40), elements=elements(dtype)))
    if dtype.kind == "f":
        values = np.concatenate([values, np.array([-0.0, 0.0, -np.inf, np.inf, np.nan, -1.0, 4.0], dtype)])
    lazy = la.asarray(values)
    with np.errstate(all="ignore"):
        assert_identical(np.asarray(lazy ** exponent), values ** exponent)
        if dtype in (np.float32, np.float64) and exponent in (-1, 0.5):  # np.power's own scalar paths
            assert_identical(np.asarray(la.power(lazy, exponent)), np.power(values, exponent))
        if dtype in (np.float32, np.float64) and exponent in (-1, 0.5):
            scalar = dtype.type(exponent)  # a NumPy scalar of these values: NumPy's same loops
            assert_identical(np.asarray(lazy ** scalar), values ** scalar)
            assert_identical(np.asarray(la.power(lazy, scalar)), np.power(values, scalar))
