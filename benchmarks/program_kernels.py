"""The whole programs of benchmarks/programs.py: ordinary NumPy code, written once against `xp`.

Every function here takes the array namespace `xp` (numpy, lazyarr or jax.numpy) as its first
argument and uses nothing else of it, so the same code runs on all three; Python loops, Python
scalars and methods of the arrays are as a NumPy user writes them. Nothing here times or checks:
programs.py does that.

Where lazyarr lacks a NumPy feature, the program uses another ordinary NumPy spelling and the
comment says so.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import workloads  # noqa: E402  (a sibling module, found through the line above)


# -- 1. k-means --------------------------------------------------------------------------------
def k_means(xp, points, centres, iterations):
    """Lloyd's algorithm: label each point with its nearest centre, move each centre to its points' mean.

    `points[labels == k]` is boolean-mask indexing: its shape depends on the data, so a lazy
    implementation must evaluate the labels once per iteration before it can go on.
    """
    for _ in range(iterations):
        distances = ((points[:, None, :] - centres[None, :, :]) ** 2).sum(axis=-1)
        labels = distances.argmin(axis=1)
        centres = xp.stack([points[labels == k].mean(axis=0) for k in range(centres.shape[0])])
    return centres, labels


# -- 2. heat equation --------------------------------------------------------------------------
def heat(xp, initial, steps, diffusivity):
    """Explicit 5-point stencil on the interior; the boundary stays fixed (Dirichlet).

    The right-hand side is computed in full before it is written (Jacobi), as NumPy does.
    The copy keeps the caller's array unchanged.
    """
    u = initial.copy()
    for _ in range(steps):
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + diffusivity * (
            u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]
        )
    return u


# -- 3. Mandelbrot -----------------------------------------------------------------------------
def mandelbrot(xp, c, iterations):
    """Iterate z <- z*z + c where |z| <= 2 (complex64); count the iterations each point stays inside.

    An escaped point keeps its z (`where`), so z stays bounded (|z| <= 4 + |c|) and never overflows.
    """
    z = xp.zeros_like(c)
    counts = xp.zeros(c.shape, dtype=xp.int32)
    for _ in range(iterations):
        inside = z.real * z.real + z.imag * z.imag <= 4
        z = xp.where(inside, z * z + c, z)
        counts = counts + inside
    return counts, z


# -- 4. logistic regression --------------------------------------------------------------------
def logistic_regression(xp, features, targets, steps, learning_rate):
    """Full-batch gradient descent on the mean cross-entropy of a linear logistic model."""
    weights = xp.zeros(features.shape[1], dtype=features.dtype)
    bias = xp.zeros((), dtype=features.dtype)
    for _ in range(steps):
        probabilities = 1 / (1 + xp.exp(-(features @ weights + bias)))
        error = probabilities - targets
        weights = weights - learning_rate * (features.T @ error) / features.shape[0]
        bias = bias - learning_rate * error.mean()
    return weights, bias


# -- 5. moving average -------------------------------------------------------------------------
def moving_average(xp, signal, window):
    """Mean of every `window` consecutive elements, as differences of one running sum."""
    running = xp.concatenate([xp.zeros(1, dtype=signal.dtype), xp.cumsum(signal)])
    return (running[window:] - running[:-window]) / window


# -- 6. n-body ---------------------------------------------------------------------------------
def n_body(xp, positions, velocities, masses, steps, time_step, softening):
    """Semi-implicit Euler steps of softened gravity (G = 1), all pairs at once."""
    for _ in range(steps):
        delta = positions[None, :, :] - positions[:, None, :]  # delta[i, j] = r_j - r_i
        distance_squared = (delta * delta).sum(axis=-1) + softening * softening
        inverse_cube = 1 / (distance_squared * xp.sqrt(distance_squared))
        acceleration = (delta * (masses[None, :] * inverse_cube)[:, :, None]).sum(axis=1)
        velocities = velocities + time_step * acceleration
        positions = positions + time_step * velocities
    return positions, velocities


# -- 7. Black-Scholes --------------------------------------------------------------------------
def normal_cdf(xp, value):
    """Standard normal CDF by Abramowitz & Stegun 26.2.17 (absolute error < 7.5e-8).

    Neither NumPy nor lazyarr (nor jax.numpy) has `erf`; this is the classic Black-Scholes
    benchmark's polynomial, written with xp ops.
    """
    k = 1 / (1 + 0.2316419 * xp.abs(value))
    polynomial = k * (0.319381530 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429))))
    upper = 1 - 0.3989422804014327 * xp.exp(-0.5 * value * value) * polynomial  # Phi(|value|)
    return xp.where(value < 0, 1 - upper, upper)


def black_scholes(xp, spot, strike, years, rate, volatility):
    """European call and put prices."""
    root_years = xp.sqrt(years)
    d1 = (xp.log(spot / strike) + (rate + 0.5 * volatility * volatility) * years) / (volatility * root_years)
    d2 = d1 - volatility * root_years
    discounted_strike = strike * xp.exp(-rate * years)
    call = spot * normal_cdf(xp, d1) - discounted_strike * normal_cdf(xp, d2)
    put = discounted_strike * normal_cdf(xp, -d2) - spot * normal_cdf(xp, -d1)
    return call, put


# -- 10. Laplace relaxation, tested every iteration -------------------------------------------
def relaxation(xp, initial, iterations, tolerance):
    """Jacobi iterations for Laplace's equation, each followed by a convergence test that reads a
    value (`float(...)`): the loop's exit depends on the data, as in most iterative solvers."""
    u = initial.copy()
    for _ in range(iterations):
        new = u.copy()
        new[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        change = float(xp.max(xp.abs(new - u)))
        u = new
        if change < tolerance:
            break
    return u


# -- 11. Game of Life ----------------------------------------------------------------------------
def life(xp, board, generations):
    """Conway's rules on an int8 board with a dead border, written with masks (the classic NumPy
    version): neighbour counts from eight slices, then `Z[1:-1, 1:-1][birth | survive] = 1`."""
    board = board.copy()
    for _ in range(generations):
        neighbours = (board[:-2, :-2] + board[:-2, 1:-1] + board[:-2, 2:] + board[1:-1, :-2]
                      + board[1:-1, 2:] + board[2:, :-2] + board[2:, 1:-1] + board[2:, 2:])
        birth = (neighbours == 3) & (board[1:-1, 1:-1] == 0)
        survive = ((neighbours == 2) | (neighbours == 3)) & (board[1:-1, 1:-1] == 1)
        board[...] = 0
        board[1:-1, 1:-1][birth | survive] = 1
    return board


# -- 12. least squares, its loss read every step -----------------------------------------------
def least_squares(xp, features, targets, steps, learning_rate):
    """Gradient descent on the mean squared error of a linear model, reading the loss every step
    (`float(...)`, as a training loop logs it) before the update: the value read is computed from
    the state the update then replaces. `learning_rate` is a NumPy scalar, as code often has one."""
    weights = xp.zeros(features.shape[1], dtype=features.dtype)
    losses = []
    for _ in range(steps):
        residual = features @ weights - targets
        losses.append(float((residual * residual).mean()))
        weights = weights - learning_rate * (features.T @ residual)
    return weights, xp.asarray(losses, dtype=features.dtype)


# -- 8. the T1 MLP training loop ---------------------------------------------------------------
def mlp_step(xp, w1, b1, w2, b2, x, one_hot):
    """One SGD step of benchmarks/workloads.py's T1 (hand-written backward): (loss, *new parameters)."""
    return workloads.WORKLOADS["T1"].expression(xp, w1, b1, w2, b2, x, one_hot)


def mlp_training(xp, w1, b1, w2, b2, inputs, one_hots, steps, step=None):
    """`steps` SGD steps over consecutive batches; `step` is a jitted `mlp_step` or, by default, eager.

    inputs (steps * batch, features) and one_hots (steps * batch, classes) hold the batches in order.
    """
    step = step or functools.partial(mlp_step, xp)
    batch = inputs.shape[0] // steps
    loss = None
    for index in range(steps):
        rows = slice(index * batch, (index + 1) * batch)
        loss, w1, b1, w2, b2 = step(w1, b1, w2, b2, inputs[rows], one_hots[rows])
    return loss, w1, b1, w2, b2
