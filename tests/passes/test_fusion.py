"""Fusion: which instructions share a kernel, why not when they do not, and that fusing never
changes a single bit of any result (the NumPy evaluator runs the module before and after).

Graphs are built with `make` or parsed from HLO text; a hypothesis property runs the pass on
random graphs mixing elementwise, broadcast, reduce, slice, transpose, dot and custom-call sort.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from lazyarr import dtypes
from lazyarr.hlo import Computation, HloError, Module, constant, evaluate, make, text
from lazyarr.hlo.op import REDUCTION
from lazyarr.hlo.ops.custom import custom_call_outputs
from lazyarr.hlo.verify import verify
from lazyarr.passes import fusion_siblings
from lazyarr.passes.fusion import FusionDecision, FusionPolicy, FusionReport, InstructionFusion
from lazyarr.passes.fusion_siblings import Cluster, _reaches, _Walk
from tests.strategies import elements

F32 = np.dtype("float32")


def parameter(number, shape, dtype=F32):
    return make("parameter", number=number, shape=tuple(shape), dtype=np.dtype(dtype))


def broadcast(operand, shape, dimensions):
    return make("broadcast", [operand], shape=tuple(shape), dimensions=tuple(dimensions))


def module_of(outputs, parameters):
    return Module("main", Computation("main", tuple(parameters), tuple(outputs)))


def same_bits(left, right):
    """Equal shape, then dtype, then every byte (NaN payloads and signed zeros included)."""
    assert left.shape == right.shape
    assert left.dtype == right.dtype
    assert np.ascontiguousarray(left).tobytes() == np.ascontiguousarray(right).tobytes()


def fuse(module, arguments, policy=None):
    """Run fusion; check verify, the text round trip and bit-identical evaluation. Returns
    the entry's instructions other than parameters, in post order."""
    before = evaluate(module.entry, arguments)
    changed = InstructionFusion(policy or FusionPolicy()).run(module)
    verify(module)
    printed = text.print_module(module)
    parsed = text.parse(printed)
    assert text.print_module(parsed) == printed
    assert parsed.entry.outputs == module.entry.outputs  # interning: the very same instructions
    after = evaluate(module.entry, arguments)
    for expected, got in zip(before, after, strict=True):
        same_bits(expected, got)
    assert InstructionFusion(policy or FusionPolicy()).run(module) is False  # idempotent
    assert isinstance(changed, bool)
    return [node for node in module.entry.post_order() if node.opcode != "parameter"]


def fused_opcodes(fusion):
    """Opcodes computed inside a fusion instruction's computation (parameters left out)."""
    called = fusion.attr("computation")
    return sorted(node.opcode for node in called.post_order() if node.opcode != "parameter")


def random_array(shape, dtype=F32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# ------------------------------------------------------------------------ the fusion op


FUSED_TEXT = """HloModule m

fused_computation.1 {
  p0 = f32[2,3] parameter(0)
  p1 = f32[3] parameter(1)
  broadcast.2 = f32[2,3] broadcast(p1), dimensions={1}, shape={2,3}
  add.3 = f32[2,3] add(p0, broadcast.2)
  exp.4 = f32[2,3] exp(add.3)
  reduce.5 = f32[2] reduce(exp.4), dimensions={1}, kind=sum
  ROOT outputs = (f32[2,3], f32[2]) tuple(exp.4, reduce.5)
}

ENTRY main {
  p0 = f32[2,3] parameter(0)
  p1 = f32[3] parameter(1)
  fusion.2 = f32[2,3] fusion(p0, p1), computation=fused_computation.1, kind=input, output_index=0
  fusion.3 = f32[2] fusion(p0, p1), computation=fused_computation.1, kind=input, output_index=1
  ROOT outputs = (f32[2,3], f32[2]) tuple(fusion.2, fusion.3)
}
"""


def test_fusion_op_text_round_trip_verify_and_evaluate():
    module = text.parse(FUSED_TEXT)
    assert text.print_module(module) == FUSED_TEXT
    verify(module)
    called = module.computations["fused_computation.1"]
    assert all(output.attr("computation") == called for output in module.entry.outputs)
    again = text.parse(FUSED_TEXT)
    assert again.entry.outputs == module.entry.outputs  # equal computations intern as one fusion
    x, bias = random_array((2, 3)), random_array((3,), seed=1)
    exp_values, sums = evaluate(module.entry, [x, bias])
    expected_exp = np.exp(x + bias)
    same_bits(exp_values, expected_exp)
    same_bits(sums, np.sum(expected_exp, axis=1, dtype=F32))


def test_parser_refuses_an_undefined_computation():
    broken = FUSED_TEXT.replace("computation=fused_computation.1, kind=input, output_index=1",
                                "computation=fused_computation.9, kind=input, output_index=1")
    with pytest.raises(HloError, match=r"line 17: computation 'fused_computation.9' is not defined"):
        text.parse(broken)


def test_verify_refuses_a_fusion_calling_a_computation_the_module_lacks():
    module = text.parse(FUSED_TEXT)
    module.computations.clear()
    with pytest.raises(HloError, match=r"fusion.2 calls computation 'fused_computation.1', which is not"):
        verify(module)


# --------------------------------------------------------------------------- decisions


def test_fusion_decision_is_truthy_only_for_yes_and_keeps_its_reason():
    assert FusionDecision.yes() and FusionDecision.yes().reason == ""
    refused = FusionDecision.no("consumer is a dot (runs through BLAS)")
    assert not refused
    assert refused.reason == "consumer is a dot (runs through BLAS)"
    assert str(refused) == "no: consumer is a dot (runs through BLAS)"


@pytest.mark.parametrize(("build", "fusible", "cheap"), [
    (lambda x: make("exp", [x]), True, False),
    (lambda x: make("add", [x, x]), True, True),
    (lambda x: make("divide", [x, x]), True, False),
    (lambda x: make("convert", [x], dtype=np.dtype("float64")), True, True),
    (lambda x: broadcast(x, (2, 4), (1,)), True, True),
    (lambda x: make("transpose", [make("reshape", [x], shape=(2, 2))], permutation=(1, 0)), True, True),
    (lambda x: make("reduce", [x], dimensions=(0,), kind="sum"), True, False),
    (lambda x: make("gather", [x, constant([[1], [0]], np.int64)], index_dims=(0,)), True, False),
    (lambda x: constant(2.0, F32), True, True),
    (lambda x: constant(np.arange(100, dtype=F32)), False, True),
    (lambda x: make("dot", [x, x], lhs_batch=(), rhs_batch=(), lhs_contracting=(0,),
                    rhs_contracting=(0,)), False, False),
    (lambda x: custom_call_outputs("sort", [x], axis=0, descending=False)[0], False, False),
    (lambda x: x, False, False),
])
def test_policy_tables(build, fusible, cheap):
    policy = FusionPolicy()
    instruction = build(parameter(0, (4,)))
    assert bool(policy.is_fusible(instruction)) is fusible
    if fusible:
        assert policy.is_cheap(instruction) is cheap


def test_policy_reasons_read_as_sentences():
    policy = FusionPolicy()
    x = parameter(0, (65, 65))  # above max_tiny_elements: cheap producers may be duplicated
    dot = make("dot", [x, x], lhs_batch=(), rhs_batch=(), lhs_contracting=(1,), rhs_contracting=(0,))
    exp = make("exp", [x])
    reduce = make("reduce", [exp], dimensions=(1,), kind="sum")
    sort = custom_call_outputs("sort", [exp], axis=0, descending=False)[0]
    negate = make("negate", [exp])
    assert policy.should_fuse(exp, dot, [dot]).reason == "consumer is a dot (runs through BLAS)"
    assert policy.should_fuse(sort, negate, [negate]).reason == "producer is a custom-call (runs on the host)"
    assert policy.should_fuse(reduce, negate, [negate]).reason == (
        "producer is a reduce: fusing it would recompute the reduction for every output element"
    )
    three_users = [negate, make("log", [exp]), make("sqrt", [exp])]
    assert policy.should_fuse(exp, negate, three_users).reason == (
        "producer exp has 3 users and is expensive: fusing would compute it 3 times"
    )
    assert policy.should_fuse(exp, negate, [negate])
    assert policy.should_fuse(make("add", [x, x]), negate, three_users)  # cheap: duplicated
    tiny = parameter(1, (2, 2))
    tiny_users = [make("negate", [make("add", [tiny, tiny])]), make("exp", [make("add", [tiny, tiny])])]
    assert policy.should_fuse(make("add", [tiny, tiny]), tiny_users[0], tiny_users).reason == (
        "producer add has 2 users and at most 4 elements: materialized once rather than copied into each user's kernel"
    )


# ----------------------------------------------------------------------- the main cases


def test_sum_of_x_plus_y_times_z_is_one_input_fusion():
    x, y, z = (parameter(number, (4, 5)) for number in range(3))
    total = make("reduce", [make("add", [x, make("multiply", [y, z])])], dimensions=(0, 1), kind="sum")
    module = module_of([total], [x, y, z])
    arguments = [random_array((4, 5), seed=seed) for seed in range(3)]
    (fusion,) = fuse(module, arguments)
    assert fusion.opcode == "fusion"
    assert fusion.attr("kind") == "input"
    assert fused_opcodes(fusion) == ["add", "multiply", "reduce"]
    # Parameters in the order the kernel first reads them, once its commutative operands are
    # in the kernel's own canonical order (computed values before inputs): add(y * z, x).
    assert fusion.operands == (y, z, x)
    report = module.notes["fusion"]
    assert isinstance(report, FusionReport)
    assert report.groups == [("fused_computation.1", "input", ["multiply.3", "add.4", "reduce.5"])]


def softmax(x):
    rows, columns = x.shape
    maximum = make("reduce", [x], dimensions=(1,), kind="max")
    shifted = make("subtract", [x, broadcast(maximum, (rows, columns), (0,))])
    exponential = make("exp", [shifted])
    total = make("reduce", [exponential], dimensions=(1,), kind="sum")
    return make("divide", [exponential, broadcast(total, (rows, columns), (0,))])


def test_softmax_is_three_fusions():
    # 1: max over rows (a reduction is a kernel root). 2: exp(x - max) and its row sum in one
    # multi-output kernel (exp feeds both the sum and the divide and is expensive, so it is
    # not duplicated; it becomes an extra output of the sum's kernel). 3: the divide, which
    # reads the finished sums (a reduction is complete only when its kernel ends).
    x = parameter(0, (6, 7))
    module = module_of([softmax(x)], [x])
    instructions = fuse(module, [random_array((6, 7))])
    kernels = {node.attr("computation").name for node in instructions}
    assert [node.opcode for node in instructions] == ["fusion"] * 4
    assert len(kernels) == 3
    multi_output = [node for node in instructions if fused_opcodes(node) == ["broadcast", "exp", "reduce",
                                                                             "subtract"]]
    assert [node.attr("output_index") for node in multi_output] == [0, 1]
    decisions = [str(decision) for _, _, decision in module.notes["fusion"].decisions]
    assert "no: producer exp has 2 users and is expensive: fusing would compute it 2 times" in decisions


def test_with_row_reductions_softmax_is_one_fusion():
    # A backend whose emitter runs row kernels (the CPU's) computes each row's max and sum in
    # the divide's kernel: every reduction reads rows of the loop shape and is read only at
    # its own row (through broadcasts over the trailing dimension).
    x = parameter(0, (6, 7))
    module = module_of([softmax(x)], [x])
    instructions = fuse(module, [random_array((6, 7))], FusionPolicy(row_reductions=True))
    assert [node.opcode for node in instructions] == ["fusion"]
    assert fused_opcodes(instructions[0]) == ["broadcast", "broadcast", "divide", "exp", "reduce", "reduce",
                                              "subtract"]


@pytest.mark.parametrize("case", ["another row", "columns", "returned", "transposed"])
def test_row_reductions_only_where_each_row_reads_its_own(case):
    x = parameter(0, (6, 6))
    if case == "columns":  # reduced over the leading dimension, broadcast back over it
        total = make("reduce", [x], dimensions=(0,), kind="sum")
        outputs = [make("divide", [x, broadcast(total, (6, 6), (1,))])]
    elif case == "another row":  # row i reads row 5 - i's maximum
        maximum = make("reduce", [x], dimensions=(1,), kind="max")
        flipped = make("reverse", [maximum], dimensions=(0,))
        outputs = [make("subtract", [x, broadcast(flipped, (6, 6), (0,))])]
    elif case == "returned":  # the reduction is a result too: stored by its own kernel
        maximum = make("reduce", [x], dimensions=(1,), kind="max")
        outputs = [maximum, make("subtract", [x, broadcast(maximum, (6, 6), (0,))])]
    else:  # the kernel transposes what reads the reduction: it would be read at another row
        maximum = make("reduce", [x], dimensions=(1,), kind="max")
        shifted = make("subtract", [x, broadcast(maximum, (6, 6), (0,))])
        outputs = [make("add", [make("transpose", [shifted], permutation=(1, 0)), x])]
    module = module_of(outputs, [x])
    instructions = fuse(module, [random_array((6, 6))], FusionPolicy(row_reductions=True))
    reductions_inside = [node for node in instructions if node.opcode == "fusion"
                         and "reduce" in fused_opcodes(node) and len(fused_opcodes(node)) > 1]
    assert not reductions_inside, [fused_opcodes(node) for node in reductions_inside]


def test_a_chain_of_a_hundred_thousand_elementwise_ops_becomes_kernels_of_bounded_size():
    # Linear time, and no kernel past the policy's max_instructions: LLVM's compile time
    # grows faster than linearly in one kernel's straight-line code.
    x = parameter(0, (3,))
    value = x
    for step in range(100_000):
        value = make("negate", [value]) if step % 3 else make("add", [value, x])
    module = module_of([value], [x])
    fusions = fuse(module, [random_array((3,))])
    limit = FusionPolicy().max_instructions
    assert all(fusion.opcode == "fusion" and fusion.attr("kind") == "loop" for fusion in fusions)
    sizes = [sum(node.opcode != "parameter" for node in fusion.attr("computation").post_order())
             for fusion in fusions]
    assert max(sizes) <= limit and sum(sizes) == 100_000  # every op in exactly one kernel
    assert len(fusions) == -(-100_000 // limit)
    decisions = [str(decision) for _, _, decision in module.notes["fusion"].decisions]
    assert any(f"limit {limit}" in decision for decision in decisions)


def test_a_stencil_producer_read_at_several_offsets_is_materialized():
    # Each step reads the previous one at 5 offsets: fused step after step, the first step
    # would be computed 5**steps times per element. Three steps: the last two fuse (the
    # middle one computed at 5 index maps, within the limit of 8); the first would be
    # computed at 25, so it is its own kernel, and the reason is in the report.
    u = parameter(0, (12, 12))
    value = u
    for _ in range(3):
        parts = [make("slice", [value], start=(row, column), limit=(row + 10, column + 10), stride=(1, 1))
                 for row, column in ((1, 1), (0, 1), (2, 1), (1, 0), (1, 2))]
        total = parts[0]
        for part in parts[1:]:
            total = make("add", [total, part])
        value = make("pad", [total, constant(np.float32(0))], low=(1, 1), high=(1, 1), interior=(0, 0))
    module = module_of([value], [u])
    fusions = fuse(module, [random_array((12, 12))])
    assert len({fusion.attr("computation").name for fusion in fusions}) == 2
    decisions = [str(decision) for _, _, decision in module.notes["fusion"].decisions]
    assert any("computed at 25 index maps per element" in decision for decision in decisions)


def test_dot_stays_and_bias_add_relu_is_one_loop_fusion():
    x, weights, bias = parameter(0, (4, 3)), parameter(1, (3, 5)), parameter(2, (5,))
    product = make("dot", [x, weights], lhs_batch=(), rhs_batch=(), lhs_contracting=(1,),
                   rhs_contracting=(0,))
    shifted = make("add", [product, broadcast(bias, (4, 5), (1,))])
    relu = make("maximum", [shifted, broadcast(constant(0.0, F32), (4, 5), ())])
    module = module_of([relu], [x, weights, bias])
    arguments = [random_array((4, 3)), random_array((3, 5), seed=1), random_array((5,), seed=2)]
    dot, fusion = fuse(module, arguments)
    assert dot.opcode == "dot"
    assert fusion.attr("kind") == "loop"
    assert fused_opcodes(fusion) == ["add", "broadcast", "broadcast", "constant", "maximum"]
    assert fusion.operands == (bias, dot)  # add(broadcast(bias), dot): computed values before inputs
    reasons = [decision.reason for _, _, decision in module.notes["fusion"].decisions]
    assert "producer is a dot (runs through BLAS)" in reasons


def test_expensive_producer_with_two_users_outside_is_not_duplicated():
    x = parameter(0, (8,))
    exponential = make("exp", [x])
    sort = custom_call_outputs("sort", [x], axis=0, descending=False)[0]
    first = make("add", [exponential, sort])
    second = make("multiply", [exponential, sort])
    module = module_of([first, second], [x])
    instructions = fuse(module, [random_array((8,))])
    kernels = {node.attr("computation").name: node for node in instructions if node.opcode == "fusion"}
    exp_count = sum(fused_opcodes(node).count("exp") for node in kernels.values())
    assert exp_count == 1  # computed once: multi-output fusion then gives add and multiply one kernel
    decisions = [(producer, str(decision)) for producer, _, decision in module.notes["fusion"].decisions]
    refusal = "no: producer exp has 2 users and is expensive: fusing would compute it 2 times"
    assert ("exp.1", refusal) in decisions


def test_cheap_broadcast_with_two_users_is_duplicated_into_both():
    x, scale = parameter(0, (4, 6)), parameter(1, (6,))
    widened = broadcast(scale, (4, 6), (1,))
    product = make("multiply", [x, widened])
    sort = custom_call_outputs("sort", [product], axis=1, descending=False)[0]  # separates the users
    shifted = make("add", [sort, widened])
    module = module_of([shifted], [x, scale])
    instructions = fuse(module, [random_array((4, 6)), random_array((6,), seed=1)])
    fusions = [node for node in instructions if node.opcode == "fusion"]
    assert [fused_opcodes(node) for node in fusions] == [["broadcast", "multiply"], ["add", "broadcast"]]
    assert all(scale in node.operands for node in fusions)  # each reads the small operand itself


class _UpdatesInPlace(FusionPolicy):
    """As the CPU backend's policy: a dynamic-update-slice may root a kernel (a select per element)."""

    def is_fusible(self, instruction):
        if instruction.opcode == "dynamic-update-slice":
            return FusionDecision.yes()
        return super().is_fusible(instruction)


def test_scalar_broadcasts_and_constants_are_copied_into_every_kernel_of_a_loop():
    # A stencil loop: each step `u[1:-1] = u[1:-1] + scale * (...)` reads `scale`'s broadcast
    # and the write's start constant, and each step is its own kernel (its input is read at
    # several offsets). However many steps there are, every kernel computes the broadcast
    # and knows the start itself; none reads a stored copy of either (a whole array read
    # per step where one element does, or a start index the code would not know).
    u, scale = parameter(0, (10,)), parameter(1, ())
    start = constant(np.int64(1))
    value = u
    for _ in range(2 * FusionPolicy().max_duplicates):
        left, middle, right = (make("slice", [value], start=(first,), limit=(first + 8,), stride=(1,))
                               for first in (0, 1, 2))
        smoothed = make("add", [middle, make("multiply", [broadcast(scale, (8,), ()), make("add", [left, right])])])
        value = make("dynamic-update-slice", [value, smoothed, start])
    module = module_of([value], [u, scale])
    fusions = fuse(module, [random_array((10,)), np.float32(0.25)], _UpdatesInPlace())
    assert len(fusions) == 2 * FusionPolicy().max_duplicates
    for fusion in fusions:
        assert fusion.opcode == "fusion" and "broadcast" in fused_opcodes(fusion), fused_opcodes(fusion)
        assert all(operand.opcode in ("parameter", "fusion") for operand in fusion.operands)


def test_a_counter_fed_by_a_long_loop_chain_shares_its_kernel():
    # z <- z * z + c, count += (z < 4) for more steps than one group may hold: apart, the
    # counter's kernel would read every step's comparison from memory (one array per step).
    # The merge may exceed max_instructions (up to twice), so one kernel computes both.
    c = parameter(0, (16,))
    z, count = c, make("convert", [make("compare", [c, c], direction="LT")], dtype=F32)
    steps = FusionPolicy().max_instructions // 5 + 4
    for _ in range(steps):
        z = make("add", [make("multiply", [z, z]), c])
        inside = make("compare", [z, broadcast(constant(np.float32(4)), (16,), ())], direction="LT")
        count = make("add", [count, make("convert", [inside], dtype=F32)])
    module = module_of([z, count], [c])
    fusions = fuse(module, [random_array((16,)) * 0.1])
    assert {fusion.attr("computation").name for fusion in fusions if fusion.opcode == "fusion"} == {
        fusions[-1].attr("computation").name}, [fusion.opcode for fusion in fusions]
    size = sum(node.opcode != "parameter" for node in fusions[-1].attr("computation").post_order())
    assert FusionPolicy().max_instructions < size <= 2 * FusionPolicy().max_instructions


def test_custom_call_stays_in_the_entry_between_fusions():
    x = parameter(0, (5,))
    sort = custom_call_outputs("sort", [make("exp", [x])], axis=0, descending=True)[0]
    module = module_of([make("log", [sort])], [x])
    first, middle, last = fuse(module, [random_array((5,))])
    assert (first.opcode, middle.opcode, last.opcode) == ("fusion", "custom-call", "fusion")
    assert middle.operands == (first,) and last.operands == (middle,)
    reasons = {decision.reason for _, _, decision in module.notes["fusion"].decisions}
    assert "producer is a custom-call (runs on the host)" in reasons


def test_mean_and_variance_share_a_multi_output_reduction():
    x = parameter(0, (3, 8))
    count = broadcast(constant(8.0, F32), (3,), ())
    sum_of_x = make("reduce", [x], dimensions=(1,), kind="sum")
    sum_of_squares = make("reduce", [make("multiply", [x, x])], dimensions=(1,), kind="sum")
    mean = make("divide", [sum_of_x, count])
    variance = make("subtract", [make("divide", [sum_of_squares, count]), make("multiply", [mean, mean])])
    module = module_of([mean, variance], [x])
    instructions = fuse(module, [random_array((3, 8))])
    reductions = [node for node in instructions if node.attr("kind") == "input"]
    assert len(reductions) == 2
    assert reductions[0].attr("computation") == reductions[1].attr("computation")
    assert sorted(node.attr("output_index") for node in reductions) == [0, 1]
    assert fused_opcodes(reductions[0]) == ["multiply", "reduce", "reduce"]
    merged = [(first, second) for first, second, decision in module.notes["fusion"].decisions
              if decision and first.startswith("fusion(")]
    assert ("fusion(reduce.1)", "fusion(reduce.6)") in merged


def test_a_reduction_to_a_scalar_stays_apart_from_the_loop_it_reads():
    # `new = stencil(u); error = max(abs(new - u))`: merged, the kernel would compute the
    # loop's value in two loop nests and reduce serially; apart, the loop writes `new` and the
    # reduction reads it (its own kernel splits over threads when large).
    u = parameter(0, (6, 7))
    new = make("multiply", [make("add", [u, make("exp", [u])]), broadcast(constant(0.5, F32), (6, 7), ())])
    error = make("reduce", [make("abs", [make("subtract", [new, u])])], dimensions=(0, 1), kind="max")
    rows = make("reduce", [new], dimensions=(1,), kind="sum")  # not every dimension: may merge
    module = module_of([new, error, rows], [u])
    instructions = fuse(module, [random_array((6, 7))])
    kernels = {node.attr("computation").name for node in instructions if node.opcode == "fusion"}
    assert len(kernels) == 2
    reasons = [decision.reason for _, _, decision in module.notes["fusion"].decisions]
    assert any(reason.startswith("a reduction of every dimension stays apart from loops") for reason in reasons)


def test_outputs_of_one_eval_reading_the_same_inputs_share_a_kernel():
    x, y = parameter(0, (4,)), parameter(1, (4,))
    module = module_of([make("exp", [make("add", [x, y])]), make("log", [x])], [x, y])
    first, second = fuse(module, [random_array((4,)), random_array((4,), seed=1)])
    assert first.attr("computation") == second.attr("computation")
    assert (first.attr("output_index"), second.attr("output_index")) == (0, 1)


def test_operand_limit_stops_growth_with_a_reason():
    parameters = [parameter(number, (2,)) for number in range(34)]
    total = parameters[0]
    for operand in parameters[1:]:
        total = make("add", [total, operand])
    module = module_of([total], parameters)
    instructions = fuse(module, [random_array((2,), seed=seed) for seed in range(34)])
    assert all(len(node.operands) <= 32 for node in instructions)
    assert len(instructions) == 2
    reasons = [decision.reason for _, _, decision in module.notes["fusion"].decisions]
    assert "fusion would take 33 operands (limit 32)" in reasons


def test_lone_fusible_ops_become_fusions_and_large_constants_stay():
    x = parameter(0, (16,))
    table = constant(np.linspace(0, 1, 16, dtype=F32))
    iota = make("iota", shape=(16,), dtype=F32, dimension=0)
    sort = custom_call_outputs("sort", [make("add", [x, table])], axis=0, descending=False)[0]
    module = module_of([sort, iota, x, table], [x])
    instructions = fuse(module, [random_array((16,))])
    assert [node.opcode for node in instructions] == ["constant", "fusion", "custom-call", "fusion"]
    assert module.entry.outputs[2:] == (x, table)  # a parameter or constant output stays itself


def test_index_ops_fuse_and_other_reductions_are_input_roots():
    x, where = parameter(0, (5, 4)), parameter(1, (3, 1), np.int64)
    rows = make("gather", [make("exp", [x]), where], index_dims=(0,))  # (3, 4)
    start = constant(1, np.int64)
    block = make("dynamic-slice", [make("negate", [rows]), start, start], sizes=(2, 2))
    best = make("argmax", [make("add", [x, x])], dimension=1)
    running = make("cumulative", [make("multiply", [x, x])], kind="sum", dimension=0)
    module = module_of([block, best, running], [x, where])
    arguments = [random_array((5, 4)), np.array([[4], [-1], [0]], np.int64)]
    instructions = fuse(module, arguments)
    by_opcodes = {tuple(fused_opcodes(node)): node for node in instructions}
    assert ("constant", "dynamic-slice", "exp", "gather", "negate") in by_opcodes
    assert by_opcodes[("add", "argmax")].attr("kind") == "input"
    assert by_opcodes[("cumulative", "multiply")].attr("kind") == "input"


def test_expensive_producer_under_a_broadcast_is_not_recomputed_per_read():
    x = parameter(0, (3,))
    widened = broadcast(make("exp", [x]), (4, 3), (1,))  # reads each exp element 4 times
    module = module_of([make("add", [widened, widened])], [x])
    first, second = fuse(module, [random_array((3,))])
    assert (fused_opcodes(first), fused_opcodes(second)) == (["exp"], ["add", "broadcast"])
    (decision,) = [decision for producer, _, decision in module.notes["fusion"].decisions
                   if producer == "exp.1"]
    assert decision.reason == (
        "producer exp is expensive and the kernel reads each of its elements 4 times "
        "(through broadcast): fusing would compute it 4 times per element"
    )


def test_duplicates_of_one_producer_are_bounded():
    x = parameter(0, (4,))
    shared = make("negate", [x])
    sorts = [custom_call_outputs("sort", [make(op, [shared])], axis=0, descending=False)[0]
             for op in ("abs", "floor", "sign")]
    module = module_of(sorts, [x])
    # max_tiny_elements=0: duplicate this 4-element producer as a large one would be.
    instructions = fuse(module, [random_array((4,))], FusionPolicy(max_duplicates=1, max_tiny_elements=0))
    # sign's kernel takes a copy of negate; floor and abs may not, so negate gets a kernel of
    # its own; multi-output fusion then gives all of them one kernel computing negate once.
    (called,) = {node.attr("computation") for node in instructions if node.opcode == "fusion"}
    assert [node.opcode for node in called.post_order()].count("negate") == 1
    reasons = [decision.reason for _, _, decision in module.notes["fusion"].decisions]
    assert reasons.count(
        "producer negate has users outside the fusion and is already duplicated into 1 fusions (limit 1)"
    ) == 2


def test_report_lists_fusions_and_refusals():
    x = parameter(0, (6, 7))
    module = module_of([softmax(x)], [x])
    InstructionFusion(FusionPolicy()).run(module)
    report = str(module.notes["fusion"])
    assert report.startswith("fusion: 3 fusion(s)\n  fused_computation.1 (kind=input): reduce.1")
    assert "exp.4 -> reduce.5: no: producer exp has 2 users and is expensive" in report
    assert "fusion(exp.4) + fusion(reduce.5): yes" in report


# ------------------------------------------------------------------ property: any graph


def _pick_unary(draw, pick):
    operand = pick()
    names = ["exp", "negate", "sqrt", "abs", "tanh", "log", "floor", "sign"]
    return make(draw(st.sampled_from(names)), [operand])


def _pick_binary(draw, pick):
    left = pick()
    right = pick(left.shape, left.dtype)
    return make(draw(st.sampled_from(["add", "multiply", "subtract", "divide", "maximum", "power"])),
                [left, right])


def _pick_select(draw, pick):
    left = pick()
    right = pick(left.shape, left.dtype)
    return make("select", [make("compare", [left, right], direction="LT"), left, right])


def _pick_broadcast(draw, pick):
    operand = pick()
    extent = draw(st.integers(1, 3))
    return broadcast(operand, (*operand.shape, extent), range(operand.ndim))


def _pick_scalar_broadcast(draw, pick):
    like = pick()
    scalar = constant(draw(st.sampled_from([0.5, -2.0, 3.0])), like.dtype)
    return make("multiply", [like, broadcast(scalar, like.shape, ())])


def _pick_reduce(draw, pick):
    operand = pick()
    dimensions = sorted(draw(st.sets(st.integers(0, max(operand.ndim - 1, 0)), max_size=operand.ndim)))
    return make("reduce", [operand], dimensions=tuple(dimensions), kind=draw(st.sampled_from(["sum", "max"])))


def _pick_slice(draw, pick):
    operand = pick()
    start = [draw(st.integers(0, size)) for size in operand.shape]
    limit = [draw(st.integers(begin, size)) for begin, size in zip(start, operand.shape)]
    return make("slice", [operand], start=tuple(start), limit=tuple(limit), stride=(1,) * operand.ndim)


def _pick_transpose(draw, pick):
    operand = pick()
    return make("transpose", [operand], permutation=tuple(draw(st.permutations(range(operand.ndim)))))


def _pick_dot(draw, pick):
    operand = pick()
    last = (operand.ndim - 1,)
    return make("dot", [operand, operand], lhs_batch=(), rhs_batch=(), lhs_contracting=last,
                rhs_contracting=last)


def _pick_sort(draw, pick):
    operand = pick()
    return custom_call_outputs("sort", [operand], axis=max(operand.ndim - 1, 0), descending=False)[0]


BUILDERS = [_pick_unary, _pick_unary, _pick_binary, _pick_binary, _pick_select, _pick_broadcast,
            _pick_scalar_broadcast, _pick_reduce, _pick_slice, _pick_transpose, _pick_dot, _pick_sort]


@st.composite
def random_graphs(draw):
    """(module, arguments): a random graph over 1-2 parameters with shared subexpressions."""
    dtype = draw(st.sampled_from([dtypes.float32, dtypes.float64]))
    shapes = st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple)
    parameters = [parameter(number, draw(shapes), dtype) for number in range(draw(st.integers(1, 2)))]
    pool = list(parameters)

    def pick(shape=None, wanted=None):
        fitting = [node for node in pool if shape is None or (node.shape == shape and node.dtype == wanted)]
        return draw(st.sampled_from(fitting[-3:]))  # recent nodes: chains with several users

    for _ in range(draw(st.integers(3, 16))):
        try:
            pool.append(draw(st.sampled_from(BUILDERS))(draw, pick))
        except HloError:
            pass  # the op refuses this operand (rank, empty reduction); draw another step
    used = {id(operand) for node in pool for operand in node.operands}
    sinks = [node for node in pool[len(parameters):] if id(node) not in used] or [pool[-1]]
    outputs = [*sinks, *draw(st.lists(st.sampled_from(pool), max_size=2))]
    arguments = [
        draw(hnp.arrays(node.dtype, node.shape, elements=elements(node.dtype))) for node in parameters
    ]
    return module_of(outputs, parameters), arguments


policies = st.builds(
    FusionPolicy,
    max_operands=st.sampled_from([1, 2, 32]),
    max_duplicates=st.sampled_from([0, 1, 8]),
)


@given(random_graphs(), policies)
def test_fusion_keeps_every_bit_and_leaves_no_fusible_op_unfused(graph, policy):
    module, arguments = graph
    instructions = fuse(module, arguments, policy)
    for node in instructions:
        assert node.opcode in ("fusion", "constant") or not policy.is_fusible(node)
    used = {}
    for node in instructions:
        if node.opcode == "fusion":
            used.setdefault(node.attr("computation").name, set()).add(node.attr("output_index"))
    assert set(used) == set(module.computations)  # every fused computation is called ...
    for name, computation in module.computations.items():
        assert used[name] == set(range(len(computation.outputs)))  # ... and each output read
        inside = computation.post_order()
        read = {id(operand) for node in inside for operand in node.operands}
        for node in inside:  # a reduction is complete only when its kernel ends: never read inside
            assert not (node.op.has(REDUCTION) and id(node) in read)
        assert not any(node.opcode in ("dot", "custom-call", "fusion") for node in inside)


@given(random_graphs(), policies)
def test_the_quick_dependency_test_decides_as_the_walk_does(graph, policy):
    """Sibling merging first asks the bit sets of the groups' dependencies (a dependency there
    is one the walk finds: merges only add paths); the clusters, kernels and every decision's
    text are those of walking each pair."""
    module, _ = graph
    printed = text.print_module(module)
    reports = []
    limit = fusion_siblings.MOST_NODES_FOR_ANCESTORS
    try:
        for most_nodes in (limit, -1):  # -1: every pair walked
            fusion_siblings.MOST_NODES_FOR_ANCESTORS = most_nodes
            copy = text.parse(printed)
            InstructionFusion(policy).run(copy)
            reports.append((text.print_module(copy), str(copy.notes["fusion"])))
    finally:
        fusion_siblings.MOST_NODES_FOR_ANCESTORS = limit
    assert reports[0] == reports[1]


def _largest_kernel(report) -> int:
    """Instructions in the largest fused computation of an explain() report."""
    sizes, current = [], None
    for line in report.hlo_after.splitlines():
        if line.startswith("fused_computation"):
            current = 0
        elif line.startswith("}") and current is not None:
            sizes.append(current)
            current = None
        elif current is not None:
            current += 1
    return max(sizes)


@pytest.mark.usefixtures("fresh_cpu_cache")
@pytest.mark.parametrize("steps", [2, 6])
@pytest.mark.parametrize("coordinates", [3, 5])
def test_loop_carried_values_are_materialized_not_recomputed_by_later_steps(steps, coordinates, pending_depth):
    # w feeds a dot every step (stored anyway) and x is read through a broadcast by a pairwise
    # kernel: neither chain may be copied into later steps' kernels, which would then grow with
    # the number of steps (n-body and the MLP's parameter updates did).
    pending_depth(0)
    rng = np.random.default_rng(0)
    features = la.asarray(rng.standard_normal((20, 3000))) * 0.01  # w: above the tiny size
    # x: 300 points of 3 coordinates (n-body's) or 5 (a runtime size: x is then not tiny for the
    # fusion rules, and the broadcast rule is the one that materializes it)
    w, x = la.asarray(rng.standard_normal(3000)), la.asarray(rng.standard_normal((300, coordinates)))
    v = la.zeros((300, coordinates))
    expected_w, expected_x, expected_v = np.asarray(w), np.asarray(x), np.zeros((300, coordinates))
    for _ in range(steps):
        w = w - 0.01 * (features.T @ (features @ w))
        pull = (x[None, :, :] - x[:, None, :]).sum(axis=1)
        v = v + 0.1 * pull
        x = x + 0.1 * v
        expected_w = expected_w - 0.01 * (np.asarray(features).T @ (np.asarray(features) @ expected_w))
        expected_v = expected_v + 0.1 * (expected_x[None, :, :] - expected_x[:, None, :]).sum(axis=1)
        expected_x = expected_x + 0.1 * expected_v
    report = la.explain(w, x)
    reasons = {decision.reason.split(":")[0] for _, _, decision in report.fusion_decisions}
    assert any("is stored anyway" in reason for reason in reasons), reasons
    if coordinates > 4:
        assert any("(through a broadcast)" in reason for reason in reasons), reasons
    assert _largest_kernel(report) <= 16, report.hlo_after
    # Sums of 300 terms in another order (vectorized, blocked): within 1e-12 relative.
    np.testing.assert_allclose(np.asarray(w), expected_w, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(x), expected_x, rtol=1e-12, atol=1e-9)


def test_the_dependency_walk_follows_a_merged_kernel_that_straddles_its_floor():
    # Positions: p 0, b 1, s 2, a 3, t 4, h 5. One merged kernel computes b (low) and h (high,
    # reading the target t). s reads b: below t, yet it depends on t through that kernel, so
    # the walk's floor must drop to the kernel's lowest root (1), not stay at t's position (4).
    p = parameter(0, (3,), dtypes.float32)
    b = make("cos", [p])
    s = make("abs", [b])
    a = make("negate", [p])
    t = make("exp", [a])
    h = make("sin", [t])
    order = [p, b, s, a, t, h]
    kernel = Cluster([], [b, h], {id(b): b, id(h): h}, {id(p): p, id(t): t}, (b.shape, None))

    def walk(spans):
        return _Walk([kernel], {id(b): 0, id(h): 0}, lambda index: index,
                     {id(node): index for index, node in enumerate(order)}, spans, [1000], None)

    straddling = walk({0: (1, 5)})
    assert straddling.floor(4) == 1
    assert _reaches([s], {id(t)}, straddling, straddling.floor(4)) is True
    unmerged = walk({})  # without the span, s sits below the floor: not walked
    assert unmerged.floor(4) == 4 and _reaches([s], {id(t)}, unmerged, 4) is False
    assert _reaches([h], {id(t)}, unmerged, 4) is True  # above the floor: walked, found


@given(
    points=hnp.arrays(np.float32, st.tuples(st.integers(1, 40), st.integers(1, 5)),
                      elements=elements(np.float32, allow_edge=False, min_value=-100, max_value=100)),
    count=st.integers(1, 6),
)
def test_a_concatenate_read_through_a_broadcast_is_materialized(points, count):
    # k-means' distances to `stack(centres)`: fused, every one of the kernel's reads picks its
    # operand among `count`; materialized, the stack is one small kernel and the distances read
    # a buffer. The decision is recorded with its reason, and the values are NumPy's.
    rng = np.random.default_rng(points.size)
    centres = [rng.standard_normal(points.shape[1]).astype(np.float32) for _ in range(count)]
    lazy_points = la.asarray(points)
    stacked = la.stack([la.asarray(centre) * 1 for centre in centres])
    distances = ((lazy_points[:, None, :] - stacked[None, :, :]) ** 2).sum(axis=-1)
    reasons = [str(decision) for _, _, decision in la.explain(distances).fusion_decisions]
    if count > 1 and points.shape[0] > 1:
        assert any("producer concatenate picks among" in reason for reason in reasons), reasons
    expected = ((points[:, None, :] - np.stack(centres)[None, :, :]) ** 2).sum(axis=-1)
    # float32 sums of at most 5 squares, in another order: a few ulp of the largest term.
    scale = float(np.abs(expected).max(initial=1))
    np.testing.assert_allclose(np.asarray(distances), expected, rtol=1e-5, atol=1e-5 * scale)
