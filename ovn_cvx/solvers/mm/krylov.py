"""Krylov solvers of the matrix-free form's Newton systems (docs/theory.md §9.11): projected preconditioned CG for
the definite primal system, preconditioned MINRES for the indefinite pair system. Written out rather than scipy's
because the projection and the forcing term need the loop."""
from __future__ import annotations

from typing import Protocol

import numpy as np


class LinearSystem(Protocol):
    """A symmetric operator and its symmetric definite preconditioner, as products with flat vectors."""

    def apply(self, x: np.ndarray) -> np.ndarray: ...

    def precondition(self, x: np.ndarray) -> np.ndarray: ...


def conjugate_gradient(hessian: LinearSystem, rhs: np.ndarray, rtol: float, max_iter: int) -> tuple[np.ndarray, int]:
    """Projected preconditioned CG for H x = rhs (rhs in the subspace): (x, iterations). Written out rather than
    scipy's ``cg`` because the projection and the forcing term need the loop, and scipy renamed its tolerance
    (``tol`` → ``rtol``) inside the range of versions the package supports."""
    x = np.zeros_like(rhs)
    if not rhs.any():
        return x, 0
    residual = rhs.copy()
    z = hessian.precondition(residual)
    direction = z.copy()
    rz = residual @ z
    if rz <= 0:  # rhs is round-off outside the subspace
        return x, 0
    target = rtol * np.sqrt(rhs @ rhs)
    # overflows and zero curvature (features of scale 1e6, α at its end) end the solve as a breakdown does: the step
    # so far, judged by the caller
    with np.errstate(all="ignore"):
        for iteration in range(1, max_iter + 1):
            Hd = hessian.apply(direction)
            curvature = direction @ Hd
            step = rz / curvature
            trial, residual_trial = x + step * direction, residual - step * Hd
            if not (0 < curvature < np.inf and np.isfinite(trial).all() and np.isfinite(residual_trial).all()):
                return x, iteration
            x, residual = trial, residual_trial
            if np.sqrt(residual @ residual) <= target:
                return x, iteration
            z = hessian.precondition(residual)
            rz, previous = residual @ z, rz
            if not 0 < rz < np.inf:
                return x, iteration
            direction = z + (rz / previous) * direction
    return x, max_iter


def minres(system: LinearSystem, rhs: np.ndarray, rtol: float, max_iter: int) -> tuple[np.ndarray, int]:
    """Preconditioned MINRES (Paige & Saunders) for the symmetric, indefinite ``system``: (x, iterations). Stops
    when the preconditioned residual norm, which MINRES updates for free, is below ``rtol`` times its start."""
    x = np.zeros_like(rhs)
    r1 = r2 = rhs
    y = system.precondition(rhs)
    beta = beta1 = float(np.sqrt(max(rhs @ y, 0.0)))
    if beta1 == 0.0:
        return x, 0
    old_beta = dbar = epsilon = 0.0
    phibar, cs, sn = beta1, -1.0, 0.0
    w = w2 = np.zeros_like(rhs)
    for iteration in range(1, max_iter + 1):
        v = y / beta
        y = system.apply(v)
        if iteration > 1:
            y = y - (beta / old_beta) * r1
        alpha = float(v @ y)
        y = y - (alpha / beta) * r2
        r1, r2 = r2, y
        y = system.precondition(r2)
        old_beta, beta = beta, float(np.sqrt(max(r2 @ y, 0.0)))
        old_epsilon = epsilon
        delta = cs * dbar + sn * alpha
        gbar = sn * dbar - cs * alpha
        epsilon, dbar = sn * beta, -cs * beta
        # floored at machine epsilon as scipy's minres does (a singular breakdown, gbar = beta = 0, then leaves x
        # unchanged: phi = 0); the smallest normal float made w overflow (measured)
        gamma = max(float(np.hypot(gbar, beta)), np.finfo(float).eps)
        cs, sn = gbar / gamma, beta / gamma
        phi, phibar = cs * phibar, sn * phibar
        w1, w2 = w2, w
        w = (v - old_epsilon * w1 - delta * w2) / gamma
        x = x + phi * w
        if phibar <= rtol * beta1 or beta == 0.0:
            return x, iteration
    return x, max_iter
