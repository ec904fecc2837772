"""NumPy's functions that call Python functions on array elements: piecewise, vectorize,
frompyfunc, apply_over_axes.

NumPy calls the function on values: each element (vectorize, frompyfunc) or the elements a
condition selects (piecewise). lazyarr first traces it (elementwise_tracing.py): it runs
once on stand-ins without values, and when every step it records is elementwise, that graph is
applied to whole arrays. An elementwise graph gives each element exactly what a call on that
element (or on any selection of elements) gives, so the result is NumPy's, and it is lazy,
compiled and fused with what follows, also inside `la.jit`. A function that asks for values
(`if v > 0`, `math.exp(v)`, `float(v)`), reduces, reshapes or indexes is not traced; it gets
NumPy's semantics on the values instead (see each function), and inside `la.jit`, on traced
arrays, that raises TracedValueError saying why the function could not be traced.

What a traced function sees is a lazy array standing for the values, once or twice (a
print or a counter in it runs then, as in `la.jit`), never the values themselves: a function
that would raise on an element NumPy never gives it cannot raise here.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..hlo import constant, make
from . import elementwise as ew
from .array import Array, evaluate_arrays
from .core import as_array, broadcast_to, convert, from_numpy, wrap
from .elementwise_tracing import NotElementwise, check_python_promotion, same_structure, spread, trace
from .histogram_edges import require_values

__all__ = ["apply_over_axes", "frompyfunc", "piecewise", "vectorize"]


# -- piecewise ---------------------------------------------------------------------------------


def _is_array_like(item) -> bool:
    return isinstance(item, (list, np.ndarray, Array))


def _conditions(condlist, array: Array) -> Array:
    """NumPy's reading of `condlist`: one condition (a bool, or an array whose first item is not
    itself an array) is a list of one; then `asarray(condlist, dtype=bool)`, kept lazy."""
    if isinstance(condlist, (Array, np.ndarray)):
        if condlist.ndim == 0 or condlist.shape[0] == 0:  # NumPy reads condlist[0]
            raise IndexError(f"piecewise: index 0 is out of bounds for condlist of shape {condlist.shape}")
        single = condlist.ndim < 2 and array.ndim != 0  # (its first item would be a scalar)
    else:
        single = np.isscalar(condlist) or (not _is_array_like(condlist[0]) and array.ndim != 0)
    if single:
        condlist = [condlist]
    if isinstance(condlist, Array) or any(isinstance(item, Array) for item in condlist):
        stacked = as_array(condlist, where="piecewise")
    else:
        stacked = from_numpy(np.asarray(condlist, dtype=bool), where="piecewise")
    return wrap(convert(stacked._node, dtypes.bool_))


def _check_condition(condition: Array, array: Array) -> None:
    """NumPy's check of a boolean index over x's leading dimensions (a length 0 passes: NumPy
    takes such a mask as empty integer indices)."""
    if condition.ndim > array.ndim or any(size not in (0, array.shape[axis])
                                          for axis, size in enumerate(condition.shape)):
        raise IndexError(f"piecewise: boolean index did not match indexed array: condition of shape "
                         f"{condition.shape} for x of shape {array.shape}")


def _selection_mask(condition: Array, array: Array) -> Array:
    """The condition (over x's leading dimensions) broadcast over x."""
    trailing = (1,) * (array.ndim - condition.ndim)
    return wrap(broadcast_to(make("reshape", [condition._node], shape=condition.shape + trailing), array.shape))


def _traced_piece(function, array: Array, condition: Array, args, kwargs) -> Array:
    """function(x[condition]) spread over all of x, when the function is elementwise: traced on
    stand-ins of two lengths for the selected elements, which must give the same graph (a
    function reading the selection's size, `v / v.size`, gives two)."""
    rest = array.shape[condition.ndim:]
    graphs = []
    for length in (2, 3):
        traced = trace(function, [((length,) + rest, array.dtype)], "piecewise",
                       call=lambda function, arrays: function(arrays[0], *args, **kwargs))
        if traced.is_tuple:
            raise NotElementwise("it returned a tuple")
        graphs.append(spread(traced, [array._node], condition.ndim))
    if not same_structure(graphs[0], graphs[1]):
        raise NotElementwise("its graph depends on how many elements it is given")
    return wrap(graphs[0][0])


def _fill_value(value, array: Array) -> Array | None:
    """A non-callable funclist entry converted as NumPy's `y[cond] = value` converts it, and
    broadcast over x; None when it can only fit the selection's data-dependent shape."""
    if isinstance(value, Array):
        node = convert(value._node, array.dtype)
    else:
        buffer = np.empty(np.shape(value), dtype=array.dtype)
        buffer[...] = value  # NumPy's conversion: OverflowError, truncation, ...
        node = constant(buffer)
    shape = node.shape
    while len(shape) > array.ndim and shape[0] == 1:
        shape = shape[1:]
    if len(shape) > array.ndim or any(size not in (1, array.shape[array.ndim - len(shape) + axis])
                                      for axis, size in enumerate(shape)):
        return None
    return wrap(broadcast_to(make("reshape", [node], shape=shape), array.shape))


def piecewise(x, condlist, funclist, *args, **kw) -> Array:
    """A piecewise-defined function of `x`, as NumPy's: where `condlist[k]` holds, the result is
    `funclist[k]` (a scalar, or a callable given the selected elements and `*args, **kw`); one
    extra entry in `funclist` is the value where no condition holds; elsewhere 0. The result
    has x's shape and dtype (values converted as NumPy's `y[cond] = ...`).

    Design: a callable is first traced (the module docstring): when elementwise, it is
    applied to all of x and the pieces are chosen with `where`, so the result is lazy and
    `la.jit` traces it; values outside the condition are computed and dropped, and lazyarr's
    arithmetic never raises on them (log of a negative is NaN, discarded). A function that is
    not elementwise (`v - v.mean()`, `np.full(len(v), ...)`), or asks for values, gets NumPy's
    semantics: it is called on `x[condlist[k]]`, which evaluates the condition (the selection's
    size is data); inside `la.jit` on traced conditions that raises TracedValueError.

    >>> import lazyarr as la
    >>> x = la.asarray([-2.0, 0.5, 3.0])
    >>> la.piecewise(x, [x < 0, x > 1], [lambda v: -v, lambda v: v * 10, 0.25]).tolist()
    [2.0, 0.25, 30.0]
    """
    from .creation import zeros_like
    from .manipulation_joining import concatenate
    from .reductions import any as any_

    array = as_array(x, where="piecewise")
    count = len(funclist)
    conditions = _conditions(condlist, array)
    given = conditions.shape[0]
    if given == count - 1:  # the "otherwise" condition
        otherwise = ew.logical_not(any_(conditions, axis=0, keepdims=True))
        conditions = concatenate([conditions, otherwise], axis=0)
    elif given != count:
        raise ValueError(f"piecewise: with {given} condition(s), either {given} or {given + 1} functions are expected")
    result = zeros_like(array)
    for index, function in enumerate(funclist):
        condition = conditions[index]
        filled = None if callable(function) else _fill_value(function, array)  # (NumPy converts it first)
        _check_condition(condition, array)
        if condition.size == 0:
            continue  # selects nothing
        mask = _selection_mask(condition, array)
        if not callable(function):
            if filled is None:
                result[condition] = function  # fits the selection's count only: NumPy's way
            else:
                result = ew.where(mask, filled, result)
            continue
        try:
            piece = _traced_piece(function, array, condition, args, kw)
        except NotElementwise as reason:
            require_values("piecewise", [condition], f"funclist[{index}] cannot be traced as an elementwise "
                           f"function ({reason}), so it is called on x[condlist[{index}]] as in NumPy, whose "
                           "size depends on the values; make it elementwise, or call it outside la.jit")
            selected = array[condition]
            if selected.size > 0:
                result[condition] = function(selected, *args, **kw)
            continue
        result = ew.where(mask, wrap(convert(piece._node, array.dtype)), result)
    return result


# -- vectorize, frompyfunc ---------------------------------------------------------------------


def _python_number_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype of the Python number NumPy's vectorize hands its function for an element
    (`astype(object)`): int for bool and integers (uint64 kept: an int64 cannot hold its top
    half), float, complex."""
    if dtype.kind == "b" or (dtype.kind in "iu" and dtype != np.uint64):
        return np.dtype(np.int64)
    return {"u": np.dtype(np.uint64), "f": np.dtype(np.float64), "c": np.dtype(np.complex128)}[dtype.kind]


def _wrapped(result):
    """NumPy's result as lazyarr arrays where lazyarr has the dtype (object and string arrays
    stay NumPy's)."""
    if isinstance(result, tuple):
        return tuple(_wrapped(part) for part in result)
    if isinstance(result, np.ndarray) and result.dtype in dtypes.ALL:
        return from_numpy(result, where="vectorize")
    return result


class vectorize(np.vectorize):  # noqa: N801 (NumPy's name)
    """NumPy's vectorize: `pyfunc` applied to each element of the broadcast arguments (not the
    `excluded` ones), with the output dtypes `otypes` or those of its result for the first
    element; with a generalized ufunc `signature`, to each core slice. Same arguments, errors
    and attributes as `np.vectorize` (it is a subclass; the decorator form works too).

    Design: the function is traced (the module docstring) on 0-d stand-ins: one of each
    argument's dtype gives the output dtypes as NumPy's call on the first elements (NumPy
    scalars) gives them, one of the dtype of the Python number NumPy passes per element
    (`astype(object)`: int, float, complex) gives the values; an elementwise graph is then
    applied to the whole arrays and converted to the output dtypes: lazy, compiled, fused,
    traceable by `la.jit`, NumPy's values. A graph that mixes an element with a NumPy scalar of
    another precision (`v * np.float32(2)`, float32 for a Python number) is not used. Otherwise
    (Python control flow on the value, `math` functions, strings, ...) the arguments are
    evaluated and NumPy's vectorize runs on their values, so any function NumPy accepts gives
    NumPy's answer; inside `la.jit` on traced arguments that raises TracedValueError. Where the
    traced graph differs from Python's numbers: integer intermediates beyond int64 wrap (NumPy
    raises OverflowError converting most of them), integers above 2**53 in true division and
    Python's complex abs and division (other algorithms than NumPy's loops) may differ by a
    rounding, a branch on the element's Python type (`isinstance(v, float)`) sees a lazyarr
    array, and where Python raises (ZeroDivisionError, complex powers of negative floats)
    lazyarr gives inf or NaN. The function runs twice at trace time (without values), not once
    per element. With a `signature`, it is called on each core slice, lazily (as
    `apply_along_axis`), and the results are stacked.

    >>> import lazyarr as la
    >>> clipped = la.vectorize(lambda v, limit: v if v < limit else limit)
    >>> clipped(la.asarray([1.0, 5.0]), 3.0).tolist()
    [1.0, 3.0]
    >>> la.vectorize(lambda v: v * 2 + 1)(la.asarray([1, 2])).tolist()
    [3, 5]
    """

    def __call__(self, *args, **kwargs):
        if self.pyfunc is np._NoValue:  # the decorator form: this call gives the function
            return super().__call__(*args, **kwargs)
        function, arguments = self._positional(args, kwargs)
        if self.signature is not None:
            return self._call_with_signature(function, arguments)
        if not arguments:
            return function()
        try:
            arrays = [as_array(argument, where="vectorize") for argument in arguments]
        except (TypeError, ValueError):
            return self._on_values(function, arguments)  # e.g. strings: NumPy's object arrays
        try:
            return self._traced(function, arrays)
        except NotElementwise as reason:
            require_values("vectorize", arrays, f"the function cannot be traced into an elementwise graph ({reason}), "
                           "and calling it per element needs the values; make it traceable (lazyarr or NumPy "
                           "operations, la.where instead of if), or call it outside la.jit")
            return self._on_values(function, arrays)

    def _positional(self, args, kwargs):
        """NumPy's handling of `excluded` and keyword arguments: (a function of the vectorized
        arguments only, those arguments)."""
        excluded = self.excluded
        if not kwargs and not excluded:
            return self.pyfunc, list(args)
        names = [name for name in kwargs if name not in excluded]
        positions = [index for index in range(len(args)) if index not in excluded]
        given = list(args)

        def function(*vectorized):
            for number, index in enumerate(positions):
                given[index] = vectorized[number]
            kwargs.update(zip(names, vectorized[len(positions):]))
            return self.pyfunc(*given, **kwargs)

        return function, [args[index] for index in positions] + [kwargs[name] for name in names]

    def _output_dtypes(self, function, arrays, shape) -> list[np.dtype]:
        """`otypes`, or NumPy's: the dtypes of the function's results on NumPy scalars of the
        arguments' dtypes (a trace on 0-d stand-ins of those dtypes)."""
        if self.otypes is not None:
            return [np.dtype(code) for code in self.otypes]
        if math.prod(shape) == 0 or any(array.size == 0 for array in arrays):
            raise ValueError("vectorize: cannot call `vectorize` on size 0 inputs unless `otypes` is set")
        native = trace(function, [((), array.dtype) for array in arrays], "vectorize")
        return [node.dtype for node in native.results]

    def _traced(self, function, arrays):
        from .creation import zeros

        shape = np.broadcast_shapes(*[array.shape for array in arrays])
        output_dtypes = self._output_dtypes(function, arrays, shape)
        if any(dtype not in dtypes.ALL for dtype in output_dtypes):
            raise NotElementwise(f"lazyarr has no dtype {output_dtypes} for its results")
        if math.prod(shape) == 0:
            results = [zeros(shape, dtype) for dtype in output_dtypes]
            return results[0] if len(results) == 1 else tuple(results)
        stand_ins = [((), _python_number_dtype(array.dtype)) for array in arrays]
        traced = trace(function, stand_ins, "vectorize")
        if len(traced.results) != len(output_dtypes):
            raise NotElementwise(f"it returned {len(traced.results)} results, not {len(output_dtypes)}")
        check_python_promotion(traced, [leaf for leaf, array in zip(traced.leaves, arrays) if array.dtype == np.bool_])
        inputs = [broadcast_to(convert(array._node, dtype), shape) for array, (_, dtype) in zip(arrays, stand_ins)]
        nodes = spread(traced, inputs, len(shape))
        results = [wrap(convert(node, dtype)) for node, dtype in zip(nodes, output_dtypes)]
        return results[0] if len(results) == 1 else tuple(results)

    def _on_values(self, function, arguments):
        """NumPy's vectorize on the arguments' values (evaluated together)."""
        from .interop import to_numpy

        evaluate_arrays([argument for argument in arguments if isinstance(argument, Array)])
        numpy_vectorize = np.vectorize(function, otypes=self.otypes, cache=self.cache, signature=self.signature)
        return _wrapped(numpy_vectorize(*to_numpy(list(arguments))))

    def _call_with_signature(self, function, arguments):
        from .vectorize_signature import call_with_signature

        return call_with_signature(self, function, arguments)


def frompyfunc(func, /, nin, nout, **kwargs):
    """NumPy's frompyfunc: a ufunc calling `func` on each element and returning object arrays.
    lazyarr has no object dtype, so this is NumPy's own ufunc: called on lazy arrays it
    evaluates them (NumPy's dispatch falls back to NumPy) and returns NumPy's object array;
    inside `la.jit`, on traced arrays, it raises TracedValueError. For a typed, lazy,
    traceable result use `la.vectorize(func, otypes=...)`.

    >>> import lazyarr as la
    >>> la.frompyfunc(lambda a, b: a * b, 2, 1)(la.asarray([1, 2]), 3).tolist()
    [3, 6]
    """
    return np.frompyfunc(func, nin, nout, **kwargs)


# -- apply_over_axes ---------------------------------------------------------------------------


def apply_over_axes(func, a, axes) -> Array:
    """`func(a, axis)` applied for each axis in turn, as NumPy's: a result with one dimension
    fewer gets it back (expand_dims), so the dimensions are kept; another shape raises
    ValueError. Lazy when `func` is (la.sum, np.sum on lazy arrays, ...).

    >>> import lazyarr as la
    >>> la.apply_over_axes(la.sum, la.asarray([[1, 2], [3, 4]]), [0, 1]).tolist()
    [[10]]
    """
    from .manipulation_layout import expand_dims

    value = as_array(a, where="apply_over_axes")
    ndim = a.ndim  # NumPy reads it from `a` itself (a list raises AttributeError there too)
    if np.ndim(axes) == 0:
        axes = (axes,)
    for axis in axes:
        if axis < 0:
            axis = ndim + axis
        result = func(value, axis)
        if result.ndim == value.ndim:
            value = as_array(result, where="apply_over_axes")
            continue
        result = expand_dims(as_array(result, where="apply_over_axes"), axis)
        if result.ndim != value.ndim:
            raise ValueError("apply_over_axes: function is not returning an array of the correct shape")
        value = result
    return value
