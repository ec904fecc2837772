"""Recording's memoized fast paths make exactly what the general path makes.

A loop records the same op on the same operand signature over and over, so elementwise ops
remember how `apply` built a node (direct_recording.py, `DIRECT`) and the intern table
keys operands by id. These tests pin that the fast path is an optimization only: the same
interned node as the general path, the same values as NumPy, and every check the general path
makes (an int out of range, an int compared out of range, -0.0 and NaN constants) still made
after the signature was memoized.
"""

from __future__ import annotations

import gc
import operator

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from lazyarr.frontend import direct_recording, elementwise, manipulation_joining
from lazyarr.hlo.instruction import interned_count, make
from tests.strategies import arrays

_OPERATORS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.lt, operator.eq,
              operator.and_, operator.floordiv]
_DTYPES = [np.dtype(name) for name in ("bool", "int8", "int32", "uint8", "int64", "float32", "float64", "complex64")]


def _numpy_or_error(function, *operands):
    try:
        with np.errstate(all="ignore"):
            return function(*operands), None
    except (TypeError, OverflowError, ValueError) as error:
        return None, type(error)


@given(data=st.data(), op=st.sampled_from(_OPERATORS), dtype=st.sampled_from(_DTYPES),
       scalar=st.one_of(st.integers(-300, 300), st.sampled_from([2**40, -2**63, 0.0, -0.0, 1.5, np.nan, np.inf]),
                        st.floats(allow_nan=True, allow_infinity=True)),
       scalar_first=st.booleans())
def test_array_scalar_ops_repeat_like_numpy(data, op, dtype, scalar, scalar_first):
    # Twice: the first call may fill the memo, the second takes it; both must equal NumPy,
    # and the nodes of the two calls must be one interned node.
    value = data.draw(arrays(dtype, shape=st.sampled_from([(), (3,), (2, 3)])))
    operands = (scalar, value) if scalar_first else (value, scalar)
    expected, error = _numpy_or_error(op, *operands)
    lazy = la.asarray(value)
    lazy_operands = (scalar, lazy) if scalar_first else (lazy, scalar)
    results = []
    for _ in range(2):
        if error is not None:
            with pytest.raises(error):
                op(*lazy_operands)
            continue
        try:
            results.append(op(*lazy_operands))
        except TypeError:
            pytest.skip("a dtype pair lazyarr refuses with TypeError (tested elsewhere)")
    if error is not None:
        return
    assert results[0]._node is results[1]._node
    actual = np.asarray(results[1])
    assert actual.dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(actual, expected)


_SCALAR_DTYPES = _DTYPES + [np.dtype(name) for name in ("float16", "uint64", "int16", "complex128")]


@st.composite
def _numpy_scalars(draw):
    """A NumPy scalar of any supported dtype, edge values included (zeros of both signs, NaN,
    infinities, integer extremes)."""
    dtype = draw(st.sampled_from(_SCALAR_DTYPES))
    if dtype.kind == "b":
        return dtype.type(draw(st.booleans()))
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return dtype.type(draw(st.one_of(st.sampled_from([info.min, info.max, 0, 1]),
                                         st.integers(int(info.min), int(info.max)))))
    edges = st.sampled_from([0.0, -0.0, np.nan, np.inf, -np.inf, 0.5, -1.0, 1e30])
    real = st.one_of(edges, st.floats(-1e6, 1e6, width=32))
    if dtype.kind == "c":
        return dtype.type(complex(draw(real), draw(real)))
    with np.errstate(over="ignore"):
        return dtype.type(draw(real))


@given(data=st.data(), op=st.sampled_from(_OPERATORS), dtype=st.sampled_from(_DTYPES),
       scalar=_numpy_scalars(), scalar_first=st.booleans())
def test_array_numpy_scalar_ops_repeat_like_numpy(data, op, dtype, scalar, scalar_first):
    """A NumPy scalar is strongly typed (NEP 50): the result's dtype and values are NumPy's, by the
    operator on either side (the scalar's own operator hands the lazy array to __array_ufunc__)
    and by the function, and a repeated call makes the same interned node (the direct path)."""
    value = data.draw(arrays(dtype, shape=st.sampled_from([(), (3,), (2, 3)])))
    operands = (scalar, value) if scalar_first else (value, scalar)
    expected, error = _numpy_or_error(op, *operands)
    lazy = la.asarray(value)
    lazy_operands = (scalar, lazy) if scalar_first else (lazy, scalar)
    if error is not None:
        with pytest.raises((error, TypeError)):
            op(*lazy_operands)
        return
    try:
        results = [op(*lazy_operands) for _ in range(2)]
    except TypeError:
        pytest.skip("a dtype pair lazyarr refuses with TypeError (tested elsewhere)")
    assert results[0]._node is results[1]._node
    actual = np.asarray(results[1])
    assert actual.dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(actual, expected)


@given(data=st.data(), op=st.sampled_from(_OPERATORS), dtype=st.sampled_from(_DTYPES),
       shapes=st.sampled_from([((3,), (3,)), ((2, 3), (3,)), ((1, 3), (2, 1)), ((), (2, 2)), ((0,), (1,))]))
def test_array_array_ops_repeat_like_numpy(data, op, dtype, shapes):
    left = data.draw(arrays(dtype, shape=st.just(shapes[0])))
    right = data.draw(arrays(data.draw(st.sampled_from(_DTYPES)), shape=st.just(shapes[1])))
    expected, error = _numpy_or_error(op, left, right)
    a, b = la.asarray(left), la.asarray(right)
    if error is not None:
        for _ in range(2):
            with pytest.raises(error):
                op(a, b)
        return
    try:
        first = op(a, b)
    except TypeError:
        pytest.skip("a dtype pair lazyarr refuses with TypeError (tested elsewhere)")
    second = op(a, b)
    assert first._node is second._node
    np.testing.assert_array_equal(np.asarray(second), expected)
    assert np.asarray(second).dtype == expected.dtype


def test_fast_path_node_is_the_general_paths_node():
    x = la.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = la.asarray(np.arange(3, dtype=np.float32))
    for _ in range(2):  # the second round takes the memo
        assert elementwise.binary("add", x, y)._node is elementwise.apply("add", x, y)._node
        assert elementwise.binary("multiply", 0.25, x)._node is elementwise.apply("multiply", 0.25, x)._node
        assert elementwise.unary("exp", x)._node is elementwise.apply("exp", x)._node


def test_memoized_int_signature_still_refuses_an_out_of_range_int():
    x = la.asarray(np.arange(4, dtype=np.int8))
    np.testing.assert_array_equal(np.asarray(x + 1), np.arange(4, dtype=np.int8) + 1)  # memoized
    with pytest.raises(OverflowError):
        x + 300  # noqa: B018  (NumPy 2 refuses a Python int out of int8's range)
    # A comparison memoized in range still compares an int out of range by value, as NumPy does.
    np.testing.assert_array_equal(np.asarray(x < 2), np.arange(4) < 2)
    np.testing.assert_array_equal(np.asarray(x < 300), np.ones(4, bool))
    np.testing.assert_array_equal(np.asarray(x == -300), np.zeros(4, bool))


def test_memoized_float_signature_keeps_negative_zero_and_nan_apart():
    x = la.asarray(np.ones(3, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(x * 0.0), np.zeros(3, np.float32))
    negative = np.asarray(x * -0.0)
    assert np.all(np.signbit(negative))
    assert np.all(np.isnan(np.asarray(x * np.nan)))
    np.testing.assert_array_equal(np.asarray(x * 0.5), np.full(3, 0.5, np.float32))


def test_intern_table_shares_equal_nodes_and_frees_dead_ones():
    x = la.asarray(np.ones(5, np.float32))
    baseline = interned_count()
    first = make("add", [x._node, x._node])
    assert make("add", [x._node, x._node]) is first  # structural equality is identity
    del first
    gc.collect()
    for _ in range(10_000):  # dead entries are swept as the table grows: no unbounded table
        make("negate", [make("add", [x._node, x._node])])
    assert interned_count() <= baseline + 5


# -- graph templates (hlo/template.py): reductions, mean and matmul replay a recorded graph ----
_REDUCTIONS = ["sum", "prod", "max", "min", "mean", "argmax", "argmin", "any", "all"]


@given(data=st.data(), name=st.sampled_from(_REDUCTIONS), dtype=st.sampled_from(_DTYPES),
       shape=st.sampled_from([(), (3,), (2, 3), (2, 0), (2, 3, 4)]), keepdims=st.sampled_from([None, False, True]))
def test_templated_reductions_make_the_general_paths_nodes(data, name, dtype, shape, keepdims):
    value = data.draw(arrays(dtype, shape=st.just(shape)))
    ndim = len(shape)
    axis = data.draw(st.one_of(st.none(), st.integers(-ndim, ndim - 1) if ndim else st.none(),
                               st.just(tuple(range(ndim)))))
    if name in ("argmax", "argmin") and type(axis) is tuple:
        axis = None
    kwargs = {} if keepdims is None else {"keepdims": keepdims}
    numpy_function = getattr(np, name)
    try:
        with np.errstate(all="ignore"):
            expected = numpy_function(value, axis=axis, **kwargs)
    except (ValueError, TypeError) as error:
        with pytest.raises(type(error)):
            getattr(la, name)(la.asarray(value), axis=axis, **kwargs)
        return
    lazy = la.asarray(value)
    first = getattr(la, name)(lazy, axis=axis, **kwargs)  # records the template
    second = getattr(la, name)(lazy, axis=axis, **kwargs)  # replays it
    assert first._node is second._node
    actual = np.asarray(second)
    assert actual.shape == np.shape(expected) and actual.dtype == np.asarray(expected).dtype
    if name in ("mean", "sum", "prod") and dtype.kind in "fc":
        # Reassociated float sums (lazyarr's blocks vs NumPy's pairwise order): a few ULPs of the
        # magnitudes summed, hence the scale of the largest term.
        finite = np.abs(value[np.isfinite(value)])
        scale = np.max(finite, initial=1.0) * max(value.size, 1)
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=float(np.finfo(dtype).eps) * 8 * scale)
    else:
        np.testing.assert_array_equal(actual, expected)


@given(data=st.data(), shapes=st.sampled_from([((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                                                 ((5, 2, 3), (3, 4)), ((2, 3), (4, 5))]),
       dtype=st.sampled_from([np.dtype("float64"), np.dtype("int32"), np.dtype("complex128")]))
def test_templated_matmul_makes_the_general_paths_nodes(data, shapes, dtype):
    left = data.draw(arrays(dtype, shape=st.just(shapes[0]), allow_edge=False))
    right = data.draw(arrays(dtype, shape=st.just(shapes[1]), allow_edge=False))
    a, b = la.asarray(left), la.asarray(right)
    if shapes[0][-1] != shapes[1][-2 if len(shapes[1]) > 1 else -1]:
        for _ in range(2):  # a shape mismatch raises every time: nothing is remembered
            with pytest.raises(ValueError):
                a @ b  # noqa: B018
        return
    first, second = a @ b, a @ b
    assert first._node is second._node
    with np.errstate(all="ignore"):  # huge drawn values overflow in NumPy and lazyarr alike
        np.testing.assert_allclose(np.asarray(second), left @ right, rtol=1e-12)


def test_a_graph_reading_another_array_is_not_a_template():
    from lazyarr.hlo import template

    other = la.asarray(np.ones(3, np.float32))
    x = la.asarray(np.arange(3, dtype=np.float32))
    assert template.record(lambda node: make("add", [node, other._node]), (x._node,)) is None
    recorded = template.record(lambda node: make("negate", [make("exp", [node])]), (x._node,))
    assert recorded(x._node) is make("negate", [make("exp", [x._node])])


@given(data=st.data(), dtypes=st.lists(st.sampled_from(_DTYPES), min_size=1, max_size=4),
       shape=st.sampled_from([(), (3,), (2, 3), (0, 2)]), axis=st.integers(-4, 3), as_tuple=st.booleans())
def test_templated_stack_makes_the_general_paths_nodes(data, dtypes, shape, axis, as_tuple):
    """`stack` of lazy arrays replays its first call's graph: the same node as the general
    path (a list holding a NumPy array takes it), NumPy's values, dtype and errors every time."""
    values = [data.draw(arrays(dtype, shape=st.just(shape))) for dtype in dtypes]
    if data.draw(st.booleans()) and len(values) > 1:  # a mismatched shape: ValueError both times
        values[-1] = values[-1].reshape(-1) if len(shape) > 1 else np.zeros(shape + (2,), values[-1].dtype)
    try:
        expected = np.stack(values, axis=axis)
    except (ValueError, TypeError) as error:
        lazy = [la.asarray(value) for value in values]
        for _ in range(2):
            with pytest.raises(type(error)):
                la.stack(tuple(lazy) if as_tuple else lazy, axis=axis)
        return
    lazy = [la.asarray(value) for value in values]
    first = la.stack(tuple(lazy) if as_tuple else lazy, axis=axis)  # records the template
    key = (axis, *[(array._node.shape, array._node.dtype) for array in lazy])
    assert manipulation_joining._STACKS._templates.get(key) is not None  # the fast path ran (and recorded)
    second = la.stack(lazy, axis=axis)  # replays it
    general = la.stack([*lazy[:-1], values[-1]], axis=axis)  # a NumPy operand: the general path
    assert first._node is second._node
    actual = np.asarray(second)
    assert actual.dtype == expected.dtype
    np.testing.assert_array_equal(actual, expected)
    np.testing.assert_array_equal(np.asarray(general), expected)


@given(data=st.data(), dtype=st.sampled_from([np.dtype("float32"), np.dtype("float64"), np.dtype("complex64")]),
       exponent=st.one_of(st.sampled_from([2, 3, -1, 0, 0.5, -0.5, 2.0, np.nan, np.inf]), st.floats(-4, 4)))
def test_float_powers_repeat_like_numpy(data, dtype, exponent):
    """`power(x, p)` of a float array takes the memoized path (integer powers do not: they check
    the exponent's sign every call); both calls are one node with NumPy's values."""
    value = data.draw(arrays(dtype, shape=st.sampled_from([(), (3,), (2, 3)])))
    with np.errstate(all="ignore"):
        expected = np.power(value, exponent)
    lazy = la.asarray(value)
    direct_recording.DIRECT.clear()  # (a bounded memo: a long session may have filled it)
    first, second = la.power(lazy, exponent), la.power(lazy, exponent)
    assert first._node is second._node
    # The memo holds the signature (a NaN exponent or an int past 2**53 takes the general path).
    if exponent == exponent:
        assert ("power", lazy.dtype, lazy.shape, type(exponent)) in direct_recording.DIRECT
    actual = np.asarray(second)
    assert actual.dtype == expected.dtype
    # Compiled pow (libmvec's, within 4 ULP; x ** 2 as x * x) against NumPy's: a few ULPs, by
    # magnitude (not by sign of zero: exact NumPy fast paths are tested in test_elementwise.py).
    np.testing.assert_allclose(actual, expected, rtol=2e-6 if dtype != np.float64 else 1e-13, equal_nan=True)


def test_integer_power_refuses_a_negative_exponent_after_a_memoized_call():
    x = la.asarray(np.arange(1, 4, dtype=np.int32))
    np.testing.assert_array_equal(np.asarray(x ** 2), np.arange(1, 4, dtype=np.int32) ** 2)
    np.testing.assert_array_equal(np.asarray(x ** 2), np.arange(1, 4, dtype=np.int32) ** 2)
    for _ in range(2):
        with pytest.raises(ValueError, match="negative integer powers"):
            x ** -1  # noqa: B018


@given(st.data(), st.sampled_from(_DTYPES),
       st.lists(st.one_of(st.booleans(), st.integers(-300, 300), st.floats(allow_nan=True, allow_infinity=True)),
                min_size=1, max_size=12))
def test_scalar_writes_repeat_like_numpy(data, dtype, values):
    # `x[i] = value` memoizes the written constant per (type, value, dtype): repeated and new
    # values, -0.0 and NaN (never memoized), and NumPy's conversion errors on every write.
    target = np.zeros(len(values), dtype)
    lazy = la.asarray(target.copy())
    for index, value in enumerate(values * 2):
        index %= len(values)
        try:
            with np.errstate(all="ignore"):
                target[index] = value
        except (OverflowError, ValueError, TypeError) as error:
            with pytest.raises(type(error)):
                lazy[index] = value
            continue
        with np.errstate(all="ignore"):  # (NumPy's own cast warnings, as for `target` above)
            lazy[index] = value
    np.testing.assert_array_equal(np.asarray(lazy).view(np.uint8), target.view(np.uint8))


def test_a_repeated_scalar_write_reuses_its_constant():
    x = la.zeros(4)
    x[0] = 7.5
    first = x._node.operands[1]
    x[2] = 7.5
    assert x._node.operands[1] is first  # one constant node for the value, not one per write
    np.testing.assert_array_equal(np.asarray(x), [7.5, 0.0, 7.5, 0.0])


@given(data=st.data(), dtype=st.sampled_from(_DTYPES), shape=st.sampled_from([(), (5,), (3, 4), (0, 3)]),
       shift=st.integers(-9, 9), axis=st.sampled_from([None, 0, 1, -1, 2]))
def test_templated_roll_makes_the_general_paths_nodes(data, dtype, shape, shift, axis):
    """`roll` with an int shift and an int (or no) axis replays its first call's graph on new
    operands: the same node as the general path (a NumPy integer shift takes it), NumPy's values
    and errors every time."""
    first_values, second_values = (data.draw(arrays(dtype, shape=st.just(shape))) for _ in range(2))
    try:
        expected = np.roll(second_values, shift, axis=axis)
    except (ValueError, TypeError, np.exceptions.AxisError) as error:
        for _ in range(2):
            with pytest.raises(type(error)):
                la.roll(la.asarray(first_values), shift, axis=axis)
        return
    la.roll(la.asarray(first_values), shift, axis=axis)  # records the template
    second = la.asarray(second_values)
    replayed = la.roll(second, shift, axis=axis)
    general = la.roll(second, np.int64(shift), axis=axis)
    assert replayed._node is general._node
    actual = np.asarray(replayed)
    assert actual.dtype == expected.dtype
    np.testing.assert_array_equal(actual, expected)


_SCALARS = st.one_of(st.sampled_from([0.0, -0.0, float("nan"), float("inf"), 0, 1, -1, 300, True, False, 2.5, 1j]),
                     st.floats(-10, 10), st.integers(-5, 5))


@given(data=st.data(), dtype=st.sampled_from(_DTYPES), shape=st.sampled_from([(), (4,), (2, 3), (0, 3)]),
       x_scalar=st.booleans(), y=_SCALARS)
def test_templated_where_makes_the_general_paths_nodes(data, dtype, shape, x_scalar, y):
    """`where` on lazy arrays and Python scalars replays its first call's graph: the general
    path's node (templated_calls.replayed), NumPy's values, dtype and errors every time,
    signed zeros and NaN fills kept apart."""
    condition = data.draw(arrays(np.dtype("bool"), shape=st.just(shape)))
    x = y if x_scalar else data.draw(arrays(dtype, shape=st.just(shape)))
    other = data.draw(arrays(dtype, shape=st.just(shape)))
    try:
        expected = np.where(condition, x, other)
    except (ValueError, TypeError, OverflowError) as error:
        for _ in range(2):
            with pytest.raises(type(error)):
                la.where(la.asarray(condition), x if x_scalar else la.asarray(x), la.asarray(other))
        return
    lazy = [la.asarray(condition), x if x_scalar else la.asarray(x), la.asarray(other)]
    la.where(la.asarray(condition), lazy[1] if x_scalar else la.asarray(x), la.asarray(other))  # records
    replayed = la.where(*lazy)
    assert replayed._node is elementwise._where(*lazy)._node
    actual = np.asarray(replayed)
    assert actual.dtype == expected.dtype
    np.testing.assert_array_equal(actual, expected)  # (NaN equal; -0.0 checked below)
    if actual.dtype.kind in "fc":
        for part in (np.real, np.imag):
            np.testing.assert_array_equal(np.signbit(part(actual)), np.signbit(part(expected)))


@given(data=st.data(), dtype=st.sampled_from([np.dtype(name) for name in ("int8", "uint8", "int64", "float32",
                                                                          "float64")]),
       low=st.one_of(st.none(), _SCALARS), high=st.one_of(st.none(), _SCALARS))
def test_templated_clip_makes_the_general_paths_nodes(data, dtype, low, high):
    values = [data.draw(arrays(dtype, shape=st.just((5,)))) for _ in range(2)]
    try:
        expected = np.clip(values[1], low, high)
    except (ValueError, TypeError, OverflowError) as error:
        for value in values:
            with pytest.raises(type(error)):
                la.clip(la.asarray(value), low, high)
        return
    la.clip(la.asarray(values[0]), low, high)  # records
    second = la.asarray(values[1])
    replayed = la.clip(second, low, high)
    assert replayed._node is elementwise._clip(second, low, high)._node
    actual = np.asarray(replayed)
    assert actual.dtype == expected.dtype
    np.testing.assert_array_equal(actual, expected)


@given(start=_SCALARS, stop=st.one_of(st.none(), st.integers(-5, 40), st.floats(-5, 40)),
       step=st.sampled_from([None, 1, 2, -1, 0.5, 3]), dtype=st.sampled_from([None, "int32", "float32", "float64"]))
def test_templated_arange_matches_numpy_every_call(start, stop, step, dtype):
    arguments = (start, stop, step) if step is not None else (start, stop)
    try:
        with np.errstate(all="ignore"):
            expected = np.arange(*arguments, dtype=dtype) if stop is not None else np.arange(start, dtype=dtype)
    except (ValueError, TypeError, ZeroDivisionError, OverflowError) as error:
        for _ in range(2):
            with pytest.raises((type(error), ValueError, TypeError)):
                la.arange(*arguments, dtype=dtype) if stop is not None else la.arange(start, dtype=dtype)
        return
    if expected.size > 10_000:
        return
    for _ in range(2):  # the first call records, the second replays
        actual = np.asarray(la.arange(*arguments, dtype=dtype) if stop is not None else la.arange(start, dtype=dtype))
        assert actual.dtype == expected.dtype and actual.shape == expected.shape
        np.testing.assert_array_equal(actual, expected)


def test_templated_creation_diff_and_outer_repeat_like_numpy():
    rng = np.random.default_rng(0)
    for _ in range(2):  # the first call records, the second replays
        assert la.zeros((2, 3), dtype="int8").tolist() == np.zeros((2, 3), np.int8).tolist()
        assert la.ones(3).dtype == np.float64 and la.ones(3).tolist() == [1.0, 1.0, 1.0]
        with pytest.raises(ValueError, match="negative dimensions"):
            la.zeros(-1)
        with pytest.raises(TypeError):  # equal to (2, 3) as a key, still NumPy's TypeError
            la.zeros((2.0, 3))
        for shape, axis, n in [((7,), -1, 1), ((3, 4), 0, 2), ((3, 4), 1, 3), ((2, 0), 0, 1)]:
            values = rng.standard_normal(shape)
            result = la.diff(la.asarray(values), n, axis)
            np.testing.assert_array_equal(np.asarray(result), np.diff(values, n, axis))
        left, right = rng.standard_normal(4).astype(np.float32), rng.standard_normal((2, 3))
        np.testing.assert_array_equal(np.asarray(la.outer(la.asarray(left), la.asarray(right))), np.outer(left, right))


def test_templated_calls_key_signed_zeros_and_nan_by_their_bits():
    # 0.0 == -0.0 and NaN != NaN as dict keys: a template recorded with one must not serve the other.
    condition = la.asarray(np.array([True, False, False]))
    x = la.asarray(np.array([1.0, 2.0, 3.0]))
    for fill in (0.0, -0.0, 0.0, float("nan"), -float("nan"), -0.0):
        result = np.asarray(la.where(condition, x, fill))
        expected = np.where(np.array([True, False, False]), np.array([1.0, 2.0, 3.0]), fill)
        np.testing.assert_array_equal(result, expected)
        np.testing.assert_array_equal(np.signbit(result), np.signbit(expected))
    for low in (-0.0, 0.0):
        np.testing.assert_array_equal(np.signbit(np.asarray(la.clip(x * 0.0 - 1.0, low, 1.0))), np.signbit(low))


@given(data=st.data(), dtype=st.sampled_from([np.dtype(name) for name in ("int32", "float32", "float64", "complex64")]),
       shape=st.sampled_from([(5,), (3, 4), (0, 3), (2, 3, 2)]),
       order=st.sampled_from([None, 1, 2, -1, 0, 3.5, float("inf"), "fro", "nuc", True]),
       axis=st.sampled_from([None, 0, -1, (0, 1), (1, 0)]), keepdims=st.booleans())
def test_templated_norm_repeats_like_numpy(data, dtype, shape, order, axis, keepdims):
    """linalg.norm replays per (type and value of ord, axis, keepdims): NumPy's values, dtype
    and errors on every call (ord=True equals 1 as a key, so the type joins it)."""
    values = [data.draw(arrays(dtype, shape=st.just(shape))) for _ in range(2)]
    try:
        with np.errstate(all="ignore"):
            expected = np.linalg.norm(values[1], order, axis, keepdims)
    except (ValueError, TypeError, np.linalg.LinAlgError) as error:
        for value in values:
            with pytest.raises((type(error), ValueError, TypeError)):
                la.linalg.norm(la.asarray(value), order, axis, keepdims)
        return
    la.linalg.norm(la.asarray(values[0]), order, axis, keepdims)  # records
    actual = np.asarray(la.linalg.norm(la.asarray(values[1]), order, axis, keepdims))
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    # Sums of squares in another order than NumPy's pairwise sum; SVD-based orders from LAPACK
    # or lazyarr's own: a few ulps of the largest magnitude.
    scale = np.nanmax(np.abs(values[1]), initial=0.0).astype(np.float64) * max(values[1].size, 1)
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=scale * 1e-6)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64", "bool", "int8"])
def test_squaring_by_the_operator_makes_squares_node(dtype):
    # float32/float64 `x ** 2` takes multiply's memoized path: it must be `square`'s very node.
    values = np.array([[-1.5, -0.0, 0.0], [3.0, np.inf, np.nan]]).astype(dtype)
    x = la.asarray(values) + la.zeros((), dtype=dtype) if dtype != "bool" else la.asarray(values)
    squared = elementwise.power(x, 2) if dtype == "int8" else elementwise.square(x)  # (NumPy's rule)
    assert (x ** 2)._node is squared._node
    with np.errstate(all="ignore"):
        expected = values ** 2
    actual = np.asarray(x ** 2)
    assert actual.dtype == expected.dtype
    np.testing.assert_array_equal(actual, expected)


@given(data=st.data(), dtype=st.sampled_from(_DTYPES), shape=st.sampled_from([(6,), (4, 3), (3, 2, 2)]),
       as_list=st.booleans(), index_dtype=st.sampled_from(["int64", "int8", "uint8", "intp"]))
def test_static_integer_indices_of_an_evaluated_array_read_as_numpy(data, dtype, shape, as_list, index_dtype):
    """`x[[i, j]]` / `x[indices]` of an evaluated array is NumPy's advanced indexing of its buffer
    (indexing._host_integer_selection): NumPy's values, dtype and shape, an IndexError out of
    range, and a copy: writing the result leaves `x` as it was."""
    values = data.draw(arrays(dtype, shape=st.just(shape)))
    positions = data.draw(hnp.arrays(np.dtype(index_dtype), st.sampled_from([(), (0,), (1,), (3,), (2, 2)]),
                                     elements=st.integers(-shape[0] - 1 if index_dtype[0] == "i" else 0, shape[0])))
    key = positions.tolist() if as_list and positions.ndim else positions  # (a 0-d list would be an int: a view)
    x = la.asarray(values)
    x.eval()
    try:
        expected = values[key]
    except IndexError:
        with pytest.raises(IndexError):
            x[key]
        return
    result = x[key]
    actual = np.asarray(result)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    np.testing.assert_array_equal(actual, expected)
    if result.size and result.ndim:
        result[0] = values.flat[0]  # the result owns its value (also for a 0-d index array, as NumPy's)
        np.testing.assert_array_equal(np.asarray(x), values)


@given(fill=_SCALARS, shape=st.sampled_from([3, (2, 3), (0, 2), ()]),
       dtype=st.sampled_from([None, "int8", "float32", "complex64", "bool"]))
def test_templated_full_and_eye_repeat_like_numpy(fill, shape, dtype):
    """full (Python scalar fills) and eye replay per exact-typed arguments: NumPy's values,
    dtype and errors on every call; True, 1 and 1.0 and the zeros' signs kept apart."""
    with np.errstate(all="ignore"):  # (NaN or inf into an integer dtype: NumPy's cast warning, both sides)
        _check_full_and_eye(fill, shape, dtype)


def _check_full_and_eye(fill, shape, dtype):
    try:
        expected = np.full(shape, fill, dtype=dtype)
    except (ValueError, TypeError, OverflowError) as error:
        for _ in range(2):
            with pytest.raises((type(error), ValueError, TypeError, OverflowError)):
                la.full(shape, fill, dtype=dtype)
        return
    for _ in range(2):  # the first call records, the second replays
        actual = np.asarray(la.full(shape, fill, dtype=dtype))
        assert actual.dtype == expected.dtype and actual.shape == expected.shape
        np.testing.assert_array_equal(actual, expected)
        if actual.dtype.kind in "fc":
            np.testing.assert_array_equal(np.signbit(actual.real), np.signbit(expected.real))
    size = shape if type(shape) is int else 3
    for k in (0, 1, -2):
        for _ in range(2):
            np.testing.assert_array_equal(np.asarray(la.eye(size, k=k, dtype=dtype or float)),
                                          np.eye(size, k=k, dtype=dtype or float))
