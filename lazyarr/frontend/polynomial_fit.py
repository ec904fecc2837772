"""polyfit: NumPy's least-squares polynomial fit, step by step, lazily.

NumPy builds the Vandermonde matrix of `x`, weights its rows, scales its columns to unit norm
and solves with `lstsq`, whose `rcond` zeroes singular values at or below `rcond` times the
largest; the scaled coefficients are unscaled. lazyarr solves the same scaled system with the
pseudo-inverse of the same cutoff (`linalg.pinv(lhs, rcond)`), the same minimum-norm solution:
values agree with NumPy's to rounding, not bit for bit (another SVD). The result stays lazy.

NumPy warns (RankWarning) when the fit's matrix is rank deficient, which only its values tell;
lazyarr does not evaluate for it. `full=True` (residuals, rank, singular values) and `cov` raise
NotImplementedError.
"""

from __future__ import annotations

import operator

import numpy as np

from . import elementwise as ew
from .core import as_array
from .linalg_extension import pinv
from .polynomials import vander
from .reductions import sum as sum_

__all__ = ["polyfit"]


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Least-squares fit of a polynomial of degree `deg` to points (x, y): its coefficients,
    highest power first (one column per column of a 2-D `y`).

    >>> import lazyarr as la
    >>> [round(c, 6) for c in la.polyfit(la.asarray([0.0, 1.0, 2.0]), la.asarray([1.0, 3.0, 5.0]), 1).tolist()]
    [2.0, 1.0]
    """
    if full or cov:
        raise NotImplementedError("polyfit: full=True and cov are not supported yet (they need the fit's rank)")
    order = operator.index(deg) + 1
    if deg < 0:
        raise ValueError("polyfit: expected deg >= 0")
    x = ew.add(as_array(x, where="polyfit"), 0.0)  # NumPy's `asarray(x) + 0.0`: inexact
    y = ew.add(as_array(y, where="polyfit"), 0.0)
    if x.ndim != 1:
        raise TypeError("polyfit: expected 1D vector for x")
    if x.size == 0:
        raise TypeError("polyfit: expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError("polyfit: expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("polyfit: expected x and y to have same length")
    if rcond is None:
        rcond = x.shape[0] * np.finfo(x.dtype).eps
    lhs = vander(x, order)
    rhs = y
    if w is not None:
        w = ew.add(as_array(w, where="polyfit"), 0.0)
        if w.ndim != 1:
            raise TypeError("polyfit: expected a 1-d array for weights")
        if w.shape[0] != y.shape[0]:
            raise TypeError("polyfit: expected w and y to have the same length")
        lhs = ew.multiply(lhs, w[:, None])
        rhs = ew.multiply(rhs, w[:, None] if rhs.ndim == 2 else w)
    scale = ew.sqrt(sum_(ew.multiply(lhs, lhs), axis=0))
    lhs = ew.divide(lhs, scale)
    coefficients = pinv(lhs, rcond) @ rhs
    return ew.divide(coefficients.T, scale).T if coefficients.ndim == 2 else ew.divide(coefficients, scale)

