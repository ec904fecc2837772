"""NumPy functions beyond the array API that ordinary NumPy code uses, gathered for export.

Each lives in a module with one purpose; this module only collects their public names so that
`lazyarr/__init__.py` re-exports them in one line (and binds `Array.flat`, by importing
flat_indexing).
"""

from . import (
    array_equality,
    bit_packing,
    counting,
    flat_indexing,
    from_iterable,
    index_arithmetic,
    interpolation,
    matrix_diagonals,
    numpy_io,
    numpy_manipulation,
    numpy_math,
    numpy_statistics,
    partitioning,
    quantiles,
    set_operations,
)
from .array_equality import *  # noqa: F403
from .bit_packing import *  # noqa: F403
from .counting import *  # noqa: F403
from .flat_indexing import *  # noqa: F403
from .from_iterable import *  # noqa: F403
from .index_arithmetic import *  # noqa: F403
from .interpolation import *  # noqa: F403
from .matrix_diagonals import *  # noqa: F403
from .numpy_io import *  # noqa: F403
from .numpy_manipulation import *  # noqa: F403
from .numpy_math import *  # noqa: F403
from .numpy_statistics import *  # noqa: F403
from .partitioning import *  # noqa: F403
from .quantiles import *  # noqa: F403
from .set_operations import *  # noqa: F403

__all__ = [
    name
    for module in (
        array_equality, bit_packing, counting, flat_indexing, from_iterable, index_arithmetic, interpolation,
        matrix_diagonals, numpy_io, numpy_manipulation, numpy_math, numpy_statistics, partitioning, quantiles,
        set_operations,
    )
    for name in module.__all__
]
