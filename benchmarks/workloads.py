"""The benchmark workloads: inputs, one expression for every array namespace, tolerances, bytes.

Each workload's `expression(xp, *arrays)` is written once against a NumPy-like namespace `xp`
(numpy, lazyarr or jax.numpy), using only what all three share: arithmetic, `@`, indexing,
`.sum/.max/.mean/.var(axis=..., keepdims=...)`, `xp.exp/tanh/sqrt/maximum`. So every
implementation computes the same thing, and the NumPy reference is the same code in float64.

Checking (`check`): an implementation's float32 result passes when, for every element,
    |result - reference| <= ATOL + RTOL * scale
where `reference` is the expression evaluated by NumPy in float64 on the same float32 inputs.
For elementwise workloads `scale` is |reference|, so this is `np.isclose`. For workloads that
reduce (sums, dots), `scale` is the workload's `magnitude`: the same reduction over the absolute
values of its terms, since a float32 sum's rounding error grows with the sum of |terms|, not with
the (possibly cancelling) sum itself: RTOL = 1e-4 of that allows ~1,700 ulps of float32, room for
sequential, pairwise and threaded summation orders over 10^7 terms.

Bytes (`bytes_moved`): the compulsory memory traffic, every input read once plus the output
written once (`compulsory_bytes`); effective GB/s = bytes / time. Intermediates are not counted:
an implementation that writes them to memory pays for it in time, which is what fusion removes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

RTOL = 1e-4  # float32 has ~7 digits; 1e-4 leaves room for a different (fused, vectorized) rounding order
ATOL = 1e-5  # for results near zero, where a relative bound alone is meaningless
GELU_COEFFICIENT = math.sqrt(2.0 / math.pi)
LAYERNORM_EPSILON = 1e-5


def compulsory_bytes(inputs: dict[str, np.ndarray], output: np.ndarray) -> int:
    """Every input read once and the output written once."""
    return sum(array.nbytes for array in inputs.values()) + np.asarray(output).nbytes


@dataclass(frozen=True)
class Workload:
    """One benchmark: how to make its inputs and compute it in every implementation."""

    key: str
    title: str
    make_inputs: Callable[[np.random.Generator, float], dict[str, np.ndarray]]  # (rng, scale)
    expression: Callable  # expression(xp, *arrays) for xp in numpy, lazyarr, jax.numpy
    numexpr_form: Callable | None = None  # numexpr_form(numexpr, *arrays); None: not expressible
    magnitude: Callable | None = None  # magnitude(*float64 arrays): per-output error scale of a reduction
    bytes_moved: Callable[[dict, np.ndarray], int] = compulsory_bytes
    has_jit_form: bool = False  # also time `la.jit(expression)` (W5: per-call overhead)
    # autodiff_form(xp, value_and_grad, *arrays): what lazyarr and jax run instead of `expression`
    # (T1: they differentiate the loss; NumPy and the float64 reference run the hand-written backward).
    autodiff_form: Callable | None = None


def scaled(size: int, scale: float, minimum: int = 2) -> int:
    """`size` shrunk by `scale` (for --scale and --quick), never below `minimum`."""
    return max(minimum, round(size * scale))


def _normal(rng: np.random.Generator, shape, spread: float = 1.0) -> np.ndarray:
    return (rng.standard_normal(shape) * spread).astype(np.float32)


def _float32_constants(**values: float) -> dict[str, np.float32]:
    """numexpr turns Python float constants into float64; named float32 constants keep float32."""
    return {name: np.float32(value) for name, value in values.items()}


# -- W1: sum(x + y*z) ------------------------------------------------------------------------
def _w1_inputs(rng, scale):
    size = scaled(10**7, scale)
    return {"x": _normal(rng, size), "y": _normal(rng, size), "z": _normal(rng, size)}


def _w1(xp, x, y, z):
    return (x + y * z).sum()


# -- W2: GELU, tanh form ---------------------------------------------------------------------
def _w2_inputs(rng, scale):
    return {"x": _normal(rng, scaled(10**7, scale), spread=2.0)}


def _w2(xp, x):
    return 0.5 * x * (1 + xp.tanh(GELU_COEFFICIENT * (x + 0.044715 * x**3)))


def _w2_numexpr(ne, x):
    constants = _float32_constants(half=0.5, coefficient=GELU_COEFFICIENT, cubic=0.044715)
    return ne.evaluate("half*x*(1 + tanh(coefficient*(x + cubic*x**3)))", local_dict={"x": x, **constants})


# -- W3: softmax over the last axis ----------------------------------------------------------
def _w3_inputs(rng, scale):
    return {"x": _normal(rng, (scaled(4096, scale), 1024), spread=3.0)}


def _w3(xp, x):
    exponentials = xp.exp(x - x.max(axis=-1, keepdims=True))
    return exponentials / exponentials.sum(axis=-1, keepdims=True)


def _w3_numexpr(ne, x):
    """NumPy for the row reductions, numexpr for the elementwise parts (numexpr lacks keepdims)."""
    row_maximum = x.max(axis=-1, keepdims=True)
    exponentials = ne.evaluate("exp(x - row_maximum)", local_dict={"x": x, "row_maximum": row_maximum})
    row_sum = exponentials.sum(axis=-1, keepdims=True)
    return ne.evaluate("numerator / row_sum", local_dict={"numerator": exponentials, "row_sum": row_sum})


# -- W4: layernorm over the last axis --------------------------------------------------------
def _w4_inputs(rng, scale):
    columns = 1024
    return {
        "x": _normal(rng, (scaled(8192, scale), columns), spread=2.0),
        "gamma": (1 + _normal(rng, columns, spread=0.1)).astype(np.float32),
        "beta": _normal(rng, columns, spread=0.1),
    }


def _w4(xp, x, gamma, beta):
    mean = x.mean(axis=-1, keepdims=True)
    variance = x.var(axis=-1, keepdims=True)
    return (x - mean) / xp.sqrt(variance + LAYERNORM_EPSILON) * gamma + beta


def _w4_magnitude(x, gamma, beta):
    """|normalized * gamma| + |beta|: the terms of the final sum, so a cancelling result is not
    held to a tighter bound than its parts."""
    deviation = np.sqrt(x.var(axis=-1, keepdims=True) + LAYERNORM_EPSILON)
    normalized = (x - x.mean(axis=-1, keepdims=True)) / deviation
    return np.abs(normalized * gamma) + np.abs(beta)


def _w4_numexpr(ne, x, gamma, beta):
    """NumPy for mean and variance, numexpr for the normalization."""
    mean = x.mean(axis=-1, keepdims=True)
    variance = x.var(axis=-1, keepdims=True)
    names = {"x": x, "mean": mean, "variance": variance, "gamma": gamma, "beta": beta}
    return ne.evaluate("(x - mean) / sqrt(variance + epsilon) * gamma + beta",
                       local_dict={**names, **_float32_constants(epsilon=LAYERNORM_EPSILON)})


# -- W5: (a+b)*c - a on 100 elements: per-call overhead --------------------------------------
def _w5_inputs(rng, scale):
    return {name: _normal(rng, 100) for name in ("a", "b", "c")}


def _w5(xp, a, b, c):
    return (a + b) * c - a


# -- W6: MLP forward -------------------------------------------------------------------------
def _w6_inputs(rng, scale):
    return {
        "x": _normal(rng, (scaled(512, scale), 784)),
        "w1": _normal(rng, (784, 1024), spread=1 / math.sqrt(784)),
        "b1": _normal(rng, 1024, spread=0.1),
        "w2": _normal(rng, (1024, 10), spread=1 / math.sqrt(1024)),
        "b2": _normal(rng, 10, spread=0.1),
    }


def _w6(xp, x, w1, b1, w2, b2):
    return xp.maximum(x @ w1 + b1, 0) @ w2 + b2


def _w6_magnitude(x, w1, b1, w2, b2):
    """Error of the hidden layer is bounded by |x|@|w1|+|b1|; it reaches the output through |w2|."""
    return (np.abs(x) @ np.abs(w1) + np.abs(b1)) @ np.abs(w2) + np.abs(b2)


# -- W7a: pairwise squared distances; W7b: transpose plus ------------------------------------
def _w7a_inputs(rng, scale):
    rows = scaled(512, scale)
    return {"x": _normal(rng, (rows, 64)), "y": _normal(rng, (rows, 64))}


def _w7a(xp, x, y):
    return ((x[:, None, :] - y[None, :, :]) ** 2).sum(axis=-1)


def _w7a_numexpr(ne, x, y):
    return ne.evaluate("sum((a - b)**2, axis=2)", local_dict={"a": x[:, None, :], "b": y[None, :, :]})


def _w7b_inputs(rng, scale):
    side = scaled(4096, math.sqrt(scale))
    return {"x": _normal(rng, (side, side)), "y": _normal(rng, (side, side))}


def _w7b(xp, x, y):
    return x.T + y


def _w7b_numexpr(ne, x, y):
    return ne.evaluate("transposed + y", local_dict={"transposed": x.T, "y": y})


# -- T1: one MLP training step (forward, backward, SGD update), as in examples/train_digits.py --
T1_LEARNING_RATE = 0.1


def _t1_inputs(rng, scale):
    batch, features, hidden, classes = scaled(128, scale), 64, 128, 10
    labels = rng.integers(0, classes, batch)
    return {
        "w1": _normal(rng, (features, hidden), spread=1 / math.sqrt(features)),
        "b1": _normal(rng, hidden, spread=0.1),
        "w2": _normal(rng, (hidden, classes), spread=1 / math.sqrt(hidden)),
        "b2": _normal(rng, classes, spread=0.1),
        "x": rng.random((batch, features)).astype(np.float32),
        "one_hot": np.eye(classes, dtype=np.float32)[labels],
    }


def _t1_logits(xp, w1, b1, w2, b2, x):
    hidden = xp.tanh(x @ w1 + b1)
    return hidden, hidden @ w2 + b2


def _t1_log_softmax(xp, logits):
    """logits - logsumexp(logits), the row maximum subtracted before exp (no overflow)."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - xp.log(xp.exp(shifted).sum(axis=-1, keepdims=True))


def _t1_loss(xp, w1, b1, w2, b2, x, one_hot):
    """Mean cross-entropy of a tanh MLP."""
    _, logits = _t1_logits(xp, w1, b1, w2, b2, x)
    return -(_t1_log_softmax(xp, logits) * one_hot).sum() / x.shape[0]


def _t1_result(loss, parameters, gradients):
    """The SGD update: (loss, *new parameters), as a training loop keeps them."""
    return (loss, *(parameter - T1_LEARNING_RATE * gradient for parameter, gradient in zip(parameters, gradients)))


def _t1(xp, w1, b1, w2, b2, x, one_hot):
    """NumPy's hand-written forward and backward (the reference, and the NumPy row)."""
    hidden, logits = _t1_logits(xp, w1, b1, w2, b2, x)
    log_probabilities = _t1_log_softmax(xp, logits)
    loss = -(log_probabilities * one_hot).sum() / x.shape[0]
    logits_gradient = (xp.exp(log_probabilities) - one_hot) / x.shape[0]  # softmax - one_hot
    hidden_gradient = (logits_gradient @ w2.T) * (1 - hidden * hidden)  # tanh' = 1 - tanh^2
    gradients = (x.T @ hidden_gradient, hidden_gradient.sum(axis=0), hidden.T @ logits_gradient,
                 logits_gradient.sum(axis=0))
    return _t1_result(loss, (w1, b1, w2, b2), gradients)


def _t1_autodiff(xp, value_and_grad, w1, b1, w2, b2, x, one_hot):
    """la.value_and_grad / jax.value_and_grad of the loss, then the same update."""
    loss, gradients = value_and_grad(lambda *arrays: _t1_loss(xp, *arrays), argnums=(0, 1, 2, 3))(
        w1, b1, w2, b2, x, one_hot)
    return _t1_result(loss, (w1, b1, w2, b2), gradients)


WORKLOADS: dict[str, Workload] = {
    workload.key: workload
    for workload in (
        Workload("W1", "sum(x + y*z), N=1e7", _w1_inputs, _w1,
                 numexpr_form=lambda ne, x, y, z: ne.evaluate("sum(x + y*z)"),
                 magnitude=lambda x, y, z: np.abs(x + y * z).sum()),
        Workload("W2", "GELU (tanh form), N=1e7", _w2_inputs, _w2, numexpr_form=_w2_numexpr),
        Workload("W3", "softmax(axis=-1), (4096, 1024)", _w3_inputs, _w3, numexpr_form=_w3_numexpr),
        Workload("W4", "layernorm(axis=-1), (8192, 1024)", _w4_inputs, _w4,
                 numexpr_form=_w4_numexpr, magnitude=_w4_magnitude),
        Workload("W5", "(a+b)*c - a, 100 elements", _w5_inputs, _w5,
                 numexpr_form=lambda ne, a, b, c: ne.evaluate("(a + b)*c - a"), has_jit_form=True),
        Workload("W6", "MLP relu(x@W1+b1)@W2+b2, x (512, 784)", _w6_inputs, _w6, magnitude=_w6_magnitude),
        Workload("W7a", "pairwise sq. distances, (512, 64) x2", _w7a_inputs, _w7a,
                 numexpr_form=_w7a_numexpr, magnitude=lambda x, y: _w7a(np, x, y)),
        Workload("W7b", "x.T + y, (4096, 4096)", _w7b_inputs, _w7b, numexpr_form=_w7b_numexpr),
        # Checked elementwise: the new parameters are O(0.1) and the float32 error of a gradient
        # (sums of 128 terms of size <= 1/128) times the learning rate is ~1e-8, far below ATOL.
        Workload("T1", "MLP training step 64-128-10 tanh, batch 128", _t1_inputs, _t1, has_jit_form=True,
                 autodiff_form=_t1_autodiff),
    )
}

# W8: the cold compile time (cache cleared before each first call) of these workloads.
COLD_COMPILE_WORKLOADS = ("W2", "W3")
ALL_KEYS = (*WORKLOADS, "W8")


def flat_result(result) -> np.ndarray:
    """A result as one array to check: a tuple of arrays (T1's loss and new parameters) is
    flattened and concatenated, outside the timed call."""
    if isinstance(result, (tuple, list)):
        return np.concatenate([np.ravel(np.asarray(part)) for part in result])
    return np.asarray(result)


def reference(workload: Workload, inputs: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """NumPy's float64 answer on the float32 inputs, and the error scale of each element."""
    wide = [array.astype(np.float64) for array in inputs.values()]
    answer = flat_result(workload.expression(np, *wide))
    scale = np.abs(answer) if workload.magnitude is None else np.asarray(workload.magnitude(*wide))
    return answer, scale


def check(result, answer: np.ndarray, scale: np.ndarray) -> tuple[bool, str]:
    """Whether `result` matches (shape, then dtype float32, then values); and a short verdict."""
    result = flat_result(result)
    if result.shape != answer.shape:
        return False, f"shape {result.shape} != {answer.shape}"
    if result.dtype != np.float32:
        return False, f"dtype {result.dtype} != float32"
    error = np.abs(result.astype(np.float64) - answer)
    allowed = ATOL + RTOL * np.broadcast_to(scale, answer.shape)
    worst = float(np.max(error / allowed)) if error.size else 0.0
    if not worst <= 1.0:  # also catches NaN
        return False, f"error {worst:.3g}x the tolerance"
    return True, "ok"
