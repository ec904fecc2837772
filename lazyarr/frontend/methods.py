"""Binds operators and NumPy-style methods onto Array, each forwarding to its one function.

Operators follow Python's protocol: `a + b` is `add(a, b)`, `2 - a` is `subtract(2, a)`.
In-place operators change the array object, as NumPy's do: `a += b` is seen through every
reference to `a` and written through when `a` is a view (views.py).
"""

from __future__ import annotations

import sys

import numpy as np

from . import (
    elementwise,
    fast_paths,
    flat_indexing,
    indexing,
    indexing_take,
    interop,
    linalg,
    manipulation,
    partitioning,
    reductions,
    searching,
)
from .array import Array, deferred_cuts
from .core import convert
from .element_writes import written_in_place
from .elements import Element
from .indexing_key import format_shape
from .views import assign, assign_result, strided

# dunder -> (elementwise function name, reflected?)
_BINARY_OPERATORS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "power",
    "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
    "lshift": "left_shift", "rshift": "right_shift",
}
_COMPARISONS = {
    "eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
    "gt": "greater", "ge": "greater_equal",
}
_UNARY_OPERATORS = {"neg": "negative", "pos": "positive", "invert": "invert", "abs": "absolute"}


# Operators call elementwise.binary / unary by name: every operator's function is one of
# elementwise's `_define`d ufuncs, `binary(name, x1, x2)` itself, so the operator skips that
# frame (a recorded op's cost is a handful of Python calls). Where the C extension is built,
# the operator is its FastSlot, which records the direct path itself (fast_paths.py).
def _forward(name: str):
    binary = elementwise.binary

    def method(self, other):
        return binary(name, self, other)

    return fast_paths.operator("binary", method, name)


def _reflected(name: str):
    binary = elementwise.binary

    def method(self, other):
        return binary(name, other, self)

    return fast_paths.operator("reflected", method, name)


def _unary(name: str):
    unary = elementwise.unary

    def method(self):
        return unary(name, self)

    return fast_paths.operator("unary", method, name)


def _in_place(function, name: str):
    """`a op= b` as NumPy's `op(a, b, out=a)`: the result must keep a's shape and cast to a's
    dtype under 'same_kind' (an int array += 1.5 raises), and a itself changes."""

    def method(self, other):
        with deferred_cuts():
            result = function(self, other)
        if result.dtype != self.dtype and not np.can_cast(result.dtype, self.dtype, casting="same_kind"):
            raise TypeError(
                f"Cannot cast ufunc '{name}' output from dtype('{result.dtype}') to dtype('{self.dtype}') "
                "with casting rule 'same_kind'"
            )
        if result.shape != self.shape:
            raise ValueError(
                f"non-broadcastable output operand with shape {format_shape(self.shape)} doesn't match "
                f"the broadcast shape {format_shape(result.shape)}"
            )
        if type(self) is Element and type(result) is Element and self.rebind(result):
            return self  # `total += x[i]`: still a known scalar, no graph
        temporary = type(other) is Array and sys.getrefcount(other) <= _TEMPORARY_OPERAND
        assign(self, convert(result._node, self.dtype), (result, other) if temporary else (result,))
        return self

    return method


def _power_operator(self, other):
    """`x ** p` as ndarray.__pow__ computes it: on bool, float and complex arrays a Python int 2
    is `square` (bool ** 2 is int8), and on float and complex arrays a Python int -1 is
    `reciprocal` and a Python float 0.5 is `sqrt` (NumPy's fast path, which for float16 and
    complex differs from `power` on zeros and infinities); every other exponent is `power`
    (bool ** 3 is int64)."""
    kind = type(other)
    if kind is int:
        if other == 2 and self.dtype.kind in "bfc":
            if type(self) is Array and self.dtype in _SQUARED_BY_MULTIPLY:  # hot: `d ** 2` (square's very node)
                return elementwise.multiply(self, self)
            return elementwise.square(self)
        if other == -1 and self.dtype.kind in "fc":
            return elementwise.reciprocal(self)
    elif kind is float and other == 0.5 and self.dtype.kind in "fc":
        return elementwise.sqrt(self)
    return elementwise.power(self, other)


# float32/float64 `square` is one multiply node of the operand by itself, which `multiply`'s
# memoized path makes at half of `square`'s cost.
_SQUARED_BY_MULTIPLY = frozenset({np.dtype("float32"), np.dtype("float64")})


def _bind_operators():
    for dunder, name in _BINARY_OPERATORS.items():
        setattr(Array, f"__{dunder}__", _forward(name))
        setattr(Array, f"__r{dunder}__", _reflected(name))
        setattr(Array, f"__i{dunder}__", _in_place(getattr(elementwise, name), name))
    Array.__pow__ = _power_operator
    Array.__imatmul__ = _in_place(linalg.matmul, "matmul")
    for dunder, name in _COMPARISONS.items():
        setattr(Array, f"__{dunder}__", _forward(name))
    for dunder, name in _UNARY_OPERATORS.items():
        setattr(Array, f"__{dunder}__", _unary(name))


# method name -> the function it forwards to, with the array as first argument
_METHODS = {
    **manipulation.METHODS,
    "sum": reductions.sum, "prod": reductions.prod, "mean": reductions.mean,
    "var": reductions.var, "std": reductions.std, "max": reductions.max, "min": reductions.min,
    "argmax": reductions.argmax, "argmin": reductions.argmin, "any": reductions.any,
    "all": reductions.all, "cumsum": reductions.cumsum, "cumprod": reductions.cumprod,
    "trace": linalg.trace, "diagonal": linalg.diagonal, "dot": linalg.dot,
    "take": indexing.take, "nonzero": searching.nonzero, "argsort": searching.argsort,
    "searchsorted": searching.searchsorted, "sort": searching.sort_in_place,
    "clip": elementwise.clip, "round": elementwise.round,
    "put": flat_indexing.put, "argpartition": partitioning.argpartition,
}


def _fill_method(self, value):
    """x.fill(value): every element of x becomes the scalar `value`, cast as NumPy's assignment
    casts (in place: every reference sees it, a view writes to its base)."""
    if (value.ndim if isinstance(value, Array) else np.ndim(value)) != 0:
        raise ValueError("setting an array element with a sequence.")  # NumPy's fill takes scalars only
    self[...] = value


def _partition_method(self, kth, axis=-1, kind="introselect", order=None):
    """x.partition(kth): x partitioned in place (NumPy's method returns None; la.partition a copy)."""
    if axis is None:  # NumPy's method: an axis, never the flattened array
        raise TypeError("'NoneType' object cannot be interpreted as an integer")
    assign_result(self, lambda: partitioning.partition(self, kth, axis, kind, order))


def _compress_method(self, condition, axis=None, out=None):
    """x.compress(condition, axis): la.compress(condition, x, axis), NumPy's method's argument order."""
    return indexing_take.compress(condition, self, axis, out)


def _tobytes_method(self, order="C"):
    """x.tobytes(): the value's bytes, as NumPy lays them out (evaluates). order='A' is 'F' where
    NumPy's array would be Fortran- and not C-contiguous (a transposed view: views.strided)."""
    if order == "A":
        layout = strided(self)
        order = "F" if layout is not None and layout.flags.f_contiguous and not layout.flags.c_contiguous else "C"
    return self.numpy().tobytes(order)


def _copy_method(self, order="C"):
    """x.copy(): a new array with x's value, not a view: later writes to either leave the other
    (`order` is accepted for NumPy's signature; lazy arrays have no memory layout)."""
    return self.__copy__()


def _conjugate_method(self):
    """x.conj(), x.conjugate(): for a real array NumPy's method returns x itself (writes to
    the result reach x); np.conj(x), a ufunc, returns a new array."""
    return elementwise.conj(self) if self.dtype.kind == "c" else self


def _matmul(self, other):
    return linalg.matmul(self, other)


def _rmatmul(self, other):
    return linalg.matmul(other, self)


def _setitem(self, key, value):
    """`a[key] = value` changes `a` (every reference sees it; a view writes to its base).

    A value only this statement holds (`u[1:-1] = expression`) is consumed: a loop cut here
    leaves it out (array.track_pending). One element of an array nothing else sees is written
    in its buffer (element_writes). `a[k] += w` runs `t = a[k]; t += w; a[k] = t`: the view
    wrote through already, so the last write, which changes nothing, records nothing."""
    if type(value) is Array and value._base is not None and value._base.base is self and indexing.reads_as(
            self, key, value):
        return
    if written_in_place(self, key, value):
        return
    consumed = (value,) if type(value) is Array and sys.getrefcount(value) <= _TEMPORARY_VALUE else ()
    assign(self, indexing.setitem(self, key, value), consumed)


# -- temporaries: which operands of a write die with its statement ---------------------------
class _ReferenceProbe:
    """Counts the references its operand has inside `__setitem__` / `__isub__`, as _setitem and
    in-place operators count theirs."""

    def __setitem__(self, key, value):
        self.references = sys.getrefcount(value)

    def __isub__(self, other):
        self.references = sys.getrefcount(other)
        return self


def _probe_setitem() -> tuple[int, int]:
    probe = _ReferenceProbe()
    probe[0] = object()
    temporary = probe.references
    named = object()
    probe[0] = named
    return temporary, probe.references


def _probe_in_place() -> tuple[int, int]:
    probe = _ReferenceProbe()
    probe -= object()
    temporary = probe.references
    named = object()
    probe -= named
    return temporary, probe.references


def _temporary_references(probe) -> int:
    """At most how many references a temporary operand has where a write counts them (the
    caller's evaluation stack, the parameter, getrefcount's argument; interpreters differ, so
    measured): 0, so that nothing counts as temporary, where a named operand does not count
    exactly one more or reference counts are not exact (free-threaded builds). A misjudged
    operand costs work, never a wrong result: a consumed array read later is computed again (a
    named operand of a dunder called by hand, `u.__setitem__(k, v)`, is one: the frame then holds
    the caller's reference instead of the evaluation stack)."""
    if not getattr(sys, "_is_gil_enabled", lambda: True)():
        return 0
    temporary, named = probe()
    return temporary if named == temporary + 1 else 0


_TEMPORARY_VALUE = _temporary_references(_probe_setitem)
_TEMPORARY_OPERAND = _temporary_references(_probe_in_place)


def _explain(self):
    from .evaluation import explain

    return explain(self)


def _hlo(self):
    from .evaluation import hlo_text

    return hlo_text(self)


def _bind_methods():
    for name, function in _METHODS.items():
        setattr(Array, name, function)
    for name, getter in manipulation.PROPERTIES.items():
        setattr(Array, name, property(getter))
    Array.__matmul__ = _matmul
    Array.__rmatmul__ = _rmatmul
    Array.explain = _explain
    Array.fill = _fill_method
    Array.partition = _partition_method
    Array.compress = _compress_method
    Array.tobytes = _tobytes_method
    Array.conj = Array.conjugate = _conjugate_method
    Array.copy = _copy_method
    Array.hlo = _hlo
    Array.__getitem__ = indexing.getitem
    Array.__setitem__ = _setitem
    Array.real = property(elementwise.real)
    Array.imag = property(elementwise.imag)


def _bind_protocols():
    Array.__array_ufunc__ = interop.array_ufunc
    Array.__array_function__ = interop.array_function


_bind_operators()
_bind_methods()
_bind_protocols()
fast_paths.install()  # (last: it wraps what the above bound)
