"""Issue 14: the paper's multilabel rule against a rule learned from out-of-fold decision values
(``decision_rule="cv"``) and against known negatives (``negatives="rest"``), on the bundled train/test splits.

Run by hand (not a test):

    python benchmarks/bench_rules.py                 # emotions (about a minute)
    python benchmarks/bench_rules.py --data scene    # scene (negatives='rest' takes minutes: 7 266 pairs)
    python benchmarks/bench_rules.py --data glass iris wine   # multiclass: 5-fold CV accuracy, seconds
    python benchmarks/bench_rules.py --rule-cv 3 5 10         # emotions, the learned rule with 3, 5, 10 folds

Fixed hyperparameters (no search): StandardScaler, SwHb, α = 0, β = 1, linear kernel, MM. Example-based Jaccard on
the test split (a row with neither true nor predicted labels counts 1), and for reference binary relevance with
scikit-learn's LinearSVC (C = 1, f > 0) on the same features. Multiclass sets (no split bundled): mean accuracy
over StratifiedKFold(5, shuffle=True, random_state=0), OvN (paper) and negatives='rest' against one-vs-rest
LinearSVC (C = 1).
"""
from __future__ import annotations

import argparse
import time
import warnings

from sklearn.metrics import jaccard_score
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from ovn_cvx import OvNClassifier
from ovn_cvx.datasets import load_emotions, load_glass, load_iris, load_scene, load_wine

LOADERS = {"emotions": load_emotions, "scene": load_scene}
MULTICLASS = {"glass": load_glass, "iris": load_iris, "wine": load_wine}


def settings(rule_cv):
    """The multilabel settings: the paper's rule, the learned rule with each number of internal folds, negatives."""
    rows = {"paper (f >= 1, argmax fallback)": {}, "negatives='rest'": {"negatives": "rest"}}
    for n in rule_cv:
        rows[f"decision_rule='cv' (jaccard, {n} folds)"] = {"decision_rule": "cv", "rule_cv": n}
        rows[f"negatives='rest' + cv rule ({n} folds)"] = {"negatives": "rest", "decision_rule": "cv", "rule_cv": n}
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="+", default=["emotions"], choices=sorted(LOADERS) + sorted(MULTICLASS))
    parser.add_argument("--rule-cv", nargs="+", type=int, default=[5], help="internal folds of the learned rule")
    args = parser.parse_args()
    for name in (n for n in args.data if n in MULTICLASS):
        X, y = MULTICLASS[name](return_X_y=True)
        models = {"OvN, paper (negatives='none')": OvNClassifier("SwHb"),
                  "OvN, negatives='rest'": OvNClassifier("SwHb", negatives="rest"),
                  "one-vs-rest LinearSVC (C = 1)": OneVsRestClassifier(LinearSVC(C=1.0, max_iter=20_000))}
        print(f"{name}: {X.shape[0]} rows, K = {len(set(y))}, 5-fold CV accuracy")
        for label, model in models.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                scores = cross_val_score(make_pipeline(StandardScaler(), model), X, y,
                                         cv=StratifiedKFold(5, shuffle=True, random_state=0))
            print(f"  {label:40s} accuracy {scores.mean():.3f} ± {scores.std():.3f}")
    for name in (n for n in args.data if n in LOADERS):
        X, Y = LOADERS[name]("train", return_X_y=True)
        X_test, Y_test = LOADERS[name]("test", return_X_y=True)
        print(f"{name}: {X.shape[0]} train / {X_test.shape[0]} test rows, K = {Y.shape[1]}")
        for label, params in settings(args.rule_cv).items():
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
