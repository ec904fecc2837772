"""`Maker`, `remake` and `make_like`: make() with the op and attributes prepared once gives make()'s very node.

Interning makes structural equality identity, so a prepared maker must find what make() built
and make() what the maker built, in either order; the op's rules must still refuse what make()
refuses, with make()'s error, on every operand signature they have not seen.
"""

from __future__ import annotations

import threading
import weakref

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lazyarr.hlo.instruction as instruction_module
from lazyarr.hlo import HloError, Literal, Maker, constant, fresh_parameter, make, make_like, node_template, remake

F32, F64, I32 = np.dtype("float32"), np.dtype("float64"), np.dtype("int32")

# (op, attributes, operand shapes and dtypes): ops the frontend prepares (slices, reverses,
# reshapes, transposes, converts, reductions, comparisons, broadcasts).
CASES = [
    ("slice", {"start": (1, 0), "limit": (3, 2), "stride": (1, 1)}, [((4, 3), F32)]),
    ("reverse", {"dimensions": (1,)}, [((4, 3), F32)]),
    ("reshape", {"shape": (3, 4)}, [((4, 3), F32)]),
    ("transpose", {"permutation": (1, 0)}, [((4, 3), I32)]),
    ("convert", {"dtype": np.float64}, [((4, 3), F32)]),  # a scalar type, frozen to its dtype as make() does
    ("convert", {"dtype": F64}, [((4, 3), I32)]),
    ("reduce", {"kind": "sum", "dimensions": (0,)}, [((4, 3), F32)]),
    ("compare", {"direction": "LT"}, [((4, 3), F32), ((4, 3), F32)]),
    ("broadcast", {"shape": (2, 4, 3), "dimensions": (1, 2)}, [((4, 3), F32)]),
]


@given(st.sampled_from(CASES), st.booleans())
def test_a_maker_gives_the_node_make_gives(case, maker_first):
    op, attributes, operand_types = case
    operands = [fresh_parameter(shape, dtype) for shape, dtype in operand_types]
    maker = Maker(op, **attributes)
    if maker_first:
        prepared = maker(*operands)
        assert make(op, operands, **attributes) is prepared
    else:
        made = make(op, operands, **attributes)
        assert maker(*operands) is made
    fresh = [fresh_parameter(shape, dtype) for shape, dtype in operand_types]
    assert maker(*fresh) is make(op, fresh, **attributes)  # a new node, interned under make()'s key
    assert maker(*fresh).operands == tuple(fresh)


def test_a_maker_runs_the_rules_on_each_new_signature_and_refuses_as_make_does():
    slicer = Maker("slice", start=(1,), limit=(3,), stride=(1,))
    assert slicer(fresh_parameter((5,), F32)).shape == (2,)
    for operand in (fresh_parameter((2,), F32), fresh_parameter((5, 2), F32)):  # too short; wrong rank
        with pytest.raises(HloError) as from_make:
            make("slice", [operand], start=(1,), limit=(3,), stride=(1,))
        with pytest.raises(HloError) as from_maker:
            slicer(operand)
        assert str(from_maker.value) == str(from_make.value)
    with pytest.raises(HloError, match="is not an Instruction"):
        slicer(np.zeros(5, np.float32))
    with pytest.raises(HloError, match="missing attribute"):
        Maker("slice", start=(1,))(fresh_parameter((5,), F32))


def test_a_maker_with_an_attribute_make_would_not_remember_still_interns():
    # A constant's Literal is not a plain attribute (make() keeps no memo of it): the maker
    # takes make()'s whole path every time, and the node is still the interned one.
    literal = Literal(np.float32(2.5))
    maker = Maker("constant", literal=literal)
    assert maker.local is None
    assert maker() is make("constant", literal=Literal(np.float32(2.5))) is constant(np.float32(2.5))


def test_threads_making_nodes_while_the_intern_table_is_swept():
    """Several threads recording distinct nodes (each batch enough to sweep the table) never see
    the sweep fail on a table another thread grows (dask's threaded scheduler records so)."""
    failures = []

    def record(offset):
        try:
            for round_ in range(3):
                kept = [make("constant", literal=Literal(float(offset * 100_000 + round_ * 10_000 + k), np.float64))
                        for k in range(6_000)]
                del kept
        except BaseException as error:  # reported by the main thread
            failures.append(error)

    threads = [threading.Thread(target=record, args=(offset,)) for offset in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


@given(st.sampled_from(CASES), st.booleans())
def test_remake_and_make_like_give_the_node_make_gives(case, remake_first):
    """Passes rebuild nodes over new operands of the same types (`remake`), and the frontend's
    direct path records the next node of a remembered kind (`make_like`): make()'s node, either
    order, with the rules not run again."""
    op, attributes, operand_types = case
    model = make(op, [fresh_parameter(shape, dtype) for shape, dtype in operand_types], **attributes)
    fresh = [fresh_parameter(shape, dtype) for shape, dtype in operand_types]
    if remake_first:
        rebuilt = remake(model, fresh)
        assert make(op, fresh, **attributes) is rebuilt
    else:
        rebuilt = make(op, fresh, **attributes)
        assert remake(model, fresh) is rebuilt
    assert rebuilt.operands == tuple(fresh) and (rebuilt.shape, rebuilt.dtype) == (model.shape, model.dtype)
    assert make_like(node_template(model), *fresh) is rebuilt


def test_remake_over_operands_of_other_types_runs_the_rules():
    """A pass may rebuild a node over operands of another shape or dtype: the rules decide the
    result's type again, and refuse what make() refuses."""
    total = make("add", [fresh_parameter((3,), F32), fresh_parameter((3,), F32)])
    wider = remake(total, [fresh_parameter((3,), F64), fresh_parameter((3,), F64)])
    assert wider.dtype == F64 and wider is make("add", list(wider.operands))
    longer = remake(total, [fresh_parameter((5,), F32), fresh_parameter((5,), F32)])
    assert longer.shape == (5,)
    with pytest.raises(HloError):
        remake(total, [fresh_parameter((3,), F32), fresh_parameter((4,), F32)])


@given(st.lists(st.integers(1, 6), min_size=1, max_size=3).map(tuple), st.sampled_from([F32, F64, I32]))
def test_a_bound_parameter_keeps_its_buffer_alive_only_while_it_lives(shape, dtype):
    # fresh_parameter remembers a model leaf per (shape, dtype); the model must not be the
    # first bound leaf, or the first buffer of every signature would live as long as the process.
    instruction_module._CHECKED_PARAMETERS.pop((shape, dtype), None)  # this signature's first leaf, as in a new process
    buffer = np.zeros(shape, dtype)
    watcher = weakref.ref(buffer)
    leaf = fresh_parameter(shape, dtype, bound=buffer)
    again = fresh_parameter(shape, dtype, bound=np.ones(shape, dtype))
    assert leaf.shape == again.shape == shape and leaf.attr("number") != again.attr("number")
    del buffer, leaf  # freed at once by reference counting (no cycles), unless something keeps it
    assert watcher() is None
