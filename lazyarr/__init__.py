"""lazyarr: NumPy-style code on lazy arrays, compiled like XLA.

    import lazyarr as la
    x = la.asarray(values)
    y = (la.exp(x) * 2 + 1).sum(axis=0)   # records HLO; nothing runs
    y.eval()                              # or np.asarray(y), print(y), float(y)

The namespace is NumPy's (for the functions lazyarr implements) and satisfies the Python
array API standard 2025.12. Every name here is re-exported from the module that defines it.
"""

import numpy as _np

from . import aot, dtypes, fft, linalg  # noqa: E402  (namespaces: la.aot and the array API extensions)
from ._profiler import profile
from .dtypes import (
    bool_ as bool,
)
from .dtypes import (
    byte,
    can_cast,
    cdouble,
    complex64,
    complex128,
    csingle,
    double,
    finfo,
    float16,
    float32,
    float64,
    half,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    int_,
    intc,
    intp,
    isdtype,
    long,
    longlong,
    result_type,
    short,
    single,
    ubyte,
    uint,
    uint8,
    uint16,
    uint32,
    uint64,
    uintc,
    uintp,
    ulong,
    ulonglong,
    ushort,
)
from .frontend import methods as _methods  # binds operators and methods onto Array
from .frontend.array import Array
from .frontend.autodiff import grad, value_and_grad, vjp
from .frontend.creation import *  # noqa: F403
from .frontend.elementwise import *  # noqa: F403
from .frontend.evaluation import (
    cache_info,
    clear_cache,
    eval,
    explain,
    get_backend_name,
    hlo_text,
    set_backend,
)
from .frontend.indexing import *  # noqa: F403
from .frontend.jit import ShapeDtypeStruct, jit
from .frontend.linalg import *  # noqa: F403
from .frontend.manipulation import *  # noqa: F403
from .frontend.namespace_info import __array_namespace_info__
from .frontend.numpy_functions import *  # noqa: F403  (bincount, quantiles, set operations, ...)
from .frontend.reductions import *  # noqa: F403
from .frontend.searching import *  # noqa: F403

bool_ = bool
ndarray = Array
newaxis = None
e = _np.e
pi = _np.pi
inf = _np.inf
nan = _np.nan

__array_api_version__ = "2025.12"
__version__ = "0.1.0"
