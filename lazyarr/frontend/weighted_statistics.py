"""average, cov and corrcoef: NumPy's formulas step by step, lazily.

average is `mean` without weights, else `sum(a * w, dtype) / sum(w, dtype)` in NumPy's result
dtype (integers and bools promote with float64). cov centres each variable on its (weighted)
average, multiplies the centred rows by their conjugate transposes (`dot`, as NumPy) and scales
by `1 / fact`, the degrees of freedom NumPy derives from ddof and the weights; corrcoef divides
cov by the outer product of the standard deviations and clips to [-1, 1].

NumPy checks some arguments on their values: weights that sum to zero (average raises
ZeroDivisionError), fweights that are not integers or negative weights (cov). Those checks
run here when the weights are concrete (NumPy arrays, sequences, evaluated lazy arrays);
lazy weights are not evaluated for them, so that average and cov stay lazy: a zero weight
sum then gives inf or NaN, as the division does.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..hlo import make
from ..shapes import normalize_axis
from . import elementwise as ew
from .array import Array
from .core import as_array, broadcast_to, convert, wrap
from .node_layout import filled, reshape
from .reduction_support import NO_VALUE

__all__ = ["average", "corrcoef", "cov"]


def _axes(axis, ndim: int) -> tuple[int, ...] | None:
    """NumPy's normalize_axis_tuple: non-negative axes in the order given; repeats raise."""
    if axis is None:
        return None
    items = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    axes = tuple(normalize_axis(item, ndim, where="average") for item in items)
    if len(set(axes)) != len(axes):
        raise ValueError(f"average: repeated axis in `axis` argument {items}")
    return axes


def _concrete(given) -> np.ndarray | None:
    """The values of an operand the caller gave as data (a NumPy array, a sequence, an evaluated
    lazy array), else None: a pending lazy graph is not evaluated for a check."""
    if isinstance(given, Array):
        return given.numpy() if given.is_evaluated else None
    return np.asarray(given)


def _cast(array: Array, dtype) -> Array:
    return wrap(convert(array._node, dtype))


def _weights_along(weights: Array, shape: tuple, axes) -> Array:
    """NumPy's `_weights_are_valid`: weights shaped as `a`, or 1 per reduced axis (then
    transposed into the axes' order and given size-1 dims elsewhere to broadcast)."""
    from .manipulation_layout import transpose

    if weights.shape == shape:
        return weights
    if axes is None:
        raise TypeError("average: Axis must be specified when shapes of a and weights differ.")
    if weights.shape != tuple(shape[axis] for axis in axes):
        raise ValueError(
            "average: Shape of weights must be consistent with shape of a along specified axis "
            f"(a: {shape}, weights: {weights.shape}, axis: {axes})."
        )
    weights = transpose(weights, tuple(int(position) for position in np.argsort(axes)))
    return wrap(reshape(weights._node, tuple(size if axis in axes else 1 for axis, size in enumerate(shape))))


def _check_weight_sum(values: np.ndarray | None, axes, dtype, where: str) -> None:
    """NumPy's ZeroDivisionError for weights summing to zero (checked on concrete weights)."""
    with np.errstate(all="ignore"):
        if values is not None and np.any(values.sum(axis=axes, dtype=dtype) == 0.0):
            raise ZeroDivisionError(f"{where}: Weights sum to zero, can't be normalized")


def average(a, axis=None, weights=None, returned=False, *, keepdims=NO_VALUE):
    """The weighted average over `axis` (None: all): sum(a * weights) / sum(weights) in NumPy's
    dtype (integers give float64); `returned` also gives the sum of the weights (without
    weights, the count), broadcast to the result's shape. Lazy.

    >>> import lazyarr as la
    >>> float(la.average(la.asarray([1.0, 2.0, 4.0]), weights=[3, 1, 0]))
    1.25
    """
    from .reductions import sum as sum_
    from .statistics import mean

    array = as_array(a, where="average")
    axes = _axes(axis, array.ndim)
    if weights is None:
        result = mean(array, axes, keepdims=keepdims)
        if not result.size:
            raise ZeroDivisionError(f"average: division by zero (the result of shape {result.shape} is empty)")
        scale = wrap(filled(result.dtype.type(array.size / result.size), result.dtype, result.shape))
    else:
        given = as_array(weights, where="average")
        weights = _weights_along(given, array.shape, axes)
        if dtypes.is_integer(array.dtype) or dtypes.is_bool(array.dtype):
            result_dtype = np.result_type(array.dtype, weights.dtype, "f8")
        else:
            result_dtype = np.result_type(array.dtype, weights.dtype)
        _check_weight_sum(_concrete(given), None if given.shape != array.shape else axes, result_dtype, "average")
        scale = sum_(weights, axis=axes, dtype=result_dtype, keepdims=keepdims)
        product = ew.multiply(_cast(array, result_dtype), _cast(weights, result_dtype))
        result = ew.divide(sum_(product, axis=axes, keepdims=keepdims), scale)
    if not returned:
        return result
    return result, wrap(broadcast_to(scale._node, result.shape))


# -- covariance -------------------------------------------------------------------------------


def _at_least_2d(array: Array, dtype) -> Array:
    """NumPy's array(m, ndmin=2, dtype=dtype): leading size-1 dims, converted."""
    return wrap(reshape(convert(array._node, dtype), (1,) * (2 - array.ndim) + array.shape))


def _frequency_weights(values, observations: int, kind: str, where: str) -> tuple[Array, np.ndarray | None]:
    """fweights or aweights as float64, checked as NumPy checks them (values only when concrete)."""
    given = as_array(values, where=where)
    weights = _cast(given, dtypes.float64)
    concrete = _concrete(given)
    concrete = None if concrete is None else concrete.astype(np.float64)
    if kind == "fweights" and concrete is not None and not np.all(concrete == np.around(concrete)):
        raise TypeError(f"{where}: fweights must be integer")
    if weights.ndim > 1:
        raise RuntimeError(f"{where}: cannot handle multidimensional {kind} (got shape {weights.shape})")
    if weights.ndim == 0 or weights.shape[0] != observations:
        raise RuntimeError(
            f"{where}: incompatible numbers of samples and {kind} ({observations} observations, {kind} of "
            f"shape {weights.shape})"
        )
    if concrete is not None and np.any(concrete < 0):
        raise ValueError(f"{where}: {kind} cannot be negative")
    return weights, concrete


def _sequential_sum(vector: Array) -> Array:
    """Python's builtin sum over a 1-d array (NumPy's cov uses it): left to right, in order."""
    from .cumulative import cumsum

    if vector.shape[0] == 0:
        return wrap(filled(0.0, dtypes.float64, ()))
    return cumsum(vector)[vector.shape[0] - 1]


def _ddof(ddof, bias):
    if ddof is None:
        return 1 if bias == 0 else 0
    if ddof != int(ddof):
        raise ValueError(f"cov: ddof must be integer, got {ddof!r}")
    return ddof


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None) -> Array:
    """Covariance matrix of the variables in the rows of `m` (columns if not rowvar), and of
    `y`'s, normalized by N - ddof (ddof 1 unless bias) or by the weights' degrees of freedom.
    float64 unless `dtype` (or complex data) says otherwise; a single variable gives 0-d. Lazy.

    >>> import lazyarr as la
    >>> la.cov(la.asarray([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    from .linalg import dot
    from .manipulation_joining import concatenate
    from .manipulation_layout import squeeze, transpose

    ddof = _ddof(ddof, bias)
    first = as_array(m, where="cov")
    if first.ndim > 2:
        raise ValueError(f"cov: m has more than 2 dimensions (got shape {first.shape})")
    second = None if y is None else as_array(y, where="cov")
    if second is not None and second.ndim > 2:
        raise ValueError(f"cov: y has more than 2 dimensions (got shape {second.shape})")
    if dtype is None:
        dtype = np.result_type(first.dtype, np.float64) if second is None else np.result_type(
            first.dtype, second.dtype, np.float64)
    dtype = dtypes.as_dtype(dtype, where="cov")
    rows = _at_least_2d(first, dtype)
    if not rowvar and first.ndim != 1:
        rows = transpose(rows)
    if rows.shape[0] == 0:
        return wrap(filled(0.0, dtypes.float64, (0, 0)))
    if second is not None:
        extra = _at_least_2d(second, dtype)
        if not rowvar and extra.shape[0] != 1:
            extra = transpose(extra)
        rows = concatenate((rows, extra), axis=0)
    observations = rows.shape[1]
    weights = analytic = concrete = None
    if fweights is not None:
        weights, concrete = _frequency_weights(fweights, observations, "fweights", "cov")
    if aweights is not None:
        analytic, concrete_analytic = _frequency_weights(aweights, observations, "aweights", "cov")
        if weights is None:
            weights, concrete = analytic, concrete_analytic
        else:
            weights = ew.multiply(weights, analytic)
            both = concrete is not None and concrete_analytic is not None
            concrete = concrete * concrete_analytic if both else None
    if weights is not None:
        _check_weight_sum(concrete, None, dtypes.float64, "cov")
    center, weight_sum = average(rows, axis=1, weights=weights, returned=True)
    weight_sum = weight_sum[0]
    if weights is None:
        fact = observations - ddof
        fact = 0.0 if fact <= 0 else fact
        with np.errstate(divide="ignore"):
            scale = np.true_divide(1, fact)
    else:
        if ddof == 0:
            fact = weight_sum
        elif analytic is None:
            fact = ew.subtract(weight_sum, ddof)
        else:
            fact = ew.subtract(weight_sum, ew.divide(ew.multiply(ddof, _sequential_sum(
                ew.multiply(weights, analytic))), weight_sum))
        fact = ew.where(ew.less_equal(fact, 0), 0.0, fact)
        scale = ew.divide(1, fact)
    difference = ew.subtract(rows, center[:, None])
    if not np.can_cast(difference.dtype, rows.dtype, "same_kind"):  # (an integer `dtype=`)
        raise TypeError(f"cov: Cannot cast ufunc 'subtract' output from {difference.dtype!r} to {rows.dtype!r} "
                        "with casting rule 'same_kind'")
    centred = _cast(difference, rows.dtype)  # NumPy: X -= avg[:, None]
    other = centred if weights is None else ew.multiply(centred, weights)
    product = dot(centred, ew.conj(transpose(other)))
    product = _cast(ew.multiply(product, scale), product.dtype)  # NumPy: c *= 1 / fact
    return squeeze(product)


def corrcoef(x, y=None, rowvar=True, *, dtype=None) -> Array:
    """Pearson correlation coefficients: cov(x, y) / outer(stddev, stddev), clipped to
    [-1, 1] (real and imaginary parts); a single variable gives c / c (1, or NaN). Lazy.

    >>> import lazyarr as la
    >>> la.corrcoef(la.asarray([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    from .linalg import diagonal

    covariance = cov(x, y, rowvar, dtype=dtype)
    if covariance.ndim == 0:
        return ew.divide(covariance, covariance)
    deviation = ew.sqrt(ew.real(diagonal(covariance)))
    result = _cast(ew.divide(covariance, deviation[:, None]), covariance.dtype)
    result = _cast(ew.divide(result, deviation[None, :]), covariance.dtype)
    if not dtypes.is_complex(result.dtype):
        return ew.clip(result, -1, 1)
    parts = [ew.clip(part(result), -1, 1)._node for part in (ew.real, ew.imag)]
    return wrap(make("complex", parts))
