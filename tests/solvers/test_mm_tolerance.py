"""The MM solver's gap_tol as a speed knob: below EXACT_BELOW the interior point runs on to the exact optimum (its
crossover); from it up it stops once an iterate is proven within gap_tol. Every answer against the CVXPY reference,
and against the strong convexity of R = ½‖W‖² (α = 0): ½‖W − W*‖² ≤ F − F* ≤ the proven bound."""
import numpy as np
import pytest

import ovn_cvx
from ovn_cvx import OvNClassifier, Problem
from ovn_cvx.solvers.cvxpy_solver import TIGHT_CLARABEL
from ovn_cvx.solvers.mm.finish import EXACT_BELOW

from test_mm_linear_default import default_problem


@pytest.fixture(scope="module")
def default_and_reference():
    """A separable problem like the estimator's linear default (SwSb, every non-member a negative, bias_penalty 0,
    β = 16/κ₀; without its negative balance) on 600 rows (5 classes, 4 features), its CLARABEL optimum and the MM
    solver's exact answer."""
    problem = default_problem(600, n_features=4, n_classes=5)
    reference = ovn_cvx.solve(problem, method="cvxpy", **TIGHT_CLARABEL)
    assert reference.status == "optimal"
    return problem, reference, ovn_cvx.solve(problem, method="mm")


def distance_bound(result, reference) -> None:
    """½‖W − W*‖² ≤ F − F* ≤ gap_bound (R = ½‖W‖², α = 0): the answer is as close as its proven bound says."""
    assert 0.5 * np.sum((result.coef - reference.coef) ** 2) <= result.gap_bound + 1e-9 * abs(reference.objective)


@pytest.mark.parametrize("gap_tol", [EXACT_BELOW, 1e-4, 1e-3, 1e-2])
def test_a_loose_gap_tol_stops_once_proven_short_of_the_exact_optimum(default_and_reference, gap_tol):
    """Proven within gap_tol, without the crossover; fewer iterations than the exact finish from 1e-4 up (at 1e-5
    itself the exact path's early crossover can finish an iteration sooner on small problems)."""
    problem, reference, exact = default_and_reference
    result = ovn_cvx.solve(problem, method="mm", gap_tol=gap_tol)
    assert result.success and result.finish == "interior"
    assert result.relative_gap_bound <= gap_tol
    if gap_tol >= 1e-4:
        assert result.iterations < exact.iterations
    # the bound is a bound: the reference's optimum lies within it
    assert result.objective - reference.objective <= result.gap_bound + 1e-9 * abs(reference.objective)
    distance_bound(result, reference)


def test_below_exact_below_the_answer_is_exact(default_and_reference):
    """Just below EXACT_BELOW the crossover finishes: the optimum to round-off, not only within gap_tol; at it, the
    interior point's proven iterate (a bound well above round-off on this problem)."""
    problem, reference, _ = default_and_reference
    below = ovn_cvx.solve(problem, method="mm", gap_tol=EXACT_BELOW * (1 - 1e-9))
    assert below.success and below.finish == "interior + polish"
    assert below.relative_gap_bound <= 1e-9
    np.testing.assert_allclose(below.objective, reference.objective, rtol=1e-9)
    at = ovn_cvx.solve(problem, method="mm", gap_tol=EXACT_BELOW)
    assert at.finish == "interior" and 1e-9 < at.relative_gap_bound <= EXACT_BELOW


@pytest.mark.parametrize("variant", ["SwHb", "HwSb", "HwHb"])
def test_loose_gap_tol_on_coupled_problems(variant):
    """Coupled classes (Σb = 0, or hard w: one block of every pair): the same path, the same promise."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 3))
    Y = np.where(np.argmax(X @ rng.normal(size=(3, 4)), axis=1)[:, None] == np.arange(4), 1.0, -1.0)
    problem = Problem(X, Y, variant, beta=2.0)
    reference = ovn_cvx.solve(problem, method="cvxpy", **TIGHT_CLARABEL)
    result = ovn_cvx.solve(problem, method="mm", gap_tol=1e-3)
    assert result.success and result.finish == "interior" and result.relative_gap_bound <= 1e-3
    assert result.objective - reference.objective <= result.gap_bound + 1e-9 * abs(reference.objective)


def test_the_estimators_tol_reaches_the_solver(default_and_reference):
    """``OvNClassifier(tol=...)`` is the solver's gap_tol: a looser tol, fewer iterations, the proven bound within
    it, and coefficients as close to the exact fit's (the default tol: exact to round-off) as the bound allows."""
    problem = default_and_reference[0]
    X, y = problem.X, np.argmax(problem.Y, axis=1)
    exact, loose = OvNClassifier().fit(X, y).result_, OvNClassifier(tol=1e-3).fit(X, y).result_
    assert exact.finish == "interior + polish" and exact.relative_gap_bound <= 1e-9
    assert loose.relative_gap_bound <= 1e-3 and loose.iterations < exact.iterations
    distance_bound(loose, exact)
