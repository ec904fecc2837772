"""Binds operators and NumPy-style methods onto Array, each forwarding to its one function.

Operators follow Python's protocol: `a + b` is `add(a, b)`, `2 - a` is `subtract(2, a)`.
There are no in-place operators: `a += b` falls back to `a = a + b`, which rebinds `a`.
"""

from __future__ import annotations

from . import elementwise, indexing, interop, linalg, manipulation, reductions, searching
from .array import Array

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


def _forward(function):
    def method(self, other):
        return function(self, other)

    return method


def _reflected(function):
    def method(self, other):
        return function(other, self)

    return method


def _unary(function):
    def method(self):
        return function(self)

    return method


def _bind_operators():
    for dunder, name in _BINARY_OPERATORS.items():
        function = getattr(elementwise, name)
        setattr(Array, f"__{dunder}__", _forward(function))
        setattr(Array, f"__r{dunder}__", _reflected(function))
    for dunder, name in _COMPARISONS.items():
        setattr(Array, f"__{dunder}__", _forward(getattr(elementwise, name)))
    for dunder, name in _UNARY_OPERATORS.items():
        setattr(Array, f"__{dunder}__", _unary(getattr(elementwise, name)))


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
    "clip": elementwise.clip, "round": elementwise.round, "conj": elementwise.conj,
    "conjugate": elementwise.conjugate,
}


def _matmul(self, other):
    return linalg.matmul(self, other)


def _rmatmul(self, other):
    return linalg.matmul(other, self)


def _getitem(self, key):
    return indexing.getitem(self, key)


def _setitem(self, key, value):
    """`a[key] = value` rebinds `a` to a new graph node; other arrays keep their values."""
    self._node = indexing.setitem(self, key, value)._node


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
    Array.hlo = _hlo
    Array.__getitem__ = _getitem
    Array.__setitem__ = _setitem
    Array.real = property(elementwise.real)
    Array.imag = property(elementwise.imag)


def _bind_protocols():
    Array.__array_ufunc__ = interop.array_ufunc
    Array.__array_function__ = interop.array_function


_bind_operators()
_bind_methods()
_bind_protocols()
