"""Dots as native gemm kernels (backends/llvm/blas.py).

A float32/float64 matrix or vector product is a kernel whose body calls NumPy's own CBLAS
gemm (gemv when an operand is a vector), so it runs inside the native run of the kernels
around it instead of a Python host step.
Checked against np.matmul over transposed operands, vectors, empty dimensions (no call, or
zeros when nothing is summed), one operand used twice (`x @ x.T`), NaN and infinities,
placeholder sizes (`la.jit`), and the fallback to host steps where no CBLAS is found. BLAS
may sum in another order for a transposed operand than NumPy's matmul does: results agree
within 4 ULPs of the row length in float64 (rtol 1e-13 here) and 1e-5 in float32.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarr as la
from lazyarr.backends import cpu
from lazyarr.backends.llvm import blas
from lazyarr.backends.slots import HostStep
from lazyarr.compile import compile_module
from lazyarr.hlo import Computation, Module, make

pytestmark = pytest.mark.skipif(blas.gemm() is None, reason="no CBLAS gemm in NumPy's BLAS here")

_TOLERANCE = {np.float32: 1e-5, np.float64: 1e-13}


def _dot_module(left, right, left_contracting, right_contracting):
    parameters = [make("parameter", number=number, shape=value.shape, dtype=value.dtype)
                  for number, value in enumerate((left, right))]
    root = make("dot", parameters, lhs_batch=(), rhs_batch=(), lhs_contracting=(left_contracting,),
                rhs_contracting=(right_contracting,))
    return Module("main", Computation("main", tuple(parameters), (root,)))


@st.composite
def _products(draw):
    rows, inner, columns = (draw(st.integers(0, 7)) for _ in range(3))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    left_vector, right_vector = draw(st.booleans()), draw(st.booleans())
    left_contracting = 0 if left_vector else draw(st.integers(0, 1))
    right_contracting = 0 if right_vector else draw(st.integers(0, 1))
    left_shape = (inner,) if left_vector else ((rows, inner) if left_contracting == 1 else (inner, rows))
    right_shape = (inner,) if right_vector else ((inner, columns) if right_contracting == 0 else (columns, inner))
    return left_shape, right_shape, left_contracting, right_contracting, dtype


def _expected(left, right, left_contracting, right_contracting):
    left = left.T if left.ndim == 2 and left_contracting == 0 else left
    right = right.T if right.ndim == 2 and right_contracting == 1 else right
    return np.asarray(np.matmul(left, right))


@pytest.mark.usefixtures("cpu_backend")
@settings(max_examples=40, deadline=None)
@given(_products(), st.integers(0, 2**32 - 1))
def test_gemm_kernels_match_numpy_matmul(case, seed):
    left_shape, right_shape, left_contracting, right_contracting, dtype = case
    rng = np.random.default_rng(seed)
    left, right = (rng.standard_normal(shape).astype(dtype) for shape in (left_shape, right_shape))
    if left.size and rng.random() < 0.3:  # NaN and infinities reach the output as NumPy's
        left.flat[rng.integers(left.size)] = rng.choice([np.nan, np.inf, -np.inf])
    executable = compile_module(_dot_module(left, right, left_contracting, right_contracting), "cpu")
    assert not any(isinstance(step, HostStep) for step in executable.steps)
    (result,) = executable.run([left, right])
    expected = _expected(left, right, left_contracting, right_contracting)
    assert result.shape == expected.shape and result.dtype == expected.dtype
    np.testing.assert_allclose(result, expected, rtol=_TOLERANCE[dtype], atol=_TOLERANCE[dtype])


@pytest.mark.usefixtures("fresh_cpu_cache")
def test_an_operand_used_twice_and_fused_producers():
    x = np.random.default_rng(0).standard_normal((6, 4)).astype(np.float32)
    lazy = la.asarray(x)
    for product, expected in [(lazy.T @ lazy, x.T @ x), (lazy @ lazy.T, x @ x.T),
                              ((lazy * 2) @ (lazy.T + 1), (x * 2) @ (x.T + 1))]:
        np.testing.assert_allclose(np.asarray(product), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.usefixtures("fresh_cpu_cache")
def test_jitted_products_with_placeholder_sizes_run_in_one_native_call():
    """A jitted step (sizes as placeholders, read at run time) runs its dots in the same native
    run as its elementwise kernels: no host step, one dispatch call for the whole step."""
    step = la.jit(lambda w, x: la.tanh(x @ w + 1.0).sum(axis=0) @ w.T)
    rng = np.random.default_rng(1)
    for batch in (3, 17):
        w, x = rng.standard_normal((5, 4)), rng.standard_normal((batch, 5))
        np.testing.assert_allclose(np.asarray(step(w, x)), np.tanh(x @ w + 1.0).sum(axis=0) @ w.T, rtol=1e-13)
    executable = compile_module(_dot_module(np.ones((3, 2)), np.ones((2, 5)), 1, 0), "cpu")
    assert [type(step).__name__ for step in executable.dispatched] == ["NativeRun"]


@pytest.mark.usefixtures("fresh_cpu_cache")
def test_without_cblas_dots_are_host_steps(monkeypatch):
    monkeypatch.setattr(blas, "gemm", lambda: None)
    x = np.arange(6.0).reshape(2, 3)
    module = _dot_module(x, x, 1, 1)
    executable = cpu.BACKEND.compile(module)
    assert [type(step).__name__ for step in executable.steps] == ["HostStep"]
    np.testing.assert_array_equal(executable.run([x, x])[0], x @ x.T)


def test_dots_the_gemm_kernel_does_not_take():
    def dot(left, right, dtype=np.float32, **dimensions):
        parameters = [make("parameter", number=number, shape=shape, dtype=np.dtype(dtype))
                      for number, shape in enumerate((left, right))]
        return make("dot", parameters, **{"lhs_batch": (), "rhs_batch": (), "lhs_contracting": (1,),
                                          "rhs_contracting": (0,), **dimensions})

    assert blas.native_dot_refusal(dot((2, 3), (3, 4))) is None
    assert "int32" in blas.native_dot_refusal(dot((2, 3), (3, 4), np.int32))
    assert "complex" in blas.native_dot_refusal(dot((2, 3), (3, 4), np.complex64))
    assert "batched" in blas.native_dot_refusal(dot((5, 2, 3), (5, 3, 4), lhs_batch=(0,), rhs_batch=(0,),
                                                    lhs_contracting=(2,), rhs_contracting=(1,)))
    assert "rank" in blas.native_dot_refusal(dot((2, 2, 3), (3, 4), lhs_contracting=(2,)))


@pytest.mark.parametrize("threads", ["python pool", "native"])
@pytest.mark.parametrize("shapes", [((300, 200), (200,)), ((200,), (200, 300)), ((120, 200), (200, 90))])
def test_gemm_kernels_are_never_split_over_threads(thread_pool_kernels, monkeypatch, threads, shapes):
    """A gemm kernel with placeholder sizes decides at run time whether it wants threads: it
    never does (BLAS has its own). Split, two calls would write one output at once, and gemv
    zeroes y before accumulating into it: a 4000x3000 float64 `A @ x` gave errors up to 256."""
    from lazyarr.backends.llvm import dispatch

    if threads == "native" and not dispatch.native_threads():
        pytest.skip("no OpenMP runtime found")
    if threads == "python pool":
        monkeypatch.setattr(dispatch, "native_threads", lambda: False)
        monkeypatch.setattr(dispatch, "parallel_caller", lambda: None)
    la.clear_cache()
    rng = np.random.default_rng(5)
    left, right = (rng.standard_normal(shape) for shape in shapes)
    for _ in range(3):  # a race shows on some runs only
        got = np.asarray(la.asarray(left) @ la.asarray(right))
        np.testing.assert_allclose(got, left @ right, rtol=_TOLERANCE[np.float64], atol=1e-12)


def test_explain_says_a_dot_is_a_gemm_kernel_of_its_own():
    # The fusion decision after a native dot names what it is (it ran on the host once, and
    # the reason still said so).
    x = la.asarray(np.ones((4, 3), np.float32))
    w = la.asarray(np.ones((3, 5), np.float32))
    report = la.explain(la.maximum(x @ w + 1, 0))
    reasons = " ".join(str(decision) for _, _, decision in report.fusion_decisions)
    assert "a BLAS gemm kernel of its own" in reasons and "runs on the host" not in reasons
