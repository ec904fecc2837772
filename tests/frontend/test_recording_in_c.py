"""Recording in C (`_fast_paths.c`: record_binary / record_unary, the operator FastSlots) makes
exactly what elementwise.py's Python direct path makes.

Where the C extension is built, `a + b`, `x * 0.5` and `la.exp(x)` on an operand signature seen
before are recorded in C: the node from the intern table or made from the memoized template,
a new Array, the node's holders, the loop-cut tracking of deep arrays. These tests hold it to
the Python functions it stands for: the same interned node (so the same executable and values),
node fields equal to what `make` checks, the holder and pending state array.py gives, the
Python path's answer wherever the C path declines (None), and no leaked references.
"""

from __future__ import annotations

import gc
import math
import sys
import warnings
import weakref
from unittest import mock

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from lazyarr.frontend import array as array_module
from lazyarr.frontend import direct_recording, elementwise, fast_paths
from lazyarr.hlo.instruction import Instruction, interned_count, make

pytestmark = pytest.mark.skipif(not fast_paths.ENABLED, reason="the C extension is not built here")

def python_binary(name, x1, x2):
    """python_binary as the Python alone records it: its direct path, else apply."""
    result = direct_recording.python_record_binary(name, x1, x2)
    return elementwise.apply(name, x1, x2) if result is None else result


def python_unary(name, x):
    result = direct_recording.python_record_unary(name, x)
    return elementwise.apply(name, x) if result is None else result


_BINARY = ["add", "subtract", "multiply", "divide", "maximum", "less", "equal", "bitwise_and", "power",
           "floor_divide", "arctan2", "logical_or"]
_UNARY = ["negative", "exp", "sqrt", "absolute", "logical_not", "sin", "isnan", "floor", "invert"]
_DTYPES = [np.dtype(name) for name in ("bool", "int8", "int32", "uint8", "int64", "float32", "float64", "complex64")]
_SHAPES = [(), (1,), (3,), (2, 3), (1, 3), (2, 1)]


def _operand(data, dtype):
    kind = data.draw(st.sampled_from(["evaluated", "pending", "int", "float", "big int", "bool", "element"]))
    shape = data.draw(st.sampled_from(_SHAPES))
    value = np.arange(np.prod(shape, dtype=int)).reshape(shape).astype(dtype)
    if kind == "evaluated":
        return la.asarray(value).eval()
    if kind == "pending":
        return la.asarray(value) + la.asarray(np.ones(shape, dtype))
    if kind == "int":
        return data.draw(st.integers(-300, 300))
    if kind == "big int":
        return data.draw(st.sampled_from([2**40, -(2**63), 2**64]))
    if kind == "float":
        return data.draw(st.sampled_from([0.5, -0.0, 0.0, float("nan"), 1e300, 2.0, -3.25]))
    if kind == "bool":
        return data.draw(st.booleans())
    return la.asarray(value.reshape(-1)[:1].reshape(())).eval()[()]


def _python_result(function, *operands):
    try:
        with np.errstate(all="ignore"):
            return function(*operands), None
    except Exception as error:  # noqa: BLE001 (any error: C must decline, and Python raise it)
        return None, type(error)


def _check_recorded(recorded, reference):
    """`recorded` (C) is an Array of `reference`'s (Python's) interned node, in a fresh state."""
    assert type(recorded) is la.Array
    assert recorded._node is reference._node
    assert recorded._base is None and recorded._views is None
    node = recorded._node
    holders = node._holder if type(node._holder) is tuple else (node._holder,)
    if node.depth:
        assert any(holder() is recorded for holder in holders)
    assert make(node.op.name, node.operands, **node.attributes) is node  # the key make() would use
    assert node.attrs == node._local[1]
    assert node.depth == 1 + max(operand.depth for operand in node.operands)
    assert node.constant_only == all(operand.constant_only for operand in node.operands)


@given(st.data(), st.sampled_from(_BINARY), st.sampled_from(_DTYPES), st.sampled_from(_DTYPES))
def test_c_binary_records_the_python_paths_node(data, name, dtype1, dtype2):
    x1, x2 = _operand(data, dtype1), _operand(data, dtype2)
    first, first_error = _python_result(python_binary, name, x1, x2)  # (memoizes the signature)
    recorded = direct_recording.record_binary(name, x1, x2)
    if recorded is None:
        return  # declined: the Python path runs (and raises what it raises)
    assert first_error is None  # C never records what Python refuses
    second = python_binary(name, x1, x2)
    _check_recorded(recorded, second)
    assert first._node is second._node
    np.testing.assert_array_equal(np.asarray(recorded), np.asarray(second))


@given(st.data(), st.sampled_from(_UNARY), st.sampled_from(_DTYPES))
def test_c_unary_records_the_python_paths_node(data, name, dtype):
    x = _operand(data, dtype)
    _, error = _python_result(python_unary, name, x)
    recorded = direct_recording.record_unary(name, x)
    if recorded is None:
        return
    assert error is None
    _check_recorded(recorded, python_unary(name, x))


def test_c_operators_give_the_python_operators_nodes_and_decline_the_rest():
    a = la.asarray(np.arange(6.0).reshape(2, 3)).eval()
    b = la.asarray(np.ones(3)).eval()
    for expression in (lambda: a + b, lambda: 2 - a, lambda: -a, lambda: a * 0.5, lambda: b / a, lambda: abs(a)):
        expression()  # (memoizes each signature)
        recorded = expression()
        assert type(recorded) is la.Array
    assert (a + b)._node is python_binary("add", a, b)._node
    assert (2 - a)._node is python_binary("subtract", 2, a)._node
    assert (-a)._node is python_unary("negative", a)._node
    assert direct_recording.record_binary("add", a, "text") is None
    assert direct_recording.record_binary("add", [1.0], a) is None
    with pytest.raises(TypeError):
        a + "text"
    small = la.asarray(np.arange(3, dtype=np.int8)).eval()
    small + 1
    with pytest.raises(OverflowError):  # the memoized int signature still refuses an int out of range
        small + 1000


def test_c_recording_tracks_deep_arrays_for_loop_cuts_as_python_does():
    import os
    import subprocess

    script = ("import numpy as np, lazyarr as la\n"
              "x = la.asarray(np.ones(8, np.float32)).eval()\n"
              "for _ in range(300):\n    x = x * 0.5 + 1.0\n"
              "print(la.cache_info().hits + la.cache_info().misses, x._node.depth, float(x.sum()))\n")
    printed = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                              env={**os.environ, "LAZYARR_FLAGS": f"--max_pending_depth=64 {flag}"}).stdout
               for flag in ("", "--c_extensions=false")]
    assert printed[0] == printed[1]
    evaluations, depth, total = printed[0].split()
    assert int(evaluations) >= 5 and int(depth) < 64 and float(total) == 16.0


def test_c_recording_leaks_nothing():
    a = la.asarray(np.arange(4.0)).eval()
    b = la.asarray(np.ones(4)).eval()
    (a + b) * 0.5  # (memoizes)
    la.exp(-a)
    gc.collect()
    object_count, instruction_count = len(gc.get_objects()), interned_count()
    gc.disable()  # (a collection meanwhile frees earlier tests' cyclic garbage: None's count moves)
    try:
        before = (sys.getrefcount(a), sys.getrefcount(b), sys.getrefcount(a._node), sys.getrefcount(None))
        for _ in range(2000):
            (a + b) * 0.5 - la.exp(-a)
        after = (sys.getrefcount(a), sys.getrefcount(b), sys.getrefcount(a._node), sys.getrefcount(None))
    finally:
        gc.enable()
    gc.collect()
    # None: no reference gained or lost per op (2,000 iterations: a leak of one a statement is 2,000;
    # caches cleared meanwhile and other threads, a compile helper's, may move it by a few hundred)
    assert before[:3] == after[:3] and abs(after[3] - before[3]) < 1000
    assert len(gc.get_objects()) < object_count + 200  # the temporaries are freed
    # and their nodes, which the collector does not track (the C extension untracks them)
    assert interned_count() <= instruction_count + 10


def test_recorded_nodes_and_arrays_are_left_to_reference_counting():
    """The C path's nodes, arrays and their weak references are out of the cycle collector's
    lists (no cycle can run through them; each collection would walk them again): they are
    freed by reference counting, the moment the last reference goes."""
    a = la.asarray(np.arange(4.0)).eval()
    (a + 1.5) * a  # (memoizes the signatures)
    result = (a + 2.5) * a
    assert not gc.is_tracked(result) and not gc.is_tracked(result._node)
    assert not gc.is_tracked(weakref.ref(result._node))
    reference = weakref.ref(result._node)
    del result
    assert reference() is None  # no collection needed
    np.testing.assert_array_equal(np.asarray((a + 2.5) * a), (np.arange(4.0) + 2.5) * np.arange(4.0))


def test_a_recorded_result_is_held_as_the_python_path_holds_it():
    a = la.asarray(np.arange(4.0)).eval()
    b = la.asarray(np.ones(4)).eval()
    a + b
    first = a + b
    second = a + b  # the same interned node, wrapped again: both are its holders
    assert first._node is second._node
    holders = {id(reference()) for reference in first._node._holder}
    assert {id(first), id(second)} <= holders
    reference = weakref.ref(first)
    del first
    gc.collect()
    assert reference() is None
    assert array_module._owner(second._node) is second


_TEMPLATED = {
    "mean": lambda x: x.mean(axis=-1, keepdims=True),
    "sum": lambda x: la.sum(x, axis=0),
    "matmul": lambda x: x @ la.ones((x.shape[-1], 2), dtype=x.dtype),
    "max of abs difference": lambda x: la.max(la.abs(x - 1)),
    "where": lambda x: la.where(x > 1, x, 0),
    "clip": lambda x: la.clip(x, 1, 3),
    "stack": lambda x: la.stack([x, x * 2], axis=-1),
    "var": lambda x: la.var(x, axis=-1),
}


@given(st.sampled_from(sorted(_TEMPLATED)), st.sampled_from([np.float32, np.float64, np.int32]),
       st.sampled_from([(3,), (2, 3), (4, 1), (1, 3, 2)]), st.integers(0, 3))
def test_c_replay_makes_the_python_replays_nodes(name, dtype, shape, seed):
    from lazyarr.hlo import instruction
    from lazyarr.hlo.template import record

    def build(node):
        return name_function(la.Array(node))._node

    name_function = _TEMPLATED[name]
    value = np.random.default_rng(seed).integers(0, 5, size=shape).astype(dtype)
    operand = la.asarray(value).eval()
    try:
        template = record(build, (operand._node,))
    except (TypeError, ValueError):
        return  # the function refuses this signature: nothing to replay
    if template is None:
        return
    fresh = la.asarray(value + 1).eval()._node
    made = instruction.replay(template.steps, [fresh, *template.fixed])  # C
    again = instruction.python_replay(template.steps, [fresh, *template.fixed])
    assert len(made) == len(again) and all(a is b for a, b in zip(made, again))
    for node in made[1 + len(template.fixed):]:
        assert make(node.op.name, node.operands, **node.attributes) is node
        if node.operands:
            assert node.depth == 1 + max(operand.depth for operand in node.operands)
    result = la.Array(made[template.outputs[0]])
    with np.errstate(all="ignore"):
        want = np.asarray(name_function(la.asarray(value + 1)))
    np.testing.assert_array_equal(np.asarray(result), want)
    from lazyarr.frontend import _fast_paths, reduction_support

    replayed = _fast_paths.replayed_array(template, fresh)  # templated()'s Array of the first output, in C
    assert type(replayed) is la.Array and replayed._node is made[template.outputs[0]]
    assert reduction_support.python_replayed_array(template, fresh)._node is replayed._node


def test_c_replay_refuses_malformed_steps_without_crashing():
    from lazyarr.hlo import instruction

    leaf = la.asarray(np.ones(2)).eval()._node
    with pytest.raises(TypeError):
        instruction.replay([], [leaf])
    with pytest.raises(SystemError):
        instruction.replay(((1, 2),), [leaf])
    step = (leaf.op, leaf._local, leaf._identity, (5,), leaf.shape, leaf.dtype, None)
    with pytest.raises(IndexError):
        instruction.replay((step,), [leaf])


_REBINDING_DURING_RECORDING = """
import gc, sys, numpy as np, lazyarr as la
x = la.asarray(np.arange(4.0))
(x * 0.0); (-x); x[1]; float(x[1])  # the direct paths memoized
keep = None
class Writer:  # cyclic garbage whose finalizer gives x a new node and drops the old one's last reader
    def __del__(self):
        global keep
        x[...] = np.ones(4)
        keep = None
for step in range(150):
    keep = x * 2.0
    writer = Writer(); writer.self = writer; del writer
    gc.set_threshold(1)  # the next allocation inside the recording collects it
    y = -x if step % 2 else x * 0.0  # (0.0: never memoized, Python's _scalar_operand runs)
    gc.set_threshold(700)
    assert np.asarray(y).tolist() in ([0.0] * 4, [-1.0] * 4, [-0.0, -1.0, -2.0, -3.0]), np.asarray(y)
print("ok")
"""


def test_recording_survives_the_array_rebound_while_it_records():
    """A collection run inside the C recording (an allocation, a call into Python) may run a
    finalizer that writes the operand array, giving it a new node and freeing the old: the C
    code holds the nodes it reads (found by fuzzing: a use-after-free, a segfault)."""
    import os
    import subprocess

    done = subprocess.run([sys.executable, "-c", _REBINDING_DURING_RECORDING], capture_output=True, text=True,
                          env={**os.environ, "PYTHONMALLOC": "debug"}, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_recording_and_writing_one_array_from_threads():
    import threading

    x = la.asarray(np.arange(4.0))
    stop, errors = threading.Event(), []
    switch = sys.getswitchinterval()

    def reader():
        try:
            while not stop.is_set():
                x * 0.0
                0.0 + x
                -x
        except BaseException as error:  # noqa: BLE001
            errors.append(error)

    def writer():
        try:
            while not stop.is_set():
                x[...] = np.random.default_rng().random(4)
        except BaseException as error:  # noqa: BLE001
            errors.append(error)

    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=reader) for _ in range(2)] + [threading.Thread(target=writer)]
        for thread in threads:
            thread.start()
        stop.wait(1.5)
        stop.set()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(switch)
    assert errors == []
    assert np.asarray(x).shape == (4,)


def test_an_array_of_an_incomplete_node_gets_pythons_error_not_a_crash():
    from lazyarr.hlo.instruction import Instruction

    x = la.asarray(np.ones(3))
    x._node = Instruction.__new__(Instruction)  # unsupported, but plain Python can do it
    for expression in (lambda: x + x, lambda: -x, lambda: x * 2.0):
        with pytest.raises(AttributeError):
            expression()


def _deep_chain(record, steps):
    """Arrays x, x*0.5, (x*0.5)*0.5, ... recorded with `record(name, a, b)`; all kept."""
    x = la.asarray(np.ones(3, np.float32)).eval()
    chain = [x]
    for _ in range(steps):
        chain.append(record("multiply", chain[-1], 0.5))
    return chain


def test_c_notes_deep_arrays_for_loop_cuts_as_track_pending_does():
    from lazyarr import _flags

    flags = _flags.FLAGS
    _flags.with_overrides(max_pending_depth=64)
    try:
        noted = {}
        def through_c(name, x1, x2):
            recorded = direct_recording.record_binary(name, x1, x2)  # (None until the signature is memoized)
            return python_binary(name, x1, x2) if recorded is None else recorded

        for path, record in (("c", through_c), ("python", python_binary)):
            array_module._PENDING.arrays.clear()
            array_module._PENDING.prune_at = 1 << 20
            chain = _deep_chain(record, 50)  # depths 1..50: those from 32 on are noted, none cut
            noted[path] = [id(reference()) for reference in array_module._PENDING.arrays.values()]
            assert noted[path] == [id(array) for array in chain if array._node.depth >= 32]
            del chain
        assert len(noted["c"]) == len(noted["python"]) >= 18
    finally:
        _flags.FLAGS = flags
        array_module._PENDING.arrays.clear()
        array_module._PENDING.prune_at = 64


def test_c_notes_nothing_inside_a_trace():
    from lazyarr import _flags

    flags = _flags.FLAGS
    _flags.with_overrides(max_pending_depth=8)
    array_module._PENDING.arrays.clear()
    try:
        def deep(x):
            for _ in range(20):
                x = x * 0.5
            return x

        result = la.jit(deep)(la.asarray(np.ones(3, np.float32)))
        assert array_module._PENDING.arrays == {}
        np.testing.assert_array_equal(np.asarray(result), np.full(3, 0.5**20, np.float32))
    finally:
        _flags.FLAGS = flags


@pytest.mark.parametrize("live_every", [1, 2, 3, 50, 1000])
def test_c_sweep_drops_exactly_the_dead_entries(live_every):
    """Both ways of the C sweep: most entries dead (the live ones are put back into the cleared
    table) and most alive (each dead one deleted); an entry that is not a weak reference stays."""
    from lazyarr.frontend import _fast_paths

    class Node:
        pass

    alive = [Node() for _ in range(50)]
    table = {"not a weak reference": 7}
    for index in range(200):
        node = alive[index % 50] if index % live_every == 0 else Node()
        table[(index, id(node))] = weakref.ref(node)
    gc.collect()
    want = {key: entry for key, entry in table.items() if not isinstance(entry, weakref.ref) or entry() is not None}
    assert _fast_paths.sweep_intern_table(table) == len(want)
    assert table == want
    with pytest.raises(TypeError):
        _fast_paths.sweep_intern_table([])


def test_a_sweep_survives_finalizers_that_record_meanwhile():
    """An allocation inside the sweep may run a collection whose finalizers record nodes,
    replacing dead entries of the intern table while it is swept: the C sweep allocates no
    Python object while it walks the table and checks each dead entry again before deleting it
    (the Python one walks a copy; found by fuzzing under valgrind: a freed weak reference packed
    and freed again). Every entry left is live or re-made, and every re-made node is the table's."""
    from lazyarr.hlo import instruction

    leaves = [la.asarray(np.full(3, float(index))) for index in range(300)]
    la.exp(leaves[0])
    la.exp(leaves[1])
    for x in leaves:
        la.exp(x)  # interned, then dropped: dead entries
    remade = []

    class Remaker:  # cyclic garbage whose finalizer re-makes every dropped node
        def __init__(self):
            self.cycle = self

        def __del__(self):
            for x in leaves:
                remade.append(la.exp(x))

    Remaker()
    threshold = gc.get_threshold()
    gc.set_threshold(1)
    try:
        instruction._sweep()
    finally:
        gc.set_threshold(*threshold)
    gc.collect()
    for node in (array._node for array in remade):
        assert make(node.op.name, node.operands, **node.attributes) is node
    assert len(remade) in (0, len(leaves))


@st.composite
def _plain_view_keys(draw):
    """A shape and a plain view key of it: slices (any bounds and steps), None and Ellipsis."""
    shape = tuple(draw(st.lists(st.integers(0, 6), min_size=1, max_size=3)))
    items = []
    for _ in range(len(shape)):
        bounds = st.one_of(st.none(), st.integers(-8, 8))
        items.append(slice(draw(bounds), draw(bounds), draw(st.sampled_from([None, 1, 2, -1, -2, 3]))))
    if draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), None)
    if draw(st.booleans()):
        position = draw(st.integers(0, len(items)))
        items = items[:position] + [Ellipsis] + items[position + 1:]
    key = tuple(items)
    if len(key) == 1 and type(key[0]) is slice and draw(st.booleans()):
        key = key[0]  # a bare slice: `x[a:b]`
    return shape, key


@given(_plain_view_keys(), st.sampled_from(["float32", "int64", "complex64", "bool"]), st.booleans())
def test_c_views_are_the_python_paths_views(shape_and_key, dtype, evaluated):
    """`a[key]` for a plain view key, made by the C getitem from indexing.VIEW_CHAINS, is the view
    indexing.getitem makes: the same node (the same slice of the same base node, or a leaf of
    NumPy's contiguous view), the same read/write/layout, noted among the base's views; its value
    is NumPy's, and a write through it reaches the base as in NumPy."""
    from lazyarr.frontend import indexing, views

    shape, key = shape_and_key
    values = (np.arange(int(np.prod(shape))).reshape(shape) % 5).astype(dtype)
    base = la.asarray(values)
    if not evaluated:
        base = base + np.zeros((), dtype)  # pending (a computed value, not a bound leaf)
    base[key], base[key]  # noted by the Python path (the second time)
    chain_key = (base._node.shape, base._node.dtype, indexing._key_parts(key if type(key) is tuple else (key,)))
    assert chain_key in views.VIEW_CHAINS
    made_in_c = base[key]
    from_python = indexing.getitem(base, key)
    if evaluated and made_in_c._node is base._node:  # a view reading its base unchanged (`a[:]`)
        assert from_python._node is base._node
    elif evaluated and made_in_c._node.operands == ():  # contiguous: a leaf of NumPy's view each time
        assert from_python._node.operands == () and made_in_c._node._bound.base is not None
    else:
        assert made_in_c._node is from_python._node
    link, python_link = made_in_c._base, from_python._base
    assert link.base is base and (link.read, link.write, link.layout) == (python_link.read, python_link.write,
                                                                          python_link.layout)
    assert link.refusal is None and link.strided is None
    assert any(reference() is made_in_c for reference in base._views)
    np.testing.assert_array_equal(np.asarray(made_in_c), values[key])
    expected = values.copy()
    expected[key] = np.ones((), dtype)
    made_in_c[...] = np.ones((), dtype)
    np.testing.assert_array_equal(np.asarray(base), expected)


_MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
                  ((5, 2, 3), (1, 3, 4)), ((0, 3), (3, 2)), ((2, 0), (0, 3))]


@given(st.sampled_from(_MATMUL_SHAPES), st.sampled_from(["float32", "float64", "int64", "complex64", "bool"]),
       st.sampled_from(["float32", "int32"]))
def test_c_matmul_replays_the_python_paths_template(shapes, left_dtype, right_dtype):
    """`x1 @ x2` through `Array.__matmul__`'s C slot replays linalg's template for the operands'
    shapes and dtypes: the node linalg.matmul makes (interned: the same object), NumPy's value."""
    from lazyarr.frontend import linalg

    rng = np.random.default_rng(len(shapes[0]))
    values = [(rng.integers(-3, 4, shape)).astype(dtype) for shape, dtype in zip(shapes, (left_dtype, right_dtype))]
    left, right = (la.asarray(value) + np.zeros((), value.dtype) for value in values)  # pending nodes
    left @ right  # records the template (the Python path)
    made_in_c = left @ right
    assert made_in_c._node is linalg.matmul(left, right)._node
    expected = values[0] @ values[1]
    np.testing.assert_array_equal(np.asarray(made_in_c), expected)  # small integers: exact in every dtype
    assert np.asarray(made_in_c).dtype == expected.dtype


def test_c_matmul_leaves_errors_to_the_python_path():
    left, right = la.asarray(np.ones((2, 3))), la.asarray(np.ones((4, 2)))
    for _ in range(2):
        with pytest.raises(ValueError, match=r"\(2, 3\).*\(4, 2\)|matmul"):
            left @ right


@given(st.lists(st.integers(0, 4), max_size=3), st.sampled_from(["float32", "int8", "complex128"]), st.booleans())
def test_c_transpose_is_the_python_paths_view(shape, dtype, evaluated):
    """`a.T` through its C attribute (views.VIEW_CHAINS under "T") is the view
    manipulation_layout.transpose makes: the same transpose node (the node itself for 0-d and 1-d),
    its read/write/layout, noted among the base's views; NumPy's value, and writes reach the base."""
    from lazyarr.frontend.manipulation_layout import transpose

    values = np.asarray(np.arange(int(np.prod(shape))).reshape(shape) % 7, dtype=dtype)
    base = la.asarray(values)
    if not evaluated:
        base = base * np.ones((), dtype)
    base.T, base.T  # noted by the Python path (the second time)
    made_in_c, from_python = base.T, transpose(base)
    assert made_in_c._node is from_python._node
    link, python_link = made_in_c._base, from_python._base
    assert link.base is base and (link.read, link.write, link.layout) == (python_link.read, python_link.write,
                                                                          python_link.layout)
    assert any(reference() is made_in_c for reference in base._views)
    np.testing.assert_array_equal(np.asarray(made_in_c), values.T)
    expected = values.copy()
    expected.T[...] = np.ones((), dtype)
    made_in_c[...] = np.ones((), dtype)
    np.testing.assert_array_equal(np.asarray(base), expected)


def test_the_c_transpose_attribute_is_read_only_and_found_on_the_class():
    x = la.asarray(np.ones((2, 3)))
    with pytest.raises(AttributeError):
        x.T = x
    assert type(la.Array.__dict__["T"]).__name__ == "FastView" and la.Array.T is la.Array.__dict__["T"]
    from lazyarr.frontend.manipulation_layout import transpose

    assert la.Array.T.fget is transpose and la.Array.T.__doc__ == transpose.__doc__  # (help(), inspect)


_FINALIZER_REBINDS = """
import gc, numpy as np, lazyarr as la
x = la.asarray(np.arange(12.0).reshape(4, 3)) + 1
w = la.asarray(np.ones((3, 2)))
for _ in range(3):
    x[1:3], x @ w  # noted (the second time) and recorded: the C paths take them from now on
class Finalizer:  # cyclic garbage whose finalizer evaluates x: x._node is rebound, the old node freed
    def __del__(self):
        np.asarray(x)
keep = [(i, i, i, i) for i in range(5000)]  # (tuple allocations then reach the allocator: collections run)
results = []
for operation in (lambda: x[1:3], lambda: x @ w):
    gc.collect()
    finalizer = Finalizer(); finalizer.cycle = finalizer; del finalizer
    gc.set_threshold(1)
    try:
        results.append(np.asarray(operation()))
    finally:
        gc.set_threshold(700)
print(results[0].sum(), results[1].sum())
"""


def test_c_views_and_matmul_survive_finalizers_that_rebind_their_arrays():
    """A collection run by an allocation inside the C view or `@` path may evaluate the very
    array being read (its node rebound, the old one freed): the C paths hold what they read
    first (found by a review: a use after free). Run in a child process: a crash fails the test."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _FINALIZER_REBINDS], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["39.0", "156.0"]


def test_c_views_leave_other_slice_bounds_to_the_python_path():
    """Only int and None bounds take the C view path: an Element, a 0-d array or an object with
    __index__ as a bound is NumPy's (the C path once raised TypeError: unhashable), and a float
    bound raises TypeError as NumPy does, even where an equal int key was noted."""
    class Index:
        def __index__(self):
            return 2

    x = la.asarray(np.arange(10.0)) + 1
    for _ in range(3):
        x[2:], x[1:]
    expected = np.arange(10.0)[2:] + 1
    for bound in (la.asarray(np.array([2, 7]))[0], la.asarray(np.array(2)), np.array(2), Index()):
        np.testing.assert_array_equal(np.asarray(x[bound:]), expected)
    with pytest.raises(TypeError):
        x[1.0:]
    from lazyarr.frontend import indexing

    for pending in (True, False):  # the Python path's memo took 1.0 for the equal int key 1
        y = la.asarray(np.arange(7.0)) + 0 if pending else la.asarray(np.arange(7.0))
        indexing.getitem(y, slice(1, None))
        with pytest.raises(TypeError):
            indexing.getitem(y, slice(1.0, None))


@given(_plain_view_keys(), st.sampled_from(["float32", "int64", "complex64", "bool"]),
       st.sampled_from(["float64", "int8", "bool"]), st.booleans())
def test_c_setitem_is_the_python_paths_write(shape_and_key, dtype, value_dtype, broadcast):
    """`a[key] = value` of a pending value through `Array.__setitem__`'s C slot replays the write
    indexing.setitem noted (SETITEM_TEMPLATES): the array's new node is the one the Python path
    makes (interned: the same object), held by the array, and its value is NumPy's (the value
    converted to the array's dtype and broadcast as NumPy's assignment does)."""
    from lazyarr.frontend import indexing, methods

    shape, key = shape_and_key
    values = (np.arange(int(np.prod(shape))).reshape(shape) % 5).astype(dtype)
    indexed = values[key].shape
    update_shape = indexed[1:] if broadcast and indexed else indexed
    update_values = (np.arange(int(np.prod(update_shape))).reshape(update_shape) % 3).astype(value_dtype)

    leaves = [la.asarray(value) for value in (values, update_values, np.zeros((), dtype), np.zeros((), value_dtype))]

    def fresh():  # (the same interned nodes each time, in new arrays)
        return leaves[0] + leaves[2], leaves[1] + leaves[3]

    for _ in range(2):  # noted by the Python path (the template made the first time, noted each time)
        target, update = fresh()
        methods._setitem(target, key, update)
    target, update = fresh()
    python_target, _ = fresh()
    methods._setitem(python_target, key, update)
    before = len(indexing.SETITEM_TEMPLATES)
    memo = (indexing._key_parts(key if type(key) is tuple else (key,)), target._node.shape, target._node.dtype,
            update._node.shape, update._node.dtype)
    assert memo in indexing.SETITEM_TEMPLATES  # (what the C slot finds)
    target[key] = update
    assert target._node is python_target._node and len(indexing.SETITEM_TEMPLATES) == before
    if target._node.depth:
        holders = target._node._holder if type(target._node._holder) is tuple else (target._node._holder,)
        assert any(holder() is target for holder in holders)
    expected = values.copy()
    with np.errstate(all="ignore"):
        expected[key] = update_values
    np.testing.assert_array_equal(np.asarray(target), expected)


def test_c_setitem_leaves_views_evaluated_values_and_cuts_to_the_python_path():
    """The C write declines where views.assign or element_writes does more: a live view of the
    array re-reads the new value, a view written writes its base, an evaluated value is written
    in place, and a write deep enough for a loop cut cuts there (track_pending)."""
    from lazyarr import _flags

    def pending(values):
        return la.asarray(np.asarray(values, dtype=np.float64)) + 0.0

    for _ in range(3):
        a = pending(np.zeros(6))
        view = a[1:4]
        a[1:4] = pending([1, 2, 3])
        np.testing.assert_array_equal(np.asarray(view), [1, 2, 3])  # the live view re-read
        base = pending(np.zeros((3, 4)))
        row = base[1]
        row[1:3] = pending([5, 6])
        np.testing.assert_array_equal(np.asarray(base)[1], [0, 5, 6, 0])
        b = pending(np.zeros(4))
        b[1:3] = la.asarray(np.array([7.0, 8.0])).eval()
        np.testing.assert_array_equal(np.asarray(b), [0, 7, 8, 0])
    budget = _flags.FLAGS.max_pending_depth
    u = pending(np.zeros(5))
    for step in range(budget):  # each write one op deeper: the cuts keep the graph bounded
        u[1:-1] = u[:-2] + 1.0
    assert u._node.depth < budget * 2
    expected = np.zeros(5)
    for step in range(budget):
        expected[1:-1] = expected[:-2] + 1.0
    np.testing.assert_array_equal(np.asarray(u), expected)


@given(st.lists(st.integers(0, 4), max_size=3), st.sampled_from(["sum", "prod", "mean", "max", "min", "amax", "amin"]),
       st.sampled_from(["float32", "int8", "bool", "complex64"]), st.data())
def test_c_reductions_replay_the_python_paths_template(shape, name, dtype, data):
    """`x.max(axis=-1, keepdims=True)`, `la.sum(x, 0)`: the C slot replays reduction_support's
    template for (name, shape, dtype, axis, keepdims): the node the Python path makes (interned:
    the same object) and NumPy's value; NumPy's errors (an axis out of range, an empty max) and
    every other argument are the Python path's."""
    from lazyarr.frontend import reductions

    shape = tuple(shape)
    values = (np.arange(int(np.prod(shape))).reshape(shape) % 4).astype(dtype)
    leaf = la.asarray(values)
    zero = la.asarray(np.zeros((), dtype))
    bound = max(len(shape), 1)  # (axes out of range too: NumPy's AxisError from both paths)
    axis = data.draw(st.one_of(st.none(), st.integers(-bound - 1, bound),
                               st.lists(st.integers(-bound, bound - 1), max_size=2, unique=True).map(tuple)))
    keepdims = data.draw(st.sampled_from([None, True, False]))
    arguments = {} if keepdims is None else {"keepdims": keepdims}
    python_function = getattr(reductions, name).__wrapped__
    numpy_function = getattr(np, name)
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (NumPy warns of an empty mean; lazyarr gives its NaN quietly)
            expected = numpy_function(values, axis=axis, **arguments)
    except Exception as error:  # noqa: BLE001 (NumPy's error: both paths raise its type)
        for _ in range(2):
            with pytest.raises(type(error)):
                getattr(reductions, name)(leaf + zero, axis=axis, **arguments)
        return
    for _ in range(2):  # the first call records the template (the Python path)
        python_result = python_function(leaf + zero, axis=axis, **arguments)
    made_in_c = getattr(reductions, name)(leaf + zero, axis, **arguments) if axis is not None or data.draw(
        st.booleans()) else getattr(reductions, name)(leaf + zero, **arguments)
    assert made_in_c._node is python_result._node
    if name in la.Array.__dict__:
        assert getattr(leaf + zero, name)(axis=axis, **arguments)._node is python_result._node
    np.testing.assert_allclose(np.asarray(made_in_c), expected, rtol=1e-6)  # (float32 means: rounding only)
    assert np.asarray(made_in_c).dtype == np.asarray(expected).dtype


def test_c_reductions_leave_other_arguments_to_the_python_path():
    x = la.asarray(np.arange(6.0).reshape(2, 3)) + 1
    for _ in range(2):
        x.sum(axis=0), x.max(), x.mean(axis=1, keepdims=True)
    np.testing.assert_array_equal(np.asarray(x.sum(axis=0, dtype=np.int32)), [5, 7, 9])
    np.testing.assert_array_equal(np.asarray(x.max(initial=100.0)), 100.0)
    np.testing.assert_array_equal(np.asarray(la.max(x, axis=0, where=np.array([True, False, True]), initial=0.0)),
                                  [4.0, 0.0, 6.0])
    with pytest.raises(TypeError):
        x.sum(axis=0.0)
    with pytest.raises(TypeError):
        x.sum(0, axis=0)
    with pytest.raises(TypeError):
        x.max(axis=[0])  # NumPy: a list is no axis
    assert float(x.mean(axis=None, keepdims=np._NoValue)) == 3.5


def test_c_reductions_read_the_template_table():
    """The C slot replays what reduction_support's table holds under the call's key (here, a
    sum's template entered under a max's key makes a sum): proof that it took the call."""
    from lazyarr.frontend import reduction_support

    x = la.asarray(np.arange(6.0).reshape(2, 3)) + 1
    x.sum(axis=1), x.sum(axis=1)
    table = reduction_support._TEMPLATE_TABLE
    key = ("max", (2, 3), np.dtype(np.float64), 1, reduction_support.NO_VALUE)
    saved = table.get(key)
    table[key] = table[("sum", (2, 3), np.dtype(np.float64), 1, reduction_support.NO_VALUE)]
    try:
        np.testing.assert_array_equal(np.asarray(x.max(axis=1)), [6.0, 15.0])
        np.testing.assert_array_equal(np.asarray(la.max(x, 1)), [6.0, 15.0])
    finally:
        if saved is None:
            del table[key]
        else:
            table[key] = saved
    np.testing.assert_array_equal(np.asarray(x.max(axis=1)), [3.0, 6.0])


def test_c_slots_pickle_as_the_functions_they_stand_for():
    """`la.max` is a C slot where its Python function stood: pickled (multiprocessing, dask),
    it loads as what the namespace holds there, and computes the same."""
    import pickle

    x = la.asarray(np.arange(6.0).reshape(2, 3))
    for function in (la.max, la.sum, la.amin, la.Array.mean):
        loaded = pickle.loads(pickle.dumps(function))
        np.testing.assert_array_equal(np.asarray(loaded(x, axis=1)), np.asarray(function(x, axis=1)))


def test_c_paths_take_a_negative_pending_budget_as_python_does():
    """--max_pending_depth=-1 (the flag parser takes it; track_pending cuts at every op): the C
    recording and write paths run under it as the Python ones do, inside la.jit too (found by a
    review: the C paths raised ValueError there)."""
    import os
    import subprocess

    code = ("import numpy as np, lazyarr as la\n"
            "@la.jit\n"
            "def f(x):\n"
            "    y = x * 2.0 + 1.0\n"
            "    for i in range(3):\n"
            "        y[1:3] = y[0:2] * 3.0\n"
            "    return y\n"
            "z = la.asarray(np.arange(4.0)) * 2.0\n"
            "z[1:3] = z[0:2] + 1.0\n"
            "print(np.asarray(f(la.asarray(np.arange(4.0)))).tolist(), np.asarray(z).tolist())\n")
    printed = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                              env={**os.environ, "LAZYARR_FLAGS": flags}).stdout
               for flags in ("--max_pending_depth=-1", "--max_pending_depth=-1 --c_extensions=false")]
    assert printed[0] == printed[1] == "[1.0, 3.0, 9.0, 7.0] [0.0, 1.0, 3.0, 6.0]\n"


def test_c_writes_note_deep_arrays_for_loop_cuts_as_track_pending_does():
    """A write through the C slot that leaves its array deep but short of a cut (depth from half
    --max_pending_depth) notes it among the pending arrays, as track_pending does for a write;
    at the budget the Python path takes it and cuts. The same noted arrays and values both ways."""
    from lazyarr import _flags
    from lazyarr.frontend import methods

    flags = _flags.FLAGS
    _flags.with_overrides(max_pending_depth=64)
    try:
        noted, values = {}, {}
        for path in ("c", "python"):
            array_module._PENDING.arrays.clear()
            array_module._PENDING.prune_at = 1 << 20
            u = la.asarray(np.arange(6.0)) + 0.0
            depths = []
            for _ in range(40):  # each write two ops deeper: noted from depth 32, cut at 64
                if path == "c":
                    u[1:-1] = u[:-2] * 0.5
                else:
                    methods._setitem(u, slice(1, -1), u[:-2] * 0.5)
                depths.append(u._node.depth)
                if 32 <= u._node.depth < 64:  # deep, not cut: noted
                    assert id(u) in array_module._PENDING.arrays
            noted[path] = depths
            values[path] = np.asarray(u)
        assert noted["c"] == noted["python"] and max(noted["c"]) < 64 + 32
        np.testing.assert_array_equal(values["c"], values["python"])
    finally:
        _flags.FLAGS = flags
        array_module._PENDING.arrays.clear()
        array_module._PENDING.prune_at = 64


@given(shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
       dtype=st.sampled_from([np.float32, np.int64, np.bool_, np.complex64]), bound=st.booleans())
def test_c_leaves_have_the_python_leaves_fields(shape, dtype, bound):
    """fresh_parameter's leaf made in C (new_leaf) has every field its Python twin gives, and a
    process-unique number."""
    from lazyarr.hlo import instruction

    if instruction._fast_leaf is None:
        pytest.skip("the C extension is not built")
    buffer = np.zeros(shape, dtype) if bound else None
    first = instruction.fresh_parameter(shape, np.dtype(dtype), buffer)  # (may check the (shape, dtype))
    made = instruction.fresh_parameter(shape, np.dtype(dtype), buffer)  # (checked: parameter_leaf's, in C)
    fast = instruction._fast_leaf, instruction._fast_parameter
    instruction._fast_leaf = instruction._fast_parameter = None
    try:
        twin = instruction.fresh_parameter(shape, np.dtype(dtype), buffer)
    finally:
        instruction._fast_leaf, instruction._fast_parameter = fast
    assert type(made) is type(twin) is type(first) is Instruction
    fields = ("op", "shape", "dtype", "operands", "_attr_map", "_bound", "_holder", "depth", "constant_only")
    assert [getattr(made, name) for name in fields] == [getattr(twin, name) for name in fields]
    assert [getattr(first, name) for name in fields] == [getattr(twin, name) for name in fields]
    assert first.attr("number") != made.attr("number") and first._identity[2] == made._identity[2]
    assert made.attr("number") != twin.attr("number")
    renumbered = tuple((name, twin.attr("number") if name == "number" else value) for name, value in made.attrs)
    assert renumbered == twin.attrs and made._local == made._identity
    assert made._identity[0] == twin._identity[0] and made._identity[2] == twin._identity[2]
    assert made.attributes == {**twin.attributes, "number": made.attr("number")}


_SCALAR_VALUES = [1, 2, -3, 7, 0, 1.5, -0.0, float("nan"), float("inf")]


@given(st.data(), st.sampled_from(_BINARY), st.sampled_from(_DTYPES), st.sampled_from(_DTYPES), st.booleans())
def test_c_records_numpy_scalar_operands_as_the_python_path(data, name, dtype, scalar_dtype, scalar_first):
    """`x * np.float32(0.5)` and `np.float32(0.5) * x` (NumPy's ufunc slot) take the constant
    elementwise.numpy_scalar_operand remembered for the scalar (NEP 50: of its own dtype) in C: the
    node the Python path makes; zeros and NaNs (never remembered) and anything new: the Python path."""
    kind = data.draw(st.sampled_from(["evaluated", "pending"]))
    shape = data.draw(st.sampled_from(_SHAPES))
    value = np.arange(np.prod(shape, dtype=int)).reshape(shape).astype(dtype)
    x = la.asarray(value).eval() if kind == "evaluated" else la.asarray(value) + la.asarray(np.ones(shape, dtype))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        scalar = np.asarray(data.draw(st.sampled_from(_SCALAR_VALUES)), np.float64).astype(scalar_dtype)[()]
    operands = (scalar, x) if scalar_first else (x, scalar)
    ufunc = elementwise.UFUNCS[name][0]
    with mock.patch.object(direct_recording, "record_binary", direct_recording.python_record_binary):
        python, error = _python_result(elementwise.binary, name, *operands)  # (remembers the constant)
    recorded = direct_recording.record_binary(name, *operands)
    through_numpy, numpy_error = _python_result(ufunc, *operands)  # the ufunc slot (__array_ufunc__) or operator
    assert (numpy_error is None) == (error is None), (numpy_error, error)
    if recorded is None:
        return
    assert error is None  # C never records what Python refuses
    _check_recorded(recorded, python)
    assert through_numpy._node is python._node
    with np.errstate(all="ignore"):
        expected = ufunc(*(np.asarray(operand) if operand is x else operand for operand in operands))
    np.testing.assert_array_equal(np.asarray(recorded), expected)
    assert np.asarray(recorded).dtype == expected.dtype


def test_numpy_scalars_and_ufunc_calls_are_recorded_in_c():
    """Once their constants and signatures are known: `x * s`, `s * x`, `np.multiply(s, x)` and
    `np.exp(x)` make no Python call (the Python functions they stand for are not reached)."""
    x = la.asarray(np.arange(4, dtype=np.float32)).eval()
    scalar = np.float32(0.25)
    expressions = (lambda: x * scalar, lambda: scalar * x, lambda: np.multiply(scalar, x), lambda: np.exp(x),
                   lambda: np.add(x, x))
    for expression in expressions:
        expression()  # (remembers the constant and the signature)
    calls = []
    with (mock.patch.object(elementwise, "numpy_scalar_operand", lambda value: calls.append(value) or value),
          mock.patch.object(elementwise, "apply", lambda *args: calls.append(args))):
        results = [expression() for expression in expressions]
    assert calls == []
    expected = [np.arange(4, dtype=np.float32) * scalar] * 3 + [np.exp(np.arange(4, dtype=np.float32)),
                                                               np.arange(4, dtype=np.float32) * 2]
    for result, want in zip(results, expected):
        # (exp: lazyarr's vectorized float32 exp and NumPy's may differ by an ULP, 1.2e-7 relative)
        np.testing.assert_allclose(np.asarray(result), want, rtol=2.4e-7, atol=0)
    # Other calls keep the Python slot: keywords (out=, dtype=), methods, other libraries' ufuncs.
    out = np.empty(4, np.float32)
    np.multiply(scalar, x, out=out)
    np.testing.assert_array_equal(out, expected[0])
    np.testing.assert_array_equal(np.asarray(np.add.reduce(x)), np.float32(6))
    np.testing.assert_array_equal(np.asarray(np.multiply(scalar, x, dtype=np.float32)), expected[0])


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "copysign"])
def test_zero_scalars_are_remembered_but_negative_zero_is_its_own_constant(name):
    """`la.maximum(h, 0)` and `x + 0.0` take their remembered constant in C; -0.0 equals 0.0 but is
    another value (`copysign(x, -0.0)`, `x * -0.0`): it is never found under 0.0's entry."""
    x = la.asarray(np.array([-0.0, 0.0, 1.5, -2.0])).eval()
    function = getattr(la, name)
    for value in (0.0, 0, -0.0, 0.0, -0.0):
        function(x, value)  # (memoizes the signature and the remembered zeros)
        recorded = direct_recording.record_binary(name, x, value)
        assert recorded is not None
        expected = getattr(np, name)(np.asarray(x), value)
        got = np.asarray(recorded)
        np.testing.assert_array_equal(got, expected)
        assert np.signbit(got).tolist() == np.signbit(expected).tolist(), (value, got, expected)
    zeros = [key for key in direct_recording.SCALAR_OPERANDS if key[0] in (int, float) and key[1] == 0]
    assert {kind for kind, *_ in zeros} == {int, float}  # remembered (the C path finds them)
    assert all(math.copysign(1.0, key[1]) > 0 for key in zeros)  # 0.0's entry: never -0.0's


@st.composite
def _reshapes(draw):
    """A shape and `x.reshape` arguments for it: ints, one tuple, a -1, or a refused shape."""
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=3)))
    size = int(np.prod(shape))
    factors = [extent for extent in range(1, size + 1) if size % extent == 0] or [1]
    first = draw(st.sampled_from(factors))
    target = [first, size // first] if size else [0, draw(st.integers(0, 3))]
    if draw(st.booleans()):
        target[draw(st.integers(0, 1))] = -1 if size else target[0]
    if draw(st.integers(0, 5)) == 0:
        target = [size + 1]  # NumPy refuses it: the Python path raises, in C too
    arguments = (tuple(target),) if draw(st.booleans()) else tuple(target)
    return shape, arguments


@given(_reshapes(), st.sampled_from(["float32", "int64", "complex64", "bool"]), st.booleans())
def test_c_reshape_is_the_python_paths_view(shape_and_arguments, dtype, evaluated):
    """`a.reshape(...)` of an array owning its value, through its C slot (views.VIEW_CHAINS under
    ("reshape", arguments)), is the view the Python method makes: the same node, read/write/layout,
    noted among the base's views; NumPy's value, and writes reach the base."""
    from lazyarr.frontend import manipulation

    shape, arguments = shape_and_arguments
    values = np.asarray(np.arange(int(np.prod(shape))).reshape(shape) % 5, dtype=dtype)  # (0-d: an array too)
    base = la.asarray(values)
    if not evaluated:
        base = base + np.zeros((), dtype)
    try:
        expected = values.reshape(*arguments)
    except ValueError:
        for _ in range(3):
            with pytest.raises(ValueError):
                base.reshape(*arguments)
        return
    base.reshape(*arguments), base.reshape(*arguments)  # noted by the Python path (the second time)
    made_in_c = base.reshape(*arguments)
    from_python = manipulation.reshape_method(base, *arguments)
    assert made_in_c._node is from_python._node
    link, python_link = made_in_c._base, from_python._base
    from lazyarr.frontend import views

    # made in C: the noted chain's functions (the Python method makes new ones each call: the same steps)
    assert link.read is views.VIEW_CHAINS[base.shape, base.dtype, ("reshape", arguments)][0]
    assert link.base is base and link.read(base._node) is python_link.read(base._node)
    assert link.write(base._node, made_in_c._node) is python_link.write(base._node, made_in_c._node)
    assert any(reference() is made_in_c for reference in base._views)
    np.testing.assert_array_equal(np.asarray(made_in_c), expected)
    if made_in_c.size:
        changed = values.copy()
        changed.reshape(*arguments)[(0,) * expected.ndim] = 1
        made_in_c[(0,) * expected.ndim] = 1
        np.testing.assert_array_equal(np.asarray(base), changed)


def test_c_reshape_leaves_other_calls_to_the_python_method():
    """Keywords, views of views, numpy integers and floats take the Python method (its errors)."""
    x = la.asarray(np.arange(6.0))
    for _ in range(3):
        assert x.reshape(2, 3).shape == (2, 3)
        assert x.reshape(2, 3, order="F").shape == (2, 3)
        assert x.reshape(np.int64(2), 3).shape == (2, 3)
        assert x[::2].reshape(3, 1).shape == (3, 1)
        with pytest.raises(TypeError):
            x.reshape(2.0, 3)
        with pytest.raises(TypeError):
            x.reshape(True, 6)
    np.testing.assert_array_equal(np.asarray(x.reshape(2, 3, order="F")), np.arange(6.0).reshape(2, 3, order="F"))


def _replayed_argument(data, shape, dtype):
    kind = data.draw(st.sampled_from(["evaluated", "pending", "float", "int", "bool", "complex", "none", "numpy"]))
    values = (np.arange(int(np.prod(shape))).reshape(shape) % 3 - 1).astype(dtype)
    if kind == "evaluated":
        return la.asarray(values)
    if kind == "pending":
        return la.asarray(values) * np.ones((), dtype)
    if kind == "float":
        return data.draw(st.sampled_from([0.0, -0.0, float("nan"), 0.5, -2.0, 1e300]))
    if kind == "int":
        return data.draw(st.sampled_from([0, 1, -1, 300, 2**63]))
    if kind == "bool":
        return data.draw(st.booleans())
    if kind == "complex":
        return data.draw(st.sampled_from([0j, complex(-0.0, 1.0), 1 + 2j]))
    if kind == "none":
        return None
    return values  # a NumPy array: the Python function (no template)


@given(st.data(), st.sampled_from(["where", "clip", "outer"]), st.sampled_from([(), (3,), (2, 3)]),
       st.sampled_from(["float32", "int8", "bool", "complex64"]), st.integers(1, 3))
def test_c_replayed_calls_are_the_python_functions(data, name, shape, dtype, count):
    """`la.where(m, x, y)`, `la.clip(x, lo, hi)`, `la.outer(u, v)` through their C slots replay the
    template templated_calls.replayed recorded for the same key (arrays by shape and dtype, Python
    scalars by scalar_key: 0.0, -0.0 and NaN by their bits, missing trailing arguments None): the
    node the Python function makes, or the Python function's error."""
    function = getattr(la, name)
    python = function.__wrapped__
    arity = 2 if name == "outer" else 3
    arguments = [la.asarray(np.arange(int(np.prod(shape))).reshape(shape) % 2 == 0) if name == "where"
                 else _replayed_argument(data, shape, dtype)]
    count = arity if name != "clip" else count  # (where's one-argument form is nonzero: not a replayed call)
    arguments += [_replayed_argument(data, shape, dtype) for _ in range(count - 1)]
    outcomes = []
    for call in (python, function, python, python):  # (the first records the template)
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                result = call(*arguments)
            outcomes.append(("result", result))
        except Exception as error:  # noqa: BLE001 (any error: the C slot must raise the Python function's)
            outcomes.append(("error", type(error)))
    assert outcomes[1][0] == outcomes[2][0]
    if outcomes[1][0] == "error":
        assert outcomes[1] == outcomes[2]
    elif type(outcomes[1][1]) is tuple:  # where(m, None, None): nonzero's arrays
        assert [np.asarray(item).tolist() for item in outcomes[1][1]] == [np.asarray(item).tolist()
                                                                           for item in outcomes[2][1]]
    elif outcomes[2][1]._node is outcomes[3][1]._node:  # the Python function makes one interned node: C too
        assert outcomes[1][1]._node is outcomes[2][1]._node
    else:  # (a NumPy argument, a copy, a fresh leaf: a new node each call, no template)
        np.testing.assert_array_equal(np.asarray(outcomes[1][1]), np.asarray(outcomes[2][1]))


def test_c_replayed_calls_take_their_templates_in_c():
    """Once recorded, `la.where(m, x, 0.0)` is made in C: the Python function is not reached."""
    from lazyarr.frontend import tensor_products

    x = la.asarray(np.array([-1.0, 0.5, 2.0]))
    mask = x > 0
    la.where(mask, x, 0.0), la.where(mask, x, -0.0), la.clip(x, 0, 1), la.outer(x, x)
    calls = []

    def spy(*args, **kwargs):
        calls.append(args)

    with mock.patch.object(elementwise, "replayed", spy), mock.patch.object(tensor_products, "replayed", spy):
        results = [la.where(mask, x, 0.0), la.where(mask, x, -0.0), la.clip(x, 0, 1), la.outer(x, x)]
    assert calls == []
    values = np.array([-1.0, 0.5, 2.0])
    np.testing.assert_array_equal(np.asarray(results[0]), np.where(values > 0, values, 0.0))
    assert np.signbit(np.asarray(results[1])).tolist() == [True, False, False]  # -0.0 is not 0.0's template
    np.testing.assert_array_equal(np.asarray(results[2]), np.clip(values, 0, 1))
    np.testing.assert_array_equal(np.asarray(results[3]), np.outer(values, values))
