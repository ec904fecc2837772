"""Picking values by condition or by index: select, choose and extract.

select is a chain of `select` instructions (the first true condition wins), choose one
gather from the choices stacked along a new first axis: both stay lazy. extract returns
as many values as the condition has true entries, so it evaluates the condition (and only
it) and gathers lazily from the array.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..hlo import Instruction, make
from ..shapes import broadcast_shapes
from . import elementwise
from .array import Array
from .axis_positions import select_positions
from .core import as_array, broadcast_to, contains_lazy, convert, is_python_scalar, scalar_constant, wrap
from .indexing_take import take_along_axis
from .manipulation_joining import unstack
from .manipulation_nodes import reshape_node

__all__ = ["choose", "extract", "select"]


def _operand(value, where: str):
    """A Python scalar stays as it is (a weak dtype in NumPy 2's promotion); anything else
    becomes an array."""
    return value if is_python_scalar(value) else as_array(value, where=where)


def _filled(value, dtype, shape) -> Instruction:
    """`value` (a Python scalar or an array) converted to `dtype` as NumPy's astype converts
    it, broadcast to `shape`."""
    node = scalar_constant(value, dtype) if is_python_scalar(value) else convert(value._node, dtype)
    return broadcast_to(node, shape)


def _result_dtype(operands, where: str, what: str):
    try:
        return dtypes.result_type(*operands)
    except TypeError as error:
        raise TypeError(f"{where}: {what} do not have a common dtype: {error}") from None


def select(condlist, choicelist, default=0) -> Array:
    """Elementwise, the entry of the first choice whose condition is true, else `default`.

    The dtype is NumPy 2's promotion of the choices and the default (Python scalars weak);
    every one is converted to it as NumPy's astype converts.

    >>> import lazyarr as la
    >>> x = la.asarray([1, 5, 9])
    >>> la.select([x < 3, x > 6], [x, x * 10], default=-1).tolist()
    [1, -1, 90]
    """
    conditions, choices = list(condlist), list(choicelist)
    if len(conditions) != len(choices):
        raise ValueError(
            f"select: list of cases must be same length as list of conditions ({len(choices)} choices, "
            f"{len(conditions)} conditions)"
        )
    if not conditions:
        raise ValueError("select: select with an empty condition list is not possible")
    operands = [_operand(choice, "select") for choice in choices] + [_operand(default, "select")]
    dtype = _result_dtype(operands, "select", "Choicelist and default value")
    conditions = [as_array(condition, where="select") for condition in conditions]
    condition_shape = broadcast_shapes(*(condition.shape for condition in conditions), where="select condlist")
    choice_shape = broadcast_shapes(*(np.shape(item) if is_python_scalar(item) else item.shape for item in operands),
                                    where="select choicelist")
    for position, condition in enumerate(conditions):
        if not dtypes.is_bool(condition.dtype):
            raise TypeError(
                f"select: invalid entry {position} in condlist: should be boolean ndarray, got dtype {condition.dtype}"
            )
    for choice in operands[:-1]:
        # NumPy writes each choice with copyto (casting 'same_kind') after making it an array:
        # a Python int becomes int64, which an unsigned result refuses. The default is filled unsafely.
        if is_python_scalar(choice) and not np.can_cast(np.asarray(choice).dtype, dtype, casting="same_kind"):
            raise TypeError(
                f"select: Cannot cast scalar from {np.asarray(choice).dtype!r} to {dtype!r} according to the rule "
                "'same_kind'"
            )
    shape = broadcast_shapes(condition_shape, choice_shape, where="select")
    result = _filled(operands[-1], dtype, shape)
    for condition, choice in zip(reversed(conditions), reversed(operands[:-1])):
        result = make("select", [broadcast_to(condition._node, shape), _filled(choice, dtype, shape), result])
    return wrap(result)


_MODES = ("raise", "wrap", "clip")
_MAX_OPERANDS = 64  # NumPy's NPY_MAXARGS: choose broadcasts the index and the choices together


def _choice_index(a, count: int, mode: str):
    """`a` as int64 positions into `count` choices after `mode`: a static NumPy array (checked
    now) or a lazy array (in 'raise' mode, an out-of-range entry raises when evaluated)."""
    if isinstance(a, Array) or (isinstance(a, (list, tuple)) and contains_lazy(a)):
        index, static = as_array(a, where="choose"), None
    else:
        index, static = None, np.asarray(a)
    dtype = index.dtype if static is None else static.dtype
    if not np.can_cast(dtype, np.int64, casting="safe"):
        raise TypeError(
            f"choose: Cannot cast array data from {np.dtype(dtype)!r} to dtype('int64') according to the rule 'safe'"
        )
    if static is not None:
        positions = static.astype(np.int64)
        if mode == "wrap":
            return np.mod(positions, count)
        if mode == "clip":
            return np.clip(positions, 0, count - 1)
        if positions.size and (positions.min() < 0 or positions.max() >= count):
            raise ValueError(f"choose: invalid entry in choice array (entries must lie in [0, {count}))")
        return positions
    positions = wrap(convert(index._node, dtypes.int64))
    if mode == "wrap":
        return elementwise.remainder(positions, count)
    if mode == "clip":
        return elementwise.clip(positions, 0, count - 1)
    return elementwise.where(elementwise.less(positions, 0), count, positions)  # a gather would wrap it


def choose(a, choices, out=None, mode="raise") -> Array:
    """Elementwise, the entry of `choices[a]` (all broadcast together): NumPy's choose.

    `mode` treats entries of `a` outside [0, len(choices)): 'raise' (ValueError for static
    `a`; a lazy `a` raises IndexError when evaluated), 'wrap' (modulo) or 'clip'.

    >>> import lazyarr as la
    >>> la.choose(la.asarray([0, 1, 0]), [[1, 2, 3], [10, 20, 30]]).tolist()
    [1, 20, 3]
    """
    if out is not None:
        raise TypeError("choose: out= is not supported (lazy arrays are immutable); use the result")
    if mode not in _MODES:
        raise ValueError(f"choose: clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    if isinstance(choices, Array):
        if choices.ndim == 0:
            raise TypeError("choose: choices must be a sequence of arrays, got a 0-d array")
        items = list(unstack(choices))
    else:
        try:
            items = [_operand(choice, "choose") for choice in choices]
        except TypeError as error:
            raise TypeError(f"choose: choices must be a sequence of arrays: {error}") from None
    if not items:
        raise ValueError("choose: 0-length sequence (choices is empty).")
    if len(items) + 1 > _MAX_OPERANDS:
        raise ValueError(
            f"choose: Need at least 0 and at most {_MAX_OPERANDS} array objects (got {len(items)} choices and "
            "the index: NumPy's limit, kept for the same results)"
        )
    dtype = _result_dtype(items, "choose", "choices")
    index = _choice_index(a, len(items), mode)
    shape = broadcast_shapes(index.shape, *(() if is_python_scalar(item) else item.shape for item in items),
                             where="choose")
    # The choices stacked along a new first axis; the index picks along it at every position.
    layers = [reshape_node(_filled(item, dtype, shape), (1,) + shape) for item in items]
    stacked = layers[0] if len(layers) == 1 else make("concatenate", layers, dimension=0)
    index_node = index._node if isinstance(index, Array) else as_array(index, where="choose")._node
    index_node = reshape_node(broadcast_to(index_node, shape), (1,) + shape)
    picked = take_along_axis(wrap(stacked), wrap(index_node), axis=0)
    return wrap(reshape_node(picked._node, shape))


def extract(condition, arr) -> Array:
    """The entries of the flattened `arr` where the flattened `condition` is nonzero
    (evaluates `condition`: their count is the result's length).

    >>> import lazyarr as la
    >>> la.extract(la.asarray([[1, 0], [0, 1]]) > 0, la.asarray([[5, 6], [7, 8]])).tolist()
    [5, 8]
    """
    mask = condition.numpy() if isinstance(condition, Array) else np.asarray(condition)
    positions = np.flatnonzero(mask)
    array = as_array(arr, where="extract")
    flat = reshape_node(array._node, (array.size,))
    if positions.size and positions[-1] >= array.size:
        raise IndexError(
            f"extract: index {int(positions[positions >= array.size][0])} is out of bounds for axis 0 with "
            f"size {array.size} (the condition has more entries than the array)"
        )
    return wrap(select_positions(flat, 0, positions))
