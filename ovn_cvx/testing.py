"""Use the CVXPY reference as a test oracle in any test suite.

    from ovn_cvx.testing import assert_matches_reference
    assert_matches_reference(my_result)            # solves the reference with Clarabel and compares
"""
from __future__ import annotations

import numpy as np

from ._validation import check_instance
from .objective import constraint_violation, objective, training_decision
from .problem import Problem
from .result import SolveResult


def assert_matches_reference(result: SolveResult, problem: Problem | None = None, *, rtol: float = 1e-6,
                             ftol: float | None = 1e-4, ctol: float = 1e-8, reference: SolveResult | None = None,
                             solver: str = "CLARABEL") -> SolveResult:
    """Raise ``AssertionError`` with a readable diff unless ``result`` solves ``problem`` like the reference.

    Compared: the relative objective gap |F − F_ref| / max(1, |F_ref|) ≤ ``rtol``; the reported objective equals the
    exact evaluator's; max |Δf| over the training set ≤ ``ftol`` (None skips it: b may be non-unique, SPEC §8);
    hard-constraint residuals ≤ ``ctol``. The reference (``solve(problem, solver=solver)``) is computed unless given,
    and returned so that a caller can re-use it.
    """
    from .solve import solve

    check_instance("result", result, SolveResult)
    problem = result.problem if problem is None else check_instance("problem", problem, Problem)
    if not result.has_solution:
        raise AssertionError(f"{result.method}/{result.solver} returned no solution (status {result.status!r})")
    if reference is None:
        reference = solve(problem, method="cvxpy", solver=solver)
    if not reference.success:
        raise RuntimeError(f"the reference ({reference.solver}) did not solve the problem: status {reference.status!r}")

    exact = objective(problem, result.coef, result.b)
    scale = max(1.0, abs(reference.objective))
    gap = (exact - reference.objective) / scale
    lines, failed = [], False

    def check(name, value, limit, ok):
        nonlocal failed
        failed |= not ok
        lines.append(f"  {'ok  ' if ok else 'FAIL'} {name:<34} {value:>12.3e}   limit {limit:.1e}")

    check("relative objective gap", gap, rtol, abs(gap) <= rtol)
    reported = (result.objective - exact) / max(1.0, abs(exact))
    check("reported vs exact objective", reported, 1e-9, abs(reported) <= 1e-9)
    if ftol is not None:
        df = np.abs(training_decision(problem, result.coef, result.b)
                    - training_decision(problem, reference.coef, reference.b)).max()
        check("max |Δf| on the training set", df, ftol, df <= ftol)
    for name, value in constraint_violation(problem, result.coef, result.b).items():
        check(f"constraint residual {name}", value, ctol, value <= ctol)
    if failed:
        header = (f"{result.method}/{result.solver} (status {result.status!r}) does not match the reference "
                  f"{reference.solver} on {problem!r}\n  objective {exact:.12g} vs reference {reference.objective:.12g}")
        raise AssertionError("\n".join([header, *lines]))
    return reference
