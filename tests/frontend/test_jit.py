"""la.jit: same results as eager lazyarr and NumPy, one trace per signature, statics, pytrees,
closures, the must-compile errors, lower/ShapeDtypeStruct/explain, nested jit, on both backends."""

from __future__ import annotations

import functools
import logging
from collections import namedtuple

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from lazyarr import _flags
from lazyarr.hlo.text import parse
from tests.assertions import assert_identical
from tests.strategies import elements

BACKENDS = ["interpreter", "cpu"]


@pytest.fixture(params=BACKENDS)
def backend(request):
    previous = la.get_backend_name()
    la.set_backend(request.param)
    yield request.param
    la.set_backend(previous)


def counting(function):
    """`function`, with `.traces` counting how often it runs (it runs only when la.jit traces)."""

    @functools.wraps(function)
    def counted(*args, **kwargs):
        counted.traces += 1
        return function(*args, **kwargs)

    counted.traces = 0
    return counted


def f32(*values):
    return np.asarray(values, dtype=np.float32)


# -- values: jit == eager lazyarr (same graph, same backend) and == NumPy -------------------------

def _softmax(xp, x):
    shifted = x - xp.max(x, axis=-1, keepdims=True)
    return xp.exp(shifted) / xp.sum(xp.exp(shifted), axis=-1, keepdims=True)


FUNCTIONS = {
    # name: (function over a namespace, input dtypes, relative tolerance vs NumPy)
    "arithmetic": (lambda xp, a, b: (a + b) * b - a, ["float32", "float64", "int32", "int64"], 0),
    "scalar mix": (lambda xp, a, b: xp.where(a > b, a * 2.5, b - 1), ["float32", "float64", "int16"], 0),
    # exp and division are within a few ULP of NumPy's; sums may associate differently.
    "softmax": (lambda xp, a, b: _softmax(xp, a + b), ["float32", "float64"], 1e-5),
    "reduction": (lambda xp, a, b: (a * b).sum(axis=0) + a.max(), ["float64", "int64"], 1e-12),
}


@st.composite
def function_cases(draw):
    name = draw(st.sampled_from(sorted(FUNCTIONS)))
    _, dtype_names, _ = FUNCTIONS[name]
    dtype = np.dtype(draw(st.sampled_from(dtype_names)))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    a = draw(hnp.arrays(dtype, shape, elements=elements(dtype)))
    b = draw(hnp.arrays(dtype, shape, elements=elements(dtype)))
    return name, a, b


@pytest.mark.parametrize("backend_name", BACKENDS)
@given(case=function_cases())
def test_jit_matches_eager_and_numpy(backend_name, case):
    name, a, b = case
    function, _, tolerance = FUNCTIONS[name]
    previous = la.get_backend_name()
    la.set_backend(backend_name)
    try:
        jitted = la.jit(functools.partial(function, la))
        got = jitted(a, b)
        eager = function(la, la.asarray(a), la.asarray(b))
        assert_identical(np.asarray(got), np.asarray(eager))
        with np.errstate(all="ignore"):
            want = function(np, a, b)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(np.asarray(got), want, rtol=tolerance, atol=0)  # NaNs compare equal
        assert_identical(np.asarray(jitted(a, b)), np.asarray(got))  # the cached executable, again
    finally:
        la.set_backend(previous)


# -- one trace per signature ----------------------------------------------------------------------

def test_one_trace_per_signature_and_cached_calls_skip_graph_building(backend):
    function = counting(lambda x, y: la.exp(x) * y)
    jitted = la.jit(function)
    x, y = f32(1, 2, 3), f32(4, 5, 6)
    first = jitted(x, y)
    compile_cache = la.cache_info()
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(jitted(x, la.asarray(y))), np.asarray(first))
    assert function.traces == 1
    info = jitted.cache_info()
    assert (info.hits, info.misses, info.traces, info.entries) == (3, 1, 1, 1)
    # A hit runs the executable directly: no graph is built, so the compile cache is not asked.
    after = la.cache_info()
    assert (after.hits, after.misses) == (compile_cache.hits, compile_cache.misses)


def test_new_shape_or_dtype_retraces(backend):
    function = counting(lambda x: x * 2 + 1)
    jitted = la.jit(function)
    jitted(f32(1, 2))
    jitted(f32(1, 2, 3))
    jitted(np.arange(3))
    assert function.traces == 3
    np.testing.assert_array_equal(np.asarray(jitted(f32(5, 6))), f32(11, 13))
    assert function.traces == 3
    assert jitted.cache_size() == 3
    jitted.clear_cache()
    assert jitted.cache_size() == 0


def test_lazy_arguments_are_evaluated_first(backend):
    jitted = la.jit(lambda x: x + 1)
    lazy = la.asarray(f32(1, 2)) * 3
    np.testing.assert_array_equal(np.asarray(jitted(lazy)), f32(4, 7))
    assert lazy.is_evaluated


# -- Python scalars: weak promotion, new values do not recompile ----------------------------------

def test_python_scalars_keep_weak_promotion(backend):
    scale = la.jit(lambda x, s: x * s)
    assert scale(f32(1, 2), 0.1).dtype == np.float32
    assert scale(np.array([1, 2], np.int8), 3).dtype == np.int8
    assert scale(np.array([True]), 2.5).dtype == np.float64
    for x, s in [(f32(1, 2), 0.1), (np.array([1, 2], np.int8), 100), (np.array([3.0]), True)]:
        assert_identical(np.asarray(scale(x, s)), x * s)


def test_new_scalar_values_do_not_recompile(backend):
    function = counting(lambda x, s: x * s + s)
    jitted = la.jit(function)
    x = f32(1, 2, 3)
    jitted(x, 0.7)
    compiles = la.cache_info().misses
    for value in (0.8, -4.25, 1e30):
        assert_identical(np.asarray(jitted(x, value)), x * np.float32(value) + np.float32(value))
    assert la.cache_info().misses == compiles
    assert jitted.cache_info().compiles == 1
    assert function.traces == 4  # a new value traces again (cheap), then reuses the executable
    jitted(x, 0.8)
    assert function.traces == 4


def test_python_scalars_may_steer_control_flow():
    jitted = la.jit(lambda x, flip: -x if flip else x)
    np.testing.assert_array_equal(np.asarray(jitted(f32(1), True)), f32(-1))
    np.testing.assert_array_equal(np.asarray(jitted(f32(1), False)), f32(1))


def test_negative_zero_and_nan_scalars_are_distinct_signatures():
    jitted = la.jit(lambda x, s: x + s)
    assert np.signbit(np.asarray(jitted(np.array([-0.0]), 0.0)))[0] == np.False_
    assert np.signbit(np.asarray(jitted(np.array([-0.0]), -0.0)))[0] == np.True_
    assert np.isnan(np.asarray(jitted(f32(1), float("nan")))).all()


# -- static arguments -----------------------------------------------------------------------------

def test_static_argnums_compile_one_version_per_value(backend):
    function = counting(lambda x, power: x ** 2 if power == 2 else x ** 3)
    jitted = la.jit(function, static_argnums=1)
    x = f32(1, 2)
    np.testing.assert_array_equal(np.asarray(jitted(x, 2)), f32(1, 4))
    np.testing.assert_array_equal(np.asarray(jitted(x, 3)), f32(1, 8))
    np.testing.assert_array_equal(np.asarray(jitted(x, power=3)), f32(1, 8))  # keyword form is static too
    jitted(x, 2)
    assert function.traces == 3
    assert jitted(x, 2.0).dtype == np.float32  # 2 and 2.0 are different static values (types differ)
    assert function.traces == 4


def test_static_argnames_and_decorator_forms():
    @la.jit(static_argnames="axis")
    def normalized(x, axis):
        """Divide by the sum along `axis`."""
        return x / x.sum(axis=axis, keepdims=True)

    values = np.arange(1, 7, dtype=np.float64).reshape(2, 3)
    np.testing.assert_allclose(np.asarray(normalized(values, axis=1)), values / values.sum(1, keepdims=True))
    np.testing.assert_allclose(np.asarray(normalized(values, 0)), values / values.sum(0, keepdims=True))
    assert normalized.__name__ == "normalized" and "Divide" in normalized.__doc__
    assert "la.jit(normalized)" in repr(normalized)

    jit_with_static_n = functools.partial(la.jit, static_argnames="n")
    repeat = jit_with_static_n(lambda x, n: x * n)
    assert np.asarray(repeat(f32(2), n=3)).tolist() == [6.0]

    @la.jit
    def plain(x):
        return x + 1

    assert np.asarray(plain(f32(1))).tolist() == [2.0]


def test_static_argument_errors():
    with pytest.raises(ValueError, match=r"static_argnums 2 is out of range.*takes 2 positional"):
        la.jit(lambda x, y: x, static_argnums=2)
    with pytest.raises(ValueError, match="static_argnames 'z' is not a parameter"):
        la.jit(lambda x, y: x, static_argnames="z")
    with pytest.raises(TypeError, match="static_argnums must be an int or a sequence"):
        la.jit(lambda x: x, static_argnums="0")
    with pytest.raises(TypeError, match="expected a function"):
        la.jit(3)
    jitted = la.jit(lambda x, axes: x.sum(axis=axes), static_argnums=1)
    with pytest.raises(TypeError, match=r"static argument 1 must be hashable.*got list \[0\].*tuple"):
        jitted(f32(1, 2), [0])
    assert np.asarray(jitted(f32(1, 2), (0,))).tolist() == 3.0


def test_wrong_arguments_give_clear_errors():
    jitted = la.jit(lambda x, y: x + y)
    with pytest.raises(TypeError, match=r"la.jit\(<lambda>\): missing a required argument: 'y'"):
        jitted(f32(1))
    with pytest.raises(TypeError, match=r"too many positional arguments"):
        jitted(f32(1), f32(2), f32(3))
    with pytest.raises(TypeError, match=r"argument args\[1\]\['mode'\] is a str.*static_argnums"):
        jitted(f32(1), {"mode": "fast"})
    with pytest.raises(TypeError, match="dtype object, which lazyarr does not support"):
        jitted(f32(1), np.array([None]))
    with pytest.raises(TypeError, match="ShapeDtypeStruct, which has no data"):
        jitted(f32(1), la.ShapeDtypeStruct((1,), np.float32))


# -- pytrees and closures -------------------------------------------------------------------------

Pair = namedtuple("Pair", "first second")


def test_pytrees_in_and_out(backend):
    function = counting(lambda params, inputs: {
        "sum": params["w"] * inputs[0] + params["b"],
        "pair": Pair(inputs[1], -inputs[1]),
        "nothing": None,
        "list": [inputs[0] * 2],
    })
    jitted = la.jit(function)
    params = {"w": f32(2, 3), "b": 1.5}
    result = jitted(params, (f32(1, 1), la.asarray(np.int32(4))))
    assert set(result) == {"sum", "pair", "nothing", "list"}
    np.testing.assert_array_equal(np.asarray(result["sum"]), f32(3.5, 4.5))
    assert isinstance(result["pair"], Pair) and result["pair"].second.tolist() == -4
    assert result["nothing"] is None and isinstance(result["list"], list)
    jitted({"w": f32(5, 5), "b": 1.5}, (f32(0, 1), np.int32(7)))
    assert function.traces == 1
    jitted({"w": f32(5, 5), "b": 1.5}, [f32(0, 1), np.int32(7)])  # a list, not a tuple: new structure
    assert function.traces == 2


def test_keyword_arguments_are_traced_too(backend):
    function = counting(lambda x, *, offset, scale=2.0: x * scale + offset)
    jitted = la.jit(function)
    np.testing.assert_array_equal(np.asarray(jitted(f32(1), offset=f32(3), scale=f32(4))), f32(7))
    np.testing.assert_array_equal(np.asarray(jitted(f32(2), scale=f32(1), offset=f32(0))), f32(2))
    assert function.traces == 1  # keyword order does not matter
    np.testing.assert_array_equal(np.asarray(jitted(f32(1), offset=f32(3))), f32(5))
    assert function.traces == 2


def test_results_may_be_inputs_constants_or_repeated(backend):
    jitted = la.jit(lambda x: (x, x * 2, x * 2, 3.5, np.arange(2)))
    x = f32(1, 2)
    same, doubled, again, scalar, constant = jitted(x)
    np.testing.assert_array_equal(np.asarray(same), x)
    np.testing.assert_array_equal(np.asarray(doubled), np.asarray(again))
    assert scalar.dtype == np.float64 and float(scalar) == 3.5
    np.testing.assert_array_equal(np.asarray(constant), np.arange(2))
    with pytest.raises(TypeError, match=r"result\[1\] is a str"):
        la.jit(lambda x: (x, "text"))(x)


def test_results_never_alias_the_callers_numpy_arrays(backend):
    values = f32(1, 2, 3)
    result = la.jit(lambda x: x)(values)
    assert values.flags.writeable
    values[0] = 100
    assert np.asarray(result).tolist() == [1, 2, 3]


def test_closures_over_arrays_are_captured(backend):
    weights = la.asarray(f32(1, 2, 3))
    lazy_bias = la.asarray(f32(1, 1, 1)) * 10  # evaluated once, before tracing
    table = np.array([0.5, 0.5, 0.5], np.float32)

    def affine(x):
        return x * weights + lazy_bias + table

    jitted = la.jit(affine)
    np.testing.assert_array_equal(np.asarray(jitted(f32(1, 1, 1))), f32(11.5, 12.5, 13.5))
    assert lazy_bias.is_evaluated
    lowered = jitted.lower(la.ShapeDtypeStruct((3,), np.float32))
    assert len(lowered.module.entry.parameters) == 1  # closed-over values are constants in it
    np.testing.assert_array_equal(np.asarray(lowered.compile()(f32(0, 0, 0))), f32(10.5, 10.5, 10.5))


# -- must-compile errors --------------------------------------------------------------------------

CONTROL_FLOW = "Python control flow on a traced value: use la.where, or mark the argument static with static_argnums"
CONVERSION = "has no value while the function is being compiled"
DATA_DEPENDENT = "data-dependent shape in jit: use la.where(mask, x, 0)"


def _branch(x):
    if x.sum() > 0:
        return x
    return -x


ERRORS = {
    # name: (function of the traced x, the operation the message names, the fix it gives)
    "if": (_branch, "bool()", CONTROL_FLOW),
    "float": (lambda x: float(x[0]), "float()", CONVERSION),
    "int": (lambda x: int(x[0]), "int()", CONVERSION),
    "item": (lambda x: x[0].item(), ".item()", CONVERSION),
    "tolist": (lambda x: x.tolist(), ".tolist()", CONVERSION),
    "np.asarray": (lambda x: np.asarray(x), "np.asarray()", CONVERSION),
    "print": (lambda x: print(x), "str() or print()", CONVERSION),
    "repr": (lambda x: repr(x), "repr()", CONVERSION),
    "index": (lambda x: [1, 2][x[0].astype(int)], "operator.index", CONVERSION),
    "mask": (lambda x: x[x > 0], "x[mask]", DATA_DEPENDENT),
    # (a scalar fill is `where`, which traces: test_a_masked_fill_traces; an array value needs the count)
    "mask assignment": (lambda x: x.__setitem__(x > 0, x[:1]), "x[mask] = value", DATA_DEPENDENT),
    "nonzero": (lambda x: la.nonzero(x), "la.nonzero", DATA_DEPENDENT),
    "unique": (lambda x: la.unique(x), "la.unique", DATA_DEPENDENT),
    "argwhere": (lambda x: la.argwhere(x), "la.argwhere", DATA_DEPENDENT),
    "flatnonzero": (lambda x: la.flatnonzero(x), "la.flatnonzero", DATA_DEPENDENT),
    "one-argument where": (lambda x: la.where(x > 0), "la.where", DATA_DEPENDENT),
    "np.nonzero": (lambda x: np.nonzero(x), "np.nonzero", DATA_DEPENDENT),
    # (a datetime function: lazyarr has no datetime dtypes, so NumPy's stays the fallback)
    "NumPy fallback": (lambda x: np.is_busday(x), "np.is_busday", "lazyarr has no lazy version of it"),
}


@pytest.mark.parametrize("name", ERRORS)
def test_asking_a_tracer_for_its_value_names_the_op_and_the_fix(name):
    function, operation, fix = ERRORS[name]
    jitted = la.jit(function)
    with pytest.raises(TypeError) as raised:
        jitted(f32(1, -2))
    message = str(raised.value)
    assert operation in message and fix in message and "la.jit(" in message
    assert jitted.cache_size() == 0
    assert np.asarray(la.jit(lambda x: x + 1)(f32(1))).tolist() == [2.0]  # the trace state is clean again


def test_a_masked_fill_traces():
    def clipped(x):
        y = x * 2
        y[y > 1] = 1  # no count of selected elements: where(y > 1, 1, y)
        return y

    values = f32(0.25, 1.0, -3.0, 0.75)
    np.testing.assert_array_equal(np.asarray(la.jit(clipped)(values)), clipped(values.copy()))


def test_values_that_do_not_depend_on_tracers_may_be_read():
    jitted = la.jit(lambda x: x * int(la.asarray([1, 2]).sum()))
    np.testing.assert_array_equal(np.asarray(jitted(f32(1, 2))), f32(3, 6))


def test_an_escaped_tracer_says_so():
    kept = []
    jitted = la.jit(lambda x: kept.append(x * 2) or x)
    jitted(f32(1))
    with pytest.raises(TypeError, match=r"escaped its trace.*return it from the jitted function"):
        np.asarray(kept[0])
    with pytest.raises(TypeError, match="escaped its trace"):
        la.jit(lambda x: x + kept[0])(f32(1))


# -- lower, ShapeDtypeStruct, explain, nested jit -------------------------------------------------

def test_lower_gives_the_module_with_parameters_and_outputs_in_flattened_order(backend):
    def model(params, x):
        hidden = x @ params["w"]
        return hidden.sum(), {"hidden": hidden}

    specs = ({"w": la.ShapeDtypeStruct((3, 4), "float32")}, la.ShapeDtypeStruct((2, 3), np.float32))
    lowered = la.jit(model).lower(*specs)
    entry = lowered.module.entry
    assert [(p.shape, p.dtype) for p in entry.parameters] == [((3, 4), np.float32), ((2, 3), np.float32)]
    assert [(o.shape, o.dtype) for o in entry.outputs] == [((), np.float32), ((2, 4), np.float32)]
    text = lowered.as_text()
    assert text == str(lowered) and text.startswith("HloModule jit_model")
    assert [p.shape for p in parse(text).entry.parameters] == [(3, 4), (2, 3)]  # round trip
    lowered.module.entry  # a fresh Module each time: compiling one never changes the text
    compiled = lowered.compile()
    assert lowered.as_text() == text
    w, x = np.ones((3, 4), np.float32), np.ones((2, 3), np.float32)
    total, parts = compiled({"w": w}, x)
    assert float(total) == 24.0 and np.asarray(parts["hidden"]).shape == (2, 4)
    with pytest.raises(TypeError, match=r"compiled for another signature: argument leaf 1: float32\[2, 3\]"):
        compiled({"w": w}, np.ones((5, 3), np.float32))


def test_lower_keeps_unused_arguments_as_parameters():
    entry = la.jit(lambda x, unused, y: x + y).lower(f32(1), np.zeros((2, 2), np.int8), f32(2)).module.entry
    assert [(p.shape, p.dtype) for p in entry.parameters] == [((1,), np.float32), ((2, 2), np.int8),
                                                              ((1,), np.float32)]


def test_lower_needs_no_data_and_evaluates_nothing():
    lazy = la.asarray(f32(1, 2)) + 1
    lowered = la.jit(lambda x, s: x * s).lower(lazy, 0.5)
    assert not lazy.is_evaluated
    assert "constant(0.5)" in lowered.as_text()  # a Python scalar is a constant of the module
    assert la.ShapeDtypeStruct([2, 3], "int32") == la.ShapeDtypeStruct((2, 3), np.int32)
    with pytest.raises(ValueError, match="negative dimensions"):
        la.ShapeDtypeStruct((-1,), np.float32)


def test_explain_reports_the_compiled_module(backend):
    jitted = la.jit(lambda a, b: la.exp(a) * b)
    report = jitted.explain(f32(1, 2), la.ShapeDtypeStruct((2,), np.float32))
    assert report.backend == backend
    assert report.hlo_before.startswith("HloModule jit__lambda_")
    assert " exp(p0)" in report.hlo_before and "HLO after optimization" in str(report)
    if backend == "cpu":
        assert report.num_kernels == 1


def test_nested_jit_inlines_into_one_module(backend):
    inner = counting(lambda x: x * 2)
    jitted_inner = la.jit(inner)
    outer = la.jit(lambda x: jitted_inner(x) + jitted_inner(np.float32(1)))
    np.testing.assert_array_equal(np.asarray(outer(f32(1, 2))), f32(4, 6))
    assert jitted_inner.cache_size() == 0 and inner.traces == 2  # run inside the outer trace, not compiled
    lowered = outer.lower(la.ShapeDtypeStruct((2,), np.float32))
    assert lowered.as_text().count(" multiply(") == 2 and not lowered.module.computations


def test_explain_cache_misses_says_why_a_signature_missed(caplog):
    jitted = la.jit(lambda x, s: x * s)
    _flags.with_overrides(explain_cache_misses=True)
    try:
        with caplog.at_level(logging.WARNING, logger="lazyarr.jit"):
            jitted(f32(1, 2), 0.25)
            jitted(np.ones((2, 2)), 0.25)
            jitted(np.ones((2, 2)), 0.75)
    finally:
        _flags.with_overrides(explain_cache_misses=False)
    messages = [record.getMessage() for record in caplog.records if record.name == "lazyarr.jit"]
    assert "first call" in messages[0]
    assert "argument leaf 0: float32[2] -> float64[2, 2]" in messages[1]
    assert "argument leaf 1: Python float 0.25 -> Python float 0.75" in messages[2]


def test_methods_bind_their_instance():
    class Scaler:
        factor = 3

        @functools.partial(la.jit, static_argnums=0)
        def scale(self, x):
            return x * self.factor

        def __hash__(self):
            return 0

        def __eq__(self, other):
            return isinstance(other, Scaler)

    assert np.asarray(Scaler().scale(f32(2))).tolist() == [6.0]


def test_a_call_like_the_last_one_reuses_its_entry_and_any_other_call_is_keyed_again():
    """la.jit keeps the last call's signature (evaluated host lazyarr arrays): the next call with
    arrays of those shapes and dtypes runs its entry without building a key; every other call
    (new shape or dtype, a NumPy or unevaluated argument, a Python scalar) takes the keyed
    path and gets its own answer."""
    f = la.jit(lambda a, b: a * 2 + b)
    x, y = np.arange(4.0), np.ones(4)
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(f(la.asarray(x), la.asarray(y))), x * 2 + 1)
    assert f.cache_info().traces == 1 and f.cache_info().hits == 2
    cases = [
        (la.asarray(np.arange(3.0)), la.asarray(np.ones(3))),  # another shape
        (la.asarray(np.arange(4, dtype=np.float32)), la.asarray(np.ones(4, np.float32))),  # another dtype
        (x, y),  # NumPy arrays
        (la.asarray(x) + 0, la.asarray(y)),  # an unevaluated argument
        (la.asarray(x), 1.0),  # a Python scalar
        (la.asarray(x), la.asarray(y)),  # the first signature again
    ]
    for a, b in cases:
        expected = np.asarray(a) * 2 + np.asarray(b)
        result = np.asarray(f(a, b))
        assert result.dtype == expected.dtype
        np.testing.assert_array_equal(result, expected)
    f.clear_cache()
    np.testing.assert_array_equal(np.asarray(f(la.asarray(x), la.asarray(y))), x * 2 + 1)
    # Traced: the first signature, the other shape, the other dtype, the Python scalar, and the
    # first signature again after clear_cache (NumPy and unevaluated arrays share the first's).
    assert f.cache_info().traces == 5


def test_cache_miss_explanations_show_complex_zero_and_nan_scalars():
    from lazyarr import _flags

    previous = _flags.FLAGS
    _flags.with_overrides(explain_cache_misses=True)
    try:
        f = la.jit(lambda a, s: a * s)
        x = la.asarray(np.arange(3.0))
        for scalar in (2.0, 1 + 2j, -0.0, float("nan"), 0j):
            expected = np.arange(3.0) * scalar
            np.testing.assert_array_equal(np.asarray(f(x, scalar)), expected)
    finally:
        _flags.FLAGS = previous
