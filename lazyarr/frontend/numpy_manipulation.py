"""NumPy's array-building and rearranging functions beyond the array API (append, insert,
delete, flips, rotations, splits, index helpers, selection).

Each function follows NumPy 2's results (values, dtypes, shapes) and stays lazy where its
output shape is known without data. They live by purpose in
numpy_insert_delete.py (append, insert, delete), numpy_rearranging.py (flips, rot90,
rollaxis, h/v/dsplit, row_stack, block, resize, trim_zeros), numpy_selection.py (select,
choose, extract), numpy_in_place.py (place, putmask, copyto, fill_diagonal: they change their
first argument as `x[key] = value` does), numpy_index_helpers.py (tril/triu/diag/mask
indices), numpy_array_basics.py (ndim, shape, size, copy, asanyarray, ascontiguousarray,
apply_along_axis) and python_functions.py (piecewise, vectorize, frompyfunc, apply_over_axes:
Python functions called on elements or slices); this module only gathers their public names.
"""

from __future__ import annotations

from . import (
    numpy_array_basics,
    numpy_in_place,
    numpy_index_helpers,
    numpy_insert_delete,
    numpy_rearranging,
    numpy_selection,
    python_functions,
)
from .numpy_array_basics import *  # noqa: F403
from .numpy_in_place import *  # noqa: F403
from .numpy_index_helpers import *  # noqa: F403
from .numpy_insert_delete import *  # noqa: F403
from .numpy_rearranging import *  # noqa: F403
from .numpy_selection import *  # noqa: F403
from .python_functions import *  # noqa: F403

MODULES = (
    numpy_array_basics, numpy_in_place, numpy_index_helpers, numpy_insert_delete, numpy_rearranging, numpy_selection,
    python_functions,
)

__all__: list[str] = [name for module in MODULES for name in module.__all__]
