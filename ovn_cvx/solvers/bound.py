"""The proven bound of a point from a solver that reports no usable multipliers (docs/theory.md §6)."""
from __future__ import annotations

import time

import numpy as np

from ..duality import GapBound, gap_bound
from ..kkt import primal_bound
from ..objective import objective, residuals
from ..problem import Problem
from ..result import within_gap_tol
from .mm.common import GramOperator
from .mm.polish import polish
from .verdict import report_fields

#: band half-widths of the margin set from which the bound's active-set polish starts (a back end's margin residuals
#: are at its own accuracy)
BOUND_BANDS = (1e-7, 1e-5)


def proven_bound(problem: Problem, coef, b) -> GapBound:
    """The proven bound on F − F* of a point from any solver that reports no usable multipliers (CVXPY does not
    return the duals of the hinge's ``pos`` atom): the multipliers of the point's margin set polished to the
    optimal partition (docs/theory.md §9.5; then D(μ) = F* and the bound is F − F* itself), else those recovered from
    the point as in the KKT certificate (:func:`ovn_cvx.kkt.primal_bound`), made dual feasible. The bound is about
    the point as given, whose hard constraints a solver leaves at its feasibility tolerance: D(μ) ≤ F* whatever the
    point, so F − D(μ) ≥ F − F* holds for its reported objective F (a bound at the point with the constraints made
    exact was measured 2e-9 below the reported point's gap, OSQP near α's end)."""
    value = objective(problem, coef, b)
    outcome = polish(problem, GramOperator(problem), residuals(problem, coef, b), np.inf, BOUND_BANDS)
    if outcome.certified:
        return gap_bound(problem, coef, b, outcome.mu, primal=value)
    return primal_bound(problem, coef, b)


def bound_fields(problem: Problem, coef, b, gap_tol: float) -> tuple[dict, bool]:
    """(the typed report fields of the proven bound of (coef, b), whether it is within ``gap_tol``, the seconds it
    took); no bound (inf) when the multipliers' systems could not be solved."""
    start = time.perf_counter()
    try:
        bound = proven_bound(problem, coef, b)
    except np.linalg.LinAlgError:
        bound = GapBound(primal=objective(problem, coef, b), dual=-np.inf)
    return report_fields(problem, bound, gap_tol), within_gap_tol(bound.relative, gap_tol), time.perf_counter() - start

