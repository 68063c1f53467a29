"""compare(): one row per method, claimed vs checked success, unavailable methods, the reference."""
import dataclasses
import math
import sys

import numpy as np
import pandas as pd
import pytest

from ovn_cvx import Problem, solve
from ovn_cvx.verify import comparison as compare_module
from ovn_cvx.testing import assert_matches_reference
from ovn_cvx.exceptions import SolverNotAvailable
from ovn_cvx.verify.checks import Tolerance, reference_agreement
from ovn_cvx.verify.comparison import Method, compare, compare_runs, default_methods, run_method
from ovn_cvx.verify.results import SuiteReport, shifted_geometric_mean
from ovn_cvx.verify.runner import run_suite
from ovn_cvx.solvers.verdict import GAP_TOL

COLUMNS = {"method", "solver", "preset", "status", "claimed_success", "checked_success", "certified", "objective",
           "rel_gap", "max_df", "prediction_agreement", "constraint_violation", "kkt_residual", "kkt_stationarity",
           "kkt_spread", "kkt_box", "kkt_complementarity", "kkt_duality_gap", "compile_time", "solve_time",
           "wall_time", "iterations", "note", "reference"}


@pytest.fixture(scope="module")
def problem(multiclass_data):
    X, Y = multiclass_data
    return Problem(X, Y, "SwHb", alpha=0.2)


def test_compare_rows(problem):
    table = compare(problem, ["CLARABEL", "CLARABEL:high", "ECOS:high", "MM", "GUROBI:high"])
    assert COLUMNS <= set(table.columns)
    assert list(table["method"]) == ["CLARABEL:default", "CLARABEL:high", "ECOS:high", "MM", "GUROBI:high"]
    ran = table.iloc[:4]
    assert ran["claimed_success"].all() and ran["checked_success"].all() and ran["certified"].all()
    assert (ran["rel_gap"] <= 1e-6).all() and (ran["max_df"] <= 1e-4).all()
    ref = table[table["reference"]]
    assert list(ref["method"]) == ["CLARABEL:high"] and ref["rel_gap"].iloc[0] == 0
    gurobi = table.iloc[4]
    assert gurobi["status"] == "unavailable" and not gurobi["claimed_success"] and not gurobi["checked_success"]
    assert "GUROBI" in gurobi["note"] and "not installed" in gurobi["note"]


def test_checked_rows_agree_with_the_testing_oracle(problem, monkeypatch):
    """Compare's verdicts against ovn_cvx.testing.assert_matches_reference (solves its own Clarabel reference)."""
    real = compare_module.run_method

    def lying(p, method):
        result, note = real(p, method)
        if method.label == "SCS:high":
            result = dataclasses.replace(result, coef=result.coef + 1e-3)
        return result, note

    monkeypatch.setattr(compare_module, "run_method", lying)
    table, results, reference = compare_runs(problem, ["CLARABEL:high", "ECOS:high", "MM", "SCS:high"])
    verdict = table.set_index("method")["checked_success"]
    assert verdict.to_dict() == {"CLARABEL:high": True, "ECOS:high": True, "MM": True, "SCS:high": False}
    for label in ("ECOS:high", "MM"):
        assert_matches_reference(results[label], rtol=1e-6, ftol=1e-4)
    with pytest.raises(AssertionError):
        assert_matches_reference(results["SCS:high"], rtol=1e-6, ftol=1e-4)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_smo_is_judged_by_its_proven_bound(multiclass_data, kernel):
    """The dual decomposition's row: its claim checked against the reference within the bound it proves (GAP_TOL,
    plus the reference's own error) — tighter than the default presets of the first-order solvers."""
    X, Y = multiclass_data
    table, results, _ = compare_runs(Problem(X, Y, "SwSb", kernel=kernel, beta=2.0, bias_penalty=0.5),
                                     ["CLARABEL:high", "SMO"])
    smo = table.set_index("method").loc["SMO"]
    assert smo["kind"] == "smo" and smo["claimed_success"] and smo["checked_success"]
    assert smo["rel_gap"] <= results["SMO"].relative_gap_bound + 1e-8 <= GAP_TOL + 1e-8
    assert compare_module.tolerances(Method.parse("SMO"), results["SMO"]).objective == GAP_TOL + 1e-8


def test_a_false_smo_claim_fails_the_suite(tiny, monkeypatch):
    """An SMO answer off by more than its promise while claiming "optimal" is a false success claim: the suite
    fails naming it, as for MM (a default-preset CVXPY solver would only lower its correct rate)."""
    real = compare_module.run_method

    def lying(p, method):
        result, note = real(p, method)
        if method.label == "SMO" and result is not None:
            result = dataclasses.replace(result, b=result.b + 1e-2)  # an objective gap far beyond 1e-6
        return result, note

    monkeypatch.setattr(compare_module, "run_method", lying)
    suite, _ = tiny
    report = run_suite(suite[:1], solvers=["CLARABEL", "SMO"], formulations=["linear-SwSb"], binary=(),
                       progress=False)
    smo = report.comparison[report.comparison["method"] == "SMO"]
    assert smo["claimed_success"].all() and not smo["checked_success"].any()
    assert smo["rel_gap"].min() > GAP_TOL + 1e-8
    assert not report.passed and any("SMO claims 'optimal'" in reason for reason in report.failures())


def test_missing_mm_module_is_recorded_not_raised(problem, monkeypatch):
    monkeypatch.setitem(sys.modules, "ovn_cvx.solvers.mm", None)  # import fails as if the module did not exist
    table = compare(problem, ["CLARABEL", "MM"])
    mm = table.set_index("method").loc["MM"]
    assert mm["status"] == "unavailable" and "unavailable" in mm["note"]
    assert table.set_index("method").loc["CLARABEL:default", "checked_success"]


def test_only_an_unavailable_solver_is_recorded_other_errors_are_raised(problem):
    """run_method tells the two apart by type (SolverNotAvailable), not by the text of the message."""
    result, note = run_method(problem, Method("NOPE:default", "cvxpy", "NOPE", "default"))
    assert result is None and note.startswith("unavailable: solver 'NOPE' is not a known CVXPY solver")
    with pytest.raises(ValueError, match="not installed") as err:  # a bad option whose message looks alike
        run_method(problem, Method("CLARABEL:x", "cvxpy", "CLARABEL", "x", {"parametrization": "not installed"}))
    assert not isinstance(err.value, SolverNotAvailable)


def test_tolerance_is_checked(problem):
    assert Tolerance().objective == 1e-6 and Tolerance(decision=math.inf).decision == math.inf
    with pytest.raises(ValueError, match="Tolerance.decision"):
        Tolerance(decision=-1e-3)
    with pytest.raises(TypeError, match="Tolerance.objective"):
        Tolerance(objective="1e-6")
    with pytest.raises(TypeError, match="tol must be a Tolerance"):
        reference = solve(problem)
        reference_agreement(reference, reference, tol={"objective": 1e-3})
    with pytest.raises(dataclasses.FrozenInstanceError):
        Tolerance().objective = 1.0


def test_wrong_claimed_success_is_not_checked_success(problem, monkeypatch):
    real = compare_module.run_method

    def lying(p, method):  # ECOS claims 'optimal' for a shifted solution
        result, note = real(p, method)
        if method.solver == "ECOS":
            result = dataclasses.replace(result, b=result.b + np.array([0.05, -0.05, 0.0]))
        return result, note

    monkeypatch.setattr(compare_module, "run_method", lying)
    table = compare(problem, ["CLARABEL:high", "ECOS:high"]).set_index("method")
    assert table.loc["ECOS:high", "claimed_success"] and not table.loc["ECOS:high", "checked_success"]
    assert not table.loc["ECOS:high", "certified"]
    assert table.loc["CLARABEL:high", "checked_success"]


def test_reference_falls_back_when_clarabel_fails(problem, monkeypatch):
    real = compare_module.run_method

    def failing(p, method):
        result, note = real(p, method)
        if method.solver == "CLARABEL":
            result = dataclasses.replace(result, coef=None, b=None, objective=np.nan, status="solver_error")
        return result, note

    monkeypatch.setattr(compare_module, "run_method", failing)
    table = compare(problem, ["CLARABEL:high", "ECOS:high", "OSQP:high"]).set_index("method")
    assert not table.loc["CLARABEL:high", "claimed_success"]
    assert table["reference"].sum() == 1 and not table.loc["CLARABEL:high", "reference"]
    assert table.loc[["ECOS:high", "OSQP:high"], "checked_success"].all()


def test_method_parsing():
    assert Method.parse("osqp:high") == Method("OSQP:high", "cvxpy", "OSQP", "high")
    assert Method.parse("mm").method == "mm"
    assert Method.parse("smo") == Method("SMO", "smo", "SMO", "default")
    assert Method.parse("SCS:high").options["eps_abs"] == 1e-8
    # 9 CVXPY solvers (4 core, 5 of the extra) at two presets, the package's MM and SMO, 4 QP methods
    assert len(default_methods()) == 9 * 2 + 2 + 4
    assert [m.label for m in default_methods(mm=True)][18:20] == ["MM", "SMO"]
    assert Method.parse("qp") == Method("QP:clarabel", "qp", "clarabel", "default")
    assert Method.parse("qpsolvers:piqp") == Method("qpsolvers:piqp", "qp", "piqp", "default")
    with pytest.raises(ValueError, match="qpsolvers:BACKEND"):
        Method.parse("qpsolvers")
    with pytest.raises(ValueError, match="preset"):
        Method.parse("CLARABEL:ultra")
    with pytest.raises(TypeError):
        Method.parse(3)
    with pytest.raises(TypeError, match="Problem"):
        compare("not a problem")


def test_shifted_geometric_mean():
    assert shifted_geometric_mean([0.0, 10.0], shift=10.0) == pytest.approx(np.sqrt(200) - 10)
    assert shifted_geometric_mean([5.0, 5.0]) == pytest.approx(5.0)


def test_summary_metrics_by_hand():
    """Success = solved and checked; correct = checked among claimed; failures charged the slowest time."""
    rows = []
    for i, (claimed, checked, t) in enumerate([(True, True, 0.010), (True, False, 0.030), (False, False, 0.020)]):
        rows.append({"case": f"p{i}", "formulation": "linear-SwHb", "method": "A", "kind": "cvxpy", "preset": "default",
                     "status": "optimal", "claimed_success": claimed, "checked_success": checked, "certified": checked,
                     "solve_time": t, "wall_time": t + 0.1, "rel_gap": 0.0, "max_df": 0.0, "constraint_violation": 0.0,
                     "kkt_residual": 0.0})
        rows.append({**rows[-1], "method": "B", "claimed_success": True, "checked_success": True,
                     "certified": True, "solve_time": 0.040, "wall_time": 0.2})
    report = SuiteReport(comparison=pd.DataFrame(rows), checks=pd.DataFrame(
        columns=["case", "formulation", "check", "measure", "value", "tolerance", "passed"]))
    summary = report.summary().set_index("method")
    assert summary.loc["A", "success_rate"] == pytest.approx(1 / 3)
    assert summary.loc["A", "correct_rate"] == pytest.approx(1 / 2)
    assert summary.loc["B", "success_rate"] == 1 and summary.loc["B", "correct_rate"] == 1
    # A: 10 ms, then charged the slowest (B's 40 ms) twice; B: 40 ms three times. Ratios of the shifted means
    # (shift 10 ms) themselves, as qpbenchmark normalises them
    shifted_a = np.exp(np.log([20.0, 50.0, 50.0]).mean())
    assert summary.loc["A", "time_sgm"] == pytest.approx(1.0)
    assert summary.loc["B", "time_sgm"] == pytest.approx(50.0 / shifted_a)
    # wall time: A 110 ms, then charged B's 200 ms twice; B 200 ms three times
    assert summary.loc["B", "wall_sgm"] == pytest.approx(210.0 / np.exp(np.log([120.0, 210.0, 210.0]).mean()))
    assert report.failures() == []  # default preset: a wrong claim lowers the correct rate, no suite failure
    report.comparison.loc[report.comparison["method"] == "A", "kind"] = "plugin"  # a user's solver: it does
    assert len(report.failures()) == 1
    report.comparison.loc[report.comparison["method"] == "A", ["kind", "preset"]] = ["cvxpy", "high"]
    assert len(report.failures()) == 1
