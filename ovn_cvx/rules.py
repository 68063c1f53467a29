"""Learning a multilabel decision rule (docs/theory.md §5.1) from decision values with known labels — out-of-fold
values in ``OvNClassifier(decision_rule="cv")``, the multilabel analogue of scikit-learn's
``TunedThresholdClassifierCV``. The candidates are the rules of :class:`ovn_cvx.labels.DecisionRule`; scoring a
candidate only applies it to the given values (no model is refitted)."""
from __future__ import annotations

import numpy as np

from .labels import DecisionRule


def _counts(T, P, w):
    """Per-label (w-weighted over rows) true positives, false positives and false negatives."""
    w = np.ones(T.shape[0]) if w is None else w
    return w @ (T & P), w @ (~T & P), w @ (T & ~P)


def _ratio(num, den):
    """The ratio num / den, and 1 where den = 0 (nothing true, nothing predicted: a perfect match)."""
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), 1.0)


def _jaccard(T, P, w):
    return float(np.average(_ratio((T & P).sum(axis=1), (T | P).sum(axis=1)), weights=w))


def _f1_micro(T, P, w):
    tp, fp, fn = (c.sum() for c in _counts(T, P, w))
    return float(_ratio(2 * tp, 2 * tp + fp + fn))


def _f1_macro(T, P, w):
    tp, fp, fn = _counts(T, P, w)
    return float(_ratio(2 * tp, 2 * tp + fp + fn).mean())


def _hamming(T, P, w):
    return float(1.0 - np.average((T != P).mean(axis=1), weights=w))


#: the metrics a rule can be chosen by, each "higher is better", on boolean truth T and predictions P (n×K) with
#: row weights w: scikit-learn's ``jaccard_score(average="samples")``, ``f1_score(average="micro"/"macro")`` and
#: 1 − ``hamming_loss``, with ``zero_division=1`` (a row or label with neither true nor predicted labels is a perfect
#: match). Written on numpy counts because the search scores thousands of candidates and scikit-learn's input checks
#: cost milliseconds a call; tests/test_estimator_rules.py checks every one against scikit-learn.
SCORERS = {"jaccard": _jaccard, "f1_micro": _f1_micro, "f1_macro": _f1_macro, "hamming": _hamming}

#: candidate thresholds per search: this many quantiles of the decision values
N_CANDIDATES = 40


def _candidates(values) -> np.ndarray:
    """Thresholds to try on ``values``: quantiles that are data values (not the ``NEVER`` of a label left out of a
    fit), and the largest float (never the label)."""
    values = values[values > -np.finfo(np.float64).max]
    grid = np.quantile(values, np.linspace(0.0, 1.0, N_CANDIDATES), method="nearest") if values.size else []
    return np.append(np.unique(grid), np.finfo(np.float64).max)


#: how the rule is chosen among the families' best: the highest score, or the one-standard-error rule
SELECTIONS = ("best", "one_se")


def learn_rule(F, Y, scoring: str = "jaccard", *, paper: DecisionRule = DecisionRule(), labels=None,
               sample_weight=None, selection: str = "best", folds=None) -> tuple[DecisionRule, dict[str, float]]:
    """The best rule on decision values F (n×K) for the labels Y (n×K, 1 = member) by ``scoring`` (a key of
    ``SCORERS``), and the best score of each family.

    The candidates, in order (a later one must score strictly higher to win, so ties go to the simpler rule):
    ``paper``; one global threshold, with and without the argmax fallback; the top m labels, m = 1 … K (the
    fallback is moot); the labels within a score gap g of the row's largest value (quantiles of the gaps; the
    fallback is moot); per-label thresholds with and without the fallback, by coordinate ascent from the best
    global threshold (two sweeps over the labels). Only the columns ``labels`` (default: all) are searched; the
    others keep the global threshold.

    ``selection="one_se"`` (Breiman's one-standard-error rule) keeps instead the first family in that order (the
    fewest free parameters first: none, one, one, one, one per label) whose best score is at least the overall best
    score minus its standard error, std/sqrt(n) of the overall best rule's scores on the n groups of ``folds`` (the
    internal fold of each row, required)."""
    if scoring not in SCORERS:
        raise ValueError(f"rule_scoring must be one of {sorted(SCORERS)}, got {scoring!r}")
    if selection not in SELECTIONS:
        raise ValueError(f"rule_selection must be one of {SELECTIONS}, got {selection!r}")
    if selection == "one_se" and (folds is None or np.unique(folds).size < 2):
        raise ValueError("rule_selection='one_se' needs folds: the internal fold of every row, at least 2 folds")
    F = np.asarray(F, dtype=np.float64)
    truth = np.asarray(Y) == 1
    labels = np.arange(F.shape[1]) if labels is None else np.asarray(labels)
    score_of = SCORERS[scoring]

    def consider(family, rule):
        """The rule's score and predictions; it becomes its family's best when it scores strictly higher."""
        P = rule.predict(F)
        value = score_of(truth, P, sample_weight)
        if family not in best or value > best[family][0]:
            best[family] = (value, rule)
        return value, P

    best = {}
    consider("paper", paper)
    searched = F[:, labels]
    thresholds = _candidates(searched)
    for fallback in (True, False):
        for t in thresholds:
            consider("global threshold", DecisionRule(float(t), fallback=fallback))
    for m in range(1, labels.size + 1):
        consider("top-m", DecisionRule(top=m))
    gaps = F.max(axis=1, keepdims=True) - searched
    for g in _candidates(gaps[searched > -np.finfo(np.float64).max])[:-1]:  # not the "every label" gap
        consider("score-gap", DecisionRule(gap=float(g)))
    start = best["global threshold"][1].threshold
    for fallback in (True, False):
        thresholds = np.full(F.shape[1], start)
        current, P = consider("per-label thresholds", DecisionRule(thresholds.copy(), fallback=fallback))
        for _ in range(2):
            for k in labels:
                # ties of the metric go to the threshold that gets more entries of label k right: a row without
                # labels scores only once every label is right, which no single label's move can show
                def right(P):
                    return np.average(P[:, k] == truth[:, k], weights=sample_weight)
                key = (current, right(P))
                for t in _candidates(F[:, k]):
                    trial = thresholds.copy()
                    trial[k] = t
                    value, P_trial = consider("per-label thresholds", DecisionRule(trial, fallback=fallback))
                    if (value, right(P_trial)) > key:
                        key, current, thresholds, P = (value, right(P_trial)), value, trial, P_trial
    winner = max(best.values(), key=lambda entry: entry[0])  # first maximum: families in the order above
    if selection == "one_se":
        winner = _one_standard_error(best, winner, score_of, F, truth, np.asarray(folds), sample_weight)
    return winner[1], {family: value for family, (value, _) in best.items()}


def _one_standard_error(best, winner, score_of, F, truth, folds, sample_weight):
    """The first family's best (score, rule) within one standard error of ``winner``'s score; the error from the
    spread of the winner's score over the folds."""
    P = winner[1].predict(F)
    groups = [folds == f for f in np.unique(folds)]
    per_fold = [score_of(truth[g], P[g], None if sample_weight is None else sample_weight[g]) for g in groups]
    error = np.std(per_fold, ddof=1) / np.sqrt(len(groups))
    return next(entry for entry in best.values() if entry[0] >= winner[0] - error)
