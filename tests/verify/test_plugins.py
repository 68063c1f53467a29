"""A user's solver as a comparison method (verify.compare, run_suite, the CLI) and the optional solvers' skip path."""
import sys
import threading
import time

import numpy as np
import pytest

from ovn_cvx import Problem, SolveResult, solve
from ovn_cvx.cli import main
from ovn_cvx.verify import _worker, plugins
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
    with pytest.raises(TypeError, match="function"):
        register_method("x", "not callable")
    with pytest.raises(ValueError, match="name"):
        register_method("", reference_solver)


def test_run_suite_takes_a_plugin(tiny):
    suite = tiny[0][:1]
    report = run_suite(suite, solvers=["CLARABEL"], methods=[reference_solver, perturbed_solver],
                       formulations=["SwHb"], presets=("high",), identities=False, progress=False)
    verdict = report.comparison.set_index("method")["checked_success"]
    assert verdict.to_dict() == {"CLARABEL:high": True, "reference_solver": True, "perturbed_solver": False}
    # a user's solver is judged at its tolerances: its false claim fails the run
    [failure] = report.failures()
    assert failure.startswith("tiny-mc linear-SwHb: perturbed_solver claims 'optimal' but fails its checks")


def test_each_plugin_is_isolated(problem):
    """Lambdas and local functions run in the worker process too; each failure is its own row, the others pass."""
    coef, b, _ = reference_solver(problem)

    def hangs(p):
        time.sleep(600)

    def exits(p):
        sys.exit("bye")

    with_nan = coef.copy()
    with_nan[0, 0] = np.nan
    methods = ["CLARABEL:high", Method.plugin("good", lambda p: (coef, b, "optimal"), time_limit=1.0),
               Method.plugin("hangs", hangs, time_limit=1.0), exits,
               Method.plugin("nan", lambda p: (with_nan, b, "optimal")),
               Method.plugin("not-a-result", lambda p: 1.0),
               Method.plugin("shape", lambda p: (coef[:, 1:], b, "optimal")),
               Method.plugin("status", lambda p: (coef, b, None)),
               Method.plugin("unpicklable", lambda p: (i for i in range(2))),
               Method.plugin("holds-a-lock", lambda p, lock=threading.Lock(): (coef, b, "optimal"))]
    table = compare(problem, methods).set_index("method")
    assert table.loc["hangs", "wall_time"] < 60  # stopped at its limit, not after its 600 s
    assert table.loc["good", "checked_success"] and table.loc["CLARABEL:high", "checked_success"]
    expected = {"hangs": ("time_limit", "no answer within the time limit of 1 s"),
                "exits": ("solver_error", "called sys.exit('bye')"),
                "nan": ("invalid_answer", "NaN or infinite"), "not-a-result": ("invalid_answer", "a float, not a"),
                "shape": ("invalid_answer", f"coef of shape {coef[:, 1:].shape}"),
                "status": ("invalid_answer", "a status of type NoneType"),
                "unpicklable": ("invalid_answer", "returned a generator that cannot be sent back"),
                "holds-a-lock": ("solver_error", "cannot be sent to a worker process (TypeError: ")}
    for label, (status, note) in expected.items():
        row = table.loc[label]
        assert row["status"] == status and note in row["note"], (label, row["status"], row["note"])
        assert not row["claimed_success"] and not row["checked_success"] and row["kind"] == "plugin"


def test_a_process_that_ends_is_a_row_and_the_next_call_runs(problem):
    outcome = plugins.call_plugin(lambda p: __import__("os")._exit(7), problem, "dies", {})
    assert outcome.status == "solver_error" and outcome.info["error"] == "its process ended (exit status 7)"
    after = plugins.call_plugin(reference_solver, problem, "next", {})
    assert after.success and after.info[plugins.WORKER_LOAD_TIME] > 0  # a new worker started


def test_the_worker_start_is_not_the_methods_wall_time(problem, monkeypatch):
    def slow_start(function, args, time_limit):
        time.sleep(0.2)
        return _worker.Outcome("returned", function(*args), seconds=0.0, load_seconds=0.2)

    monkeypatch.setattr(_worker, "call", slow_start)
    start = time.perf_counter()
    _, result, _, wall_time = comparison._timed_run(Method.plugin("mine", reference_solver), problem)
    assert result.success and 0 <= wall_time <= time.perf_counter() - start - 0.2


@pytest.mark.parametrize("time_limit", [0, -1.0, float("nan"), float("inf"), True, "1"])
def test_time_limit_must_be_positive_and_finite(time_limit):
    with pytest.raises(ValueError, match="time_limit must be a finite number of seconds > 0"):
        Method.plugin("x", reference_solver, time_limit=time_limit)


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


def test_a_plugin_answer_carries_the_proven_bound_of_its_point(problem):
    """The user's status is their claim; the bound beside it is the package's own (docs/theory.md §6), computed from
    the point: within gap_tol at the reference's optimum, and at least the true gap for a shifted point."""
    optimum = solve(problem, "cvxpy", solver="CLARABEL", **TIGHT_CLARABEL).objective
    exact, _ = comparison.run_method(problem, Method.plugin("exact", reference_solver))
    shifted, _ = comparison.run_method(problem, Method.plugin("shifted", perturbed_solver))
    assert exact.status == shifted.status == "optimal"  # both claim it
    assert exact.certified and exact.relative_gap_bound <= 1e-6
    assert not shifted.certified and shifted.gap_bound >= shifted.objective - optimum > 1e-4
    assert shifted.dual_objective <= optimum * (1 + 1e-9)
