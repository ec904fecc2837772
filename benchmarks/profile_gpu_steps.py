"""Where a small program's time goes on the GPU: cProfile of steady runs of programs.py's
logistic regression (eager and la.jit of the whole loop), top functions by own time, and the
launches per run. Run on a machine with a GPU:

    python benchmarks/profile_gpu_steps.py [--runs 20]
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import io
import pstats
import time

import numpy as np
from program_kernels import logistic_regression
from programs import PROGRAMS

import lazyarr as la


def _steady(function, runs: int) -> float:
    function()  # compile
    start = time.perf_counter()
    for _ in range(runs):
        function()
    return (time.perf_counter() - start) / runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--top", type=int, default=22)
    options = parser.parse_args()
    la.set_backend("gpu")
    import cupy

    arrays, parameters = PROGRAMS["logistic"].make_inputs(np.random.default_rng(0), False)
    lazy = {name: la.asarray(value) for name, value in arrays.items()}
    eager = functools.partial(logistic_regression, la, **lazy, **parameters)
    jitted_loop = la.jit(functools.partial(logistic_regression, la, **parameters))

    def run_eager():
        la.eval(*eager())
        cupy.cuda.Device().synchronize()

    def run_jit():
        la.eval(*jitted_loop(**lazy))
        cupy.cuda.Device().synchronize()

    for name, function in (("eager", run_eager), ("la.jit(loop)", run_jit)):
        seconds = _steady(function, options.runs)
        print(f"== logistic {name}: {seconds * 1e3:.2f} ms a run ({parameters['steps']} steps)")
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(options.runs):
            function()
        profile.disable()
        text = io.StringIO()
        pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(options.top)
        print("\n".join(line for line in text.getvalue().splitlines() if line.strip())[:6000])


if __name__ == "__main__":
    main()
