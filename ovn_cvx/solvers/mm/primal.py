"""One MM iteration in primal form (SPEC §9.2): per-class Cholesky blocks plus the low-rank coupling.

Features Φ ∈ R^{N×d}: the patterns X (linear) or the eigen-features L of G (kernel). θ_k = (w_k; b_k).
"""
from __future__ import annotations

from functools import cached_property

import numpy as np
from scipy.linalg import cho_factor, cho_solve, lu_factor, lu_solve

from ...kernels import KernelFactor
from ...problem import Problem
from .common import NEWTON_DAMPING, State


class PrimalStepper:
    form = "primal"

    def __init__(self, problem: Problem, factor: KernelFactor | None = None):
        """Features X (linear problem) or the eigen-features of ``factor`` (kernel problem)."""
        pairs = problem.pairs
        K = problem.n_classes
        self.problem, self.factor = problem, factor
        self.features = problem.X if factor is None else factor.features
        self.d = d = self.features.shape[1]
        bounds = np.searchsorted(pairs.label, np.arange(K + 1))
        self.slices = [slice(bounds[k], bounds[k + 1]) for k in range(K)]
        self.sign, self.cost = pairs.sign, problem.cost
        self.P = problem.coupling
        self.kappa = 1.0 if problem.hard_w else 1.0 - problem.alpha
        # coordinates of s = Σ_k θ_k: free ones carry q = C̄ s, constrained ones (s = 0) carry a multiplier q
        free = np.array([not problem.hard_w] * d + [not problem.hard_b])
        cbar = np.array([problem.alpha] * d + [2.0 * problem.bias_penalty])
        self.free = free.astype(float)
        self.e = np.where(free, cbar, 1.0)
        self.eye = np.eye(d + 1)

    @cached_property
    def rows(self) -> list:
        """φ̃_i = (φ_i; 1) of every pair, class by class: O(n d) memory, formed at the first iteration (a warm
        start certified at once never needs it)."""
        pairs = self.problem.pairs
        return [np.hstack([self.features[pairs.sample[s]], np.ones((s.stop - s.start, 1))]) for s in self.slices]

    @cached_property
    def cost_gram(self) -> list:
        """Σ_{p in class k} c_p φ̃_p φ̃_pᵀ for every k: the fixed part of the Newton Hessians."""
        return [(rows.T * self.cost[s]) @ rows for rows, s in zip(self.rows, self.slices)]

    def _state(self, theta: np.ndarray, u: np.ndarray | None = None) -> State:
        if u is None:
            u = np.concatenate([rows @ th for rows, th in zip(self.rows, theta)])
        return State((theta, u), 1.0 - self.sign * u, self._reg(theta), theta[:, -1].copy())

    def _reg(self, theta: np.ndarray) -> float:
        W = theta[:, :-1].T
        return 0.5 * float(np.sum((W @ self.P) * W))

    def initial(self, coef=None, b=None) -> State:
        theta = np.zeros((self.problem.n_classes, self.d + 1))
        if coef is None:
            return self._state(theta, np.zeros(len(self.sign)))
        theta[:, :-1] = (coef if self.factor is None else self.factor.from_coef(coef)).T
        theta[:, -1] = b
        pairs = self.problem.pairs
        return self._state(theta, (self.features @ theta[:, :-1].T + b)[pairs.sample, pairs.label])

    def step(self, z: np.ndarray) -> State:
        """Minimize the majorizer at z: H_k θ_k + q = g_k for all k, with the shared q (SPEC §9.2)."""
        omega = self.cost / (2.0 * z)
        hessians = [(rows.T * omega[s]) @ rows for rows, s in zip(self.rows, self.slices)]
        return self._minimize(hessians, omega * self.sign * (1.0 + z))

    def newton(self, state: State, eps: float, damping: float = NEWTON_DAMPING) -> State:
        """The minimizer of the second-order model of F̃_ε at ``state`` (SPEC §9.7, generalized Newton):
        F̃_ε is quadratic on the band |r| < ε (curvature c/(2ε)) and linear outside it, where a small uniform
        curvature ``damping``·c/(2ε) keeps the system definite. Same structured solve as an MM step.

        Uniform damping makes its share of H_k a fixed matrix (``cost_gram``, formed once), so a Newton
        iteration costs |band|·d² + N·d instead of N·d²; damping 1e-3·c/(2|r|) (the first version) measured a
        linearly converging Newton phase: 45 instead of 17 iterations at N = 10000."""
        u, r = state.params[1], state.r
        band = np.abs(r) < eps
        curv = self.cost / (2.0 * eps)
        hessians = []
        for rows, s, gram in zip(self.rows, self.slices, self.cost_gram):
            inside = np.flatnonzero(band[s])
            H = (damping / (2.0 * eps)) * gram
            H += (rows[inside].T * ((1.0 - damping) * curv[s][inside])) @ rows[inside]
            hessians.append(H)
        curv[~band] *= damping
        slope = -self.sign * self.cost * np.where(band, (r + eps) / (2.0 * eps), (r > 0).astype(float))
        return self._minimize(hessians, curv * u - slope)

    def _minimize(self, hessians: list, rhs: np.ndarray) -> State:
        """argmin R + B + Σ_k ½ θ_kᵀ H_k θ_k − Σ_p rhs_p u_p (u_p = θ_{k_p}ᵀφ̃_{i_p}) under the hard constraints,
        given the loss Hessians H_k = Σ_{p in class k} ω_p φ̃_p φ̃_pᵀ (overwritten)."""
        K, D = len(self.rows), self.d + 1
        h = np.empty((K, D))
        Hinv = np.empty((K, D, D))
        for k, (rows, s, H) in enumerate(zip(self.rows, self.slices, hessians)):
            H[np.arange(self.d), np.arange(self.d)] += self.kappa
            both = cho_solve(cho_factor(H, overwrite_a=True, check_finite=False),
                             np.column_stack([rows.T @ rhs[s], self.eye]), check_finite=False)
            h[k], Hinv[k] = both[:, 0], both[:, 1:]
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
        return (C if self.factor is None else self.factor.to_coef(C)), state.b
