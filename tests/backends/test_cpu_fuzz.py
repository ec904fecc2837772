"""Differential fuzz: random HLO graphs give the same results on the CPU backend as in the
NumPy evaluator (the oracle).

Graphs mix elementwise (unary, binary, compare/select, convert), broadcast, reduce (sum, max,
min, prod over random axes), strided slice, transpose, reshape, pad, concatenate, reverse,
iota and dot over float32/float64/int32/bool parameters. Shapes are a small fixed set (each
new shape compiles kernels) of sizes that are not multiples of any vector width (1, 3, 7, 17,
33), with empty dimensions and 0-d values.

Results are compared shape, then dtype, then values. Integer and bool results, and float
results computed only by correctly rounded operations, must be identical (NaN positions and
signs of zero included). Float results downstream of a reassociated reduction, a dot or a
transcendental carry an error bound derived alongside the graph, see `error_bound`.
"""

from __future__ import annotations

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lazyarr import dtypes
from lazyarr.compile import compile_module
from lazyarr.hlo import Computation, HloError, Module, constant, evaluate, make, text
from lazyarr.hlo.ops.elementwise import BINARY, COMPARISONS, UNARY
from tests.strategies import elements

DTYPES = [dtypes.float32, dtypes.float64, dtypes.int32, dtypes.bool_]
SHAPES = [(), (0,), (1,), (7,), (33,), (3, 17), (0, 7), (7, 1), (3, 1, 17), (1, 7, 3)]
TRANSCENDENTAL = {
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos",
    "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "cbrt", "atan2", "hypot", "power",
    "logaddexp",
}
# Ops that may read an inexact float (one carrying an error bound): continuous ones whose
# error we can propagate. Discontinuous ops (compare, floor, convert to int, ...) and
# ill-conditioned ones (divide near 0, exp of a large error) read only exact values.
LIPSCHITZ_UNARY = {"negate", "abs", "tanh", "sin", "cos"}
STABLE_BINARY = {"add", "subtract", "multiply", "maximum", "minimum", "fmax", "fmin"}
UNARY_NAMES = {row[0]: row[2] for row in UNARY}
BINARY_NAMES = {row[0]: row[2] for row in BINARY}


def parameter(number, shape, dtype):
    return make("parameter", number=number, shape=tuple(shape), dtype=np.dtype(dtype))


# ------------------------------------------------------------------- the graph builder


class Builder:
    """Grows a pool of instructions; `inexact` holds the ids of float nodes whose value the
    CPU may compute with different rounding than the evaluator (reduction order, libm)."""

    def __init__(self, draw, parameters):
        self.draw = draw
        self.pool = list(parameters)
        self.inexact = set()

    def pick(self, shape=None, dtype=None, exact=False):
        fitting = [
            node for node in self.pool
            if (shape is None or node.shape == shape) and (dtype is None or node.dtype == dtype)
            and not (exact and id(node) in self.inexact)
        ]
        if not fitting:
            raise HloError("no fitting operand")
        if self.draw(st.integers(0, 2)):  # mostly the newest: chains grow deep
            return fitting[-1]
        return self.draw(st.sampled_from(fitting))

    def add(self, node, inexact):
        if inexact and dtypes.is_floating(node.dtype):
            self.inexact.add(id(node))
        self.pool.append(node)

    def unary(self):
        operand = self.pick()
        loose = id(operand) in self.inexact
        names = sorted(name for name, accepted in UNARY_NAMES.items()
                       if operand.dtype in accepted and (not loose or name in LIPSCHITZ_UNARY))
        name = self.draw(st.sampled_from(names))
        self.add(make(name, [operand]), loose or name in TRANSCENDENTAL)

    def binary(self):
        left = self.pick()
        loose = id(left) in self.inexact
        right = self.pick(left.shape, left.dtype, exact=not loose)
        loose = loose or id(right) in self.inexact
        names = sorted(name for name, accepted in BINARY_NAMES.items()
                       if left.dtype in accepted and (not loose or name in STABLE_BINARY))
        name = self.draw(st.sampled_from(names))
        self.add(make(name, [left, right]), loose or name in TRANSCENDENTAL)

    def select(self):
        left = self.pick(exact=True)
        right = self.pick(left.shape, left.dtype, exact=True)
        predicate = make("compare", [left, right], direction=self.draw(st.sampled_from(sorted(COMPARISONS))))
        on_true = self.pick(left.shape)
        on_false = self.pick(left.shape, on_true.dtype)
        self.add(predicate, False)
        self.add(make("select", [predicate, on_true, on_false]),
                 id(on_true) in self.inexact or id(on_false) in self.inexact)

    def convert(self):
        operand = self.pick()
        loose = id(operand) in self.inexact
        targets = [dtypes.float32, dtypes.float64] if loose else DTYPES
        self.add(make("convert", [operand], dtype=self.draw(st.sampled_from(targets))), loose)

    def broadcast(self):
        operand = self.pick()
        extent = self.draw(st.sampled_from([1, 3, 7]))
        axis = self.draw(st.integers(0, operand.ndim))
        shape = (*operand.shape[:axis], extent, *operand.shape[axis:])
        dimensions = tuple(index if index < axis else index + 1 for index in range(operand.ndim))
        self.add(make("broadcast", [operand], shape=shape, dimensions=dimensions), id(operand) in self.inexact)

    def reduce(self):
        operand = self.pick()
        loose = id(operand) in self.inexact
        dimensions = sorted(self.draw(st.sets(st.integers(0, max(operand.ndim - 1, 0)), max_size=operand.ndim)))
        kinds = {dtypes.bool_: ["and", "or"]}.get(operand.dtype, ["sum", "max", "min", "prod"])
        if loose:
            kinds = ["sum", "max", "min"]
        kind = self.draw(st.sampled_from(kinds))
        terms = int(np.prod([operand.shape[axis] for axis in dimensions]))
        reassociated = kind in ("sum", "prod") and terms > 1
        self.add(make("reduce", [operand], dimensions=tuple(dimensions), kind=kind), loose or reassociated)

    def slice(self):
        operand = self.pick()
        start = [self.draw(st.integers(0, size)) for size in operand.shape]
        limit = [self.draw(st.integers(begin, size)) for begin, size in zip(start, operand.shape)]
        stride = [self.draw(st.integers(1, 3)) for _ in operand.shape]
        self.add(make("slice", [operand], start=tuple(start), limit=tuple(limit), stride=tuple(stride)),
                 id(operand) in self.inexact)

    def transpose(self):
        operand = self.pick()
        permutation = tuple(self.draw(st.permutations(range(operand.ndim))))
        self.add(make("transpose", [operand], permutation=permutation), id(operand) in self.inexact)

    def reshape(self):
        operand = self.pick()
        shape = self.draw(st.sampled_from([operand.shape[::-1], (operand.size,), (1, *operand.shape), ()]))
        self.add(make("reshape", [operand], shape=shape), id(operand) in self.inexact)

    def reverse(self):
        operand = self.pick()
        dimensions = sorted(self.draw(st.sets(st.integers(0, max(operand.ndim - 1, 0)), max_size=operand.ndim)))
        self.add(make("reverse", [operand], dimensions=tuple(dimensions)), id(operand) in self.inexact)

    def pad(self):
        operand = self.pick()
        value = constant(self.draw(st.sampled_from([0, 1, -3])), operand.dtype)
        low, high, interior = ([self.draw(st.integers(0, 2)) for _ in operand.shape] for _ in range(3))
        self.add(make("pad", [operand, value], low=tuple(low), high=tuple(high), interior=tuple(interior)),
                 id(operand) in self.inexact)

    def concatenate(self):
        operand = self.pick()
        other = self.pick(operand.shape, operand.dtype)
        dimension = self.draw(st.integers(0, max(operand.ndim - 1, 0)))
        self.add(make("concatenate", [operand, other], dimension=dimension),
                 id(operand) in self.inexact or id(other) in self.inexact)

    def iota(self):
        shape = self.draw(st.sampled_from([shape for shape in SHAPES if shape]))
        dtype = self.draw(st.sampled_from([dtypes.float32, dtypes.float64, dtypes.int32]))
        self.add(make("iota", shape=shape, dtype=dtype, dimension=self.draw(st.integers(0, len(shape) - 1))), False)

    def dot(self):
        left = self.pick()
        candidates = [node for node in self.pool if node.dtype == left.dtype and node.ndim in (1, 2)
                      and left.ndim and node.shape[-1:] == left.shape[-1:]]
        right = self.draw(st.sampled_from(candidates)) if candidates else left
        self.add(make("dot", [left, right], lhs_batch=(), rhs_batch=(), lhs_contracting=(left.ndim - 1,),
                      rhs_contracting=(right.ndim - 1,)), True)


STEPS = ["unary", "unary", "binary", "binary", "select", "convert", "broadcast", "reduce", "reduce",
         "slice", "transpose", "reshape", "reverse", "pad", "concatenate", "iota", "dot"]


def float_elements(dtype):
    # |x| <= 10: exp, power and products stay far from overflow; no subnormals, which
    # neither side treats specially but which turn relative bounds into absolute ones.
    zero = np.dtype(dtype).type(0)
    return elements(dtype, allow_edge=False, min_value=-10, max_value=10).map(
        lambda x: zero if abs(x) < 1e-6 else x)


@st.composite
def random_graphs(draw):
    """(computation, arguments, inexact nodes): a random graph over 1-3 parameters."""
    parameters = [parameter(number, draw(st.sampled_from(SHAPES)), draw(st.sampled_from(DTYPES)))
                  for number in range(draw(st.integers(1, 3)))]
    builder = Builder(draw, parameters)
    for _ in range(draw(st.integers(3, 12))):
        try:
            getattr(builder, draw(st.sampled_from(STEPS)))()
        except HloError:
            pass  # the op refuses these operands (dtype, rank, empty max); draw another step
    pool = builder.pool
    used = {id(operand) for node in pool for operand in node.operands}
    sinks = [node for node in pool[len(parameters):] if id(node) not in used] or [pool[-1]]
    arguments = [
        draw(hnp.arrays(node.dtype, node.shape, elements=(
            float_elements(node.dtype) if dtypes.is_floating(node.dtype) else elements(node.dtype))))
        for node in parameters
    ]
    inexact = [node for node in pool if id(node) in builder.inexact]  # nodes, not ids: kept alive
    return Computation("main", tuple(parameters), tuple(sinks)), arguments, inexact


# -------------------------------------------------------------------------- error bounds


def magnitude(value):
    finite = np.abs(value[np.isfinite(value)]) if value.size else value
    return float(finite.max()) if finite.size else 0.0


def error_bound(node, values, bounds):
    """Largest |cpu - evaluator| over the finite elements of `node`, from its operands' bounds.

    Forward error analysis with unit roundoff u = eps / 2, each side within its own bound of
    the exact value, so the two differ by at most twice it:
      add/subtract:  ea + eb + eps * |out|            (one rounding of a perturbed result)
      multiply:      |a| eb + |b| ea + ea eb + eps * |out|
      sin/cos/tanh:  ea + 4 ulp(out)                  (1-Lipschitz; libm within 4 ULP of NumPy)
      transcendental of exact operands:  4 ulp(out) <= 4 eps |out|
      reduce sum of n terms: n ea + (n - 1) eps sum|t| (recursive summation error, Higham 4.3:
                     (n - 1) u sum|t| for either order)
      reduce prod of exact terms: (n - 1) eps |out|   ((1 + u)^(n-1) - 1 on each side)
      dot over k terms: k (|a| eb + |b| ea + ea eb) + (k - 1) eps sum|a b|
      max/min, select, layout ops, converts to wider: the largest operand bound;
      convert float64 -> float32 adds eps32 |out|.
    """
    errors = [bounds.get(id(operand), 0.0) for operand in node.operands]
    if not dtypes.is_floating(node.dtype):
        return 0.0
    eps = float(np.finfo(node.dtype).eps)
    out = magnitude(values[id(node)])
    sizes = [magnitude(values[id(operand)]) for operand in node.operands]
    name = node.opcode
    if name in ("add", "subtract"):
        return errors[0] + errors[1] + eps * out
    if name == "multiply":
        return sizes[0] * errors[1] + sizes[1] * errors[0] + errors[0] * errors[1] + eps * out
    if name in TRANSCENDENTAL:
        return max(errors, default=0.0) + 4 * eps * out
    if name == "reduce":
        operand = values[id(node.operands[0])]
        dimensions = node.attr("dimensions")
        terms = int(np.prod([operand.shape[axis] for axis in dimensions]))
        if node.attr("kind") == "sum":
            total = magnitude(np.sum(np.abs(operand), axis=tuple(dimensions)))
            return terms * errors[0] + max(terms - 1, 0) * eps * total
        if node.attr("kind") == "prod":
            return max(terms - 1, 0) * eps * out
        return errors[0]
    if name == "dot":
        left, right = (values[id(operand)] for operand in node.operands)
        terms = left.shape[-1]
        total = magnitude(np.tensordot(np.abs(left), np.abs(right), axes=([-1], [-1])))
        propagated = sizes[0] * errors[1] + sizes[1] * errors[0] + errors[0] * errors[1]
        return terms * propagated + max(terms - 1, 0) * eps * total
    if name == "convert" and node.dtype == dtypes.float32 and node.operands[0].dtype == dtypes.float64:
        return errors[0] + eps * out
    return max(errors, default=0.0)


# --------------------------------------------------------------------------- the property


def assert_agrees(got, want, bound):
    assert got.shape == want.shape
    assert got.dtype == want.dtype
    if not dtypes.is_floating(want.dtype) or bound == 0.0:
        np.testing.assert_array_equal(got, want, strict=True)
        if dtypes.is_floating(want.dtype):
            numbers = ~np.isnan(want)  # the sign of a NaN is unspecified (IEEE 754)
            np.testing.assert_array_equal(np.signbit(got[numbers]), np.signbit(want[numbers]))
        return
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite], want[~finite])
    excess = np.abs(got[finite].astype(np.float64) - want[finite]) - bound
    assert excess.max(initial=0.0) <= 0.0, f"off by {excess.max()} beyond the bound {bound}"


def check_random_graph(graph, run, backend_name, bound=error_bound):
    """Run `graph` with `run(computation, arguments)` and hold each output to the evaluator's
    within the error-analysis bound (`bound(node, values, bounds)`). Shared by the CPU and GPU
    fuzz tests."""
    computation, arguments, inexact_nodes = graph
    inexact = set(map(id, inexact_nodes))
    everything = computation.post_order()
    values = dict(zip(map(id, everything), evaluate(
        Computation("all", computation.parameters, tuple(everything)), arguments), strict=True))
    bounds = {}
    for node in everything:
        if id(node) in inexact:
            # Bounds hold where values are finite and far from overflow: reordered sums of
            # large or infinite terms can overflow on one side only, and inf * (0 vs tiny)
            # differs in kind, so such graphs are ill-conditioned for this comparison.
            for value in [values[id(node)], *(values.get(id(operand)) for operand in node.operands)]:
                assume(value is None or not dtypes.is_floating(value.dtype)
                       or (np.isfinite(value).all() and magnitude(value) < 1e12))
            bounds[id(node)] = bound(node, values, bounds)
    want = evaluate(computation, arguments)
    got = run(computation, arguments)
    printed = text.print_module(Module("main", computation))
    for output, expected, actual in zip(computation.outputs, want, got, strict=True):
        try:
            assert_agrees(np.asarray(actual), expected, bounds.get(id(output), 0.0))
        except AssertionError as error:
            raise AssertionError(f"{output.name}:\n{printed}\ninputs={arguments}\n"
                                 f"{backend_name}={actual!r}\nevaluator={expected!r}") from error


@settings(max_examples=60, deadline=None)
@given(random_graphs())
def test_cpu_backend_matches_the_evaluator_on_random_graphs(graph):
    check_random_graph(
        graph, lambda computation, arguments: compile_module(Module("main", computation), "cpu").run(arguments), "cpu")
