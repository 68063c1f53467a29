"""The one verdict every solver of the package gives on a proven bound, and the report fields that carry it."""
from __future__ import annotations

from ..duality import GapBound, signed_dual
from ..problem import Problem
from ..result import within_gap_tol

#: the default requested accuracy of every method: "optimal" needs a proven relative bound within it (docs/theory.md §6)
GAP_TOL = 1e-6


def verdict(bound: GapBound, gap_tol: float, hit_limit: bool) -> str:
    """"optimal" only with a proven bound within the requested accuracy; else "max_iter" when a budget ended the
    run, "inaccurate" when the method stopped by itself."""
    if within_gap_tol(bound.relative, gap_tol):
        return "optimal"
    return "max_iter" if hit_limit else "inaccurate"


def report_fields(problem: Problem, bound: GapBound, gap_tol: float, dual=None) -> dict:
    """The typed report fields of :class:`~ovn_cvx.SolveResult` for a proven ``bound`` judged against ``gap_tol``;
    ``dual``: the dual point behind it as M = Y ∘ μ (by default from the bound's multipliers)."""
    return {"gap_bound": bound.absolute, "relative_gap_bound": bound.relative, "dual_objective": bound.dual,
            "gap_tol": gap_tol, "dual": signed_dual(problem, bound.mu) if dual is None else dual}
