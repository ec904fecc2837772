"""Cumulative sums and products: NumPy's cumsum/cumprod and the array API's cumulative_*.

All build the HLO `cumulative` scan (an inclusive scan, reference np.cumsum/np.cumprod) in the
dtype NumPy accumulates in. bool accumulations (dtype=bool) are logical or/and, as NumPy's
add/multiply on bools, computed as an integer scan compared with zero.
"""

from __future__ import annotations

from .. import dtypes
from ..hlo import make
from .array import Array
from .core import as_array, convert, scalar_constant, wrap
from .node_layout import reshape
from .reduction_support import normalize_axis_index, numpy_result_dtype, optional_dtype, refuse_out, truth


def _scan(node, kind: str, dimension: int, result_dtype):
    if result_dtype == dtypes.bool_:
        counts = make("cumulative", [convert(node, dtypes.int64)], kind=kind, dimension=dimension)
        return truth(counts)
    return make("cumulative", [convert(node, result_dtype)], kind=kind, dimension=dimension)


def _numpy_scan(name, kind, a, axis, dtype, out) -> Array:
    array = as_array(a, where=name)
    refuse_out(name, out)
    node = array._node
    if axis is None:
        node = reshape(node, (array.size,))
        dimension = 0
    else:
        dimension = normalize_axis_index(name, axis, array.ndim or 1)
        node = reshape(node, (1,)) if array.ndim == 0 else node
    result_dtype = numpy_result_dtype(name, name, array.dtype, optional_dtype(name, dtype))
    return wrap(_scan(node, kind, dimension, result_dtype))


def cumsum(a, axis=None, dtype=None, out=None) -> Array:
    """Running sum along `axis` (axis=None flattens first); int8 and bool accumulate in int64.

    >>> la.cumsum(la.asarray([1, 2, 3]))   # [1, 3, 6]
    """
    return _numpy_scan("cumsum", "sum", a, axis, dtype, out)


def cumprod(a, axis=None, dtype=None, out=None) -> Array:
    """Running product along `axis` (axis=None flattens first)."""
    return _numpy_scan("cumprod", "prod", a, axis, dtype, out)


def _array_api_scan(name, kind, x, axis, dtype, out, include_initial) -> Array:
    array = as_array(x, where=name)
    refuse_out(name, out)
    node = reshape(array._node, (1,)) if array.ndim == 0 else array._node
    if axis is None:
        if node.ndim >= 2:
            raise ValueError(
                f"{name}: for arrays which have more than one dimension ``axis`` argument is "
                f"required; got shape {array.shape}"
            )
        dimension = 0
    else:
        dimension = normalize_axis_index(name, axis, node.ndim)
    result_dtype = numpy_result_dtype(name, name, array.dtype, optional_dtype(name, dtype))
    result = _scan(node, kind, dimension, result_dtype)
    if include_initial:
        identity = scalar_constant(0 if kind == "sum" else 1, result_dtype)
        low = tuple(1 if index == dimension else 0 for index in range(result.ndim))
        zeros = (0,) * result.ndim
        result = make("pad", [result, identity], low=low, high=zeros, interior=zeros)
    return wrap(result)


def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False) -> Array:
    """The array API's cumulative sum; include_initial prepends the zero along `axis`."""
    return _array_api_scan("cumulative_sum", "sum", x, axis, dtype, out, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False) -> Array:
    """The array API's cumulative product; include_initial prepends the one along `axis`."""
    return _array_api_scan("cumulative_prod", "prod", x, axis, dtype, out, include_initial)


__all__ = ["cumprod", "cumsum", "cumulative_prod", "cumulative_sum"]
