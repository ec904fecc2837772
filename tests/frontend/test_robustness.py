"""Deep graphs: 100,000 chained operations build, print, evaluate and free without a
RecursionError (every graph walk is iterative)."""

import gc
import sys

import numpy as np
import pytest

import lazyarr as la
from lazyarr import _flags
from lazyarr.hlo.instruction import interned_count

CHAIN = 100_000


def test_hundred_thousand_op_chain_builds_evaluates_and_frees(pending_depth):
    pending_depth(0)  # one graph of the whole chain, not evaluated in pieces
    baseline = interned_count()
    x = la.asarray(np.zeros(3, np.float32))
    for step in range(CHAIN):
        x = x + 1 if step % 2 else x * 1
    assert x.shape == (3,)
    assert "add" in repr(x._node) or "multiply" in repr(x._node)
    text = la.hlo_text(x)
    assert text.count("\n") > CHAIN
    np.testing.assert_array_equal(np.asarray(x), np.full(3, CHAIN // 2, np.float32))
    del x
    la.clear_cache()  # the compile cache keeps the graphs it compiled, by design
    gc.collect()
    assert interned_count() <= baseline + 5
    assert sys.getrecursionlimit() <= 10_000  # nobody raised the limit to get here


def test_a_recorded_chain_is_evaluated_in_pieces_of_bounded_depth():
    x = la.asarray(np.zeros(3, np.float32))
    for step in range(10_000):
        x = x + 1 if step % 2 else x * 1
    assert x._node.depth <= _flags.FLAGS.max_pending_depth
    np.testing.assert_array_equal(np.asarray(x), np.full(3, 5_000, np.float32))


def test_numpy_of_an_array_rebound_while_it_evaluates(monkeypatch):
    """Code run inside an evaluation (a finalizer of a collection an allocation triggers) may give
    the array a new pending value: np.asarray returns the value it had when asked (the node it
    evaluated is bound), not a TypeError about a None buffer (found by a review's GC stress); an
    array rebound before every evaluation raises a clear RuntimeError after a few tries."""
    from lazyarr.frontend import array as array_module

    evaluate = array_module.evaluate_arrays

    def then_rebound(arrays, **options):  # the evaluation, then a write to the array meanwhile
        evaluate(arrays, **options)
        arrays[0]._node = (arrays[0] * 3.0)._node

    a = la.asarray(np.arange(4.0)) + 1.0
    monkeypatch.setattr(array_module, "evaluate_arrays", then_rebound)
    np.testing.assert_array_equal(a.numpy(), [1.0, 2.0, 3.0, 4.0])

    def rebound_first(arrays, **options):  # a write before each evaluation: never a stable value
        arrays[0]._node = (arrays[0] + 1.0)._node

    b = la.asarray(np.arange(4.0)) + 1.0
    monkeypatch.setattr(array_module, "evaluate_arrays", rebound_first)
    with pytest.raises(RuntimeError, match="new pending value each time"):
        b.numpy()
