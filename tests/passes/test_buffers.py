"""Buffer assignment: liveness, best-fit reuse of temporaries, live-out outputs, 64-byte sizes.

Hand-built entries pin the exact allocations; a hypothesis property checks on random fused
graphs that no two values sharing an allocation are ever live at once.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given

from lazyarr.hlo import Computation, Module, constant, make, text
from lazyarr.passes.buffers import ALIGNMENT, BufferAssigner, BufferAssignment, aligned_size, assign_buffers
from lazyarr.passes.fusion import FusionPolicy, InstructionFusion
from tests.passes.test_fusion import FUSED_TEXT, random_graphs

F32 = np.dtype("float32")


def parameter(number, shape, dtype=F32):
    return make("parameter", number=number, shape=tuple(shape), dtype=np.dtype(dtype))


def module_of(outputs, parameters):
    return Module("main", Computation("main", tuple(parameters), tuple(outputs)))


def matmul(left, right):
    return make("dot", [left, right], lhs_batch=(), rhs_batch=(), lhs_contracting=(1,), rhs_contracting=(0,))


def kinds(assignment):
    return [allocation.kind for allocation in assignment.allocations]


@pytest.mark.parametrize(("shape", "dtype", "size"), [
    ((3,), "float32", 64),        # 12 bytes -> one line
    ((16,), "float32", 64),       # exactly one line
    ((17,), "float32", 128),      # 68 bytes -> two lines
    ((100,), "float64", 832),     # 800 bytes -> 13 lines
    ((65,), "bool", 128),
    ((0, 4), "float32", 64),      # an empty array still gets a (smallest) buffer
    ((4,), "complex128", 64),
    ((), "int8", 64),
])
def test_sizes_are_rounded_up_to_64_bytes(shape, dtype, size):
    assert aligned_size(parameter(0, shape, dtype)) == size


def test_a_chain_of_dots_alternates_two_temporaries():
    x, weights = parameter(0, (10, 10)), parameter(1, (10, 10))
    value = x
    for _ in range(6):
        value = matmul(value, weights)
    module = module_of([value], [x, weights])
    changed = BufferAssigner().run(module)
    assert changed is False  # the pass only reports; the graph is unchanged
    assignment = module.notes["buffer-assignment"]
    assert isinstance(assignment, BufferAssignment)
    assert kinds(assignment) == ["parameter", "parameter", "temp", "temp", "output"]
    dots = [node for node in module.entry.post_order() if node.opcode == "dot"]
    # dot k+2 is defined after dot k was last read (by dot k+1): it takes dot k's buffer.
    assert [assignment.slot_of[node] for node in dots] == [2, 3, 2, 3, 2, 4]
    size = 448  # 10 * 10 * 4 = 400 bytes, aligned to 64
    assert all(allocation.size_bytes == size for allocation in assignment.allocations)
    assert assignment.total_bytes == 3 * size  # two temporaries and the output; parameters are given
    assert assignment.reused_bytes == 3 * size  # dots 3, 4 and 5 live in earlier dots' buffers
    assert assignment.live_range[dots[0]] == (2, 3)


def test_custom_call_chain_reuses_and_outputs_are_never_reused():
    x = parameter(0, (10, 10))
    values = [x]
    for _ in range(4):
        options = (("axis", 1), ("descending", False))
        values.append(make("custom-call", [values[-1]], target="sort", options=options))
    first, second, third, fourth = values[1:]
    module = module_of([fourth, first], [x])  # `first` is live-out: its buffer is never handed on
    assignment = assign_buffers(module)
    assert kinds(assignment) == ["parameter", "output", "temp", "temp", "output"]
    slots = [assignment.slot_of[node] for node in (first, second, third, fourth)]
    assert slots == [1, 2, 3, 4]  # `third` may not take `first`'s buffer
    assert assignment.output_slots == [4, 1]
    assert assignment.reused_bytes == 0
    assert assignment.live_range[first] == (1, 5)  # outputs live past the last step (4)


def test_best_fit_takes_the_smallest_free_buffer_that_fits():
    small, large = parameter(0, (10, 10)), parameter(1, (30, 30))
    zero = constant(0, np.int32)
    large_copy = make("negate", [large])  # defined first: lower allocation index
    small_copy = make("negate", [small])
    updated = make("dynamic-update-slice", [large_copy, small_copy, zero, zero])
    corner = make("slice", [updated], start=(0, 0), limit=(10, 10), stride=(1, 1))
    module = module_of([make("negate", [corner])], [small, large])
    assignment = assign_buffers(module)
    order = module.entry.post_order()
    assert [node.opcode for node in order] == [
        "parameter", "negate", "parameter", "negate", "constant", "dynamic-update-slice", "slice", "negate"
    ]
    # Free when `corner` is defined: large_copy's 3648 bytes and small_copy's 448. Best fit
    # takes the 448 (first fit would take the larger, lower-numbered one).
    assert assignment.slot_of[corner] == assignment.slot_of[small_copy]
    assert assignment.allocations[assignment.slot_of[large_copy]].size_bytes == 3648
    assert assignment.allocations[assignment.slot_of[zero]].kind == "constant"
    assert assignment.reused_bytes == 448
    # temps: large_copy, small_copy, updated (3648 + 448 + 3648); output 448; constant 64
    assert assignment.total_bytes == 3648 + 448 + 3648 + 448 + 64


def test_an_output_that_is_a_parameter_or_constant_gets_its_own_buffer():
    x = parameter(0, (4,))
    table = constant(np.arange(4, dtype=F32))
    module = module_of([x, table, make("add", [x, table]), x], [x])
    assignment = assign_buffers(module)
    assert kinds(assignment) == ["parameter", "constant", "output", "output", "output"]
    assert assignment.slot_of[x] == 0 and assignment.slot_of[table] == 1
    assert assignment.output_slots == [3, 4, 2, 3]  # copies, never the parameter's own buffer
    assert assignment.total_bytes == 4 * 64


def test_multi_output_fusion_outputs_share_a_launch_but_not_a_buffer():
    module = text.parse(FUSED_TEXT)
    assignment = assign_buffers(module)
    first, second = module.entry.outputs
    assert assignment.slot_of[first] != assignment.slot_of[second]
    assert assignment.live_range[first][0] == assignment.live_range[second][0] == 2  # one launch
    assert kinds(assignment) == ["parameter", "parameter", "output", "output"]


def test_fused_softmax_and_the_printed_assignment():
    x = parameter(0, (6, 7))
    rows = make("reduce", [x], dimensions=(1,), kind="max")
    shifted = make("exp", [make("subtract", [x, make("broadcast", [rows], shape=(6, 7), dimensions=(0,))])])
    total = make("reduce", [shifted], dimensions=(1,), kind="sum")
    result = make("divide", [shifted, make("broadcast", [total], shape=(6, 7), dimensions=(0,))])
    module = module_of([result], [x])
    InstructionFusion(FusionPolicy()).run(module)
    BufferAssigner().run(module)
    assignment = module.notes["buffer-assignment"]
    assert kinds(assignment) == ["parameter", "temp", "temp", "temp", "output"]
    printed = str(assignment)
    assert printed.splitlines()[0] == (
        f"BufferAssignment: 5 allocations, total {assignment.total_bytes} bytes, reused 0 bytes"
    )
    assert "allocation 0: size 192, parameter:\n  value p0 f32[6,7] live [0, 2]" in printed
    assert "allocation 4: size 192, output 0:" in printed


@given(random_graphs())
def test_values_sharing_an_allocation_are_never_live_together(graph):
    module, _ = graph
    InstructionFusion(FusionPolicy()).run(module)
    assignment = assign_buffers(module)
    order = module.entry.post_order()
    assert set(assignment.slot_of) == set(order)
    holders = {}
    for node in order:
        allocation = assignment.allocations[assignment.slot_of[node]]
        assert allocation.size_bytes >= aligned_size(node)
        assert allocation.size_bytes % ALIGNMENT == 0
        holders.setdefault(allocation.index, []).append(node)
    outputs = {id(output) for output in module.entry.outputs}
    for index, nodes in holders.items():
        kind = assignment.allocations[index].kind
        if kind != "temp":
            assert len(nodes) == 1  # parameters, constants and outputs hold one value each
            continue
        assert not any(id(node) in outputs for node in nodes)
        ranges = sorted(assignment.live_range[node] for node in nodes)
        for (_, end), (start, _) in zip(ranges, ranges[1:]):
            assert end < start  # the next value is defined after the last read of the previous
    for number, output in enumerate(module.entry.outputs):
        assert assignment.allocations[assignment.output_slots[number]].kind == "output"
    expected_total = sum(
        allocation.size_bytes for allocation in assignment.allocations if allocation.kind != "parameter"
    )
    assert assignment.total_bytes == expected_total
