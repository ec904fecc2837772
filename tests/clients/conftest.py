"""Client tests (scikit-learn, SciPy, array-api-extra on lazyarr).

SCIPY_ARRAY_API=1 is set in tests/conftest.py, not here: SciPy reads it when first imported, which
may happen before this directory is collected.

Backends: float32 cases run on the default backend (the CPU compiler unless LAZYARR_FLAGS says
otherwise), float64 cases on the interpreter backend, the NumPy oracle that defines lazyarr's
semantics. Client code evaluates hundreds of tiny distinct graphs, so compiling every one for both
dtypes would cost about twice this directory's minute; the frontend builds the same graphs either
way, and the CPU backend is held to the interpreter by the backend tests. With
LAZYARR_CLIENT_TESTS=full both dtypes run on the default backend (and more cases run: several
minutes).
"""

import os

import numpy as np
import pytest

import lazyarr

FULL = os.environ.get("LAZYARR_CLIENT_TESTS") == "full"


def pytest_configure(config):
    # Markers of scikit-learn's test modules, which test_sklearn_clients.py imports to reuse its own
    # array API checks; under --strict-markers an unregistered one fails the import. scikit-learn's
    # own conftest registers them the same way.
    for marker in (
        "thread_unsafe: scikit-learn's mark for single-threaded tests",
        "parallel_threads(n): scikit-learn's mark for tests run on n threads",
        "iterations(n): scikit-learn's mark for tests repeated n times per thread",
        "no_check_spmatrix: scikit-learn's mark for tests exempt from its spmatrix check",
    ):
        config.addinivalue_line("markers", marker)


@pytest.fixture(autouse=True)
def float64_cases_on_the_interpreter(request):
    """Select the backend for a case by its dtype parameter (see the module docstring)."""
    callspec = getattr(request.node, "callspec", None)
    dtype = None if callspec is None else callspec.params.get("dtype_name", callspec.params.get("dtype"))
    if FULL or dtype is None or np.dtype(dtype) != np.float64:
        yield
        return
    previous = lazyarr.get_backend_name()
    lazyarr.set_backend("interpreter")
    try:
        yield
    finally:
        lazyarr.set_backend(previous)
