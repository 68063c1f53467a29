"""Exact finish (docs/theory.md §9.5): the equality-constrained QP of an active-set partition, solved in pair form,
accepted only with a KKT certificate (§6); otherwise the offending pairs are moved (primal-dual active set).

Partition of the pairs: V (μ_p = c_p, r_p ≥ 0), S (r_p = 0, 0 ≤ μ_p ≤ c_p), I (μ_p = 0, r_p ≤ 0). Given it,

    hard b:  [Q_SS  Y_S  0] [μ_S]   [1 − Q_SV c_V]        soft b:  [Q_SS  Y_S  ] [μ_S]   [1 − Q_SV c_V]
             [Y_Sᵀ  0   −1] [ b ] = [ −Y_Vᵀ c_V  ]                 [Y_Sᵀ  −2γJ] [ b ] = [ −Y_Vᵀ c_V  ]
             [0    −1ᵀ   0] [ λ ]   [     0      ]

y_p f_p = 1 on S and every class carries the same dual mass m (= λ, or 2γΣb). The primal point is
A = M P⁺ (W = XᵀA), which satisfies W-stationarity and the hard-w constraint by construction.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...objective import objective
from ...problem import Problem
from .common import GramOperator, symmetric_solve

IN_V, IN_S, IN_I = 1, 0, -1
#: the largest margin set whose singular partition system is solved by least squares
LEAST_SQUARES_LIMIT = 500


@dataclass
class PolishOutcome:
    certified: bool
    rounds: int
    reason: str
    coef: np.ndarray | None = None
    b: np.ndarray | None = None
    objective: float = np.nan
    certificate: dict = field(default_factory=dict)
    mu: np.ndarray | None = None  # the dual point of a certified partition


def partition(r: np.ndarray, delta: float) -> np.ndarray:
    return np.where(r > delta, IN_V, np.where(r < -delta, IN_I, IN_S)).astype(np.int8)


def polish(problem: Problem, operator: GramOperator, r: np.ndarray, reference: float, deltas, *,
           max_rounds: int = 10, kkt_tol: float = 1e-9) -> PolishOutcome:
    """Active-set polish from residuals ``r``, starting from the partition of each band half-width in
    ``deltas`` in turn; certified only if the KKT conditions hold to ``kkt_tol`` and the objective is not above
    ``reference`` (the MM iterate's exact objective).

    A fallback band wider than a non-degenerate optimum's K(d+1) margin pairs is not tried: its rounds are
    singular least-squares systems (measured on scene, HwSb: 11 s of a 12 s solve, never certified)."""
    nondegenerate = free_parameters(problem)
    for i, delta in enumerate(deltas):
        sets = partition(r, delta)
        if i and np.count_nonzero(sets == IN_S) > nondegenerate:
            break
        outcome = polish_partition(problem, operator, sets, reference, max_rounds=max_rounds, kkt_tol=kkt_tol)
        if outcome.certified:
            break
    return outcome


def free_parameters(problem: Problem) -> int:
    """K(d+1): a non-degenerate optimum has at most this many margin pairs."""
    return problem.n_classes * (problem.rank_bound + 1)


def free_limit(problem: Problem) -> int:
    """Largest S the polish tries. A non-degenerate optimum has at most K(d+1) margin pairs (d = M, or the
    rank of G); degenerate ones (a class with w_k = 0, all its pairs on the margin) have more, so allow
    twice that, and always a few hundred (cheap): a larger S means the iterate is not close enough yet."""
    d = problem.rank_bound
    return min(len(problem.pairs), max(2 * problem.n_classes * (d + 1), 500))


def active_set_move(sets: np.ndarray, mu: np.ndarray, c: np.ndarray, r: np.ndarray, box_tol: float,
                    sign_tol: float) -> np.ndarray | None:
    """One primal–dual active-set move (docs/theory.md §9.5): margin pairs whose μ_p left [0, c_p] (relative
    ``box_tol``) leave S (μ_p < 0 to I, μ_p > c_p to V), V and I pairs whose r_p has the wrong sign (beyond
    ``sign_tol``) join it. The new partition, or None when no pair moves."""
    S = np.flatnonzero(sets == IN_S)
    low = S[mu[S] < -box_tol * c[S]]
    high = S[mu[S] > c[S] * (1.0 + box_tol)]
    wrong = np.flatnonzero(((sets == IN_V) & (r < -sign_tol)) | ((sets == IN_I) & (r > sign_tol)))
    if not (low.size or high.size or wrong.size):
        return None
    sets = sets.copy()
    sets[low], sets[high], sets[wrong] = IN_I, IN_V, IN_S
    return sets


def polish_partition(problem: Problem, operator: GramOperator, sets: np.ndarray, reference: float, *,
                     iterate_b: np.ndarray | None = None, iterate_mu: np.ndarray | None = None,
                     max_rounds: int = 10, kkt_tol: float = 1e-9) -> PolishOutcome:
    """The polish from a given partition ``sets`` (IN_V, IN_S, IN_I per pair); see :func:`polish`.

    ``iterate_b`` and ``iterate_mu`` are an interior point's biases and multipliers, if known: a singular partition
    system is then solved by the least change from them (else the minimum-norm solution). A class without margin
    pairs leaves its b_k free within an interval (only Σb is coupled); the minimum-norm b_k can lie outside it, a
    near-optimal iterate's lies inside (measured: glass, SwSb, α = 0.5, β = 0.01, a clean interior-point margin set
    of 17 pairs failed 5 rounds from complementarity 2.0; the least change certifies in one). An MM iterate's b is
    no such guess: it polishes from the minimum-norm solution (measured: ε = 1e-12, a 20-point SwHb problem
    certifies from it and fails from the iterate's b)."""
    pairs = problem.pairs
    y, label, sample, c = pairs.sign, pairs.label, pairs.sample, problem.cost
    K = problem.n_classes
    gamma2 = 2.0 * problem.bias_penalty
    limit = free_limit(problem)
    seen = set()
    reason, certificate = "max_rounds", {}
    for rounds in range(1, max_rounds + 1):
        if np.count_nonzero(sets == IN_S) > limit:
            reason = "too many margin pairs"
            break
        key = sets.tobytes()
        if key in seen:
            reason = "cycle"
            break
        seen.add(key)
        S = np.flatnonzero(sets == IN_S)
        nS = S.size
        mu = np.where(sets == IN_V, c, 0.0)
        mass_V = np.bincount(label, weights=y * mu, minlength=K)

        size = nS + K + (1 if problem.hard_b else 0)
        matrix = np.zeros((size, size))
        matrix[:nS, :nS] = operator.pair_block(S)
        matrix[nS + label[S], np.arange(nS)] = y[S]
        matrix[np.arange(nS), nS + label[S]] = y[S]
        if problem.hard_b:
            matrix[nS:nS + K, -1] = -1.0
            matrix[-1, nS:nS + K] = -1.0  # Σb = 0, negated: the system stays symmetric
        else:
            matrix[nS:, nS:] = -gamma2
        rhs = np.zeros(size)
        # (Q_{SV} c_V): the margin pairs' decision values without bias from the V pairs alone
        rhs[:nS] = 1.0 - y[S] * operator.apply(mu, sample[S])[np.arange(nS), label[S]]
        rhs[nS:nS + K] = -mass_V
        # least squares on a singular partition only while it is cheap: a degenerate margin set of thousands of
        # pairs cost 1.3 s a round (scene with every non-label a negative: 35 of 47 s)
        guess = np.zeros(size)
        guess[:nS] = 0.0 if iterate_mu is None else iterate_mu[S]
        guess[nS:nS + K] = 0.0 if iterate_b is None else iterate_b
        x = symmetric_solve(matrix, rhs, least_squares=nS <= LEAST_SQUARES_LIMIT, guess=guess)
        if x is None:
            reason = "singular system"
            break
        mu[S] = x[:nS]
        b = x[nS:nS + K]

        F = operator.apply(mu) + b
        r_new = 1.0 - y * F[sample, label]
        r_tol = kkt_tol * max(1.0, float(np.abs(F).max()))
        moved = active_set_move(sets, mu, c, r_new, kkt_tol, r_tol)
        mass = np.bincount(label, weights=y * mu, minlength=K)
        m = float(mass.mean())
        b_stat = abs(float(b.sum())) if problem.hard_b else abs(m - gamma2 * float(b.sum()))
        certificate = {
            "box": float(max(0.0, np.max(-mu / c), np.max(mu / c - 1.0))),
            "complementarity": float(max(0.0, np.max(-r_new, where=sets == IN_V, initial=0.0),
                                         np.max(r_new, where=sets == IN_I, initial=0.0),
                                         np.max(np.abs(r_new), where=sets == IN_S, initial=0.0))),
            "mass_spread": float(mass.max() - mass.min()),
            "b_stationarity": b_stat,
            "n_free": int(nS),
        }
        m_tol = kkt_tol * max(1.0, float(np.abs(mass).max()), float(np.abs(b).max()))
        consistent = (certificate["mass_spread"] <= m_tol and b_stat <= m_tol
                      and np.all(np.abs(r_new[S]) <= r_tol))
        if consistent and moved is None:
            coef = operator.coef(mu)
            value = objective(problem, coef, b, r_new)
            if value <= reference + 1e-12 * max(1.0, abs(reference)):
                return PolishOutcome(True, rounds, "certified", coef, b, value, certificate, mu)
            reason = "objective above the MM iterate"
            break
        if moved is None:
            reason = "inconsistent system"
            break
        sets = moved
    return PolishOutcome(False, rounds, reason, certificate=certificate)
