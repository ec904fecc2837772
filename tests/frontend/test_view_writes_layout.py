"""Writes through the results of NumPy's view-returning functions, held to NumPy (issue 14).

NumPy's reshape, ravel, transposes, squeeze, expand_dims, flip, split, `.real`/`.imag` of
complex arrays ... return views: a write to the result reaches the base and every other view
of it. reshape and ravel copy where the input's memory layout needs it (`A.T.reshape(-1)`,
`A[:, ::2].ravel()`), and then a write must not reach the base; diagonal and broadcast_to are
read-only. Each test runs the same statements on NumPy arrays and lazy arrays and compares
every array involved afterwards, so a write lost (or one that goes too far) anywhere fails.

The random chains run on the interpreter backend (each example is a new graph); a few fixed
idioms run on the CPU backend.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from lazyarr.frontend.views import strided
from tests.assertions import assert_identical, outcome

# -- random chains of view-making steps -----------------------------------------------------------


def _shapes_of_size(size: int) -> list[tuple[int, ...]]:
    """Every shape of up to 3 dims with `size` elements and sides up to 12 (0 sides if size 0)."""
    sides = [0, 1, 2, 3] if size == 0 else [side for side in range(1, min(size, 12) + 1) if size % side == 0]
    found = []
    for ndim in range(4):
        for shape in itertools.product(sides, repeat=ndim):
            if math.prod(shape) == size:
                found.append(shape)
    return found or [(size,)]


def _draw_step(data, shape: tuple[int, ...], kind: str | None = None):
    """One view-making step for an array of `shape`: (description, function(xp, x)); of
    `kind` when given (basic indexing where that kind does not apply to the shape), else of
    any kind that applies."""
    ndim = len(shape)
    kinds = ["index", "transpose", "reshape", "ravel", "expand_dims", "real", "imag", "broadcast_to"]
    if ndim:
        kinds += ["flip", "split", "unstack"]
    if ndim >= 2:
        kinds += ["swapaxes", "diagonal"]
    if 1 in shape:
        kinds.append("squeeze")
    if kind is None:
        kind = data.draw(st.sampled_from(kinds), label="step")
    elif kind not in kinds:
        kind = "index"
    if kind == "index":
        key = data.draw(hnp.basic_indices(shape, min_dims=0, allow_newaxis=True, allow_ellipsis=True), label="key")
        return f"x[{key!r}]", lambda xp, x: x[key]
    if kind == "transpose":
        axes = tuple(data.draw(st.permutations(range(ndim)), label="axes"))
        return f"transpose({axes})", lambda xp, x: xp.transpose(x, axes)
    if kind == "reshape":
        target = data.draw(st.sampled_from(_shapes_of_size(math.prod(shape))), label="target")
        order = data.draw(st.sampled_from("CF"), label="order")
        return f"reshape({target}, {order})", lambda xp, x: xp.reshape(x, target, order=order)
    if kind == "ravel":
        order = data.draw(st.sampled_from("CF"), label="order")
        return f"ravel({order})", lambda xp, x: xp.ravel(x, order)
    if kind == "expand_dims":
        axis = data.draw(st.integers(-ndim - 1, ndim), label="axis")
        return f"expand_dims({axis})", lambda xp, x: xp.expand_dims(x, axis)
    if kind in ("real", "imag"):
        return kind, lambda xp, x: getattr(xp, kind)(x)
    if kind == "broadcast_to":  # read-only in NumPy
        return "broadcast_to", lambda xp, x: xp.broadcast_to(x, (2,) + shape)
    if kind == "flip":
        axis = data.draw(st.none() | st.integers(-ndim, ndim - 1), label="axis")
        return f"flip({axis})", lambda xp, x: xp.flip(x, axis)
    if kind == "split":
        axis = data.draw(st.integers(0, ndim - 1), label="axis")
        sections = data.draw(st.integers(1, 3), label="sections")
        piece = data.draw(st.integers(0, sections - 1), label="piece")
        return f"array_split({sections}, {axis})[{piece}]", lambda xp, x: xp.array_split(x, sections, axis)[piece]
    if kind == "unstack":
        axis = data.draw(st.integers(0, ndim - 1), label="axis")
        if shape[axis] == 0:
            return "nothing", lambda xp, x: x
        piece = data.draw(st.integers(0, shape[axis] - 1), label="piece")
        return f"unstack({axis})[{piece}]", lambda xp, x: xp.unstack(x, axis=axis)[piece]
    if kind == "swapaxes":
        first, second = data.draw(st.integers(0, ndim - 1), label="a"), data.draw(st.integers(0, ndim - 1), label="b")
        return f"swapaxes({first}, {second})", lambda xp, x: xp.swapaxes(x, first, second)
    if kind == "diagonal":  # read-only in NumPy
        offset = data.draw(st.integers(-2, 2), label="offset")
        return f"diagonal({offset})", lambda xp, x: xp.diagonal(x, offset)
    axes = tuple(axis for axis, size in enumerate(shape) if size == 1)
    axis = data.draw(st.none() | st.sampled_from(axes), label="axis")
    return f"squeeze({axis})", lambda xp, x: xp.squeeze(x, axis)


def _base_values(shape, dtype) -> np.ndarray:
    values = np.arange(math.prod(shape), dtype=np.int64).reshape(shape)
    return values if dtype == np.int64 else np.asarray(values + 1j * (values + 100))


WRITES = ["view[...] = -1", "view += 1000", "view[key] = -7"]


def _assert_same(pairs):
    for lazy, want in pairs:
        assert_identical(np.asarray(lazy), want)


@pytest.mark.usefixtures("interpreter_backend_for_module")
@settings(max_examples=300)
@given(data=st.data())
def test_writes_through_random_view_chains_match_numpy(data):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4), label="shape")
    dtype = data.draw(st.sampled_from([np.int64, np.complex128]), label="dtype")
    want = [_base_values(shape, dtype)]
    got = [la.asarray(want[0])]
    for _ in range(data.draw(st.integers(1, 4), label="steps")):
        _, step = _draw_step(data, want[-1].shape)
        want_next, want_error = outcome(lambda: step(np, want[-1]))
        got_next, got_error = outcome(lambda: step(la, got[-1]))
        assert got_error == want_error
        if want_error is not None:
            break
        if not isinstance(want_next, np.ndarray):  # a scalar: a copy, never written through
            assert_identical(np.asarray(got_next), np.asarray(want_next))
            break
        if got_next._base is not None and want_next.size and np.shares_memory(want_next, want[0]):
            layout = strided(got_next)  # NumPy's strides for the chain, as NumPy has them
            # (on axes of more than one element: a size-1 axis's stride is never used, and NumPy
            # itself leaves it arbitrary: `ravel` of a flipped 0-d array gives -8 or 8)
            assert layout is None or _used_strides(layout) == _used_strides(want_next)
        want.append(want_next)
        got.append(got_next)
    statement = data.draw(st.sampled_from(WRITES), label="write")
    key = data.draw(hnp.basic_indices(want[-1].shape, allow_newaxis=True, allow_ellipsis=True), label="key")
    _, want_error = outcome(lambda: exec(statement, {"view": want[-1], "key": key}))
    _, got_error = outcome(lambda: exec(statement, {"view": got[-1], "key": key}))
    assert got_error == want_error  # ValueError from both where NumPy's result is read-only
    _assert_same(zip(got, want))
    want[0] += 1  # every view follows a later write to the base; copies do not
    got[0] += 1
    _assert_same(zip(got, want))


def _used_strides(array: np.ndarray) -> tuple:
    return tuple(stride for stride, size in zip(array.strides, array.shape) if size > 1)


LAYOUT_STEPS = ["index", "transpose", "flip", "swapaxes", "real", "split", "unstack"]


@pytest.mark.usefixtures("interpreter_backend_for_module")
@settings(max_examples=300)
@given(data=st.data())
def test_reshape_and_ravel_after_a_layout_chain_view_exactly_where_numpy_does(data):
    """The copy-or-view decision itself: strided, sliced, transposed, flipped or complex-part
    inputs, then one reshape or ravel (C or F), written whole and in part."""
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), label="shape")
    dtype = data.draw(st.sampled_from([np.int64, np.int64, np.complex128]), label="dtype")
    want, got = _base_values(shape, dtype), None
    got = la.asarray(want)
    want_base, got_base = want, got
    for _ in range(data.draw(st.integers(1, 3), label="steps")):
        kind = data.draw(st.sampled_from(LAYOUT_STEPS), label="kind")
        _, step = _draw_step(data, want.shape, kind)
        want_next = step(np, want)
        if not isinstance(want_next, np.ndarray):
            break
        want, got = want_next, step(la, got)
    _, step = _draw_step(data, want.shape, data.draw(st.sampled_from(["reshape", "ravel"]), label="last"))
    want_view, got_view = step(np, want), step(la, got)
    key = data.draw(hnp.basic_indices(want_view.shape, allow_ellipsis=True), label="key")
    want_view[key] = -1
    got_view[key] = -1
    _assert_same([(got_base, want_base), (got, want), (got_view, want_view)])
    want_base[...] = 7
    got_base[...] = 7
    _assert_same([(got_base, want_base), (got, want), (got_view, want_view)])


@pytest.mark.usefixtures("interpreter_backend_for_module")
@settings(max_examples=100)
@given(data=st.data())
def test_sibling_views_of_one_base_see_each_others_writes(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), label="shape")
    want_base = _base_values(shape, np.int64)
    got_base = la.asarray(want_base)
    want, got = [want_base], [got_base]
    for _ in range(3):  # three views made independently from the base, one step each
        _, step = _draw_step(data, shape)
        want_view, want_error = outcome(lambda: step(np, want_base))
        if want_error is not None or not isinstance(want_view, np.ndarray):
            continue
        want.append(want_view)
        got.append(step(la, got_base))
    writer = data.draw(st.integers(0, len(want) - 1), label="writer")
    _, want_error = outcome(lambda: exec("view += 1000", {"view": want[writer]}))
    _, got_error = outcome(lambda: exec("view += 1000", {"view": got[writer]}))
    assert got_error == want_error
    _assert_same(zip(got, want))


# -- the NumPy idioms, on the CPU backend ---------------------------------------------------------


def _pair(shape=(3, 4), dtype=np.float64):
    values = np.arange(math.prod(shape), dtype=dtype).reshape(shape)
    return values.copy(), la.asarray(values)


@pytest.mark.usefixtures("cpu_backend")
def test_issue_examples_write_through_reshape_ravel_and_transpose():
    want, got = _pair()
    want.reshape(12)[0] = 1
    got.reshape(12)[0] = 1
    view, lazy_view = want.ravel(), got.ravel()
    view[:] = 5
    lazy_view[:] = 5
    want.T[0, 1] = 7
    got.T[0, 1] = 7
    chained, lazy_chained = want.reshape(2, 6)[:, 1:4].T, got.reshape(2, 6)[:, 1:4].T
    chained += 10
    lazy_chained += 10
    _assert_same([(got, want), (lazy_view, view), (lazy_chained, chained)])


@pytest.mark.usefixtures("cpu_backend")
@pytest.mark.parametrize("make", [
    lambda x: x.T.reshape(-1),              # not C-contiguous: NumPy copies
    lambda x: x[:, ::2].ravel(),            # ravel copies whatever is not contiguous
    lambda x: x.reshape((4, 3), order="F"),  # C-contiguous base, Fortran-order read: a copy
    lambda x: x.ravel("F"),
    lambda x: x.flatten(),                  # always a copy
    lambda x: x.reshape(12, copy=True),
], ids=["T.reshape", "strided.ravel", "reshape-F", "ravel-F", "flatten", "copy=True"])
def test_copies_do_not_write_through(make):
    want, got = _pair()
    copy, lazy_copy = make(want), make(got)
    assert np.shares_memory(copy, want) is False
    copy[...] = -1
    lazy_copy[...] = -1
    want += 1
    got += 1
    _assert_same([(got, want), (lazy_copy, copy)])


@pytest.mark.usefixtures("cpu_backend")
@pytest.mark.parametrize("make", [
    lambda x: x[:, ::2].reshape(-1),        # reshape, unlike ravel, keeps a uniform stride: a view
    lambda x: x[1:].ravel(),                # contiguous rows
    lambda x: x.T.ravel("F"),
    lambda x: x.T.reshape((2, 2, 3), order="F"),
    lambda x: x.reshape(3, 2, 2)[:, :, 1].reshape(-1),
    lambda x: np.squeeze(x[None, :, None], axis=(0, 2)),
    lambda x: np.atleast_3d(x)[..., 0],
    lambda x: np.flip(x).reshape(-1),       # negative strides chain too
    lambda x: np.moveaxis(x.reshape(3, 2, 2), 0, -1),
    lambda x: la.linalg.matrix_transpose(x) if isinstance(x, la.Array) else np.linalg.matrix_transpose(x),
], ids=["strided.reshape", "rows.ravel", "T.ravel-F", "T.reshape-F", "chain", "squeeze", "atleast_3d",
        "flip.reshape", "moveaxis", "matrix_transpose"])
def test_views_write_through(make):
    want, got = _pair()
    view, lazy_view = make(want), make(got)
    assert np.shares_memory(view, want)
    view[...] = -1
    lazy_view[...] = -1
    _assert_same([(got, want), (lazy_view, view)])
    want[1:] *= 3
    got[1:] *= 3
    _assert_same([(got, want), (lazy_view, view)])


@pytest.mark.usefixtures("cpu_backend")
def test_zero_dimensional_and_empty_bases():
    want, got = np.array(2.5), la.asarray(np.array(2.5))
    view, lazy_view = want.reshape(1, 1), got.reshape(1, 1)
    view[0, 0] = 9
    lazy_view[0, 0] = 9
    one, lazy_one = np.atleast_1d(want), la.atleast_1d(got)
    one += 1
    lazy_one += 1
    _assert_same([(got, want), (lazy_view, view), (lazy_one, one)])
    empty, lazy_empty = np.zeros((0, 3)), la.zeros((0, 3))
    flat, lazy_flat = empty.T.reshape(-1), lazy_empty.T.reshape(-1)  # size 0: contiguous, a view
    flat += 1
    lazy_flat += 1
    _assert_same([(lazy_empty, empty), (lazy_flat, flat)])


@pytest.mark.usefixtures("cpu_backend")
def test_complex_parts_are_views():
    values = np.arange(12.0).reshape(3, 4) * (1 + 2j)
    want, got = values.copy(), la.asarray(values)
    want.real[0] = -1
    got.real[0] = -1
    imaginary, lazy_imaginary = np.imag(want).T, la.imag(got).T
    imaginary[1] += 100
    lazy_imaginary[1] += 100
    flat, lazy_flat = want.real.reshape(-1), got.real.reshape(-1)  # strides 16 chain: a view
    flat[3] = 55
    lazy_flat[3] = 55
    copy, lazy_copy = want.real.ravel(), got.real.ravel()  # not contiguous: a copy
    copy[...] = 0
    lazy_copy[...] = 0
    _assert_same([(got, want), (lazy_imaginary, imaginary), (lazy_flat, flat), (lazy_copy, copy)])


@pytest.mark.usefixtures("cpu_backend")
def test_split_and_unstack_pieces_are_views():
    want, got = _pair((4, 3))
    top, lazy_top = np.split(want, 2)[0], la.split(got, 2)[0]
    top[1] = -1
    lazy_top[1] = -1
    column, lazy_column = np.array_split(want, 3, axis=1)[2], la.array_split(got, 3, axis=1)[2]
    column += 100
    lazy_column += 100
    row, lazy_row = np.unstack(want)[3], la.unstack(got)[3]
    row[:] = 7
    lazy_row[:] = 7
    _assert_same([(got, want), (lazy_top, top), (lazy_column, column), (lazy_row, row)])


@pytest.mark.usefixtures("cpu_backend")
@pytest.mark.parametrize("make", [
    lambda xp, x: xp.diagonal(x),
    lambda xp, x: x.diagonal(1),
    lambda xp, x: xp.diag(x),
    lambda xp, x: xp.broadcast_to(x, (2, 3, 4)),
    lambda xp, x: x.imag,                       # of a real array: read-only zeros
    lambda xp, x: xp.diagonal(x).reshape(1, 3),  # a view of a read-only view is read-only
], ids=["diagonal", "diagonal-method", "diag", "broadcast_to", "imag-of-real", "reshape-of-diagonal"])
def test_read_only_results_refuse_writes_and_follow_the_base(make):
    want, got = _pair()
    view, lazy_view = make(np, want), make(la, got)
    for statement in ("view[0] = 1", "view += 1"):
        with pytest.raises(ValueError):
            exec(statement, {"view": view})
        with pytest.raises(ValueError, match="read-only"):
            exec(statement, {"view": lazy_view})
    want[:, 1] = -5
    got[:, 1] = -5
    _assert_same([(got, want), (lazy_view, view)])


@pytest.mark.usefixtures("cpu_backend")
def test_a_copy_of_a_read_only_view_is_writable():
    want, got = _pair()
    flat, lazy_flat = np.diagonal(want).ravel(), la.diagonal(got).ravel()  # strided: ravel copies
    flat[0] = 100
    lazy_flat[0] = 100
    _assert_same([(got, want), (lazy_flat, flat)])


@pytest.mark.usefixtures("cpu_backend")
def test_broadcast_arrays_and_meshgrid():
    row = la.asarray(np.arange(4.0))
    full = la.asarray(np.zeros((3, 4)))
    same, spread = la.broadcast_arrays(full, row)
    assert same is full  # as NumPy: an argument already of the shape comes back itself
    with pytest.raises(ValueError, match="broadcast_arrays"):  # NumPy: DeprecationWarning, then writes
        spread[0, 0] = 1
    x, y = np.arange(3.0), np.arange(2.0)
    lazy_x, lazy_y = la.asarray(x), la.asarray(y)
    grid, lazy_grid = np.meshgrid(x, y)[0], la.meshgrid(lazy_x, lazy_y)[0]  # copy=True: independent
    grid[0, 0] = 50
    lazy_grid[0, 0] = 50
    sparse, lazy_sparse = np.meshgrid(x, y, sparse=True, copy=False)[1], la.meshgrid(
        lazy_x, lazy_y, sparse=True, copy=False)[1]
    sparse[1, 0] = -3
    lazy_sparse[1, 0] = -3
    _assert_same([(lazy_x, x), (lazy_y, y), (lazy_grid, grid), (lazy_sparse, sparse)])


@pytest.mark.usefixtures("cpu_backend")
def test_reshape_copy_false_raises_where_numpy_copies():
    want, got = _pair()
    with pytest.raises(ValueError, match="copy"):
        want.T.reshape(-1, copy=False)
    with pytest.raises(ValueError, match="Unable to avoid creating a copy"):
        got.T.reshape(-1, copy=False)
    for make in (lambda x: x[:, 1:3].reshape(6, copy=False), lambda x: x[:, ::-2].T.reshape(-1, copy=False)):
        with pytest.raises(ValueError):
            make(want)
        with pytest.raises(ValueError, match="Unable to avoid creating a copy"):
            make(got)
    view, lazy_view = want[1:].reshape(8, copy=False), got[1:].reshape(8, copy=False)
    view[0] = 100
    lazy_view[0] = 100
    _assert_same([(got, want), (lazy_view, view)])


@pytest.mark.usefixtures("cpu_backend")
@pytest.mark.parametrize("make", [
    lambda x: x.T.ravel("K"),
    lambda x: x.T.ravel("A"),
    lambda x: x.T.reshape(12, order="A"),
    lambda x: x.reshape(2, 3, 2).transpose(1, 0, 2).ravel("K"),  # neither C nor F, but tiles memory
], ids=["T.ravel-K", "T.ravel-A", "T.reshape-A", "permuted.ravel-K"])
def test_memory_order_views_refuse_writes(make):
    """NumPy's 'K'/'A' results follow memory order (views here); lazyarr reads them as 'C'
    (README: Differences from NumPy), so it refuses writes instead of losing them."""
    want, got = _pair()
    assert np.shares_memory(make(want), want)
    result = make(got)
    with pytest.raises(ValueError, match="memory order"):
        result[0] = 1
    assert_identical(np.asarray(got), np.arange(12.0).reshape(3, 4))


@pytest.mark.usefixtures("cpu_backend")
def test_memory_order_options_on_contiguous_arrays_are_plain_views():
    want, got = _pair()
    for order in "KA":
        view, lazy_view = want.ravel(order), got.ravel(order)
        view[1] += 10
        lazy_view[1] += 10
    _assert_same([(got, want)])


@pytest.mark.usefixtures("cpu_backend")
def test_einsum_single_operand_views():
    want, got = _pair((3, 3))
    transposed, lazy_transposed = np.einsum("ij->ji", want), la.einsum("ij->ji", got)
    transposed[0, 2] = -1
    lazy_transposed[0, 2] = -1
    _assert_same([(got, want), (lazy_transposed, transposed)])
    diagonal = la.einsum("ii->i", got)  # NumPy: a writable diagonal view; lazyarr refuses writes
    with pytest.raises(ValueError, match="einsum"):
        diagonal[0] = 1
    assert_identical(np.asarray(la.einsum("ii", got)), np.asarray(np.einsum("ii", want)))  # a sum: a copy


def test_conj_method_of_a_real_array_is_the_array():
    ints = la.asarray(np.arange(3))
    assert ints.conj() is ints and ints.conjugate() is ints  # as NumPy's method
    assert la.conj(ints) is not ints  # np.conj is a ufunc: a new array


@pytest.mark.usefixtures("cpu_backend")
def test_writes_through_views_of_an_evaluated_array():
    want, got = _pair()
    got.eval()
    view, lazy_view = want.reshape(2, 6).T, got.reshape(2, 6).T
    view[1:3] = 0
    lazy_view[1:3] = 0
    _assert_same([(got, want), (lazy_view, view)])


@pytest.mark.usefixtures("cpu_backend")
def test_an_array_that_owns_its_value_counts_as_c_contiguous():
    """README, Differences from NumPy: NumPy's `a.T + 1` is Fortran-ordered, so its reshape
    copies; lazyarr's result owns its value and is C-contiguous, so its reshape is a view."""
    want, got = _pair()
    fortran, lazy_owner = want.T + 1, got.T + 1
    assert not np.shares_memory(fortran.reshape(-1), fortran)
    lazy_owner.reshape(-1)[0] = -1
    assert_identical(np.asarray(lazy_owner)[0], np.array([-1.0, 5, 9]))


@pytest.mark.usefixtures("cpu_backend")
def test_copy_method_gives_an_independent_array():
    """`x.copy()`, which the refusals suggest, as NumPy's method: never a view."""
    base = la.asarray(np.arange(4.0))
    duplicate = la.diagonal(base.reshape(2, 2)).copy()
    duplicate[0] = 100
    base[3] = -1
    assert_identical(np.asarray(base), np.array([0.0, 1, 2, -1]))
    assert_identical(np.asarray(duplicate), np.array([100.0, 3]))
