"""The dual iterate of the decomposition method and what the steps keep up to date (docs/theory.md §6, §9.14).

The variables are the signed pair multipliers a_p = y_p μ_p (the entries of M = Y ∘ μ), each in its box
[min(0, y_p c_p), max(0, y_p c_p)], every class carrying the same mass m = Σ_{p ∈ k} a_p. With P⁺ = c1 I + c2 11ᵀ
(soft w: P⁻¹; hard w: Π) the loop keeps Z = (G M)ᵀ (K × N, class-major) and z = Σ_k Z_k, so that the decision
value of pair p without its bias is h_p = c1 Z[k_p, i_p] + c2 z[i_p] and v_p = y_p − h_p is the dual objective's
slope along a_p: a class's bias b_k lies between the largest v it can raise and the smallest it can lower.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...duality import feasible_dual
from ...problem import Problem, class_sums
from .cache import BlockGram, KernelRows

#: how the common mass m is treated: fixed at 0 (soft b with bias_penalty 0: b is free, its stationarity forces
#: m = 0), free with Σ_k b_k = 0 (hard b), or penalised by m²/(4γ) (soft b)
MASS_FIXED, MASS_HARD, MASS_SOFT = 0, 1, 2
#: a warm start's multipliers this close to a bound (relative to c_p) are put on it
SNAP = 1e-12


@dataclass
class State:
    """Arrays of the compiled loop (see the module docstring); ``order[bounds[k]:bounds[k] + n_active[k]]`` are the
    active (not shrunk) pairs of class k, ``active_rows[:n_rows[0]]`` the samples with an active pair."""

    sample: np.ndarray
    sign: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    a: np.ndarray
    bounds: np.ndarray
    order: np.ndarray
    n_active: np.ndarray
    active_rows: np.ndarray
    n_rows: np.ndarray
    Z: np.ndarray
    z: np.ndarray
    pinv: np.ndarray
    #: [c1, c2, 1/(2γ) (soft b), m]
    scalars: np.ndarray
    mass_mode: int
    #: per class: the largest v over pairs that can rise and its pair, the smallest over those that can fall
    up_value: np.ndarray
    up_pair: np.ndarray
    low_value: np.ndarray
    low_pair: np.ndarray
    #: [steps, steps since the last shrinking, row asked of Python, mass steps, the class last stepped (−1: none),
    #: times every pair was made active]
    counters: np.ndarray
    #: (M, Z) of the last exact rebuild: the next one adds the product of the change only
    exact: tuple | None = None

    @classmethod
    def start(cls, problem: Problem, rows: KernelRows, dual=None) -> "State":
        """The iterate μ = 0, or ``dual`` (M = Y ∘ μ, N × K) made feasible (:func:`~ovn_cvx.duality.feasible_dual`)."""
        pairs, K, N = problem.pairs, problem.n_classes, problem.n_samples
        cost, sign = problem.cost, pairs.sign.astype(np.float64)
        mu = np.zeros(len(pairs)) if dual is None else feasible_dual(problem, sign * dual[pairs.sample, pairs.label])
        # the repair's proportional shifts leave multipliers a hair inside their bounds, where a large slope with
        # no room would cost a step each: on the bound (the masses change by round-off; the bound repairs them)
        mu[mu <= SNAP * cost] = 0.0
        mu[mu >= (1.0 - SNAP) * cost] = cost[mu >= (1.0 - SNAP) * cost]
        pinv = problem.coupling_pinv
        c2 = pinv[0, 1]
        if problem.hard_b:
            mode, inverse = MASS_HARD, 0.0
        elif problem.bias_penalty > 0:
            mode, inverse = MASS_SOFT, 1.0 / (2.0 * problem.bias_penalty)
        else:
            mode, inverse = MASS_FIXED, 0.0
        a = sign * mu
        state = cls(sample=pairs.sample.astype(np.int64), sign=sign, lower=np.minimum(0.0, sign * cost),
                    upper=np.maximum(0.0, sign * cost), a=a,
                    bounds=pairs.class_bounds(K).astype(np.int64), order=np.arange(len(pairs), dtype=np.int64),
                    n_active=np.zeros(K, dtype=np.int64), active_rows=np.zeros(N, dtype=np.int64),
                    n_rows=np.zeros(1, dtype=np.int64), Z=np.zeros((K, N)), z=np.zeros(N),
                    pinv=np.ascontiguousarray(pinv), scalars=np.array([pinv[0, 0] - c2, c2, inverse, 0.0]),
                    mass_mode=mode, up_value=np.zeros(K), up_pair=np.zeros(K, dtype=np.int64),
                    low_value=np.zeros(K), low_pair=np.zeros(K, dtype=np.int64),
                    counters=np.array([0, 0, 0, 0, -1, 0], dtype=np.int64))
        state.activate_all()
        if dual is not None:
            state.scalars[3] = float(np.mean(state.masses))
            rows.prefetch(np.unique(state.sample[a != 0.0]))
            state.rebuild(rows)
        return state

    def activate_all(self) -> None:
        """Every pair and every sample with a pair active (no shrinking); the kernel rows computed for the narrower
        active sets no longer serve (counters[5])."""
        self.n_active[:] = np.diff(self.bounds)
        self.order[:] = np.arange(self.order.size)  # each class's pairs in ascending sample order
        rows = np.unique(self.sample)
        self.active_rows[:rows.size] = rows
        self.n_rows[0] = rows.size
        self.counters[5] += 1

    @property
    def arrays(self) -> tuple:
        """What the compiled loop receives, in this order (it reads them by position)."""
        return (self.sample, self.sign, self.lower, self.upper, self.a, self.bounds, self.order, self.n_active,
                self.active_rows, self.n_rows, self.Z, self.z, self.pinv, self.scalars, self.up_value, self.up_pair,
                self.low_value, self.low_pair, self.counters)

    @property
    def shrunk(self) -> bool:
        return int(self.n_active.sum()) < self.a.size

    @property
    def masses(self) -> np.ndarray:
        """The class masses Σ_{p∈k} a_p."""
        return class_sums(self.a, self.bounds)

    @property
    def label(self) -> np.ndarray:
        """The class of every pair."""
        return np.repeat(np.arange(self.bounds.size - 1), np.diff(self.bounds))

    def signed_dual(self, n_samples: int, values: np.ndarray | None = None) -> np.ndarray:
        """M = Y ∘ μ (N × K); with ``values``, the N × K matrix of those per-pair values instead of the a_p."""
        M = np.zeros((n_samples, self.bounds.size - 1))
        M[self.sample, self.label] = self.a if values is None else values
        return M

    def rebuild(self, rows: KernelRows) -> None:
        """Z = (G M)ᵀ and z from the multipliers themselves, on every sample: removes the steps' accumulated
        round-off and brings the shrunk samples up to date. From the last rebuild's exact Z, only the columns of the
        samples whose multipliers changed since are computed (*measured*, N = 20 000: the rebuild after the pairs
        set aside come back follows a few hundred steps)."""
        M = self.signed_dual(self.z.size)
        if self.exact is None:
            Z = (BlockGram(rows) @ M).T
        else:
            Z = self.exact[1] + (BlockGram(rows) @ (M - self.exact[0])).T  # G's columns where M − M₀ is not zero
        self.exact = (M, Z)
        self.Z[:] = Z
        self.z[:] = self.Z.sum(axis=0)

    def decision(self) -> np.ndarray:
        """h_p = (G M P⁺)_{i_p k_p}, the pairs' decision values without the bias."""
        c1, c2 = self.scalars[0], self.scalars[1]
        return c1 * self.Z[self.label, self.sample] + c2 * self.z[self.sample]

    def training_decision(self, b: np.ndarray) -> np.ndarray:
        """G M P⁺ + 1bᵀ on every sample and class (N × K; P⁺ = c1 I + c2 J): the training decision values of the
        point, exact when Z is (just rebuilt)."""
        c1, c2 = self.scalars[0], self.scalars[1]
        return c1 * self.Z.T + (c2 * self.z)[:, None] + b
