"""lazyarr chunks in dask arrays (lazyarr/dask.py): NumPy-style code on the dask array, on the
threaded scheduler and on a two-process LocalCluster, against NumPy on the whole array; one
fused kernel per chunk; compile counts per worker.

Worker processes inherit this process's environment: LAZYARR_CACHE_DIR (conftest's fresh
directory) but not conftest's in-process `persistent_cache=False`. So the workers' persistent
compile cache is on, in that directory: a kernel one worker compiled, the other loads
(`kernels_loaded`) instead of compiling, and tests earlier in the module fill the directory.
Compile counts are therefore asserted on executables (`misses`: one per distinct chunk
program, whether its kernels were compiled or loaded), and loading is asserted where one
worker runs a program after the other.
"""

import doctest
import pickle

import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="dask[array] is not installed (pip install 'lazyarr[dask]')")
distributed = pytest.importorskip("distributed", reason="distributed is not installed (pip install 'lazyarr[dask]')")

import dask  # noqa: E402
import dask.sizeof  # noqa: E402

import lazyarr as la  # noqa: E402
import lazyarr.dask as lad  # noqa: E402

RTOL = 1e-4  # float32 chunks summed in another order than NumPy's pairwise sum, polynomial exp/tanh
ATOL = 1e-4


@la.jit
def softsign_jit(chunk):
    """A module-level jitted function: it pickles to the workers by name."""
    return chunk / (1 + la.abs(chunk))


def compile_setup():
    """A worker's backend and whether its persistent compile cache is on (run with client.run)."""
    from lazyarr import _flags

    return la.get_backend_name(), _flags.FLAGS.persistent_cache


@pytest.fixture(scope="module")
def client():
    """One two-process cluster for the module (starting one takes seconds), shut down at the end."""
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=50)
    with cluster, distributed.Client(cluster, set_as_default=False) as connected:
        yield connected


@pytest.fixture(params=["threads", "distributed"])
def compute(request):
    """`compute(*dask_arrays)`: their results as a list, computed together (one graph, one round
    trip) on the threaded scheduler or on the LocalCluster."""
    if request.param == "threads":
        return lambda *arrays: list(dask.compute(*arrays, scheduler="threads"))
    cluster_client = request.getfixturevalue("client")
    return lambda *arrays: cluster_client.gather(cluster_client.compute(list(arrays)))


def all_close(compute, *pairs, rtol=RTOL, atol=ATOL):
    """Each (dask array, NumPy answer) pair's result is close to the answer; computed together."""
    for result, (_, want) in zip(compute(*(array for array, _ in pairs)), pairs):
        close(result, want, rtol=rtol, atol=atol)


def close(got, want, rtol=RTOL, atol=ATOL):
    got = np.asarray(got)
    assert got.shape == np.shape(want)
    assert got.dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


def data(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# 200 x 120 in 64 x 50 chunks: partial last chunks along both axes (8 rows, 20 columns)
SHAPE, CHUNKS = (200, 120), (64, 50)


# -- the API ---------------------------------------------------------------------------------
def test_from_array_and_from_dask_give_lazyarr_chunks():
    values = data(SHAPE)
    x = lad.from_array(values, chunks=CHUNKS)
    assert isinstance(x._meta, la.Array) and x.chunks == ((64, 64, 64, 8), (50, 50, 20))
    result = (x * 2).compute(scheduler="threads")
    assert isinstance(result, la.Array)
    assert isinstance(np.asarray(result), np.ndarray)
    close(result, values * 2)

    from_numpy_chunks = lad.from_dask(da.from_array(values, chunks=CHUNKS))
    assert isinstance(from_numpy_chunks._meta, la.Array)
    close(from_numpy_chunks.sum(axis=0).compute(scheduler="threads"), values.sum(axis=0))
    assert lad.from_dask(x) is x
    assert lad.to_dask is lad.from_array
    lazy = la.asarray(values) + 1  # a lazy value is evaluated once, then sliced into chunks
    close(lad.from_array(lazy, chunks=100).compute(scheduler="threads"), values + 1)


def test_the_docstring_examples_run():
    assert doctest.testmod(lad).failed == 0


def test_from_dask_errors_name_what_it_got():
    with pytest.raises(TypeError, match="expected a dask array, got ndarray"):
        lad.from_dask(np.ones(3))
    with pytest.raises(TypeError, match="dtype <U1 is not supported"):
        lad.from_dask(da.from_array(np.array(["a", "b"]), chunks=1))


def test_chunk_sizes_and_tokens_never_evaluate_and_pickling_sends_a_buffer():
    values = data((300,))
    pending = la.exp(la.asarray(values)) * 2
    assert dask.sizeof.sizeof(pending) == 1200 and not pending.is_evaluated
    payload = pickle.dumps(pending)
    assert pending.is_evaluated  # pickling evaluated the graph: the buffer travels, not the graph
    assert 1200 <= len(payload) < 1200 + 400
    close(pickle.loads(payload), np.exp(values) * 2)
    assert dask.base.tokenize(la.asarray(values)) == dask.base.tokenize(la.asarray(values.copy()))
    assert dask.base.tokenize(la.asarray(values)) != dask.base.tokenize(la.asarray(values + 1))


def test_every_task_evaluates_the_lazyarr_arrays_it_returns():
    """The optimizer wraps every task; a task returning NumPy chunks is unchanged by it."""
    lazy = lad.from_array(np.ones((10, 10)), chunks=5) + 1
    graph = lad.optimize(lazy.__dask_graph__(), lazy.__dask_keys__())
    assert all(task.func is lad.evaluate_chunks for task in graph.values() if hasattr(task, "func"))
    assert dask.config.get("array_optimize") is lad.optimize
    persisted = (lad.from_array(np.ones(10), chunks=5) * 2).persist(scheduler="threads")
    assert all(chunk.is_evaluated for chunk in dict(persisted.__dask_graph__()).values())
    close((persisted + 1).compute(scheduler="threads"), np.full(10, 3.0))
    pending = la.asarray(np.ones(3)) * 2
    mixed = {"n": np.ones(2), "total": [pending]}  # dask's mean and arg reductions return dicts
    assert lad.evaluate_chunks(mixed) is mixed and pending.is_evaluated
    close((da.ones((10, 10), chunks=5) + 1).sum().compute(scheduler="threads"), np.float64(200.0))


def test_a_ufunc_dtype_naming_the_result_dtype_stays_lazy():
    """dask's blocked matmul adds the partial products with `partial(np.add, dtype=...)`."""
    x = la.asarray(np.ones(3, np.float32))
    summed = np.add(x, x * 2, dtype=np.float32)
    assert isinstance(summed, la.Array) and not summed.is_evaluated
    widened = np.add(x, x, dtype=np.float64)  # another dtype: NumPy computes it, as before
    assert isinstance(widened, np.ndarray) and widened.dtype == np.float64


def test_jitted_functions_pickle_by_reference_without_their_executables():
    softsign_jit(np.ones(3, np.float32))  # compiled here: the executable must not travel
    assert pickle.loads(pickle.dumps(softsign_jit)) is softsign_jit
    local = la.jit(np.negative)
    copy = pickle.loads(pickle.dumps(local))
    assert copy is not local and copy(np.ones(2)).tolist() == [-1.0, -1.0]


# -- NumPy-style code on the dask array, against NumPy on the whole array --------------------
def test_elementwise_where_and_broadcasting(compute):
    a, b, row = data(SHAPE, 1), data(SHAPE, 2), data(SHAPE[1:], 3)
    x, y = lad.from_array(a, chunks=CHUNKS), lad.from_array(b, chunks=CHUNKS)
    all_close(compute,
              (np.exp(x) * 2 - y / (1 + abs(x)) + row, np.exp(a) * 2 - b / (1 + abs(a)) + row),
              (da.where(x > 0.5, np.sqrt(abs(x)), -y), np.where(a > 0.5, np.sqrt(abs(a)), -b)),
              (x[:, :1] * y[:1, :], a[:, :1] * b[:1, :]))  # both operands broadcast


@pytest.mark.parametrize("axis", [0, 1, None, (0, 1)])
def test_reductions_over_each_axis_and_all(compute, axis):
    a = data(SHAPE, 4)
    x = lad.from_array(a, chunks=CHUNKS)
    pairs = [(x.sum(axis=axis), a.sum(axis=axis)), (x.mean(axis=axis), a.mean(axis=axis)),
             (x.max(axis=axis), a.max(axis=axis)), (x.std(axis=axis), a.std(axis=axis))]
    if not isinstance(axis, tuple):
        pairs.append((x.argmax(axis=axis), a.argmax(axis=axis)))
    all_close(compute, *pairs)  # argmax: integers, so exactly


def test_fused_producers_under_a_reduction(compute):
    a, b, c = data(SHAPE, 5), data(SHAPE, 6), data(SHAPE, 7)
    x, y, z = (lad.from_array(values, chunks=CHUNKS) for values in (a, b, c))
    all_close(compute, ((x + y * z).sum(), (a + b * c).sum()),
              ((x - y).min(axis=1, keepdims=True), (a - b).min(axis=1, keepdims=True)))


def test_matmul_slicing_rechunk_and_transpose(compute):
    a, w = data(SHAPE, 8), data((SHAPE[1], 30), 9)
    x, weights = lad.from_array(a, chunks=CHUNKS), lad.from_array(w, chunks=(50, 30))
    all_close(compute, (x[5:170:3, ::-2] + 1, a[5:170:3, ::-2] + 1), (x.rechunk((100, 120)) * 3, a * 3))
    all_close(compute, (x @ weights, a @ w), (x.T @ x, a.T @ a), atol=1e-3)  # sums of 120 and 200 products


def test_nan_and_empty_chunks(compute):
    a = data(SHAPE, 10)
    a[70, 13] = a[150, 100] = np.nan
    x = lad.from_array(a, chunks=CHUNKS)
    with_empty = lad.from_array(a, chunks=((0, 120, 80), (60, 60)))  # a chunk of no rows
    all_close(compute, (x.sum(axis=0), a.sum(axis=0)), (x.max(axis=1), a.max(axis=1)),
              (da.nansum(x, axis=0), np.nansum(a, axis=0)), (np.exp(with_empty) + 1, np.exp(a) + 1),
              (with_empty.sum(axis=0), a.sum(axis=0)), (with_empty.mean(axis=1), a.mean(axis=1)),
              (x[5:5].sum(axis=0), a[5:5].sum(axis=0)))


def test_an_empty_chunk_under_max_fails_as_with_numpy_chunks():
    """max over a chunk of no rows has no identity: dask with NumPy chunks raises the same."""
    a = data(SHAPE, 11)
    chunks = ((0, 120, 80), (60, 60))
    with pytest.raises(ValueError):
        da.from_array(a, chunks=chunks).max(axis=1).compute(scheduler="threads")
    with pytest.raises(ValueError, match="zero-size"):
        lad.from_array(a, chunks=chunks).max(axis=1).compute(scheduler="threads")


def test_jitted_functions_apply_per_chunk(compute):
    a = data(SHAPE, 12)
    x = lad.from_array(a, chunks=CHUNKS)
    scaled = la.jit(lambda chunk: la.tanh(chunk) * 2)  # pickled by value (cloudpickle)
    all_close(compute, (x.map_blocks(softsign_jit), a / (1 + abs(a))),
              (x.map_blocks(scaled).sum(axis=1), (np.tanh(a) * 2).sum(axis=1)))


# -- one fused kernel per chunk, and compile counts --------------------------------------------
def test_a_chunk_chain_and_its_reduction_step_run_as_one_fused_kernel(monkeypatch, cpu_backend):
    """Each task evaluates its chunk's graph as one module; for sum(x + y*z) the chunk's
    multiply, add and reduce are one fused loop, the one pass over the chunk (the keepdims
    reshape of the scalar sum is a one-element kernel of its own)."""
    reports = []

    def explained(arrays):
        reports.append(la.explain(*arrays))
        return la.eval(*arrays)

    monkeypatch.setattr(lad, "evaluate_arrays", explained)
    values = [data((50_000,), seed) for seed in (13, 14, 15)]
    x, y, z = (lad.from_array(array, chunks=12_000) for array in values)
    close((x + y * z).sum().compute(scheduler="threads"), (values[0] + values[1] * values[2]).sum())
    chunk_reports = [report for report in reports if "f32[12000]" in report.hlo_before
                     or "f32[2000]" in report.hlo_before]
    assert len(chunk_reports) == 5  # 4 full chunks and the last 2,000 elements
    for report in chunk_reports:  # the last chunk's task also holds a combine step (dask's linear fusion)
        reading = [line for line in str(report.fusion_report).splitlines() if "multiply" in line or "add" in line]
        assert len(reading) == 1 and all(op in reading[0] for op in ("multiply", "add", "reduce")), report


def test_one_compile_per_chunk_program_per_worker_and_the_second_worker_loads(client):
    """7 chunks (the last one smaller) on one worker: one executable, six reuses. The same
    program on the other worker: one executable whose kernels come from the persistent cache
    the first worker wrote."""
    values = data((6 * 40_000 + 25_000,), 16)
    first, second = sorted(client.scheduler_info()["workers"])
    counts = []
    for worker in (first, second):
        x = lad.from_array(values, chunks=40_000)  # new keys: the second run computes again
        program = np.cos(x) * 3 - x * x  # a program no other test compiles
        before = client.run(la.cache_info, workers=[worker])[worker]
        result = client.persist(program, workers=[worker])
        client.gather(distributed.futures_of(result))  # waits (chunks are already evaluated: no compile)
        after = client.run(la.cache_info, workers=[worker])[worker]
        counts.append((after.misses - before.misses, after.hits - before.hits,
                       after.kernels_compiled - before.kernels_compiled, after.kernels_loaded - before.kernels_loaded))
        close(client.compute(result).result(), np.cos(values) * 3 - values * values)
    assert counts[0][:2] == (1, 6)  # one executable for 7 chunks, the partial last one included
    assert counts[1][:2] == (1, 6)
    if set(client.run(compile_setup).values()) == {("cpu", True)}:  # not so under LAZYARR_FLAGS overrides
        assert counts[0][2] + counts[0][3] >= 1  # the first worker compiled the kernel (or an earlier process) ...
        assert counts[1][2] == 0 and counts[1][3] >= 1  # ... the second loaded it from the disk cache


def test_two_dimensional_chunks_compile_one_program_per_chunk_shape(cpu_backend):
    """Blocks of a 2-D array are dynamic slices with runtime starts: the 12 chunks of a 400x300
    array in 128x128 blocks (full, partial-row, partial-column and corner blocks: chunk shapes
    (128,128), (128,44), (16,128), (16,44)) run 2 chunk programs, not one per position: square
    blocks have two equal sizes (a symbolic pattern of their own), the other three shapes share one."""
    values = data((400, 300), 17)
    x = lad.from_array(values, chunks=(128, 128))
    program = np.sin(x) * 2 + x  # elementwise: one task per chunk, no combine steps
    before = la.cache_info()
    blocks = dask.compute(*program.to_delayed().ravel(), scheduler="sync")  # the chunks, not joined
    after = la.cache_info()
    expected = np.sin(values) * 2 + values
    starts = [(row, column) for row in range(0, 400, 128) for column in range(0, 300, 128)]
    for block, (row, column) in zip(blocks, starts):
        close(block, expected[row:row + 128, column:column + 128])
    assert after.misses - before.misses == 2
    assert after.hits - before.hits == 10


@pytest.mark.parametrize("key", [(slice(0, 3), slice(2, 7)), (slice(2, 3), slice(None)), (slice(1, 4), slice(0, 9)),
                                 (slice(5, 5), slice(1, 2)), (slice(0, 6), slice(3, 3))])
def test_blocks_of_an_evaluated_array_match_numpy(key):
    """lazyarr.dask's getter: blocks (dynamic slices) and contiguous stretches (basic slices)."""
    values = np.arange(6 * 9, dtype=np.int32).reshape(6, 9)
    chunk = lad._chunk_of(la.asarray(values), key)
    np.testing.assert_array_equal(np.asarray(chunk), values[key], strict=True)
