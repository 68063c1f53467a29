"""Use the CVXPY reference as a test oracle in any test suite.

from ovn_cvx.testing import assert_matches_reference
assert_matches_reference(my_result)            # solves the reference with Clarabel and compares
"""
from __future__ import annotations

import math

from .kkt import CONSTRAINT_TOL
from ._validation import check_instance, check_number
from .problem import Problem
from .result import SolveResult
from .solve import solve
from .verify.checks import Tolerance, reference_agreement


def assert_matches_reference(result: SolveResult, problem: Problem | None = None, *, rtol: float = 1e-6,
                             ftol: float | None = 1e-4, ctol: float = CONSTRAINT_TOL,
                             reference: SolveResult | None = None, solver: str = "CLARABEL") -> SolveResult:
    """Raise ``AssertionError`` with a readable diff unless ``result`` passes
    :func:`~ovn_cvx.verify.checks.reference_agreement` against the reference.

    Parameters
    ----------
    result : SolveResult
        The answer under test (any method's, or one built from your own solver's coef and b).
    problem : Problem or None, default=None
        The problem it answers; ``result.problem`` by default.
    rtol : float, default=1e-6
        Limit on the relative objective gap |F − F_ref| / max(1, |F_ref|).
    ftol : float or None, default=1e-4
        Limit on max |Δf| of the decision values over the training set; None skips it (b may be non-unique,
        docs/theory.md §8).
    ctol : float, default=CONSTRAINT_TOL
        Limit on the hard-constraint residuals.
    reference : SolveResult or None, default=None
        A reference solution to re-use; computed when None.
    solver : str, default="CLARABEL"
        The CVXPY solver of the reference.

    Returns
    -------
    SolveResult
        The reference, so that a caller can re-use it.

    Raises
    ------
    AssertionError
        When a measure exceeds its limit (one line per measure, each with its limit), when the reported objective
        differs from the exact evaluator's, or when ``result`` has no solution.
    RuntimeError
        When the reference is not a proven solution (``certified``: its proven bound within its ``gap_tol``).

    Examples
    --------
    >>> import numpy as np, ovn_cvx
    >>> from ovn_cvx.testing import assert_matches_reference
    >>> X = np.random.default_rng(0).normal(size=(30, 2))
    >>> problem = ovn_cvx.Problem.from_labels(X, X.argmax(axis=1))
    >>> reference = assert_matches_reference(ovn_cvx.solve(problem))
    """
    check_instance("result", result, SolveResult)
    rtol, ctol = check_number("rtol", rtol, low=0), check_number("ctol", ctol, low=0)
    ftol = math.inf if ftol is None else check_number("ftol", ftol, low=0)
    problem = result.problem if problem is None else check_instance("problem", problem, Problem)
    if not result.has_solution:
        raise AssertionError(f"{result.method}/{result.solver} returned no solution (status {result.status!r})")
    if reference is None:
        reference = solve(problem, method="cvxpy", solver=solver)
    if not (reference.success and reference.certified):
        raise RuntimeError(f"the reference ({reference.solver}) is not a proven solution of the problem: status "
                           f"{reference.status!r}, proven relative bound {reference.relative_gap_bound:.2g} "
                           f"(gap_tol {reference.gap_tol})")
    tol = Tolerance(objective=rtol, decision=ftol, constraints=ctol)
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
