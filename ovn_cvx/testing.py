"""Use the CVXPY reference as a test oracle in any test suite.

from ovn_cvx.testing import assert_matches_reference
assert_matches_reference(my_result)            # solves the reference with Clarabel and compares
"""
from __future__ import annotations

import math

from .kkt import CONSTRAINT_TOL
from ._validation import check_instance
from .problem import Problem
from .result import SolveResult
from .solve import solve
from .verify.checks import Tolerance, reference_agreement


def assert_matches_reference(result: SolveResult, problem: Problem | None = None, *, rtol: float = 1e-6,
                             ftol: float | None = 1e-4, ctol: float = CONSTRAINT_TOL,
                             reference: SolveResult | None = None, solver: str = "CLARABEL") -> SolveResult:
    """Raise ``AssertionError`` with a readable diff unless ``result`` passes
    :func:`~ovn_cvx.verify.checks.reference_agreement` against the reference.

    Limits: the relative objective gap |F − F_ref| / max(1, |F_ref|) ≤ ``rtol``; max |Δf| over the training set
    ≤ ``ftol`` (None skips it: b may be non-unique, docs/theory.md §8); hard-constraint residuals ≤ ``ctol``; the
    reported objective equals the exact evaluator's. The reference (``solve(problem, solver=solver)``, ``problem``
    defaulting to ``result.problem``) is computed unless given, and returned so that a caller can re-use it; it must
    be proven (``certified``: its proven bound within its ``gap_tol``), else RuntimeError.
    """
    check_instance("result", result, SolveResult)
    problem = result.problem if problem is None else check_instance("problem", problem, Problem)
    if not result.has_solution:
        raise AssertionError(f"{result.method}/{result.solver} returned no solution (status {result.status!r})")
    if reference is None:
        reference = solve(problem, method="cvxpy", solver=solver)
    if not (reference.success and reference.certified):
        raise RuntimeError(f"the reference ({reference.solver}) is not a proven solution of the problem: status "
                           f"{reference.status!r}, proven relative bound {reference.relative_gap_bound:.2g} "
                           f"(gap_tol {reference.gap_tol})")
    tol = Tolerance(objective=rtol, decision=math.inf if ftol is None else ftol, constraints=ctol)
    check = reference_agreement(result, reference, tol=tol)
    if not check.passed:
        details = check.details
        lines = [f"  {'ok  ' if value <= limit else 'FAIL'} {measure:<26} {value:>12.3e}   limit {limit:.1e}"
                 for measure, (value, limit) in check.deviations.items()]
        header = (f"{result.method}/{result.solver} (status {result.status!r}) does not match the reference "
                  f"{reference.solver} on {reference.problem!r}\n  objective {details['objective']:.12g} vs "
                  f"reference {details['reference_objective']:.12g}")
        raise AssertionError("\n".join([header, *lines]))
    return reference
