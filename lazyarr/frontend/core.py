"""Turning user values into graph nodes: the small vocabulary every frontend module uses.

`as_array` accepts what NumPy's asarray accepts (lazy arrays, NumPy arrays and scalars,
Python scalars, nested sequences); `node_of` gives the instruction behind it; `broadcast_to`,
`convert` and `scalar_constant` build the strict HLO the ops need. Inputs are copied on the
way in, so a lazy array never changes when the caller later mutates its NumPy array.
"""

from __future__ import annotations

import functools
import struct

import numpy as np

from .. import _flags, dtypes
from ..hlo import Instruction, Maker, constant, make
from ..shapes import broadcast_shapes
from .array import Array, default_device, leaf_for


def is_python_scalar(value) -> bool:
    return dtypes.weak_scalar_type(value) is not None


def from_numpy(value, dtype=None, *, where: str = "asarray", placed: bool = True) -> Array:
    """A lazy array bound to a private copy of `value` (anything np.array accepts), on the
    default device (`on_default_device`; `placed=False`: a host array, for a caller that puts
    it on a device of its own choosing)."""
    try:
        buffer = np.array(value, dtype=dtype, copy=True, order="C")
    except (TypeError, ValueError, OverflowError) as error:
        raise type(error)(f"{where}: cannot convert {type(value).__name__} to an array: {error}") from None
    if buffer.dtype in dtypes.SUPPORTED:  # (tested first: every call of asarray makes one)
        result = Array(leaf_for(buffer))
        return result if not placed or _flags.FLAGS.backend == "cpu" else on_default_device(result)
    if buffer.dtype == object:  # NumPy keeps a Python int beyond int64 and uint64 as an object
        too_large = next((item for item in buffer.flat if isinstance(item, int) and not -2**63 <= item < 2**64),
                         None)
        if too_large is not None:
            raise OverflowError(
                f"{where}: the Python integer {too_large} does not fit in int64 or uint64, and lazyarr has "
                "no object arrays; pass it as a float (or dtype=float64) to get a float64 array"
            )
    raise TypeError(
        f"{where}: dtype {buffer.dtype} is not supported; lazyarr supports "
        + ", ".join(str(d) for d in dtypes.ALL)
    )


def on_default_device(result: Array) -> Array:
    """`result`, made from host data (a NumPy array, a list), on the default device: with
    `--backend=gpu`, `la.asarray(numpy_array)` and `gpu_array + numpy_array` put the NumPy data
    on the GPU, as JAX and CuPy do. A 0-d value stays a host array: those mix with arrays on
    every device (as Python scalars do) and cost no copy."""
    if _flags.FLAGS.backend == "cpu" or not result.shape:
        return result
    device = default_device()
    return result if device == "cpu" else result.to_device(device)


def as_array(value, *, where: str = "asarray", placed: bool = True) -> Array:
    """`value` as a lazy array (lazy arrays pass through unchanged); host data goes to the
    default device unless `placed` is False (a caller that only reads its dtype or value)."""
    if isinstance(value, Array):
        return value
    if isinstance(value, (list, tuple)) and contains_lazy(value):
        return _stack_nested(value, where)
    return from_numpy(value, where=where, placed=placed)


def contains_lazy(value) -> bool:
    """Whether a (nested) list or tuple holds a lazy array anywhere (iterative walk)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Array):
            return True
        if isinstance(item, (list, tuple)):
            stack.extend(item)
    return False


def _stack_nested(value, where):
    """[lazy, lazy, ...] -> a lazy stack (no evaluation), recursively."""
    items = [
        _stack_nested(item, where) if isinstance(item, (list, tuple)) else as_array(item, where=where)
        for item in value
    ]
    if not items:
        return from_numpy(np.zeros((0,)), where=where)
    result_dtype = dtypes.result_type(*items)
    shape = broadcast_shapes(*(item.shape for item in items), where=where)
    if any(item.shape != shape for item in items):
        raise ValueError(
            f"{where}: setting an array element with a sequence: inhomogeneous shapes "
            + " ".join(str(item.shape) for item in items)
        )
    nodes = [make("reshape", [convert(item._node, result_dtype)], shape=(1,) + shape) for item in items]
    return Array(make("concatenate", nodes, dimension=0))


def node_of(value, *, where: str = "asarray") -> Instruction:
    return as_array(value, where=where)._node


def scalar_constant(value, dtype) -> Instruction:
    """A 0-d constant `value` converted to `dtype` as NumPy's astype converts it."""
    dtype = np.dtype(dtype)
    kind = type(value)
    if kind in (int, bool):
        return _python_scalar_constant(kind, value, dtype)
    if kind in (float, complex):
        # Keyed by the bits: -0.0 and 0.0 (equal) and NaNs of either sign stay distinct.
        bits = struct.pack("<2d", value.real, value.imag)
        return _python_scalar_constant(kind, bits, dtype)
    if isinstance(value, np.generic) and value.dtype.kind in "biufc":
        # a count in `mean`; a NumPy scalar operand (elementwise.numpy_scalar_operand)
        return _numpy_scalar_constant(value.dtype, value.tobytes(), dtype)
    return constant(np.asarray(value).astype(dtype))


@functools.lru_cache(maxsize=1024)
def _numpy_scalar_constant(source, raw: bytes, dtype) -> Instruction:
    """Constants from NumPy scalars, keyed by their bytes (so -0.0 and NaNs stay distinct)."""
    return constant(np.frombuffer(raw, source).reshape(()).astype(dtype))


@functools.lru_cache(maxsize=1024)
def _python_scalar_constant(kind, key, dtype) -> Instruction:
    """Constants from Python scalars are hot in user code (`x * 2`): build each once."""
    if kind in (float, complex):
        real, imaginary = struct.unpack("<2d", key)
        value = complex(real, imaginary) if kind is complex else real
    else:
        value = key
    if kind is not complex and _converts_quietly(value, dtype):
        return constant(value, dtype)  # the same value as astype's, without its errstate (~1 us)
    with np.errstate(all="ignore"):
        return constant(np.asarray(value).astype(dtype))


def _converts_quietly(value, dtype: np.dtype) -> bool:
    """Whether NumPy converts the Python bool, int or float `value` to `dtype` exactly as
    `np.asarray(value).astype(dtype)` does, with no warning or error: within the range of a
    float `dtype` (or not finite), of an integer one, or a bool to bool."""
    kind = dtype.kind
    if kind == "f":
        if type(value) is float:
            return not abs(value) > _largest_finite(dtype)  # (NaN: not greater)
        return abs(value) < _EXACT_INTEGERS and abs(value) <= _largest_finite(dtype)  # an int or bool
    if kind in "iu" and type(value) is not float:
        low, high = dtypes.integer_range(dtype)
        return low <= value <= high
    return kind == "b" and type(value) is bool


_EXACT_INTEGERS = 1 << 62  # (ints np.asarray keeps as int64, whatever astype then rounds)


@functools.cache
def _largest_finite(dtype: np.dtype) -> float:
    return float(np.finfo(dtype).max)


def convert(node: Instruction, dtype) -> Instruction:
    """`node` converted to `dtype` (no instruction when it already has it)."""
    if node.dtype is dtype:
        return node
    if not isinstance(dtype, np.dtype):
        dtype = np.dtype(dtype)
    if node.dtype == dtype:
        return node
    converter = _CONVERTERS.get(dtype)
    if converter is None:
        converter = _CONVERTERS[dtype] = Maker("convert", dtype=dtype)
    return converter(node)


_CONVERTERS: dict[np.dtype, Maker] = {}  # a dtype -> its prepared convert (few: one per dtype)


def broadcast_to(node: Instruction, shape: tuple[int, ...]) -> Instruction:
    """NumPy-style broadcast of `node` to `shape` (trailing dims aligned), as strict HLO."""
    shape = tuple(shape)
    if node.shape == shape:
        return node
    prepared = _BROADCASTS.get((node.shape, shape))
    if prepared is not None:  # hot: `w + b` with a 0-d `b`, `x - m[:, None]`, each loop step
        squeeze, stretch = prepared
        return stretch(node if squeeze is None else squeeze(node))
    offset = len(shape) - node.ndim
    if offset < 0:
        raise ValueError(f"broadcast_to: cannot broadcast shape {node.shape} to {shape}")
    for axis, size in enumerate(node.shape):
        if size not in (1, shape[offset + axis]):
            raise ValueError(f"broadcast_to: cannot broadcast shape {node.shape} to {shape}")
    # Drop size-1 dims that will stretch, so the broadcast maps only real dims.
    kept = [axis for axis, size in enumerate(node.shape) if size == shape[offset + axis]]
    squeeze = None
    if len(kept) != node.ndim:
        squeeze = Maker("reshape", shape=tuple(node.shape[axis] for axis in kept))
    stretch = Maker("broadcast", shape=shape, dimensions=tuple(offset + axis for axis in kept))
    if len(_BROADCASTS) >= 4096:
        _BROADCASTS.clear()
    _BROADCASTS[node.shape, shape] = squeeze, stretch
    return stretch(node if squeeze is None else squeeze(node))


# (operand shape, target shape) -> the prepared (reshape or None, broadcast) of broadcast_to.
_BROADCASTS: dict[tuple, tuple] = {}


def wrap(node: Instruction) -> Array:
    return Array(node)
