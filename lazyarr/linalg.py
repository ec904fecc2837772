"""lazyarr.linalg: the array API `linalg` extension with numpy.linalg's names and signatures.

>>> import lazyarr as la
>>> la.linalg.inv(la.asarray([[2.0, 0.0], [0.0, 4.0]]))
"""

from .frontend.linalg_extension import *  # noqa: F403
from .frontend.linalg_extension import __all__  # noqa: F401
