"""LAZYARR_FLAGS, parsed once into frozen Flags.

Flags are space-separated `--name=value` or `--name` (boolean) words, as XLA_FLAGS:

    LAZYARR_FLAGS="--backend=interpreter --dump_to=/tmp/dumps --verify"

An unknown flag raises at import with the list of known ones, so a typo never goes unnoticed.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, fields, replace


@dataclass(frozen=True)
class Flags:
    backend: str = "cpu"                # cpu (llvmlite) | interpreter (NumPy oracle) | gpu (PTX, CuPy buffers)
    dump_to: str = ""                    # directory for per-module dumps; empty: no dumps
    dump_passes: bool = False            # also dump the HLO after every pass
    disable_passes: tuple[str, ...] = () # pass names to skip
    verify: bool = False                 # run the verifier between passes
    explain_cache_misses: bool = False   # log why a compile-cache lookup missed
    specialize_sizes: bool = False       # compile per shape instead of reading sizes at run time
    max_pending_depth: int = 256         # evaluate pending work when a chain of recorded ops gets this long; 0: never
    persistent_cache: bool = True        # keep compiled kernels on disk (LAZYARR_CACHE_DIR) for later processes
    compile_workers: int = -1            # helper processes (N + 1 threads for the first kernels); -1: cores (1-4)
    c_extensions: bool = True            # the C extensions where built (fast_paths.py, compile.py graph walk)


_BOOLEAN_TRUE = {"", "1", "true", "yes", "on"}
_BOOLEAN_FALSE = {"0", "false", "no", "off"}


def parse_flags(text: str) -> Flags:
    """Parse a LAZYARR_FLAGS string.

    >>> parse_flags("--backend=interpreter --verify").verify
    True
    """
    known = {field.name: field for field in fields(Flags)}
    values = {}
    for word in shlex.split(text or ""):
        if not word.startswith("--"):
            raise ValueError(f"LAZYARR_FLAGS: expected --name[=value], got {word!r}")
        name, _, value = word[2:].partition("=")
        if name not in known:
            raise ValueError(
                f"LAZYARR_FLAGS: unknown flag --{name}; known flags: "
                + ", ".join(f"--{flag}" for flag in sorted(known))
            )
        kind = known[name].type
        if kind in ("bool", bool):
            lowered = value.lower()
            if lowered not in _BOOLEAN_TRUE | _BOOLEAN_FALSE:
                raise ValueError(f"LAZYARR_FLAGS: --{name} takes true/false, got {value!r}")
            values[name] = lowered in _BOOLEAN_TRUE
        elif kind in ("int", int):
            try:
                values[name] = int(value)
            except ValueError:
                raise ValueError(f"LAZYARR_FLAGS: --{name} takes an integer, got {value!r}") from None
        elif name == "disable_passes":
            values[name] = tuple(part for part in value.split(",") if part)
        else:
            values[name] = value
    return Flags(**values)


FLAGS = parse_flags(os.environ.get("LAZYARR_FLAGS", ""))


def with_overrides(**changes) -> Flags:
    """Replace the process flags (used by set_backend and tests); returns the new Flags."""
    global FLAGS
    FLAGS = replace(FLAGS, **changes)
    return FLAGS
