"""scikit-learn on lazyarr: estimators and metrics with array API dispatch give NumPy's answers.

scikit-learn dispatches to any array API namespace (`sklearn.set_config(array_api_dispatch=True)`,
with SCIPY_ARRAY_API=1 set before SciPy is imported: tests/conftest.py does it). These tests run
scikit-learn's *own* array API checks with "lazyarr" as the namespace name, exactly as its test
suite runs them for array_api_strict, CuPy or PyTorch:

* estimators: `check_array_api_input(..., check_values=True)` (sklearn/utils/estimator_checks.py)
  fits each estimator on NumPy and on lazyarr inputs and compares every fitted array attribute and
  every method's output (predict, transform, inverse_transform, score, ...) with
  `assert_allclose(atol=_atol_for_type(dtype))` (1000 eps: 1.2e-4 for float32, 2.2e-13 for
  float64; relative 1e-7), and checks namespace, device, shape and dtype. The estimators are every
  one whose tags declare `array_api_support`, plus the parameter sets scikit-learn's own array API
  tests use (PCA solvers, Ridge solvers, scalers' options);
* metrics: scikit-learn's table `array_api_metric_checkers` (sklearn/metrics/tests/test_common.py:
  classification, regression and pairwise metrics and kernels, each with its binary, multiclass,
  multilabel or multioutput checker) at the same tolerance;
* scikit-learn's own array API test functions for estimators the generic check cannot drive
  (GaussianMixture, CalibratedClassifierCV, LogisticRegression with class weights and string
  labels, label encoders, train_test_split, randomized_svd): their last parameter combination by
  default, all of them, and more tests, with LAZYARR_CLIENT_TESTS=full (several minutes);
* the LinearDiscriminantAnalysis model that was once 8.8x off (unique_values in hash order).

Both dtypes run (float32 and float64) on small data; float32 on the default backend, float64 on the
interpreter backend unless LAZYARR_CLIENT_TESTS=full (tests/clients/conftest.py). A case that fails
on lazyarr is run again on array_api_strict (the standard's reference namespace): if it fails
there too it is a scikit-learn limitation and xfails with both errors; otherwise it fails.
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import os
import traceback
import warnings

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn", minversion="1.8",
                              reason="scikit-learn >= 1.8 is not installed (extra 'clients')")
pytest.importorskip("array_api_strict", reason="array-api-strict is not installed (extra 'clients')")
_scipy_array_api = pytest.importorskip("scipy._lib._array_api", reason="SciPy is not installed (extra 'clients')")
if not _scipy_array_api.SCIPY_ARRAY_API:
    pytest.skip("SciPy was imported before SCIPY_ARRAY_API=1 was set (tests/conftest.py sets it first)",
                allow_module_level=True)

from sklearn.base import clone  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis  # noqa: E402
from sklearn.linear_model import Ridge, RidgeClassifier, RidgeCV  # noqa: E402
from sklearn.preprocessing import (  # noqa: E402
    Binarizer,
    MaxAbsScaler,
    MinMaxScaler,
    Normalizer,
    StandardScaler,
)
from sklearn.utils import get_tags  # noqa: E402
from sklearn.utils._test_common.instance_generator import _get_check_estimator_ids, _tested_estimators  # noqa: E402
from sklearn.utils.estimator_checks import check_array_api_input  # noqa: E402

import lazyarr as la  # noqa: E402

DTYPES = ["float32", "float64"]
FULL = os.environ.get("LAZYARR_CLIENT_TESTS") == "full"  # as in tests/clients/conftest.py

# scikit-learn's own warnings about its small test data (ill-defined metrics on 4 samples, lbfgs
# stopped at max_iter=5, Ridge's solver notice, ...), which its own suite does not turn into errors.
pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning:sklearn"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning:sklearn")]


def _summary(error: Exception) -> str:
    """An error's type and its message on one line, shortened (a bare assert: its source line)."""
    message = " ".join(str(error).split()) or (traceback.extract_tb(error.__traceback__)[-1].line or "")
    return f"{type(error).__name__}: {message[:160]}"


def _run_or_xfail_as_sklearn_limitation(run) -> None:
    """`run(namespace)` with lazyarr; when it fails, with array_api_strict: a failure there too
    is scikit-learn's (xfail, both errors quoted), otherwise lazyarr's (re-raised)."""
    try:
        run("lazyarr")
    except Exception as lazyarr_error:
        try:
            run("array_api_strict")
        except Exception as strict_error:
            pytest.xfail(f"scikit-learn limitation, also fails with array_api_strict: {_summary(strict_error)} "
                         f"(lazyarr: {_summary(lazyarr_error)})")
        raise


# -- estimators -------------------------------------------------------------------------------


def _estimators():
    """Every estimator whose tags declare array API support (as scikit-learn instantiates them
    for its common checks), then the parameter sets scikit-learn's own array API tests add."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tagged = [estimator for estimator in _tested_estimators() if get_tags(estimator).array_api_support]
    specs = [
        # sklearn/decomposition/tests/test_pca.py (the default PCA() compares its arbitrary noise
        # components and an ill-conditioned score, which fail with array_api_strict too)
        (PCA, {"n_components": 2, "svd_solver": "full"}),
        (PCA, {"n_components": 2, "svd_solver": "full", "whiten": True}),
        (PCA, {"n_components": 0.1, "svd_solver": "full", "whiten": True}),
        (PCA, {"n_components": 2, "svd_solver": "covariance_eigh"}),
        (PCA, {"n_components": 2, "svd_solver": "covariance_eigh", "whiten": True}),
        (PCA, {"n_components": 2, "svd_solver": "randomized", "power_iteration_normalizer": "QR", "random_state": 0}),
        # sklearn/linear_model/tests/test_ridge.py
        (Ridge, {"solver": "svd"}),
        (RidgeClassifier, {"solver": "svd"}),
        (RidgeCV, {"gcv_mode": "svd"}),
        (RidgeCV, {"gcv_mode": "eigen"}),
        # sklearn/preprocessing/tests/test_data.py
        (MaxAbsScaler, {}),
        (MaxAbsScaler, {"clip": True}),
        (MinMaxScaler, {"clip": True}),
        (Normalizer, {"norm": "l1"}),
        (Normalizer, {"norm": "max"}),
    ]
    explicit = []
    for estimator_class, parameters in specs:
        try:
            explicit.append(estimator_class(**parameters))
        except TypeError:  # an option this scikit-learn version does not have
            continue
    return tagged + explicit


def _estimator_id(estimator) -> str:
    return " ".join(_get_check_estimator_ids(estimator).split())  # the repr with changed parameters


ESTIMATORS = _estimators()


@pytest.mark.parametrize("dtype_name", DTYPES)
@pytest.mark.parametrize("estimator", ESTIMATORS, ids=[_estimator_id(e) for e in ESTIMATORS])
def test_estimator_fitted_on_lazyarr_matches_numpy(estimator, dtype_name):
    name = type(estimator).__name__

    def run(namespace):  # device None: the default device (passed by position: its name changed)
        check_array_api_input(name, clone(estimator), namespace, None, dtype_name=dtype_name, check_values=True)

    _run_or_xfail_as_sklearn_limitation(run)


@pytest.mark.parametrize("dtype_name", DTYPES)
def test_standard_scaler_with_sample_weight(dtype_name):
    # sklearn/preprocessing/tests/test_data.py: weights reach lazyarr as arrays too.
    _run_or_xfail_as_sklearn_limitation(lambda namespace: check_array_api_input(
        "StandardScaler", StandardScaler(), namespace, None, dtype_name=dtype_name, check_values=True,
        check_sample_weight=True))


def test_linear_discriminant_analysis_gives_numpys_model():
    # A model 8.8x off (173 of 200 predictions wrong) when lazyarr's unique_values returned NumPy
    # 2.3+'s hash order: classes_ came out [1, 0] while unique_counts and unique_inverse sorted
    # [0, 1], so each class was centred on the other's mean.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 5)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int64)
    reference = LinearDiscriminantAnalysis().fit(X, y)
    with sklearn.config_context(array_api_dispatch=True):
        model = LinearDiscriminantAnalysis().fit(la.asarray(X), la.asarray(y))
        predictions = np.asarray(model.predict(la.asarray(X)))
    assert np.asarray(model.classes_).tolist() == [0, 1]
    np.testing.assert_allclose(np.asarray(model.coef_), reference.coef_, rtol=1e-4)
    np.testing.assert_allclose(np.asarray(model.intercept_), reference.intercept_, rtol=1e-4, atol=1e-5)
    assert (predictions == reference.predict(X)).all()


@pytest.mark.parametrize("transformer", [Binarizer(threshold=0.5), Normalizer()], ids=["Binarizer", "Normalizer"])
def test_fit_transform_returns_lazyarr_arrays(transformer):
    # The namespace is kept end to end: results are lazyarr arrays, not NumPy arrays.
    X = la.asarray(np.random.default_rng(1).random((6, 3)))
    with sklearn.config_context(array_api_dispatch=True):
        result = clone(transformer).fit_transform(X)
    assert isinstance(result, la.Array) and result.shape == (6, 3)


# -- metrics ----------------------------------------------------------------------------------


def _metric_cases():
    try:
        from sklearn.metrics.tests.test_common import array_api_metric_checkers
    except ImportError:  # a scikit-learn installed without its tests
        return []
    return [(metric, checker) for metric, checkers in array_api_metric_checkers.items() for checker in checkers]


def _metric_id(metric) -> str:
    if hasattr(metric, "func"):  # functools.partial
        return f"{metric.func.__name__}({','.join(f'{k}={v}' for k, v in metric.keywords.items())})"
    return metric.__name__


METRICS = _metric_cases()

# Failures that are scikit-learn's with any read-only NumPy input, not lazyarr's. Without dispatch
# the checker passes lazyarr arrays through np.asarray, which gives a read-only view of the
# evaluated buffer (as for a read-only NumPy array; README "Writes"), and these kernels' Cython
# memoryviews are not const: additive_chi2_kernel(X) with X.flags.writeable = False raises the same
# "buffer source array is read-only". array_api_strict never reaches that path (no __array__).
SKLEARN_READ_ONLY_INPUT_BUGS = {"additive_chi2_kernel", "chi2_kernel"}


@pytest.mark.skipif(not METRICS, reason="scikit-learn's tests (sklearn.metrics.tests) are not installed")
@pytest.mark.parametrize("dtype_name", DTYPES)
@pytest.mark.parametrize(
    "metric, checker", METRICS or [(None, None)],
    ids=[f"{_metric_id(metric)}-{checker.__name__.removeprefix('check_array_api_')}" for metric, checker in METRICS]
    or ["none"],
)
def test_metric_on_lazyarr_matches_numpy(metric, checker, dtype_name, request):
    if _metric_id(metric) in SKLEARN_READ_ONLY_INPUT_BUGS:
        request.applymarker(pytest.mark.xfail(
            raises=ValueError, strict=False,
            reason="scikit-learn's Cython chi2 kernels reject read-only NumPy arrays (np.asarray of lazyarr)"))
    _run_or_xfail_as_sklearn_limitation(lambda namespace: checker(metric, namespace, None, dtype_name))


# -- scikit-learn's own array API tests of single estimators -----------------------------------

# Tests that take (array_namespace, device_name, dtype_name) and drive an estimator in ways the
# generic check does not: constructor arrays, string labels, class weights, calibration, per-target
# alphas, label encoders, splitting. By default the last of each test's own parameter combinations
# runs (where its options are on), and only tests that reach code the checks above do not; with
# LAZYARR_CLIENT_TESTS=full every combination of every listed test runs.
SKLEARN_OWN_TESTS = [  # (module, test, runs by default)
    ("sklearn.mixture.tests.test_gaussian_mixture", "test_gaussian_mixture_array_api_compliance", True),
    ("sklearn.tests.test_calibration", "test_temperature_scaling_array_api_compliance", True),
    ("sklearn.linear_model.tests.test_logistic", "test_logistic_regression_array_api_compliance", True),
    ("sklearn.linear_model.tests.test_ridge", "test_ridge_classifier_multilabel_array_api", True),
    ("sklearn.linear_model.tests.test_ridge", "test_ridge_per_target_alpha_array_api", True),
    ("sklearn.preprocessing.tests.test_label", "test_label_encoder_array_api_compliance", True),
    ("sklearn.preprocessing.tests.test_label", "test_label_binarizer_array_api_compliance", True),
    ("sklearn.preprocessing.tests.test_label", "test_label_binarize_array_api_compliance", True),
    ("sklearn.model_selection.tests.test_split", "test_array_api_train_test_split", True),
    ("sklearn.metrics.cluster.tests.test_supervised", "test_entropy_array_api", True),
    ("sklearn.utils.tests.test_extmath", "test_randomized_svd_array_api_compliance", True),
    ("sklearn.utils.tests.test_stats", "test_weighted_percentile_array_api_consistency", True),
    # covered by the generic checks above in their default parameters
    ("sklearn.linear_model._glm.tests.test_glm", "test_poisson_regressor_array_api_compliance", False),
    ("sklearn.decomposition.tests.test_pca", "test_pca_array_api_compliance", False),
    ("sklearn.decomposition.tests.test_pca", "test_pca_mle_array_api_compliance", False),
    ("sklearn.tests.test_naive_bayes", "test_gnb_array_api_compliance", False),
    ("sklearn.tests.test_kernel_approximation", "test_nystroem_approximation_array_api", False),
    ("sklearn.tests.test_pipeline", "test_feature_union_array_api_compliance", False),
    ("sklearn.model_selection.tests.test_search", "test_array_api_search_cv_classifier", False),
    ("sklearn.metrics.tests.test_pairwise", "test_pairwise_kernels_array_api", False),
    ("sklearn.metrics.tests.test_pairwise", "test_pairwise_distances_array_api", False),
]
# Fixtures of scikit-learn's conftest that these tests take, with the values its CI uses by default.
_FIXTURES = {"global_random_seed": 42, "global_dtype": np.float64}


def _argument_names(mark) -> list[str]:
    names = mark.args[0]
    return [name.strip() for name in names.split(",")] if isinstance(names, str) else list(names)


def _namespace_axis(function) -> list[str] | None:
    """The names of `function`'s namespace parameters, as its own test spells them (versions of
    scikit-learn say device, device_ or device_name; some have no dtype_name): None if it has none."""
    for mark in getattr(function, "pytestmark", []):
        if mark.name == "parametrize" and "array_namespace" in _argument_names(mark):
            return _argument_names(mark)
    return None


def _parameter_sets(function) -> list[dict]:
    """The keyword arguments of each case of `function`'s own @pytest.mark.parametrize marks,
    leaving out the namespace axis (lazyarr's goes there), with the fixtures it takes."""
    axes = []
    for mark in getattr(function, "pytestmark", []):
        names = _argument_names(mark) if mark.name == "parametrize" else []
        if not names or "array_namespace" in names:
            continue
        values = [getattr(value, "values", value) for value in mark.args[1]]
        axes.append([dict(zip(names, value if len(names) > 1 else (value,))) for value in values])
    fixtures = {name: value for name, value in _FIXTURES.items() if name in inspect.signature(function).parameters}
    return [{**fixtures, **{key: value for case in combination for key, value in case.items()}}
            for combination in itertools.product(*axes)]


def _own_test_cases():
    cases = []
    for module_name, function_name, by_default in SKLEARN_OWN_TESTS:
        if not (by_default or FULL):
            continue
        try:
            function = getattr(importlib.import_module(module_name), function_name)
        except (ImportError, AttributeError):  # not in this scikit-learn version, or no tests installed
            continue
        axis = _namespace_axis(function)
        parameter_sets = _parameter_sets(function)
        if axis is None or not parameter_sets:
            continue
        chosen = enumerate(parameter_sets) if FULL else [(len(parameter_sets) - 1, parameter_sets[-1])]
        for number, parameters in chosen:
            for dtype_name in DTYPES if "dtype_name" in axis else [None]:
                cases.append(pytest.param(function, parameters, axis, dtype_name,
                                          id=f"{function_name}[{number}]-{dtype_name or 'its dtypes'}"))
    return cases


OWN_TESTS = _own_test_cases()


@pytest.mark.skipif(not OWN_TESTS, reason="scikit-learn's tests are not installed")
@pytest.mark.parametrize("function, parameters, namespace_axis, dtype_name",
                         OWN_TESTS or [pytest.param(None, None, None, None, id="none")])
def test_sklearn_own_array_api_test_on_lazyarr(function, parameters, namespace_axis, dtype_name):
    def run(namespace):
        arguments = {name: None for name in namespace_axis}  # devices: the default one
        arguments.update(array_namespace=namespace)
        if "dtype_name" in arguments:
            arguments["dtype_name"] = dtype_name
        function(**parameters, **arguments)

    _run_or_xfail_as_sklearn_limitation(run)
