"""The Backend protocol and the registry of backends by name.

A backend sees a Module and buffers, never a lazy array. Backends are imported on first
use, so optional dependencies (CuPy for the GPU) load only when asked for.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from ..hlo import Module


class Executable(Protocol):
    def run(self, arguments: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Run on one buffer per entry parameter; return one buffer per output."""


class Backend(Protocol):
    name: str

    def compile(self, module: Module, pipeline_dump=None) -> Executable:
        """Turn an HLO module into something runnable; `pipeline_dump(pass_name, module)` is
        called after each pass when --dump_passes asks for it."""


# name -> module path defining `BACKEND`
_BACKEND_MODULES = {
    "interpreter": "lazyarr.backends.interpreter",
    "cpu": "lazyarr.backends.cpu",
}
_LOADED: dict[str, Backend] = {}


def available_backends() -> tuple[str, ...]:
    return tuple(_BACKEND_MODULES)


def get_backend(name: str) -> Backend:
    """The backend called `name`, importing its module on first use."""
    if name not in _LOADED:
        if name not in _BACKEND_MODULES:
            raise ValueError(
                f"unknown backend {name!r}; available: {', '.join(available_backends())}"
            )
        _LOADED[name] = importlib.import_module(_BACKEND_MODULES[name]).BACKEND
    return _LOADED[name]
