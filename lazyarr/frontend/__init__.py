"""The NumPy-like frontend: lazy arrays and the functions that build their graphs."""

from . import (
    creation,
    elementwise,
    indexing,
    linalg,
    manipulation,
    methods,  # noqa: F401  (binds operators and methods)
    reductions,
    searching,
)
from .array import Array

__all__ = [
    "Array", "creation", "elementwise", "indexing", "linalg", "manipulation", "reductions", "searching",
]
