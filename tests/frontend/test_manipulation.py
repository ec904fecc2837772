"""Manipulation functions against NumPy: one table record per function, run with hypothesis.

Each record names the lazyarr function, its NumPy counterpart, the dtypes it is run on and a
strategy drawing (positional arguments, keyword arguments) as NumPy values; NumPy arrays in
the arguments become lazy arrays for the lazyarr call. Every result is compared for type
(list/tuple), shape, dtype, then exact values: these functions only move, repeat or convert
elements, so no tolerance is needed anywhere. Error tests and graph-size tests follow.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from lazyarr.frontend import manipulation
from lazyarr.hlo import post_order
from tests.strategies import ALL_DTYPES, arrays, shapes

nonscalar_shapes = hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=5)
small_dtypes = st.sampled_from(ALL_DTYPES)


def to_lazy(value):
    """NumPy arrays (also inside lists and tuples) -> lazy arrays; other values unchanged."""
    if isinstance(value, np.ndarray):
        return la.asarray(value)
    if isinstance(value, list):
        return [to_lazy(item) for item in value]
    if isinstance(value, tuple):
        return tuple(to_lazy(item) for item in value)
    return value


def assert_same(actual, expected):
    """Same container type and length, then per array: shape, dtype, exact values."""
    if isinstance(expected, (list, tuple)):
        assert type(actual) is type(expected), (type(actual), type(expected))
        assert len(actual) == len(expected)
        for actual_item, expected_item in zip(actual, expected):
            assert_same(actual_item, expected_item)
        return
    assert isinstance(actual, la.Array), type(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    values = np.asarray(actual)
    if expected.dtype.kind in "iu" and la.get_backend_name() != "interpreter":
        # A float -> int cast out of range (concatenate/stack with dtype=) is undefined in C:
        # NumPy wraps on x86, compiled code saturates (README: Differences from NumPy).
        limits = np.iinfo(expected.dtype)
        kept = (values != limits.max) & (values != limits.min)
        values, expected = values[kept], expected[kept]
    np.testing.assert_array_equal(values, expected, strict=True)


@dataclass(frozen=True)
class Record:
    name: str
    lazy: Callable
    reference: Callable
    arguments: Callable  # dtype -> strategy of (args, kwargs)
    dtypes: tuple = tuple(ALL_DTYPES)


# -- argument strategies -------------------------------------------------------------------------
def axis_for(ndim):
    return st.integers(-ndim, ndim - 1)


@st.composite
def one_array(draw, dtype, shape=shapes):
    return (draw(arrays(dtype, shape)),), {}


@st.composite
def array_axis(draw, dtype, shape=nonscalar_shapes, keyword="axis"):
    value = draw(arrays(dtype, shape))
    return (value,), {keyword: draw(axis_for(value.ndim))}


@st.composite
def reshape_arguments(draw, dtype):
    value = draw(arrays(dtype))
    factors = list(value.shape) + [1] * draw(st.integers(0, 2))
    factors = draw(st.permutations(factors))
    cuts = sorted(draw(st.sets(st.integers(1, max(len(factors) - 1, 1)), max_size=3)))
    groups = [factors[start:stop] for start, stop in zip([0] + cuts, cuts + [len(factors)])]
    target = [math.prod(group) for group in groups if group] or []
    if target and math.prod(target) and draw(st.booleans()):
        target[draw(st.integers(0, len(target) - 1))] = -1
    order = draw(st.sampled_from(["C", "F"]))
    return (value, tuple(target)), {"order": order}


@st.composite
def transpose_arguments(draw, dtype):
    value = draw(arrays(dtype))
    if draw(st.booleans()):
        return (value,), {}
    permutation = draw(st.permutations(range(value.ndim)))
    axes = tuple(axis - value.ndim if draw(st.booleans()) else axis for axis in permutation)
    return (value, axes), {}


@st.composite
def swapaxes_arguments(draw, dtype):
    value = draw(arrays(dtype, nonscalar_shapes))
    return (value, draw(axis_for(value.ndim)), draw(axis_for(value.ndim))), {}


@st.composite
def moveaxis_arguments(draw, dtype):
    value = draw(arrays(dtype, nonscalar_shapes))
    count = draw(st.integers(1, value.ndim))
    source = draw(st.permutations(range(value.ndim)))[:count]
    destination = draw(st.permutations(range(-value.ndim, 0)))[:count]
    if count == 1 and draw(st.booleans()):
        return (value, source[0], destination[0]), {}
    return (value, tuple(source), tuple(destination)), {}


@st.composite
def expand_dims_arguments(draw, dtype):
    value = draw(arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)))
    count = draw(st.integers(1, 3))
    positions = draw(st.permutations(range(value.ndim + count)))[:count]
    axes = tuple(axis - value.ndim - count if draw(st.booleans()) else axis for axis in positions)
    return (value, axes if count > 1 or draw(st.booleans()) else axes[0]), {}


@st.composite
def squeeze_arguments(draw, dtype):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=3))
    value = draw(arrays(dtype, st.just(shape)))
    units = [axis for axis, size in enumerate(shape) if size == 1]
    if not units or draw(st.booleans()):
        return (value,), {}
    chosen = draw(st.lists(st.sampled_from(units), min_size=1, unique=True))
    return (value,), {"axis": tuple(chosen) if len(chosen) > 1 else chosen[0] - len(shape)}


@st.composite
def broadcast_to_arguments(draw, dtype):
    target = draw(shapes)
    source = draw(hnp.broadcastable_shapes(target, min_dims=0, max_dims=len(target), min_side=0))
    # broadcastable_shapes may stretch the target (a 0 against a 1); keep sources that fit it.
    aligned = target[len(target) - len(source):]
    source = tuple(size if size == wanted else 1 for size, wanted in zip(source, aligned))
    return (draw(arrays(dtype, st.just(source))), target), {}


@st.composite
def broadcast_arrays_arguments(draw, dtype):
    shapes_drawn = draw(hnp.mutually_broadcastable_shapes(num_shapes=3, min_side=0, max_side=4))
    return tuple(draw(arrays(dtype, st.just(shape))) for shape in shapes_drawn.input_shapes), {}


@st.composite
def broadcast_shapes_arguments(draw, dtype):
    count = draw(st.integers(0, 3))
    drawn = draw(hnp.mutually_broadcastable_shapes(num_shapes=max(count, 1), min_side=0, max_side=4))
    return drawn.input_shapes[:count], {}


def as_shape_array(function):
    """broadcast_shapes' tuple as an int64 array, so that the table compares it as arrays."""
    return lambda *shapes: np.asarray(function(*shapes), dtype=np.int64)


@st.composite
def astype_arguments(draw, dtype):
    target = draw(small_dtypes)
    if dtype.kind in "fc" and target.kind in "iub":
        # float -> int of NaN, inf or out-of-range values is undefined behaviour in C; use exact ints.
        value = draw(hnp.arrays(np.int8, shapes, elements=st.integers(0, 100))).astype(dtype)
    else:
        value = draw(arrays(dtype))
    return (value, target), {}


@st.composite
def atleast_arguments(draw, dtype):
    count = draw(st.integers(1, 3))
    return tuple(draw(arrays(dtype)) for _ in range(count)), {}


@st.composite
def flip_arguments(draw, dtype):
    value = draw(arrays(dtype))
    choice = draw(st.sampled_from(["none", "int", "tuple"])) if value.ndim else "none"
    if choice == "none":
        return (value,), {}
    if choice == "int":
        return (value,), {"axis": draw(axis_for(value.ndim))}
    axes = draw(st.lists(st.integers(0, value.ndim - 1), unique=True))
    return (value,), {"axis": tuple(axes)}


@st.composite
def joined_arrays(draw, dtype, *, vary_axis, same_shape=False, mixed_dtypes=True):
    """2-4 arrays whose shapes agree except (maybe) on `vary_axis` of the drawn rank."""
    base = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4))
    axis = draw(axis_for(len(base)))
    count = draw(st.integers(1, 4))
    values = []
    for _ in range(count):
        shape = list(base)
        if vary_axis and not same_shape:
            shape[axis] = draw(st.integers(0, 3))
        kind = draw(small_dtypes) if mixed_dtypes and draw(st.booleans()) else dtype
        values.append(draw(arrays(kind, st.just(tuple(shape)))))
    return values, axis


@st.composite
def concatenate_arguments(draw, dtype):
    values, axis = draw(joined_arrays(dtype, vary_axis=True))
    if draw(st.integers(0, 4)) == 0:
        values = [draw(arrays(dtype)) for _ in values]
        axis = None
    kwargs = {"axis": axis}
    if draw(st.booleans()):
        kwargs["dtype"] = draw(small_dtypes)
        kwargs["casting"] = "unsafe"
    return (values,), kwargs


@st.composite
def stack_arguments(draw, dtype):
    values, _ = draw(joined_arrays(dtype, vary_axis=False))
    return (values,), {"axis": draw(st.integers(-values[0].ndim - 1, values[0].ndim))}


def sequence_stack_arguments(axis_for_rank):
    """Arrays for hstack/vstack/dstack/column_stack: the joined axis varies when it exists."""

    @st.composite
    def build(draw, dtype):
        shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=3))
        axis = axis_for_rank(len(shape))
        values = []
        for _ in range(draw(st.integers(1, 3))):
            this = list(shape)
            if axis is not None:
                this[axis] = draw(st.integers(0, 3))
            kind = draw(st.sampled_from([dtype, np.dtype(np.int8)]))
            values.append(draw(arrays(kind, st.just(tuple(this)))))
        return (values,), {}

    return build


@st.composite
def split_arguments(draw, dtype, *, exact):
    value = draw(arrays(dtype, nonscalar_shapes))
    axis = draw(axis_for(value.ndim))
    size = value.shape[axis]
    if draw(st.booleans()):
        if exact:
            choices = [count for count in range(1, 6) if size % count == 0]
            sections = draw(st.sampled_from(choices))
        else:
            sections = draw(st.integers(1, 6))
        return (value, sections), {"axis": axis}
    indices = draw(st.lists(st.integers(-size - 2, size + 2), max_size=4))
    return (value, indices), {"axis": axis}


@st.composite
def roll_arguments(draw, dtype):
    value = draw(arrays(dtype))
    if not value.ndim or draw(st.booleans()):
        return (value, draw(st.integers(-7, 7))), {}
    axes = draw(st.lists(axis_for(value.ndim), min_size=1, max_size=3))
    if draw(st.booleans()):  # one int shift: an int axis takes roll's template path (replayed nodes)
        return (value, draw(st.integers(-7, 7))), {"axis": axes[0] if len(axes) == 1 else tuple(axes)}
    return (value, tuple(draw(st.integers(-7, 7)) for _ in axes)), {"axis": tuple(axes)}


@st.composite
def tile_arguments(draw, dtype):
    value = draw(arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)))
    reps = draw(st.one_of(st.integers(0, 3), st.tuples(*[st.integers(0, 3)] * draw(st.integers(0, 4)))))
    return (value, reps), {}


@st.composite
def repeat_arguments(draw, dtype):
    value = draw(arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)))
    axis = None if not value.ndim or draw(st.booleans()) else draw(axis_for(value.ndim))
    length = value.size if axis is None else value.shape[axis]
    if draw(st.booleans()):
        repeats = draw(st.integers(0, 3))
    else:
        repeats = draw(st.lists(st.integers(0, 3), min_size=length, max_size=length))
        if draw(st.booleans()):
            repeats = np.asarray(repeats, dtype=draw(st.sampled_from([np.int64, np.uint8, np.bool_])))
    return (value, repeats), {"axis": axis}


@st.composite
def pad_arguments(draw, dtype):
    value = draw(arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)))
    width = st.integers(0, 2)
    pair = st.tuples(width, width)
    constant = st.integers(0, 5)
    pad_forms, value_forms = [width, pair], [constant, st.tuples(constant, constant)]
    if value.ndim:  # one (before, after) pair per axis
        pad_forms.append(st.tuples(*[pair] * value.ndim))
        value_forms.append(st.tuples(*[st.tuples(constant, constant)] * value.ndim))
    pad_width = draw(st.one_of(pad_forms))
    values = draw(st.one_of(value_forms))
    return (value, pad_width), {"constant_values": values}


@st.composite
def diff_arguments(draw, dtype):
    value = draw(arrays(dtype, nonscalar_shapes))
    axis = draw(axis_for(value.ndim))
    kwargs = {"n": draw(st.integers(0, 3)), "axis": axis}
    for key in ("prepend", "append"):
        choice = draw(st.sampled_from(["none", "scalar", "array"]))
        if choice == "scalar":
            kwargs[key] = draw(st.integers(0, 1))
        elif choice == "array":
            shape = list(value.shape)
            shape[axis] = draw(st.integers(0, 2))
            kwargs[key] = draw(arrays(dtype, st.just(tuple(shape))))
    return (value,), kwargs


def quiet(function):
    """Call `function` with NumPy's cast warnings (complex -> real) silenced."""

    def call(*args, **kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return function(*args, **kwargs)

    return call


def evaluated(result):
    """Evaluate a list or tuple of results as one module (la.eval shares their work)."""
    if isinstance(result, (list, tuple)) and result:
        la.eval(*result)
    return result


NUMERIC_DTYPES = tuple(dtype for dtype in ALL_DTYPES if dtype != np.bool_)

RECORDS = [
    Record("reshape", la.reshape, np.reshape, reshape_arguments),
    Record("ravel", la.ravel, np.ravel, lambda dtype: one_array(dtype).map(
        lambda drawn: (drawn[0], {"order": "F"}) if drawn[0][0].ndim % 2 else drawn)),
    Record("transpose", la.transpose, np.transpose, transpose_arguments),
    Record("permute_dims", la.permute_dims, np.permute_dims, transpose_arguments),
    Record("matrix_transpose", la.matrix_transpose, np.matrix_transpose,
           lambda dtype: one_array(dtype, hnp.array_shapes(min_dims=2, max_dims=4, min_side=0, max_side=4))),
    Record("swapaxes", la.swapaxes, np.swapaxes, swapaxes_arguments),
    Record("moveaxis", la.moveaxis, np.moveaxis, moveaxis_arguments),
    Record("expand_dims", la.expand_dims, np.expand_dims, expand_dims_arguments),
    Record("squeeze", la.squeeze, np.squeeze, squeeze_arguments),
    Record("broadcast_to", la.broadcast_to, np.broadcast_to, broadcast_to_arguments),
    Record("broadcast_arrays", la.broadcast_arrays, np.broadcast_arrays, broadcast_arrays_arguments),
    Record("broadcast_shapes", lambda *shapes: la.asarray(as_shape_array(la.broadcast_shapes)(*shapes)),
           as_shape_array(np.broadcast_shapes), broadcast_shapes_arguments, dtypes=(np.dtype(np.int64),)),
    Record("astype", la.astype, quiet(np.astype), astype_arguments),
    Record("atleast_1d", la.atleast_1d, np.atleast_1d, atleast_arguments),
    Record("atleast_2d", la.atleast_2d, np.atleast_2d, atleast_arguments),
    Record("atleast_3d", la.atleast_3d, np.atleast_3d, atleast_arguments),
    Record("flip", la.flip, np.flip, flip_arguments),
    Record("concatenate", quiet(la.concatenate), quiet(np.concatenate), concatenate_arguments),
    Record("concat", quiet(la.concat), quiet(np.concat), concatenate_arguments),
    Record("stack", la.stack, np.stack, stack_arguments),
    Record("hstack", la.hstack, np.hstack,
           sequence_stack_arguments(lambda rank: {0: None, 1: 0}.get(rank, 1))),
    Record("vstack", la.vstack, np.vstack, sequence_stack_arguments(lambda rank: 0 if rank >= 2 else None)),
    Record("dstack", la.dstack, np.dstack, sequence_stack_arguments(lambda rank: 2 if rank >= 3 else None)),
    Record("column_stack", la.column_stack, np.column_stack,
           sequence_stack_arguments(lambda rank: 1 if rank >= 2 else None)),
    Record("split", la.split, np.split, lambda dtype: split_arguments(dtype, exact=True)),
    Record("array_split", la.array_split, np.array_split, lambda dtype: split_arguments(dtype, exact=False)),
    Record("unstack", la.unstack, np.unstack, lambda dtype: array_axis(dtype)),
    Record("roll", la.roll, np.roll, roll_arguments),
    Record("tile", la.tile, np.tile, tile_arguments),
    Record("repeat", la.repeat, np.repeat, repeat_arguments),
    Record("pad", la.pad, np.pad, pad_arguments),
    Record("diff", la.diff, quiet(np.diff), diff_arguments),
]


@pytest.mark.parametrize("record", RECORDS, ids=[record.name for record in RECORDS])
@given(data=st.data())
def test_matches_numpy(record, data):
    dtype = data.draw(st.sampled_from(record.dtypes), label="dtype")
    args, kwargs = data.draw(record.arguments(np.dtype(dtype)), label="arguments")
    expected = record.reference(*args, **kwargs)
    actual = evaluated(record.lazy(*to_lazy(args), **to_lazy(kwargs)))
    assert_same(actual, expected)


def test_table_covers_every_public_function():
    assert {record.name for record in RECORDS} == set(manipulation.__all__)


# -- Array method adapters -----------------------------------------------------------------------
def test_method_adapters_follow_numpy_method_signatures():
    values = np.arange(24, dtype=np.int16).reshape(2, 3, 4)
    x = la.asarray(values)
    methods, properties = manipulation.METHODS, manipulation.PROPERTIES
    assert_same(methods["reshape"](x, 4, 6), values.reshape(4, 6))
    assert_same(methods["reshape"](x, (4, -1), order="F"), values.reshape((4, -1), order="F"))
    assert_same(methods["reshape"](x, [24]), values.reshape([24]))
    assert_same(methods["transpose"](x), values.transpose())
    assert_same(methods["transpose"](x, 1, 0, 2), values.transpose(1, 0, 2))
    assert_same(methods["transpose"](x, (2, 0, 1)), values.transpose((2, 0, 1)))
    assert_same(methods["transpose"](x, None), values.transpose(None))
    assert_same(methods["flatten"](x, "F"), values.flatten("F"))
    assert_same(methods["ravel"](x), values.ravel())
    assert_same(methods["swapaxes"](x, 0, 2), values.swapaxes(0, 2))
    assert_same(methods["squeeze"](la.asarray(values[:1]), 0), values[:1].squeeze(0))
    assert_same(methods["astype"](x, np.float32), values.astype(np.float32))
    assert_same(methods["repeat"](x, 2, axis=1), values.repeat(2, axis=1))
    assert_same(properties["T"](x), values.T)
    assert_same(properties["mT"](x), values.mT)
    with pytest.raises(TypeError, match="according to the rule 'safe'"):
        methods["astype"](la.asarray([1.5]), np.int64, casting="safe")
    with pytest.raises(ValueError, match="ndim < 2"):
        properties["mT"](la.asarray([1, 2]))


# -- errors: NumPy's exception types; messages name the function and the offending values -------
x23 = la.zeros((2, 3))

ERRORS = [
    (lambda: la.reshape(x23, (4,)), ValueError, r"reshape: cannot reshape array of size 6 into shape \(4,\)"),
    (lambda: la.reshape(x23, (4, -1)), ValueError, r"size 6 into shape \(4,newaxis\)"),
    (lambda: la.reshape(x23, (-1, -1)), ValueError, "only specify one unknown dimension"),
    (lambda: la.reshape(x23, (-(2**70),)), ValueError, "Maximum allowed dimension exceeded"),  # NumPy's error
    (lambda: la.reshape(x23, (2**70, 0)), ValueError, "Maximum allowed dimension exceeded"),
    (lambda: la.reshape(la.zeros((0, 3)), (0, -1)), ValueError, "size 0 into shape"),
    (lambda: la.reshape(x23, (2.0, 3)), TypeError, "shape must be"),
    (lambda: la.reshape(x23, (6,), order="X"), ValueError, "order"),
    (lambda: la.transpose(x23, (0, 0)), ValueError, "repeated axis in transpose"),
    (lambda: la.transpose(x23, (0,)), ValueError, "axes don't match array"),
    (lambda: la.transpose(x23, (0, 2)), ValueError, "axis 2 is out of bounds for array of dimension 2"),
    (lambda: la.matrix_transpose(la.zeros(3)), ValueError, "at least 2-dimensional, but it is 1"),
    (lambda: la.swapaxes(x23, 0, 2), ValueError, "swapaxes axis2: axis 2 is out of bounds"),
    (lambda: la.moveaxis(x23, (0, 1), (0,)), ValueError, "same number of elements"),
    (lambda: la.moveaxis(x23, (0, 0), (0, 1)), ValueError, "repeated axis in `source`"),
    (lambda: la.expand_dims(x23, 3), ValueError, "axis 3 is out of bounds for array of dimension 3"),
    (lambda: la.expand_dims(x23, (0, 0)), ValueError, "repeated axis"),
    (lambda: la.squeeze(x23, 0), ValueError,
     r"size not equal to one \(axis 0 has size 2 in shape \(2, 3\)\)"),
    (lambda: la.squeeze(x23, 5), ValueError, "out of bounds"),
    (lambda: la.broadcast_to(la.zeros(3), (2, 2)), ValueError,
     r"shape \(3,\) to the requested shape \(2, 2\)"),
    (lambda: la.broadcast_to(la.zeros(3), (-1, 3)), ValueError, "non-negative"),
    (lambda: la.broadcast_arrays(la.zeros(3), la.zeros(2)), ValueError, r"\(3,\) \(2,\)"),
    (lambda: la.concatenate([x23, la.zeros((2, 2))]), ValueError,
     r"along dimension 1, the array at index 0 has size 3 and the array at index 1 has size 2; "
     r"shapes: \(2, 3\), \(2, 2\)"),
    (lambda: la.concatenate([x23, la.zeros(2)]), ValueError, r"same number of dimensions.*\(2, 3\), \(2,\)"),
    (lambda: la.concatenate([la.asarray(1), la.asarray(2)]), ValueError, "zero-dimensional"),
    (lambda: la.concatenate([]), ValueError, "need at least one array"),
    (lambda: la.concatenate([x23], axis=2), ValueError, "out of bounds"),
    (lambda: la.concatenate([x23, x23], dtype=np.int64), TypeError,
     r"Cannot cast array data from dtype\('float64'\) to dtype\('int64'\) according to the rule 'same_kind'"),
    (lambda: la.concatenate([x23], casting="bogus"), ValueError, "casting must be one of"),
    (lambda: la.concatenate([x23], out=np.zeros((2, 3))), TypeError, "out="),
    (lambda: la.concatenate(iter([x23])), TypeError, "sequence"),
    (lambda: la.stack([x23, la.zeros((3, 2))]), ValueError, r"same shape, got \(2, 3\), \(3, 2\)"),
    (lambda: la.stack([]), ValueError, "need at least one array to stack"),
    (lambda: la.vstack(item for item in [x23]), TypeError, "sequence"),
    (lambda: la.split(la.zeros(5), 2), ValueError,
     r"does not result in an equal division \(5 elements into 2"),
    (lambda: la.array_split(la.zeros(5), 0), ValueError, "number sections must be larger than 0"),
    (lambda: la.split(la.asarray(1.0), 1), ValueError, "0-d"),
    (lambda: la.unstack(la.asarray(3)), ValueError, "at least 1-d"),
    (lambda: la.flip(x23, 2), ValueError, "out of bounds"),
    (lambda: la.roll(x23, [[1]], axis=0), ValueError, "scalars or 1D sequences"),
    (lambda: la.tile(la.zeros(3), -1), ValueError, "negative dimensions"),
    (lambda: la.tile(la.zeros(3), 2.5), TypeError, "reps"),
    (lambda: la.repeat(la.zeros(3), [1, 2]), ValueError, r"shape \(3,\) \(2,\)"),
    (lambda: la.repeat(la.zeros(3), -1), ValueError, "negative dimensions"),
    (lambda: la.repeat(la.zeros(3), [1, -2, 1]), ValueError, "may not contain negative values"),
    (lambda: la.repeat(la.zeros(3), np.array([1.0, 2.0, 1.0])), TypeError, "according to the rule 'safe'"),
    (lambda: la.pad(la.zeros(3), 1, mode="mean"), NotImplementedError, "'mean'"),
    (lambda: la.pad(la.zeros(3), 1, mode="reflect", reflect_type="odd"), NotImplementedError, "'odd'"),
    (lambda: la.pad(la.zeros((0, 2)), 1, mode="edge"), ValueError, "can't extend empty axis 0"),
    (lambda: la.pad(la.zeros(3), 1, mode="bogus"), ValueError, "mode 'bogus' is not supported"),
    (lambda: la.pad(la.zeros(3), -1), ValueError, "can't contain negative values"),
    (lambda: la.pad(la.zeros(3), 1.5), TypeError, "integral type"),
    (lambda: la.pad(la.zeros(3), 1, bogus=3), ValueError,
     "unsupported keyword arguments for mode 'constant'"),
    (lambda: la.pad(la.zeros(3), ((1, 2), (3, 4))), ValueError, r"\(2, 2\) cannot be broadcast to \(1, 2\)"),
    (lambda: la.diff(la.asarray(3)), ValueError, "at least one dimensional"),
    (lambda: la.diff(x23, n=-1), ValueError, "order must be non-negative but got -1"),
    (lambda: la.astype([1, 2], np.int8), TypeError, "should be an array"),
    (lambda: la.astype(x23, "not a dtype"), TypeError, "not a dtype"),
]


@pytest.mark.parametrize("call, error, message", ERRORS)
def test_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


# -- laziness and graph size ---------------------------------------------------------------------
def graph_size(array) -> int:
    return len(post_order([array._node]))


def test_layout_ops_keep_the_graph_constant_size():
    base = la.asarray(np.arange(24.0)) + 1
    before = graph_size(base)
    reshaped = la.reshape(base, (2, 3, 4))
    assert graph_size(reshaped) == before + 1
    for result in (
        la.transpose(reshaped), la.swapaxes(reshaped, 0, 1), la.squeeze(la.expand_dims(reshaped, 0)),
        la.broadcast_to(reshaped, (5, 2, 3, 4)), la.flip(reshaped), la.tile(reshaped, (1000, 1000)),
        la.repeat(reshaped, 1000, axis=1), la.ravel(reshaped, order="F"),
    ):
        assert graph_size(result) <= before + 4, result
    assert la.tile(reshaped, (1000, 1000)).shape == (2, 3000, 4000)


def test_functions_build_graphs_without_evaluating():
    x = la.asarray(np.arange(12.0).reshape(3, 4)) * 2
    results = [
        la.reshape(x, -1), la.transpose(x), la.concatenate([x, x]), la.stack([x, x]), la.split(x, 3)[0],
        la.roll(x, 1), la.tile(x, 2), la.repeat(x, [1, 2, 3], axis=0), la.pad(x, 1), la.diff(x),
        la.astype(x, np.int8), la.flip(x), la.broadcast_to(x, (2, 3, 4)),
    ]
    assert not x.is_evaluated
    assert not any(result.is_evaluated for result in results)


def test_lazy_repeats_are_evaluated_for_the_output_length():
    counts = la.asarray(np.array([0, 2, 1])) + 0
    assert_same(la.repeat(la.asarray([1.0, 2.0, 3.0]), counts), np.repeat([1.0, 2.0, 3.0], [0, 2, 1]))


def test_pad_corners_take_the_last_axis_value_like_numpy():
    values = np.arange(6, dtype=np.int32).reshape(2, 3)
    widths, constants = ((1, 2), (2, 1)), ((7, 8), (5, 6))
    expected = np.pad(values, widths, constant_values=constants)
    assert_same(la.pad(la.asarray(values), widths, constant_values=constants), expected)
    assert_same(la.pad(la.asarray(values), {1: (1, 0)}), np.pad(values, {1: (1, 0)}))


@settings(deadline=None)
@given(st.sampled_from(["edge", "wrap", "reflect", "symmetric"]), st.sampled_from(ALL_DTYPES), st.data())
def test_pad_modes_repeating_the_array_match_numpy(mode, dtype, data):
    # Widths beyond the axis size too: NumPy repeats the reflection (or wrap) period.
    values = data.draw(arrays(dtype, hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4)))
    width = data.draw(st.one_of(st.integers(0, 9), st.tuples(st.integers(0, 6), st.integers(0, 6)),
                                st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)),
                                         min_size=values.ndim, max_size=values.ndim)))
    assert_same(la.pad(la.asarray(values), width, mode=mode), np.pad(values, width, mode=mode))


def test_astype_copy_false_returns_the_same_array():
    x = la.asarray([1, 2])
    assert la.astype(x, x.dtype, copy=False) is x
    assert la.astype(x, x.dtype) is not x


# --- float -> integer casts of NaN, inf and out-of-range values ------------------------------------
# C leaves them undefined; lazyarr gives NumPy's x86-64 values on every backend (README,
# Differences from NumPy). NumPy's float -> uint32 loop is itself layout-dependent (its
# vectorized body and its scalar loop for strided inputs and array tails differ), so NumPy's
# answer here is its vectorized one: each value repeated 64 times, read from the middle.

CAST_SOURCES = [np.dtype(name) for name in ("float16", "float32", "float64")]
CAST_TARGETS = [np.dtype(name) for name in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")]


def _cast_edges(source):
    """NaN (both signs), infinities, -0.0, and every integer width's limits with neighbours."""
    values = [np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.5, -0.5, -1.0]
    for bits in (8, 16, 31, 32, 63, 64):
        for limit in (2.0**bits, -(2.0**bits)):
            values += [limit, limit - 1, limit + 1, limit - 0.5, limit + 0.5]
    with np.errstate(over="ignore"):
        exact = np.array(values).astype(source)
    return list(exact) + [np.nextafter(value, direction, dtype=source)
                          for value in exact for direction in (np.inf, -np.inf)]


def numpy_vectorized_cast(values, target):
    with np.errstate(invalid="ignore", over="ignore"):
        return np.repeat(values.reshape(-1), 64).astype(target)[32::64].reshape(values.shape)


@pytest.mark.parametrize("target", CAST_TARGETS, ids=str)
@pytest.mark.parametrize("source", CAST_SOURCES, ids=str)
@settings(max_examples=max(settings.default.max_examples // 2, 1))  # ci: 20 arrays of <= 36 values
@given(data=st.data())
def test_float_to_integer_casts_give_numpys_x86_64_values(source, target, data):
    edges = st.sampled_from(_cast_edges(source)).map(source.type)
    ordinary = hnp.from_dtype(source, allow_nan=True, allow_infinity=True)
    values = data.draw(hnp.arrays(source, hnp.array_shapes(min_dims=0, max_dims=2, max_side=6),
                                  elements=st.one_of(edges, ordinary)), label="values")
    expected = numpy_vectorized_cast(values, target)
    if target != np.uint32 or source == np.float16:  # NumPy agrees with itself on these
        with np.errstate(invalid="ignore", over="ignore"):
            np.testing.assert_array_equal(expected, values.astype(target), strict=True)
    previous = la.get_backend_name()
    try:
        for backend in ("cpu", "interpreter"):
            la.set_backend(backend)
            assert_same(la.astype(la.asarray(values), target), expected)
            negated = la.astype(-la.asarray(values), target)  # a computed operand, fused on the CPU
            assert_same(negated, numpy_vectorized_cast(-values, target))
    finally:
        la.set_backend(previous)


def test_float_to_uint32_differs_from_numpys_scalar_loop():
    """README, Differences from NumPy: NumPy's scalar loop (0-d and strided inputs, array tails)
    converts to uint32 through int64 (2**32 + 5 -> 5, NaN -> 0); lazyarr always gives its
    vectorized loop's value (0 and 2**31)."""
    values = np.array([2.0**32 + 5, np.nan])
    with np.errstate(invalid="ignore"):
        assert [int(np.array(value).astype(np.uint32)) for value in values] == [5, 0]
    assert la.astype(la.asarray(values), la.uint32).tolist() == [0, 2**31]
    assert la.astype(la.asarray(values), la.uint32).tolist() == numpy_vectorized_cast(values, np.uint32).tolist()
