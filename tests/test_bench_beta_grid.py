"""benchmarks/bench_beta_grid.py: a cell against plain cross-validation loops, the edge flag and its step on both
edges and inside, the summary over seeds, and the Markdown output."""
import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ovn_cvx import OvNClassifier
from ovn_cvx.datasets import load_iris

BENCHMARK = "bench_beta_grid"  # the conftest fixture `bench` imports it


@pytest.fixture(scope="module")
def iris_scores():
    """Iris, linear: the mean 5-fold accuracy at each β by hand (measured 0.853, 0.913, 0.927, 0.933, 0.933)."""
    X, y = load_iris(return_X_y=True)
    folds = StratifiedKFold(5, shuffle=True, random_state=0)
    return {beta: cross_val_score(make_pipeline(StandardScaler(), OvNClassifier(beta=beta)), X, y, cv=folds).mean()
            for beta in (0.125, 0.5, 2.0, 8.0, 32.0)}


@pytest.mark.parametrize("grid, best, edge", [((0.125, 0.5), 0.5, True), ((0.5, 2.0, 8.0), 8.0, True),
                                              ((2.0, 8.0, 32.0), 8.0, False), ((8.0, 32.0), 8.0, True)])
def test_cell_is_a_grid_search_by_hand(bench, iris_scores, grid, best, edge):
    """The winner is the first best score (8 and 32 tie: 8 wins, inside the grid); on an edge the step is the score
    there minus its neighbour's (0 for a tie on the edge)."""
    row = bench.cell("iris", "linear", 0, grid)
    for beta in grid:
        assert row[f"{beta:g}"] == pytest.approx(iris_scores[beta], abs=1e-12)
    assert (row["best beta"], row["on edge"], row["metric"]) == (best, edge, "accuracy")
    neighbour = grid[1] if grid.index(best) == 0 else grid[-2]
    if edge:
        assert row["edge step"] == pytest.approx(iris_scores[best] - iris_scores[neighbour], abs=1e-12)
        assert row["edge step"] >= 0
    else:
        assert np.isnan(row["edge step"])


def test_summary_over_seeds(bench, tmp_path):
    frame = pd.DataFrame([
        {"data": "glass", "kernel": "linear", "seed": 0, "metric": "accuracy", "best beta": 8.0, "on edge": True,
         "edge step": 0.02, "0.5": 0.5, "2": 0.6, "8": 0.62, "seconds": 1.0},
        {"data": "glass", "kernel": "linear", "seed": 1, "metric": "accuracy", "best beta": 2.0, "on edge": False,
         "edge step": np.nan, "0.5": 0.7, "2": 0.8, "8": 0.7, "seconds": 1.0},
        {"data": "iris", "kernel": "rbf", "seed": 0, "metric": "accuracy", "best beta": 2.0, "on edge": False,
         "edge step": np.nan, "0.5": 0.9, "2": 0.95, "8": 0.9, "seconds": 1.0}])
    table = bench.summary(frame)
    assert table.to_dict("records") == [
        {"data": "glass", "kernel": "linear", "metric": "accuracy", "winners (seeds)": "8, 2", "on edge": "1 of 2",
         "largest edge step": "0.020", "0.5": "0.600", "2": "0.700", "8": "0.660"},
        {"data": "iris", "kernel": "rbf", "metric": "accuracy", "winners (seeds)": "2", "on edge": "0 of 1",
         "largest edge step": "", "0.5": "0.900", "2": "0.950", "8": "0.900"}]
    bench.write(frame, tmp_path, {"date": "today"})
    text = (tmp_path / "bench_beta_grid.md").read_text()
    assert "| glass | linear | accuracy | 8, 2 | 1 of 2 | 0.020 | 0.600 | 0.700 | 0.660 |" in text
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "bench_beta_grid.csv"), frame)
