"""The lazy array: a handle on one HLO instruction, and the points where evaluation happens.

An `Array` holds an interned `Instruction`. Operations build new instructions; nothing runs
until a value is needed (`.eval()`, `la.eval(...)`, `np.asarray`, `print`, `float`, `bool`,
`int`, `.item()`, `.tolist()`, `__dlpack__`). Evaluating compiles the graph once for all
requested arrays; each array then holds its buffer through a fresh parameter leaf and drops
its graph, and the old instruction stays bound to the buffer so that other graphs sharing it
reuse the value instead of recomputing it.

Buffers are never mutated after they are bound: inputs are copied on the way in and views
handed out are read-only. `a[i] = v` and `a += b` rebind `a` to a new graph node.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable

import numpy as np

from .. import dtypes
from ..compile import evaluate_graph
from ..hlo import Instruction, fresh_parameter
from . import tracing

# Instruction -> the buffer holding its value: materialized inputs and evaluated values.
_BOUND: weakref.WeakKeyDictionary[Instruction, np.ndarray] = weakref.WeakKeyDictionary()


def bound_buffer(node: Instruction) -> np.ndarray | None:
    return _BOUND.get(node)


def leaf_for(buffer: np.ndarray) -> Instruction:
    """A fresh parameter leaf bound to `buffer` (which must never be written again)."""
    buffer.flags.writeable = False
    leaf = fresh_parameter(buffer.shape, buffer.dtype)
    _BOUND[leaf] = buffer
    return leaf


def evaluate_arrays(arrays: Iterable[Array]) -> None:
    """Evaluate every unevaluated array among `arrays` as one module, sharing common work."""
    pending: list[Array] = []
    seen: set[int] = set()
    for array in arrays:
        if not isinstance(array, Array):
            raise TypeError(f"eval: expected lazyarr arrays, got {type(array).__name__}")
        if id(array._node) not in seen and array._node not in _BOUND:
            seen.add(id(array._node))
            pending.append(array)
    if not pending:
        return
    nodes = [array._node for array in pending]
    tracing.check_concrete(nodes, _BOUND.__contains__)  # inside la.jit: a clear error, not a crash
    results = evaluate_graph(nodes, _BOUND.get)
    by_node = {}
    for node, result in zip(nodes, results):
        buffer = np.asarray(result)
        buffer.flags.writeable = False
        if node.opcode != "constant":  # interned constants are shared by every graph: keep them constants
            _BOUND[node] = buffer
        by_node[id(node)] = leaf_for(buffer)
    for array in arrays:
        if id(array._node) in by_node:
            array._node = by_node[id(array._node)]


class Array:
    """A lazy n-dimensional array; see the module docstring. Build one with `la.asarray`."""

    __slots__ = ("_node", "__weakref__")
    __array_priority__ = 100
    __hash__ = None  # elementwise __eq__, as NumPy arrays

    def __init__(self, node: Instruction):
        if not isinstance(node, Instruction):
            raise TypeError("Array wraps an HLO Instruction; use lazyarr.asarray to make arrays")
        self._node = node

    # -- metadata: never evaluates ---------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._node.shape

    @property
    def dtype(self) -> np.dtype:
        return self._node.dtype

    @property
    def ndim(self) -> int:
        return len(self._node.shape)

    @property
    def size(self) -> int:
        return self._node.size

    @property
    def itemsize(self) -> int:
        return self._node.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self._node.size * self._node.dtype.itemsize

    @property
    def device(self) -> str:
        return "cpu"

    def to_device(self, device, /, *, stream=None) -> Array:
        if device not in ("cpu", None):
            raise ValueError(f"to_device: unknown device {device!r}; available: 'cpu'")
        return self

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object (a 0-d lazyarr array)")
        return self.shape[0]

    @property
    def is_evaluated(self) -> bool:
        """Whether the value is already computed (no work left for `.eval()`)."""
        return self._node in _BOUND

    # -- evaluation points -----------------------------------------------------------------
    def eval(self) -> Array:
        """Compute the value now (one compiled module); returns self, now holding a buffer."""
        evaluate_arrays([self])
        return self

    def numpy(self) -> np.ndarray:
        """The value as a read-only NumPy array."""
        evaluate_arrays([self])
        view = _BOUND[self._node].view()
        view.flags.writeable = False
        return view

    def __array__(self, dtype=None, copy=None):
        value = self.numpy()
        if dtype is not None and np.dtype(dtype) != value.dtype:
            if copy is False:
                raise ValueError("__array__: a dtype change needs a copy, but copy=False")
            return value.astype(dtype)
        if copy:
            return value.copy()
        return value

    def _scalar(self, kind):
        if self.size != 1:
            raise TypeError(
                f"only arrays of size 1 can be converted to Python {kind.__name__}; "
                f"shape is {self.shape}"
            )
        return kind(self.numpy().reshape(()).item())

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError(
                "The truth value of an array with more than one element is ambiguous. "
                "Use a.any() or a.all()"
            )
        return bool(self.numpy().reshape(()))

    def __float__(self) -> float:
        return self._scalar(float)

    def __int__(self) -> int:
        return self._scalar(int)

    def __complex__(self) -> complex:
        return self._scalar(complex)

    def __index__(self) -> int:
        if not dtypes.is_integer(self.dtype):
            raise TypeError(f"only integer arrays can be used as an index, not {self.dtype}")
        if self.ndim:
            raise TypeError(f"only 0-d integer arrays can be used as an index, shape {self.shape}")
        return int(self.numpy())

    def item(self, *args):
        return self.numpy().item(*args)

    def tolist(self):
        return self.numpy().tolist()

    def __repr__(self) -> str:
        return "Array" + np.array_repr(self.numpy())[len("array"):]

    def __str__(self) -> str:
        return str(self.numpy())

    def __format__(self, spec: str) -> str:
        if self.ndim == 0:
            return format(self.numpy().item(), spec)
        return format(str(self), spec)

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d lazyarr array")
        from .indexing import getitem

        return (getitem(self, index) for index in range(self.shape[0]))

    # -- interop -------------------------------------------------------------------------------
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        value = self.numpy()
        if copy:
            value = value.copy()
        kwargs = {}
        if max_version is not None:
            kwargs["max_version"] = max_version
        if dl_device is not None:
            kwargs["dl_device"] = dl_device
        if copy is not None:
            kwargs["copy"] = copy
        # Read-only buffers cannot be exported with the legacy (unversioned) protocol.
        if not value.flags.writeable and (max_version is None or max_version < (1, 0)):
            value = value.copy()
        return value.__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU, device 0

    def __array_namespace__(self, *, api_version=None):
        import lazyarr

        if api_version not in (None, "2021.12", "2022.12", "2023.12", "2024.12"):
            raise ValueError(f"unsupported array API version {api_version!r}")
        return lazyarr

    def __copy__(self) -> Array:
        return self  # immutable

    def __deepcopy__(self, memo) -> Array:
        return self

    def __reduce__(self):
        return (_rebuild, (self.numpy(),))


def _rebuild(value):
    return Array(leaf_for(np.array(value, copy=True)))
