"""The crossover of one class of a separable problem (docs/theory.md §9.8): the active-set polish of the class's own
QP from the partition an interior point's iterates point to, while the other classes go on.

A separable problem (soft w with α = 0, soft b with γ = 0) is K independent QPs, one per class, and the classes of
one interior point converge at different speeds: a class whose polish certifies is exact and stops moving, so the
interior point runs only as long as its slowest class needs to point to its margin set, not until every class's
complementarity is near round-off. The whole point's bound (§6) still decides.
"""
from __future__ import annotations

import numpy as np

from ...objective import objective
from ...problem import Problem
from .active_set import IN_I, IN_S, IN_V, KKT_TOL, PartitionSolution, active_set_finish
from .common import GramOperator
from .polish import DensePartition


class ClassPartition(DensePartition):
    """The :class:`~.active_set.PartitionEngine` of class k's QP alone. Partitions cover every pair (the active-set
    loop's shape); the other classes' pairs sit in I with a negative residual, so no round moves them, and only
    class k's block of the partition system is solved. A solution no pair of class k leaves is accepted when its
    equations hold to KKT_TOL and the whole objective, with class k's coefficients and bias replaced, is not above
    the iterate's (``coef``, ``b``).

    Its solutions' μ vanish off class k's pairs and P⁺ = I (the problem is separable), so class k's column of the
    coefficients and of the decision values is its own pairs' alone: only that column is formed for the offer (the
    partition system's right-hand side still goes through the whole operator)."""

    def __init__(self, problem: Problem, operator: GramOperator, k: int, coef: np.ndarray, b: np.ndarray,
                 iterate_mu: np.ndarray):
        super().__init__(problem, operator, objective(problem, coef, b), b, iterate_mu)
        if not self.separable:
            raise ValueError("a class's own polish needs a separable problem (soft w with alpha = 0, soft b with "
                             "bias_penalty = 0): otherwise the classes' QPs are coupled")
        self.k, self.coef = k, coef
        self.block = slice(self.bounds[k], self.bounds[k + 1])

    def solve(self, sets: np.ndarray) -> PartitionSolution | None:
        """Class k's μ and b_k of its block of the partition's system (by the least change from the iterate's when
        singular); None when even that fails."""
        problem, pairs, k = self.problem, self.problem.pairs, self.k
        S = np.flatnonzero(sets == IN_S)
        nS = S.size
        mu = np.where(sets == IN_V, problem.cost, 0.0)
        rows = np.r_[0:nS, nS + k]
        guess = np.append(self.iterate_mu[S], self.iterate_b[k])
        x = self._solve(S, np.array([k]), self.rhs(S, mu)[rows], guess)
        if x is None:
            return None
        mu[S], self.b = x[:nS], x[nS]
        f = self.decision_column(mu) + self.b
        r = np.full(mu.size, -1.0)  # the other classes: outside this polish
        r[self.block] = 1.0 - pairs.sign[self.block] * f[pairs.sample[self.block]]
        self.mu = mu
        return PartitionSolution(mu, r, float(np.abs(f).max()))

    def offer(self, sets: np.ndarray, solution: PartitionSolution, settled: bool) -> str | None:
        """Accept a settled solution whose equations hold (class k's dual mass Σ y_p μ_p = 0, r_p = 0 on its margin
        set) and whose objective is not above the iterate's."""
        if not settled:
            return None
        block, mu, r = self.block, solution.mu[self.block], solution.r[self.block]
        mass, margin = float(self.problem.pairs.sign[block] @ mu), sets[block] == IN_S
        if not (abs(mass) <= KKT_TOL * max(1.0, float(np.abs(mu).max()), abs(self.b))
                and np.all(np.abs(r[margin]) <= solution.sign_tol)):
            return "inconsistent system"
        coef, b = self.coef.copy(), self.iterate_b.copy()
        coef[:, self.k], b[self.k] = self.coef_column(solution.mu), self.b
        if not objective(self.problem, coef, b) <= self.reference + 1e-12 * max(1.0, abs(self.reference)):  # also NaN
            return "objective above the iterate"
        self.found = coef[:, self.k], self.b
        return "certified"

    def _class_dual(self, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(support, a): the samples of class k's pairs with μ_p ≠ 0 and their entries of column k of A = M P⁺,
        which is P⁺_kk y∘μ of class k's pairs alone for a μ that vanishes off them and a diagonal P⁺ (each sample has
        one pair in a class)."""
        pairs, start = self.problem.pairs, self.block.start
        nonzero = start + np.flatnonzero(mu[self.block])
        return pairs.sample[nonzero], self.operator.pinv[self.k, self.k] * pairs.sign[nonzero] * mu[nonzero]

    def coef_column(self, mu: np.ndarray) -> np.ndarray:
        """Column k of the coefficients of μ (``operator.coef(mu)[:, k]``): w_k = Xᵀa (linear) or a itself."""
        support, a = self._class_dual(mu)
        if self.operator.linear:
            return self.operator.basis[support].T @ a
        column = np.zeros(self.problem.n_samples)
        column[support] = a
        return column

    def decision_column(self, mu: np.ndarray) -> np.ndarray:
        """Class k's decision values without bias of μ at every sample (``operator.apply(mu)[:, k]``)."""
        support, a = self._class_dual(mu)
        basis = self.operator.basis
        if self.operator.linear:
            return basis @ (basis[support].T @ a)
        return basis[:, support] @ a


def polish_class(problem: Problem, operator: GramOperator, k: int, block_sets: np.ndarray, coef: np.ndarray,
                 b: np.ndarray, iterate_mu: np.ndarray, max_rounds: int):
    """Class k's exact solution from its partition ``block_sets`` (IN_V, IN_S, IN_I of its pairs), polished from the
    iterate (``coef``, ``b``, multipliers ``iterate_mu``): (w_k or a_k, b_k, μ of class k's pairs) when it
    certifies, else None."""
    engine = ClassPartition(problem, operator, k, coef, b, iterate_mu)
    sets = np.full(problem.cost.size, IN_I, dtype=np.int8)
    sets[engine.block] = block_sets
    _, reason = active_set_finish(engine, sets, max_rounds=max_rounds)
    if reason != "certified":
        return None
    return *engine.found, engine.mu[engine.block]
