"""dask with NumPy chunks against dask with lazyarr chunks, on one LocalCluster, at several GB.

    python benchmarks/dask.py [--gigabytes 3] [--chunk-megabytes 64] [--workers 2] [--quick] [--output PATH]

Each workload's input (float32, --gigabytes in all, chunks of about --chunk-megabytes) is made on
the workers by dask's random generator and persisted there as NumPy chunks; the lazyarr copy of it
is `lazyarr.dask.from_dask` of the same chunks (wrapped, not copied), persisted too. So both engines
read the same resident memory and no input crosses a process boundary while timed. Then, for each
engine, one cold run (lazyarr compiles: its persistent cache is off in every process) and one warm
run, the same NumPy-style code on the dask array:

    W1           sum(x + y*z), x, y, z 1-D                   reduced to a scalar on the client
    W4           layernorm over rows: x.mean/x.var(axis=-1), (x - mean) / sqrt(var + eps) * gamma + beta
                 (dask's reductions: chunk, combine, aggregate tasks)       output persisted on the workers
    W4-blocks    the same layernorm applied per row block with map_blocks (rows never span chunks)

GB/s counts every input read once and the output written once (as benchmarks/run.py does). Compile
counts are per worker, read with `client.run(la.cache_info)` around lazyarr's cold run: executables
built (one per distinct task program) and LLVM kernels compiled. Results are checked against the
NumPy engine's. Prints a markdown table; writes JSON (default benchmarks/results/dask.json).
Exit status 0 when every check passes, 1 otherwise, 2 when dask is not installed.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def _without_this_directory(paths: list[str]) -> list[str]:
    return [path for path in paths if Path(path or ".").resolve() != HERE]


# This file is named dask.py: `import dask` must find the library, here and in the worker processes
# (spawned with this process's sys.path), so this directory goes to the end of the path.
sys.path[:] = _without_this_directory(sys.path)
try:
    import dask
    import dask.array as da
    import distributed
except ImportError as error:
    print(f"error: benchmarks/dask.py needs dask[array] and distributed ({error}); "
          "pip install -e '.[dask]'", file=sys.stderr)
    sys.exit(2)
sys.path.append(str(HERE))

import timing  # noqa: E402  (siblings of this script, found through the line above)
import workloads  # noqa: E402
from run import RESULTS_DIRECTORY, import_lazyarr_compiling, machine_description, report_results  # noqa: E402

sys.path[:] = _without_this_directory(sys.path) + [str(HERE)]  # run.py put this directory first again

COLUMNS = 1024  # W4's row length (benchmarks/workloads.py)
RTOL = workloads.RTOL


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gigabytes", type=float, default=3.0, help="input bytes per workload, in GB (default 3)")
    parser.add_argument("--chunk-megabytes", type=float, default=64.0, help="bytes per chunk, in MB (default 64)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--threads-per-worker", type=int, default=1)
    parser.add_argument("--workloads", default="W1,W4,W4-blocks")
    parser.add_argument("--quick", action="store_true", help="24 MB in 1 MB chunks (the smoke test)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path, default=RESULTS_DIRECTORY / "dask.json")
    arguments = parser.parse_args(argv)
    if arguments.quick:
        arguments.gigabytes, arguments.chunk_megabytes = 0.024, 1.0
    arguments.keys = [key.strip() for key in arguments.workloads.split(",")]
    unknown = set(arguments.keys) - set(WORKLOADS)
    if unknown:
        parser.error(f"unknown workloads {sorted(unknown)}; known: {', '.join(WORKLOADS)}")
    return arguments


# -- the workloads: inputs on the workers, one expression for both engines --------------------
def w1_inputs(arguments):
    elements = int(arguments.gigabytes * 1e9 / 4 / 3)
    chunk = int(arguments.chunk_megabytes * 1e6 / 4)
    generator = da.random.default_rng(arguments.seed)
    return [generator.random(elements, chunks=chunk, dtype=np.float32) for _ in range(3)], {}


def w1(x, y, z):
    return (x + y * z).sum()


def w4_inputs(arguments):
    rows = int(arguments.gigabytes * 1e9 / 4 / COLUMNS)
    chunk_rows = max(1, int(arguments.chunk_megabytes * 1e6 / 4 / COLUMNS))
    generator = da.random.default_rng(arguments.seed)
    x = generator.standard_normal((rows, COLUMNS), chunks=(chunk_rows, COLUMNS), dtype=np.float32) * 2
    parameters = np.random.default_rng(arguments.seed)
    gamma = (1 + 0.1 * parameters.standard_normal(COLUMNS)).astype(np.float32)
    beta = (0.1 * parameters.standard_normal(COLUMNS)).astype(np.float32)
    return [x], {"gamma": gamma, "beta": beta}


def w4(x, gamma, beta):
    return workloads.WORKLOADS["W4"].expression(np, x, gamma, beta)


def layernorm_block(block, gamma, beta):
    """W4 on one row block, in the block's own namespace (NumPy's or lazyarr's)."""
    return workloads.WORKLOADS["W4"].expression(block.__array_namespace__(), block, gamma, beta)


def w4_blocks(x, gamma, beta):
    return x.map_blocks(layernorm_block, gamma, beta, dtype=x.dtype)


# key: (title, inputs, expression, whether the output stays on the workers)
WORKLOADS = {
    "W1": ("sum(x + y*z)", w1_inputs, w1, False),
    "W4": ("layernorm(axis=-1), dask reductions", w4_inputs, w4, True),
    "W4-blocks": ("layernorm(axis=-1), map_blocks", w4_inputs, w4_blocks, True),
}


# -- measuring ---------------------------------------------------------------------------------
_FUTURES_CANCELLED = getattr(distributed.client, "FuturesCancelledError", distributed.CancelledError)


def run_once(client, expression, persist: bool, keep: bool):
    """(seconds, result): a reduction comes back to the client; a big output is persisted on
    the workers (timed until every chunk is computed) and, unless `keep`, released after (the
    next run of the same expression has the same keys: left in memory, it would compute nothing)."""
    start = time.perf_counter()
    if not persist:
        result = client.compute(expression).result()
        return time.perf_counter() - start, result
    result = client.persist(expression)
    try:
        distributed.wait(result)
    except _FUTURES_CANCELLED:
        # The previous run's cancellation of these same keys reached the client after they were
        # persisted again (cancelling is asynchronous): persist them once more, timed afresh.
        start = time.perf_counter()
        result = client.persist(expression)
        distributed.wait(result)
    seconds = time.perf_counter() - start
    if not keep:
        client.cancel(distributed.futures_of(result))
        result = None
    return seconds, result


def worker_counts(client, la) -> dict:
    return {address: (info.misses, info.kernels_compiled) for address, info in client.run(la.cache_info).items()}


def check(client, result, reference, persist: bool) -> tuple[bool, str]:
    """lazyarr's result against the NumPy engine's: |difference| <= RTOL * scale + ATOL, where
    scale is the largest |reference| (W1: the sum itself, of positive terms; see workloads.py)."""
    if persist:
        difference, scale = client.gather(client.compute([abs(result - reference).max(), abs(reference).max()]))
    else:
        difference, scale = abs(float(np.asarray(result)) - float(reference)), abs(float(reference))
    difference, scale = float(np.asarray(difference)), float(np.asarray(scale))
    passed = bool(difference <= RTOL * scale + workloads.ATOL)
    return passed, f"max |lazyarr - numpy| = {difference:.3g} (allowed {RTOL * scale + workloads.ATOL:.3g})"


def measure(client, la, lad, key, arguments) -> list[dict]:
    title, make_inputs, expression, persist = WORKLOADS[key]
    arrays, parameters = make_inputs(arguments)
    arrays = client.persist(arrays)
    distributed.wait(arrays)
    lazy_arrays = client.persist([lad.from_dask(array) for array in arrays])
    distributed.wait(lazy_arrays)
    output_bytes = arrays[0].nbytes if persist else 4
    moved = sum(array.nbytes for array in arrays) + output_bytes
    shapes = ", ".join(f"{array.shape} in {array.npartitions} chunks of {array.blocks[0].nbytes / 1e6:.0f} MB"
                       for array in arrays)
    print(f"{key}: {title}; float32 {shapes}", flush=True)
    rows, results = [], {}
    for engine, inputs in (("dask+numpy", arrays), ("dask+lazyarr", lazy_arrays)):
        before = worker_counts(client, la)
        cold, _ = run_once(client, expression(*inputs, **parameters), persist, keep=False)
        after = worker_counts(client, la)
        compiles = {address: (after[address][0] - before[address][0], after[address][1] - before[address][1])
                    for address in after}
        warm, results[engine] = run_once(client, expression(*inputs, **parameters), persist, keep=True)
        rows.append({"workload": key, "title": title, "impl": engine, "cold_s": cold, "warm_s": warm,
                     "bytes": moved, "gb_per_s": moved / warm / 1e9, "passed": True, "check": "-",
                     "compiles_per_worker": list(compiles.values()) if engine == "dask+lazyarr" else None})
        print(f"  {engine}: cold {timing.format_seconds(cold)}, warm {timing.format_seconds(warm)}", flush=True)
    passed, message = check(client, results["dask+lazyarr"], results["dask+numpy"], persist)
    rows[1].update(passed=passed, check=message, ratio_warm=rows[0]["warm_s"] / rows[1]["warm_s"],
                   ratio_cold=rows[0]["cold_s"] / rows[1]["cold_s"])
    del results, arrays, lazy_arrays
    return rows


def table_lines(rows: list[dict]) -> list[str]:
    lines = ["| workload | dask+NumPy cold / warm | dask+lazyarr cold / warm | warm ratio | GB/s NumPy / lazyarr "
             "| compiles per worker (executables / kernels) | check |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for numpy_row, lazy_row in zip(rows[::2], rows[1::2]):
        compiles = ", ".join(f"{executables} / {kernels}" for executables, kernels in lazy_row["compiles_per_worker"])
        lines.append(
            f"| {lazy_row['workload']} {lazy_row['title']} "
            f"| {timing.format_seconds(numpy_row['cold_s'])} / {timing.format_seconds(numpy_row['warm_s'])} "
            f"| {timing.format_seconds(lazy_row['cold_s'])} / {timing.format_seconds(lazy_row['warm_s'])} "
            f"| {lazy_row['ratio_warm']:.2f}x | {numpy_row['gb_per_s']:.2f} / {lazy_row['gb_per_s']:.2f} "
            f"| {compiles} | {'ok' if lazy_row['passed'] else 'FAILED: ' + lazy_row['check']} |")
    return lines


def main(argv=None) -> int:
    arguments = parse_arguments(argv)
    la = import_lazyarr_compiling()  # LAZYARR_FLAGS: the spawned workers inherit --persistent_cache=false
    import lazyarr.dask as lad

    machine = machine_description()
    print(f"machine: {machine['platform']}, {machine['cpu_model']}, {machine['cpu_count']} CPUs "
          f"({machine['usable_cpus']} usable), Python {machine['python']}, NumPy {machine['numpy']}, "
          f"dask {dask.__version__}, distributed {distributed.__version__}")
    print(f"LocalCluster: {arguments.workers} worker processes x {arguments.threads_per_worker} thread(s); "
          f"{arguments.gigabytes:g} GB per workload, chunks of ~{arguments.chunk_megabytes:g} MB", flush=True)
    rows = []
    with distributed.LocalCluster(n_workers=arguments.workers, threads_per_worker=arguments.threads_per_worker,
                                  processes=True, dashboard_address=None, silence_logs=40) as cluster, \
            distributed.Client(cluster) as client:
        for key in arguments.keys:
            rows += measure(client, la, lad, key, arguments)
    print()
    print("\n".join(table_lines(rows)))
    machine.update(lazyarr=la.__version__, dask=dask.__version__, distributed=distributed.__version__)
    options = {name: getattr(arguments, name) for name in
               ("gigabytes", "chunk_megabytes", "workers", "threads_per_worker", "seed", "quick")}
    return report_results(arguments.output, machine, options, rows)


if __name__ == "__main__":
    sys.exit(main())
