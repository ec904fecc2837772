"""NumPy's polynomial functions on coefficient arrays (highest power first): polyval, polyadd,
polysub, polymul, polydiv, polyder, polyint, vander, poly and roots.

Each repeats NumPy's steps with lazyarr's ops, so dtypes are NumPy's and so are the values
where the arithmetic is the same sequence (polyval's Horner loop starts from zeros_like(x) as
NumPy's does, so 0 * inf gives NaN there too; vander's powers are one running product).
Products summed in another order than NumPy's dot (polymul's convolution, poly) may differ
in the last bits. Lazy, except where NumPy's result shape or dtype depends on the values:
polymul trims leading zero coefficients (it evaluates the count of them), polydiv trims the
remainder's leading near-zero coefficients (it evaluates the quotient and remainder), poly
of complex zeros is real when they come in conjugate pairs, and roots trims zeros and returns
real roots when all are real; inside `la.jit` those raise lazyarr's data-dependent error.
"""

from __future__ import annotations

import operator

import numpy as np

from .. import dtypes
from ..hlo import make
from . import elementwise as ew
from .array import Array
from .core import as_array, convert, from_numpy, wrap
from .creation import ones, zeros, zeros_like
from .creation_ranges import arange
from .evaluation import eval as evaluate
from .linalg_extension import eigvals
from .manipulation_joining import concatenate
from .manipulation_layout import atleast_1d, reshape
from .reductions import any as any_
from .reductions import argmax
from .reductions import sum as sum_

__all__ = [
    "poly", "polyadd", "polyder", "polydiv", "polyint", "polymul", "polysub", "polyval", "roots", "vander",
]


def _operand(value, where: str) -> Array:
    return value if isinstance(value, Array) else as_array(value, where=where)


def _length(array: Array, where: str) -> int:
    if array.ndim == 0:
        raise TypeError(f"{where}: len() of unsized object (a 0-d array of coefficients)")
    return array.shape[0]


def polyval(p, x) -> Array:
    """The polynomial with coefficients `p` (highest power first) at `x`, by Horner's rule
    from zeros_like(x), as NumPy; the dtype promotes p's and x's (x is not a weak scalar).

    >>> import lazyarr as la
    >>> la.polyval([3, 0, 1], la.asarray([1.0, 2.0])).tolist()
    [4.0, 13.0]
    """
    coefficients = _operand(p, "polyval")
    points = _operand(x, "polyval")
    if coefficients.ndim == 0:
        raise TypeError("polyval: iteration over a 0-d array (p must have at least one dimension)")
    value = zeros_like(points)
    for index in range(coefficients.shape[0]):
        value = ew.add(ew.multiply(value, points), coefficients[index])
    return value


def _front_padded(array: Array, count: int) -> Array:
    return concatenate((zeros(count, array.dtype), array))


def _aligned(a1, a2, where: str) -> tuple[Array, Array]:
    """Both coefficient arrays at least 1-d, the shorter padded with leading zeros of its dtype."""
    first, second = atleast_1d(_operand(a1, where), _operand(a2, where))
    difference = second.shape[0] - first.shape[0]
    if difference > 0:
        first = _front_padded(first, difference)
    elif difference < 0:
        second = _front_padded(second, -difference)
    return first, second


def polyadd(a1, a2) -> Array:
    """Sum of two polynomials (coefficient arrays aligned at the lowest power).

    >>> import lazyarr as la
    >>> la.polyadd([1, 2], [9, 5, 4]).tolist()
    [9, 6, 6]
    """
    return ew.add(*_aligned(a1, a2, "polyadd"))


def polysub(a1, a2) -> Array:
    """Difference of two polynomials (coefficient arrays aligned at the lowest power).

    >>> import lazyarr as la
    >>> la.polysub([2, 10, -2], [3, 10, -4]).tolist()
    [-1, 0, 2]
    """
    return ew.subtract(*_aligned(a1, a2, "polysub"))


def convolve_full(first: Array, second: Array) -> Array:
    """The full discrete convolution of two non-empty 1-d arrays, in NumPy's convolve dtype
    (bool stays bool: or of ands; integers wrap; float16 sums in float32 as NumPy's dot).

    The products `first[i] * second[j]` (only those: no padding enters a product, so an inf
    gives no spurious NaN) form an (n, m) table, n the shorter length; padding each row with n
    zeros and reading the flat table as rows of n + m - 1 shifts row i right by i, so column
    sums are the result. It holds n * (n + m) elements (NumPy's loop holds none).
    """
    dtype = dtypes.result_type(first, second)
    if first.shape[0] > second.shape[0]:
        first, second = second, first  # (each product commutes exactly)
    compute = dtypes.float32 if dtype == dtypes.float16 else dtype
    count, other = first.shape[0], second.shape[0]
    left = reshape(wrap(convert(first._node, compute)), (count, 1))
    right = reshape(wrap(convert(second._node, compute)), (1, other))
    products = ew.logical_and(left, right) if compute == dtypes.bool_ else ew.multiply(left, right)
    zero = zeros((count, count), compute)
    padded = reshape(concatenate((products, zero), axis=1), (count * (count + other),))
    width = count + other - 1
    shifted = reshape(padded[: count * width], (count, width))
    if compute == dtypes.bool_:
        return any_(shifted, axis=0)
    return wrap(convert(sum_(shifted, axis=0, dtype=compute)._node, dtype))


def _leading_zero_counts(arrays: list[Array]) -> list[int | None]:
    """For each 1-d array, how many leading elements are zero (None: all are). Evaluates only
    these counts (NumPy's poly1d trims them, so the result's length depends on them)."""
    known = [array.is_evaluated or array.size == 0 for array in arrays]
    pending = [array for array, ready in zip(arrays, known) if not ready]
    lazy_results = []
    for array in pending:
        nonzero = ew.not_equal(array, 0)
        lazy_results += [any_(nonzero), argmax(nonzero)]
    if lazy_results:
        evaluate(*lazy_results)
    counts, results = [], iter(lazy_results)
    for array, ready in zip(arrays, known):
        if ready:
            positions = np.flatnonzero(array.numpy()) if array.size else np.empty(0, np.int64)
            counts.append(int(positions[0]) if positions.size else None)
        else:
            has_nonzero, first = next(results), next(results)
            counts.append(int(first) if bool(has_nonzero) else None)
    return counts


def polymul(a1, a2) -> Array:
    """Product of two polynomials: the convolution of their coefficients after NumPy's poly1d
    trims leading zeros (an all-zero polynomial is [0]), so the length depends on the values.

    >>> import lazyarr as la
    >>> la.polymul([1, 2, 3], [9, 5, 1]).tolist()
    [9, 23, 38, 17, 3]
    """
    arrays = list(atleast_1d(_operand(a1, "polymul"), _operand(a2, "polymul")))
    for array in arrays:
        if array.ndim > 1:
            raise ValueError(f"polymul: Polynomial must be 1d only, got shape {array.shape}")
    trimmed = []
    for array, count in zip(arrays, _leading_zero_counts(arrays)):
        trimmed.append(zeros(1, array.dtype) if count is None else array[count:])
    return convolve_full(*trimmed)


def _trimmed_length(quotient: Array, remainder: Array) -> int:
    """How many leading remainder coefficients NumPy's polydiv drops: while
    `allclose(r[0], 0, rtol=1e-14)` (|r[0]| <= 1e-8, compared in r's dtype as NumPy compares
    with a Python float) and more than one is left. Evaluates it with the quotient and the
    remainder, in one module."""
    length = remainder.shape[0]
    if length == 1:
        evaluate(quotient, remainder)
        return 0
    kept = ew.logical_not(ew.less_equal(ew.abs(remainder[: length - 1]), 1e-8))
    has_kept, first_kept = any_(kept), argmax(kept)
    evaluate(quotient, remainder, has_kept, first_kept)
    return int(first_kept) if bool(has_kept) else length - 1


def polydiv(u, v):
    """Quotient and remainder of dividing polynomial `u` by `v`: NumPy's long division step by
    step (`d = (1 / v[0]) * r[k]; r[k:k + n + 1] -= d * v`), in the inexact common dtype, so
    real values are NumPy's bit for bit (complex ones to rounding: NumPy multiplies complex
    scalars otherwise than its array loops, which may fuse multiply-adds).

    The quotient's length is len(u) - len(v) + 1 (at least 1); the remainder's depends on its
    values, as in NumPy: its leading coefficients are dropped while `allclose(r[0], 0,
    rtol=1e-14)` (|r[0]| <= 1e-8), keeping at least one. So polydiv evaluates the quotient and
    remainder (one module) to count them, then returns evaluated arrays; inside `la.jit`, on
    traced coefficients, it raises TracedValueError. A `np.poly1d` argument gives `np.poly1d`
    results, as NumPy's.

    >>> import lazyarr as la
    >>> quotient, remainder = la.polydiv([3.0, 5.0, 2.0], [2.0, 1.0])
    >>> quotient.tolist(), remainder.tolist()
    ([1.5, 1.75], [0.25])
    """
    from .histogram_edges import require_values

    as_poly1d = isinstance(u, np.poly1d) or isinstance(v, np.poly1d)
    dividend = ew.add(atleast_1d(_operand(u, "polydiv")), 0.0)  # NumPy's `atleast_1d(u) + 0.0`
    divisor = ew.add(atleast_1d(_operand(v, "polydiv")), 0.0)
    for name, array in (("u", dividend), ("v", divisor)):
        if array.ndim > 1:
            raise ValueError(f"polydiv: {name} must be 0-d or 1-d coefficients, got shape {array.shape}")
        if array.shape[0] == 0:
            raise IndexError(f"polydiv: index 0 is out of bounds for axis 0 with size 0 ({name} has no coefficients)")
    dtype = dtypes.result_type(dividend.dtype, divisor.dtype)  # NumPy's `w = u[0] + v[0]`
    last, order = dividend.shape[0] - 1, divisor.shape[0] - 1
    scale = ew.divide(1.0, divisor[0])
    quotient = zeros(max(last - order + 1, 1), dtype)
    remainder = wrap(convert(dividend._node, dtype))
    for step in range(last - order + 1):
        factor = ew.multiply(scale, remainder[step])
        quotient[step] = factor
        remainder[step: step + order + 1] = ew.subtract(remainder[step: step + order + 1],
                                                        ew.multiply(factor, divisor))
    require_values("polydiv", [remainder], "the remainder's length depends on its values (NumPy drops its "
                   "leading near-zero coefficients); call it outside la.jit")
    remainder = remainder[_trimmed_length(quotient, remainder):]
    if as_poly1d:
        return np.poly1d(quotient.numpy()), np.poly1d(remainder.numpy())
    return quotient, remainder


def polyder(p, m=1) -> Array:
    """The m-th derivative's coefficients (p[:-1] * [n, ..., 1], repeated), as NumPy: integer
    and bool coefficients become int64, float32 becomes float64 (the factors are int64).

    >>> import lazyarr as la
    >>> la.polyder([1, 1, 1, 1]).tolist()
    [3, 2, 1]
    """
    order = int(m)
    if order < 0:
        raise ValueError(f"polyder: Order of derivative must be positive (see polyint), got m={m!r}")
    coefficients = _operand(p, "polyder")
    while True:
        degree = _length(coefficients, "polyder") - 1
        derivative = ew.multiply(coefficients[:-1], arange(degree, 0, -1))
        if order == 0:
            return coefficients
        coefficients, order = derivative, order - 1


def polyint(p, m=1, k=None) -> Array:
    """The m-th antiderivative's coefficients, with integration constants `k` (a scalar, or one
    per integration; zeros by default); the dtype is true division's (float64 for integers).

    >>> import lazyarr as la
    >>> la.polyint([3, 2, 1]).tolist()
    [1.0, 1.0, 1.0, 0.0]
    """
    order = int(m)
    if order < 0:
        raise ValueError(f"polyint: Order of integral must be positive (see polyder), got m={m!r}")
    constants = zeros(order, dtypes.float64) if k is None else _operand(k, "polyint")
    constants = atleast_1d(constants)
    if constants.shape[0] == 1 and order > 1:
        constants = ew.multiply(constants[0], ones(order, dtypes.float64))
    if constants.shape[0] < order:
        raise ValueError(
            f"polyint: k must be a scalar or a rank-1 array of length 1 or >m (m={order}, got length "
            f"{constants.shape[0]})"
        )
    coefficients = _operand(p, "polyint")
    for step in range(order):
        quotient = ew.divide(coefficients, arange(_length(coefficients, "polyint"), 0, -1))
        constant = constants[step]
        coefficients = concatenate((quotient, reshape(constant, (1,) + constant.shape)))
    return coefficients


def vander(x, N=None, increasing=False) -> Array:  # noqa: N803 (NumPy's argument name)
    """The Vandermonde matrix of a 1-d x: columns x**(N-1), ..., x**0 (reversed if increasing),
    in promote_types(x.dtype, int64); the powers are one running product, as NumPy's.

    >>> import lazyarr as la
    >>> la.vander(la.asarray([1, 2, 3]), 3).tolist()
    [[1, 1, 1], [4, 2, 1], [9, 3, 1]]
    """
    from .cumulative import cumprod
    from .manipulation_layout import flip

    array = _operand(x, "vander")
    if array.ndim != 1:
        raise ValueError(f"vander: x must be a one-dimensional array or sequence, got shape {array.shape}.")
    length = array.shape[0]
    columns = length if N is None else operator.index(N)
    if columns < 0:
        raise ValueError(f"vander: negative dimensions are not allowed (N={columns})")
    dtype = np.promote_types(array.dtype, dtypes.int64)
    if columns == 0:
        return zeros((length, 0), dtype)
    values = wrap(convert(array._node, dtype))
    repeated = wrap(make("broadcast", [values._node], shape=(length, columns - 1), dimensions=(0,)))
    powers = concatenate((ones((length, 1), dtype), cumprod(repeated, axis=1, dtype=dtype)), axis=1)
    return powers if increasing else flip(powers, axis=1)


def _is_conjugate_closed(zeros_: Array) -> bool:
    """NumPy's test: sort(z) == sort(conj(z)) for z as complex128 (evaluates)."""
    from .lexicographic_sorting import sort_complex
    from .reductions import all as all_

    values = wrap(convert(zeros_._node, dtypes.complex128))
    return bool(all_(ew.equal(sort_complex(values), sort_complex(ew.conj(values)))))


def poly(seq_of_zeros):
    """Coefficients of the monic polynomial with the given zeros (or a square matrix's
    eigenvalues); 1.0 for no zeros. Complex zeros in conjugate pairs give real coefficients,
    a dtype that depends on the values (evaluates for complex zeros and for matrices).

    >>> import lazyarr as la
    >>> la.poly([1.0, 2.0]).tolist()
    [1.0, -3.0, 2.0]
    """
    given = atleast_1d(_operand(seq_of_zeros, "poly"))
    shape = given.shape
    if len(shape) == 2 and shape[0] == shape[1] and shape[0] != 0:
        zeros_ = eigvals(given)  # complex; NumPy's real eigenvalues give the same real result
    elif len(shape) == 1:
        code = np.mintypecode(given.dtype.char)
        zeros_ = wrap(convert(given._node, np.dtype(code)))
    else:
        raise ValueError(f"poly: input must be 1d or non-empty square 2d array, got shape {shape}.")
    if zeros_.shape[0] == 0:
        return 1.0
    dtype = zeros_.dtype
    coefficients = ones(1, dtype)
    padding = zeros(1, dtype)
    for index in range(zeros_.shape[0]):
        # convolve(a, [1, -zero]): a[k] * 1 + a[k - 1] * -zero, each a two-term sum
        shifted = ew.multiply(coefficients, ew.negative(zeros_[index]))
        coefficients = ew.add(concatenate((coefficients, padding)), concatenate((padding, shifted)))
    if dtypes.is_complex(dtype) and _is_conjugate_closed(zeros_):
        return wrap(make("real", [coefficients._node]))
    return coefficients


def roots(p) -> Array:
    """The roots of the polynomial with coefficients `p`: eigenvalues of its companion matrix
    (la.linalg.eigvals), zero roots for trailing zeros; real when all roots are real, as NumPy.
    Evaluates (the number of roots and their dtype depend on the values).

    >>> import lazyarr as la
    >>> sorted(la.roots([1.0, -3.0, 2.0]).tolist())
    [1.0, 2.0]
    """
    values = np.asarray(atleast_1d(_operand(p, "roots")))
    if values.ndim != 1:
        raise ValueError(f"roots: Input must be a rank-1 array, got shape {values.shape}.")
    nonzero = np.flatnonzero(values)
    if nonzero.size == 0:
        return from_numpy(np.array([]), where="roots")
    trailing = len(values) - int(nonzero[-1]) - 1
    values = values[int(nonzero[0]): int(nonzero[-1]) + 1]
    if values.dtype.kind not in "fc":
        values = values.astype(np.float64)
    count = len(values)
    if count > 1:
        companion = np.diag(np.ones(count - 2, values.dtype), -1)
        with np.errstate(all="ignore"):
            companion[0, :] = -values[1:] / values[0]
        found = eigvals(companion).numpy()
        if values.dtype.kind != "c" and not found.imag.any():
            found = found.real  # NumPy's eigvals: real when every imaginary part is zero
    else:
        found = np.array([])
    return from_numpy(np.concatenate((found, np.zeros(trailing, found.dtype))), where="roots")
