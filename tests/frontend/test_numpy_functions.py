"""NumPy functions beyond the array API against NumPy: bincount, diag, unravel_index and
friends, set operations, array_equal, put and `a.flat`, fromiter, interp, partition, packbits,
and the dtype aliases.

Exact comparisons (shape, then dtype, then values with NaNs equal): these functions move,
count or combine values with NumPy's own arithmetic, so no tolerance is needed. The hypothesis
tables run on the interpreter (it evaluates the same graphs with NumPy, without a compile per
new graph); `test_compiled_values_match_numpy` runs a fixed table on the CPU backend.
"""

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from lazyarr.frontend.tracing import TracedValueError
from tests.strategies import ALL_DTYPES, FLOAT_DTYPES, REAL_DTYPES, arrays, shapes

INTEGER_DTYPES = [dtype for dtype in REAL_DTYPES if dtype.kind in "iu"]
vectors = hnp.array_shapes(min_dims=1, max_dims=1, min_side=0, max_side=8)
matrices = hnp.array_shapes(min_dims=2, max_dims=2, min_side=0, max_side=5)


pytestmark = pytest.mark.usefixtures("interpreter_backend_for_module")


def assert_same(got, expected):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    np.testing.assert_array_equal(got, expected)


def assert_all_same(got, expected):
    assert isinstance(got, tuple) and len(got) == len(expected)
    for got_part, expected_part in zip(got, expected):
        assert_same(got_part, expected_part)


# -- bincount -----------------------------------------------------------------------------------


@given(st.sampled_from(INTEGER_DTYPES[:3] + [np.dtype(np.uint32), np.dtype(np.bool_)]), st.data())
def test_bincount_matches_numpy(dtype, data):
    values = data.draw(hnp.arrays(dtype, vectors, elements=st.integers(0, 9) if dtype != np.bool_ else None))
    minlength = data.draw(st.integers(0, 12))
    weights = data.draw(st.none() | st.sampled_from(FLOAT_DTYPES + [np.dtype(np.int32), np.dtype(np.bool_)])
                        .flatmap(lambda kind: arrays(kind, st.just(values.shape))))
    got = la.bincount(la.asarray(values), weights=None if weights is None else la.asarray(weights), minlength=minlength)
    assert_same(got, np.bincount(values, weights=weights, minlength=minlength))


def test_bincount_inputs_and_errors():
    assert_same(la.bincount([]), np.bincount([]))
    assert_same(la.bincount([3, 1], minlength=np.int64(5)), np.bincount([3, 1], minlength=np.int64(5)))
    weighted = la.bincount(la.asarray([1, 1, 0]), weights=la.asarray([0.25, 0.5, 2.0]) * 2)
    assert not weighted.is_evaluated  # lazy in the weights
    assert_same(weighted, np.bincount([1, 1, 0], weights=[0.5, 1.0, 4.0]))
    for arguments, error, message in [
        (([-1, 2],), ValueError, "bincount: 'list' argument must have no negative elements"),
        ((np.array([1.0]),), TypeError, r"Cannot cast array data from dtype\('float64'\) to dtype\('int64'\)"),
        ((np.array([1], np.uint64),), TypeError, "uint64"),
        ((np.array(3),), ValueError, "object of too small depth"),
        ((np.zeros((2, 2), int),), ValueError, "object too deep"),
    ]:
        with pytest.raises(error, match=message):
            la.bincount(*arguments)
    with pytest.raises(TypeError, match="use 0 instead of None for minlength"):
        la.bincount([1], minlength=None)
    with pytest.raises(ValueError, match="'minlength' must not be negative"):
        la.bincount([1], minlength=-1)
    with pytest.raises(ValueError, match="The weights and list don't have the same length"):
        la.bincount([1, 2], weights=[1.0])
    with pytest.raises(TypeError, match=r"dtype\('complex128'\) to dtype\('float64'\)"):
        la.bincount([1], weights=[1j])


def test_data_dependent_shapes_inside_jit_name_the_call():
    for function, name in [(la.bincount, "la.bincount"), (lambda x: la.union1d(x, [1]), "la.union1d")]:
        with pytest.raises(TracedValueError, match=f"{name} on a traced array inside la.jit.*data-dependent shape"):
            la.jit(function)(np.array([1, 2]))


# -- diag, diagflat, indices --------------------------------------------------------------------


@given(st.sampled_from(ALL_DTYPES).flatmap(lambda dtype: arrays(dtype, st.one_of(vectors, matrices))),
       st.integers(-6, 6))
def test_diag_and_diagflat_match_numpy(values, k):
    assert_same(la.diag(la.asarray(values), k), np.diag(values, k))
    assert_same(la.diagflat(la.asarray(values), k=k), np.diagflat(values, k=k))


def test_diag_errors():
    for shape in [(), (2, 2, 2)]:
        with pytest.raises(ValueError, match="diag: Input must be 1- or 2-d"):
            la.diag(la.zeros(shape))
    with pytest.raises(TypeError, match="diag: k must be an integer"):
        la.diag(la.zeros(3), 1.5)


@given(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
       st.sampled_from([int, np.int32, np.float32, np.bool_, np.uint8]), st.booleans())
def test_indices_matches_numpy(dimensions, dtype, sparse):
    if dtype is np.bool_ and max(dimensions, default=0) > 2:
        dimensions = tuple(min(size, 2) for size in dimensions)  # NumPy's bool arange stops at 2
    got = la.indices(dimensions, dtype=dtype, sparse=sparse)
    expected = np.indices(dimensions, dtype=dtype, sparse=sparse)
    if sparse:
        assert_all_same(got, expected)
    else:
        assert_same(got, expected)


# -- unravel_index, ravel_multi_index ------------------------------------------------------------


@st.composite
def position_cases(draw):
    dims = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5))
    size = int(np.prod(dims))
    flat = draw(hnp.arrays(draw(st.sampled_from([np.int64, np.int16, np.uint8])),
                           hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=4),
                           elements=st.integers(0, min(size - 1, 255))))
    return dims, flat


@given(position_cases(), st.sampled_from(["C", "F"]), st.booleans())
def test_unravel_and_ravel_match_numpy(case, order, lazy):
    dims, flat = case
    expected = np.unravel_index(flat, dims, order=order)
    given_flat = la.asarray(flat) if lazy else flat
    assert_all_same(la.unravel_index(given_flat, dims, order=order), tuple(np.asarray(part) for part in expected))
    coordinates = tuple(la.asarray(part) for part in expected) if lazy else expected
    assert_same(la.ravel_multi_index(coordinates, dims, order=order),
                np.asarray(np.ravel_multi_index(expected, dims, order=order)))


@given(st.lists(st.integers(-12, 12), min_size=1, max_size=6), st.sampled_from(["wrap", "clip"]), st.booleans())
def test_ravel_multi_index_modes_match_numpy(rows, mode, lazy):
    columns = list(reversed(rows))
    expected = np.ravel_multi_index((rows, columns), (3, 4), mode=(mode, "clip"))
    given_rows = la.asarray(rows) if lazy else rows
    assert_same(la.ravel_multi_index((given_rows, columns), (3, 4), mode=(mode, "clip")), expected)


def test_positions_are_checked():
    assert la.unravel_index(0, ()) == () and la.unravel_index(la.asarray(0), ()) == ()
    with pytest.raises(ValueError, match="unravel_index: index 6 is out of bounds for array with size 6"):
        la.unravel_index(6, (2, 3))
    with pytest.raises(TypeError, match="only int indices permitted"):
        la.unravel_index(la.asarray([1.0]), (2, 3))
    with pytest.raises(ValueError, match="only 'C' or 'F' order is permitted"):
        la.unravel_index(1, (2, 3), order="A")
    with pytest.raises(ValueError, match="shape must be non-negative"):
        la.unravel_index(1, (2, -3))
    with pytest.raises(ValueError, match="ravel_multi_index: invalid entry in coordinates array"):
        la.ravel_multi_index(([1, 2], [0, 1]), (2, 3))
    with pytest.raises(ValueError, match="parameter multi_index must be a sequence of length 3"):
        la.ravel_multi_index(([1], [0]), (2, 3, 4))
    with pytest.raises(ValueError, match="clipmode must be one of"):
        la.ravel_multi_index(([1], [0]), (2, 3), mode="bogus")
    with pytest.raises(ValueError, match="cannot unravel if shape has zero entries"):
        la.ravel_multi_index((la.asarray([0]), [0]), (2, 0))
    # Lazy positions stay lazy; an out-of-range one raises IndexError when evaluated.
    for bad in ([7], [-1]):
        rows, columns = la.unravel_index(la.asarray(bad), (2, 3))
        with pytest.raises(IndexError, match="out of bounds"):
            rows.eval()
    with pytest.raises(IndexError, match="out of bounds"):
        la.ravel_multi_index((la.asarray([2]), [0]), (2, 3)).eval()


def test_unravel_index_of_argmax_inside_jit():
    values = np.array([[1.0, 7.0, 3.0], [9.0, 2.0, 0.0]])

    @la.jit
    def peak(x):
        return la.unravel_index(la.argmax(x), x.shape)

    assert [int(part) for part in peak(values)] == [1, 0]


# -- set operations, array_equal ----------------------------------------------------------------


@st.composite
def set_operands(draw):
    dtype = draw(st.sampled_from([np.dtype(np.int8), np.dtype(np.int64), np.dtype(np.float32), np.dtype(np.float64)]))
    pool = [np.array(value).astype(dtype)[()] for value in range(-3, 5)]
    if dtype.kind == "f":
        pool.append(np.array(np.nan, dtype)[()])
    operand = hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=5),
                         elements=st.sampled_from(pool))
    return draw(operand), draw(operand)


@given(set_operands(), st.booleans())
def test_set_operations_match_numpy(operands, lazy_second):
    first, second = operands
    other = la.asarray(second) if lazy_second else second
    lazy = la.asarray(first)
    assert_same(la.union1d(lazy, other), np.union1d(first, second))
    assert_same(la.setdiff1d(lazy, other), np.setdiff1d(first, second))
    assert_same(la.setxor1d(lazy, other), np.setxor1d(first, second))
    assert_same(la.intersect1d(lazy, other), np.intersect1d(first, second))
    assert_all_same(la.intersect1d(lazy, other, return_indices=True),
                    np.intersect1d(first, second, return_indices=True))
    distinct_first, distinct_second = np.unique(first), np.unique(second)
    assert_same(la.setdiff1d(la.asarray(distinct_first), distinct_second, assume_unique=True),
                np.setdiff1d(distinct_first, distinct_second, assume_unique=True))


@given(st.sampled_from(ALL_DTYPES).flatmap(lambda dtype: arrays(dtype, shapes)), st.data())
def test_array_equal_and_equiv_match_numpy(values, data):
    other = data.draw(st.sampled_from(["same", "changed", "row", "other_shape"]))
    if other == "same":
        second = values.copy()
    elif other == "changed":
        second = data.draw(arrays(values.dtype, st.just(values.shape)))
    elif other == "row":
        second = values[..., :1] if values.ndim else values
    else:
        second = data.draw(arrays(values.dtype, shapes))
    for equal_nan in (False, True):
        assert la.array_equal(la.asarray(values), second, equal_nan=equal_nan) is np.array_equal(
            values, second, equal_nan=equal_nan)
    assert la.array_equiv(la.asarray(values), la.asarray(second)) is np.array_equiv(values, second)


def test_array_equal_of_what_cannot_be_an_array_is_false():
    assert la.array_equal(la.asarray([1, 2]), ["a", "b"]) is False
    assert la.array_equiv(la.asarray([1, 2]), [1, 2, 3]) is False


# -- put and a.flat -------------------------------------------------------------------------------


@st.composite
def put_cases(draw):
    values = draw(arrays(draw(st.sampled_from(FLOAT_DTYPES + INTEGER_DTYPES[:4])),
                         hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4)))
    positions = draw(st.lists(st.integers(-2 * values.size, 2 * values.size), min_size=0, max_size=6))
    updates = draw(st.lists(st.integers(-100, 100), min_size=0, max_size=4))
    return values, positions, updates


@given(put_cases(), st.sampled_from(["wrap", "clip", "raise"]), st.booleans())
def test_put_matches_numpy(case, mode, lazy_positions):
    values, positions, updates = case
    if mode == "raise":
        positions = [position for position in positions if -values.size <= position < values.size]
    expected = values.copy()
    np.put(expected, positions, updates, mode=mode)
    array = la.asarray(values)
    la.put(array, la.asarray(np.array(positions, np.int64)) if lazy_positions else positions, updates, mode=mode)
    assert_same(array, expected)


@given(put_cases())
def test_flat_reads_and_writes_match_numpy(case):
    values, positions, updates = case
    size = values.size
    positions = [position % size for position in positions]
    array = la.asarray(values)
    for key in [0, -1, slice(1, None, 2), slice(None, None, -1), Ellipsis, np.array(positions, np.int64),
                np.arange(size) % 2 == 0]:
        assert_same(array.flat[key], values.flat[key])
    assert len(array.flat) == size
    assert_same(np.array([element.numpy() for element in array.flat], values.dtype), values.reshape(-1))
    expected = values.copy()
    if updates:
        expected.flat[positions] = updates
        array.flat[positions] = updates
    expected.flat[::2] = 3
    array.flat[::2] = 3
    expected.flat[size - 1] = 1
    array.flat[la.asarray(size - 1)] = la.asarray(1)
    assert_same(array, expected)


def test_flat_and_put_write_through_views_and_references():
    base = la.asarray(np.zeros((2, 3)))
    alias = base
    row = base[1]
    row.flat[1] = 5.0
    la.put(base, [0], [7.0])
    assert_same(alias, np.array([[7.0, 0, 0], [0, 5.0, 0]]))
    assert_same(row, np.array([0, 5.0, 0]))
    base.flat[[0, 2]] = la.asarray([1.0, 2.0]) * 3
    assert not base.is_evaluated  # a write records a scatter, lazily
    assert_same(base.flat[:3], np.array([3.0, 0.0, 6.0]))


def test_flat_and_put_errors():
    array = la.zeros((2, 3))
    with pytest.raises(IndexError, match="flat: index 9 is out of bounds for size 6"):
        array.flat[9] = 1
    with pytest.raises(ValueError, match="Error setting single item of array"):
        array.flat[1] = [1, 2]
    with pytest.raises(IndexError, match="too many indices for flat iterator"):
        array.flat[0, 1]
    with pytest.raises(IndexError, match="boolean index did not match indexed flat iterator"):
        array.flat[np.array([True, False])]
    with pytest.raises(IndexError, match="only integers, slices"):
        array.flat[1.0]
    with pytest.raises(IndexError, match="put: index 6 is out of bounds for axis 0 with size 6"):
        la.put(array, [6], [1])
    with pytest.raises(IndexError, match="put: cannot replace elements of an empty array"):
        la.put(la.zeros(0), [0], [1])
    with pytest.raises(ValueError, match="put: clipmode must be one of"):
        la.put(array, [0], [1], mode="bogus")
    with pytest.raises(TypeError, match="put: a must be a lazyarr array"):
        la.put([1, 2], [0], [1])
    with pytest.raises(OverflowError, match="put: Python integer 300 out of bounds for int8"):
        la.put(la.zeros(2, dtype=la.int8), [0], [300])
    lazy_out_of_range = la.zeros(3)
    la.put(lazy_out_of_range, la.asarray([5]), [1.0])
    with pytest.raises(IndexError, match="out of bounds"):
        lazy_out_of_range.eval()


# -- fromiter ----------------------------------------------------------------------------------


@given(st.lists(st.integers(-100, 100), max_size=6), st.sampled_from([np.int32, np.float64, np.uint8, np.bool_]),
       st.integers(-1, 6))
def test_fromiter_matches_numpy(items, dtype, count):
    try:
        expected = np.fromiter(iter(items), dtype=dtype, count=count)
    except (ValueError, OverflowError) as error:  # too short, or -1 into uint8
        with pytest.raises(type(error), match="fromiter: "):
            la.fromiter(iter(items), dtype=dtype, count=count)
        return
    assert_same(la.fromiter(iter(items), dtype=dtype, count=count), expected)


def test_fromiter_refuses_unsupported_dtypes():
    with pytest.raises(TypeError, match="fromiter: dtype"):
        la.fromiter(iter(["a"]), dtype="U1")


# -- interp --------------------------------------------------------------------------------------


@st.composite
def interp_cases(draw):
    count = draw(st.integers(1, 6))
    finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
    points = np.sort(np.array(draw(st.lists(finite, min_size=count, max_size=count))))
    complex_values = draw(st.booleans())
    value_elements = st.one_of(finite, st.sampled_from([np.inf, -np.inf, 0.0, -0.0]))
    values = np.array(draw(st.lists(value_elements, min_size=count, max_size=count)))
    if complex_values:
        values = values + 1j * np.array(draw(st.lists(finite, min_size=count, max_size=count)))
    probe_dtype = draw(st.sampled_from(FLOAT_DTYPES + [np.dtype(np.int32)]))
    if probe_dtype.kind == "f":
        probe_elements = finite | st.sampled_from(points.tolist() + [np.nan, np.inf, -np.inf, -0.0])
    else:
        probe_elements = st.integers(-1000, 1000) | st.sampled_from(np.round(points).tolist())
    probes = draw(hnp.arrays(probe_dtype, hnp.array_shapes(min_dims=0, max_dims=2, max_side=5),
                             elements=probe_elements))
    return probes, points, values


@given(interp_cases(), st.sampled_from([None, -7.5]), st.sampled_from([None, 3]))
def test_interp_matches_numpy(case, left, right):
    probes, points, values = case
    got = la.interp(la.asarray(probes), la.asarray(points), la.asarray(values), left=left, right=right)
    assert_same(got, np.interp(probes, points, values, left=left, right=right))


@given(interp_cases(), st.sampled_from([360.0, -2.5, 7]))
def test_interp_periodic_matches_numpy(case, period):
    probes, points, values = case
    # NumPy orders the points with an unstable argsort; distinct points make the order unique.
    assume(np.unique(np.mod(points, abs(period))).size == points.size)
    with np.errstate(invalid="ignore"):
        expected = np.interp(probes, points, values, period=period)
    assert_same(la.interp(la.asarray(probes), points, values, period=period), expected)


def test_interp_errors():
    with pytest.raises(ValueError, match="interp: array of sample points is empty"):
        la.interp([1.0], [], [])
    with pytest.raises(ValueError, match="interp: fp and xp are not of the same length"):
        la.interp([1.0], [1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="object too deep"):
        la.interp([1.0], [[1.0, 2.0]], [[1.0, 2.0]])
    with pytest.raises(ValueError, match="interp: period must be a non-zero value"):
        la.interp([1.0], [1.0, 2.0], [1.0, 2.0], period=0)
    with pytest.raises(ValueError, match="interp: array of sample points is empty"):
        la.interp(la.zeros((0, 2)), [], [])  # as NumPy, even for no x


# -- partition, argpartition ------------------------------------------------------------------------


def assert_partitioned(result, values, kth, axis):
    """NumPy's contract: at each kth, the element a sort puts there; nothing after it orders
    before it and nothing before it orders after it (NaN orders last)."""
    ordered = np.sort(values, axis=axis)
    result = np.moveaxis(result, axis, -1)
    ordered = np.moveaxis(ordered, axis, -1)
    rank = np.argsort(np.argsort(result, axis=-1, kind="stable"), axis=-1, kind="stable")
    for position in np.atleast_1d(kth):
        np.testing.assert_array_equal(result[..., position], ordered[..., position])
        pivot = rank[..., position:position + 1]
        assert (rank[..., :position] < pivot).all() and (rank[..., position + 1:] > pivot).all()


@given(st.sampled_from(REAL_DTYPES).flatmap(
    lambda dtype: arrays(dtype, hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5))), st.data())
def test_partition_and_argpartition_keep_numpy_contract(values, data):
    axis = data.draw(st.integers(-values.ndim, values.ndim - 1))
    length = values.shape[axis]
    kth = data.draw(st.integers(-length, length - 1) | st.lists(st.integers(0, length - 1), min_size=1, max_size=3))
    got = np.asarray(la.partition(la.asarray(values), kth, axis=axis))
    assert got.shape == values.shape and got.dtype == values.dtype
    positive = np.mod(kth, length)
    assert_partitioned(got, values, positive, axis % values.ndim)
    order = np.asarray(la.argpartition(la.asarray(values), kth, axis=axis))
    assert order.dtype == np.int64
    np.testing.assert_array_equal(np.sort(order, axis=axis), np.broadcast_to(
        np.expand_dims(np.arange(length), tuple(a for a in range(values.ndim) if a != axis % values.ndim)),
        values.shape))
    assert_partitioned(np.take_along_axis(values, order, axis=axis), values, positive, axis % values.ndim)
    flat = np.asarray(la.partition(la.asarray(values), 0, axis=None))
    assert_partitioned(flat, values.reshape(-1), 0, 0)


def test_partition_errors():
    values = la.asarray([3, 1, 2, 0])
    with pytest.raises(ValueError, match=r"partition: kth\(=4\) out of bounds \(4\)"):
        la.partition(values, 4)
    with pytest.raises(ValueError, match=r"argpartition: kth\(=-1\) out of bounds \(4\)"):
        la.argpartition(values, -5)
    with pytest.raises(TypeError, match="Partition index must be integer"):
        la.partition(values, 1.0)
    with pytest.raises(ValueError, match="Booleans unacceptable as partition index"):
        la.partition(values, True)
    with pytest.raises(ValueError, match="select kind must be 'introselect'"):
        la.partition(values, 1, kind="quicksort")
    with pytest.raises(np.exceptions.AxisError):
        la.partition(la.asarray(3), 0)
    assert_same(la.argpartition(la.asarray(3), 0), np.argpartition(np.array(3), 0))
    assert_same(la.partition(la.zeros(0), 0), np.partition(np.zeros(0), 0))


# -- packbits, unpackbits ------------------------------------------------------------------------


@given(st.sampled_from(INTEGER_DTYPES + [np.dtype(np.bool_)]).flatmap(lambda dtype: arrays(dtype, shapes)),
       st.data(), st.sampled_from(["big", "little"]))
def test_packbits_and_unpackbits_match_numpy(values, data, bitorder):
    axis = data.draw(st.none() | st.integers(-values.ndim, values.ndim - 1)) if values.ndim else None
    packed = np.packbits(values, axis=axis, bitorder=bitorder)
    assert_same(la.packbits(la.asarray(values), axis=axis, bitorder=bitorder), packed)
    length = packed.size if axis is None else packed.shape[axis]
    count = data.draw(st.none() | st.integers(-8 * length, 8 * length + 5))
    expected = np.unpackbits(packed, axis=axis, count=count, bitorder=bitorder)
    if packed.size == 0:
        expected[...] = 0  # NumPy leaves the padding of an empty input uninitialized; it is zeros
    assert_same(la.unpackbits(la.asarray(packed), axis=axis, count=count, bitorder=bitorder), expected)


def test_bit_packing_errors():
    with pytest.raises(TypeError, match="packbits: Expected an input array of integer or boolean data type"):
        la.packbits(la.asarray([1.0]))
    with pytest.raises(TypeError, match="unpackbits: Expected an input array of unsigned byte data type"):
        la.unpackbits(la.asarray(np.array([1], np.int8)))
    with pytest.raises(ValueError, match="'order' must be either 'little' or 'big'"):
        la.packbits(la.asarray([1]), bitorder="middle")
    with pytest.raises(ValueError, match="unpackbits: -count larger than number of elements"):
        la.unpackbits(la.asarray(np.array([5], np.uint8)), count=-9)


# -- dtype aliases -----------------------------------------------------------------------------


ALIASES = ["byte", "ubyte", "short", "ushort", "intc", "uintc", "int_", "uint", "long", "ulong", "longlong",
           "ulonglong", "intp", "uintp", "half", "single", "double", "csingle", "cdouble"]


def test_dtype_aliases_are_numpys_sizes_as_lazyarr_dtypes():
    for name in ALIASES:
        alias = getattr(la, name)
        assert alias == np.dtype(getattr(np, name)), name
        assert any(alias is dtype for dtype in la.dtypes.ALL), name  # the canonical lazyarr dtype
        assert la.asarray([1], dtype=alias).dtype == alias
    for removed in ["float_", "complex_", "longfloat", "cfloat", "singlecomplex"]:
        assert not hasattr(np, removed) and not hasattr(la, removed)


# -- the compiled code ---------------------------------------------------------------------------


def test_compiled_values_match_numpy():
    points, values = np.array([0.0, 1.0, 1.0, 2.5, 4.0]), np.array([1.0, -2.0, 3.0, np.inf, 0.5])
    probes = np.array([-1.0, 0.0, 0.3, 1.0, 1.7, 2.5, 3.9, 4.0, 5.0, np.nan, -0.0])
    bits = np.array([[1, 0, 3, 0, 0, 9, 1, 0, 1], [0, 0, 0, 1, 1, 1, 1, 1, 1]], np.int16)
    la.set_backend("cpu")
    try:
        expected = np.interp(probes, points, values, right=-1.0)
        assert_same(la.interp(la.asarray(probes), points, values, right=-1.0), expected)
        assert_same(la.interp(la.asarray(probes), points, values + 1j), np.interp(probes, points, values + 1j))
        assert_same(la.bincount(la.asarray([2, 0, 2, 5]), weights=la.asarray([0.1, 0.2, 0.3, 0.4]) * 3),
                    np.bincount([2, 0, 2, 5], weights=np.array([0.1, 0.2, 0.3, 0.4]) * 3))
        packed = np.packbits(bits, axis=1, bitorder="little")
        assert_same(la.packbits(la.asarray(bits), axis=1, bitorder="little"), packed)
        assert_same(la.unpackbits(la.asarray(packed), axis=1, count=11), np.unpackbits(packed, axis=1, count=11))
        assert_same(la.diag(la.asarray([1.5, 2.5]), -1), np.diag([1.5, 2.5], -1))
        assert_all_same(la.unravel_index(la.asarray([5, 0, 3]), (2, 3), order="F"),
                        np.unravel_index([5, 0, 3], (2, 3), order="F"))
        array = la.asarray(np.arange(6.0).reshape(2, 3))
        array.flat[[4, 0, 4]] = [7.0, 8.0, 9.0]
        assert_same(array, np.array([[8.0, 1, 2], [3, 9.0, 5]]))
        assert la.array_equal(la.asarray([1.0, np.nan]) * 1, [1.0, np.nan], equal_nan=True)
    finally:
        la.set_backend("interpreter")


def test_docstring_examples():
    import doctest
    import importlib

    from lazyarr.frontend import numpy_functions

    modules = {importlib.import_module(f"lazyarr.frontend.{name}") for name in (
        "array_equality", "bit_packing", "counting", "flat_indexing", "from_iterable", "index_arithmetic",
        "interpolation", "matrix_diagonals", "numpy_io", "numpy_manipulation", "numpy_math", "numpy_statistics",
        "partitioning",
        "quantiles", "set_operations")}
    assert set(numpy_functions.__all__) == {name for module in modules for name in module.__all__}
    for module in modules:
        assert doctest.testmod(module).failed == 0, module.__name__
