"""Where the suggested β grid puts the winner: ``GridSearchCV`` of ``make_pipeline(StandardScaler(),
OvNClassifier(kernel=kernel))`` over the relative β grid, 5-fold, every other parameter the estimator's default.

Run by hand (not a test), one BLAS thread:

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python benchmarks/bench_beta_grid.py --out runs/
    python benchmarks/bench_beta_grid.py --data glass iris --kernels linear --grid 0.125 0.5 2 8 32 128 512 2048 8192

Data: glass, iris, wine, digits (class labels; accuracy, ``StratifiedKFold(5, shuffle=True, random_state=seed)``;
digits with the linear kernel only) and emotions, scene (label matrices, the bundled train and test rows together;
example-based Jaccard, ``jaccard_score(average="samples", zero_division=1)``, ``KFold(5, shuffle=True,
random_state=seed)``). The grid: ``--grid`` (default ``GRID``, the suggested 0.125, 0.5, 2, 8, 32, 128, 512).

Output, per data set × kernel × seed: the CV score at each grid point, the winning β, whether it lies on an edge of
the grid, and ``edge step``: the score at the edge minus the score at its neighbour when the winner is on an edge
(how much the score still changes there; empty otherwise). ``--out``: bench_beta_grid.csv (one row per cell) and
bench_beta_grid.md (machine stamp and ``summary``: per data set and kernel the winners over the seeds, how many lie on
an edge, the largest edge step, the mean score at each grid point), rewritten after every cell.
"""
from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_digits
from sklearn.metrics import jaccard_score, make_scorer
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ovn_cvx import OvNClassifier
from ovn_cvx._reports import environment, markdown_table
from ovn_cvx.datasets import load_emotions, load_glass, load_iris, load_scene, load_wine

#: the suggested relative grid: the libsvm guide's C range in factors of 4
GRID = (0.125, 0.5, 2.0, 8.0, 32.0, 128.0, 512.0)
LOADERS = {"glass": load_glass, "iris": load_iris, "wine": load_wine,
           "digits": lambda return_X_y: load_digits(return_X_y=return_X_y),
           "emotions": lambda return_X_y: load_emotions("all", return_X_y=return_X_y),
           "scene": lambda return_X_y: load_scene("all", return_X_y=return_X_y)}
MULTILABEL = ("emotions", "scene")
#: digits with an RBF kernel is left out (1 797 rows × 10 classes: the slowest cell by far)
LINEAR_ONLY = ("digits",)


#: the columns of a cell that are not scores at a grid point
CELL_COLUMNS = ("data", "kernel", "seed", "metric", "best beta", "on edge", "edge step", "seconds")


def cell(data: str, kernel: str, seed: int, grid) -> dict:
    """One grid search: the mean CV score at each β, the winner, whether it is on an edge."""
    X, Y = LOADERS[data](return_X_y=True)
    multilabel = data in MULTILABEL
    folds = (KFold if multilabel else StratifiedKFold)(5, shuffle=True, random_state=seed)
    scoring = make_scorer(jaccard_score, average="samples", zero_division=1) if multilabel else "accuracy"
    search = GridSearchCV(make_pipeline(StandardScaler(), OvNClassifier(kernel=kernel)),
                          {"ovnclassifier__beta": list(grid)}, cv=folds, scoring=scoring)
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # degenerate-label and convergence warnings do not change the table
        search.fit(X, Y)
    score = search.cv_results_["mean_test_score"]
    best = int(search.best_index_)
    edge = best in (0, len(grid) - 1)
    neighbour = 1 if best == 0 else len(grid) - 2
    return {"data": data, "kernel": kernel, "seed": seed, "metric": "jaccard" if multilabel else "accuracy",
            "best beta": grid[best], "on edge": edge,
            "edge step": score[best] - score[neighbour] if edge else np.nan,
            **{f"{b:g}": s for b, s in zip(grid, score)}, "seconds": time.perf_counter() - started}


def main(argv=None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", nargs="+", default=list(LOADERS), choices=list(LOADERS))
    parser.add_argument("--kernels", nargs="+", default=["linear", "rbf"], choices=["linear", "rbf"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--grid", nargs="+", type=float, default=list(GRID))
    parser.add_argument("--out", type=Path, help="directory for bench_beta_grid.csv and bench_beta_grid.md")
    args = parser.parse_args(argv)
    grid = sorted(args.grid)
    stamp = environment()
    rows = []
    for seed in args.seeds:
        for kernel in args.kernels:
            for data in args.data:
                if kernel != "linear" and data in LINEAR_ONLY:
                    continue
                rows.append(cell(data, kernel, seed, grid))
                print(" ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in rows[-1].items()),
                      flush=True)
                if args.out is not None:  # every finished cell kept, in case the run is cut short
                    write(pd.DataFrame(rows), args.out, stamp)
    return pd.DataFrame(rows)


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per data set and kernel (in the order run): the winning β of each seed, how many are on an edge, the largest
    edge step, the mean score over the seeds at each grid point."""
    grid = [c for c in frame.columns if c not in CELL_COLUMNS]
    rows = []
    for (data, kernel), cells in frame.groupby(["data", "kernel"], sort=False):
        steps = cells["edge step"].dropna()
        rows.append({"data": data, "kernel": kernel, "metric": cells["metric"].iloc[0],
                     "winners (seeds)": ", ".join(f"{b:g}" for b in cells["best beta"]),
                     "on edge": f"{int(cells['on edge'].sum())} of {len(cells)}",
                     "largest edge step": f"{steps.abs().max():.3f}" if len(steps) else "",
                     **{b: f"{cells[b].mean():.3f}" for b in grid}})
    return pd.DataFrame(rows)


def write(frame: pd.DataFrame, out: Path, stamp: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    frame.to_csv(out / "bench_beta_grid.csv", index=False)
    table = summary(frame)
    (out / "bench_beta_grid.md").write_text("\n".join(["# bench_beta_grid", "", str(stamp), "",
                                                       markdown_table(list(table.columns), table.values.tolist())])
                                            + "\n")


if __name__ == "__main__":
    main()
