"""lazyarr's main job: NumPy-style code on lazy arrays, one evaluation, NumPy's answer.

It builds a small data-analysis pipeline (standardize features, a softmax over scores,
per-class statistics), shows the HLO graph that was recorded, evaluates everything as one
module with `la.eval`, and checks every value against NumPy.

    python examples/quickstart.py
"""

from __future__ import annotations

import time

import numpy as np

import lazyarr as la


def pipeline(xp, features, weights):
    """The same code runs on NumPy (xp=np) and on lazyarr (xp=la)."""
    centered = features - features.mean(axis=0)
    standardized = centered / (features.std(axis=0) + 1e-6)
    scores = standardized @ weights
    shifted = scores - scores.max(axis=1, keepdims=True)
    probabilities = xp.exp(shifted) / xp.exp(shifted).sum(axis=1, keepdims=True)
    predicted = probabilities.argmax(axis=1)
    confidence = probabilities.max(axis=1)
    return probabilities, predicted, confidence.mean(), (confidence > 0.5).sum()


def best_time(function, repeat=7):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    la.set_backend("cpu")  # compiled with llvmlite; "interpreter" is the NumPy oracle
    rng = np.random.default_rng(0)
    features = rng.standard_normal((200_000, 16)).astype(np.float32)
    weights = rng.standard_normal((16, 4)).astype(np.float32)
    lazy_features, lazy_weights = la.asarray(features), la.asarray(weights)

    start = time.perf_counter()
    lazy = pipeline(la, lazy_features, lazy_weights)
    built = time.perf_counter() - start
    hlo = la.hlo_text(*lazy)
    instructions = sum(1 for line in hlo.splitlines() if " = " in line)
    print(f"recorded {instructions} HLO instructions in {built * 1e3:.2f} ms; nothing has run yet")
    report = la.explain(*lazy)
    print(f"compiled to {report.num_kernels} fused kernels (argmax among them) and a BLAS call for the matmul "
          f"in {la.cache_info().compile_seconds * 1e3:.0f} ms")

    la.eval(*lazy)  # one module for all four outputs, sharing the softmax
    expected = pipeline(np, features, weights)
    exact = pipeline(np, features.astype(np.float64), weights.astype(np.float64))
    probabilities, predicted, mean_confidence, confident = lazy
    print("class probabilities (first 3 rows):")
    print(probabilities[:3])
    print("predicted classes (first 10):", predicted[:10])
    print(f"mean confidence: {float(mean_confidence):.4f}; rows above 0.5: {int(confident)}")
    # Both float32 answers are held to the float64 one: column sums of 200,000 float32 terms
    # carry rounding error of order 1e-5 in NumPy's order; lazyarr's kernels are closer.
    lazy_error = np.abs(np.asarray(probabilities) - exact[0]).max()
    numpy_error = np.abs(expected[0] - exact[0]).max()
    print(f"largest error against float64: lazyarr {lazy_error:.1e}, NumPy {numpy_error:.1e}")
    np.testing.assert_allclose(np.asarray(probabilities), exact[0], rtol=1e-4, atol=1e-6)
    np.testing.assert_array_equal(np.asarray(predicted), expected[1])

    lazy_seconds = best_time(lambda: la.eval(*pipeline(la, lazy_features, lazy_weights)))
    numpy_seconds = best_time(lambda: pipeline(np, features, weights))
    print(f"\nall outputs match NumPy. Steady state (graph build + cached executable): "
          f"{lazy_seconds * 1e3:.2f} ms; NumPy eager: {numpy_seconds * 1e3:.2f} ms "
          f"({numpy_seconds / lazy_seconds:.2f}x)")


if __name__ == "__main__":
    main()
