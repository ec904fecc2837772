"""Differential fuzz: random HLO graphs give the same results on the CPU backend as in the
NumPy evaluator (the oracle).

Graphs mix elementwise (unary, binary, compare/select, clamp, convert), broadcast, reduce (sum,
max, min, prod over random axes), strided slice, transpose, reshape, pad, concatenate, reverse,
iota and dot over float32/float64/int32/bool parameters. Shapes are a small fixed set (each
new shape compiles kernels) of sizes that are not multiples of any vector width (1, 3, 7, 17,
33), with empty dimensions and 0-d values.

Results are compared shape, then dtype, then values. Integer and bool results, and float
results computed only by correctly rounded operations, must be identical (NaN positions and
signs of zero included). Float results downstream of a reassociated reduction, a dot or a
transcendental carry an error bound derived alongside the graph, see `error_bound`.

Float -> int converts read only finite values inside int32: NaN, inf and out-of-range values
are a documented difference (the CPU saturates, NumPy's result is undefined). Where the
generator cannot bound an operand (`static_limit`), it puts NaN -> 0 and a clamp before the
convert. Two comparisons are discarded where the data makes them ill-defined, never by
op: reordered sums and products whose partial results can overflow or underflow in some
order (`partial_products_stay_normal`), and maximum/minimum/fmax/fmin meeting 0.0 and -0.0 at
one position (`meets_zeros_of_both_signs`: a documented difference). A mismatch reports the
graph as HLO text, the inputs, which output differs and both values in full; a crash carries
the graph and inputs as a note.

The hypothesis profile sets the number of graphs: `ci` a few dozen, derandomized;
`HYPOTHESIS_PROFILE=fuzz python -m pytest tests/backends/test_cpu_fuzz.py` 10,000 fresh ones.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
from hypothesis import assume, given, reject, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lazyarr import dtypes
from lazyarr.compile import compile_module
from lazyarr.hlo import Computation, HloError, Module, constant, evaluate, make, text
from lazyarr.hlo.ops.elementwise import BINARY, COMPARISONS, UNARY
from tests.backends.test_cpu_elementwise import ZERO_SIGN_UNSPECIFIED
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


# Float -> int32 converts read only values known (statically) to be finite and at most this
# large, with a margin of 2 for rounding in the sums that `static_limit` bounds exactly.
CONVERT_LIMIT = 2.0**30
# Clamp ranges put before a convert of anything else: int32's edges (2^31 - 128 is the largest
# float32 below 2^31), a wide and a narrow range.
INT32_CLAMPS = [(-(2.0**31), 2.0**31 - 128), (-1e9, 1e9), (-100.5, 100.5)]
PARAMETER_LIMIT = 10.0  # |x| of float parameters, see float_elements
SAME_LIMIT = {"negate", "abs", "real", "conj", "copysign", "maximum", "minimum", "fmax", "fmin",
              "select", "clamp", "broadcast", "slice", "transpose", "reshape", "reverse",
              "concatenate", "pad", "convert"}
ROUNDING = {"floor", "ceil", "trunc", "round-nearest-even"}
UNIT_RANGE = {"sin", "cos", "tanh", "sign", "atan", "atan2"}


def static_limit(node, limits):
    """A bound on |element| of `node` that holds for every input the generator draws, with
    every element finite, from its operands' limits (`limits`: id -> bound); math.inf when no
    such bound is known (e.g. divide, exp, log, sqrt: each can give inf or NaN). Converts
    from float to int32 need it: see `Builder.in_int32_range`.

    Bool and int32 values are finite by nature: 1 and 2^31.
    """
    if node.dtype == dtypes.bool_:
        return 1.0
    if dtypes.is_integer(node.dtype) and node.opcode != "iota":
        return 2.0**31
    name = node.opcode
    # Operands outside the pool are the generator's constants and their broadcasts.
    operands = [limits[id(operand)] if id(operand) in limits else static_limit(operand, limits)
                for operand in node.operands]
    largest = max(operands, default=math.inf)
    if name == "parameter":
        return PARAMETER_LIMIT
    if name == "iota":
        return float(node.shape[node.attr("dimension")])
    if name == "constant":
        value = np.abs(node.attr("literal").array.astype(np.float64))
        return float(value.max(initial=0.0)) if np.isfinite(value).all() else math.inf
    if largest == math.inf:
        return math.inf  # a non-finite operand may make anything non-finite
    if name in SAME_LIMIT:
        return largest
    if name in ROUNDING:
        return largest + 1.0
    if name in UNIT_RANGE:
        return 4.0  # pi and 1 with room
    if name in ("add", "subtract", "hypot"):
        return operands[0] + operands[1]
    if name == "multiply":
        return operands[0] * operands[1]
    if name == "dot":
        return node.operands[0].shape[-1] * operands[0] * operands[1]
    if name == "reduce":
        shape = node.operands[0].shape
        terms = math.prod(shape[axis] for axis in node.attr("dimensions"))
        kind = node.attr("kind")
        if kind == "sum":
            return terms * largest
        if kind == "prod":
            return max(largest, 1.0) ** terms if terms * math.log(max(largest, 1.0)) < 700 else math.inf
        if kind in ("max", "min") and terms:  # the empty max/min is -inf/inf
            return largest
    return math.inf


# ------------------------------------------------------------------- the graph builder


class Builder:
    """Grows a pool of instructions; `inexact` holds the ids of float nodes whose value the
    CPU may compute with different rounding than the evaluator (reduction order, libm)."""

    def __init__(self, draw, parameters):
        self.draw = draw
        self.pool = list(parameters)
        self.inexact = set()
        self.limits = {id(node): static_limit(node, {}) for node in parameters}

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
        self.limits[id(node)] = static_limit(node, self.limits)
        self.pool.append(node)
        return node

    def filled(self, value, shape, dtype):
        return make("broadcast", [constant(value, dtype)], shape=shape, dimensions=())

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
        target = self.draw(st.sampled_from(targets))
        if dtypes.is_floating(operand.dtype) and target == dtypes.int32:
            operand = self.in_int32_range(operand)
        self.add(make("convert", [operand], dtype=target), loose)

    def in_int32_range(self, operand):
        """`operand` itself where its values are known finite and well inside int32
        (`static_limit`), else NaN -> 0 and clamped to a range inside int32: converting NaN,
        inf or out-of-range floats to int is a documented difference (the CPU saturates,
        NumPy's result is undefined), so the converts see only defined values."""
        if self.limits.get(id(operand), math.inf) <= CONVERT_LIMIT:
            return operand
        low, high = self.draw(st.sampled_from(INT32_CLAMPS))
        shape, dtype = operand.shape, operand.dtype
        clamped = self.add(make("clamp", [self.filled(low, shape, dtype), operand,
                                          self.filled(high, shape, dtype)]), False)
        is_nan = self.add(make("is-nan", [operand]), False)
        return self.add(make("select", [is_nan, self.filled(0, shape, dtype), clamped]), False)

    def clamp(self):
        operand = self.pick()
        low = self.pick(operand.shape, operand.dtype)
        high = self.pick(operand.shape, operand.dtype)
        # clip(x, lo, hi) = min(max(x, lo), hi) is 1-Lipschitz in each operand: the largest bound.
        self.add(make("clamp", [low, operand, high]),
                 any(id(node) in self.inexact for node in (low, operand, high)))

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


STEPS = ["unary", "unary", "binary", "binary", "select", "clamp", "convert", "convert", "broadcast",
         "reduce", "reduce", "slice", "transpose", "reshape", "reverse", "pad", "concatenate", "iota",
         "dot"]


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


def partial_products_stay_normal(node, values):
    """Whether every partial product of a float `reduce prod`, in any order, stays within
    [1e-30, 1e30] in magnitude (or is 0), so that no order overflows or underflows.

    A reordered product is ill-conditioned otherwise, as a reordered sum of huge terms is:
    0 * (-3)^81 in float32 is -0 in NumPy's order (the zero comes first) and NaN when the
    (-3)^81 = -inf partial comes first (0 * -inf), both correct IEEE evaluations of an order.
    Every partial product lies between the product of the terms below 1 and that of those
    above 1 (zeros aside).
    """
    if node.opcode != "reduce" or node.attr("kind") != "prod" or not dtypes.is_floating(node.dtype):
        return True
    terms = np.abs(values[id(node.operands[0])].astype(np.float64))
    axes = tuple(node.attr("dimensions"))
    with np.errstate(all="ignore"):
        large = np.prod(np.maximum(terms, 1.0), axis=axes)
        small = np.prod(np.where(terms == 0, 1.0, np.minimum(terms, 1.0)), axis=axes)
    return bool(np.all(large <= 1e30) and np.all(small >= 1e-30))


def meets_zeros_of_both_signs(node, values):
    """Whether `node` is an op whose zero sign is unspecified (README: "maximum/minimum/fmax/
    fmin of 0.0 and -0.0": NumPy picks either by loop, lazyarr one rule; the elementwise
    suite's ZERO_SIGN_UNSPECIFIED) and meets 0.0 and -0.0 at one position. The sign of the
    result may then differ, and so may anything downstream (1 / x, copysign, signbit)."""
    if node.opcode not in ZERO_SIGN_UNSPECIFIED or not dtypes.is_floating(node.dtype):
        return False
    operands = [values[id(operand)] for operand in node.operands]
    negative = np.logical_or.reduce([(value == 0) & np.signbit(value) for value in operands])
    positive = np.logical_or.reduce([(value == 0) & ~np.signbit(value) for value in operands])
    return bool(np.any(negative & positive))


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
        if meets_zeros_of_both_signs(node, values):
            reject()  # a documented difference, not a mismatch
        if id(node) in inexact:
            # Bounds hold where values are finite and far from overflow: reordered sums of
            # large or infinite terms can overflow on one side only, and inf * (0 vs tiny)
            # differs in kind, so such graphs are ill-conditioned for this comparison.
            for value in [values[id(node)], *(values.get(id(operand)) for operand in node.operands)]:
                assume(value is None or not dtypes.is_floating(value.dtype)
                       or (np.isfinite(value).all() and magnitude(value) < 1e12))
            assume(partial_products_stay_normal(node, values))
            bounds[id(node)] = bound(node, values, bounds)
    want = evaluate(computation, arguments)
    try:
        got = list(run(computation, arguments))
    except Exception as error:
        error.add_note(f"{backend_name} failed on\n{repro_text(computation, arguments)}")
        raise
    if len(got) != len(want):
        raise AssertionError(f"{backend_name} gave {len(got)} outputs, the evaluator {len(want)}\n"
                             f"{repro_text(computation, arguments)}")
    for position, (output, expected, actual) in enumerate(zip(computation.outputs, want, got)):
        try:
            assert_agrees(np.asarray(actual), expected, bounds.get(id(output), 0.0))
        except AssertionError as error:
            raise AssertionError(mismatch_report(
                computation, arguments, position, expected, actual, backend_name, error)) from error


def exact_repr(value):
    """repr of an array with every element and every digit (shortest round-trip floats)."""
    with np.printoptions(threshold=sys.maxsize, floatmode="unique", linewidth=100):
        return repr(np.asarray(value))


def repro_text(computation, arguments):
    """The graph as HLO text (`lazyarr.hlo.text.parse` reads it back) and its inputs, each
    named as its parameter."""
    inputs = "\n".join(f"  p{number} = {exact_repr(value)}" for number, value in enumerate(arguments))
    return f"graph:\n{text.print_module(Module('main', computation))}inputs:\n{inputs}"


def mismatch_report(computation, arguments, position, expected, actual, backend_name, error):
    """What a failing comparison shows: which output differs (its position and HLO name), why,
    the graph, the inputs and both values in full."""
    output = computation.outputs[position]
    name = text.instruction_names(computation.post_order())[id(output)]
    return (f"{backend_name} differs from the evaluator at output {position} of "
            f"{len(computation.outputs)} ({name} = {text.format_type(output.shape, output.dtype)} "
            f"{output.opcode}): {error}\n"
            f"{repro_text(computation, arguments)}\n"
            f"expected (evaluator) {name} =\n{exact_repr(expected)}\n"
            f"actual ({backend_name}) {name} =\n{exact_repr(actual)}")


def run_twice(computation, arguments):
    """The executable's outputs from a first run, checked unchanged by a second run on other
    inputs: native runs keep their temporaries' buffers for the next call, and no kept buffer
    may be one the first run returned (or the second run would overwrite a user's result)."""
    executable = compile_module(Module("main", computation), "cpu")
    first = executable.run(arguments)
    kept = [np.array(value, copy=True) for value in first]
    executable.run([np.flip(argument) for argument in arguments])
    for position, (before, after) in enumerate(zip(kept, first)):
        assert before.tobytes() == after.tobytes(), f"output {position} changed when the executable ran again"
    return first


@settings(deadline=None)  # the profile sets the number of graphs (module docstring)
@given(random_graphs())
def test_cpu_backend_matches_the_evaluator_on_random_graphs(graph):
    check_random_graph(graph, run_twice, "cpu")


# ------------------------------------------------------------------ the fuzz test's own parts


def _converts_to_int32_of_floats(computation, arguments):
    """(operand value, convert) for every float -> int32 convert in the graph."""
    everything = computation.post_order()
    values = dict(zip(map(id, everything), evaluate(
        Computation("all", computation.parameters, tuple(everything)), arguments), strict=True))
    return [(values[id(node.operands[0])], node) for node in everything
            if node.opcode == "convert" and node.dtype == dtypes.int32
            and dtypes.is_floating(node.operands[0].dtype)]


def _assert_converts_read_defined_values(computation, arguments):
    for value, node in _converts_to_int32_of_floats(computation, arguments):
        wide = value.astype(np.float64)
        assert ((wide >= -(2.0**31)) & (wide < 2.0**31)).all(), f"convert reads {value}"  # NaN too


@settings(max_examples=settings().max_examples * 2, deadline=None)  # the evaluator only: fast
@given(random_graphs())
def test_random_graphs_convert_to_int_only_finite_values_in_range(graph):
    """NaN, inf and out-of-range floats converted to int differ by design (README: the CPU
    saturates, NumPy's result is undefined), so the generator keeps them from converts."""
    computation, arguments, _ = graph
    _assert_converts_read_defined_values(computation, arguments)


@given(st.data())
def test_converts_to_int_of_nan_inf_and_huge_values_are_guarded(data):
    """The same where the pool starts with NaN (0 / 0), inf (1 / 0) and values far outside
    int32 (x * 1e30), which random graphs reach only now and then."""
    x = parameter(0, (7,), dtypes.float32)
    builder = Builder(data.draw, [x])
    one, huge = (make("broadcast", [constant(value, dtypes.float32)], shape=(7,), dimensions=())
                 for value in (1.0, 1e30))
    builder.add(make("divide", [x, x]), False)
    builder.add(make("divide", [one, x]), False)
    builder.add(make("multiply", [x, huge]), False)
    for _ in range(data.draw(st.integers(1, 6))):
        try:
            getattr(builder, data.draw(st.sampled_from(["convert", "convert", "unary", "binary", "reduce"])))()
        except HloError:
            pass
    computation = Computation("main", (x,), tuple(builder.pool[1:]))
    arguments = [np.array([0.0, -1.0, 2.5, 10.0, -10.0, 0.5, 3.0], np.float32)]
    _assert_converts_read_defined_values(computation, arguments)


def _two_outputs():
    x = parameter(0, (3,), dtypes.float32)
    y = parameter(1, (3,), dtypes.int32)
    computation = Computation("main", (x, y), (make("negate", [x]), make("add", [y, y])))
    arguments = [np.array([0.1, -1.25, 3.0], np.float32), np.array([1, 2, -3], np.int32)]
    return computation, arguments


def test_a_mismatch_reports_the_graph_the_inputs_and_both_values():
    computation, arguments = _two_outputs()

    def wrong_second_output(computation, arguments):
        negated, doubled = evaluate(computation, arguments)
        return [negated, doubled + 1]

    with pytest.raises(AssertionError) as caught:
        check_random_graph((computation, arguments, []), wrong_second_output, "broken")
    message = str(caught.value)
    assert "broken differs from the evaluator at output 1 of 2 (add.3 = s32[3] add)" in message
    assert text.print_module(Module("main", computation)) in message
    assert "p0 = array([ 0.1 , -1.25,  3.  ], dtype=float32)" in message
    assert "p1 = array([ 1,  2, -3], dtype=int32)" in message
    assert "expected (evaluator) add.3 =\narray([ 2,  4, -6], dtype=int32)" in message
    assert "actual (broken) add.3 =\narray([ 3,  5, -5], dtype=int32)" in message
    assert "Mismatched elements: 3 / 3" in message  # NumPy's comparison says how


def test_a_crash_reports_the_graph_and_the_inputs():
    computation, arguments = _two_outputs()

    def crashing(computation, arguments):
        raise RuntimeError("backend exploded")

    with pytest.raises(RuntimeError, match="backend exploded") as caught:
        check_random_graph((computation, arguments, []), crashing, "broken")
    notes = "\n".join(caught.value.__notes__)
    assert text.print_module(Module("main", computation)) in notes
    assert "p1 = array([ 1,  2, -3], dtype=int32)" in notes


def test_static_limits_of_huge_products_are_unknown_not_an_error():
    x = parameter(0, (3, 17), dtypes.float32)
    big = make("multiply", [x, make("broadcast", [constant(1e8, dtypes.float32)], shape=(3, 17), dimensions=())])
    product = make("reduce", [big], dimensions=(0, 1), kind="prod")
    assert static_limit(big, {}) == 1e9
    assert static_limit(product, {}) == math.inf  # 1e9 ** 51 overflows a Python float


def test_products_that_overflow_in_some_order_are_not_compared():
    """0 * (-3)^81 in float32: NumPy's order gives -0, an order taking the zero last gives
    0 * -inf = NaN (found by the fuzz run); check_random_graph discards such graphs, as it
    does sums of huge terms."""
    x = parameter(0, (3, 17), dtypes.float32)
    padded = make("pad", [make("abs", [x]), constant(-3.0, dtypes.float32)],
                  low=(0, 0), high=(1, 0), interior=(0, 1))
    product = make("reduce", [padded], dimensions=(0, 1), kind="prod")  # 51 |x|, 81 times -3
    columns = make("reduce", [padded], dimensions=(0,), kind="prod")  # 4 terms each
    magnitudes = make("reduce", [make("abs", [x])], dimensions=(0, 1), kind="prod")
    computation = Computation("main", (x,), (product, columns, magnitudes))

    def values_for(argument):
        everything = computation.post_order()
        return dict(zip(map(id, everything), evaluate(
            Computation("all", computation.parameters, tuple(everything)), [argument]), strict=True))

    for argument in (np.zeros((3, 17), np.float32), np.ones((3, 17), np.float32)):
        assert not partial_products_stay_normal(product, values_for(argument))
        assert partial_products_stay_normal(columns, values_for(argument))
    assert partial_products_stay_normal(magnitudes, values_for(np.full((3, 17), 2, np.float32)))
    # (1e-3)^51 underflows float32: where partials turn subnormal or 0 depends on the order.
    assert not partial_products_stay_normal(magnitudes, values_for(np.full((3, 17), 1e-3, np.float32)))


def test_maximum_of_zeros_of_both_signs_is_not_compared():
    """fmax(-0.0, 0.0): NumPy's 0-d loop gives -0.0, lazyarr's one rule 0.0 (a documented
    difference, found by the fuzz run as fmax(-dot(x, x), dot(x, x)) over an empty x)."""
    x = parameter(0, (3,), dtypes.float64)
    values = {id(x): np.array([0.0, -0.0, 1.0])}
    other = make("negate", [x])
    values[id(other)] = np.array([-0.0, 0.0, -1.0])
    for name in ("maximum", "minimum", "fmax", "fmin"):
        assert meets_zeros_of_both_signs(make(name, [x, other]), values)
    values[id(other)] = np.array([0.0, -0.0, -1.0])  # the same signs at each position
    assert not meets_zeros_of_both_signs(make("maximum", [x, other]), values)
    assert not meets_zeros_of_both_signs(make("add", [x, other]), values)
