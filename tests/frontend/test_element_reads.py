"""Reading evaluated arrays: basic keys read the buffer as NumPy does, elements do NumPy's scalar math.

`x[i]` of an evaluated array is an `Element` (NumPy's scalar as a 0-d lazyarr array) and a
slice is a view bound to NumPy's view of the buffer: no graph, no compile per new index. These
tests hold both to NumPy: values, dtypes and shapes of random keys; element arithmetic with
Python scalars and other elements (NEP 50 dtypes, errors); write-through of such views; and
that reading compiles nothing.
"""

from __future__ import annotations

import gc
import operator

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lazyarr as la
from lazyarr.frontend.elements import Element
from tests.assertions import assert_identical, outcome
from tests.strategies import ALL_DTYPES, arrays, elements, nonempty_shapes


def evaluated(value: np.ndarray) -> la.Array:
    return la.asarray(value).eval()


@st.composite
def basic_keys(draw, shape):
    """A basic key NumPy accepts for `shape`: ints, slices, None and at most one Ellipsis."""
    key, axis = [], 0
    ellipsis_used = False
    while axis < len(shape):
        kind = draw(st.sampled_from(["int", "slice", "none", "ellipsis", "stop"]))
        if kind == "stop":
            break
        if kind == "int":
            key.append(draw(st.integers(-shape[axis], shape[axis] - 1)))
            axis += 1
        elif kind == "slice":
            bound = st.none() | st.integers(-shape[axis] - 2, shape[axis] + 2)
            step = st.none() | st.integers(-3, 3).filter(bool)
            key.append(slice(draw(bound), draw(bound), draw(step)))
            axis += 1
        elif kind == "none":
            key.append(None)
        elif not ellipsis_used:
            key.append(Ellipsis)
            ellipsis_used = True
            axis = len(shape)  # the ellipsis covers the rest
    return key[0] if len(key) == 1 and draw(st.booleans()) else tuple(key)


@given(st.data())
def test_basic_keys_of_evaluated_arrays_read_as_numpy_does(data):
    dtype = data.draw(st.sampled_from(ALL_DTYPES))
    value = data.draw(arrays(dtype, nonempty_shapes))
    key = data.draw(basic_keys(value.shape))
    array = evaluated(value)
    misses = la.cache_info().misses
    got = array[key]
    assert_identical(np.asarray(got), np.asarray(value[key]))
    assert la.cache_info().misses == misses  # read from the buffer: nothing compiled
    if np.ndim(value[key]) == 0 and not isinstance(value[key], np.ndarray):
        assert type(got) is Element


OPERATIONS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
              operator.mod, operator.pow, operator.lt, operator.le, operator.eq, operator.ne,
              operator.gt, operator.ge, operator.and_, operator.or_, operator.xor]


@given(st.data())
def test_element_arithmetic_is_numpys_scalar_arithmetic(data):
    dtype = data.draw(st.sampled_from(ALL_DTYPES))
    scalar = data.draw(elements(dtype))
    other = data.draw(st.one_of(
        st.booleans(), st.integers(-300, 300), st.floats(allow_nan=True), st.complex_numbers(max_magnitude=1e3),
        st.sampled_from(ALL_DTYPES).flatmap(elements),
    ))
    operation = data.draw(st.sampled_from(OPERATIONS))
    reflected = data.draw(st.booleans())
    numpy_buffer = np.array([scalar], dtype=dtype)
    lazy_element = evaluated(numpy_buffer)[0]
    numpy_element = numpy_buffer[0]
    # A NumPy scalar meets the element as an element of its own, or as it is (both: NumPy's scalar math).
    as_element = isinstance(other, np.generic) and data.draw(st.booleans())
    other_lazy = evaluated(np.array([other]))[0] if as_element else other

    def run(element, operand):
        return lambda: operation(operand, element) if reflected else operation(element, operand)

    want, want_error = outcome(run(numpy_element, other))
    got, got_error = outcome(run(lazy_element, other_lazy))
    assert got_error == want_error
    if want_error is None:
        assert isinstance(got, la.Array) and got.shape == ()
        if isinstance(want, np.generic):  # (NumPy's answer a NumPy scalar: computed now, nothing recorded)
            assert type(got) is Element
        assert_identical(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_element_conversions_match_numpy(dtype):
    value = np.array([3], dtype=dtype)
    element = evaluated(value)[0]
    assert element.dtype == value.dtype and element.shape == () and element.ndim == 0 and element.size == 1
    for convert in (int, float, complex, bool):
        want, want_error = outcome(lambda convert=convert: convert(value[0].item()))
        got, got_error = outcome(lambda convert=convert: convert(element))
        assert (got, got_error) == (want, want_error)
    assert element.item() == value[0].item()
    if np.issubdtype(dtype, np.integer):
        assert [10, 20, 30, 40][element] == 40


def test_elements_meet_pending_arrays_and_jit_as_arrays():
    x = evaluated(np.arange(6, dtype=np.float32))
    pending = la.asarray(np.ones(3, np.float32)) * 2
    element = x[4]
    np.testing.assert_array_equal(np.asarray(element * pending + x[1]), np.full(3, 9, np.float32))
    doubled = la.jit(lambda y: y * x[2])(la.asarray(np.arange(3, dtype=np.float32)))
    np.testing.assert_array_equal(np.asarray(doubled), np.arange(3, dtype=np.float32) * 2)
    gradient = la.grad(lambda y: y[1] * 3 + y[2:4].sum())(x)
    np.testing.assert_array_equal(np.asarray(gradient), [0, 3, 1, 1, 0, 0])


def test_an_element_is_a_copy_and_views_write_through():
    value = np.arange(12.0).reshape(3, 4)
    numpy_copy = value.copy()
    array = evaluated(value)
    element, numpy_element = array[1, 2], numpy_copy[1, 2]
    element += 1
    numpy_element += 1
    assert float(element) == numpy_element and type(element) is Element
    row, numpy_row = array[2], numpy_copy[2]
    row[1:3] = -1
    numpy_row[1:3] = -1
    array[2, 0] = 7
    numpy_copy[2, 0] = 7
    assert_identical(np.asarray(array), numpy_copy)
    assert_identical(np.asarray(row), numpy_row)
    assert_identical(np.asarray(array[::-2, 1::2]), numpy_copy[::-2, 1::2])


def test_reading_every_element_compiles_nothing():
    value = np.random.default_rng(0).standard_normal(500)
    array = (la.asarray(value) * 2).eval()
    misses = la.cache_info().misses
    total = 0.0
    for index in range(len(array)):
        if array[index] > 0:
            total += float(array[index]) - array[index - 1]
    want = sum(2 * value[i] - 2 * value[i - 1] for i in range(len(value)) if value[i] > 0)
    np.testing.assert_allclose(float(total), want, rtol=1e-12)  # the same float64 sums, reordered by nothing
    assert la.cache_info().misses == misses


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8])
def test_element_arithmetic_is_silent_and_leaves_numpys_error_state_as_it_was(dtype):
    """Element math ignores floating-point and integer-overflow errors, as lazyarr's kernels do
    (NumPy's answer: inf, wrapped integers), whatever error state the user set; afterwards that
    state is in force again, for NumPy and for the next element operation alike."""
    info = np.finfo(dtype) if np.dtype(dtype).kind == "f" else np.iinfo(dtype)
    largest = evaluated(np.array([info.max], dtype))[0]
    expected = np.array([info.max], dtype)
    with np.errstate(all="ignore"):
        expected = expected * dtype(3)
    with np.errstate(all="raise"):
        product = largest * 3
        assert type(product) is Element
        assert_identical(np.asarray(product), expected[0])
        assert np.geterr() == {"divide": "raise", "over": "raise", "under": "raise", "invalid": "raise"}
        with pytest.raises(FloatingPointError):
            dtype(info.max) * dtype(3)  # NumPy scalar math checks overflow (arrays of ints do not)
        assert_identical(np.asarray(largest * 3), expected[0])  # silent again


@pytest.mark.parametrize("base", [False, 2, np.int8(3), "lazy"])
def test_a_negative_integer_element_as_exponent_of_an_integer_base_raises_as_numpy(base):
    """`base ** x[i]` with a known negative integer x[i]: NumPy refuses integer bases ("Integers to
    negative integer powers are not allowed"); lazyarr knows the element's value and refuses too
    (found by the dev profile of the test above: the element case computed a value)."""
    exponent = evaluated(np.array([-1], np.int8))[0]
    lazy_base = evaluated(np.array([2, 3], np.int16)) if base == "lazy" else base
    numpy_base = np.array([2, 3], np.int16) if base == "lazy" else base
    with pytest.raises(ValueError, match="negative integer powers"):
        numpy_base ** np.int8(-1)
    with pytest.raises(ValueError, match="negative integer powers"):
        lazy_base ** exponent
    assert np.asarray(evaluated(np.array([2.0]))[0] ** exponent) == 0.5  # a float base is fine


# -- the C extension (lazyarr/frontend/_fast_paths.c) against the Python path it stands for ----
from lazyarr.frontend import fast_paths, indexing  # noqa: E402

C_BUILT = fast_paths._fast_paths is not None  # (built: a C compiler was found at install)
C_ON = fast_paths.ENABLED and type(la.Array.__dict__["__getitem__"]).__name__ == "FastSlot"
needs_c = pytest.mark.skipif(not C_ON, reason="the C extension is not built here, or --c_extensions=false")


def _read(function, array, key):
    """(value, dtype, shape, type) of `function(array, key)`, or the exception's type and message."""
    try:
        got = function(array, key)
    except Exception as error:  # noqa: BLE001 (any error: both paths must raise the same)
        return type(error), str(error)
    return type(got), got.dtype, got.shape, np.asarray(got).tobytes()


@st.composite
def integer_keys(draw, shape):
    """Integer keys, in and out of bounds, of every length around the array's rank, and keys
    that look like integers but are not Python ints (bool, NumPy integers): the C path takes
    only exact ints and leaves the rest to Python."""
    def one(size):
        return draw(st.integers(-size - 2, size + 1) | st.sampled_from([2**63, -(2**70)]))
    length = draw(st.integers(0, len(shape) + 1))
    key = tuple(one(shape[axis] if axis < len(shape) else 1) for axis in range(length))
    kind = draw(st.sampled_from(["tuple", "int", "bool", "numpy"]))
    if kind == "int" and key:
        return key[0]
    if kind == "bool":
        return draw(st.booleans())
    if kind == "numpy" and key:
        return np.int64(key[0]) if -(2**63) <= key[0] < 2**63 else key[0]
    return key


@needs_c
@given(st.data())
def test_c_element_reads_are_the_python_reads(data):
    dtype = data.draw(st.sampled_from(ALL_DTYPES))
    value = data.draw(arrays(dtype, st.lists(st.integers(1, 4), min_size=0, max_size=3).map(tuple)))
    key = data.draw(integer_keys(value.shape))
    array = evaluated(value)
    through_c = _read(la.Array.__getitem__, array, key)
    assert through_c == _read(indexing.getitem, array, key)
    if through_c[0] is Element:  # NumPy's own scalar, bit for bit
        assert through_c[1:] == (value[key].dtype, (), np.asarray(value[key]).tobytes())


@needs_c
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_c_element_conversions_are_the_python_conversions(dtype):
    info = np.finfo(dtype) if np.issubdtype(dtype, np.inexact) else None
    specials = [0, 1, -0.0, np.nan, np.inf, -np.inf, info.max, info.tiny] if info is not None else []
    integer_limits = [np.iinfo(dtype).min, np.iinfo(dtype).max] if np.issubdtype(dtype, np.integer) else []
    candidates = [0, 1, 3] + integer_limits + specials
    with np.errstate(all="ignore"):
        values = np.array(candidates, dtype=np.float64 if info is not None else object).astype(dtype)
    array = evaluated(values)
    for index in range(len(values)):
        element = array[index]
        assert type(element) is Element
        for name, convert in (("__float__", float), ("__int__", int), ("__bool__", bool),
                              ("__index__", operator.index)):
            python_path = Element.__dict__[name].__wrapped__
            got = outcome(lambda convert=convert: convert(element))
            want = outcome(lambda p=python_path: p(element))
            assert (type(got[0]), repr(got[0]), got[1]) == (type(want[0]), repr(want[0]), want[1])  # (NaN: repr)


@needs_c
def test_c_reads_of_an_element_written_in_place_see_its_new_value():
    array = evaluated(np.array([1.5, 2.5]))
    element = array[0]
    view = element[...]  # viewed: `+=` can no longer swap the scalar, so the element becomes a graph
    element += 1
    assert element._value is None  # the C path leaves it to the Python one
    assert (float(element), int(element), bool(element)) == (2.5, 2, True)
    assert float(view) == 2.5 and float(array[0]) == 1.5


@needs_c
def test_c_element_reads_leak_no_references():
    import sys

    array = evaluated(np.arange(100.0))
    buffer = array._node._bound
    gc.collect()
    gc.disable()  # (a collection meanwhile frees earlier tests' cyclic garbage: None's count moves)
    try:
        before = (sys.getrefcount(array), sys.getrefcount(buffer), sys.getrefcount(Element), sys.getrefcount(None))
        total = 0.0
        for _ in range(3):
            for index in range(100):
                total += float(array[index]) + int(array[index]) + bool(array[index])
            for index in range(-100, 100, 7):
                _read(la.Array.__getitem__, array, (index, 0))  # IndexError: the Python path's message
        after = (sys.getrefcount(array), sys.getrefcount(buffer), sys.getrefcount(Element), sys.getrefcount(None))
    finally:
        gc.enable()
    assert before[:3] == after[:3] and abs(before[3] - after[3]) < 50  # (None: other code may hold some)
    assert total == 3 * (2 * sum(range(100)) + 99)


def test_c_element_reads_can_be_turned_off():
    import subprocess
    import sys

    script = ("import lazyarr as la, numpy as np; x = la.asarray(np.arange(3.0)).eval(); "
              "print(type(la.Array.__dict__['__getitem__']).__name__, float(x[2]))")
    on = "FastSlot" if C_BUILT else "function"
    for flag, kind in (("--c_extensions=false", "function"), ("--c_extensions=true", on)):
        env = {**__import__("os").environ, "LAZYARR_FLAGS": flag}
        printed = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
        assert printed.stdout.split() == [kind, "2.0"]


def test_the_c_extension_is_built_where_a_compiler_is():
    """An install on a machine with a C compiler builds it (setup.py): a failed build would
    silently make every element read several times slower."""
    import shutil
    import sysconfig

    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        pytest.skip(f"no C compiler ({compiler}) here: lazyarr runs its Python element reads")
    assert C_BUILT


@needs_c
@given(st.data())
def test_c_jit_argument_buffers_are_the_python_ones(data):
    """`host_buffers` (C) against jit.py's `host_buffers_of_layouts`: a jitted call's quick
    path takes evaluated host arrays of exactly the last call's shapes and dtypes, nothing else."""
    from lazyarr.frontend import jit as jit_module

    def argument(draw_shape, dtype):
        kind = data.draw(st.sampled_from(["evaluated", "pending", "numpy", "element", "scalar"]))
        value = np.zeros(draw_shape, dtype)
        if kind == "evaluated":
            return evaluated(value)
        if kind == "pending":
            return la.asarray(value) + 1
        if kind == "element":
            return evaluated(np.zeros(3, dtype))[1]
        return value if kind == "numpy" else 1.5

    shapes = [data.draw(st.sampled_from([(), (2,), (3,), (2, 3)])) for _ in range(data.draw(st.integers(0, 3)))]
    dtypes = [data.draw(st.sampled_from([np.float32, np.float64, np.int32])) for _ in shapes]
    layouts = tuple((shape, np.dtype(dtype)) for shape, dtype in zip(shapes, dtypes))
    args = tuple(argument(data.draw(st.sampled_from([shape, (4,)])), data.draw(st.sampled_from([dtype, np.int8])))
                 for shape, dtype in zip(shapes, dtypes))
    if data.draw(st.booleans()):
        args = args + (evaluated(np.zeros(2)),)  # one argument more than the layouts
    got, want = jit_module._host_buffers(args, layouts), jit_module.host_buffers_of_layouts(args, layouts)
    assert (got is None) == (want is None)
    if want is not None:
        assert len(got) == len(want) and all(a is b for a, b in zip(got, want))
