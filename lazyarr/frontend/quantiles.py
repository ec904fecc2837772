"""Order statistics: median, quantile, percentile and their NaN-ignoring forms (NumPy's
default 'linear' method), lazily.

The reduced axes are merged into one last axis and sorted there (the 'sort' custom-call puts
NaN last, as NumPy's partition does). The order statistics are then read at static positions
(median, quantile: the positions depend only on the axis length and q) or gathered at positions
computed per slice from its count of non-NaN values (the nan-functions), and combined with
NumPy's own arithmetic, step by step, so that values and dtypes agree with NumPy:

- median is the mean of the one or two middle values (la.mean: NumPy's dtype rules);
- quantile is NumPy's `_lerp`: `a + (b - a) * t`, or `b - (b - a) * (1 - t)` where t >= 0.5,
  with t the fractional index in q's dtype (a Python float q stays weak, so float32 data gives
  float32) and the index ends NumPy clamps to the last value;
- a slice holding a NaN gives NaN (median, quantile); an all-NaN slice gives NaN (nan-forms);
- nanmedian along one axis of a multi-dimensional array of < 600 values per slice sums the two
  middle values in the data's dtype and halves, as NumPy's masked-array path does (float16 can
  overflow there where NumPy's other path does not).
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..hlo import Instruction, make
from . import elementwise as ew
from .array import Array
from .core import as_array, convert, wrap
from .node_layout import flatten_axes_to_end, move_axes_to_end, move_last_axis_to, reshape, slice_axis
from .reduction_support import reduced_shape, reduction_axes, refuse_out

__all__ = ["median", "nanmedian", "nanpercentile", "nanquantile", "percentile", "quantile"]

_NUMPY_METHODS = (
    "inverted_cdf", "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf", "hazen",
    "weibull", "linear", "median_unbiased", "normal_unbiased", "lower", "higher", "midpoint", "nearest",
)
_MASKED_PATH_LIMIT = 600  # NumPy's nanmedian takes its masked-array path below this slice length


class _Layout:
    """The operand with the reduced axes merged into the last one (C order), and the shapes
    the result takes: `rest` (reduced axes dropped) and `kept` (reduced axes as 1s)."""

    def __init__(self, array: Array, axis, where: str):
        axes = reduction_axes(where, axis, array.ndim, scalar_axis=False)
        if axis is None:
            self.node = reshape(array._node, (array.size,))
        else:
            self.node = flatten_axes_to_end(array._node, axes)
        self.rest = reduced_shape(array.shape, axes, keepdims=False)
        self.kept = reduced_shape(array.shape, axes, keepdims=True)
        self.one_dimensional = axis is None or not self.rest  # NumPy's 1-d code path
        self.length = self.node.shape[-1]

    def sorted(self) -> Instruction:
        from .searching import sort

        return sort(wrap(self.node), axis=-1)._node

    def finish(self, result: Array, q_shape: tuple, keepdims: bool) -> Array:
        shape = tuple(q_shape) + (self.kept if keepdims else self.rest)
        return result if result.shape == shape else wrap(reshape(result._node, shape))


def _cast(value: Array, dtype) -> Array:
    return wrap(convert(value._node, dtype))


def _check_real(array: Array, where: str) -> None:
    if dtypes.is_complex(array.dtype):
        raise TypeError(f"{where}: a must be an array of real numbers, got dtype {array.dtype}")


def _check_sortable(array: Array, where: str) -> None:
    """The medians sort complex values in NumPy; lazyarr's sort has no complex order yet."""
    if dtypes.is_complex(array.dtype):
        raise TypeError(f"{where}: dtype {array.dtype} is not supported (complex sorting is not implemented)")


def _check_method(method, weights, where: str) -> None:
    if weights is not None:
        if method != "inverted_cdf":
            raise ValueError(f"{where}: Only method 'inverted_cdf' supports weights. Got: {method}.")
        raise NotImplementedError(f"{where}: weights= (method='inverted_cdf') is not implemented")
    if method == "linear":
        return
    if method in _NUMPY_METHODS:
        raise NotImplementedError(f"{where}: method={method!r} is not implemented; lazyarr has 'linear'")
    raise ValueError(f"{where}: {method!r} is not a valid method. Use one of: {_NUMPY_METHODS}")


def _quantile_values(q, percent: bool, where: str) -> tuple[np.ndarray, bool]:
    """q as NumPy holds it (percentiles divided by 100), checked; and whether it is weak (a
    Python int or float: the result then keeps the data's float dtype)."""
    weak = type(q) in (int, float)
    values = q.numpy() if isinstance(q, Array) else q
    values = np.asanyarray(np.true_divide(values, 100) if percent else values)
    valid = values.size == 0 or bool(np.all(values >= 0) and np.all(values <= 1))
    if not valid:
        kind = "Percentiles must be in the range [0, 100]" if percent else "Quantiles must be in the range [0, 1]"
        raise ValueError(f"{where}: {kind}")
    if values.ndim > 2:
        raise ValueError(f"{where}: q must be a scalar or 1d, got shape {values.shape}")
    return values, weak


def _last_value(layout: _Layout, ordered: Instruction) -> Array:
    """Each slice's last sorted value (NaN when the slice holds one), of shape `rest`."""
    last = slice_axis(ordered, ordered.ndim - 1, layout.length - 1, layout.length)
    return wrap(reshape(last, layout.rest))


def _with_nan_slices(result: Array, layout: _Layout, ordered: Instruction) -> Array:
    """NumPy's rule: a slice holding a NaN gives NaN (its last sorted value)."""
    last = _last_value(layout, ordered)
    return ew.where(ew.isnan(last), _cast(last, result.dtype), result)


def _take_static(ordered: Instruction, positions: np.ndarray, q_shape: tuple) -> Array:
    """ordered[..., positions] for static positions, as q_shape + rest."""
    from .indexing import take

    taken = take(wrap(ordered), positions.reshape(-1) % ordered.shape[-1], axis=-1)._node
    moved = move_last_axis_to(taken, 0)
    return wrap(reshape(moved, tuple(q_shape) + ordered.shape[:-1]))


def _take_per_slice(ordered: Instruction, positions: Array, q_ndim: int) -> Array:
    """ordered[..., positions] where positions (q dims first, then rest) vary per slice."""
    from .indexing import take_along_axis

    moved = move_axes_to_end(positions._node, tuple(range(q_ndim)))
    batch = moved.shape[: ordered.ndim - 1]
    flat = reshape(moved, batch + (math.prod(moved.shape[len(batch):]),))
    taken = take_along_axis(wrap(ordered), wrap(flat), axis=-1)._node
    taken = reshape(taken, moved.shape)
    rank = taken.ndim
    return wrap(make("transpose", [taken], permutation=tuple(range(rank - q_ndim, rank))
                     + tuple(range(rank - q_ndim))) if q_ndim else taken)


def _lerp(lower: Array, upper: Array, t, one_minus_t, upper_side) -> Array:
    """NumPy's _lerp: lower + (upper - lower) * t, or upper - (upper - lower) * (1 - t) where
    `upper_side` (t >= 0.5); t and 1 - t are Python floats (weak) or arrays (strong)."""
    difference = ew.subtract(upper, lower)
    from_lower = ew.add(lower, ew.multiply(difference, t))
    if upper_side is True or upper_side is False:
        chosen = ew.subtract(upper, ew.multiply(difference, one_minus_t)) if upper_side else from_lower
        return _cast(chosen, from_lower.dtype)
    from_upper = _cast(ew.subtract(upper, ew.multiply(difference, one_minus_t)), from_lower.dtype)
    return ew.where(upper_side, from_upper, from_lower)


def _check_interpolable(array: Array, where: str) -> None:
    if dtypes.is_bool(array.dtype):
        raise TypeError(
            f"{where}: cannot interpolate between boolean values (NumPy's boolean subtract is not "
            "supported); convert the array to an integer or float dtype"
        )


def _quantile(array: Array, q: np.ndarray, weak: bool, axis, keepdims: bool, where: str) -> Array:
    layout = _Layout(array, axis, where)
    count = layout.length
    if count == 0 and q.size:
        raise IndexError(f"{where}: index -1 is out of bounds for axis 0 with size 0 (an empty axis)")
    ordered = layout.sorted()
    virtual = np.asanyarray((count - 1) * q)  # NumPy's virtual indexes, in q's dtype
    if np.issubdtype(virtual.dtype, np.integer):  # integer q: the order statistics themselves
        result = _take_static(ordered, virtual, q.shape)
    else:
        _check_interpolable(array, where)
        flat = virtual.reshape(-1)
        previous = np.floor(flat)
        following = previous + 1
        above, below = flat >= count - 1, flat < 0
        previous[above] = following[above] = -1
        previous[below] = following[below] = 0
        previous, following = previous.astype(np.intp), following.astype(np.intp)
        gamma = np.asanyarray(flat - previous).astype(virtual.dtype)
        lower = _take_static(ordered, previous, q.shape)
        upper = _take_static(ordered, following, q.shape)
        if weak:
            t = float(gamma[0])
            result = _lerp(lower, upper, t, 1 - t, t >= 0.5)
        else:
            t = gamma.reshape(q.shape + (1,) * len(layout.rest))
            result = _lerp(lower, upper, t, 1 - t, t >= 0.5)
    if dtypes.is_inexact(array.dtype):
        result = _with_nan_slices(result, layout, ordered)
    return layout.finish(result, q.shape, keepdims)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
             weights=None) -> Array:
    """The q-th quantiles (q in [0, 1], a scalar or array) over `axis` (None: all), NumPy's
    'linear' method; the result's shape is q's shape followed by the reduced shape. Lazy.

    >>> import lazyarr as la
    >>> la.quantile(la.asarray([1.0, 2.0, 3.0, 4.0]), [0.25, 0.5]).tolist()
    [1.75, 2.5]
    """
    refuse_out("quantile", out)
    array = as_array(a, where="quantile")
    _check_real(array, "quantile")
    values, weak = _quantile_values(q, False, "quantile")
    _check_method(method, weights, "quantile")
    return _quantile(array, values, weak, axis, bool(keepdims), "quantile")


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
               weights=None) -> Array:
    """The q-th percentiles (q in [0, 100]): quantile(a, q / 100). Lazy.

    >>> import lazyarr as la
    >>> float(la.percentile(la.asarray([1.0, 2.0, 3.0, 4.0]), 50))
    2.5
    """
    refuse_out("percentile", out)
    array = as_array(a, where="percentile")
    _check_real(array, "percentile")
    values, weak = _quantile_values(q, True, "percentile")
    _check_method(method, weights, "percentile")
    return _quantile(array, values, weak, axis, bool(keepdims), "percentile")


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False) -> Array:
    """The median over `axis` (None: all): the mean of the middle one or two sorted values
    (integers give float64); NaN where a slice holds a NaN; NaN for an empty axis. Lazy.

    >>> import lazyarr as la
    >>> float(la.median(la.asarray([3, 1, 4, 2])))
    2.5
    """
    from .statistics import mean

    refuse_out("median", out)
    array = as_array(a, where="median")
    _check_sortable(array, "median")
    layout = _Layout(array, axis, "median")
    count = layout.length
    ordered = layout.sorted()
    start = count // 2 - (1 - count % 2) if count else 0
    middle = slice_axis(ordered, ordered.ndim - 1, start, count // 2 + 1 if count else 0)
    result = mean(wrap(middle), axis=-1)
    if count and dtypes.is_inexact(array.dtype):
        result = _with_nan_slices(result, layout, ordered)
    return layout.finish(result, (), bool(keepdims))


# -- ignoring NaNs ------------------------------------------------------------------------------


def _non_nan_count(layout: _Layout) -> Array:
    """How many non-NaN values each slice holds (int64, shape `rest`)."""
    present = convert(make("not", [make("is-nan", [layout.node])]), dtypes.int64)
    return wrap(make("reduce", [present], kind="sum", dimensions=(layout.node.ndim - 1,)))


def _nan_quantile(array: Array, q: np.ndarray, weak: bool, axis, keepdims: bool, where: str) -> Array:
    """NumPy's nanquantile: the linear quantile of each slice's non-NaN values, whose count
    varies per slice, so the positions and fractions are computed lazily per slice."""
    layout = _Layout(array, axis, where)
    ordered = layout.sorted()  # NaN last: a slice's non-NaN values come first, in order
    present = _non_nan_count(layout)
    q_column = q.reshape(q.shape + (1,) * len(layout.rest))
    last_position = ew.multiply(ew.subtract(present, 1), np.ones(q_column.shape, dtype=np.int64))
    if np.issubdtype(np.asanyarray((layout.length - 1) * q).dtype, np.integer):
        positions = ew.multiply(last_position, q_column.astype(np.int64))
        result = _take_per_slice(ordered, ew.clip(positions, 0, layout.length - 1), q.ndim)
    else:
        q_dtype = np.asanyarray(layout.length * q).dtype
        limit = _cast(last_position, q_dtype)
        virtual = ew.multiply(limit, q_column)
        floor = ew.floor(virtual)
        above, below = ew.greater_equal(virtual, limit), ew.less(virtual, 0)
        # NumPy's clamped indexes: -1 (the last value) above the range, 0 below it.
        previous = ew.where(above, -1.0, ew.where(below, 0.0, floor))
        # The fraction, as NumPy computes it: float64 index difference, cast to q's dtype.
        gamma = _cast(ew.subtract(_cast(virtual, dtypes.float64), _cast(previous, dtypes.float64)), q_dtype)
        low_index = _cast(ew.where(above, last_position, previous), dtypes.int64)
        high_index = ew.where(above, last_position, ew.where(below, 0, ew.add(low_index, 1)))
        clip = (0, layout.length - 1)
        lower = _take_per_slice(ordered, ew.clip(low_index, *clip), q.ndim)
        upper = _take_per_slice(ordered, ew.clip(high_index, *clip), q.ndim)
        upper_side = ew.greater_equal(gamma, 0.5)
        one_minus = ew.subtract(1, gamma)
        if weak:  # Python-float fractions convert to the data's dtype, after NumPy's float64 1 - t
            gamma, one_minus = _cast(gamma, array.dtype), _cast(one_minus, array.dtype)
        result = _lerp(lower, upper, gamma, one_minus, upper_side)
    empty = ew.equal(present, 0)
    result = ew.where(empty, _cast(_last_value(layout, ordered), result.dtype), result)
    return layout.finish(result, q.shape, keepdims)


def _nan_quantile_entry(a, q, axis, out, method, keepdims, weights, percent: bool, where: str) -> Array:
    from .statistics import nanmean

    refuse_out(where, out)
    array = as_array(a, where=where)
    _check_real(array, where)
    values, weak = _quantile_values(q, percent, where)
    _check_method(method, weights, where)
    if array.size == 0:  # NumPy answers an empty array with nanmean (q's shape does not appear)
        return nanmean(array, axis=axis, keepdims=bool(keepdims))
    if not dtypes.is_inexact(array.dtype):
        return _quantile(array, values, weak, axis, bool(keepdims), where)
    return _nan_quantile(array, values, weak, axis, bool(keepdims), where)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                weights=None) -> Array:
    """quantile ignoring NaNs (an all-NaN slice gives NaN). Lazy.

    >>> import lazyarr as la
    >>> float(la.nanquantile(la.asarray([1.0, float("nan"), 3.0]), 0.5))
    2.0
    """
    return _nan_quantile_entry(a, q, axis, out, method, keepdims, weights, False, "nanquantile")


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                  weights=None) -> Array:
    """percentile ignoring NaNs (an all-NaN slice gives NaN). Lazy.

    >>> import lazyarr as la
    >>> float(la.nanpercentile(la.asarray([1.0, float("nan"), 3.0]), 50))
    2.0
    """
    return _nan_quantile_entry(a, q, axis, out, method, keepdims, weights, True, "nanpercentile")


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False) -> Array:
    """median ignoring NaNs (an all-NaN slice gives NaN). Lazy.

    >>> import lazyarr as la
    >>> float(la.nanmedian(la.asarray([1.0, float("nan"), 4.0])))
    2.5
    """
    from .reductions import sum as sum_
    from .statistics import mean, nanmean

    refuse_out("nanmedian", out)
    array = as_array(a, where="nanmedian")
    _check_sortable(array, "nanmedian")
    if array.size == 0:
        return nanmean(array, axis=axis, keepdims=bool(keepdims))
    if not dtypes.is_inexact(array.dtype):
        return median(array, axis=axis, keepdims=keepdims)
    layout = _Layout(array, axis, "nanmedian")
    ordered = layout.sorted()
    present = _non_nan_count(layout)
    top = layout.length - 1
    lower = _take_per_slice(ordered, ew.clip(ew.floor_divide(ew.subtract(present, 1), 2), 0, top), 0)
    upper = _take_per_slice(ordered, ew.clip(ew.floor_divide(present, 2), 0, top), 0)
    pair = wrap(make("concatenate", [reshape(part._node, layout.rest + (1,)) for part in (lower, upper)],
                     dimension=len(layout.rest)))
    if layout.one_dimensional or layout.length >= _MASKED_PATH_LIMIT:
        # NumPy's median of the non-NaN values: the mean of the middle one or two.
        single = mean(wrap(reshape(upper._node, layout.rest + (1,))), axis=-1)
        result = ew.where(ew.equal(ew.remainder(present, 2), 1), single, mean(pair, axis=-1))
    else:  # NumPy's masked-array path: the two middle values (one twice) summed, then halved
        result = ew.divide(sum_(pair, axis=-1, dtype=array.dtype), 2.0)
    result = ew.where(ew.equal(present, 0), _last_value(layout, ordered), result)
    return layout.finish(result, (), bool(keepdims))
