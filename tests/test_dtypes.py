"""lazyarr.dtypes against NumPy 2: promotion tables, weak Python scalars, casting, dtype kinds,
finfo/iinfo and the refusal of dtypes lazyarr does not support.

Every table is exhaustive over `lazyarr.dtypes.ALL` (14 dtypes): NumPy's answer is computed
for each entry and lazyarr must give the same dtype, or raise the same exception type.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import lazyarr as la
from lazyarr import dtypes
from lazyarr.frontend import elementwise

ALL = list(dtypes.ALL)
PAIRS = list(itertools.product(ALL, repeat=2))
WEAK_SCALARS = [True, 1, 300, -1, 2.0, 1e300, 1j]
KINDS = [
    "bool", "signed integer", "unsigned integer", "integral", "real floating",
    "complex floating", "numeric",
]

# The namespaces that expose each function: lazyarr.dtypes always, the package once re-exported.
RESULT_TYPES = [pytest.param(dtypes.result_type, id="lazyarr.dtypes.result_type"),
                pytest.param(getattr(la, "result_type", None), id="lazyarr.result_type")]


def _numpy_outcome(function, *args):
    """NumPy's result, or the builtin exception type it raises (UFuncTypeError -> TypeError)."""
    with np.errstate(all="ignore"):
        try:
            return function(*args), None
        except Exception as error:  # noqa: BLE001  (any NumPy error is the expected one)
            return None, next(kind for kind in type(error).__mro__ if kind.__module__ == "builtins")


def _require(function, name):
    if function is None:
        pytest.skip(f"lazyarr.{name} is not re-exported yet")


# --- result_type ------------------------------------------------------------------------------


@pytest.mark.parametrize("result_type", RESULT_TYPES)
def test_result_type_of_every_dtype_pair_is_numpys(result_type):
    _require(result_type, "result_type")
    mismatches = [
        f"{first}, {second}: {result_type(first, second)} != {np.result_type(first, second)}"
        for first, second in PAIRS
        if result_type(first, second) != np.result_type(first, second)
    ]
    assert not mismatches, "\n".join(mismatches)


def test_result_type_of_arrays_is_the_result_type_of_their_dtypes():
    leaves = {dtype: la.asarray(np.zeros(2, dtype)) for dtype in ALL}
    for first, second in PAIRS:
        assert dtypes.result_type(leaves[first], leaves[second]) == np.result_type(first, second)
        assert dtypes.result_type(leaves[first], np.zeros(2, second)) == np.result_type(first, second)


def test_result_type_of_three_dtypes_is_numpys():
    for first, second, third in itertools.product(ALL[::3], ALL[1::3], ALL[2::3]):
        assert dtypes.result_type(first, second, third) == np.result_type(first, second, third)


@pytest.mark.parametrize("scalar", WEAK_SCALARS, ids=repr)
@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_result_type_with_a_weak_python_scalar_is_numpys(dtype, scalar):
    assert dtypes.result_type(dtype, scalar) == np.result_type(dtype, scalar)


def test_result_type_needs_an_argument():
    with pytest.raises(ValueError, match="result_type"):
        dtypes.result_type()


def test_result_type_accepts_scalar_type_classes_like_numpy():
    assert dtypes.result_type(np.float32, np.int16) == np.result_type(np.float32, np.int16)


# --- weak Python scalars through an elementwise function (NEP 50) -----------------------------------


@pytest.mark.parametrize("scalar", WEAK_SCALARS, ids=repr)
@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_add_with_a_weak_python_scalar_has_numpys_dtype_or_error(dtype, scalar):
    array = np.zeros(3, dtype)
    for order in ("array first", "scalar first"):
        operands = (array, scalar) if order == "array first" else (scalar, array)
        expected, error = _numpy_outcome(np.add, *operands)
        lazy_operands = tuple(la.asarray(value) if value is array else value for value in operands)
        if error is not None:
            with pytest.raises(error):
                la.add(*lazy_operands)
            continue
        result = la.add(*lazy_operands)
        assert result.dtype == expected.dtype, (order, result.dtype, expected.dtype)
        np.testing.assert_array_equal(np.asarray(result), expected, strict=True)


@pytest.mark.parametrize("dtype", dtypes.INTEGER, ids=str)
def test_out_of_range_python_int_raises_overflow_error(dtype):
    info = np.iinfo(dtype)
    for value in (info.max + 1, info.min - 1):
        with pytest.raises(OverflowError):
            np.add(np.zeros(1, dtype), value)
        with pytest.raises(OverflowError, match=str(value)):
            la.add(la.asarray(np.zeros(1, dtype)), value)


NUMPY_SCALARS = [np.float64(1.5), np.complex128(1j), np.int64(3), np.float32(2.0), np.bool_(True),
                 np.uint8(7), np.float16(0.5)]


@pytest.mark.parametrize("scalar", NUMPY_SCALARS, ids=lambda value: type(value).__name__)
@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_numpy_scalars_are_strong(dtype, scalar):
    """np.float64(1.5) subclasses float but is not weak: float32 + np.float64 is float64."""
    array = np.zeros(3, dtype)
    expected, error = _numpy_outcome(np.add, array, scalar)
    if error is not None:
        with pytest.raises(error):
            la.add(la.asarray(array), scalar)
        return
    assert la.add(la.asarray(array), scalar).dtype == expected.dtype


# --- can_cast, isdtype --------------------------------------------------------------------------


@pytest.mark.parametrize("namespace", [dtypes, la], ids=["lazyarr.dtypes", "lazyarr"])
def test_can_cast_every_pair_is_numpys_safe_rule(namespace):
    can_cast = getattr(namespace, "can_cast", None)
    _require(can_cast, "can_cast")
    for source, target in PAIRS:
        assert can_cast(source, target) == np.can_cast(source, target), (source, target)
        assert can_cast(la.asarray(np.zeros(1, source)), target) == np.can_cast(source, target)


def test_can_cast_refuses_python_scalars_like_numpy():
    with pytest.raises(TypeError):
        np.can_cast(1, np.int8)
    with pytest.raises(TypeError):
        dtypes.can_cast(1, dtypes.int8)


@pytest.mark.parametrize("namespace", [dtypes, la], ids=["lazyarr.dtypes", "lazyarr"])
def test_isdtype_every_kind_is_numpys(namespace):
    isdtype = getattr(namespace, "isdtype", None)
    _require(isdtype, "isdtype")
    kinds = KINDS + [tuple(KINDS[:2]), ("real floating", dtypes.complex64), dtypes.int8, (dtypes.bool_,)]
    for dtype, kind in itertools.product(ALL, kinds):
        assert isdtype(dtype, kind) == np.isdtype(dtype, kind), (dtype, kind)


def test_isdtype_refuses_unknown_kinds_and_non_dtypes():
    with pytest.raises(ValueError, match="foo"):
        dtypes.isdtype(dtypes.int8, "foo")
    with pytest.raises(TypeError):
        dtypes.isdtype(1, "bool")


# --- finfo, iinfo ----------------------------------------------------------------------------------

FINFO_FIELDS = ["bits", "eps", "epsneg", "max", "min", "tiny", "smallest_normal",
                "smallest_subnormal", "resolution", "precision", "dtype"]


@pytest.mark.parametrize("dtype", dtypes.FLOATING + dtypes.COMPLEX, ids=str)
def test_finfo_is_numpys(dtype):
    for argument in (dtype, la.asarray(np.zeros(1, dtype))):
        info = dtypes.finfo(argument)
        for field in FINFO_FIELDS:
            assert getattr(info, field) == getattr(np.finfo(dtype), field), field


@pytest.mark.parametrize("dtype", dtypes.INTEGER, ids=str)
def test_iinfo_is_numpys(dtype):
    for argument in (dtype, la.asarray(np.zeros(1, dtype))):
        info = dtypes.iinfo(argument)
        assert (info.bits, info.min, info.max, info.dtype) == (
            np.iinfo(dtype).bits, np.iinfo(dtype).min, np.iinfo(dtype).max, np.iinfo(dtype).dtype)


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_finfo_and_iinfo_refuse_the_other_kind_like_numpy(dtype):
    for ours, numpys in ((dtypes.finfo, np.finfo), (dtypes.iinfo, np.iinfo)):
        _, error = _numpy_outcome(numpys, dtype)
        if error is None:
            ours(dtype)
        else:
            with pytest.raises(error):
                ours(dtype)


# --- unsupported dtypes -----------------------------------------------------------------------------

UNSUPPORTED = ["U5", "S3", object, "datetime64", "M8[ns]", "m8[s]", "V8", np.longdouble,
               np.clongdouble, [("field", "i4")]]


@pytest.mark.parametrize("value", UNSUPPORTED, ids=str)
def test_as_dtype_refuses_unsupported_dtypes_naming_them(value):
    with pytest.raises(TypeError) as info:
        dtypes.as_dtype(value, where="zeros")
    message = str(info.value)
    assert str(np.dtype(value)) in message and "zeros" in message, message


@pytest.mark.parametrize("value", ["nonsense", 3.5, "float33"], ids=str)
def test_as_dtype_refuses_non_dtypes(value):
    with pytest.raises(TypeError, match="not a dtype"):
        dtypes.as_dtype(value)


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_as_dtype_accepts_every_spelling_numpy_accepts(dtype):
    for spelling in (dtype, dtype.name, dtype.type, dtype.str, np.dtype(dtype)):
        assert dtypes.as_dtype(spelling) == dtype


def test_unsupported_dtypes_are_refused_at_the_door():
    with pytest.raises(TypeError, match="<U5"):
        la.asarray(np.array(["hello"]))
    with pytest.raises(TypeError, match="datetime64"):
        la.asarray(np.array(["2020-01-01"], dtype="datetime64[D]"))


def test_short_names_round_trip():
    for dtype in ALL:
        assert dtypes.from_short_name(dtypes.short_name(dtype)) == dtype
    with pytest.raises(ValueError, match="f8"):
        dtypes.from_short_name("f8")


# --- categories ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_categories_agree_with_numpy(dtype):
    assert dtypes.is_bool(dtype) == (dtype.kind == "b")
    assert dtypes.is_integer(dtype) == (dtype.kind in "iu")
    assert dtypes.is_signed_integer(dtype) == (dtype.kind == "i")
    assert dtypes.is_unsigned_integer(dtype) == (dtype.kind == "u")
    assert dtypes.is_floating(dtype) == (dtype.kind == "f")
    assert dtypes.is_complex(dtype) == (dtype.kind == "c")
    assert dtypes.is_inexact(dtype) == (dtype.kind in "fc")
    expected_real = np.dtype(dtype.char.lower()) if dtype.kind == "c" else dtype
    assert dtypes.real_dtype(dtype) == expected_real


def test_lazyarr_dtypes_are_numpy_dtypes():
    assert la.float32 == np.float32 and dtypes.float32 is np.dtype(np.float32)
    assert elementwise.add(la.asarray(np.zeros(2, np.float32)), 1).dtype == la.float32
