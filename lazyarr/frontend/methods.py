"""Binds operators and NumPy-style methods onto Array, each forwarding to its one function.

Operators follow Python's protocol: `a + b` is `add(a, b)`, `2 - a` is `subtract(2, a)`.
There are no in-place operators: `a += b` falls back to `a = a + b`, which rebinds `a`.
"""

from __future__ import annotations

from . import elementwise
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


_bind_operators()
