"""lazyarr chunks in dask arrays: dask partitions, schedules and combines; lazyarr compiles each chunk's work.

    import lazyarr.dask as lad
    x, y, z = (lad.from_array(values, chunks=2**24) for values in (a, b, c))  # or lad.from_dask(dask_array)
    total = (x + y * z).sum()        # a dask array with lazyarr chunks: nothing runs
    total.compute()                  # a lazyarr array (np.asarray gives NumPy), on any dask scheduler

A dask array whose `meta` is a lazyarr array calls NumPy's functions on lazyarr chunks; they
dispatch to lazyarr (`__array_ufunc__`, `__array_function__`), so every task records a lazy graph
instead of computing. Dask's blockwise fusion makes a chain of elementwise operations, and the
per-chunk step of a reduction after it, one task. `optimize`, installed as dask's
`array_optimize` when this module is imported, makes every task evaluate the lazyarr arrays it
returns as it ends: the task's graph becomes one compiled module (for `sum(x + y*z)` one fused
loop per chunk), run on the worker thread that owns the task. Left lazy, nothing would run until
a result left its process: a worker's whole share would pile up into one module run on one
thread at the end (`persist()` would compute nothing), holding every input chunk alive, unseen
by dask's memory accounting.

A chunk crosses a process boundary as its buffer (pickling a lazyarr array evaluates it and sends
NumPy's bytes); `sizeof` reports a chunk's bytes without evaluating it, so dask's memory limits
and spilling see real sizes. Compiled executables stay in each process: a worker compiles each
distinct task program once (symbolic sizes make a smaller last chunk reuse it, unless one of its
axes is 4 or less: such sizes compile apart), or loads its kernels from the persistent compile
cache that another process on the machine filled.
"""

from __future__ import annotations

import uuid

import numpy as np

try:
    import dask
    import dask.array as da
    from dask.array.core import getter
    from dask.array.optimization import optimize as _dask_array_optimize
    from dask.base import normalize_token
    from dask.core import istask
    from dask.highlevelgraph import HighLevelGraph
    from dask.sizeof import sizeof
except ImportError as error:  # pragma: no cover (the test module is skipped without dask)
    raise ImportError(
        f"lazyarr.dask needs dask[array] and distributed ({error}); install them with "
        "pip install 'lazyarr[dask]'"
    ) from None
try:  # dask >= 2024.12 spells tasks as Task objects; before, as tuples (function, *arguments)
    from dask._task_spec import Task, convert_legacy_graph
except ImportError:  # pragma: no cover (CI installs a current dask)
    Task = convert_legacy_graph = None

from . import dtypes
from .frontend.array import Array, evaluate_arrays, leaf_for
from .frontend.core import from_numpy, on_default_device
from .frontend.indexing import block
from .shapes import is_contiguous_block

__all__ = ["from_array", "from_dask", "optimize", "to_dask"]

# The names of the layers that make lazyarr chunks (dask's dashboard shows them)
LAYER_PREFIX = "lazyarr-"


def meta_like(dtype, ndim: int) -> Array:
    """The `meta` of a dask array with lazyarr chunks: an empty lazyarr array of that dtype and rank."""
    return from_numpy(np.empty((0,) * ndim, dtype=dtype), where="lazyarr.dask meta")


def from_dask(array: da.Array) -> da.Array:
    """`array` with lazyarr chunks (itself when its chunks already are).

    Each NumPy chunk becomes a lazyarr array without a copy when it is C-contiguous (dask never
    writes a chunk after its task returns; lazyarr never writes a buffer); others are copied.

    >>> import dask.array as da, lazyarr.dask as lad
    >>> x = lad.from_dask(da.ones((4, 4), chunks=2))
    >>> type(x._meta).__name__, float((x * 2).sum().compute())
    ('Array', 32.0)
    """
    if not isinstance(array, da.Array):
        raise TypeError(f"from_dask: expected a dask array, got {type(array).__name__}; use from_array for "
                        "NumPy or lazyarr arrays")
    if isinstance(array._meta, Array):
        return array
    if array.dtype not in dtypes.SUPPORTED:
        raise TypeError(f"from_dask: dtype {array.dtype} is not supported; lazyarr supports "
                        + ", ".join(str(dtype) for dtype in dtypes.ALL))
    return array.map_blocks(lazy_chunk, dtype=array.dtype, meta=meta_like(array.dtype, array.ndim),
                            name=f"{LAYER_PREFIX}from-dask-{dask.base.tokenize(array)}")


def lazy_chunk(chunk) -> Array:
    """One dask chunk as a lazyarr array: a C-contiguous NumPy chunk is wrapped, not copied."""
    if isinstance(chunk, Array):
        return chunk
    if type(chunk) is np.ndarray and chunk.flags.c_contiguous and chunk.dtype in dtypes.SUPPORTED:
        return on_default_device(Array(leaf_for(chunk.view())))  # (read-only view, never dask's chunk)
    return from_numpy(chunk, where="from_dask")


def from_array(value, chunks="auto", *, name: str | None = None) -> da.Array:
    """A dask array with lazyarr chunks over `value` (a NumPy or lazyarr array, or anything
    `la.asarray` takes). A lazy `value` is evaluated first; a NumPy one is copied once, as
    `la.asarray` copies. `chunks` is dask's (`"auto"`, an int, a tuple per axis, ...); `name`
    is the dask array's name after "lazyarr-" (default: unique).

    The whole value lives in the graph, as with `dask.array.from_array`: for data larger than
    the client's memory build the array on the workers (`from_dask(da.from_zarr(...))`).

    >>> import numpy as np, lazyarr.dask as lad
    >>> x = lad.from_array(np.arange(6.0), chunks=4)
    >>> x.chunks, float(x.sum().compute())
    (((4, 2),), 15.0)
    """
    array = value if isinstance(value, Array) else from_numpy(value, where="from_array")
    array.eval()
    return da.from_array(array, chunks=chunks, name=f"{LAYER_PREFIX}{name or 'array-' + uuid.uuid4().hex}",
                         asarray=False, getitem=_chunk_of, meta=meta_like(array.dtype, array.ndim))


def _chunk_of(array: Array, key, asarray=False, lock=None):
    """dask's getter for `from_array`: a chunk that is not one contiguous stretch of the array
    (a 2-D block) is a dynamic-slice with runtime starts, so every chunk of one shape is one
    program wherever it lies (as a basic slice, each position compiled a program of its own:
    20 for the 5x4 blocks of a 300x200 array). Contiguous chunks (rows) are basic slices, which
    evaluation hands to kernels as views of the buffer."""
    bounds = _block_bounds(array.shape, key)
    if bounds is None:
        return getter(array, key, asarray=False, lock=lock)
    return block(array, bounds)


def _block_bounds(shape, key) -> list[tuple[int, int]] | None:
    """(begin, end) per axis of a key of unit-step slices that is not a contiguous stretch of
    a row-major array of `shape`; None for any other key."""
    if type(key) is not tuple or len(key) != len(shape) or any(
            type(part) is not slice or part.step not in (None, 1) for part in key):
        return None
    bounds = [part.indices(size)[:2] for part, size in zip(key, shape)]
    bounds = [(begin, max(begin, end)) for begin, end in bounds]
    return None if is_contiguous_block(bounds, shape) else bounds


to_dask = from_array  # the same, read from the lazyarr side: lad.to_dask(lazy, chunks=...)


# -- evaluation at task boundaries -------------------------------------------------------------
def optimize(graph, keys, **kwargs):
    """dask's array optimization; then every task evaluates the lazyarr arrays it returns (also
    inside tuples, lists and dicts), all in one module.

    Every task is wrapped, whatever its chunks: a graph cannot tell which tasks return lazyarr
    arrays (a persisted array's layer keeps only its last operation's name), and for any other
    result the wrapper is a function call and a type check, microseconds against a chunk's work.
    """
    optimized = _dask_array_optimize(graph, keys, **kwargs)
    if isinstance(optimized, HighLevelGraph):  # low-level fusion turned off: still a layered graph
        optimized = dict(optimized)
        if convert_legacy_graph is not None:
            optimized = convert_legacy_graph(optimized)
    return {key: _evaluating(node) for key, node in optimized.items()}


def _evaluating(node):
    """`node`, a task, as a task that evaluates the lazyarr arrays its result holds (the
    original task nested as its argument); data and aliases as they are."""
    if Task is None:
        return (evaluate_chunks, node) if istask(node) and node[0] is not evaluate_chunks else node
    if isinstance(node, Task) and node.func is not evaluate_chunks:
        # a data producer (a root task: dask >= 2025 schedules those first) stays one
        producer = {"_data_producer": True} if getattr(node, "data_producer", False) else {}
        return Task(node.key, evaluate_chunks, node, **producer)
    return node


def evaluate_chunks(result):
    """`result` with every unevaluated lazyarr array in it (nested tuples, lists, dicts)
    evaluated, together; returns `result` itself."""
    pending, stack, seen = [], [result], set()
    while stack:
        item = stack.pop()
        if isinstance(item, Array):
            if not item.is_evaluated:
                pending.append(item)
        elif isinstance(item, (tuple, list, dict)) and id(item) not in seen:
            seen.add(id(item))
            stack.extend(item.values() if isinstance(item, dict) else item)
    if pending:
        evaluate_arrays(pending)
    return result


# -- what dask asks of a chunk type ------------------------------------------------------------
@sizeof.register(Array)
def _chunk_bytes(array: Array) -> int:
    """A chunk's bytes from its shape and dtype: dask's memory accounting never evaluates."""
    return array.nbytes


@normalize_token.register(Array)
def _chunk_token(array: Array):
    """Tokens by value, through dask's NumPy hashing (evaluates, as pickling would)."""
    return "lazyarr.Array", normalize_token(array.numpy())


def _install_optimizer() -> None:
    """Make `optimize` dask's array optimization, unless another one is configured: that one
    stays (it can call `lazyarr.dask.optimize` on its result), and lazyarr chunks then compute
    only when they leave their process."""
    configured = dask.config.get("array_optimize", None)
    if configured is None or configured is optimize:
        dask.config.set(array_optimize=optimize)


_install_optimizer()
