"""Shared hypothesis strategies: dtypes, shapes (0-d, empty, size-1 dims) and edge values."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lazyarr import dtypes

ALL_DTYPES = list(dtypes.ALL)
REAL_DTYPES = [dtypes.bool_, *dtypes.INTEGER, *dtypes.FLOATING]
NUMERIC_DTYPES = list(dtypes.NUMERIC)
FLOAT_DTYPES = list(dtypes.FLOATING)
INEXACT_DTYPES = list(dtypes.FLOATING + dtypes.COMPLEX)

# Small shapes keep the suite fast; 0-d, empty and size-1 dims are all reachable.
shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5)
nonempty_shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=5)


def edge_values(dtype: np.dtype) -> list:
    """Values that break naive implementations: NaN, infinities, -0.0, integer extremes."""
    if dtype == np.bool_:
        return [False, True]
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return [0, 1, -1 if info.min < 0 else 2, info.min, info.max]
    if np.issubdtype(dtype, np.floating):
        info = np.finfo(dtype)
        return [0.0, -0.0, np.nan, np.inf, -np.inf, float(info.max), float(info.tiny),
                float(info.smallest_subnormal), 1.0, -1.0]
    real = edge_values(np.dtype(dtype.char.lower()) if dtype.kind == "c" else dtype)
    return [complex(value, 0.0) for value in real] + [complex(np.nan, 1.0), complex(1.0, np.inf)]


def elements(dtype: np.dtype, *, allow_edge=True, min_value=None, max_value=None):
    """Elements of `dtype`: ordinary values mixed with the dtype's edge values."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        base = hnp.from_dtype(dtype, allow_nan=allow_edge, allow_infinity=allow_edge,
                              min_value=min_value, max_value=max_value, allow_subnormal=allow_edge)
    elif dtype.kind == "c":
        base = hnp.from_dtype(dtype, allow_nan=allow_edge, allow_infinity=allow_edge,
                              max_magnitude=max_value)
    elif dtype.kind in "iu":
        base = hnp.from_dtype(dtype, min_value=min_value, max_value=max_value)
    else:
        base = hnp.from_dtype(dtype)
    if not allow_edge:
        return base
    return st.one_of(base, st.sampled_from(edge_values(dtype)).map(lambda v: np.array(v).astype(dtype)[()]))


def arrays(dtype, shape=shapes, **element_options):
    return hnp.arrays(np.dtype(dtype), shape, elements=elements(dtype, **element_options))
