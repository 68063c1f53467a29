"""A user's solver as a comparison method (verify.compare, run_suite, the CLI) and the optional solvers' skip path."""
import sys
import types

import numpy as np
import pytest

from ovn_cvx import Problem, SolveResult, solve
from ovn_cvx.cli import main
from ovn_cvx.solvers import cvxpy_solver
from ovn_cvx.solvers.cvxpy_solver import TIGHT_CLARABEL
from ovn_cvx.verify import comparison
from ovn_cvx.verify.checks import Tolerance
from ovn_cvx.verify.comparison import Method, compare, register_method
from ovn_cvx.verify.runner import run_suite


def reference_solver(problem, shift=0.0):
    """The reference's own solution (shifted by ``shift`` in every coefficient)."""
    ref = solve(problem, "cvxpy", solver="CLARABEL", **TIGHT_CLARABEL)
    return ref.coef + shift, ref.b, "optimal"


def perturbed_solver(problem):
    return reference_solver(problem, shift=1e-2)


@pytest.fixture(scope="module")
def problem(multiclass_data):
    X, Y = multiclass_data
    return Problem(X, Y, "HwSb")


@pytest.fixture
def registry(monkeypatch):
    monkeypatch.setattr(comparison, "REGISTERED", {})
    return comparison.REGISTERED


def test_plugins_are_judged_like_the_package_methods(problem, registry):
    register_method("mine", reference_solver)
    register_method("mine-shifted", reference_solver, shift=1e-2)  # options reach the callable
    table = compare(problem, ["CLARABEL:high", "mine", "mine-shifted", perturbed_solver]).set_index("method")
    assert table.loc["mine", "claimed_success"] and table.loc["mine", "checked_success"]
    assert table.loc["mine", "certified"] and table.loc["mine", "rel_gap"] <= 1e-12
    for label in ("mine-shifted", "perturbed_solver"):
        row = table.loc[label]
        assert row["claimed_success"] and not row["checked_success"] and not row["certified"]
        assert row["rel_gap"] > 1e-6
    # its own tolerance, here loose enough for the shifted solution
    loose = Method.plugin("loose", perturbed_solver, tolerance=Tolerance(objective=1.0, decision=1.0,
                                                                              constraints=1.0))
    assert compare(problem, ["CLARABEL:high", loose]).set_index("method").loc["loose", "checked_success"]


def test_plugin_results_and_failures(problem):
    def as_result(p):
        coef, b, _ = reference_solver(p)
        return SolveResult(problem=p, coef=coef, b=b, objective=0.0, status="optimal", method="x", solver="x",
                           solve_time=0.0)

    def raising(p):
        raise ArithmeticError("diverged")

    table = compare(problem, ["CLARABEL:high", as_result, raising, lambda p: (None, None, "max_iter")])
    table = table.set_index("method")
    # the objective it claims (0) is not trusted: scored by ovn_cvx.objective like every result
    assert table.loc["as_result", "checked_success"] and table.loc["as_result", "objective"] > 1
    assert table.loc["raising", "status"] == "solver_error"
    assert "ArithmeticError: diverged" in table.loc["raising", "note"]
    assert table.loc["<lambda>", "status"] == "max_iter" and not table.loc["<lambda>", "claimed_success"]
    with pytest.raises(ValueError, match="'bad-shape'.*shape"):
        compare(problem, [Method.plugin("bad-shape", lambda p: (np.zeros((2, 2)), np.zeros(3), "optimal"))])
    with pytest.raises(TypeError, match="'bad-type'"):
        compare(problem, [Method.plugin("bad-type", lambda p: 1.0)])
    with pytest.raises(TypeError, match="function"):
        register_method("x", "not callable")
    with pytest.raises(ValueError, match="name"):
        register_method("", reference_solver)


def test_run_suite_and_cli_take_a_plugin(tiny, tiny_suite, monkeypatch, capsys):
    suite = tiny[0][:1]
    report = run_suite(suite, solvers=["CLARABEL"], methods=[reference_solver, perturbed_solver],
                       formulations=["SwHb"], presets=("high",), identities=False, progress=False)
    verdict = report.comparison.set_index("method")["checked_success"]
    assert verdict.to_dict() == {"CLARABEL:high": True, "reference_solver": True, "perturbed_solver": False}
    module = types.ModuleType("user_solvers")
    module.good, module.bad = reference_solver, perturbed_solver
    monkeypatch.setitem(sys.modules, "user_solvers", module)
    status = main(["compare", "--solvers", "CLARABEL", "--method", "user_solvers:good", "--method",
                   "user_solvers:bad", "--formulations", "linear-SwHb", "--details", "--no-progress"])
    out = capsys.readouterr().out
    assert status == 0 and "user_solvers:good" in out and "user_solvers:bad" in out


@pytest.mark.parametrize("spec,message", [("no_such_module_xyz:f", "cannot import"), ("os:no_such_function",
                                          "no attribute"), ("os", "module:function"), ("os:sep", "not callable"),
                                          ("qpsolvers", "module:function")])
def test_bad_method_is_a_usage_error(spec, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["compare", "--method", spec])
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


def test_missing_optional_solvers_are_skipped(problem, monkeypatch):
    """PIQP not installed for CVXPY, qpsolvers not importable: both rows say so, the others run."""
    monkeypatch.setattr(cvxpy_solver, "installed_solvers", lambda: ("CLARABEL", "ECOS", "OSQP", "SCS"))
    monkeypatch.setitem(sys.modules, "qpsolvers", None)
    table = compare(problem, ["CLARABEL:high", "PIQP:high", "qpsolvers:piqp", "QP:clarabel"]).set_index("method")
    for label in ("PIQP:high", "qpsolvers:piqp"):
        assert table.loc[label, "status"] == "unavailable" and "not installed" in table.loc[label, "note"]
    assert table.loc["QP:clarabel", "checked_success"] and table.loc["CLARABEL:high", "checked_success"]
