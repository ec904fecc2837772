"""Sorting, searching and set functions against NumPy.

Assert shape, then dtype, then values, exactly (these functions move or count values).
The sort is stable, so argsort is compared with np.argsort(kind='stable'); sort values are
compared with np.sort, where -0.0 and 0.0 compare equal either way.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lazyarr.frontend import elementwise
from lazyarr.frontend.core import as_array
from lazyarr.frontend.searching import (
    argsort,
    argwhere,
    flatnonzero,
    isin,
    nonzero,
    searchsorted,
    sort,
    sort_in_place,
    unique,
    unique_all,
    unique_counts,
    unique_inverse,
    unique_values,
)
from tests.strategies import ALL_DTYPES, FLOAT_DTYPES, REAL_DTYPES, arrays, shapes

INTEGER_DTYPES = [dtype for dtype in REAL_DTYPES if dtype.kind in "iu"]


def assert_same(got, expected):
    got_value = np.asarray(got)
    expected = np.asarray(expected)
    assert got_value.shape == expected.shape, (got_value.shape, expected.shape)
    assert got_value.dtype == expected.dtype, (got_value.dtype, expected.dtype)
    np.testing.assert_array_equal(got_value, expected)


@st.composite
def real_arrays(draw, dtypes=REAL_DTYPES, shape=shapes):
    return draw(arrays(draw(st.sampled_from(dtypes)), shape))


@st.composite
def sort_cases(draw):
    values = draw(real_arrays())
    axis = draw(st.one_of(st.none(), st.integers(-values.ndim, values.ndim - 1))) if values.ndim else None
    return values, axis


# -- sort / argsort -------------------------------------------------------------------------


@given(sort_cases())
def test_sort_matches_numpy(case):
    values, axis = case
    assert_same(sort(as_array(values), axis=axis), np.sort(values, axis=axis))
    assert_same(sort(as_array(values), axis=axis, stable=True), np.sort(values, axis=axis, stable=True))


@given(sort_cases())
def test_argsort_matches_numpy_stable(case):
    values, axis = case
    assert_same(argsort(as_array(values), axis=axis), np.argsort(values, axis=axis, kind="stable"))
    assert_same(argsort(as_array(values), axis=axis, kind="mergesort"),
                np.argsort(values, axis=axis, kind="mergesort"))


def _descending_order(row):
    """Stable descending order of a 1-d row in NumPy's ordering (NaN above every number)."""
    def key(index):
        value = row[index].item()
        is_nan = isinstance(value, float) and value != value
        return (is_nan, 0.0 if is_nan else value)

    return np.array(sorted(range(len(row)), key=key, reverse=True), dtype=np.int64)


@given(sort_cases())
def test_descending_is_stable_and_puts_nan_first(case):
    values, axis = case
    flat = values.reshape(-1) if axis is None else np.moveaxis(values, axis, -1)
    order = np.apply_along_axis(_descending_order, -1, flat) if flat.size else flat.astype(np.int64)
    expected_order = order if axis is None else np.moveaxis(order, -1, axis)
    expected_values = np.take_along_axis(values.reshape(-1) if axis is None else values, expected_order,
                                          axis=-1 if axis is None else axis)
    assert_same(argsort(as_array(values), axis=axis, descending=True), expected_order)
    assert_same(sort(as_array(values), axis=axis, descending=True), expected_values)


def test_sort_edge_values():
    values = np.array([0.0, -0.0, np.nan, -np.inf, np.inf, -0.0, 1.0, np.nan], dtype=np.float32)
    assert_same(sort(as_array(values)), np.sort(values))
    assert_same(argsort(as_array(values)), np.argsort(values, kind="stable"))
    # Stable: the zeros keep their input order (0.0, -0.0, -0.0), signs included.
    stable = np.sort(values, kind="stable")
    assert np.signbit(np.asarray(sort(as_array(values)))).tolist() == np.signbit(stable).tolist()


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_sorted_values_are_the_stable_sorts_bits_with_signed_zeros_and_nan_payloads(dtype):
    # The value sort runs NumPy's fast unstable sort unless equal elements could differ in
    # bits: here both zeros and NaNs of two payloads, spread over long rows (sorting.py).
    rng = np.random.default_rng(3)
    values = rng.standard_normal((3, 4000)).astype(dtype)
    values[:, ::7] = 0.0
    values[:, 3::11] = -0.0
    bits = values.view(np.dtype(f"u{values.itemsize}"))
    bits[:, 5::13] = np.array(np.nan, dtype).view(bits.dtype) | 1  # a NaN with another payload
    values[:, 6::17] = np.nan
    for axis in (0, 1):
        stable = np.sort(values, axis=axis, kind="stable")
        assert np.asarray(sort(as_array(values), axis=axis)).tobytes() == stable.tobytes()
    integers = rng.integers(-5, 5, (2, 3000))
    assert np.asarray(sort(as_array(integers), axis=1)).tobytes() == np.sort(integers, axis=1, kind="stable").tobytes()


def test_sort_zero_dimensional_and_errors():
    scalar = np.array(4)
    assert_same(sort(as_array(scalar), axis=None), np.sort(scalar, axis=None))
    assert_same(argsort(as_array(scalar)), np.argsort(scalar))
    with pytest.raises(ValueError, match="axis -1 is out of bounds for array of dimension 0"):
        sort(as_array(scalar))
    with pytest.raises(ValueError, match="sort kind must be one of"):
        sort(as_array(np.arange(3)), kind="bogus")
    with pytest.raises(ValueError, match="can't be provided at the same time"):
        sort(as_array(np.arange(3)), kind="stable", stable=True)
    with pytest.raises(ValueError, match="Cannot specify order"):
        argsort(as_array(np.arange(3)), order="x")
    with pytest.raises(TypeError, match="complex"):
        sort(as_array(np.array([1j])))


def test_sort_is_lazy_and_sort_in_place_rebinds():
    array = as_array(np.array([3.0, 1.0, 2.0])) * 1
    result = sort(array)
    assert not result.is_evaluated and not array.is_evaluated
    original = array
    sort_in_place(array)
    assert array is original
    assert_same(array, np.array([1.0, 2.0, 3.0]))


# -- searchsorted ------------------------------------------------------------------------------


@st.composite
def searchsorted_cases(draw):
    vectors = hnp.array_shapes(min_dims=1, max_dims=1, min_side=0, max_side=8)
    haystack = np.sort(draw(real_arrays(shape=vectors)))
    if draw(st.booleans()):  # probes drawn from the haystack hit ties and NaN exactly
        probes = draw(hnp.arrays(haystack.dtype, draw(shapes),
                                 elements=st.sampled_from(haystack.tolist() or [0]).map(
                                     lambda value: np.asarray(value).astype(haystack.dtype)[()])))
    else:
        probes = draw(real_arrays())
    return haystack, probes


@given(searchsorted_cases(), st.sampled_from(["left", "right"]))
def test_searchsorted_matches_numpy(case, side):
    haystack, probes = case
    assert_same(searchsorted(as_array(haystack), as_array(probes), side=side),
                np.searchsorted(haystack, probes, side=side))


@given(real_arrays(shape=hnp.array_shapes(min_dims=1, max_dims=1, max_side=8)), st.data())
def test_searchsorted_with_sorter_matches_numpy(haystack, data):
    probes = data.draw(arrays(haystack.dtype, shapes))
    sorter = np.argsort(haystack, kind="stable")
    side = data.draw(st.sampled_from(["left", "right"]))
    lazy_sorter = data.draw(st.booleans())
    given_sorter = as_array(sorter) if lazy_sorter else sorter
    got = searchsorted(as_array(haystack), probes, side=side, sorter=given_sorter)
    assert_same(got, np.searchsorted(haystack, probes, side=side, sorter=sorter))


@pytest.mark.parametrize("haystack, probe", [
    (np.array([1, 2], np.int8), 300),
    (np.array([1, 2], np.uint8), -1),
    (np.array([1.0, 2.0], np.float32), 1.0000001),
    (np.array([1.0, np.nan, np.nan]), np.nan),
    (np.array([-0.0, 0.0, 0.0]), -0.0),
    (np.array([False, True]), True),
    (np.array([1, 5], np.uint64), np.array([3], np.int64)),
])
def test_searchsorted_dtype_mixes(haystack, probe):
    for side in ("left", "right"):
        expected = np.searchsorted(haystack, probe, side=side)
        assert_same(searchsorted(as_array(haystack), probe, side=side), expected)


def test_searchsorted_errors():
    haystack = as_array(np.arange(3))
    with pytest.raises(ValueError, match="search side must be 'left' or 'right'"):
        searchsorted(haystack, 1, side="middle")
    with pytest.raises(ValueError, match="too deep"):
        searchsorted(as_array(np.zeros((2, 2))), 1)
    with pytest.raises(ValueError, match="too small depth"):
        searchsorted(as_array(np.array(1)), 1)
    with pytest.raises(ValueError, match="sorter.size must equal a.size"):
        searchsorted(haystack, 1, sorter=[0, 1])
    with pytest.raises(TypeError, match="sorter must only contain integers"):
        searchsorted(haystack, 1, sorter=[0.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="Sorter index out of range"):
        searchsorted(haystack, 1, sorter=[0, 1, 5])


# -- nonzero family ---------------------------------------------------------------------------


@given(st.sampled_from(ALL_DTYPES).flatmap(lambda dtype: arrays(dtype, shapes)))
def test_nonzero_family_matches_numpy(values):
    lazy = as_array(values)
    assert_same(argwhere(lazy), np.argwhere(values))
    assert_same(flatnonzero(lazy), np.flatnonzero(values))
    if values.ndim == 0:
        with pytest.raises(ValueError, match="Calling nonzero on 0d arrays is not allowed"):
            nonzero(lazy)
        return
    got = nonzero(lazy)
    expected = np.nonzero(values)
    assert len(got) == len(expected)
    for got_index, expected_index in zip(got, expected):
        assert_same(got_index, expected_index)
    for got_index, expected_index in zip(elementwise.where(lazy), expected):
        assert_same(got_index, expected_index)


def test_nonzero_results_continue_lazily():
    values = np.array([[0.0, 2.0], [3.0, 0.0]])
    rows, columns = nonzero(as_array(values) * 1)
    assert rows.is_evaluated and columns.is_evaluated
    assert_same(rows + 1, np.nonzero(values)[0] + 1)


# -- unique family and isin --------------------------------------------------------------------


@given(real_arrays(), st.booleans(), st.booleans(), st.booleans(), st.booleans())
def test_unique_matches_numpy(values, return_index, return_inverse, return_counts, equal_nan):
    options = dict(return_index=return_index, return_inverse=return_inverse,
                   return_counts=return_counts, equal_nan=equal_nan)
    got = unique(as_array(values), **options)
    expected = np.unique(values, **options)
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for got_part, expected_part in zip(got, expected):
            assert_same(got_part, expected_part)
    else:
        assert_same(got, expected)


@given(real_arrays(shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=4)), st.data())
def test_unique_along_an_axis_matches_numpy(values, data):
    axis = data.draw(st.integers(-values.ndim, values.ndim - 1))
    got = unique(as_array(values), return_index=True, return_inverse=True, return_counts=True, axis=axis)
    for got_part, expected_part in zip(got, np.unique(values, return_index=True, return_inverse=True,
                                                      return_counts=True, axis=axis)):
        assert_same(got_part, expected_part)


def _reference_unique(values, **returns):
    """The array API's reference (array-api-strict): np.unique of the flattened values, sorted,
    NaNs distinct, inverse indices in the input's shape. NumPy 2.3+'s own unique_* return
    hash order for some dtypes, which scikit-learn's sorted class labels cannot use.

    With NaNs, which NaN slot each NaN maps to is the standard's to leave open; np.unique
    decides it by its sort, stable only with return_index, so array-api-strict's unique_inverse
    and unique_all map x's NaNs differently. The reference here sorts stably always (NaNs in
    order of occurrence), as lazyarr does, so every member of the family agrees."""
    parts = np.unique(values.reshape(-1), equal_nan=False, return_index=True,
                      **{name: wanted for name, wanted in returns.items() if name != "return_index"})
    if not returns.get("return_index"):
        parts = (parts[0], *parts[2:])
    if returns.get("return_inverse"):
        at = 1 + bool(returns.get("return_index"))
        parts = (*parts[:at], parts[at].reshape(values.shape), *parts[at + 1:])
    return parts


@given(st.sampled_from(ALL_DTYPES).flatmap(lambda dtype: arrays(dtype, shapes)))
def test_array_api_unique_functions_match_the_sorted_reference(values):
    lazy = as_array(values)
    for got, expected, fields in [
        (unique_all(lazy), _reference_unique(values, return_index=True, return_inverse=True, return_counts=True),
         np.unique_all(values)._fields),
        (unique_counts(lazy), _reference_unique(values, return_counts=True), np.unique_counts(values)._fields),
        (unique_inverse(lazy), _reference_unique(values, return_inverse=True), np.unique_inverse(values)._fields),
    ]:
        assert got._fields == fields
        for got_part, expected_part in zip(got, expected):
            assert_same(got_part, expected_part)
    assert_same(unique_values(lazy), _reference_unique(values)[0])


@st.composite
def label_arrays(draw):
    """Class labels as clients pass them: few distinct values, many repeats, any order (the
    inputs on which NumPy 2.3+'s hash-ordered unique_values differs from sorted order)."""
    dtype = draw(st.sampled_from(INTEGER_DTYPES + FLOAT_DTYPES))
    low = 0 if np.dtype(dtype).kind == "u" else -3
    pool = [np.array(value).astype(dtype)[()] for value in range(low, low + 8)]
    if np.dtype(dtype).kind == "f":
        pool += [np.array(np.nan, dtype)[()], np.array(-0.0, dtype)[()]]
    return draw(hnp.arrays(dtype, shapes, elements=st.sampled_from(pool)))


@given(st.one_of(label_arrays(), st.sampled_from(ALL_DTYPES).flatmap(lambda dtype: arrays(dtype, shapes))))
def test_array_api_unique_functions_agree_with_each_other_and_the_standard(values):
    # What the standard specifies and clients rely on, checked without np.unique: every member
    # of the family returns the same values in the same (sorted, NaNs last) order, so that
    # scikit-learn's classes_ (unique_values), priors (unique_counts) and class indices
    # (unique_inverse) line up (LinearDiscriminantAnalysis gave a model 8.8x off when
    # unique_values returned NumPy 2.3+'s hash order and unique_counts sorted order).
    lazy = as_array(values)
    every = unique_all(lazy)
    family_values = [every.values, unique_counts(lazy).values, unique_inverse(lazy).values, unique_values(lazy)]
    distinct = np.asarray(every.values)
    for member in family_values:
        assert_same(member, distinct)
    flat = values.reshape(-1)
    if values.dtype.kind != "c":  # the standard leaves complex order unspecified
        numbers = distinct[~np.isnan(distinct)] if values.dtype.kind == "f" else distinct
        assert np.all(numbers[:-1] < numbers[1:]), distinct  # sorted, no repeats
        if values.dtype.kind == "f":  # NaNs are distinct values, after the numbers
            assert np.isnan(distinct[numbers.size:]).all()
            assert distinct.size - numbers.size == np.isnan(flat).sum()
    index_dtype = np.dtype(np.int64)  # the default array index data type
    for indices in (every.indices, every.inverse_indices, every.counts):
        assert np.asarray(indices).dtype == index_dtype
    inverse = np.asarray(every.inverse_indices)
    assert inverse.shape == values.shape
    assert_same(unique_inverse(lazy).inverse_indices, inverse)
    counts = np.asarray(every.counts)
    assert_same(unique_counts(lazy).counts, counts)
    assert counts.sum() == values.size and (counts >= 1).all()
    if values.size:
        same = (distinct[inverse] == values) | (np.isnan(distinct[inverse]) & np.isnan(values)
                                                if values.dtype.kind in "fc" else False)
        assert same.all()  # values[inverse_indices] reproduces x
        first = np.asarray(every.indices)
        assert ((flat[first] == distinct) | (flat[first] != flat[first])).all()  # x[indices] are the values
        assert (np.bincount(inverse.reshape(-1), minlength=distinct.size) == counts).all()
        if values.dtype.kind not in "fc":  # first occurrences (NaNs are each their own value)
            assert all(flat[: first[k]].tolist().count(distinct[k]) == 0 for k in range(distinct.size))


def test_unique_values_are_sorted_where_numpy_uses_hash_order():
    values = np.array([7, 1_000_000, 100, -3, 2, 1, 5, 7, -3])
    assert np.asarray(unique_values(as_array(values))).tolist() == [-3, 1, 2, 5, 7, 100, 1_000_000]
    assert np.asarray(unique_counts(as_array(values)).counts).tolist() == [2, 1, 1, 1, 2, 1, 1]


def test_unique_nan_and_empty():
    values = np.array([np.nan, 1.0, np.nan, -0.0, 0.0])
    assert_same(unique(as_array(values)), np.unique(values))  # NaNs collapse (equal_nan=True)
    assert np.asarray(unique_values(as_array(values))).size == np.unique_values(values).size
    empty = np.zeros((0, 3), np.int16)
    assert_same(unique(as_array(empty)), np.unique(empty))
    for got_part, expected_part in zip(unique_all(as_array(empty)), np.unique_all(empty)):
        assert_same(got_part, expected_part)
    with pytest.raises(ValueError, match="unique: axis 2 is out of bounds"):
        unique(as_array(np.zeros((2, 2))), axis=2)


@given(real_arrays(), real_arrays(shape=hnp.array_shapes(min_dims=0, max_dims=2, max_side=4)), st.booleans())
def test_isin_matches_numpy(element, test_elements, invert):
    assert_same(isin(as_array(element), test_elements, invert=invert),
                np.isin(element, test_elements, invert=invert))


@given(st.sampled_from(FLOAT_DTYPES + INTEGER_DTYPES).flatmap(lambda dtype: arrays(dtype, shapes)))
def test_isin_against_own_values(values):
    tests = values.reshape(-1)[:3]
    assert_same(isin(as_array(values), as_array(tests)), np.isin(values, tests))
