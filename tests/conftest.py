"""Hypothesis profiles: `ci` (deterministic, the default), `dev` (more examples), `quick` (a
fast sweep) and `fuzz` (10,000 fresh examples: a long run of the differential fuzz tests,
`HYPOTHESIS_PROFILE=fuzz python -m pytest tests/backends/test_cpu_fuzz.py`).

Select with HYPOTHESIS_PROFILE=dev. The ci profile derandomizes so that CI runs are
reproducible and its example counts keep the whole suite within a few minutes on 2 cores.
"""

import os
import tempfile

import pytest
from hypothesis import HealthCheck, settings

# SciPy reads SCIPY_ARRAY_API once, when it is first imported, and scikit-learn's array API
# dispatch refuses to start without it; tests/clients/ run SciPy and scikit-learn on lazyarr. Set
# here, in the first file pytest loads, because a conftest or module under tests/clients/ would be
# too late once any earlier test module had imported SciPy. Harmless for NumPy inputs.
os.environ.setdefault("SCIPY_ARRAY_API", "1")

# The persistent compile cache never touches the user's cache directory from the suite: this
# process and every subprocess it starts use a fresh directory. In this process it is off
# (tests count compiles); tests/test_persistent_cache.py turns it on where it is the subject.
os.environ["LAZYARR_CACHE_DIR"] = tempfile.mkdtemp(prefix="lazyarr-test-cache-")

import lazyarr  # noqa: E402  (after the cache directory is chosen)
from lazyarr import _flags  # noqa: E402

_flags.with_overrides(persistent_cache=False)

settings.register_profile(
    "ci",
    max_examples=40,
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "dev",
    max_examples=300,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "quick",  # a fast sweep, e.g. the whole frontend suite on a compiling backend
    max_examples=5,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "fuzz",  # a long differential fuzz run: HYPOTHESIS_PROFILE=fuzz on test_cpu_fuzz.py
    max_examples=10_000,
    deadline=None,
    derandomize=False,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def cpu_backend():
    """Run a test on the CPU backend, whatever the default, and restore the previous one."""
    previous = lazyarr.get_backend_name()
    lazyarr.set_backend("cpu")
    yield
    lazyarr.set_backend(previous)


@pytest.fixture(scope="module")
def interpreter_backend_for_module():
    """A whole test module on the interpreter backend (hypothesis tables whose every example is a
    new graph: compiling each on the CPU would be too slow for CI); restored after."""
    previous = lazyarr.get_backend_name()
    lazyarr.set_backend("interpreter")
    yield
    lazyarr.set_backend(previous)


@pytest.fixture
def fresh_cpu_cache(cpu_backend):
    """The CPU backend with empty executable and kernel caches, for tests that count compiles."""
    lazyarr.clear_cache()
    yield


@pytest.fixture
def pending_depth():
    """Set --max_pending_depth for one test (`pending_depth(0)`: one graph, never cut); restored after."""
    from lazyarr import _flags

    previous = _flags.FLAGS.max_pending_depth
    yield lambda depth: _flags.with_overrides(max_pending_depth=depth)
    _flags.with_overrides(max_pending_depth=previous)


@pytest.fixture
def thread_pool_kernels(cpu_backend, monkeypatch):
    """Kernels split over the thread pool from a small amount of work, so tests reach the
    parallel path on small arrays; caches are cleared around the test (the split is decided
    when a kernel is compiled or first run at a size)."""
    from lazyarr.backends import cpu

    lazyarr.clear_cache()
    monkeypatch.setattr(cpu, "_PARALLEL_WORK", 1 << 12)
    monkeypatch.setattr(cpu, "_NATIVE_PARALLEL_WORK", 1 << 12)
    yield
    lazyarr.clear_cache()
