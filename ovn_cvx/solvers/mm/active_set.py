"""The active-set finish (docs/theory.md §9.5, §9.11): guess the optimal partition of the pairs, solve the equality
system it poses, check the KKT inequalities, move the pairs that violate them, repeat.

Partition of the pairs: V (μ_p = c_p, r_p ≥ 0), S (r_p = 0, 0 ≤ μ_p ≤ c_p), I (μ_p = 0, r_p ≤ 0). On a fixed
partition the KKT conditions of §6 are linear; their solution is an optimum exactly when 0 ≤ μ_S ≤ c_S, r_V ≥ 0 and
r_I ≤ 0. :func:`active_set_finish` is the one loop; an engine (a :class:`PartitionEngine`) says how a partition's
system is solved and what becomes of a solution: the dense pair-form system of the structured forms (``polish``),
the matrix-free form's solve from its stage point (``matrix_free``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ...problem import Problem

IN_V, IN_S, IN_I = 1, 0, -1
#: active-set rounds (partition systems solved) of one finish
MAX_ROUNDS = 10
#: the KKT inequalities' tolerance: relative to c_p for μ_p outside [0, c_p] (``box_tol``), to max(1, |f|) for a
#: residual of the wrong sign (``sign_tol``)
KKT_TOL = 1e-9


def partition(r: np.ndarray, delta: float) -> np.ndarray:
    """V above the band (r_p > δ), I below it (r_p < −δ), S within it."""
    return np.where(r > delta, IN_V, np.where(r < -delta, IN_I, IN_S)).astype(np.int8)


def free_parameters(problem: Problem) -> int:
    """K(d+1): a non-degenerate optimum has at most this many margin pairs."""
    return problem.n_classes * (problem.rank_bound + 1)


def free_limit(problem: Problem) -> int:
    """Largest S the finish tries. A non-degenerate optimum has at most K(d+1) margin pairs (d = M, or the
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


@dataclass
class PartitionSolution:
    """The solution of one partition's system: the multipliers μ, the residuals r and the largest decision value
    |f| (the scale of the sign test)."""

    mu: np.ndarray
    r: np.ndarray
    scale: float

    @property
    def sign_tol(self) -> float:
        """The sign test's tolerance: KKT_TOL relative to max(1, |f|)."""
        return KKT_TOL * max(1.0, self.scale)


class PartitionEngine(Protocol):
    """What :func:`active_set_finish` needs of an engine: the structured forms' dense pair-form system
    (``polish.DensePartition``) and the matrix-free form's solve from its stage point
    (``matrix_free.PartitionRestart``)."""

    problem: Problem
    #: whether a partition no pair leaves, its solution not accepted, is solved once more from that solution
    #: (iterative refinement of an inexact solve)
    refines: bool

    def solve(self, sets: np.ndarray) -> PartitionSolution | None:
        """The solution of the equality system of the partition ``sets``; None when it could not be solved."""

    def offer(self, sets: np.ndarray, solution: PartitionSolution, settled: bool) -> str | None:
        """Judge the solution (``settled``: no pair moves): why the finish ends ("certified", or why not), or None
        to go on."""


def active_set_finish(engine: PartitionEngine, sets: np.ndarray, *, max_rounds: int = MAX_ROUNDS,
                      tried: set[bytes] | None = None) -> tuple[int, str]:
    """The active-set rounds from the partition ``sets``: solve its system, let the engine judge the solution,
    move the pairs whose KKT inequality fails (:func:`active_set_move`, tolerance KKT_TOL), and again, at most
    ``max_rounds`` times. A partition is solved once: ``tried`` (the engine's record across finishes, else this
    finish's) holds those solved, and a margin set beyond :func:`free_limit` is not tried. Returns (rounds, why the
    finish ended)."""
    tried = set() if tried is None else tried
    limit, cost = free_limit(engine.problem), engine.problem.cost
    reason, refining = "max_rounds", False
    for rounds in range(1, max_rounds + 1):
        if not refining:
            key = sets.tobytes()
            if np.count_nonzero(sets == IN_S) > limit:
                reason = "too many margin pairs"
                break
            if key in tried:
                reason = "cycle"
                break
            tried.add(key)
        solution = engine.solve(sets)
        if solution is None:
            reason = "singular system"
            break
        moved = active_set_move(sets, solution.mu, cost, solution.r, KKT_TOL, solution.sign_tol)
        verdict = engine.offer(sets, solution, moved is None)
        if verdict is not None:
            reason = verdict
            break
        if moved is None and (refining or not engine.refines):
            reason = "settled"
            break
        refining = moved is None
        sets = sets if refining else moved
    return rounds, reason
