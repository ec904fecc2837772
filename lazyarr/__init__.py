"""lazyarr: NumPy-style code on lazy arrays, compiled like XLA."""

from .frontend.array import Array
from .frontend.core import as_array as asarray
from .frontend.elementwise import *  # noqa: F403

__version__ = "0.1.0"
