"""Compiled code leaves memory with the caches that hold it: a long-running process that compiles
graph after graph stays within what its caches hold.

Executables (compile.py, least recently used beyond 512) hold their kernels, kernels (cpu_kernels.py,
beyond 4,096) hold the MCJIT engine their code is in, and an engine (up to 64 kernels) is freed
with the last kernel and executable holding it. A fresh process compiles 300 distinct graphs with
those caches shrunk (16 kernels, 4 per engine, 8 executables and plans), so they evict all along:
the engines alive at the end are what the caches can hold, not one per 4 kernels compiled, and
resident memory stays flat over the last 200 graphs. (With caches that never evict, the same run
keeps 76 engines and grows ~8 MiB.)

Resident memory is flat only where helper processes compile (compile_workers.py): LLVM keeps
~0.1 MiB of every module compiled in a process for the process's life, which nothing can free.
A top-level process has helpers by default and compiles its first 64 kernels itself; the test's
process is made a top-level one (pytest's own helpers would otherwise keep it from starting any)
and measured from its 100th graph on.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

_SCRIPT = textwrap.dedent('''
    import gc, json, os
    import numpy as np
    import lazyarr as la
    from lazyarr import compile as driver
    from lazyarr.backends import cpu_kernels
    from lazyarr.backends.llvm.target import JitEngine

    cpu_kernels._KERNEL_LIMIT, cpu_kernels._KERNELS_PER_ENGINE = 16, 4
    driver._CACHE_LIMIT, driver._PLANS_LIMIT = 8, 8

    def resident_mib():
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

    BINARY = (la.add, la.subtract, la.multiply, la.maximum, la.minimum)
    x = la.asarray(np.linspace(0.5, 1.5, 64, dtype=np.float32))
    y = la.asarray(np.linspace(2.0, 3.0, 64, dtype=np.float32))

    def distinct_graph(number):
        """Five binary ops picked by `number`'s base-5 digits: a kernel no other graph has."""
        value = x
        for _ in range(5):
            value = BINARY[number % 5](value, y)
            number //= 5
        return value

    for number in range(300):
        np.asarray(distinct_graph(number))
        if number == 99:
            warm = resident_mib()
    gc.collect()
    print(json.dumps({
        "engines": sum(1 for obj in gc.get_objects() if type(obj) is JitEngine),
        "growth_mib": resident_mib() - warm,
        "kernels_compiled": la.cache_info().kernels_compiled,
    }))
''')


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_compiled_code_is_freed_as_the_caches_evict_it():
    environment = {**os.environ, "LAZYARR_FLAGS": "--persistent_cache=false --compile_workers=1"}
    environment.pop("LAZYARR_COMPILE_HELPERS_OWNER", None)  # a top-level process: helpers compile
    done = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, timeout=300,
                          env=environment, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["kernels_compiled"] == 300, report  # every graph a kernel of its own
    # 16 cached kernels fill at most 4 engines, the newest engine has room for more, and each of
    # the 8 cached executables may keep one more engine alive: 13. Without eviction: 76.
    assert report["engines"] <= 13, report
    # Measured ~1 MiB over the last 200 compiles (allocator noise); ~7 MiB when nothing is freed,
    # ~17 MiB when this process compiles them itself.
    assert report["growth_mib"] < 5, report
