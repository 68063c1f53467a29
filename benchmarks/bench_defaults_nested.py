"""The estimator's defaults under nested cross-validation: would an inner search have chosen them, and what does
choosing cost?

Run by hand (not a test):

    python benchmarks/bench_defaults_nested.py --out docs/benchmarks           # the sets below (a few minutes)
    python benchmarks/bench_defaults_nested.py --data glass iris --kernels linear --seeds 0

The defaults of ``OvNClassifier`` were chosen on the splits of ``bench_defaults.py``, the splits their targets are
judged on. Here every outer training split (``bench_defaults.splits``: 5-fold CV for class labels, the standard or
half split for label matrices) runs an inner search, ``GridSearchCV(cv=3)`` over the two parameters the defaults fixed
by measurement — β (relative to κ₀, ``beta_scale="kernel"``) and ``negative_balance`` — on a grid (``GRIDS``); the
inner winner is refitted and scored on the outer test rows beside the default itself, fitted on the same rows. The
inner score: accuracy for class labels, ½ Jaccard + ½ (1 − Hamming loss) for label matrices (the default's
``rule_scoring``). Reported per data set and kernel: how often the inner search picked the default's values, and the
outer score of the default and of the inner winner (the nested-CV estimate of tuning these two parameters).

Output (``--out``): bench_defaults_nested.csv (one row per outer split) and bench_defaults_nested.md (machine stamp,
the summary table).
"""
from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import pandas as pd
from scipy.sparse import issparse
from sklearn.metrics import hamming_loss, jaccard_score, make_scorer
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold
from sklearn.pipeline import make_pipeline

from bench_defaults import MULTICLASS, scaler, scores, splits, warm_up
from ovn_cvx import OvNClassifier
from ovn_cvx._reports import environment, markdown_table
from ovn_cvx.estimator import auto_defaults

#: the inner search's candidates (β relative to κ₀): class labels with the linear kernel (default β 16, balance 0.5),
#: class labels with a kernel (β 4, 0.5), label matrices with either kernel (β 4 when this grid was run; the default
#: with a kernel is now 1, its lower edge)
GRIDS = {("classes", "linear"): {"beta": (4.0, 16.0, 64.0), "negative_balance": (0.0, 0.5, 1.0)},
         ("classes", "kernel"): {"beta": (1.0, 4.0, 16.0), "negative_balance": (0.0, 0.5, 1.0)},
         ("labels", "any"): {"beta": (1.0, 4.0, 16.0), "negative_balance": (0.0, 0.5)}}
DATA = ("glass", "iris", "wine", "mcl-5", "mcl-10", "emotions", "mlc-6", "mlc-12")


def half_jaccard_half_hamming(Y, P) -> float:
    """½ Jaccard + ½ (1 − Hamming loss): the default ``rule_scoring`` as a score of predictions."""
    return 0.5 * jaccard_score(Y, P, average="samples", zero_division=1) + 0.5 * (1.0 - hamming_loss(Y, P))


def grid_of(multilabel: bool, kernel: str) -> dict:
    return GRIDS["labels", "any"] if multilabel else GRIDS["classes", "linear" if kernel == "linear" else "kernel"]


def default_values(multilabel: bool, kernel: str) -> tuple[float, float]:
    """(β, negative_balance) of ``OvNClassifier(kernel=kernel)`` for the target kind: the estimator's own rule (a
    change of default changes what is compared with)."""
    return auto_defaults(kernel, multilabel)


def outer_split(data: str, kernel: str, seed: int, index: int, split) -> dict:
    X_train, Y_train, X_test, Y_test = split
    multilabel = data not in MULTICLASS
    sparse = issparse(X_train)
    grid = {f"ovnclassifier__{name}": values for name, values in grid_of(multilabel, kernel).items()}
    inner = KFold(3, shuffle=True, random_state=seed) if multilabel else StratifiedKFold(3, shuffle=True,
                                                                                         random_state=seed)
    scoring = make_scorer(half_jaccard_half_hamming) if multilabel else "accuracy"
    pipeline = make_pipeline(scaler(sparse), OvNClassifier(kernel=kernel))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # degenerate-label warnings of poor candidates: their scores say it
        start = time.perf_counter()
        search = GridSearchCV(pipeline, grid, cv=inner, scoring=scoring).fit(X_train, Y_train)
        seconds = time.perf_counter() - start
        default = make_pipeline(scaler(sparse), OvNClassifier(kernel=kernel)).fit(X_train, Y_train)
    chosen = search.best_params_
    picked = (chosen["ovnclassifier__beta"], chosen["ovnclassifier__negative_balance"])
    score = half_jaccard_half_hamming if multilabel else None
    tuned_P, default_P = search.predict(X_test), default.predict(X_test)
    row = {"data": data, "kernel": kernel, "seed": seed, "split": index,
           "beta": picked[0], "negative_balance": picked[1],
           "picked_default": picked == default_values(multilabel, kernel),
           "search_seconds": seconds}
    if multilabel:
        row.update(default_score=score(Y_test, default_P), tuned_score=score(Y_test, tuned_P),
                   default_jaccard=scores(Y_test, default_P, True)["jaccard"],
                   tuned_jaccard=scores(Y_test, tuned_P, True)["jaccard"])
    else:
        row.update(default_score=scores(Y_test, default_P, False)["accuracy"],
                   tuned_score=scores(Y_test, tuned_P, False)["accuracy"])
    return row


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per data set and kernel: splits, how often the inner search picked the defaults' values, the most frequent
    winner, the outer scores of the default and of the inner winner (mean over splits) and their difference."""
    rows = []
    for (data, kernel), group in frame.groupby(["data", "kernel"], sort=False):
        winners = group.groupby(["beta", "negative_balance"]).size().sort_values(ascending=False)
        (beta, balance), count = winners.index[0], int(winners.iloc[0])
        rows.append({"data": data, "kernel": kernel, "splits": len(group),
                     "picked the defaults": f"{int(group['picked_default'].sum())}/{len(group)}",
                     "most picked (β, balance)": f"{beta:g}, {balance:g} ({count})",
                     "default": group["default_score"].mean(), "inner winner": group["tuned_score"].mean(),
                     "winner − default": (group["tuned_score"] - group["default_score"]).mean()})
    return pd.DataFrame(rows)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", nargs="+", default=list(DATA), choices=DATA)
    parser.add_argument("--kernels", nargs="+", default=["linear", "rbf"], choices=["linear", "rbf"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    warm_up()
    rows = []
    for kernel in args.kernels:
        for data in args.data:
            if kernel != "linear" and data in ("mcl-5", "mcl-10", "mlc-12"):
                continue  # the RBF runs on the small sets: the inner search makes 54 fits an outer split
            for seed in (args.seeds if data != "emotions" else args.seeds[:1]):  # emotions: one standard split
                for index, split in enumerate(splits(data, seed)):
                    rows.append(outer_split(data, kernel, seed, index, split))
                    print(f"{data} {kernel} seed {seed} split {index}: β {rows[-1]['beta']:g}, balance "
                          f"{rows[-1]['negative_balance']:g}, default {rows[-1]['default_score']:.3f}, winner "
                          f"{rows[-1]['tuned_score']:.3f}", flush=True)
    frame = pd.DataFrame(rows)
    table = summary(frame)
    print(table.to_string(index=False, float_format="%.3f"))
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        frame.to_csv(args.out / "bench_defaults_nested.csv", index=False)
        stamp = environment()
        text = ["# The defaults under nested cross-validation (benchmarks/bench_defaults_nested.py)", "",
                f"- Date: {stamp['date']}; machine: {stamp['platform']} ({stamp['cpu']}, {stamp['cpu_count']} CPUs)",
                "", markdown_table(list(table.columns),
                                   [[f"{v:.3f}" if isinstance(v, float) else v for v in row]
                                    for row in table.itertuples(index=False)])]
        (args.out / "bench_defaults_nested.md").write_text("\n".join(text) + "\n")


if __name__ == "__main__":
    main()
