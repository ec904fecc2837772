"""histogram, histogramdd and histogram2d: NumPy's counting, step by step, lazily in the data
and weights.

The edges come from histogram_edges.py (host values). Counting follows NumPy's two paths:

- equal bins (an integer or string `bins`): each value in [first, last] gets the index
  `int((x - first) / (last - first) * count)`, corrected by one against the edges it lies
  between (the last bin is closed); values outside, and NaN, go to one extra bin that is
  dropped. The counts are a scatter-add (NumPy's bincount: float64 sums of the weights in
  order, cast to the weights' dtype), per block of 65536 values as NumPy adds them;
- edges given as an array: NumPy's cumulative counts, `searchsorted` of the edges in the
  sorted data (the last edge on the right), differenced; with weights, the cumulative sums
  of the weights in sorted order, read at those positions.

histogramdd follows NumPy's: per coordinate, `searchsorted(edges, x, 'right')` with values on
the last edge moved into the last bin, one flat index into a grid with an outlier bin at each
end of every axis, a float64 scatter-add (NumPy's bincount, then astype(float)), then the inner
grid. histogram2d is NumPy's thin wrapper of it, here too.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from .. import dtypes
from ..hlo import make
from . import elementwise as ew
from .array import Array, evaluate_arrays
from .core import as_array, convert, from_numpy, wrap
from .histogram_edges import Bins, given_edges, histogram_data, outer_edges, resolve_bins, unsigned_subtract
from .node_layout import filled

__all__ = ["histogram", "histogram2d", "histogramdd"]

BLOCK = 65536  # NumPy's block size: it counts (and sums weights) block by block


def _block_size(values: Array, weights: Array | None) -> int:
    """NumPy's blocks matter only to the order in which weights are summed: plain counts (whole
    numbers, exact in any order) are made in one block."""
    return BLOCK if weights is not None else max(values.shape[0], 1)


def _scatter_add(length: int, index: Array, updates: Array) -> Array:
    """zeros(length) with updates[i] added at index[i], in order (NumPy's bincount loop)."""
    zeros = filled(0, updates.dtype, (length,))
    column = make("reshape", [index._node], shape=index.shape + (1,))
    return wrap(make("scatter", [zeros, column, updates._node], index_dims=(0,), mode="add"))


def _cast(array: Array, dtype) -> Array:
    return wrap(convert(array._node, dtype))


def _bin_indices(values: Array, bins: Bins) -> Array:
    """NumPy's equal-bin index of each value, or `count` (the dropped bin) outside the range."""
    from .indexing import take

    first, last, count = bins.uniform
    edges = from_numpy(bins.edges)
    keep = ew.logical_and(ew.greater_equal(values, first), ew.less_equal(values, last))
    inside = ew.where(keep, _cast(values, bins.edges.dtype), from_numpy(bins.edges[0]))
    difference_dtype = np.result_type(bins.edges.dtype, first)
    difference = ew.subtract(_cast(inside, difference_dtype), _cast(as_array(first), difference_dtype))
    position = ew.multiply(ew.divide(difference, unsigned_subtract(last, first)), count)
    index = _cast(position, dtypes.int64)
    index = ew.where(ew.equal(index, count), count - 1, index)
    index = ew.subtract(index, _cast(ew.less(inside, take(edges, index)), dtypes.int64))
    above = ew.logical_and(ew.greater_equal(inside, take(edges, ew.add(index, 1))), ew.not_equal(index, count - 1))
    index = ew.add(index, _cast(above, dtypes.int64))
    return ew.where(keep, index, count)


def _block_sums(index: Array, weights: Array | None, count: int) -> Array:
    """NumPy's `bincount(indices, weights, minlength=count)` for one block (int64 counts, or
    float64 sums), with index `count` collecting the values outside the range."""
    if weights is None:
        return _scatter_add(count + 1, index, wrap(filled(1, dtypes.int64, index.shape)))[:count]
    return _scatter_add(count + 1, index, _cast(weights, dtypes.float64))[:count]


def _equal_bin_counts(values: Array, weights: Array | None, bins: Bins, result_dtype) -> Array:
    """NumPy's `n += bincount(...).astype(n.dtype)` over the blocks; complex weights sum their
    real and imaginary parts separately (`n.real += ...`, `n.imag += ...`)."""
    count = bins.uniform[2]
    complex_weights = dtypes.is_complex(result_dtype)
    part_dtype = np.empty(0, result_dtype).real.dtype
    parts = [wrap(filled(0, part_dtype, (count,))) for _ in range(2 if complex_weights else 1)]
    size = _block_size(values, weights)
    for start in range(0, values.shape[0], size):
        block = slice(start, start + size)
        index = _bin_indices(values[block], bins)
        if complex_weights:
            for number, part in enumerate((ew.real, ew.imag)):
                sums = _block_sums(index, part(weights[block]), count)
                parts[number] = _cast(ew.add(parts[number], sums), part_dtype)
        else:
            sums = _block_sums(index, None if weights is None else weights[block], count)
            parts[0] = _cast(ew.add(parts[0], _cast(sums, result_dtype)), result_dtype)
    if complex_weights:
        return wrap(make("complex", [parts[0]._node, parts[1]._node]))
    return parts[0]


def _inclusive_positions(ordered: Array, edges: Array) -> Array:
    """NumPy's `_search_sorted_inclusive`: searchsorted left for all edges but the last (right)."""
    from .manipulation_joining import concatenate
    from .searching import searchsorted

    last = edges.shape[0] - 1
    return concatenate((searchsorted(ordered, edges[:last], side="left"),
                        searchsorted(ordered, edges[last:], side="right")))


def _edge_counts(values: Array, weights: Array | None, bins: Bins, result_dtype, where: str) -> Array:
    """NumPy's cumulative-count path for edges given as an array."""
    from .cumulative import cumsum
    from .indexing import take
    from .manipulation_joining import concatenate
    from .manipulation_repeating import diff
    from .searching import argsort, sort

    edges = bins.edges_array()
    cumulative = wrap(filled(0, result_dtype, edges.shape))
    size = _block_size(values, weights)
    for start in range(0, values.shape[0], size):
        block = values[start:start + size]
        if weights is None:
            positions = _inclusive_positions(sort(block), edges)
            cumulative = ew.add(cumulative, positions)
            continue
        order = argsort(block)
        running = cumsum(take(weights[start:start + size], order))
        sums = concatenate((wrap(filled(0, result_dtype, (1,))), running))
        if not np.can_cast(sums.dtype, result_dtype, casting="same_kind"):
            raise TypeError(f"{where}: Cannot cast ufunc 'add' output from dtype('{sums.dtype}') to "
                            f"dtype('{result_dtype}') with casting rule 'same_kind'")
        positions = _inclusive_positions(take(block, order), edges)
        cumulative = _cast(ew.add(cumulative, take(sums, positions)), result_dtype)
    return diff(cumulative)


def _density(counts: Array, edges: np.ndarray) -> Array:
    """NumPy's n / diff(edges) / n.sum()."""
    from .reductions import sum as sum_

    widths = np.array(np.diff(edges), float)
    return ew.divide(ew.divide(counts, widths), sum_(counts))


def histogram(a, bins=10, range=None, density=None, weights=None) -> tuple[Array, Array]:  # noqa: A002
    """Counts (int64; with weights, their sums in the weights' dtype) of the flattened `a` in
    each bin, and the bin edges: `bins` equal bins over `range` (default: the data's minimum to
    maximum, which evaluates them), or the edges given; every bin is half-open but the last,
    which holds its right edge. `density` divides by the bin widths and the total. Lazy in `a`
    and `weights` when `range` or the edges are given.

    >>> import lazyarr as la
    >>> counts, edges = la.histogram(la.asarray([1, 2, 1, 4]), bins=3, range=(1, 4))
    >>> counts.tolist(), edges.tolist()
    ([2, 1, 1], [1.0, 2.0, 3.0, 4.0])
    """
    values, weights = histogram_data(a, weights, "histogram")
    resolved = resolve_bins(values, bins, range, weights, "histogram")
    result_dtype = dtypes.int64 if weights is None else weights.dtype
    if resolved.uniform is not None:
        counts = _equal_bin_counts(values, weights, resolved, result_dtype)
    else:
        counts = _edge_counts(values, weights, resolved, result_dtype, "histogram")
    if density:
        counts = _density(counts, resolved.edges)
    return counts, resolved.edges_array()


# -- D coordinates: histogramdd, and histogram2d as NumPy builds it on histogramdd ----------------


def _sample_array(sample, where: str) -> Array:
    """NumPy's reading of `sample`: an (N, D) array, or else a sequence of D coordinate arrays
    (`atleast_2d(sample).T`); anything else raises NumPy's unpacking error."""
    from .manipulation_layout import atleast_2d

    if getattr(sample, "ndim", None) == 2:
        return as_array(sample, where=where)
    given = as_array(sample, where=where)
    if given.ndim > 2:
        raise ValueError(f"{where}: too many values to unpack (expected 2): sample of shape {given.shape}")
    return atleast_2d(given).T


def _checked_weights(weights, count: int, where: str) -> Array | None:
    """NumPy's bincount checks of the weights: 1-d, one per sample, safely castable to float64."""
    if weights is None:
        return None
    weights = as_array(weights, where=where)
    if weights.ndim != 1:
        depth = "too small depth" if weights.ndim == 0 else "too deep"
        raise ValueError(f"{where}: object {depth} for desired array (weights of shape {weights.shape})")
    if weights.shape[0] != count:
        raise ValueError(f"{where}: The weights and list don't have the same length ({weights.shape[0]} and {count}).")
    if not np.can_cast(weights.dtype, np.float64, casting="safe"):
        raise TypeError(f"{where}: Cannot cast array data from dtype('{weights.dtype}') to dtype('float64') "
                        "according to the rule 'safe'")
    return weights


def _per_coordinate(bins, range_, dimensions: int, where: str) -> tuple[list, tuple]:
    """histogramdd's reading of `bins` (one per coordinate, or one count for all) and `range`."""
    try:
        if len(bins) != dimensions:
            raise ValueError(f"{where}: The dimension of bins must be equal to the dimension of the sample x "
                             f"({len(bins)} and {dimensions}).")
    except TypeError:
        bins = dimensions * [bins]  # an integer
    if range_ is None:
        range_ = (None,) * dimensions
    elif len(range_) != dimensions:
        raise ValueError(f"{where}: range argument must have one entry per dimension")
    return list(bins), tuple(range_)


def _data_extremes(columns: list[Array], bins: list, ranges: tuple, where: str) -> list:
    """Each coordinate's (minimum, maximum) as NumPy values where its edges come from the data
    (an integer count, no range), evaluated in one module with the sample; None elsewhere."""
    from .histogram_edges import require_values
    from .reductions import max as max_
    from .reductions import min as min_

    wanted = [axis for axis, column in enumerate(columns)
              if np.ndim(bins[axis]) == 0 and ranges[axis] is None and column.size]
    if not wanted:
        return [None] * len(columns)
    require_values(where, [columns[axis] for axis in wanted], "with range=None the bins span the data's minimum "
                   "and maximum, which a traced array has not yet; pass range=, or call it outside la.jit")
    lows = [min_(columns[axis]) for axis in wanted]
    highs = [max_(columns[axis]) for axis in wanted]
    evaluate_arrays([*(columns[axis] for axis in wanted), *lows, *highs])
    extremes = [None] * len(columns)
    for axis, low, high in zip(wanted, lows, highs):
        extremes[axis] = np.array([low.numpy()[()], high.numpy()[()]])
    return extremes


def _coordinate_edges(values: Array, bins, range_, axis: int, extremes, where: str) -> tuple[np.ndarray, Array]:
    """histogramdd's edges for one coordinate: (host values, the array returned)."""

    if np.ndim(bins) == 0:
        if bins < 1:
            raise ValueError(f"{where}: `bins[{axis}]` must be positive, when an integer")
        first, last = outer_edges(values, range_, where, extremes)
        try:
            count = operator.index(bins)
        except TypeError:
            raise TypeError(f"{where}: `bins[{axis}]` must be an integer, when a scalar") from None
        edges = np.linspace(first, last, count + 1)
        return edges, from_numpy(edges)
    return given_edges(bins, where, f"`bins[{axis}]` must be a scalar or 1d array",
                       f"`bins[{axis}]` must be monotonically increasing, when an array")


def _histogramdd(sample: Array, bins, range_, density, weights, where: str) -> tuple[Array, list[Array]]:
    """NumPy's histogramdd of an (N, D) sample (see histogramdd)."""
    from .searching import searchsorted

    count, dimensions = sample.shape
    if dtypes.is_complex(sample.dtype):
        raise NotImplementedError(f"{where}: complex coordinates are not supported")
    bins, ranges = _per_coordinate(bins, range_, dimensions, where)
    columns = [sample[:, axis] for axis in range(dimensions)]
    extremes = _data_extremes(columns, bins, ranges, where)
    found = [_coordinate_edges(column, bins[axis], ranges[axis], axis, extremes[axis], where)
             for axis, column in enumerate(columns)]
    if dimensions == 0:
        raise ValueError(f"{where}: object of too small depth for desired array (a sample of no coordinates)")
    sizes = [edges.size + 1 for edges, _ in found]  # an outlier bin at each end
    if math.prod(sizes) > np.iinfo(np.intp).max:
        raise ValueError(f"{where}: invalid dims: array size defined by dims is larger than the maximum possible size.")
    weights = _checked_weights(weights, count, where)
    flat = None
    for values, size, (edges, _) in zip(columns, sizes, found):
        position = searchsorted(from_numpy(edges), values, side="right")
        # a value on the last edge goes into the last bin, not the outliers
        position = ew.where(ew.equal(values, from_numpy(edges[-1])), ew.subtract(position, 1), position)
        flat = position if flat is None else ew.add(ew.multiply(flat, size), position)
    updates = wrap(filled(1.0, dtypes.float64, (count,))) if weights is None else _cast(weights, dtypes.float64)
    grid = _scatter_add(math.prod(sizes), flat, updates)
    inner = (slice(1, -1),) * dimensions
    grid = wrap(make("reshape", [grid._node], shape=tuple(sizes)))[inner]
    if density:
        from .reductions import sum as sum_

        total = sum_(grid)
        for axis, (edges, _) in enumerate(found):
            shape = [1] * dimensions
            shape[axis] = sizes[axis] - 2
            grid = ew.divide(grid, np.diff(edges).reshape(shape))
        grid = ew.divide(grid, total)
    return grid, [given for _, given in found]


def histogramdd(sample, bins=10, range=None, density=None, weights=None) -> tuple[Array, list[Array]]:  # noqa: A002
    """The D-dimensional histogram of N points (float64, one axis per coordinate) and the list of
    each coordinate's edges, as NumPy's histogramdd: `sample` an (N, D) array or D coordinate
    arrays; `bins` a count for all, or one count or edge array per coordinate; the last bin of
    each coordinate holds its right edge. Lazy in the sample and weights when each coordinate
    has a range or edges (else its minimum and maximum are evaluated, in one module).

    >>> import lazyarr as la
    >>> counts, edges = la.histogramdd(la.asarray([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0]]), bins=2)
    >>> counts.tolist(), edges[0].tolist()
    ([[1.0, 0.0], [1.0, 1.0]], [0.0, 0.5, 1.0])
    """
    return _histogramdd(_sample_array(sample, "histogramdd"), bins, range, density, weights, "histogramdd")


def histogram2d(x, y, bins=10, range=None, density=None, weights=None) -> tuple[Array, Array, Array]:  # noqa: A002
    """The 2-d histogram of points (x[i], y[i]) (float64, shape (len(xedges) - 1, len(yedges) - 1))
    and the edges of each coordinate: NumPy's histogram2d, histogramdd of the pair. `bins` an
    int, a pair of ints or edge arrays, or one edge array for both. Lazy when `range` or the
    edges are given.

    >>> import lazyarr as la
    >>> counts, xedges, yedges = la.histogram2d([0.0, 1.0, 1.0], [0.0, 0.0, 1.0], bins=2)
    >>> counts.tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    from .manipulation_joining import stack

    first, second = as_array(x, where="histogram2d"), as_array(y, where="histogram2d")
    for array in (first, second):
        if array.ndim != 1:
            raise ValueError(f"histogram2d: x and y must be 1-d, got shapes {first.shape} and {second.shape}")
    if first.shape != second.shape:
        raise ValueError(f"histogram2d: x and y must have the same length ({first.shape[0]} and {second.shape[0]}).")
    try:
        given = len(bins)
    except TypeError:
        given = 1
    if given not in (1, 2):
        edges = as_array(bins, where="histogram2d")
        bins = [edges, edges]  # one edge array for both coordinates
    common = dtypes.result_type(first.dtype, second.dtype)  # NumPy's atleast_2d([x, y])
    sample = stack([_cast(first, common), _cast(second, common)], axis=1)
    grid, (first_edges, second_edges) = _histogramdd(sample, bins, range, density, weights, "histogram2d")
    return grid, first_edges, second_edges
