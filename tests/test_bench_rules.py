"""benchmarks/bench_rules.py --nested: the cells against nested CV written directly with scikit-learn, the
aggregation over seeds and the targets against hand computations, and the CSV and Markdown outputs."""

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import jaccard_score, make_scorer
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from ovn_cvx import OvNClassifier
from ovn_cvx.datasets import load_emotions
from ovn_cvx.experiments.protocols import PAPER_MODEL, Grid
from ovn_cvx.labels import DecisionRule

BENCHMARK = "bench_rules"  # the conftest fixture `bench` imports it
TINY = Grid(beta=(0.5, 8.0), sigma_factors=(1.0,), alpha=(0.0,))
JACCARD = make_scorer(jaccard_score, average="samples", zero_division=1.0)


@pytest.fixture(scope="module")
def emotions_small():
    """90 random rows of emotions (the file is sorted by label set)."""
    X, Y = load_emotions("train", return_X_y=True)
    rows = np.random.default_rng(0).choice(len(X), size=90, replace=False)
    return X[rows], Y[rows]


@pytest.fixture(scope="module")
def nested_rows(bench, emotions_small):
    X, Y = emotions_small
    rows, agreement = bench.run_nested({"emotions": (X, Y, "multilabel")}, ["linear"], [0, 1], rule_cv=3, grid=TINY,
                                       progress=lambda line: None)
    assert agreement is None  # no solver check asked for
    return rows


def _paper(**params):
    """The benchmark's OvN: the paper's model (every parameter named), SwHb, with ``params`` on top."""
    return OvNClassifier(**{**PAPER_MODEL, "variant": "SwHb", "solver": "mm", "rule_scoring": "jaccard", **params})


def _sklearn_nested(X, Y, model, grid, seed):
    """The oracle: GridSearchCV on KFold(seed + 1) inside cross_val_score on KFold(seed), StandardScaler first."""
    pipe = Pipeline([("scale", StandardScaler()), ("model", model)])
    inner = GridSearchCV(pipe, grid, scoring=JACCARD, cv=KFold(3, shuffle=True, random_state=seed + 1))
    return cross_val_score(inner, X, Y, scoring=JACCARD, cv=KFold(3, shuffle=True, random_state=seed)).mean()


@pytest.mark.filterwarnings("ignore:label\\(s\\)")
@pytest.mark.parametrize("setting, model, grid", [
    ("OvN cv", _paper(decision_rule="cv", rule_cv=3), {"model__beta": [0.5, 8.0]}),
    ("OvN cv 1-SE", _paper(decision_rule="cv", rule_cv=3, rule_selection="one_se"), {"model__beta": [0.5, 8.0]}),
    ("OvN rest", _paper(negatives="rest"), {"model__beta": [0.5, 8.0]}),
    ("OvN rest, free b", _paper(variant="SwSb", negatives="rest", bias_penalty=0.0), {"model__beta": [0.5, 8.0]}),
    ("BR-SVC", OneVsRestClassifier(SVC(kernel="linear")), {"model__estimator__C": [0.25, 4.0]}),
])
def test_nested_cells_are_sklearn_nested_cv(nested_rows, emotions_small, setting, model, grid):
    """The grid's β (C) are multiples of 1/κ₀, κ₀ the mean squared norm of the standardized rows (the linear kernel's
    mean diagonal: the number of features here)."""
    X, Y = emotions_small
    kappa0 = np.mean(np.sum(StandardScaler().fit_transform(X) ** 2, axis=1))
    grid = {name: [value / kappa0 for value in values] for name, values in grid.items()}
    got = nested_rows.query("setting == @setting and metric == 'example_accuracy'").set_index("seed")["nested"]
    for seed in (0, 1):
        assert got[seed] == pytest.approx(_sklearn_nested(X, Y, model, grid, seed), abs=1e-12)


def test_every_setting_and_metric_is_run(nested_rows):
    assert list(dict.fromkeys(nested_rows["setting"])) == ["OvN paper", "OvN cv", "OvN cv 1-SE", "OvN rest",
                                                           "OvN rest+cv", "OvN rest, free b", "BR-SVC"]
    assert len(nested_rows) == 7 * 2 * 2 and (nested_rows["failed_fits"] == 0).all()
    hamming = nested_rows.query("metric == 'hamming_loss'")["nested"]
    assert ((hamming > 0) & (hamming < 0.5)).all()  # a loss, not a negated score
    learned = nested_rows.query("setting == 'OvN cv' and metric == 'example_accuracy'")["rules"]
    assert all(len(r.split("; ")) == 3 for r in learned)  # one rule per outer fold
    assert (nested_rows.query("setting == 'OvN paper'")["rules"] == "").all()


def test_summary_and_targets_by_hand(bench, nested_rows):
    jac = nested_rows.query("metric == 'example_accuracy'").pivot_table(index="seed", columns="setting",
                                                                       values="nested")
    summary = bench.summarize(nested_rows).query("metric == 'example_accuracy'").set_index("setting")
    for setting in jac:
        assert summary.loc[setting, "mean"] == pytest.approx(jac[setting].mean())
        assert (summary.loc[setting, "low"], summary.loc[setting, "high"]) == (jac[setting].min(), jac[setting].max())
    targets = bench.judge_targets(nested_rows).set_index("target")
    assert len(targets) == 2  # the multiclass target has no multiclass rows to judge
    diff = jac["OvN cv"] - jac["OvN paper"]
    cv = targets.loc["(a) cv rule ≥ paper rule + 0.03 (Jaccard)"]
    assert (cv["difference"], cv["low"], cv["high"]) == pytest.approx((diff.mean(), diff.min(), diff.max()))
    assert cv["met"] == (diff.mean() >= 0.03)
    br = targets.loc["(a) rest + cv rule ≥ BR − 0.01 (Jaccard)"]
    assert br["difference"] == pytest.approx((jac["OvN rest+cv"] - jac["BR-SVC"]).mean())


def test_targets_on_hand_made_rows(bench):
    def row(dataset, kernel, setting, seed, value):
        return {"dataset": dataset, "task": "multiclass", "kernel": kernel, "setting": setting, "seed": seed,
                "metric": "accuracy", "nested": value}

    rows = pd.DataFrame([row("a", "linear", "OvN rest", 0, 0.90), row("a", "linear", "OvR-SVC", 0, 0.92),
                         row("a", "linear", "OvN rest", 1, 0.95), row("a", "linear", "OvR-SVC", 1, 0.94),
                         row("b", "rbf", "OvN rest", 0, 0.80), row("b", "rbf", "OvR-SVC", 0, 0.85),
                         row("c", "rbf", "OvN paper", 0, 0.99)])  # c: no reference, not judged
    t = bench.judge_targets(rows).set_index("dataset")
    assert list(t.index) == ["a", "b"]
    # a: differences −0.02, +0.01: mean −0.005 ≥ −0.01 (met) although one seed is below
    assert t.loc["a", "difference"] == pytest.approx(-0.005) and bool(t.loc["a", "met"])
    assert (t.loc["a", "low"], t.loc["a", "high"]) == pytest.approx((-0.02, 0.01))
    assert t.loc["b", "difference"] == pytest.approx(-0.05) and not bool(t.loc["b", "met"])


def test_load_subsamples_only_larger_sets(bench):
    X, y, task = bench.load("iris", max_rows=90)
    assert task == "multiclass" and X.shape == (90, 4) and np.bincount(y).tolist() == [30, 30, 30]
    X, Y, task = bench.load("emotions", "train", max_rows=600)
    assert task == "multilabel" and X.shape == (391, 72) and Y.shape == (391, 6)


def test_settings_per_task_and_kernel(bench):
    def names(task, kernel):
        return list(bench.nested_settings(task, kernel, 4))

    assert names("multiclass", "linear") == ["OvN paper", "OvN rest", "OvN rest, free b", "OvR-SVC", "CS-LinearSVC"]
    assert names("multiclass", "rbf") == ["OvN paper", "OvN rest", "OvN rest, free b", "OvR-SVC"]
    assert names("multilabel", "rbf") == ["OvN paper", "OvN cv", "OvN cv 1-SE", "OvN rest", "OvN rest+cv",
                                          "OvN rest, free b", "BR-SVC"]
    assert bench.nested_settings("multilabel", "rbf", 4)["OvN rest+cv"][1] == {
        "negatives": "rest", "decision_rule": "cv", "rule_scoring": "jaccard", "rule_cv": 4}


def test_rule_names(bench):
    model = Pipeline([("model", OvNClassifier())])
    assert bench.rule_name(model) == ""
    for rule, name in [(DecisionRule(1.0), "paper"), (DecisionRule(1.0, fallback=False), "global, no fallback"),
                       (DecisionRule(0.3), "global"), (DecisionRule(np.array([0.5, 1.0])), "per-label"),
                       (DecisionRule(np.array([0.5, 1.0]), fallback=False), "per-label, no fallback"),
                       (DecisionRule(top=2, fallback=False), "top-m")]:
        model[-1].rule_ = rule
        assert bench.rule_name(model) == name


def test_nested_main_writes_csv_and_markdown(bench, tmp_path):
    bench.main(["--nested", "--data", "iris", "--kernels", "linear", "--seeds", "0", "1", "--max-rows", "120",
                "--out", str(tmp_path)])
    rows = pd.read_csv(tmp_path / "bench_rules_nested.csv")
    assert len(rows) == 5 * 2 * 2  # OvN paper, rest, rest free b, OvR-SVC, Crammer–Singer × seeds × (acc., Hamming)
    acc = rows.query("metric == 'accuracy'")
    np.testing.assert_allclose(1 - acc["nested"].to_numpy(), rows.query("metric == 'hamming_loss'")["nested"])
    text = (tmp_path / "bench_rules_nested.md").read_text()
    assert "scikit-learn 1." in text and "CPUs" in text and "--seeds 0 1" in text
    assert "iris 120 × 4, K = 3; sets above 120 rows subsampled" in text  # 150 rows, stratified: 40 per class
    assert "| (b) rest ≥ OvR − 0.01 (accuracy) | iris | linear |" in text
    for table in text.split("\n\n"):  # every row of every table has its header's number of cells
        lines = [line for line in table.split("\n") if line.startswith("|")]
        assert all(line.count("|") == lines[0].count("|") for line in lines), table
    assert pd.read_csv(tmp_path / "bench_rules_agreement.csv")["CLARABEL differs"].tolist() == [0, 0]
    # target (c) on iris: every solver's predictions of the 40 held-out rows (a third of 120) are the same
    agreement = text.split("## Target (c)")[1]
    assert "| iris | OvN paper | 40 | 0 | 0 | 0 |" in agreement and "| iris | OvN rest | 40 | 0 | 0 | 0 |" in agreement


@pytest.mark.filterwarnings("ignore:label\\(s\\)")
def test_fixed_main_runs_every_setting(bench, emotions_small, monkeypatch, capsys):
    """The fixed-hyperparameter mode fits and reports every OvN setting and binary relevance (the setting with its
    own variant, SwSb, once crashed it: the variant was given twice)."""
    X, Y = emotions_small
    monkeypatch.setitem(bench.LOADERS, "emotions", lambda part, return_X_y: (X, Y))
    bench.main(["--data", "emotions", "--rule-cv", "3"])
    out = capsys.readouterr().out
    for label in [*bench.settings([3]), "binary relevance, LinearSVC (C = 1)"]:
        assert f"  {label}" in out and out.split(f"  {label}")[1].split()[0] == "Jaccard", label
