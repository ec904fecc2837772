"""NumPy's functions that call Python functions, against NumPy: piecewise, vectorize (also with
a signature), frompyfunc and apply_over_axes.

Shape, then dtype, then values, exactly (NaNs equal): on the interpreter the traced graphs are
evaluated by NumPy's own ufuncs, and the per-element arithmetic a traced vectorize replaces is
Python's float/int/complex arithmetic, which rounds as NumPy's float64/int64/complex128 does.
Where NumPy raises for an element (ZeroDivisionError, an int beyond the output dtype) lazyarr
computes on (the documented difference), so those examples only check that lazyarr answers.
The hypothesis tables run on the interpreter (a compile per new graph would be too slow);
`test_compiled_values_match_numpy` runs a fixed table on the CPU backend.
"""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from lazyarr.frontend.tracing import TracedValueError
from tests.assertions import assert_lazy_matches
from tests.strategies import arrays

pytestmark = pytest.mark.usefixtures("interpreter_backend_for_module")

DTYPES = [np.dtype(name) for name in ("bool", "int8", "uint8", "int32", "int64", "float16", "float32", "float64",
                                      "complex64", "complex128")]
small_shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


def numpy_outcome(function, *args, **kwargs):
    """NumPy's result, or the exception it raises (its warnings silenced)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return function(*args, **kwargs)
        except (ValueError, TypeError, OverflowError, ZeroDivisionError, IndexError) as error:
            return error




def lazy(values) -> la.Array:
    """A lazy (not evaluated) array holding `values`."""
    array = la.asarray(values)
    return la.where(True, array, array)


# -- piecewise ---------------------------------------------------------------------------------

# Functions of the selected elements: elementwise ones (traced, applied with where), and ones
# that are not (NumPy's way: called on x[cond]). Each takes *args like NumPy's funclist.
PIECE_FUNCTIONS = {
    "double": lambda v, *a: v * 2,
    "negate plus": lambda v, *a: -v + 1,
    "sin": lambda v, *a: np.sin(v),
    "where": lambda v, *a: la.where(v > 1, v, 0),
    "constant": lambda v, *a: 7,
    "argument": lambda v, scale=2.0, *a: v * scale,
    "minus mean": lambda v, *a: v - v.mean(),  # a reduction: not elementwise
    "times size": lambda v, *a: v * v.size,  # reads the selection's size
    "ranks": lambda v, *a: np.arange(len(v)),  # builds an array of the selection's length
    "value check": lambda v, *a: v if bool((v == v).all()) else -v,  # asks for values
}


@st.composite
def piecewise_cases(draw):
    dtype = draw(st.sampled_from(DTYPES))
    values = draw(arrays(dtype, small_shapes))
    count = draw(st.integers(1, 3))
    conditions = [draw(hnp.arrays(np.bool_, values.shape)) for _ in range(count)]
    if values.ndim and draw(st.booleans()):
        conditions[0] = draw(hnp.arrays(np.bool_, values.shape[:1]))  # over the first axis only
    entries = st.one_of(st.sampled_from(sorted(PIECE_FUNCTIONS)), st.integers(-3, 300), st.floats(-5, 5))
    funclist = [draw(entries) for _ in range(count + draw(st.integers(0, 1)))]
    single = count == 1 and conditions[0].shape == values.shape and values.ndim and draw(st.booleans())
    return values, conditions, funclist, single, draw(st.booleans())


@settings(max_examples=60)
@given(piecewise_cases())
def test_piecewise_matches_numpy(case):
    values, conditions, funclist, single, lazy_conditions = case
    functions = [PIECE_FUNCTIONS[entry] if isinstance(entry, str) else entry for entry in funclist]
    expected = numpy_outcome(np.piecewise, values, conditions[0] if single else conditions, functions)
    given_conditions = [lazy(condition) if lazy_conditions else condition for condition in conditions]
    call = lambda: la.piecewise(lazy(values), given_conditions[0] if single else given_conditions, functions)  # noqa: E731
    if isinstance(expected, Exception):
        with pytest.raises(type(expected)), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call()
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy's ComplexWarning when a complex piece goes into a real x
        assert_lazy_matches(call(), expected)


def test_piecewise_stays_lazy_and_traces_elementwise_functions():
    values = np.array([-2.0, -0.5, 0.0, 0.5, 3.0, np.nan])
    x = lazy(values)
    conditions = [x < 0, x > 1]
    functions = [lambda v: -v, lambda v: v * 10, 0.25]
    result = la.piecewise(x, conditions, functions)
    assert not result.is_evaluated and not x.is_evaluated and not conditions[0].is_evaluated
    assert_lazy_matches(result, np.piecewise(values, [values < 0, values > 1], functions))
    jitted = la.jit(lambda a: la.piecewise(a, [a < 0, a > 1], functions))
    assert_lazy_matches(jitted(values), np.piecewise(values, [values < 0, values > 1], functions))
    # np.piecewise on a lazy array dispatches here (and stays lazy)
    dispatched = np.piecewise(x, [x < 0], [lambda v: -v, 1.0])
    assert isinstance(dispatched, la.Array) and not dispatched.is_evaluated
    # the scalar and single-condition forms
    scalar = la.asarray(-2)
    assert_lazy_matches(la.piecewise(scalar, [scalar < 0, scalar >= 0], [lambda v: -v, lambda v: v]),
                        np.piecewise(-2, [-2 < 0, -2 >= 0], [lambda v: -v, lambda v: v]))
    assert_lazy_matches(la.piecewise(x, x < 0, [1, 2]), np.piecewise(values, values < 0, [1, 2]))


def test_piecewise_functions_see_only_their_elements_when_they_check_values():
    values = np.array([-1.0, 4.0, 0.0, 9.0])
    seen = []

    def checked_sqrt(v):
        seen.append(v.shape)
        if bool((v < 0).any()):  # asks for values: not traceable, so NumPy's x[cond] call
            raise ValueError("negative input")
        return np.sqrt(v)

    x = lazy(values)
    expected = np.piecewise(values, [values > 0], [checked_sqrt, -1.0])
    assert_lazy_matches(la.piecewise(x, [x > 0], [checked_sqrt, -1.0]), expected)
    assert seen[-1] == (2,)  # the last call (lazyarr's NumPy-way call) got the two selected elements
    # a log over the positive part: computed on every element by the traced graph, NaNs dropped
    assert_lazy_matches(la.piecewise(x, [x > 0], [np.log, 0.0]), np.piecewise(values, [values > 0], [np.log, 0.0]))


def test_piecewise_inside_jit_needs_an_elementwise_function_or_concrete_conditions():
    values = np.array([-2.0, 1.0, 3.0])
    minus_mean = [lambda v: v - v.mean(), 0.0]
    with pytest.raises(TracedValueError, match=r"la.piecewise on a traced array inside la.jit.*funclist\[0\].*reduce"):
        la.jit(lambda a: la.piecewise(a, [a > 0], minus_mean))(values)
    fixed = np.array([False, True, True])
    assert_lazy_matches(la.jit(lambda a: la.piecewise(a, [fixed], minus_mean))(values),
                np.piecewise(values, [fixed], minus_mean))


def test_piecewise_errors():
    values = la.asarray([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="piecewise: with 2 condition.s., either 2 or 3 functions are expected"):
        la.piecewise(values, [values > 1, values > 2], [1])
    with pytest.raises(IndexError, match="piecewise: boolean index did not match"):
        la.piecewise(values, [np.array([True, False])], [1])
    with pytest.raises(OverflowError):
        la.piecewise(la.asarray([1, 2], dtype=np.int8), [np.array([True, False])], [300])


# -- vectorize ---------------------------------------------------------------------------------

# name -> (function, traced): the traced ones become one lazy graph; the others (Python control
# flow, math functions, a NumPy scalar of another precision) run NumPy's vectorize on the values.
ELEMENT_FUNCTIONS = {
    "affine": (lambda v: v * 2 + 1, True),
    "square over": (lambda v: v * v / 4, True),
    "abs": (abs, True),
    "sin": (lambda v: np.sin(v), True),
    "compare": (lambda v: v > 1, True),
    "negate": (lambda v: -v, True),
    "constant": (lambda v: 3, True),
    "two results": (lambda v: (v + 1, v * 0.5), True),
    "where": (lambda v: np.where(v == v, v, 0), True),
    "branch": (lambda v: v if v > 0 else 0, False),
    "math": (lambda v: math.copysign(2.0, v.real if isinstance(v, complex) else v), False),
    "float32 constant": (lambda v: v * np.float32(0.1), False),
    "float64 constant": (lambda v: v * np.float64(0.1), True),
}
OUTPUT_TYPES = [None, "d", [np.float32], [np.int16], "F"]


# int64 values left out: Python's integers do not wrap where a traced int64 does (pinned below)
VECTORIZE_DTYPES = [dtype for dtype in DTYPES if dtype != np.int64]


@settings(max_examples=80)
@given(st.sampled_from(VECTORIZE_DTYPES).flatmap(lambda dtype: arrays(dtype, small_shapes)),
       st.sampled_from(sorted(ELEMENT_FUNCTIONS)), st.sampled_from(OUTPUT_TYPES))
def test_vectorize_matches_numpy(values, name, otypes):
    function, _ = ELEMENT_FUNCTIONS[name]
    if name == "two results" and otypes is not None:
        otypes = [otypes[0], otypes[0]] if isinstance(otypes, list) else otypes * 2
    expected = numpy_outcome(lambda: np.vectorize(function, otypes=otypes)(values))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy's warnings from its scalar calls (overflow, invalid, cast)
        if isinstance(expected, ValueError) and "size 0" in str(expected):
            with pytest.raises(ValueError, match="cannot call `vectorize` on size 0 inputs"):
                la.vectorize(function, otypes=otypes)(lazy(values))
            return
        got = numpy_outcome(lambda: la.vectorize(function, otypes=otypes)(lazy(values)))
    if isinstance(expected, Exception):
        # NumPy raises for some element: lazyarr raises the same (NumPy's vectorize ran) or, where
        # the traced graph computes on (ZeroDivisionError, OverflowError, ...), answers
        assert not isinstance(got, Exception) or type(got) is type(expected), (got, expected)
        return
    assert not isinstance(got, Exception), got
    if values.dtype.kind == "c":
        # Python's complex abs and division (NumPy's call per element) and NumPy's complex128
        # loops (the traced graph) are different algorithms: within a few float64 roundings
        for got_part, expected_part in zip(*(part if isinstance(part, tuple) else (part,) for part in (got, expected))):
            assert got_part.shape == expected_part.shape and got_part.dtype == expected_part.dtype
            np.testing.assert_allclose(np.asarray(got_part), expected_part, rtol=4 * np.finfo(np.float64).eps)
        return
    assert_lazy_matches(got, expected)


def test_vectorize_traces_what_it_can_and_stays_lazy():
    values = np.array([-1.5, 0.0, 2.0, 0.25])
    for name, (function, traced) in ELEMENT_FUNCTIONS.items():
        x = lazy(values)
        result = la.vectorize(function)(x)
        parts = result if isinstance(result, tuple) else (result,)
        assert all(part.is_evaluated is not traced for part in parts), name
        assert_lazy_matches(result, numpy_outcome(np.vectorize(function), values))
    jitted = la.jit(lambda a: la.vectorize(lambda v: v * 2 + 1)(a))
    assert_lazy_matches(jitted(values), np.vectorize(lambda v: v * 2 + 1)(values))
    with pytest.raises(TracedValueError, match=r"la.vectorize on a traced array inside la.jit.*bool\(\)"):
        la.jit(lambda a: la.vectorize(lambda v: v if v > 0 else 0.0)(a))(values)


def test_vectorize_differences_a_traced_function_sees_no_python_number():
    """Pinned differences: the stand-in a traceable function is traced on is a lazyarr array,
    not the Python number NumPy passes, so a branch on the element's type takes the array's way."""
    function = la.vectorize(lambda v: v * 2 if isinstance(v, float) else v)
    values = np.array([1.5, -2.0])
    assert_lazy_matches(function(la.asarray(values)), values)
    assert_lazy_matches(la.asarray(np.vectorize(function.pyfunc)(values)), values * 2)
    # and a traced integer function computes in int64, which wraps where Python's ints do not
    smallest = np.array([np.iinfo(np.int64).min])
    assert_lazy_matches(la.vectorize(abs, otypes="d")(smallest), smallest.astype(float))
    assert_lazy_matches(la.asarray(np.vectorize(abs, otypes="d")(smallest)), -smallest.astype(float))


def test_vectorize_arguments_as_numpy_takes_them():
    def scaled(x, y, scale=1.0, offset=0.0):
        return (x + y) * scale + offset

    x, y = np.array([[1.0], [2.0]]), np.array([0.5, -1.0, 3.0])
    for arguments in [dict(), dict(excluded={"offset"}), dict(excluded={"scale"})]:
        expected = np.vectorize(scaled, **arguments)(x, y, scale=2.0, offset=np.float64(0.25))
        assert_lazy_matches(la.vectorize(scaled, **arguments)(lazy(x), y, scale=2.0, offset=np.float64(0.25)), expected)
    expected = np.vectorize(scaled, excluded={2})(x, y, 3.0)
    assert_lazy_matches(la.vectorize(scaled, excluded={2})(x, lazy(y), 3.0), expected)

    @la.vectorize(otypes=[np.float32])
    def half(v):
        """half of v"""
        return v / 2

    assert isinstance(half, la.vectorize) and half.__doc__ == "half of v"
    assert_lazy_matches(half(la.asarray([1, 3])), np.array([0.5, 1.5], np.float32))
    assert_lazy_matches(la.vectorize(len)(["ab", "c", ""]), np.array([2, 1, 0]))  # strings: NumPy's vectorize
    words = la.vectorize(lambda v: "x" * v)(la.asarray([1, 2]))
    assert isinstance(words, np.ndarray) and words.tolist() == ["x", "xx"]  # no string dtype in lazyarr
    assert la.vectorize(lambda: 5.0)() == 5.0  # no arguments: the function's own result, as NumPy's
    with pytest.raises(ValueError, match="cannot call `vectorize` on size 0 inputs"):
        la.vectorize(abs)(la.zeros((0, 2)))
    assert_lazy_matches(la.vectorize(abs, otypes="d")(la.zeros((0, 2), dtype=np.int8)), np.zeros((0, 2)))
    with pytest.raises(ValueError, match="Invalid otype specified"):
        la.vectorize(abs, otypes="?!")
    with pytest.raises(TypeError, match="only accepts keyword arguments"):
        la.vectorize(3)


def test_vectorize_with_a_signature():
    matrix, vector = np.arange(6.0).reshape(2, 3), np.array([1.0, -2.0, 0.5])
    cases = [
        (lambda a, b: a @ b, "(n),(n)->()", (matrix, vector), None),
        (lambda a: (a.sum(), a * 2), "(n)->(),(n)", (matrix,), None),
        (lambda v: np.array([v, -v]), "()->(k)", (vector,), None),
        (lambda a: a.max(), "(n)->()", (matrix,), [np.int32]),
    ]
    for function, signature, arguments, otypes in cases:
        expected = np.vectorize(function, signature=signature, otypes=otypes)(*arguments)
        got = la.vectorize(function, signature=signature, otypes=otypes)(*[lazy(argument) for argument in arguments])
        assert_lazy_matches(got, expected)
    dot = la.vectorize(lambda a, b: a @ b, signature="(n),(n)->()")
    assert not dot(lazy(matrix), vector).is_evaluated  # each slice's call is recorded, not run
    assert_lazy_matches(la.jit(lambda a: dot(a, a))(matrix), np.vectorize(lambda a, b: a @ b, signature="(n),(n)->()")(
        matrix, matrix))
    for call, message in [
        (lambda: dot(matrix), "wrong number of positional arguments"),
        (lambda: dot(matrix, np.ones(2)), "inconsistent size for core dimension 'n'"),
        (lambda: la.vectorize(lambda a: (a, a), signature="(n)->()")(matrix), "wrong number of outputs"),
        (lambda: dot(np.ones((0, 3)), vector), "size 0 inputs unless `otypes` is set"),
        (lambda: la.vectorize(abs, signature="()->(k)", otypes="d")(np.ones(0)), "new output dimensions"),
    ]:
        with pytest.raises((TypeError, ValueError), match=message):
            call()
    assert_lazy_matches(la.vectorize(lambda a, b: a @ b, signature="(n),(n)->()", otypes="d")(np.ones((0, 3)), vector),
                np.zeros(0))


# -- frompyfunc, apply_over_axes ----------------------------------------------------------------


def test_frompyfunc_is_numpys_object_ufunc():
    multiply = la.frompyfunc(lambda a, b: a * b, 2, 1)
    assert isinstance(multiply, np.ufunc) and (multiply.nin, multiply.nout) == (2, 1)
    values = np.array([1, 2, 3])
    got = multiply(lazy(values), 3)
    expected = np.frompyfunc(lambda a, b: a * b, 2, 1)(values, 3)
    assert got.dtype == object and got.tolist() == expected.tolist()
    assert multiply.reduce(lazy(values)) == 6
    assert multiply(la.asarray(2.0), 3) == 6.0  # a 0-d input gives a Python object, as NumPy's
    with pytest.raises(TracedValueError, match=r"np.<lambda> \(vectorized\) on a traced array inside la.jit"):
        la.jit(lambda a: multiply(a, 2))(values)


@given(st.sampled_from([np.dtype("int16"), np.dtype("float32"), np.dtype("float64")]).flatmap(
    lambda dtype: arrays(dtype, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3), allow_edge=False,
                         min_value=-100, max_value=100)), st.data())
def test_apply_over_axes_matches_numpy(values, data):
    axes = data.draw(st.integers(-values.ndim, values.ndim - 1) | st.lists(
        st.integers(-values.ndim, values.ndim - 1), min_size=1, max_size=3))
    for lazy_function, numpy_function in [(la.sum, np.sum), (np.max, np.max), (la.cumsum, np.cumsum)]:
        expected = numpy_outcome(np.apply_over_axes, numpy_function, values, axes)
        if isinstance(expected, Exception):
            with pytest.raises(type(expected)):
                la.apply_over_axes(lazy_function, lazy(values), axes)
            continue
        assert_lazy_matches(la.apply_over_axes(lazy_function, lazy(values), axes), expected)


def test_apply_over_axes_laziness_and_errors():
    values = np.arange(24.0).reshape(2, 3, 4)
    x = lazy(values)
    result = la.apply_over_axes(la.mean, x, (0, 2))
    assert not result.is_evaluated
    assert_lazy_matches(result, np.apply_over_axes(np.mean, values, (0, 2)))
    assert_lazy_matches(np.apply_over_axes(np.sum, x, [1]), np.apply_over_axes(np.sum, values, [1]))
    assert_lazy_matches(la.jit(lambda a: la.apply_over_axes(la.sum, a, [0, 1]))(values),
                np.apply_over_axes(np.sum, values, [0, 1]))
    with pytest.raises(ValueError, match="apply_over_axes: function is not returning an array of the correct shape"):
        la.apply_over_axes(lambda a, axis: a.sum(axis=axis).sum(), x, [0])
    with pytest.raises(AttributeError):
        la.apply_over_axes(la.sum, [[1, 2]], 0)  # NumPy reads a.ndim of the argument itself


# -- compiled code, documentation ---------------------------------------------------------------


def test_compiled_values_match_numpy():
    values = np.array([-2.5, -0.0, 0.0, 0.75, 1.0, np.inf, -np.inf, np.nan, 3.0])
    la.set_backend("cpu")
    try:
        x = la.asarray(values)
        functions = [lambda v: -v * 3, lambda v: v / 4 + 1, 0.5]
        pieces = la.piecewise(x, [x < 0, x > 1], functions)
        assert_lazy_matches(pieces, np.piecewise(values, [values < 0, values > 1], functions))
        affine = la.vectorize(lambda v: v * 2.5 - 1, otypes=[np.float32])
        assert_lazy_matches(affine(x), np.vectorize(lambda v: v * 2.5 - 1, otypes=[np.float32])(values))
        # sin: the CPU kernel and NumPy's are each within a few ulps (test_elementwise's COMPILED_ULPS)
        sines = la.vectorize(lambda v: np.sin(v))(x)
        with np.errstate(invalid="ignore"):
            expected = np.vectorize(lambda v: np.sin(v))(values)
        np.testing.assert_array_max_ulp(np.asarray(sines), expected, maxulp=4)
        assert_lazy_matches(la.apply_over_axes(la.sum, la.asarray(values.reshape(3, 3)), [1]),
                    np.apply_over_axes(np.sum, values.reshape(3, 3), [1]))
    finally:
        la.set_backend("interpreter")


def test_docstring_examples():
    import doctest

    from lazyarr.frontend import elementwise_tracing, python_functions, vectorize_signature

    for module in (python_functions, elementwise_tracing, vectorize_signature):
        assert doctest.testmod(module).failed == 0, module.__name__
