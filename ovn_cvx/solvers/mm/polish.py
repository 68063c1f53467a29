"""The structured forms' exact finish (docs/theory.md §9.5): the equality-constrained QP of an active-set partition
(:mod:`.active_set`), solved in pair form, accepted only with a KKT certificate (§6) and an objective not above the
iterate's.

Given the partition V (μ_p = c_p), S (r_p = 0), I (μ_p = 0),

    hard b:  [Q_SS  Y_S  0] [μ_S]   [1 − Q_SV c_V]        soft b:  [Q_SS  Y_S  ] [μ_S]   [1 − Q_SV c_V]
             [Y_Sᵀ  0   −1] [ b ] = [ −Y_Vᵀ c_V  ]                 [Y_Sᵀ  −2γJ] [ b ] = [ −Y_Vᵀ c_V  ]
             [0    −1ᵀ   0] [ λ ]   [     0      ]

y_p f_p = 1 on S and every class carries the same dual mass m (= λ, or 2γΣb). The primal point is
A = M P⁺ (W = XᵀA), which satisfies W-stationarity and the hard-w constraint by construction.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...duality import class_masses
from ...objective import objective
from ...problem import Problem
from .active_set import (IN_I, IN_S, IN_V, KKT_TOL, MAX_ROUNDS, PartitionSolution, active_set_finish, free_parameters,
                         partition)
from .common import GramOperator, least_change, ldl_solve, separable

#: the largest margin set whose singular partition system is solved by least squares (of one class's block, for a
#: separable problem)
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


def polish(problem: Problem, operator: GramOperator, r: np.ndarray, reference: float, deltas, *,
           max_rounds: int = MAX_ROUNDS) -> PolishOutcome:
    """Active-set polish from residuals ``r``, starting from the partition of each band half-width in
    ``deltas`` in turn; certified only if the KKT conditions hold to KKT_TOL and the objective is not above
    ``reference`` (the MM iterate's exact objective).

    A fallback band wider than a non-degenerate optimum's K(d+1) margin pairs is not tried: its rounds are
    singular least-squares systems (measured on scene, HwSb: 11 s of a 12 s solve, never certified)."""
    nondegenerate = free_parameters(problem)
    for i, delta in enumerate(deltas):
        sets = partition(r, delta)
        if i and np.count_nonzero(sets == IN_S) > nondegenerate:
            break
        outcome = polish_partition(problem, operator, sets, reference, max_rounds=max_rounds)
        if outcome.certified:
            break
    return outcome


def polish_partition(problem: Problem, operator: GramOperator, sets: np.ndarray, reference: float, *,
                     iterate_b: np.ndarray | None = None, iterate_mu: np.ndarray | None = None,
                     max_rounds: int = MAX_ROUNDS) -> PolishOutcome:
    """The polish from a given partition ``sets`` (IN_V, IN_S, IN_I per pair); see :func:`polish`.

    ``iterate_b`` and ``iterate_mu`` are an interior point's biases and multipliers, if known: a singular partition
    system is then solved by the least change from them (else the minimum-norm solution). A class without margin
    pairs leaves its b_k free within an interval (only Σb is coupled); the minimum-norm b_k can lie outside it, a
    near-optimal iterate's lies inside (measured: glass, SwSb, α = 0.5, β = 0.01, a clean interior-point margin set
    of 17 pairs failed 5 rounds from complementarity 2.0; the least change certifies in one). An MM iterate's b is
    no such guess: it polishes from the minimum-norm solution (measured: ε = 1e-12, a 20-point SwHb problem
    certifies from it and fails from the iterate's b)."""
    engine = DensePartition(problem, operator, reference, iterate_b, iterate_mu)
    rounds, reason = active_set_finish(engine, sets, max_rounds=max_rounds)
    if reason == "certified":
        return PolishOutcome(True, rounds, reason, *engine.found, engine.certificate, engine.mu)
    return PolishOutcome(False, rounds, reason, certificate=engine.certificate)


class DensePartition:
    """The structured forms' :class:`~.active_set.PartitionEngine`: a partition's system formed densely in pair form
    (above) and solved directly; a solution no pair leaves is accepted when it is consistent (the system's equations
    hold to KKT_TOL) and its objective is not above ``reference``."""

    refines = False

    def __init__(self, problem: Problem, operator: GramOperator, reference: float, iterate_b: np.ndarray | None,
                 iterate_mu: np.ndarray | None):
        self.problem, self.operator, self.reference = problem, operator, reference
        self.iterate_b, self.iterate_mu = iterate_b, iterate_mu
        self.separable = separable(problem)
        self.bounds = problem.pairs.class_bounds(problem.n_classes)
        self.blocks: dict = {}  # a separable problem's solved class blocks, by the class's partition
        self.certificate: dict = {}
        self.mu = self.b = None
        self.found: tuple = ()  # (coef, b, objective) of the accepted solution

    def matrix(self, S: np.ndarray, classes: np.ndarray) -> np.ndarray:
        """The partition system's symmetric matrix for the margin pairs ``S`` and the biases of ``classes`` (sorted,
        the classes of S among them): every class, or one class of a separable problem."""
        problem, pairs = self.problem, self.problem.pairs
        nS, K, y = S.size, classes.size, pairs.sign[S]
        column = nS + np.searchsorted(classes, pairs.label[S])
        size = nS + K + (1 if problem.hard_b else 0)
        matrix = np.zeros((size, size))
        matrix[:nS, :nS] = self.operator.pair_block(S)
        matrix[column, np.arange(nS)] = y
        matrix[np.arange(nS), column] = y
        if problem.hard_b:
            matrix[nS:nS + K, -1] = -1.0
            matrix[-1, nS:nS + K] = -1.0  # Σb = 0, negated: the system stays symmetric
        else:
            matrix[nS:, nS:] = -2.0 * problem.bias_penalty
        return matrix

    def rhs(self, S: np.ndarray, mu_V: np.ndarray) -> np.ndarray:
        """The right-hand side (margin pairs, then every class) for margin pairs ``S`` and the multipliers ``mu_V``
        (c_p on V, 0 elsewhere)."""
        problem, pairs, nS, K = self.problem, self.problem.pairs, S.size, self.problem.n_classes
        y, label = pairs.sign, pairs.label
        rhs = np.zeros(nS + K + (1 if problem.hard_b else 0))
        # (Q_{SV} c_V): the margin pairs' decision values without bias from the V pairs alone
        rhs[:nS] = 1.0 - y[S] * self.operator.apply(mu_V, pairs.sample[S])[np.arange(nS), label[S]]
        rhs[nS:nS + K] = -class_masses(problem, mu_V, self.bounds)
        return rhs

    def solve(self, sets: np.ndarray) -> PartitionSolution | None:
        """μ and b of the partition's system, by the least change from the iterate's when singular; None when even
        that fails."""
        problem, K = self.problem, self.problem.n_classes
        pairs = problem.pairs
        S = np.flatnonzero(sets == IN_S)
        nS = S.size
        mu = np.where(sets == IN_V, problem.cost, 0.0)
        rhs = self.rhs(S, mu)
        guess = np.zeros(rhs.size)
        guess[:nS] = 0.0 if self.iterate_mu is None else self.iterate_mu[S]
        guess[nS:nS + K] = 0.0 if self.iterate_b is None else self.iterate_b
        x = self._by_class(S, sets, rhs, guess) if self.separable else self._solve(S, np.arange(K), rhs, guess)
        if x is None:
            return None
        mu[S] = x[:nS]
        self.mu, self.b = mu, x[nS:nS + K]
        F = self.operator.apply(mu) + self.b
        return PartitionSolution(mu, 1.0 - pairs.sign * F[pairs.sample, pairs.label], float(np.abs(F).max()))

    def _solve(self, S, classes, rhs, guess, key: tuple | None = None):
        """The partition system of the margin pairs ``S`` and the biases of ``classes``: LDLᵀ, else the least change
        from the iterate (:meth:`_least_change`). ``key`` (class k, its partition) names one class's block of a
        separable problem: a nonsingular block's solution is unique and depends on the class's partition alone, and
        is kept for the other crossovers of the solve, which share the operator (:meth:`_by_class`); a singular
        block's least change from this crossover's iterate is its own."""
        matrix = self.matrix(S, classes)
        solution = ldl_solve(matrix, rhs)
        if solution is None:
            return self._least_change(matrix, S, rhs, guess)
        if key is not None:
            self.operator.unique_blocks[key] = solution
        return solution

    @staticmethod
    def _least_change(matrix, S, rhs, guess):
        """A singular partition system's least change from the iterate (:func:`~.common.least_change`), only while
        it is cheap: a degenerate margin set of thousands of pairs cost 1.3 s a round (scene with every non-label
        a negative: 35 of 47 s); else None."""
        return least_change(matrix, rhs, guess) if S.size <= LEAST_SQUARES_LIMIT else None

    def _by_class(self, S, sets, rhs, guess):
        """The system of a separable problem, class by class: it is block diagonal (P⁺ = I, one bias equation per
        class), and K blocks of n_k + 1 cost Σ n_k³ instead of (Σ n_k)³. A singular block is solved by its least
        change, as the whole system would be below LEAST_SQUARES_LIMIT (its least-squares problem splits by block
        too). A class's block depends on its own pairs' partition alone: one an earlier round solved is not solved
        again (an active-set round moves the pairs of a few classes), nor a nonsingular one an earlier crossover of
        the solve solved (measured on small one-vs-rest label matrices: a third of the blocks of a solve's
        crossovers)."""
        problem, nS, x = self.problem, S.size, np.empty(rhs.size)
        cuts = np.searchsorted(problem.pairs.label[S], np.arange(problem.n_classes + 1))
        bounds = self.bounds
        for k, (lo, hi) in enumerate(zip(cuts[:-1], cuts[1:])):
            rows = np.r_[lo:hi, nS + k]
            key = (k, sets[bounds[k]:bounds[k + 1]].tobytes())
            if key not in self.blocks:
                shared = self.operator.unique_blocks.get(key)
                self.blocks[key] = (shared if shared is not None else
                                    self._solve(S[lo:hi], np.array([k]), rhs[rows], guess[rows], key))
            if self.blocks[key] is None:
                return None
            x[rows] = self.blocks[key]
        return x

    def offer(self, sets: np.ndarray, solution: PartitionSolution, settled: bool) -> str | None:
        """Record the KKT certificate; a settled solution is accepted ("certified") when its equations hold to
        KKT_TOL and its objective is not above the reference."""
        problem, mu, r, b = self.problem, solution.mu, solution.r, self.b
        mass = class_masses(problem, mu, self.bounds)
        b_stat = abs(float(b.sum())) if problem.hard_b else abs(float(mass.mean()) - 2.0 * problem.bias_penalty *
                                                                  float(b.sum()))
        c = problem.cost
        self.certificate = {
            "box": float(max(0.0, np.max(-mu / c), np.max(mu / c - 1.0))),
            "complementarity": float(max(0.0, np.max(-r, where=sets == IN_V, initial=0.0),
                                         np.max(r, where=sets == IN_I, initial=0.0),
                                         np.max(np.abs(r), where=sets == IN_S, initial=0.0))),
            "mass_spread": float(mass.max() - mass.min()),
            "b_stationarity": b_stat,
            "n_free": int(np.count_nonzero(sets == IN_S)),
        }
        if not settled:
            return None
        stationarity_tol = KKT_TOL * max(1.0, float(np.abs(mass).max()), float(np.abs(b).max()))
        consistent = (self.certificate["mass_spread"] <= stationarity_tol and b_stat <= stationarity_tol
                      and np.all(np.abs(r[sets == IN_S]) <= solution.sign_tol))
        if not consistent:
            return "inconsistent system"
        coef = self.operator.coef(mu)
        value = objective(problem, coef, b, r)
        if not value <= self.reference + 1e-12 * max(1.0, abs(self.reference)):  # also NaN
            return "objective above the MM iterate"
        self.found = coef, b, value
        return "certified"
