"""Elements: 0-d arrays read from evaluated host buffers, and NumPy's scalar arithmetic on them.

`x[i, j]` of an array whose value is already computed has a known value: NumPy's scalar. A
loop that reads results element by element (`float(x[i])`, `if x[i] > 0`, `total += x[k]`)
should cost what NumPy's scalar code costs, not a graph, an evaluation and a compile per new
index. An `Element` is a lazyarr 0-d array holding that scalar: converting it (`float`, `int`,
`bool`, `.item()`) reads the scalar, and an elementwise function of elements and Python
scalars is computed at once by the NumPy ufunc whose semantics lazyarr follows anyway
(elementwise.py), giving another element. Anything else (an element meeting a pending array,
a reduction, an index) sees an ordinary array: the element's graph node, a parameter leaf
bound to its value, is made on first use.
"""

from __future__ import annotations

import operator

import numpy as np

from .. import dtypes
from .array import Array, leaf_for

_PYTHON_SCALARS = (bool, int, float, complex)
# NumPy's scalar types of every non-complex lazyarr dtype: `float()` of them is NumPy's conversion.
REAL_SCALAR_TYPES = frozenset(np.dtype(dtype).type for dtype in dtypes.ALL if np.dtype(dtype).kind != "c")
INTEGER_SCALAR_TYPES = frozenset(np.dtype(dtype).type for dtype in dtypes.ALL if np.dtype(dtype).kind in "iu")

# NumPy's scalar operators run the same loops as its ufuncs, in a tenth of the time.
_OPERATORS = {
    np.add: operator.add, np.subtract: operator.sub, np.multiply: operator.mul,
    np.true_divide: operator.truediv, np.floor_divide: operator.floordiv, np.remainder: operator.mod,
    np.power: operator.pow, np.negative: operator.neg, np.positive: operator.pos, np.absolute: operator.abs,
    np.equal: operator.eq, np.not_equal: operator.ne, np.less: operator.lt, np.less_equal: operator.le,
    np.greater: operator.gt, np.greater_equal: operator.ge,
    np.bitwise_and: operator.and_, np.bitwise_or: operator.or_, np.bitwise_xor: operator.xor,
}
# Those that never warn (comparisons, bit operations): no need to silence floating-point errors.
_QUIET = frozenset({np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
                    np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.logical_and, np.logical_or,
                    np.logical_xor, np.logical_not, np.isnan, np.isinf, np.isfinite, np.signbit})


class Element(Array):
    """A 0-d array whose value is a known NumPy scalar; see the module docstring."""

    # _value: the NumPy scalar, or None once the element was written in place (`y += 1`),
    # after which it is an ordinary array. _leaf: its graph node, made on first use.
    __slots__ = ("_value", "_leaf")

    def __init__(self, value: np.generic):
        self._value = value
        self._leaf = None
        self._base = self._views = None

    @property
    def _node(self):
        leaf = self._leaf
        if leaf is None:
            leaf = self._leaf = leaf_for(np.asarray(self._value))
        return leaf

    @_node.setter
    def _node(self, node):
        self._leaf, self._value = node, None

    @property
    def shape(self) -> tuple[int, ...]:
        return ()

    @property
    def ndim(self) -> int:
        return 0

    @property
    def size(self) -> int:
        return 1

    @property
    def dtype(self) -> np.dtype:
        value = self._value
        return value.dtype if value is not None else self._leaf.dtype

    def __float__(self) -> float:
        value = self._value
        if type(value) in REAL_SCALAR_TYPES:
            return float(value)
        return Array.__float__(self)  # written in place, or complex: Python's TypeError, as for arrays

    def __int__(self) -> int:
        value = self._value
        return int(value.item()) if value is not None else Array.__int__(self)

    def __complex__(self) -> complex:
        value = self._value
        return complex(value.item()) if value is not None else Array.__complex__(self)

    def __bool__(self) -> bool:
        value = self._value
        return bool(value) if value is not None else Array.__bool__(self)

    def __index__(self) -> int:
        value = self._value
        if value is None or not dtypes.is_integer(value.dtype):
            return Array.__index__(self)
        return int(value)

    def rebind(self, other: Element) -> bool:
        """Take `other`'s value, cast to this element's dtype (an in-place operator's result,
        already checked castable); False when this element is viewed or no longer a scalar."""
        value = other._value
        if self._value is None or value is None or self._views is not None:
            return False
        if value.dtype != self._value.dtype:
            with np.errstate(all="ignore"):
                value = value.astype(self._value.dtype)
        self._value, self._leaf = value, None
        return True

    def item(self, *args):
        value = self._value
        return value.item() if value is not None and not args else Array.item(self, *args)


def compute(ufunc: np.ufunc, operands) -> Element | None:
    """`ufunc(*operands)` now, with NumPy, when every operand is an element or a Python or NumPy
    scalar (or a 0-d NumPy array) and at least one is an element; None otherwise (the op is
    recorded as usual).

    NumPy's scalar loops are the reference lazyarr's kernels match; its floating-point warnings
    are silenced as lazyarr's kernels raise none. Bad input raises NumPy's error."""
    values = []
    for operand in operands:
        kind = type(operand)
        if kind is Element:
            value = operand._value
            if value is None:
                return None
            values.append(value)
        elif kind in _PYTHON_SCALARS or (isinstance(operand, np.generic) and operand.dtype in dtypes.SUPPORTED):
            values.append(operand)
        elif kind is np.ndarray and not operand.ndim and operand.dtype in dtypes.SUPPORTED:
            values.append(operand[()])  # (NumPy's scalar comparisons hand their scalar over as one)
        else:
            return None
    function = _OPERATORS.get(ufunc, ufunc)
    try:
        result = function(*values) if ufunc in _QUIET else _silently(function, values)
    except (TypeError, ValueError, OverflowError):
        return None  # the recorded op raises lazyarr's own error, naming the call
    if not isinstance(result, np.generic) or result.dtype not in dtypes.SUPPORTED:
        return None  # the recorded op's own checks give lazyarr's answer or error
    return Element(result)


def _silently(function, values):
    """`function(*values)` with NumPy's floating-point errors ignored: `np.errstate(all="ignore")`.

    That context manager makes a new error state each time (about a microsecond, ten times the
    scalar operation); this one keeps, per error state in force, the state that ignores all
    errors, and sets it in NumPy's context variable for the call. Where NumPy lacks that
    variable (it is not public API), np.errstate itself."""
    if _ERROR_STATE is None:
        with np.errstate(all="ignore"):
            return function(*values)
    current = _ERROR_STATE.get()
    ignoring = _IGNORING.get(current)
    if ignoring is None:
        with np.errstate(all="ignore"):
            ignoring = _ERROR_STATE.get()  # NumPy's own state ignoring all, built from `current`
        if len(_IGNORING) >= 64:
            _IGNORING.clear()
        _IGNORING[current] = ignoring
    token = _ERROR_STATE.set(ignoring)
    try:
        return function(*values)
    finally:
        _ERROR_STATE.reset(token)


# NumPy's context variable holding the floating-point error state (NumPy >= 2.0), and per
# state in force the one that ignores all errors (keeping the state's other settings).
_ERROR_STATE = getattr(getattr(np, "_core", None) and getattr(np._core, "umath", None), "_extobj_contextvar", None)
_IGNORING: dict = {}
