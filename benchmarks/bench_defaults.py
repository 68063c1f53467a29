"""The estimator's defaults, chosen by measurement: ``OvNClassifier`` settings against one-vs-rest ``LinearSVC`` and
against predicting no label, every model inside ``make_pipeline(StandardScaler(), model)`` (sparse X:
``StandardScaler(with_mean=False)``, which keeps it sparse).

Run by hand (not a test; tests/test_bench_defaults.py recomputes a small subset):

    python benchmarks/bench_defaults.py --out docs/benchmarks          # every set, both kernels (about an hour)
    python benchmarks/bench_defaults.py --data emotions iris --kernels linear --settings default paper

Data and splits. Multilabel: emotions and scene (their bundled train/test splits: one split, no seed), and three
``make_multilabel_classification`` sets (``GENERATED_LABELS``; ``mlc-6``: 800 rows, 20 features, 6 labels, 2 a row
on average, unlabeled rows allowed; ``mlc-12``: 800 rows, 50 features, 12 labels, 3 a row; ``mls-20``: 600 rows of
sparse word counts, 300 features, 20 labels, 2 a row on average — as many features as training rows), generated
with each seed and split in halves. Multiclass: glass, iris, wine, digits and two
``make_classification`` sets (``mcl-5``, ``mcl-10``: ``GENERATED_CLASSES``, generated with each seed),
``StratifiedKFold(5, shuffle=True, random_state=seed)``, the mean over the folds. Seeds: ``--seeds`` (default 0 1 2).

Models. ``OvN ...``: the settings of ``SETTINGS`` (every parameter that matters spelled out, so that a change of
default does not change them; ``default`` is ``OvNClassifier(kernel=kernel)`` with nothing else); ``OvR LinearSVC``:
``OneVsRestClassifier(LinearSVC())`` (scikit-learn's defaults, C = 1, the same for both kernels: the
defaults' baseline); ``OvR SVC``: ``OneVsRestClassifier(SVC(kernel=kernel))`` (C = 1, gamma "scale"), for reference;
``OvR LinearSVC hinge`` (on request, ``--baselines``): LinearSVC with OvN's loss, the hinge;
``nothing``: no label for every row (multilabel) or the most frequent class (multiclass, scikit-learn's
``DummyClassifier``). Metrics on the test rows: example-based Jaccard (scikit-learn's ``jaccard_score(average=
"samples", zero_division=1)``: a row with neither true nor predicted labels counts 1), Hamming loss, accuracy
(multilabel: the exact-set accuracy), predicted labels a row, fit time (seconds, the whole pipeline; with
``--n-jobs 1`` after one untimed fit that loads the compiled loops, ``warm_up``).

``--stages``: instead of the cells, the default fit's seconds by stage (input checks, the problem with κ₀, the solves,
the internal folds' fits, the rule search; ``STAGES``) and in total against the baseline's fit, on each data set's
first training split, medians of ``--repeats`` (at least 3). ``--repeats R``: each cell's fit time is the least of
R fits of each split (the default 1; on a shared machine the least is the one least disturbed).

Output (``--out``): bench_defaults.csv (one row per data set × kernel × seed × model) and bench_defaults.md (machine
stamp, the mean over seeds per data set, kernel and model, and the default's fit time against the one-vs-rest
baseline's of its kernel, ``fit_ratios``).
"""
from __future__ import annotations

import argparse
import contextlib
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.sparse import issparse
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import load_digits, make_classification, make_multilabel_classification
from sklearn.dummy import DummyClassifier
from sklearn.metrics import accuracy_score, hamming_loss, jaccard_score
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, LinearSVC

from ovn_cvx import OvNClassifier
from ovn_cvx import estimator as estimator_module
from ovn_cvx._reports import environment, markdown_table
from ovn_cvx.datasets import load_emotions, load_glass, load_iris, load_scene, load_wine

MULTILABEL = ("emotions", "scene", "mlc-6", "mlc-12", "mls-20")
MULTICLASS = ("glass", "iris", "wine", "digits", "mcl-5", "mcl-10")
#: scikit-learn's ``make_classification`` sets (1 000 rows, generated with each seed): ``mcl-5`` is the solver
#: benchmarks' generator (20 features, 10 informative, 5 classes of 2 clusters); ``mcl-10``: 10 classes of one cluster
#: in 8 informative features, classes the rest surrounds
GENERATED_CLASSES = {"mcl-5": {"n_features": 20, "n_informative": 10, "n_classes": 5, "n_clusters_per_class": 2},
                     "mcl-10": {"n_features": 10, "n_informative": 8, "n_redundant": 0, "n_classes": 10,
                                "n_clusters_per_class": 1}}
#: scikit-learn's ``make_multilabel_classification`` sets (generated with each seed, split in halves): ``mlc-6`` and
#: ``mlc-12`` dense; ``mls-20`` sparse (word counts) with as many features as training rows
GENERATED_LABELS = {"mlc-6": {"n_samples": 800, "n_features": 20, "n_classes": 6, "n_labels": 2,
                              "allow_unlabeled": True},
                    "mlc-12": {"n_samples": 800, "n_features": 50, "n_classes": 12, "n_labels": 3,
                               "allow_unlabeled": False},
                    "mls-20": {"n_samples": 600, "n_features": 300, "n_classes": 20, "sparse": True}}
KERNELS = ("linear", "rbf")

#: the paper's model, explicitly: no known negatives, the paper's rule, SwHb, absolute β = 1
PAPER = {"variant": "SwHb", "negatives": "none", "bias_penalty": 1.0, "decision_rule": "paper", "beta": 1.0,
         "beta_scale": "none", "alpha": 0.0, "negative_balance": 0.0}
#: known negatives, free biases (SwSb, γ = 0), β relative to κ₀, every pair weighed alike
REST_FREE = {"variant": "SwSb", "negatives": "rest", "bias_penalty": 0.0, "alpha": 0.0, "beta_scale": "kernel",
             "negative_balance": 0.0}
#: known negatives, Σ_k b_k = 0
REST_HARD = {**REST_FREE, "variant": "SwHb", "bias_penalty": 1.0}
LEARNED = {"decision_rule": "cv", "rule_scoring": "jaccard", "rule_selection": "cv", "rule_cv": 5}

#: OvN settings compared (parameters on top of ``OvNClassifier(kernel=kernel)``)
SETTINGS = {
    "default": {},
    "paper": PAPER,
    "rest free-b paper-rule b2": {**REST_FREE, "beta": 2.0, "decision_rule": "paper"},
    "rest free-b cv b2": {**REST_FREE, **LEARNED, "beta": 2.0},
    "rest free-b cv b0.5": {**REST_FREE, **LEARNED, "beta": 0.5},
    "rest free-b cv b8": {**REST_FREE, **LEARNED, "beta": 8.0},
    "rest free-b cv b2 jh": {**REST_FREE, **LEARNED, "beta": 2.0, "rule_scoring": 0.5},
    "rest free-b cv b4 jh": {**REST_FREE, **LEARNED, "beta": 4.0, "rule_scoring": 0.5},
    "rest free-b cv b8 jh": {**REST_FREE, **LEARNED, "beta": 8.0, "rule_scoring": 0.5},
    "rest SwHb cv b2": {**REST_HARD, **LEARNED, "beta": 2.0},
    "rest SwHb paper-rule b2": {**REST_HARD, "beta": 2.0, "decision_rule": "paper"},
    "default rule_cv=5": {"rule_cv": 5},
    "default rule_cv=2": {"rule_cv": 2},
    "default paper-rule": {"decision_rule": "paper"},
    "default b1": {"beta": 1.0},
    "default b2": {"beta": 2.0},
    "default b4": {"beta": 4.0},
    "default b8": {"beta": 8.0},
    "default b16": {"beta": 16.0},
    "default b64": {"beta": 64.0},
    "default p0": {"negative_balance": 0.0},
    "default p0.25": {"negative_balance": 0.25},
    "default p0.75": {"negative_balance": 0.75},
    "default p1": {"negative_balance": 1.0},
}
DEFAULT_SETTINGS = ("default", "paper")
BASELINES = ("OvR LinearSVC", "OvR SVC", "nothing")
#: further models on request (``--baselines``): one-vs-rest LinearSVC with the hinge loss, OvN's loss
EXTRA_BASELINES = ("OvR LinearSVC hinge",)


class NoLabel(ClassifierMixin, BaseEstimator):
    """Predicts no label for every row (multilabel)."""

    def fit(self, X, Y):
        self.n_labels_ = np.shape(Y)[1]
        return self

    def predict(self, X):
        return np.zeros((np.shape(X)[0], self.n_labels_), dtype=int)


def build(model: str, kernel: str, multilabel: bool, sparse: bool = False):
    if model == "OvR LinearSVC":
        estimator = OneVsRestClassifier(LinearSVC())
    elif model == "OvR LinearSVC hinge":
        estimator = OneVsRestClassifier(LinearSVC(loss="hinge", max_iter=100_000))
    elif model == "OvR SVC":
        estimator = OneVsRestClassifier(SVC(kernel=kernel))
    elif model == "nothing":
        estimator = NoLabel() if multilabel else DummyClassifier()
    else:
        estimator = OvNClassifier(kernel=kernel, **SETTINGS[model.removeprefix("OvN ")])
    return make_pipeline(scaler(sparse), estimator)


def scaler(sparse: bool) -> StandardScaler:
    """The models' standardisation: sparse X scaled without centring (it stays sparse)."""
    return StandardScaler(with_mean=not sparse)


def splits(data: str, seed: int):
    """[(X_train, Y_train, X_test, Y_test)] of the data set for the seed."""
    if data in ("emotions", "scene"):
        load = {"emotions": load_emotions, "scene": load_scene}[data]
        return [(*load("train", return_X_y=True), *load("test", return_X_y=True))]
    if data in GENERATED_LABELS:
        X, Y = make_multilabel_classification(random_state=seed, **GENERATED_LABELS[data])
        X_train, X_test, Y_train, Y_test = train_test_split(X, Y, test_size=0.5, random_state=seed)
        return [(X_train, Y_train, X_test, Y_test)]
    if data in GENERATED_CLASSES:
        X, y = make_classification(n_samples=1000, flip_y=0.05, random_state=seed, **GENERATED_CLASSES[data])
    else:
        load = {"glass": load_glass, "iris": load_iris, "wine": load_wine,
                "digits": lambda return_X_y: load_digits(return_X_y=return_X_y)}[data]
        X, y = load(return_X_y=True)
    folds = StratifiedKFold(5, shuffle=True, random_state=seed).split(X, y)
    return [(X[train], y[train], X[test], y[test]) for train, test in folds]


def scores(Y_test, P, multilabel: bool) -> dict:
    if not multilabel:
        return {"accuracy": accuracy_score(Y_test, P)}
    return {"jaccard": jaccard_score(Y_test, P, average="samples", zero_division=1),
            "hamming": hamming_loss(Y_test, P), "accuracy": accuracy_score(Y_test, P),
            "labels_per_row": float(np.asarray(P).sum(axis=1).mean())}


def run_cell(data: str, kernel: str, seed: int, model: str, repeats: int = 1) -> dict:
    """One data set × kernel × seed × model: the mean of the scores and the total fit time over its splits, each
    split's fit time the least of ``repeats`` fits (the fits are deterministic; on a shared machine the least is
    the one least disturbed)."""
    multilabel = data not in MULTICLASS
    rows, fit_time = [], 0.0
    for X_train, Y_train, X_test, Y_test in splits(data, seed):
        times = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # degenerate-label and convergence warnings: the scores say it
            for _ in range(repeats):
                pipeline = build(model, kernel, multilabel, sparse=issparse(X_train))
                start = time.perf_counter()
                pipeline.fit(X_train, Y_train)
                times.append(time.perf_counter() - start)
            fit_time += min(times)
            rows.append(scores(Y_test, pipeline.predict(X_test), multilabel))
    cell = pd.DataFrame(rows).mean().to_dict()
    return {"data": data, "task": "multilabel" if multilabel else "multiclass", "kernel": kernel, "seed": seed,
            "model": model, "fit_time": fit_time, **cell}


def _needed(data: str, kernel: str, model: str) -> bool:
    """Whether the cell says something: the kernel-free baselines once (linear), OvR SVC for RBF only, and for 1-D
    targets (always the argmax) no setting that differs from another only by its multilabel rule."""
    if model in ("OvR LinearSVC", "OvR LinearSVC hinge", "nothing"):
        return kernel == "linear"
    if model == "OvR SVC":
        return kernel != "linear"
    return data not in MULTICLASS or model.removeprefix("OvN ") not in SAME_FOR_CLASSES


#: settings that differ from another only by the multilabel rule (the same model for 1-D targets)
SAME_FOR_CLASSES = ("rest free-b paper-rule b2", "rest SwHb paper-rule b2", "rest free-b cv b2 jh",
                    "rest free-b cv b4 jh", "rest free-b cv b8 jh", "default rule_cv=5", "default rule_cv=2",
                    "default paper-rule")


def warm_up() -> None:
    """One small kernel fit with the learned rule before the timed cells: the compiled loops (the dual
    decomposition's, the rule search's) are loaded, or compiled, by the first fit of a process that uses them, which
    would otherwise be timed in the first cell (numba's start-up ~0.4 s; compiling after installation up to 50 s)."""
    X, Y = make_multilabel_classification(n_samples=40, n_features=5, n_classes=3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        OvNClassifier(kernel="rbf").fit(X, Y)


def cells(data_sets, kernels, seeds, models):
    """The cells in the order: kernels, then data sets, seeds, models."""
    for kernel in kernels:
        for data in data_sets:
            for seed in (seeds[:1] if data in ("emotions", "scene") else seeds):  # one standard split
                for model in models:
                    if _needed(data, kernel, model):
                        yield data, kernel, seed, model


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean over seeds per data set × kernel × model."""
    metrics = [c for c in ("jaccard", "hamming", "accuracy", "labels_per_row", "fit_time") if c in frame]
    return frame.groupby(["task", "data", "kernel", "model"], sort=False)[metrics].mean().reset_index()


#: the one-vs-rest baseline whose fit time the default's is compared with, per kernel (the target's: LinearSVC)
RATIO_BASELINES = {"linear": "OvR LinearSVC", "rbf": "OvR SVC"}


def fit_ratios(frame: pd.DataFrame) -> pd.DataFrame:
    """Per data set and kernel: the mean fit seconds of ``OvN default`` and of the kernel's one-vs-rest baseline
    (``RATIO_BASELINES``), and the mean over seeds of their per-seed ratio (the two fitted minutes apart)."""
    rows = []
    for (data, kernel), cells in frame.groupby(["data", "kernel"], sort=False):
        default = cells[cells.model == "OvN default"].set_index("seed").fit_time
        baseline = frame[(frame.data == data) & (frame.model == RATIO_BASELINES[kernel])].set_index("seed").fit_time
        if default.empty or baseline.empty:
            continue
        seeds = default.index.intersection(baseline.index)
        rows.append({"data": data, "kernel": kernel, "default": default[seeds].mean(),
                     "baseline": baseline[seeds].mean(), "ratio": (default[seeds] / baseline[seeds]).mean()})
    return pd.DataFrame(rows)


#: the stages of a default fit that ``--stages`` times: (module or class, function name, column); "solves" holds every
#: solve (the full fit's and the folds'), "folds" the fold fits with their solves and predictions
STAGES = ((OvNClassifier, "_check_fit_input", "checks"), (OvNClassifier, "_problem", "problem"),
          (OvNClassifier, "_solve", "solves"), (OvNClassifier, "_out_of_fold", "folds"),
          (estimator_module, "learn_rule", "rule search"))


@contextlib.contextmanager
def timing(owner, name: str, column: str, totals: dict):
    """``owner.name`` adds its run time to ``totals[column]`` inside the block."""
    original = getattr(owner, name)

    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            totals[column] = totals.get(column, 0.0) + time.perf_counter() - start

    setattr(owner, name, timed)
    try:
        yield
    finally:
        setattr(owner, name, original)


def stage_times(data: str, kernel: str, repeats: int = 3) -> dict:
    """Seconds of a default fit on the first training split of ``data`` (seed 0, StandardScaler'd) by stage
    (``STAGES``) and in total, and of the kernel's one-vs-rest baseline (LinearSVC, RBF: SVC): medians of
    ``repeats`` fits."""
    X, Y = splits(data, 0)[0][:2]
    X = scaler(issparse(X)).fit_transform(X)
    runs = []
    for _ in range(repeats):
        totals = {}
        with contextlib.ExitStack() as stack:
            for owner, name, column in STAGES:
                stack.enter_context(timing(owner, name, column, totals))
            start = time.perf_counter()
            OvNClassifier(kernel=kernel).fit(X, Y)
            totals["total"] = time.perf_counter() - start
        baseline = OneVsRestClassifier(LinearSVC() if kernel == "linear" else SVC(kernel=kernel))
        start = time.perf_counter()
        baseline.fit(X, Y)
        totals["baseline"] = time.perf_counter() - start
        runs.append(totals)
    medians = pd.DataFrame(runs).median().to_dict()
    return {"data": data, "kernel": kernel, **medians, "ratio": medians["total"] / medians["baseline"]}


def main(argv=None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", nargs="+", default=list(MULTILABEL + MULTICLASS),
                        choices=MULTILABEL + MULTICLASS)
    parser.add_argument("--kernels", nargs="+", default=list(KERNELS), choices=KERNELS)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--settings", nargs="+", default=list(DEFAULT_SETTINGS), choices=list(SETTINGS))
    parser.add_argument("--baselines", nargs="+", default=list(BASELINES), choices=BASELINES + EXTRA_BASELINES)
    parser.add_argument("--n-jobs", type=int, default=1, help="cells in parallel (fit times then share the cores)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="fit times: the least of this many fits of each split (with --stages: the median)")
    parser.add_argument("--out", type=Path, help="directory for bench_defaults.csv and bench_defaults.md")
    parser.add_argument("--stages", action="store_true",
                        help="instead: the default fit's time by stage against the baseline's (seed 0, the median of "
                             "max(repeats, 3))")
    args = parser.parse_args(argv)
    if args.stages:
        warm_up()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            frame = pd.DataFrame([stage_times(data, kernel, max(args.repeats, 3)) for kernel in args.kernels
                                  for data in args.data])
        print(frame.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        return frame
    models = [f"OvN {name}" for name in args.settings] + list(args.baselines)
    todo = list(cells(args.data, args.kernels, args.seeds, models))
    if args.n_jobs == 1:
        warm_up()
    started = time.perf_counter()
    rows = []
    for row in Parallel(n_jobs=args.n_jobs, batch_size=1, return_as="generator")(
            delayed(run_cell)(*cell, repeats=args.repeats) for cell in todo):
        rows.append(row)
        if args.out is not None:  # every finished cell kept, in case the run is cut short
            args.out.mkdir(parents=True, exist_ok=True)
            pd.DataFrame(rows).to_csv(args.out / "bench_defaults.csv", index=False)
    frame = pd.DataFrame(rows)
    table, ratios = summary(frame), fit_ratios(frame)
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print(ratios.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if args.out is not None:
        lines = ["# bench_defaults", "", str(environment()), "",
                 f"Wall time {time.perf_counter() - started:.0f} s, n_jobs={args.n_jobs}; seeds {args.seeds}; fit "
                 f"times the least of {args.repeats} fit(s).", "",
                 markdown_table(list(table.columns), [[f"{v:.3f}" if isinstance(v, float) else v for v in row]
                                                       for row in table.itertuples(index=False)]), "",
                 "Fit seconds of the default against the kernel's one-vs-rest baseline (mean per-seed ratio):", "",
                 markdown_table(list(ratios.columns), [[f"{v:.3f}" if isinstance(v, float) else v for v in row]
                                                        for row in ratios.itertuples(index=False)])]
        (args.out / "bench_defaults.md").write_text("\n".join(lines) + "\n")
    return frame


if __name__ == "__main__":
    main()
