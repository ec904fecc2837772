"""`python -m lazyarr run-hlo`: replay an HLO module on two backends and compare the results.

The module is usually a dump (`LAZYARR_FLAGS=--dump_to=DIR` writes
`module_NNNN.main.before_optimizations.txt` for every compiled graph), so a wrong result seen
in a program can be reproduced from one file, without the program:

    python -m lazyarr run-hlo DIR/module_0003.main.before_optimizations.txt \\
        --backend cpu --compare interpreter --repeat 5

Parameters get random values of their shapes and dtypes (floats standard normal, integers
small, bools fair coins; `--seed`), or the arrays of an `.npz` file keyed by parameter
number (`0`, `p0` or NumPy's positional `arr_0`). For every output it prints shape, dtype,
the largest absolute and relative difference, the largest distance in ULPs (floats) and
the NaN positions that differ; for each backend, compile and run time. The exit status is
0 when every output agrees within tolerance, 1 when one differs or a backend fails, 2 for
bad arguments or an unreadable module or inputs.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from . import dtypes
from .backends import available_backends
from .compile import cache_info, compile_module
from .hlo import Instruction, Module
from .hlo.text import format_type, parse

# (rtol, atol) per float kind when --rtol/--atol are not given. Backends round differently
# where they may: the CPU reassociates reductions into vector partial sums (an error up to
# (n - 1) eps sum|t| against NumPy's pairwise order) and calls its own libm (within a few ULP
# per call), and a dumped module chains tens of ops. On inputs of order 1, as the random ones
# are, that noise stays within some tens of ULP (these are 10x JAX's test tolerances of
# 1e-3/1e-6/1e-15), while a miscompile is usually off by far more. An absolute part as large
# as the relative one accepts results near zero after cancellation. Integers and bools must
# be identical. An output is held to the tolerance of the narrowest float type the module
# computes in (`working_float_dtype`), not only its own: float32 work converted to a float64
# output carries float32 rounding differences, which float64's tolerance would call a miscompile.
DEFAULT_TOLERANCES = {
    np.dtype(np.float16): (1e-2, 1e-2),
    np.dtype(np.float32): (1e-5, 1e-5),
    np.dtype(np.float64): (1e-14, 1e-14),
}
_SMALL_INTEGER_LIMIT = 8  # random integers lie in [-8, 8] (unsigned [0, 8]): zero included


# ------------------------------------------------------------------------------ inputs


def random_inputs(parameters: tuple[Instruction, ...], seed: int) -> list[np.ndarray]:
    """One random array per parameter, in parameter order, reproducible from `seed`.

    A parameter too large for memory is a MemoryError naming it.
    """
    generator = np.random.default_rng(seed)
    inputs = []
    for number, parameter in enumerate(parameters):
        try:
            inputs.append(random_array(parameter.shape, parameter.dtype, generator))
        except MemoryError:  # NumPy's message would name the float64 draws, not the parameter
            size = math.prod(parameter.shape) * np.dtype(parameter.dtype).itemsize
            raise MemoryError(f"run-hlo: parameter p{number} ({format_type(parameter.shape, parameter.dtype)}, "
                              f"{size} bytes) does not fit in memory") from None
    return inputs


def random_array(shape: tuple[int, ...], dtype: np.dtype, generator: np.random.Generator) -> np.ndarray:
    """Values in the range where each dtype is exercised without overflowing at once."""
    kind = np.dtype(dtype).kind
    if kind == "b":
        return generator.random(shape) < 0.5
    if kind == "i":
        return generator.integers(-_SMALL_INTEGER_LIMIT, _SMALL_INTEGER_LIMIT + 1, shape).astype(dtype)
    if kind == "u":
        return generator.integers(0, _SMALL_INTEGER_LIMIT + 1, shape).astype(dtype)
    if kind == "f":
        return generator.standard_normal(shape).astype(dtype)
    if kind == "c":
        return (generator.standard_normal(shape) + 1j * generator.standard_normal(shape)).astype(dtype)
    raise ValueError(f"run-hlo: cannot make random values of dtype {dtype}")


def load_inputs(path: str, parameters: tuple[Instruction, ...]) -> list[np.ndarray]:
    """The arrays of an .npz file, one per parameter, checked against the parameters' types.

    Keys name the parameter number: `0`, `p0` (its name in HLO text) or `arr_0` (what
    `np.savez(path, *arrays)` writes). A missing parameter, an unknown key or a wrong shape
    or dtype is a ValueError naming the key and the expected type.
    """
    with np.load(path, allow_pickle=False) as archive:
        stored = {key: archive[key] for key in archive.files}
    by_number: dict[int, tuple[str, np.ndarray]] = {}
    for key, value in stored.items():
        number = _parameter_number(key)
        if number is None or number >= len(parameters):
            raise ValueError(
                f"run-hlo: {path} has an array {key!r}, which names no parameter; the module's "
                f"parameters are {_parameter_list(parameters)} (keys 0, p0 or arr_0 name parameter 0)"
            )
        if number in by_number:
            raise ValueError(f"run-hlo: {path} has two arrays for parameter {number}: "
                             f"{by_number[number][0]!r} and {key!r}")
        by_number[number] = (key, value)
    inputs = []
    for number, parameter in enumerate(parameters):
        if number not in by_number:
            raise ValueError(
                f"run-hlo: {path} has no array for parameter {number} "
                f"(p{number}: {format_type(parameter.shape, parameter.dtype)}); keys found: "
                f"{', '.join(sorted(stored)) or 'none'}"
            )
        key, value = by_number[number]
        if value.shape != parameter.shape or value.dtype != parameter.dtype:
            raise ValueError(
                f"run-hlo: parameter p{number} expects {format_type(parameter.shape, parameter.dtype)}, "
                f"but {path}[{key!r}] is {format_type(value.shape, value.dtype)}"
            )
        inputs.append(value)
    return inputs


def _parameter_number(key: str) -> int | None:
    for prefix in ("arr_", "p", ""):
        digits = key.removeprefix(prefix) if key.startswith(prefix) else None
        if digits and digits.isdigit():
            return int(digits)
    return None


def _parameter_list(parameters) -> str:
    return ", ".join(f"p{number}: {format_type(p.shape, p.dtype)}" for number, p in enumerate(parameters)) or "none"


# --------------------------------------------------------------------------- running


@dataclass
class BackendRun:
    """One backend's compile and runs of the module: its outputs, or the error it raised."""

    backend: str
    compile_seconds: float = 0.0
    cached: bool = False
    run_seconds: list[float] = field(default_factory=list)
    outputs: list[np.ndarray] | None = None
    error: str = ""


def run_backend(text: str, backend: str, inputs: list[np.ndarray], repeat: int = 1) -> BackendRun:
    """Parse `text` afresh (compiling rewrites the module in place), compile it for `backend`
    and run it `repeat` times; the outputs of the first run are kept."""
    result = BackendRun(backend)
    module = parse(text)
    hits_before = cache_info().hits
    start = time.perf_counter()
    try:
        executable = compile_module(module, backend)
    except Exception as error:  # a compiler bug is a result to report, not a crash of the tool
        result.error = f"compile failed: {type(error).__name__}: {error}"
        return result
    result.compile_seconds = time.perf_counter() - start
    result.cached = cache_info().hits > hits_before
    for _ in range(repeat):
        start = time.perf_counter()
        try:
            outputs = executable.run(inputs)
        except Exception as error:
            result.error = f"run failed: {type(error).__name__}: {error}"
            return result
        result.run_seconds.append(time.perf_counter() - start)
        if result.outputs is None:
            result.outputs = [np.asarray(output) for output in outputs]
    return result


# ------------------------------------------------------------------------- comparing


@dataclass
class OutputComparison:
    """How one output of the tested backend differs from the reference backend's."""

    index: int
    got_type: str
    want_type: str
    max_absolute: float = 0.0
    max_relative: float = 0.0
    max_ulp: int | None = None  # floats only
    nan_mismatches: int = 0
    mismatches: int = 0  # elements outside tolerance, NaN mismatches included
    rtol: float = 0.0
    atol: float = 0.0

    @property
    def agrees(self) -> bool:
        return self.got_type == self.want_type and self.mismatches == 0

    def __str__(self) -> str:
        if self.got_type != self.want_type:
            return f"output {self.index}: type differs: {self.got_type} vs {self.want_type}  DIFFERS"
        parts = [f"output {self.index}: {self.got_type}", f"max abs {self.max_absolute:.3g}",
                 f"max rel {self.max_relative:.3g}"]
        if self.max_ulp is not None:
            parts.append(f"max ulp {self.max_ulp}")
            parts.append(f"NaN mismatches {self.nan_mismatches}")
        verdict = "ok" if self.agrees else f"DIFFERS at {self.mismatches} elements"
        tolerance = f" (rtol {self.rtol:g}, atol {self.atol:g})" if self.max_ulp is not None else " (exact)"
        return "  ".join(parts) + f"  {verdict}{tolerance}"


def compare_output(index: int, got: np.ndarray, want: np.ndarray, rtol: float | None = None,
                   atol: float | None = None, working_dtype: np.dtype | None = None) -> OutputComparison:
    """Compare `got` with the reference `want`: equal types, then values within tolerance.

    Floats agree where equal (infinities included), where |got - want| <= atol + rtol |want|,
    or where both are NaN; integers and bools only where equal. None picks the
    DEFAULT_TOLERANCES of the output's float type, or of `working_dtype` (the narrowest float
    type the computation works in, `working_float_dtype`) where that is narrower.
    """
    comparison = OutputComparison(index, format_type(got.shape, got.dtype), format_type(want.shape, want.dtype))
    if comparison.got_type != comparison.want_type:
        return comparison
    if not dtypes.is_inexact(want.dtype):
        wide_got, wide_want = got.astype(np.float64), want.astype(np.float64)
        difference = np.abs(wide_got - wide_want)
        comparison.max_absolute = float(difference.max(initial=0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            relative = np.where(difference == 0, 0.0, difference / np.abs(wide_want))
        comparison.max_relative = float(relative.max(initial=0.0))
        comparison.mismatches = int(np.count_nonzero(got != want))
        return comparison
    real_dtype = np.dtype(dtypes.real_dtype(want.dtype)) if dtypes.is_complex(want.dtype) else want.dtype
    if working_dtype is not None and np.dtype(working_dtype).itemsize < real_dtype.itemsize:
        real_dtype = np.dtype(working_dtype)  # no more precise than the narrowest rounding on its way
    default_rtol, default_atol = DEFAULT_TOLERANCES.get(real_dtype, DEFAULT_TOLERANCES[np.dtype(np.float64)])
    comparison.rtol = default_rtol if rtol is None else rtol
    comparison.atol = default_atol if atol is None else atol
    got_nan, want_nan = np.isnan(got), np.isnan(want)
    comparison.nan_mismatches = int(np.count_nonzero(got_nan != want_nan))
    numbers = ~(got_nan | want_nan)
    got_numbers, want_numbers = got[numbers], want[numbers]
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        equal = got_numbers == want_numbers
        difference = np.where(equal, 0.0, np.abs(got_numbers - want_numbers))
        scale = np.abs(want_numbers)
        relative = np.where(equal, 0.0, difference / scale)
        finite = np.isfinite(got_numbers) & np.isfinite(want_numbers)  # inf vs 5 is never close
        close = equal | (finite & (difference <= comparison.atol + comparison.rtol * scale))
    comparison.max_absolute = float(difference.max(initial=0.0))
    comparison.max_relative = float(np.nan_to_num(relative, nan=np.inf).max(initial=0.0))
    parts = [(got_numbers, want_numbers)]
    if dtypes.is_complex(want.dtype):
        parts = [(got_numbers.real, want_numbers.real), (got_numbers.imag, want_numbers.imag)]
    comparison.max_ulp = max(int(ulp_distance(left, right).max(initial=0)) for left, right in parts)
    comparison.mismatches = comparison.nan_mismatches + int(np.count_nonzero(~close))
    return comparison


def working_float_dtype(module: Module) -> np.dtype | None:
    """The narrowest float type the module computes in (a complex type counts as its real
    part's), or None when it computes no floats.

    Parameters and constants are left out: they hold their values exactly, and converting
    them to a wider type loses nothing; every other instruction rounds to its own type.
    """
    computed = [
        np.dtype(dtypes.real_dtype(node.dtype))
        for computation in (module.entry, *module.computations.values())
        for node in computation.post_order()
        if node.opcode not in ("parameter", "constant") and dtypes.is_inexact(node.dtype)
    ]
    return min(computed, key=lambda dtype: dtype.itemsize, default=None)


def ulp_distance(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """How many representable floats lie between `got` and `want` (uint64; 0 and -0 are equal).

    The bit patterns are mapped to integers ordered as the floats are, then offset to
    unsigned, so the distance between the two extremes of float64 does not overflow.
    """
    dtype = np.dtype(got.dtype)
    signed = np.dtype(f"i{dtype.itemsize}")
    bits = [np.ascontiguousarray(values).view(signed).astype(np.int64) for values in (got, want)]
    smallest = np.int64(np.iinfo(signed).min)
    ordered = [np.where(value < 0, smallest - value, value) for value in bits]
    unsigned = [value.view(np.uint64) ^ np.uint64(1 << 63) for value in ordered]
    return np.where(unsigned[0] >= unsigned[1], unsigned[0] - unsigned[1], unsigned[1] - unsigned[0])


# --------------------------------------------------------------------------- the tool


def configure_parser(parser: argparse.ArgumentParser) -> None:
    """Arguments of `python -m lazyarr run-hlo`."""
    parser.description = (
        "Run an HLO module (e.g. a --dump_to file module_NNNN.main.before_optimizations.txt) on "
        "two backends with the same inputs and compare every output. Exit status: 0 when all "
        "outputs agree, 1 when one differs or a backend fails, 2 for bad arguments or input files."
    )
    backends = available_backends()
    parser.add_argument("module", help="HLO text file (lazyarr.hlo.text format)")
    parser.add_argument("--backend", default="cpu", choices=backends, help="backend to test (default: cpu)")
    parser.add_argument("--compare", default="interpreter", choices=backends,
                        help="reference backend (default: interpreter, the NumPy oracle)")
    parser.add_argument("--inputs", metavar="NPZ",
                        help="arrays for the parameters, keyed 0 / p0 / arr_0 (default: random values)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default: 0)")
    parser.add_argument("--repeat", type=_positive_integer, default=1, metavar="K",
                        help="runs per backend; the minimum and median times are shown (default: 1)")
    parser.add_argument("--rtol", type=_non_negative_float,
                        help="relative tolerance for float outputs (default per dtype: f16 1e-2, f32 1e-5, "
                             "f64 1e-14, of the output's type or the narrowest float type the module computes "
                             "in, where that is narrower)")
    parser.add_argument("--atol", type=_non_negative_float,
                        help="absolute tolerance for float outputs (default: as --rtol's per-dtype default)")


def _positive_integer(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text}")
    return value


def _non_negative_float(text: str) -> float:
    value = float(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text}")
    return value


def main(args: argparse.Namespace) -> int:
    """Run `python -m lazyarr run-hlo` with parsed `args`; returns the exit status."""
    try:
        with open(args.module) as file:
            text = file.read()
        module = parse(text)
        parameters = module.entry.parameters
        inputs = load_inputs(args.inputs, parameters) if args.inputs else random_inputs(parameters, args.seed)
    except (OSError, ValueError, MemoryError) as error:  # HloError is a ValueError: the parser names the line
        message = str(error)
        print(message if message.startswith("run-hlo:") else f"run-hlo: {message}", file=sys.stderr)
        return 2
    for value in inputs:
        value.flags.writeable = False  # a backend writing into its inputs would fail loudly
    _print_header(args, module, inputs)
    runs = [run_backend(text, name, inputs, args.repeat) for name in (args.backend, args.compare)]
    _print_timings(runs, args.repeat)
    tested, reference = runs
    if tested.error or reference.error:
        for run in runs:
            if run.error:
                print(f"{run.backend}: {run.error}")
        print("FAILED: no results to compare")
        return 1
    if len(tested.outputs) != len(reference.outputs):
        print(f"DIFFERS: {args.backend} returned {len(tested.outputs)} outputs, "
              f"{args.compare} {len(reference.outputs)}")
        return 1
    working_dtype = working_float_dtype(module)
    comparisons = [compare_output(index, got, want, args.rtol, args.atol, working_dtype)
                   for index, (got, want) in enumerate(zip(tested.outputs, reference.outputs))]
    for comparison in comparisons:
        print(comparison)
    differing = [comparison.index for comparison in comparisons if not comparison.agrees]
    if differing:
        print(f"DIFFERS: output(s) {', '.join(map(str, differing))} of {len(comparisons)} "
              f"differ between {args.backend} and {args.compare}")
        return 1
    print(f"OK: all {len(comparisons)} output(s) agree between {args.backend} and {args.compare}")
    return 0


def _print_header(args, module: Module, inputs: list[np.ndarray]) -> None:
    entry = module.entry
    print(f"{os.path.basename(args.module)}: {len(entry.parameters)} parameter(s), {len(entry.outputs)} output(s)")
    source = f"from {args.inputs}" if args.inputs else f"random (seed {args.seed})"
    types = [format_type(value.shape, value.dtype) for value in inputs]
    width = max(map(len, types), default=0)
    for number, type_text in enumerate(types):
        print(f"  p{number:<3} {type_text:<{width}}  {source}")


def _print_timings(runs: list[BackendRun], repeat: int) -> None:
    heading = "run" if repeat == 1 else f"run (min / median of {repeat})"
    print(f"  {'backend':<12} {'compile':>12}  {heading}")
    for run in runs:
        compile_text = "cached" if run.cached else _duration(run.compile_seconds)
        if run.run_seconds:
            run_text = _duration(min(run.run_seconds))
            if repeat > 1:
                run_text += f" / {_duration(statistics.median(run.run_seconds))}"
        else:
            run_text = "-"
        print(f"  {run.backend:<12} {compile_text:>12}  {run_text}")


def _duration(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"
