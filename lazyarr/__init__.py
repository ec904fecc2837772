"""lazyarr: NumPy-style code on lazy arrays, compiled like XLA.

    import lazyarr as la
    x = la.asarray(values)
    y = (la.exp(x) * 2 + 1).sum(axis=0)   # records HLO; nothing runs
    y.eval()                              # or np.asarray(y), print(y), float(y)

The namespace is NumPy's (for the functions lazyarr implements) and satisfies the Python
array API standard 2024.12. Every name here is re-exported from the module that defines it.
"""

import numpy as _np

from . import aot, dtypes, fft, linalg  # noqa: E402  (namespaces: la.aot and the array API extensions)
from ._profiler import profile
from .dtypes import (
    bool_ as bool,
)
from .dtypes import (
    can_cast,
    complex64,
    complex128,
    finfo,
    float16,
    float32,
    float64,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    isdtype,
    result_type,
    uint8,
    uint16,
    uint32,
    uint64,
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
from .frontend.reductions import *  # noqa: F403
from .frontend.searching import *  # noqa: F403

bool_ = bool
ndarray = Array
newaxis = None
e = _np.e
pi = _np.pi
inf = _np.inf
nan = _np.nan

__array_api_version__ = "2024.12"
__version__ = "0.1.0"
