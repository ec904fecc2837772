"""NumPy's manipulation functions beyond the array API against NumPy: append, insert, delete,
flips and rotations, splits, block, resize, trim_zeros, select, choose, extract, the in-place
writers (place, putmask, copyto, fill_diagonal), the triangle and diagonal index helpers,
apply_along_axis and the small utilities (ndim, shape, size, copy, asanyarray,
ascontiguousarray).

Exact comparisons (shape, then dtype, then values with NaNs equal): these functions move,
pick or convert values, so no tolerance is needed. The hypothesis tables run on the
interpreter (it evaluates the same graphs with NumPy, without a compile per new graph);
`test_compiled_values_match_numpy` runs a fixed table on the CPU backend.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from lazyarr.frontend.tracing import TracedValueError
from tests.strategies import ALL_DTYPES, arrays

pytestmark = pytest.mark.usefixtures("interpreter_backend_for_module")

SOME_DTYPES = [np.dtype(name) for name in ("bool", "int8", "uint16", "int64", "float32", "float64", "complex64")]
dtype_strategy = st.sampled_from(ALL_DTYPES)
nonscalar_shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4)
any_shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


def assert_same(got, expected):
    """Same shape, then dtype, then values (NaNs equal)."""
    assert isinstance(got, la.Array), type(got)
    expected = np.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    np.testing.assert_array_equal(np.asarray(got), expected)


def assert_all_same(got, expected):
    assert type(got) is type(expected) and len(got) == len(expected), (type(got), type(expected))
    for got_part, expected_part in zip(got, expected):
        assert_same(got_part, expected_part)


def lazy(values: np.ndarray) -> la.Array:
    """A lazy (not evaluated) array holding `values`: results read it through a graph."""
    array = la.asarray(values)
    return la.where(True, array, array)


def same_error(call_lazy, call_numpy):
    """Both raise, with the same exception type (lazyarr's message names the function)."""
    with pytest.raises(Exception) as expected:
        call_numpy()
    with pytest.raises(type(expected.value)):
        call_lazy()


# -- append, insert, delete ----------------------------------------------------------------------
@given(dtype_strategy.flatmap(lambda dtype: arrays(dtype, nonscalar_shapes)), st.data())
def test_append_matches_numpy(values, data):
    axis = data.draw(st.none() | st.integers(-values.ndim, values.ndim - 1))
    shape = list(values.shape)
    if axis is not None:
        shape[axis] = data.draw(st.integers(0, 3))
    extra = data.draw(arrays(data.draw(st.sampled_from(SOME_DTYPES)), st.just(tuple(shape))))
    assert_same(la.append(la.asarray(values), extra, axis=axis), np.append(values, extra, axis=axis))


@st.composite
def insert_cases(draw):
    values = draw(arrays(draw(st.sampled_from(SOME_DTYPES)), nonscalar_shapes))
    axis = draw(st.none() | st.integers(-values.ndim, values.ndim - 1))
    size = values.size if axis is None else values.shape[axis]
    kind = draw(st.sampled_from(["int", "one", "list", "slice", "mask"]))
    if kind == "int":
        obj = draw(st.integers(-size, size))
    elif kind == "one":
        obj = [draw(st.integers(-size, size))]
    elif kind == "list":
        obj = draw(st.lists(st.integers(0, size) | st.integers(-size, -1) if size else st.just(0), max_size=4))
    elif kind == "slice":
        obj = slice(draw(st.integers(-size - 1, size + 1)), draw(st.none() | st.integers(-size - 1, size + 1)),
                    draw(st.sampled_from([None, 1, 2, -1])))
    else:
        obj = np.array(draw(st.lists(st.booleans(), min_size=size, max_size=size)), dtype=bool)
    inserted = draw(st.integers(-50, 50) | st.floats(-5, 5, allow_nan=False) | st.lists(st.integers(0, 9), min_size=1,
                                                                                        max_size=1))
    return values, obj, inserted, axis


@given(insert_cases(), st.booleans())
def test_insert_matches_numpy(case, lazy_obj):
    values, obj, inserted, axis = case
    if values.dtype == bool or (values.dtype.kind in "iu" and np.ndim(inserted) == 0 and inserted < 0
                                and values.dtype.kind == "u"):
        inserted = 1
    expected = np.insert(values, obj, inserted, axis=axis)
    positions = obj
    if lazy_obj and not isinstance(obj, slice) and np.asarray(obj).size and np.asarray(obj).dtype != bool:
        positions = la.asarray(np.asarray(obj, dtype=np.int64))
    got = la.insert(lazy(values), positions, inserted, axis=axis)
    assert not got.is_evaluated
    assert_same(got, expected)


@st.composite
def delete_cases(draw):
    values = draw(arrays(draw(st.sampled_from(SOME_DTYPES)), nonscalar_shapes))
    axis = draw(st.none() | st.integers(-values.ndim, values.ndim - 1))
    size = values.size if axis is None else values.shape[axis]
    kind = draw(st.sampled_from(["int", "list", "slice", "mask"] if size else ["list", "slice", "mask"]))
    if kind == "int":
        obj = draw(st.integers(-size, size - 1))
    elif kind == "list":
        obj = draw(st.lists(st.integers(-size, size - 1), max_size=5)) if size else []
    elif kind == "slice":
        bound = st.none() | st.integers(-size - 1, size + 1)
        obj = slice(draw(bound), draw(bound), draw(st.sampled_from([None, 1, 3, -1, -2])))
    else:
        obj = np.array(draw(st.lists(st.booleans(), min_size=size, max_size=size)), dtype=bool)
    return values, obj, axis


@given(delete_cases(), st.booleans())
def test_delete_matches_numpy(case, lazy_obj):
    values, obj, axis = case
    expected = np.delete(values, obj, axis=axis)
    positions = obj
    if lazy_obj and not isinstance(obj, slice):
        positions = la.asarray(np.asarray(obj, dtype=None if np.asarray(obj).size else np.int64))
    got = la.delete(lazy(values), positions, axis=axis)
    if not lazy_obj or np.ndim(obj) == 0:  # static positions, or one lazy position: no evaluation
        assert not got.is_evaluated
    assert_same(got, expected)


def test_insert_and_delete_errors():
    x = la.asarray([1, 2, 3])
    for obj, error, message in [(5, IndexError, "insert: index 5 is out of bounds for axis 0 with size 3"),
                                ([[1]], ValueError, "insert: index array argument obj to insert must be one dim"),
                                (np.array([[True]]), ValueError, "insert: boolean array argument obj"),
                                (1.5, TypeError, "insert: slice indices must be integers")]:
        with pytest.raises(error, match=message):
            la.insert(x, obj, 9)
    with pytest.raises(ValueError, match=r"insert: shape mismatch: value array of shape \(3,\)"):
        la.insert(x, [0, 1], [7, 8, 9])
    with pytest.raises(OverflowError, match="insert: Python integer 300 out of bounds for int8"):
        la.insert(la.asarray(np.int8([1])), 0, 300)
    with pytest.raises(np.exceptions.AxisError, match="insert: axis 2 is out of bounds"):
        la.insert(la.zeros((2, 2)), 0, 1, axis=2)
    with pytest.raises(IndexError, match="delete: index 1 is out of bounds for axis 1 with size 1"):
        la.delete(la.zeros((2, 1)), 1, axis=1)
    with pytest.raises(ValueError, match="delete: boolean array argument obj to delete must be one dimensional"):
        la.delete(x, la.asarray([True, False]))
    with pytest.raises(IndexError, match="delete: arrays used as indices must be of integer"):
        la.delete(x, [1.0])
    with pytest.raises(ValueError, match="append: concatenate: all the input arrays must have same number"):
        la.append(la.zeros((2, 2)), [1, 2], axis=0)
    # Lazy out-of-range positions raise IndexError when evaluated (their values are data).
    for function, position in [(la.insert, 4), (la.insert, -4), (la.delete, 3), (la.delete, -4)]:
        result = function(x, la.asarray(position), *([9] if function is la.insert else []))
        with pytest.raises(IndexError, match="out of bounds"):
            result.eval()


def test_data_dependent_calls_inside_jit_name_the_call():
    for function, name in [(lambda x: la.delete(x, x > 1), "la.delete"), (lambda x: la.extract(x > 1, x), "la.extract"),
                           (lambda x: la.trim_zeros(x), "la.trim_zeros")]:
        with pytest.raises(TracedValueError, match=f"{name} on a traced array inside la.jit.*data-dependent shape"):
            la.jit(function)(np.array([0, 1, 2]))
    # Lazy positions whose count is static stay lazy under jit.
    inserted = la.jit(lambda x: la.insert(x, la.argmax(x), -1))(np.array([1, 5, 2]))
    assert_same(inserted, np.array([1, -1, 5, 2]))
    deleted = la.jit(lambda x: la.delete(x, la.argmax(x)))(np.array([1, 5, 2]))
    assert_same(deleted, np.array([1, 2]))


# -- flips, rotations, rollaxis, splits, block, resize, trim_zeros ---------------------------------
@given(dtype_strategy.flatmap(lambda dtype: arrays(dtype, hnp.array_shapes(min_dims=2, max_dims=4, min_side=0,
                                                                               max_side=3))), st.data())
def test_flips_rotations_and_rollaxis_match_numpy(values, data):
    array = lazy(values)
    assert_same(la.fliplr(array), np.fliplr(values))
    assert_same(la.flipud(array), np.flipud(values))
    k = data.draw(st.integers(-5, 5))
    first, second = data.draw(st.permutations(range(values.ndim)))[:2]
    axes = (first - values.ndim if data.draw(st.booleans()) else first, second)
    assert_same(la.rot90(array, k, axes), np.rot90(values, k, axes))
    axis = data.draw(st.integers(-values.ndim, values.ndim - 1))
    start = data.draw(st.integers(-values.ndim, values.ndim))
    assert_same(la.rollaxis(array, axis, start), np.rollaxis(values, axis, start))


@given(dtype_strategy.flatmap(lambda dtype: arrays(dtype, hnp.array_shapes(min_dims=1, max_dims=4, min_side=0,
                                                                               max_side=4))), st.data())
def test_splits_match_numpy(values, data):
    axis_size = {"hsplit": values.shape[1 if values.ndim > 1 else 0], "vsplit": values.shape[0],
                 "dsplit": values.shape[2] if values.ndim > 2 else 0}
    for name, minimum in [("hsplit", 1), ("vsplit", 2), ("dsplit", 3)]:
        if values.ndim < minimum:
            same_error(lambda: getattr(la, name)(la.asarray(values), 1), lambda: getattr(np, name)(values, 1))
            continue
        size = axis_size[name]
        sections = data.draw(st.sampled_from([divisor for divisor in range(1, 5) if size % divisor == 0]))
        points = sorted(data.draw(st.lists(st.integers(-1, size + 1), max_size=3)))
        for argument in (sections, points):
            expected = getattr(np, name)(values, argument)
            assert_all_same(getattr(la, name)(la.asarray(values), argument), expected)


@given(st.sampled_from(SOME_DTYPES), st.data())
def test_block_matches_numpy(dtype, data):
    rows, columns = data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=3)), data.draw(
        st.lists(st.integers(0, 3), min_size=1, max_size=3))
    extra = data.draw(st.sampled_from([(), (2,)]))  # blocks of 2-d, or 3-d with a leading axis
    blocks = [[data.draw(arrays(dtype, st.just(extra + (height, width)))) for width in columns] for height in rows]
    if not extra and rows[0] == 1 and data.draw(st.booleans()):
        blocks[0][0] = blocks[0][0].reshape(-1)  # a 1-d block gets a leading unit axis
    lazy_blocks = [[lazy(block) if data.draw(st.booleans()) else block for block in row] for row in blocks]
    assert_same(la.block(lazy_blocks), np.block(blocks))
    assert_same(la.block(lazy_blocks[0]), np.block(blocks[0]))


def test_block_scalars_and_errors():
    assert_same(la.block(5), np.block(5))
    assert_same(la.block([np.int8(1), 2]), np.block([np.int8(1), 2]))
    for arrays_, error, message in [
        ([], ValueError, "block: List at arrays cannot be empty"),
        ([[1], []], ValueError, r"block: List at arrays\[1\] cannot be empty"),
        ([[1, 2], 3], ValueError, r"block: List depths are mismatched.*arrays\[1\]"),
        ((1, 2), TypeError, "block: arrays is a tuple"),
        ([[1, 2], [3, (4,)]], TypeError, r"block: arrays\[1\]\[1\] is a tuple"),
        ([[1, 2], [3]], ValueError, "block: concatenate: all the input array dimensions"),
    ]:
        with pytest.raises(error, match=message):
            la.block(arrays_)


@given(dtype_strategy.flatmap(lambda dtype: arrays(dtype, any_shapes)),
       hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4) | st.integers(0, 7))
def test_resize_matches_numpy(values, new_shape):
    assert_same(la.resize(lazy(values), new_shape), np.resize(values, new_shape))


@given(st.sampled_from(SOME_DTYPES), any_shapes, st.data())
def test_trim_zeros_matches_numpy(dtype, shape, data):
    values = data.draw(hnp.arrays(dtype, shape, elements=st.sampled_from([0, 0, 1]).map(lambda v: np.array(v, dtype))))
    trim = data.draw(st.sampled_from(["fb", "f", "b", "BF"]))
    axis = data.draw(st.none() | st.integers(-values.ndim, values.ndim - 1)) if values.ndim else None
    assert_same(la.trim_zeros(lazy(values), trim, axis=axis), np.trim_zeros(values, trim, axis=axis))
    if values.ndim == 1:
        assert la.trim_zeros(values.tolist(), trim) == np.trim_zeros(values.tolist(), trim)


def test_rearranging_errors():
    for call, error, message in [
        (lambda: la.fliplr(la.zeros(3)), ValueError, "fliplr: Input must be >= 2-d"),
        (lambda: la.flipud(la.zeros(())), ValueError, "flipud: Input must be >= 1-d"),
        (lambda: la.rot90(la.zeros((2, 2)), axes=(0,)), ValueError, "rot90: len.axes. must be 2"),
        (lambda: la.rot90(la.zeros(3)), ValueError, "rot90: Axes must be different"),
        (lambda: la.rot90(la.zeros((2, 2, 2)), axes=(0, 3)), ValueError, "rot90: Axes must be different"),
        (lambda: la.rot90(la.zeros((2, 2, 2)), axes=(0, 4)), ValueError, "rot90: Axes=.* out of range"),
        (lambda: la.rollaxis(la.zeros((2, 2)), 0, 3), np.exceptions.AxisError, "rollaxis: 'start' arg requires"),
        (lambda: la.hsplit(la.zeros(()), 1), ValueError, "hsplit only works on arrays of 1 or more"),
        (lambda: la.vsplit(la.zeros(3), 1), ValueError, "vsplit only works on arrays of 2 or more"),
        (lambda: la.dsplit(la.zeros((2, 2)), 1), ValueError, "dsplit only works on arrays of 3 or more"),
        (lambda: la.resize(la.zeros(3), (2, -1)), ValueError, "resize: all elements of `new_shape` must be non-neg"),
        (lambda: la.trim_zeros(la.zeros(3), "x"), ValueError, "trim_zeros: unexpected character"),
    ]:
        with pytest.raises(error, match=message):
            call()
    with pytest.warns(DeprecationWarning, match="`row_stack` alias is deprecated"):
        assert_same(la.row_stack([[1, 2], la.asarray([3, 4])]), np.vstack([[1, 2], [3, 4]]))


def test_views_write_through_like_numpy():
    """flips, rotations, rollaxis and splits are views, as NumPy's: writes reach the input."""
    base = la.asarray(np.arange(6).reshape(2, 3))
    expected = np.arange(6).reshape(2, 3)
    for lazy_view, numpy_view in [(la.fliplr, np.fliplr), (la.flipud, np.flipud), (la.rot90, np.rot90),
                                  (lambda m: la.rollaxis(m, 1), lambda m: np.rollaxis(m, 1)),
                                  (lambda m: la.hsplit(m, 3)[1], lambda m: np.hsplit(m, 3)[1])]:
        view = lazy_view(base)
        view[0] = 100
        numpy_view(expected)[0] = 100
        assert_same(base, expected)


# -- select, choose, extract ------------------------------------------------------------------
@given(st.data())
def test_select_matches_numpy(data):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    count = data.draw(st.integers(1, 3))
    conditions = [data.draw(hnp.arrays(bool, st.just(shape))) for _ in range(count)]
    choices = []
    for _ in range(count):
        if data.draw(st.booleans()):
            choices.append(data.draw(st.integers(-3, 3) | st.floats(-2, 2, allow_nan=False)))
        else:
            choices.append(data.draw(arrays(data.draw(st.sampled_from(SOME_DTYPES)),
                                            st.sampled_from([shape, shape[1:], ()]))))
    default = data.draw(st.integers(-3, 3) | arrays(data.draw(st.sampled_from(SOME_DTYPES)), st.just(())))
    lazy_conditions = [lazy(condition) for condition in conditions]
    lazy_choices = [lazy(choice) if isinstance(choice, np.ndarray) else choice for choice in choices]
    try:
        expected = np.select(conditions, choices, default)
    except TypeError:  # a Python int choice for an unsigned result: NumPy refuses the cast
        same_error(lambda: la.select(lazy_conditions, lazy_choices, default),
                   lambda: np.select(conditions, choices, default))
        return
    got = la.select(lazy_conditions, lazy_choices, default)
    assert not got.is_evaluated
    assert_same(got, expected)


@given(st.data(), st.sampled_from(["raise", "wrap", "clip"]), st.booleans())
def test_choose_matches_numpy(data, mode, lazy_index):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    count = data.draw(st.integers(1, 4))
    index_dtype = data.draw(st.sampled_from([np.dtype(np.int8), np.dtype(np.int64), np.dtype(np.uint8)]))
    low = 0 if mode == "raise" or index_dtype.kind == "u" else -6
    index = data.draw(hnp.arrays(index_dtype, st.just(shape),
                                 elements=st.integers(low, count - 1 if mode == "raise" else 6)))
    choices = [data.draw(st.integers(-3, 3)) if data.draw(st.booleans())
               else data.draw(arrays(data.draw(st.sampled_from(SOME_DTYPES)), st.sampled_from([shape, shape[1:], ()])))
               for _ in range(count)]
    expected = np.choose(index, choices, mode=mode)
    lazy_choices = [lazy(choice) if isinstance(choice, np.ndarray) else choice for choice in choices]
    got = la.choose(lazy(index) if lazy_index else index, lazy_choices, mode=mode)
    assert not got.is_evaluated
    assert_same(got, expected)


@given(dtype_strategy.flatmap(lambda dtype: arrays(dtype, any_shapes)), st.data())
def test_extract_matches_numpy(values, data):
    condition = data.draw(hnp.arrays(data.draw(st.sampled_from([bool, np.int8, np.float32])),
                                     st.sampled_from([values.shape, (values.size,)])))
    got = la.extract(lazy(condition), lazy(values))
    assert_same(got, np.extract(condition, values))


def test_selection_errors():
    x = la.asarray([1, 2])
    for call, error, message in [
        (lambda: la.select([], []), ValueError, "select: select with an empty condition list"),
        (lambda: la.select([x > 0], []), ValueError, "select: list of cases must be same length"),
        (lambda: la.select([x], [x]), TypeError, "select: invalid entry 0 in condlist: should be boolean"),
        (lambda: la.select([x > 0, la.zeros(3) > 0], [1, 2]), ValueError, "select condlist"),
        (lambda: la.choose([0, 2], [x, x]), ValueError, "choose: invalid entry in choice array"),
        (lambda: la.choose(la.asarray([0.0]), [x]), TypeError, "choose: Cannot cast array data from dtype.'float64'."),
        (lambda: la.choose([0], []), ValueError, "choose: 0-length sequence"),
        (lambda: la.choose([0], [x], mode="bogus"), ValueError, "choose: clipmode must be one of"),
        (lambda: la.choose([0], 5), TypeError, "choose: choices must be a sequence"),
        (lambda: la.choose([0], [x] * 64), ValueError, "choose: Need at least 0 and at most 64 array objects"),
        (lambda: la.extract([1, 0, 0, 1], x), IndexError, "extract: index 3 is out of bounds"),
    ]:
        with pytest.raises(error, match=message):
            call()
    with pytest.raises(IndexError, match="out of bounds"):  # a lazy index is checked when evaluated
        la.choose(la.asarray([0, 2]), [x, x]).eval()


# -- in place: place, putmask, copyto, fill_diagonal -------------------------------------------
@st.composite
def masked_writes(draw):
    dtype = draw(st.sampled_from(SOME_DTYPES))
    values = draw(arrays(dtype, any_shapes))
    mask = draw(hnp.arrays(draw(st.sampled_from([bool, np.int8, np.float64])),
                           st.sampled_from([values.shape, (values.size,)]), elements=st.sampled_from([0, 1])))
    written = draw(hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3)))
    return values, mask, written


@given(masked_writes(), st.booleans(), st.booleans())
def test_place_and_putmask_match_numpy(case, lazy_mask, lazy_values):
    values, mask, written = case
    for name in ("place", "putmask"):
        expected = values.copy()
        getattr(np, name)(expected, mask, written)
        array = lazy(values)
        alias, earlier = array, la.copy(array)
        getattr(la, name)(array, lazy(mask) if lazy_mask else mask, lazy(written) if lazy_values else written)
        assert not array.is_evaluated
        assert alias is array
        assert_same(array, expected)
        assert_same(earlier, values)  # a copy made before keeps the old value


@given(st.sampled_from(SOME_DTYPES), st.data(), st.sampled_from(["same_kind", "unsafe", "safe"]), st.booleans())
def test_copyto_matches_numpy(dtype, data, casting, lazy_source):
    values = data.draw(arrays(dtype, any_shapes))
    source_shape = data.draw(st.sampled_from([values.shape, values.shape[1:], ()]))
    source = data.draw(arrays(data.draw(st.sampled_from(SOME_DTYPES)), st.just(source_shape)) | st.integers(0, 1))
    where = data.draw(st.just(True) | hnp.arrays(bool, st.sampled_from([values.shape, values.shape[1:]])))
    expected = values.copy()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            np.copyto(expected, source, casting=casting, where=where)
    except TypeError:
        same_error(lambda: la.copyto(lazy(values), la.asarray(source) if lazy_source else source, casting, where),
                   lambda: np.copyto(values.copy(), source, casting=casting, where=where))
        return
    array = lazy(values)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        la.copyto(array, lazy(np.asarray(source)) if lazy_source and isinstance(source, np.ndarray) else source,
                  casting=casting, where=lazy(where) if isinstance(where, np.ndarray) else where)
        if (lazy_source and isinstance(source, np.ndarray)) or isinstance(where, np.ndarray):
            assert not array.is_evaluated  # (a static source with no mask is just that value)
        assert_same(array, expected)


@given(st.sampled_from(SOME_DTYPES), st.data(), st.booleans())
def test_fill_diagonal_matches_numpy(dtype, data, wrap):
    if data.draw(st.booleans()):
        shape = data.draw(hnp.array_shapes(min_dims=2, max_dims=2, min_side=0, max_side=7))
    else:
        shape = (data.draw(st.integers(0, 3)),) * data.draw(st.integers(2, 4))
    values = data.draw(arrays(dtype, st.just(shape)))
    written = data.draw(arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3)))
    expected = values.copy()
    np.fill_diagonal(expected, written, wrap=wrap)
    array = lazy(values)
    la.fill_diagonal(array, lazy(written) if data.draw(st.booleans()) else written, wrap=wrap)
    assert not array.is_evaluated
    assert_same(array, expected)


def test_in_place_writes_reach_views_and_numpy_arrays():
    base = la.asarray(np.zeros((3, 3)))
    alias, row = base, base[1]
    la.fill_diagonal(base, [1.0, 2.0, 3.0])
    la.putmask(row, row > 1, 7.0)  # a view writes through to its base
    la.place(base[0], la.asarray([False, True, True]), [5.0])
    la.copyto(base[2], 9.0, where=[True, False, False])
    expected = np.array([[1.0, 5.0, 5.0], [0.0, 7.0, 0.0], [9.0, 0.0, 3.0]])
    assert_same(alias, expected)
    assert_same(row, expected[1])
    # A NumPy array as first argument (NumPy dispatches np.copyto(numpy, lazy) here) is written by NumPy.
    target = np.zeros(3)
    np.copyto(target, la.asarray([1.0, 2.0, 3.0]))
    la.putmask(target, la.asarray([True, False, True]), la.asarray([4.0]))
    np.testing.assert_array_equal(target, [4.0, 2.0, 4.0])


def test_in_place_errors():
    x = la.zeros(3, dtype=la.int8)
    for call, error, message in [
        (lambda: la.place([1, 2], [1, 0], [1]), TypeError, "place: arr must be a lazyarr or NumPy array"),
        (lambda: la.place(x, [1, 0], [1]), ValueError, "place: mask and data must be the same size"),
        (lambda: la.place(x, la.asarray([True, False, False]), []), ValueError, "place: Cannot insert from an empty"),
        (lambda: la.place(x, [1, 0, 1], 300), OverflowError, "place: Python integer 300 out of bounds for int8"),
        (lambda: la.putmask(x, [1, 0], [1]), ValueError, "putmask: mask and data must be the same size"),
        # arrays of values (NumPy's, 0-d, lazy) cast under the 'safe' rule, as NumPy 2 does
        (lambda: la.putmask(x, [1, 0, 1], np.array([300, 2])), TypeError, "putmask: Cannot cast array data"),
        (lambda: la.putmask(x, [1, 0, 1], np.array(3)), TypeError, "putmask: Cannot cast array data"),
        (lambda: la.place(la.zeros(2), [1, 1], np.array([1 + 5j])), TypeError, "place: Cannot cast array data"),
        (lambda: la.putmask(x, [1, 1, 1], la.asarray([0.5])), TypeError, "putmask: Cannot cast array data"),
        (lambda: la.copyto([1, 2], 3), TypeError, "copyto: dst must be a lazyarr or NumPy array"),
        (lambda: la.copyto(x, 1.5), TypeError, "copyto: Cannot cast scalar from dtype.'float64'. to dtype.'int8'."),
        (lambda: la.copyto(x, 1000), OverflowError, "copyto: Python integer 1000 out of bounds for int8"),
        (lambda: la.copyto(x, la.asarray([1.5])), TypeError, "copyto: Cannot cast array data from"),
        (lambda: la.copyto(x, [1, 2]), ValueError, r"copyto: could not broadcast input array from shape \(2,\)"),
        (lambda: la.copyto(x, 1, casting="bogus"), ValueError, "copyto: casting must be one of"),
        (lambda: la.copyto(x, 1, where=np.array([1, 0, 1])), TypeError, "copyto: Cannot cast array data from"),
        (lambda: la.copyto(x, 1, where=[True, False]), ValueError, "copyto: could not broadcast where mask"),
        (lambda: la.fill_diagonal(x, 1), ValueError, "fill_diagonal: array must be at least 2-d"),
        (lambda: la.fill_diagonal(la.zeros((2, 3, 2)), 1), ValueError, "fill_diagonal: All dimensions of input"),
    ]:
        with pytest.raises(error, match=message):
            call()
    assert_same(x, np.zeros(3, np.int8))  # a refused write changes nothing


# -- index helpers, apply_along_axis, small utilities -------------------------------------------
@given(st.integers(-1, 5), st.integers(-6, 6), st.none() | st.integers(0, 5))
def test_triangle_and_diagonal_indices_match_numpy(n, k, m):
    assert_all_same(la.tril_indices(n, k, m), np.tril_indices(n, k, m))
    assert_all_same(la.triu_indices(n, k, m), np.triu_indices(n, k, m))
    matrix = la.zeros((max(n, 0), m if m is not None else max(n, 0))) * 1
    assert_all_same(la.tril_indices_from(matrix, k), np.tril_indices_from(np.zeros(matrix.shape), k))
    assert_all_same(la.triu_indices_from(matrix, k), np.triu_indices_from(np.zeros(matrix.shape), k))
    assert not matrix.is_evaluated  # only its shape is read
    ndim = max(n, 0) % 4
    assert_all_same(la.diag_indices(n, ndim), np.diag_indices(n, ndim))
    if n >= 0 and ndim >= 2:
        cube = np.zeros((n,) * ndim)
        assert_all_same(la.diag_indices_from(la.asarray(cube)), np.diag_indices_from(cube))
    if n >= 0:
        for function, numpy_function in [(la.triu, np.triu), (la.tril, np.tril)]:
            assert_all_same(la.mask_indices(n, function, k), np.mask_indices(n, numpy_function, k))
        assert_all_same(la.mask_indices(n, np.triu, k), np.mask_indices(n, np.triu, k))


def test_index_helper_errors():
    for call, message in [
        (lambda: la.tril_indices_from(la.zeros(3)), "tril_indices_from: input array must be 2-d"),
        (lambda: la.diag_indices_from(la.zeros(3)), "diag_indices_from: input array must be at least"),
        (lambda: la.diag_indices_from(la.zeros((2, 3))), "diag_indices_from: All dimensions"),
    ]:
        with pytest.raises(ValueError, match=message):
            call()


@given(st.sampled_from(SOME_DTYPES).flatmap(lambda dtype: arrays(dtype, hnp.array_shapes(
    min_dims=1, max_dims=3, min_side=1, max_side=3))), st.data())
def test_apply_along_axis_matches_numpy(values, data):
    axis = data.draw(st.integers(-values.ndim, values.ndim - 1))
    for lazy_function, numpy_function in [(la.sum, np.sum), (lambda v: v[::-1], lambda v: v[::-1]),
                                          (lambda v: la.outer(v, v), lambda v: np.outer(v, v))]:
        got = la.apply_along_axis(lazy_function, axis, lazy(values))
        assert not got.is_evaluated
        with np.errstate(all="ignore"):  # (NumPy's outer of extreme values warns; lazyarr's does not)
            expected = np.apply_along_axis(numpy_function, axis, values)
        assert_same(got, expected)


def test_apply_along_axis_casts_to_the_first_result_and_checks_empty():
    values = np.array([[1, 2], [0, 1]])
    function = (lambda v: v.sum() if int(v[0]) else 1.5)
    assert_same(la.apply_along_axis(function, 1, la.asarray(values)), np.apply_along_axis(function, 1, values))
    with pytest.raises(ValueError, match="apply_along_axis: Cannot apply_along_axis when any iteration dim"):
        la.apply_along_axis(la.sum, 1, la.zeros((0, 3)))


@given(dtype_strategy.flatmap(lambda dtype: arrays(dtype, any_shapes)))
def test_small_utilities_match_numpy(values):
    array = lazy(values)
    assert la.ndim(array) == np.ndim(values) and la.shape(array) == np.shape(values)
    assert la.size(array) == np.size(values)
    if values.ndim:
        assert la.size(array, -1) == np.size(values, -1)
        assert la.size(array, tuple(range(values.ndim))) == values.size
    assert la.shape([array, array]) == (2,) + values.shape and la.ndim(values.tolist()) == np.ndim(values.tolist())
    assert not array.is_evaluated
    assert_same(la.copy(array), np.copy(values))
    assert_same(la.asanyarray(values), np.asanyarray(values))
    assert_same(la.ascontiguousarray(array), np.ascontiguousarray(values))
    with warnings.catch_warnings(), np.errstate(all="ignore"):  # NumPy warns casting complex or huge values
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        expected = np.ascontiguousarray(values, dtype=np.float32)
    assert_same(la.ascontiguousarray(values, dtype=np.float32), expected)


def test_copy_and_ascontiguousarray_write_semantics():
    base = la.asarray(np.arange(6.0).reshape(2, 3))
    copied, same, transposed = la.copy(base), la.ascontiguousarray(base), la.ascontiguousarray(base.T)
    assert same is base  # NumPy returns a C-contiguous input itself
    base[0, 0] = 10.0
    assert float(copied[0, 0]) == 0.0 and float(transposed[0, 0]) == 0.0  # copies
    assert la.ascontiguousarray(base[1:]) is not None and la.ascontiguousarray(base[:, 1]).shape == (2,)


# -- laziness and the compiled code ------------------------------------------------------------
def test_static_shapes_stay_lazy():
    x = la.asarray(np.arange(12.0).reshape(3, 4)) * 2
    results = [
        la.append(x, x), la.insert(x, [1, 3], 0.5, axis=1), la.delete(x, [0, 2], axis=1), la.delete(x, slice(1, 3)),
        la.fliplr(x), la.flipud(x), la.rot90(x, 3), la.rollaxis(x, 1), *la.hsplit(x, 2), *la.vsplit(x, [1]),
        la.block([[x, x]]), la.resize(x, (5, 5)), la.select([x > 3], [x], 0), la.choose(x > 5, [x, -x]),
        la.apply_along_axis(la.sum, 0, x), la.copy(x), la.ascontiguousarray(x),
        la.insert(x, la.argmax(x), 1.0), la.delete(x, la.argmax(x)),
    ]
    assert not x.is_evaluated
    assert not any(result.is_evaluated for result in results)


def test_compiled_values_match_numpy():
    values = np.arange(12.0).reshape(3, 4) - 4
    la.set_backend("cpu")
    try:
        x = la.asarray(values) * 1
        inserted = np.insert(values, [3, 0, 1], [7.0, 8.0, 9.0], axis=1)
        assert_same(la.insert(x, [3, 0, 1], [7.0, 8.0, 9.0], axis=1), inserted)
        assert_same(la.insert(x, la.asarray([3, 0, 1]), [7.0, 8.0, 9.0], axis=1), inserted)
        assert_same(la.delete(x, la.asarray(-1), axis=0), np.delete(values, -1, axis=0))
        assert_same(la.delete(x, list(range(0, 12, 2))), np.delete(values, list(range(0, 12, 2))))
        assert_same(la.rot90(x, 1, (1, 0)), np.rot90(values, 1, (1, 0)))
        assert_same(la.select([x < -2, x > 5], [x, x * 10], -1.0), np.select([values < -2, values > 5],
                                                                              [values, values * 10], -1.0))
        assert_same(la.choose(la.asarray([[0, 1, 2, 1]]) * 1, [x, -x, 0.5], mode="clip"),
                    np.choose([[0, 1, 2, 1]], [values, -values, 0.5], mode="clip"))
        assert_same(la.resize(x, (2, 7)), np.resize(values, (2, 7)))
        array, expected = la.asarray(values) * 1, values.copy()
        la.place(array, array > 2, [1.5, 2.5])
        np.place(expected, expected > 2, [1.5, 2.5])
        la.fill_diagonal(array, -9.0)
        np.fill_diagonal(expected, -9.0)
        assert_same(array, expected)
        with pytest.raises(IndexError, match="out of bounds"):
            la.choose(la.asarray([3]) * 1, [x[0], x[1]]).eval()
    finally:
        la.set_backend("interpreter")


def test_docstring_examples():
    import doctest

    from lazyarr.frontend import (
        numpy_array_basics,
        numpy_in_place,
        numpy_index_helpers,
        numpy_insert_delete,
        numpy_manipulation,
        numpy_rearranging,
        numpy_selection,
        python_functions,
    )

    modules = (numpy_array_basics, numpy_in_place, numpy_index_helpers, numpy_insert_delete, numpy_rearranging,
               numpy_selection, python_functions)
    assert set(numpy_manipulation.__all__) == {name for module in modules for name in module.__all__}
    for module in modules:
        assert doctest.testmod(module).failed == 0, module.__name__
