"""Interleaved timing: every implementation of a workload is sampled in turn, round-robin.

Interleaving spreads slow drifts of the machine (frequency scaling, a noisy neighbour, a page
cache warming up) over all implementations alike, so their ratios stay fair. Each sample runs
a call `calls` times in a row and reports the time of one call, so that microsecond-sized calls
are not lost in timer overhead. Garbage is collected before each sample and the collector is
off during it (as `timeit` does), so one implementation's garbage is not charged to another.
"""

from __future__ import annotations

import gc
import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Summary:
    """Per-call times of one implementation, in seconds."""

    samples: tuple[float, ...]
    calls_per_sample: int

    @property
    def minimum(self) -> float:
        return min(self.samples)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)


def time_once(function: Callable[[], object]) -> tuple[float, object]:
    """Seconds taken by one call of `function`, and what it returned."""
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def calls_for(seconds_per_call: float, target_seconds: float, limit: int = 100_000) -> int:
    """How many calls in a row make a sample last about `target_seconds` (at least one)."""
    if seconds_per_call <= 0:
        return limit
    return max(1, min(limit, math.ceil(target_seconds / seconds_per_call)))


def sample(function: Callable[[], object], calls: int) -> float:
    """Seconds per call over `calls` back-to-back calls, with the garbage collector off."""
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        for _ in range(calls):
            function()
        elapsed = time.perf_counter() - start
    finally:
        if was_enabled:
            gc.enable()
    return elapsed / calls


def interleaved(
    functions: dict[str, Callable[[], object]], calls: dict[str, int], repeat: int
) -> dict[str, Summary]:
    """Sample every function `repeat` times, round-robin; the starting one rotates each round.

    >>> result = interleaved({"noop": lambda: None}, {"noop": 10}, repeat=3)
    >>> len(result["noop"].samples)
    3
    """
    names = list(functions)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for round_number in range(repeat):
        shift = round_number % len(names) if names else 0
        for name in names[shift:] + names[:shift]:
            samples[name].append(sample(functions[name], calls[name]))
    return {name: Summary(tuple(samples[name]), calls[name]) for name in names}


def format_seconds(seconds: float | None) -> str:
    """A short human reading of a duration: '812 ns', '3.41 us', '12.6 ms', '1.52 s'."""
    if seconds is None or math.isnan(seconds):
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if abs(seconds) >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"
