"""Small and mid-sized RBF problems (the reproduction's data sets): the fast solver, its MM phase alone, plain MM and
Clarabel.

Run by hand (not a test; about a minute and a half):

    python benchmarks/bench_mm_small_kernels.py

SwHb, α ∈ {0, 0.5}, β ∈ {0.2, 20}, σ = σ₀ (scikit-learn's ``gamma="scale"`` width, as in ``ovn-cvx reproduce``), on
stratified subsets of glass, wine, iris (N = 60, 140) and the first 400 emotions patterns. Prints one Markdown row
per problem (time, iterations, certified) and the totals; every method is timed once, side by side.
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.model_selection import train_test_split

import ovn_cvx
from ovn_cvx import datasets
from ovn_cvx.experiments.protocols import reference_sigma, sigma_to_gamma

METHODS = {"MM": {"method": "mm"}, "MM phase + polish": {"method": "mm", "finish": "polish"},
           "plain MM": {"method": "mm", "newton": False, "finish": "polish"},
           "Clarabel": {"method": "cvxpy", "solver": "CLARABEL"}}


DATA = ("glass", "wine", "iris", "emotions")


def problems(data=DATA):
    for name, loader in (("glass", datasets.load_glass), ("wine", datasets.load_wine), ("iris", datasets.load_iris)):
        if name not in data:
            continue
        X, y = loader(return_X_y=True)
        for n in (60, 140):
            Xs, _, ys, _ = train_test_split(X, y, train_size=n, random_state=0, stratify=y)
            yield f"{name} N={n}", Xs, (ys[:, None] == np.unique(ys)).astype(int)
    if "emotions" in data:
        X, Y = datasets.load_emotions(return_X_y=True)
        yield "emotions N=400", X[:400], Y[:400]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", nargs="+", choices=DATA, default=DATA, help="only these data sets (default: all)")
    args = parser.parse_args(argv)
    totals = dict.fromkeys(METHODS, 0.0)
    print("| data | α | β | " + " | ".join(f"{m}: s / it." for m in METHODS) + " | MM − Clarabel (rel.) |")
    print("|---|---|---|" + "---|" * (len(METHODS) + 1))
    for name, X, Y in problems(args.data):
        Y = Y[:, Y.any(axis=0)]
        gamma = sigma_to_gamma(reference_sigma(X))
        for alpha in (0.0, 0.5):
            for beta in (0.2, 20.0):
                problem = ovn_cvx.Problem(X, Y, "SwHb", "rbf", alpha=alpha, beta=beta, gamma=gamma)
                cells, values = [], {}
                for method, options in METHODS.items():
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        start = time.perf_counter()
                        result = ovn_cvx.solve(problem, **options)
                        seconds = time.perf_counter() - start
                    totals[method] += seconds
                    values[method] = result.objective
                    mark = "" if result.method != "mm" else (" ✓" if result.certified else " (uncertified)")
                    cells.append(f"{seconds:.3f} / {result.iterations}{mark}")
                gap = (values["MM"] - values["Clarabel"]) / max(1.0, abs(values["Clarabel"]))
                print(f"| {name} | {alpha} | {beta} | " + " | ".join(cells) + f" | {gap:.1e} |", flush=True)
    print("\nTotal seconds: " + ", ".join(f"{m} {t:.1f}" for m, t in totals.items()))


if __name__ == "__main__":
    main()
