"""Values a program holds are computed once (compile.evaluate_graph_keeping, evaluate_arrays' `keep_held`).

An evaluation point (`float(x)`, `np.asarray`, a mask, `la.eval`) computes, besides what it
was asked for, every value inside its graph that an array of the program still holds; those
arrays become evaluated (their nodes are bound, the arrays hold leaves).
So a loop that tests a value every iteration (`while float(error) > tol`) evaluates one
step's graph each time, not a graph growing from the start, and compiles it once; the
history of finished iterations is freed. Views of evaluated values and functions of constants
are recomputed, never kept; so is what a pending node the program holds reads (the state a
loop's next step reads); cuts of pending work (frontend/array.py) keep nothing beyond their arrays. Random
programs with evaluation points between their statements: test_loops_and_dispatch.py.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import lazyarr as la
from lazyarr import compile as compile_driver
from lazyarr.hlo import bound_buffer, instruction

pytestmark = pytest.mark.usefixtures("fresh_cpu_cache")


def jacobi(xp, u, iterations):
    """Laplace relaxation tested every iteration, as NumPy code writes it."""
    errors = []
    for _ in range(iterations):
        new = u.copy()
        new[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        errors.append(float(xp.max(xp.abs(new - u))))
        u = new
    return u, errors


def _plate() -> np.ndarray:
    u = np.zeros((16, 16), np.float32)
    u[0] = 1.0
    return u


def test_a_loop_testing_its_state_every_iteration_compiles_one_step():
    before = la.cache_info().misses
    u, errors = jacobi(la, la.asarray(_plate()), 40)
    expected, expected_errors = jacobi(np, _plate(), 40)
    # Same float32 operations in the same order per element: NumPy's values exactly.
    np.testing.assert_array_equal(np.asarray(u), expected)
    assert errors == expected_errors
    # Iteration 1 reads the input, later ones the last state: two graphs, each compiled once
    # (before: a graph one iteration deeper at every test, compiled 40 times).
    assert la.cache_info().misses - before <= 2


def test_the_state_is_evaluated_at_each_test_and_history_is_freed():
    u = la.asarray(_plate())
    counts = []
    for iteration in range(60):
        new = u.copy()
        new[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        float(la.max(la.abs(new - u)))
        assert new.is_evaluated  # held by `new`: computed with the test, not again later
        u = new
        if iteration in (20, 59):
            gc.collect()
            counts.append(instruction.interned_count())
    # Finished iterations' graphs die (their nodes are leaves now): no growth with the count.
    assert counts[1] <= counts[0] + 8, counts


def test_only_held_values_are_kept():
    x = la.asarray(np.arange(12, dtype=np.float64).reshape(3, 4))
    scaled = x * 2.0 + 1.0  # held: computed with the sum below
    view = scaled[1:, ::2]  # a view of it: recomputed from it, never kept
    total = float((la.exp(view) - 1.0).sum())  # the exp and the subtraction: temporaries
    assert scaled.is_evaluated
    assert not view.is_evaluated
    expected_scaled = np.arange(12, dtype=np.float64).reshape(3, 4) * 2.0 + 1.0
    np.testing.assert_allclose(total, (np.exp(expected_scaled[1:, ::2]) - 1.0).sum(), rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(scaled), expected_scaled)
    np.testing.assert_array_equal(np.asarray(view), expected_scaled[1:, ::2])


def test_a_value_no_array_holds_is_not_written_out():
    x = la.asarray(np.linspace(0.0, 1.0, 7))
    first = float(la.sin(x * 3.0).sum())  # `x * 3.0` and the sine: temporaries nothing else reads
    np.testing.assert_allclose(first, np.sin(np.linspace(0.0, 1.0, 7) * 3.0).sum(), rtol=1e-15)
    again = la.sin(x * 3.0)
    assert again._node._bound is None and again._node.operands[0]._bound is None


def test_a_value_a_pending_node_reads_is_written_out():
    # Not held by an array, but read by a pending graph the program holds: its evaluation
    # would compute it again.
    x = la.asarray(np.linspace(0.0, 1.0, 7))
    later = la.sin(x * 3.0) + 1.0
    first = float((x * 3.0).sum())
    np.testing.assert_allclose(first, (np.linspace(0.0, 1.0, 7) * 3.0).sum(), rtol=1e-15)
    assert later._node.operands[0].operands[0]._bound is not None
    np.testing.assert_allclose(np.asarray(later), np.sin(np.linspace(0.0, 1.0, 7) * 3.0) + 1.0, rtol=1e-15)


def test_an_array_that_moved_on_leaves_its_old_value_to_its_readers():
    x = la.asarray(np.arange(5.0))
    y = x * 2.0
    old = weakref.ref(y._node)
    z = y + 1.0
    y += 5.0  # y holds a new node now, which reads the old value
    assert float(z.sum()) == 25.0
    assert old()._bound is not None and not y.is_evaluated
    np.testing.assert_array_equal(np.asarray(y), np.arange(5.0) * 2.0 + 5.0)


def test_a_loop_evaluating_a_loss_before_its_update_keeps_the_state_it_read():
    """`loss` reads the state before `w = w - lr * grad` (and `w -= ...`): the evaluation keeps
    that state, which the pending new state reads, so the next evaluation computes one step
    from it, not every step since the last state evaluated (a graph growing with the loop)."""
    rng = np.random.default_rng(3)
    features = rng.standard_normal((40, 5)).astype(np.float32)
    targets = rng.standard_normal(40).astype(np.float32)
    for in_place in (False, True):
        a, b = la.asarray(features), la.asarray(targets)
        w, expected_w = la.zeros(5, dtype=np.float32), np.zeros(5, np.float32)
        for _ in range(12):
            residual, expected_residual = a @ w - b, features @ expected_w - targets
            loss = (residual * residual).mean()
            read = weakref.ref(w._node)  # (weak: a reference of the test's own would count)
            if in_place:
                w -= np.float32(0.01) * (a.T @ residual)
            else:
                w = w - np.float32(0.01) * (a.T @ residual)
            expected_w = expected_w - np.float32(0.01) * (features.T @ expected_residual)
            np.testing.assert_allclose(float(loss), (expected_residual ** 2).mean(), rtol=2e-5)  # float32 sums
            state = read()  # kept, unless a leaf or a function of constants (la.zeros)
            assert state is None or state._bound is not None or not state.operands or state.constant_only
            del state
            walked = compile_driver.linearize((w._node,), bound_buffer)
            assert len(walked.nodes) < 16  # one step from the kept state
            del walked
        np.testing.assert_allclose(np.asarray(w), expected_w, rtol=2e-5, atol=1e-6)


def test_values_kept_for_pending_readers_are_released_beyond_a_bound(monkeypatch):
    """Each state a loop keeps for its pending next state reads the one before it, so nothing
    frees them; beyond _KEPT_FOR_READERS_BYTES the oldest are released (unbound), and a reader
    that still needs one computes it again from its operands."""
    from lazyarr.frontend import array as array_module

    monkeypatch.setattr(array_module, "_KEPT_FOR_READERS_BYTES", 3 * 4096 * 4)  # three states
    values = np.linspace(0.0, 1.0, 4096, dtype=np.float32)
    x = la.asarray(values)
    expected = values.copy()
    states = []
    early_reader = None
    for step in range(12):
        loss = (x * x).sum()
        states.append(weakref.ref(x._node))
        x = x * np.float32(0.5) + np.float32(0.25)
        if step == 2:
            early_reader = x * np.float32(3.0)  # a reader of an old state, evaluated at the end
        np.testing.assert_allclose(float(loss), float((expected * expected).sum()), rtol=1e-5)  # float32 sums
        expected = expected * np.float32(0.5) + np.float32(0.25)
        bound = [state() for state in states if state() is not None and state()._bound is not None
                 and state().operands]
        assert sum(node._bound.nbytes for node in bound) <= 3 * 4096 * 4
        del bound
    assert any(state() is not None and state()._bound is None and state().operands for state in states)
    np.testing.assert_array_equal(np.asarray(x), expected)
    state3 = values.copy()
    for _ in range(3):
        state3 = state3 * np.float32(0.5) + np.float32(0.25)
    np.testing.assert_array_equal(np.asarray(early_reader), state3 * np.float32(3.0))


def test_a_held_value_larger_than_what_the_evaluation_touches_stays_lazy():
    # A named outer product read at one element: keeping it would allocate all of it (a
    # 100,000-element vector makes a 75 GiB one); only what the evaluation reads or writes
    # anyway bounds what is kept.
    a = la.asarray(np.arange(3000.0))
    product = a[:, None] * a[None, :]
    assert float(product[3, 4]) == 12.0
    assert not product.is_evaluated
    total = a * 2.0  # as large as the input: kept
    assert float(total.sum()) == 2.0 * np.arange(3000.0).sum()
    assert total.is_evaluated


def test_functions_of_constants_and_views_are_not_kept():
    steps = la.arange(5.0) * 2.0 + 1.0  # constants only: computed wherever it is read
    x = la.asarray(np.ones(5))
    assert float((x * steps).sum()) == 25.0
    assert not steps.is_evaluated
    z = la.asarray(np.array([1 + 2j, 3 - 1j])) * 2.0
    real = z.real  # a view of z
    assert float((real * 3.0).sum()) == 24.0
    assert z.is_evaluated and not real.is_evaluated


def test_a_layout_op_of_a_computed_value_is_kept():
    # A reduction with keepdims is the reshape of the reduction: a layout op of a computed
    # value, held by `peak`. Recomputing it would repeat the reduction at the next read
    # (softmax's `exp(x - peak)` after a test), so it is kept like any computed value.
    values = np.random.default_rng(0).standard_normal((20, 5))
    x = la.asarray(values) * 2.0
    peak = x.max(axis=1, keepdims=True)
    assert peak._node.op.name == "reshape" and peak._base is None  # the case this test is about
    assert float((x - peak).sum()) == pytest.approx(((values * 2.0) - (values * 2.0).max(1, keepdims=True)).sum())
    assert peak.is_evaluated
    np.testing.assert_array_equal(np.asarray(peak), (values * 2.0).max(axis=1, keepdims=True))


def test_a_temporary_wrapping_a_held_node_again_leaves_its_owner_holding_it():
    # Functions may wrap an operand's node in a new array (a no-op reshape or cast): that
    # temporary dies at once, and the array the program holds must stay the node's holder.
    x = la.asarray(np.arange(6.0))
    y = x * 2.0
    assert y.reshape(-1)._node is y._node and y.astype(y.dtype)._node is y._node  # the re-wrapping this test is about
    assert float(la.linalg.norm(y)) == pytest.approx(np.linalg.norm(np.arange(6.0) * 2.0), rel=1e-12)
    assert y.is_evaluated


def test_an_array_made_from_a_temporary_is_kept():
    # The temporary wraps the node first, the array the program keeps second (a copy, a cast to
    # the same dtype): the node has both as holders, and the live one is kept.
    values = np.random.default_rng(1).random(50)
    x = la.asarray(values)
    y = la.array(la.exp(x) * 2.0)
    z = (la.exp(x) * 3.0).astype(np.float64)
    w = (x + 1.0).copy()
    assert float((y + z + w).sum()) == pytest.approx((np.exp(values) * 5.0 + values + 1.0).sum(), rel=1e-12)
    assert y.is_evaluated and z.is_evaluated and w.is_evaluated


def test_views_and_writes_of_a_node_leave_its_owner_holding_it():
    x = la.asarray(np.arange(6.0))
    y = la.exp(x) * 5.0
    views = [y[...] for _ in range(6)]  # views wrap y's node too; they never displace its owner
    float((y + 1.0).sum())
    assert y.is_evaluated and len(views) == 6
    a = la.exp(x) * 2.0
    b = la.zeros(6)
    b[:] = a  # b takes a's node: both hold it
    b += 1
    float((a + 1.0).sum())
    assert a.is_evaluated
    np.testing.assert_allclose(np.asarray(b), np.exp(np.arange(6.0)) * 2.0 + 1.0, rtol=1e-15)


def test_one_evaluation_writes_out_a_bounded_number_of_held_values():
    from lazyarr import compile as compile_module

    x = la.asarray(np.linspace(0.0, 1.0, 8))
    held = [la.sin(x + float(index)) for index in range(compile_module._MOST_KEPT + 8)]
    total = held[0]
    for value in held[1:]:
        total = total + value
    expected = sum(np.sin(np.linspace(0.0, 1.0, 8) + index) for index in range(len(held)))
    np.testing.assert_allclose(np.asarray(total), expected, rtol=1e-13)
    assert sum(value.is_evaluated for value in held) == compile_module._MOST_KEPT


def test_kept_values_are_read_only_and_survive_writes_to_their_sources():
    a = la.asarray(np.arange(6, dtype=np.int64))
    b = a * 3
    assert int((b + 1).sum()) == 51
    assert b.is_evaluated
    a[0] = 100  # a write to the source: b keeps the value it had
    np.testing.assert_array_equal(np.asarray(b), np.arange(6) * 3)
    assert not b._node._bound.flags.writeable  # as every evaluated array's buffer: never written


def test_a_kept_array_gets_a_leaf_and_its_node_stays_bound_for_other_readers():
    x = la.asarray(np.arange(4.0))
    y = x + 1.0
    node = y._node
    other = y * 3.0  # reads y's node
    float(y.sum() * 2.0)
    assert y._node.operands == () and y._node._bound is not None  # a leaf: y's graph can be freed
    assert node._bound is y._node._bound  # the node keeps its value for `other`
    np.testing.assert_array_equal(np.asarray(other), (np.arange(4.0) + 1.0) * 3.0)
