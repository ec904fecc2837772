"""NumPy's dispatch protocols: `np.exp(lazy)` and `np.sum(lazy)` stay lazy.

`__array_ufunc__` maps a ufunc call to lazyarr's function of the same name, and its methods
(reduce, accumulate, reduceat, outer, at) to that function's ufunc methods (frontend/ufunc.py);
`__array_function__` maps `np.<name>` (and `np.linalg.<name>`, `np.fft.<name>`) to `la.<name>`.
What lazyarr does not implement (no such function, or a NotImplementedError for these
arguments) falls back to NumPy on evaluated inputs and returns NumPy's (eager) result, so
existing code keeps working.
An `out=` argument evaluates and writes into the given NumPy array, as NumPy does.
"""

from __future__ import annotations

import importlib

import numpy as np

from . import elementwise
from .array import Array

# ufunc method -> the keywords lazyarr's ufunc methods (frontend/ufunc.py) take
_METHOD_KEYWORDS = {
    "reduce": {"axis", "dtype", "keepdims", "initial", "where"},
    "accumulate": {"axis", "dtype"},
    "reduceat": {"axis", "dtype"},
    "outer": set(),
}
_NOT_DONE = object()


def _namespace(module_name: str = "lazyarr"):
    return importlib.import_module(module_name)


def to_numpy(value):
    """Replace lazy arrays (also inside lists, tuples and dicts) by their NumPy values."""
    if isinstance(value, Array):
        return value.numpy()
    if isinstance(value, (list, tuple)):
        return type(value)(to_numpy(item) for item in value)
    if isinstance(value, dict):
        return {key: to_numpy(item) for key, item in value.items()}
    return value


def _write_out(result, out):
    """NumPy's out= contract: evaluate, copy into the caller's array, return it."""
    targets = out if isinstance(out, tuple) else (out,)
    results = result if isinstance(result, tuple) else (result,)
    for target, value in zip(targets, results):
        np.copyto(target, np.asarray(value), casting="same_kind")
    return out if isinstance(out, tuple) and len(out) > 1 else targets[0]


def _own_ufuncs(operands: int) -> dict:
    """NumPy's own ufuncs of `operands` operands (the objects, not their names: another library's
    ufunc of the same name has other semantics) -> the elementwise function of that name."""
    return {
        ufunc: ufunc.__name__ for ufunc, _ in elementwise.UFUNCS.values()
        if ufunc.nin == operands and ufunc.__name__ in elementwise.UFUNCS and getattr(np, ufunc.__name__, None) is ufunc
    }


OWN_BINARY_UFUNCS = _own_ufuncs(2)
OWN_UNARY_UFUNCS = _own_ufuncs(1)  # (`np.exp(x)`: the C ufunc slot records them directly, fast_paths.py)


def _lazy_ufunc_call(ufunc, method, inputs, kwargs):
    """The lazy equivalent of `getattr(ufunc, method)(*inputs, **kwargs)`, or None. Only NumPy's
    own ufuncs: another library's of the same name (`scipy.special.log1p` keeps float64 for
    integers; `scipy.special.round`) has other semantics."""
    name = ufunc.__name__
    if getattr(np, name, None) is not ufunc:
        return None
    if method == "__call__" and set(kwargs) <= {"dtype"}:
        # dtype= naming the dtype the call gives anyway (dask's `partial(np.add, dtype=...)`) stays lazy
        if name == "matmul":
            result = _namespace().matmul(*inputs)
        elif name in elementwise.UFUNCS and len(inputs) == 2:  # (the memoized direct path first, as operators)
            result = elementwise.binary(name, *inputs)
        elif name in elementwise.UFUNCS and len(inputs) == 1:
            result = elementwise.unary(name, *inputs)
        elif name in elementwise.UFUNCS:
            result = elementwise.apply(name, *inputs)  # (apply names the wrong operand count)
        elif callable(composed := getattr(_namespace(), name, None)):
            result = composed(*inputs)  # a ufunc lazyarr composes of others (deg2rad, heaviside, divmod)
        else:
            return None
        wanted = kwargs.get("dtype")
        return result if wanted is None or np.dtype(wanted) == getattr(result, "dtype", None) else None
    if method in _METHOD_KEYWORDS and name in elementwise.UFUNCS and set(kwargs) <= _METHOD_KEYWORDS[method]:
        return getattr(getattr(elementwise, name), method)(*inputs, **kwargs)
    return None


def array_ufunc(self, ufunc, method, *inputs, out=None, **kwargs):
    if method == "__call__" and out is None and not kwargs and len(inputs) == 2:
        name = OWN_BINARY_UFUNCS.get(ufunc)
        if name is not None:  # hot: `np.float32(0.1) * x`, `np.add(x, y)` (a NumPy scalar's operator lands here)
            try:
                return elementwise.binary(name, *inputs)
            except NotImplementedError:
                pass  # NumPy answers below, eagerly
    name = ufunc.__name__
    if method == "at" and name in elementwise.UFUNCS and not kwargs and getattr(np, name, None) is ufunc:
        # in place on the lazy (or NumPy) first operand; NumPy's own at would update a copy
        return getattr(elementwise, ufunc.__name__).at(*inputs)
    try:
        result = _lazy_ufunc_call(ufunc, method, inputs, kwargs)
    except NotImplementedError:
        result = None  # e.g. np.ldexp.reduce of integers: NumPy can still answer, eagerly
    if result is None:
        result = getattr(ufunc, method)(*to_numpy(inputs), **to_numpy(kwargs))
    if out is not None:
        return _write_out(result, out)
    return result


def _lazy_function(func):
    """lazyarr's function with NumPy function `func`'s name and submodule, or None."""
    module = func.__module__ or "numpy"
    if module.startswith("numpy.linalg"):
        namespace = _namespace("lazyarr.linalg")
    elif module.startswith("numpy.fft"):
        namespace = _namespace("lazyarr.fft")
    else:
        namespace = _namespace()
    candidate = getattr(namespace, func.__name__, None)
    return candidate if callable(candidate) and not isinstance(candidate, type) else None


def array_function(self, func, types, args, kwargs):
    kwargs = dict(kwargs)
    out = kwargs.pop("out", None)
    lazy = _lazy_function(func)
    result = _NOT_DONE
    if lazy is not None:
        try:
            result = lazy(*args, **kwargs)
        except NotImplementedError:
            pass  # e.g. np.pad(mode="edge"): NumPy can still answer, eagerly
    if result is _NOT_DONE:
        result = func(*to_numpy(args), **to_numpy(kwargs))
    if out is not None:
        return _write_out(result, out)
    return result
