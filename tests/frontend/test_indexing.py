"""Indexing against NumPy: basic, advanced and boolean keys, assignment, take and friends.

Every property draws an array (any dtype, shapes with 0-d, empty and size-1 dims), draws a
key NumPy accepts for it, and compares `getitem`/`setitem` with NumPy's own result: shape,
then dtype, then values (exact: indexing moves values, it never computes them).
"""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from lazyarr.frontend import indexing
from lazyarr.frontend.array import Array
from lazyarr.frontend.core import as_array
from lazyarr.frontend.indexing import (
    compress,
    getitem,
    ix_,
    put_along_axis,
    take,
    take_along_axis,
)
from lazyarr.frontend.indexing import setitem as setitem_node
from tests.strategies import ALL_DTYPES, arrays


def setitem(array, key, value) -> Array:
    """`array` with `array[key] = value` applied, as a new array (indexing.setitem gives its node)."""
    return Array(setitem_node(array, key, value))

small_shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4)


def assert_same(got, expected):
    """Shape, then dtype, then values (NaN positions must agree)."""
    got_value = np.asarray(got)
    expected = np.asarray(expected)
    assert got_value.shape == expected.shape, (got_value.shape, expected.shape)
    assert got_value.dtype == expected.dtype, (got_value.dtype, expected.dtype)
    np.testing.assert_array_equal(got_value, expected)


def to_numpy_key(key):
    """The key NumPy sees: lazy entries replaced by their values."""
    items = key if isinstance(key, tuple) else (key,)
    converted = tuple(np.asarray(item) if isinstance(item, Array) else item for item in items)
    return converted if isinstance(key, tuple) else converted[0]


# -- key strategies ---------------------------------------------------------------------------


@st.composite
def slices(draw, size):
    bound = st.one_of(st.none(), st.integers(-size - 2, size + 2))
    step = st.one_of(st.none(), st.integers(-3, 3).filter(bool))
    return slice(draw(bound), draw(bound), draw(step))


@st.composite
def basic_entry(draw, size):
    choices = [slices(size)]
    if size:
        choices.append(st.integers(-size, size - 1))
    return draw(st.one_of(*choices))


@st.composite
def basic_keys(draw, shape):
    """Ints in range (negative too), slices with any bounds and steps, None, one Ellipsis."""
    leading = draw(st.integers(0, len(shape)))
    entries = [draw(basic_entry(size)) for size in shape[:leading]]
    if draw(st.booleans()):
        trailing = draw(st.integers(0, len(shape) - leading))
        entries.append(Ellipsis)
        entries.extend(draw(basic_entry(size)) for size in shape[len(shape) - trailing:])
    for _ in range(draw(st.integers(0, 2))):
        entries.insert(draw(st.integers(0, len(entries))), None)
    if len(entries) == 1 and draw(st.booleans()):
        return entries[0]
    return tuple(entries)


def _as_index_kind(draw, array):
    """Hand an index array over as a NumPy array, a list or a lazy array."""
    kind = draw(st.sampled_from(["numpy", "list", "lazy"]))
    if kind == "list":
        return array.tolist()
    if kind == "lazy":
        return as_array(array)
    return array


@st.composite
def advanced_keys(draw, shape):
    """Integer arrays (negative too, broadcasting) mixed with slices, ints, None, Ellipsis;
    the arrays are sometimes adjacent, sometimes separated (NumPy's placement rule)."""
    indexable = [axis for axis, size in enumerate(shape) if size]
    if not indexable:
        return (True,)
    chosen = sorted(draw(st.lists(st.sampled_from(indexable), min_size=1, max_size=3, unique=True)))
    array_shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=len(chosen), max_dims=2, max_side=3))
    last = draw(st.integers(max(chosen), len(shape) - 1))
    entries = []
    for axis in range(last + 1):
        size = shape[axis]
        if axis in chosen:
            index_shape = array_shapes.input_shapes[chosen.index(axis)]
            values = draw(hnp.arrays(np.int64, index_shape, elements=st.integers(-size, size - 1)))
            entries.append(_as_index_kind(draw, values))
        elif size and draw(st.booleans()):
            entries.append(draw(st.integers(-size, size - 1)))
        else:
            entries.append(draw(slices(size)))
    if draw(st.booleans()):
        entries.insert(draw(st.integers(0, len(entries))), None)
    if draw(st.booleans()):  # spanning no axis it still separates; at the end it spans the rest
        position = draw(st.integers(0, len(entries))) if last == len(shape) - 1 else len(entries)
        entries.insert(position, Ellipsis)
    return tuple(entries)


@st.composite
def array_and_key(draw, key_strategy, dtypes=ALL_DTYPES):
    dtype = draw(st.sampled_from(dtypes))
    shape = draw(small_shapes)
    values = draw(arrays(dtype, shape))
    return values, draw(key_strategy(shape))


@st.composite
def mask_keys(draw, shape):
    """A boolean mask over a leading run of axes, possibly after a slice, as NumPy/list/lazy."""
    start = draw(st.integers(0, min(1, len(shape))))
    count = draw(st.integers(0, len(shape) - start))
    mask = draw(hnp.arrays(np.bool_, shape[start:start + count]))
    kind = draw(st.sampled_from(["numpy", "lazy", "list"]))
    mask = as_array(mask) if kind == "lazy" else (mask.tolist() if kind == "list" and mask.ndim else mask)
    return (slice(None),) * start + (mask,)


# -- getitem ------------------------------------------------------------------------------------


@given(array_and_key(basic_keys))
def test_basic_indexing_matches_numpy(case):
    values, key = case
    assert_same(getitem(as_array(values), key), values[key])


@given(array_and_key(advanced_keys))
def test_integer_array_indexing_matches_numpy(case):
    values, key = case
    assert_same(getitem(as_array(values), key), values[to_numpy_key(key)])


@given(array_and_key(mask_keys))
def test_boolean_mask_indexing_matches_numpy(case):
    values, key = case
    assert_same(getitem(as_array(values), key), values[to_numpy_key(key)])


@st.composite
def bare_lazy_masks(draw):
    """(values, a boolean mask over the leading axes, whether array and mask are pending)."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4))
    values = draw(arrays(draw(st.sampled_from(ALL_DTYPES)), shape))
    mask = draw(hnp.arrays(np.bool_, shape[:draw(st.integers(1, len(shape)))]))
    return values, mask, draw(st.booleans()), draw(st.booleans())


@given(bare_lazy_masks())
def test_a_lazy_mask_alone_selects_as_numpy_and_the_result_is_a_copy(case):
    # `x[mask]` with a lazy mask: an evaluated host array is selected by NumPy itself, a
    # pending one by a gather. Either way NumPy's values, and a copy: writes to it or to x
    # afterwards do not reach the other.
    values, mask, pending_array, pending_mask = case
    x = as_array(values)
    if pending_array:
        x = getitem(la.stack([x]), 0)  # the same values, not yet computed
    key = la.logical_not(as_array(~mask)) if pending_mask else as_array(mask)
    selected = getitem(x, key)
    expected = values[mask]
    assert_same(selected, expected)
    if expected.size:
        selected[...] = expected[:1]
        assert_same(x, values)
        x[...] = values[(0,) * values.ndim]
        assert_same(selected, np.broadcast_to(expected[:1], expected.shape))


def test_a_lazy_mask_of_the_wrong_length_raises_numpys_index_error():
    for x in (as_array(np.zeros((3, 4))), getitem(la.stack([as_array(np.zeros((3, 4)))]), 0)):
        with pytest.raises(IndexError, match="boolean index did not match indexed array along axis 0; "
                                             "size of axis is 3 but size of corresponding boolean axis is 2"):
            getitem(x, as_array(np.ones(2, bool)))


@pytest.mark.parametrize("key", [
    True, False, (True, 0), (0, slice(None), True), (slice(None), True, [0, 1]), (True, True),
    (Ellipsis, True), (None, True, None),
])
def test_boolean_scalar_index_adds_an_axis(key):
    values = np.arange(24.0).reshape(2, 3, 4)
    assert_same(getitem(as_array(values), key), values[key])


@pytest.mark.parametrize("key", [
    (0, slice(None), [0, 1]),            # an int separated from an array: advanced dims first
    (slice(None), 0, [0, 1]),            # adjacent: in place
    ([0], Ellipsis, [0]),                # an Ellipsis separates even when it spans no axis
    (slice(None), [0], Ellipsis, [0]),
    ([0, 1], None, [0, 1]),              # None separates
    (None, [0, 1]),
    (slice(None), [[0], [1]], [0, 1, 2]),
    (np.array(1), slice(None), [0, 1]),  # a 0-d array counts as an integer
    (slice(None, None, -1), [1, 0], slice(1, None)),
])
def test_advanced_placement_rule(key):
    values = np.arange(24).reshape(2, 3, 4)
    assert_same(getitem(as_array(values), key), values[key])


def test_zero_dimensional_arrays():
    values = np.array(3.5)
    for key in [(), Ellipsis, None, (None, Ellipsis), True, False]:
        assert_same(getitem(as_array(values), key), values[key])


def test_lazy_zero_dimensional_index_is_an_integer():
    values = np.arange(12).reshape(3, 4)
    index = as_array(np.array(-1))
    assert_same(getitem(as_array(values), (index, slice(1, 3))), values[-1, 1:3])


def test_getitem_is_lazy_for_static_and_lazy_indices():
    array = as_array(np.arange(10.0)) * 2
    result = getitem(array, as_array(np.array([1, 3])))
    assert not result.is_evaluated and not array.is_evaluated
    assert result.shape == (2,)


# -- getitem errors --------------------------------------------------------------------------


@pytest.mark.parametrize("key, message", [
    (3, "index 3 is out of bounds for axis 0 with size 3"),
    ((0, -5), "index -5 is out of bounds for axis 1 with size 4"),
    ([0, 3], "index 3 is out of bounds for axis 0 with size 3"),
    ((slice(None), np.array([[-5]])), "index -5 is out of bounds for axis 1 with size 4"),
    ((0, 0, 0), "too many indices for array: array is 2-dimensional, but 3 were indexed"),
    ((Ellipsis, Ellipsis), "an index can only have a single ellipsis"),
    (1.0, "only integers, slices"),
    (np.array([1.0]), "arrays used as indices must be of integer"),
    ("a", "only integers, slices"),
    (np.ones(2, bool), "boolean index did not match indexed array along axis 0; size of axis is 3 but "
                       "size of corresponding boolean axis is 2"),
    ((slice(None), [True, False]), "along axis 1; size of axis is 4 but size of corresponding"),
    (([0, 1], [0, 1, 2]), r"shape mismatch: indexing arrays could not be broadcast together with shapes "
                          r"\(2,\) \(3,\)"),
])
def test_indexing_errors_match_numpy(key, message):
    values = np.arange(12).reshape(3, 4)
    with pytest.raises(IndexError, match=message):
        values[key]
    with pytest.raises(IndexError, match=message):
        getitem(as_array(values), key)


def test_static_out_of_range_raises_before_evaluation():
    array = as_array(np.arange(3)) + 1
    with pytest.raises(IndexError):
        getitem(array, [0, 7])
    assert not array.is_evaluated


def test_lazy_out_of_range_raises_at_evaluation():
    result = getitem(as_array(np.arange(3.0)), as_array(np.array([0, 5])))
    assert result.shape == (2,)
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 3"):
        result.eval()


def test_zero_dimensional_too_many_indices():
    with pytest.raises(IndexError, match="array is 0-dimensional, but 1 were indexed"):
        getitem(as_array(np.array(1.0)), 0)


# -- setitem ------------------------------------------------------------------------------------


@st.composite
def assignment_values(draw, values, key):
    """A value NumPy broadcasts to values[key]: the full shape, a broadcastable one, a scalar."""
    target = values[to_numpy_key(key)].shape
    dtype = values.dtype
    kind = draw(st.sampled_from(["full", "broadcast", "scalar", "lazy"]))
    if kind == "scalar":
        return draw(arrays(dtype, ()))[()]
    shape = target
    if kind == "broadcast":
        kept = target[draw(st.integers(0, len(target))):]  # a suffix, some dims shrunk to 1
        shape = tuple(1 if draw(st.booleans()) else size for size in kept)
    update = draw(arrays(dtype, shape))
    return as_array(update) if kind == "lazy" else update


def check_assignment(data, values, key):
    value = data.draw(assignment_values(values, key))
    expected = values.copy()
    expected[to_numpy_key(key)] = np.asarray(value) if isinstance(value, Array) else value
    original = as_array(values)
    result = setitem(original, key, value)
    assert_same(result, expected)
    assert_same(original, values)  # arrays are immutable: the input keeps its value


@given(array_and_key(basic_keys), st.data())
def test_basic_assignment_matches_numpy(case, data):
    check_assignment(data, *case)


@given(array_and_key(advanced_keys), st.data())
def test_integer_array_assignment_matches_numpy(case, data):
    check_assignment(data, *case)


@given(array_and_key(mask_keys), st.data())
def test_boolean_mask_assignment_matches_numpy(case, data):
    check_assignment(data, *case)


def test_duplicate_indices_last_wins():
    values = np.zeros(4)
    expected = values.copy()
    expected[[1, 1, 2, 1]] = [5, 6, 7, 8]
    assert_same(setitem(as_array(values), [1, 1, 2, 1], [5, 6, 7, 8]), expected)


@pytest.mark.parametrize("key", [True, False, (True, slice(None, None, 2)), (Ellipsis, None)])
def test_boolean_scalar_and_new_axis_assignment(key):
    values = np.arange(6).reshape(2, 3)
    expected = values.copy()
    expected[key] = 9
    assert_same(setitem(as_array(values), key, 9), expected)


def test_assignment_converts_like_numpy():
    integers = np.arange(4, dtype=np.int16)
    for value in [2.7, -2.7, np.array([1.9, -1.9]), True]:
        expected = integers.copy()
        expected[1:3] = value
        assert_same(setitem(as_array(integers), slice(1, 3), value), expected)
    lazy_floats = as_array(np.array([1.9, -1.9]))
    expected = integers.copy()
    expected[[0, 3]] = np.array([1.9, -1.9])
    assert_same(setitem(as_array(integers), [0, 3], lazy_floats), expected)
    with pytest.raises(OverflowError, match="Python integer 40000 out of bounds for int16"):
        setitem(as_array(integers), 0, 40000)
    with pytest.raises(ValueError, match="cannot convert float NaN to integer"):
        setitem(as_array(integers), 0, float("nan"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy's ComplexWarning, as NumPy's assignment gives
        floats = np.zeros(2)
        expected = floats.copy()
        expected[:] = np.array([1 + 2j, 3 - 1j])
        assert_same(setitem(as_array(floats), slice(None), np.array([1 + 2j, 3 - 1j])), expected)


def test_assignment_drops_leading_unit_dims_of_the_value():
    values = np.zeros((2, 3))
    expected = values.copy()
    expected[:] = np.ones((1, 1, 2, 3))
    assert_same(setitem(as_array(values), slice(None), np.ones((1, 1, 2, 3))), expected)


@pytest.mark.parametrize("key, value, message", [
    (slice(None), np.ones((2, 2, 3)),
     r"could not broadcast input array from shape \(2,2,3\) into shape \(2,3\)"),
    ([0, 1], np.ones((3, 3)), r"shape mismatch: value array of shape \(3,3\) could not be broadcast to "
                              r"indexing result of shape \(2,3\)"),
])
def test_assignment_shape_errors_match_numpy(key, value, message):
    values = np.zeros((2, 3))
    with pytest.raises(ValueError, match=message):
        values[key] = value
    with pytest.raises(ValueError, match=message):
        setitem(as_array(values), key, value)


def test_lazy_assignment_out_of_range_raises_at_evaluation():
    result = setitem(as_array(np.zeros(3)), as_array(np.array([-4])), 1.0)
    with pytest.raises(IndexError, match="index -4 is out of bounds for axis 0 with size 3"):
        result.eval()


def test_assignment_does_not_alter_arrays_sharing_the_graph():
    base = as_array(np.arange(5.0)) * 2
    shared = base + 1
    updated = setitem(base, [0, 2], 0.0)
    assert_same(updated, np.array([0.0, 2, 0, 6, 8]))
    assert_same(base, np.arange(5.0) * 2)
    assert_same(shared, np.arange(5.0) * 2 + 1)


# -- the acceptance examples, through the operators ----------------------------------

needs_operators = pytest.mark.skipif(
    "__setitem__" not in vars(Array) or "__getitem__" not in vars(Array),
    reason="Array.__getitem__/__setitem__ are bound by lazyarr/frontend/methods.py",
)


def acceptance_arrays():
    values = np.arange(20.0).reshape(4, 5) - 7
    return as_array(values), values


def test_acceptance_examples_through_functions():
    x, values = acceptance_arrays()
    mask = values > 0
    assert_same(getitem(x, mask), values[mask])
    assert_same(getitem(x, as_array(mask)), values[mask])
    assert_same(getitem(x, [0, 2]), values[[0, 2]])
    assert_same(getitem(x, (slice(1, None), slice(None, None, -2))), values[1:, ::-2])
    expected = values.copy()
    expected[[3, 0]] = 0
    assert_same(setitem(x, [3, 0], 0), expected)


@needs_operators
def test_acceptance_examples_through_operators():
    x, values = acceptance_arrays()
    mask = values > 0
    assert_same(x[as_array(mask)], values[mask])
    assert_same(x[[0, 2]], values[[0, 2]])
    assert_same(x[1:, ::-2], values[1:, ::-2])
    idx = [3, 0]
    before = x
    x[idx] = 0
    expected = values.copy()
    expected[idx] = 0
    assert_same(x, expected)
    assert x is before  # rebinding keeps the object; its graph node is new


# -- take, take_along_axis, put_along_axis, compress, ix_ ---------------------------------------


@st.composite
def take_cases(draw):
    shape = draw(small_shapes)
    values = draw(arrays(draw(st.sampled_from(ALL_DTYPES)), shape))
    axis = draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1))) if shape else None
    size = values.size if axis is None else shape[axis]
    index_shape = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0 if size == 0 else 0, max_side=3))
    if size == 0:
        index_shape = (0,)
    mode = draw(st.sampled_from(["raise", "wrap", "clip"]))
    low, high = (-size, size - 1) if mode == "raise" else (-3 * size - 2, 3 * size + 2)
    indices = draw(hnp.arrays(np.int64, index_shape, elements=st.integers(low, max(high, low))))
    return values, _as_index_kind(draw, indices) if indices.ndim else indices, axis, mode


@given(take_cases())
def test_take_matches_numpy(case):
    values, indices, axis, mode = case
    expected = np.take(values, to_numpy_key(indices), axis=axis, mode=mode)
    assert_same(take(as_array(values), indices, axis=axis, mode=mode), expected)


def test_take_errors():
    values = np.arange(6).reshape(2, 3)
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 1 with size 3"):
        take(as_array(values), [3], axis=1)
    with pytest.raises(IndexError, match="cannot do a non-empty take from an empty axes"):
        take(as_array(np.zeros((0, 2))), [0], axis=0)
    with pytest.raises(ValueError, match="clipmode must be one of"):
        take(as_array(values), [0], mode="bad")
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        take(as_array(values), [0], axis=2)
    assert_same(take(as_array(values), [True, False]), np.take(values, [True, False]))
    # NumPy casts index arrays 'same_kind': a float array raises, a float list converts
    for lazy in (False, True):
        with pytest.raises(TypeError):
            take(as_array(values), as_array(np.array([1.0])) if lazy else np.array([1.0]))
    assert_same(take(as_array(values), [1.0, 0.0]), np.take(values, [1.0, 0.0]))


@pytest.mark.parametrize("indices", [np.array([-2**62, 2**62 + 1]), np.array([2**63, 2**64 - 1], np.uint64)])
@pytest.mark.parametrize("evaluated", [True, False])
def test_take_wrap_of_huge_indices_is_immediate(indices, evaluated):
    """NumPy's own wrap steps by the axis size one step at a time (2**62 never finishes); both
    paths reduce the indices modulo the size first."""
    values = np.arange(5.0)
    array = as_array(values) if evaluated else as_array(values) + 0
    assert_same(take(array, indices, mode="wrap"), values[np.mod(indices, 5)])


@st.composite
def along_axis_cases(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    values = draw(arrays(draw(st.sampled_from(ALL_DTYPES)), shape))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    index_shape = list(shape)
    index_shape[axis] = draw(st.integers(0, 4))
    index_shape = [size if draw(st.booleans()) or dim == axis % len(shape) else 1
                   for dim, size in enumerate(index_shape)]
    size = shape[axis]
    indices = draw(hnp.arrays(np.int64, tuple(index_shape), elements=st.integers(-size, size - 1)))
    return values, indices, axis


@given(along_axis_cases(), st.booleans())
def test_take_along_axis_matches_numpy(case, lazy_indices):
    values, indices, axis = case
    index = as_array(indices) if lazy_indices else indices
    assert_same(take_along_axis(as_array(values), index, axis=axis),
                np.take_along_axis(values, indices, axis=axis))


@given(along_axis_cases(), st.data())
def test_put_along_axis_matches_numpy(case, data):
    values, indices, axis = case
    update = data.draw(arrays(values.dtype, ()))
    expected = values.copy()
    np.put_along_axis(expected, indices, update, axis=axis)
    array = as_array(values)
    assert put_along_axis(array, indices, update[()], axis=axis) is None
    assert_same(array, expected)


@given(array_and_key(advanced_keys), st.data())
def test_lazy_integer_index_writes_replay_the_general_paths_write(case, data):
    """`x[key] = value` with lazy integer indices and a Python scalar or lazy value is replayed
    from a template after its first call (indexing._replayed_scatter): a second write with other
    index values of the same shapes and dtypes makes the node the general path makes, and both
    write as NumPy does (duplicate indices too: the last wins, as the general path's scatter)."""
    values, key = case
    parts = key if isinstance(key, tuple) else (key,)
    if not any(isinstance(part, (list, np.ndarray, Array)) for part in parts):
        return  # (True,): no axis to index
    dtype = data.draw(st.sampled_from([np.int64, np.int32, np.uint8]))
    lazy_value = data.draw(st.booleans())
    for attempt in range(2):  # the first write records the template, the second replays it
        numpy_key = []
        for part in parts:
            if isinstance(part, (list, np.ndarray, Array)):
                index = np.asarray(part)
                order = data.draw(st.permutations(range(index.size)))
                numpy_key.append(index.reshape(-1)[list(order)].reshape(index.shape))
            else:
                numpy_key.append(part)
        numpy_key = tuple(numpy_key)
        target_shape = values[numpy_key].shape
        if lazy_value:
            update = data.draw(arrays(values.dtype, target_shape))
            value = as_array(update)
        else:
            update = value = data.draw(st.booleans() if values.dtype == np.bool_ else st.integers(0, 5))
        if dtype == np.uint8 and any(isinstance(part, np.ndarray) and (part < 0).any() for part in numpy_key):
            continue  # (negative indices do not fit the unsigned dtype)
        lazy_key = tuple(as_array(part.astype(dtype)) if isinstance(part, np.ndarray) else part
                         for part in numpy_key)
        expected = values.copy()
        expected[numpy_key] = update
        x = as_array(values)
        written = indexing.setitem(x, lazy_key, value)
        plan = indexing.parse_key(x.shape, lazy_key)
        general = indexing._written(x._node, plan, indexing._update_node(
            value, x.dtype, plan.result_shape(), plan.is_advanced))
        assert written is general
        assert_same(Array(written), expected)


def test_take_along_axis_flattened_and_errors():
    values = np.arange(6).reshape(2, 3)
    assert_same(take_along_axis(as_array(values), np.array([5, 0]), axis=None),
                np.take_along_axis(values, np.array([5, 0]), axis=None))
    with pytest.raises(ValueError, match="same number of dimensions"):
        take_along_axis(as_array(values), np.array([0]), axis=0)
    with pytest.raises(IndexError, match="must be an integer array"):
        take_along_axis(as_array(values), np.array([[0.0]]), axis=0)


def test_compress_and_ix_match_numpy():
    values = np.arange(12).reshape(3, 4)
    for condition, axis in [([True, False, True], 0), ([0, 1], 1), ([True] * 5, None), ([], 0)]:
        expected = np.compress(condition, values, axis=axis)
        assert_same(compress(condition, as_array(values), axis=axis), expected)
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        compress([False, False, False, True], as_array(values), axis=0)
    with pytest.raises(ValueError, match="condition must be a 1-d array"):
        compress([[True]], as_array(values))
    rows, columns = ix_([2, 0], as_array(np.array([True, False, True, True])))
    expected_rows, expected_columns = np.ix_([2, 0], [True, False, True, True])
    assert_same(rows, expected_rows)
    assert_same(columns, expected_columns)
    assert_same(getitem(as_array(values), (rows, columns)), values[np.ix_([2, 0], [True, False, True, True])])
    with pytest.raises(ValueError, match="Cross index must be 1 dimensional"):
        ix_([[1]])


@given(array_and_key(advanced_keys), st.data())
def test_lazy_integer_indices_replay_the_general_paths_read(case, data):
    """`x[key]` with lazy integer indices is replayed from a template after its first call
    (indexing._replayed_gather): a second call with other index values of the same shapes and
    dtypes (the first's shuffled) makes the node the general path makes, and both read as NumPy."""
    values, key = case
    parts = key if isinstance(key, tuple) else (key,)
    if not any(isinstance(part, (list, np.ndarray, Array)) for part in parts):
        return  # (True,): no axis to index
    dtype = data.draw(st.sampled_from([np.int64, np.int32, np.int16, np.int8]))
    x = as_array(values)
    keys = []
    for _ in range(2):  # the first call records the template, the second replays it
        built = []
        for part in parts:
            if isinstance(part, (list, np.ndarray, Array)):
                index = np.asarray(part).astype(dtype)
                order = data.draw(st.permutations(range(index.size)))
                built.append(index.reshape(-1)[list(order)].reshape(index.shape))
            else:
                built.append(part)
        keys.append(tuple(built))
    results = []
    for numpy_key in keys:
        lazy_key = tuple(as_array(part) if isinstance(part, np.ndarray) else part for part in numpy_key)
        results.append((getitem(x, lazy_key), values[numpy_key], lazy_key))
    replayed, _, lazy_key = results[1]
    general = indexing._advanced_read(x._node, indexing.parse_key(x.shape, lazy_key))
    assert replayed._node is general  # (before evaluation binds the result to a leaf)
    for got, expected, _ in results:
        assert_same(got, expected)
