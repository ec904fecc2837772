"""The machine's own memory bandwidth: the STREAM triad `a[i] = b[i] + s * c[i]` on all cores.

A workload's GB/s means little without the box's ceiling. STREAM's triad (McCalpin) on arrays
far larger than the caches, split over one thread per usable core, is that ceiling; it is
counted as STREAM counts it: 3 arrays x 8 bytes per element and iteration (the write-allocate
read is not counted), best of several iterations.

The loop is compiled here with llvmlite (a dependency already; nothing of lazyarr's code
generator is involved) at O3 for the host CPU, so it vectorizes as a C compiler's would, and
threads call it through ctypes, which releases the GIL: each thread streams its own contiguous
share, as STREAM's OpenMP loop does.

    python benchmarks/stream.py [--elements 20000000] [--iterations 10]
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import os
import threading
import time

import numpy as np

_TRIAD_IR = """
define void @triad(ptr noalias %a, ptr noalias %b, ptr noalias %c, double %s, i64 %begin, i64 %end) {
entry:
  %empty = icmp sge i64 %begin, %end
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [%begin, %entry], [%next, %loop]
  %bp = getelementptr inbounds double, ptr %b, i64 %i
  %cp = getelementptr inbounds double, ptr %c, i64 %i
  %ap = getelementptr inbounds double, ptr %a, i64 %i
  %bv = load double, ptr %bp
  %cv = load double, ptr %cp
  %scaled = fmul double %cv, %s
  %sum = fadd double %bv, %scaled
  store double %sum, ptr %ap
  %next = add nsw i64 %i, 1
  %more = icmp slt i64 %next, %end
  br i1 %more, label %loop, label %done
done:
  ret void
}
"""
_TRIAD = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_double,
                          ctypes.c_int64, ctypes.c_int64)


@functools.cache
def _compiled():
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple()
    machine = target.create_target_machine(cpu=llvm.get_host_cpu_name(),
                                           features=llvm.get_host_cpu_features().flatten(), opt=3)
    module = llvm.parse_assembly(_TRIAD_IR)
    module.triple = machine.triple
    module.data_layout = str(machine.target_data)
    tuning = llvm.create_pipeline_tuning_options(speed_level=3)
    tuning.loop_vectorization = True
    passes = llvm.create_pass_builder(machine, tuning)
    passes.getModulePassManager().run(module, passes)
    engine = llvm.create_mcjit_compiler(module, machine)
    engine.finalize_object()
    return engine, _TRIAD(engine.get_function_address("triad"))


def usable_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def triad_bandwidth(elements: int = 20_000_000, iterations: int = 10, threads: int | None = None) -> dict:
    """STREAM triad GB/s on `threads` threads (default: the usable cores): best and median of
    `iterations`, after one untimed pass that touches every page."""
    _, triad = _compiled()
    threads = threads or usable_cores()
    a, b, c = (np.full(elements, value) for value in (0.0, 1.0, 2.0))
    bounds = np.linspace(0, elements, threads + 1).astype(np.int64)
    pointers = [array.ctypes.data for array in (a, b, c)]

    def run_once():
        workers = [threading.Thread(target=triad, args=(*pointers, 3.0, int(begin), int(end)))
                   for begin, end in zip(bounds[:-1], bounds[1:])]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()

    run_once()
    seconds = []
    for _ in range(iterations):
        start = time.perf_counter()
        run_once()
        seconds.append(time.perf_counter() - start)
    if not np.all(a == 7.0):
        raise RuntimeError("the triad computed a wrong result")
    counted = 3 * 8 * elements
    return {"best_gb_per_s": counted / min(seconds) / 1e9,
            "median_gb_per_s": counted / float(np.median(seconds)) / 1e9, "threads": threads, "elements": elements,
            "iterations": iterations}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=int, default=20_000_000)
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--threads", type=int)
    arguments = parser.parse_args(argv)
    result = triad_bandwidth(arguments.elements, arguments.iterations, arguments.threads)
    print(f"STREAM triad, {result['threads']} threads, {result['elements']:,} float64 elements: "
          f"best {result['best_gb_per_s']:.1f} GB/s, median {result['median_gb_per_s']:.1f} GB/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
