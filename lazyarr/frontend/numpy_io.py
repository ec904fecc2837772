"""NumPy's files, printing and small utilities on lazy arrays.

Each function keeps NumPy 2's arguments, results and errors. Saving and printing evaluate;
reading delegates the file formats to NumPy and returns lazy arrays of NumPy's dtype and shape
(copies); the rest reads metadata or view relationships and never evaluates. This module only
gathers the public names of the small modules that define them (one purpose each), so that
numpy_functions re-exports them:

    file_io                save, savez, savez_compressed, load (.npy; .npz as a lazy NpzFile)
    text_io                savetxt, loadtxt, genfromtxt, fromregex, fromfile, frombuffer, fromstring
    printing               array2string, array_repr, array_str, format_float_positional,
                           format_float_scientific, base_repr, binary_repr, typename,
                           set_printoptions, get_printoptions, printoptions (NumPy's own options)
    array_utilities        asarray_chkfinite, asfortranarray, require, isfortran, iterable,
                           ndenumerate, ndindex
    memory_sharing         may_share_memory, shares_memory (from lazyarr's view relationships)
    floating_point_errors  seterr, geterr, errstate, seterrcall, geterrcall (NumPy's settings;
                           lazyarr computes silently; 'raise' and 'call' are refused)
    configuration          show_config
"""

from __future__ import annotations

from . import (
    array_utilities,
    configuration,
    file_io,
    floating_point_errors,
    memory_sharing,
    printing,
    text_io,
)
from .array_utilities import *  # noqa: F403
from .configuration import *  # noqa: F403
from .file_io import *  # noqa: F403
from .floating_point_errors import *  # noqa: F403
from .memory_sharing import *  # noqa: F403
from .printing import *  # noqa: F403
from .text_io import *  # noqa: F403

MODULES = (array_utilities, configuration, file_io, floating_point_errors, memory_sharing, printing, text_io)

__all__: list[str] = [name for module in MODULES for name in module.__all__]
