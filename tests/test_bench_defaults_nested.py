"""benchmarks/bench_defaults_nested.py: one outer split's inner search and its scores, recomputed with scikit-learn."""
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score, hamming_loss, jaccard_score
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ovn_cvx import OvNClassifier

BENCHMARK = "bench_defaults_nested"  # the conftest fixture `bench` imports it
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))  # it imports bench_defaults


def test_an_outer_split_scores_the_default_and_the_inner_winner(bench):
    split = bench.splits("iris", 0)[0]
    row = bench.outer_split("iris", "linear", 0, 0, split)
    X_train, y_train, X_test, y_test = split
    grid = {f"ovnclassifier__{k}": v for k, v in bench.GRIDS["classes", "linear"].items()}
    search = GridSearchCV(make_pipeline(StandardScaler(), OvNClassifier()), grid, scoring="accuracy",
                          cv=StratifiedKFold(3, shuffle=True, random_state=0)).fit(X_train, y_train)
    assert (row["beta"], row["negative_balance"]) == (search.best_params_["ovnclassifier__beta"],
                                                      search.best_params_["ovnclassifier__negative_balance"])
    assert row["tuned_score"] == accuracy_score(y_test, search.predict(X_test))
    default = make_pipeline(StandardScaler(), OvNClassifier()).fit(X_train, y_train)
    assert row["default_score"] == accuracy_score(y_test, default.predict(X_test))
    assert row["picked_default"] == ((row["beta"], row["negative_balance"]) == (16.0, 0.5))


def test_the_defaults_compared_are_the_estimators(bench):
    """What the benchmark compares with is the estimator's default (read from its constants), inside each grid."""
    assert bench.default_values(False, "linear") == (16.0, 0.5)
    assert bench.default_values(False, "rbf") == (4.0, 0.5)
    assert bench.default_values(True, "rbf") == (1.0, 0.0)
    assert bench.default_values(True, "linear") == (4.0, 0.0)
    for key, grid in bench.GRIDS.items():
        multilabel = key[0] == "labels"
        beta, balance = bench.default_values(multilabel, "linear" if key[1] != "kernel" else "rbf")
        assert beta in grid["beta"] and balance in grid["negative_balance"]


def test_the_multilabel_score_and_the_summary(bench):
    Y = np.array([[1, 0, 1], [0, 0, 0], [1, 1, 0]])
    P = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 0]])
    expected = 0.5 * jaccard_score(Y, P, average="samples", zero_division=1) + 0.5 * (1 - hamming_loss(Y, P))
    assert bench.half_jaccard_half_hamming(Y, P) == pytest.approx(expected) and 0 < expected < 1
    frame = pd.DataFrame({"data": ["a", "a", "a"], "kernel": ["linear"] * 3, "beta": [4.0, 16.0, 4.0],
                          "negative_balance": [0.5, 0.5, 0.5], "picked_default": [False, True, False],
                          "default_score": [0.8, 0.9, 0.7], "tuned_score": [0.9, 0.9, 0.7]})
    table = bench.summary(frame).iloc[0]
    assert table["picked the defaults"] == "1/3" and table["most picked (β, balance)"] == "4, 0.5 (2)"
    assert table["winner − default"] == pytest.approx(0.1 / 3)
