"""Pieces shared by the MM iterations and the polish: the smoothed hinge, the Gram operator, states."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...problem import Problem

#: curvature of the generalized Newton model outside the band, relative to the band's c/(2ε) (SPEC §9.7): it
#: only keeps the system definite; 1e-3 measured a linearly converging Newton phase
NEWTON_DAMPING = 1e-6


def smoothed_hinge(r: np.ndarray, eps: float) -> np.ndarray:
    """h_ε(t) = [t]_+ for |t| ≥ ε and (t + ε)²/(4ε) inside the band (SPEC §9.1)."""
    out = np.maximum(r, 0.0)
    band = np.abs(r) < eps
    out[band] = (r[band] + eps) ** 2 / (4.0 * eps)
    return out


def dual_coef(problem: Problem, mu: np.ndarray) -> np.ndarray:
    """A = M P⁺ with M_{i_p k_p} = y_p μ_p (SPEC §6); the kernel coefficients of the dual point μ."""
    pairs = problem.pairs
    M = np.zeros((problem.n_samples, problem.n_classes))
    M[pairs.sample, pairs.label] = pairs.sign * mu
    return M @ problem.coupling_pinv


class GramOperator:
    """Products with the training Gram matrix: G = X Xᵀ (linear, never formed) or the kernel's G."""

    def __init__(self, problem: Problem):
        self.problem = problem
        self.linear = not problem.is_kernel
        self.basis = problem.X if self.linear else problem.gram

    def pair_block(self, index) -> np.ndarray:
        """Q restricted to the pairs ``index``: Q_pq = y_p y_q P⁺_{k_p k_q} G_{i_p i_q} (SPEC §9.3)."""
        pairs = self.problem.pairs
        sample, label, sign = pairs.sample[index], pairs.label[index], pairs.sign[index]
        if self.linear:
            Q = self.basis[sample] @ self.basis[sample].T
        else:
            Q = self.basis[np.ix_(sample, sample)]
        Q *= self.problem.coupling_pinv[np.ix_(label, label)]
        Q *= np.outer(sign, sign)
        return Q

    @staticmethod
    def _support(A: np.ndarray):
        """The rows of A to multiply: dual coefficients are sparse (samples without support pairs have zero
        rows), so only the nonzero ones, unless that is most of them."""
        used = np.flatnonzero(A.any(axis=1))
        return slice(None) if 2 * used.size > A.shape[0] else used

    def apply(self, A: np.ndarray, rows: np.ndarray | slice = slice(None)) -> np.ndarray:
        """(G A)[rows]: the decision values without bias of the coefficients A at those samples."""
        used = self._support(A)
        if self.linear:
            return self.basis[rows] @ (self.basis[used].T @ A[used])
        return self.basis[rows][:, used] @ A[used]

    def coef(self, A: np.ndarray) -> np.ndarray:
        """The reported coefficients: W = Xᵀ A (linear) or A itself (kernel)."""
        if not self.linear:
            return A
        used = self._support(A)
        return self.basis[used].T @ A[used]


@dataclass
class State:
    """One MM iterate. ``params`` is the iterate in the stepper's own coordinates (a tuple of arrays,
    linear in θ so that over-relaxation is a linear combination); None for a warm start given as (coef, b).
    ``r`` are the pair residuals, ``reg`` = R(W), ``b`` the biases."""

    params: tuple | None
    r: np.ndarray
    reg: float
    b: np.ndarray
