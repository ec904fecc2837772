"""NumPy's math beyond the array API against NumPy 2: angle conversions, fix/around/modf/
divmod, sinc, heaviside, logaddexp2, the real/complex checks and nan_to_num, polynomials,
unwrap, geomspace and the windows, lexsort and sort_complex, matvec/vecmat, the dtype helpers.

Each check is shape, then dtype, then values (NaNs equal). Values are exact unless a comment
at the check says why not: lazyarr adds a sum in another order than NumPy's dot (polymul,
poly, matvec), or NumPy calls a transcendental kernel whose last bits depend on the loop it
picks (logaddexp2's scalar libm exp2/log1p against the SIMD ones the interpreter runs, power
in geomspace). The hypothesis tables run on the interpreter (it evaluates the same graphs
with NumPy, without a compile per new graph); `test_compiled_values_match_numpy` runs a fixed
table on the CPU backend.
"""

import doctest
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from lazyarr.frontend import numpy_math
from lazyarr.frontend.tracing import TracedValueError
from tests.assertions import assert_identical
from tests.strategies import ALL_DTYPES, REAL_DTYPES, arrays

pytestmark = pytest.mark.usefixtures("interpreter_backend_for_module")

INTEGER_DTYPES = [dtype for dtype in REAL_DTYPES if dtype.kind in "iu"]
COMPLEX_DTYPES = [np.dtype(np.complex64), np.dtype(np.complex128)]
vectors = hnp.array_shapes(min_dims=1, max_dims=1, min_side=0, max_side=6)
nonempty_vectors = hnp.array_shapes(min_dims=1, max_dims=1, min_side=1, max_side=6)
small_shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


def numpy_quietly(function, *args, **kwargs):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


def assert_same(got, expected):
    """Shape, then dtype, then values (NaNs equal, zeros of either sign)."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    np.testing.assert_array_equal(got, expected)


def assert_close(got, expected, ulps=None, bound=None):
    """Shape, then dtype, then values within `ulps` units in the last place of the expected
    value (complex: part by part), or within an absolute `bound` array; NaN and infinities equal."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    parts = [(got, expected)]
    if got.dtype.kind == "c":
        parts = [(got.real, expected.real), (got.imag, expected.imag)]
    for got_part, want in parts:
        if want.dtype.kind not in "fc":
            np.testing.assert_array_equal(got_part, want)
            continue
        same = (got_part == want) | (np.isnan(got_part) & np.isnan(want))
        with np.errstate(all="ignore"):
            if bound is not None:
                allowed = np.abs(bound).astype(np.float64)
            else:
                allowed = ulps * np.spacing(np.abs(want).astype(want.dtype)).astype(np.float64)
            near = np.abs(got_part.astype(np.float64) - want.astype(np.float64)) <= allowed
        assert np.all(same | near), (got_part[~(same | near)], want[~(same | near)])


def lazy(values) -> la.Array:
    """A pending lazy array (not evaluated) holding `values`."""
    return la.asarray(values) + la.zeros((), la.asarray(values).dtype)


# -- angle conversions, fix, around, modf, sinc ------------------------------------------------

ANGLES = [(la.deg2rad, np.deg2rad), (la.rad2deg, np.rad2deg), (la.radians, np.radians), (la.degrees, np.degrees)]


@given(st.sampled_from(ALL_DTYPES).flatmap(lambda dtype: arrays(dtype, small_shapes)),
       st.sampled_from(ANGLES))
def test_angle_conversions_match_numpy(values, functions):
    ours, theirs = functions
    if values.dtype.kind == "c":
        with pytest.raises(TypeError, match=ours.__name__):
            ours(la.asarray(values))
        return
    assert_same(ours(la.asarray(values)), numpy_quietly(theirs, values))


def test_angle_conversions_of_every_float16_and_python_scalars():
    every = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    for ours, theirs in ANGLES:
        assert_same(ours(la.asarray(every)), numpy_quietly(theirs, every))  # NumPy's float32 loop
        assert_same(ours(180), theirs(180))
        assert_same(ours(True), theirs(True))  # bool -> float16


@given(st.sampled_from(REAL_DTYPES + COMPLEX_DTYPES).flatmap(lambda dtype: arrays(dtype, small_shapes)),
       st.integers(-3, 3))
def test_fix_around_and_modf_match_numpy(values, decimals):
    array = la.asarray(values)
    if values.dtype.kind == "c":
        with pytest.raises(TypeError, match="fix"):
            la.fix(array)
        with pytest.raises(TypeError, match="modf"):
            la.modf(array)
    else:
        assert_identical(np.asarray(la.fix(array)), np.asarray(numpy_quietly(np.fix, values)))
        fraction, integral = la.modf(array)
        expected_fraction, expected_integral = numpy_quietly(np.modf, values)
        assert_identical(np.asarray(fraction), expected_fraction)  # signed zeros, +-inf -> +-0
        assert_identical(np.asarray(integral), expected_integral)
    if values.dtype == np.bool_ and decimals != 0:
        with pytest.raises(TypeError):  # NumPy cannot cast the scaled values back to bool
            la.around(array, decimals)
        return
    assert_same(la.around(array, decimals), numpy_quietly(np.around, values, decimals))


@given(st.sampled_from(ALL_DTYPES).flatmap(lambda dtype: arrays(dtype, small_shapes)))
def test_sinc_matches_numpy(values):
    # Exact on the interpreter: the same multiply, where, sin and divide, each NumPy's loop.
    assert_same(la.sinc(la.asarray(values)), numpy_quietly(np.sinc, values))


# -- heaviside, logaddexp2, divmod -------------------------------------------------------------


@st.composite
def real_pairs(draw, dtypes=REAL_DTYPES, weak=True):
    """Two operands of mutually broadcastable shapes; the second may be a weak Python scalar."""
    first_dtype, second_dtype = draw(st.sampled_from(dtypes)), draw(st.sampled_from(dtypes))
    broadcast = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4))
    first = draw(arrays(first_dtype, st.just(broadcast.input_shapes[0])))
    if weak and draw(st.booleans()):
        second = draw(st.sampled_from([0, 1, -2, 0.5, -0.0, float("nan"), float("inf"), True]))
    else:
        second = draw(arrays(second_dtype, st.just(broadcast.input_shapes[1])))
    return first, second


def _lazy_operand(value):
    return la.asarray(value) if isinstance(value, np.ndarray) else value


@given(real_pairs())
def test_heaviside_matches_numpy(pair):
    first, second = pair
    expected = numpy_quietly(np.heaviside, first, second)
    assert_same(la.heaviside(la.asarray(first), _lazy_operand(second)), expected)


@given(real_pairs(weak=True))
def test_logaddexp2_matches_numpy(pair):
    first, second = pair
    expected = numpy_quietly(np.logaddexp2, first, second)
    # NumPy's logaddexp2 loop calls libm's scalar exp2 and log1p; the interpreter runs NumPy's
    # SIMD exp2/log1p kernels, which differ from libm by up to an ulp each: 4 ulps in all.
    assert_close(la.logaddexp2(la.asarray(first), _lazy_operand(second)), expected, ulps=4)


def test_ufunc_methods_of_heaviside_logaddexp2_and_the_angle_conversions():
    assert_same(la.heaviside.outer(la.asarray([-1.0, 0.0]), [0.5, 2.0]), np.heaviside.outer([-1.0, 0.0], [0.5, 2.0]))
    assert_same(la.logaddexp2.reduce(la.asarray([1.0, 2.0, 3.0])), np.logaddexp2.reduce([1.0, 2.0, 3.0]))
    assert la.deg2rad.nin == 1 and la.heaviside.types == ["ee->e", "ff->f", "dd->d"]
    with pytest.raises(ValueError, match="reduce only supported for binary functions"):
        la.rad2deg.reduce(la.asarray([1.0]))


@given(real_pairs(dtypes=REAL_DTYPES + COMPLEX_DTYPES[:1], weak=True))
def test_divmod_matches_numpy(pair):
    first, second = pair
    try:
        expected = numpy_quietly(np.divmod, first, second)
    except (TypeError, OverflowError) as error:
        with pytest.raises(type(error)):
            la.divmod(la.asarray(first), _lazy_operand(second))
        return
    quotient, remainder = la.divmod(la.asarray(first), _lazy_operand(second))
    assert_same(quotient, expected[0])
    assert_same(remainder, expected[1])


# -- isneginf, isposinf, isreal, iscomplex, nan_to_num, real_if_close --------------------------


@given(st.sampled_from(ALL_DTYPES).flatmap(lambda dtype: arrays(dtype, small_shapes)))
def test_real_and_infinity_checks_match_numpy(values):
    array = la.asarray(values)
    assert_same(la.isreal(array), np.isreal(values))
    assert_same(la.iscomplex(array), np.iscomplex(values))
    assert la.iscomplexobj(array) == np.iscomplexobj(values)
    assert la.isrealobj(array) == np.isrealobj(values)
    for ours, theirs in [(la.isneginf, np.isneginf), (la.isposinf, np.isposinf)]:
        if values.dtype.kind == "c":
            with pytest.raises(TypeError, match=f"{ours.__name__}: This operation is not supported for complex"):
                ours(array)
        else:
            assert_same(ours(array), numpy_quietly(theirs, values))


replacements = st.none() | st.sampled_from([0.0, -1.5, 1e300, 7, True, np.float32(2.5), np.float64(-3.0)])


@given(st.sampled_from(ALL_DTYPES).flatmap(lambda dtype: arrays(dtype, small_shapes)),
       st.sampled_from([0.0, -1.5, 1e300, 7, True, np.float64(2.0)]), replacements, replacements)
def test_nan_to_num_matches_numpy(values, nan, posinf, neginf):
    expected = numpy_quietly(np.nan_to_num, values, nan=nan, posinf=posinf, neginf=neginf)
    assert_same(la.nan_to_num(la.asarray(values), nan=nan, posinf=posinf, neginf=neginf), expected)


def test_nan_to_num_in_place_and_errors():
    values = np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)
    array = lazy(values)
    other = array
    result = la.nan_to_num(array, copy=False, nan=5.0)
    assert result is array and other is array
    assert_same(array, np.nan_to_num(values, nan=5.0))
    copied = la.asarray(values)
    assert_same(la.nan_to_num(copied, nan=5.0), np.nan_to_num(values, nan=5.0))
    assert_same(copied, values)  # copy=True leaves the input alone
    buffer = values.copy()
    la.nan_to_num(buffer, copy=False)
    assert_same(buffer, np.nan_to_num(values))  # a NumPy array changes in place, as in NumPy
    array_nan = np.array([1.0, 2.0, 3.0, 4.0])
    assert_same(la.nan_to_num(la.asarray(values), nan=la.asarray(array_nan)),
                np.nan_to_num(values, nan=array_nan))
    with pytest.raises(TypeError, match="nan_to_num: Cannot cast scalar from dtype"):
        la.nan_to_num(la.asarray(values), nan=1j)
    with pytest.raises(ValueError, match="nan_to_num: could not broadcast input array from shape"):
        la.nan_to_num(la.asarray(values), nan=[1.0, 2.0])
    integers = la.asarray([1, 2])
    assert la.nan_to_num(integers) is not integers  # a copy (another array object), as NumPy's


complex_close = st.sampled_from(COMPLEX_DTYPES).flatmap(
    lambda dtype: hnp.arrays(dtype, small_shapes, elements=st.sampled_from(
        [1 + 0j, 2.5 + 1e-16j, -3 + 1e-5j, 4 - 1e-17j, complex(np.nan, 0), complex(np.inf, 1e-20)])))


@given(complex_close | st.sampled_from(REAL_DTYPES).flatmap(lambda dtype: arrays(dtype, small_shapes)),
       st.sampled_from([100, 1, 1e-3, 1e6]))
def test_real_if_close_matches_numpy(values, tol):
    assert_same(la.real_if_close(la.asarray(values), tol=tol), np.real_if_close(values, tol=tol))


def test_type_checks_of_python_values():
    for value in [1, 2.5, 1j, [1, 2j], "text", np.complex64(1), None]:
        assert la.iscomplexobj(value) == np.iscomplexobj(value), value
        assert la.isrealobj(value) == np.isrealobj(value), value
    pending = [lazy(1.0), 2j]  # a list holding a lazy array: its dtype, not its values
    assert la.iscomplexobj(pending) and not pending[0].is_evaluated
    assert_same(la.isreal(2j), np.isreal(2j))
    assert_same(la.iscomplex([1, 2j]), np.iscomplex([1, 2j]))


# -- polynomials ---------------------------------------------------------------------------------

POLY_DTYPES = [np.dtype(np.bool_), np.dtype(np.int8), np.dtype(np.int64), np.dtype(np.uint64),
               np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.complex128)]
coefficients = st.sampled_from(POLY_DTYPES).flatmap(lambda dtype: arrays(dtype, vectors))


@given(coefficients, st.sampled_from(POLY_DTYPES).flatmap(lambda dtype: arrays(dtype, small_shapes)))
def test_polyval_matches_numpy(p, x):
    # Horner's rule from zeros_like(x) in NumPy's order (0 * inf is NaN here too): exact.
    assert_same(la.polyval(la.asarray(p), la.asarray(x)), numpy_quietly(np.polyval, p, x))
    assert_same(la.polyval(p, 2.5), numpy_quietly(np.polyval, p, 2.5))  # x: a strong float64


def test_polyval_of_two_dimensional_coefficients():
    p, x = np.arange(6.0).reshape(3, 2), np.array([[0.5], [2.0]])
    assert_same(la.polyval(la.asarray(p), la.asarray(x)), np.polyval(p, x))


@given(coefficients, coefficients)
def test_polyadd_and_polysub_match_numpy(first, second):
    assert_same(la.polyadd(la.asarray(first), second), numpy_quietly(np.polyadd, first, second))
    try:
        expected = numpy_quietly(np.polysub, first, second)
    except TypeError:  # bool - bool
        with pytest.raises(TypeError):
            la.polysub(la.asarray(first), second)
        return
    assert_same(la.polysub(first, la.asarray(second)), expected)


def convolution_bound(first, second):
    """Rounding bound of a sum of n products added in any order: n * eps * sum |products|."""
    dtype = np.result_type(first, second)
    if dtype.kind not in "fc":
        return None
    magnitude = np.polymul(np.abs(first).astype(np.float64), np.abs(second).astype(np.float64))
    count = max(len(first), len(second), 1)
    return 2 * count * np.finfo(dtype).eps * magnitude


def moderate(dtype, limit=100) -> dict:
    """Options of `arrays` for finite values within +-limit (0..limit unsigned)."""
    if dtype.kind in "iuf":
        return {"allow_edge": False, "min_value": 0 if dtype.kind == "u" else -limit, "max_value": limit}
    return {"allow_edge": False, "max_value": limit if dtype.kind == "c" else None}


finite_coefficients = st.sampled_from(POLY_DTYPES).flatmap(lambda dtype: arrays(dtype, vectors, **moderate(dtype)))


@given(finite_coefficients, finite_coefficients, st.integers(0, 2), st.booleans())
def test_polymul_matches_numpy(first, second, leading_zeros, pending):
    first = np.concatenate([np.zeros(leading_zeros, first.dtype), first])  # trimmed, as NumPy's poly1d
    expected = numpy_quietly(np.polymul, first, second)
    got = la.polymul(lazy(first) if pending else la.asarray(first), la.asarray(second))
    # The products are NumPy's; their sums may be added in another order than NumPy's dot.
    assert_close(got, expected, bound=convolution_bound(first, second))


@given(coefficients, st.integers(0, 3))
def test_polyder_and_polyint_match_numpy(p, order):
    assert_same(la.polyder(la.asarray(p), order), numpy_quietly(np.polyder, p, order))
    assert_same(la.polyint(la.asarray(p), order), numpy_quietly(np.polyint, p, order))
    constants = [1.5, -2.0, 3.0][:max(order, 1)]
    assert_same(la.polyint(p, order, k=constants), numpy_quietly(np.polyint, p, order, k=constants))
    assert_same(la.polyint(p, order, k=2j), numpy_quietly(np.polyint, p, order, k=2j))


@given(st.sampled_from(ALL_DTYPES).flatmap(lambda dtype: arrays(dtype, vectors)), st.none() | st.integers(0, 6),
       st.booleans())
def test_vander_matches_numpy(x, columns, increasing):
    # One running product per row, in NumPy's order: exact (integers wrap alike).
    assert_same(la.vander(la.asarray(x), columns, increasing), numpy_quietly(np.vander, x, columns, increasing))


@st.composite
def zero_sets(draw):
    """1-d zeros from a small pool (conjugate pairs likely), in integer, float or complex."""
    dtype = np.dtype(draw(st.sampled_from([np.float32, np.float64, np.int32, np.bool_, np.complex64, np.complex128])))
    pool = [0, 1, -2, 3] if dtype.kind != "b" else [False, True]
    if dtype.kind in "fc":
        pool.append(0.5)
    if dtype.kind == "c":
        pool += [3 + 1j, 3 - 1j, 1j, -1j, 0.5j]
    return draw(hnp.arrays(dtype, vectors, elements=st.sampled_from(pool)))


@given(zero_sets())
def test_poly_matches_numpy(zeros):
    expected = np.poly(zeros)
    got = la.poly(la.asarray(zeros))
    if isinstance(expected, float):
        assert got == expected and isinstance(got, float)
        return
    # Each step adds two terms, a[k] + a[k - 1] * -zero; NumPy's dot may fuse them (FMA).
    bound = 4 * len(zeros) * np.finfo(expected.dtype).eps * np.poly(np.abs(zeros)).__abs__()
    assert_close(got, expected, bound=bound)


def test_poly_of_matrices_and_roots():
    matrix = np.array([[1.0, 2.0], [3.0, 4.0]])
    # eigvals is NumPy's on both sides; the two-term steps may round differently (see above).
    assert_close(la.poly(la.asarray(matrix)), np.poly(matrix), ulps=4)
    rotation = np.array([[0.0, -1.0], [1.0, 0.0]], np.float32)  # eigenvalues +-1j: real result
    assert_close(la.poly(rotation), np.poly(rotation), ulps=4)
    for p in [[1.0, -3.0, 2.0], [0, 0, 1, 0, 1, 0, 0], [3], [0, 0], [], [1, 0, 1], np.array([2, 1, 1], np.float32),
              [1j, 2, 3]]:
        expected = np.roots(p)
        # Companion matrix and eigvals are NumPy's on both sides: the same values.
        assert_same(la.roots(la.asarray(p) if len(p) else p), expected)


def test_polynomial_errors():
    with pytest.raises(TypeError, match="polyval: iteration over a 0-d array"):
        la.polyval(la.asarray(2.0), 1.0)
    with pytest.raises(ValueError, match="polymul: Polynomial must be 1d only"):
        la.polymul(np.ones((2, 2)), [1.0])
    with pytest.raises(ValueError, match="polyder: Order of derivative must be positive"):
        la.polyder([1, 2], -1)
    with pytest.raises(ValueError, match="polyint: Order of integral must be positive"):
        la.polyint([1, 2], -1)
    with pytest.raises(ValueError, match="polyint: k must be a scalar or a rank-1 array of length 1 or >m"):
        la.polyint([1, 2], 3, k=[1, 2])
    with pytest.raises(ValueError, match="vander: x must be a one-dimensional array"):
        la.vander(np.ones((2, 2)))
    with pytest.raises(ValueError, match="poly: input must be 1d or non-empty square 2d array"):
        la.poly(np.ones((2, 3)))
    with pytest.raises(ValueError, match="roots: Input must be a rank-1 array"):
        la.roots(np.ones((2, 2)))


# -- unwrap, geomspace, windows, fromfunction ------------------------------------------------------


@given(st.sampled_from([np.float32, np.float64, np.int64, np.int16, np.bool_]).flatmap(
    lambda dtype: arrays(dtype, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5))),
       st.data())
def test_unwrap_matches_numpy(values, data):
    axis = data.draw(st.integers(-values.ndim, values.ndim - 1))
    period = data.draw(st.sampled_from([2 * np.pi, 360, 7, 4.5, np.float32(6.0)]))
    discont = data.draw(st.none() | st.sampled_from([1.0, 10, 400.0]))
    try:
        expected = numpy_quietly(np.unwrap, values, discont, axis, period=period)
    except OverflowError:  # an int period's half out of the integer dtype's range, as NumPy
        with pytest.raises(OverflowError):
            la.unwrap(la.asarray(values), discont, axis, period=period)
        return
    # The same differences, modulo, cumulative sum (sequential, as NumPy's) and sums: exact.
    assert_same(la.unwrap(la.asarray(values), discont, axis, period=period), expected)


bounds = st.sampled_from([1, -2, 0.5, 1e3, -1e-3, 2 + 2j, -1j, np.float32(3.0), np.array([1.0, -4.0])])


@given(bounds, bounds, st.integers(0, 7), st.booleans(), st.sampled_from([None, np.float32, np.complex128, np.int64]),
       st.booleans())
def test_geomspace_matches_numpy(start, stop, num, endpoint, dtype, axis_last):
    axis = -1 if axis_last else 0
    expected = numpy_quietly(np.geomspace, start, stop, num, endpoint, dtype, axis)
    got = la.geomspace(la.asarray(start), stop, num, endpoint, dtype, axis)
    if expected.dtype.kind in "iu":
        assert (got.shape, got.dtype) == (expected.shape, expected.dtype)
        # Integer samples truncate values within ulps of an integer (256 ** (k / 8)): which
        # side they fall on is the power kernel's last bit; the float samples are compared.
        expected = numpy_quietly(np.geomspace, start, stop, num, endpoint, None, axis)
        got = la.geomspace(la.asarray(start), stop, num, endpoint, None, axis)
    # power(10.0, linspace) samples: NumPy's power kernel depends on the operands' layout
    # (test_elementwise's LAYOUT_DEPENDENT): 4 ulps; the endpoints are exact.
    assert_close(got, expected, ulps=4)


def test_geomspace_zero_bounds():
    with pytest.raises(ValueError, match="geomspace: Geometric sequence cannot include zero"):
        la.geomspace(0, 10)
    with pytest.raises(ValueError, match="geomspace: Geometric sequence cannot include zero"):
        la.geomspace(la.asarray([1.0, 0.0]), 10)
    # A zero in a pending lazy bound is not read (that would evaluate): NaN samples.
    assert np.isnan(la.geomspace(lazy(0.0), 10.0, 3).numpy()).all()


WINDOWS = [(la.hamming, np.hamming), (la.hanning, np.hanning), (la.blackman, np.blackman), (la.bartlett, np.bartlett)]


@given(st.sampled_from(WINDOWS), st.integers(-2, 40) | st.sampled_from([2.5, 0.5, np.int8(7), np.float32(4.0)]))
def test_windows_match_numpy(functions, points):
    ours, theirs = functions
    # arange, multiply, divide and cos in NumPy's order, each NumPy's loop: exact.
    assert_same(ours(points), theirs(points))


def test_windows_and_fromfunction():
    assert_same(la.hamming(la.asarray(5)), np.hamming(5))
    with pytest.raises(TypeError, match="hanning: M must be a real number"):
        la.hanning("five")
    for shape, dtype in [((2, 3), float), ((4,), int), ((), float), ((0, 2), np.float32)]:
        got = la.fromfunction(lambda *grids: sum(grids, la.zeros((), dtype) + 1), shape, dtype=dtype)
        expected = np.fromfunction(lambda *grids: sum(grids, np.ones((), dtype)), shape, dtype=dtype)
        assert_same(got, expected)
    assert_same(la.fromfunction(lambda i, j, scale: i * scale + j, (2, 2), scale=10),
                np.fromfunction(lambda i, j, scale: i * scale + j, (2, 2), scale=10))
    with pytest.raises(TypeError, match="fromfunction: The `like` argument"):
        la.fromfunction(lambda i: i, (2,), like=1)


# -- lexsort, sort_complex ---------------------------------------------------------------------

SORT_DTYPES = [np.dtype(np.bool_), np.dtype(np.int8), np.dtype(np.uint64), np.dtype(np.float16),
               np.dtype(np.float64), np.dtype(np.complex64), np.dtype(np.complex128)]


@st.composite
def key_sets(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=6))
    count = draw(st.integers(1, 3))
    # Few distinct values, so that ties reach the later keys.
    keys = []
    for _ in range(count):
        dtype = draw(st.sampled_from(SORT_DTYPES))
        pool = [np.array(value).astype(dtype)[()] for value in (0, 1, -1, 2)]
        if dtype.kind in "fc":
            pool += [np.array(value).astype(dtype)[()] for value in (np.nan, -0.0, np.inf)]
        if dtype.kind == "c":
            pool += [np.array(value).astype(dtype)[()] for value in (complex(1, np.nan), complex(np.nan, 2), 1 - 1j)]
        keys.append(draw(hnp.arrays(dtype, shape, elements=st.sampled_from(pool))))
    return keys


@given(key_sets(), st.booleans())
def test_lexsort_matches_numpy(keys, as_array_rows):
    axis = -1 if keys[0].ndim == 1 else 0
    expected = np.lexsort(keys, axis=axis)
    if as_array_rows and len({key.dtype for key in keys}) == 1:
        assert_same(la.lexsort(la.asarray(np.stack(keys)), axis=axis), np.lexsort(np.stack(keys), axis=axis))
    assert_same(la.lexsort([la.asarray(key) for key in keys], axis=axis), expected)


@given(key_sets())
def test_sort_complex_matches_numpy(keys):
    values = keys[0]
    # NumPy's sort is not stable, but equal elements are equal values (up to the sign of zero).
    assert_same(la.sort_complex(la.asarray(values)), np.sort_complex(values))


def test_lexsort_and_sort_complex_errors():
    assert_same(la.lexsort((la.asarray(1.0),)), np.lexsort((np.array(1.0),)))
    assert_same(la.lexsort(la.asarray([3, 1, 2])), np.lexsort(np.array([3, 1, 2])))
    with pytest.raises(TypeError, match="lexsort: need sequence of keys with len > 0"):
        la.lexsort([])
    with pytest.raises(ValueError, match="lexsort: all keys need to be the same shape"):
        la.lexsort(([1, 2], [1, 2, 3]))
    with pytest.raises(np.exceptions.AxisError, match="lexsort"):
        la.lexsort(([1, 2],), axis=1)
    with pytest.raises(np.exceptions.AxisError, match="sort_complex"):
        la.sort_complex(la.asarray(1.0))


# -- matvec, vecmat --------------------------------------------------------------------------------


@st.composite
def product_operands(draw):
    dtype = draw(st.sampled_from([np.dtype(np.bool_), np.dtype(np.int16), np.dtype(np.float32),
                                  np.dtype(np.float64), np.dtype(np.complex128)]))
    other = draw(st.sampled_from([dtype, np.dtype(np.int8), np.dtype(np.float64)]))
    batches = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=2, max_side=3))
    rows, columns = draw(st.integers(0, 4)), draw(st.integers(0, 4))
    matrix = draw(arrays(dtype, st.just(batches.input_shapes[0] + (rows, columns)), **moderate(dtype, 10)))
    vector = draw(arrays(other, st.just(batches.input_shapes[1] + (columns,)), **moderate(other, 10)))
    return matrix, vector


@given(product_operands())
def test_matvec_and_vecmat_match_numpy(operands):
    matrix, vector = operands
    expected = np.matvec(matrix, vector)
    bound = np.matvec(np.abs(matrix).astype(np.float64), np.abs(vector).astype(np.float64))
    eps = np.finfo(expected.dtype).eps if expected.dtype.kind in "fc" else 0
    # The products are NumPy's; their sum may be added in another order: n * eps * sum |terms|.
    assert_close(la.matvec(la.asarray(matrix), la.asarray(vector)), expected,
                 bound=2 * matrix.shape[-1] * eps * bound)
    transposed = np.swapaxes(matrix, -1, -2)
    expected = np.vecmat(vector, transposed)
    assert_close(la.vecmat(vector, la.asarray(transposed)), expected, bound=2 * matrix.shape[-1] * eps * bound)


def test_matvec_and_vecmat_errors_and_conjugation():
    assert_same(la.vecmat(la.asarray([1j, 2]), la.asarray([[1j, 0], [0, 1]])),
                np.vecmat(np.array([1j, 2]), np.array([[1j, 0], [0, 1]])))
    for call, message in [
        (lambda: la.matvec(np.ones(3), np.ones(3)), r"matvec: Input operand 0 does not have enough dimensions "
                                                    r"\(has 1, gufunc core with signature \(m,n\),\(n\)->\(m\)"),
        (lambda: la.matvec(np.ones((2, 3)), np.ones(2)), "matvec: Input operand 1 has a mismatch in its core "
                                                         r"dimension 0.*\(size 2 is different from 3\)"),
        (lambda: la.vecmat(np.ones(3), np.ones(3)), "vecmat: Input operand 1 does not have enough dimensions"),
        (lambda: la.matvec(np.ones((4, 2, 3)), np.ones((5, 3))), "matvec: operands could not be broadcast"),
    ]:
        with pytest.raises(ValueError, match=message):
            call()


# -- dtype helpers -------------------------------------------------------------------------------


def test_dtype_helpers_match_numpy():
    for first in ALL_DTYPES:
        for second in ALL_DTYPES:
            assert la.promote_types(first, second) is np.promote_types(first, second) or \
                la.promote_types(first, second) == np.promote_types(first, second)
            assert la.issubdtype(first, second) == np.issubdtype(first, second)
        for kind in (np.floating, np.integer, np.number, np.inexact, np.complexfloating, np.signedinteger, float):
            assert la.issubdtype(first, kind) == np.issubdtype(first, kind)
        pending = lazy(np.zeros(2, first))
        assert la.min_scalar_type(pending) == first and not pending.is_evaluated
        if first.kind != "b":
            expected = np.common_type(np.zeros(2, first), np.ones(1, np.int8))
            assert la.common_type(pending, la.ones(1, la.int8)) is expected
        assert la.mintypecode([pending, "f"]) == np.mintypecode([np.zeros(2, first), "f"])
        assert not pending.is_evaluated  # only dtypes were read
    for value in [1, 2.5, 1j, "s", b"b", np.float32(1), np.array(1.0), [1], None, la.asarray(1.0)]:
        assert la.isscalar(value) == np.isscalar(value if not isinstance(value, la.Array) else np.array(1.0))
    for value in [10, -260.0, 1e300, 3j, np.int64(5), np.array([1, 2], np.int8), True]:
        assert la.min_scalar_type(value) == np.min_scalar_type(value)
    assert la.min_scalar_type(lazy(np.float64(300.0))) == np.min_scalar_type(300.0)  # a 0-d value decides
    assert la.common_type() is np.common_type()
    assert la.mintypecode(["F", "d"]) == "D" and la.mintypecode(["i"], default="q") == "q"
    with pytest.raises(TypeError, match="common_type: can't get common type for non-numeric array"):
        la.common_type(la.asarray([True]))
    with pytest.raises(TypeError, match="issubdtype: Cannot construct a dtype from an array"):
        la.issubdtype(la.ones(2), np.floating)
    with pytest.raises(TypeError, match="promote_types: Cannot construct a dtype from an array"):
        la.promote_types(np.ones(2), la.int8)


# -- laziness, errors, jit, the compiled code, docstrings -------------------------------------------

LAZY_CALLS = {
    "deg2rad": lambda x, m, c: la.deg2rad(x), "rad2deg": lambda x, m, c: la.rad2deg(x),
    "degrees": lambda x, m, c: la.degrees(x), "radians": lambda x, m, c: la.radians(x),
    "around": lambda x, m, c: la.around(x, 1), "fix": lambda x, m, c: la.fix(x),
    "sinc": lambda x, m, c: la.sinc(x), "heaviside": lambda x, m, c: la.heaviside(x, 0.5),
    "logaddexp2": lambda x, m, c: la.logaddexp2(x, x), "divmod": lambda x, m, c: la.divmod(x, 2.0)[1],
    "modf": lambda x, m, c: la.modf(x)[0], "isneginf": lambda x, m, c: la.isneginf(x),
    "isposinf": lambda x, m, c: la.isposinf(x), "isreal": lambda x, m, c: la.isreal(c),
    "iscomplex": lambda x, m, c: la.iscomplex(c), "nan_to_num": lambda x, m, c: la.nan_to_num(c),
    "real_if_close": lambda x, m, c: la.real_if_close(x), "polyval": lambda x, m, c: la.polyval(x, x),
    "polyfit": lambda x, m, c: la.polyfit(x, x * 2.0, 1),
    "polyadd": lambda x, m, c: la.polyadd(x, [1.0]), "polysub": lambda x, m, c: la.polysub([1.0], x),
    "polyder": lambda x, m, c: la.polyder(x, 2), "polyint": lambda x, m, c: la.polyint(x, 2, k=x[:1]),
    "vander": lambda x, m, c: la.vander(x), "poly": lambda x, m, c: la.poly(x),
    "unwrap": lambda x, m, c: la.unwrap(m, axis=0), "geomspace": lambda x, m, c: la.geomspace(x + 1, 5.0, 4),
    "fromfunction": lambda x, m, c: la.fromfunction(lambda i: i * x[0], (3,)),
    "lexsort": lambda x, m, c: la.lexsort((x, c)), "sort_complex": lambda x, m, c: la.sort_complex(c),
    "matvec": lambda x, m, c: la.matvec(m, x), "vecmat": lambda x, m, c: la.vecmat(c, m),
    "frexp": lambda x, m, c: la.frexp(x)[1], "i0": lambda x, m, c: la.i0(x),
    "kaiser": lambda x, m, c: la.kaiser(5, x[0]),  # a lazy beta stays lazy (M is read)
}
# Results whose shape or dtype depends on the values, and what is not an array.
DATA_DEPENDENT = {"polydiv", "polymul", "roots"}
NOT_ARRAYS = {"iscomplexobj", "isrealobj", "isscalar", "issubdtype", "promote_types", "min_scalar_type",
              "common_type", "mintypecode", "hamming", "hanning", "blackman", "bartlett"}


def test_the_laziness_table_covers_every_function():
    assert set(LAZY_CALLS) | DATA_DEPENDENT | NOT_ARRAYS == set(numpy_math.__all__)
    assert not la.hamming(7).is_evaluated  # (M is a known Python int; the window is lazy)


@pytest.mark.parametrize("name", sorted(LAZY_CALLS))
def test_stays_lazy(name):
    x = lazy(np.array([0.5, -1.0, 2.0]))
    matrix = lazy(np.arange(9.0).reshape(3, 3))
    complex_values = lazy(np.array([1 + 1j, np.nan, -2j]))
    result = LAZY_CALLS[name](x, matrix, complex_values)
    assert isinstance(result, la.Array) and not result.is_evaluated
    assert not (x.is_evaluated or matrix.is_evaluated or complex_values.is_evaluated)


def test_data_dependent_results_inside_jit_name_the_call():
    values = np.array([0.0, 1.0, 2.0 + 1e-20j])
    for function, name in [(lambda x: la.real_if_close(x), "la.real_if_close"),
                           (lambda x: la.polymul(x, [1.0]), "la.polymul"),
                           (lambda x: la.roots(x), "la.roots"),
                           (lambda x: la.poly(x), "la.poly")]:
        with pytest.raises(TracedValueError, match=f"{name} on a traced array inside la.jit"):
            la.jit(function)(values)
    assert_same(la.jit(lambda x: la.polyval(x, x))(values.real), np.polyval(values.real, values.real))


def test_numpy_functions_dispatch_here():
    x = lazy(np.array([1.0, 2.0]))
    result = np.polyval(x, x)  # __array_function__ -> la.polyval
    assert isinstance(result, la.Array) and not result.is_evaluated
    assert_same(result, np.polyval([1.0, 2.0], [1.0, 2.0]))


def compiled_cases():
    """(lazyarr result, NumPy result, ulps allowed or None for exact) for the CPU backend."""
    x = np.array([-2.5, -0.0, 0.0, 0.75, 1.0, np.inf, -np.inf, np.nan, 1e-3, 3.0])
    y = np.array([1.0, 0.5, -0.0, 0.75, 0.25, np.inf, 2.0, 1.0, -7.0, np.nan])
    small = np.array([1.5, -2.0, 0.25])
    z = np.array([1 + 2j, np.nan + 1j, 1 - 1j, 1 + 2j, 0j])
    matrix = np.arange(12.0).reshape(2, 2, 3) - 5
    integers = np.array([7, -7, 0, 3], np.int16)
    lazy_x, lazy_z = la.asarray(x), la.asarray(z)
    return [
        (la.deg2rad(lazy_x), np.deg2rad(x), None),
        (la.rad2deg(la.asarray(x.astype(np.float16))), np.rad2deg(x.astype(np.float16)), None),
        (la.fix(lazy_x), np.fix(x), None),
        (la.around(lazy_x, 1), np.around(x, 1), None),
        (la.modf(lazy_x)[0], np.modf(x)[0], None),
        (la.modf(lazy_x)[1], np.modf(x)[1], None),
        (la.divmod(la.asarray(integers), np.int16(3))[0], np.divmod(integers, np.int16(3))[0], None),
        (la.divmod(lazy_x, 0.75)[1], np.divmod(x, 0.75)[1], None),
        # sin: ours and NumPy's kernels are each within 1-4 ulps (test_elementwise's COMPILED_ULPS)
        (la.sinc(lazy_x), np.sinc(x), 4),
        (la.heaviside(lazy_x, la.asarray(y)), np.heaviside(x, y), None),
        # exp2 and log1p kernels (COMPILED_ULPS), then an add: 4 ulps
        (la.logaddexp2(lazy_x, la.asarray(y)), np.logaddexp2(x, y), 4),
        (la.isneginf(lazy_x), np.isneginf(x), None),
        (la.isreal(lazy_z), np.isreal(z), None),
        (la.nan_to_num(lazy_z, nan=-1.0), np.nan_to_num(z, nan=-1.0), None),
        (la.polyval(la.asarray(small), lazy_x), np.polyval(small, x), None),
        (la.polyadd(la.asarray(small), [1.0]), np.polyadd(small, [1.0]), None),
        (la.polyder(la.asarray(small)), np.polyder(small), None),
        (la.polyint(la.asarray(small)), np.polyint(small), None),
        # sums of three products in another order than NumPy's dot: 4 ulps of the result
        (la.polymul(la.asarray(small), small), np.polymul(small, small), 4),
        (la.vander(la.asarray(small), 4), np.vander(small, 4), None),
        (la.unwrap(la.asarray(np.array([0.0, 5.0, 10.0, 4.0]))), np.unwrap([0.0, 5.0, 10.0, 4.0]), None),
        # power(10, samples): our pow and NumPy's differ by a few ulps (COMPILED_ULPS)
        (la.geomspace(la.asarray(1.0), 1000.0, 7), np.geomspace(1.0, 1000.0, 7), 4),
        (la.hanning(6), np.hanning(6), 4),  # cos (COMPILED_ULPS), then 0.5 + 0.5 * c
        (la.sort_complex(lazy_z), np.sort_complex(z), None),
        (la.lexsort((la.asarray(y), lazy_x)), np.lexsort((y, x)), None),
        (la.matvec(la.asarray(matrix), small), np.matvec(matrix, small), 4),  # sums of 3 products
        (la.vecmat(la.asarray(small[:2]), matrix), np.vecmat(small[:2], matrix), 4),
    ]


def test_compiled_values_match_numpy(cpu_backend):
    """The CPU backend on a fixed table (one compiled module for all results)."""
    cases = numpy_quietly(compiled_cases)
    la.eval(*(case[0] for case in cases))
    for got, expected, ulps in cases:
        if ulps is None:
            assert_identical(np.asarray(got), np.asarray(expected))  # zero signs too
        else:
            assert_close(got, expected, ulps=ulps)


def test_docstring_examples():
    for module in numpy_math.MODULES:
        assert doctest.testmod(module).failed == 0, module.__name__


@given(data=st.data(), count=st.integers(1, 30), degree=st.integers(0, 6), columns=st.sampled_from([None, 1, 3]),
       weighted=st.booleans())
def test_polyfit_matches_numpy_to_its_conditioning(data, count, degree, columns, weighted):
    """polyfit solves NumPy's scaled system with the pseudo-inverse of the same cutoff instead of
    lstsq: the same minimum-norm solution, to rounding amplified by the retained part's condition
    number (so the tolerance is eps times that condition number, times the size and a margin)."""
    finite = st.floats(-4, 4, allow_nan=False, allow_subnormal=False)
    x = np.asarray(data.draw(st.lists(finite, min_size=count, max_size=count, unique=True)))
    y = np.asarray(data.draw(st.lists(finite, min_size=count * (columns or 1), max_size=count * (columns or 1))))
    y = y.reshape(count, columns) if columns else y
    w = np.abs(np.asarray(data.draw(st.lists(finite, min_size=count, max_size=count)))) + 0.5 if weighted else None
    result = la.polyfit(la.asarray(x), la.asarray(y), degree, w=None if w is None else la.asarray(w))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy's RankWarning for deficient fits; 0 / 0 below
        try:
            expected = np.polyfit(x, y, degree, w=w)
        except np.linalg.LinAlgError:  # a zero column (every x is 0): NaN scaled into its SVD
            try:  # NumPy's error when evaluated (the SVD of NaN), or NaN: never a finite answer instead
                assert not np.isfinite(np.asarray(result)).all()
            except np.linalg.LinAlgError:
                pass
            return
    assert not result.is_evaluated
    actual = np.asarray(result)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    lhs = np.vander(x, degree + 1) * (1.0 if w is None else w[:, None])
    lhs /= np.sqrt((lhs * lhs).sum(axis=0))
    singular = np.linalg.svd(lhs, compute_uv=False)
    retained = singular[singular > count * np.finfo(float).eps * singular[0]]
    condition = retained[0] / retained[-1]
    scale = max(1.0, float(np.abs(expected).max()), float(np.abs(y).max()))
    np.testing.assert_allclose(actual, expected, rtol=0, atol=1e3 * count * np.finfo(float).eps * condition * scale)


def test_polyfit_errors():
    x = la.asarray([0.0, 1.0, 2.0])
    for call, error in [
        (lambda: la.polyfit(x, x, -1), ValueError),
        (lambda: la.polyfit(la.zeros((2, 2)), la.zeros(2), 1), TypeError),
        (lambda: la.polyfit(x, la.zeros(2), 1), TypeError),
        (lambda: la.polyfit(x, x, 2, cov=True), ValueError),  # NumPy's: no more points than coefficients
    ]:
        with pytest.raises(error):
            call()
