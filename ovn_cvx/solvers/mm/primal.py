"""One MM iteration in primal form (docs/theory.md §9.2): per-class Cholesky blocks plus the low-rank coupling.

Features Φ ∈ R^{N×d}: the patterns X (linear) or the eigen-features L of G (kernel). θ_k = (w_k; b_k).
"""
from __future__ import annotations

from copy import copy
from dataclasses import replace
from functools import cached_property, partial

import numpy as np
import scipy.sparse as sp
from scipy.linalg import lu_factor, lu_solve

from ...kernels import KernelFactor
from ...problem import Problem
from .common import NEWTON_DAMPING, BlockCholesky, State, block_pairs, hinge_slope, separable


def weighted_gram(rows: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Σ_p w_p φ̃_p φ̃_pᵀ as BᵀB with B = √w∘Φ̃ (w ≥ 0): NumPy computes BᵀB by a symmetric rank-k update, half
    the flops of the general product Φ̃ᵀ(w∘Φ̃) (measured 1.6× faster for 2000×51); equal weights (no sample or
    label weights) need no scaled copy."""
    if sp.issparse(rows):  # sparse rows (a sparse X): the sparse product, densified as the d×d matrix it is
        if not weight.size:
            return np.zeros((rows.shape[1], rows.shape[1]))
        if np.all(weight == weight[0]):
            return weight[0] * (rows.T @ rows).toarray()
        scaled = sp.diags(np.sqrt(weight)) @ rows
        return (scaled.T @ scaled).toarray()
    if weight.size and np.all(weight == weight[0]):
        return weight[0] * (rows.T @ rows)
    scaled = rows * np.sqrt(weight)[:, None]
    return scaled.T @ scaled


def shared_grams(rows: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """:func:`weighted_gram` of the shared ``rows`` (N×D, dense) for every row of ``weights`` (K×N, ≥ 0), the same
    numbers (K×D×D) without its per-call work: the classes with equal weights found in one pass (their Grams
    multiples of one product), one scaled copy reused for the others (measured, K = 5–12: 0.8–0.9 of the per-class
    calls' time at N = 266–2 000, D = 21–73; 0.92–0.98 at N = 10 000–50 000)."""
    out = np.empty((weights.shape[0], rows.shape[1], rows.shape[1]))
    equal = (weights == weights[:, :1]).all(axis=1)
    if equal.any():
        out[equal] = weights[equal, :1, None] * (rows.T @ rows)
    scaled = np.empty_like(rows)
    for k in np.flatnonzero(~equal):
        np.multiply(rows, np.sqrt(weights[k])[:, None], out=scaled)
        np.matmul(scaled.T, scaled, out=out[k])
    return out


class PrimalStepper:
    form = "primal"

    def __init__(self, problem: Problem, factor: KernelFactor | None = None):
        """Features X (linear problem) or the eigen-features of ``factor`` (kernel problem)."""
        pairs = problem.pairs
        K = problem.n_classes
        self.problem, self.factor, self.K = problem, factor, K
        self.features = problem.X if factor is None else factor.features
        self.d = d = self.features.shape[1]
        self.bounds = bounds = pairs.class_bounds(K)
        self.slices = [slice(bounds[k], bounds[k + 1]) for k in range(K)]
        self.diag = np.arange(d)
        self.sign, self.cost = pairs.sign, problem.cost
        self.coupling = problem.coupling_ops
        self.centred = self.coupling.centred
        # coordinates of s = Σ_k θ_k: free ones carry q = C̄ s, constrained ones (s = 0) carry a multiplier q
        free = np.array([not problem.hard_w] * d + [not problem.hard_b])
        cbar = np.array([self.coupling.off_diagonal] * d + [2.0 * problem.bias_penalty])
        self.free = free.astype(float)
        self.e = np.where(free, cbar, 1.0)

    @cached_property
    def rows(self) -> list:
        """φ̃_i = (φ_i; 1) of every pair, class by class: O(n d) memory (a sparse X: CSR, O(nnz + n)), formed at the
        first iteration (a warm start certified at once never needs it); the one :attr:`shared_rows` for every class
        when there are such."""
        pairs = self.problem.pairs
        if sp.issparse(self.features):  # docs/theory.md §9.10
            return [sp.hstack([self.features[pairs.sample[s]], np.ones((s.stop - s.start, 1))], format="csr")
                    for s in self.slices]
        if self.shared_rows is not None:
            return [self.shared_rows] * self.problem.n_classes
        return [np.hstack([self.features[pairs.sample[s]], np.ones((s.stop - s.start, 1))]) for s in self.slices]

    @cached_property
    def shared_rows(self) -> np.ndarray | None:
        """(φ_i; 1) of every sample (N×D) when every class has one pair with every sample, in sample order (dense
        features; one-vs-rest negatives on a label matrix without unknown entries, the estimator's default): the
        classes' rows are then this one matrix, and the pairs' products of all classes are one matrix product each
        (measured: a quarter of an interior-point iteration on small problems went to the K products and their
        stacking); else None."""
        pairs, N, K = self.problem.pairs, self.problem.n_samples, self.problem.n_classes
        if sp.issparse(self.features) or len(pairs) != N * K:
            return None
        if not np.array_equal(pairs.sample.reshape(K, N), np.broadcast_to(np.arange(N), (K, N))):
            return None
        return np.hstack([self.features, np.ones((N, 1))])

    def class_products(self, values: np.ndarray) -> np.ndarray:
        """Σ_p values_p φ̃_p over each class's pairs (K×D)."""
        if self.shared_rows is not None:
            return values.reshape(self.K, -1) @ self.shared_rows
        return np.stack([rows.T @ values[s] for rows, s in zip(self.rows, self.slices)])

    def pair_values(self, theta: np.ndarray) -> np.ndarray:
        """θ_{k_p}ᵀ φ̃_p of every pair."""
        if self.shared_rows is not None:
            return (theta @ self.shared_rows.T).ravel()
        return np.concatenate([rows @ th for rows, th in zip(self.rows, theta)])

    @cached_property
    def cost_gram(self) -> np.ndarray:
        """Σ_{p in class k} c_p φ̃_p φ̃_pᵀ for every k (K×D×D): the fixed part of the Newton Hessians, and the
        whole Hessian of a uniform majorizer."""
        return self.hessians(self.cost)

    def state(self, theta: np.ndarray, u: np.ndarray | None = None) -> State:
        """The state of the parameters θ (K×D) whose pairs' values θ_{k_p}ᵀφ̃_p are ``u`` (computed when not given)."""
        if u is None:
            u = self.pair_values(theta)
        return State((theta, u), 1.0 - self.sign * u, partial(self._reg, theta), theta[:, -1].copy())

    def _reg(self, theta: np.ndarray) -> float:
        return 0.5 * self.coupling.square(theta[:, :-1].T)

    def initial(self, coef=None, b=None) -> State:
        theta = np.zeros((self.K, self.d + 1))
        if coef is None:
            return self.state(theta, np.zeros(len(self.sign)))
        theta[:, :-1] = (coef if self.factor is None else self.factor.from_coef(coef)).T
        theta[:, -1] = b
        pairs = self.problem.pairs
        return self.state(theta, (self.features @ theta[:, :-1].T + b)[pairs.sample, pairs.label])

    def system(self, omega: np.ndarray, hessians: np.ndarray | None = None, still=None) -> "PrimalSystem":
        """The factored system of the weighted least-squares problem min R + B + ½ Σ_p ω_p (a_p(θ) − t_p)², a_p
        = y_p θ_{k_p}ᵀφ̃_{i_p}: an MM step (ω = c/(2z), t = 1 + z) and an interior-point step solve it.
        ``hessians``: Σ_p ω_p φ̃_p φ̃_pᵀ per class when the caller has it."""
        if hessians is None:
            hessians = self.hessians(omega, still)
        return PrimalSystem(self, hessians, omega)

    def hessians(self, omega: np.ndarray, still=None) -> np.ndarray:
        """Σ_p ω_p φ̃_p φ̃_pᵀ per class (K×D×D); the identity for the classes ``still`` marks (of a :attr:`separable`
        problem, whose solutions are not used: the interior point's converged classes), whose weighted products,
        n_k·D² each, are most of an iteration's work."""
        shared, K = self.shared_rows, self.K
        if shared is None:
            return np.stack([np.eye(self.d + 1) if still is not None and still[k] else weighted_gram(rows, omega[s])
                             for k, (rows, s) in enumerate(zip(self.rows, self.slices))])
        weight = omega.reshape(K, -1)
        if still is None:
            return shared_grams(shared, weight)
        out = np.broadcast_to(np.eye(self.d + 1), (K, self.d + 1, self.d + 1)).copy()
        out[~still] = shared_grams(shared, weight[~still])
        return out

    def step(self, z: np.ndarray) -> State:
        """Minimize the majorizer at z: H_k θ_k + q = g_k for all k, with the shared q (docs/theory.md §9.2)."""
        # every cold start has r ≡ 1: the Hessians are then a multiple of the cached cost Gram
        hessians = self.cost_gram / (2.0 * z[0]) if np.all(z == z[0]) else None
        return self.system(self.cost / (2.0 * z), hessians).fit(1.0 + z)

    def newton(self, state: State, eps: float, damping: float = NEWTON_DAMPING) -> State:
        """The minimizer of the second-order model of F̃_ε at ``state`` (docs/theory.md §9.7, generalized Newton):
        F̃_ε is quadratic on the band |r| < ε (curvature c/(2ε)) and linear outside it, where a small uniform
        curvature ``damping``·c/(2ε) keeps the system definite. Same structured solve as an MM step.

        Uniform damping makes its share of H_k a fixed matrix (``cost_gram``, formed once; damping
        1e-3·c/(2|r|), the first version, measured a linearly converging Newton phase: 45 instead of 17
        iterations at N = 10000). The model's linear term H_k θ_k − ∇_k(loss) needs only the pairs with a
        nonzero hinge slope (r > −ε), so an iteration costs |band|·d² + |r > −ε|·d plus the residuals, not N·d²."""
        theta, r = state.params[0], state.r
        sloped = np.flatnonzero(r > -eps)
        band = sloped[r[sloped] < eps]
        slope = self.sign[sloped] * self.cost[sloped] * hinge_slope(r[sloped], eps)
        curv = (1.0 - damping) * self.cost[band] / (2.0 * eps)
        sloped_cuts, band_cuts = np.searchsorted(sloped, self.bounds), np.searchsorted(band, self.bounds)
        hessians = (damping / (2.0 * eps)) * self.cost_gram
        g = np.empty_like(theta)
        for k, (H, rows) in enumerate(zip(hessians, self.rows)):
            in_band, with_slope = slice(band_cuts[k], band_cuts[k + 1]), slice(sloped_cuts[k], sloped_cuts[k + 1])
            H += weighted_gram(rows[band[in_band] - self.bounds[k]], curv[in_band])
            g[k] = H @ theta[k] + rows[sloped[with_slope] - self.bounds[k]].T @ slope[with_slope]
        return self.state(PrimalSystem(self, hessians).solve(g))

    @property
    def separable(self) -> bool:
        """Whether the class blocks are independent (:func:`~.common.separable`: no coupling e)."""
        return separable(self.problem)

    def relax(self, new: State, old: State, t=2.0) -> State:
        """θ ← θ_old + t(θ_new − θ_old): over-relaxation (t = 2, docs/theory.md §9.7) or a line-search point; ``t``
        may hold one length per class (a :attr:`separable` problem)."""
        # one length per class: the pairs are sorted by class, so a repeat, not a gather by label
        t_class, t_pair = (t, t) if np.ndim(t) == 0 else (t[:, None], np.repeat(t, np.diff(self.bounds)))
        theta = old.params[0] + t_class * (new.params[0] - old.params[0])
        u = old.params[1] + t_pair * (new.params[1] - old.params[1])
        return self.state(theta, u)

    def window(self, classes: np.ndarray, state: State) -> tuple["PrimalStepper", State]:
        """The stepper over the pairs of ``classes`` (indices, ascending) alone, and ``state`` restricted to them: the
        same systems, fits and relaxations for those classes of a :attr:`separable` problem, whose class blocks are
        independent (the interior point's iterations once its other classes are fixed). Only the iterations run on
        it; a start and the answer are the whole stepper's. ``taken``: the positions of the window's pairs among the
        stepper's."""
        if not self.separable:
            raise ValueError("a window of classes needs a separable problem: otherwise their systems are coupled")
        rows, pairs = self.rows, block_pairs(self.bounds, classes)  # the shared rows, if any, formed: the window's too
        window = copy(self)
        window.__dict__.pop("cost_gram", None)
        window.rows = [rows[k] for k in classes]
        window.K, window.bounds = classes.size, np.concatenate([[0], np.cumsum(np.diff(self.bounds)[classes])])
        window.slices = [slice(start, stop) for start, stop in zip(window.bounds[:-1], window.bounds[1:])]
        window.taken, window.sign, window.cost = pairs, self.sign[pairs], self.cost[pairs]
        window.coupling = replace(self.coupling, n_classes=classes.size)  # P = I: R is the classes' own squares
        theta, values = state.params
        return window, window.state(theta[classes], values[pairs])

    def solution(self, state: State):
        C = state.params[0][:, :-1].T
        return (C if self.factor is None else self.factor.to_coef(C)), state.b


class PrimalSystem:
    """The factored structured system (docs/theory.md §9.2): min R + B + Σ_k ½ θ_kᵀ H_k θ_k − Σ_k g_kᵀ θ_k under the
    hard constraints, for loss Hessians H_k (K×D×D, overwritten): one Cholesky per block and one LU of the D×D
    coupling system; each :meth:`solve` then costs O(K D²)."""

    def __init__(self, stepper: PrimalStepper, hessians: np.ndarray, omega: np.ndarray | None = None):
        self.stepper, self.omega = stepper, omega
        D = hessians.shape[1]
        # s = Σ h_k − S_H q with q = e∘x (x = s on free, q on constrained coordinates): the system's column j is
        # e_j times column j of S_H = Σ_k H_k⁻¹, plus the free coordinates' identity; only the columns with e_j ≠ 0
        # are solved for (at α = 0 with soft w the bias column alone when γ > 0 or b is hard, none for a separable
        # problem: the D right-hand sides of the whole inverse measured half of an exact RBF fit, scene, D = 1 212)
        coupled = np.flatnonzero(stepper.e)
        hessians[:, stepper.diag, stepper.diag] += stepper.centred
        self.blocks = BlockCholesky(hessians, "MM block {} of the majorizer")
        # a separable problem (no coupled coordinate: q = 0) is the K block solves alone
        self.coupling = None
        if coupled.size:
            system = np.diag(stepper.free)
            system[:, coupled] += self.blocks.inverse_sum(np.eye(D)[:, coupled]) * stepper.e[coupled]
            self.coupling = lu_factor(system, check_finite=False)

    def solve(self, g: np.ndarray) -> np.ndarray:
        """θ for the linear terms g (K×D). Block solves, not products with the inverses: the interior point's
        weights span many orders of magnitude and explicit inverses lose the digits it needs."""
        h = self.blocks.solve(g)
        if self.coupling is None:
            return h
        x = lu_solve(self.coupling, h.sum(axis=0), check_finite=False)
        q = self.stepper.e * x
        return h - self.blocks.solve(np.broadcast_to(q, h.shape))

    def fit(self, target: np.ndarray) -> State:
        """The weighted least-squares fit of the targets t_p with the weights ω of :meth:`PrimalStepper.system`."""
        st = self.stepper
        rhs = self.omega * st.sign * target
        return st.state(self.solve(st.class_products(rhs)))
