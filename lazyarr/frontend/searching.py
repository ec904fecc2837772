"""Sorting, searching and set functions: sort, argsort, searchsorted, nonzero, unique, isin.

sort and argsort are lazy custom-calls (targets 'sort' and 'argsort': stable, NaN last as in
NumPy). searchsorted is lazy too: for a sorted 1-d `a` it counts the elements ordered before
each value (a broadcast compare and a sum; O(len(a) * len(v)) work, exact, and in NumPy's
order where NaN sorts last). Functions whose result shape depends on the data (nonzero,
argwhere, flatnonzero, unique and the array API's unique_*) evaluate their input, compute
with NumPy on the buffer, and return lazy arrays bound to the computed buffers.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import dtypes
from ..hlo import constant, make
from ..hlo.ops.custom import custom_call_outputs
from ..shapes import normalize_axis
from . import elementwise
from .array import Array
from .core import as_array, broadcast_to, convert, from_numpy, wrap
from .views import assign_result

__all__ = [
    "argsort", "argwhere", "flatnonzero", "isin", "nonzero", "searchsorted", "sort", "unique",
    "unique_all", "unique_counts", "unique_inverse", "unique_values",
]

_SORTABLE = (dtypes.bool_,) + dtypes.INTEGER + dtypes.FLOATING


def _evaluated(value, where: str) -> np.ndarray:
    """The value of `value` as a NumPy array (evaluates a lazy array)."""
    return np.asarray(value if isinstance(value, Array) else as_array(value, where=where))


def _bound(value: np.ndarray) -> Array:
    return from_numpy(value)


def nonzero(a) -> tuple[Array, ...]:
    """Indices of the nonzero elements, one int64 array per dimension (evaluates `a`).

    >>> import lazyarr as la
    >>> [index.tolist() for index in nonzero(la.asarray([[0, 3], [4, 0]]))]
    [[0, 1], [1, 0]]
    """
    value = _evaluated(a, "nonzero")
    if value.ndim == 0:
        raise ValueError(
            "nonzero: Calling nonzero on 0d arrays is not allowed. "
            "Use atleast_1d(scalar).nonzero() instead."
        )
    return tuple(_bound(index.astype(np.int64)) for index in np.nonzero(value))


def argwhere(a) -> Array:
    """Indices of the nonzero elements as an (N, a.ndim) int64 array (evaluates `a`)."""
    return _bound(np.argwhere(_evaluated(a, "argwhere")).astype(np.int64))


def flatnonzero(a) -> Array:
    """Indices of the nonzero elements of the flattened array (evaluates `a`)."""
    return _bound(np.flatnonzero(_evaluated(a, "flatnonzero")).astype(np.int64))


# -- sorting --------------------------------------------------------------------------------


def _check_sort_options(where: str, kind, order, stable) -> None:
    """NumPy's checks of kind/order/stable. Every kind sorts stably here (one valid result)."""
    if order is not None:
        raise ValueError(f"{where}: Cannot specify order when the array has no fields.")
    if kind is None:
        return
    if not isinstance(kind, str):
        raise TypeError(f"{where}: sort kind must be str, not {type(kind).__name__}")
    if stable is not None:
        raise ValueError(
            f"{where}: `kind` and keyword parameters can't be provided at the same time. "
            "Use only one of them."
        )
    if not kind or kind[0].lower() not in "qmhs":
        raise ValueError(f"{where}: sort kind must be one of 'quick', 'heap', or 'stable' (got {kind!r})")


def _sort_operand(a, axis, where: str, *, flatten_scalar: bool):
    array = as_array(a, where=where)
    if array.dtype not in _SORTABLE:
        raise TypeError(
            f"{where}: dtype {array.dtype} is not supported; accepted: bool, integer and real "
            "floating dtypes (complex sorting is not implemented)"
        )
    node = array._node
    if axis is None or (flatten_scalar and node.ndim == 0):
        node = make("reshape", [node], shape=(array.size,))
        axis = 0 if axis is None else axis
    return node, normalize_axis(axis, node.ndim, where=where)


def sort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False) -> Array:
    """A sorted copy along `axis` (None: flattened); NaN sorts last, as in NumPy.

    Accepts NumPy's signature and the array API's (`descending`, `stable`); the sort is
    always stable. Lazy: a 'sort' custom-call.

    >>> import lazyarr as la
    >>> sort(la.asarray([3.0, float("nan"), 1.0])).tolist()
    [1.0, 3.0, nan]
    """
    _check_sort_options("sort", kind, order, stable)
    node, axis = _sort_operand(a, axis, "sort", flatten_scalar=False)
    (result,) = custom_call_outputs("sort", [node], axis=axis, descending=bool(descending))
    return wrap(result)


def argsort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False) -> Array:
    """Indices (int64) that sort `a` along `axis`, stably; a 0-d input counts as 1-d (NumPy).

    >>> import lazyarr as la
    >>> argsort(la.asarray([3, 1, 2])).tolist()
    [1, 2, 0]
    """
    _check_sort_options("argsort", kind, order, stable)
    node, axis = _sort_operand(a, axis, "argsort", flatten_scalar=True)
    (result,) = custom_call_outputs("argsort", [node], axis=axis, descending=bool(descending))
    return wrap(result)


def sort_in_place(array: Array, axis=-1, kind=None, order=None, *, stable=None) -> None:
    """`array.sort()`: sorts in place, as NumPy does (views see it; a view sorts in its base)."""
    if axis is None:  # NumPy's method: an axis, never the flattened array
        raise TypeError("'NoneType' object cannot be interpreted as an integer")
    assign_result(array, lambda: sort(array, axis, kind, order, stable=stable))


# -- searchsorted -------------------------------------------------------------------------


def searchsorted(a, v, side="left", sorter=None) -> Array:
    """Insertion positions of `v` in the sorted 1-d `a` (int64), lazily and exactly.

    Counts the elements of `a` ordered before each value in NumPy's order (NaN last):
    side='left' counts a < v, side='right' counts a <= v. Both are compared in the dtype
    NumPy's searchsorted uses (the promotion of a's dtype and v's dtype, Python scalars
    included as NumPy arrays). `sorter` reorders `a` first (through take).

    >>> import lazyarr as la
    >>> searchsorted(la.asarray([1, 2, 2, 3]), [2, 5], side="right").tolist()
    [3, 4]
    """
    from .indexing import take

    if side not in ("left", "right"):
        if isinstance(side, str) and side:
            raise ValueError(f"searchsorted: search side must be 'left' or 'right' (got {side!r})")
        raise ValueError("searchsorted: search side must be one of 'left' or 'right'")
    array = as_array(a, where="searchsorted")
    if array.ndim != 1:
        depth = "object of too small depth" if array.ndim == 0 else "object too deep"
        raise ValueError(
            f"searchsorted: {depth} for desired array; `a` must be 1-dimensional, got shape {array.shape}"
        )
    if sorter is not None:
        array = take(array, _checked_sorter(sorter, array.size))
    values = as_array(v, where="searchsorted")  # Python scalars count as arrays here, as in NumPy
    for operand, name in ((array, "a"), (values, "v")):
        if operand.dtype not in _SORTABLE:
            raise TypeError(
                f"searchsorted: {name} has dtype {operand.dtype}; accepted: bool, integer and real "
                "floating dtypes (complex ordering is not implemented)"
            )
    common = dtypes.result_type(array.dtype, values.dtype)
    count = array.shape[0]
    shape = values.shape + (count,)
    sorted_values = wrap(
        make("broadcast", [convert(array._node, common)], shape=shape, dimensions=(len(values.shape),))
    )
    column = make("reshape", [convert(values._node, common)], shape=values.shape + (1,))
    probes = wrap(broadcast_to(column, shape))
    if side == "left":
        before = _ordered_before(sorted_values, probes)
    else:
        before = elementwise.logical_not(_ordered_before(probes, sorted_values))
    counted = convert(before._node, dtypes.int64)
    return wrap(make("reduce", [counted], kind="sum", dimensions=(len(shape) - 1,)))


def _ordered_before(left: Array, right: Array) -> Array:
    """left < right in NumPy's sort order, where NaN is greater than every number."""
    less = elementwise.less(left, right)
    if not dtypes.is_floating(left.dtype):
        return less
    left_is_number = elementwise.logical_not(elementwise.isnan(left))
    nan_after = elementwise.logical_and(elementwise.isnan(right), left_is_number)
    return elementwise.logical_or(less, nan_after)


def _checked_sorter(sorter, size: int):
    if isinstance(sorter, Array):
        if not dtypes.is_integer(sorter.dtype):
            raise TypeError(f"searchsorted: sorter must only contain integers, got dtype {sorter.dtype}")
        if sorter.shape != (size,):
            raise ValueError(f"searchsorted: sorter.size must equal a.size ({sorter.shape} vs ({size},))")
        return sorter  # its range is checked by the gather when evaluated
    order = np.asarray(sorter)
    if order.dtype.kind not in "iu":
        raise TypeError(f"searchsorted: sorter must only contain integers, got dtype {order.dtype}")
    if order.size != size:
        raise ValueError(f"searchsorted: sorter.size must equal a.size ({order.size} vs {size})")
    if order.size and (order.min() < 0 or order.max() >= size):
        raise ValueError("searchsorted: Sorter index out of range.")
    return order.reshape(size)


# -- sets -------------------------------------------------------------------------------------


class UniqueAllResult(NamedTuple):
    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class UniqueCountsResult(NamedTuple):
    values: Array
    counts: Array


class UniqueInverseResult(NamedTuple):
    values: Array
    inverse_indices: Array


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, sorted=True):  # noqa: A002 (NumPy's name)
    """NumPy's unique (evaluates `ar`): sorted unique values, NaNs collapsed by default.

    >>> import lazyarr as la
    >>> values, counts = unique(la.asarray([2, 1, 2]), return_counts=True)
    >>> values.tolist(), counts.tolist()
    ([1, 2], [1, 2])
    """
    value = _evaluated(ar, "unique")
    if axis is not None:
        axis = normalize_axis(axis, value.ndim, where="unique")
    result = np.unique(
        value, return_index=return_index, return_inverse=return_inverse,
        return_counts=return_counts, axis=axis, equal_nan=equal_nan, sorted=sorted,
    )
    if isinstance(result, tuple):
        return tuple(_bound(part) for part in result)
    return _bound(result)


def _unique_sorted(x, where: str, **returns) -> tuple[np.ndarray, ...]:
    """The array API's unique_* (evaluates x): sorted values, NaNs distinct, inverse indices of
    x's shape. Sorted as the standard's reference implementation does (NumPy 2.3+ returns hash
    order for some dtypes; scikit-learn relies on sorted class labels)."""
    value = _evaluated(x, where)
    # Always with return_index: NumPy then sorts stably, so equal values (NaNs, each distinct)
    # keep their order of occurrence and every member of the family maps x's NaNs to the same
    # slots (without it NumPy's quicksort ordered NaNs differently from unique_all's).
    values, first, *rest = np.unique(value.reshape(-1), equal_nan=False, return_index=True, **{
        name: wanted for name, wanted in returns.items() if name != "return_index"})
    result = (values, first, *rest) if returns.get("return_index") else (values, *rest)
    if returns.get("return_inverse"):
        position = 1 + bool(returns.get("return_index"))
        result = (*result[:position], result[position].reshape(value.shape), *result[position + 1:])
    return result


def unique_all(x, /) -> UniqueAllResult:
    """Array API unique_all (evaluates x): sorted values, first indices, inverse (x's shape),
    counts; NaNs are distinct values."""
    parts = _unique_sorted(x, "unique_all", return_index=True, return_inverse=True, return_counts=True)
    return UniqueAllResult(*(_bound(part) for part in parts))


def unique_counts(x, /) -> UniqueCountsResult:
    """Array API unique_counts (evaluates x): sorted values and their counts (NaNs distinct)."""
    parts = _unique_sorted(x, "unique_counts", return_counts=True)
    return UniqueCountsResult(*(_bound(part) for part in parts))


def unique_inverse(x, /) -> UniqueInverseResult:
    """Array API unique_inverse (evaluates x): sorted values and inverse indices of x's shape."""
    parts = _unique_sorted(x, "unique_inverse", return_inverse=True)
    return UniqueInverseResult(*(_bound(part) for part in parts))


def unique_values(x, /) -> Array:
    """Array API unique_values (evaluates x): sorted distinct values (NaNs distinct).

    >>> import lazyarr as la
    >>> unique_values(la.asarray([5, 1, 5, 2])).tolist()
    [1, 2, 5]
    """
    return _bound(_unique_sorted(x, "unique_values")[0])


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None) -> Array:
    """Whether each element of `element` is in `test_elements` (NumPy's isin).

    `test_elements` is evaluated (its distinct values become constants); the test over
    `element` stays lazy: a broadcast equality and an `or` reduction (NaN matches nothing).

    >>> import lazyarr as la
    >>> isin(la.asarray([1, 2, 3]), [3, 1]).tolist()
    [True, False, True]
    """
    if kind not in (None, "sort", "table"):
        raise ValueError(f"isin: Invalid kind: {kind!r}. Please use None, 'sort' or 'table'.")
    array = as_array(element, where="isin")
    tests = np.unique(_evaluated(test_elements, "isin").reshape(-1))
    tests_node = constant(tests)
    probes = make("reshape", [array._node], shape=array.shape + (1,))
    shape = array.shape + (tests.size,)
    equal = _exact_equal(
        wrap(broadcast_to(probes, shape)),
        wrap(make("broadcast", [tests_node], shape=shape, dimensions=(array.ndim,))),
    )
    found = wrap(make("reduce", [equal._node], kind="or", dimensions=(array.ndim,)))
    return elementwise.logical_not(found) if invert else found


def _exact_equal(left: Array, right: Array) -> Array:
    """left == right; exact between signed integers and uint64, as NumPy's mixed loops are."""
    if dtypes.is_signed_integer(right.dtype) and left.dtype == dtypes.uint64:
        left, right = right, left
    if not (dtypes.is_signed_integer(left.dtype) and right.dtype == dtypes.uint64):
        return elementwise.equal(left, right)
    signed = convert(left._node, dtypes.int64)
    nonnegative = elementwise.greater_equal(wrap(signed), 0)
    same = make("compare", [convert(signed, dtypes.uint64), right._node], direction="EQ")
    return elementwise.logical_and(nonnegative, wrap(same))
