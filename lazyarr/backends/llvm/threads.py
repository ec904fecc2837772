"""Native parallel loops: a kernel's [begin, end) slices on OpenMP's threads, from native code.

A Python thread pool costs ~70-150 µs to hand a kernel over and back on a 2-core box (futures,
condition variables, the GIL's hand-offs), so only kernels of millions of elements could use
it. OpenMP's runtime keeps its threads parked in native code (spinning a while after each
region, then asleep): a region costs ~1-2 µs, so kernels of tens of thousands of elements gain
from threads. The native dispatcher (dispatch.py) starts a region for a kernel step marked
parallel through `GOMP_parallel`, the entry point GCC emits for `#pragma omp parallel`
(libgomp's, also exported by LLVM's and Intel's OpenMP runtimes): each thread of the team
calls `lazyarr_slice(closure)`, which runs the kernel on the thread's share of the extent.

Deterministic: a kernel's outputs are split along their first dimension only, so each output
element is computed by one thread, in the same order, whatever the thread count.

Forked children: OpenMP runtimes do not survive fork (a child's team would wait for threads
that do not exist), so a forked child runs every step on its own thread (`disable_in_child`).
One team at a time: a second thread dispatching while a region runs (dask's threaded scheduler)
runs its kernel on its own thread instead of starting a second team on the same cores.
Where no OpenMP runtime is found, `runtime()` is None and the CPU backend keeps its Python
thread pool for large kernels.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import os

import llvmlite.binding as llvm

# Libraries that export GOMP_parallel and omp_get_thread_num / omp_get_num_threads.
_CANDIDATES = ("libgomp.so.1", "libomp.so", "libomp.so.5", "libiomp5.so", "libomp.dylib", "libiomp5.dylib")
_SYMBOLS = ("GOMP_parallel", "omp_get_thread_num", "omp_get_num_threads", "omp_get_max_threads")


@functools.cache
def _loaded() -> tuple[str, ctypes.CDLL] | None:
    """(name, library) of the OpenMP runtime, its entry points bound for kernels
    (`llvm.add_symbol`); None where none is found, or where LAZYARR_NATIVE_THREADS=0."""
    if os.environ.get("LAZYARR_NATIVE_THREADS", "1") == "0":
        return None
    for name in _CANDIDATES + ("find_library",):
        if name == "find_library":  # (slow: it runs ldconfig or a compiler; only when the usual names fail)
            found = [found for found in (ctypes.util.find_library("gomp"), ctypes.util.find_library("omp")) if found]
            if not found:
                return None
            name = found[0]
        try:
            with _short_spin():
                library = ctypes.CDLL(name)
            functions = {symbol: getattr(library, symbol) for symbol in _SYMBOLS}
        except (OSError, AttributeError):
            continue
        for symbol, function in functions.items():
            llvm.add_symbol(symbol, ctypes.cast(function, ctypes.c_void_p).value)
        return name, library
    return None


def runtime() -> str | None:
    """The OpenMP runtime's name, or None (see `_loaded`)."""
    loaded = _loaded()
    return loaded[0] if loaded else None


@functools.cache
def team_size() -> int:
    """How many threads a region runs on (OMP_NUM_THREADS, else the usable cores); 1 without a runtime."""
    loaded = _loaded()
    return max(1, loaded[1].omp_get_max_threads()) if loaded else 1


# After a region, libgomp's threads spin 300,000 times (milliseconds) before they sleep. On few
# cores that spinning starves NumPy's BLAS threads, which a gemm kernel right after wakes: a
# jitted MLP step (small kernels between gemms) ran 50x slower. A short spin still catches the
# next kernel of a native run (microseconds later) and leaves the cores soon after. The runtime
# reads its environment once, when it is loaded: the variable is set for that moment only, and
# not where the user chose a policy (or where the runtime was loaded before lazyarr).
_SPIN_COUNT = "1000"


@contextlib.contextmanager
def _short_spin():
    chosen = any(name in os.environ for name in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY"))
    if not chosen:
        os.environ["GOMP_SPINCOUNT"] = _SPIN_COUNT
    try:
        yield
    finally:
        if not chosen:
            del os.environ["GOMP_SPINCOUNT"]


# The dispatcher's globals: @lazyarr_threads_enabled (0 in forked children) and
# @lazyarr_team_busy (1 while a region runs).
SOURCE = """
declare void @GOMP_parallel(ptr, ptr, i32, i32)
declare i32 @omp_get_thread_num()
declare i32 @omp_get_num_threads()

@lazyarr_threads_enabled = global i32 1
@lazyarr_team_busy = global i32 0

; closure: {kernel, buffer pointers, sizes, extent}
define internal void @lazyarr_slice(ptr %closure) {
entry:
  %thread32 = call i32 @omp_get_thread_num()
  %threads32 = call i32 @omp_get_num_threads()
  %thread = sext i32 %thread32 to i64
  %threads = sext i32 %threads32 to i64
  %kernel = load ptr, ptr %closure
  %pointers_address = getelementptr ptr, ptr %closure, i64 1
  %pointers = load ptr, ptr %pointers_address
  %sizes_address = getelementptr ptr, ptr %closure, i64 2
  %sizes = load ptr, ptr %sizes_address
  %extent_address = getelementptr i64, ptr %closure, i64 3
  %extent = load i64, ptr %extent_address
  ; thread t takes [t * chunk, (t + 1) * chunk) of the extent, chunk = ceil(extent / threads)
  %rounded = add i64 %extent, %threads
  %rounded_down = sub i64 %rounded, 1
  %chunk = udiv i64 %rounded_down, %threads
  %start = mul i64 %thread, %chunk
  %stop = add i64 %start, %chunk
  %begin_past = icmp ugt i64 %start, %extent
  %begin = select i1 %begin_past, i64 %extent, i64 %start
  %end_past = icmp ugt i64 %stop, %extent
  %end = select i1 %end_past, i64 %extent, i64 %stop
  ; thread 0 always calls (it owns outputs computed whole: kernel.py's is_split); others only
  ; with work to do
  %first = icmp eq i64 %thread, 0
  %work = icmp ult i64 %begin, %end
  %calls = or i1 %first, %work
  br i1 %calls, label %call, label %done
call:
  call void %kernel(ptr %pointers, ptr %sizes, i64 %begin, i64 %end)
  br label %done
done:
  ret void
}

; Run `kernel` over [0, extent): a team of `threads` when enabled and none is running, else here.
define void @lazyarr_parallel_call(ptr %kernel, ptr %pointers, ptr %sizes, i64 %extent, i64 %threads) {
entry:
  %enabled = load atomic i32, ptr @lazyarr_threads_enabled monotonic, align 4
  %on = icmp ne i32 %enabled, 0
  br i1 %on, label %claim, label %serial
claim:
  %was = atomicrmw xchg ptr @lazyarr_team_busy, i32 1 acquire
  %free = icmp eq i32 %was, 0
  br i1 %free, label %team, label %serial
team:
  %closure = alloca [4 x i64], align 16
  store ptr %kernel, ptr %closure
  %pointers_address = getelementptr ptr, ptr %closure, i64 1
  store ptr %pointers, ptr %pointers_address
  %sizes_address = getelementptr ptr, ptr %closure, i64 2
  store ptr %sizes, ptr %sizes_address
  %extent_address = getelementptr i64, ptr %closure, i64 3
  store i64 %extent, ptr %extent_address
  %team_size = trunc i64 %threads to i32
  call void @GOMP_parallel(ptr @lazyarr_slice, ptr %closure, i32 %team_size, i32 0)
  store atomic i32 0, ptr @lazyarr_team_busy release, align 4
  ret void
serial:
  call void %kernel(ptr %pointers, ptr %sizes, i64 0, i64 %extent)
  ret void
}
"""


def disable_in_child(engine) -> None:
    """After fork: the child's steps run on its own thread (see the module docstring)."""
    address = engine.global_address("lazyarr_threads_enabled")
    ctypes.c_int32.from_address(address).value = 0
