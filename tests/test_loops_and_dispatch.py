"""Loops without evaluation points, native dispatch and the evaluation plan cache.

* A loop that records its step N times is evaluated in pieces when its graph gets
  --max_pending_depth deep (frontend/array.py): results equal NumPy's, the pieces repeat, so a
  longer loop compiles nothing more; never inside la.jit or grad.
* Kernels run through one native dispatch call per run of kernels (backends/llvm/dispatch.py):
  the same results as the step-by-step path that profiling takes, and as the interpreter, on
  random graphs including outputs that are also inputs.
* A repeated evaluation finds its executable by the graph's linearized signature
  (compile.evaluate_graph) without compiling; new values of lifted scalars and new sizes too.
* A fused kernel is one compiled kernel whatever placeholder numbers its modules give its
  sizes (backends/kernel_sizes.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarr as la
from lazyarr.backends.llvm import dispatch
from lazyarr.frontend import methods

pytestmark = pytest.mark.usefixtures("fresh_cpu_cache")


def logistic(xp, features, targets, steps):
    weights = xp.zeros(features.shape[1], dtype=features.dtype)
    bias = xp.zeros((), dtype=features.dtype)
    for _ in range(steps):
        probabilities = 1 / (1 + xp.exp(-(features @ weights + bias)))
        error = probabilities - targets
        weights = weights - 0.1 * (features.T @ error) / features.shape[0]
        bias = bias - 0.1 * error.mean()
    return weights, bias


def test_a_long_recorded_loop_is_evaluated_in_repeating_pieces(pending_depth):
    pending_depth(40)
    rng = np.random.default_rng(0)
    features = rng.standard_normal((300, 5)).astype(np.float32)
    targets = (rng.random(300) > 0.5).astype(np.float32)
    misses = []
    for steps in (30, 60, 90):
        weights, bias = logistic(la, la.asarray(features), la.asarray(targets), steps)
        assert weights._node.depth < 40  # evaluated on the way: never one graph of all steps
        expected = logistic(np, features, targets, steps)
        la.eval(weights, bias)
        # float32 gradient steps: sums of 300 terms reassociated, a few ULPs per step.
        np.testing.assert_allclose(np.asarray(weights), expected[0], rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(np.asarray(bias), expected[1], rtol=1e-4, atol=1e-5)
        misses.append(la.cache_info().misses)
    # The pieces repeat: 30 more steps, then 30 more, compile at most the last piece again.
    assert misses[2] - misses[1] <= 1, misses


def test_every_cut_of_a_loop_falls_at_the_same_op_so_the_pieces_repeat(pending_depth):
    # The step's depth (about 13) does not divide the limit: cut as soon as an array is 40
    # deep, each piece would end at another op of the step, a module of its own every time.
    # Cuts wait for the op of the first cut instead: the first piece (from the zeros), the
    # repeating piece and the last part are all that compile, however many steps.
    pending_depth(40)
    rng = np.random.default_rng(0)
    features = rng.standard_normal((300, 5)).astype(np.float32)
    targets = (rng.random(300) > 0.5).astype(np.float32)
    weights, bias = logistic(la, la.asarray(features), la.asarray(targets), 200)
    la.eval(weights, bias)
    assert la.cache_info().misses <= 3, la.cache_info()
    misses = la.cache_info().misses
    again = logistic(la, la.asarray(features), la.asarray(targets), 200)  # the program's eval reset the phase:
    la.eval(*again)  # the second run cuts where the first did
    assert la.cache_info().misses == misses, la.cache_info()
    expected = logistic(np, features, targets, 200)
    # float32 gradient steps: sums of 300 terms reassociated, a few ULPs per step.
    np.testing.assert_allclose(np.asarray(weights), expected[0], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("read", ["np.asarray", "float then np.asarray"])
def test_a_loops_results_read_one_at_a_time_compute_the_loop_once(pending_depth, read):
    """Asked for one deep result of a loop, the other deep results the program holds are
    evaluated with it (frontend/array.py `_loop_siblings`): the loop's earlier steps are in
    every result's graph and held by none, so reading them one by one used to compute the whole
    loop once per result."""
    pending_depth(80)  # each step is ~13 deep: 5 steps are deep (>= 40) but not cut (< 80)
    rng = np.random.default_rng(1)
    features = rng.standard_normal((300, 5)).astype(np.float32)
    targets = (rng.random(300) > 0.5).astype(np.float32)
    weights, bias = logistic(la, la.asarray(features), la.asarray(targets), 5)
    assert 40 <= weights._node.depth < 80 and 40 <= bias._node.depth < 80
    before = la.cache_info()
    first = float(bias) if read.startswith("float") else np.asarray(bias)
    assert weights.is_evaluated  # evaluated with bias: one module, the loop computed once
    after = la.cache_info()
    assert (after.hits + after.misses) - (before.hits + before.misses) == 1, (before, after)
    np.asarray(weights)
    assert la.cache_info() == after  # nothing left to compute
    expected = logistic(np, features, targets, 5)
    # float32 gradient steps: sums of 300 terms reassociated, a few ULPs per step.
    np.testing.assert_allclose(np.asarray(weights), expected[0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(first, expected[1], rtol=1e-4, atol=1e-5)


def test_a_shallow_result_leaves_the_deep_ones_pending(pending_depth):
    """Only a deep result (one that a cut would take with its siblings) brings the others with
    it: a small test on the side (`float(x.sum())`) computes what it reads and no more."""
    pending_depth(80)  # each step is ~13 deep: 5 steps are deep (>= 40) but not cut (< 80)
    rng = np.random.default_rng(2)
    features = rng.standard_normal((300, 5)).astype(np.float32)
    targets = (rng.random(300) > 0.5).astype(np.float32)
    weights, bias = logistic(la, la.asarray(features), la.asarray(targets), 5)
    side = la.asarray(targets) * 2
    assert float(side.sum()) == pytest.approx(float((targets * 2).sum()))
    assert not weights.is_evaluated and not bias.is_evaluated


def _deep_chain(start, steps=30):
    """`start` through `steps` multiply-adds: 60 deep, noted for loop cuts at a limit of 80."""
    value = start
    for _ in range(steps):
        value = value * 0.5 + 0.5
    return value


def test_a_sibling_that_cannot_be_computed_leaves_the_asked_array_alone(pending_depth):
    """A deep array whose evaluation raises (the inverse of a singular matrix) is offered as a
    sibling, fails, and is left pending: the array asked for is computed alone, and the failing
    one raises when the program asks for it."""
    pending_depth(80)
    x = _deep_chain(la.asarray(np.ones(3, np.float32)))
    singular = la.linalg.inv(x[:, None] * x[None, :])  # rank 1
    w = _deep_chain(la.asarray(np.arange(4, dtype=np.float32)))
    expected = _deep_chain(np.arange(4, dtype=np.float32))
    for _ in range(2):
        np.testing.assert_array_equal(np.asarray(w), expected)  # multiply-adds by 0.5: exact in float32
        w = _deep_chain(w, 25)
        expected = _deep_chain(expected, 25)
    with pytest.raises(np.linalg.LinAlgError):
        np.asarray(singular)


def test_a_sibling_larger_than_what_the_evaluation_touches_stays_lazy(pending_depth):
    """`M = a[:, None] * a[None, :]` of a deep `a`, read at one element: M (10^10 elements) is
    never computed, as for held values inside a graph (compile._kept_positions)."""
    pending_depth(80)
    a = _deep_chain(la.asarray(np.linspace(0, 1, 100_000).astype(np.float32)))
    M = a[:, None] * a[None, :]
    e = _deep_chain(np.linspace(0, 1, 100_000).astype(np.float32))
    assert float(M[3, 4]) == float(e[3] * e[4])  # one float32 product: exact
    assert not M.is_evaluated


def test_inside_la_jit_a_concrete_deep_read_takes_no_traced_sibling(pending_depth):
    """A jitted function writes a deep global in place (its node now reads the tracer), then
    reads a concrete deep array (allowed: it has a value). The global is not offered as a
    sibling (it has no value while tracing), so the read works."""
    pending_depth(80)
    total = _deep_chain(la.asarray(np.full(3, 3.0, np.float32)))

    @la.jit
    def step(x):
        nonlocal total
        total += x  # (an accumulator outside the function, written in place)
        scale = _deep_chain(la.asarray(np.full(3, 4.0, np.float32)))
        return x * float(scale.sum())

    result = np.asarray(step(la.asarray(np.ones(3, np.float32))))
    expected_scale = float(_deep_chain(np.full(3, 4.0, np.float32)).sum())
    np.testing.assert_array_equal(result, np.ones(3, np.float32) * np.float32(expected_scale))


def test_a_stencil_loop_of_slice_writes_is_bounded_and_right(pending_depth):
    pending_depth(32)
    grid = np.random.default_rng(1).random((24, 24)).astype(np.float32)
    u, expected = la.asarray(grid), grid.copy()
    for _ in range(40):
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.1 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
                                               - 4 * u[1:-1, 1:-1])
        expected[1:-1, 1:-1] = expected[1:-1, 1:-1] + np.float32(0.1) * (
            expected[:-2, 1:-1] + expected[2:, 1:-1] + expected[1:-1, :-2] + expected[1:-1, 2:]
            - 4 * expected[1:-1, 1:-1])
        assert u._node.depth < 32 + 16
    # 40 contracting float32 steps, each summing 5 terms in another order: 1e-5 absolute.
    np.testing.assert_allclose(np.asarray(u), expected, rtol=0, atol=1e-5)


@pytest.fixture
def cut_outputs(monkeypatch):
    """The shapes of the arrays each loop cut evaluates (array.track_pending's evaluate_arrays)."""
    from lazyarr.frontend import array as array_module

    cuts = []
    evaluate = array_module.evaluate_arrays

    def noting(arrays, **options):
        cuts.append([array.shape for array in arrays])
        return evaluate(arrays, **options)

    monkeypatch.setattr(array_module, "evaluate_arrays", noting)
    return cuts


@pytest.mark.skipif(methods._TEMPORARY_VALUE == 0,
                    reason="this interpreter's reference counts do not tell a temporary value (methods.py)")
def test_a_cut_at_a_slice_write_leaves_out_the_value_the_statement_used_up(pending_depth, cut_outputs):
    # `u[1:-1] = expression`: the expression's array dies with the statement. A cut at the
    # write evaluates u alone, not also u's old value (the write's own wrapper array, before
    # the move) nor the expression (one more output, one kernel split in two).
    pending_depth(24)
    values = np.random.default_rng(2).random(40).astype(np.float32)
    u, expected = la.asarray(values), values.copy()
    for _ in range(30):
        u[1:-1] = 0.5 * u[1:-1] + 0.25 * (u[:-2] + u[2:])
        expected[1:-1] = np.float32(0.5) * expected[1:-1] + np.float32(0.25) * (expected[:-2] + expected[2:])
    assert cut_outputs and all(shapes == [(40,)] for shapes in cut_outputs), cut_outputs
    # 30 averaging float32 steps of three terms: a few ULPs of values in [0, 1).
    np.testing.assert_allclose(np.asarray(u), expected, rtol=0, atol=1e-5)


def test_a_named_value_written_and_read_again_is_evaluated_with_the_cut(pending_depth, cut_outputs):
    # A value with a name survives the statement: the cut evaluates it beside u, and reading
    # it afterwards computes nothing again.
    pending_depth(24)
    values = np.random.default_rng(3).random(40).astype(np.float32)
    u, expected = la.asarray(values), values.copy()
    totals, expected_totals = [], []
    for _ in range(30):
        update = 0.5 * u[1:-1] + 0.25 * (u[:-2] + u[2:])
        u[1:-1] = update
        totals.append(update.sum())
        expected_update = np.float32(0.5) * expected[1:-1] + np.float32(0.25) * (expected[:-2] + expected[2:])
        expected[1:-1] = expected_update
        expected_totals.append(expected_update.sum())
    assert cut_outputs and all((38,) in shapes for shapes in cut_outputs), cut_outputs
    # float32 sums of 38 values in [0, 1): reassociated, a few ULPs of ~20.
    np.testing.assert_allclose(np.asarray(la.stack(totals)), expected_totals, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(u), expected, rtol=0, atol=1e-5)


@pytest.mark.skipif(methods._TEMPORARY_OPERAND == 0,
                    reason="this interpreter's reference counts do not tell a temporary operand (methods.py)")
def test_a_cut_at_an_in_place_operator_evaluates_the_new_value_only(pending_depth, cut_outputs):
    # `w -= step`: the operand's old value is replaced; a cut evaluates the new one alone.
    pending_depth(24)
    values = np.linspace(-1, 1, 50, dtype=np.float32)
    w, expected = la.asarray(values), values.copy()
    alias = w  # the in-place operator changes the object: every name sees it
    for _ in range(40):
        w -= 0.1 * la.sin(w)
        expected -= np.float32(0.1) * np.sin(expected)
    assert cut_outputs and all(shapes == [(50,)] for shapes in cut_outputs), cut_outputs
    assert alias is w
    # 40 float32 steps of sin within a few ULPs each, contracting toward 0.
    np.testing.assert_allclose(np.asarray(alias), expected, rtol=0, atol=1e-5)


def test_a_named_operand_of_an_in_place_operator_is_evaluated_with_the_cut(pending_depth, cut_outputs):
    pending_depth(24)
    values = np.linspace(-1, 1, 50, dtype=np.float32)
    w, expected = la.asarray(values), values.copy()
    steps, expected_steps = [], []
    for _ in range(40):
        step = 0.1 * la.sin(w)
        w -= step
        steps.append(step[0])
        expected_step = np.float32(0.1) * np.sin(expected)
        expected -= expected_step
        expected_steps.append(expected_step[0])
    assert cut_outputs and all(len(shapes) >= 2 for shapes in cut_outputs), cut_outputs
    # float32 sin within a few ULPs per step, 40 contracting steps.
    np.testing.assert_allclose(np.asarray(la.stack(steps)), expected_steps, rtol=0, atol=1e-5)
    np.testing.assert_allclose(np.asarray(w), expected, rtol=0, atol=1e-5)


# -- loop cuts against NumPy on random programs of writes, in-place operators and views ---------
_LENGTH = 12


@st.composite
def _statements(draw):
    """One statement of a random program over int64 vectors `a` and `b` (exact arithmetic, so
    any difference from NumPy is a wrong value, not rounding): slice writes of temporaries and
    of named values, in-place operators with temporary and named operands, rebinding, writes
    through views kept for later, masked fills, and evaluation points between statements."""
    kind = draw(st.sampled_from(["write_temporary", "write_named", "add_temporary", "subtract_named",
                                 "rebind", "view_write", "view_add", "read", "mask_fill"]))
    low = draw(st.integers(0, _LENGTH - 1))
    high = draw(st.integers(low + 1, _LENGTH))
    shift = draw(st.integers(-low, _LENGTH - high))
    factor = draw(st.integers(-1, 2))
    return kind, low, high, shift, factor


def _run_statement(env: dict, statement) -> None:
    """Apply one statement to env ({'a', 'b', 'kept'}) as NumPy code does, whichever namespace
    made the arrays: temporaries die with their statement, named values are kept."""
    kind, low, high, shift, factor = statement
    a, b, kept = env["a"], env["b"], env["kept"]
    if kind == "write_temporary":
        a[low:high] = a[low:high] * factor + b[low + shift:high + shift]
    elif kind == "write_named":
        value = a[low:high] * factor + 1
        a[low:high] = value
        kept.append(value)
    elif kind == "add_temporary":
        a += b * factor
    elif kind == "subtract_named":
        step = b * factor
        a -= step
        kept.append(step)
    elif kind == "rebind":
        env["b"] = b * factor + a
    elif kind == "view_write":
        view = a[low:high]
        view[...] = view * factor + 1
        kept.append(view)
    elif kind == "read":  # an evaluation point: values the program holds are kept (test_held_values.py)
        kept.append(int((a[low:high] * factor + b[low + shift:high + shift]).sum()))
    elif kind == "mask_fill":  # lazy: where(mask, value, a)
        a[b > factor] = factor
    else:
        view = b[low:high]
        view += factor
        kept.append(view)


@settings(max_examples=60, deadline=None)
@given(st.lists(_statements(), min_size=1, max_size=40), st.integers(1, 24))
def test_loop_cuts_give_numpy_values_on_random_programs(statements, depth):
    # Cuts at every few ops, at writes (leaving out values the statement used up) and in the
    # middle of expressions: whatever was cut, every kept array reads what NumPy's does.
    from lazyarr import _flags

    previous = _flags.FLAGS.max_pending_depth
    _flags.with_overrides(max_pending_depth=depth)
    try:
        start = np.arange(2 * _LENGTH, dtype=np.int64).reshape(2, _LENGTH) - 5
        expected = {"a": start[0].copy(), "b": start[1].copy(), "kept": []}
        got = {"a": la.asarray(start[0]), "b": la.asarray(start[1]), "kept": []}
        for statement in statements:
            _run_statement(expected, statement)
            _run_statement(got, statement)
        for name in ("a", "b"):
            np.testing.assert_array_equal(np.asarray(got[name]), expected[name], err_msg=name)
        for index, (value, want) in enumerate(zip(got["kept"], expected["kept"])):
            np.testing.assert_array_equal(np.asarray(value), want, err_msg=f"kept[{index}]")
    finally:
        _flags.with_overrides(max_pending_depth=previous)


def test_no_cut_while_a_graph_template_is_recorded(pending_depth):
    # A template (a reduction's, here) is recorded on parameters with no buffer; with a limit
    # of 1 every recorded node is due for a cut, which must wait until the recording ends
    # (it raised "no buffer is bound to <parameter>").
    pending_depth(1)
    values = np.arange(66.0).reshape(3, 11, 2)
    total = (la.asarray(values) * 2.0).sum(axis=1, keepdims=True).mean(axis=2)
    np.testing.assert_array_equal(np.asarray(total), (values * 2.0).sum(axis=1, keepdims=True).mean(axis=2))


def test_no_evaluation_inside_jit_traces(pending_depth):
    pending_depth(8)

    @la.jit
    def many_steps(x):
        for _ in range(30):
            x = la.sin(x) + 1
        return x

    values = np.linspace(-1, 1, 7, dtype=np.float32)
    expected = values
    for _ in range(30):
        expected = np.sin(expected) + np.float32(1)
    # float32 sin within a few ULPs per step, 30 steps, contracting near its fixed point.
    np.testing.assert_allclose(np.asarray(many_steps(la.asarray(values))), expected, rtol=1e-5)
    gradient = la.grad(lambda x: many_steps(x).sum())(la.asarray(values))
    assert np.all(np.isfinite(np.asarray(gradient)))


def test_depth_zero_turns_the_bound_off(pending_depth):
    pending_depth(0)
    x = la.asarray(np.ones(3, np.float32))
    for _ in range(300):
        x = x * 1.001
    assert x._node.depth >= 300 and not x.is_evaluated
    np.testing.assert_allclose(np.asarray(x), np.full(3, np.float32(1.001)) ** 300, rtol=1e-4)


def test_repeated_evaluations_hit_the_plan_cache_with_new_scalars_and_sizes():
    rng = np.random.default_rng(2)
    results = []
    for size, scale in ((50, 0.25), (50, 0.75), (61, 1.5), (200, -2.5)):
        values = rng.standard_normal(size).astype(np.float32)
        x = la.asarray(values)
        results.append((np.asarray(la.exp(x * scale) - x), np.exp(values * np.float32(scale)) - values))
    assert la.cache_info().misses == 1 and la.cache_info().hits == 3
    for got, expected in results:
        np.testing.assert_allclose(got, expected, rtol=2e-6)  # float32 exp: within 2 ULPs


def test_new_numpy_scalars_are_runtime_values_not_new_compiles():
    """`x * np.float32(t)` with a new t each iteration (a value read from a NumPy array, a
    NumPy constant): a constant of the scalar's own dtype, lifted as Python scalars are."""
    values = np.linspace(-1, 1, 64, dtype=np.float32)
    x = la.asarray(values)
    for scale in (0.25, 0.75, 1.75, -2.5):
        got = np.asarray(x * np.float32(scale) - np.float32(scale) * x * x)
        np.testing.assert_array_equal(got, values * np.float32(scale) - np.float32(scale) * values * values)
    assert la.cache_info().misses == 1


def test_a_kernel_is_compiled_once_whatever_its_modules_number_its_sizes():
    a = la.asarray(np.ones(7, np.float32))
    b = la.asarray(np.ones((3, 5), np.float32))
    first = la.eval(la.exp(a) * 2.5, la.exp(b).sum())  # sizes met in the order 7, 3, 5
    compiled = la.cache_info().kernels_compiled
    second = la.eval(la.exp(b).sum(), la.exp(a) * 2.5)  # sizes met in the order 3, 5, 7
    assert la.cache_info().misses == 2 and la.cache_info().kernels_compiled == compiled
    for got in (first[0], second[1]):
        np.testing.assert_allclose(np.asarray(got), np.full(7, np.e * 2.5, np.float32), rtol=2e-6)
    for got in (first[1], second[0]):
        np.testing.assert_allclose(np.asarray(got), np.float32(np.e * 15), rtol=2e-6)


def test_dispatch_reads_data_pointers_as_numpy_lays_them_out():
    assert dispatch.data_pointer_offset() is not None  # CPython and NumPy as supported
    assert dispatch.list_items_offset() is not None
    assert dispatch.dispatcher() is not None


# Random chains over three inputs, outputs that are inputs or repeat each other included.
_UNARY = {"negate": (np.negative, la.negative), "exp": (np.exp, la.exp), "abs": (np.abs, la.abs)}
_BINARY = {"add": (np.add, la.add), "multiply": (np.multiply, la.multiply), "maximum": (np.maximum, la.maximum)}


@st.composite
def programs(draw):
    steps = []
    for _ in range(draw(st.integers(1, 8))):
        if draw(st.booleans()):
            steps.append(("unary", draw(st.sampled_from(sorted(_UNARY))), draw(st.integers(0, 100))))
        else:
            steps.append(("binary", draw(st.sampled_from(sorted(_BINARY))), draw(st.integers(0, 100)),
                          draw(st.integers(0, 100))))
    outputs = draw(st.lists(st.integers(0, 100), min_size=1, max_size=4))
    return steps, outputs


def _run_program(program, inputs, namespace):
    steps, outputs = program
    values = list(inputs)
    for step in steps:
        table = _UNARY if step[0] == "unary" else _BINARY
        function = table[step[1]][0 if namespace is np else 1]
        operands = [values[index % len(values)] for index in step[2:]]
        values.append(function(*operands))
    return [values[index % len(values)] for index in outputs]


@settings(max_examples=40, deadline=None)
@given(programs(), st.sampled_from([(), (4,), (3, 17), (70, 1000)]))
def test_dispatched_runs_match_the_step_by_step_path_and_the_interpreter(program, shape):
    rng = np.random.default_rng(len(shape))
    inputs = [rng.uniform(-2, 2, shape).astype(np.float32) for _ in range(3)]
    def evaluated():
        outputs = _run_program(program, [la.asarray(x) for x in inputs], la)
        la.eval(*outputs)
        return [np.asarray(output) for output in outputs]

    dispatched = evaluated()
    with la.profile():  # profiling runs kernels one by one, each in a span
        stepped = evaluated()
    la.set_backend("interpreter")
    try:
        oracle = evaluated()
    finally:
        la.set_backend("cpu")
    for got, step_by_step, expected in zip(dispatched, stepped, oracle):
        np.testing.assert_array_equal(got, step_by_step)  # the same kernels: bit for bit
        # Interpreter (NumPy) vs compiled float32 exp: within 2 ULPs, chains of <= 8 ops.
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-30)


def test_a_chain_of_kernels_cycles_through_few_kept_buffers():
    """A chain of steps in one native run (a stencil loop: each step its own kernel) puts each
    step's value in a buffer whose previous value is dead: a few buffers stay in cache rather
    than one per step, and every call still gives the chain's values."""
    from lazyarr.backends.cpu import NativeRun
    from lazyarr.compile import compile_module
    from lazyarr.hlo import Computation, Module, constant, make

    u = make("parameter", number=0, shape=(64,), dtype=np.dtype(np.float32))
    value = u
    for _ in range(12):  # read at five offsets: each step is a kernel of its own
        total = make("slice", [value], start=(0,), limit=(60,), stride=(1,))
        for first in (1, 2, 3, 4):
            total = make("add", [total, make("slice", [value], start=(first,), limit=(first + 60,), stride=(1,))])
        value = make("pad", [total, constant(np.float32(0))], low=(2,), high=(2,), interior=(0,))
    executable = compile_module(Module("main", Computation("main", (u,), (value,))), "cpu")
    (run,) = [step for step in executable.dispatched if isinstance(step, NativeRun)]
    assert len(run.kernels) >= 6  # a kernel computes at most two steps (5 * 5 index maps is past the limit)
    rng = np.random.default_rng(5)
    for _ in range(2):
        start = rng.integers(-3, 4, 64).astype(np.float32)  # sums of small integers: exact
        expected = start
        for _ in range(12):
            inner = sum(expected[first:first + 60] for first in range(5))
            expected = np.pad(inner, 2).astype(np.float32)
        (result,) = executable.run([start])
        np.testing.assert_array_equal(result, expected)
    (kept,) = run.scratch.values()
    assert len(kept) == len(run.kernels) - 1  # every kernel's value but the returned last
    assert len({id(buffer) for buffer in kept.values()}) <= 2


def test_views_of_arguments_go_first_so_the_kernels_stay_one_run():
    """A loop over batches of an argument (`inputs[rows]`, unrolled by la.jit) reads each batch
    as a view (a host step: `cpu.is_buffer_view`); views read parameters only, so they run first
    and the kernels between them are one native run, not one per batch."""
    from lazyarr.backends.cpu import HostStep, NativeRun
    from lazyarr.compile import compile_module
    from lazyarr.hlo import Computation, Module, make

    x = make("parameter", number=0, shape=(40, 8), dtype=np.dtype(np.float32))
    total = None
    for batch in range(4):
        rows = make("slice", [x], start=(batch * 10, 0), limit=(batch * 10 + 10, 8), stride=(1, 1))
        part = make("reduce", [make("exp", [rows])], kind="sum", dimensions=(0,))
        total = part if total is None else make("multiply", [make("add", [total, part]), part])
    executable = compile_module(Module("main", Computation("main", (x,), (total,))), "cpu")
    kinds = [type(step) for step in executable.dispatched]
    assert kinds == [HostStep] * 4 + [NativeRun], kinds
    value = np.random.default_rng(4).standard_normal((40, 8)).astype(np.float32)
    expected = None
    for batch in range(4):
        part = np.exp(value[batch * 10:batch * 10 + 10]).sum(axis=0)
        expected = part if expected is None else (expected + part) * part
    (result,) = executable.run([value])
    # float32 exp within 2 ULPs of NumPy's, sums of 10 terms, a product of four: rtol 1e-5.
    np.testing.assert_allclose(result, expected, rtol=1e-5)


def test_kept_temporaries_never_hold_a_returned_value():
    """A native run keeps the buffers of values only it reads for its next call; a value it
    returns, or one a later step reads, gets a fresh buffer on every call. So results of one
    call survive the next call on other inputs (a softmax over columns: max, exp-sum, divide
    kernels; over rows it would be one row kernel, with no temporaries)."""
    executable, runs = _column_softmax_executable()
    assert any(run.internal for run in runs)  # the exp-sum temporaries
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal((8, 33)).astype(np.float32) for _ in range(3)]
    results = [executable.run([value]) for value in inputs]
    assert all(run.scratch for run in runs if run.internal)  # kept, and used by the later calls
    for value, (maximum, probabilities) in zip(inputs, results):
        _check_column_softmax(value, maximum, probabilities)


def _column_softmax_executable():
    """A column softmax module (max, exp-sum, divide kernels: the exp-sum's values are
    temporaries of its one native run) and the run."""
    from lazyarr.backends.cpu import NativeRun
    from lazyarr.compile import compile_module
    from lazyarr.hlo import Computation, Module, make

    x = make("parameter", number=0, shape=(8, 33), dtype=np.dtype(np.float32))

    def across_rows(node):
        return make("broadcast", [node], shape=(8, 33), dimensions=(1,))

    row_max = make("reduce", [x], kind="max", dimensions=(0,))
    exponentials = make("exp", [make("subtract", [x, across_rows(row_max)])])
    total = make("reduce", [exponentials], kind="sum", dimensions=(0,))
    softmax = make("divide", [exponentials, across_rows(total)])
    executable = compile_module(Module("main", Computation("main", (x,), (row_max, softmax))), "cpu")
    runs = [step for step in executable.dispatched if isinstance(step, NativeRun)]
    return executable, runs


def _check_column_softmax(value, maximum, probabilities):
    np.testing.assert_array_equal(maximum, value.max(axis=0))
    expected = np.exp(value - value.max(axis=0, keepdims=True))
    # float32 exp within 2 ULPs of NumPy's, a column sum of 8 terms: rtol 1e-5.
    np.testing.assert_allclose(probabilities, expected / expected.sum(axis=0, keepdims=True), rtol=1e-5)


def test_a_direct_call_of_a_run_with_temporaries_takes_its_kept_buffers_and_is_thread_safe():
    """A one-run executable with temporaries is called directly too (compile.fastest_run): its
    temporaries take the run's kept buffers under the run's lock, its results are fresh on every
    call, and threads calling it at once (the dispatch releases the GIL) each get their own right
    results: whoever finds the lock taken allocates its own temporaries."""
    import threading

    from lazyarr.compile import fastest_run

    executable, runs = _column_softmax_executable()
    assert len(runs) == 1 and runs[0].internal
    direct = fastest_run(executable)
    assert direct is not executable.run
    rng = np.random.default_rng(7)
    inputs = [rng.standard_normal((8, 33)).astype(np.float32) for _ in range(8)]
    results = [direct([value]) for value in inputs]
    assert runs[0].scratch  # made by the first call, taken by the later ones
    for value, (maximum, probabilities) in zip(inputs, results):
        _check_column_softmax(value, maximum, probabilities)  # (none overwritten by a later call)
    with runs[0].scratch_lock:  # as while another thread's call runs: fresh temporaries, no wait
        _check_column_softmax(inputs[0], *direct([inputs[0]]))
    failures = []

    def worker(offset):
        try:
            for round_ in range(60):
                value = inputs[(offset + round_) % len(inputs)]
                _check_column_softmax(value, *direct([value]))
        except Exception as error:  # (reported below, in the test's thread)
            failures.append(error)

    threads = [threading.Thread(target=worker, args=(offset,)) for offset in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures[0]
    assert not runs[0].scratch_lock.locked()


@pytest.mark.parametrize("shape", [(), (0,), (5,), (100,), (3, 70)])
def test_a_direct_call_gives_fresh_results_equal_to_the_stepwise_run(shape):
    """An executable of one native run keeping no buffers is called through its direct call
    (compile.fastest_run: its plan made once) by la.jit and by evaluation plans: each call's
    results are fresh buffers (a later call never overwrites an earlier result), strided NumPy
    arguments are read as NumPy lays them out, and under la.profile it runs step by step."""
    from lazyarr.compile import fastest_run

    function = la.jit(lambda a, b, c: (a + b) * c - a)
    rng = np.random.default_rng(len(shape))
    calls = [[rng.uniform(-4, 4, shape).astype(np.float32) for _ in range(3)] for _ in range(3)]
    results = [function(*[la.asarray(value) for value in values]) for values in calls]
    def strided(value):  # a view NumPy lays out backwards (0-d: as it is)
        return value[..., ::-1] if value.ndim else value

    results.append(function(*[strided(np.asarray(value, order="F")) for value in calls[0]]))
    entry = function._last[2]
    closure = getattr(entry._call, "__wrapped__", entry._call)  # (the C DirectCall stands for the closure)
    assert closure.__name__ == "call" and entry._call is not entry.executable.run  # the direct call
    from lazyarr import _flags
    from lazyarr.backends import cpu

    if cpu._direct_call is not None and _flags.FLAGS.c_extensions:  # (where built: the C twin of the closure)
        assert type(entry._call) is cpu._direct_call.DirectCall
    with la.profile() as trace:
        results.append(function(*[la.asarray(value) for value in calls[1]]))
    assert [event for event in trace.events if event.get("cat") == "execute"]  # spans: the stepwise run
    expected = [(a + b) * c - a for a, b, c in calls]
    expected += [(lambda a, b, c: (a + b) * c - a)(*[strided(value) for value in calls[0]]), expected[1]]
    for got, want in zip(results, expected):
        np.testing.assert_array_equal(np.asarray(got), want)  # the same float32 ops as NumPy's, in order
    executable = entry.executable
    assert fastest_run(executable)([*calls[2]])[0] is not fastest_run(executable)([*calls[2]])[0]
    direct = fastest_run(executable)
    a, b, c = calls[2]
    sizes_only = [value for value in entry.captured]  # (the placeholder sizes the signature captured)
    if shape and shape[-1] > 1:  # strided arguments: converted as NumPy lays them out (the closure's path)
        views = [np.ascontiguousarray(np.stack([value, value], axis=-1))[..., 0] for value in (a, b, c)]
        np.testing.assert_array_equal(direct([*views, *sizes_only])[0], (a + b) * c - a)
    with pytest.raises(ValueError, match="arguments expected"):  # never a slot left empty
        direct([a, b])
