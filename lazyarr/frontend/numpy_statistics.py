"""NumPy's statistics and signal functions beyond the array API: weighted averages,
covariance, NaN-ignoring variances, histograms, differences, integration, convolution.

Each function follows NumPy 2's results (values, dtypes, shapes) and stays lazy where its
output shape is known without data. The functions live in modules with one purpose each;
this module gathers their public names for `numpy_functions.py`:

- weighted_statistics: average, cov, corrcoef
- nan_statistics: nanvar, nanstd, nancumsum, nancumprod
- histogram_edges: histogram_bin_edges, digitize
- histograms: histogram, histogramdd, histogram2d
- differences: gradient, trapezoid, ediff1d
- convolution: convolve, correlate
"""

from __future__ import annotations

from . import convolution, differences, histogram_edges, histograms, nan_statistics, weighted_statistics
from .convolution import *  # noqa: F403
from .differences import *  # noqa: F403
from .histogram_edges import *  # noqa: F403
from .histograms import *  # noqa: F403
from .nan_statistics import *  # noqa: F403
from .weighted_statistics import *  # noqa: F403

__all__: list[str] = [
    name
    for module in (convolution, differences, histogram_edges, histograms, nan_statistics, weighted_statistics)
    for name in module.__all__
]
