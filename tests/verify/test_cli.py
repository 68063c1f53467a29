"""``ovn-cvx verify`` / ``ovn-cvx compare``: exit status, --out files, selection, unavailable solvers."""
import dataclasses
import json
import re
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import ovn_cvx
from ovn_cvx.cli import main
from ovn_cvx.verify import comparison as compare_module


def test_verify_passes_and_writes_reports(tiny_suite, tmp_path, capsys):
    out = tmp_path / "reports"
    status = main(["verify", "--solvers", "CLARABEL", "MM", "--formulations", "SwHb", "kernel-HwSb",
                   "--out", str(out), "--no-progress"])
    text = capsys.readouterr().out
    assert status == 0
    assert "PASSED" in text and "CLARABEL:high" in text and "binary_equivalence" not in text  # HwHb not selected
    comparison = pd.read_csv(out / "comparison.csv")
    assert set(comparison["formulation"]) == {"linear-SwHb", "kernel-SwHb", "kernel-HwSb"}
    assert set(comparison["method"]) == {"CLARABEL:default", "CLARABEL:high", "MM"}
    assert comparison["checked_success"].all()
    checks = pd.read_csv(out / "checks.csv")
    assert checks.columns.tolist() == ["case", "formulation", "check", "measure", "value", "tolerance", "passed"]
    assert checks["passed"].all() and {"kkt", "invariants", "bias_limit"} <= set(checks["check"])
    report = json.loads((out / "report.json").read_text())
    assert report["passed"] and {"summary", "comparison", "checks", "machine"} <= set(report)
    assert (out / "report.md").read_text().startswith("# ovn_cvx verification report")


def test_verify_exits_1_when_a_check_fails(tiny_suite, monkeypatch, capsys):
    real = compare_module.run_method

    def lying(problem, method):  # the high-accuracy ECOS result is silently wrong
        result, note = real(problem, method)
        if method.label == "ECOS:high":
            result = dataclasses.replace(result, coef=result.coef * 1.05)
        return result, note

    monkeypatch.setattr(compare_module, "run_method", lying)
    status = main(["verify", "--solvers", "CLARABEL", "ECOS", "--formulations", "linear-HwHb", "--no-progress"])
    text = capsys.readouterr().out
    assert status == 1
    assert "FAILED" in text and "ECOS:high claims 'optimal' but fails its checks" in text


def test_unavailable_solver_is_reported_and_others_run(tiny_suite, capsys):
    status = main(["verify", "--solvers", "GUROBI", "CLARABEL", "--formulations", "linear-SwSb", "--no-progress"])
    out = capsys.readouterr().out
    assert status == 0
    skipped = [line for line in out.splitlines() if "GUROBI" in line]
    assert len(skipped) == 1 and skipped[0].startswith("skipped: GUROBI — ") and "not installed" in skipped[0]
    assert "CLARABEL:default" in out


def test_only_unavailable_solvers_fail(tiny_suite, capsys):
    assert main(["compare", "--solvers", "MOSEK", "--formulations", "linear-SwSb", "--no-progress"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("FAILED") and "skipped: MOSEK — " in out and "no method could run" in out


def test_compare_prints_the_report(tiny_suite, capsys):
    argv = ["compare", "--solvers", "CLARABEL", "OSQP", "--formulations", "HwHb", "--no-progress"]
    assert main([*argv, "--details"]) == 0
    text = capsys.readouterr().out
    for column in ("success_rate", "correct_rate", "time_sgm", "max_kkt_residual", "OSQP:high", "Per problem"):
        assert column in text
    assert main(argv) == 0  # without --details: the short summary only
    short = capsys.readouterr().out
    assert short.startswith("PASSED") and "OSQP:high" in short and "success_rate" in short
    assert "time_sgm" not in short and "Per problem" not in short and "--details" in short


@pytest.mark.parametrize("argv, message", [
    (["verify", "--formulations", "XwYb"], "argument --formulations: invalid choice: 'XwYb'"),
    (["compare", "--out", __file__], "argument --out: .* is not a directory"),
    (["reproduce", "--datasets", "nope"], "argument --datasets: invalid choice: 'nope'"),
    (["reproduce", "--solver", "NOPE"], "argument --solver: solver 'NOPE' is not a known CVXPY solver"),
    (["reproduce", "--solver", ""], "argument --solver: solver '' is not a known CVXPY solver"),
    (["reproduce", "--seed", "-1"], r"argument --seed: must be in \[0, 4294967295\], got -1"),
    (["reproduce", "--seed", "1.5"], "argument --seed: must be an integer, got '1.5'"),
    (["reproduce", "--max-samples", "5"], "argument --max-samples: must be >= 30"),
    (["reproduce", "--n-jobs", "0"], "argument --n-jobs: must be >= 1, got 0"),
    (["reproduce", "--n-jobs", "two"], "argument --n-jobs: must be an integer, got 'two'"),
    (["reproduce", "--band-seeds", "0"], "argument --band-seeds: must be >= 1, got 0"),
    (["reproduce", "--out", f"{__file__}/below"], "argument --out: .* is not a directory"),
])
def test_bad_arguments_are_usage_errors(argv, message, capsys):
    """Rejected while parsing: exit status 2 and one line naming the argument, before anything runs."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert re.search(message, err) and "Traceback" not in err


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"ovn-cvx {ovn_cvx.__version__}"


def test_progress_lines_without_tqdm(tiny_suite, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # as if the optional tqdm were not installed
    argv = ["compare", "--solvers", "CLARABEL", "--formulations", "linear-SwSb"]
    assert main(argv) == 0
    steps = re.findall(r"ovn-cvx verify: problem (\d+)/(\d+)", capsys.readouterr().err)
    assert steps and [int(done) for done, _ in steps] == list(range(1, int(steps[0][1]) + 1))
    assert main([*argv, "--no-progress"]) == 0
    assert "problem 1/" not in capsys.readouterr().err


def test_console_script_smoke(tmp_path):
    exe = shutil.which("ovn-cvx") or str(__import__("pathlib").Path(sys.executable).with_name("ovn-cvx"))
    done = subprocess.run([exe, "verify", "--solvers", "CLARABEL", "--formulations", "linear-HwHb", "--no-progress",
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASSED" in done.stdout
    summary = pd.read_csv(tmp_path / "summary.csv").set_index("method")
    # the reference preset always succeeds; Clarabel's defaults miss the Δf tolerance on the unseen-label toy
    assert np.isclose(summary.loc["CLARABEL:high", "success_rate"], 1)
    assert summary.loc["CLARABEL:default", "success_rate"] >= 0.8
