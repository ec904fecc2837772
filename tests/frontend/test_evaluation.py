"""Evaluation points, la.eval sharing, buffer ownership, immutability and NumPy interop."""

import gc
import pickle
import weakref

import numpy as np
import pytest

import lazyarr as la


def lazy_and_numpy():
    values = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    return la.asarray(values), values


def test_issue_acceptance_expression():
    values = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    got = la.exp(la.asarray(values) * 2 + 1).sum(axis=0).eval()
    # Compiled exp is within 4 ULP of NumPy's and sums may associate differently: 1e-6 relative.
    np.testing.assert_allclose(np.asarray(got), np.exp(values * 2 + 1).sum(axis=0), rtol=1e-6)


def test_metadata_never_evaluates():
    x, _ = lazy_and_numpy()
    y = la.exp(x) + 1
    assert (y.shape, y.dtype, y.ndim, y.size, len(y)) == ((3, 4), np.float32, 2, 12, 3)
    assert not y.is_evaluated


ARRAY_POINTS = {
    "eval": lambda y: y.eval(),
    "asarray": lambda y: np.asarray(y),
    "repr": repr,
    "str": str,
    "tolist": lambda y: y.tolist(),
    "la.eval": lambda y: la.eval(y),
    "dlpack": lambda y: y.__dlpack__(max_version=(1, 0)),
}
SCALAR_POINTS = {
    "item": lambda y: y.item(),
    "float": float,
    "int": int,
    "bool": bool,
    "complex": complex,
    "index": lambda y: [0, 1, 2, 3][y],
}


@pytest.mark.parametrize("point", ARRAY_POINTS.values(), ids=ARRAY_POINTS.keys())
def test_each_array_evaluation_point_evaluates(point):
    x, values = lazy_and_numpy()
    y = x * 2
    point(y)
    assert y.is_evaluated
    np.testing.assert_array_equal(np.asarray(y), values * 2)


@pytest.mark.parametrize("point", SCALAR_POINTS.values(), ids=SCALAR_POINTS.keys())
def test_each_scalar_evaluation_point_evaluates(point):
    x = la.asarray(np.int64(3))
    y = x - 1
    assert point(y) == point(np.int64(2))
    assert y.is_evaluated


def test_print_matches_numpy_formatting():
    x, values = lazy_and_numpy()
    assert str(x * 2) == str(values * 2)
    assert repr(x * 2) == repr(values * 2).replace("array", "Array", 1)


def test_index_and_scalar_conversions():
    assert [10, 20, 30][la.asarray(1)] == 20
    with pytest.raises(TypeError, match="integer"):
        [1, 2][la.asarray(1.0)]
    with pytest.raises(TypeError, match="size 1"):
        float(la.asarray([1.0, 2.0]))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(la.asarray([1, 2]))


def test_la_eval_shares_work_and_returns_arrays():
    x, values = lazy_and_numpy()
    shared = la.exp(x)
    text = la.hlo_text(shared.sum(), shared.max())
    assert text.count(" exp(") == 1  # one exp instruction feeds both outputs
    a, b = la.eval(shared.sum(), shared.max())
    assert a.is_evaluated and b.is_evaluated
    # Compiled exp is within 4 ULP of NumPy's; the sum of 12 terms may associate differently.
    assert float(a) == pytest.approx(np.exp(values).sum(), rel=1e-6)
    assert float(b) == pytest.approx(np.exp(values).max(), rel=1e-6)


def test_evaluated_array_drops_its_graph():
    x = la.asarray(np.ones(4))
    y = x
    for _ in range(50):
        y = y + 1
    old_nodes = [weakref.ref(y._node), weakref.ref(y._node.operands[0])]
    y.eval()
    del x
    gc.collect()
    assert y._node.opcode == "parameter"
    assert all(reference() is None for reference in old_nodes)


def test_evaluated_value_is_reused_by_other_graphs():
    x, values = lazy_and_numpy()
    y = la.exp(x)
    z = y + 1
    y.eval()
    # z's graph still holds y's old node, which is now bound to y's buffer: a parameter.
    assert "exp(" not in la.hlo_text(z)
    np.testing.assert_allclose(np.asarray(z), np.exp(values) + 1, rtol=1e-6)  # exp: 4 ULP


def test_inputs_are_copied_and_outputs_read_only():
    values = np.ones(3)
    x = la.asarray(values)
    values[0] = 100
    assert np.asarray(x)[0] == 1
    out = np.asarray(x)
    assert not out.flags.writeable
    with pytest.raises(ValueError):
        out[0] = 5
    assert np.array(x, copy=True).flags.writeable


@pytest.mark.parametrize("evaluated", [True, False])
def test_a_zero_dimensional_value_converts_to_a_fresh_writable_array(evaluated):
    # As a NumPy scalar's conversion: code may scale the result in place (scikit-learn's
    # brier_score_loss: `np.average(a, weights=lazy)`, then `score *= 0.5`); the lazy value stays.
    x = la.asarray(np.float32(2.5)) * 2
    if evaluated:
        x.eval()
    out = np.asarray(x)
    assert out.shape == () and out.dtype == np.float32 and out.flags.writeable
    out *= 0.5
    assert float(x) == 5.0
    assert np.asarray(x) == 5.0
    assert np.asarray(x, dtype=np.float32).flags.writeable  # the same dtype asked for: the same answer
    assert not np.asarray(x, copy=False).flags.writeable  # never a copy: the shared, read-only value


def test_augmented_assignment_changes_the_object_as_numpy_does():
    a = la.asarray(np.arange(3))
    b = a
    a += 1
    np.testing.assert_array_equal(np.asarray(a), [1, 2, 3])
    np.testing.assert_array_equal(np.asarray(b), [1, 2, 3])  # the same object, as in NumPy


def test_numpy_functions_stay_lazy():
    x, values = lazy_and_numpy()
    y = np.exp(x)
    assert isinstance(y, la.Array) and not y.is_evaluated
    s = np.sum(x, axis=1)
    assert isinstance(s, la.Array) and not s.is_evaluated
    np.testing.assert_array_equal(np.asarray(s), values.sum(axis=1))
    mixed = values + x  # NumPy array on the left: __array_ufunc__ dispatches to lazyarr
    assert isinstance(mixed, la.Array)
    np.testing.assert_array_equal(np.asarray(mixed), values * 2)
    reduced = np.add.reduce(x, axis=1)
    assert isinstance(reduced, la.Array)
    np.testing.assert_array_equal(np.asarray(reduced), values.sum(axis=1))


def test_numpy_function_without_lazy_version_falls_back_eagerly():
    x, values = lazy_and_numpy()
    assert np.percentile(x, 50) == np.percentile(values, 50)


def test_ufunc_out_argument_writes_into_numpy_array():
    x, values = lazy_and_numpy()
    out = np.empty_like(values)
    assert np.add(x, 1, out=out) is out
    np.testing.assert_array_equal(out, values + 1)


def test_dlpack_round_trip():
    x, values = lazy_and_numpy()
    assert x.__dlpack_device__() == (1, 0)
    np.testing.assert_array_equal(np.from_dlpack(x), values)
    np.testing.assert_array_equal(np.asarray(la.from_dlpack(values)), values)


def test_array_namespace_and_info():
    x, _ = lazy_and_numpy()
    assert x.__array_namespace__() is la
    assert la.__array_api_version__ == "2025.12"
    info = la.__array_namespace_info__()
    assert info.default_dtypes()["real floating"] == np.float64
    assert set(info.dtypes(kind="integral").values()) == set(la.dtypes.INTEGER)
    assert info.devices() == ("cpu",)
    with pytest.raises(ValueError, match="device"):
        info.dtypes(device="gpu")


def test_pickle_round_trip():
    x, values = lazy_and_numpy()
    y = pickle.loads(pickle.dumps(x * 2))
    np.testing.assert_array_equal(np.asarray(y), values * 2)


def test_unsupported_dtype_inputs_raise_type_error():
    with pytest.raises(TypeError, match="not supported"):
        la.asarray(np.array(["a", "b"]))
    with pytest.raises(TypeError):
        la.asarray(np.array([1, "x"], dtype=object))


def test_set_backend_validates_names():
    previous = la.get_backend_name()
    with pytest.raises(ValueError, match="unknown backend"):
        la.set_backend("nonexistent")
    try:
        la.set_backend("interpreter")
        assert la.get_backend_name() == "interpreter"
    finally:
        la.set_backend(previous)  # later tests run on the default backend, not on this one


def test_numpy_call_lazyarr_cannot_serve_falls_back_to_numpy():
    x, values = lazy_and_numpy()
    np.testing.assert_array_equal(np.pad(x, 1, mode="edge"), np.pad(values, 1, mode="edge"))
