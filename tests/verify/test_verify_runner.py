"""run_suite and the reports it writes."""
import json
import sys
import types

import pandas as pd
import pytest

from ovn_cvx._progress import progress_steps
from ovn_cvx.verify.runner import run_suite

SUMMARY_COLUMNS = ["method", "problems", "success_rate", "correct_rate", "certified_rate", "time_sgm", "wall_sgm",
                   "median_rel_gap", "max_rel_gap", "max_df", "max_constraint_violation", "max_kkt_residual",
                   "total_time_s"]
CHECK_COLUMNS = ["case", "formulation", "check", "measure", "value", "tolerance", "passed"]


@pytest.fixture(scope="module")
def report(tiny):
    suite, binary = tiny
    return run_suite(suite, solvers=["CLARABEL", "MM"], binary=binary, progress=False)


def test_tiny_suite_passes_with_every_check(report):
    assert report.passed, report.failures()
    comparison = report.comparison
    # all eight formulations, each with CLARABEL at both presets and MM
    assert set(comparison["formulation"]) == {f"{k}-{v}" for k in ("linear", "kernel")
                                              for v in ("SwSb", "SwHb", "HwSb", "HwHb")}
    assert set(comparison["method"]) == {"CLARABEL:default", "CLARABEL:high", "MM"}
    assert len(comparison) == 8 * 3
    checks = report.check_summary()
    found = set(zip(checks["case"], checks["formulation"], checks["check"]))
    assert ("tiny-mc", "linear-SwSb", "linear_kernel_consistency") in found
    assert ("tiny-mc", "linear-HwSb", "bias_limit") in found
    assert ("tiny-ml-rbf", "kernel-HwHb", "kkt") in found
    assert ("tiny-bin", "linear-HwHb", "binary_equivalence") in found
    assert ("tiny-mc", "linear-SwHb", "bias_limit") not in found  # hard b: no γ
    assert checks["passed"].all()


def test_summary_and_written_reports(report, tmp_path):
    summary = report.summary()
    assert list(summary.columns) == SUMMARY_COLUMNS
    assert (summary["success_rate"] == 1).all() and summary["time_sgm"].min() == 1.0
    paths = report.write(tmp_path / "out")
    assert pd.read_csv(paths["summary"]).columns.tolist() == SUMMARY_COLUMNS
    assert pd.read_csv(paths["checks"]).columns.tolist() == CHECK_COLUMNS
    comparison = pd.read_csv(paths["comparison"])
    assert {"case", "formulation", "method", "claimed_success", "checked_success", "rel_gap"} <= set(comparison)
    payload = json.loads(paths["json"].read_text())
    assert payload["passed"] is True and payload["failures"] == []
    assert {"date", "platform", "python", "versions"} <= set(payload["machine"])
    assert payload["machine"]["versions"]["cvxpy"] != "not installed"
    assert len(payload["comparison"]) == len(report.comparison)
    text = paths["markdown"].read_text()
    assert "PASSED" in text and "## Solver comparison" in text and "CLARABEL:high" in text


def test_selection_and_unavailable_solver(tiny):
    report = run_suite(tiny[0][:1], solvers=["MOSEK", "CLARABEL"], formulations=["kernel", "SwHb"],
                       presets=("default",), binary=(), identities=False, progress=False)
    assert set(report.comparison["formulation"]) == {"linear-SwHb"}  # tiny-mc is linear
    assert "MOSEK:default" in report.unavailable and "not installed" in report.unavailable["MOSEK:default"]
    ran = report.comparison[report.comparison["method"] == "CLARABEL:default"]
    assert ran["checked_success"].all()
    assert report.passed  # an unavailable solver is reported, not a failure


def test_progress_bar_uses_tqdm_when_installed(monkeypatch, tiny):
    seen = {}

    def fake_tqdm(iterable, total, **kwargs):
        seen["total"] = total
        return iterable

    monkeypatch.setitem(sys.modules, "tqdm", types.ModuleType("tqdm"))
    monkeypatch.setitem(sys.modules, "tqdm.auto", types.SimpleNamespace(tqdm=fake_tqdm))
    run_suite(tiny[0][:1], solvers=["CLARABEL"], formulations=["HwHb"], presets=("default",), binary=(),
              identities=False, progress=True)
    assert seen["total"] == 1
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # not installed: a line per step, no error
    assert list(progress_steps([1, 2], 2, desc="test")) == [1, 2]


def test_bad_arguments(tiny):
    suite = tiny[0]
    with pytest.raises(ValueError, match="formulations"):
        run_suite(suite, formulations=["SwXb"])
    with pytest.raises(ValueError, match="presets"):
        run_suite(suite, presets=("fast",))
    with pytest.raises(ValueError, match="solvers"):
        run_suite(suite, solvers=[])
