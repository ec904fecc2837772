"""NumPy's ndarray methods that ordinary code calls on arrays: fill, partition, argpartition,
compress, put, tobytes and item, each against the same call on a NumPy array.

In-place methods (fill, partition, put) change the array object, so every reference sees the
change and a view writes through to its base, as in NumPy.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from tests.assertions import assert_identical
from tests.strategies import ALL_DTYPES, REAL_DTYPES, arrays, elements, nonempty_shapes

VECTORS_AND_UP = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5)


def _numpy_fill(target: np.ndarray, value):
    """NumPy's fill; None where NumPy refuses the value (a Python int out of the dtype's range)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            target.fill(value)
    except (OverflowError, ValueError, TypeError):
        return None
    return target


@given(st.sampled_from(ALL_DTYPES).flatmap(arrays), st.data())
def test_fill_matches_numpy_and_writes_through_views(values, data):
    value = data.draw(elements(values.dtype) | st.integers(-3, 3) | st.floats(-2.5, 2.5), label="value")
    expected = _numpy_fill(values.copy(), value)
    array = la.asarray(values)
    alias = array
    if expected is None:
        with pytest.raises((OverflowError, ValueError, TypeError)):
            array.fill(value)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert array.fill(value) is None
    assert_identical(np.asarray(alias), expected)
    if values.ndim and values.shape[0]:  # a view's fill reaches its base: `A[:1].fill(v)` changes row 0 of A
        base, numpy_base = la.asarray(values), values.copy()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            base[:1].fill(value)
            numpy_base[:1].fill(value)
        assert_identical(np.asarray(base), numpy_base)


def test_fill_takes_scalars_only_and_partition_an_axis():
    array = la.zeros((3, 2))
    for value in ([1.0], np.array([5.0]), la.asarray(np.array([1.0, 2.0]))):
        with pytest.raises(ValueError, match="sequence"):
            array.fill(value)
    array.fill(np.array(5.0))  # a 0-d array is a scalar, as in NumPy
    array.fill(la.asarray(2.0))
    assert_identical(np.asarray(array), np.full((3, 2), 2.0))
    for method in (array.partition, lambda kth, axis: array.sort(axis=axis)):
        with pytest.raises(TypeError):
            method(1, axis=None)


@given(st.sampled_from(REAL_DTYPES).flatmap(lambda dtype: arrays(dtype, VECTORS_AND_UP)), st.data())
def test_partition_method_partitions_in_place_and_argpartition_indexes_it(values, data):
    axis = data.draw(st.integers(-values.ndim, values.ndim - 1), label="axis")
    length = values.shape[axis]
    kth = data.draw(st.integers(-length, length - 1), label="kth")
    array = la.asarray(values)
    alias = array
    assert array.partition(kth, axis=axis) is None
    result, expected = np.asarray(alias), np.partition(values, kth, axis=axis)
    # NumPy's contract, not its arrangement: the kth element is where a sort puts it.
    position = kth % length
    kth_values = np.take(result, [position], axis=axis)
    assert_identical(kth_values, np.take(expected, [position], axis=axis))
    assert_identical(np.sort(result, axis=axis), np.sort(values, axis=axis))
    order = np.asarray(la.asarray(values).argpartition(kth, axis=axis))
    assert order.dtype == np.int64
    assert_identical(np.take(np.take_along_axis(values, order, axis=axis), [position], axis=axis),
                     np.take(expected, [position], axis=axis))


@given(st.sampled_from(ALL_DTYPES).flatmap(lambda dtype: arrays(dtype, nonempty_shapes)), st.data())
def test_compress_method_takes_numpy_argument_order(values, data):
    axes = st.integers(-values.ndim, values.ndim - 1) if values.ndim else st.nothing()
    axis = data.draw(st.none() | axes, label="axis")
    length = values.size if axis is None else values.shape[axis]
    condition = data.draw(st.lists(st.booleans(), min_size=0, max_size=length), label="condition")
    assert_identical(np.asarray(la.asarray(values).compress(condition, axis=axis)),
                     values.compress(condition, axis=axis))


@given(st.sampled_from(ALL_DTYPES).flatmap(lambda dtype: arrays(dtype, nonempty_shapes)), st.data())
def test_put_method_and_item_read_as_numpy(values, data):
    positions = data.draw(st.lists(st.integers(-values.size, values.size - 1), min_size=1, max_size=4))
    replacement = values.reshape(-1)[: len(positions)]
    array, expected = la.asarray(values), values.copy()
    assert array.put(positions, replacement) is None
    expected.put(positions, replacement)
    assert_identical(np.asarray(array), expected)
    index = data.draw(st.integers(-expected.size, expected.size - 1), label="index")
    for evaluated in (False, True):  # a pending array evaluates; an evaluated one reads its buffer
        if evaluated:
            source, reference = la.asarray(expected).eval(), expected
        else:  # reversed, a pending graph of the same dtype
            source = la.flip(la.asarray(expected).reshape(-1)).reshape(expected.shape)
            reference = expected.reshape(-1)[::-1].reshape(expected.shape)
        got, want = source.item(index), reference.item(index)
        assert type(got) is type(want)
        assert got == want or (got != got and want != want)


@given(st.sampled_from(ALL_DTYPES).flatmap(arrays))
def test_tobytes_matches_numpy(values):
    for order in ("C", "F", "A"):  # 'A': Fortran order where NumPy's array is Fortran-contiguous (a .T)
        assert la.asarray(values).tobytes(order) == values.tobytes(order)
        assert la.asarray(values).T.tobytes(order) == values.T.tobytes(order)
