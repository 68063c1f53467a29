"""Learning a multilabel decision rule (docs/theory.md §5.1) from decision values with known labels — out-of-fold
values in ``OvNClassifier(decision_rule="cv")``, the multilabel analogue of scikit-learn's
``TunedThresholdClassifierCV``. The candidates are the rules of :class:`ovn_cvx.labels.DecisionRule`; scoring a
candidate only applies it to the given values (no model is refitted)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit
from scipy.stats import t as t_distribution
from sklearn.isotonic import IsotonicRegression

from ._validation import check_sample_weight
from .labels import NEVER, DecisionRule, argmax_index, at_least_bound, is_jaccard_weight, rule_thresholds


def _counts(T, P, w):
    """Per-label (w-weighted over rows) true positives, false positives and false negatives."""
    w = np.ones(T.shape[0]) if w is None else w
    return w @ (T & P), w @ (~T & P), w @ (T & ~P)


def _mean(values, w):
    """The w-weighted mean over the last axis: ``np.average(values, weights=w, axis=-1)``, the same numbers without
    its argument checks (the search takes thousands of means of a few hundred values)."""
    return values.mean(axis=-1) if w is None else np.multiply(values, w, dtype=np.float64).sum(axis=-1) / w.sum()


def _ratio(num, den):
    """The ratio num / den, and 1 where den = 0 (nothing true, nothing predicted: a perfect match)."""
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), 1.0)


def _contiguous(array, dtype) -> np.ndarray:
    """``array`` as a writable C-ordered array of ``dtype`` (a copy only when it is not one already): the one kind of
    array the compiled scores are compiled for (a read-only or strided input would compile them again for its type)."""
    return np.require(array, dtype=dtype, requirements=["C", "W"])


def _weights(sample_weight, n) -> np.ndarray:
    """The row weights a scorer's compiled loop takes: ones without ``sample_weight``; :func:`check_sample_weight`'s
    ValueError naming it when its shape is not one entry per row (the compiled loops do not check their indices)."""
    if sample_weight is None:
        return np.ones(n)
    w = _contiguous(sample_weight, np.float64)
    if w.shape != (n,):
        check_sample_weight(w, n)  # raises: the package's one message for weights of the wrong shape
    return w


def _decision_values(F) -> np.ndarray:
    """F as a float n×K array of decision values, ``NEVER`` for a label left out of a fit; a ValueError naming ``F``
    when it is not 2-D with a row, or holds NaN or an infinity (a comparison with NaN is False: it would be taken for
    a value left out)."""
    F = np.asarray(F, dtype=np.float64)
    if F.ndim != 2 or F.shape[0] == 0:
        raise ValueError(f"F must be an n×K array of decision values with at least one row, got shape {F.shape}")
    if not np.isfinite(F).all():
        raise ValueError("F must hold finite decision values (NEVER for a label left out of a fit), got NaN or an "
                         "infinity")
    return F


def _loops():
    """The compiled scoring (``ovn_cvx._rule_loops``), imported at the first rule search: numba's start-up (~0.4 s)
    is not paid by ``import ovn_cvx`` or by fits that learn no rule."""
    from . import _rule_loops

    return _rule_loops


class RowScorer:
    """The row-wise metric λ · Jaccard + (1 − λ) · (1 − Hamming loss) of ``jaccard_weight`` λ (1: Jaccard, 0: 1 −
    Hamming loss), a (w-weighted) mean over rows of a score of each row's counts, compiled (``ovn_cvx._rule_loops``:
    one summation order, so equal predictions score bit for bit the same). Called as the other scorers, on T, P and
    w (P may carry leading axes); the threshold rules of the search are scored from their row counts directly
    (``_Search._batch``, ``_Search._label_ascents``)."""

    def __init__(self, jaccard_weight):
        self.jaccard_weight = float(jaccard_weight)

    def __call__(self, T, P, w):
        T, P = np.asarray(T, dtype=bool), np.asarray(P, dtype=bool)
        if P.shape[-2:] != T.shape:  # the compiled loops do not check their indices
            raise ValueError(f"the predictions' rows and labels {P.shape[-2:]} must be the truth's {T.shape}")
        scores = _loops().prediction_scores(_contiguous(T, bool), _contiguous(P.reshape(-1, *P.shape[-2:]), bool),
                                            _weights(w, P.shape[-2]), self.jaccard_weight)
        return scores.reshape(P.shape[:-2]) if P.ndim > 2 else scores[0]

    def leave_one_out(self, T, P, w) -> np.ndarray:
        """The score of the boolean predictions P (n×K) without each row in turn (n scores), w the positive row
        weights or None: from each row's own score (the terms of the weighted mean, ``_rule_loops._add_row``'s)."""
        common, predicted, true = (T & P).sum(axis=1), P.sum(axis=1), T.sum(axis=1)
        jaccard = _ratio(common, predicted + true - common)
        hamming_loss = (predicted + true - 2 * common) / T.shape[1]
        rows = self.jaccard_weight * jaccard + (1.0 - self.jaccard_weight) * (1.0 - hamming_loss)
        w = np.ones(T.shape[0]) if w is None else w
        return (w @ rows - w * rows) / (w.sum() - w)


class CountScorer:
    """A metric of the (w-weighted) per-label counts of true positives, false positives and false negatives
    (``_counts``), ``of_counts(tp, fp, fn)`` on arrays whose last axis is the labels. Called as the other scorers, on
    T, P and w (P may carry leading axes)."""

    def __init__(self, of_counts):
        self.of_counts = of_counts

    def __call__(self, T, P, w):
        return self.of_counts(*_counts(T, P, w))

    def leave_one_out(self, T, P, w) -> np.ndarray:
        """The score of the boolean predictions P (n×K) without each row in turn (n scores): the counts less the
        row's."""
        w = np.ones(T.shape[0]) if w is None else w
        rows = [w[:, None] * c for c in (T & P, ~T & P, T & ~P)]
        return self.of_counts(*(total - row for total, row in zip(_counts(T, P, w), rows)))


def _f1_micro(tp, fp, fn):
    tp, fp, fn = (c.sum(axis=-1) for c in (tp, fp, fn))
    return _ratio(2 * tp, 2 * tp + fp + fn)


def _f1_macro(tp, fp, fn):
    return _ratio(2 * tp, 2 * tp + fp + fn).mean(axis=-1)


#: the metrics a rule can be chosen by, each "higher is better", on boolean truth T and predictions P (n×K) with
#: row weights w: scikit-learn's ``jaccard_score(average="samples")``, ``f1_score(average="micro"/"macro")`` and
#: 1 − ``hamming_loss``, with ``zero_division=1`` (a row or label with neither true nor predicted labels is a perfect
#: match). Written on counts (compiled for the row-wise ones, ``RowScorer``; numpy for the F1 scores) because the
#: search scores thousands of candidates and scikit-learn's input checks cost milliseconds a call; P may carry leading
#: axes (a batch of candidates' predictions, one score each). tests/test_estimator_rules.py checks every one against
#: scikit-learn.
SCORERS = {"jaccard": RowScorer(1.0), "f1_micro": CountScorer(_f1_micro), "f1_macro": CountScorer(_f1_macro),
           "hamming": RowScorer(0.0)}


def scorer(scoring):
    """The metric of ``scoring``: a key of ``SCORERS``, or a Jaccard weight λ in [0, 1], the trade λ · Jaccard +
    (1 − λ) · (1 − Hamming loss) (1: "jaccard", 0: "hamming"). A ValueError naming ``rule_scoring`` otherwise."""
    if is_jaccard_weight(scoring):
        return RowScorer(scoring)
    if isinstance(scoring, str) and scoring in SCORERS:
        return SCORERS[scoring]
    raise ValueError(f"rule_scoring must be one of {sorted(SCORERS)} or a Jaccard weight in [0, 1] (the trade "
                     f"weight · Jaccard + (1 − weight) · (1 − Hamming loss)), got {scoring!r}")


#: the guard's one-sided confidence: a learned rule replaces the paper's when its held-out gain exceeds Student's t
#: quantile of this level (n − 1 degrees of freedom, n rows) times the gain's standard error
GUARD_LEVEL = 0.975


def outweighs_noise(gain: float, error: float, n_rows: int) -> bool:
    """The guard's paired one-sided t-test: True when ``gain`` (a learned rule's held-out score minus the paper rule's
    on the same ``n_rows`` rows) exceeds ``error`` (its standard error) times Student's t quantile of level
    ``GUARD_LEVEL`` with n_rows − 1 degrees of freedom — strictly, so that a gain at the edge of its noise keeps the
    paper's rule; False with fewer than two rows or a NaN or infinite gain or error."""
    if n_rows < 2 or not (np.isfinite(gain) and np.isfinite(error)):
        return False
    return bool(gain > t_distribution.ppf(GUARD_LEVEL, n_rows - 1) * error)


def paired_gain(score_of, truth, P, P_paper, sample_weight) -> tuple[float, float]:
    """(gain, error): the score of the predictions P minus that of the paper rule's P_paper on all rows, and the
    gain's jackknife standard error over the rows, √((n − 1)/n · Σ_i (g₋ᵢ − mean g₋)²) with g₋ᵢ the gain without row
    i (for a row-wise metric without weights: std(ddof=1)/√n of the rows' score differences, the paired t-test's)."""
    gain = float(score_of(truth, P, sample_weight) - score_of(truth, P_paper, sample_weight))
    without = score_of.leave_one_out(truth, P, sample_weight) - score_of.leave_one_out(truth, P_paper, sample_weight)
    n = without.size
    return gain, float(np.sqrt((n - 1) / n * np.sum((without - without.mean()) ** 2)))


#: candidate thresholds per search: this many quantiles of the decision values
N_CANDIDATES = 40
#: sweeps over the labels of the per-label thresholds' coordinate ascent
SWEEPS = 2


@lru_cache(maxsize=32)
def _quantile_positions(n: int) -> np.ndarray:
    """The positions in n sorted values of numpy's ``N_CANDIDATES`` "nearest" quantiles: the quantiles of 0 … n − 1
    (they depend on n alone), so that a search sorts its values once instead of asking numpy for the quantiles."""
    positions = np.quantile(np.arange(n, dtype=np.float64), np.linspace(0.0, 1.0, N_CANDIDATES), method="nearest")
    positions = positions.astype(np.intp)
    positions.setflags(write=False)  # shared by every search of n values
    return positions


def _candidates(values) -> np.ndarray:
    """Thresholds to try on ``values``: quantiles that are data values (not the ``NEVER`` of a label left out of a
    fit, ``np.quantile(values, np.linspace(0, 1, N_CANDIDATES), method="nearest")``), and the largest float (never
    the label)."""
    values = np.sort(values[values > NEVER])
    grid = values[_quantile_positions(values.size)] if values.size else []
    return np.append(np.unique(grid), np.finfo(np.float64).max)


#: how the rule is chosen among the families' best: the highest score on the values it was learned on, the
#: one-standard-error rule, or the highest held-out score (each fold's rows predicted by rules learned on the others)
SELECTIONS = ("best", "one_se", "cv")
#: the families in order of how many parameters are tuned to the score (ties go to the earlier): the expected-score
#: rule's sigmoids are fitted by likelihood, not searched for the score
FAMILIES = ("paper", "global threshold", "top-m", "score-gap", "expected score", "per-label thresholds")


class LearnedRule(NamedTuple):
    """What :func:`learn_rule` returns: the ``rule``; the ``scores`` the families were compared by; the learner's
    held-out score minus the paper rule's on all rows (``gain``) and its standard error over the rows (``gain_error``,
    :func:`paired_gain`), NaN without folds; and whether the paper rule was kept because that gain did not outweigh
    its noise (``kept_paper``, :func:`outweighs_noise`)."""

    rule: DecisionRule
    scores: dict
    gain: float = float("nan")
    gain_error: float = float("nan")
    kept_paper: bool = False


def learn_rule(F, Y, scoring="jaccard", *, paper: DecisionRule = DecisionRule(), labels=None,
               sample_weight=None, selection: str = "best", folds=None, guard: bool = False) -> LearnedRule:
    """The best rule on decision values F (n×K) for the labels Y (n×K, 1 = member) by ``scoring`` (a key of
    ``SCORERS`` or a Jaccard weight, :func:`scorer`), the score of each family's best by which the families were
    compared, and the chosen rule's held-out gain over the paper's rule (:class:`LearnedRule`).

    The families (``FAMILIES``), each searched on the values for its best rule: ``paper``; one global threshold,
    with and without the argmax fallback; the top m labels, m = 1 … K (the fallback is moot); the labels within a
    score gap g of the row's largest value (quantiles of the gaps; the fallback is moot); for ``scoring`` "jaccard",
    "hamming" or a Jaccard weight, the expected-score rule (Platt's sigmoid per label fitted to the values, then the
    label set of largest expected score, with and without the fallback, docs/theory.md §5.1); per-label thresholds
    with and without the fallback, by coordinate ascent from the best global threshold (two sweeps over the labels).
    Only the columns ``labels`` (default: all; distinct indices) with a known value (not ``NEVER``) are searched; the
    others keep the global threshold (never predicted by the expected-score rule). A ValueError naming ``labels`` when
    none of them has a known value (on all rows, or on the rows outside a group of ``folds``).

    ``selection``: ``"best"``, the family whose best scores highest on these values (a later family must score
    strictly higher); ``"one_se"`` (Breiman's one-standard-error rule), the first family whose best score is at least
    the overall best minus its standard error, std/sqrt(n) of the overall best rule's scores on the n groups of
    ``folds``; ``"cv"``, the family that scores highest on held-out rows: every group of ``folds`` predicted by the
    families' best rules learned on the other groups, the pooled predictions scored — the search's optimism on the
    rows it was tuned on (largest for per-label thresholds) does not count; the returned rule is the chosen family's
    best on all rows. ``folds`` (the internal fold of each row) is required by "one_se", "cv" and ``guard``.

    ``guard``: the chosen rule replaces ``paper`` only when the learner's held-out score beats the paper rule's by more
    than the noise, the paired one-sided t-test of :func:`outweighs_noise` over the rows (:func:`paired_gain`): each
    group of ``folds`` predicted by the family that scores best held-out on the other groups, with its rule learned
    without the group (``_learner_predictions``), against ``paper`` on the same rows. The rows, not the few folds, are
    the test's units: the spread of 3 fold means is itself a guess from 2 degrees of freedom
    (docs/benchmarks/defaults.md, *The guard on sparse, wide data*)."""
    score_of = scorer(scoring)
    if selection not in SELECTIONS:
        raise ValueError(f"rule_selection must be one of {SELECTIONS}, got {selection!r}")
    held_out_needed = selection != "best" or guard
    F = _decision_values(F)
    truth = np.asarray(Y) == 1
    if truth.shape != F.shape:  # the compiled loops do not check their indices
        raise ValueError(f"Y must have the shape of F {F.shape}, got {truth.shape}")
    if not held_out_needed:
        folds = None
    elif folds is not None:
        folds = np.asarray(folds)
        if folds.shape != (F.shape[0],):
            raise ValueError(f"folds must give the internal fold of each of the {F.shape[0]} rows, got shape "
                             f"{folds.shape}")
    if sample_weight is not None:  # a row of weight 0 counts nowhere: not among the candidates, nor as a fold
        sample_weight = check_sample_weight(sample_weight, F.shape[0])
        weighted = sample_weight > 0
        F, truth, sample_weight = F[weighted], truth[weighted], sample_weight[weighted]
        folds = None if folds is None else folds[weighted]
    if held_out_needed and (folds is None or np.unique(folds).size < 2):
        what = f"rule_selection={selection!r}" if selection != "best" else "guard=True"
        raise ValueError(f"{what} needs folds: the internal fold of every row, at least 2 folds with rows of positive "
                         "sample_weight")
    search = _Search(score_of, scoring, paper, _check_labels(labels, F.shape[1]))
    best = search.family_bests(F, truth, sample_weight)
    held_out = search.held_out_predictions(F, truth, sample_weight, folds) if held_out_needed else None
    if selection == "cv":
        scores = {family: float(score_of(truth, P, sample_weight)) for family, P in held_out.items()}
        family = max(scores, key=scores.get)  # first maximum: families in the order of FAMILIES
    else:
        scores = {family: value for family, (value, _) in best.items()}
        family = max(scores, key=scores.get)
        if selection == "one_se":
            family = _one_standard_error(best, family, score_of, F, truth, folds, sample_weight)
    if not held_out_needed:
        return LearnedRule(best[family][1], scores)
    gain, error = paired_gain(score_of, truth, _learner_predictions(score_of, truth, held_out, folds, sample_weight),
                              paper.predict(F), sample_weight)
    kept_paper = guard and not outweighs_noise(gain, error, F.shape[0])
    return LearnedRule(paper if kept_paper else best[family][1], scores, gain, error, kept_paper)


def _check_labels(labels, n_labels: int) -> np.ndarray:
    """The searched columns ``labels`` (None: all ``n_labels``) as an index array; a ValueError naming ``labels``
    unless they are distinct column indices, at least one."""
    if labels is None:
        return np.arange(n_labels)
    indices = np.asarray(labels)
    if indices.ndim != 1 or indices.size == 0 or indices.dtype.kind not in "iu" or np.unique(indices).size < \
            indices.size or indices.min() < 0 or indices.max() >= n_labels:
        raise ValueError(f"labels must be distinct column indices of F (0 … {n_labels - 1}), at least one, got "
                         f"{labels!r}")
    return indices


def _group_scores(score_of, truth, predictions, sample_weight, groups, complement=False) -> np.ndarray:
    """The score of each prediction matrix ``predictions[c]`` (C×n×K) on the rows of each group (C × G) of
    ``groups`` (each row's group, 0 … G − 1), with ``complement`` on the rows outside it. A ``RowScorer`` in one
    compiled call (``_rule_loops.group_scores``: the numbers of the scorer on those rows alone)."""
    n_groups = int(groups.max()) + 1
    if isinstance(score_of, RowScorer):
        return _loops().group_scores(_contiguous(truth, bool), _contiguous(predictions, bool),
                                     _weights(sample_weight, truth.shape[0]), groups, n_groups, complement,
                                     score_of.jaccard_weight)
    scores = np.empty((len(predictions), n_groups))
    for g in range(n_groups):
        rows = (groups == g) != complement
        weight = None if sample_weight is None else sample_weight[rows]
        scores[:, g] = [score_of(truth[rows], P[rows], weight) for P in predictions]
    return scores


def _learner_predictions(score_of, truth, held_out, folds, sample_weight) -> np.ndarray:
    """The learner's own held-out predictions: each group of ``folds`` predicted by the family that scores highest
    on the held-out predictions of the other groups, with that family's rule learned without the group. Scoring the
    family chosen on all groups on those same groups would favour it by the choice (the winner's curse)."""
    _, groups = np.unique(folds, return_inverse=True)
    predictions = np.stack(list(held_out.values()))
    others = _group_scores(score_of, truth, predictions, sample_weight, groups, complement=True)
    P = np.zeros(truth.shape, dtype=bool)
    for g, family in enumerate(np.argmax(others, axis=0)):  # the first maximum: families in the order of FAMILIES
        P[groups == g] = predictions[family][groups == g]
    return P


class _Search:
    """Each family's best rule on given values (``family_bests``) and the families' held-out scores."""

    def __init__(self, score_of, scoring, paper, labels):
        self.score_of, self.scoring, self.paper, self.labels = score_of, scoring, paper, labels

    def held_out_predictions(self, F, truth, sample_weight, folds) -> dict[str, np.ndarray]:
        """Per family, the predictions of every group of ``folds`` by the family's best rule learned on the other
        groups."""
        predicted = {}
        for fold in np.unique(folds):
            test = folds == fold
            train_weight = None if sample_weight is None else sample_weight[~test]
            for family, (_, rule) in self.family_bests(F[~test], truth[~test], train_weight).items():
                predicted.setdefault(family, np.zeros(truth.shape, dtype=bool))[test] = rule.predict(F[test])
        return predicted

    def family_bests(self, F, truth, sample_weight) -> dict[str, tuple[float, DecisionRule]]:
        """{family: (score, rule)} of each family's best rule on F, in the order of ``FAMILIES``. A family's
        candidates are scored as one batch (``_batch``); its best is the first maximum, and a later search of the
        family must score strictly higher to replace it. Only the searched labels with a known value (not ``NEVER``)
        on these rows are searched; a ValueError naming ``labels`` when there is none."""
        labels = self.labels[(F[:, self.labels] > NEVER).any(axis=0)]
        if labels.size == 0:
            raise ValueError(f"labels: none of the searched columns {self.labels.tolist()} has a known decision value "
                             f"(all NEVER: left out of the fits) on the {F.shape[0]} rows searched (with folds: the "
                             "rows outside a fold); a rule is learned from known values")
        best = {}

        def consider(family, values, rules):
            """The first best of the scored candidates (``rules(j)`` builds the j-th) becomes the family's best
            when it scores strictly higher."""
            first = int(np.argmax(values))
            if family not in best or values[first] > best[family][0]:
                best[family] = (float(values[first]), rules(first))

        def one(family, rule):
            consider(family, [self.score_of(truth, rule.predict(F), sample_weight)], lambda _: rule)

        one("paper", self.paper)
        rows = _Rows(F, truth, sample_weight)
        searched = F[:, labels]
        thresholds = _candidates(searched)
        for fallback in (True, False):
            values, _ = self._batch(rows, thresholds, lambda t: t[:, None, None], fallback)
            consider("global threshold", values, lambda j: DecisionRule(float(thresholds[j]), fallback=fallback))
        # the top m labels, m = 1 … (searched labels), and the labels within a gap of the row's largest value: the
        # thresholds of predict_labels (rule_thresholds), which always leave the argmax in (the fallback is moot)
        values, _ = self._batch(rows, rule_thresholds(F, top=np.arange(1, labels.size + 1)), lambda t: t, True)
        consider("top-m", values, lambda j: DecisionRule(top=j + 1))
        largest = F.max(axis=1, keepdims=True)
        gaps = _candidates((largest - searched)[searched > NEVER])[:-1]  # not the "every label" gap
        values, _ = self._batch(rows, gaps, lambda g: rule_thresholds(F, gap=g[:, None, None]), True)
        consider("score-gap", values, lambda j: DecisionRule(gap=float(gaps[j])))
        if is_jaccard_weight(self.scoring) or self.scoring in ("jaccard", "hamming"):
            calibration = _platt(F, truth, labels, sample_weight)
            for fallback in (True, False):
                one("expected score", DecisionRule(calibration=calibration, utility=self.scoring, fallback=fallback))
        start = best["global threshold"][1].threshold
        candidates = [_candidates(F[:, k]) for k in labels]
        if isinstance(self.score_of, RowScorer):
            for fallback, value, thresholds in self._label_ascents(rows, labels, start, candidates):
                consider("per-label thresholds", [value], lambda _: DecisionRule(thresholds, fallback=fallback))
            return {family: best[family] for family in FAMILIES if family in best}
        for fallback in (True, False):
            thresholds = np.full(F.shape[1], start)
            current = self.score_of(truth, DecisionRule(thresholds, fallback=fallback).predict(F), sample_weight)
            consider("per-label thresholds", [current], lambda _: DecisionRule(thresholds, fallback=fallback))
            for _ in range(SWEEPS):
                for k, label_candidates in zip(labels, candidates):
                    trials, values, rights, right = self._label_trials(rows, thresholds, k, label_candidates, fallback)
                    consider("per-label thresholds", values, lambda j: DecisionRule(trials[j], fallback=fallback))
                    # ties of the metric go to the threshold that gets more entries of label k right: a row without
                    # labels scores only once every label is right, which no single label's move can show
                    tied = np.flatnonzero(values == values.max())
                    chosen = tied[np.argmax(rights[tied])]  # the first maximum of (value, right)
                    if (values[chosen], rights[chosen]) > (current, right):
                        current, thresholds = values[chosen], trials[chosen]
        return {family: best[family] for family in FAMILIES if family in best}

    def _label_ascents(self, rows, labels, start, candidates):
        """(fallback, score, thresholds) of the per-label thresholds' coordinate ascent from the global threshold
        ``start`` with a ``RowScorer``, with and without the fallback, compiled (``_rule_loops.label_ascent``: the
        steps of the loop in ``family_bests``, the same numbers): the first best of the start and the trials, the
        searched ``labels`` moved to their ``candidates`` (one ascending array per label), the others at ``start``."""
        sizes = np.array([values.size for values in candidates])
        candidate_bounds = np.zeros((labels.size, sizes.max()))
        for m, values in enumerate(candidates):
            candidate_bounds[m, :values.size] = at_least_bound(values)
        orders = np.ascontiguousarray(np.argsort(rows.F[:, labels], axis=0).T)
        for fallback in (True, False):
            value, choice = _loops().label_ascent(rows.F, rows.truth, rows.top, rows.w, float(at_least_bound(start)),
                                                  _contiguous(labels, np.int64), orders, candidate_bounds, sizes,
                                                  fallback, self.score_of.jaccard_weight, SWEEPS)
            thresholds = np.full(rows.F.shape[1], start)
            for m in np.flatnonzero(choice >= 0):
                thresholds[labels[m]] = candidates[m][choice[m]]
            yield fallback, value, thresholds

    def _label_trials(self, rows, thresholds, k, candidates, fallback):
        """(trials, scores, rights, right): the per-label thresholds ``trials`` (C×K) that move label k's of
        ``thresholds`` to each of ``candidates``, their ``_batch`` scores on
        ``rows`` (:class:`_Rows`) with the share of rows each gets right in label k, and that share of ``thresholds``
        themselves (a ``RowScorer`` takes the compiled ascent instead, ``_label_ascents``)."""
        trials = np.repeat(thresholds[None, :], candidates.size, axis=0)
        trials[:, k] = candidates
        values, rights = self._batch(rows, trials, lambda t: t[:, None, :], fallback, label=k)
        P = DecisionRule(thresholds, fallback=fallback).predict(rows.F)
        return trials, values, rights, _right(P, rows.truth, k, rows.sample_weight)

    def _batch(self, rows, params, thresholds_of, fallback, label=None):
        """The score of the threshold rule ``DecisionRule(thresholds_of(params[j:j+1])[0], fallback)`` for every j
        (its thresholds broadcast against F with a leading axis; chunks of at most 2^24 entries), and with ``label``
        the share of rows each gets right in that label. For a ``RowScorer`` compiled from the rules' row counts,
        without their predictions (``_rule_loops.threshold_scores``, the same numbers)."""
        values, rights = [], []
        step = max(1, 2**24 // rows.F.size)
        for start in range(0, len(params), step):
            thresholds = thresholds_of(params[start:start + step])
            if isinstance(self.score_of, RowScorer) and label is None:
                bounds = at_least_bound(thresholds)[..., 0].reshape(len(thresholds), -1)  # one bound a row (or for all)
                values.append(_loops().threshold_scores(rows.F, rows.truth, rows.top, rows.w, bounds, fallback,
                                               self.score_of.jaccard_weight))
                continue
            P = DecisionRule(thresholds, fallback=fallback).predict(rows.F)
            values.append(self.score_of(rows.truth, P, rows.sample_weight))
            if label is not None:
                rights.append(_right(P, rows.truth, label, rows.sample_weight))
        return np.concatenate(values), (np.concatenate(rights) if label is not None else None)


class _Rows:
    """The values F, truth and weights of a rule search, as the compiled scores take them: contiguous, the weights
    ``w`` (ones without ``sample_weight``) and each row's argmax label ``top``."""

    def __init__(self, F, truth, sample_weight):
        self.F, self.truth = _contiguous(F, np.float64), _contiguous(truth, bool)
        # learn_rule's checked weights (a fresh float64 array of one entry per row, or None)
        self.sample_weight = sample_weight
        self.w = np.ones(F.shape[0]) if sample_weight is None else sample_weight
        self.top = argmax_index(F)


def _right(P, truth, k, sample_weight):
    """The (weighted) share of rows whose label k prediction is right, per leading index of P."""
    return _mean(P[..., k] == truth[:, k], sample_weight)


def _platt(F, truth, labels, sample_weight) -> tuple[np.ndarray, np.ndarray]:
    """(A, B) of Platt's sigmoid P(label k) = 1 / (1 + exp(A_k f_k + B_k)) fitted to each searched label's known
    values (``platt_sigmoids``); the other labels never (A = 0, B = inf)."""
    A, B = np.zeros(F.shape[1]), np.full(F.shape[1], np.inf)
    A[labels], B[labels] = platt_sigmoids(F[:, labels], truth[:, labels], sample_weight)
    return A, B


#: ``platt_sigmoids``: a label's fit is done when the largest component of its log-loss gradient (on the values
#: scaled to largest size 1) is at most this times the label's total weight: the test means the same for every scale
#: of the values and of the weights (scikit-learn's L-BFGS stops at an absolute 1e-6 of the same gradient)
PLATT_GTOL = 1e-12


def _platt_done(ga, gb, total) -> np.ndarray:
    """Whether Platt's fits with log-loss gradient (ga, gb) and total weight ``total`` are done (a NaN gradient is
    not)."""
    tol = PLATT_GTOL * total
    return (np.abs(ga) <= tol) & (np.abs(gb) <= tol)


def _platt_loss(z, w, target):
    """Platt's objective Σ w (−t log P − (1 − t) log(1 − P)), P = σ(−z), per column of z = a f + b."""
    return (w * (np.logaddexp(0.0, z) - (1.0 - target) * z)).sum(axis=0)


def _platt_residual(z, w, target):
    """The derivative of Platt's objective in z per value, w (t − P), and P = σ(−z)."""
    p = expit(-z)
    return w * (target - p), p


def _platt_lbfgs(a, b, f, w, target) -> tuple[float, float]:
    """(a, b) of one column's Platt fit by scipy's L-BFGS from (a, b): the finish of a column Newton's method did not
    bring to ``PLATT_GTOL``. The objective is divided by the total weight, so that L-BFGS's absolute gradient
    tolerance is the relative one of ``_platt_done``."""
    w = w / w.sum()

    def loss_and_gradient(ab):
        z = ab[0] * f + ab[1]
        r, _ = _platt_residual(z, w, target)
        return _platt_loss(z, w, target), np.array([r @ f, r.sum()])

    return tuple(minimize(loss_and_gradient, np.array([a, b]), jac=True, method="L-BFGS-B",
                          options={"gtol": PLATT_GTOL, "ftol": 64 * np.finfo(float).eps}).x)


def platt_sigmoids(F, member, sample_weight=None, *, max_iter: int = 50) -> tuple[np.ndarray, np.ndarray]:
    """(A, B) of Platt's sigmoid P(member | f) = 1 / (1 + exp(A_k f + B_k)) of every column k of the decision values
    F (n×L) against the boolean ``member`` (n×L), fitted on each column's known values (not ``NEVER``).

    The fit of scikit-learn's ``CalibratedClassifierCV(method="sigmoid")``: Platt's smoothed targets
    (n₊ + 1)/(n₊ + 2) and 1/(n₋ + 2) (weighted counts), the start A = 0, B = log((n₋ + 1)/(n₊ + 1)). Each column's
    values are scaled to largest size 1 (scikit-learn scales them only from size 30 on; the optimum is the same), so
    that values s·F give the sigmoid (A/s, B) for every scale s. It is minimized for all columns at once by Newton's
    method with a backtracking line search (Platt's problem in Lin, Lin & Weng's form: a 2×2 system per column); a
    column stops when its gradient is within ``PLATT_GTOL`` of its total weight, and a column that does not get there
    in ``max_iter`` iterations is finished by scipy's L-BFGS on the same objective."""
    F = _decision_values(F)
    member = np.asarray(member, dtype=bool)
    known = F > NEVER
    w = known * (1.0 if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)[:, None])
    largest = np.abs(np.where(known, F, 0.0)).max(axis=0, initial=0.0)
    # values of size 1e-6 would leave the Hessian's a-entry below its 1e-12 ridge, and the stopping test loose
    scale = np.where(largest > 0.0, largest, 1.0)
    f = np.where(known, F, 0.0) / scale
    total = w.sum(axis=0)
    positives = (w * member).sum(axis=0)
    negatives = total - positives
    target = np.where(member, (positives + 1.0) / (positives + 2.0), 1.0 / (negatives + 2.0))
    a, b = np.zeros(F.shape[1]), np.log((negatives + 1.0) / (positives + 1.0))
    current = _platt_loss(a * f + b, w, target)
    for iteration in range(max_iter + 1):
        r, p = _platt_residual(a * f + b, w, target)
        ga, gb = (r * f).sum(axis=0), r.sum(axis=0)
        done = _platt_done(ga, gb, total)
        if done.all() or iteration == max_iter:
            break
        # Newton's direction from the 2×2 Hessian, with Lin, Lin & Weng's 1e-12 ridge (a column of constant values
        # has a singular Hessian: the ridge gives the least-change step, as a gradient method takes); a done
        # column stays where it is
        h = w * p * (1.0 - p)  # d² loss / dz² per value
        haa, hab, hbb = (h * f * f).sum(axis=0) + 1e-12, (h * f).sum(axis=0), h.sum(axis=0) + 1e-12
        det = haa * hbb - hab * hab
        da = np.where(done, 0.0, -(hbb * ga - hab * gb) / det)
        db = np.where(done, 0.0, -(haa * gb - hab * ga) / det)
        step, accepted = np.ones_like(a), np.zeros(a.size, dtype=bool)
        slope = ga * da + gb * db
        for _ in range(40):  # halve each column's step until the loss falls enough (Armijo; near the minimum
            # the fall is below the loss's round-off, which is allowed)
            trial = _platt_loss((a + step * da) * f + (b + step * db), w, target)
            accepted |= trial <= current + 1e-4 * step * slope + 1e-13 * np.abs(current)
            if accepted.all():
                break
            step = np.where(accepted, step, 0.5 * step)
        a, b = np.where(accepted, a + step * da, a), np.where(accepted, b + step * db, b)
        current = np.where(accepted, trial, current)
    for k in np.flatnonzero(~done):
        a[k], b[k] = _platt_lbfgs(a[k], b[k], f[:, k], w[:, k], target[:, k])
    return a / scale, b


@dataclass(frozen=True)
class PlattSigmoid:
    """Platt's sigmoid P(member | f) = 1 / (1 + exp(a_ f + b_)) of decision values f, as fitted by
    :func:`platt_sigmoids`: the calibrator of ``OvNClassifier(calibration="sigmoid")``.

    Attributes
    ----------
    a_ : float
        The slope (negative when larger values mean membership).
    b_ : float
        The intercept.
    """

    a_: float
    b_: float

    def predict(self, values) -> np.ndarray:
        """P(member | f) of the decision values ``values``."""
        return expit(-(self.a_ * np.asarray(values, dtype=np.float64) + self.b_))


#: the calibrations of membership on decision values: Platt's sigmoid and isotonic regression (scikit-learn's)
CALIBRATIONS = ("sigmoid", "isotonic")


def fit_calibrators(F, member, sample_weight=None, method: str = "sigmoid") -> list:
    """One calibrator ``method`` of ``member[:, k]`` (boolean) on the decision values ``F[:, k]`` per column k, fitted
    on the known values (a fold that left the label out of its fit has NEVER there): :class:`PlattSigmoid` (all
    columns in one :func:`platt_sigmoids` fit) or scikit-learn's ``IsotonicRegression``."""
    if method not in CALIBRATIONS:
        raise ValueError(f"method must be one of {CALIBRATIONS}; got {method!r}")
    F, member = _decision_values(F), np.asarray(member, dtype=bool)
    if method == "sigmoid":
        return [PlattSigmoid(float(a), float(b)) for a, b in zip(*platt_sigmoids(F, member, sample_weight))]
    calibrators = []
    for k, (values, truth) in enumerate(zip(F.T, member.T)):
        known = values > NEVER
        if not known.any():
            raise ValueError(f"F: column {k} has no known value (all NEVER: left out of the fits), no isotonic "
                             "regression to fit")
        calibrators.append(IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(
            values[known], truth[known].astype(np.float64),
            sample_weight=None if sample_weight is None else sample_weight[known]))
    return calibrators


def _one_standard_error(best, winner, score_of, F, truth, folds, sample_weight) -> str:
    """The first family whose best score is within one standard error of the ``winner`` family's; the error from the
    spread of the winner's score over the folds."""
    _, groups = np.unique(folds, return_inverse=True)
    per_fold = _group_scores(score_of, truth, best[winner][1].predict(F)[None], sample_weight, groups)[0]
    error = np.std(per_fold, ddof=1) / np.sqrt(per_fold.size)
    return next(family for family, (value, _) in best.items() if value >= best[winner][0] - error)
