"""Benchmark lazyarr against NumPy (and numexpr, jax.jit where installed) on the W1-W8 and T1 workloads.

    python benchmarks/run.py [--workloads W1,W3] [--repeat N] [--scale 0.1] [--quick] [--backend cpu]

For each workload: inputs are built once, every implementation's result is checked against
NumPy (float64 reference, see workloads.py), then all implementations are timed round-robin.
The lazyarr call includes building the graph and evaluating it (`np.asarray(expression)`), as a
user runs it; only `la.asarray` of the inputs happens outside the timing. Prints the machine and a
table; writes JSON to benchmarks/results/latest.json. Exit status: 0 when every check passes,
1 when one fails or raises, 2 when the backend cannot be selected.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peers  # noqa: E402  (siblings of this script, found through the line above)
import stream  # noqa: E402
import timing  # noqa: E402
import workloads  # noqa: E402

RESULTS_DIRECTORY = Path(__file__).resolve().parent / "results"


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default=",".join(workloads.ALL_KEYS),
                        help="comma-separated keys (default: all): " + ",".join(workloads.ALL_KEYS))
    parser.add_argument("--repeat", type=int, help="timed samples per implementation (default 5; --quick: 2)")
    parser.add_argument("--scale", type=float,
                        help="shrink the sizes by this factor (default 1; --quick: 0.001)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes and 2 repeats (the smoke test)")
    parser.add_argument("--backend", help="lazyarr backend (default: la.get_backend_name())")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path, default=RESULTS_DIRECTORY / "latest.json")
    arguments = parser.parse_args(argv)
    arguments.repeat = arguments.repeat or (2 if arguments.quick else 5)
    arguments.scale = arguments.scale or (0.001 if arguments.quick else 1.0)
    arguments.sample_seconds = 0.001 if arguments.quick else 0.02  # each sample lasts about this long
    by_upper = {key.upper(): key for key in workloads.ALL_KEYS}
    keys = [by_upper.get(key.strip().upper(), key.strip()) for key in arguments.workloads.split(",")]
    unknown = [key for key in keys if key not in workloads.ALL_KEYS]
    if unknown:
        parser.error(f"unknown workloads {unknown}; known: {', '.join(workloads.ALL_KEYS)}")
    arguments.keys = keys
    return arguments


def machine_description() -> dict:
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.split(":")[0].strip() in ("model name", "Hardware", "Processor", "cpu model"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"platform": platform.platform(), "python": platform.python_version(), "cpu_count": os.cpu_count(),
            "usable_cpus": usable, "cpu_model": model, "numpy": np.__version__}


def _cache_fields(la) -> dict:
    """`la.cache_info()` as a dict (mapping, named tuple, dataclass or object); {} without it."""
    info = la.cache_info() if hasattr(la, "cache_info") else None
    if info is None:
        return {}
    if hasattr(info, "_asdict"):
        return info._asdict()
    return dict(info) if isinstance(info, dict) else dict(getattr(info, "__dict__", {}))


def timed_with_cache(la, call, lazy: bool):
    """Time one call; for lazyarr also read `la.cache_info()` around it.

    Returns (seconds, result, compile seconds or None, evaluated or None). Compile seconds come
    from the first numeric field named like compile time ('compile' and 'time'/'second').
    `evaluated` is False when neither the cache's hits nor its misses moved: nothing was
    evaluated, the result was a value lazyarr had kept from an earlier call (then the timing
    measures a lookup, not the computation).
    """
    before = _cache_fields(la) if lazy else {}
    seconds, result = timing.time_once(call)
    after = _cache_fields(la) if before else {}
    compile_seconds = evaluated = None
    for name, value in after.items():
        lowered = name.lower()
        says_time = "time" in lowered or "second" in lowered
        if compile_seconds is None and "compile" in lowered and says_time and isinstance(value, int | float):
            compile_seconds = max(float(value) - float(before.get(name, 0.0)), 0.0)
    if {"hits", "misses"} <= after.keys():
        evaluated = after["hits"] + after["misses"] != before["hits"] + before["misses"]
    return seconds, result, compile_seconds, evaluated


MEMOIZED_NOTE = "memoized: no evaluation ran, the time is a lookup"


def lazyarr_form(la, workload):
    """The workload as a function of its arrays for lazyarr: its `autodiff_form` with
    `la.value_and_grad` where it has one (T1), else its `expression`."""
    if workload.autodiff_form is not None:
        return lambda *arrays: workload.autodiff_form(la, la.value_and_grad, *arrays)
    return lambda *arrays: workload.expression(la, *arrays)


def evaluated(la, result):
    """A lazy result as NumPy; a tuple of them (T1) evaluated as one module, like one call."""
    if isinstance(result, tuple):
        la.eval(*result)
        return tuple(np.asarray(part) for part in result)
    return np.asarray(result)


def lazyarr_callables(la, workload, inputs) -> dict:
    """'lazyarr' (graph building + evaluation per call) and, for W5 and T1, 'lazyarr.jit' (or a note)."""
    lazy = tuple(la.asarray(array) for array in inputs.values())
    form = lazyarr_form(la, workload)
    found = {"lazyarr": lambda: evaluated(la, form(*lazy))}
    if workload.has_jit_form:
        if hasattr(la, "jit"):
            def traced(*arrays):
                return form(*arrays)
            compiled = la.jit(traced)
            found["lazyarr.jit"] = lambda: evaluated(la, compiled(*lazy))
        else:
            found["lazyarr.jit"] = "n/a: la.jit not available"
    return found


def measure_workload(la, workload, arguments) -> list[dict]:
    """Check and time every implementation of one workload; one row each."""
    inputs = workload.make_inputs(np.random.default_rng(arguments.seed), arguments.scale)
    shapes = ", ".join(f"{name}{tuple(array.shape)}" for name, array in inputs.items())
    print(f"{workload.key}: {workload.title}; float32 inputs {shapes}", flush=True)
    answer, error_scale = workloads.reference(workload, inputs)
    arrays = tuple(inputs.values())
    implementations = {"numpy": lambda: workload.expression(np, *arrays)}
    implementations.update(lazyarr_callables(la, workload, inputs))
    for name, make in (("numexpr", peers.numexpr_callable), ("jax.jit", peers.jax_callable)):
        call = make(workload, inputs)
        if call is not None:
            implementations[name] = call
    rows, runnable, calls, cold = [], {}, {}, {}
    for name, call in implementations.items():
        row = {"workload": workload.key, "impl": name, "passed": False, "check": "", "note": ""}
        rows.append(row)
        if isinstance(call, str):
            row.update(passed=True, check="-", note=call)
            continue
        try:
            is_lazy = name.startswith("lazyarr")
            cold[name], result, row["cache_compile_s"], _ = timed_with_cache(la, call, is_lazy)
            row["passed"], row["check"] = workloads.check(result, answer, error_scale)
            # The output is float32 like the inputs (the float64 reference would count 8 bytes).
            row["bytes"] = workload.bytes_moved(inputs, np.broadcast_to(np.float32(0), np.shape(answer)))
            warm, _, _, evaluated = timed_with_cache(la, call, is_lazy)
            # A jitted call runs its own cached executable without the compile cache: never memoized.
            if evaluated is False and name != "lazyarr.jit":
                row.update(note=MEMOIZED_NOTE, memoized=True)
            del result
        except Exception as error:  # report and go on with the other implementations
            row["check"] = f"raised {type(error).__name__}: {str(error)[:120]}"
            continue
        runnable[name], calls[name] = call, timing.calls_for(warm, arguments.sample_seconds)
    summaries = timing.interleaved(runnable, calls, arguments.repeat)
    for row in rows:
        summary = summaries.get(row["impl"])
        if summary is None:
            continue
        compile_seconds, source = row.pop("cache_compile_s"), "la.cache_info()"
        if compile_seconds is None and row["impl"] != "numpy":
            compile_seconds, source = max(cold[row["impl"]] - summary.median, 0.0), "cold - warm"
        row.update(median_s=summary.median, min_s=summary.minimum, samples=list(summary.samples),
                   calls_per_sample=summary.calls_per_sample, cold_s=cold[row["impl"]],
                   gb_per_s=row["bytes"] / summary.median / 1e9, compile_s=compile_seconds,
                   compile_source=source if compile_seconds is not None else None)
    numpy_median = rows[0].get("median_s")
    for row in rows:
        if numpy_median and row.get("median_s"):
            row["ratio_vs_numpy"] = numpy_median / row["median_s"]
    return rows


def measure_cold_compile(la, arguments) -> list[dict]:
    """W8: first-call time after `la.clear_cache()`, and the compile time within it, of W2 and W3."""
    rows = []
    for key in workloads.COLD_COMPILE_WORKLOADS:
        row = {"workload": f"W8:{key}", "impl": "lazyarr", "passed": True, "check": "-", "note": ""}
        rows.append(row)
        if not hasattr(la, "clear_cache"):
            row["note"] = "n/a: la.clear_cache not available"
            continue
        workload = workloads.WORKLOADS[key]
        inputs = workload.make_inputs(np.random.default_rng(arguments.seed), arguments.scale)
        call = lazyarr_callables(la, workload, inputs)["lazyarr"]
        colds, compiles, source = [], [], "la.cache_info()"
        try:
            for _ in range(arguments.repeat):
                la.clear_cache()
                cold, result, compile_seconds, evaluated = timed_with_cache(la, call, lazy=True)
                warm, _ = timing.time_once(call)
                if evaluated is False:
                    row["note"] = MEMOIZED_NOTE + "; "
                if compile_seconds is None:
                    compile_seconds, source = max(cold - warm, 0.0), "cold - warm"
                colds.append(cold)
                compiles.append(compile_seconds)
            row["passed"], row["check"] = workloads.check(result, *workloads.reference(workload, inputs))
        except Exception as error:
            row.update(passed=False, check=f"raised {type(error).__name__}: {str(error)[:120]}")
            continue
        row.update(median_s=statistics.median(colds), min_s=min(colds), samples=colds,
                   compile_s=statistics.median(compiles), compile_source=source,
                   note=row["note"] + "median: cold first call")
    return rows


def print_table(rows: list[dict]) -> None:
    header = ("workload", "impl", "median", "min", "vs numpy", "GB/s", "% triad", "compile", "check")
    lines = [header]
    for row in rows:
        ratio, speed, share = row.get("ratio_vs_numpy"), row.get("gb_per_s"), row.get("percent_of_triad")
        if row.get("memoized"):  # a lookup's speed says nothing about the computation
            ratio = speed = share = None
        lines.append((row["workload"], row["impl"], timing.format_seconds(row.get("median_s")),
                      timing.format_seconds(row.get("min_s")), f"{ratio:.2f}x" if ratio else "-",
                      f"{speed:.2f}" if speed else "-", f"{share:.0f}%" if share else "-",
                      timing.format_seconds(row.get("compile_s")),
                      row["check"] + (f"  ({row['note']})" if row["note"] else "")))
    widths = [max(len(line[column]) for line in lines) for column in range(len(header) - 1)]
    for line in lines:
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths)) + "  " + line[-1])


def write_results(path: Path, document: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.parent == RESULTS_DIRECTORY and not (path.parent / ".gitignore").exists():
        (path.parent / ".gitignore").write_text("*\n!.gitignore\n")
    path.write_text(json.dumps(document, indent=2) + "\n")


def import_lazyarr_compiling():
    """lazyarr with its persistent compile cache off: a benchmark's cold run means compiled (a
    warm disk cache would load earlier runs' kernels). Call before anything imports lazyarr."""
    os.environ["LAZYARR_FLAGS"] = (os.environ.get("LAZYARR_FLAGS", "") + " --persistent_cache=false").strip()
    import lazyarr

    return lazyarr


def report_results(path: Path, machine: dict, options: dict, rows: list[dict]) -> int:
    """Write the JSON document, say where, and return the exit status (1 if a check failed)."""
    passed = all(row["passed"] for row in rows)
    write_results(path, {"machine": machine, "options": options, "results": rows,
                         "notes": peers.NOTES, "all_checks_passed": passed})
    print(f"results: {path}" + ("" if passed else "  (SOME CHECKS FAILED)"))
    return 0 if passed else 1


def main(argv=None) -> int:
    arguments = parse_arguments(argv)
    la = import_lazyarr_compiling()

    backend = arguments.backend or la.get_backend_name()
    try:
        la.set_backend(backend)
    except ValueError as error:
        print(f"error: cannot use lazyarr backend {backend!r}: {error}", file=sys.stderr)
        return 2
    # Warm-up: loads the backend, so the first workload's cold call is not charged for imports. It also
    # takes the first parameter number: a graph whose leaves are numbered 0..n-1 is identical to its
    # compiled module's, which the compile cache keeps alive, and lazyarr then reuses its value
    # instead of evaluating again (see MEMOIZED_NOTE, which still flags it if it happens).
    np.asarray(la.asarray(np.zeros(1, np.float32)) + 1)
    machine = machine_description()
    print(f"machine: {machine['platform']}, {machine['cpu_model']}, {machine['cpu_count']} CPUs "
          f"({machine['usable_cpus']} usable), Python {machine['python']}, NumPy {machine['numpy']}")
    print(f"lazyarr {la.__version__}, backend {backend!r}; scale {arguments.scale}, "
          f"repeat {arguments.repeat}; "
          "ratio = numpy time / impl time (>1: faster than NumPy); GB/s = inputs + output bytes / median")
    triad = stream.triad_bandwidth(2_000_000 if arguments.quick else 20_000_000, 3 if arguments.quick else 10)
    # As STREAM counts (2 reads + 1 write): the field's figure. The memory traffic is 4/3 of it
    # (the write-allocate read of `a`), so a read-only stream (W1) can pass 100 %.
    bandwidth = triad["best_gb_per_s"]
    print(f"memory: STREAM triad on {triad['threads']} threads {bandwidth:.1f} GB/s (best of {triad['iterations']}; "
          f"median {triad['median_gb_per_s']:.1f}; benchmarks/stream.py); '% triad' = GB/s / {bandwidth:.1f}")
    rows = []
    for key in arguments.keys:
        if key == "W8":
            print("W8: cold compile time of W2, W3 (la.clear_cache() before each first call)", flush=True)
            rows += measure_cold_compile(la, arguments)
            continue
        workload = workloads.WORKLOADS[key]
        rows += measure_workload(la, workload, arguments)
    for row in rows:
        if row.get("gb_per_s"):
            row["percent_of_triad"] = 100 * row["gb_per_s"] / bandwidth
    print()
    print_table(rows)
    for note in peers.NOTES:
        print(f"note: {note}")
    machine.update(lazyarr=la.__version__, backend=backend, peers=peers.versions(), stream_triad=triad)
    options = {name: getattr(arguments, name) for name in ("scale", "repeat", "seed", "quick")}
    return report_results(arguments.output, machine, options, rows)


if __name__ == "__main__":
    sys.exit(main())
