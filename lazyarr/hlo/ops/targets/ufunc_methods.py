"""ufunc-method targets: NumPy's reduce, accumulate, reduceat and at of a named binary ufunc.

The frontend's ufunc objects (frontend/ufunc.py) compile what maps onto HLO (sum, max, scans,
scatter-add, associative trees); these targets carry the rest, NumPy's own left folds over an
axis (`subtract.reduce`, `power.accumulate`) and unbuffered in-place updates (`multiply.at`),
run on the host by NumPy itself so values are NumPy's exactly. Operands arrive already in the
dtype NumPy's loop computes in (the frontend converts them), so each target's output dtype is
its first operand's. Options name the ufunc (`ufunc`, NumPy's name) and the axes.

`method_result_dtype`, `method_identity` and `is_reorderable` ask NumPy once per signature
(cached): the frontend uses them to choose dtypes and errors as NumPy does.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np

from .... import dtypes
from ...op import HloError
from ..custom import CustomCallTarget, register_target


def numpy_ufunc(where: str, name) -> np.ufunc:
    """NumPy's ufunc called `name` (a binary or unary one with one output)."""
    candidate = getattr(np, name, None) if isinstance(name, str) else None
    if not isinstance(candidate, np.ufunc) or candidate.nout != 1:
        raise HloError(f"{where}: option ufunc must name a NumPy ufunc with one output, got {name!r}")
    return candidate


def _quietly(function, *args, **kwargs):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


@functools.cache
def method_result_dtype(name: str, method: str, dtype: np.dtype, dtype_argument=None) -> np.dtype:
    """The dtype of NumPy's `<name>.<method>` on an array of `dtype` (TypeError where NumPy has
    no loop, with NumPy's message)."""
    ufunc = getattr(np, name)
    sample = np.ones(2, dtype)
    keywords = {} if dtype_argument is None else {"dtype": dtype_argument}
    arguments = (sample, [0]) if method == "reduceat" else (sample,)
    return np.asarray(_quietly(getattr(ufunc, method), *arguments, **keywords)).dtype


@functools.cache
def method_identity(name: str, dtype: np.dtype):
    """NumPy's value for an empty reduction in `dtype` (its identity cast), or None."""
    try:
        return _quietly(getattr(np, name).reduce, np.empty(0, dtype))
    except ValueError:
        return None


@functools.cache
def is_reorderable(name: str, dtype: np.dtype) -> bool:
    """Whether NumPy lets `<name>.reduce` take several axes at once."""
    try:
        _quietly(getattr(np, name).reduce, np.ones((1, 1), dtype), axis=(0, 1))
    except ValueError:
        return False
    return True


def _same_dtype_loop(where: str, name: str, method: str, operand) -> None:
    try:
        result = method_result_dtype(name, method, operand.dtype)
    except TypeError as error:
        raise HloError(f"{where}: NumPy's {name}.{method} refuses {operand.dtype}: {error}") from None
    if result != operand.dtype:
        raise HloError(
            f"{where}: NumPy's {name}.{method} of {operand.dtype} computes in {result}; convert the "
            "operand to the loop's dtype first"
        )


def _axes(where: str, options, ndim: int, *, several: bool) -> tuple[int, ...]:
    axes = options.get("axes") if several else (options.get("axis"),)
    if not isinstance(axes, tuple) or not all(type(axis) is int and 0 <= axis < ndim for axis in axes):
        raise HloError(f"{where}: axes {axes!r} must be distinct ints in [0, {ndim})")
    if len(set(axes)) != len(axes) or list(axes) != sorted(axes):
        raise HloError(f"{where}: axes {axes!r} must be increasing")
    return axes


def _known_options(where: str, options, accepted) -> None:
    unknown = set(options) - set(accepted)
    if unknown:
        raise HloError(f"{where}: unknown option(s) {sorted(unknown)}; accepted: {sorted(accepted)}")


# -- reduce ----------------------------------------------------------------------------------


def _reduce_infer(operands, options):
    where = "ufunc.reduce"
    _known_options(where, options, ("ufunc", "axes", "keepdims", "initial", "where", "identity"))
    operand, *rest = operands
    ufunc = numpy_ufunc(where, options.get("ufunc"))
    if ufunc.nin != 2:
        raise HloError(f"{where}: {ufunc.__name__} is not a binary ufunc")
    _same_dtype_loop(where, ufunc.__name__, "reduce", operand)
    axes = _axes(where, options, operand.ndim, several=True)
    initial, mask = bool(options.get("initial", False)), bool(options.get("where", False))
    if len(rest) != initial + mask:
        raise HloError(f"{where}: expects {1 + initial + mask} operands (options initial={initial}, where={mask})")
    if initial and (rest[0].shape != () or rest[0].dtype != operand.dtype):
        raise HloError(f"{where}: initial must be a 0-d {operand.dtype} operand")
    if mask and (rest[-1].shape != operand.shape or rest[-1].dtype != dtypes.bool_):
        raise HloError(f"{where}: the where operand must be bool of shape {operand.shape}")
    if len(axes) > 1 and not is_reorderable(ufunc.__name__, operand.dtype):
        raise HloError(f"{where}: {ufunc.__name__} is not reorderable, so at most one axis may be reduced")
    empty = any(operand.shape[axis] == 0 for axis in axes)
    identity = options.get("identity", True) and method_identity(ufunc.__name__, operand.dtype) is not None
    if (empty or mask) and not initial and not identity:
        raise HloError(f"{where}: {ufunc.__name__} has no identity: an empty or masked reduction needs initial")
    keepdims = options.get("keepdims", False)
    shape = tuple(
        1 if axis in axes else size for axis, size in enumerate(operand.shape) if keepdims or axis not in axes
    )
    return [(shape, operand.dtype)]


def _reduce(values, options):
    operand, *rest = values
    keywords = {}
    if options.get("initial", False):
        keywords["initial"] = rest.pop(0)[()]
    elif not options.get("identity", True):
        keywords["initial"] = None  # fold from the first element
    if options.get("where", False):
        keywords["where"] = rest.pop(0)
    ufunc = getattr(np, options["ufunc"])
    with np.errstate(all="ignore"):  # as every evaluation: IEEE results, no warnings
        result = ufunc.reduce(operand, axis=options["axes"], keepdims=options.get("keepdims", False), **keywords)
    return (np.asarray(result, dtype=operand.dtype),)


register_target(CustomCallTarget(
    name="ufunc.reduce",
    infer=_reduce_infer,
    implementation=_reduce,
    doc="NumPy's <ufunc>.reduce over options['axes'] (operands: x, then initial and where if flagged; "
        "identity=False folds from the first element, NumPy's initial=None).",
))


# -- accumulate and reduceat ------------------------------------------------------------------


def _accumulate_infer(operands, options):
    where = "ufunc.accumulate"
    _known_options(where, options, ("ufunc", "axis"))
    if len(operands) != 1:
        raise HloError(f"{where}: expects 1 operand, got {len(operands)}")
    (operand,) = operands
    ufunc = numpy_ufunc(where, options.get("ufunc"))
    if ufunc.nin != 2:
        raise HloError(f"{where}: {ufunc.__name__} is not a binary ufunc")
    _same_dtype_loop(where, ufunc.__name__, "accumulate", operand)
    _axes(where, options, operand.ndim, several=False)
    return [(operand.shape, operand.dtype)]


def _accumulate(values, options):
    (operand,) = values
    with np.errstate(all="ignore"):
        result = getattr(np, options["ufunc"]).accumulate(operand, axis=options["axis"])
    return (np.asarray(result, dtype=operand.dtype),)


register_target(CustomCallTarget(
    name="ufunc.accumulate",
    infer=_accumulate_infer,
    implementation=_accumulate,
    doc="NumPy's <ufunc>.accumulate along options['axis'] (a left fold, every prefix kept).",
))


def _reduceat_infer(operands, options):
    where = "ufunc.reduceat"
    _known_options(where, options, ("ufunc", "axis"))
    if len(operands) != 2:
        raise HloError(f"{where}: expects 2 operands (x, indices), got {len(operands)}")
    operand, indices = operands
    ufunc = numpy_ufunc(where, options.get("ufunc"))
    if ufunc.nin != 2:
        raise HloError(f"{where}: {ufunc.__name__} is not a binary ufunc")
    _same_dtype_loop(where, ufunc.__name__, "reduceat", operand)
    (axis,) = _axes(where, options, operand.ndim, several=False)
    if indices.ndim != 1 or indices.dtype != dtypes.int64:
        raise HloError(f"{where}: indices must be 1-d int64, got {indices.dtype}{list(indices.shape)}")
    shape = operand.shape[:axis] + indices.shape + operand.shape[axis + 1:]
    return [(shape, operand.dtype)]


def _reduceat(values, options):
    operand, indices = values
    with np.errstate(all="ignore"):
        result = getattr(np, options["ufunc"]).reduceat(operand, indices, axis=options["axis"])
    return (np.asarray(result, dtype=operand.dtype),)


register_target(CustomCallTarget(
    name="ufunc.reduceat",
    infer=_reduceat_infer,
    implementation=_reduceat,
    doc="NumPy's <ufunc>.reduceat(x, indices) along options['axis'].",
))


# -- at ----------------------------------------------------------------------------------------


def _at_infer(operands, options):
    where = "ufunc.at"
    _known_options(where, options, ("ufunc",))
    ufunc = numpy_ufunc(where, options.get("ufunc"))
    if len(operands) != 1 + ufunc.nin:
        raise HloError(f"{where}: {ufunc.__name__} expects {1 + ufunc.nin} operands (a, positions, b)")
    operand, positions, *update = operands
    if positions.dtype != dtypes.int64:
        raise HloError(f"{where}: positions must be int64 flat indices, got {positions.dtype}")
    if update and update[0].shape != positions.shape:
        raise HloError(f"{where}: b must have the positions' shape {positions.shape}, got {update[0].shape}")
    try:
        ufunc.resolve_dtypes((operand.dtype, *(value.dtype for value in update), None))
    except TypeError as error:
        raise HloError(f"{where}: {error}") from None
    return [(operand.shape, operand.dtype)]


def _at(values, options):
    """A copy of a, updated in place as NumPy's unbuffered <ufunc>.at on its flat positions."""
    operand, positions, *update = values
    result = np.array(operand, copy=True, order="C")
    with np.errstate(all="ignore"):
        getattr(np, options["ufunc"]).at(result.reshape(-1), positions, *update)
    return (result,)


register_target(CustomCallTarget(
    name="ufunc.at",
    infer=_at_infer,
    implementation=_at,
    doc="a after NumPy's unbuffered <ufunc>.at(a.ravel(), positions[, b]) (repeated positions apply in order).",
))
