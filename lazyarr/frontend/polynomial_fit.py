"""polyfit: NumPy's least-squares polynomial fit, step by step, lazily where NumPy's result
shape allows it.

NumPy builds the Vandermonde matrix of `x`, weights its rows, scales its columns to unit norm
and solves with `lstsq`, whose `rcond` zeroes singular values at or below `rcond` times the
largest; the scaled coefficients are unscaled. lazyarr solves the same scaled system with the
pseudo-inverse of the same cutoff (`linalg.pinv(lhs, rcond)`), the same minimum-norm solution:
values agree with NumPy's to rounding, not bit for bit (another SVD). The result stays lazy.

What needs the fit's rank, a property of the values, evaluates:

- `full=True` returns (coefficients, residuals, rank, singular values, rcond) as NumPy: the
  residuals' shape depends on the rank (empty unless the fit has full rank and more points
  than coefficients), so the coefficients, the residuals (the squared norm of `rhs - lhs @ c`
  of the scaled system), the singular values (of the scaled matrix, `svdvals`) and the rank
  (those above `rcond` times the largest) are computed in one module, and the rank is a NumPy
  int32 as NumPy's;
- `cov=True` scales the covariance by `residuals / (len(x) - order)`, so it evaluates the same
  way (and warns RankWarning for a rank-deficient fit, as NumPy does, since the rank is then
  known); `cov='unscaled'` needs no rank and stays lazy: `inv(lhs.T @ lhs) / outer(scale,
  scale)`, NumPy's expression.

Inside `la.jit`, full=True and cov=True on traced data raise TracedValueError. Without `full`
or `cov`, NumPy warns (RankWarning) for a rank-deficient fit, which only its values tell;
lazyarr does not evaluate for it.
"""

from __future__ import annotations

import operator
import warnings

import numpy as np

from .. import dtypes
from . import elementwise as ew
from . import tracing
from .core import as_array
from .creation import zeros
from .evaluation import eval as evaluate
from .histogram_edges import require_values
from .linalg_extension import inv, pinv, svdvals
from .manipulation_layout import reshape
from .polynomials import vander
from .reductions import count_nonzero
from .reductions import sum as sum_

__all__ = ["polyfit"]


def _squared_residuals(lhs, rhs, solution):
    """Per column of `rhs`, the squared 2-norm of `rhs - lhs @ solution` (real, as lstsq's)."""
    difference = ew.subtract(rhs, lhs @ solution)
    if dtypes.is_complex(difference.dtype):
        squares = ew.add(ew.square(ew.real(difference)), ew.square(ew.imag(difference)))
    else:
        squares = ew.square(difference)
    return sum_(squares, axis=0)


def _fit_rank(singular_values, rcond):
    """lstsq's rank: how many singular values exceed `rcond` times the largest (lazy, int64)."""
    return count_nonzero(ew.greater(singular_values, ew.multiply(singular_values[0], rcond)))


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Least-squares fit of a polynomial of degree `deg` to points (x, y): its coefficients,
    highest power first (one column per column of a 2-D `y`); with `full=True` also the
    residuals, rank, singular values and rcond, with `cov` the covariance of the coefficients,
    as NumPy's (see the module docstring for what evaluates).

    >>> import lazyarr as la
    >>> [round(c, 6) for c in la.polyfit(la.asarray([0.0, 1.0, 2.0]), la.asarray([1.0, 3.0, 5.0]), 1).tolist()]
    [2.0, 1.0]
    """
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
    weights = None
    if w is not None:
        weights = ew.add(as_array(w, where="polyfit"), 0.0)
        if weights.ndim != 1:
            raise TypeError("polyfit: expected a 1-d array for weights")
        if weights.shape[0] != y.shape[0]:
            raise TypeError("polyfit: expected w and y to have the same length")
        lhs = ew.multiply(lhs, weights[:, None])
        rhs = ew.multiply(rhs, weights[:, None] if rhs.ndim == 2 else weights)
    scale = ew.sqrt(sum_(ew.multiply(lhs, lhs), axis=0))
    lhs = ew.divide(lhs, scale)
    solution = pinv(lhs, rcond) @ rhs
    coefficients = ew.divide(solution.T, scale).T if solution.ndim == 2 else ew.divide(solution, scale)
    if not full and not cov:
        return coefficients
    covariance = None
    if cov:
        covariance = ew.divide(inv(lhs.T @ lhs), ew.multiply(scale[:, None], scale[None, :]))
        if cov == "unscaled":
            return coefficients, covariance if y.ndim == 1 else covariance[:, :, None]
        if x.shape[0] <= order:
            try:
                evaluate(covariance)  # NumPy inverts first: a singular matrix raises LinAlgError before this
            except tracing.TracedValueError:
                pass  # (traced data: no values to invert)
            raise ValueError("polyfit: the number of data points must exceed order to scale the covariance matrix")
    require_values("polyfit", [x, y, weights], "full=True and cov=True need the fit's rank, a property of the "
                   "values (the residuals' shape depends on it); use cov='unscaled', or call it outside la.jit")
    singular_values = svdvals(lhs)
    rank = _fit_rank(singular_values, rcond)
    residuals = _squared_residuals(lhs, rhs, solution)
    evaluate(*[part for part in (coefficients, residuals, rank, singular_values, covariance) if part is not None])
    rank = np.int32(int(rank))
    if rank != order or x.shape[0] <= order:
        residuals = zeros(0, residuals.dtype)  # lstsq's "as documented": empty unless full rank, M > N
    elif residuals.ndim == 0:
        residuals = reshape(residuals, (1,))
    if full:
        return coefficients, residuals, rank, singular_values, rcond
    if rank != order:
        warnings.warn("Polyfit may be poorly conditioned", np.exceptions.RankWarning, stacklevel=2)
    factor = ew.divide(residuals, x.shape[0] - order)
    if y.ndim == 1:
        return coefficients, ew.multiply(covariance, factor)
    return coefficients, ew.multiply(covariance[:, :, None], factor)
