"""The matrix-free form (docs/theory.md §9.10) against the CVXPY reference: every variant, multiclass and
multilabel (with sample weights, an unlabeled row and a −1 entry), the soundness of its proven bound, warm starts,
the automatic choice, and the ε extrapolation on a hand-made path."""
import numpy as np
import pytest

import ovn_cvx
from ovn_cvx import Problem
from ovn_cvx.solvers import mm
from ovn_cvx.solvers.cvxpy_solver import TIGHT_CLARABEL
from ovn_cvx.solvers.mm.matrix_free import Stage, extrapolate
from ovn_cvx.testing import assert_matches_reference


def tight_reference(problem):
    ref = ovn_cvx.solve(problem, solver="CLARABEL", **TIGHT_CLARABEL)
    assert ref.status == "optimal"
    return ref


@pytest.mark.parametrize("variant", ovn_cvx.VARIANTS)
def test_matrix_free_matches_reference(data, variant, make_problem):
    problem = make_problem(data, variant, "linear")
    result = ovn_cvx.solve(problem, method="mm", form="matrix-free")
    assert result.success and result.info["form"] == "matrix-free" and result.info["finish"] == "newton-cg"
    reference = assert_matches_reference(result, rtol=1e-6, ftol=1e-3, reference=tight_reference(problem))
    # the proven bound is a bound: the true gap (to a reference within 1e-9) never exceeds it
    true_gap = result.objective - reference.objective
    assert true_gap <= result.info["gap_bound"] + 1e-9 * max(1.0, abs(reference.objective))


@pytest.mark.parametrize("variant", ["SwSb", "HwHb"])
@pytest.mark.parametrize("alpha, beta", [(0.9, 1e3), (-0.45, 1e-2)])
def test_matrix_free_at_the_edges(variant, alpha, beta):
    """α near either end of its interval (K = 3: −0.5 < α < 1) and β over five decades: certified, and the bound
    holds against the tight reference."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 4)) * np.array([1e-2, 1.0, 10.0, 1.0])
    y = rng.integers(0, 3, 60)
    X[y == 2] += 0.5
    problem = Problem.from_labels(X, y, variant, alpha=alpha if variant.startswith("Sw") else 0.0, beta=beta)
    result = ovn_cvx.solve(problem, method="mm", form="matrix-free")
    reference = tight_reference(problem)
    assert result.objective - reference.objective <= result.info["gap_bound"] + 1e-9 * max(1, reference.objective)
    assert result.success, result.info
    assert_matches_reference(result, rtol=1e-6, ftol=None, reference=reference)


def test_matrix_free_without_success_reports_its_bound(multilabel_data, make_problem):
    """An iteration limit too small to certify: a non-success status, and a bound that still holds."""
    problem = make_problem(multilabel_data, "SwHb", "linear")
    result = ovn_cvx.solve(problem, method="mm", form="matrix-free", max_iter=3)
    assert result.status == "max_iter" and not result.success
    reference = tight_reference(problem)
    assert result.info["relative_gap_bound"] > result.info["gap_tol"]
    assert result.objective - reference.objective <= result.info["gap_bound"] + 1e-9


def test_matrix_free_warm_start(multiclass_data, make_problem):
    """From the solution at β, the problem at 1.5β: certified, and in fewer Newton iterations than cold."""
    problem = make_problem(multiclass_data, "SwHb", "linear")
    first = ovn_cvx.solve(problem, method="mm", form="matrix-free")
    moved = problem.replace(beta=1.5 * problem.beta)
    cold = ovn_cvx.solve(moved, method="mm", form="matrix-free")
    warm = ovn_cvx.solve(moved, method="mm", form="matrix-free", warm_start=first)
    assert warm.success and cold.success
    assert warm.iterations < cold.iterations
    assert_matches_reference(warm, rtol=1e-6, ftol=None, reference=tight_reference(moved))


def test_matrix_free_rejects_kernel_problems(multiclass_data, make_problem):
    problem = make_problem(multiclass_data, "SwHb", "rbf")
    with pytest.raises(ValueError, match="form='matrix-free' solves linear problems"):
        ovn_cvx.solve(problem, method="mm", form="matrix-free")


def test_auto_form_goes_matrix_free_beyond_the_budget(multiclass_data, make_problem, monkeypatch):
    """The automatic choice: the structured forms while they fit the budget, matrix-free beyond it."""
    problem = make_problem(multiclass_data, "HwHb", "linear")
    assert ovn_cvx.solve(problem, method="mm").info["form"] == "primal"
    monkeypatch.setattr(mm, "STRUCTURED_BUDGET", 10)
    result = ovn_cvx.solve(problem, method="mm")
    assert result.info["form"] == "matrix-free" and result.success


def test_extrapolation_is_exact_on_polynomial_paths():
    """W, b, μ quadratic in ε through three stages: the extrapolation to 0 (and to any ε) is exact."""
    rng = np.random.default_rng(0)
    c0, c1, c2 = (rng.normal(size=(4, 3)) for _ in range(3))

    def path(eps):
        W = c0 + eps * c1 + eps**2 * c2
        return Stage(eps, W, W[0], W[:, 1], np.zeros(4, dtype=np.int8))

    chain = [path(0.2), path(0.02), path(0.002)]
    for eps in (0.0, 2e-4):
        W, b, mu = extrapolate(chain, eps)
        np.testing.assert_allclose(W, path(eps).W, rtol=0, atol=1e-12)
        np.testing.assert_allclose(b, path(eps).b, rtol=0, atol=1e-12)
        np.testing.assert_allclose(mu, path(eps).mu, rtol=0, atol=1e-12)
