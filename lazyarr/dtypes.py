"""dtypes, categories and NumPy 2 type promotion (NEP 50).

lazyarr's dtypes *are* NumPy dtype objects, so `la.float32 == np.float32` holds and every
NumPy dtype argument is accepted as is. Promotion is NumPy's own (`np.result_type` and the
ufuncs' `resolve_dtypes`): Python scalars are weak, so `float32_array * 2.0` stays float32,
and a Python int that does not fit the array's integer dtype raises `OverflowError`
(`int8_array + 300`), exactly as NumPy 2 does.
"""

from __future__ import annotations

import functools

import numpy as np

bool_ = np.dtype(np.bool_)
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
uint8 = np.dtype(np.uint8)
uint16 = np.dtype(np.uint16)
uint32 = np.dtype(np.uint32)
uint64 = np.dtype(np.uint64)
float16 = np.dtype(np.float16)
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
complex64 = np.dtype(np.complex64)
complex128 = np.dtype(np.complex128)

SIGNED_INTEGER = (int8, int16, int32, int64)
UNSIGNED_INTEGER = (uint8, uint16, uint32, uint64)
INTEGER = SIGNED_INTEGER + UNSIGNED_INTEGER
FLOATING = (float16, float32, float64)
COMPLEX = (complex64, complex128)
NUMERIC = INTEGER + FLOATING + COMPLEX
ALL = (bool_,) + NUMERIC
# For `dtype in SUPPORTED` of an np.dtype: a tuple compares each entry through dtype's coercing
# __eq__ (350 ns, on every element computed and every array converted); a set hashes once.
SUPPORTED = frozenset(ALL)

# NumPy 2's C-style and long-form names for the same dtypes, sized as on this platform
# (`la.intc` is int32, `la.int_` and `la.intp` int64 on 64-bit Linux), each the lazyarr dtype
# it equals. NumPy 2 removed float_, complex_ and friends; longdouble and clongdouble have no
# lazyarr dtype, so neither is here.


def _alias(numpy_type) -> np.dtype:
    return next(dtype for dtype in ALL if dtype == np.dtype(numpy_type))


byte, ubyte = _alias(np.byte), _alias(np.ubyte)
short, ushort = _alias(np.short), _alias(np.ushort)
intc, uintc = _alias(np.intc), _alias(np.uintc)
int_, uint = _alias(np.int_), _alias(np.uint)
long, ulong = _alias(np.long), _alias(np.ulong)
longlong, ulonglong = _alias(np.longlong), _alias(np.ulonglong)
intp, uintp = _alias(np.intp), _alias(np.uintp)
half, single, double = float16, float32, float64
csingle, cdouble = complex64, complex128

default_int = int64
default_float = float64
default_complex = complex128

_SHORT_NAMES = {
    bool_: "pred", int8: "s8", int16: "s16", int32: "s32", int64: "s64",
    uint8: "u8", uint16: "u16", uint32: "u32", uint64: "u64",
    float16: "f16", float32: "f32", float64: "f64", complex64: "c64", complex128: "c128",
}
_BY_SHORT_NAME = {short: dtype for dtype, short in _SHORT_NAMES.items()}


def as_dtype(value, *, where: str = "dtype") -> np.dtype:
    """Normalize anything NumPy accepts as a dtype, refusing the ones lazyarr does not support.

    >>> as_dtype("float32")
    dtype('float32')
    """
    if isinstance(value, np.dtype) and value in _SHORT_NAMES:
        return value
    try:
        dtype = np.dtype(value)
    except TypeError as error:
        raise TypeError(f"{where}: {value!r} is not a dtype") from error
    if dtype not in _SHORT_NAMES:
        raise TypeError(
            f"{where}: dtype {dtype} is not supported; lazyarr supports "
            + ", ".join(str(d) for d in ALL)
        )
    return dtype


def short_name(dtype: np.dtype) -> str:
    """XLA-style short name used in HLO text: f32, s64, pred, c64."""
    return _SHORT_NAMES[dtype]


def from_short_name(name: str) -> np.dtype:
    try:
        return _BY_SHORT_NAME[name]
    except KeyError:
        raise ValueError(f"unknown element type {name!r} in HLO text") from None


def is_bool(dtype) -> bool:
    return dtype == bool_


def is_integer(dtype) -> bool:
    return dtype in INTEGER


def is_signed_integer(dtype) -> bool:
    return dtype in SIGNED_INTEGER


def is_unsigned_integer(dtype) -> bool:
    return dtype in UNSIGNED_INTEGER


def is_floating(dtype) -> bool:
    return dtype in FLOATING


def is_complex(dtype) -> bool:
    return dtype in COMPLEX


def is_inexact(dtype) -> bool:
    return dtype in FLOATING or dtype in COMPLEX


def real_dtype(dtype: np.dtype) -> np.dtype:
    """The real counterpart of a complex dtype (complex64 -> float32); other dtypes unchanged."""
    return {complex64: float32, complex128: float64}.get(dtype, dtype)


def weak_scalar_type(value):
    """The Python type NumPy treats as a weak scalar for `value`, or None if it is not one.

    NumPy scalars (np.float64 subclasses float) are strongly typed, so they are not weak.
    """
    if isinstance(value, np.generic):
        return None
    if isinstance(value, bool):
        return bool
    if isinstance(value, int):
        return int
    if isinstance(value, float):
        return float
    if isinstance(value, complex):
        return complex
    return None


@functools.cache
def integer_range(dtype: np.dtype) -> tuple[int, int]:
    """(smallest, largest) value of an integer dtype, as Python ints."""
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def check_weak_scalar_fits(value, dtype: np.dtype, *, where: str) -> None:
    """NumPy 2 refuses a Python int that does not fit the integer dtype it is combined with."""
    if isinstance(value, bool) or not isinstance(value, int) or not is_integer(dtype):
        return
    low, high = integer_range(dtype)
    if not low <= value <= high:
        raise OverflowError(f"{where}: Python integer {value} out of bounds for {dtype}")


def _dtype_like(item):
    """An array's dtype, or the item itself (a dtype, a scalar type class, a dtype name)."""
    if hasattr(item, "dtype") and not isinstance(item, type):
        return item.dtype
    return item


def result_type(*arrays_and_dtypes) -> np.dtype:
    """NumPy 2 promotion of arrays, dtypes and weak Python scalars.

    >>> result_type(float32, 2.0)
    dtype('float32')
    """
    operands = []
    for item in arrays_and_dtypes:
        if weak_scalar_type(item) is not None:
            operands.append(item)
        else:
            operands.append(as_dtype(_dtype_like(item), where="result_type"))
    if not operands:
        raise ValueError("result_type: at least one array or dtype is required")
    return as_dtype(np.result_type(*operands), where="result_type")


def can_cast(from_, to) -> bool:
    """Whether `from_` casts to `to` without loss under NumPy's 'safe' rule."""
    source = as_dtype(_dtype_like(from_), where="can_cast")
    return bool(np.can_cast(source, as_dtype(to, where="can_cast"), casting="safe"))


_KIND_TESTS = {
    "bool": is_bool,
    "signed integer": is_signed_integer,
    "unsigned integer": is_unsigned_integer,
    "integral": is_integer,
    "real floating": is_floating,
    "complex floating": is_complex,
    "numeric": lambda dtype: dtype in NUMERIC,
}


def isdtype(dtype, kind) -> bool:
    """The array API's `isdtype`: `kind` is a dtype, a kind name, or a tuple of those."""
    dtype = as_dtype(dtype, where="isdtype")
    if isinstance(kind, tuple):
        return any(isdtype(dtype, each) for each in kind)
    if isinstance(kind, str):
        if kind not in _KIND_TESTS:
            raise ValueError(f"isdtype: unknown kind {kind!r}; accepted: {sorted(_KIND_TESTS)}")
        return _KIND_TESTS[kind](dtype)
    return dtype == as_dtype(kind, where="isdtype")


class FloatInfo:
    """`finfo` as the array API defines it: `bits` an int; `eps`, `max`, `min` and
    `smallest_normal` Python floats (NumPy gives NumPy scalars); `dtype` the real dtype.
    NumPy's other fields (`tiny`, `resolution`, `precision`, ...) are NumPy's own."""

    def __init__(self, dtype: np.dtype):
        self._numpy = np.finfo(dtype)
        self.bits = int(self._numpy.bits)
        self.eps = float(self._numpy.eps)
        self.max = float(self._numpy.max)
        self.min = float(self._numpy.min)
        self.smallest_normal = float(self._numpy.smallest_normal)
        self.dtype = self._numpy.dtype

    def __getattr__(self, name):
        if name.startswith("_"):  # copy and pickle probe for hooks before __init__ has run
            raise AttributeError(name)
        return getattr(self._numpy, name)

    def __reduce__(self):
        return (FloatInfo, (self.dtype,))

    def __repr__(self) -> str:
        return (f"finfo(bits={self.bits}, eps={self.eps!r}, max={self.max!r}, min={self.min!r}, "
                f"smallest_normal={self.smallest_normal!r}, dtype={self.dtype})")


def finfo(type_) -> FloatInfo:
    """Machine limits of a float or complex dtype (or an array's), Python floats as the array
    API wants them.

    >>> finfo(float32).eps
    1.1920928955078125e-07
    """
    return FloatInfo(as_dtype(_dtype_like(type_), where="finfo"))


def iinfo(type_):
    return np.iinfo(as_dtype(_dtype_like(type_), where="iinfo"))
