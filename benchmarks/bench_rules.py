"""Issue 14: the paper's multilabel rule against a rule learned from out-of-fold decision values
(``decision_rule="cv"``) and against known negatives (``negatives="rest"``), on the bundled train/test splits.

Run by hand (not a test):

    python benchmarks/bench_rules.py                 # emotions (about a minute)
    python benchmarks/bench_rules.py --data scene    # + scene (several minutes)

Fixed hyperparameters (no search): StandardScaler, SwHb, α = 0, β = 1, linear kernel, MM. Example-based Jaccard on
the test split (a row with neither true nor predicted labels counts 1), and for reference binary relevance with
scikit-learn's LinearSVC (C = 1, f > 0) on the same features.
"""
from __future__ import annotations

import argparse
import time
import warnings

from sklearn.metrics import jaccard_score
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from ovn_cvx import OvNClassifier
from ovn_cvx.datasets import load_emotions, load_scene

LOADERS = {"emotions": load_emotions, "scene": load_scene}
SETTINGS = {
    "paper (f >= 1, argmax fallback)": {},
    "decision_rule='cv' (jaccard, 5 folds)": {"decision_rule": "cv"},
    "negatives='rest'": {"negatives": "rest"},
    "negatives='rest' + decision_rule='cv'": {"negatives": "rest", "decision_rule": "cv"},
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="+", default=["emotions"], choices=sorted(LOADERS))
    args = parser.parse_args()
    for name in args.data:
        X, Y = LOADERS[name]("train", return_X_y=True)
        X_test, Y_test = LOADERS[name]("test", return_X_y=True)
        print(f"{name}: {X.shape[0]} train / {X_test.shape[0]} test rows, K = {Y.shape[1]}")
        for label, params in SETTINGS.items():
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # degenerate labels are reported below
                model = make_pipeline(StandardScaler(), OvNClassifier("SwHb", **params)).fit(X, Y)
            seconds = time.perf_counter() - start
            est = model[-1]
            P = model.predict(X_test)
            rule = f", rule: {est.rule_.kind}{'' if est.rule_.fallback else ' (no fallback)'}" \
                if hasattr(est, "rule_") else ""
            print(f"  {label:40s} Jaccard {jaccard_score(Y_test, P, average='samples', zero_division=1.0):.3f}  "
                  f"labels/row {P.sum(axis=1).mean():.2f} (true {Y_test.sum(axis=1).mean():.2f})  "
                  f"degenerate {est.degenerate_labels_.tolist()}{rule}  fit {seconds:.1f} s")
        br = make_pipeline(StandardScaler(), OneVsRestClassifier(LinearSVC(C=1.0, max_iter=20_000))).fit(X, Y)
        P = br.predict(X_test)
        print(f"  {'binary relevance, LinearSVC (C = 1)':40s} Jaccard "
              f"{jaccard_score(Y_test, P, average='samples', zero_division=1.0):.3f}  labels/row {P.sum(1).mean():.2f}")


if __name__ == "__main__":
    main()
