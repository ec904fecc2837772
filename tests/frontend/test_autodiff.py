"""la.grad, la.value_and_grad and la.vjp on NumPy-style code, on both backends.

Closed forms (the gradient of sum(x**2) is 2x, of logsumexp softmax, ...), the conventions at
kinks (ties of maximum and max, abs at 0, clip at its bounds, prod with zeros), finite
differences of composite NumPy-style functions, the API (argnums, has_aux, pytrees, vjp,
higher derivatives, laziness, la.jit) and the errors. The per-op rules are checked one by one
in tests/hlo/test_vjp_rules.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from lazyarr.frontend.tracing import TracedValueError
from lazyarr.hlo import fresh_parameter

F64 = np.dtype("float64")


@pytest.fixture(scope="module", params=["interpreter", "cpu"])
def backend(request):
    previous = la.get_backend_name()
    la.set_backend(request.param)
    yield request.param
    la.set_backend(previous)


@pytest.fixture
def interpreter():
    """For tests about the API rather than values: the reference backend, whatever ran before."""
    previous = la.get_backend_name()
    la.set_backend("interpreter")
    yield
    la.set_backend(previous)


# A few shapes (a size-1 dim, a vector, a matrix): each new shape compiles anew on the CPU backend.
SHAPES = st.sampled_from([(1,), (5,), (2, 3)])


def values(shape=SHAPES, low=-3.0, high=3.0):
    return hnp.arrays(F64, shape, elements=st.floats(low, high, allow_subnormal=False))


def logsumexp(x):
    top = la.max(x)
    return la.log(la.sum(la.exp(x - top))) + top


def softmax(x):
    shifted = np.exp(x - np.max(x))
    return shifted / shifted.sum()


# --- closed forms ---------------------------------------------------------------------------


@given(x=values())
def test_gradient_of_sum_of_squares_is_twice_x(backend, x):
    gradient = la.grad(lambda v: la.sum(v ** 2))(x)
    assert gradient.shape == x.shape and gradient.dtype == F64
    np.testing.assert_array_equal(np.asarray(gradient), 2 * x)  # 1 * (2 * x): exact in binary


@given(x=values())
def test_gradient_of_logsumexp_is_softmax(backend, x):
    # A handful of float64 roundings per element (exp, sum, divide): 1e-12 relative is ample;
    # the max shift's own contribution cancels to about 1e-16.
    np.testing.assert_allclose(np.asarray(la.grad(logsumexp)(x)), softmax(x), rtol=1e-12, atol=1e-15)


@given(x=values())
def test_gradients_of_mean_var_std(backend, x):
    count, centred = x.size, x - x.mean()
    # mean: the cotangent 1 divided by the count, one rounding.
    np.testing.assert_allclose(np.asarray(la.grad(la.mean)(x)), np.full(x.shape, 1 / count), rtol=1e-15)
    # var: 2 (x - mean) / n; rounding of the mean (a sum of n <= 16 values) bounds the error
    # by ~16 eps * max|x| absolute.
    np.testing.assert_allclose(np.asarray(la.grad(la.var)(x)), 2 * centred / count, rtol=1e-12, atol=1e-13)
    if x.std() > 1e-3:  # std is not differentiable where every value is equal
        # As var, divided by std >= 1e-3, which scales the absolute error up by at most 1e3.
        expected = centred / (count * x.std())
        np.testing.assert_allclose(np.asarray(la.grad(la.std)(x)), expected, rtol=1e-10, atol=1e-10)


@given(
    a=values((2, 3)), b=values((3, 4)), c=values((4, 2)),
)
def test_gradient_of_a_matmul_chain(backend, a, b, c):
    gradients = la.grad(lambda p, q, r: la.sum(p @ q @ r), argnums=(0, 1, 2))(a, b, c)
    ones = np.ones((2, 2))
    expected = (ones @ (b @ c).T, a.T @ ones @ c.T, (a @ b).T @ ones)
    for gradient, want in zip(gradients, expected):
        # Dot products of <= 4 terms of size <= 27 each: 1e-12 absolute covers the rounding.
        np.testing.assert_allclose(np.asarray(gradient), want, rtol=1e-12, atol=1e-12)


@given(x=values(low=-2.0, high=2.0))
def test_gradients_of_where_maximum_abs_clip_away_from_kinks(backend, x):
    x = np.where(np.abs(x) < 1e-3, 0.5, x)  # away from the kink at 0
    x = np.where(np.abs(np.abs(x) - 1) < 1e-3, 1.5, x)  # and from clip's bounds
    positive = (x > 0).astype(F64)
    np.testing.assert_array_equal(np.asarray(la.grad(lambda v: la.sum(la.where(v > 0, v, 0.0)))(x)), positive)
    np.testing.assert_array_equal(np.asarray(la.grad(lambda v: la.sum(la.maximum(v, 0.0)))(x)), positive)
    np.testing.assert_array_equal(np.asarray(la.grad(lambda v: la.sum(la.abs(v)))(x)), np.sign(x))
    inside = (np.abs(x) < 1).astype(F64)
    np.testing.assert_array_equal(np.asarray(la.grad(lambda v: la.sum(la.clip(v, -1.0, 1.0)))(x)), inside)


def test_conventions_at_kinks(backend):
    """Ties split evenly (maximum, max), abs'(0) = 0, clip passes its bounds to the operand."""
    at = np.array([-1.0, 0.0, 1.0, 2.0])
    np.testing.assert_array_equal(np.asarray(la.grad(lambda v: la.sum(la.maximum(v, 0.0)))(at)), [0, 0.5, 1, 1])
    np.testing.assert_array_equal(np.asarray(la.grad(lambda v: la.sum(la.abs(v)))(at)), [-1, 0, 1, 1])
    np.testing.assert_array_equal(np.asarray(la.grad(lambda v: la.sum(la.clip(v, -1.0, 1.0)))(at)), [1, 1, 1, 0])
    np.testing.assert_array_equal(np.asarray(la.grad(la.max)(np.array([1.0, 3.0, 3.0]))), [0, 0.5, 0.5])
    np.testing.assert_array_equal(np.asarray(la.grad(lambda v: la.sum(la.floor(v)))(at)), [0, 0, 0, 0])


def test_product_gradient_is_exact_with_zeros(backend):
    """No division: one zero leaves the product of the others there, two zeros give all 0."""
    np.testing.assert_array_equal(np.asarray(la.grad(la.prod)(np.array([2.0, 0.0, 3.0, 5.0]))), [0, 30, 0, 0])
    np.testing.assert_array_equal(np.asarray(la.grad(la.prod)(np.array([2.0, 0.0, 3.0, 0.0]))), [0, 0, 0, 0])
    rows = np.array([[0.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(np.asarray(la.grad(lambda v: la.sum(la.prod(v, axis=1)))(rows)), [[2, 0], [4, 3]])
    scan = la.grad(lambda v: la.sum(la.cumprod(v)))(np.array([2.0, 0.0, 3.0]))
    np.testing.assert_array_equal(np.asarray(scan), [1, 2 + 6, 0])  # d/dx of x0 + x0 x1 + x0 x1 x2


# --- finite differences of NumPy-style code ---------------------------------------------------

COMPOSITES = {
    "softmax cross-entropy": lambda x: -la.sum(la.log(la.exp(x) / la.sum(la.exp(x), axis=-1, keepdims=True))[..., 0]),
    "normalize rows": lambda x: la.sum((x - la.mean(x, axis=1, keepdims=True)) / la.std(x, axis=1, keepdims=True)
                                       * np.arange(12.0).reshape(3, 4)),
    "norms": lambda x: la.linalg.norm(x) + la.sum(la.linalg.norm(x, axis=0) ** 3),
    "indexing": lambda x: la.sum(x[1:, ::2] ** 2) + la.sum(x[np.array([0, 2, 0]), 1]) * x[2, 3],
    "layout": lambda x: la.sum(la.concatenate([x, la.flip(x, axis=0)], axis=1).T.reshape(-1)[::3] * la.arange(8.0)),
    "stack and broadcast": lambda x: la.sum(la.stack([x, x * 2]) * la.sum(x, axis=0)),
    "scans": lambda x: la.sum(la.cumsum(x, axis=1) * la.cumprod(x / 2, axis=0)),
    "einsum and matmul": lambda x: la.einsum("ij,kj->ik", x, x)[0, 1] + la.sum(x.T @ x),
    "extrema and clip": lambda x: la.max(x, axis=0).sum() - la.min(x) + la.sum(la.clip(x, -0.5, 0.5) ** 3),
    "float32 round trip": lambda x: la.sum(la.sin(x.astype(la.float32)).astype(la.float64) ** 2),
}

STEP = 1e-6


@pytest.mark.parametrize("name", sorted(COMPOSITES))
@settings(max_examples=max(1, settings().max_examples // 8))  # x 2 backends x 10 functions: 5 on ci
@given(seed=st.integers(0, 2**32 - 1))
def test_composites_match_finite_differences(backend, name, seed):
    """Random x away from zero (|x| >= 0.2): the kinks of max, min and clip are hit with
    probability ~1e-6 per example, too rarely to matter."""
    function = COMPOSITES[name]
    generator = np.random.default_rng(seed)
    x = generator.uniform(0.2, 2.0, (3, 4)) * generator.choice([-1.0, 1.0], (3, 4))
    direction = generator.uniform(-1.0, 1.0, (3, 4))
    # float64: STEP = 1e-6 errs by ~1e-10 relative (see tests/hlo/test_vjp_rules.py); 1e-6
    # leaves room for the larger values norms and divisions by std produce. The float32 round
    # trip rounds inputs and results to 6e-8 relative: a step of 1e-3 keeps that below 1e-3 of
    # the estimate (truncation ~1e-6), and 1e-2 still catches any wrong factor.
    step, tolerance = (1e-3, 1e-2) if "float32" in name else (STEP, 1e-6)
    exact = float(np.sum(np.asarray(la.grad(function)(x)) * direction))
    estimate = (float(function(x + step * direction)) - float(function(x - step * direction))) / (2 * step)
    assert abs(exact - estimate) <= tolerance * (1 + abs(estimate)), (exact, estimate)


# --- API ------------------------------------------------------------------------------------


def test_value_and_grad_and_has_aux(interpreter):
    x = np.array([1.0, 2.0, 3.0])

    def loss(v):
        return la.sum(v ** 2), {"doubled": v * 2, "label": "squares"}

    (value, aux), gradient = la.value_and_grad(loss, has_aux=True)(x)
    assert float(value) == 14.0
    np.testing.assert_array_equal(np.asarray(gradient), 2 * x)
    np.testing.assert_array_equal(np.asarray(aux["doubled"]), 2 * x)  # over the input, not a stand-in
    assert aux["label"] == "squares"
    gradient, aux = la.grad(loss, has_aux=True)(x)
    np.testing.assert_array_equal(np.asarray(gradient), 2 * x)
    assert float(la.value_and_grad(lambda v: la.sum(v))(x)[0]) == 6.0


def test_argnums_keywords_and_arguments_passed_through(interpreter):
    def loss(a, label, b, *, scale):
        assert label == "not an array"
        return la.sum(a * b) * scale

    a, b = np.array([1.0, 2.0]), np.array([3.0, 5.0])
    grad_a, grad_b = la.grad(loss, argnums=(0, -1))(a, "not an array", b, scale=2.0)
    np.testing.assert_array_equal(np.asarray(grad_a), 2 * b)
    np.testing.assert_array_equal(np.asarray(grad_b), 2 * a)
    assert isinstance(la.grad(loss, argnums=(2,))(a, "not an array", b, scale=1.0), tuple)


def test_pytree_arguments_get_gradients_of_the_same_structure(interpreter):
    params = {"w": np.array([[1.0, 2.0], [3.0, 4.0]]), "b": (np.array([0.5, -0.5]), 2.0)}
    x = np.array([1.0, -1.0])

    def loss(p):
        bias, scale = p["b"]
        return la.sum((p["w"] @ x + bias) ** 2) * scale

    gradients = la.grad(loss)(params)
    residual = params["w"] @ x + params["b"][0]
    np.testing.assert_array_equal(np.asarray(gradients["w"]), 2 * 2 * np.outer(residual, x))
    np.testing.assert_array_equal(np.asarray(gradients["b"][0]), 2 * 2 * residual)
    assert float(gradients["b"][1]) == np.sum(residual ** 2)


def test_gradients_are_typed_like_the_inputs_and_lazy(interpreter):
    single = la.grad(lambda v: la.sum(la.exp(v)))(np.ones(3, np.float32))
    assert single.dtype == np.float32 and single.shape == (3,)
    scalar = la.grad(lambda v: v * v)(3.0)  # a Python float differentiates as float64
    assert scalar.dtype == F64 and scalar.shape == () and float(scalar) == 6.0
    unevaluated = la.asarray(np.arange(3.0)) * 2
    gradient = la.grad(lambda v: la.sum(v ** 3))(unevaluated)
    assert not gradient.is_evaluated and not unevaluated.is_evaluated
    np.testing.assert_array_equal(np.asarray(gradient), 3 * (2 * np.arange(3.0)) ** 2)


def test_arguments_are_independent_of_each_other_and_of_closures(interpreter):
    x = la.asarray([1.0, 2.0])
    grad_first, grad_second = la.grad(lambda a, b: la.sum(a * b * b), argnums=(0, 1))(x, x)
    np.testing.assert_array_equal(np.asarray(grad_first), [1.0, 4.0])
    np.testing.assert_array_equal(np.asarray(grad_second), [2.0, 8.0])
    closed_over = la.grad(lambda w: la.sum(w * x))(x)  # x in the closure is a constant
    np.testing.assert_array_equal(np.asarray(closed_over), [1.0, 2.0])


def test_vjp_with_non_scalar_and_several_outputs(interpreter):
    x = np.array([1.0, 2.0, 3.0])
    outputs, pull_back = la.vjp(lambda v: (v * v, la.sum(v)), x)
    np.testing.assert_array_equal(np.asarray(outputs[0]), x * x)
    (cotangent,) = pull_back((np.array([1.0, 0.0, 10.0]), 2.0))
    np.testing.assert_array_equal(np.asarray(cotangent), [2 + 2, 0 + 2, 60 + 2])
    matrix, pull_back = la.vjp(lambda a, b: a @ b, np.eye(2), np.array([[1.0, 2.0], [3.0, 4.0]]))
    grad_a, grad_b = pull_back(la.ones((2, 2)))
    np.testing.assert_array_equal(np.asarray(grad_a), [[3, 7], [3, 7]])
    np.testing.assert_array_equal(np.asarray(grad_b), [[1, 1], [1, 1]])
    _, pull_back, aux = la.vjp(lambda v: (v * 2, v + 1), x, has_aux=True)
    np.testing.assert_array_equal(np.asarray(aux), x + 1)
    with pytest.raises(ValueError, match=r"cotangent has shape \(2,\); its output has shape \(3,\)"):
        pull_back(np.ones(2))
    with pytest.raises(TypeError, match="structure of the outputs"):
        pull_back((np.ones(3), np.ones(3)))
    with pytest.raises(TypeError, match="cotangent has dtype float32"):
        pull_back(la.ones(3, dtype=la.float32))


def test_higher_derivatives(backend):
    assert float(la.grad(la.grad(lambda v: v ** 3))(2.0)) == 12.0
    third = la.grad(la.grad(la.grad(lambda v: la.sin(v) * v)))(0.7)
    # Three sweeps of rounding on values of order 1: 1e-14 relative is comfortable.
    np.testing.assert_allclose(float(third), -3 * np.sin(0.7) - 0.7 * np.cos(0.7), rtol=1e-14)
    x, direction = np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, -1.0])
    hessian_vector = la.grad(lambda v: la.sum(la.grad(logsumexp)(v) * direction))(x)
    probabilities = softmax(x)
    hessian = np.diag(probabilities) - np.outer(probabilities, probabilities)
    # Two sweeps over exp, sum and divide of 3 values of order 1: 1e-12 relative is ample.
    np.testing.assert_allclose(np.asarray(hessian_vector), hessian @ direction, rtol=1e-12, atol=1e-15)


def test_composes_with_jit(backend):
    def loss(v):
        return la.sum(la.tanh(v) * v)

    x = np.array([0.3, -1.2, 2.0])
    expected = np.tanh(x) + x * (1 - np.tanh(x) ** 2)
    jit = la.jit
    for gradient in (la.grad(loss)(x), la.grad(jit(loss))(x), jit(la.grad(loss))(x), jit(la.grad(jit(loss)))(x)):
        # tanh on the CPU backend is its own polynomial: a few ulps from NumPy's.
        np.testing.assert_allclose(np.asarray(gradient), expected, rtol=1e-14)


def test_inputs_without_buffers_are_substituted_back(interpreter):
    """As inside la.jit: the gradient is a graph over the caller's own parameter leaf."""
    leaf = fresh_parameter((3,), F64)
    gradient = la.grad(lambda v: la.sum(v * v))(la.Array(leaf))
    from lazyarr.compile import evaluate_graph

    buffer = np.array([1.0, 2.0, 3.0])
    (value,) = evaluate_graph([gradient._node], lambda node: buffer if node is leaf else None)
    np.testing.assert_array_equal(value, 2 * buffer)


def test_evaluated_inputs_are_read_from_their_buffers_without_rebuilding_the_graph(interpreter, monkeypatch):
    """An input with a value lends its buffer to its stand-in once the function has run: the
    graph is not rebuilt over the input (eager training steps: T1 690 -> 510 us), the values
    are the same as for a pending input, and the function still cannot read the value."""
    from lazyarr.frontend import autodiff

    rebuilt = []
    original = autodiff._substitute
    monkeypatch.setattr(autodiff, "_substitute", lambda *args: rebuilt.append(1) or original(*args))
    values = np.array([0.5, -1.0, 2.0])

    def loss(v, w):
        return la.sum(la.tanh(v * w) * v)

    evaluated = la.asarray(values).eval()
    value, (grad_v, grad_w) = la.value_and_grad(loss, argnums=(0, 1))(evaluated, evaluated)
    assert not rebuilt
    pending = la.asarray(values) * 1.0
    value_pending, (grad_v_pending, grad_w_pending) = la.value_and_grad(loss, argnums=(0, 1))(pending, pending)
    assert rebuilt  # a pending input is substituted back, as before
    for got, want in ((value, value_pending), (grad_v, grad_v_pending), (grad_w, grad_w_pending)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    np.testing.assert_allclose(np.asarray(grad_w), values * values * (1 - np.tanh(values * values) ** 2),
                               rtol=1e-14)  # a few ulps of tanh; both arguments are independent
    with pytest.raises(TracedValueError):
        la.grad(lambda v: v * 2 if float(v[0]) > 0 else v)(evaluated)


def test_a_repeated_structure_replays_its_backward_graph_with_the_rules_results(interpreter, monkeypatch):
    """The backward graph of a structure differentiated before is replayed, not rebuilt by the
    rules: the same nodes the rules make (interning), for new values; a constant the rules read
    (an exponent) is part of the structure, so x ** 3 is not served x ** 2's graph."""
    from lazyarr.hlo import autodiff as hlo_autodiff

    swept = []
    original = hlo_autodiff._sweep
    monkeypatch.setattr(hlo_autodiff, "_sweep", lambda *args: swept.append(1) or original(*args))
    hlo_autodiff._BACKWARDS.clear()
    rng = np.random.default_rng(7)

    def loss(w, b, x, exponent):
        return la.sum(la.tanh(x @ w + b) ** exponent)

    x = la.asarray(rng.standard_normal((5, 3)))
    for step in range(3):
        w, b = la.asarray(rng.standard_normal((3, 2))).eval(), la.asarray(rng.standard_normal(2)).eval()
        for exponent in (2, 3):
            grad_w, grad_b = la.grad(loss, argnums=(0, 1))(w, b, x, exponent)
            hidden = np.tanh(np.asarray(x) @ np.asarray(w) + np.asarray(b))
            outer = exponent * hidden ** (exponent - 1) * (1 - hidden * hidden)
            # float64 tanh and powers of values of order 1: 1e-12 relative is ample
            np.testing.assert_allclose(np.asarray(grad_w), np.asarray(x).T @ outer, rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(np.asarray(grad_b), outer.sum(axis=0), rtol=1e-12, atol=1e-14)
    assert len(swept) == 2  # one sweep per exponent; the other four calls replayed
    # The replayed nodes are the rules' own: a fresh sweep over the same graph finds them interned.
    w, b = la.asarray(rng.standard_normal((3, 2))).eval(), la.asarray(rng.standard_normal(2)).eval()
    replayed = la.grad(loss, argnums=(0, 1))  # (stand-ins differ per call: compare structure by values)
    first = [np.asarray(g) for g in replayed(w, b, x, 2)]
    hlo_autodiff._BACKWARDS.clear()
    second = [np.asarray(g) for g in replayed(w, b, x, 2)]
    for got, want in zip(first, second):
        np.testing.assert_array_equal(got, want)


def test_vjp_with_a_forward_node_as_its_cotangent_is_not_confused_by_the_replay(interpreter):
    x = np.array([1.0, 2.0, 3.0])
    for _ in range(3):
        outputs, pull_back = la.vjp(lambda v: v * v, x)
        (own,) = pull_back(outputs)  # the cotangent is the output node itself
        np.testing.assert_array_equal(np.asarray(own), 2 * x * x * x)
        (ones,) = pull_back(la.ones(3, dtype=la.float64))
        np.testing.assert_array_equal(np.asarray(ones), 2 * x)


def test_pull_backs_with_constant_shared_and_derived_seeds_are_not_served_an_earlier_seed(interpreter):
    """The remembered backward graph is a function of the seeds it is called with: a seed made
    of constants (ones), one that is a node the rules build, the same seed twice, a seed built
    from another, an aux output: none is frozen into the graph a later call replays."""
    from lazyarr.hlo import autodiff as hlo_autodiff

    hlo_autodiff._BACKWARDS.clear()
    x = np.array([1.0, 2.0, 3.0])
    _, pull_back = la.vjp(lambda v: v * 2.0, x)
    np.testing.assert_array_equal(np.asarray(pull_back(la.ones(3, dtype=la.float64))[0]), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(np.asarray(pull_back(la.asarray([1.0, 10.0, 100.0]))[0]), [2.0, 20.0, 200.0])
    _, pull_back = la.vjp(lambda v: la.maximum(v, 0.0), la.asarray([-1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(np.asarray(pull_back(la.ones(3, dtype=la.float64))[0]), [0.0, 1.0, 1.0])
    np.testing.assert_array_equal(np.asarray(pull_back(la.full(3, 5.0))[0]), [0.0, 5.0, 5.0])
    _, pull_back = la.vjp(lambda v: (v * 2.0, v * 3.0), x)
    c, d = la.full(3, 1.0), la.full(3, 10.0)
    np.testing.assert_array_equal(np.asarray(pull_back((c, c))[0]), [5.0, 5.0, 5.0])
    np.testing.assert_array_equal(np.asarray(pull_back((c, d))[0]), [32.0, 32.0, 32.0])
    np.testing.assert_array_equal(np.asarray(pull_back((d, d * 3.0))[0]), [110.0, 110.0, 110.0])
    evaluated = la.asarray(x).eval()
    _, pull_back, aux = la.vjp(lambda v: (la.sin(v), la.cos(v)), evaluated, has_aux=True)
    np.testing.assert_allclose(np.asarray(pull_back(aux)[0]), np.cos(x) ** 2, rtol=1e-15)  # cos: a few ulps
    np.testing.assert_allclose(np.asarray(pull_back(d)[0]), 10 * np.cos(x), rtol=1e-15)


def test_a_write_after_vjp_does_not_change_the_pull_back(interpreter):
    """The pull-back differentiates at the values of the call, for pending inputs too."""
    for make_input in (lambda: la.asarray([1.0, 2.0, 3.0]).eval(), lambda: la.asarray([1.0, 2.0, 3.0]) * 1.0):
        x = make_input()
        _, pull_back = la.vjp(lambda v: v * v, x)
        x[0] = 100.0
        np.testing.assert_array_equal(np.asarray(pull_back(la.ones(3, dtype=la.float64))[0]), [2.0, 4.0, 6.0])


def test_large_constants_are_not_remembered(interpreter):
    """A minibatch's index array (a constant of the graph) would be a new key every step, kept
    alive by the table: such graphs are differentiated by the rules each time."""
    from lazyarr.hlo import autodiff as hlo_autodiff

    hlo_autodiff._BACKWARDS.clear()
    rng = np.random.default_rng(1)
    weights = la.asarray(rng.standard_normal(1000)).eval()
    for _ in range(3):
        index = rng.integers(0, 1000, 200)
        gradient = la.grad(lambda w: la.sum(w[index] ** 2))(weights)
        expected = np.zeros(1000)
        np.add.at(expected, index, 2 * np.asarray(weights)[index])
        np.testing.assert_allclose(np.asarray(gradient), expected, rtol=1e-15)
    assert not hlo_autodiff._BACKWARDS


_UNARY = {"sin": la.sin, "tanh": la.tanh, "abs": la.abs, "square": lambda a: a * a,
          "relu": lambda a: la.maximum(a, 0.0), "cube": lambda a: a ** 3, "smooth": lambda a: la.sqrt(a * a + 1.0)}
_BINARY = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b, "div": lambda a, b: a / (b * b + 1.0),
           "max": la.maximum, "where": lambda a, b: la.where(a > b, a, b * 2.0)}
_PROGRAM = st.lists(st.one_of(st.tuples(st.sampled_from(sorted(_UNARY)), st.integers(0, 9)),
                              st.tuples(st.sampled_from(sorted(_BINARY)), st.integers(0, 9), st.integers(0, 9)),
                              st.tuples(st.just("scale"), st.sampled_from([0.0, 0.5, 1.0, 2.0, -1.0]))),
                    min_size=1, max_size=6)


def _program(steps):
    def function(*values):
        pool = list(values)
        for step in steps:
            if step[0] in _UNARY:
                pool.append(_UNARY[step[0]](pool[step[1] % len(pool)]))
            elif step[0] in _BINARY:
                pool.append(_BINARY[step[0]](pool[step[1] % len(pool)], pool[step[2] % len(pool)]))
            else:
                pool.append(pool[-1] * step[1])
        return pool
    return function


@settings(max_examples=120, deadline=None)
@given(steps=_PROGRAM, inputs=st.integers(1, 2), seed=st.integers(0, 2**32 - 1),
       seeds=st.lists(st.sampled_from(["ones", "random", "output", "derived", "same"]), min_size=1, max_size=3))
def test_remembered_backward_graphs_equal_the_rules_own(steps, inputs, seed, seeds):
    """Random programs differentiated twice with new values (grad, and vjp pull-backs with
    assorted seeds): bit for bit what the rules alone give (the table off)."""
    from lazyarr.hlo import autodiff as hlo_autodiff

    rng = np.random.default_rng(seed)
    data = [[rng.uniform(-2, 2, 3) for _ in range(inputs + 1)] for _ in range(2)]
    function = _program(steps)

    def run():
        results = []
        for values in data:
            arrays = [la.asarray(value).eval() for value in values[:inputs]]
            results += la.grad(lambda *v: la.sum(function(*v)[-1]), argnums=tuple(range(inputs)))(*arrays)
            (last, first), pull_back = la.vjp(lambda *v: (function(*v)[-1], function(*v)[inputs - 1]), *arrays)
            other = la.asarray(values[-1])
            for kind in seeds:
                cotangents = {"ones": (la.ones(3, dtype=la.float64),) * 2, "random": (other, other * 3.0),
                              "output": (last, other), "derived": (other, other + last), "same": (first, first)}[kind]
                results += pull_back(cotangents)
        return [np.asarray(result) for result in results]

    original, previous_backend = hlo_autodiff._structure, la.get_backend_name()
    la.set_backend("interpreter")  # (values are compared with themselves: no compiling needed)
    try:
        hlo_autodiff._structure = lambda *arguments: None  # the rules alone
        try:
            expected = run()
        finally:
            hlo_autodiff._structure = original
        got = run()
    finally:
        la.set_backend(previous_backend)
    for got_one, want in zip(got, expected, strict=True):
        np.testing.assert_array_equal(got_one, want)


def test_deep_graphs_do_not_recurse(interpreter):
    def chain(v):
        for _ in range(3000):  # three times the default recursion limit
            v = v * 1.0001
        return la.sum(v)

    gradient = la.grad(chain)(np.ones(2))
    # 3000 roundings of a product: 1e-12 relative.
    np.testing.assert_allclose(np.asarray(gradient), np.full(2, 1.0001 ** 3000), rtol=1e-12)


# --- errors ---------------------------------------------------------------------------------


def test_integer_bool_and_complex_inputs_are_refused(interpreter):
    with pytest.raises(TypeError, match="argument 0 has dtype int64; only real floating"):
        la.grad(la.sum)(np.arange(3))
    with pytest.raises(TypeError, match="argument 1 has dtype bool"):
        la.grad(lambda a, b: la.sum(a), argnums=1)(np.ones(2), np.ones(2, bool))
    with pytest.raises(TypeError, match="argument 0 is a Python int"):
        la.grad(lambda v: v * v)(3)
    with pytest.raises(TypeError, match="complex numbers are not supported"):
        la.grad(lambda v: la.sum(la.abs(v)))(np.ones(2, np.complex128))
    with pytest.raises(TypeError, match=r"argument 0\['w'\] has dtype int64"):
        la.grad(lambda p: la.sum(p["w"]))({"w": np.arange(2)})


def test_outputs_must_be_real_floating_scalars(interpreter):
    with pytest.raises(TypeError, match=r"scalar \(0-d\) array, got shape \(3,\); use la.vjp"):
        la.grad(lambda v: v * 2)(np.ones(3))
    with pytest.raises(TypeError, match="output has dtype int64"):
        la.grad(lambda v: la.argmax(v))(np.ones(3))
    with pytest.raises(TypeError, match="must return a scalar array, got a tuple"):
        la.grad(lambda v: (la.sum(v), la.sum(v)))(np.ones(3))
    with pytest.raises(TypeError, match="pair"):
        la.grad(lambda v: la.sum(v), has_aux=True)(np.ones(3))
    with pytest.raises(TypeError, match="output has dtype bool"):
        la.vjp(lambda v: v > 0, np.ones(3))


def test_missing_rule_is_named(interpreter):
    with pytest.raises(NotImplementedError, match="la.grad: no VJP rule for op 'sort'"):
        la.grad(lambda v: la.sum(la.sort(v) * la.arange(3.0)))(np.ones(3))


def test_bad_argnums_and_evaluation_inside_are_explained(interpreter):
    with pytest.raises(ValueError, match="argnums 2 is out of range for 2 positional arguments"):
        la.grad(lambda a, b: la.sum(a), argnums=2)(np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="names an argument twice"):
        la.grad(lambda a, b: la.sum(a), argnums=(0, -2))(np.ones(2), np.ones(2))
    with pytest.raises(TypeError, match="argnums must be an int"):
        la.grad(lambda a: la.sum(a), argnums="0")(np.ones(2))

    def branches(v):
        return la.sum(v) if la.sum(v) > 0 else -la.sum(v)

    with pytest.raises(TracedValueError, match="branches evaluated .* use la.where"):
        la.grad(branches)(np.ones(2))


def test_docstring_examples(interpreter):
    import doctest

    import lazyarr.frontend.autodiff

    assert doctest.testmod(lazyarr.frontend.autodiff).failed == 0
