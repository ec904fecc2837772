"""SciPy on lazyarr: scipy.special and scipy.stats functions with array API support give NumPy's
answers, as lazyarr arrays.

With SCIPY_ARRAY_API=1 (set in tests/conftest.py before SciPy is first imported) SciPy takes the
namespace from its inputs: functions written against the standard (logsumexp, softmax, xlogy,
rel_entr and most of scipy.stats) run lazily on lazyarr, special-function ufuncs without a
generic implementation convert through NumPy and back. Each case runs the function on NumPy
inputs (SciPy's reference path) and on the same values as lazyarr arrays, for float32 (on the
default backend) and float64 (on the interpreter: tests/clients/conftest.py), and compares type,
shape, dtype and values.

A representative set: the special functions SciPy marks array-API capable across families
(normal distribution, error function, gamma and beta families, Bessel, information theory,
logsumexp/softmax) and the stats functions on summaries, moments, trimmed statistics, tests and
correlations.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("scipy", minversion="1.17", reason="SciPy >= 1.17 is not installed (extra 'clients')")
_scipy_array_api = pytest.importorskip("scipy._lib._array_api")
if not _scipy_array_api.SCIPY_ARRAY_API:
    pytest.skip("SciPy was imported before SCIPY_ARRAY_API=1 was set (tests/conftest.py sets it first)",
                allow_module_level=True)

import scipy.special as special  # noqa: E402
import scipy.stats as stats  # noqa: E402

import lazyarr as la  # noqa: E402


def _inputs(dtype) -> dict[str, np.ndarray]:
    """Named small inputs of `dtype`: x normal, y correlated with x, p in (0, 1), pos in (0.5, 3),
    r rounded (ties for mode and ranks), xx 12 rows (normality tests need 8 or more)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 5)).astype(dtype)
    return {
        "x": x,
        "y": (x + 0.5 * rng.standard_normal((6, 5))).astype(dtype),
        "p": rng.uniform(0.05, 0.95, (6, 5)).astype(dtype),
        "pos": rng.uniform(0.5, 3.0, (6, 5)).astype(dtype),
        "r": np.round(x).astype(dtype),
        "xx": rng.standard_normal((12, 5)).astype(dtype),
    }


def _describe(result) -> tuple:
    """describe's arrays: (min, max) and the moments (nobs is a Python int)."""
    return (*result.minmax, result.mean, result.variance, result.skewness, result.kurtosis)


# name -> function of the named inputs; a tuple result is compared part by part.
CASES = {
    "special.ndtr": lambda d: special.ndtr(d["x"]),
    "special.ndtri": lambda d: special.ndtri(d["p"]),
    "special.log_ndtr": lambda d: special.log_ndtr(d["x"]),
    "special.erf": lambda d: special.erf(d["x"]),
    "special.erfc": lambda d: special.erfc(d["x"]),
    "special.erfinv": lambda d: special.erfinv(d["p"]),
    "special.expit": lambda d: special.expit(d["x"]),
    "special.logit": lambda d: special.logit(d["p"]),
    "special.gammaln": lambda d: special.gammaln(d["pos"]),
    "special.psi": lambda d: special.psi(d["pos"]),
    "special.gammainc": lambda d: special.gammainc(d["pos"], d["p"]),
    "special.betainc": lambda d: special.betainc(d["pos"], d["pos"], d["p"]),
    "special.chdtr": lambda d: special.chdtr(d["pos"], d["p"]),
    "special.i0": lambda d: special.i0(d["x"]),
    "special.i1e": lambda d: special.i1e(d["x"]),
    "special.zeta": lambda d: special.zeta(d["pos"] + 1, d["p"]),
    "special.entr": lambda d: special.entr(d["p"]),
    "special.rel_entr": lambda d: special.rel_entr(d["p"], d["pos"]),
    "special.xlogy": lambda d: special.xlogy(d["x"], d["pos"]),
    "special.xlog1py": lambda d: special.xlog1py(d["x"], d["p"]),
    "special.logsumexp": lambda d: special.logsumexp(d["x"], axis=1),
    "special.logsumexp(b)": lambda d: special.logsumexp(d["x"], b=d["p"]),
    "special.softmax": lambda d: special.softmax(d["x"], axis=0),
    "special.log_softmax": lambda d: special.log_softmax(d["x"], axis=-1),
    "stats.describe": lambda d: _describe(stats.describe(d["x"])),
    "stats.gmean": lambda d: stats.gmean(d["pos"], axis=0),
    "stats.hmean": lambda d: stats.hmean(d["pos"], axis=1),
    "stats.pmean": lambda d: stats.pmean(d["pos"], 2.5),
    "stats.tmean": lambda d: stats.tmean(d["x"], (-1, 1)),
    "stats.tvar": lambda d: stats.tvar(d["x"]),
    "stats.tstd": lambda d: stats.tstd(d["x"]),
    "stats.tsem": lambda d: stats.tsem(d["x"]),
    "stats.tmin": lambda d: stats.tmin(d["x"], -1),
    "stats.tmax": lambda d: stats.tmax(d["x"], 1),
    "stats.moment": lambda d: stats.moment(d["x"], order=3, axis=0),
    "stats.skew": lambda d: stats.skew(d["x"], axis=0),
    "stats.kurtosis": lambda d: stats.kurtosis(d["x"], axis=1),
    "stats.sem": lambda d: stats.sem(d["x"]),
    "stats.variation": lambda d: stats.variation(d["pos"]),
    "stats.zscore": lambda d: stats.zscore(d["x"]),
    "stats.zmap": lambda d: stats.zmap(d["y"], d["x"]),
    "stats.gstd": lambda d: stats.gstd(d["pos"]),
    "stats.iqr": lambda d: stats.iqr(d["x"], axis=0),
    "stats.median_abs_deviation": lambda d: stats.median_abs_deviation(d["x"]),
    "stats.trim_mean": lambda d: stats.trim_mean(d["x"], 0.2),
    "stats.quantile": lambda d: stats.quantile(d["x"], 0.3, axis=-1),
    "stats.mode": lambda d: tuple(stats.mode(d["r"], axis=0)),
    "stats.rankdata": lambda d: stats.rankdata(d["r"], axis=0),
    "stats.entropy": lambda d: stats.entropy(d["p"], d["pos"]),
    "stats.differential_entropy": lambda d: stats.differential_entropy(d["x"], axis=0),
    "stats.circmean": lambda d: stats.circmean(d["x"], axis=0),
    "stats.circvar": lambda d: stats.circvar(d["x"]),
    "stats.skewtest": lambda d: tuple(stats.skewtest(d["xx"])),
    "stats.normaltest": lambda d: tuple(stats.normaltest(d["xx"])),
    "stats.jarque_bera": lambda d: tuple(stats.jarque_bera(d["x"], axis=0)),
    "stats.ttest_1samp": lambda d: tuple(stats.ttest_1samp(d["x"], 0.1)),
    "stats.ttest_ind": lambda d: tuple(stats.ttest_ind(d["x"], d["y"])),
    "stats.ttest_rel": lambda d: tuple(stats.ttest_rel(d["x"], d["y"])),
    "stats.f_oneway": lambda d: tuple(stats.f_oneway(d["x"], d["y"])),
    "stats.pearsonr": lambda d: tuple(stats.pearsonr(d["x"], d["y"], axis=0))[:2],
    "stats.chatterjeexi": lambda d: tuple(stats.chatterjeexi(d["x"], d["y"], axis=0)),
}

# 1000 ulps relative and absolute, as scikit-learn's array API tests allow (_atol_for_type): the
# lazy results are reassociated sums, NumPy's are pairwise; tests of 6 samples amplify that a
# little in p-values.
TOLERANCE = {np.float32: 1000 * np.finfo(np.float32).eps, np.float64: 1000 * np.finfo(np.float64).eps}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", list(CASES))
def test_scipy_function_on_lazyarr_matches_numpy(name, dtype):
    inputs = _inputs(dtype)
    expected = CASES[name](inputs)
    got = CASES[name]({key: la.asarray(value) for key, value in inputs.items()})
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(expected)
    for got_part, expected_part in zip(got, expected):
        assert isinstance(got_part, la.Array), f"{name} returned {type(got_part).__name__}, not a lazyarr array"
        expected_part = np.asarray(expected_part)
        assert got_part.shape == expected_part.shape, (got_part.shape, expected_part.shape)
        assert got_part.dtype == expected_part.dtype, (got_part.dtype, expected_part.dtype)
        np.testing.assert_allclose(np.asarray(got_part), expected_part, rtol=TOLERANCE[dtype],
                                   atol=TOLERANCE[dtype], err_msg=name)
