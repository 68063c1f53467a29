"""benchmarks/bench_paths.py runs one real-data path and writes its CSV and Markdown outputs."""

import pandas as pd
import pytest

BENCHMARK = "bench_paths"  # the conftest fixture `bench` imports it


def test_iris_beta_path_outputs(bench, tmp_path):
    bench.main(["--paths", "iris-beta", "--solvers", "CLARABEL", "NOT_A_SOLVER", "--out", str(tmp_path)])
    summary = pd.read_csv(tmp_path / "bench_paths.csv").set_index("method")
    assert list(summary.index) == ["MM cold", "MM warm", "SMO cold", "SMO warm", "CLARABEL cold", "CLARABEL dpp"]
    assert (summary["points"] == 20).all() and (summary["correct"] == 20).all()
    points = pd.read_csv(tmp_path / "bench_paths_points.csv")
    assert len(points) == 120 and set(points["path"]) == {"iris-beta"}
    assert points["value"].iloc[0] == pytest.approx(0.01) and points["value"].iloc[19] == pytest.approx(100.0)
    text = (tmp_path / "bench_paths.md").read_text()
    assert "## iris-beta: iris, SwHb linear, alpha=0.2; beta from 0.01 to 100 (benign)" in text
    assert "NOT_A_SOLVER (all modes) not run" in text


def test_every_path_is_well_formed(bench):
    for case in bench.PATHS:
        assert len(case.values) == bench.N_POINTS and case.parameter in ("alpha", "beta", "rbf_gamma")
        X, Y = bench.load(case)
        assert X.shape[0] == Y.shape[0] and (Y == 1).any(axis=0).all()
