"""Creation functions against NumPy: one table record per function, run with hypothesis.

Records hold the lazyarr function, its NumPy counterpart and a strategy drawing (positional
arguments, keyword arguments). Results are compared for shape, then dtype, then values:
exactly everywhere except linspace/logspace (see `RANGE_TOLERANCE`). Special cases
(copy semantics, errors, O(1) graphs, laziness) follow the table.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from lazyarr.frontend import creation
from lazyarr.hlo import post_order
from tests.strategies import ALL_DTYPES, arrays, shapes

small_shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
any_dtype = st.sampled_from(ALL_DTYPES)
maybe_dtype = st.one_of(st.none(), any_dtype)


def to_lazy(value):
    if isinstance(value, np.ndarray):
        return la.asarray(value)
    if isinstance(value, (list, tuple)):
        return type(value)(to_lazy(item) for item in value)
    return value


def assert_same(actual, expected, tolerance=None):
    """Container type, then per array: shape, dtype, values (exact unless `tolerance` given)."""
    if isinstance(expected, (list, tuple)):
        assert type(actual) is type(expected) and len(actual) == len(expected)
        for actual_item, expected_item in zip(actual, expected):
            assert_same(actual_item, expected_item, tolerance)
        return
    assert isinstance(actual, la.Array), type(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    values = np.asarray(actual)
    if tolerance is None:
        np.testing.assert_array_equal(values, expected, strict=True)
    else:
        tolerance(values, expected)


def quiet(function):
    """NumPy warns on overflowing casts (e.g. 1e10 into float16); lazyarr stays silent."""

    def call(*args, **kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return function(*args, **kwargs)

    return call


def outcome(function, args, kwargs):
    """('ok', result) or ('error', exception type): NumPy's refusals must be ours too."""
    try:
        return "ok", quiet(function)(*args, **kwargs)
    except (ValueError, TypeError, OverflowError, ZeroDivisionError) as error:
        return "error", type(error)


@dataclass(frozen=True)
class Record:
    name: str
    lazy: Callable
    reference: Callable
    arguments: st.SearchStrategy  # of (args, kwargs)
    tolerance: Callable | None = None


# -- argument strategies -------------------------------------------------------------------------
@st.composite
def asarray_arguments(draw):
    dtype = draw(any_dtype)
    value = draw(arrays(dtype, small_shapes))
    source = draw(st.sampled_from(["numpy", "list", "scalar"])) if value.ndim == 0 else draw(
        st.sampled_from(["numpy", "list"]))
    obj = {"numpy": value, "list": value.tolist(), "scalar": value[()]}[source]
    kwargs = {}
    if draw(st.booleans()) and dtype.kind not in "fc":
        kwargs["dtype"] = draw(st.sampled_from([d for d in ALL_DTYPES if np.can_cast(dtype, d)]))
    return (obj,), kwargs


@st.composite
def array_arguments(draw):
    (obj,), kwargs = draw(asarray_arguments())
    kwargs["ndmin"] = draw(st.integers(0, 4))
    return (obj,), kwargs


@st.composite
def filled_arguments(draw):
    shape = draw(st.one_of(small_shapes, st.integers(0, 4)))
    return (shape,), {"dtype": draw(maybe_dtype)}


@st.composite
def full_arguments(draw):
    shape = draw(small_shapes)
    dtype = draw(maybe_dtype)
    fill = draw(st.sampled_from(["int", "float", "bool", "array"]))
    if fill == "array":
        fill_shape = draw(hnp.broadcastable_shapes(shape, min_dims=0, max_dims=len(shape), min_side=0))
        aligned = shape[len(shape) - len(fill_shape):]
        fill_shape = tuple(size if size == want else 1 for size, want in zip(fill_shape, aligned))
        value = draw(arrays(draw(any_dtype), st.just(fill_shape), allow_edge=False))
    else:
        value = {"int": st.integers(0, 100), "float": st.floats(-100, 100), "bool": st.booleans()}[fill]
        value = draw(value)
    if dtype is not None and dtype.kind in "iub" and np.asarray(value).dtype.kind in "fc":
        # float -> int of NaN or out-of-range values is undefined behaviour in C: keep them small
        value = np.clip(np.asarray(value).real, 0, 100).round()
    return (shape, value), {"dtype": dtype}


@st.composite
def like_arguments(draw, with_fill=False):
    prototype = draw(arrays(draw(any_dtype), small_shapes))
    kwargs = {"dtype": draw(maybe_dtype)}
    if draw(st.booleans()):
        kwargs["shape"] = draw(small_shapes)
    args = (prototype,)
    if with_fill:
        target = kwargs["dtype"] or prototype.dtype
        args += (draw(st.integers(0, 100) if target.kind in "iub" else st.floats(-1e3, 1e3)),)
    return args, kwargs


def _scalar_in(kind):
    """A Python or NumPy scalar of a kind arange accepts, exactly representable as given."""
    if kind == "int":
        return st.integers(-50, 50)
    if kind == "float":
        return st.floats(-50, 50, allow_subnormal=False).map(lambda value: round(value, 3))
    return st.tuples(st.sampled_from([np.int8, np.int32, np.uint8, np.float16, np.float32, np.float64]),
                     st.integers(0, 50)).map(lambda pair: pair[0](pair[1]))


@st.composite
def arange_arguments(draw):
    kinds = st.sampled_from(["int", "float", "numpy"])
    start = draw(_scalar_in(draw(kinds)))
    stop = draw(st.one_of(st.none(), _scalar_in(draw(kinds))))
    step = draw(st.one_of(st.just(1), _scalar_in(draw(kinds)).filter(lambda value: value != 0)))
    low, high = (0.0, float(start)) if stop is None else (float(start), float(stop))
    assume(abs((high - low) / float(step)) < 400)
    kwargs = {"dtype": draw(st.one_of(st.none(), st.sampled_from([d for d in ALL_DTYPES if d != np.bool_])))}
    args = (start,) if stop is None and step == 1 else (start, stop, step)
    return args, kwargs


def bounds(limit: int, kinds):
    """linspace bounds: Python ints and floats, or small arrays of `kinds` (0-d included)."""
    return st.one_of(
        st.integers(-limit, limit),
        st.floats(-limit, limit),
        st.sampled_from(kinds).flatmap(
            lambda kind: hnp.arrays(kind, hnp.array_shapes(min_dims=0, max_dims=2, max_side=3),
                                    elements=st.integers(-min(limit, 60000), min(limit, 60000)).map(float))),
    )


LINSPACE_BOUNDS = bounds(10**6, [np.float16, np.float32, np.float64, np.int32, np.complex64])


@st.composite
def linspace_arguments(draw, bound=LINSPACE_BOUNDS):
    start, stop = draw(bound), draw(bound)
    try:
        ndim = len(np.broadcast_shapes(np.shape(start), np.shape(stop)))
    except ValueError:
        assume(False)
    kwargs = {
        "num": draw(st.integers(0, 12)),
        "endpoint": draw(st.booleans()),
        "dtype": draw(st.sampled_from([None, np.float32, np.float64, np.int64, np.int16])),
        "axis": draw(st.integers(-ndim - 1, ndim)),
    }
    return (start, stop), kwargs


@st.composite
def logspace_arguments(draw):
    (start, stop), kwargs = draw(linspace_arguments(bounds(20, [np.float32, np.float64, np.int32])))
    kwargs["base"] = draw(st.sampled_from([10.0, 2, 0.5, np.array([2.0, 3.0])]))
    return (start, stop), kwargs


@st.composite
def eye_arguments(draw, name):
    rows = draw(st.integers(0, 6))
    columns = draw(st.one_of(st.none(), st.integers(0, 6)))
    k = draw(st.integers(-8, 8))
    dtype = draw(any_dtype)
    if name == "identity":
        return (rows,), {"dtype": draw(maybe_dtype)}
    return (rows, columns, k), {"dtype": dtype}


@st.composite
def triangle_arguments(draw):
    value = draw(arrays(draw(any_dtype), hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=4)))
    return (value,), {"k": draw(st.integers(-5, 5))}


@st.composite
def meshgrid_arguments(draw):
    count = draw(st.integers(0, 4))
    vector_shapes = hnp.array_shapes(min_dims=0, max_dims=2, max_side=3, min_side=0)
    vectors = tuple(draw(arrays(draw(any_dtype), vector_shapes)) for _ in range(count))
    kwargs = {"indexing": draw(st.sampled_from(["xy", "ij"])), "sparse": draw(st.booleans())}
    return vectors, kwargs


def range_tolerance(values, expected):
    """linspace/logspace: the interpreter repeats NumPy's operations in NumPy's order and is
    bit-exact, but a compiling backend may contract `i * step + start` into one fused
    multiply-add (one rounding fewer) and use its own `pow`; both stay within a few ulp of
    the result's magnitude, so allow 4 ulp (relative) plus 4 ulp of the largest |value|."""
    if expected.dtype.kind in "iu":
        # Integer dtypes floor the float samples; a 1-ulp change can cross an integer. A sample
        # out of the dtype's range is an undefined cast in C: NumPy wraps on x86, compiled code
        # saturates (README: Differences from NumPy), so saturated values are not compared.
        limits = np.iinfo(expected.dtype)
        kept = (values != limits.max) & (values != limits.min)
        np.testing.assert_allclose(values[kept], expected[kept], rtol=0, atol=1)
        return
    scale = np.max(np.abs(expected[np.isfinite(expected)]), initial=0)
    eps = np.finfo(expected.dtype).eps
    if expected.dtype == np.float64 and np.array_equal(expected.astype(np.float32), expected, equal_nan=True):
        eps = np.finfo(np.float32).eps  # computed in float32 and widened (float32 bounds): its ulp
    np.testing.assert_allclose(values, expected, rtol=4 * eps, atol=4 * eps * scale, equal_nan=True)


RECORDS = [
    Record("asarray", la.asarray, np.asarray, asarray_arguments()),
    Record("array", la.array, np.array, array_arguments()),
    Record("zeros", la.zeros, np.zeros, filled_arguments()),
    Record("ones", la.ones, np.ones, filled_arguments()),
    Record("empty", la.empty, np.zeros, filled_arguments()),  # lazyarr's empty is zeros
    Record("full", la.full, np.full, full_arguments()),
    Record("zeros_like", la.zeros_like, np.zeros_like, like_arguments()),
    Record("ones_like", la.ones_like, np.ones_like, like_arguments()),
    Record("empty_like", la.empty_like, np.zeros_like, like_arguments()),
    Record("full_like", la.full_like, np.full_like, like_arguments(with_fill=True)),
    Record("from_dlpack", la.from_dlpack, np.from_dlpack,
           any_dtype.flatmap(lambda dtype: arrays(dtype, shapes)).map(lambda value: ((value,), {}))),
    Record("arange", la.arange, np.arange, arange_arguments()),
    Record("linspace", la.linspace, np.linspace, linspace_arguments(), range_tolerance),
    Record("logspace", la.logspace, np.logspace, logspace_arguments(), range_tolerance),
    Record("eye", la.eye, np.eye, eye_arguments("eye")),
    Record("identity", la.identity, np.identity, eye_arguments("identity")),
    Record("tri", la.tri, np.tri, eye_arguments("tri")),
    Record("tril", la.tril, np.tril, triangle_arguments()),
    Record("triu", la.triu, np.triu, triangle_arguments()),
    Record("meshgrid", la.meshgrid, np.meshgrid, meshgrid_arguments()),
]


@pytest.mark.parametrize("record", RECORDS, ids=[record.name for record in RECORDS])
@given(data=st.data())
def test_matches_numpy(record, data):
    args, kwargs = data.draw(record.arguments, label="arguments")
    status, expected = outcome(record.reference, args, kwargs)
    if status == "error":
        with pytest.raises(expected):
            quiet(record.lazy)(*to_lazy(args), **kwargs)
        return
    actual = quiet(record.lazy)(*to_lazy(args), **kwargs)
    assert_same(actual, expected, record.tolerance)


def test_table_covers_every_public_function():
    assert {record.name for record in RECORDS} == set(creation.__all__)


# -- arange and linspace details -----------------------------------------------------------------
@pytest.mark.parametrize("args, kwargs", [
    ((0, 1, 0.1), {}), ((0, 1, 0.1), {"dtype": np.float32}), ((0, 1, 0.1), {"dtype": np.float16}),
    ((0, 300), {"dtype": np.int8}), ((0.5, 4.5, 1.5), {"dtype": np.int8}), ((10, 0, -3), {"dtype": np.uint8}),
    ((np.float32(0.1), np.float32(5.3), np.float32(0.7)), {}),
    ((np.int8(100), np.int8(127), np.int8(10)), {}),
    ((2**63, 2**63 + 3), {}), ((1 + 1j, 5 + 3j), {}), ((0, 10, 0.5), {"dtype": np.complex64}),
    ((2,), {"dtype": bool}), ((0.0, 1e-300, 1e-301), {}), ((5, 1), {}), ((1e20, 1e20 + 5), {}),
    ((-2.5, 7, 0.3), {"dtype": np.float16}), ((0, 1e6, 1 / 3), {"dtype": np.float32}),
])
def test_arange_is_bit_exact(args, kwargs):
    assert_same(la.arange(*args, **kwargs), np.arange(*args, **kwargs))


@pytest.mark.parametrize("args, error", [
    ((0, 10, 0), ZeroDivisionError), ((np.nan,), ValueError), ((0.0, np.inf), ValueError),
    ((-3, 3), OverflowError), ((3,), TypeError),
])
def test_arange_refuses_what_numpy_refuses(args, error):
    kwargs = {"dtype": np.uint8} if args == (-3, 3) else {"dtype": bool} if args == (3,) else {}
    with pytest.raises(error):
        np.arange(*args, **kwargs)
    with pytest.raises(error):
        la.arange(*args, **kwargs)


@given(linspace_arguments(bounds(100, [np.float32, np.float64, np.int32])))
def test_linspace_replays_the_general_paths_graph(case):
    """`la.linspace` along axis 0 without retstep replays its graph from a template after its
    first call (templated_calls.replayed): the second call's node is the one the general path
    makes on the same bounds, and it reads as NumPy's."""
    from lazyarr.frontend import creation_ranges

    (start, stop), kwargs = case
    kwargs["axis"] = 0
    bounds_ = [la.asarray(bound) if isinstance(bound, np.ndarray) else bound for bound in (start, stop)]
    if not any(isinstance(bound, la.Array) for bound in bounds_):  # (Python bounds become fresh leaves)
        bounds_ = [la.asarray(np.asarray(bound)) for bound in bounds_]
    la.linspace(*bounds_, **kwargs)
    replayed = la.linspace(*bounds_, **kwargs)
    general, _ = creation_ranges._linspace(*bounds_, kwargs["num"], kwargs["endpoint"], kwargs["dtype"], 0)
    assert replayed._node is general._node
    expected = np.linspace(*[np.asarray(bound) if isinstance(bound, la.Array) else bound for bound in bounds_],
                           **kwargs)
    got = np.asarray(replayed)
    assert got.dtype == expected.dtype and got.shape == expected.shape


def test_linspace_retstep_and_denormal_step():
    samples, step = la.linspace(0, 1, 5, retstep=True)
    expected, expected_step = np.linspace(0, 1, 5, retstep=True)
    assert_same(samples, expected)
    assert_same(step, np.asarray(expected_step))
    assert np.isnan(la.linspace(0, 1, 1, retstep=True)[1])
    # steps that underflow to 0 take NumPy's (i / div) * delta path (gh-5437)
    assert_same(la.linspace(5e-324, 1e-323, 5), np.linspace(5e-324, 1e-323, 5))


# -- asarray copy semantics ----------------------------------------------------------------------
def test_asarray_copies_outside_data_and_passes_lazy_arrays_through():
    values = np.arange(3.0)
    x = la.asarray(values)
    values[0] = 99
    assert np.asarray(x)[0] == 0  # the lazy array owns a private copy
    assert la.asarray(x) is x
    assert la.asarray(x, copy=False) is x
    assert la.asarray(x, copy=True) is not x
    assert la.asarray(x, dtype=np.float32).dtype == np.float32
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        la.asarray(x, dtype=np.float32, copy=False)
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        la.asarray([1, 2], copy=False)
    assert_same(la.asarray(np.arange(3), copy=False), np.arange(3))  # copied anyway (documented)
    assert_same(la.asarray([x, x]), np.stack([np.arange(3.0)] * 2))
    assert_same(la.array(x, ndmin=2, dtype=np.int8), np.array(np.arange(3.0), ndmin=2, dtype=np.int8))


def test_from_dlpack_passes_lazy_arrays_through():
    x = la.asarray([1.0, 2.0])
    assert la.from_dlpack(x) is x


# -- errors --------------------------------------------------------------------------------------
ERRORS = [
    (lambda: la.asarray([1], device="nowhere"), ValueError, "unknown device 'nowhere'"),
    (lambda: la.asarray(["a"]), TypeError, "not supported"),
    (lambda: la.zeros(-1), ValueError, "negative dimensions"),
    (lambda: la.zeros((2, 2.0)), TypeError, "tuple of ints"),
    (lambda: la.ones(3, dtype="U3"), TypeError, "not supported"),
    (lambda: la.full((2, 2), [1, 2, 3]), ValueError, r"from shape \(3,\) into shape \(2, 2\)"),
    (lambda: la.full(3, 300, dtype=np.int8), OverflowError, "out of bounds for int8"),
    (lambda: la.full_like(la.zeros(3, dtype=np.int8), 300), OverflowError, "out of bounds"),
    (lambda: la.linspace(0, 1, -1), ValueError, "Number of samples, -1, must be non-negative"),
    (lambda: la.linspace(0, 1, 2.5), TypeError, "integer"),
    (lambda: la.arange(la.asarray([5])), TypeError, "0-dimensional"),
    (lambda: la.eye(-1), ValueError, "negative dimensions"),
    (lambda: la.eye(2.5), TypeError, "N must be an integer"),
    (lambda: la.tril(la.asarray(3)), TypeError, "at least 1-d"),
    (lambda: la.meshgrid(la.zeros(2), indexing="xx"), ValueError, "'xy' and 'ij'"),
    (lambda: la.zeros(3, order="K"), ValueError, "only 'C' or 'F' order"),  # (as NumPy; "c" and "f" pass)
    (lambda: la.full(2, 1.0, order="A"), ValueError, "only 'C' or 'F' order"),
    # sizes from 2**40 on along an axis: no memory holds them (and they are symbolic placeholders)
    (lambda: float(la.zeros(2**41).sum()), MemoryError, r"shape \(2199023255552,\)"),
    # (README; a view of an evaluated 2.0 is read as NumPy's view: [2., 2., 2.], as in NumPy)
    (lambda: np.asarray(la.broadcast_to(la.asarray(2.0) + 1, (2**41,))[:3]), MemoryError, "16.0 TiB"),
    (lambda: np.asarray(la.arange(0, 2**62, dtype=np.int8)), MemoryError,
     r"Unable to allocate .* shape \(4611686018427387904,\)"),
]


@pytest.mark.parametrize("call, error, message", ERRORS)
def test_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_sizes_no_memory_holds_are_refused_by_the_interpreter_too(monkeypatch):
    """The interpreter (no symbolic sizes) refuses them as the compiling backends do, as NumPy's
    own allocation would: it summed `la.zeros(2**41)` over a broadcast view for hours. (Asked
    through `la.explain`, which compiles and runs nothing: without the check this test fails
    instead of running that sum.)"""
    from lazyarr import _flags

    monkeypatch.setattr(_flags, "FLAGS", _flags.FLAGS)
    la.set_backend("interpreter")
    with pytest.raises(MemoryError, match=r"shape \(2199023255552,\)"):
        la.explain(la.zeros(2**41).sum())


# -- O(1) graphs and laziness --------------------------------------------------------------------
def graph_size(array) -> int:
    return len(post_order([array._node]))


@pytest.mark.parametrize("build", [
    lambda: la.zeros((1000, 1000)), lambda: la.ones((1000, 1000), dtype=np.int8),
    lambda: la.full((1000, 1000), 2.5), lambda: la.empty_like(la.zeros((1000, 1000))),
    lambda: la.eye(1000), lambda: la.tri(1000, 999, 3), lambda: la.arange(10**6),
    lambda: la.arange(0.0, 1.0, 1e-6, dtype=np.float32), lambda: la.linspace(0, 1, 10**6),
    lambda: la.tril(la.zeros((1000, 1000))), lambda: la.meshgrid(la.arange(1000), la.arange(1000))[0],
])
def test_large_results_are_small_graphs(build):
    result = build()
    assert result.size >= 10**6 - 1000
    assert graph_size(result) <= 40
    for node in post_order([result._node]):
        if node.opcode == "constant":
            assert node.size <= 2, node


def test_creation_from_lazy_arrays_does_not_evaluate():
    x = la.asarray(np.arange(6.0).reshape(2, 3)) * 2
    results = [la.asarray(x, dtype=np.int32), la.array(x, ndmin=4), la.full((4, 2, 3), x), la.zeros_like(x),
               la.full_like(x, 7), la.tril(x), la.triu(x, 1), *la.meshgrid(x, x),
               la.linspace(x, x + 1, 4)]
    assert not x.is_evaluated
    assert not any(result.is_evaluated for result in results)


def test_a_huge_broadcast_of_an_evaluated_value_reads_as_numpys_view():
    view = la.broadcast_to(la.asarray(2.0), (2**41,))[:3]
    np.testing.assert_array_equal(np.asarray(view), np.broadcast_to(2.0, (2**41,))[:3])


def test_empty_arrays_may_have_sizes_from_two_to_the_forty_along_an_axis():
    assert np.asarray(la.zeros((0, 2**41))).shape == (0, 2**41)
    assert np.asarray(la.empty((2**41, 0)).sum(axis=0)).shape == (0,)


@pytest.mark.parametrize("call", [
    lambda xp: xp.zeros((True,)), lambda xp: xp.ones((2, False)), lambda xp: xp.full((True,), 1.0),
    lambda xp: xp.eye(True), lambda xp: xp.arange(4).reshape((True, 4)), lambda xp: xp.broadcast_to(1, (True,)),
])
def test_a_bool_is_not_a_size(call):
    """An int to Python, never a size to NumPy ("an integer is required")."""
    with pytest.raises(TypeError):
        call(np)
    with pytest.raises(TypeError):
        call(la)


@pytest.mark.parametrize("order", ["K", "A", "x"])
def test_eye_takes_c_or_f_order_only(order):
    with pytest.raises(ValueError):
        np.eye(2, order=order)
    with pytest.raises(ValueError):
        la.eye(2, order=order)
    assert np.asarray(la.eye(2, order="f")).tolist() == [[1, 0], [0, 1]]
