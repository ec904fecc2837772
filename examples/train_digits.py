"""Training with lazyarr: `la.jit(la.value_and_grad(loss))` and plain minibatch SGD.

Two classifiers of 8x8 handwritten digits (scikit-learn's bundled `load_digits`, 1,797 images;
it ships inside scikit-learn, no download): softmax regression (64 -> 10) and a small MLP
(64 -> 128 tanh -> 10), trained on the same seeded 80/20 split with the numerically stable
cross-entropy (log-softmax through logsumexp). One training step (forward, backward, SGD
update) is one function; `la.jit` traces it once into one HLO module and compiles it for the
CPU, so every later step runs that executable directly on the minibatch.

`--no-compile` runs the very same code eagerly on the `interpreter` backend (NumPy, no
`la.jit`): each step builds its graph and evaluates it. Without scikit-learn (`pip install
'lazyarr[examples]'`), or with `--dataset blobs`, a generated dataset of Gaussian blobs in 64
dimensions stands in; both datasets must reach REQUIRED_ACCURACY on their held-out images.

    python examples/train_digits.py                          # compiled (la.jit on the cpu backend)
    python examples/train_digits.py --no-compile             # eager, NumPy interpreter
    python examples/train_digits.py --compare                # both, with their times
    python examples/train_digits.py --profile trace.json     # la.profile of the first MLP steps
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import statistics
import time

import numpy as np

import lazyarr as la

CLASSES = 10
FEATURES = 64  # 8x8 pixels
REQUIRED_ACCURACY = 0.90  # on the held-out images, for digits and for the generated blobs alike
TEST_FRACTION = 0.2
BATCH_SIZE = 128
PROFILED_STEPS = 3  # the first includes tracing and compiling; the others are steady-state steps


@dataclasses.dataclass(frozen=True)
class Model:
    name: str
    layer_sizes: tuple[int, ...]  # input, hidden..., classes; tanh between layers
    learning_rate: float
    epochs: int


MODELS = (
    Model("softmax regression", (FEATURES, CLASSES), learning_rate=0.5, epochs=30),
    Model("MLP 64-128-10 (tanh)", (FEATURES, 128, CLASSES), learning_rate=0.5, epochs=30),
)


@dataclasses.dataclass(frozen=True)
class Dataset:
    name: str
    train_images: np.ndarray  # (n, 64) float32 in [0, 1] (digits) or standardized (blobs)
    train_labels: np.ndarray  # (n,) int64 in [0, 10)
    test_images: np.ndarray
    test_labels: np.ndarray


@dataclasses.dataclass(frozen=True)
class TrainingResult:
    model: str
    mode: str
    accuracy: float
    final_loss: float
    steps: int
    first_step_seconds: float  # with la.jit: tracing and compiling are in here
    step_seconds: float  # median of the later steps
    total_seconds: float  # every step, the first included


# -- data ------------------------------------------------------------------------------------
def load_dataset(name: str, seed: int) -> Dataset:
    """The digits (if scikit-learn is installed and `name` is "digits") or generated blobs,
    split into train and test sets by a seeded permutation."""
    rng = np.random.default_rng(seed)
    if name == "digits":
        try:
            from sklearn.datasets import load_digits
        except ImportError:
            print("scikit-learn is not installed (pip install 'lazyarr[examples]'); "
                  "using generated Gaussian blobs instead of the digits")
            name = "blobs"
        else:
            digits = load_digits()
            images, labels = (digits.data / 16.0).astype(np.float32), digits.target.astype(np.int64)
    if name == "blobs":
        images, labels = gaussian_blobs(rng)
    order = rng.permutation(len(labels))
    test_count = round(len(labels) * TEST_FRACTION)
    test, train = order[:test_count], order[test_count:]
    return Dataset(name, images[train], labels[train], images[test], labels[test])


def gaussian_blobs(rng: np.random.Generator, count: int = 1797) -> tuple[np.ndarray, np.ndarray]:
    """One Gaussian blob per class in 64 dimensions, the digits' size. Centers are ~11 apart
    and the noise has deviation 2 per dimension, so classes overlap a little: both models
    reach 95-98 % on held-out points (seeds 0-2), over REQUIRED_ACCURACY with a margin."""
    centers = rng.standard_normal((CLASSES, FEATURES))
    labels = rng.integers(0, CLASSES, count)
    images = centers[labels] + 2.0 * rng.standard_normal((count, FEATURES))
    images = (images - images.mean(axis=0)) / images.std(axis=0)
    return images.astype(np.float32), labels.astype(np.int64)


# -- the model: written once, run compiled or eagerly ----------------------------------------
def initial_layers(layer_sizes, rng) -> list[tuple[la.Array, la.Array]]:
    """(weights, bias) per layer; weights ~ N(0, 1/fan_in) keep tanh out of saturation."""
    layers = []
    for fan_in, fan_out in zip(layer_sizes[:-1], layer_sizes[1:]):
        weights = (rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)).astype(np.float32)
        layers.append((la.asarray(weights), la.zeros(fan_out, dtype=la.float32)))
    return layers


def logits_of(layers, images):
    activations = images
    for index, (weights, bias) in enumerate(layers):
        activations = activations @ weights + bias
        if index < len(layers) - 1:
            activations = la.tanh(activations)
    return activations


def cross_entropy(layers, images, labels):
    """Mean -log softmax(logits)[label]. log softmax = logits - logsumexp(logits), with the row
    maximum subtracted before `exp` so large logits cannot overflow."""
    logits = logits_of(layers, images)
    row_maximum = logits.max(axis=1, keepdims=True)
    logsumexp = row_maximum + la.log(la.exp(logits - row_maximum).sum(axis=1, keepdims=True))
    one_hot = (labels[:, None] == la.arange(CLASSES)).astype(logits.dtype)
    return -((logits - logsumexp) * one_hot).sum() / images.shape[0]


def sgd_step(layers, images, labels, learning_rate):
    """One training step: the loss and its gradient (one backward graph), then the update."""
    loss, gradients = la.value_and_grad(cross_entropy)(layers, images, labels)
    updated = [(weights - learning_rate * weight_gradient, bias - learning_rate * bias_gradient)
               for (weights, bias), (weight_gradient, bias_gradient) in zip(layers, gradients)]
    return loss, updated


def predictions(layers, images):
    return logits_of(layers, images).argmax(axis=1)


def evaluated_each_call(function):
    """The eager form: call `function`, then evaluate all its results as one module (without
    this, each step's lazy parameters would extend one ever-growing graph)."""

    def call(*arguments):
        result = function(*arguments)
        la.eval(*array_leaves(result))
        return result

    return call


def array_leaves(tree) -> list:
    """The arrays in nested tuples and lists, in order."""
    if isinstance(tree, (tuple, list)):
        return [leaf for item in tree for leaf in array_leaves(item)]
    return [tree]


# -- training --------------------------------------------------------------------------------
def train(model: Model, dataset: Dataset, compiled: bool, seed: int, profile_path=None) -> TrainingResult:
    """SGD over shuffled full minibatches (the remainder of an epoch is dropped, so every step
    has one signature and la.jit compiles once); the first PROFILED_STEPS under `la.profile`."""
    rng = np.random.default_rng(seed)
    layers = initial_layers(model.layer_sizes, rng)
    step = la.jit(sgd_step) if compiled else evaluated_each_call(sgd_step)
    predict = la.jit(predictions) if compiled else evaluated_each_call(predictions)
    durations, loss = [], None
    batches_per_epoch = len(dataset.train_labels) // BATCH_SIZE
    with contextlib.ExitStack() as profiling:
        if profile_path is not None:
            profiling.enter_context(la.profile(profile_path))
        for _ in range(model.epochs):
            order = rng.permutation(len(dataset.train_labels))
            for batch in range(batches_per_epoch):
                chosen = order[batch * BATCH_SIZE:(batch + 1) * BATCH_SIZE]
                start = time.perf_counter()
                loss, layers = step(layers, dataset.train_images[chosen], dataset.train_labels[chosen],
                                    model.learning_rate)
                durations.append(time.perf_counter() - start)
                if len(durations) == PROFILED_STEPS:
                    profiling.close()
    predicted = np.asarray(predict(layers, dataset.test_images))
    check_against_numpy(layers, dataset.test_images, predicted)
    return TrainingResult(
        model=model.name, mode="compiled" if compiled else "no-compile",
        accuracy=float((predicted == dataset.test_labels).mean()), final_loss=float(loss), steps=len(durations),
        first_step_seconds=durations[0], step_seconds=statistics.median(durations[1:]),
        total_seconds=sum(durations),
    )


def check_against_numpy(layers, images, predicted) -> None:
    """lazyarr's predictions are NumPy's (float64) for the trained weights, except where two
    logits are closer than float32 rounding of 64- and 128-term dot products can separate."""
    activations = images.astype(np.float64)
    for index, (weights, bias) in enumerate(layers):
        activations = activations @ np.asarray(weights, np.float64) + np.asarray(bias, np.float64)
        if index < len(layers) - 1:
            activations = np.tanh(activations)
    expected = activations.argmax(axis=1)
    top_two = np.sort(activations, axis=1)[:, -2:]
    differs = predicted != expected
    # float32 logits carry errors ~1e-6 relative to the sums of |terms| (here at most ~1e2): 1e-3 is ample.
    assert np.all(top_two[differs, 1] - top_two[differs, 0] < 1e-3), "predictions differ from NumPy's"


def run(models, dataset: Dataset, compiled: bool, seed: int, profile_path=None) -> list[TrainingResult]:
    """Train every model, compiled (la.jit, cpu backend) or eagerly on the interpreter."""
    backend = la.get_backend_name()
    la.set_backend("cpu" if compiled else "interpreter")
    try:
        results = []
        for model in models:
            path = profile_path if model is models[-1] else None
            results.append(train(model, dataset, compiled, seed, path))
            report(results[-1])
        return results
    finally:
        la.set_backend(backend)


def report(result: TrainingResult) -> None:
    print(f"  {result.model:<22} test accuracy {result.accuracy:6.1%}  final loss {result.final_loss:.3f}  "
          f"{result.steps} steps: first {result.first_step_seconds * 1e3:6.1f} ms, then "
          f"{result.step_seconds * 1e3:.3f} ms/step; total {result.total_seconds:.2f} s")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compile", action=argparse.BooleanOptionalAction, default=True,
                        help="la.jit on the cpu backend (default); --no-compile: eager on the NumPy interpreter")
    parser.add_argument("--compare", action="store_true", help="run both ways and compare their times")
    parser.add_argument("--dataset", choices=("digits", "blobs"), default="digits",
                        help="digits needs scikit-learn; without it the generated blobs stand in")
    parser.add_argument("--profile", metavar="TRACE.json", help="write a la.profile Chrome trace of the first "
                        f"{PROFILED_STEPS} MLP steps (of the compiled run with --compare)")
    parser.add_argument("--epochs", type=int, help="passes over the training set (default: 30 for each model)")
    parser.add_argument("--seed", type=int, default=0)
    arguments = parser.parse_args(argv)
    if arguments.epochs is not None and arguments.epochs < 1:
        parser.error(f"--epochs must be a positive number of passes, got {arguments.epochs}")
    models = MODELS if arguments.epochs is None else [
        dataclasses.replace(model, epochs=arguments.epochs) for model in MODELS]

    dataset = load_dataset(arguments.dataset, arguments.seed)
    print(f"dataset: {dataset.name}, {len(dataset.train_labels)} training and {len(dataset.test_labels)} test "
          f"images of {FEATURES} features, {CLASSES} classes; minibatches of {BATCH_SIZE}, plain SGD")
    modes = (True, False) if arguments.compare else (arguments.compile,)
    results = {}
    for compiled in modes:
        print("compiled: la.jit(value_and_grad) on the cpu backend" if compiled
              else "no-compile: the same code, eager on the interpreter backend (NumPy)")
        profile_path = arguments.profile if compiled or not arguments.compare else None
        results[compiled] = run(models, dataset, compiled, arguments.seed, profile_path)
    if arguments.profile:
        print(f"profile of the first {PROFILED_STEPS} MLP steps written to {arguments.profile} "
              "(open in chrome://tracing or ui.perfetto.dev)")
    if arguments.compare:
        for fast, slow in zip(results[True], results[False]):
            print(f"{fast.model}: {slow.step_seconds / fast.step_seconds:.1f}x faster per step compiled "
                  f"({fast.step_seconds * 1e3:.3f} vs {slow.step_seconds * 1e3:.3f} ms); total "
                  f"{fast.total_seconds:.2f} s vs {slow.total_seconds:.2f} s")
    for result in (result for mode in results.values() for result in mode):
        if result.accuracy < REQUIRED_ACCURACY:
            raise SystemExit(f"{result.model} ({result.mode}) reached {result.accuracy:.1%} test accuracy on "
                             f"{dataset.name}; at least {REQUIRED_ACCURACY:.0%} is expected")
    print(f"every model reached at least {REQUIRED_ACCURACY:.0%} test accuracy on {dataset.name}")


if __name__ == "__main__":
    main()
