"""``compare --method module:function`` survives any method: a user's module from the current directory whose
functions raise, exit, hang or answer nonsense — each its own failing row, the others pass —
and the exit status a CI job gates on (0 all claims true, 1 a false claim, 3 a method without an answer)."""
import sys
import textwrap

import pandas as pd
import pytest

from ovn_cvx.cli import main

USER_MODULE = textwrap.dedent('''
    import sys
    import time

    import numpy as np

    from ovn_cvx import solve
    from ovn_cvx.solvers.cvxpy_solver import TIGHT_CLARABEL


    def good(problem):
        result = solve(problem, "cvxpy", solver="CLARABEL", **TIGHT_CLARABEL)
        return result.coef, result.b, "optimal"


    def slow_but_in_time(problem):
        time.sleep(0.2)
        return good(problem)


    def false_claim(problem):
        coef, b, _ = good(problem)
        return coef + 1e-2, b, "optimal"


    def honest_failure(problem):
        return None, None, "max_iter"


    def raises(problem):
        raise ArithmeticError("diverged")


    def exits(problem):
        sys.exit(3)


    def hangs(problem):
        time.sleep(600)


    def nonsense(problem):
        return "nonsense"


    def nan_answer(problem):
        coef, b, _ = good(problem)
        return coef * np.nan, b, "optimal"
''')
ANSWERING = ("good", "slow_but_in_time", "honest_failure")
NO_ANSWER = {"raises": ("solver_error", "ArithmeticError: diverged"), "exits": ("solver_error", "called sys.exit(3)"),
             "hangs": ("time_limit", "no answer within the time limit of 1.5 s"),
             "nonsense": ("invalid_answer", "a str, not a SolveResult"),
             "nan_answer": ("invalid_answer", "NaN or infinite")}


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """A module in a fresh current directory that is not on sys.path (as for the console script)."""
    name = f"my_methods_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(USER_MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    return name


def _compare(module, functions, tmp_path, capsys, details=True):
    argv = ["compare", "--solvers", "CLARABEL", "--formulations", "linear-SwHb", "--time-limit", "1.5",
            "--no-progress", "--out", str(tmp_path / "out"), *(["--details"] if details else [])]
    for function in functions:
        argv += ["--method", f"{module}:{function}"]
    status = main(argv)
    table = pd.read_csv(tmp_path / "out" / "comparison.csv").set_index("method")
    return status, capsys.readouterr().out, table


def test_every_failure_is_its_own_row_and_the_others_pass(tiny_suite, user_module, tmp_path, capsys):
    status, out, table = _compare(user_module, [*ANSWERING, *NO_ANSWER], tmp_path, capsys)
    assert status == 3
    assert out.startswith("NO ANSWER: no false success claim on 1 problem, but 5 run(s) of a --method gave no answer")
    for function in ("good", "slow_but_in_time"):
        assert table.loc[f"{user_module}:{function}", "checked_success"]
    assert table.loc[f"{user_module}:honest_failure", "status"] == "max_iter"
    assert table.loc["CLARABEL:high", "checked_success"] and table.loc["CLARABEL:default", "status"] == "optimal"
    for function, (status_text, note) in NO_ANSWER.items():
        row = table.loc[f"{user_module}:{function}"]
        assert row["status"] == status_text and note in row["note"], (function, row["status"], row["note"])
        assert not row["claimed_success"]
        # --details shows why
        [line] = [line for line in out.splitlines() if f"SwHb: {user_module}:{function} {status_text} — " in line]
        assert note in line


def test_a_false_claim_fails_and_true_claims_pass(tiny_suite, user_module, tmp_path, capsys):
    status, out, table = _compare(user_module, ["good", "false_claim", "raises"], tmp_path, capsys)
    assert status == 1 and out.startswith("FAILED: 1 failure(s) on 1 problem")
    assert f"{user_module}:false_claim claims 'optimal' but fails its checks" in out
    assert table.loc[f"{user_module}:false_claim", "claimed_success"]
    assert not table.loc[f"{user_module}:false_claim", "checked_success"]
    status, out, _ = _compare(user_module, ["good", "honest_failure"], tmp_path, capsys)
    assert status == 0 and out.startswith("PASSED: every success claim on 1 problem holds")
    status, out, _ = _compare(user_module, ["good", "raises"], tmp_path, capsys, details=False)
    assert status == 3 and f"  {user_module}:raises: 1 run(s) (solver_error 1); --details shows why" in out
    assert "ArithmeticError" not in out


def test_module_not_found_from_elsewhere_is_a_usage_error(user_module, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path.parent)
    with pytest.raises(SystemExit) as exit_info:
        main(["compare", "--method", f"{user_module}:good"])
    assert exit_info.value.code == 2
    assert f"argument --method: method '{user_module}:good': cannot import module" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "soon"])
def test_bad_time_limit_is_a_usage_error(value, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["compare", "--time-limit", value])
    assert exit_info.value.code == 2 and "argument --time-limit: must be a" in capsys.readouterr().err
