"""The PTX of every op the GPU backend fuses assembles with `ptxas -arch=sm_90`, and the
kernels have the structure the skeletons promise (lazyarr/backends/llvm/gpu_kernel.py).

Needs no GPU and no CuPy: `compile_program` turns a module into PTX, and ptxas (the CUDA
toolkit's assembler) checks it; skipped where ptxas is not installed. The op tables are the
HLO op set itself: every elementwise op with every compiled dtype it accepts (the CPU table's
CASES), compare in every direction, the index remaps, converts between every pair of compiled
dtypes, and every reduction kind in every layout; then a few fused graphs. Each table is
compiled as one module with many outputs (one PTX, one ptxas call), with concrete sizes and
with placeholder sizes (symbolic_sizes.py: the GPU backend compiles symbolized modules). When
a batch fails it is bisected, and the failure names the cases that fail on their own.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

from lazyarr import dtypes
from lazyarr.backends import gpu_compile
from lazyarr.backends.cpu import HostStep
from lazyarr.backends.gpu_compile import DotStep, GpuProgram, LaunchStep, compile_program
from lazyarr.backends.llvm.elemental import COMPILED_DTYPES, EMITTABLE
from lazyarr.backends.llvm.gpu_kernel import plan_kernels
from lazyarr.backends.llvm.nvptx import assemble, ptxas_path
from lazyarr.hlo import Computation, HloError, Module, constant, make, post_order
from lazyarr.hlo.ops.elementwise import COMPARISONS
from lazyarr.hlo.ops.reduce import REDUCE_KINDS
from lazyarr.symbolic_sizes import symbolize
from tests.backends.test_cpu_elementwise import CASES as ELEMENTWISE_CASES

pytestmark = pytest.mark.skipif(
    ptxas_path() is None, reason="ptxas is not installed (it comes with the CUDA toolkit): PTX cannot be checked"
)

ARCH = "sm_90"  # H100; the requirement
COMPILED = sorted(COMPILED_DTYPES, key=lambda dtype: dtype.num)
SHAPE = (5, 7)  # sizes above 4 (symbolic_sizes.CONCRETE_UP_TO), so that symbolize() gives each a placeholder
SIZES = ["concrete", "symbolic"]


# ---------------------------------------------------------------------- cases and batches


class Parameters:
    """Parameters shared by the cases of one module: one per (dtype, shape, slot)."""

    def __init__(self):
        self.made = {}

    def __call__(self, dtype, shape=SHAPE, slot=0):
        key = (np.dtype(dtype), tuple(shape), slot)
        if key not in self.made:
            self.made[key] = make("parameter", number=len(self.made), shape=tuple(shape), dtype=np.dtype(dtype))
        return self.made[key]

    def all(self):
        return tuple(self.made.values())  # numbered in creation order


@dataclass(frozen=True)
class Case:
    """One op (or graph) to compile: `build(parameters)` returns its outputs."""

    label: str
    build: Callable[[Parameters], list]


def batch_module(cases, symbolic: bool) -> Module:
    parameters = Parameters()
    outputs = [output for case in cases for output in case.build(parameters)]
    module = Module("batch", Computation("batch", parameters.all(), tuple(outputs)))
    if symbolic:
        symbolized = symbolize(module)
        assert symbolized is not None, "this batch should have placeholder sizes (symbolize refused it)"
        module = symbolized[0]
    return module


def compile_and_assemble(cases, symbolic: bool) -> GpuProgram:
    program = compile_program(batch_module(cases, symbolic), ARCH)
    if program.ptx:
        assemble(program.ptx, ARCH)
    return program


def failing_cases(cases, symbolic: bool) -> list[tuple[str, str]]:
    """(label, error) of the cases that fail on their own, found by bisection."""
    try:
        compile_and_assemble(cases, symbolic)
        return []
    except Exception as error:  # any failure: PTX generation, LLVM, or ptxas
        if len(cases) == 1:
            return [(cases[0].label, f"{type(error).__name__}: {error}")]
        middle = len(cases) // 2
        found = failing_cases(cases[:middle], symbolic) + failing_cases(cases[middle:], symbolic)
        if not found:  # only the combination fails (names, shared memory, limits ...)
            found = [(f"{len(cases)} cases together ({cases[0].label} ... {cases[-1].label})",
                      f"{type(error).__name__}: {error}")]
        return found


def check_batch(cases, symbolic: bool) -> GpuProgram:
    """Compile `cases` as one module and assemble its PTX; on failure, name the cases."""
    try:
        return compile_and_assemble(cases, symbolic)
    except Exception:
        failures = failing_cases(cases, symbolic)
        lines = [f"  {label}: {error[:2000]}" for label, error in failures]
        pytest.fail(f"PTX for sm_90 failed ({'symbolic' if symbolic else 'concrete'} sizes) for "
                    f"{len(failures)} case(s):\n" + "\n".join(lines), pytrace=False)


# --------------------------------------------------------------------------- PTX reading


def kernel_bodies(ptx: str) -> dict[str, str]:
    """Entry name -> its PTX text (from `.entry` to the next entry)."""
    starts = [(match.start(), match.group(1)) for match in re.finditer(r"\.entry\s+([\w$]+)\s*\(", ptx)]
    ends = [start for start, _ in starts[1:]] + [len(ptx)]
    return {name: ptx[start:end] for (start, name), end in zip(starts, ends)}


def parameter_count(body: str) -> int:
    signature = body[:body.index(")")]
    return len(re.findall(r"\.param\s", signature))


def launches(program: GpuProgram) -> list[LaunchStep]:
    return [step for step in program.steps if isinstance(step, LaunchStep)]


def assert_structure(program: GpuProgram) -> None:
    """What every program's PTX must show, whatever its ops:

    - one `.entry` per kernel name, named as GpuProgram.kernel_names says;
    - no external function: libdevice was linked in (an unresolved `__nv_*` fails at load);
    - the kernel ABI: parameters, outputs, scratch, counters, one i64 per placeholder size, splits;
    - loop kernels never synchronize (no barrier, no shuffle);
    - row reductions combine through warp shuffles and barriers, and split reductions take an
      atomic ticket; row kernels ("rows") combine the same way and are never split; column
      reductions combine no lanes (a thread per output element) but take the same ticket
      when split.
    """
    bodies = kernel_bodies(program.ptx)
    assert sorted(bodies) == sorted(program.kernel_names), (sorted(bodies), program.kernel_names)
    assert len(program.kernel_names) == len(set(program.kernel_names))
    assert ".extern" not in program.ptx, re.findall(r".*\.extern.*", program.ptx)
    if program.ptx:
        assert f".target {ARCH}" in program.ptx
    for step in launches(program):
        body = bodies[step.plan.name]
        expected = len(step.inputs) + len(step.outputs) + 2 + program.size_count + 1
        assert parameter_count(body) == expected, (step.plan.name, parameter_count(body), expected)
        kind = step.plan.kind
        if kind == "loop":
            assert "bar.sync" not in body and "shfl.sync" not in body, step.plan
        elif kind == "row":
            assert "shfl.sync.bfly" in body and "bar.sync" in body, step.plan
            assert "atom.global.add" in body, step.plan  # the split path's ticket
        elif kind == "rows":  # a block per row combines each reduction; never split
            assert "shfl.sync.bfly" in body and "bar.sync" in body, step.plan
            assert "atom.global.add" not in body, step.plan
        else:
            assert kind == "column", step.plan
            assert "shfl.sync" not in body, step.plan
            assert "bar.sync" in body and "atom.global.add" in body, step.plan


def fused_pairs(program: GpuProgram) -> set[tuple[str, np.dtype]]:
    """(opcode, dtype of its first operand or itself) of every instruction inside a kernel."""
    pairs = set()
    for node in program.module.entry.post_order():
        if node.opcode == "fusion":
            for inner in node.attr("computation").post_order():
                pairs.add((inner.opcode, (inner.operands[0] if inner.operands else inner).dtype))
    return pairs


def assert_everything_fused(program: GpuProgram) -> None:
    host = [step.instruction.opcode for step in program.steps if isinstance(step, HostStep)]
    assert host == [], f"ran on the host instead of in a kernel: {host}"


# ------------------------------------------------------------------------ the op tables


def elementwise_cases() -> list[Case]:
    """Every elementwise op x every compiled dtype it accepts, and compare in every direction."""
    cases = [
        Case(f"{name}/{dtype}", lambda p, name=name, arity=arity, dtype=dtype:
             [make(name, [p(dtype, slot=slot) for slot in range(arity)])])
        for name, arity, dtype in ELEMENTWISE_CASES
    ]
    cases += [
        Case(f"compare {direction}/{dtype}", lambda p, direction=direction, dtype=dtype:
             [make("compare", [p(dtype), p(dtype, slot=1)], direction=direction)])
        for direction in sorted(COMPARISONS) for dtype in COMPILED
    ]
    cases += [  # float x, int32 exponent
        Case(f"ldexp/{dtype}", lambda p, dtype=dtype: [make("ldexp", [p(dtype), p(dtypes.int32, slot=1)])])
        for dtype in COMPILED if dtypes.is_floating(dtype)
    ]
    return cases


def remap_cases() -> list[Case]:
    """Index remaps whose code takes sizes at run time, select, clamp, iota, and convert
    between every pair of compiled dtypes."""
    cases = []
    for dtype in COMPILED:
        cases += [
            Case(f"broadcast/{dtype}", lambda p, d=dtype: [
                make("broadcast", [p(d)], shape=(3, 5, 7), dimensions=(1, 2)),
                make("broadcast", [p(d, (1, 7))], shape=(5, 7), dimensions=(0, 1)),  # a size-1 dimension
            ]),
            Case(f"transpose/{dtype}", lambda p, d=dtype: [
                make("transpose", [p(d)], permutation=(1, 0)),
                make("transpose", [p(d, (3, 5, 7))], permutation=(2, 0, 1)),
            ]),
            Case(f"reshape (unit dims)/{dtype}", lambda p, d=dtype: [make("reshape", [p(d)], shape=(5, 1, 7))]),
            Case(f"reverse/{dtype}", lambda p, d=dtype: [
                make("reverse", [p(d)], dimensions=(0,)), make("reverse", [p(d)], dimensions=(0, 1)),
            ]),
            Case(f"select/{dtype}", lambda p, d=dtype: [make("select", [p(dtypes.bool_), p(d), p(d, slot=1)])]),
            Case(f"clamp/{dtype}", lambda p, d=dtype: [make("clamp", [p(d, slot=1), p(d), p(d, slot=2)])]),
        ]
        if dtype != dtypes.bool_:  # iota is numeric; added to a parameter so it is not folded
            cases.append(Case(f"iota/{dtype}", lambda p, d=dtype: [
                make("add", [make("iota", shape=SHAPE, dtype=d, dimension=axis), p(d)]) for axis in (0, 1)
            ]))
        cases += [
            Case(f"convert {dtype}->{target}", lambda p, d=dtype, t=target: [make("convert", [p(d)], dtype=t)])
            for target in COMPILED if target != dtype
        ]
    return cases


def concrete_remap_cases() -> list[Case]:
    """Remaps whose sizes live in attributes or data (symbolize() keeps such modules concrete):
    strided slices, pads (interior too), concatenations, general reshapes, constant tables,
    dynamic-slices and dynamic-update-slices."""
    cases = []
    for dtype in COMPILED:
        cases += [
            Case(f"slice/{dtype}", lambda p, d=dtype: [
                make("slice", [p(d)], start=(1, 0), limit=(5, 7), stride=(2, 3)),
                make("slice", [p(d)], start=(2, 7), limit=(2, 7), stride=(1, 1)),  # empty
            ]),
            Case(f"pad/{dtype}", lambda p, d=dtype: [
                make("pad", [p(d), p(d, ())], low=(1, 0), high=(0, 2), interior=(0, 1)),
                make("pad", [p(d, (0, 7)), p(d, ())], low=(2, 1), high=(1, 0), interior=(0, 0)),  # empty operand
            ]),
            Case(f"concatenate/{dtype}", lambda p, d=dtype: [
                make("concatenate", [p(d), p(d, (2, 7)), p(d, (0, 7))], dimension=0),
                make("concatenate", [p(d), p(d, (5, 3))], dimension=1),
            ]),
            Case(f"reshape/{dtype}", lambda p, d=dtype: [
                make("reshape", [p(d)], shape=(35,)), make("reshape", [p(d)], shape=(7, 5)),
            ]),
            Case(f"dynamic slices/{dtype}", lambda p, d=dtype: [  # starts at run time, and clamped
                make("dynamic-update-slice", [p(d), p(d, (2, 3)), p(dtypes.int64, ()), p(dtypes.int32, ())]),
                make("dynamic-update-slice", [p(d), p(d, (2, 3)), constant(np.int64(-1)), constant(np.int64(9))]),
                make("dynamic-slice", [p(d), p(dtypes.int64, ()), p(dtypes.int32, ())], sizes=(2, 3)),
            ]),
            Case(f"constant table/{dtype}", lambda p, d=dtype: [
                make("select", [p(dtypes.bool_, (3,)), constant(np.arange(3).astype(d)), p(d, (3,))]),
            ]),
        ]
    return cases


def reduction_cases() -> list[Case]:
    """Every reduce kind x every compiled dtype it accepts, in every layout: row (last
    dimension reduced), column (last kept), full, no dimensions, 0-d, 3-d with the middle or
    both outer dimensions reduced, and reductions over zero elements (kinds with an identity)."""
    layouts = [
        ("row", (6, 70), (1,)), ("column", (70, 6), (0,)), ("full", (6, 70), (0, 1)),
        ("no dims", (6, 70), ()), ("0-d", (), ()), ("3-d middle", (4, 50, 6), (1,)),
        ("3-d outer", (4, 50, 6), (0, 2)), ("0-size row", (6, 0), (1,)), ("0-size column", (0, 70), (0,)),
    ]
    cases = []
    for kind, (_, accepted, has_identity) in REDUCE_KINDS.items():
        for dtype in COMPILED:
            if dtype not in accepted:
                continue
            for layout, shape, dimensions in layouts:
                if 0 in shape and not has_identity:
                    continue  # max/min of nothing is refused when the graph is built, as NumPy refuses it
                cases.append(Case(f"reduce {kind} {layout}/{dtype}", lambda p, k=kind, d=dtype, s=shape, r=dimensions:
                                  [make("reduce", [p(d, s)], dimensions=r, kind=k)]))
    return cases


TABLES = {
    "elementwise": (elementwise_cases, SIZES),
    "remaps and converts": (remap_cases, SIZES),
    "remaps with sizes in attributes": (concrete_remap_cases, ["concrete"]),
    "reductions": (reduction_cases, SIZES),
}
TABLE_RUNS = [(table, sizes) for table, (_, kinds) in TABLES.items() for sizes in kinds]


@pytest.mark.parametrize("table, sizes", TABLE_RUNS, ids=[f"{table}-{sizes}" for table, sizes in TABLE_RUNS])
def test_every_fused_op_assembles_for_sm_90(table, sizes):
    cases = TABLES[table][0]()
    program = check_batch(cases, symbolic=sizes == "symbolic")
    assert_structure(program)
    assert_everything_fused(program)
    if sizes == "symbolic":
        assert program.size_count > 0
    if table == "elementwise":
        # Each op reached a kernel: none was dropped or left to the host on the way.
        present = fused_pairs(program)
        missing = [(name, dtype) for name, _, dtype in ELEMENTWISE_CASES if (name, dtype) not in present]
        assert missing == [], f"ops that reached no kernel: {missing}"


def test_the_tables_cover_every_op_the_gpu_fuses():
    """A new emittable op without a row here fails this test (and so gets its PTX checked)."""
    covered = set()
    for make_cases, _ in TABLES.values():
        for case in make_cases():
            covered |= {node.opcode for node in post_order(case.build(Parameters()))}
    assert EMITTABLE | {"reduce"} <= covered, sorted((EMITTABLE | {"reduce"}) - covered)


def test_a_failing_case_is_named():
    """The bisection names the one case that cannot compile among many that can."""

    def broken(parameters):
        raise HloError("no GPU code for this on purpose")

    cases = elementwise_cases()[:6] + [Case("the broken one", broken)] + elementwise_cases()[6:12]
    assert [label for label, _ in failing_cases(cases, symbolic=False)] == ["the broken one"]


# ----------------------------------------------------------------------------- fused graphs


F32 = dtypes.float32


def broadcast(value, shape, dimensions):
    return make("broadcast", [value], shape=shape, dimensions=dimensions)


def scalar(value, shape, dtype=F32):
    return broadcast(constant(value, dtype), shape, ())


def softmax_graph(p):
    x = p(F32, (64, 1000))
    largest = make("reduce", [x], dimensions=(1,), kind="max")
    exponentials = make("exp", [make("subtract", [x, broadcast(largest, x.shape, (0,))])])
    total = make("reduce", [exponentials], dimensions=(1,), kind="sum")
    return [make("divide", [exponentials, broadcast(total, x.shape, (0,))])]


def layernorm_graph(p):
    x = p(F32, (32, 512))
    rows = (32,)
    count = scalar(512.0, rows)
    mean = make("divide", [make("reduce", [x], dimensions=(1,), kind="sum"), count])
    square_mean = make("divide", [make("reduce", [make("multiply", [x, x])], dimensions=(1,), kind="sum"), count])
    variance = make("subtract", [square_mean, make("multiply", [mean, mean])])
    scale = make("reciprocal", [make("sqrt", [make("add", [variance, scalar(1e-5, rows)])])])
    centered = make("subtract", [x, broadcast(mean, x.shape, (0,))])
    return [make("multiply", [centered, broadcast(scale, x.shape, (0,))])]


def sum_of_squares_graph(p):
    x = p(dtypes.float64, (10000,))
    return [make("reduce", [make("multiply", [x, x])], dimensions=(0,), kind="sum")]


def transpose_reduce_graph(p):
    x = p(F32, (8, 16, 32))
    moved = make("transpose", [make("exp", [x])], permutation=(2, 0, 1))  # (32, 8, 16)
    return [make("reduce", [moved], dimensions=(0, 2), kind="sum"),
            make("reduce", [moved], dimensions=(1,), kind="max")]


def multi_output_graph(p):
    x = p(dtypes.float64, (50, 60))
    doubled = make("multiply", [x, x])
    return [doubled, make("reduce", [doubled], dimensions=(1,), kind="sum"),
            make("reduce", [doubled], dimensions=(0,), kind="min")]


GRAPHS = {
    "softmax": softmax_graph,
    "layernorm": layernorm_graph,
    "sum of squares": sum_of_squares_graph,
    "3-d transpose + reduce": transpose_reduce_graph,
    "multi-output, different shapes": multi_output_graph,
}


def compile_graph(build, symbolic: bool) -> GpuProgram:
    return check_batch([Case("graph", build)], symbolic)


@pytest.mark.parametrize("sizes", SIZES)
@pytest.mark.parametrize("graph", list(GRAPHS))
def test_fused_graphs_assemble(graph, sizes):
    program = compile_graph(GRAPHS[graph], symbolic=sizes == "symbolic")
    assert_structure(program)
    assert_everything_fused(program)
    if sizes == "symbolic":
        assert program.size_count > 0  # and assert_structure counted one i64 per size in every kernel


def test_sibling_reductions_share_one_pass():
    """sum(x) and sum(x*x), both outputs, are one row reduction kernel with two outputs."""
    def sibling_sums(p):
        x = p(F32, (32, 512))
        return [make("reduce", [x], dimensions=(1,), kind="sum"),
                make("reduce", [make("multiply", [x, x])], dimensions=(1,), kind="sum")]

    program = compile_graph(sibling_sums, symbolic=True)
    rows = [step for step in launches(program) if step.plan.kind == "row"]
    assert len(rows) == 1 and len(rows[0].outputs) == 2, [step.plan for step in launches(program)]


def softmax_with_temperature_graph(p):
    """softmax(x / T): a division before the max, which reduces what the kernel reads."""
    x = p(F32, (64, 1000))
    return softmax_graph(lambda dtype, shape: make("divide", [x, scalar(0.7, x.shape)]))


@pytest.mark.parametrize("graph", ["softmax", "layernorm", "softmax with a temperature"])
def test_row_kernels_are_one_kernel(graph):
    """softmax, layernorm and softmax(x / T): each row's reductions, then its elements, in one
    "rows" kernel."""
    build = softmax_with_temperature_graph if graph == "softmax with a temperature" else GRAPHS[graph]
    program = compile_graph(build, symbolic=True)
    assert [step.plan.kind for step in launches(program)] == ["rows"], [step.plan for step in launches(program)]


def test_producers_fuse_into_the_reduction():
    """sum(x*x) and the transpose+reduce graph need no kernel besides their reductions: the
    multiply, exp and transpose are computed inside them (never written to memory)."""
    assert [step.plan.kind for step in launches(compile_graph(sum_of_squares_graph, True))] == ["row"]
    kinds = sorted(step.plan.kind for step in launches(compile_graph(transpose_reduce_graph, True)))
    assert kinds == ["column", "row"]  # max over the middle dimension keeps the last one


def test_outputs_of_different_shapes_get_kernels_of_their_own_shape():
    """x*x (a [50,60] loop output) and its row sum are one multi-output fusion with two launch
    shapes, so two kernels of that fusion; the column min loops differently (its own fusion)."""
    program = compile_graph(multi_output_graph, symbolic=False)
    by_fusion: dict[str, list[str]] = {}
    for step in launches(program):
        by_fusion.setdefault(step.plan.name.rsplit("_", 1)[0], []).append(step.plan.kind)
    assert sorted(sorted(kinds) for kinds in by_fusion.values()) == [["column"], ["loop", "row"]], by_fusion
    loop = next(step for step in launches(program) if step.plan.kind == "loop")
    assert loop.plan.shape == (50, 60) and loop.output_specs == [((50, 60), np.dtype(np.float64))]


def multi_output_chain_graph(p):
    """Three equal multi-output fusions (x*x's row sums and column minimums) between cuBLAS
    products, their outputs listed in alternating order."""
    x = p(dtypes.float64, (50, 50))
    outputs = []
    for step in range(3):
        doubled = make("multiply", [x, x])
        sums = make("reduce", [doubled], dimensions=(1,), kind="sum")
        minimums = make("reduce", [doubled], dimensions=(0,), kind="min")
        outputs += [sums, minimums] if step % 2 == 0 else [minimums, sums]
        x = make("dot", [doubled, x], lhs_batch=(), lhs_contracting=(1,), rhs_batch=(), rhs_contracting=(0,))
    return outputs + [x]


def repeated_softmax_graph(p, steps=5):
    """Softmax of a cuBLAS product, five times: five equal row-kernel fusions."""
    x, weights = p(F32, (64, 1000)), p(F32, (1000, 1000))
    for _ in range(steps):
        product = make("dot", [x, weights], lhs_batch=(), lhs_contracting=(1,), rhs_batch=(),
                       rhs_contracting=(0,))
        x = softmax_graph(lambda dtype, shape: product)[0]
    return [x]


@pytest.mark.parametrize("sizes", SIZES)
def test_a_step_repeated_in_a_module_is_one_kernel(sizes):
    """An unrolled loop's steps (softmax of a cuBLAS product, five times) fuse into five equal
    computations: the PTX holds one kernel, launched five times, each launch on its own step's
    buffers (the first step reads the parameter, each later one the product before it)."""
    steps = 5
    program = compile_graph(repeated_softmax_graph, symbolic=sizes == "symbolic")
    assert_structure(program)
    kernels = launches(program)
    assert [step.plan.kind for step in kernels] == ["rows"] * steps
    assert len(program.kernel_names) == 1 and len(kernel_bodies(program.ptx)) == 1
    assert {step.plan.name for step in kernels} == set(program.kernel_names)
    products = [step.output for step in program.steps if isinstance(step, DotStep)]
    assert len(products) == steps
    assert [step.inputs for step in kernels] == [[product] for product in products]
    assert len({slot for step in kernels for slot in step.outputs}) == steps


def launch_plan(program: GpuProgram) -> list[tuple]:
    """What running a program does, kernel names aside: each step's kind, inputs and outputs."""
    steps = []
    for step in program.steps:
        if isinstance(step, LaunchStep):
            plan = step.plan
            steps.append((plan.kind, plan.outputs, plan.shape, plan.reduced, tuple(step.inputs),
                          tuple(step.outputs), tuple(step.output_specs)))
        else:
            steps.append((type(step).__name__, repr(step)))
    return steps + [tuple(program.output_slots)]


@pytest.mark.parametrize("sizes", SIZES)
@pytest.mark.parametrize("graph", [multi_output_chain_graph, repeated_softmax_graph], ids=["multi-output", "rows"])
def test_shared_kernels_launch_as_separate_ones_would(graph, sizes, monkeypatch):
    """Fusions sharing a kernel launch exactly as they would with a kernel each (same kinds,
    outputs, slots), with fewer kernels in the PTX."""
    shared = compile_graph(graph, symbolic=sizes == "symbolic")
    numbers = itertools.count()
    monkeypatch.setattr(gpu_compile, "kernel_fingerprint", lambda computation: (next(numbers),))
    separate = compile_graph(graph, symbolic=sizes == "symbolic")
    assert launch_plan(shared) == launch_plan(separate)
    assert len(shared.kernel_names) < len(separate.kernel_names)


def test_plans_follow_the_reduced_dimensions():
    parameter = make("parameter", number=0, shape=(4, 50, 6), dtype=F32)
    outputs = (make("reduce", [parameter], dimensions=(1,), kind="sum"),
               make("reduce", [parameter], dimensions=(0, 2), kind="sum"),
               make("reduce", [parameter], dimensions=(0, 1, 2), kind="max"),
               make("exp", [parameter]))
    plans = plan_kernels(Computation("fused", (parameter,), outputs), "k")
    assert [(plan.kind, plan.reduced, plan.outputs) for plan in plans] == [
        ("column", (1,), (0,)), ("row", (0, 2), (1,)), ("row", (0, 1, 2), (2,)), ("loop", (), (3,))]
    assert plans[0].kept_shape == (4, 6) and plans[0].reduced_shape == (50,)


# --------------------------------------------------------------------------- single facts


def single_op_program(name, dtype, shape=(1000,)) -> GpuProgram:
    return compile_graph(lambda p: [make(name, [p(dtype, shape)])], symbolic=False)


def single_op_program_binary(name, dtype, shape=(1000,)) -> GpuProgram:
    return compile_graph(lambda p: [make(name, [p(dtype, shape), p(dtype, shape, 1)])], symbolic=False)


@pytest.mark.parametrize("graph", ["int64 add", "float64 row kernel"])
def test_64_bit_values_move_in_one_access(graph):
    """With the NVPTX data layout, 8-byte values are loaded and stored whole. Without it (i64
    aligned to 4 bytes) they were split into 32-bit halves, and the split shared-memory store of
    a float64 block partial read back with a wrong low word on an H100."""
    def build(p):
        if graph == "int64 add":
            return [make("add", [p(dtypes.int64, (100,)), p(dtypes.int64, (100,), 1)])]
        x = p(dtypes.float64, (1, 7))
        total = make("reduce", [x], dimensions=(1,), kind="sum")
        return [make("divide", [x, broadcast(total, x.shape, (0,))])]

    ptx = compile_graph(build, symbolic=True).ptx
    halves = re.findall(r"ld\.[\w.]*b32\s+%rd\d+|st\.[\w.]*b32\s+\[[^\]]*\],\s*%rd\d+", ptx)
    assert halves == [], halves


def test_float64_exp_links_libdevice():
    """exp on float64 calls libdevice's __nv_exp, which is linked in and inlined: the PTX
    declares no external function and computes the polynomial itself (f64 fused multiply-adds)."""
    program = single_op_program("exp", dtypes.float64)
    assert ".extern" not in program.ptx and "__nv_exp" not in program.ptx
    assert "fma.rn.f64" in program.ptx


def test_float32_arithmetic_is_ieee():
    """lazyarr's own float32 arithmetic is correctly rounded and keeps subnormals, as NumPy's:
    IEEE division and square root, no flush-to-zero, no approximation. (libdevice's functions
    use approximate instructions inside, on reduced arguments, within their documented error.)"""
    program = compile_graph(lambda p: [
        make("sqrt", [make("divide", [make("add", [p(F32, (1000,)), p(F32, (1000,), 1)]), p(F32, (1000,), 2)])]),
        make("reciprocal", [make("multiply", [p(F32, (1000,)), p(F32, (1000,), 1)])]),
    ], symbolic=False)
    assert "div.rn.f32" in program.ptx and "sqrt.rn.f32" in program.ptx
    assert ".ftz" not in program.ptx and ".approx" not in program.ptx


def test_loop_kernels_use_a_grid_stride_loop_and_row_kernels_a_block():
    program = compile_graph(multi_output_graph, symbolic=True)
    bodies = kernel_bodies(program.ptx)
    for step in launches(program):
        body = bodies[step.plan.name]
        assert "%nctaid.x" in body, step.plan  # grid-stride: the loop steps by the whole grid
        if step.plan.kind != "loop":
            assert "%ctaid.y" in body, step.plan  # the split a block works on
        if step.plan.kind == "row":
            assert ".shared" in body, step.plan  # one slot per warp for the block reduction


@pytest.mark.parametrize("dtype", [dtypes.float16, F32, dtypes.float64], ids=str)
def test_products_are_rounded_before_they_are_added(dtype):
    """x*y + z is a rounded multiply and a rounded add, as in NumPy: never contracted into a
    fused multiply-add (which rounds once, giving other bits than NumPy)."""
    program = compile_graph(lambda p: [make("add", [make("multiply", [p(dtype, (100,)), p(dtype, (100,), 1)]),
                                                    p(dtype, (100,), 2)])], symbolic=False)
    (body,) = kernel_bodies(program.ptx).values()
    assert "fma." not in body and "mul.rn." in body and "add.rn." in body


@pytest.mark.parametrize("dtype", [F32, dtypes.float64], ids=str)
def test_float_remainder_does_not_round_a_quotient(dtype):
    """NumPy's remainder is fmod-based and exact; computing it through a rounded x / y is not.
    NVPTX lowers LLVM's frem to x - trunc(x / y) * y (float32 remainder(1e10, 3) would be 256,
    NumPy: 1), so the GPU math table calls libdevice's exact fmod, which divides nothing."""
    program = single_op_program_binary("remainder", dtype)
    assert not re.search(r"div\.rn\.f(32|64)", program.ptx)

