"""array-api-extra on lazyarr: every public function gives NumPy's answer.

array-api-extra delegates to a library's own function where it knows one (NumPy, CuPy, JAX,
PyTorch, Dask); for any other namespace, lazyarr included, it runs its generic implementation
written against the array API standard. So each case here runs that generic code on lazyarr
arrays and compares it with the same call on NumPy arrays (NumPy's own functions, mostly):
shape, dtype, values; float32 (on the default backend) and float64 (on the interpreter:
tests/clients/conftest.py).
"""

from __future__ import annotations

import numpy as np
import pytest

xpx = pytest.importorskip("array_api_extra", minversion="0.11",
                          reason="array-api-extra >= 0.11 is not installed (extra 'clients')")

import lazyarr as la  # noqa: E402

# broadcast_shapes and expand_dims warn that the standard has them since 2025.12; still public.
pytestmark = pytest.mark.filterwarnings("ignore:`xpx.*` is deprecated:DeprecationWarning")


def _inputs(dtype) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 5)).astype(dtype)
    with_nan = x.copy()
    with_nan[0, 1] = with_nan[2, 3] = np.nan
    non_finite = with_nan.copy()
    non_finite[1, 1], non_finite[3, 0] = np.inf, -np.inf
    complex_dtype = np.complex64 if dtype == np.float32 else np.complex128
    return {
        "x": x,
        "with_nan": with_nan,
        "non_finite": non_finite,
        "row": x[0],
        "sorted": np.sort(x[0]),
        "weights": np.abs(x[1]),
        "small": rng.standard_normal((2, 3)).astype(dtype),
        "z": (x + 1j * x[::-1]).astype(complex_dtype),
        "labels": rng.integers(0, 4, 12),
        "others": np.array([3, 4, 5, 9, 3]),
    }


# name -> function of (namespace, inputs in that namespace). Results that are tuples of index
# arrays are stacked; Python values are made arrays.
CASES = {
    "angle": lambda xp, d: xpx.angle(d["z"], xp=xp),
    "angle(deg)": lambda xp, d: xpx.angle(d["z"], deg=True, xp=xp),
    "apply_where": lambda xp, d: xpx.apply_where(d["x"] > 0, (d["x"], d["x"]), lambda a, b: a * b, lambda a, b: -a,
                                                 xp=xp),
    "apply_where(fill_value)": lambda xp, d: xpx.apply_where(d["x"] > 0, d["x"], xp.sqrt, fill_value=-1.0, xp=xp),
    # partition order within each side of kth is unspecified: compare the kth element.
    "argpartition": lambda xp, d: xp.take_along_axis(d["x"], xpx.argpartition(d["x"], 2, xp=xp), axis=-1)[:, 2],
    "partition": lambda xp, d: xpx.partition(d["x"], 2, axis=0, xp=xp)[2, :],
    "at.set": lambda xp, d: xpx.at(d["x"], (slice(None), 1)).set(0.5),
    "at.add(mask)": lambda xp, d: xpx.at(d["x"], d["x"] > 0).add(1.0),
    "at.subtract": lambda xp, d: xpx.at(d["x"], (1, slice(None))).subtract(2.0),
    "at.multiply": lambda xp, d: xpx.at(d["x"])[1, :].multiply(3.0),
    "at.divide": lambda xp, d: xpx.at(d["x"], (1, slice(None))).divide(2.0),
    "at.power": lambda xp, d: xpx.at(d["x"], (1, slice(None))).power(2.0),
    "at.min": lambda xp, d: xpx.at(d["x"], (0, slice(None))).min(0.0),
    "at.max": lambda xp, d: xpx.at(d["x"], (0, slice(None))).max(0.0),
    "at.add(integer array)": lambda xp, d: xpx.at(d["row"], xp.asarray([0, 2, 4])).add(1.0),
    "atleast_nd": lambda xp, d: xpx.atleast_nd(d["row"], ndim=3, xp=xp),
    "broadcast_shapes": lambda xp, d: xp.asarray(xpx.broadcast_shapes((4, 1), (1, 5), (5,))),
    "cov": lambda xp, d: xpx.cov(d["x"], xp=xp),
    "cov(aweights, correction=0)": lambda xp, d: xpx.cov(d["x"], correction=0, aweights=d["weights"], xp=xp),
    "create_diagonal": lambda xp, d: xpx.create_diagonal(d["row"], offset=1, xp=xp),
    "default_dtype": lambda xp, d: xp.asarray(str(xpx.default_dtype(xp, "indexing")) == "int64"),
    "deg2rad": lambda xp, d: xpx.deg2rad(d["x"], xp=xp),
    "rad2deg": lambda xp, d: xpx.rad2deg(d["x"], xp=xp),
    "diag_indices": lambda xp, d: xp.stack(xpx.diag_indices(3, xp=xp)),
    "expand_dims": lambda xp, d: xpx.expand_dims(d["x"], axis=(0, -1), xp=xp),
    "isclose": lambda xp, d: xpx.isclose(d["with_nan"], d["with_nan"] + 1e-7, equal_nan=True, xp=xp),
    "isin": lambda xp, d: xpx.isin(d["labels"], d["others"], xp=xp),
    "isin(invert)": lambda xp, d: xpx.isin(d["labels"], d["others"], invert=True, xp=xp),
    "kron": lambda xp, d: xpx.kron(d["small"], d["x"], xp=xp),
    "lazy_apply": lambda xp, d: xpx.lazy_apply(lambda a: np.cumsum(a, axis=0), d["x"], shape=d["x"].shape,
                                               dtype=d["x"].dtype, xp=xp),
    "nan_to_num": lambda xp, d: xpx.nan_to_num(d["non_finite"], fill_value=-2.0, xp=xp),
    "nanmax": lambda xp, d: xpx.nanmax(d["with_nan"], axis=0, xp=xp),
    "nanmin": lambda xp, d: xpx.nanmin(d["with_nan"], axis=1, xp=xp),
    "nansum": lambda xp, d: xpx.nansum(d["with_nan"], xp=xp),
    "nanmean": lambda xp, d: xpx.nanmean(d["with_nan"], axis=0, xp=xp),
    "nunique": lambda xp, d: xp.asarray(xpx.nunique(d["labels"], xp=xp)),
    "one_hot": lambda xp, d: xpx.one_hot(d["labels"], 5, xp=xp),
    "pad": lambda xp, d: xpx.pad(d["x"], ((1, 0), (2, 3)), constant_values=7, xp=xp),
    "searchsorted": lambda xp, d: xpx.searchsorted(d["sorted"], d["x"], side="right", xp=xp),
    "setdiff1d": lambda xp, d: xpx.setdiff1d(d["labels"], d["others"], xp=xp),
    "union1d": lambda xp, d: xpx.union1d(d["labels"], d["others"], xp=xp),
    "sinc": lambda xp, d: xpx.sinc(d["x"], xp=xp),
    "tril_indices": lambda xp, d: xp.stack(xpx.tril_indices(4, offset=-1, m=5, xp=xp)),
    "triu_indices": lambda xp, d: xp.stack(xpx.triu_indices(4, offset=1, xp=xp)),
    "unravel_index": lambda xp, d: xp.stack(xpx.unravel_index(d["labels"], (2, 3), xp=xp)),
}

# Generic code against NumPy's own functions: a few ulps apart at most (cov and sinc compute in
# another order); 100 ulps keeps a real error (a wrong element, a dropped NaN) far outside.
TOLERANCE = {np.float32: 100 * np.finfo(np.float32).eps, np.float64: 100 * np.finfo(np.float64).eps}


def _function_of(case: str) -> str:
    return case.split("(")[0].split(".")[0]


def test_every_public_function_has_a_case():
    public = {name for name in xpx.__all__ if callable(getattr(xpx, name))} - {"testing"}
    covered = {_function_of(name) for name in CASES}
    assert public <= covered, f"array-api-extra functions without a case: {sorted(public - covered)}"


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", list(CASES))
def test_array_api_extra_function_on_lazyarr_matches_numpy(name, dtype):
    if not hasattr(xpx, _function_of(name)):
        pytest.skip(f"array-api-extra {xpx.__version__} has no {_function_of(name)}")
    # Fresh inputs for each side: `at(x, ...)` may write into a writeable x (copy=None), NumPy's too.
    expected = np.asarray(CASES[name](np, _inputs(dtype)))
    got = CASES[name](la, {key: la.asarray(value) for key, value in _inputs(dtype).items()})
    assert isinstance(got, la.Array), f"{name} returned {type(got).__name__}, not a lazyarr array"
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype],
                               err_msg=name)


@pytest.mark.parametrize("method, value", [("set", 0.5), ("add", 1.0), ("multiply", 3.0), ("min", 0.0)])
def test_at_with_copy_leaves_the_input_unchanged(method, value):
    x = np.random.default_rng(2).standard_normal((3, 4))
    lazy = la.asarray(x)
    got = getattr(xpx.at(lazy, (slice(None), 1)), method)(value, copy=True)
    expected = getattr(xpx.at(x.copy(), (slice(None), 1)), method)(value, copy=True)
    np.testing.assert_array_equal(np.asarray(got), expected)
    np.testing.assert_array_equal(np.asarray(lazy), x)
