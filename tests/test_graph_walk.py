"""The compile driver's graph walk in C (`lazyarr/_graph_walk.c`) is `python_linearize`.

`compile.linearize` walks every evaluation's graph; where the C extension is built it is the C
loop, else the Python one. The two must give the same nodes in the same order, the same
leaves and buffers (the same objects), the same signature (the executable cache's key) and
the same errors, on any graph: random graphs of shared subexpressions, bound interior nodes,
strided views of evaluated arrays (recomputed, not read), scalar and large constants (lifted
or not), and a lookup other than the nodes' own `_bound`.
"""

from __future__ import annotations

import gc
import sys
import weakref

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lazyarr as la
from lazyarr import _flags
from lazyarr import compile as compile_driver
from lazyarr.hlo import bound_buffer, make
from lazyarr.hlo.instruction import fresh_parameter

C_BUILT = compile_driver._graph_walk is not None and _flags.FLAGS.c_extensions
needs_c = pytest.mark.skipif(not C_BUILT, reason="the C extension is not built here, or --c_extensions=false")


def assert_same_walk(outputs, bound, **options):
    """The C walk twice (the second reads the constants' decisions the first remembered) and
    the Python walk: the same nodes, buffers, signature and shared candidates. (No collection in
    between: the strategy's arrays, some in reference cycles, must not die between walks. No
    full collection before either: late in the suite one took ~0.25 s, most of the test's time.)"""
    gc.disable()
    try:
        return _compare_walks(outputs, bound, options)
    finally:
        gc.enable()


def _compare_walks(outputs, bound, options):
    want = compile_driver.python_linearize(outputs, bound, **options)
    want_nodes, want_buffers = [id(node) for node in want.nodes], want.buffers
    want_fields = (want.leaf_positions, want.signature, want.roots, want.shared)
    # Each walk's node list references its nodes: alive during the next walk, it would count as
    # references from outside that walk's graph (`shared`). Only node ids are kept.
    del want
    got = None
    for _ in range(2):
        got = None
        got = compile_driver.linearize(outputs, bound, **options)
        assert [id(node) for node in got.nodes] == want_nodes
        assert len(got.buffers) == len(want_buffers) and all(a is b for a, b in zip(got.buffers, want_buffers))
        assert (got.leaf_positions, got.signature, got.roots, got.shared) == want_fields
    return got


@st.composite
def graphs(draw):
    """Outputs of a random graph of lazy arrays: evaluated leaves, their strided views, Python
    scalars (specialized ones such as 1 and 0.5, and others), large constants, shared
    subexpressions, and interior values evaluated on the way (bound nodes with operands)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    values = [la.asarray(rng.standard_normal((6, 6)).astype(np.float32)).eval() for _ in range(draw(st.integers(1, 3)))]
    values.append(values[0][1:, ::2][:3, :3].reshape(3, 3)[None].reshape(3, 3) if draw(st.booleans()) else values[0])
    pool = [value[:3, :3] if value.shape != (3, 3) else value for value in values]
    for _ in range(draw(st.integers(1, 14))):
        kind = draw(st.sampled_from(["add", "multiply", "exp", "negate", "scalar", "constant", "evaluate", "view"]))
        first = draw(st.sampled_from(pool))
        if kind == "add":
            pool.append(first + draw(st.sampled_from(pool)))
        elif kind == "multiply":
            pool.append(first * draw(st.sampled_from(pool)))
        elif kind == "exp":
            pool.append(la.exp(first))
        elif kind == "negate":
            pool.append(-first)
        elif kind == "scalar":
            pool.append(first * draw(st.sampled_from([0, 1, 2, 0.5, -1, 0.25, 3.5, -0.0])))
        elif kind == "constant":
            pool.append(first + la.asarray(np.arange(9, dtype=np.float32).reshape(3, 3)))
        elif kind == "evaluate":
            pool.append((first + 1).eval() + first)
        else:
            big = la.asarray(rng.standard_normal((5, 5)).astype(np.float32)).eval()
            pool.append(first + big[1:4, ::2][:, :1] + big[::2, 1:4][:3])  # strided views, bound
    count = draw(st.integers(1, 3))
    return [array._node for array in draw(st.permutations(pool))[:count]]


@needs_c
@given(graphs(), st.booleans(), st.booleans())
def test_the_c_walk_is_the_python_walk(outputs, lift_scalars, lift_constants):
    assert_same_walk(outputs, bound_buffer, lift_scalars=lift_scalars, lift_constants=lift_constants)


@needs_c
@given(graphs())
def test_the_c_walk_calls_another_lookup_as_given(outputs):
    seen = []

    def lookup(node):  # the nodes' own buffers, except that nothing with operands counts as bound
        seen.append(id(node))  # (ids: a reference would count in the walks' `shared`)
        return None if node.operands else node._bound

    got = assert_same_walk(outputs, lookup, lift_constants=True)
    assert set(seen) >= set(map(id, got.nodes))


def test_shared_candidates_are_the_interior_nodes_other_than_outputs_an_array_holds():
    u = la.asarray(np.arange(6.0)).eval()
    named = u * 3.5  # held by a name
    result = la.exp(named + 1.0) - named  # `named + 1.0` and `exp(...)`: temporaries, dead
    del u
    for walk in (compile_driver.linearize, compile_driver.python_linearize):
        graph = walk([result._node], bound_buffer)
        shared = {graph.nodes[position]: references for position, references in graph.shared}
        assert shared.get(named._node) == 1 and result._node not in shared  # (the output is no candidate)
        # Nothing else but constants' broadcasts, which recording caches keep: the dead
        # temporaries are no candidates.
        assert all(node is named._node or node.constant_only for node in shared)
        del graph, shared


@needs_c
def test_shared_candidates_are_the_interior_nodes_a_node_outside_the_graph_reads():
    x = la.asarray(np.arange(6, dtype=np.float32))
    for pending_reader in (False, True):
        inner = la.exp(x * 1.5)  # interior to `result`'s graph, no name holds it afterwards
        result = (inner + 2.0).sum()
        reader = inner * 3.0 if pending_reader else None  # pending, outside `result`'s graph
        inner_node = weakref.ref(inner._node)
        del inner
        for walk in (compile_driver.linearize, compile_driver.python_linearize):
            graph = walk((result._node,), bound_buffer, lift_constants=True)
            shared = [graph.nodes[position] for position, _ in graph.shared]
            assert (inner_node() in shared) is pending_reader and result._node not in shared
            del graph, shared
        assert reader is None or reader.shape == (6,)


def test_the_c_walk_raises_the_python_walks_errors():
    unbound = make("parameter", number=7, shape=(2,), dtype=np.dtype(np.float32))
    graph = make("negate", [unbound])
    for walk in (compile_driver.linearize, compile_driver.python_linearize):
        with pytest.raises(ValueError, match="no buffer is bound to .*; it cannot be evaluated"):
            walk([graph], bound_buffer)

    def failing(node):
        raise KeyError("the lookup's own error")

    with pytest.raises(KeyError, match="own error"):
        compile_driver.linearize([graph], failing)
    if C_BUILT:  # (the Python walk meets a NumPy array as an unhashable key: a TypeError too)
        with pytest.raises(TypeError, match="Instructions"):
            compile_driver.linearize([np.zeros(2)], bound_buffer)


@needs_c
def test_the_c_walk_takes_deep_graphs_and_leaks_nothing():
    buffer = np.arange(4.0)
    leaf = fresh_parameter((4,), np.dtype(np.float64), bound=buffer)
    node = leaf
    for step in range(20_000):  # a chain far deeper than any recursion limit
        node = make("negate", [node]) if step % 2 else make("add", [node, leaf])
    before = (sys.getrefcount(leaf), sys.getrefcount(buffer), sys.getrefcount(node))
    for _ in range(3):
        got = assert_same_walk([node, leaf], bound_buffer)
        del got
    assert (sys.getrefcount(leaf), sys.getrefcount(buffer), sys.getrefcount(node)) == before
    assert la.Array(node).shape == (4,)


def test_evaluations_give_the_same_values_with_the_c_extensions_off():
    import os
    import subprocess

    script = ("import numpy as np, lazyarr as la; u = la.asarray(np.arange(36.0).reshape(6, 6)).eval(); "
              "v = la.exp(u[1:, ::2] * 0.25) + u[:-1, 1::2] - 3.5; print(float(v.sum()), float(la.max(v)))")
    printed = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                              env={**os.environ, "LAZYARR_FLAGS": flag}).stdout
               for flag in ("", "--c_extensions=false")]
    assert printed[0] == printed[1] and printed[0].strip()


@pytest.mark.parametrize("walk", ["linearize", "python_linearize"])
def test_the_signature_tells_graphs_apart_exactly(walk):
    """Equal structure on other leaves: the same signature (one executable); a different leaf
    shape, dtype or buffer type, op, constant, operand order or output: another. Leaves of more
    shapes than the C walk's cache of leaf codes holds (64) keep their own codes."""
    linearize = getattr(compile_driver, walk)

    def signature(build, *leaves):
        graph = linearize([build(*[la.asarray(leaf) for leaf in leaves])._node], bound_buffer)
        return graph.signature, graph.roots

    def f(x, y):
        return la.exp(x) * y + 1.5

    a, b = np.ones((3, 4), np.float32), np.full((3, 4), 2.0, np.float32)
    same = signature(f, a, b)
    assert signature(f, b, a) == same  # other values, the same structure
    different = [
        signature(f, a.astype(np.float64), b),  # a leaf's dtype
        signature(f, np.ones((4, 3), np.float32), b.T.copy()),  # its shape
        signature(lambda x, y: y * la.exp(x) + 1.5, a, b),  # operand order (leaves number as met: the
        # same graph on the other's leaves, `exp(y) * x`, is the same signature and executable)
        signature(lambda x, y: la.sin(x) * y + 1.5, a, b),  # an op
        signature(lambda x, y: la.exp(x) * y + 1.0, a, b),  # a constant kept in the code (1 is not lifted)
        signature(lambda x, y: la.exp(x) * y, a, b),  # one node fewer
    ]
    assert len({same, *different}) == len(different) + 1
    for size in range(1, 150):  # (past the leaf-code cache: each shape its own code, then again)
        x = np.ones(size, np.float32)
        first = signature(lambda v: v * 2.0, x)
        assert signature(lambda v: v * 2.0, x.copy()) == first
        assert signature(lambda v: v * 2.0, np.ones(size + 1, np.float32)) != first


@pytest.mark.parametrize("walk", ["linearize", "python_linearize"])
def test_a_large_constant_left_in_the_code_is_not_kept_by_the_signature_codes(walk):
    """A walk that leaves a large constant in the code (build_module for la.jit and device
    modules) gives its identity a code of its own, kept nowhere: the code tables must not keep
    its data alive. A small one's code is kept (an evaluation's executable is looked up by it)."""
    linearize = getattr(compile_driver, walk)
    from lazyarr.graph_signature import IDENTITY_CODES as codes
    from lazyarr.hlo import constant

    x = la.asarray(np.ones(100, np.float32))._node
    large = make("add", [x, constant(np.arange(100, dtype=np.float32) * 7.5)])
    first = linearize([large], bound_buffer, lift_constants=False).signature
    assert linearize([large], bound_buffer, lift_constants=False).signature != first
    assert all(key is not large.operands[1]._identity for key in codes)
    y = la.asarray(np.ones(3, np.float32))._node
    small = make("add", [y, constant(np.array([1.0, 2.0, 3.0], np.float32) * 7.5)])
    assert (linearize([small], bound_buffer, lift_constants=False).signature
            == linearize([small], bound_buffer, lift_constants=False).signature)
    assert small.operands[1]._identity in codes
