"""Scale out with Dask: NumPy-style code on a dask array whose chunks are lazyarr arrays.

    python examples/dask_scale_out.py                                  # a LocalCluster, 2 worker processes
    python examples/dask_scale_out.py --scheduler tcp://10.0.0.5:8786  # a running cluster: nothing else changes
    python examples/dask_scale_out.py --elements 300_000_000           # 1.2 GB per array

Dask cuts the arrays into chunks, schedules the tasks on the workers and combines partial results;
lazyarr compiles what each task does to its chunk: `x + y * z` and the chunk's part of `.sum()` run
as one fused loop per chunk. Each result is checked against the same code on NumPy chunks, and the
workers report what they compiled (`la.cache_info()` on each worker).
"""

import argparse

import dask.array as da
import numpy as np
from dask.distributed import Client, LocalCluster

import lazyarr as la
import lazyarr.dask as lad


def layernorm(x, gamma, beta):
    """Any NumPy-style function: here it runs on dask arrays of NumPy or of lazyarr chunks."""
    mean = x.mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-5) * gamma + beta


def run(client, elements: int, chunk_elements: int) -> None:
    generator = da.random.default_rng(0)
    # Made on the workers as NumPy chunks, then taken over by lazyarr without copies.
    x, y, z = (generator.random(elements, chunks=chunk_elements, dtype=np.float32) for _ in range(3))
    lazy_x, lazy_y, lazy_z = (lad.from_dask(array) for array in (x, y, z))

    total = (lazy_x + lazy_y * lazy_z).sum()  # a dask array with lazyarr chunks; nothing has run
    value = total.compute()                   # a lazyarr array
    expected = (x + y * z).sum().compute()    # the same code on NumPy chunks
    print(f"sum(x + y*z) over {x.npartitions} chunks: {float(value):.6g} (NumPy chunks: {float(expected):.6g})")
    assert abs(float(value) - float(expected)) <= 1e-4 * float(expected)

    rows = max(1, elements // 1024)
    matrix = generator.standard_normal((rows, 1024), chunks=(max(1, chunk_elements // 1024), 1024),
                                       dtype=np.float32)
    gamma, beta = np.ones(1024, np.float32), np.zeros(1024, np.float32)
    normalized = layernorm(lad.from_dask(matrix), gamma, beta)
    difference = abs(normalized - layernorm(matrix, gamma, beta)).max().compute()
    print(f"layernorm of {matrix.shape}: largest difference from NumPy chunks {float(difference):.2g}")
    assert float(difference) < 1e-4

    for worker, info in sorted(client.run(la.cache_info).items()):
        print(f"  worker {worker}: {info.misses} programs compiled, {info.hits} reused; "
              f"{info.kernels_compiled} kernels compiled, {info.kernels_loaded} loaded from the disk cache")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scheduler", help="address of a running dask scheduler (default: start a LocalCluster)")
    parser.add_argument("--elements", type=int, default=2_000_000, help="elements per 1-D array")
    parser.add_argument("--chunk-elements", type=int, default=500_000)
    arguments = parser.parse_args()
    if arguments.scheduler:
        with Client(arguments.scheduler) as client:
            run(client, arguments.elements, arguments.chunk_elements)
        return
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=40) as cluster, Client(cluster) as client:
        run(client, arguments.elements, arguments.chunk_elements)


if __name__ == "__main__":
    main()
