"""Native dispatch: one call runs a sequence of compiled kernels, instead of one Python step each.

A CPU executable's consecutive single-threaded kernels form a *run*. Its program is a flat
int64 array, built once at compile time:

    [step count, most buffers of one step,
     (kernel address, extent, sizes address, threads, buffer count, slot, slot, ...) per step]

and `dispatch(program, slots)` walks it in native code: for each step it reads the data
pointer of every buffer from the NumPy array objects in the Python list `slots` (indexed by
slot), then calls the kernel over its whole extent with its vector of placeholder sizes, or,
for a step with a thread count (0: none), splits the extent over that many of OpenMP's
threads (threads.py). Python
hands over the list itself (`id(slots)`: no ctypes array of pointers to build, which cost more
than the call), so one run of many kernels costs one ctypes call.

Reading an array's data pointer from its object relies on NumPy's object layout (the `data`
field right after the object header, unchanged since NumPy 1.0), and reading the list's items
on CPython's list layout (the item vector right after the variable-size object header).
`data_pointer_offset()` and `list_items_offset()` check them on this interpreter at first use;
where one does not hold, `dispatcher()` is None and the backend calls kernels one by one.
"""

from __future__ import annotations

import ctypes
import functools
import os

import numpy as np

from . import threads
from .target import jit_engine

_DISPATCH_SIGNATURE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)
HEADER = 2  # step count, most buffers of one step
STEP_HEADER = 5  # kernel address, extent, sizes address, threads, buffer count
PARALLEL = 3  # where a step's thread count is, from its start


@functools.cache
def data_pointer_offset() -> int | None:
    """Where an ndarray object keeps its data pointer (bytes from the object), or None when the
    layout is not the expected one (checked on arrays of several kinds)."""
    offset = ctypes.sizeof(ctypes.c_ssize_t) + ctypes.sizeof(ctypes.c_void_p)  # the object header
    samples = [np.empty(3, np.float32), np.zeros((2, 3), np.int64)[1:], np.asarray(1.5), np.empty(0, np.uint8)]
    for sample in samples:
        if ctypes.c_void_p.from_address(id(sample) + offset).value != sample.ctypes.data:
            return None
    return offset


@functools.cache
def list_items_offset() -> int | None:
    """Where a list object keeps its item vector (bytes from the object), or None when the
    layout is not the expected one (CPython's `ob_item` after `PyObject_VAR_HEAD`)."""
    offset = ctypes.sizeof(ctypes.c_ssize_t) * 2 + ctypes.sizeof(ctypes.c_void_p)  # the var-object header
    samples = [[np.empty(1), None, 3], [None], list(range(40))]
    for sample in samples:
        items = ctypes.c_void_p.from_address(id(sample) + offset).value
        if items is None or any(ctypes.c_void_p.from_address(items + index * ctypes.sizeof(ctypes.c_void_p)).value
                                != id(value) for index, value in enumerate(sample)):
            return None
    return offset


def _source(offset: int, items_offset: int, parallel: bool) -> str:
    """The dispatcher; with `parallel`, steps marked parallel run through threads.py's
    `lazyarr_parallel_call` (without, the mark is ignored: every step runs on this thread)."""
    call = ("""
  %parallel_position = add i64 %cursor, 3
  %parallel_address = getelementptr i64, ptr %program, i64 %parallel_position
  %parallel = load i64, ptr %parallel_address
  %threaded = icmp ne i64 %parallel, 0
  br i1 %threaded, label %team, label %alone
team:
  call void @lazyarr_parallel_call(ptr %kernel, ptr %pointers, ptr %sizes, i64 %extent, i64 %parallel)
  br label %next
alone:""" if parallel else "")
    return (threads.SOURCE if parallel else "") + f"""
define void @lazyarr_dispatch(ptr %program, ptr %slots) {{
entry:
  %items_address = getelementptr i8, ptr %slots, i64 {items_offset}
  %objects = load ptr, ptr %items_address
  %count = load i64, ptr %program
  %most_address = getelementptr i64, ptr %program, i64 1
  %most = load i64, ptr %most_address
  %pointers = alloca ptr, i64 %most, align 16
  br label %step
step:
  %index = phi i64 [0, %entry], [%next_index, %next]
  %cursor = phi i64 [{HEADER}, %entry], [%next_cursor, %next]
  %more = icmp ult i64 %index, %count
  br i1 %more, label %read, label %done
read:
  %kernel_address = getelementptr i64, ptr %program, i64 %cursor
  %kernel_integer = load i64, ptr %kernel_address
  %kernel = inttoptr i64 %kernel_integer to ptr
  %extent_position = add i64 %cursor, 1
  %extent_address = getelementptr i64, ptr %program, i64 %extent_position
  %extent = load i64, ptr %extent_address
  %sizes_position = add i64 %cursor, 2
  %sizes_address = getelementptr i64, ptr %program, i64 %sizes_position
  %sizes_integer = load i64, ptr %sizes_address
  %sizes = inttoptr i64 %sizes_integer to ptr
  %count_position = add i64 %cursor, 4
  %count_address = getelementptr i64, ptr %program, i64 %count_position
  %buffers = load i64, ptr %count_address
  %first = add i64 %cursor, {STEP_HEADER}
  br label %gather
gather:
  %buffer = phi i64 [0, %read], [%next_buffer, %pointer]
  %more_buffers = icmp ult i64 %buffer, %buffers
  br i1 %more_buffers, label %pointer, label %call
pointer:
  %slot_position = add i64 %first, %buffer
  %slot_address = getelementptr i64, ptr %program, i64 %slot_position
  %slot = load i64, ptr %slot_address
  %object_address = getelementptr ptr, ptr %objects, i64 %slot
  %object = load ptr, ptr %object_address
  %data_address = getelementptr i8, ptr %object, i64 {offset}
  %data = load ptr, ptr %data_address
  %destination = getelementptr ptr, ptr %pointers, i64 %buffer
  store ptr %data, ptr %destination
  %next_buffer = add i64 %buffer, 1
  br label %gather
call:{call}
  call void %kernel(ptr %pointers, ptr %sizes, i64 0, i64 %extent)
  br label %next
next:
  %next_index = add i64 %index, 1
  %next_cursor = add i64 %first, %buffers
  br label %step
done:
  ret void
}}
"""


@functools.cache
def dispatcher():
    """The native `dispatch(program, slots)` function (`slots`: the address of a list of
    arrays), or None where NumPy's or CPython's object layout is not the expected one (then
    kernels are called one by one)."""
    offset, items_offset = data_pointer_offset(), list_items_offset()
    if offset is None or items_offset is None:
        return None
    engine = jit_engine()
    parallel = threads.runtime() is not None
    engine.add_module(_source(offset, items_offset, parallel))
    if parallel:
        os.register_at_fork(after_in_child=lambda: threads.disable_in_child(engine))
    return _DISPATCH_SIGNATURE(engine.function_address("lazyarr_dispatch"))


def native_threads() -> bool:
    """Whether dispatched steps marked parallel run on OpenMP's threads (threads.py)."""
    return dispatcher() is not None and threads.runtime() is not None


_PARALLEL_CALL_SIGNATURE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                                            ctypes.c_int64)


@functools.cache
def parallel_caller():
    """`call(kernel address, buffer pointers, sizes, extent, threads)`: one kernel over [0, extent)
    on that many of OpenMP's threads (kernels called one by one: profiling), or None without them."""
    if not native_threads():
        return None
    return _PARALLEL_CALL_SIGNATURE(jit_engine().function_address("lazyarr_parallel_call"))


def program(steps: list[tuple[int, int, int, int, list[int]]]) -> tuple[ctypes.Array, list[int]]:
    """The program array of (kernel address, extent, sizes address, threads, slots) steps, and
    where each step's words start in it (extent at +1, sizes at +2, threads at +3: programs
    of kernels with placeholder sizes get them written at each run, in a copy)."""
    words = [len(steps), max((len(slots) for *_, slots in steps), default=0)]
    starts = []
    for address, extent, sizes, team, slots in steps:
        starts.append(len(words))
        words += [address, extent, sizes, int(team), len(slots), *slots]
    return (ctypes.c_int64 * len(words))(*words), starts
