"""NumPy's show_config for lazyarr: what a bug report needs to say about this installation.

The lazyarr section (version, backend in use, backends and devices known, the flags in force,
the versions of NumPy, llvmlite and CuPy, Python's) comes first, then NumPy's own
configuration, because lazyarr's results follow NumPy's (dtype rules, the interpreter, every
fallback). Nothing optional is imported: CuPy is only looked up.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from importlib.util import find_spec

import numpy as np

from .. import _flags
from ..backends import available_backends, available_devices

__all__ = ["show_config"]

_MODES = ("stdout", "dicts")


def _version(distribution: str, module: str) -> str:
    """An installed package's version without importing it ('not installed' when absent)."""
    from importlib import metadata  # (only here: 15 ms that `import lazyarr` need not pay)

    if find_spec(module) is None:
        return "not installed"
    for name in metadata.packages_distributions().get(module, [distribution]):
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return "installed (version unknown)"


def _lazyarr_config() -> dict:
    import platform

    from .. import __version__

    flags = dataclasses.asdict(_flags.FLAGS)
    return {
        "version": __version__,
        "backend": _flags.FLAGS.backend,
        "available backends": list(available_backends()),
        "devices": list(available_devices()),
        "flags": {name: list(value) if isinstance(value, tuple) else value for name, value in flags.items()},
        "LAZYARR_FLAGS": os.environ.get("LAZYARR_FLAGS", ""),
        "dependencies": {
            "numpy": np.__version__,
            "llvmlite": _version("llvmlite", "llvmlite"),
            "cupy": _version("cupy", "cupy"),
        },
        "python": f"{platform.python_implementation()} {sys.version.split()[0]} ({sys.platform})",
    }


def _printed(section: dict, indent: int = 0) -> list[str]:
    lines = []
    for key, value in section.items():
        if isinstance(value, dict):
            lines += [" " * indent + f"{key}:"] + _printed(value, indent + 2)
        else:
            lines.append(" " * indent + f"{key}: {value}")
    return lines


def show_config(mode="stdout"):
    """Print lazyarr's configuration, then NumPy's (np.show_config); mode='dicts' returns both
    as a dict {"lazyarr": ..., "NumPy": ...} instead. Another mode raises NumPy's
    AttributeError.

    >>> import lazyarr as la
    >>> sorted(la.show_config(mode="dicts"))
    ['NumPy', 'lazyarr']
    """
    if mode not in _MODES:
        raise AttributeError(f"Invalid `mode`, use one of: {', '.join(_MODES)}")
    lazyarr_section = _lazyarr_config()
    if mode == "dicts":
        return {"lazyarr": lazyarr_section, "NumPy": np.show_config(mode="dicts")}
    print("\n".join(["lazyarr:"] + _printed(lazyarr_section, 2)))
    print("NumPy:")
    np.show_config()
    return None
