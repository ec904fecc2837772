"""Pipeline, FixedPoint, DeadCodeEliminator and default_pipeline.

Pipeline mechanics with small recording passes (order, disabled names, verify, dump, timings,
fixed-point termination), then the property that matters: random small graphs, run through
the whole default pipeline with the verifier on, evaluate bit-identically.
"""

from __future__ import annotations

import doctest
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lazyarr import _flags, dtypes
from lazyarr.hlo import Computation, HloError, Module, constant, evaluate, make, text
from lazyarr.hlo.ops.elementwise import BINARY, COMPARISONS, UNARY
from lazyarr.hlo.ops.reduce import REDUCE_KINDS
from lazyarr.passes import dce, default, pipeline
from lazyarr.passes.dce import DeadCodeEliminator
from lazyarr.passes.default import default_pipeline
from lazyarr.passes.pipeline import FixedPoint, Pass, Pipeline
from tests.assertions import assert_identical
from tests.strategies import arrays

SHAPES = st.lists(st.integers(0, 3), max_size=3).map(tuple)


def parameter(number, shape, dtype):
    return make("parameter", number=number, shape=tuple(shape), dtype=np.dtype(dtype))


def small_module():
    x = parameter(0, (2,), np.float32)
    return Module("m", Computation("main", (x,), (make("negate", [x]),)))


class Recording:
    """A pass that logs its runs and reports `changes` (a list consumed one per run; then False)."""

    def __init__(self, name, log, changes=()):
        self.name, self.log, self.changes = name, log, list(changes)

    def run(self, module):
        self.log.append(self.name)
        return self.changes.pop(0) if self.changes else False


class Forging:
    """A pass that files a computation under the wrong name: the verifier must catch it."""

    name = "forge"

    def run(self, module):
        module.computations["wrong"] = Computation("other", (), ())
        return True




# ------------------------------------------------------------------------- Pipeline


def test_passes_run_in_order_and_are_timed():
    log = []
    passes = [Recording("a", log, [True]), Recording("b", log), Recording("c", log)]
    line = Pipeline(passes, disabled=(), verify=False)
    assert line.run(small_module()) is True
    assert log == ["a", "b", "c"]
    assert [(name, changed) for name, _, changed in line.timings] == [("a", True), ("b", False), ("c", False)]
    assert all(seconds >= 0 for _, seconds, _ in line.timings)
    assert Pipeline([Recording("a", [])], disabled=()).run(small_module()) is False


def test_disabled_passes_are_skipped_anywhere_in_the_pipeline():
    log = []
    group = FixedPoint([Recording("inner", log), Recording("other", log)], name="group")
    line = Pipeline([Recording("first", log), group], disabled=["inner"], verify=False)
    line.run(small_module())
    assert log == ["first", "other"]
    log.clear()
    Pipeline([Recording("first", log), group], disabled=["group"]).run(small_module())
    assert log == ["first"]


def test_disabled_defaults_to_the_flags():
    saved = _flags.FLAGS
    try:
        _flags.with_overrides(disable_passes=("b",), verify=True)
        log = []
        line = Pipeline([Recording("a", log), Recording("b", log)])
        assert line.disabled == {"b"} and line.verify is True
        line.run(small_module())
        assert log == ["a"]
    finally:
        _flags.FLAGS = saved


def test_unknown_disabled_name_raises_listing_the_pass_names():
    with pytest.raises(ValueError, match=r"\['simplfy'\].*cse, dce, fold, simplification, simplify"):
        default_pipeline(disabled=["simplfy"])


def test_verify_runs_after_each_pass_and_names_the_pass():
    with pytest.raises(HloError, match="after pass forge: verify module m"):
        Pipeline([Forging()], disabled=(), verify=True).run(small_module())
    Pipeline([Forging()], disabled=(), verify=False).run(small_module())  # not verified: no error


def test_dump_hook_receives_every_stage_in_order():
    stages = []
    log = []
    line = Pipeline(
        [Recording("a", log), FixedPoint([Recording("b", log, [True])], name="group")],
        disabled=(),
        dump=lambda stage, module: stages.append((stage, text.print_module(module))),
    )
    module = small_module()
    line.run(module)
    assert [stage for stage, _ in stages] == ["a", "b", "b"]  # the group ran b twice
    assert all(printed == text.print_module(module) for _, printed in stages)


def test_default_pipeline_dumps_what_each_pass_made():
    module = text.parse(
        "HloModule m\nENTRY main {\n  p0 = s32[2] parameter(0)\n  n = s32[2] negate(p0)\n"
        "  ROOT r = s32[2] negate(n)\n}"
    )
    stages = []

    def dump(stage, target):
        stages.append((stage, text.print_module(target)))

    line = default_pipeline(disabled=(), dump=dump)
    line.run(module)
    assert stages[0][0] == "simplify" and "negate" not in stages[0][1]
    assert [stage for stage, _ in stages] == [name for name, _, _ in line.timings]


def test_pipeline_refuses_what_is_not_a_pass():
    with pytest.raises(TypeError, match="is not a Pass"):
        Pipeline([object()], disabled=())
    with pytest.raises(TypeError, match="expected a Module"):
        Pipeline([], disabled=()).run("module")
    assert isinstance(Recording("a", []), Pass)


# ----------------------------------------------------------------------- FixedPoint


def test_fixed_point_repeats_until_nothing_changes():
    """Rounds repeat while a pass changes the module; a pass is skipped while nothing changed
    since it last changed nothing (b's third run could find nothing: a changed nothing after it)."""
    log = []
    group = FixedPoint([Recording("a", log, [True, True]), Recording("b", log)], name="group")
    module = small_module()
    assert group.run(module) is True
    assert log == ["a", "b", "a", "b", "a"]
    assert (group.iterations, group.converged) == (3, True)
    assert module.notes["group"] == [{"iterations": 3, "converged": True}]
    log.clear()
    late = FixedPoint([Recording("a", log), Recording("b", log, [True])], name="late")
    assert late.run(module) is True
    assert log == ["a", "b", "a", "b"]  # b changed the module: both run again (b may change it again)


def test_a_pass_that_settles_itself_is_not_run_again_for_nothing():
    """A pass iterating to its own fixed point says so (`settled`): after it changed the module
    and the next pass changed nothing, the round is the last."""
    log = []

    class Settling(Recording):
        settled = True

    group = FixedPoint([Settling("s", log, [True]), Recording("b", log)], name="group")
    assert group.run(small_module()) is True
    assert log == ["s", "b"]
    assert (group.iterations, group.converged) == (1, True)


def test_fixed_point_stops_at_its_limit_and_records_it():
    class Restless:
        name = "restless"

        def run(self, module):
            return True

    group = FixedPoint([Restless()], name="group", max_iterations=5)
    module = small_module()
    line = Pipeline([group], disabled=())
    assert line.run(module) is True
    assert (group.iterations, group.converged) == (5, False)
    assert module.notes["group"] == [{"iterations": 5, "converged": False}]
    assert len(line.timings) == 5
    with pytest.raises(ValueError, match="max_iterations"):
        FixedPoint([], max_iterations=0)


# ---------------------------------------------------------------- DeadCodeEliminator


def test_dce_removes_computations_nothing_calls_and_keeps_called_ones():
    x = parameter(0, (2,), np.float32)
    inner = Computation("inner", (x,), (make("exp", [x]),))
    outer = Computation("outer", (x,), (make("fusion", [x], kind="loop", computation=inner),))
    unused = Computation("unused", (x,), (make("negate", [x]),))
    entry = Computation("main", (x,), (make("fusion", [x], kind="loop", computation=outer),))
    module = Module("m", entry, {"inner": inner, "outer": outer, "unused": unused})
    assert DeadCodeEliminator().run(module) is True
    assert sorted(module.computations) == ["inner", "outer"]
    assert DeadCodeEliminator().run(module) is False


# ------------------------------------------------------------------ default_pipeline


def test_default_pipeline_is_the_documented_list():
    assert default_pipeline(disabled=()).pass_names() == [
        "simplification", "simplify", "fold", "cse", "simplification", "simplify", "fold", "transpose-folding", "dce"
    ]


def test_default_pipeline_with_a_fusion_policy_appends_fusion_and_buffers():
    fusion_policy = pytest.importorskip("lazyarr.passes.fusion_policy")
    line = default_pipeline(fusion_policy.FusionPolicy(), disabled=())
    from lazyarr.passes.buffers import BufferAssigner
    from lazyarr.passes.fusion import InstructionFusion

    fusion, dead_code, buffers = line.passes[-3:]
    assert isinstance(fusion, InstructionFusion) and isinstance(buffers, BufferAssigner)
    assert isinstance(dead_code, DeadCodeEliminator)


def test_docstring_examples():
    for module in (pipeline, dce, default):
        assert doctest.testmod(module).failed == 0


# --------------------------------------------------------- random graphs, whole pipeline


def _splat(value, like):
    scalar = constant(value, like.dtype)
    return make("broadcast", [scalar], shape=like.shape, dimensions=()) if like.shape else scalar


def _identity_of(op, dtype):
    if op == "add":
        if dtypes.is_complex(dtype):
            return complex(-0.0, -0.0)
        return -0.0 if dtypes.is_floating(dtype) else 0
    return 0 if op == "subtract" else 1


def _elementwise(draw, pick):
    operand = pick()
    if draw(st.booleans()):
        return make(draw(st.sampled_from([row[0] for row in UNARY if operand.dtype in row[2]])), [operand])
    other = pick(operand.shape, operand.dtype)
    name = draw(st.sampled_from([row[0] for row in BINARY if operand.dtype in row[2]]))
    return make(name, draw(st.permutations([operand, other])))


def _with_identity(draw, pick):
    """x op identity (or a near miss: +0.0, 0 for multiply): the simplifier's bait."""
    operand = pick()
    op = draw(st.sampled_from(["add", "subtract", "multiply", "divide", "power"]))
    value = draw(st.sampled_from([_identity_of(op, operand.dtype), 0, 2, -0.0]))
    return make(op, [operand, _splat(value, operand)])


def _double(draw, pick):
    operand = pick()
    op = draw(st.sampled_from(["negate", "not", "reverse", "transpose", "convert"]))
    if op == "reverse":
        return make(op, [make(op, [operand], dimensions=tuple(range(operand.ndim)))], dimensions=(0,))
    if op == "transpose":
        permutation = tuple(reversed(range(operand.ndim)))
        return make(op, [make(op, [operand], permutation=permutation)], permutation=permutation)
    if op == "convert":
        middle, target = draw(st.sampled_from(dtypes.ALL)), draw(st.sampled_from(dtypes.ALL))
        return make(op, [make(op, [operand], dtype=middle)], dtype=target)
    return make(op, [make(op, [operand])])


def _compare_select(draw, pick):
    left = pick()
    right = pick(left.shape, left.dtype)
    direction = draw(st.sampled_from(sorted(COMPARISONS)))
    predicate = make("compare", draw(st.permutations([left, right])), direction=direction)
    if draw(st.booleans()):
        predicate = _splat(draw(st.booleans()), predicate)
    return make("select", [predicate, left, right])


def _layout(draw, pick):
    operand = pick()
    step = draw(st.sampled_from(["reshape", "broadcast", "slice", "concatenate", "reduce"]))
    if step == "reshape":
        return make("reshape", [make("reshape", [operand], shape=(operand.size,))], shape=operand.shape[::-1])
    if step == "broadcast":
        dimensions = tuple(range(1, operand.ndim + 1))
        return make("broadcast", [operand], shape=(2, *operand.shape), dimensions=dimensions)
    if step == "slice":
        return make(
            "slice", [operand], start=(0,) * operand.ndim,
            limit=tuple(-(-size // 2) for size in operand.shape), stride=(1,) * operand.ndim,
        )
    if step == "concatenate":
        return make("concatenate", [operand, pick(operand.shape, operand.dtype)], dimension=0)
    kinds = [kind for kind, row in sorted(REDUCE_KINDS.items()) if operand.dtype in row[1]]
    dimensions = draw(st.sampled_from([(), tuple(range(operand.ndim))]))
    return make("reduce", [operand], dimensions=dimensions, kind=draw(st.sampled_from(kinds)))


def _small_constant(draw, pick):
    like = pick()
    return constant(draw(arrays(like.dtype, like.shape)))


def _gather(draw, pick):
    """A gather whose constant indices may be out of range: evaluation must still raise."""
    operand = pick()
    if operand.ndim == 0:
        raise HloError("gather: a 0-d operand has no dimension to index")
    size = operand.shape[0]
    indices = draw(st.lists(st.integers(-size - 1, size), min_size=1, max_size=3))
    return make("gather", [operand, constant(np.array(indices, np.int64).reshape(-1, 1))], index_dims=(0,))


BUILDERS = [_elementwise, _elementwise, _with_identity, _with_identity, _double, _compare_select, _layout,
            _small_constant, _gather]


@st.composite
def random_graphs(draw):
    """(outputs, parameters, arguments) of a random graph over 1-2 parameters."""
    parameters = [
        parameter(number, draw(SHAPES), draw(st.sampled_from(dtypes.ALL)))
        for number in range(draw(st.integers(1, 2)))
    ]
    pool = list(parameters)

    def pick(shape=None, dtype=None):
        fitting = [node for node in pool if shape is None or (node.shape == shape and node.dtype == dtype)]
        return fitting[-1] if draw(st.integers(0, 2)) else draw(st.sampled_from(fitting))

    for _ in range(draw(st.integers(3, 12))):
        try:
            pool.append(draw(st.sampled_from(BUILDERS))(draw, pick))
        except HloError:
            pass  # the op refuses this operand (dtype, rank); draw another step
    used = {id(operand) for node in pool for operand in node.operands}
    outputs = [node for node in pool[len(parameters):] if id(node) not in used] or [pool[-1]]
    arguments = [draw(arrays(node.dtype, node.shape)) for node in parameters]
    return tuple(outputs), tuple(parameters), arguments


@given(random_graphs())
def test_default_pipeline_keeps_every_bit_of_random_graphs(graph):
    outputs, parameters, arguments = graph
    original = Computation("main", parameters, outputs)
    module = Module("main", original)
    line = default_pipeline(disabled=(), verify=True)
    line.run(module)
    try:
        want = evaluate(original, arguments)
    except IndexError as error:  # an out-of-range gather: the optimized module raises it too
        with pytest.raises(IndexError, match=re.escape(str(error))):
            evaluate(module.entry, arguments)
        return
    got = evaluate(module.entry, arguments)
    for got_value, want_value in zip(got, want, strict=True):
        assert_identical(got_value, want_value)
    assert line.run(module) is False  # settled: running the pipeline again changes nothing
