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


def main():
    rng = np.random.default_rng(0)
    features = rng.standard_normal((2000, 16)).astype(np.float32)
    weights = rng.standard_normal((16, 4)).astype(np.float32)

    start = time.perf_counter()
    lazy = pipeline(la, la.asarray(features), la.asarray(weights))
    built = time.perf_counter() - start
    hlo = la.hlo_text(*lazy)
    instructions = sum(1 for line in hlo.splitlines() if " = " in line)
    print(f"recorded {instructions} HLO instructions in {built * 1e3:.2f} ms; nothing has run yet")
    print("\n".join(hlo.splitlines()[:12]) + "\n  ...\n")

    start = time.perf_counter()
    la.eval(*lazy)  # one module for all four outputs, sharing the softmax
    evaluated = time.perf_counter() - start

    start = time.perf_counter()
    expected = pipeline(np, features, weights)
    numpy_time = time.perf_counter() - start

    probabilities, predicted, mean_confidence, confident = lazy
    print("class probabilities (first 3 rows):")
    print(probabilities[:3])
    print("predicted classes (first 10):", predicted[:10])
    print(f"mean confidence: {float(mean_confidence):.4f}; rows above 0.5: {int(confident)}")
    names = ("probabilities", "predicted", "mean confidence", "confident")
    for name, got, want in zip(names, lazy, expected):
        np.testing.assert_allclose(np.asarray(got), want, rtol=2e-5, atol=1e-6, err_msg=name)
    backend = la.get_backend_name()
    print(f"\nevaluated on the {backend!r} backend in {evaluated * 1e3:.2f} ms "
          f"(NumPy eager: {numpy_time * 1e3:.2f} ms); all outputs match NumPy")


if __name__ == "__main__":
    main()
