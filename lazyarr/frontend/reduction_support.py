"""What every reduction shares: axis normalization, keepdims, `out`, and NumPy's dtype choice.

Result dtypes are NumPy's own: `numpy_result_dtype` calls the NumPy function once on a
one-element array of the input dtype (static metadata, cached), so int8 sums give int64,
means of integers float64 and variances of complex numbers real, without a hand-written table.
"""

from __future__ import annotations

import functools
import operator
import warnings
from collections.abc import Callable

import numpy as np

from .. import dtypes
from ..hlo import Instruction, Maker, make
from ..hlo.template import Template, Templates
from .array import Array
from .core import scalar_constant
from .node_layout import reshape

# NumPy's "argument not given" marker: passing it explicitly means the same as omitting it.
NO_VALUE = np._NoValue


def is_given(value) -> bool:
    return value is not NO_VALUE


_TEMPLATES = Templates()


def templated(name: str, a, axis, keepdims, build: Callable[[Array], Array], *, plain: bool) -> Array:
    """`build(a)`, replayed from its graph template (hlo/template.py) for a plain call: `plain`
    (the caller's other arguments at their defaults), `a` a lazy array, `axis` None, an int or a
    tuple of ints, `keepdims` a bool or not given. `x.sum(axis=-1)` or `x.mean()` in a loop then
    makes its nodes without running the checks and dtype rules again."""
    if not plain or type(a) is not Array or not (keepdims is NO_VALUE or type(keepdims) is bool):
        return build(a)
    # `axis=0.0` equals `axis=0` as a key and must still raise TypeError: exact types only.
    if not (axis is None or type(axis) is int or type(axis) is tuple and _all_int(axis)):
        return build(a)
    key = (name, a._node.shape, a._node.dtype, axis, keepdims)
    template = _TEMPLATE_TABLE.get(key)
    if type(template) is Template:  # hot: a loop's `x.sum(axis=-1)`, the same key every step
        return _replayed_array(template, a._node)
    return Array(_TEMPLATES.build(key, lambda node: build(Array(node))._node, a._node))


def python_replayed_array(template: Template, node) -> Array:
    """`template`'s first output made on `node`, as an Array (the C extension's twin: fast_paths.py)."""
    return Array(template(node))


_TEMPLATE_TABLE = _TEMPLATES.table  # (the C reductions read it too: fast_paths.py)
_replayed_array = python_replayed_array


def use_fast_replayed_array(function) -> None:
    """Make templated()'s replayed arrays with `function(template, node)` (fast_paths.py)."""
    global _replayed_array
    _replayed_array = function


def _all_int(items: tuple) -> bool:
    for item in items:
        if type(item) is not int:
            return False
    return True


def keepdims_flag(keepdims) -> bool:
    return False if keepdims is NO_VALUE else bool(keepdims)


def refuse_out(name: str, out) -> None:
    if out is not None:
        raise TypeError(
            f"{name}: out= is not supported (lazy arrays are immutable); got "
            f"{type(out).__name__}, accepted: None. Use the returned array instead."
        )


def normalize_axis_index(name: str, axis, ndim: int, *, argument: str = "axis") -> int:
    """One axis in [-ndim, ndim) as a non-negative int; AxisError (a ValueError) otherwise."""
    try:
        index = operator.index(axis)
    except TypeError:
        raise TypeError(
            f"{name}: {argument} must be an integer, got {type(axis).__name__} {axis!r}"
        ) from None
    if not -ndim <= index < ndim:
        raise np.exceptions.AxisError(
            f"{name}: {argument} {index} is out of bounds for array of dimension {ndim}"
        )
    return index % ndim


def reduction_axes(name: str, axis, ndim: int, *, scalar_axis: bool = True) -> tuple[int, ...]:
    """`axis` (None, an int or a tuple of ints) as sorted non-negative axes.

    NumPy's ufunc reductions accept axis=0 or -1 on a 0-d array (meaning no axis);
    `scalar_axis=False` refuses it as mean/var/std do.
    """
    if axis is None:
        return tuple(range(ndim))
    if ndim == 0 and scalar_axis and not isinstance(axis, tuple):
        if normalize_axis_index(name, axis, 1) == 0:
            return ()
    items = axis if isinstance(axis, tuple) else (axis,)
    axes = [normalize_axis_index(name, item, ndim) for item in items]
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: duplicate value in 'axis': {axis}")
    return tuple(sorted(axes))


def reduced_shape(shape, axes, keepdims: bool) -> tuple[int, ...]:
    if keepdims:
        return tuple(1 if axis in axes else size for axis, size in enumerate(shape))
    return tuple(size for axis, size in enumerate(shape) if axis not in axes)


def keep_dimensions(node: Instruction, input_shape, axes, keepdims: bool) -> Instruction:
    """Reinsert the reduced axes as size-1 dims when keepdims (a reshape)."""
    return reshape(node, reduced_shape(input_shape, axes, keepdims)) if keepdims else node


def count_of(shape, axes) -> int:
    result = 1
    for axis in axes:
        result *= shape[axis]
    return result


def optional_dtype(name: str, dtype):
    return None if dtype is None else dtypes.as_dtype(dtype, where=name)


@functools.cache
def _probe(function_name: str, input_dtype: np.dtype, dtype_argument, extra: tuple) -> np.dtype:
    function = getattr(np, function_name)
    sample = np.zeros(1, input_dtype)
    keywords = dict(extra)
    if dtype_argument is not None:
        keywords["dtype"] = dtype_argument
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return np.asarray(function(sample, **keywords)).dtype


def numpy_result_dtype(name: str, function_name: str, input_dtype, dtype_argument=None, **extra) -> np.dtype:
    """The dtype NumPy's `function_name` gives for this input dtype and `dtype=` argument."""
    try:
        result = _probe(function_name, np.dtype(input_dtype), dtype_argument, tuple(sorted(extra.items())))
    except TypeError as error:
        raise TypeError(f"{name}: not supported for dtype {input_dtype}: {error}") from None
    return dtypes.as_dtype(result, where=name)


def truth(node: Instruction) -> Instruction:
    """node != 0 as bool (NaN and any nonzero complex part count as true)."""
    if node.dtype == dtypes.bool_:
        return node
    zero = scalar_constant(0, node.dtype)
    if node.shape:
        zero = make("broadcast", [zero], shape=node.shape, dimensions=())
    return make("compare", [node, zero], direction="NE")


def reduce(node: Instruction, kind: str, axes) -> Instruction:
    """HLO reduce over `axes`; sum/prod on bool become or/and, as NumPy's add/multiply.

    NumPy starts add/multiply reductions from the identity, so even over no axes a float sum
    turns -0.0 into 0.0 and a complex product 1 * (0+infj) into nan+infj: the reduce is kept.
    """
    axes = tuple(sorted(axes))
    if node.dtype == dtypes.bool_:
        kind = {"sum": "or", "prod": "and"}.get(kind, kind)
    if not axes and not (kind in ("sum", "prod") and dtypes.is_inexact(node.dtype)):
        return node
    reducer = _REDUCERS.get((kind, axes))
    if reducer is None:
        if len(_REDUCERS) >= 1024:
            _REDUCERS.clear()
        reducer = _REDUCERS[kind, axes] = Maker("reduce", kind=kind, dimensions=axes)
    return reducer(node)


_REDUCERS: dict[tuple, Maker] = {}  # (kind, axes) -> its prepared reduce
