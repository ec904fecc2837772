"""Bin edges as NumPy chooses them (histogram_bin_edges), and digitize.

Edges are small and decide the algorithm, so they are computed on the host, with NumPy's own
arithmetic (`np.linspace` between the outer edges, in NumPy's dtype), and the data is then
counted lazily (histograms.py). Three things need values, as in NumPy:

- `range=None` takes the outer edges from the data's minimum and maximum (NumPy raises for a
  non-finite one): they are evaluated, with the data itself in the same module;
- a string `bins` ('auto', 'fd', ...) picks the bin count from the data: evaluates it;
- bin edges given as an array must be monotonic (NumPy raises otherwise): a lazy array of
  edges is evaluated for that check (edges are few).

Inside `la.jit`, needing the values of a traced array raises TracedValueError naming the fix
(pass `range=`, or the edges as a NumPy array).
"""

from __future__ import annotations

import operator

import numpy as np

from .. import dtypes
from . import tracing
from .array import Array, evaluate_arrays
from .core import as_array, convert, wrap

__all__ = ["digitize", "histogram_bin_edges"]

BIN_ESTIMATORS = ("auto", "doane", "fd", "rice", "scott", "sqrt", "stone", "sturges")


def require_values(where: str, arrays, fix: str) -> None:
    """Refuse to evaluate arrays traced by la.jit: `where` needs their values, which a trace
    has not; arrays that do not depend on the jitted function's arguments evaluate as usual."""
    if not tracing.is_tracing():
        return
    nodes = [array._node for array in arrays if isinstance(array, Array)]
    tracer = tracing.find_tracer(nodes, lambda node: node._bound is not None)
    trace = tracing.tracer_of(tracer) if tracer is not None else None
    if trace is None or not trace.active:
        return
    raise tracing.TracedValueError(f"la.{where} on a traced array inside la.jit({trace.function_name}): {fix}")


def edge_values(edges: Array, where: str) -> np.ndarray:
    """The values of lazy bin edges (evaluated: NumPy checks them)."""
    require_values(where, [edges], "bin edges given as an array are checked on their values (NumPy raises "
                   "unless they are monotonic); pass them as a NumPy array, or call it outside la.jit")
    return edges.numpy()


def given_edges(bins, where: str, not_one_dimensional: str, not_increasing: str) -> tuple[np.ndarray, Array]:
    """Bin edges given as an array: (their values, the lazy array), with NumPy's errors (the
    messages differ between histogram's and histogramdd's)."""
    given = as_array(bins, where=where)
    if given.ndim != 1:
        raise ValueError(f"{where}: {not_one_dimensional}")
    edges = edge_values(given, where)
    if np.any(edges[:-1] > edges[1:]):
        raise ValueError(f"{where}: {not_increasing}")
    return edges, given


def histogram_data(a, weights, where: str) -> tuple[Array, Array | None]:
    """NumPy's `_ravel_and_check_weights`: a flattened (bool as uint8, with NumPy's warning),
    weights of a's shape, flattened."""
    import warnings

    from .manipulation_layout import ravel

    array = as_array(a, where=where)
    if dtypes.is_complex(array.dtype):
        raise NotImplementedError(f"{where}: complex data is not supported (NumPy bins it by its real-imaginary "
                                  "order, which lazyarr does not implement)")
    if dtypes.is_bool(array.dtype):
        warnings.warn(f"Converting input from {array.dtype} to {np.uint8} for compatibility.", RuntimeWarning,
                      stacklevel=3)
        array = wrap(convert(array._node, dtypes.uint8))
    if weights is not None:
        weights = as_array(weights, where=where)
        if weights.shape != array.shape:
            raise ValueError(f"{where}: weights should have the same shape as a ({weights.shape} and {array.shape}).")
        weights = ravel(weights)
    return ravel(array), weights


def outer_edges(array: Array, range_, where: str, values: np.ndarray | None = None) -> tuple:
    """NumPy's `_get_outer_edges`: the range (checked), or the data's minimum and maximum
    (evaluated, NumPy scalars of its dtype), widened by 0.5 each way when they are equal."""
    from .reductions import max as max_
    from .reductions import min as min_

    if range_ is not None:
        first, last = range_
        if first > last:
            raise ValueError(f"{where}: max must be larger than min in range parameter.")
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(f"{where}: supplied range of [{first}, {last}] is not finite")
    elif array.size == 0:
        first, last = 0, 1
    else:
        if values is None:
            require_values(where, [array], "with range=None the bins span the data's minimum and maximum, which "
                           "a traced array has not yet; pass range=(low, high), or call it outside la.jit")
            low, high = min_(array), max_(array)
            evaluate_arrays([array, low, high])  # one module: the data and its range
            first, last = low.numpy()[()], high.numpy()[()]
        else:
            first, last = values.min(), values.max()
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(f"{where}: autodetected range of [{first}, {last}] is not finite")
    if first == last:
        first, last = first - 0.5, last + 0.5
    return first, last


def unsigned_subtract(high, low):
    """NumPy's `_unsigned_subtract` of two scalars: high - low, signed integers as unsigned."""
    common = np.result_type(high, low)
    unsigned = {np.dtype(name): np.dtype("u" + name) for name in ("int8", "int16", "int32", "int64")}.get(common)
    if unsigned is None:
        return np.subtract(high, low, dtype=common)
    return np.subtract(np.asarray(high, dtype=common), np.asarray(low, dtype=common), casting="unsafe",
                       dtype=unsigned)


class Bins:
    """Resolved bins: the edges (NumPy values), and for equal bins (first, last, count)."""

    def __init__(self, edges: np.ndarray, uniform: tuple | None, given: Array | None = None):
        self.edges = edges
        self.uniform = uniform
        self.given = given  # edges the caller passed as an array: returned as given

    def edges_array(self) -> Array:
        from .core import from_numpy

        return self.given if self.given is not None else from_numpy(self.edges)


def _equal_bins(array: Array, first, last, count: int, where: str) -> Bins:
    bin_type = np.result_type(first, last, array.dtype)
    if np.issubdtype(bin_type, np.integer):
        bin_type = np.result_type(bin_type, float)
    edges = np.linspace(first, last, count + 1, endpoint=True, dtype=bin_type)
    if np.any(edges[:-1] >= edges[1:]):
        raise ValueError(f"{where}: Too many bins for data range. Cannot create {count} finite-sized bins.")
    return Bins(edges, (first, last, count))


def resolve_bins(array: Array, bins, range_, weights, where: str) -> Bins:
    """NumPy's `_get_bin_edges` for the flattened data."""
    if isinstance(bins, str):
        if bins not in BIN_ESTIMATORS:
            raise ValueError(f"{where}: {bins!r} is not a valid estimator for `bins`")
        if weights is not None:
            raise TypeError(f"{where}: Automated estimation of the number of bins is not supported for weighted data")
        require_values(where, [array], f"bins={bins!r} chooses the number of bins from the data's values, which a "
                       "traced array has not yet; pass the number of bins and range=, or call it outside la.jit")
        values = array.numpy()
        first, last = outer_edges(array, range_, where, values)
        edges = np.histogram_bin_edges(values, bins, range_)
        return _equal_bins(array, first, last, edges.size - 1, where)
    if np.ndim(bins) == 0:
        try:
            count = operator.index(bins)
        except TypeError:
            raise TypeError(f"{where}: `bins` must be an integer, a string, or an array (got {bins!r})") from None
        if count < 1:
            raise ValueError(f"{where}: `bins` must be positive, when an integer (got {count})")
        first, last = outer_edges(array, range_, where)
        return _equal_bins(array, first, last, count, where)
    edges, given = given_edges(bins, where, f"`bins` must be 1d, when an array (got shape {np.shape(bins)})",
                               "`bins` must increase monotonically, when an array")
    return Bins(edges, None, given)


def histogram_bin_edges(a, bins=10, range=None, weights=None) -> Array:  # noqa: A002 (NumPy's name)
    """The bin edges `histogram` uses: `bins + 1` equal steps over `range` (default: the data's
    minimum to maximum, which evaluates them), or the edges given, or NumPy's estimator for a
    string `bins` (evaluates the data).

    >>> import lazyarr as la
    >>> la.histogram_bin_edges(la.asarray([1.0, 2.0, 4.0]), bins=3).tolist()
    [1.0, 2.0, 3.0, 4.0]
    """
    array, weights = histogram_data(a, weights, "histogram_bin_edges")
    return resolve_bins(array, bins, range, weights, "histogram_bin_edges").edges_array()


# -- digitize ---------------------------------------------------------------------------------


def _monotonicity(edges: np.ndarray) -> int:
    """NumPy's check_array_monotonic on float64 edges: 1 increasing (or all equal, or empty),
    -1 decreasing, 0 neither; the direction is set by the first unequal neighbour pair."""
    if edges.size == 0:
        return 1
    unequal = np.flatnonzero(edges[1:] != edges[0])
    if unequal.size == 0:
        return 1
    start = unequal[0] + 1
    rest = edges[start:]
    if edges[0] < edges[start]:
        return 0 if np.any(rest[:-1] > rest[1:]) else 1
    return 0 if np.any(rest[:-1] < rest[1:]) else -1


def digitize(x, bins, right=False) -> Array:
    """The index of the bin each x falls in (int64): `searchsorted(bins, x, side)` for
    increasing bins ('right' unless `right`), counted from the end for decreasing ones. Lazy
    in `x`; the bins are checked on their values (a lazy `bins` is evaluated), as NumPy does.

    >>> import lazyarr as la
    >>> la.digitize(la.asarray([0.5, 1.0, 2.5]), [0.0, 1.0, 2.0]).tolist()
    [1, 2, 3]
    """
    from . import elementwise as ew
    from .searching import searchsorted

    values = as_array(x, where="digitize")
    if dtypes.is_complex(values.dtype):
        raise TypeError("digitize: x may not be complex")
    edges = as_array(bins, where="digitize")
    if edges.ndim != 1:
        depth = "object of too small depth" if edges.ndim == 0 else "object too deep"
        raise ValueError(f"digitize: {depth} for desired array; bins must be 1-d, got shape {edges.shape}")
    if not np.can_cast(edges.dtype, np.float64, casting="safe"):
        raise TypeError(
            f"digitize: Cannot cast array data from dtype('{edges.dtype}') to dtype('float64') according to the "
            "rule 'safe'"
        )
    direction = _monotonicity(edge_values(edges, "digitize").astype(np.float64))
    if direction == 0:
        raise ValueError("digitize: bins must be monotonically increasing or decreasing")
    side = "left" if right else "right"
    if direction == -1:
        return ew.subtract(edges.shape[0], searchsorted(edges[::-1], values, side=side))
    return searchsorted(edges, values, side=side)
