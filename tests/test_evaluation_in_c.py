"""One array's cached evaluation in C (`_graph_walk.run_cached`, `_fast_paths.adopt_evaluated`,
`_fast_paths.parameter_leaf`) is its Python twin's (compile.evaluate_keeping_one's walk, kept
positions and plan run; array.python_adopt_evaluated; hlo.instruction.fresh_parameter).

Random programs hold intermediate values, views of them, functions of constants, values larger
than what an evaluation touches and values only a pending node reads, and evaluate one array at
a time, several iterations (so plans are cached and the C path runs): after every evaluation
point, which arrays are evaluated and every value read are the same with the C paths and
without them, and equal NumPy's.
"""

from __future__ import annotations

import contextlib
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarr as la
from lazyarr import compile as compile_driver
from lazyarr.frontend import array as array_module
from lazyarr.hlo import instruction

pytestmark = pytest.mark.usefixtures("fresh_cpu_cache")

_C_BUILT = compile_driver._graph_walk is not None and array_module._adopt_evaluated is not (
    array_module.python_adopt_evaluated)


@contextlib.contextmanager
def python_twins():
    """The C evaluation paths off for a block (their Python twins run)."""
    with (mock.patch.object(compile_driver, "_graph_walk", None),
          mock.patch.object(array_module, "_adopt_evaluated", array_module.python_adopt_evaluated),
          mock.patch.object(array_module, "_evaluate_one", array_module._no_evaluate_one),
          mock.patch.object(instruction, "_fast_parameter", None)):
        yield


@contextlib.contextmanager
def _c_evaluations_through(run_cached):
    """_fast_paths.evaluate_one calling `run_cached` (a spy) for compile's cached evaluations."""
    from lazyarr import _profiler
    from lazyarr.frontend import _fast_paths, tracing

    def configure(run):
        _fast_paths.configure_cached_evaluation(
            run, compile_driver._DECISIONS[True], compile_driver._PLANS, vars(compile_driver), vars(_profiler),
            compile_driver._INFO, array_module._worth_keeping, tracing._TRACER_ENTRIES)

    configure(run_cached)
    try:
        yield
    finally:
        configure(compile_driver._graph_walk.run_cached)


_STATEMENTS = ["hold", "hold_view", "hold_constant", "hold_large", "pending_reader", "update", "read_sum",
               "read_array", "read_held", "read_large", "read_reader", "hold_copied_view", "hold_pending_view",
               "read_views"]


def _run(xp, statements, start):
    """Run `statements` over int64 vectors (exact arithmetic: any difference is a wrong value) for
    three iterations; returns every value read, and after each read, which named arrays are
    evaluated (lazyarr only; None for NumPy)."""
    a = xp.asarray(start[0])
    b = xp.asarray(start[1])
    named: dict[str, object] = {}
    reads, states = [], []
    for iteration in range(3):
        for kind, factor in statements:
            if kind == "hold":
                named["t"] = a * factor + b
            elif kind == "hold_view":  # a view of a computed value
                named["v"] = (a - b * factor)[1:]
            elif kind == "hold_constant":  # a function of constants alone: never kept
                named["c"] = xp.zeros(a.shape, dtype=a.dtype) + factor
            elif kind == "hold_large":  # larger than what a read of `a` touches: stays lazy
                named["big"] = a[:, None] * b[None, :]
            elif kind == "pending_reader":  # a pending node reads an interior value
                inner = a + factor
                named["reader"] = inner * 2
                named["reader_sum"] = (inner - b).sum()
            elif kind == "update":
                a = a + b * factor - (iteration + 5)  # (a lifted scalar: one signature)
            elif kind == "read_sum":
                reads.append(int((a * factor - b).sum()))
            elif kind == "hold_copied_view":  # an owned view of a value needing no computing: never kept
                named["cv"] = b.reshape(2, 4).copy()
            elif kind == "hold_pending_view":  # held by a view only: not kept (its base is)
                named["pv"] = (a + factor).reshape(2, 4)
            elif kind == "read_views":
                reads.append(int((named.get("cv", b.reshape(2, 4)) * 2 + named.get("pv", a.reshape(2, 4))).sum()))
            elif kind == "read_large":  # one element of the large value: its graph holds it
                reads.append(int(named.get("big", a[:, None])[2, 3 % a.shape[0] if "big" in named else 0]))
            elif kind == "read_reader":  # the pending reader's sum: its interior value is kept for the reader
                reads.append(int(named.get("reader_sum", a.sum())))
            elif kind == "read_array":
                reads.append(np.asarray(a + named.get("t", b) * factor).tolist())
            else:
                held = named.get("t", named.get("v", a))
                reads.append(np.asarray(held).tolist())
            if kind.startswith("read"):
                states.append(None if xp is np else
                              sorted((name, value.is_evaluated) for name, value in named.items()))
    reads.append(np.asarray(a).tolist())
    return reads, states


@pytest.mark.skipif(not _C_BUILT, reason="the C extensions are not built or are off")
@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_STATEMENTS), st.integers(-2, 3)), min_size=1, max_size=10))
def test_cached_evaluations_in_c_are_the_python_twins(statements):
    start = np.arange(16, dtype=np.int64).reshape(2, 8) - 3
    expected, _ = _run(np, statements, start)
    _run(la, statements, start)  # (makes the plans of every evaluation)
    ran = []
    run_cached = compile_driver._graph_walk.run_cached

    def spy(output, decide, plans, keep):
        # The key looked up in C is the Python path's (its walk, kept positions and roots).
        key = compile_driver._graph_walk.plan_key(output, decide, keep)
        graph = compile_driver.python_linearize((output,), compile_driver._BOUND_BUFFER, lift_constants=True)
        kept = compile_driver._kept_positions(graph, keep) if graph.shared else []
        python_key = (graph.signature, graph.roots + tuple(kept))
        del graph  # (its node list would count as references from outside the next walk)
        assert key == python_key
        answer = run_cached(output, decide, plans, keep)
        ran.append(answer is not None)
        return answer

    # A second run of the program finds every plan in C (kept positions other than the Python
    # twin's would miss them).
    with mock.patch.object(compile_driver._graph_walk, "run_cached", spy), _c_evaluations_through(spy):
        with_c, c_states = _run(la, statements, start)
    assert all(ran), ran
    assert with_c == expected
    with python_twins():
        twin, twin_states = _run(la, statements, start)
    assert twin == expected
    assert c_states == twin_states


@pytest.mark.skipif(not _C_BUILT, reason="the C extensions are not built or are off")
def test_a_loop_testing_a_value_each_step_runs_its_cached_plan_in_c(monkeypatch):
    """Past the first iterations, each test is one C call (no Python walk, no Python plan run),
    a plan hit; the state held by the program is kept with it and gets a leaf."""
    walks, runs = [], []
    monkeypatch.setattr(compile_driver, "linearize",
                        lambda *args, **kwargs: walks.append(1) or compile_driver.python_linearize(*args, **kwargs))
    run_cached = compile_driver._graph_walk.run_cached
    u = la.asarray(np.arange(8.0, dtype=np.float32))
    with _c_evaluations_through(lambda *args: runs.append(1) or run_cached(*args)):
        for iteration in range(6):
            if iteration == 3:
                walks.clear()
                runs.clear()
                hits = la.cache_info().hits
            new = u * 0.5 + 1.0
            change = float(abs(new - u).max())
            u = new
            assert u.is_evaluated  # held by the program: computed with the test, kept
    assert walks == [] and runs == [1, 1, 1] and la.cache_info().hits - hits == 3
    expected = np.arange(8.0, dtype=np.float32)
    for _ in range(6):
        expected_new = expected * np.float32(0.5) + np.float32(1.0)
        expected_change = float(np.abs(expected_new - expected).max())
        expected = expected_new
    assert change == expected_change
    np.testing.assert_array_equal(np.asarray(u), expected)
    assert not np.asarray(u).flags.writeable


@pytest.mark.skipif(not _C_BUILT, reason="the C extensions are not built or are off")
@pytest.mark.parametrize("held", ["owner", "pending reader", "constant"])
def test_adopted_values_match_the_python_twin(held):
    """adopt_evaluated against python_adopt_evaluated on the same evaluation: the array's leaf,
    the held node's binding, its owner's leaf; a value no array owns is noted for its readers."""
    from lazyarr.hlo import bound_buffer

    results = []
    for adopt in (array_module._adopt_evaluated, array_module.python_adopt_evaluated):
        x = la.asarray(np.arange(4.0))
        inner = x + 1.0
        if held == "constant":
            inner = la.zeros(4) + 1.0
        out = inner * 2.0
        held_array = inner if held in ("owner", "constant") else None
        result = np.arange(4.0) * 3
        buffer = np.arange(4.0) + 7
        node = out._node
        inner_node = inner._node
        adopt(out, node, result, [(inner_node, buffer)])
        results.append((out._node._bound is result, bound_buffer(node) is result,
                        out._node.shape, out._node.dtype, bool(result.flags.writeable),
                        bound_buffer(inner_node) is buffer,
                        None if held_array is None else held_array._node._bound is buffer,
                        None if held_array is None else held_array._node.op.name))
        del held_array, inner
    assert results[0] == results[1]
    # (a function of constants alone stays unbound, computed wherever it is read)
    assert results[0][:5] == (True, held != "constant", (4,), np.dtype(np.float64), False)


@pytest.mark.skipif(not _C_BUILT, reason="the C extensions are not built or are off")
def test_a_device_buffer_result_takes_the_python_kept():
    """A result that is not a NumPy array (a device buffer) goes through array._kept."""

    class Buffer:  # what a device buffer offers a leaf: shape and dtype
        shape, dtype = (3,), np.dtype(np.float32)

    x = la.asarray(np.ones(3, np.float32)) * 2.0
    node, buffer = x._node, Buffer()
    array_module._adopt_evaluated(x, node, buffer, ())
    assert node._bound is buffer and x._node._bound is buffer and x._node.op.name == "parameter"


@pytest.mark.skipif(not _C_BUILT, reason="the C extensions are not built or are off")
def test_the_c_evaluation_declines_what_the_python_steps_decide():
    """evaluate_one answers False (the Python steps run) for a view of another array, while a
    tracer lives, after a flags change, while a profile records, for an evaluated array, and
    where no plan is cached yet; True (evaluated, a hit counted) otherwise."""
    from lazyarr import _flags
    from lazyarr.frontend import _fast_paths

    x = la.asarray(np.arange(6.0))

    def pending():
        return (x * 3.0 + 1.0).sum()

    assert not _fast_paths.evaluate_one(pending())  # no plan yet
    float(pending())  # (makes it)
    hits = la.cache_info().hits
    made = pending()
    assert _fast_paths.evaluate_one(made) and made.is_evaluated and la.cache_info().hits == hits + 1
    assert float(made) == 51.0
    assert not _fast_paths.evaluate_one(made)  # evaluated already
    view = (x * 3.0)[1:]
    assert not _fast_paths.evaluate_one(view) and not view.is_evaluated
    with la.profile():
        held = pending()
        assert not _fast_paths.evaluate_one(held) and not held.is_evaluated
    previous = _flags.FLAGS
    _flags.with_overrides(max_pending_depth=previous.max_pending_depth + 1)
    try:
        held = pending()
        assert not _fast_paths.evaluate_one(held) and not held.is_evaluated
    finally:
        _flags.FLAGS = previous
    inside = []
    la.jit(lambda y: inside.append(_fast_paths.evaluate_one(pending())) or y * 2)(x)
    assert inside == [False]


@pytest.mark.skipif(not _C_BUILT, reason="the C extensions are not built or are off")
@settings(max_examples=60, deadline=None)
@given(st.sampled_from([(), (1,), (1, 1), (2,), (0,), (1, 3)]),
       st.sampled_from(["float32", "float64", "float16", "int8", "int64", "uint64", "bool", "complex64"]),
       st.sampled_from([0.0, -0.0, 1.5, float("nan"), float("inf"), -7.0, 2.0**63, 255.0]),
       st.sampled_from(["evaluated", "pending", "pending twice"]))
def test_float_of_an_array_in_c_is_the_python_methods(shape, dtype, value, kind):
    """`float(x)` through the C slot (Array.__float__: evaluate_one, then the buffer's item) gives
    the Python method's value or error, for every dtype's edge values and evaluated or pending
    one-element arrays; other sizes raise the method's TypeError without evaluating."""
    with np.errstate(all="ignore"):
        values = np.full(shape, value).astype(dtype)
    def made():  # (a fresh leaf each time: a new node to evaluate, not the interned one evaluated before)
        leaf = la.asarray(values)
        return leaf if kind == "evaluated" else leaf * np.ones((), dtype)

    if kind == "pending twice":
        float(made()) if values.size == 1 and dtype != "complex64" else None  # (the plan: C evaluates the next)
    python_method = la.Array.__float__.__wrapped__
    outcomes = []
    for convert in (float, python_method):
        array = made()
        try:
            outcomes.append(("value", convert(array), array.is_evaluated))
        except TypeError as error:
            outcomes.append(("error", str(error), array.is_evaluated))
    assert outcomes[0][:2] == outcomes[1][:2] or (outcomes[0][0] == "value" and np.isnan(outcomes[0][1])
                                                  and np.isnan(outcomes[1][1]))
    assert outcomes[0][2] == outcomes[1][2]
    if outcomes[0][0] == "value":
        expected = float(values.reshape(()).item())
        assert outcomes[0][1] == expected or (np.isnan(expected) and np.isnan(outcomes[0][1]))
        assert np.copysign(1.0, outcomes[0][1]) == np.copysign(1.0, expected)


_FINALIZER_REBINDS = """
import gc, threading
import numpy as np
import lazyarr as la

a = la.asarray(np.arange(4.0))
def make():
    return ((a * 3.0) + 1.0).sum()
for _ in range(3):  # (the plan cached: the C path evaluates the next)
    float(make())
out = {}
def worker():
    x = make()  # pending; its node held only by x (the intern table holds it weakly)
    class Trap:
        def __init__(self):
            self.me = self  # cyclic garbage: only a collection frees it
        def __del__(self):
            x[...] = 5.0  # a finalizer writes x: x takes a new node, the old one dies
    Trap()
    gc.set_threshold(1)  # a collection at the next allocation (the thread's first pending state)
    try:
        out["value"] = float(x)
    finally:
        gc.set_threshold(700, 10, 10)
    out["after"] = float(x)
thread = threading.Thread(target=worker)
thread.start()
thread.join()
print(out["value"], out["after"])
"""


@pytest.mark.skipif(not _C_BUILT, reason="the C extensions are not built or are off")
def test_a_finalizer_rebinding_the_array_during_a_c_evaluation_is_seen_not_freed():
    """A thread's first evaluation makes its pending state (Python code: a collection may run, and a
    finalizer may write the array being evaluated). The C path reads the array's node only after
    that, as evaluate_arrays does: the write wins (it read a freed node before: a crash). In a
    child process, so a crash fails this test only."""
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", _FINALIZER_REBINDS], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["5.0", "5.0"]
