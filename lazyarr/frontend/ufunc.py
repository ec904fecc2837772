"""NumPy's ufunc interface for lazyarr's elementwise functions: `la.add.reduce`, `.accumulate`,
`.outer`, `.at`, `.reduceat`, and the attributes NumPy code reads (`nin`, `identity`, `types`).

`la.add` stays the plain elementwise function (calling it costs what it did); `make_ufunc` sets
the methods and attributes of a `Ufunc` on it. The methods take NumPy's dtypes (asked of NumPy
once per signature), axes and errors, and build lazyarr's compiled ops wherever those give
NumPy's values exactly:

    reduce      add/multiply -> sum/prod; maximum/minimum -> max/min; fmax/fmin -> max/min of
                the non-NaN elements; logical_and/or -> all/any; logical_xor -> a count's
                parity (and on bool: bitwise ops, add, multiply, maximum, minimum likewise)
    accumulate  add/multiply -> cumsum/cumprod; logical ops (any ufunc above on bool) -> a
                running count compared with 0
    at          add in a's own dtype -> scatter-add (repeated indices add up; differentiable)

The rest (subtract.reduce, bitwise_or.reduce of integers, maximum.accumulate, multiply.at,
every reduceat) runs NumPy's own method on the host through the `ufunc.*` custom-call targets
(hlo/ops/targets/ufunc_methods.py), so a left fold keeps NumPy's order and rounding. Everything
stays lazy. (Compiled log-depth trees and doubling scans for the associative ones were
measured and dropped: 0.3-0.4 s to compile even for 100 elements, and maximum.accumulate of
10**6 float64 ran 112 ms against NumPy's loop on the host, 8 ms.)

>>> import lazyarr as la
>>> la.add.reduce(la.asarray([[1, 2], [3, 4]]), axis=1)   # [3, 7]
>>> la.logical_and.accumulate(la.asarray([True, True, False, True]))   # [T, T, F, F]
>>> la.subtract.outer(la.arange(3), la.arange(2))   # shape (3, 2)
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import dtypes
from ..hlo import Instruction, make
from ..hlo.ops.custom import custom_call_outputs
from ..hlo.ops.targets.ufunc_methods import is_reorderable, method_result_dtype
from .array import Array
from .core import as_array, broadcast_to, convert, node_of, scalar_constant, wrap
from .cumulative import cumprod, cumsum
from .node_layout import filled, reshape
from .reduction_support import (
    NO_VALUE,
    keep_dimensions,
    keepdims_flag,
    normalize_axis_index,
    optional_dtype,
    reduce,
    reduction_axes,
    refuse_out,
    truth,
)
from .views import assign

# On bool, these are one logical reduction: ufunc name -> "and" / "or" / "xor".
_LOGICAL = {
    "logical_and": "and", "logical_or": "or", "logical_xor": "xor",
    "bitwise_and": "and", "bitwise_or": "or", "bitwise_xor": "xor",
    "add": "or", "multiply": "and", "maximum": "or", "minimum": "and", "fmax": "or", "fmin": "and",
}
# ufunc -> lazyarr's reduction of the same values (fmax/fmin: where no NaN is involved)
_EXTREMES = {"maximum": "max", "minimum": "min", "fmax": "max", "fmin": "min"}
# NumPy's type characters lazyarr has dtypes for (no longdouble, object, datetime).
_SUPPORTED_CHARS = frozenset(np.dtype(dtype).char for dtype in dtypes.ALL) | {"l", "L", "q", "Q"}


class Ufunc:
    """NumPy's ufunc interface of one elementwise function: its methods and attributes.

    `make_ufunc` puts them on the function itself (`la.add.reduce` is `Ufunc.reduce` bound to
    add's interface), so `la.add(a, b)` stays a plain function call: a class instance's
    `__call__` costs 0.1 us more per call on Python 3.11 (the hottest path of the library).

    >>> la.maximum.reduce(x, axis=None)        # one fused max
    >>> la.add.at(x, [0, 0, 2], 1)             # x changes in place: x[0] += 2, x[2] += 1
    """

    def __init__(self, name: str, numpy_ufunc: np.ufunc, function):
        self.__name__ = name
        self._numpy = numpy_ufunc
        self._function = function

    def __repr__(self) -> str:
        return f"<lazyarr ufunc interface of '{self.__name__}'>"

    # -- NumPy's attributes --------------------------------------------------------------------

    @property
    def nin(self) -> int:
        return self._numpy.nin

    @property
    def nout(self) -> int:
        return self._numpy.nout

    @property
    def nargs(self) -> int:
        return self._numpy.nargs

    @property
    def identity(self):
        return self._numpy.identity

    @property
    def signature(self) -> None:
        return None  # elementwise: no core dimensions

    @property
    def types(self) -> list[str]:
        """NumPy's loops ("ff->f") over the dtypes lazyarr supports."""
        return [loop for loop in self._numpy.types if set(loop.replace("->", "")) <= _SUPPORTED_CHARS]

    @property
    def ntypes(self) -> int:
        return len(self.types)

    # -- shared checks -------------------------------------------------------------------------

    def _require_binary(self, method: str, spelled: str | None = None) -> None:
        if self._numpy.nin != 2:
            raise ValueError(f"{spelled or method} only supported for binary functions")

    def _result_dtype(self, where: str, method: str, input_dtype, dtype) -> np.dtype:
        """NumPy's dtype for `method` on `input_dtype` with `dtype=` (TypeError where NumPy has no loop)."""
        requested = optional_dtype(where, dtype)
        try:
            result = method_result_dtype(self._numpy.__name__, method, np.dtype(input_dtype), requested)
        except TypeError as error:
            raise TypeError(f"{where}: {error}") from None
        if self._numpy.nin == 2 and all(loop[0] != loop[1] for loop in self._numpy.types):
            # ldexp ("dl->d"): NumPy folds int elements into a float accumulator; the methods
            # here run loops of one dtype (np.ldexp.reduce(lazy) falls back to NumPy's own)
            raise NotImplementedError(
                f"{where}: NumPy's loops of {self._numpy.__name__} take two dtypes ({self._numpy.types[0]}), "
                f"so its {method} folds {np.dtype(input_dtype)} into {result}: not supported lazily"
            )
        return dtypes.as_dtype(result, where=where)

    # -- reduce --------------------------------------------------------------------------------

    def reduce(self, array, axis=0, dtype=None, out=None, keepdims=False, initial=NO_VALUE, where=True) -> Array:
        """NumPy's `ufunc.reduce`: fold `array` along `axis` (int, tuple or None) with the ufunc.

        >>> la.multiply.reduce(la.asarray([[1, 2], [3, 4]]), axis=None)   # int64 24
        """
        numpy_name = self._numpy.__name__
        name = f"{self.__name__}.reduce"
        self._require_binary("reduce")
        refuse_out(name, out)
        array = as_array(array, where=name)
        result_dtype = self._result_dtype(name, "reduce", array.dtype, dtype)
        axes = reduction_axes(name, axis, array.ndim)
        if len(axes) > 1 and not is_reorderable(numpy_name, result_dtype):
            raise ValueError(
                f"reduction operation '{numpy_name}' is not reorderable, so at most one axis may be specified"
            )
        start = _initial_scalar(name, initial, result_dtype)
        has_start = start is not NO_VALUE and start is not None
        # initial=None asks NumPy not to use the identity: an empty reduction then raises
        has_identity = self._numpy.identity is not None and start is not None
        mask = None
        if where is not True:
            mask = broadcast_to(truth(node_of(where, where=name)), array.shape)
            if not (has_start or has_identity):
                raise ValueError(
                    f"reduction operation '{numpy_name}' does not have an identity, so to use a where "
                    "mask one has to specify 'initial'"
                )
        if any(array.shape[axis] == 0 for axis in axes) and not (has_start or has_identity):
            raise ValueError(f"zero-size array to reduction operation {numpy_name} which has no identity")
        node = convert(array._node, result_dtype)
        keepdims = keepdims_flag(keepdims)
        # initial=None folds from the first element, not from the identity: for floats NumPy
        # then keeps -0.0 and complex infinities as they are, which sum/prod (from 0 or 1) do not
        from_identity = initial is not None or not dtypes.is_inexact(result_dtype)
        start = start if has_start else NO_VALUE
        result = self._fast_reduce(node, axes, keepdims, start, mask) if from_identity else None
        if result is None:
            operands = [node]
            if has_start:
                operands.append(scalar_constant(start, result_dtype))
            if mask is not None:
                operands.append(mask)
            options = {} if from_identity else {"identity": False}
            (result,) = custom_call_outputs(
                "ufunc.reduce", operands, ufunc=numpy_name, axes=axes, keepdims=keepdims,
                initial=has_start, where=mask is not None, **options,
            )
        return wrap(result)

    def _fast_reduce(self, node, axes, keepdims, start, mask) -> Instruction | None:
        """The compiled reduction giving NumPy's values, or None (then NumPy's own runs)."""
        # lazy import: reductions imports elementwise, which builds these objects at import
        from . import reductions

        numpy_name, dtype = self._numpy.__name__, node.dtype
        where = NO_VALUE if mask is None else wrap(mask)
        if dtype == dtypes.bool_ and numpy_name in _LOGICAL:
            return _logical_reduce(_LOGICAL[numpy_name], node, axes, keepdims, start, mask)
        if numpy_name in ("fmax", "fmin"):
            if dtypes.is_complex(dtype):
                return None
            if dtypes.is_floating(dtype):
                return self._nan_ignoring_extreme(_EXTREMES[numpy_name], node, axes, keepdims, start, mask)
        reduction = {"add": "sum", "multiply": "prod", **_EXTREMES}.get(numpy_name)
        if reduction is None:
            return None
        options = {"dtype": dtype} if reduction in ("sum", "prod") else {}
        try:
            result = getattr(reductions, reduction)(
                wrap(node), axis=axes, keepdims=keepdims, initial=start, where=where, **options
            )
        except NotImplementedError:
            return None  # float sums with where=, complex max with initial=: NumPy's order
        return result._node

    def _nan_ignoring_extreme(self, kind, node, axes, keepdims, start, mask) -> Instruction:
        """fmax/fmin of floats: the max/min of the non-NaN elements (NaN where all are NaN),
        then fmax/fmin with `initial`; masked elements count as NaN (fmax(x, NaN) is x)."""
        dtype, shape = node.dtype, node.shape
        is_nan = make("is-nan", [node])
        if mask is not None:
            is_nan = make("or", [is_nan, make("not", [mask])])
        kept = tuple(size for axis, size in enumerate(shape) if axis not in axes)
        if any(shape[axis] == 0 for axis in axes):
            result = filled(start, dtype, kept)  # initial is given: reduce checked it
        else:
            lowest = filled(-np.inf if kind == "max" else np.inf, dtype, shape)
            best = reduce(make("select", [is_nan, lowest, node]), kind, axes)
            all_nan = reduce(is_nan, "and", axes)
            result = make("select", [all_nan, filled(np.nan, dtype, kept), best])
            if start is not NO_VALUE:
                result = self._function(wrap(filled(start, dtype, kept)), wrap(result))._node
        return keep_dimensions(result, shape, axes, keepdims)

    # -- accumulate ----------------------------------------------------------------------------

    def accumulate(self, array, axis=0, dtype=None, out=None) -> Array:
        """NumPy's `ufunc.accumulate`: every prefix's fold along one `axis`.

        >>> la.maximum.accumulate(la.asarray([1, 3, 2, 5]))   # [1, 3, 3, 5]
        """
        numpy_name = self._numpy.__name__
        name = f"{self.__name__}.accumulate"
        self._require_binary("accumulate")
        refuse_out(name, out)
        array = as_array(array, where=name)
        if array.ndim == 0:
            raise TypeError(f"{name}: cannot accumulate on a scalar")
        dimension = _single_axis(name, "accumulate", axis, array.ndim)
        result_dtype = self._result_dtype(name, "accumulate", array.dtype, dtype)
        node = convert(array._node, result_dtype)
        if numpy_name in ("add", "multiply"):
            scan = cumsum if numpy_name == "add" else cumprod
            return scan(wrap(node), axis=dimension, dtype=result_dtype)
        if result_dtype == dtypes.bool_ and numpy_name in _LOGICAL:
            return wrap(_logical_scan(_LOGICAL[numpy_name], node, dimension))
        (result,) = custom_call_outputs("ufunc.accumulate", [node], ufunc=numpy_name, axis=dimension)
        return wrap(result)

    # -- reduceat ------------------------------------------------------------------------------

    def reduceat(self, array, indices, axis=0, dtype=None, out=None) -> Array:
        """NumPy's `ufunc.reduceat`: reductions over `array[indices[i]:indices[i + 1]]` along `axis`
        (a lone element where the next index is not larger), computed by NumPy on the host.

        >>> la.add.reduceat(la.arange(8), [0, 4, 1, 5])   # [6, 4, 10, 18]
        """
        numpy_name = self._numpy.__name__
        name = f"{self.__name__}.reduceat"
        self._require_binary("reduceat")
        refuse_out(name, out)
        array = as_array(array, where=name)
        if array.ndim == 0:
            raise TypeError(f"{name}: cannot reduceat on a scalar")
        dimension = _single_axis(name, "reduceat", axis, array.ndim)
        size = array.shape[dimension]
        if isinstance(indices, Array):
            if indices.ndim != 1 or not dtypes.is_integer(indices.dtype):
                raise TypeError(f"{name}: indices must be a 1-d integer array, got {indices.dtype}{indices.shape}")
            index_node = convert(indices._node, dtypes.int64)
        else:
            values = np.asarray(indices)
            if values.ndim != 1 or (values.size and values.dtype.kind not in "iu"):
                raise TypeError(f"{name}: indices must be a 1-d sequence of integers, got {values.dtype}{values.shape}")
            values = values.astype(np.int64)
            bad = (values < 0) | (values >= size)
            if bad.any():
                raise IndexError(f"index {int(values[bad][0])} out-of-bounds in {numpy_name}.reduceat [0, {size})")
            index_node = node_of(values, where=name)
        result_dtype = self._result_dtype(name, "reduceat", array.dtype, dtype)  # after the indices, as NumPy
        node = convert(array._node, result_dtype)
        (result,) = custom_call_outputs("ufunc.reduceat", [node, index_node], ufunc=numpy_name, axis=dimension)
        return wrap(result)

    # -- outer ---------------------------------------------------------------------------------

    def outer(self, a, b, /) -> Array:
        """NumPy's `ufunc.outer`: the ufunc of every element of `a` with every element of `b`,
        shape a.shape + b.shape (operands are arrays: Python scalars are not weak here).

        >>> la.multiply.outer(la.arange(1, 4), la.arange(1, 3))   # [[1, 2], [2, 4], [3, 6]]
        """
        self._require_binary("outer", "outer product")
        name = f"{self.__name__}.outer"
        left, right = as_array(a, where=name), as_array(b, where=name)
        return self._function(wrap(reshape(left._node, left.shape + (1,) * right.ndim)), right)

    # -- at ------------------------------------------------------------------------------------

    def at(self, a, indices, b=None, /) -> None:
        """NumPy's `ufunc.at`: `a[indices] = ufunc(a[indices], b)` in place and unbuffered, so
        repeated indices apply one after another (`la.add.at(x, [0, 0], 1)` adds 2 to x[0]).

        `a` changes as an in-place NumPy operation changes it (every reference sees the new
        value; a view writes through to its base). A NumPy `a` is updated by NumPy itself.
        """
        name = f"{self.__name__}.at"
        if isinstance(a, np.ndarray):
            # lazy import: interop imports elementwise, which builds these objects at import
            from .interop import to_numpy

            self._numpy.at(a, to_numpy(indices), *(() if b is None else (to_numpy(b),)))
            return None
        if not isinstance(a, Array):
            raise TypeError(f"{name}: the first operand must be an array (lazyarr or NumPy), got {type(a).__name__}")
        if self._numpy.nin == 1 and b is not None:
            raise ValueError("second operand provided when ufunc is unary")
        if self._numpy.nin == 2 and b is None:
            raise ValueError("second operand needed for ufunc")
        update = None if b is None else as_array(b, where=name)
        try:
            loop = self._numpy.resolve_dtypes((a.dtype, *(() if update is None else (update.dtype,)), None))
        except TypeError as error:  # before the indices are read, as NumPy
            raise TypeError(f"{name}: {error}") from None
        positions = _flat_positions(a, indices)
        updates = []
        if update is not None:
            shape = positions.shape
            offset = len(shape) - update.ndim
            if offset < 0 or any(size not in (1, shape[offset + axis]) for axis, size in enumerate(update.shape)):
                raise ValueError(
                    f"{name}: array is not broadcastable to correct shape (b {update.shape}, a[indices] {shape})"
                )
            updates.append(broadcast_to(update._node, shape))
        if positions.size == 0:
            return None
        if self._numpy.__name__ == "add" and all(dtype == a.dtype for dtype in loop):
            flat = reshape(a._node, (a.size,))
            index = reshape(positions, (positions.size, 1))
            values = reshape(convert(updates[0], a.dtype), (positions.size,))
            added = make("scatter", [flat, index, values], index_dims=(0,), mode="add")
            assign(a, reshape(added, a.shape))
            return None
        (result,) = custom_call_outputs("ufunc.at", [a._node, positions, *updates], ufunc=self._numpy.__name__)
        assign(a, result)
        return None


_ATTRIBUTES = ("nin", "nout", "nargs", "identity", "ntypes", "types", "signature")
_METHODS = ("reduce", "accumulate", "reduceat", "outer", "at")


def make_ufunc(name: str, numpy_ufunc: np.ufunc, function):
    """`function` (la.<name>, called exactly as before) with NumPy's ufunc methods and
    attributes set on it; unary ufuncs' reduce/accumulate/outer raise NumPy's ValueError."""
    interface = Ufunc(name, numpy_ufunc, function)
    for attribute in _ATTRIBUTES:
        setattr(function, attribute, getattr(interface, attribute))
    for method in _METHODS:
        setattr(function, method, getattr(interface, method))
    function.__doc__ = (function.__doc__ or "") + " Ufunc methods: " + ", ".join(_METHODS) + "."
    return function


# -- helpers ---------------------------------------------------------------------------------


def _initial_scalar(where: str, initial, dtype):
    """`initial` converted to `dtype` as NumPy converts it (NO_VALUE and None pass through):
    a float truncates into an integer dtype; a Python int out of range raises OverflowError."""
    if initial is NO_VALUE or initial is None:
        return initial
    if isinstance(initial, Array) or np.ndim(initial) != 0:
        raise TypeError(f"{where}: initial must be a Python or NumPy scalar, got {type(initial).__name__}")
    value = initial.item() if isinstance(initial, (np.generic, np.ndarray)) else initial
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # complex into a real dtype drops the imaginary part, as NumPy
        return np.array(value, dtype=dtype)[()]


def _single_axis(where: str, method: str, axis, ndim: int) -> int:
    """accumulate's and reduceat's one axis: an int, a 1-tuple, or None for 1-d input."""
    if axis is None:
        axes = tuple(range(ndim))
    elif isinstance(axis, tuple):
        axes = axis
    else:
        return normalize_axis_index(where, axis, ndim)
    if len(axes) != 1:
        raise ValueError(f"{method} does not allow multiple axes")
    return normalize_axis_index(where, axes[0], ndim)


def _logical_reduce(kind: str, node, axes, keepdims: bool, start, mask) -> Instruction:
    """and/or/xor over bool `node`: one HLO reduction (xor: the parity of a count)."""
    shape = node.shape
    if mask is not None:
        node = make("select", [mask, node, filled(kind == "and", dtypes.bool_, shape)])
    if kind == "xor":
        counts = reduce(convert(node, dtypes.int64), "sum", axes)
        result = truth(make("and", [counts, filled(1, dtypes.int64, counts.shape)]))
    else:
        result = reduce(node, kind, axes)
    if start is not NO_VALUE:
        result = make(kind, [filled(bool(start), dtypes.bool_, result.shape), result])
    return keep_dimensions(result, shape, axes, keepdims)


def _logical_scan(kind: str, node, dimension: int) -> Instruction:
    """Running and/or/xor of bool `node`: a running count (of False for and), compared with 0."""
    counted = make("not", [node]) if kind == "and" else node
    counts = make("cumulative", [convert(counted, dtypes.int64)], kind="sum", dimension=dimension)
    if kind == "xor":
        counts = make("and", [counts, filled(1, dtypes.int64, counts.shape)])
    nonzero = truth(counts)
    return make("not", [nonzero]) if kind == "and" else nonzero


def _flat_positions(array: Array, indices) -> Instruction:
    """The flat (C-order) positions of `array[indices]`, shaped as that selection, as int64.

    Built by indexing an iota with lazyarr's own indexing, so every NumPy key works (slices,
    integers, index arrays, lazy ones, masks) with NumPy's IndexError for bad indices."""
    # lazy import: indexing's modules import elementwise, which builds these objects at import
    from .indexing import getitem

    iota = reshape(make("iota", shape=(array.size,), dtype=dtypes.int64, dimension=0), array.shape)
    return getitem(wrap(iota), indices)._node


__all__ = ["Ufunc", "make_ufunc"]
