"""mean, var, std and the NaN-ignoring reductions, following NumPy's own formulas step by step.

NumPy's `_methods._mean` and `_var` decide the precision of every step: integers accumulate
in float64, a float16 mean accumulates in float32 and casts back, a variance subtracts the
keepdims mean, squares (real**2 + imag**2 for complex, so the result is real) and sums again,
and every division by a count runs in the dtype promoted with intp before casting back (as
NumPy's true_divide(..., out=total, casting='unsafe') does). These functions build the same
steps lazily so the values agree with NumPy bit for bit on the interpreter.

nanargmax and nanargmin are NumPy's too (NaN replaced by -inf or +inf, then argmax or argmin),
with one eager step: NumPy raises for an all-NaN slice, which only the values can tell, so they
evaluate the check (and the result, in the same module) when called; see `nanargmax`.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .. import dtypes
from ..hlo import Instruction, make
from . import elementwise, tracing
from .array import Array, evaluate_arrays
from .core import as_array, broadcast_to, convert, scalar_constant, wrap
from .node_layout import filled
from .reduction_support import (
    NO_VALUE,
    count_of,
    is_given,
    keep_dimensions,
    keepdims_flag,
    optional_dtype,
    reduce,
    reduction_axes,
    refuse_out,
    templated,
)


def _reductions():
    """The reductions module, imported late: it re-exports this module's functions."""
    from . import reductions

    return reductions


def _refuse_where(name: str, where) -> None:
    if is_given(where) and where is not True:
        raise NotImplementedError(
            f"{name}: where= is not supported; NumPy skips masked elements in a summation order "
            "lazyarr does not reproduce. Select the elements first (la.where(mask, x, 0))."
        )


def _sum_in(node: Instruction, axes, dtype) -> Instruction:
    return reduce(convert(node, dtype), "sum", axes)


def divide_by_count(node: Instruction, count) -> Instruction:
    """node / count in the dtype NumPy promotes to with count's dtype, cast back to node's."""
    count = np.asarray(count)[()]  # a NumPy scalar: its constant is built once (core.scalar_constant)
    if type(count) is np.intp and node.dtype.kind in "fc":  # hot (`x.mean()` in a loop): no ufunc dispatch
        quotient_dtype = _COUNT_QUOTIENTS.get(node.dtype)
        if quotient_dtype is None:
            quotient_dtype = _COUNT_QUOTIENTS[node.dtype] = dtypes.result_type(node.dtype, np.intp)
        divisor = scalar_constant(count, quotient_dtype)  # exact: NumPy converts the count the same way
        quotient = make("divide", [convert(node, quotient_dtype), broadcast_to(divisor, node.shape)])
    else:
        quotient = elementwise.divide(wrap(node), wrap(scalar_constant(count, count.dtype)))._node
    return convert(quotient, node.dtype)


_COUNT_QUOTIENTS: dict[np.dtype, np.dtype] = {}  # a float or complex dtype -> its quotient by an intp


def mean(a, axis=None, dtype=None, out=None, keepdims=NO_VALUE, *, where=NO_VALUE) -> Array:
    """Arithmetic mean over `axis` (integers give float64; float16 accumulates in float32).

    An empty reduction gives NaN (NumPy also warns; lazyarr does not).

    >>> la.mean(la.asarray([1, 2, 3, 4]))   # 2.5
    """
    return templated("mean", a, axis, keepdims, lambda array: _mean(array, axis, dtype, out, keepdims, where),
                     plain=dtype is None and out is None and where is NO_VALUE)


def _mean(a, axis, dtype, out, keepdims, where) -> Array:
    array = as_array(a, where="mean")
    refuse_out("mean", out)
    _refuse_where("mean", where)
    axes = reduction_axes("mean", axis, array.ndim, scalar_axis=False)
    accumulate = optional_dtype("mean", dtype)
    float16_result = False
    if accumulate is None:
        if dtypes.is_integer(array.dtype) or dtypes.is_bool(array.dtype):
            accumulate = dtypes.float64
        elif array.dtype == dtypes.float16:
            accumulate, float16_result = dtypes.float32, True
        else:
            accumulate = array.dtype
    total = _sum_in(array._node, axes, accumulate)
    result = divide_by_count(total, np.intp(count_of(array.shape, axes)))
    if float16_result:
        result = convert(result, dtypes.float16)
    return wrap(keep_dimensions(result, array.shape, axes, keepdims_flag(keepdims)))


def _degrees_of_freedom(name, ddof, correction):
    if is_given(correction):
        if ddof != 0:
            raise ValueError(f"{name}: ddof and correction can't be provided simultaneously.")
        ddof = correction
    if isinstance(ddof, Array) or not isinstance(ddof, (numbers.Number, np.generic)):
        raise TypeError(
            f"{name}: ddof/correction must be a Python or NumPy number, got {type(ddof).__name__}"
        )
    return ddof


def _variance(name, a, axis, dtype, out, ddof, keepdims, where, mean_value, correction) -> Instruction:
    array = as_array(a, where=name)
    refuse_out(name, out)
    _refuse_where(name, where)
    ddof = _degrees_of_freedom(name, ddof, correction)
    axes = reduction_axes(name, axis, array.ndim, scalar_axis=False)
    accumulate = optional_dtype(name, dtype)
    if accumulate is None and (dtypes.is_integer(array.dtype) or dtypes.is_bool(array.dtype)):
        accumulate = dtypes.float64
    count = count_of(array.shape, axes)
    if is_given(mean_value):
        center = as_array(mean_value, where=name)
    else:
        total = _sum_in(array._node, axes, accumulate or array.dtype)
        total = keep_dimensions(total, array.shape, axes, True)
        center = wrap(divide_by_count(total, np.intp(count)))
    deviation = elementwise.subtract(array, center)
    if dtypes.is_complex(deviation.dtype):
        parts = (elementwise.real(deviation), elementwise.imag(deviation))
        squared = elementwise.add(elementwise.square(parts[0]), elementwise.square(parts[1]))
    else:
        squared = elementwise.square(deviation)
    result = _sum_in(squared._node, axes, accumulate or squared.dtype)
    with np.errstate(all="ignore"):
        divisor = np.maximum(np.intp(count) - ddof, 0)
    result = divide_by_count(result, divisor)
    return keep_dimensions(result, array.shape, axes, keepdims_flag(keepdims))


def var(
    a,
    axis=None,
    dtype=None,
    out=None,
    ddof=0,
    keepdims=NO_VALUE,
    *,
    where=NO_VALUE,
    mean=NO_VALUE,
    correction=NO_VALUE,
) -> Array:
    """Variance over `axis` with `ddof` (or the array API's `correction`); complex gives real.

    >>> la.var(la.asarray([1.0, 2.0, 3.0, 4.0]), correction=1)   # 1.666...
    """
    return templated(("var", ddof), a, axis, keepdims,
                     lambda array: wrap(_variance("var", array, axis, dtype, out, ddof, keepdims, where, mean,
                                                  correction)),
                     plain=_plain_moment(dtype, out, ddof, where, mean, correction))


def std(
    a,
    axis=None,
    dtype=None,
    out=None,
    ddof=0,
    keepdims=NO_VALUE,
    *,
    where=NO_VALUE,
    mean=NO_VALUE,
    correction=NO_VALUE,
) -> Array:
    """Standard deviation: the square root of `var` with the same arguments."""
    return templated(("std", ddof), a, axis, keepdims,
                     lambda array: elementwise.sqrt(wrap(_variance("std", array, axis, dtype, out, ddof, keepdims,
                                                                   where, mean, correction))),
                     plain=_plain_moment(dtype, out, ddof, where, mean, correction))


def _plain_moment(dtype, out, ddof, where, mean, correction) -> bool:
    """Whether a var/std call may replay a graph template (`templated`): its arguments other
    than the array, axis and keepdims at their defaults, `ddof` an exact int (it joins the key;
    `ddof=1.0` equals 1 as a key but NumPy's divisor then is a float)."""
    return (dtype is None and out is None and type(ddof) is int and where is NO_VALUE and mean is NO_VALUE
            and correction is NO_VALUE)


def replace_nan(array: Array, value) -> tuple[Array, Instruction | None]:
    """(array with NaN replaced by `value`, the NaN mask) for inexact dtypes; else (array, None)."""
    if not dtypes.is_inexact(array.dtype):
        return array, None
    is_nan = make("is-nan", [array._node])
    replaced = make("select", [is_nan, filled(value, array.dtype, array.shape), array._node])
    return wrap(replaced), is_nan


def nansum(a, axis=None, dtype=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE, where=NO_VALUE) -> Array:
    """Sum treating NaN as zero (an element with a NaN in either complex part counts as NaN)."""
    replaced, _ = replace_nan(as_array(a, where="nansum"), 0)
    return _reductions().sum(replaced, axis, dtype, out, keepdims, initial, where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE, where=NO_VALUE) -> Array:
    """Product treating NaN as one."""
    replaced, _ = replace_nan(as_array(a, where="nanprod"), 1)
    return _reductions().prod(replaced, axis, dtype, out, keepdims, initial, where)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=NO_VALUE, *, where=NO_VALUE) -> Array:
    """Mean of the non-NaN elements; all-NaN slices give NaN (NumPy also warns)."""
    array = as_array(a, where="nanmean")
    replaced, is_nan = replace_nan(array, 0)
    if is_nan is None:
        return mean(array, axis, dtype, out, keepdims, where=where)
    refuse_out("nanmean", out)
    _refuse_where("nanmean", where)
    dtype = optional_dtype("nanmean", dtype)
    if dtype is not None and not dtypes.is_inexact(dtype):
        raise TypeError(f"nanmean: if a is inexact, then dtype must be inexact; got dtype={dtype}")
    axes = reduction_axes("nanmean", axis, array.ndim)
    present = convert(make("not", [is_nan]), dtypes.int64)
    count = reduce(present, "sum", axes)
    total = _reductions().sum(replaced, axis, dtype)._node
    quotient = elementwise.divide(wrap(total), wrap(count))._node
    result = convert(quotient, total.dtype)
    return wrap(keep_dimensions(result, array.shape, axes, keepdims_flag(keepdims)))


def _nan_extreme(name, numpy_name, kind, a, axis, out, keepdims, initial, where) -> Array:
    array = as_array(a, where=name)
    extreme = _reductions().max if kind == "max" else _reductions().min
    if not dtypes.is_inexact(array.dtype):
        return extreme(array, axis, out, keepdims, initial, where)
    if dtypes.is_complex(array.dtype):
        raise NotImplementedError(f"{name}: complex input is not supported")
    refuse_out(name, out)
    _refuse_where(name, where)
    axes = reduction_axes(name, axis, array.ndim)
    has_initial = is_given(initial) and initial is not None
    if any(array.shape[axis] == 0 for axis in axes) and not has_initial:
        raise ValueError(
            f"{name}: zero-size array to reduction operation {numpy_name} which has no identity "
            f"(shape {array.shape}, axis {axis})"
        )
    worst = -math.inf if kind == "max" else math.inf
    replaced, is_nan = replace_nan(array, worst)
    best = extreme(replaced, axis, initial=initial)._node
    all_nan = reduce(is_nan, "and", axes)
    fallback = filled(initial if has_initial else math.nan, array.dtype, best.shape)
    result = make("select", [all_nan, fallback, best])
    return wrap(keep_dimensions(result, array.shape, axes, keepdims_flag(keepdims)))


def nanmax(a, axis=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE, where=NO_VALUE) -> Array:
    """Maximum ignoring NaN (NumPy's fmax reduction); all-NaN slices give NaN."""
    return _nan_extreme("nanmax", "fmax", "max", a, axis, out, keepdims, initial, where)


def nanmin(a, axis=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE, where=NO_VALUE) -> Array:
    """Minimum ignoring NaN (NumPy's fmin reduction); all-NaN slices give NaN."""
    return _nan_extreme("nanmin", "fmin", "min", a, axis, out, keepdims, initial, where)


def _raise_if_traced(name: str, nodes) -> None:
    """Refuse nanargmax/nanargmin on a value traced by la.jit: the all-NaN check needs values.

    Returning an index for an all-NaN slice (where NumPy raises) would be a silent wrong
    answer, so a trace stops here with the fix; arrays that do not depend on the jitted
    function's arguments are checked eagerly as outside la.jit. An escaped tracer falls
    through to evaluation, which raises its own message.
    """
    if not tracing.is_tracing():
        return
    tracer = tracing.find_tracer(nodes, lambda node: node._bound is not None)
    trace = tracing.tracer_of(tracer) if tracer is not None else None
    if trace is None or not trace.active:
        return
    replacement = "-la.inf" if name == "nanargmax" else "la.inf"
    plain = name.removeprefix("nan")
    raise tracing.TracedValueError(
        f"la.{name} on a traced array inside la.jit({trace.function_name}): NumPy raises "
        "ValueError for an all-NaN slice, which only the array's values can tell, and a traced "
        f"array has none yet; inside la.jit use la.{plain}(la.where(la.isnan(x), {replacement}, x), "
        f"axis) (an all-NaN slice then gives index 0), or call la.{name} outside la.jit"
    )


def _nan_arg_extreme(name: str, kind: str, a, axis, out, keepdims) -> Array:
    """NumPy's nanargmax/nanargmin step by step: replace NaN by the worst value, refuse
    all-NaN slices (evaluated now), then argmax/argmin of the replaced array."""
    array = as_array(a, where=name)
    arg_extreme = _reductions().argmax if kind == "max" else _reductions().argmin
    if not dtypes.is_inexact(array.dtype):
        return arg_extreme(array, axis, out, keepdims=keepdims)  # no NaN: NumPy calls argmax
    refuse_out(name, out)
    replaced, is_nan = replace_nan(array, -math.inf if kind == "max" else math.inf)
    if array.size == 0:
        return arg_extreme(replaced, axis, keepdims=keepdims)  # NumPy skips the check; argmax raises
    # NumPy checks np.all(mask, axis) first, so its axis errors (and an all-NaN slice under a
    # tuple axis, which argmax refuses) come before argmax's.
    axes = reduction_axes(name, axis, array.ndim)
    all_nan = reduce(is_nan, "and", axes)
    any_all_nan = wrap(reduce(all_nan, "or", tuple(range(all_nan.ndim))))
    try:
        result = arg_extreme(replaced, axis, keepdims=keepdims)
    except (TypeError, ValueError):
        result = None  # argmax's own error, raised below unless a slice is all NaN
    pending = [any_all_nan] if result is None else [any_all_nan, result]
    _raise_if_traced(name, [item._node for item in pending])
    evaluate_arrays(pending)  # one module: the check and the indices share the pass over `a`
    if bool(any_all_nan):
        raise ValueError(f"{name}: All-NaN slice encountered")
    return result if result is not None else arg_extreme(replaced, axis, keepdims=keepdims)


def nanargmax(a, axis=None, out=None, *, keepdims=NO_VALUE) -> Array:
    """Index of the first maximum ignoring NaN (NumPy's: NaN replaced by -inf, then argmax).

    An all-NaN slice raises ValueError("All-NaN slice encountered") as in NumPy. Only the
    values can tell, so for float and complex input this evaluates when called: the check
    and the indices are computed in one compiled module, and the returned array holds them.
    Inside la.jit, on a value that depends on the jitted function's arguments, it raises
    TracedValueError instead of returning an index for an all-NaN slice (use
    `la.argmax(la.where(la.isnan(x), -la.inf, x), axis)` there). Integer and bool input
    has no NaN: that is `argmax`, lazy. A slice of NaN and -inf gives the NaN's index, if
    first, as NumPy's does. axis=None flattens; `out` must be None.

    >>> la.nanargmax(la.asarray([[math.nan, 4.0], [2.0, 3.0]]), axis=0)   # int64 [1, 0]
    """
    return _nan_arg_extreme("nanargmax", "max", a, axis, out, keepdims)


def nanargmin(a, axis=None, out=None, *, keepdims=NO_VALUE) -> Array:
    """Index of the first minimum ignoring NaN (NaN replaced by +inf, then argmin).

    Raises ValueError for an all-NaN slice and evaluates when called, as `nanargmax`.
    """
    return _nan_arg_extreme("nanargmin", "min", a, axis, out, keepdims)


__all__ = [
    "mean", "nanargmax", "nanargmin", "nanmax", "nanmean", "nanmin", "nanprod", "nansum", "std", "var",
]
