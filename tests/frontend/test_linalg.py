"""Products and diagonals against NumPy: table records run with hypothesis (einsum: test_einsum).

Values: integer dtypes take their full range (edge values included), since integer products
wrap identically in any order; floating and complex dtypes take small integer values (-8..8),
whose products and sums are exact in every dtype (float16 included) whatever the summation
order, so the table compares exactly although NumPy (BLAS, its own einsum loops) and lazyarr
(the HLO dot) sum in different orders. `test_float_products_close` covers general floats with
a tolerance, and a NaN test checks propagation. Functions built only from elementwise ops
(outer, kron, cross, diagonal, trace) take full edge values and compare exactly.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from lazyarr.frontend import linalg
from tests.frontend.products import PRODUCT_DTYPES, assert_matches, exact_array
from tests.strategies import ALL_DTYPES, arrays

# --- operand drawing, one function per record ----------------------------------------------------


def matmul_operands(data, dtypes):
    shapes = data.draw(
        hnp.mutually_broadcastable_shapes(signature=np.matmul.signature, max_side=4, max_dims=4)
    )
    return [
        exact_array(data, dtype, shape, f"x{index}", dtypes)
        for index, (dtype, shape) in enumerate(zip(dtypes, shapes.input_shapes))
    ], {}


def vecdot_operands(data, dtypes):
    shapes = data.draw(hnp.mutually_broadcastable_shapes(signature="(n),(n)->()", max_side=4, max_dims=4))
    return [
        exact_array(data, dtype, shape, f"x{index}", dtypes)
        for index, (dtype, shape) in enumerate(zip(dtypes, shapes.input_shapes))
    ], {}


def dot_operands(data, dtypes):
    """Any pair NumPy's dot accepts: 0-d, vectors, matrices and N-d with aligned axes."""
    left_ndim, right_ndim = data.draw(st.integers(0, 3)), data.draw(st.integers(0, 3))
    inner = data.draw(st.integers(0, 4))
    left = data.draw(hnp.array_shapes(min_dims=left_ndim, max_dims=left_ndim, min_side=0, max_side=3))
    right = list(
        data.draw(hnp.array_shapes(min_dims=right_ndim, max_dims=right_ndim, min_side=0, max_side=3))
    )
    left = left[:-1] + (inner,) if left_ndim else left
    if right_ndim == 1:
        right[0] = inner
    elif right_ndim >= 2:
        right[-2] = inner
    return [
        exact_array(data, dtypes[0], left, "a", dtypes),
        exact_array(data, dtypes[1], tuple(right), "b", dtypes),
    ], {}


def inner_operands(data, dtypes):
    last = data.draw(st.integers(0, 4))
    shapes = [
        data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3)) + (last,)
        for _ in range(2)
    ]
    if data.draw(st.booleans()):
        shapes[1] = ()
    return [exact_array(data, dtype, shape, "x", dtypes) for dtype, shape in zip(dtypes, shapes)], {}


def flat_operands(data, dtypes):
    """vdot: any shapes with the same number of elements."""
    size = data.draw(st.integers(0, 6))
    shapes = [data.draw(st.sampled_from([(size,), (1, size), (size, 1)])) for _ in range(2)]
    return [exact_array(data, dtype, shape, "x", dtypes) for dtype, shape in zip(dtypes, shapes)], {}


def tensordot_operands(data, dtypes):
    count = data.draw(st.integers(0, 2))
    shared = data.draw(hnp.array_shapes(min_dims=count, max_dims=count, min_side=0, max_side=3))
    left_free = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    right_free = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    if data.draw(st.booleans(), label="integer axes"):
        left, right, axes = left_free + shared, shared + right_free, count
    else:
        left_order = data.draw(st.permutations(range(len(left_free) + count)))
        right_order = data.draw(st.permutations(range(len(right_free) + count)))
        left_shape = list(left_free + shared)
        right_shape = list(shared + right_free)
        left = tuple(left_shape[index] for index in left_order)
        right = tuple(right_shape[index] for index in right_order)
        left_axes = [left_order.index(len(left_free) + k) for k in range(count)]
        right_axes = [right_order.index(k) for k in range(count)]
        axes = (left_axes, right_axes)
    return [
        exact_array(data, dtypes[0], left, "a", dtypes),
        exact_array(data, dtypes[1], right, "b", dtypes),
    ], {"axes": axes}


def edge_pair(data, dtypes):
    return [
        data.draw(arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3)))
        for dtype in dtypes
    ], {}


def cross_operands(data, dtypes):
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3))
    sizes = data.draw(st.sampled_from([(3, 3), (3, 3), (2, 3), (3, 2), (2, 2)]))
    operands = [
        data.draw(arrays(dtype, st.just(shape + (size,))))
        for dtype, shape, size in zip(dtypes, shapes.input_shapes, sizes)
    ]
    result_ndim = max(len(shape) for shape in shapes.input_shapes) + (sizes != (2, 2))
    keywords = {}
    if result_ndim and data.draw(st.booleans(), label="axisc"):
        keywords["axisc"] = data.draw(st.integers(-result_ndim, result_ndim - 1))
    return operands, keywords


@dataclass(frozen=True)
class ProductRecord:
    """One function: NumPy counterpart, operand dtypes, how operands are drawn; exact results."""

    name: str
    numpy_function: Callable
    dtypes: list
    operands: Callable


RECORDS = [
    ProductRecord("matmul", np.matmul, PRODUCT_DTYPES, matmul_operands),
    ProductRecord("vecdot", np.vecdot, PRODUCT_DTYPES, vecdot_operands),
    ProductRecord("dot", np.dot, PRODUCT_DTYPES, dot_operands),
    ProductRecord("inner", np.inner, PRODUCT_DTYPES, inner_operands),
    ProductRecord("vdot", np.vdot, PRODUCT_DTYPES, flat_operands),
    ProductRecord("tensordot", np.tensordot, PRODUCT_DTYPES, tensordot_operands),
    ProductRecord("outer", np.outer, ALL_DTYPES, edge_pair),
    ProductRecord("kron", np.kron, ALL_DTYPES, edge_pair),
    ProductRecord("cross", np.cross, ALL_DTYPES, cross_operands),
]


def call_numpy(function, operands, keywords):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return np.asarray(function(*operands, **keywords)), None
        except (ValueError, TypeError) as error:
            return None, error


@pytest.mark.parametrize("record", RECORDS, ids=lambda record: record.name)
@given(data=st.data())
def test_matches_numpy(record, data):
    dtypes = [data.draw(st.sampled_from(record.dtypes), label=f"dtype {index}") for index in range(2)]
    operands, keywords = record.operands(data, dtypes)
    expected, error = call_numpy(record.numpy_function, operands, keywords)
    lazy_operands = [la.asarray(operand) for operand in operands]
    function = getattr(linalg, record.name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # cross of 2-vectors, as NumPy warns
        if error is not None:
            with pytest.raises(type(error)):
                function(*lazy_operands, **keywords)
            return
        result = function(*lazy_operands, **keywords)
    if record.name in ("outer", "kron") and dtypes[0] != dtypes[1] and expected.dtype.kind == "c":
        # NumPy's complex multiply of mixed dtypes casts in buffers and takes its SIMD (FMA)
        # loop, which rounds 1 ulp apart from the plain loop it uses once both operands have
        # one dtype (as lazyarr's converted operands do): allow 4 eps.
        assert_matches(result, expected, 4 * float(np.finfo(expected.dtype).eps))
        return
    assert_matches(result, expected)


@given(data=st.data())
def test_diagonal_and_trace(data):
    dtype = data.draw(st.sampled_from(ALL_DTYPES))
    value = data.draw(arrays(dtype, hnp.array_shapes(min_dims=2, max_dims=4, min_side=0, max_side=4)))
    ndim = value.ndim
    axis1 = data.draw(st.integers(-ndim, ndim - 1))
    axis2 = data.draw(st.integers(-ndim, ndim - 1).filter(lambda axis: axis % ndim != axis1 % ndim))
    offset = data.draw(st.integers(-5, 5))
    assert_matches(
        linalg.diagonal(la.asarray(value), offset, axis1, axis2), np.diagonal(value, offset, axis1, axis2)
    )
    trace_dtype = data.draw(st.sampled_from([None, None, np.int64, np.float64, np.complex128]))
    expected, error = call_numpy(
        np.trace, [value], {"offset": offset, "axis1": axis1, "axis2": axis2, "dtype": trace_dtype}
    )
    if error is not None:
        with pytest.raises(type(error)):
            linalg.trace(la.asarray(value), offset, axis1, axis2, dtype=trace_dtype)
        return
    assert_matches(linalg.trace(la.asarray(value), offset, axis1, axis2, dtype=trace_dtype), expected)


# --- general floats (tolerance), NaN, errors, laziness -------------------------------------


@pytest.mark.parametrize("name", ["matmul", "dot", "vecdot", "einsum"])
@given(data=st.data())
def test_float_products_close(name, data):
    """Random floats: NumPy (BLAS blocking, its einsum loops, float16 accumulated in float32)
    sums in another order than the HLO dot, so allow a few ulps times the length: rtol and
    atol of 50 * eps for float32/64 and complex, 1e-2 for float16 (eps 1e-3, length <= 4)."""
    dtype = np.dtype(data.draw(st.sampled_from(["float16", "float32", "float64", "complex64", "complex128"])))
    shapes = data.draw(
        hnp.mutually_broadcastable_shapes(signature=np.matmul.signature, max_side=4, max_dims=3)
    )
    left_shape, right_shape = shapes.input_shapes
    if name == "vecdot":
        right_shape = left_shape
    elements = (
        hnp.from_dtype(dtype, allow_nan=False, allow_infinity=False, max_magnitude=1.0)
        if dtype.kind == "c"
        else hnp.from_dtype(dtype, allow_nan=False, allow_infinity=False, min_value=-1.0, max_value=1.0)
    )
    left = data.draw(hnp.arrays(dtype, left_shape, elements=elements))
    right = data.draw(hnp.arrays(dtype, right_shape, elements=elements))
    if name == "einsum":
        if left.ndim != 2 or right.ndim != 2:
            return
        result, expected = (
            linalg.einsum("ij,jk->ik", la.asarray(left), la.asarray(right)),
            np.einsum("ij,jk->ik", left, right),
        )
    elif name == "dot" and (left.ndim > 2 or right.ndim > 2):
        return
    else:
        result = getattr(linalg, name)(la.asarray(left), la.asarray(right))
        expected = getattr(np, name)(left, right)
    tolerance = 1e-2 if dtype == np.float16 else 50 * float(np.finfo(dtype).eps)
    assert_matches(result, expected, tolerance)


def test_nan_propagates_through_matmul():
    left = np.array([[1.0, np.nan], [0.0, 1.0]])
    right = np.array([[1.0, 2.0], [3.0, 4.0]])
    result = np.asarray(linalg.matmul(la.asarray(left), la.asarray(right)))
    np.testing.assert_array_equal(np.isnan(result), np.isnan(left @ right))


def test_matmul_errors_show_shapes():
    for _ in range(2):  # matmul memoizes its plan per signature: a refusal is never remembered as one
        with pytest.raises(
            ValueError,
            match=r"matmul: Input operand 1 has a mismatch in its core dimension 0.*"
            r"\(size 4 is different from 3\)",
        ):
            linalg.matmul(la.asarray(np.ones((2, 3))), la.asarray(np.ones((4, 5))))
        assert linalg.matmul(la.asarray(np.ones((2, 3))), la.asarray(np.ones((3, 5)))).shape == (2, 5)
    with pytest.raises(ValueError, match="Input operand 0 does not have enough dimensions"):
        linalg.matmul(la.asarray(np.ones(())), la.asarray(np.ones(3)))
    with pytest.raises(ValueError, match=r"\(2,2,3\) and \(3,3,4\)"):
        linalg.matmul(la.asarray(np.ones((2, 2, 3))), la.asarray(np.ones((3, 3, 4))))
    with pytest.raises(TypeError, match="out="):
        linalg.matmul(la.asarray(np.ones((2, 2))), la.asarray(np.ones((2, 2))), out=np.ones((2, 2)))


def test_other_product_errors():
    with pytest.raises(
        ValueError, match=r"shapes \(2,3\) and \(4,\) not aligned: 3 \(dim 1\) != 4 \(dim 0\)"
    ):
        linalg.dot(la.asarray(np.ones((2, 3))), la.asarray(np.ones(4)))
    with pytest.raises(ValueError, match="size 4 is different from 3"):
        linalg.vecdot(la.asarray(np.ones(3)), la.asarray(np.ones(4)))
    with pytest.raises(ValueError, match="shape-mismatch for sum"):
        linalg.tensordot(la.asarray(np.ones((2, 3))), la.asarray(np.ones((4, 3))), axes=1)
    with pytest.raises(ValueError, match="different lengths"):
        linalg.vdot(la.asarray(np.ones(3)), la.asarray(np.ones(4)))
    with pytest.raises(ValueError, match="at least two dimensions"):
        linalg.diagonal(la.asarray(np.ones(3)))
    with pytest.raises(ValueError, match="cannot be the same"):
        linalg.diagonal(la.asarray(np.ones((2, 2))), 0, 1, -1)
    with pytest.raises(np.exceptions.AxisError):
        linalg.diagonal(la.asarray(np.ones((2, 2))), 0, 0, 5)
    with pytest.raises(ValueError, match="dimension must be 2 or 3"):
        linalg.cross(la.asarray(np.ones(4)), la.asarray(np.ones(3)))


def test_products_are_lazy():
    matrix = la.asarray(np.ones((3, 3)))
    results = [
        linalg.matmul(matrix, matrix),
        linalg.einsum("ii", matrix),
        linalg.diagonal(matrix),
        linalg.trace(matrix),
        linalg.tensordot(matrix, matrix),
        linalg.cross(matrix, matrix),
    ]
    assert not any(result.is_evaluated for result in results)
