"""The CVXPY back end: result fields, statuses surfaced honestly, solver selection errors."""
import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

import ovn_cvx
from ovn_cvx import Problem
from ovn_cvx.exceptions import OvNError, SolverNotAvailable


def test_result_fields_and_decision_function(multiclass_data):
    X, Y = multiclass_data
    r = ovn_cvx.solve(Problem(X, Y, "SwHb", alpha=0.2), solver="clarabel")
    assert (r.method, r.solver, r.status, r.success) == ("cvxpy", "CLARABEL", "optimal", True)
    assert r.coef.shape == (3, 3) and r.b.shape == (3,)
    assert r.solve_time > 0 and r.compile_time > 0 and r.iterations > 0
    X_new = X[:5] + 0.1
    np.testing.assert_allclose(r.decision_function(X_new), X_new @ r.coef + r.b)
    with pytest.raises(ValueError, match="X has 2 features"):
        r.decision_function(X_new[:, :2])


def test_kernel_decision_function_uses_the_training_kernel(multiclass_data):
    X, Y = multiclass_data
    r = ovn_cvx.solve(Problem(X, Y, "HwHb", "rbf", gamma=0.3))
    X_new = X[:4] + 0.05
    np.testing.assert_allclose(r.decision_function(X_new), rbf_kernel(X_new, X, gamma=0.3) @ r.coef + r.b)
    pre = ovn_cvx.solve(Problem(rbf_kernel(X, gamma=0.3), Y, "HwHb", "precomputed"))
    np.testing.assert_allclose(pre.decision_function(rbf_kernel(X_new, X, gamma=0.3)), r.decision_function(X_new),
                               atol=1e-6)


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate:UserWarning")  # the point of the test
def test_iteration_limit_is_not_reported_as_optimal(multilabel_data):
    X, Y, _ = multilabel_data
    r = ovn_cvx.solve(Problem(X, Y, "SwSb", alpha=0.5), solver="OSQP", max_iter=3, polishing=False)
    assert r.status != "optimal" and not r.success


def test_solver_error_is_a_status_not_an_exception(multiclass_data, monkeypatch):
    import cvxpy as cp

    def fail(self, *args, **kwargs):
        raise cp.error.SolverError("simulated failure")

    monkeypatch.setattr(cp.Problem, "solve", fail)
    r = ovn_cvx.solve(Problem(*multiclass_data))
    assert r.status == "solver_error" and not r.success and r.coef is None and np.isnan(r.objective)
    with pytest.raises(RuntimeError, match="simulated failure"):
        r.decision_function(multiclass_data[0])


@pytest.mark.parametrize("solver, match", [("GUROBI_NOT_HERE", "not a known CVXPY solver"),
                                           ("MOSEK", "is not installed; installed solvers: .*CLARABEL")])
def test_unknown_or_missing_solver_lists_the_installed_ones(multiclass_data, solver, match):
    import cvxpy as cp
    if solver in cp.installed_solvers():
        pytest.skip(f"{solver} is installed here")
    with pytest.raises(SolverNotAvailable, match=match) as err:
        ovn_cvx.solve(Problem(*multiclass_data), solver=solver)
    assert isinstance(err.value, ValueError) and isinstance(err.value, OvNError)
    assert err.value.solver == solver and "CLARABEL" in err.value.installed
    assert err.value.known == (solver == "MOSEK")


def test_bad_method_and_problem_type(multiclass_data):
    with pytest.raises(ValueError, match="method must be one of"):
        ovn_cvx.solve(Problem(*multiclass_data), method="newton")
    with pytest.raises(TypeError, match="problem must be an ovn_cvx.Problem"):
        ovn_cvx.solve(multiclass_data)


@pytest.mark.parametrize("options, error, match", [
    ({"verbose": "yes"}, TypeError, "solver option verbose must be True or False"),
    ({"max_iters": "10"}, TypeError, "solver option max_iters must be an integer"),
    ({"max_iters": 2**70}, ValueError, "solver option max_iters must be at most"),
    ({"eps_abs": -1.0}, ValueError, "solver option eps_abs must be > 0"),
    ({"acceleration_lookback": "x"}, TypeError, r"SCS rejected the solver options \['acceleration_lookback'\]"),
])
def test_bad_solver_options_are_named(options, error, match):
    X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0], [0.5, 1.5]])
    problem = Problem(X, np.eye(2)[[0, 1, 0, 1]])
    with pytest.raises(error, match=match):
        ovn_cvx.solve(problem, solver="SCS", **options)


def test_every_solution_carries_a_proven_bound(multilabel_data):
    """The reference's answer carries the proven bound of docs/theory.md §6, sound against an independent optimum (the
    MM solver's certified one) and tight (the polished multipliers: D = F*)."""
    X, Y, s = multilabel_data
    p = Problem(X, Y, "SwSb", alpha=-0.3, sample_weight=s)
    r = ovn_cvx.solve(p)
    best = ovn_cvx.solve(p, method="mm")
    assert r.success and r.certified and r.gap_tol == 1e-6 and best.success
    scale = max(1.0, abs(best.objective))
    assert r.objective - best.objective <= r.gap_bound + 1e-12 * scale
    assert r.gap_bound <= abs(r.objective - best.objective) + best.gap_bound + 1e-9 * scale
    assert r.dual_objective <= best.objective + 1e-12 * scale
    mu = r.dual[p.pairs.sample, p.pairs.label] * p.pairs.sign
    assert ovn_cvx.duality.dual_value(p, mu) == r.dual_objective


def test_an_unproven_optimal_is_not_success():
    """A precomputed Gram whose features have scales 1e6 and 1: Clarabel at its defaults says "optimal", 2e-5 above a
    point the MM solver finds (so at least that far from F*); no bound within gap_tol proves it, so it is reported as
    "optimal_inaccurate", with the back end's word kept."""
    X = np.random.default_rng(0).normal(size=(40, 2)) * np.array([1e6, 1.0])
    p = Problem.from_labels(X @ X.T, np.arange(40) % 3, kernel="precomputed")
    r = ovn_cvx.solve(p)
    feasible = ovn_cvx.solve(p, method="mm")
    assert r.objective - feasible.objective > 1e-5 * abs(feasible.objective)  # truly inaccurate
    assert r.status == "optimal_inaccurate" and not r.success and not r.certified
    assert r.info["backend_status"] == "optimal" and r.has_solution
    assert r.objective - feasible.objective <= r.gap_bound  # the bound still holds


def test_gap_tol_is_checked(multiclass_data):
    with pytest.raises(ValueError, match="gap_tol"):
        ovn_cvx.solve(Problem(*multiclass_data), gap_tol=0.0)


@pytest.mark.parametrize("variant", ["SwHb", "HwHb", "HwSb"])
def test_bound_covers_the_point_as_reported(multiclass_data, variant):
    """A point that leaves the hard constraints at a solver's feasibility tolerance: its bound is about its own
    reported objective (D ≤ F* whatever the point), not about the point with the constraints made exact."""
    from ovn_cvx.solvers.bound import proven_bound

    p = Problem(*multiclass_data, variant)
    best = ovn_cvx.solve(p, method="mm")
    shift = np.zeros_like(best.b)
    shift[0] = 1e-3
    # Σ_k b_k = 0 (hard b) and Σ_k w_k = 0 (hard w) violated, in the direction that raises F
    candidates = [(best.coef + s * shift * p.hard_w, best.b + s * shift) for s in (1.0, -1.0)]
    coef, b = max(candidates, key=lambda point: ovn_cvx.objective(p, *point))
    value = ovn_cvx.objective(p, coef, b)
    assert value - best.objective > 1e-6
    bound = proven_bound(p, coef, b)
    assert bound.primal == value and value - best.objective <= bound.absolute + 1e-12 * max(1.0, value)
