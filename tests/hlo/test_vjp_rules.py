"""Every op's VJP rule (OpDef.vjp) against central finite differences, on both backends.

One record per rule (or per interesting attribute set): how to build the op from float64
inputs, the input shapes and domain, and where the op has kinks (examples there are skipped,
ties are pinned by closed-form tests in tests/frontend/test_autodiff.py). For each example,
la.grad gives the gradient of L(x) = sum(op(x) * w) for a random cotangent w; its directional
derivative along a random direction v must match the central difference
(L(x + h v) - L(x - h v)) / 2h computed with the op's NumPy reference.

A completeness test fails when an op has a rule but no record here (or no closed-form check),
or has no rule and is not listed in WITHOUT_RULE with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarr as la
from lazyarr.hlo import Computation, HloError, OpDef, all_ops, constant, evaluate, fresh_parameter, make
from lazyarr.hlo.autodiff import vjp_graph
from lazyarr.hlo.ops._vjp_support import no_gradient, no_operands

F32, F64, S64 = np.dtype("float32"), np.dtype("float64"), np.dtype("int64")

# Ops without a VJP rule, and why: la.grad raises NotImplementedError naming them.
WITHOUT_RULE = {
    "custom-call": "host-side NumPy targets (sort, linalg, fft): no derivative rules yet",
    "fusion": "exists only after the fusion pass; graphs are differentiated before compiling",
    "complex": "complex numbers are out of scope (real, imag and conj have rules for real operands)",
    "nextafter": "a one-ulp step: its derivative says nothing useful",
}

# Ops whose rule passes no gradient: bool/integer results, or piecewise constant.
NO_GRADIENT = {
    "compare", "argmax", "argmin", "not", "is-nan", "is-inf", "is-finite", "signbit",
    "and", "or", "xor", "shift-left", "shift-right",
    "sign", "floor", "ceil", "trunc", "round-nearest-even", "floor-divide", "imag", "gcd", "lcm",
    "frexp-exponent", "spacing", "popcount",
}
LEAVES = {"parameter", "constant", "iota"}
# Rules checked by a closed form instead of finite differences, with the test doing it.
CLOSED_FORM = {"convert": "test_convert_passes_the_cotangent_back_in_the_operand_dtype"}

MARGIN = 1e-3  # examples closer than this to a kink are skipped; >> STEP, so x +- STEP*v stays on one side


def _op(name, **attrs):
    return lambda *nodes: make(name, list(nodes), **attrs)


def _int_constant(value):
    return constant(np.asarray(value, dtype=S64))


def _zeros_like(node):
    return make("broadcast", [constant(np.float64(0.0))], shape=node.shape, dimensions=())


def _distinct(*arrays):
    """All values pairwise apart by MARGIN (max/min/clamp ties are kinks)."""
    values = np.sort(np.concatenate([np.ravel(array) for array in arrays]))
    return bool(np.all(np.diff(values) > MARGIN))


def _away_from_halves(x):
    return bool(np.all(np.abs(x * 2 - np.round(x * 2)) > 2 * MARGIN))


def _away_from_powers_of_two(x):
    """|x| not near 0 nor near a power of two (where frexp's exponent steps)."""
    with np.errstate(divide="ignore"):
        octave = np.log2(np.abs(x))
    return bool(np.all(np.abs(x) > 0.1) and np.all(np.abs(octave - np.round(octave)) > 2 * MARGIN))


def _elementwise_apart(a, b):
    return bool(np.all(np.abs(a - b) > MARGIN))


def _nonzero(*arrays):
    return all(bool(np.all(np.abs(array) > MARGIN)) for array in arrays)


@dataclass(frozen=True)
class Rule:
    label: str                                  # the op name, then what distinguishes the record
    build: Callable                             # float64 input nodes -> the instruction under test
    shapes: tuple                               # one float64 input per shape
    low: float = -2.0                           # inputs are drawn from [low, high]
    high: float = 2.0
    smooth_at: Callable = field(default=lambda *values: True)  # False near kinks

    @property
    def op(self):
        return self.label.split(":")[0]


def _unary(name, low=-2.0, high=2.0, smooth_at=lambda x: True):
    return Rule(name, _op(name), ((2, 3),), low, high, smooth_at)


def _binary(name, low=-2.0, high=2.0, smooth_at=lambda a, b: True):
    return Rule(name, _op(name), ((3,), (3,)), low, high, smooth_at)


RULES = [
    _unary("negate"),
    _unary("abs", smooth_at=_nonzero),
    _unary("sqrt", 0.1, 4.0),
    _unary("cbrt", 0.1, 4.0),
    _unary("exp"),
    _unary("exp2"),
    _unary("expm1"),
    _unary("log", 0.1, 4.0),
    _unary("log2", 0.1, 4.0),
    _unary("log10", 0.1, 4.0),
    _unary("log1p", -0.5, 3.0),
    _unary("sin"),
    _unary("cos"),
    _unary("tan", -1.2, 1.2),
    _unary("asin", -0.9, 0.9),
    _unary("acos", -0.9, 0.9),
    _unary("atan", -3.0, 3.0),
    _unary("sinh"),
    _unary("cosh"),
    _unary("tanh"),
    _unary("asinh"),
    _unary("acosh", 1.1, 4.0),
    _unary("atanh", -0.9, 0.9),
    _unary("reciprocal", 0.2, 3.0),
    _unary("real"),
    _unary("conj"),
    _unary("imag"),
    _unary("sign", smooth_at=_nonzero),
    _unary("floor", smooth_at=_away_from_halves),
    _unary("ceil", smooth_at=_away_from_halves),
    _unary("trunc", smooth_at=_away_from_halves),
    _unary("round-nearest-even", smooth_at=_away_from_halves),
    _unary("frexp-mantissa", -3.0, 3.0, smooth_at=_away_from_powers_of_two),
    Rule("ldexp:int32 exponents", lambda x: make("ldexp", [x, constant(np.array([-2, 0, 3], np.int32))]), ((3,),)),
    _binary("add"),
    _binary("subtract"),
    _binary("multiply"),
    _binary("divide", 0.2, 3.0),
    _binary("power", 0.2, 3.0),
    Rule("power:literal exponent 2", lambda x: make("power", [x, make(
        "broadcast", [constant(np.float64(2.0))], shape=x.shape, dimensions=())]), ((4,),)),
    Rule("power:literal exponent -1.5", lambda x: make("power", [x, make(
        "broadcast", [constant(np.float64(-1.5))], shape=x.shape, dimensions=())]), ((4,),), 0.2, 3.0),
    _binary("maximum", smooth_at=_elementwise_apart),
    _binary("minimum", smooth_at=_elementwise_apart),
    _binary("fmax", smooth_at=_elementwise_apart),
    _binary("fmin", smooth_at=_elementwise_apart),
    _binary("atan2", smooth_at=lambda a, b: _nonzero(a) and bool(np.all(np.hypot(a, b) > 0.1))),
    _binary("hypot", smooth_at=lambda a, b: bool(np.all(np.hypot(a, b) > 0.1))),
    _binary("copysign", smooth_at=_nonzero),
    _binary("logaddexp"),
    _binary("remainder", 0.5, 2.0, smooth_at=lambda a, b: _away_from_halves(a / b)),
    _binary("fmod", 0.5, 2.0, smooth_at=lambda a, b: _away_from_halves(a / b)),
    _binary("floor-divide", 0.5, 2.0, smooth_at=lambda a, b: _away_from_halves(a / b)),
    Rule("select", lambda a, b: make("select", [make("compare", [a, _zeros_like(a)], direction="GT"), a, b]),
         ((2, 2), (2, 2)), smooth_at=lambda a, b: _nonzero(a)),
    Rule("clamp", _op("clamp"), ((4,), (4,), (4,)), smooth_at=lambda *values: all(
        _elementwise_apart(values[i], values[j]) for i in range(3) for j in range(i))),
    Rule("clamp:scalar bounds broadcast", lambda low, x, high: make("clamp", [
        make("broadcast", [low], shape=(4,), dimensions=()), x,
        make("broadcast", [high], shape=(4,), dimensions=())]), ((), (4,), ()), smooth_at=_distinct),
    Rule("broadcast:new and stretched dims", _op("broadcast", shape=(2, 3, 4), dimensions=(1, 2)), ((3, 1),)),
    Rule("broadcast:scalar", _op("broadcast", shape=(2, 2), dimensions=()), ((),)),
    Rule("reshape", _op("reshape", shape=(3, 2)), ((2, 3),)),
    Rule("transpose", _op("transpose", permutation=(2, 0, 1)), ((2, 3, 4),)),
    Rule("slice:strided", _op("slice", start=(1, 0), limit=(5, 3), stride=(2, 2)), ((5, 4),)),
    Rule("slice:empty", _op("slice", start=(2, 0), limit=(2, 3), stride=(1, 1)), ((3, 3),)),
    Rule("reverse", _op("reverse", dimensions=(0,)), ((3, 2),)),
    Rule("pad:edges and interior", _op("pad", low=(1, 0), high=(0, 2), interior=(1, 1)), ((2, 3), ())),
    Rule("concatenate", _op("concatenate", dimension=1), ((2, 1), (2, 3), (2, 2))),
    Rule("reduce:sum", _op("reduce", kind="sum", dimensions=(0, 2)), ((2, 3, 2),)),
    Rule("reduce:prod", _op("reduce", kind="prod", dimensions=(1,)), ((2, 3),)),
    Rule("reduce:prod over inner dims", _op("reduce", kind="prod", dimensions=(0, 2)), ((2, 3, 3),), -1.5, 1.5),
    Rule("reduce:max", _op("reduce", kind="max", dimensions=(1,)), ((2, 3),), smooth_at=_distinct),
    Rule("reduce:min", _op("reduce", kind="min", dimensions=(0, 1)), ((2, 3),), smooth_at=_distinct),
    Rule("cumulative:sum", _op("cumulative", kind="sum", dimension=1), ((2, 4),)),
    Rule("cumulative:prod", _op("cumulative", kind="prod", dimension=0), ((5, 2),)),
    Rule("dot:matmul", _op("dot", lhs_batch=(), rhs_batch=(), lhs_contracting=(1,), rhs_contracting=(0,)),
         ((2, 3), (3, 4))),
    Rule("dot:batched", _op("dot", lhs_batch=(0,), rhs_batch=(0,), lhs_contracting=(2,), rhs_contracting=(1,)),
         ((2, 3, 4), (2, 4, 2))),
    Rule("dot:two contracting dims crossed",
         _op("dot", lhs_batch=(), rhs_batch=(), lhs_contracting=(2, 1), rhs_contracting=(0, 1)),
         ((2, 3, 4), (4, 3, 2))),
    Rule("dot:batch dims inside",
         _op("dot", lhs_batch=(1,), rhs_batch=(2,), lhs_contracting=(0,), rhs_contracting=(1,)),
         ((3, 2, 2), (4, 3, 2))),
    Rule("dot:vector", _op("dot", lhs_batch=(), rhs_batch=(), lhs_contracting=(0,), rhs_contracting=(0,)),
         ((3,), (3,))),
    Rule("gather:repeated rows", lambda x: make("gather", [x, _int_constant([[0], [2], [0], [-1]])],
                                                index_dims=(0,)), ((3, 2),)),
    Rule("gather:points", lambda x: make("gather", [x, _int_constant([[0, 1], [2, 3], [0, 1]])],
                                         index_dims=(0, 1)), ((3, 4),)),
    Rule("scatter:add", lambda x, u: make("scatter", [x, _int_constant([[0], [2], [0]]), u],
                                          index_dims=(0,), mode="add"), ((3, 2), (3, 2))),
    Rule("scatter:set with a repeated index", lambda x, u: make(
        "scatter", [x, _int_constant([[1], [0], [1]]), u], index_dims=(1,), mode="set"), ((2, 3), (3, 2))),
    Rule("dynamic-slice:clamped start", lambda x: make("dynamic-slice", [x, _int_constant(1), _int_constant(5)],
                                                       sizes=(2, 2)), ((3, 4),)),
    Rule("dynamic-update-slice", lambda x, u: make(
        "dynamic-update-slice", [x, u, _int_constant(2), _int_constant(-1)]), ((3, 4), (2, 2))),
]

STEP = 1e-6
# Central differences in float64 with STEP = 1e-6 err by STEP**2 / 6 * |L'''| (below 1e-10 on
# these domains) plus rounding, about eps * |L| / STEP = 2.2e-10 * |L| (|L| < 100 here): a few
# 1e-8 at most. A wrong rule is off by O(1), so 1e-6 separates the two by orders of magnitude.
TOLERANCE = 1e-6


@pytest.fixture(scope="module", params=["interpreter", "cpu"])
def backend(request):
    previous = la.get_backend_name()
    la.set_backend(request.param)
    yield request.param
    la.set_backend(previous)


@pytest.fixture
def interpreter():
    previous = la.get_backend_name()
    la.set_backend("interpreter")
    yield
    la.set_backend(previous)


def _reference_loss(rule: Rule, cotangent: np.ndarray):
    """L(x) = sum(op(x) * w) evaluated by the ops' NumPy references."""
    parameters = [make("parameter", number=index, shape=shape, dtype=F64) for index, shape in enumerate(rule.shapes)]
    computation = Computation("loss", tuple(parameters), (rule.build(*parameters),))
    return lambda values: float(np.sum(evaluate(computation, list(values))[0] * cotangent))


def _output_shape(rule: Rule):
    return rule.build(*[fresh_parameter(shape, F64) for shape in rule.shapes]).shape


def _smooth_example(rule: Rule, generator: np.random.Generator):
    """Inputs drawn uniformly from the rule's domain, away from its kinks; then directions v
    and a cotangent w in [-1, 1]."""
    for _ in range(1000):
        inputs = [generator.uniform(rule.low, rule.high, shape) for shape in rule.shapes]
        if rule.smooth_at(*inputs):
            break
    else:
        raise AssertionError(f"{rule.label}: no smooth example found")
    directions = [generator.uniform(-1.0, 1.0, shape) for shape in rule.shapes]
    cotangent = generator.uniform(-1.0, 1.0, _output_shape(rule))
    return inputs, directions, cotangent


def _directional(gradients, directions) -> float:
    return sum(float(np.sum(np.asarray(gradient) * direction)) for gradient, direction in zip(gradients, directions))


def _central_difference(function, inputs, directions) -> float:
    ahead = function([value + STEP * direction for value, direction in zip(inputs, directions)])
    behind = function([value - STEP * direction for value, direction in zip(inputs, directions)])
    return (ahead - behind) / (2 * STEP)


def _loss_of(rule: Rule, cotangent):
    def loss(*arrays):
        return la.sum(la.Array(rule.build(*[array._node for array in arrays])) * cotangent)

    return loss


# Hypothesis draws the seed of NumPy's generator: drawing arrays element by element through
# hypothesis costs more than the whole check, and its favourite values (0, 1, repeats) are the
# kinks and singularities these records exclude anyway.
@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.label)
@settings(max_examples=max(1, settings().max_examples // 4))  # x 2 backends x ~80 records: 10 on ci
@given(seed=st.integers(0, 2**32 - 1))
def test_rule_matches_finite_differences(backend, rule, seed):
    inputs, directions, cotangent = _smooth_example(rule, np.random.default_rng(seed))
    gradients = la.grad(_loss_of(rule, cotangent), argnums=tuple(range(len(inputs))))(*inputs)
    for gradient, value in zip(gradients, inputs):
        assert gradient.shape == value.shape and gradient.dtype == F64
    exact = _directional(gradients, directions)
    estimate = _central_difference(_reference_loss(rule, cotangent), inputs, directions)
    assert abs(exact - estimate) <= TOLERANCE * (1 + abs(estimate)), (exact, estimate, inputs)


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.label)
def test_rule_is_differentiable_again(interpreter, rule):
    """The backward graph uses only ops with rules, and its derivative matches finite
    differences of the first derivative (interpreter; one seeded example per record)."""
    generator = np.random.default_rng(0)
    inputs, directions, cotangent = _smooth_example(rule, generator)
    weights = [generator.uniform(-1, 1, shape) for shape in rule.shapes]
    argnums = tuple(range(len(inputs)))

    def first_derivative_along_weights(*arrays):
        gradients = la.grad(_loss_of(rule, cotangent), argnums=argnums)(*arrays)
        return sum(la.sum(gradient * weight) for gradient, weight in zip(gradients, weights))

    second = la.grad(first_derivative_along_weights, argnums=argnums)(*inputs)
    exact = _directional(second, directions)
    estimate = _central_difference(lambda values: float(first_derivative_along_weights(*values)), inputs, directions)
    # As above, one derivative higher: the third derivatives on these domains stay below 1e3.
    assert abs(exact - estimate) <= TOLERANCE * (1 + abs(estimate)), (exact, estimate, inputs)


def test_every_op_has_a_rule_or_a_reason():
    ops = all_ops()
    without = sorted(name for name, opdef in ops.items() if opdef.vjp is None)
    assert without == sorted(WITHOUT_RULE), "ops without a VJP rule must be listed in WITHOUT_RULE with a reason"
    assert sorted(name for name, opdef in ops.items() if opdef.vjp is no_gradient) == sorted(NO_GRADIENT)
    assert sorted(name for name, opdef in ops.items() if opdef.vjp is no_operands) == sorted(LEAVES)
    checked = {rule.op for rule in RULES} | set(CLOSED_FORM) | LEAVES | NO_GRADIENT
    unchecked = sorted(name for name, opdef in ops.items() if opdef.vjp is not None and name not in checked)
    assert not unchecked, f"rules without a finite-difference record or closed-form test: {unchecked}"


def test_no_gradient_passes_nothing_to_any_operand():
    x = fresh_parameter((2,), F64)
    assert no_gradient(make("compare", [x, x], direction="LT"), None) == (None, None)
    assert no_gradient(make("floor", [x]), _zeros_like(x)) == (None,)


def test_convert_passes_the_cotangent_back_in_the_operand_dtype():
    narrow = fresh_parameter((3,), F32)
    wide = make("convert", [narrow], dtype=F64)
    cotangent = fresh_parameter((3,), F64)
    (result,) = all_ops()["convert"].vjp(wide, cotangent)
    assert result is make("convert", [cotangent], dtype=F32)
    from_integers = make("convert", [fresh_parameter((3,), S64)], dtype=F64)
    assert all_ops()["convert"].vjp(from_integers, cotangent) == (None,)


def test_cotangents_of_several_users_add_up():
    x = fresh_parameter((2,), F64)
    seed = _zeros_like(x)
    (gradient,) = vjp_graph([make("add", [make("sin", [x]), make("cos", [x])])], [x], [seed])
    assert gradient.opcode == "add"


def test_unreached_input_gets_zeros():
    x, y = fresh_parameter((2,), F64), fresh_parameter((3,), F32)
    (_, gradient) = vjp_graph([make("sin", [x])], [x, y], [_zeros_like(x)])
    assert gradient.shape == (3,) and gradient.dtype == F32
    (value,) = evaluate(Computation("zeros", (), (gradient,)), [])
    assert np.array_equal(value, np.zeros(3, F32))


def test_the_sweep_stops_at_inputs_and_is_iterative():
    x = fresh_parameter((), F64)
    y = make("exp", [x])
    node = y
    for _ in range(5000):  # deeper than the recursion limit
        node = make("negate", [node])
    x_gradient, y_gradient = vjp_graph([node], [x, y], [constant(np.float64(1.0))])
    # y is an independent input of this sweep: nothing flows on through exp into x.
    values = evaluate(Computation("deep", (), (x_gradient, y_gradient)), [])
    assert values == [0.0, 1.0]  # 5000 negations: an even number


def test_missing_rule_is_named():
    x = fresh_parameter((3,), F64)
    from lazyarr.hlo.ops.custom import custom_call_outputs

    (sorted_x,) = custom_call_outputs("sort", [x], axis=0, descending=False)
    with pytest.raises(NotImplementedError, match="no VJP rule for op 'sort'"):
        vjp_graph([sorted_x], [x], [_zeros_like(x)], where="la.grad")


def test_a_broken_rule_is_reported_with_its_op():
    elementwise = all_ops()["negate"]
    broken = OpDef(
        name="broken-negate", arity=1, shape_rule=elementwise.shape_rule, dtype_rule=elementwise.dtype_rule,
        reference=elementwise.reference, vjp=lambda instruction, cotangent: (constant(np.float64(0.0)),),
    )
    x = fresh_parameter((3,), F64)
    node = make(broken, [x])
    with pytest.raises(HloError, match=r"broken-negate: VJP rule returned f64\[\] .* operand 0"):
        vjp_graph([node], [x], [_zeros_like(x)])


def test_complex_intermediates_are_refused():
    x = fresh_parameter((3,), F64)
    magnitude = make("abs", [make("complex", [x, x])])
    with pytest.raises(TypeError, match="complex numbers are not supported: op 'abs'"):
        vjp_graph([magnitude], [x], [_zeros_like(x)])


def test_integer_inputs_and_mismatched_cotangents_are_refused():
    x = fresh_parameter((3,), S64)
    with pytest.raises(TypeError, match="int64"):
        vjp_graph([x], [x], [x])
    y = fresh_parameter((3,), F64)
    with pytest.raises(HloError, match=r"cotangent 0 is f32\[3\]"):
        vjp_graph([y], [y], [fresh_parameter((3,), F32)])


def test_docstring_examples():
    import doctest

    import lazyarr.hlo.autodiff

    assert doctest.testmod(lazyarr.hlo.autodiff).failed == 0
