"""Whole programs, side by side: ordinary NumPy programs run unchanged on NumPy, lazyarr and jax.numpy.

    python benchmarks/programs.py [--programs k-means,heat] [--repeat N] [--quick] [--output PATH]

Where benchmarks/run.py times single expressions, this runs small complete programs (k-means with
mask indexing, a stencil with slice assignment, complex Mandelbrot, gradient descent, a cumsum
moving average, n-body, Black-Scholes, an MLP training loop), each one function written once
against a namespace `xp` (benchmarks/program_kernels.py), in one process.

For every program and implementation it reports:
  * the first run: cold, compilation included (`la.clear_cache()` before lazyarr's, a new
    `la.jit` wrapper for the jit form; `jax.clear_caches()` before jax's);
  * the steady state: the median of --repeat runs, implementations interleaved round-robin;
  * lazyarr's compiles (`la.cache_info().misses`) during the first run and during one steady run;
  * the ratios NumPy time / implementation time (> 1: faster than NumPy), steady and first;
  * the same program under one `la.jit` (Python parameters static, the loop traced once), as a
    JAX user would jit it, except where it cannot be (k-means: mask indexing has a data-dependent
    shape).
Every timed run converts its outputs to NumPy (`la.eval` then `np.asarray`; jax: block until
ready) inside the timed region, so lazy work is counted. Inputs are converted before the timer
starts, freshly for every run (`la.asarray` makes new leaves, so lazyarr cannot hand back a value
it kept from the previous run instead of computing it).

The first and the second (warm) result of every implementation are checked against NumPy's first
run, with a tolerance per program (see `check_*` below). Prints a markdown table; writes JSON
(default benchmarks/results/programs.json). Exit status 0 when every check passes, 1 otherwise.
jax.numpy runs where it is installed and the program allows it (not heat: jax arrays cannot be
assigned to); without jax its column says so.
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peers  # noqa: E402  (siblings of this script, found through the line above)
import program_kernels as kernels  # noqa: E402
import timing  # noqa: E402
import workloads  # noqa: E402
from run import RESULTS_DIRECTORY, import_lazyarr_compiling, machine_description, report_results  # noqa: E402

FLOAT32_EPSILON = float(np.finfo(np.float32).eps)


# -- checks ------------------------------------------------------------------------------------
def _same_layout(result: np.ndarray, expected: np.ndarray, strict_dtype: bool) -> str | None:
    """Why `result` cannot be compared with `expected` (shape, dtype), or None.

    jax runs with 64-bit types off, so its integers are int32 where NumPy's are int64: with
    `strict_dtype` False only the dtype's kind and, for floats, the size must match."""
    if result.shape != expected.shape:
        return f"shape {result.shape} != {expected.shape}"
    if result.dtype == expected.dtype:
        return None
    if not strict_dtype and result.dtype.kind == expected.dtype.kind and expected.dtype.kind in "iu":
        return None
    return f"dtype {result.dtype} != {expected.dtype}"


def _within(result: np.ndarray, expected: np.ndarray, allowed) -> tuple[float, float]:
    """(worst error as a multiple of `allowed`, fraction of elements over it); NaN counts as over."""
    error = np.abs(result.astype(np.complex128 if result.dtype.kind == "c" else np.float64) - expected)
    ratio = error / np.broadcast_to(allowed, error.shape)
    over = ~(ratio <= 1.0)
    worst = float(np.nanmax(ratio)) if ratio.size and not np.isnan(ratio).all() else 0.0
    return (math.inf if np.isnan(ratio).any() else worst), float(over.mean()) if over.size else 0.0


def compare(results, expected, allowed, strict_dtype: bool, names: tuple[str, ...]) -> tuple[bool, str, float]:
    """Every output within `allowed[i]` (an array or scalar bound per element) of NumPy's.

    Returns (passed, verdict, worst error / allowed over all outputs)."""
    worst = 0.0
    for name, result, reference, bound in zip(names, results, expected, allowed):
        problem = _same_layout(result, reference, strict_dtype)
        if problem:
            return False, f"{name}: {problem}", math.inf
        error, _ = _within(result, reference, bound)
        worst = max(worst, error)
        if not error <= 1.0:
            return False, f"{name}: error {error:.3g}x the tolerance", worst
    return True, f"ok ({worst:.2g} of tol)", worst


def check_k_means(results, expected, strict_dtype):
    """Labels: identical. The clusters are well separated (blob centres 8 apart, spread 1), so no point
    is near a tie and a float32 rounding difference cannot move it. Centres: means of <= 2000 float32
    points of size ~10; summation order changes them by a few ulps of the sum: rtol 1e-5, atol 1e-5."""
    centres, labels = results
    expected_centres, expected_labels = expected
    problem = _same_layout(labels, expected_labels, strict_dtype)
    if problem:
        return False, f"labels: {problem}", math.inf
    if not np.array_equal(labels, expected_labels):
        return False, f"labels: {int((labels != expected_labels).sum())} of {labels.size} differ", math.inf
    return compare((centres,), (expected_centres,), (1e-5 + 1e-5 * np.abs(expected_centres),), strict_dtype,
                   ("centres",))


def check_heat(results, expected, strict_dtype):
    """u after the steps: values in [0, 1]. With diffusivity 0.2 each step is a convex combination (the
    centre and its four neighbours weigh 0.2 each), which does not amplify rounding: 50 steps adding a
    few ulps (6e-8) each stay below atol 1e-5."""
    return compare(results, expected, (1e-5,), strict_dtype, ("u",))


def check_mandelbrot(results, expected, strict_dtype):
    """Near the set's boundary the iteration is chaotic: a 1-ulp difference (a fused multiply-add, a
    different order) doubles every iteration and can change a point's escape count. So a point passes
    when its count is equal and its z is within 1e-3 (relative, absolute for |z| < 1), and at most
    0.5 % of the points may fail (a systematic error, a wrong `where` or count, fails far more)."""
    counts, z = results
    expected_counts, expected_z = expected
    for name, result, reference in (("counts", counts, expected_counts), ("z", z, expected_z)):
        problem = _same_layout(result, reference, strict_dtype)
        if problem:
            return False, f"{name}: {problem}", math.inf
    bad = (counts != expected_counts) | ~(np.abs(z - expected_z) <= 1e-3 * np.maximum(1, np.abs(expected_z)))
    fraction = float(bad.mean())
    if fraction > 0.005:
        return False, f"{fraction:.2%} of points differ (> 0.5 %)", fraction / 0.005
    return True, f"ok ({fraction:.2%} of points differ)", fraction / 0.005


def check_logistic(results, expected, strict_dtype):
    """Weights and bias after gradient descent on a convex loss: each step is a contraction near the
    optimum, so float32 rounding (dot products of 2000 terms) does not grow: rtol 1e-4, with atol
    1e-4 of the largest weight for weights near zero."""
    weights, bias = expected
    scale = max(float(np.abs(weights).max()), float(np.abs(bias)))
    allowed = tuple(1e-4 * scale + 1e-4 * np.abs(array) for array in expected)
    return compare(results, expected, allowed, strict_dtype, ("weights", "bias"))


def check_moving_average(results, expected, strict_dtype, window):
    """Each output is the difference of two float32 running sums, divided by the window. A running sum
    carries rounding errors of a few ulps of its size per step, and the two sums share all but `window`
    of them, so the difference differs between summation orders by ~window ulps of the largest running
    sum. Allowed: 4 * window ulps of max |running sum|, divided by window, plus rtol 1e-5."""
    (average,), (expected_average,) = results, expected
    running_scale = float(np.abs(np.cumsum(expected_average.astype(np.float64) * window)).max())
    allowed = 4 * window * FLOAT32_EPSILON * max(running_scale, 1.0) / window + 1e-5 * np.abs(expected_average)
    return compare((average,), (expected_average,), (allowed,), strict_dtype, ("average",))


def check_n_body(results, expected, strict_dtype):
    """Positions and velocities after a few steps: forces are sums of 500 terms of mixed sign, so their
    float32 error scales with the sum of |terms|, and a few steps pass it on: rtol 1e-4 plus atol 1e-4
    of each output's largest magnitude."""
    allowed = tuple(1e-4 * float(np.abs(array).max()) + 1e-4 * np.abs(array) for array in expected)
    return compare(results, expected, allowed, strict_dtype, ("positions", "velocities"))


def check_black_scholes(results, expected, strict_dtype, spot, strike):
    """Call and put prices are differences of terms of the size of spot and strike (50-150): the float32
    rounding of log, exp and the polynomial is a few ulps of those terms. Allowed: 1e-6 (about 8 ulps)
    of spot + strike, per option."""
    allowed = 1e-6 * (spot.astype(np.float64) + strike)
    return compare(results, expected, (allowed, allowed), strict_dtype, ("call", "put"))


def check_mlp(results, expected, strict_dtype):
    """Loss and parameters after a few SGD steps (as workloads.py's T1): parameters O(0.1), gradient
    errors ~1e-8 per step: rtol 1e-4, atol 1e-5 (float32 has ~7 digits; room for another order)."""
    names = ("loss", "w1", "b1", "w2", "b2")
    return compare(results, expected, tuple(1e-5 + 1e-4 * np.abs(array) for array in expected), strict_dtype, names)


def check_relaxation(results, expected, strict_dtype):
    """Each iteration is a convex combination (four neighbours weighing 0.25): rounding does not
    grow, so 100 iterations adding a few ulps (6e-8) each of values in [0, 1] stay below atol 1e-5.
    (The loop runs all its iterations: the tolerance is below any change float32 shows.)"""
    return compare(results, expected, (1e-5,), strict_dtype, ("u",))


def check_least_squares(results, expected, strict_dtype):
    """Weights and the losses read on the way, by gradient descent on a convex loss: each step
    contracts, so float32 rounding (products of 20 and 2000 terms, means of 2000) does not
    grow: rtol 1e-4, with atol 1e-4 of the largest weight for weights near zero."""
    weights, losses = expected
    allowed = (1e-4 * float(np.abs(weights).max()) + 1e-4 * np.abs(weights), 1e-4 * np.abs(losses))
    return compare(results, expected, allowed, strict_dtype, ("weights", "losses"))


def check_life(results, expected, strict_dtype):
    """Integer cells: identical."""
    problem = _same_layout(results[0], expected[0], strict_dtype)
    if problem:
        return False, f"board: {problem}", math.inf
    differ = int((results[0] != expected[0]).sum())
    return (differ == 0, "ok" if differ == 0 else f"{differ} cells differ", math.inf if differ else 0.0)


# -- programs ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Program:
    """One program: inputs (NumPy arrays and Python parameters), the function, its check."""

    key: str
    title: str
    make_inputs: Callable[[np.random.Generator, bool], tuple[dict[str, np.ndarray], dict]]  # (rng, quick)
    function: Callable  # function(xp, *arrays, **parameters) -> array or tuple of arrays
    check: Callable  # check(results, expected, strict_dtype, **check_arguments) -> (passed, verdict, worst)
    check_arguments: Callable[[dict, dict], dict] = lambda arrays, parameters: {}
    jax_note: str | None = None  # why jax does not run it, or None
    jit_step: bool = False  # the MLP with a jitted step (la.jit / jax.jit)
    jit_note: str | None = None  # why the whole program cannot run under la.jit, or None


def _float32(array) -> np.ndarray:
    return np.asarray(array, dtype=np.float32)


def _k_means_inputs(rng, quick):
    points_count, dimensions, clusters = (200 if quick else 2000), 4, 5
    blob_centres = rng.standard_normal((clusters, dimensions)) * 8
    labels = np.arange(points_count) % clusters
    points = _float32(blob_centres[labels] + rng.standard_normal((points_count, dimensions)))
    # One starting centre inside each blob: no cluster empties (an empty mean would be NaN).
    initial = _float32(points[:clusters] + 0.5 * rng.standard_normal((clusters, dimensions)))
    return {"points": points, "centres": initial}, {"iterations": 10}


def _heat_inputs(rng, quick):
    side = 32 if quick else 256
    initial = np.zeros((side, side), np.float32)
    initial[0, :] = 1  # a hot edge
    initial[side // 4: side // 2, side // 4: side // 2] = _float32(rng.random((side // 4, side // 4)))
    return {"initial": initial}, {"steps": 50, "diffusivity": 0.2}


def _mandelbrot_inputs(rng, quick):
    side = 40 if quick else 300
    real, imaginary = np.meshgrid(np.linspace(-2.0, 0.6, side), np.linspace(-1.2, 1.2, side))
    return {"c": (real + 1j * imaginary).astype(np.complex64)}, {"iterations": 30}


def _logistic_inputs(rng, quick):
    rows, columns = (200 if quick else 2000), 20
    features = _float32(rng.standard_normal((rows, columns)))
    true_weights = rng.standard_normal(columns)
    targets = _float32(rng.random(rows) < 1 / (1 + np.exp(-(features @ true_weights))))
    # --quick: 10 steps (the 100-step graph takes lazyarr ~18 s to compile, whatever the size).
    return {"features": features, "targets": targets}, {"steps": 10 if quick else 100, "learning_rate": 0.5}


def _moving_average_inputs(rng, quick):
    return {"signal": _float32(rng.standard_normal(10**4 if quick else 10**6))}, {"window": 50}


def _n_body_inputs(rng, quick):
    bodies = 50 if quick else 500
    return ({"positions": _float32(rng.standard_normal((bodies, 3))),
             "velocities": _float32(0.1 * rng.standard_normal((bodies, 3))),
             "masses": _float32(rng.random(bodies) / bodies)},
            {"steps": 5, "time_step": 0.01, "softening": 0.1})


def _black_scholes_inputs(rng, quick):
    options = 10**4 if quick else 10**6
    return ({"spot": _float32(rng.uniform(50, 150, options)), "strike": _float32(rng.uniform(50, 150, options)),
             "years": _float32(rng.uniform(0.1, 3, options))},
            {"rate": 0.02, "volatility": 0.3})


def _relaxation_inputs(rng, quick):
    side = 32 if quick else 128
    initial = np.zeros((side, side), np.float32)
    initial[0, :] = 1  # a hot edge
    return {"initial": initial}, {"iterations": 20 if quick else 100, "tolerance": 1e-9}


def _life_inputs(rng, quick):
    side = 32 if quick else 256
    board = (rng.random((side, side)) < 0.25).astype(np.int8)
    board[0, :] = board[-1, :] = board[:, 0] = board[:, -1] = 0
    return {"board": board}, {"generations": 30}


def _least_squares_inputs(rng, quick):
    rows, columns = (200 if quick else 2000), 20
    features = _float32(rng.standard_normal((rows, columns)))
    targets = _float32(features @ rng.standard_normal(columns) + 0.1 * rng.standard_normal(rows))
    return ({"features": features, "targets": targets},
            {"steps": 10 if quick else 100, "learning_rate": np.float32(0.5 / rows)})


MLP_STEPS = 10


def _mlp_inputs(rng, quick):
    t1 = workloads.WORKLOADS["T1"].make_inputs(rng, 1.0)  # 64-128-10, batch 128
    batch = t1["x"].shape[0]
    labels = rng.integers(0, 10, MLP_STEPS * batch)
    arrays = {name: t1[name] for name in ("w1", "b1", "w2", "b2")}
    arrays["inputs"] = _float32(rng.random((MLP_STEPS * batch, t1["x"].shape[1])))
    arrays["one_hots"] = np.eye(10, dtype=np.float32)[labels]
    return arrays, {"steps": MLP_STEPS}


PROGRAMS: dict[str, Program] = {
    program.key: program
    for program in (
        Program("k-means", "k-means 2000x4, 5 centres, 10 iterations (mask mean)", _k_means_inputs,
                kernels.k_means, check_k_means, jit_note="n/a: mask indexing (shape from data)"),
        Program("heat", "heat equation 256x256, 50 steps (slice assignment)", _heat_inputs, kernels.heat,
                check_heat, jax_note="n/a: slice assignment"),
        Program("mandelbrot", "Mandelbrot 300x300, 30 iterations (complex64, where)", _mandelbrot_inputs,
                kernels.mandelbrot, check_mandelbrot),
        Program("logistic", "logistic regression 2000x20, 100 GD steps", _logistic_inputs,
                kernels.logistic_regression, check_logistic),
        Program("moving-average", "moving average via cumsum, 1e6, window 50", _moving_average_inputs,
                kernels.moving_average, check_moving_average,
                check_arguments=lambda arrays, parameters: {"window": parameters["window"]}),
        Program("n-body", "n-body 500 bodies, 5 steps", _n_body_inputs, kernels.n_body, check_n_body),
        Program("black-scholes", "Black-Scholes 1e6 options (A&S normal CDF)", _black_scholes_inputs,
                kernels.black_scholes, check_black_scholes,
                check_arguments=lambda arrays, parameters: {"spot": arrays["spot"], "strike": arrays["strike"]}),
        Program("relaxation", "Laplace relaxation 128x128, 100 iterations, each tested with float()",
                _relaxation_inputs, kernels.relaxation, check_relaxation, jax_note="n/a: slice assignment",
                jit_note="n/a: a test of a value every iteration"),
        Program("life", "Game of Life 256x256 int8, 30 generations (masked fill)", _life_inputs, kernels.life,
                check_life, jax_note="n/a: masked assignment"),
        Program("least-squares", "least squares 2000x20, 100 GD steps, loss read every step",
                _least_squares_inputs, kernels.least_squares, check_least_squares,
                jit_note="n/a: a value read every step"),
        Program("mlp", f"T1 MLP training, {MLP_STEPS} steps, eager", _mlp_inputs, kernels.mlp_training, check_mlp),
        Program("mlp-jit", f"T1 MLP training, {MLP_STEPS} steps, jitted step", _mlp_inputs, kernels.mlp_training,
                check_mlp, jit_step=True, jit_note="n/a: its step is jitted (row above: whole loop)"),
    )
}


# -- implementations ---------------------------------------------------------------------------
@dataclass
class Implementation:
    """How one namespace runs a program: convert inputs, make a runner, finish (evaluate) its outputs."""

    name: str
    convert: Callable[[np.ndarray], object]
    make_runner: Callable[[Program, dict], Callable]  # (program, parameters) -> runner(*arrays)
    finish: Callable[[object], tuple[np.ndarray, ...]]
    clear: Callable[[], None] = lambda: None  # before the first run: forget compiled code
    lazy: bool = False
    strict_dtype: bool = True
    notes: list[str] = field(default_factory=list)


def _as_tuple(result) -> tuple:
    return tuple(result) if isinstance(result, (tuple, list)) else (result,)


def _eager_runner(xp, step_for=None):
    """A runner calling the program on `xp`; for the jit form, with a step made by `step_for` once
    per runner (so a new runner is a cold jit cache)."""
    def make(program: Program, parameters: dict):
        extra = {"step": step_for(functools.partial(kernels.mlp_step, xp))} if program.jit_step and step_for else {}
        return lambda *arrays: program.function(xp, *arrays, **parameters, **extra)
    return make


def numpy_implementation() -> Implementation:
    return Implementation("numpy", lambda array: array, _eager_runner(np),
                          lambda result: tuple(np.asarray(part) for part in _as_tuple(result)))


def _lazyarr_finish(la):
    def finish(result):
        parts = _as_tuple(result)
        la.eval(*parts)  # one module for all outputs, as a user asks for them together
        return tuple(np.asarray(part) for part in parts)
    return finish


def lazyarr_implementation(la) -> Implementation:
    return Implementation("lazyarr", la.asarray, _eager_runner(la, la.jit), _lazyarr_finish(la), clear=la.clear_cache,
                          lazy=True)


def lazyarr_jit_implementation(la) -> Implementation:
    """The whole program under one `la.jit` (its Python parameters static), as a JAX user writes
    `jax.jit(program, static_argnames=...)`: the loop is traced once and runs as one module."""
    def make(program: Program, parameters: dict):
        jitted = la.jit(functools.partial(program.function, la), static_argnames=tuple(parameters))
        return lambda *arrays: jitted(*arrays, **parameters)
    return Implementation("la.jit", la.asarray, make, _lazyarr_finish(la), clear=la.clear_cache, lazy=True)


def jax_implementation() -> Implementation | None:
    loaded = peers.load_jax()
    if loaded is None:
        return None
    jax, jax_numpy, device = loaded

    def finish(result):
        return tuple(np.asarray(part) for part in jax.block_until_ready(_as_tuple(result)))
    return Implementation("jax", lambda array: jax.device_put(array, device), _eager_runner(jax_numpy, jax.jit),
                          finish, clear=getattr(jax, "clear_caches", lambda: None), strict_dtype=False)


# -- measuring ---------------------------------------------------------------------------------
def _misses(la) -> tuple[int, int, float]:
    info = la.cache_info()
    return info.misses, info.hits, info.compile_seconds


class TimedRun:
    """One run of a runner on freshly converted inputs, timed from the call to NumPy outputs."""

    def __init__(self, la, implementation: Implementation, runner, arrays: dict):
        self.la, self.implementation, self.runner = la, implementation, runner
        self.inputs = tuple(implementation.convert(array) for array in arrays.values())  # outside the timer
        self.outputs: tuple[np.ndarray, ...] = ()
        self.compiles = self.lookups = 0
        self.compile_seconds = 0.0

    def __call__(self) -> None:
        self.outputs = self.implementation.finish(self.runner(*self.inputs))

    def timed(self) -> float:
        before = _misses(self.la) if self.implementation.lazy else None
        seconds = timing.sample(self, 1)  # garbage collected before, collector off during it
        if before is not None:
            after = _misses(self.la)
            self.compiles = after[0] - before[0]
            self.lookups = after[0] + after[1] - before[0] - before[1]
            self.compile_seconds = after[2] - before[2]
        return seconds


def _run_check(program: Program, outputs, expected, strict_dtype, check_arguments) -> tuple[bool, str, float]:
    return program.check(outputs, expected, strict_dtype, **check_arguments)


def measure_program(la, program: Program, implementations: list[Implementation], arguments) -> list[dict]:
    """First run, warm run (both checked) and interleaved steady runs of every implementation."""
    arrays, parameters = program.make_inputs(np.random.default_rng(arguments.seed), arguments.quick)
    shapes = ", ".join(f"{name}{array.shape} {array.dtype}" for name, array in arrays.items())
    print(f"{program.key}: {program.title}; inputs {shapes}", flush=True)
    check_arguments = program.check_arguments(arrays, parameters)
    rows, runners, expected = [], {}, None
    for implementation in implementations:
        row = {"program": program.key, "impl": implementation.name, "passed": False, "check": "", "note": ""}
        rows.append(row)
        if implementation.name == "jax" and program.jax_note:
            row.update(passed=True, check="-", note=program.jax_note)
            continue
        if implementation.name == "la.jit" and program.jit_note:
            row.update(passed=True, check="-", note=program.jit_note)
            continue
        try:
            implementation.clear()
            runner = implementation.make_runner(program, parameters)
            first = TimedRun(la, implementation, runner, arrays)
            row["first_s"] = first.timed()
            if expected is None:  # NumPy runs first: its first run is the reference
                expected = first.outputs
            warm = TimedRun(la, implementation, runner, arrays)
            row["warm_s"] = warm.timed()
            verdicts = [_run_check(program, run.outputs, expected, implementation.strict_dtype, check_arguments)
                        for run in (first, warm)]
            row["passed"] = all(passed for passed, _, _ in verdicts)
            row["check"] = next((verdict for passed, verdict, _ in verdicts if not passed), verdicts[0][1])
            row["worst_error_of_tolerance"] = max(worst for _, _, worst in verdicts)
            if implementation.lazy:
                row.update(compiles_first=first.compiles, compiles_steady=warm.compiles,
                           compile_seconds_first=first.compile_seconds, evaluations_steady=warm.lookups)
                if warm.lookups == 0 and implementation.name == "lazyarr":  # (la.jit calls look up their own cache)
                    row["note"] = "no evaluation in the warm run: its time may be a lookup"
        except Exception as error:  # report it and go on with the others
            row["check"] = f"raised {type(error).__name__}: {str(error)[:160]}"
            continue
        runners[implementation.name] = (implementation, runner)
    samples: dict[str, list[float]] = {name: [] for name in runners}
    steady_compiles: dict[str, int] = {name: 0 for name in runners}
    names = list(runners)
    for name in names:  # a later implementation's cold start cleared the compile caches: refill them
        implementation, runner = runners[name]
        TimedRun(la, implementation, runner, arrays)()
    for round_number in range(arguments.repeat):
        shift = round_number % len(names) if names else 0
        for name in names[shift:] + names[:shift]:
            implementation, runner = runners[name]
            run = TimedRun(la, implementation, runner, arrays)
            samples[name].append(run.timed())
            steady_compiles[name] += run.compiles
    for row in rows:
        if row["impl"] in samples:
            values = samples[row["impl"]]
            row.update(steady_s=statistics.median(values), steady_min_s=min(values), samples=values)
            if row["impl"] == "lazyarr":
                row["compiles_during_steady_samples"] = steady_compiles["lazyarr"]
    numpy_row = rows[0]
    for row in rows[1:]:
        for kind in ("steady_s", "first_s"):
            if numpy_row.get(kind) and row.get(kind):
                row[f"ratio_{kind[:-2]}"] = numpy_row[kind] / row[kind]
    return rows


# -- reporting ---------------------------------------------------------------------------------
def table_lines(rows: list[dict], jax_missing: str | None) -> list[str]:
    """The markdown table: one line per program."""
    header = ("program", "NumPy steady", "lazyarr steady", "steady ratio", "NumPy first", "lazyarr first",
              "first ratio", "compiles first/steady", "la.jit(program) steady", "steady ratio", "first",
              "jax steady ratio", "checks")
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    by_program: dict[str, dict[str, dict]] = {}
    for row in rows:
        by_program.setdefault(row["program"], {})[row["impl"]] = row
    for program, found in by_program.items():
        numpy_row, lazy, jax_row = found.get("numpy", {}), found.get("lazyarr", {}), found.get("jax")
        jitted = found.get("la.jit", {})

        def ratio(row, kind):
            value = row.get(f"ratio_{kind}")
            return f"{value:.2f}x" if value else "-"
        if jax_row is None:
            jax_cell = f"n/a: {jax_missing}" if jax_missing else "-"
        elif jax_row.get("note") and "steady_s" not in jax_row:
            jax_cell = jax_row["note"]
        else:
            jax_cell = ratio(jax_row, "steady") if jax_row.get("passed") else "FAILED"
        compiles = (f"{lazy['compiles_first']}/{lazy['compiles_steady']}" if "compiles_first" in lazy else "-")
        failed = [f"{name}: {row['check']}" for name, row in found.items() if not row["passed"]]
        checks = "; ".join(failed) if failed else "all pass"
        lines.append("| " + " | ".join((
            program, timing.format_seconds(numpy_row.get("steady_s")), timing.format_seconds(lazy.get("steady_s")),
            ratio(lazy, "steady"), timing.format_seconds(numpy_row.get("first_s")),
            timing.format_seconds(lazy.get("first_s")), ratio(lazy, "first"), compiles,
            jitted.get("note") or timing.format_seconds(jitted.get("steady_s")), ratio(jitted, "steady"),
            timing.format_seconds(jitted.get("first_s")), jax_cell, checks)) + " |")
    return lines


def _loads(loads) -> str:
    return "/".join(f"{load:.2f}" for load in loads)


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", default=",".join(PROGRAMS),
                        help="comma-separated keys (default: all): " + ",".join(PROGRAMS))
    parser.add_argument("--repeat", type=int, help="steady runs per implementation (default 5; --quick: 1)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, 1 repeat: correctness only (smoke test)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-jax", action="store_true",
                        help="leave jax out (not even imported): NumPy and lazyarr as a process without it has "
                             "them (importing jax raises glibc's malloc thresholds, which makes NumPy's "
                             "temporaries cheaper)")
    parser.add_argument("--output", type=Path, default=RESULTS_DIRECTORY / "programs.json")
    arguments = parser.parse_args(argv)
    arguments.repeat = arguments.repeat or (1 if arguments.quick else 5)
    keys = [key.strip().lower() for key in arguments.programs.split(",") if key.strip()]
    unknown = [key for key in keys if key not in PROGRAMS]
    if unknown:
        parser.error(f"unknown programs {unknown}; known: {', '.join(PROGRAMS)}")
    arguments.keys = keys
    return arguments


def main(argv=None) -> int:
    arguments = parse_arguments(argv)
    la = import_lazyarr_compiling()

    # Loads the backend (LLVM's initialization), so the first program's cold run is charged for its
    # own compiles only.
    np.asarray(la.asarray(np.zeros(1, np.float32)) + 1)
    implementations = [numpy_implementation(), lazyarr_implementation(la), lazyarr_jit_implementation(la)]
    jax = None if arguments.no_jax else jax_implementation()
    if jax is not None:
        implementations.append(jax)
    machine = machine_description()
    machine["load_average_start"] = os.getloadavg()  # other processes' load: the timings' context
    print(f"machine: {machine['platform']}, {machine['cpu_model']}, {machine['cpu_count']} CPUs "
          f"({machine['usable_cpus']} usable), Python {machine['python']}, NumPy {machine['numpy']}")
    print(f"lazyarr {la.__version__}, backend {la.get_backend_name()!r}; repeat {arguments.repeat}"
          f"{', quick sizes' if arguments.quick else ''}; ratio = NumPy time / lazyarr time (>1: lazyarr faster)")
    rows = []
    for key in arguments.keys:
        rows += measure_program(la, PROGRAMS[key], implementations, arguments)
    print()
    jax_missing = "--no-jax" if arguments.no_jax else ("jax not installed" if jax is None else None)
    for line in table_lines(rows, jax_missing):
        print(line)
    for note in peers.NOTES:
        print(f"note: {note}")
    machine["load_average_end"] = os.getloadavg()
    print(f"load average (1, 5, 15 min): start {_loads(machine['load_average_start'])}, "
          f"end {_loads(machine['load_average_end'])} on {machine['usable_cpus']} usable CPUs")
    machine.update(lazyarr=la.__version__, backend=la.get_backend_name(),
                   peers={} if arguments.no_jax else peers.versions())
    options = {"repeat": arguments.repeat, "seed": arguments.seed, "quick": arguments.quick,
               "programs": arguments.keys, "no_jax": arguments.no_jax}
    return report_results(arguments.output, machine, options, rows)


if __name__ == "__main__":
    sys.exit(main())
