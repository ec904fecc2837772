"""lazyarr.fft: the array API `fft` extension with numpy.fft's names and signatures.

>>> import lazyarr as la
>>> la.fft.fft(la.asarray([1.0, 0.0, 0.0, 0.0]))
"""

from .frontend.fft_extension import *  # noqa: F403
from .frontend.fft_extension import __all__  # noqa: F401
