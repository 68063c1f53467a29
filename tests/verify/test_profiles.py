"""The performance profile and the by-family breakdown on hand-made tables with known answers, and the report's
figure (drawn with matplotlib, a message without it)."""
import numpy as np
import pandas as pd
import pytest

from ovn_cvx._reports import MISSING_MATPLOTLIB
from ovn_cvx.verify import profiles
from ovn_cvx.verify.profiles import performance_profile, performance_ratios
from ovn_cvx.verify.results import SuiteReport

CHECK_COLUMNS = ["case", "formulation", "check", "measure", "value", "tolerance", "passed"]


def _table(runs):
    """runs: (case, formulation, pairs, regime, method, status, checked_success, wall_time)."""
    rows = [{"case": c, "formulation": f, "pairs": n, "regime": r, "method": m, "preset": "default", "status": s,
             "claimed_success": ok, "checked_success": ok, "certified": ok, "solve_time": t / 2, "wall_time": t,
             "rel_gap": 0.0, "max_df": 0.0, "constraint_violation": 0.0, "kkt_residual": 0.0}
            for c, f, n, r, m, s, ok, t in runs]
    return pd.DataFrame(rows)


@pytest.fixture
def table():
    # p1: A 1 s, B 2 s, C fails; p2: A 3 s, B 1 s, C 1.5 s; p3: A and B fail, C did not run on it;
    # D is unavailable everywhere (never a column)
    return _table([
        ("p1", "linear-SwHb", 50, "benign", "A", "optimal", True, 1.0),
        ("p1", "linear-SwHb", 50, "benign", "B", "optimal", True, 2.0),
        ("p1", "linear-SwHb", 50, "benign", "C", "optimal_inaccurate", False, 4.0),
        ("p1", "linear-SwHb", 50, "benign", "D", "unavailable", False, 0.0),
        ("p2", "kernel-HwHb", 500, "degenerate", "A", "optimal", True, 3.0),
        ("p2", "kernel-HwHb", 500, "degenerate", "B", "optimal", True, 1.0),
        ("p2", "kernel-HwHb", 500, "degenerate", "C", "optimal", True, 1.5),
        ("p3", "kernel-SwSb", 2000, "degenerate", "A", "solver_error", False, 5.0),
        ("p3", "kernel-SwSb", 2000, "degenerate", "B", "max_iter", False, 6.0),
    ])


def test_ratios_and_profile_known_answer(table):
    ratios = performance_ratios(table)
    assert list(ratios.columns) == ["A", "B", "C"]
    assert ratios.loc[("p1", "linear-SwHb")].tolist() == [1.0, 2.0, np.inf]
    assert ratios.loc[("p2", "kernel-HwHb")].tolist() == [3.0, 1.0, 1.5]
    assert np.isinf(ratios.loc[("p3", "kernel-SwSb")]).all()
    profile = performance_profile(table)
    assert profile.index.tolist() == [1.0, 1.5, 2.0, 3.0]  # the breakpoints
    third = 1 / 3
    assert profile["A"].tolist() == pytest.approx([third, third, third, 2 * third])
    assert profile["B"].tolist() == pytest.approx([third, third, 2 * third, 2 * third])
    assert profile["C"].tolist() == pytest.approx([0, third, third, third])
    # at large τ the profile is the success rate over all problems
    assert performance_profile(table, taus=[1e6]).iloc[0].tolist() == pytest.approx([2 * third, 2 * third, third])
    by_solve_time = performance_profile(table, taus=[1.0], time_column="solve_time")
    assert by_solve_time.iloc[0].tolist() == pytest.approx([third, third, 0])


def test_profile_arguments_are_checked(table):
    with pytest.raises(ValueError, match="taus must be"):
        performance_profile(table, taus=[0.5])
    with pytest.raises(ValueError, match="time_column 'cpu_time' is not a column"):
        performance_ratios(table, time_column="cpu_time")
    table.loc[0, "wall_time"] = 0.0
    with pytest.raises(ValueError, match="time_column 'wall_time' must be positive"):
        performance_ratios(table)


def test_breakdown_by_family(table):
    report = SuiteReport(comparison=table, checks=pd.DataFrame(columns=CHECK_COLUMNS))
    b = report.breakdown().set_index(["family", "group", "method"])
    assert set(b.index.get_level_values("family")) == {"kind", "variant", "size", "regime"}
    assert b.loc[("kind", "kernel", "A"), "problems"] == 2
    assert b.loc[("kind", "kernel", "A"), "success_rate"] == 0.5
    assert b.loc[("kind", "linear", "C"), "success_rate"] == 0.0
    assert b.loc[("size", "n≥1000", "B"), "success_rate"] == 0.0
    assert b.loc[("size", "100≤n<1000", "C"), "success_rate"] == 1.0
    assert b.loc[("regime", "benign", "A"), "problems"] == 1
    # within the linear family: A 1000 ms, B 2000 ms, C charged the slowest (4000 ms); shift 10 ms
    assert b.loc[("kind", "linear", "A"), "wall_sgm"] == 1.0
    assert b.loc[("kind", "linear", "B"), "wall_sgm"] == pytest.approx(2010 / 1010)
    assert b.loc[("variant", "HwHb", "C"), "wall_sgm"] == pytest.approx(1510 / 1010)


def test_report_embeds_the_figure_or_says_why_not(table, tmp_path, monkeypatch):
    report = SuiteReport(comparison=table, checks=pd.DataFrame(columns=CHECK_COLUMNS))
    pytest.importorskip("matplotlib")
    paths = report.write(tmp_path / "with")
    assert paths["figure"].name == "performance_profile.png" and paths["figure"].stat().st_size > 0
    text = paths["markdown"].read_text()
    assert "![performance profile](performance_profile.png)" in text
    assert "## By problem family" in text and "regime: degenerate" in text
    assert pd.read_csv(paths["profile"], index_col="tau").index.tolist() == [1.0, 1.5, 2.0, 3.0]
    monkeypatch.setattr(profiles, "matplotlib_available", lambda: False)
    paths = report.write(tmp_path / "without")
    assert "figure" not in paths and not (tmp_path / "without" / "performance_profile.png").exists()
    assert MISSING_MATPLOTLIB in paths["markdown"].read_text()


def test_regime_counts_margin_pairs_against_free_directions(multiclass_data):
    """M = 3, K = 3: (M+1)K = 12 free directions; hard w removes M = 3, hard b one more."""
    from ovn_cvx import Problem
    from ovn_cvx.verify.comparison import regime
    soft = Problem(*multiclass_data, "SwSb")
    hard = Problem(*multiclass_data, "HwHb")
    assert regime(soft, 12) == "benign" and regime(soft, 13) == "degenerate"
    assert regime(hard, 8) == "benign" and regime(hard, 9) == "degenerate"


def test_compare_reports_the_reference_margin_and_regime(multiclass_data):
    from ovn_cvx import Problem
    from ovn_cvx.kkt import kkt_certificate
    from ovn_cvx.verify.comparison import compare_runs
    problem = Problem(*multiclass_data, "HwSb", bias_penalty=1e-4)
    table, _, reference = compare_runs(problem, ["CLARABEL:high", "MM"])
    margin = kkt_certificate(problem, reference.coef, reference.b).n_margin
    assert (table["margin_pairs"] == margin).all()
    assert (table["regime"] == ("degenerate" if margin > 9 else "benign")).all()  # HwSb: 12 − M = 9 free
