"""Benchmark lazyarr on the GPU against CuPy (eager) and jax.jit (GPU, where installed) on W1-W4 and W6.

    python benchmarks/gpu.py [--workloads W1,W2,W3,W4,W6] [--repeat N] [--scale S] [--quick]

The workloads, result checks and byte counts are run.py's (workloads.py), at sizes that fill a GPU:
each workload's CPU size times GPU_SCALE (W1, W2 at N = 10^8), times --scale. Inputs are copied to the
device once, outside the timing. Every timed call computes and then waits for the device:
  lazyarr      build the graph, `la.eval` it, synchronize CuPy's current stream (what a user runs);
  lazyarr.jit  the `la.jit` form of the same expression (no graph building), synchronize;
  cupy         the expression on CuPy arrays, one kernel per operation, synchronize;
  jax.jit      the jitted expression on JAX's GPU, `block_until_ready`.
The device's copy bandwidth is measured first (device-to-device copies, bytes read + written / time);
memory-bound workloads (W1-W4) report their GB/s as a % of it. Writes benchmarks/results/gpu-latest.json.
Exit status: 0 when every check passes, 1 when one fails or raises, 2 without CuPy or a CUDA device.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run  # noqa: E402  (siblings of this script, found through the line above)
import timing  # noqa: E402
import workloads  # noqa: E402

# Multiples of the CPU sizes (workloads.py) that fill an H100: W1, W2 N = 10^8 (1.2 GB and 0.8 GB
# moved); W3 (32768, 1024); W4 (65536, 1024); W6 x (4096, 784).
GPU_SCALE = {"W1": 10, "W2": 10, "W3": 8, "W4": 8, "W6": 8}
MEMORY_BOUND = ("W1", "W2", "W3", "W4")
PEERS = ("cupy", "jax.jit")
COPY_BYTES = 2**30  # the copy bandwidth's buffer (--quick: 2**26)


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default=",".join(GPU_SCALE),
                        help="comma-separated keys (default: all): " + ",".join(GPU_SCALE))
    parser.add_argument("--repeat", type=int, help="timed samples per implementation (default 7; --quick: 2)")
    parser.add_argument("--scale", type=float, help="multiply the GPU sizes by this (default 1; --quick: 0.001)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes and 2 repeats (the smoke test)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path, default=run.RESULTS_DIRECTORY / "gpu-latest.json")
    arguments = parser.parse_args(argv)
    arguments.repeat = arguments.repeat or (2 if arguments.quick else 7)
    arguments.scale = arguments.scale or (0.001 if arguments.quick else 1.0)
    arguments.sample_seconds = 0.001 if arguments.quick else 0.05  # each sample lasts about this long
    keys = [key.strip().upper() for key in arguments.workloads.split(",")]
    unknown = [key for key in keys if key not in GPU_SCALE]
    if unknown:
        parser.error(f"unknown workloads {unknown}; known: {', '.join(GPU_SCALE)}")
    arguments.keys = keys
    return arguments


def copy_bandwidth(cupy, nbytes: int, copies: int = 20) -> dict[str, float]:
    """GB/s (bytes read + written / time) of device-to-device copies of `nbytes`, timed with CUDA
    events over `copies` copies: cudaMemcpy, and an elementwise copy kernel; 'best' is the larger."""
    source = cupy.ones(nbytes // 4, dtype=cupy.float32)
    target = cupy.empty_like(source)
    kernel = cupy.ElementwiseKernel("float32 x", "float32 y", "y = x", "lazyarr_benchmark_copy")
    found = {}
    for name, copy in (("memcpy", lambda: target.data.copy_from_device_async(source.data, source.nbytes)),
                       ("kernel", lambda: kernel(source, target))):
        copy()  # warm-up: loads the kernel, touches the pages
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        for _ in range(copies):
            copy()
        stop.record()
        stop.synchronize()
        seconds = cupy.cuda.get_elapsed_time(start, stop) / 1e3 / copies
        found[name] = 2 * source.nbytes / seconds / 1e9
    found["best"] = max(found.values())
    return found


@functools.cache
def load_jax_gpu():
    """`(jax, jax.numpy, gpu_device)`, or a string saying why not (no jax, or no GPU backend)."""
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # leave GPU memory to CuPy and lazyarr
    try:
        import jax
        import jax.numpy as jax_numpy
    except ImportError as error:
        return f"jax.jit skipped: jax not installed ({error})"
    try:
        device = jax.devices("gpu")[0]
    except Exception as error:  # RuntimeError: a CPU-only jaxlib, or JAX_PLATFORMS excludes the GPU
        return f"jax.jit skipped: jax has no GPU backend ({type(error).__name__}: {str(error)[:160]})"
    # JAX computes float32 matmuls in TF32 on recent GPUs by default; CuPy and lazyarr (cuBLAS) do
    # not, and TF32 would fail W6's float32 check. Compare like with like.
    jax.config.update("jax_default_matmul_precision", "highest")
    return jax, jax_numpy, device


def implementations(la, cupy, workload, inputs) -> dict:
    """name -> (call, to_host): `call()` computes on the device and waits; `to_host(result)` -> NumPy."""

    def synchronized(result):
        cupy.cuda.get_current_stream().synchronize()
        return result

    def traced(*arrays):
        return workload.expression(la, *arrays)

    lazy = tuple(la.asarray(array, device="gpu") for array in inputs.values())
    jitted = la.jit(traced)
    on_device = tuple(cupy.asarray(array) for array in inputs.values())
    synchronized(None)  # the copies are done before any timing
    found = {
        "lazyarr": (lambda: synchronized(la.eval(workload.expression(la, *lazy))), np.asarray),
        "lazyarr.jit": (lambda: synchronized(jitted(*lazy)), np.asarray),
        "cupy": (lambda: synchronized(workload.expression(cupy, *on_device)), cupy.asnumpy),
    }
    loaded = load_jax_gpu()
    if not isinstance(loaded, str):
        jax, jax_numpy, device = loaded
        placed = tuple(jax.device_put(array, device) for array in inputs.values())
        compiled = jax.jit(functools.partial(workload.expression, jax_numpy))
        found["jax.jit"] = (lambda: jax.block_until_ready(compiled(*placed)), np.asarray)
    return found


def measure_workload(la, cupy, key: str, arguments, bandwidth: float) -> list[dict]:
    """Check and time every implementation of one workload; one row each."""
    workload, scale = workloads.WORKLOADS[key], GPU_SCALE[key] * arguments.scale
    inputs = workload.make_inputs(np.random.default_rng(arguments.seed), scale)
    shapes = ", ".join(f"{name}{tuple(array.shape)}" for name, array in inputs.items())
    print(f"{key}: {workload.title.split(', ')[0]}; float32 inputs {shapes}", flush=True)
    answer, error_scale = workloads.reference(workload, inputs)
    # The float32 output's bytes (the reference is float64); broadcast_to allocates nothing.
    nbytes = workload.bytes_moved(inputs, np.broadcast_to(np.float32(0), answer.shape))
    rows, runnable, calls, cold = [], {}, {}, {}
    for name, (call, to_host) in implementations(la, cupy, workload, inputs).items():
        row = {"workload": key, "impl": name, "shapes": shapes, "bytes": nbytes, "passed": False, "note": ""}
        rows.append(row)
        try:
            is_lazy = name.startswith("lazyarr")
            cold[name], result, row["cache_compile_s"], _ = run.timed_with_cache(la, call, is_lazy)
            row["passed"], row["check"] = workloads.check(to_host(result), answer, error_scale)
            del result
            warm, _, _, evaluated = run.timed_with_cache(la, call, is_lazy)
            if evaluated is False and name == "lazyarr":  # a jitted call never looks in the compile cache
                row.update(note=run.MEMOIZED_NOTE, memoized=True)
        except Exception as error:  # report and go on with the other implementations
            row["check"] = f"raised {type(error).__name__}: {str(error)[:120]}"
            continue
        runnable[name], calls[name] = call, timing.calls_for(warm, arguments.sample_seconds)
    summaries = timing.interleaved(runnable, calls, arguments.repeat)
    for row in rows:
        summary = summaries.get(row["impl"])
        compile_seconds = row.pop("cache_compile_s", None)
        if summary is None:
            continue
        if compile_seconds is None:
            compile_seconds = max(cold[row["impl"]] - summary.median, 0.0)  # cold - warm
        row.update(median_s=summary.median, min_s=summary.minimum, samples=list(summary.samples),
                   calls_per_sample=summary.calls_per_sample, cold_s=cold[row["impl"]], compile_s=compile_seconds,
                   gb_per_s=nbytes / summary.median / 1e9)
        if key in MEMORY_BOUND:
            row["percent_of_copy"] = 100 * row["gb_per_s"] / bandwidth
    medians = {row["impl"]: row["median_s"] for row in rows if "median_s" in row and not row.get("memoized")}
    for row in rows:
        for peer in PEERS:
            if peer in medians and row["impl"] in medians:
                row[f"speedup_vs_{peer}"] = medians[peer] / medians[row["impl"]]  # >1: faster than the peer
    return rows


def print_table(rows: list[dict]) -> None:
    header = ("workload", "impl", "median", "GB/s", "% copy", *(f"vs {peer}" for peer in PEERS), "compile", "check")
    lines = [header]
    for row in rows:
        speed, percent = row.get("gb_per_s"), row.get("percent_of_copy")
        ratios = [row.get(f"speedup_vs_{peer}") for peer in PEERS]
        lines.append((row["workload"], row["impl"], timing.format_seconds(row.get("median_s")),
                      f"{speed:.0f}" if speed else "-", f"{percent:.0f}%" if percent else "-",
                      *(f"{ratio:.2f}x" if ratio else "-" for ratio in ratios),
                      timing.format_seconds(row.get("compile_s")),
                      row["check"] + (f"  ({row['note']})" if row["note"] else "")))
    widths = [max(len(line[column]) for line in lines) for column in range(len(header) - 1)]
    for line in lines:
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths)) + "  " + line[-1])


def targets(rows: list[dict]) -> list[str]:
    """The issue's targets, one line per workload and lazyarr form: W1, W2 at >= 80% of the copy
    bandwidth and faster than every peer that ran; W3, W4 at least jax.jit's speed."""
    lines = []
    for row in rows:
        if not row["impl"].startswith("lazyarr") or "median_s" not in row or row["workload"] not in MEMORY_BOUND:
            continue
        faster = {peer: row[f"speedup_vs_{peer}"] for peer in PEERS if f"speedup_vs_{peer}" in row}
        if row["workload"] in ("W1", "W2"):
            met = row["percent_of_copy"] >= 80 and all(ratio > 1 for ratio in faster.values())
            wanted = ">= 80% copy, faster than " + (" and ".join(faster) or "the peers (none ran)")
        elif "jax.jit" in faster:
            met, wanted = faster["jax.jit"] >= 1, ">= jax.jit's speed"
        else:
            continue
        achieved = ", ".join([f"{row['percent_of_copy']:.0f}% copy", *(f"{r:.2f}x {p}" for p, r in faster.items())])
        lines.append(f"{row['workload']} {row['impl']}: {'MET' if met else 'missed'} ({wanted}: {achieved})")
    return lines


def main(argv=None) -> int:
    arguments = parse_arguments(argv)
    try:
        from lazyarr.backends import gpu  # noqa: F401  (imports CuPy and finds a CUDA device)
    except ImportError as error:
        print(f"error: no GPU to benchmark: {error}", file=sys.stderr)
        return 2
    except RuntimeError as error:  # GpuUnavailable, raised while its own module imports (so not nameable here)
        if type(error).__name__ != "GpuUnavailable":
            raise
        print(f"error: no GPU to benchmark: {error}", file=sys.stderr)
        return 2
    import cupy

    import lazyarr as la

    # Warm-up: loads the GPU backend, so the first workload's cold call is not charged for it, and takes
    # the first parameter number (see run.py's warm-up).
    la.eval(la.asarray(np.zeros(1, np.float32), device="gpu") + 1)
    properties = cupy.cuda.runtime.getDeviceProperties(0)
    name = properties["name"].decode() if isinstance(properties["name"], bytes) else str(properties["name"])
    bandwidth = copy_bandwidth(cupy, COPY_BYTES // 16 if arguments.quick else COPY_BYTES)
    loaded = load_jax_gpu()
    notes = [loaded] if isinstance(loaded, str) else []
    device = {"name": name, "memory_gib": properties["totalGlobalMem"] / 2**30,
              "cuda_runtime": cupy.cuda.runtime.runtimeGetVersion(), "cupy": cupy.__version__,
              "copy_gb_per_s": bandwidth, "jax": None if notes else loaded[0].__version__}
    print(f"device: {name}, {device['memory_gib']:.0f} GiB; CuPy {cupy.__version__}, CUDA runtime "
          f"{device['cuda_runtime']}; jax {device['jax'] or '-'}; lazyarr {la.__version__}")
    print(f"copy bandwidth: {bandwidth['best']:.0f} GB/s (cudaMemcpy {bandwidth['memcpy']:.0f}, copy kernel "
          f"{bandwidth['kernel']:.0f}; read + written bytes / time)")
    print(f"scale {arguments.scale} x GPU_SCALE {GPU_SCALE}, repeat {arguments.repeat}; GB/s = inputs + output "
          "bytes / median; 'vs X' = X's time / this time (>1: faster than X)")
    rows = []
    for key in arguments.keys:
        rows += measure_workload(la, cupy, key, arguments, bandwidth["best"])
        cupy.get_default_memory_pool().free_all_blocks()  # the next workload's inputs get the memory
    print()
    print_table(rows)
    for line in targets(rows):
        print(f"target {line}")
    for note in notes:
        print(f"note: {note}")
    passed = all(row["passed"] for row in rows)
    machine = {**run.machine_description(), "lazyarr": la.__version__, "device": device}
    options = {"scale": arguments.scale, "gpu_scale": GPU_SCALE, "repeat": arguments.repeat,
               "seed": arguments.seed, "quick": arguments.quick}
    run.write_results(arguments.output, {"machine": machine, "options": options, "results": rows,
                                         "targets": targets(rows), "notes": notes, "all_checks_passed": passed})
    print(f"results: {arguments.output}" + ("" if passed else "  (SOME CHECKS FAILED)"))
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
