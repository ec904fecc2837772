"""The verifier: valid graphs pass, and every forged instruction is named by its text line.

`make()` refuses invalid instructions, so the broken ones here are forged around it, as a
buggy pass might build them.
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lazyarr import dtypes
from lazyarr.hlo import Computation, HloError, Instruction, Module, get, make, text
from lazyarr.hlo.ops.elementwise import BINARY, UNARY
from lazyarr.hlo.verify import verify


def parameter(number, shape=(3,), dtype="float32"):
    return make("parameter", number=number, shape=tuple(shape), dtype=np.dtype(dtype))


def forge(op, operands=(), shape=(3,), dtype="float32", **attrs):
    """An Instruction built around make()'s checks."""
    instruction = object.__new__(Instruction)
    fields = {
        "op": get(op) if isinstance(op, str) else op, "shape": tuple(shape), "dtype": np.dtype(dtype),
        "operands": tuple(operands), "attrs": tuple(sorted(attrs.items())),
        "_attr_map": MappingProxyType(dict(attrs)),
    }
    for name, value in fields.items():
        object.__setattr__(instruction, name, value)
    return instruction


def forge_computation(name, parameters, outputs):
    """A Computation that skips its own parameter check."""
    computation = object.__new__(Computation)
    for field_name, value in (("name", name), ("parameters", tuple(parameters)), ("outputs", tuple(outputs))):
        object.__setattr__(computation, field_name, value)
    return computation


def single(output, parameters):
    return Computation("main", tuple(parameters), (output,))


EVERY_FAMILY = """
HloModule families

ENTRY main {
  x = f32[2,3] parameter(0)
  indices = s64[4,1] parameter(1)
  start = s32[] parameter(2)
  zero = f32[] constant(0)
  padded = f32[4,7] pad(x, zero), high={1,2}, interior={0,1}, low={1,0}
  flipped = f32[4,7] reverse(padded), dimensions={0,1}
  low = f32[4,7] broadcast(zero), dimensions={}, shape={4,7}
  clamped = f32[4,7] clamp(low, flipped, flipped)
  best = s64[7] argmax(clamped), dimension=0
  running = f32[4,7] cumulative(clamped), dimension=1, kind=sum
  rows = f32[4,7] gather(running, indices), index_dims={0}
  updates = f32[4,7] negate(rows)
  scattered = f32[4,7] scatter(running, indices, updates), index_dims={0}, mode=add
  window = f32[2,3] dynamic-slice(scattered, start, start), sizes={2,3}
  patched = f32[4,7] dynamic-update-slice(scattered, window, start, start)
  batched = f32[4,7,7] dot(patched, patched), lhs_batch={0}, lhs_contracting={}, rhs_batch={0}, \
rhs_contracting={}
  order = s64[4,7,7] custom-call(batched), options={{axis,2}}, output_index=0, target=argsort
  ramp = u8[4,7,7] iota(), dimension=1, dtype=u8, shape={4,7,7}
  ROOT outputs = (s64[7], s64[4,7,7], u8[4,7,7]) tuple(best, order, ramp)
}
"""


def test_graph_of_every_family_verifies():
    module = text.parse(EVERY_FAMILY)
    assert verify(module) is None
    assert verify(module.entry) is None


@st.composite
def elementwise_chains(draw):
    """A chain of elementwise ops over one parameter, each accepting the running dtype."""
    dtype = draw(st.sampled_from(dtypes.ALL))
    node = source = parameter(0, draw(st.lists(st.integers(0, 3), max_size=3)), dtype)
    for _ in range(draw(st.integers(1, 8))):
        table = draw(st.sampled_from([UNARY, BINARY]))
        names = [row[0] for row in table if node.dtype in row[2]]
        if names:
            name = draw(st.sampled_from(names))
            node = make(name, [node] * (1 if table is UNARY else 2))
    return single(node, [source])


@settings(max_examples=60, deadline=None)
@given(elementwise_chains())
def test_graphs_built_by_make_verify(computation):
    assert verify(computation) is None
    assert verify(Module("main", computation)) is None


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda x: forge("negate", [x], shape=(5,)),
         "verify main: negate.1 = f32[5] negate(p0): op rules give shape (3,) and dtype float32"),
        (lambda x: forge("negate", [x], dtype="float64"), "negate.1 = f64[3] negate(p0): op rules give"),
        (lambda x: forge("add", [x]), "add.1 = f32[3] add(p0): expects 2 operands, has 1"),
        (lambda x: forge("reduce", [x], shape=(), dimensions=(0,)), "missing attribute(s) ['kind']"),
        (lambda x: forge("negate", [x], colour="red"),
         "negate.1 = f32[3] negate(p0), colour=red: unknown attribute(s) ['colour']"),
        (lambda x: forge("reduce", [x], shape=(), dimensions=(0,), kind="average"),
         "op rules refuse it: reduce: kind 'average'"),
        (lambda x: forge(dataclasses.replace(get("negate")), [x]), "not the registered OpDef"),
        (lambda x: forge(dataclasses.replace(get("negate"), name="frobnicate"), [x]),
         "op 'frobnicate' is not registered"),
    ],
)
def test_forged_instruction_is_named_by_its_line(build, message):
    x = parameter(0)
    with pytest.raises(HloError) as caught:
        verify(single(build(x), [x]))
    assert message in str(caught.value)


def test_error_deep_in_a_graph_names_that_instruction():
    x = parameter(0)
    bad = forge("exp", [make("negate", [x])], shape=(4,))
    top = forge("sin", [bad], shape=(4,))  # consistent with its (bad) operand
    with pytest.raises(HloError, match=r"exp\.2 = f32\[4\] exp\(negate\.1\)"):
        verify(single(top, [x]))


def test_attribute_tuple_and_map_must_agree():
    x = parameter(0)
    node = forge("reduce", [x], shape=(), dimensions=(0,), kind="sum")
    object.__setattr__(node, "_attr_map", MappingProxyType({"dimensions": (0,), "kind": "max"}))
    with pytest.raises(HloError, match="attribute tuple and attribute map disagree"):
        verify(single(node, [x]))


def test_parameters_must_be_numbered_and_listed():
    first, second = parameter(0), parameter(1)
    with pytest.raises(HloError, match=r"parameters\[0\] is parameter\(1\), not parameter\(0\)"):
        verify(forge_computation("main", [second], [second]))
    with pytest.raises(HloError, match="parameters.0. is not a parameter"):
        verify(forge_computation("main", [make("negate", [first])], [first]))
    with pytest.raises(HloError, match="verify main: .*unlisted parameter"):
        verify(Computation("main", (first,), (make("add", [first, second]),)))


def test_outputs_and_operands_must_be_instructions():
    x = parameter(0)
    with pytest.raises(HloError, match=r"outputs\[0\] is not an Instruction"):
        verify(forge_computation("main", [x], ["not an instruction"]))
    with pytest.raises(HloError, match="operand 0 of .* is not an Instruction"):
        verify(single(forge("negate", ["x"]), [x]))


def test_unused_parameters_are_fine():
    parameters = [parameter(number) for number in range(3)]
    assert verify(single(make("exp", [parameters[1]]), parameters)) is None


def test_module_checks_its_other_computations():
    x = parameter(0)
    good = single(make("exp", [x]), [x])
    bad = Computation("helper", (x,), (forge("negate", [x], shape=(9,)),))
    with pytest.raises(HloError, match=r"verify helper: negate\.1 = f32\[9\]"):
        verify(Module("m", good, {"helper": bad}))
    with pytest.raises(HloError, match=r"computations\['other'\] must be a Computation named 'other'"):
        verify(Module("m", good, {"other": Computation("helper", (x,), (x,))}))
    with pytest.raises(HloError, match="shares the entry's name"):
        verify(Module("m", good, {"main": Computation("main", (x,), (x,))}))
    assert verify(Module("m", good, {"helper": Computation("helper", (x,), (x,))})) is None


def test_only_modules_and_computations_are_verified():
    with pytest.raises(TypeError, match="expected a Module or Computation"):
        verify(parameter(0))


def test_hundred_thousand_op_chain_verifies_without_recursion():
    source = parameter(0)
    node = source
    for index in range(100_000):
        node = make("negate" if index % 2 else "abs", [node])
    assert verify(single(node, [source])) is None
