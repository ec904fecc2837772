"""Optional peers, imported only when a benchmark runs: numexpr and jax (jax.jit on the CPU).

Each loader returns the module, or None with a note saying why (not installed, failed to
import), so a machine without a peer still runs every other row. Each `*_callable` turns a
workload and its NumPy inputs into a zero-argument call that does the user-visible work and
returns something `np.asarray` accepts; inputs are converted once, outside that call.
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Callable

import numpy as np
from workloads import Workload

NOTES: list[str] = []


@functools.cache
def _load(name: str):
    try:
        return importlib.import_module(name)
    except ImportError as error:
        NOTES.append(f"{name} skipped: not installed ({error})")
    except Exception as error:  # a broken install should not stop the other rows
        NOTES.append(f"{name} skipped: import failed ({type(error).__name__}: {error})")
    return None


def load_numexpr():
    """The numexpr module, or None (noted)."""
    return _load("numexpr")


@functools.cache
def load_jax():
    """`(jax, jax.numpy, cpu_device)`, or None (noted). JAX is kept on the CPU, as we compare CPUs."""
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    jax = _load("jax")
    if jax is None:
        return None
    try:
        device = jax.devices("cpu")[0]
    except Exception as error:
        NOTES.append(f"jax skipped: no CPU device ({type(error).__name__}: {error})")
        return None
    return jax, importlib.import_module("jax.numpy"), device


def numexpr_callable(workload: Workload, inputs: dict[str, np.ndarray]) -> Callable[[], object] | None:
    """numexpr's form of `workload`, or None where it has none (or numexpr is missing)."""
    numexpr = load_numexpr() if workload.numexpr_form is not None else None
    if numexpr is None:
        return None
    arrays = tuple(inputs.values())
    return lambda: workload.numexpr_form(numexpr, *arrays)


def jax_callable(workload: Workload, inputs: dict[str, np.ndarray]) -> Callable[[], object] | None:
    """`jax.jit(workload.expression)` on CPU arrays placed once; each call waits for its result."""
    loaded = load_jax()
    if loaded is None:
        return None
    jax, jax_numpy, device = loaded
    arrays = tuple(jax.device_put(array, device) for array in inputs.values())
    if workload.autodiff_form is not None:  # T1: jax differentiates, as lazyarr does
        compiled = jax.jit(functools.partial(workload.autodiff_form, jax_numpy, jax.value_and_grad))
    else:
        compiled = jax.jit(functools.partial(workload.expression, jax_numpy))
    return lambda: jax.block_until_ready(compiled(*arrays))  # an array, or a tuple of them (T1)


def versions() -> dict[str, str]:
    """Versions of the peers that loaded."""
    found = {}
    for name, module in (("numexpr", load_numexpr()), ("jax", (load_jax() or (None,))[0])):
        if module is not None:
            found[name] = getattr(module, "__version__", "?")
    return found
