"""custom-call targets, one module per family; importing this package registers them all."""

from . import fft, linalg, sorting, ufunc_methods  # noqa: F401
