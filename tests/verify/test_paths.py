"""Warm paths: every point of a warm or DPP path is the problem's optimum (the oracle: cold solves and the certified
reference of the same point), DPP compiles once, and the path's own validation."""
import numpy as np
import pandas as pd
import pytest

import ovn_cvx
from ovn_cvx import Problem
from ovn_cvx.solvers.cvxpy_solver import TIGHT_CLARABEL
from ovn_cvx.solvers.verdict import GAP_TOL
from ovn_cvx.verify import paths
from ovn_cvx.verify.checks import Tolerance
from ovn_cvx.verify.comparison import TOLERANCES
from ovn_cvx.verify.paths import PathMethod, path_methods, path_problems, path_summary, run_path

#: the verification's objective tolerance for certified MM and for Clarabel at its defaults (docs/theory.md §10)
MM_TOL = 1e-7  # certified MM ends exact to round-off at the default gap_tol (its promise is 1e-6)
CLARABEL_TOL = TOLERANCES[("default", "CLARABEL")].objective


def _tight_objective(problem):
    """An independent oracle: a fresh, tight Clarabel solve of the same point."""
    return ovn_cvx.solve(problem, solver="CLARABEL", **TIGHT_CLARABEL).objective


def _rel(a, b):
    return abs(a - b) / max(1.0, abs(b))


@pytest.mark.parametrize("variant, kernel, parameter, values", [
    ("SwHb", "linear", "beta", np.geomspace(0.1, 10.0, 5)),
    ("SwSb", "rbf", "alpha", [-0.3, 0.2, 0.6, 0.9, 0.99]),  # up to the degenerate end α → 1
])
def test_warm_and_dpp_points_equal_cold_solves(multiclass_data, variant, kernel, parameter, values):
    problem = Problem(*multiclass_data, variant, kernel, alpha=0.2)
    methods = [PathMethod("MM", "cold"), PathMethod("MM", "warm"), PathMethod("CLARABEL", "cold"),
               PathMethod("CLARABEL", "dpp")]
    points = run_path(problem, parameter, values, methods)
    assert len(points) == len(values) * len(methods)
    assert points["correct"].all() and (points["reference"] == "CLARABEL:high").all()
    by = points.set_index(["method", "index"])["objective"]
    for i, point in enumerate(path_problems(problem, parameter, values)):
        oracle = _tight_objective(point)
        assert _rel(by["MM warm", i], by["MM cold", i]) <= MM_TOL
        assert _rel(by["MM warm", i], oracle) <= MM_TOL
        assert _rel(by["CLARABEL dpp", i], by["CLARABEL cold", i]) <= CLARABEL_TOL
        assert _rel(by["CLARABEL dpp", i], oracle) <= CLARABEL_TOL
    assert points.loc[points["solver"] == "MM", "gap_bound"].max() <= 1e-6 * points["objective"].abs().max()


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_smo_warm_path_reaches_the_cold_optima_with_fewer_steps(multiclass_data, kernel):
    """The dual decomposition along a β path, each point started from the previous one's dual point: every point
    within its proven bound of the tight reference, as the cold solves, in fewer steps over the path."""
    problem = Problem(*multiclass_data, "SwSb", kernel, bias_penalty=0.5)
    values = np.geomspace(0.5, 8.0, 5)
    points = run_path(problem, "beta", values, [PathMethod("SMO", "cold"), PathMethod("SMO", "warm")])
    assert points["correct"].all()
    by = points.set_index(["method", "index"])
    for i, point in enumerate(path_problems(problem, "beta", values)):
        oracle = _tight_objective(point)
        for method in ("SMO cold", "SMO warm"):
            assert _rel(by.loc[(method, i), "objective"], oracle) <= by.loc[(method, i), "relative_gap_bound"] + 1e-9
            assert by.loc[(method, i), "relative_gap_bound"] <= GAP_TOL
    steps = points.groupby("method")["iterations"].sum()
    assert steps["SMO warm"] < steps["SMO cold"]


def test_rbf_width_path_warm_mm_equals_the_reference(multilabel_data):
    X, Y, s = multilabel_data
    problem = Problem(X, Y, "HwSb", "rbf", sample_weight=s)
    methods, skipped = path_methods("rbf_gamma", solvers=("CLARABEL", "OSQP"))
    assert [m.label for m in methods] == ["MM cold", "MM warm", "SMO cold", "SMO warm", "CLARABEL cold", "OSQP cold"]
    assert set(skipped) == {"CLARABEL dpp", "OSQP dpp", "OSQP dpp+warm"}
    gammas = [0.05, 0.2, 1.0]
    points = run_path(problem, "rbf_gamma", gammas, [PathMethod("MM", "warm")])
    for i, point in enumerate(path_problems(problem, "rbf_gamma", gammas)):
        assert point.gamma == gammas[i] and point.bias_penalty == problem.bias_penalty
        assert _rel(points["objective"][i], _tight_objective(point)) <= MM_TOL
    assert points["correct"].all()


def test_dpp_compiles_once_and_equals_a_fresh_compile(multilabel_data, monkeypatch):
    X, Y, s = multilabel_data
    problem = Problem(X, Y, "SwSb", alpha=0.3, sample_weight=s)
    calls = []
    original = paths.build
    monkeypatch.setattr(paths, "build", lambda p: calls.append(p) or original(p))
    step = PathMethod("CLARABEL", "dpp").stepper()
    for point in path_problems(problem, "alpha", [0.3, -0.2, 0.8]):
        swept = step(point)
        fresh = ovn_cvx.solve(point, solver="CLARABEL")  # compiles its own problem
        assert _rel(swept.objective, fresh.objective) <= CLARABEL_TOL
        np.testing.assert_allclose(swept.coef, fresh.coef, atol=Tolerance().decision)
    assert len(calls) == 1


def test_a_wrong_point_is_not_correct(multiclass_data):
    """The path's check can fail: MM stopped after one iteration is far from the reference."""
    problem = Problem(*multiclass_data, "SwHb")

    class Crude(PathMethod):
        def stepper(self):
            return lambda p: ovn_cvx.solve(p, method="mm", finish="none", max_iter=1)

    points = run_path(problem, "beta", [1.0, 2.0], [Crude("MM", "cold")])
    assert not points["correct"].any() and (points["rel_diff"] > MM_TOL).all()


def test_missing_solver_is_skipped():
    methods, skipped = path_methods("beta", solvers=("NOT_A_SOLVER",), mm=False)
    assert methods == [] and "not a known CVXPY solver" in skipped["NOT_A_SOLVER (all modes)"]


def test_path_arguments_are_checked(multiclass_data):
    linear_hw = Problem(*multiclass_data, "HwHb")
    with pytest.raises(ValueError, match="parameter='alpha' needs a soft-w variant"):
        path_problems(linear_hw, "alpha", [0.1])
    with pytest.raises(ValueError, match="parameter='rbf_gamma' needs kernel='rbf'"):
        path_problems(linear_hw, "rbf_gamma", [0.1])
    with pytest.raises(ValueError, match="parameter must be one of"):
        path_problems(linear_hw, "gamma", [0.1])
    with pytest.raises(ValueError, match="values must be"):
        path_problems(linear_hw, "beta", [1.0, np.nan])
    with pytest.raises(ValueError, match="beta"):
        path_problems(linear_hw, "beta", [-1.0])
    with pytest.raises(ValueError, match="CLARABEL has no warm start"):
        PathMethod("CLARABEL", "dpp+warm")
    with pytest.raises(ValueError, match="does not apply to solver 'MM'"):
        PathMethod("MM", "dpp")
    with pytest.raises(ValueError, match="repeats must be"):
        run_path(linear_hw, "beta", [1.0], [PathMethod("MM", "cold")], repeats=0)
    with pytest.raises(ValueError, match="methods must be"):
        run_path(linear_hw, "beta", [1.0], ["MM cold"])
    with pytest.raises(ValueError, match="distinct"):
        run_path(linear_hw, "beta", [1.0], [PathMethod("MM", "cold")] * 2)


def test_path_summary_totals_and_ratios():
    points = pd.DataFrame({
        "method": ["MM cold"] * 2 + ["MM warm"] * 2 + ["OSQP cold"] * 2 + ["OSQP dpp"] * 2,
        "solver": ["MM"] * 4 + ["OSQP"] * 4, "mode": ["cold"] * 2 + ["warm"] * 2 + ["cold"] * 2 + ["dpp"] * 2,
        "claimed_success": [True] * 8, "correct": [True] * 7 + [False],
        "rel_diff": [1e-9, 2e-9, 0, 0, 1e-5, 1e-6, 1e-5, 3e-3], "max_df": [0.1] * 8,
        "gap_bound": [1e-10, 0, 0, 0] + [np.nan] * 4,
        "wall_time": [1.0, 3.0, 0.5, 0.5, 4.0, 4.0, 1.0, 1.0], "iterations": [5, 5, 0, 1, 100, 100, 90, 80]})
    table = path_summary(points).set_index("method")
    assert table.loc["MM warm", "total_time_s"] == 1.0 and table.loc["MM warm", "vs_cold"] == 0.25
    assert table.loc["OSQP dpp", "vs_cold"] == 0.25 and table.loc["OSQP cold", "vs_fastest"] == 8.0
    assert table.loc["OSQP dpp", "correct"] == 1 and table.loc["OSQP dpp", "max_rel_diff"] == 3e-3
    assert table.loc["MM cold", "max_gap_bound"] == 1e-10 and table.loc["MM warm", "iterations"] == 1
