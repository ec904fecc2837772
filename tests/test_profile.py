"""`la.profile`: Chrome trace events for evaluation, compilation, passes, code generation and
execution, on both backends; nesting, threads, exceptions, and no work when not profiling."""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest

import lazyarr as la
from lazyarr import _profiler

REQUIRED_KEYS = {"name", "cat", "ph", "ts", "dur", "pid", "tid", "args"}


@pytest.fixture(params=["interpreter", "cpu"])
def backend(request):
    previous = la.get_backend_name()
    la.set_backend(request.param)
    yield request.param
    la.set_backend(previous)


def complete(events, category=None, name=None):
    return [event for event in events if event["ph"] == "X"
            and (category is None or event["cat"] == category) and (name is None or event["name"] == name)]


def inside(inner, outer) -> bool:
    """Whether `inner` lies within `outer` in time (the clock is read in ns, reported in us:
    allow 1 ns of rounding at each end)."""
    return outer["ts"] - 1e-3 <= inner["ts"] and inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"] + 1e-3


def large_graph():
    """A kernel and an integer dot (a host step on the CPU backend: BLAS has no integer gemm)."""
    values = np.random.default_rng(0).standard_normal((512, 256))
    x, counts = la.asarray(values), la.asarray((values > 0).astype(np.int64))
    return la.exp(x) * 2.5 + 1, (counts.T @ counts).sum(), values


def test_each_category_is_recorded_and_nested_in_its_parent(backend, monkeypatch):
    from lazyarr.backends import cpu
    from lazyarr.backends.llvm import dispatch

    monkeypatch.setattr(cpu, "_PARALLEL_WORK", 1 << 12)  # the kernel splits over threads
    monkeypatch.setattr(cpu, "_NATIVE_PARALLEL_WORK", 1 << 12)
    la.clear_cache()  # the first evaluation must compile
    scaled, gram_sum, values = large_graph()
    with la.profile() as trace:
        la.eval(scaled, gram_sum)
    events = trace.events
    (evaluate,) = complete(events, "eval", "evaluate")
    (compile_event,) = complete(events, "compile", "compile")
    assert inside(compile_event, evaluate)
    instants = [event["name"] for event in events if event["ph"] == "i"]
    assert instants == ["compile cache miss"]
    executions = complete(events, "execute")
    assert executions and all(inside(event, evaluate) for event in executions)
    assert all(event["ts"] >= compile_event["ts"] + compile_event["dur"] for event in executions
               if event["tid"] == evaluate["tid"])  # runs after compiling, on the calling thread
    np.testing.assert_allclose(np.asarray(scaled), np.exp(values) * 2.5 + 1, rtol=1e-12)
    if backend == "interpreter":
        assert [event["name"] for event in executions] == ["interpreter run"]
        assert not complete(events, "pass") and not complete(events, "codegen")
        return
    (pipeline,) = complete(events, "compile", "pipeline")
    passes = complete(events, "pass")
    assert {"simplify", "cse", "fusion", "buffer-assignment"} <= {event["name"] for event in passes}
    assert all(inside(event, pipeline) for event in passes)
    codegen = complete(events, "codegen")
    assert {"build IR", "LLVM optimize", "machine code"} <= {event["name"] for event in codegen}
    assert all(inside(event, compile_event) for event in codegen)
    (host_step,) = complete(events, "execute", "host step")
    assert host_step["args"]["instruction"] == "dot"
    kernels = complete(events, "execute", "kernel")
    if dispatch.native_threads():  # OpenMP's threads run the slices: native code, no Python spans
        assert not complete(events, "execute", "kernel chunk")
        return
    chunks = complete(events, "execute", "kernel chunk")  # the Python pool's
    assert chunks and {chunk["tid"] for chunk in chunks}.isdisjoint({evaluate["tid"]})
    assert all(any(inside(chunk, kernel) for kernel in kernels) for chunk in chunks)
    thread_names = {event["tid"]: event["args"]["name"] for event in events if event["name"] == "thread_name"}
    assert all(thread_names[chunk["tid"]].startswith("lazyarr-cpu") for chunk in chunks)


def test_a_second_evaluation_hits_the_cache_and_compiles_nothing(backend):
    x = la.asarray(np.arange(6.0))
    (la.sin(x) - 3).eval()
    with la.profile() as trace:
        result = (la.sin(x) - 3).eval()
    assert [event["name"] for event in trace.events if event["ph"] == "i"] == ["compile cache hit"]
    assert not complete(trace.events, "compile")
    assert len(complete(trace.events, "eval", "evaluate")) == 1
    np.testing.assert_array_equal(np.asarray(result), np.sin(np.arange(6.0)) - 3)


def test_jit_traces_once_and_then_only_runs(backend):
    @la.jit
    def weighted_total(values, weights):
        return (values * weights).sum()

    x = la.asarray(np.arange(4.0))
    with la.profile() as trace:
        first, second = weighted_total(x, x), weighted_total(x, x + 1)
    assert (float(first), float(second)) == (14.0, 20.0)
    (tracing,) = complete(trace.events, "jit")
    assert (tracing["name"], tracing["args"]) == ("trace", {"detail": "weighted_total"})
    runs = [event for event in complete(trace.events, "execute") if event["name"] in ("kernel", "interpreter run")]
    assert len(runs) >= 2 and all(event["ts"] > tracing["ts"] + tracing["dur"] for event in runs)


def test_file_is_a_chrome_trace(tmp_path):
    path = tmp_path / "trace.json"
    with la.profile(path):
        (la.arange(5.0) * 3).sum().eval()
    trace = json.loads(path.read_text())
    assert trace["displayTimeUnit"] == "ms"
    events = trace["traceEvents"]
    timed = complete(events)
    assert timed and all(REQUIRED_KEYS <= set(event) for event in timed)
    assert all(isinstance(event["ts"], float) and event["dur"] >= 0 for event in timed)
    assert all(event["ph"] in ("X", "i", "M") for event in events)
    assert {"eval", "compile"} <= {event["cat"] for event in timed}


def test_the_file_is_written_when_an_exception_escapes(tmp_path):
    path = tmp_path / "failed.json"
    with pytest.raises(ZeroDivisionError), la.profile(path):
        la.arange(3.0).sum().eval()
        with _profiler.span("failing step", "execute"):
            1 / 0  # noqa: B018
    events = json.loads(path.read_text())["traceEvents"]
    assert complete(events, "eval", "evaluate")
    (failing,) = complete(events, "execute", "failing step")
    assert failing["args"] == {"exception": "ZeroDivisionError"}
    assert _profiler._ACTIVE is None


def test_nested_blocks_each_hold_their_own_span_of_time(tmp_path):
    x = la.asarray(np.ones(4))
    with la.profile() as outer:
        (x + 1).eval()
        with la.profile(tmp_path / "inner.json") as inner:
            (x + 2).eval()
        (x + 3).eval()
    assert len(complete(outer.events, "eval")) == 3
    assert len(complete(inner.events, "eval")) == 1
    written = json.loads((tmp_path / "inner.json").read_text())["traceEvents"]
    assert len(complete(written, "eval")) == 1
    with la.profile() as open_block, pytest.raises(RuntimeError, match="already recording"):
        open_block.__enter__()


def test_events_of_other_threads_carry_their_thread_ids():
    x = la.asarray(np.arange(8.0))
    for shift in range(2):
        (x + shift).eval()  # compiled here: the threads below only hit the cache
    with la.profile() as trace:
        workers = [threading.Thread(target=lambda shift=shift: (x + shift).eval(), name=f"worker-{shift}")
                   for shift in range(2)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    evaluations = complete(trace.events, "eval", "evaluate")
    names = {event["tid"]: event["args"]["name"] for event in trace.events if event["name"] == "thread_name"}
    assert sorted(names[event["tid"]] for event in evaluations) == ["worker-0", "worker-1"]


def test_hooks_do_nothing_when_not_profiling(monkeypatch):
    def forbidden():
        raise AssertionError("the clock was read while nothing was profiling")

    monkeypatch.setattr(_profiler.time, "perf_counter_ns", forbidden)
    assert _profiler.span("a", "b") is _profiler.span("c", "d", {"e": 1}) is _profiler._NULL_SPAN
    assert _profiler.traced(len, "a", "b") is len
    assert _profiler.instant("a", "b") is None
    np.testing.assert_array_equal(np.asarray(la.arange(3.0) * 2), [0.0, 2.0, 4.0])
    monkeypatch.undo()
    with la.profile() as trace:
        pass
    (la.arange(3.0) * 5).eval()  # after the block: not recorded
    assert not complete(trace.events) and not _profiler.is_profiling()


def test_details_become_json_arguments():
    with la.profile() as trace:
        with _profiler.span("named", "jit", {"function": "f", "shapes": [(2, 3)], "dtype": np.dtype("f4")}):
            pass
        with _profiler.span("plain", "jit", 7):
            pass
        _profiler.traced(lambda *arguments: None, "chunk", "execute")(object(), 0, 8)
    named, plain, chunk = complete(trace.events)
    assert named["args"] == {"function": "f", "shapes": [[2, 3]], "dtype": "float32"}
    assert plain["args"] == {"detail": 7}
    assert chunk["args"] == {"arguments": [0, 8]}
    json.dumps(trace.trace())
    summary = trace.summary().splitlines()
    assert summary[0].split() == ["category", "name", "count", "total", "ms"] and len(summary) == 4


def test_profile_rejects_a_path_of_the_wrong_type():
    with pytest.raises(TypeError, match="path must be a str or os.PathLike"):
        la.profile(3)


def test_a_symlink_planted_at_the_path_is_replaced_not_followed(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    path = tmp_path / "trace.json"
    path.symlink_to(victim)
    with la.profile(path):
        (la.arange(4.0) * 2).sum().eval()
    assert victim.read_text() == "precious\n"
    assert not path.is_symlink()
    assert complete(json.loads(path.read_text())["traceEvents"], "eval")
    assert sorted(item.name for item in tmp_path.iterdir()) == ["trace.json", "victim.txt"]
