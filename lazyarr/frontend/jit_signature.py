"""The signature of a `la.jit` call: static arguments, leaf keys, ShapeDtypeStruct.

`la.jit` keys its executables by (argument treedef, per-leaf signature, static arguments,
backend). The backend follows the devices of the argument buffers (compile.backend_for): GPU
arrays run on the GPU backend, host arrays on the default one. This module computes that key
for a call, with the argument buffers, in one pass (`call_signature`, the hot path of every
jitted call); it also holds how static arguments are found and split off a call, how a Python
scalar is keyed, how two keys are told apart in words (for --explain_cache_misses and errors),
and the abstract array `ShapeDtypeStruct` that `f.lower(...)` accepts.
"""

from __future__ import annotations

import inspect
import operator
from dataclasses import dataclass

import numpy as np

from .. import _flags, dtypes, shapes
from ..backends import get_backend, to_device
from ..compile import backend_for, device_of_buffers
from . import pytree
from .array import Array, default_device, evaluate_arrays
from .templated_calls import scalar_from_key, scalar_key


class ShapeDtypeStruct:
    """An array's shape and dtype without data, standing for an argument in `f.lower(...)`.

    >>> import lazyarr as la, numpy as np
    >>> la.ShapeDtypeStruct((2, 3), np.float32)
    ShapeDtypeStruct(shape=(2, 3), dtype=float32)
    """

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        try:
            shape = (operator.index(shape),) if not isinstance(shape, (tuple, list)) else tuple(
                operator.index(size) for size in shape
            )
        except TypeError:
            raise TypeError(f"ShapeDtypeStruct: shape must be an int or a tuple of ints, got {shape!r}") from None
        if any(size < 0 for size in shape):
            raise ValueError(f"ShapeDtypeStruct: negative dimensions are not allowed, got shape {shape}")
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "dtype", dtypes.as_dtype(dtype, where="ShapeDtypeStruct"))

    def __setattr__(self, name, value):
        raise AttributeError("ShapeDtypeStruct is immutable")

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return shapes.size_of(self.shape)

    def __eq__(self, other):
        return isinstance(other, ShapeDtypeStruct) and (self.shape, self.dtype) == (other.shape, other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype))

    def __repr__(self):
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype})"


@dataclass(frozen=True)
class JitCacheInfo:
    """Counters of one jitted function (`f.cache_info()`).

    hits: calls served by a cached executable; misses: calls that traced; traces: runs of the
    function on tracers (misses, plus lower and explain); compiles: traces whose module was not
    already in the compile cache; entries: signatures cached now.
    """

    hits: int
    misses: int
    traces: int
    compiles: int
    entries: int


def signature_or_none(fun) -> inspect.Signature | None:
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):  # some builtins and callables have none
        return None


class StaticArguments:
    """Which arguments of a jitted function are static, and how a call splits into a dynamic
    pytree and hashable static values.

    `static_argnums` and `static_argnames` complete each other through the signature, as in
    JAX: `static_argnums=1` also makes the keyword form `f(x, n=3)` static, and the reverse.
    """

    def __init__(self, fun, name: str, static_argnums, static_argnames):
        self.name = name
        self.signature = signature_or_none(fun)
        numbers = _as_tuple(static_argnums, int, "static_argnums", name)
        names = _as_tuple(static_argnames, str, "static_argnames", name)
        positions, names = self._completed(numbers, names)
        self.positions, self.names = frozenset(positions), frozenset(names)
        self.sorted_positions = tuple(sorted(positions))
        self.none = not positions and not names

    def _completed(self, numbers, names):
        if self.signature is None:
            if any(number < 0 for number in numbers):
                raise ValueError(f"la.jit({self.name}): negative static_argnums need a function with a signature")
            return set(numbers), set(names)
        parameters = list(self.signature.parameters.values())
        positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        variadic = any(p.kind is p.VAR_POSITIONAL for p in parameters)
        any_keyword = any(p.kind is p.VAR_KEYWORD for p in parameters)
        positions = set()
        for number in numbers:
            position = number + len(positional) if number < 0 and not variadic else number
            if position < 0 or (position >= len(positional) and not variadic):
                raise ValueError(
                    f"la.jit({self.name}): static_argnums {number} is out of range: {self.name}{self.signature} "
                    f"takes {len(positional)} positional argument(s)"
                )
            positions.add(position)
        for keyword in names:
            if keyword not in self.signature.parameters and not any_keyword:
                raise ValueError(
                    f"la.jit({self.name}): static_argnames {keyword!r} is not a parameter of "
                    f"{self.name}{self.signature}"
                )
        names = set(names)
        for position, parameter in enumerate(positional):
            if parameter.kind is parameter.POSITIONAL_OR_KEYWORD:
                if position in positions:
                    names.add(parameter.name)
                elif parameter.name in names:
                    positions.add(position)
        return positions, names

    def tree_of(self, args: tuple, kwargs: dict):
        """(dynamic pytree, hashable static part) of a call; plain `args` when nothing is static."""
        if self.none and not kwargs:
            return args, None
        positions = self.positions
        if positions:
            dynamic_args = tuple(arg for index, arg in enumerate(args) if index not in positions)
            static_args = tuple(
                (index, type(args[index]), args[index]) for index in self.sorted_positions if index < len(args)
            )
        else:
            dynamic_args, static_args = args, ()
        dynamic_kwargs, static_kwargs = {}, []
        for keyword in sorted(kwargs):  # sorted: f(a=1, b=2) and f(b=2, a=1) share one signature
            value = kwargs[keyword]
            if keyword in self.names:
                static_kwargs.append((keyword, type(value), value))
            else:
                dynamic_kwargs[keyword] = value
        return (dynamic_args, dynamic_kwargs), (static_args, tuple(static_kwargs))

    def merge(self, tree, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """The call's (args, kwargs) with the dynamic part taken from `tree` (of `tree_of`'s shape)."""
        if self.none and not kwargs:
            return tree, {}
        dynamic_args, dynamic_kwargs = tree
        remaining = iter(dynamic_args)
        call_args = tuple(args[index] if index in self.positions else next(remaining) for index in range(len(args)))
        call_kwargs = {keyword: kwargs[keyword] if keyword in self.names else dynamic_kwargs[keyword]
                       for keyword in kwargs}
        return call_args, call_kwargs

    def check_call(self, args: tuple, kwargs: dict) -> None:
        """A clear TypeError for a call the function's signature does not accept."""
        if self.signature is None:
            return
        try:
            self.signature.bind(*args, **kwargs)
        except TypeError as error:
            raise TypeError(f"la.jit({self.name}): {error} (signature {self.name}{self.signature})") from None

    def unhashable_error(self, args: tuple, kwargs: dict) -> TypeError:
        """The error for a static argument that cannot key the cache."""
        candidates = [(f"argument {index}", args[index]) for index in self.sorted_positions if index < len(args)]
        candidates += [(f"argument {keyword!r}", value) for keyword, value in kwargs.items() if keyword in self.names]
        for label, value in candidates:
            try:
                hash(value)
            except TypeError:
                hint = ("make it a regular (traced) argument" if hasattr(value, "shape")
                        else "pass a tuple instead of a list, or a frozenset instead of a set")
                return TypeError(
                    f"la.jit({self.name}): static {label} must be hashable (static values key the compile "
                    f"cache); got {type(value).__name__} {value!r:.80}: {hint}"
                )
        return TypeError(f"la.jit({self.name}): an argument could not be hashed")


def _as_tuple(value, kind, what: str, name: str) -> tuple:
    wanted = "an int" if kind is int else "a str"
    problem = TypeError(f"la.jit({name}): {what} must be {wanted} or a sequence of them, got {value!r}")
    if isinstance(value, str) and kind is not str:
        raise problem
    items = (value,) if isinstance(value, kind) else value
    try:
        items = tuple(items)
    except TypeError:
        raise problem from None
    if any(not isinstance(item, kind) or isinstance(item, bool) for item in items):
        raise problem
    return items


def describe_differences(old_key: tuple, new_key: tuple) -> list[str]:
    """How two jit signatures differ, in words (for --explain_cache_misses and errors)."""
    old_tree, old_leaves, old_statics, old_backend = old_key
    new_tree, new_leaves, new_statics, new_backend = new_key
    reasons = []
    if old_backend != new_backend:
        reasons.append(f"backend {old_backend} -> {new_backend}")
    if old_statics != new_statics:
        reasons.append(f"static arguments {_statics_text(old_statics)} -> {_statics_text(new_statics)}")
    if old_tree != new_tree:
        reasons.append(f"argument structure differs ({len(old_leaves)} -> {len(new_leaves)} leaves)")
    else:
        reasons += [
            f"argument leaf {index}: {_leaf_text(old)} -> {_leaf_text(new)}"
            for index, (old, new) in enumerate(zip(old_leaves, new_leaves)) if old != new
        ]
    return reasons or ["same signature"]


def _leaf_text(signature: tuple) -> str:
    if isinstance(signature[0], type):  # a Python scalar: (type, value) or (type, bits...)
        kind, *value = signature
        shown = [scalar_from_key(part) for part in value]
        return f"Python {kind.__name__} {shown[0] if len(shown) == 1 else complex(*shown)}"
    shape, dtype = signature
    return f"{np.dtype(dtype)}{list(shape)}"


def _statics_text(statics) -> str:
    if statics is None:
        return "none"
    positional, keywords = statics
    parts = [f"#{index}={value!r}" for index, _, value in positional]
    parts += [f"{keyword}={value!r}" for keyword, _, value in keywords]
    return "(" + ", ".join(parts) + ")"


# -- the signature of one call: the hot path of every jitted call --------------------------------

_FLAT_TREEDEFS = [(tuple, (pytree.LEAF,) * count) for count in range(16)]


def call_signature(statics: StaticArguments, args: tuple, kwargs: dict, *, abstract: bool = False):
    """(cache key, argument buffers, the caller's NumPy arrays among them, dynamic tree) of a call.

    One pass over the leaves, no graph building. Lazy array arguments are evaluated (together).
    With `abstract` (lower, explain) leaves need only a shape and dtype: nothing is evaluated,
    and ShapeDtypeStructs are accepted.
    """
    if statics.none and not kwargs:
        fast = _flat_arrays_signature(statics.name, args)
        if fast is not None:
            return fast
    tree, static_values = statics.tree_of(args, kwargs)
    leaves, treedef = pytree.flatten(tree)
    signature, buffers, user_arrays, lazy = [], [], [], []
    host = True  # every buffer is a NumPy array
    for leaf in leaves:
        kind = type(leaf)
        if kind is Array:
            node = leaf._node
            signature.append((node.shape, node.dtype))
            buffer = node._bound
            if buffer is None and not abstract:
                lazy.append((len(buffers), leaf))
            elif type(buffer) is not np.ndarray:
                host = False
            buffers.append(buffer)
        elif kind is np.ndarray and leaf.dtype in dtypes.SUPPORTED:
            signature.append((leaf.shape, leaf.dtype))
            buffers.append(leaf)
            user_arrays.append(leaf)
        elif kind is float or kind is int or kind is bool or kind is complex:
            signature.append(scalar_key(leaf))
        else:
            buffer = _other_leaf(statics.name, leaf, args, kwargs, abstract)
            if buffer is None:
                signature.append(scalar_key(leaf))
                continue
            signature.append((buffer.shape, buffer.dtype))
            buffers.append(buffer)
            host = host and isinstance(buffer, np.ndarray)
            if isinstance(leaf, np.ndarray):  # a subclass (memmap, ...): may share the caller's memory
                user_arrays.append(buffer)
    if lazy:
        evaluate_arrays([leaf for _, leaf in lazy])
        for index, leaf in lazy:
            buffers[index] = leaf._node._bound
            host = host and type(buffers[index]) is np.ndarray
    if abstract:  # lower/explain: unevaluated arrays and ShapeDtypeStructs have no buffer yet
        buffers = [buffer for buffer in buffers if buffer is not None and not isinstance(buffer, ShapeDtypeStruct)]
    elif user_arrays and _flags.FLAGS.backend != "cpu":
        buffers, user_arrays, host = _numpy_on_default_device(statics.name, buffers, user_arrays, host)
    backend = _call_backend(statics.name, buffers, host)
    return (treedef, tuple(signature), static_values, backend), buffers, user_arrays, tree


def _call_backend(name: str, buffers: list, host: bool) -> str:
    """The backend that runs a call on `buffers` (`host`: all are NumPy arrays): the default
    one for host buffers when it computes on the host, else the one of the buffers' device."""
    global _HOST_DEFAULT
    if host:
        flags, default = _HOST_DEFAULT
        if flags is not _flags.FLAGS:  # (flags are replaced, never changed, when set)
            flags = _flags.FLAGS
            default = flags.backend if get_backend(flags.backend).device == "cpu" else None
            _HOST_DEFAULT = (flags, default)  # one assignment: another thread sees old or new
        if default is not None:
            return default
    return backend_for(buffers, where=f"la.jit({name})")


# (the flags it was found for, the default backend if it computes on the host, else None)
_HOST_DEFAULT: tuple = (None, None)


def _flat_arrays_signature(name: str, args: tuple):
    """`call_signature` of the commonest call, a few evaluated lazyarr or NumPy arrays, without
    a pytree walk; None when another kind of argument is there."""
    if len(args) >= len(_FLAT_TREEDEFS):
        return None
    signature, buffers, user_arrays = [], [], []
    host = True
    for arg in args:
        kind = type(arg)
        if kind is Array:
            node = arg._node
            buffer = node._bound
            if buffer is None:
                return None
            if type(buffer) is not np.ndarray:
                host = False
            signature.append((node.shape, node.dtype))
            buffers.append(buffer)
        elif kind is np.ndarray and arg.dtype in dtypes.SUPPORTED:
            signature.append((arg.shape, arg.dtype))
            buffers.append(arg)
            user_arrays.append(arg)
        else:
            return None
    if user_arrays and _flags.FLAGS.backend != "cpu":
        buffers, user_arrays, host = _numpy_on_default_device(name, buffers, user_arrays, host)
    flags, default = _HOST_DEFAULT  # (_call_backend's host case, inline: every call asks)
    if not (host and flags is _flags.FLAGS and default is not None):
        default = _call_backend(name, buffers, host)
    return (_FLAT_TREEDEFS[len(args)], tuple(signature), None, default), buffers, user_arrays, args


def _numpy_on_default_device(name: str, buffers: list, user_arrays: list, host: bool) -> tuple[list, list, bool]:
    """The caller's NumPy arguments on the device the call runs on, when the default device is
    not the host (`--backend=gpu`: `f(numpy_array)` runs on the GPU, as `la.asarray` puts NumPy
    data there): the device of its other array arguments, else the default one. 0-d NumPy
    arguments stay host arrays, which every device takes; beside arrays put on the host
    (`device="cpu"`) NumPy arguments stay there too."""
    moved = {id(array) for array in user_arrays if array.ndim}
    others = [buffer for buffer in buffers if id(buffer) not in moved]
    device = device_of_buffers(others, where=f"la.jit({name})") if others else None
    if device is None:
        device = default_device()
    if device == "cpu" or not moved:
        return buffers, user_arrays, host
    buffers = [to_device(buffer, device) if id(buffer) in moved else buffer for buffer in buffers]
    user_arrays = [array for array in user_arrays if id(array) not in moved]
    return buffers, user_arrays, False


def _other_leaf(name: str, leaf, args, kwargs, abstract: bool):
    """The buffer for a less common leaf (None for a Python scalar), or a TypeError."""
    if dtypes.weak_scalar_type(leaf) is not None:
        return None
    if isinstance(leaf, ShapeDtypeStruct) and abstract:
        return leaf
    if isinstance(leaf, (np.ndarray, np.generic)):
        buffer = np.asarray(leaf)
        if buffer.dtype in dtypes.SUPPORTED:
            return buffer
        problem = f"has dtype {buffer.dtype}, which lazyarr does not support"
    elif isinstance(leaf, ShapeDtypeStruct):
        problem = "is a ShapeDtypeStruct, which has no data (pass it to .lower() or .explain())"
    else:
        problem = (f"is a {type(leaf).__name__}; arguments must be arrays (lazyarr or NumPy), Python "
                   "scalars, or tuples, lists and dicts of them (mark it static with static_argnums)")
    raise TypeError(f"la.jit({name}): argument {position_of(leaf, args, kwargs)} {problem}")


def position_of(leaf, args, kwargs, prefix: str = "args") -> str:
    """Where `leaf` sits among the arguments, as indexing (`args[1]['w']`), for error messages."""
    for name, tree in ((prefix, args), ("kwargs", kwargs)):
        leaves, _ = pytree.flatten(tree)
        for candidate, path in zip(leaves, pytree.leaf_paths(tree)):
            if candidate is leaf:
                return name + path
    return "?"
