"""One MM iteration in primal form (SPEC §9.2): per-class Cholesky blocks plus the low-rank coupling.

Features Φ ∈ R^{N×d}: the patterns X (linear) or the eigen-features L of G (kernel). θ_k = (w_k; b_k).
"""
from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve, lu_factor, lu_solve

from ...problem import Problem
from .common import State


class PrimalStepper:
    form = "primal"

    def __init__(self, problem: Problem, features: np.ndarray, to_coef=None):
        pairs = problem.pairs
        K = problem.n_classes
        self.problem, self.to_coef = problem, to_coef
        self.d = d = features.shape[1]
        bounds = np.searchsorted(pairs.label, np.arange(K + 1))
        self.slices = [slice(bounds[k], bounds[k + 1]) for k in range(K)]
        # φ̃_i = (φ_i; 1) of every pair, class by class: O(n d) memory, formed once
        self.rows = [np.hstack([features[pairs.sample[s]], np.ones((s.stop - s.start, 1))]) for s in self.slices]
        self.sign, self.cost = pairs.sign, problem.cost
        self.P = problem.coupling
        self.kappa = 1.0 if problem.hard_w else 1.0 - problem.alpha
        # coordinates of s = Σ_k θ_k: free ones carry q = C̄ s, constrained ones (s = 0) carry a multiplier q
        free = np.array([not problem.hard_w] * d + [not problem.hard_b])
        cbar = np.array([problem.alpha] * d + [2.0 * problem.bias_penalty])
        self.free = free.astype(float)
        self.e = np.where(free, cbar, 1.0)
        self.eye = np.eye(d + 1)

    def _state(self, theta: np.ndarray) -> State:
        u = np.concatenate([rows @ th for rows, th in zip(self.rows, theta)])
        return State((theta, u), 1.0 - self.sign * u, self._reg(theta), theta[:, -1].copy())

    def _reg(self, theta: np.ndarray) -> float:
        W = theta[:, :-1].T
        return 0.5 * float(np.sum((W @ self.P) * W))

    def initial(self, coef=None, b=None) -> State:
        theta = np.zeros((self.problem.n_classes, self.d + 1))
        if coef is not None:
            theta[:, :-1] = coef.T
            theta[:, -1] = b
        return self._state(theta)

    def step(self, z: np.ndarray) -> State:
        """Minimize the majorizer at z: H_k θ_k + q = g_k for all k, with the shared q (SPEC §9.2)."""
        omega = self.cost / (2.0 * z)
        return self._minimize(omega, omega * self.sign * (1.0 + z))

    def newton(self, state: State, eps: float, damping: float = 1e-3) -> State:
        """The minimizer of the second-order model of F̃_ε at ``state`` (SPEC §9.7, generalized Newton):
        F̃_ε is quadratic on the band |r| < ε (curvature c/(2ε)) and linear outside it, where a small
        curvature ``damping``·c/(2|r|) keeps the system definite. Same structured solve as an MM step."""
        u, r = state.params[1], state.r
        band = np.abs(r) < eps
        curv = self.cost / (2.0 * np.maximum(np.abs(r), eps))
        curv[~band] *= damping
        slope = -self.sign * self.cost * np.where(band, (r + eps) / (2.0 * eps), (r > 0).astype(float))
        return self._minimize(curv, curv * u - slope)

    def _minimize(self, omega: np.ndarray, rhs: np.ndarray) -> State:
        """argmin R + B + Σ_p ½ ω_p u_p² − rhs_p u_p (u_p = θ_{k_p}ᵀφ̃_{i_p}) under the hard constraints."""
        K, D = len(self.rows), self.d + 1
        h = np.empty((K, D))
        Hinv = np.empty((K, D, D))
        for k, (rows, s) in enumerate(zip(self.rows, self.slices)):
            H = (rows.T * omega[s]) @ rows
            H[np.arange(self.d), np.arange(self.d)] += self.kappa
            factor = cho_factor(H, overwrite_a=True, check_finite=False)
            h[k] = cho_solve(factor, rows.T @ rhs[s], check_finite=False)
            Hinv[k] = cho_solve(factor, self.eye, check_finite=False)
        # s = Σ h_k − S_H q with q = e∘x (x = s on free, q on constrained coordinates)
        system = Hinv.sum(axis=0) * self.e
        system[np.arange(D), np.arange(D)] += self.free
        x = lu_solve(lu_factor(system, overwrite_a=True, check_finite=False), h.sum(axis=0), check_finite=False)
        theta = h - Hinv @ (self.e * x)
        return self._state(theta)

    def relax(self, new: State, old: State, t: float = 2.0) -> State:
        """θ ← θ_old + t(θ_new − θ_old): over-relaxation (t = 2, SPEC §9.7) or a line-search point."""
        theta = old.params[0] + t * (new.params[0] - old.params[0])
        u = old.params[1] + t * (new.params[1] - old.params[1])
        return State((theta, u), 1.0 - self.sign * u, self._reg(theta), theta[:, -1].copy())

    def solution(self, state: State):
        C = state.params[0][:, :-1].T
        return (C if self.to_coef is None else self.to_coef(C)), state.b
