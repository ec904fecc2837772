"""vectorize with a generalized ufunc signature ('(m,n),(n)->(m)'): NumPy's loop over the
broadcast loop dimensions, calling the function on each core slice, lazily.

As `apply_along_axis` does, each call gets lazy slices of the (broadcast) arguments and the
results are stacked without evaluation, so the whole loop is one graph and `la.jit` traces
it when the function itself does not ask for values. The core dimension sizes, the checks and
their errors are NumPy's (`_update_dim_sizes`, `_create_arrays`); results are converted to
`otypes`, or to the first call's dtypes, and broadcast to their core shape as NumPy's
`output[index] = result` does.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..hlo import make
from .array import Array
from .axis_positions import fitted
from .core import as_array, convert, wrap

__all__: list[str] = []


def _update_core_sizes(sizes: dict, array: Array, core: tuple) -> None:
    """NumPy's `_update_dim_sizes`: record (and check) the sizes of `array`'s core dimensions."""
    if not core:
        return
    if array.ndim < len(core):
        raise ValueError(f"vectorize: {array.ndim}-dimensional argument does not have enough dimensions for all "
                         f"core dimensions {core!r}")
    for name, size in zip(core, array.shape[array.ndim - len(core):]):
        if sizes.setdefault(name, size) != size:
            raise ValueError(f"vectorize: inconsistent size for core dimension {name!r}: {size!r} vs {sizes[name]!r}")


def _stacked(pieces: list, loop: tuple, core_shape: tuple):
    """One array of shape loop + core_shape from the per-iteration results (C order)."""
    rows = [make("reshape", [piece], shape=(1,) + core_shape) for piece in pieces]
    joined = rows[0] if len(rows) == 1 else make("concatenate", rows, dimension=0)
    return wrap(make("reshape", [joined], shape=loop + core_shape))


def call_with_signature(vectorized, function, arguments):
    """`vectorized` (a la.vectorize with a signature) called with the positional `arguments`."""
    from .creation import zeros
    from .manipulation_layout import broadcast_to

    input_cores, output_cores = vectorized._in_and_out_core_dims
    if len(arguments) != len(input_cores):
        raise TypeError(f"vectorize: wrong number of positional arguments: expected {len(input_cores)!r}, "
                        f"got {len(arguments)!r}")
    otypes = vectorized.otypes
    if otypes is not None and any(np.dtype(code) not in dtypes.ALL for code in otypes):
        return vectorized._on_values(function, arguments)  # object or string results: NumPy's arrays
    try:
        arrays = [as_array(argument, where="vectorize") for argument in arguments]
    except (TypeError, ValueError):
        return vectorized._on_values(function, arguments)  # e.g. strings: NumPy's object arrays
    sizes: dict = {}
    loop_shapes = []
    for array, core in zip(arrays, input_cores):
        _update_core_sizes(sizes, array, core)
        loop_shapes.append(array.shape[:array.ndim - len(core)])
    loop = np.broadcast_shapes(*loop_shapes)
    arrays = [broadcast_to(array, loop + tuple(sizes[name] for name in core))
              for array, core in zip(arrays, input_cores)]
    count = len(output_cores)
    pieces: list[list] = [[] for _ in range(count)]
    result_dtypes = core_shapes = None
    for index in np.ndindex(*loop):
        results = function(*(array[index] for array in arrays))
        given = len(results) if isinstance(results, tuple) else 1
        if given != count:
            raise ValueError(f"vectorize: wrong number of outputs from pyfunc: expected {count!r}, got {given!r}")
        results = [as_array(result, where="vectorize") for result in (results if count > 1 else (results,))]
        if core_shapes is None:
            for result, core in zip(results, output_cores):
                _update_core_sizes(sizes, result, core)
            core_shapes = [tuple(sizes[name] for name in core) for core in output_cores]
            result_dtypes = [np.dtype(otypes[number]) if otypes is not None else result.dtype
                             for number, result in enumerate(results)]
        for number, result in enumerate(results):
            node = convert(result._node, result_dtypes[number])
            pieces[number].append(fitted(node, core_shapes[number], "vectorize", advanced=False))
    if core_shapes is None:  # the function was never called
        if otypes is None:
            raise ValueError("vectorize: cannot call `vectorize` on size 0 inputs unless `otypes` is set")
        if any(name not in sizes for core in output_cores for name in core):
            raise ValueError("vectorize: cannot call `vectorize` with a signature including new output dimensions "
                             "on size 0 inputs")
        outputs = [zeros(loop + tuple(sizes[name] for name in core), np.dtype(code))
                   for core, code in zip(output_cores, otypes)]
    else:
        outputs = [_stacked(parts, loop, shape) for parts, shape in zip(pieces, core_shapes)]
    return outputs[0] if count == 1 else tuple(outputs)
