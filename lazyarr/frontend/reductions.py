"""NumPy's reductions over the HLO reduce, argmax/argmin and cumulative ops, all lazy.

Each function converts its input to the dtype NumPy accumulates in (found by asking NumPy on a
one-element array, see reduction_support), reduces with the strict HLO op, and reshapes for
keepdims. The interpreter's reduce calls np.sum/np.max itself, so values match NumPy exactly,
including NaN propagation in max/min. max/min of complex numbers use NumPy's lexicographic
order (real part first; the first element holding a NaN wins), built from real reductions.

mean, var, std and the nan-functions (nanargmax too) live in `statistics`; cumsum and friends in
`cumulative`; this module re-exports them so `reductions.__all__` lists every reduction.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..hlo import Instruction, make
from . import elementwise
from .array import Array
from .core import as_array, broadcast_to, convert, node_of, wrap
from .node_layout import filled, flatten_axes_to_end, move_axes_to_end, reshape, take_along_last
from .reduction_support import (
    NO_VALUE,
    is_given,
    keep_dimensions,
    keepdims_flag,
    normalize_axis_index,
    numpy_result_dtype,
    optional_dtype,
    reduce,
    reduced_shape,
    reduction_axes,
    refuse_out,
    templated,
    truth,
)


def _mask(name: str, where, shape) -> Instruction | None:
    """The `where=` mask as a bool node of `shape`, or None when every element takes part."""
    if not is_given(where) or where is True:
        return None
    return broadcast_to(truth(node_of(where, where=name)), shape)


def _has_initial(name: str, initial, dtype) -> bool:
    """Whether `initial` was given; it must be a scalar that fits `dtype` (as NumPy checks)."""
    if not is_given(initial) or initial is None:
        return False
    if isinstance(initial, Array) or np.ndim(initial) != 0:
        raise TypeError(f"{name}: initial must be a Python or NumPy scalar, got {type(initial).__name__}")
    dtypes.check_weak_scalar_fits(initial, dtype, where=name)
    return True


def _accumulate(name, kind, a, axis, dtype, out, keepdims, initial, where) -> Array:
    """sum and prod: convert to NumPy's accumulation dtype, reduce, fold in `initial`."""
    return templated(name, a, axis, keepdims,
                     lambda array: _accumulated(name, kind, array, axis, dtype, out, keepdims, initial, where),
                     plain=dtype is None and out is None and initial is NO_VALUE and where is NO_VALUE)


def _accumulated(name, kind, a, axis, dtype, out, keepdims, initial, where) -> Array:
    array = as_array(a, where=name)
    refuse_out(name, out)
    axes = reduction_axes(name, axis, array.ndim)
    result_dtype = numpy_result_dtype(name, name, array.dtype, optional_dtype(name, dtype))
    node = convert(array._node, result_dtype)
    mask = _mask(name, where, node.shape)
    if mask is not None:
        if dtypes.is_inexact(result_dtype):
            raise NotImplementedError(
                f"{name}: where= is supported for integer and bool results only; NumPy skips "
                f"masked {result_dtype} elements in an order lazyarr does not reproduce"
            )
        node = make("select", [mask, node, filled(0 if kind == "sum" else 1, result_dtype, node.shape)])
    if _has_initial(name, initial, result_dtype):
        result = _with_initial(node, kind, axes, initial)
    else:
        result = reduce(node, kind, axes)
    return wrap(keep_dimensions(result, array.shape, axes, keepdims_flag(keepdims)))


def _with_initial(node: Instruction, kind: str, axes, initial) -> Instruction:
    """Reduce starting from `initial`, in NumPy's order where it is known.

    NumPy multiplies the elements into `initial` one by one, so prod reduces `initial`
    prepended along the reduced axis (in place, so NumPy runs the same loop on the same
    layout; several axes are flattened first). A sum adds `initial` to the pairwise sum of
    the elements, which is NumPy's order when the reduced axes are the trailing ones.
    """
    if kind == "prod":
        if len(axes) != 1:
            node, axes = flatten_axes_to_end(node, axes), (node.ndim - len(axes),)
        low = tuple(int(axis == axes[0]) for axis in range(node.ndim))
        zeros = (0,) * node.ndim
        padded = make("pad", [node, filled(initial, node.dtype, ())], low=low, high=zeros, interior=zeros)
        return reduce(padded, "prod", axes)
    result = reduce(node, kind, axes)
    return make("add", [filled(initial, node.dtype, result.shape), result])


def sum(a, axis=None, dtype=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE, where=NO_VALUE) -> Array:  # noqa: A001
    """Sum over `axis` in NumPy's accumulation dtype (int8 and bool give int64).

    >>> la.sum(la.asarray([[1, 2], [3, 4]], dtype="int8"), axis=0)   # int64 [4, 6]
    """
    return _accumulate("sum", "sum", a, axis, dtype, out, keepdims, initial, where)


def prod(a, axis=None, dtype=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE, where=NO_VALUE) -> Array:
    """Product over `axis` in NumPy's accumulation dtype (int8 and bool give int64)."""
    return _accumulate("prod", "prod", a, axis, dtype, out, keepdims, initial, where)


def _complex_arg_extreme(flat: Instruction, kind: str) -> Instruction:
    """Index along the last axis of the lexicographic max/min of complex `flat` (NumPy's order).

    The first element with a NaN in either part wins; otherwise the largest real part, and
    among those the largest imaginary part, first occurrence first.
    """
    last = flat.ndim - 1
    batch_dims = tuple(range(last))
    real, imag = make("real", [flat]), make("imag", [flat])
    has_nan = make("or", [make("is-nan", [real]), make("is-nan", [imag])])

    def spread(node):
        return make("broadcast", [node], shape=flat.shape, dimensions=batch_dims)

    best_real = spread(make("reduce", [real], kind=kind, dimensions=(last,)))
    candidate = make("compare", [real, best_real], direction="EQ")
    worst = -math.inf if kind == "max" else math.inf
    masked_imag = make("select", [candidate, imag, filled(worst, real.dtype, flat.shape)])
    best_imag = spread(make("reduce", [masked_imag], kind=kind, dimensions=(last,)))
    hit = make("and", [candidate, make("compare", [imag, best_imag], direction="EQ")])
    first_hit = make("argmax", [hit], dimension=last)
    first_nan = make("argmax", [has_nan], dimension=last)
    any_nan = make("reduce", [has_nan], kind="or", dimensions=(last,))
    return make("select", [any_nan, first_nan, first_hit])


def _extreme(name, numpy_name, kind, a, axis, out, keepdims, initial, where) -> Array:
    return templated(name, a, axis, keepdims,
                     lambda array: _extreme_of(name, numpy_name, kind, array, axis, out, keepdims, initial, where),
                     plain=out is None and initial is NO_VALUE and where is NO_VALUE)


def _extreme_of(name, numpy_name, kind, a, axis, out, keepdims, initial, where) -> Array:
    array = as_array(a, where=name)
    refuse_out(name, out)
    axes = reduction_axes(name, axis, array.ndim)
    node = array._node
    has_initial = _has_initial(name, initial, node.dtype)
    mask = _mask(name, where, node.shape)
    if dtypes.is_complex(node.dtype) and (has_initial or mask is not None):
        raise NotImplementedError(f"{name}: initial= and where= are not supported for complex input")
    if mask is not None:
        if not has_initial:
            raise ValueError(
                f"{name}: reduction operation '{numpy_name}' does not have an identity, so to use "
                "a where mask one has to specify 'initial'"
            )
        node = make("select", [mask, node, filled(initial, node.dtype, node.shape)])
    empty = 0 in (node.shape[axis] for axis in axes)
    if empty and not has_initial:
        raise ValueError(
            f"{name}: zero-size array to reduction operation {numpy_name} which has no identity "
            f"(shape {array.shape}, axis {axis})"
        )
    if dtypes.is_complex(node.dtype) and axes:
        flat = flatten_axes_to_end(node, axes)
        result = take_along_last(flat, _complex_arg_extreme(flat, kind))
    elif empty:
        result = filled(initial, node.dtype, reduced_shape(node.shape, axes, False))
    else:
        result = reduce(node, kind, axes)
        if has_initial:
            start = filled(initial, node.dtype, result.shape)
            result = make("maximum" if kind == "max" else "minimum", [start, result])
    return wrap(keep_dimensions(result, array.shape, axes, keepdims_flag(keepdims)))


def max(a, axis=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE, where=NO_VALUE) -> Array:  # noqa: A001
    """Maximum over `axis`; NaN propagates; an empty reduction raises ValueError as NumPy."""
    return _extreme("max", "maximum", "max", a, axis, out, keepdims, initial, where)


def min(a, axis=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE, where=NO_VALUE) -> Array:  # noqa: A001
    """Minimum over `axis`; NaN propagates; an empty reduction raises ValueError as NumPy."""
    return _extreme("min", "minimum", "min", a, axis, out, keepdims, initial, where)


def amax(a, axis=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE, where=NO_VALUE) -> Array:
    """Alias of `max`."""
    return _extreme("amax", "maximum", "max", a, axis, out, keepdims, initial, where)


def amin(a, axis=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE, where=NO_VALUE) -> Array:
    """Alias of `min`."""
    return _extreme("amin", "minimum", "min", a, axis, out, keepdims, initial, where)


def ptp(a, axis=None, out=None, keepdims=NO_VALUE) -> Array:
    """Peak to peak: max - min over `axis` (NumPy refuses bool input, so do we)."""
    refuse_out("ptp", out)
    array = as_array(a, where="ptp")
    return elementwise.subtract(
        max(array, axis=axis, keepdims=keepdims), min(array, axis=axis, keepdims=keepdims)
    )


def _arg_extreme(name, kind, a, axis, out, keepdims) -> Array:
    return templated(name, a, axis, keepdims, lambda array: _arg_extreme_of(name, kind, array, axis, out, keepdims),
                     plain=out is None)


def _arg_extreme_of(name, kind, a, axis, out, keepdims) -> Array:
    array = as_array(a, where=name)
    refuse_out(name, out)
    node = array._node
    if axis is None:
        node = reshape(node, (array.size,))
        dimension = 0
        kept_shape = (1,) * array.ndim
    else:
        dimension = normalize_axis_index(name, axis, _at_least_one(array.ndim))
        if array.ndim == 0:
            node = reshape(node, (1,))
        kept_shape = tuple(1 if index == dimension else size for index, size in enumerate(array.shape))
    if node.shape[dimension] == 0:
        raise ValueError(f"{name}: attempt to get {name} of an empty sequence (shape {array.shape})")
    if dtypes.is_complex(node.dtype):
        result = _complex_arg_extreme(move_axes_to_end(node, (dimension,)), kind)
    else:
        result = make(name, [node], dimension=dimension)
    if keepdims_flag(keepdims):
        result = reshape(result, kept_shape)
    return wrap(result)


def argmax(a, axis=None, out=None, *, keepdims=NO_VALUE) -> Array:
    """Index of the first maximum (a NaN counts as the maximum, as in NumPy); axis=None flattens."""
    return _arg_extreme("argmax", "max", a, axis, out, keepdims)


def argmin(a, axis=None, out=None, *, keepdims=NO_VALUE) -> Array:
    """Index of the first minimum (a NaN counts as the minimum, as in NumPy); axis=None flattens."""
    return _arg_extreme("argmin", "min", a, axis, out, keepdims)


def _logical(name, kind, a, axis, out, keepdims, where) -> Array:
    array = as_array(a, where=name)
    refuse_out(name, out)
    axes = reduction_axes(name, axis, array.ndim)
    node = truth(array._node)
    mask = _mask(name, where, node.shape)
    if mask is not None:
        node = make("select", [mask, node, filled(kind == "and", dtypes.bool_, node.shape)])
    return wrap(keep_dimensions(reduce(node, kind, axes), array.shape, axes, keepdims_flag(keepdims)))


def any(a, axis=None, out=None, keepdims=NO_VALUE, *, where=NO_VALUE) -> Array:  # noqa: A001
    """Whether any element along `axis` is nonzero (NaN counts as nonzero); empty gives False."""
    return _logical("any", "or", a, axis, out, keepdims, where)


def all(a, axis=None, out=None, keepdims=NO_VALUE, *, where=NO_VALUE) -> Array:  # noqa: A001
    """Whether every element along `axis` is nonzero; empty gives True."""
    return _logical("all", "and", a, axis, out, keepdims, where)


def count_nonzero(a, axis=None, *, keepdims=False) -> Array:
    """Number of nonzero elements along `axis` as int64.

    NumPy returns a Python int for axis=None; lazyarr returns a 0-d int64 array (lazy).
    """
    array = as_array(a, where="count_nonzero")
    axes = reduction_axes("count_nonzero", axis, array.ndim)
    counts = convert(truth(array._node), dtypes.int64)
    return wrap(keep_dimensions(reduce(counts, "sum", axes), array.shape, axes, bool(keepdims)))


def _at_least_one(ndim: int) -> int:
    """ndim, or 1 for 0-d input (NumPy's argmax accepts axis 0 or -1 there)."""
    return ndim if ndim else 1


from .cumulative import cumprod, cumsum, cumulative_prod, cumulative_sum  # noqa: E402
from .statistics import (  # noqa: E402
    mean,
    nanargmax,
    nanargmin,
    nanmax,
    nanmean,
    nanmin,
    nanprod,
    nansum,
    std,
    var,
)

__all__ = [
    "all",
    "amax",
    "amin",
    "any",
    "argmax",
    "argmin",
    "count_nonzero",
    "cumprod",
    "cumsum",
    "cumulative_prod",
    "cumulative_sum",
    "max",
    "mean",
    "min",
    "nanargmax",
    "nanargmin",
    "nanmax",
    "nanmean",
    "nanmin",
    "nanprod",
    "nansum",
    "prod",
    "ptp",
    "std",
    "sum",
    "var",
]
