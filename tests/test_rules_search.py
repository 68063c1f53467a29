"""The learned rule's search, made fast without changing its answer: every family's candidates scored from their
row counts (against the full predictions, bit for bit where ties are decided), the candidate quantiles and
weighted means (against numpy's). Platt's sigmoids of the expected-score rule: tests/test_platt.py."""
import warnings

import numpy as np
import pytest

from ovn_cvx._rule_loops import label_trials
from ovn_cvx.labels import NEVER, DecisionRule, at_least_bound
from ovn_cvx.rules import (N_CANDIDATES, SWEEPS, _candidates, _group_scores, _mean, _Rows, _Search, learn_rule,
                           scorer)


@pytest.mark.parametrize("weighted", [False, True])
def test_mean_is_numpys_bit_for_bit(weighted):
    rng = np.random.default_rng(0)
    B = rng.random((7, 50, 6)) < 0.4
    w = rng.random(50) if weighted else None
    for values in (B[..., 0], rng.random((7, 50)), rng.integers(0, 4, size=50) / 3):
        np.testing.assert_array_equal(_mean(values, w), np.average(values, weights=w, axis=-1))


def test_candidates_are_numpys_nearest_quantiles():
    """The candidates from one sort at cached positions are numpy's "nearest" quantiles of the known values (every
    size from 1 to 300, repeated values, NEVER entries) and the largest float; no known value: that float alone."""
    rng = np.random.default_rng(8)
    for n in [*range(1, 301), 1211]:
        values = np.round(rng.normal(size=n), int(rng.integers(0, 3)))
        values[rng.random(n) < 0.1] = NEVER
        known = values[values > NEVER]
        expected = np.quantile(known, np.linspace(0, 1, N_CANDIDATES), method="nearest") if known.size else []
        np.testing.assert_array_equal(_candidates(values), np.append(np.unique(expected), np.finfo(np.float64).max))
    np.testing.assert_array_equal(_candidates(np.full(4, NEVER)), [np.finfo(np.float64).max])


@pytest.mark.parametrize("scoring", ["jaccard", "hamming", 0.5, 0.3])
@pytest.mark.parametrize("seed", [11, 12])
def test_search_from_row_counts_finds_the_rules_of_the_full_predictions(scoring, seed):
    """Every family's best rule and score equal those of the search that scores every candidate on its full
    predictions (the oracle, the per-label ascent in Python), bit for bit — on values rounded to one decimal, where
    many candidates tie."""
    rng = np.random.default_rng(seed)
    F = np.round(rng.normal(size=(150, 5)), 1)
    truth = (F + rng.normal(scale=0.8, size=F.shape)) > 0.6
    truth[:, 4] = False
    F[:, 4] = NEVER  # a label left out of the fit: not searched
    w = rng.uniform(0.5, 2.0, size=150)
    labels = np.arange(4)
    metric = scorer(scoring)
    fast = _Search(metric, scoring, DecisionRule(), labels)
    full = _Search(lambda T, P, weights: metric(T, P, weights), scoring, DecisionRule(), labels)
    for weights in (None, w):
        ours, oracle = fast.family_bests(F, truth, weights), full.family_bests(F, truth, weights)
        assert list(ours) == list(oracle)
        for family, (value, rule) in oracle.items():
            assert ours[family][0] == value, family
            np.testing.assert_array_equal(ours[family][1].predict(F), rule.predict(F))
            assert ours[family][1].kind == rule.kind
        assert isinstance(ours["per-label thresholds"][1].threshold, np.ndarray)
        np.testing.assert_array_equal(ours["per-label thresholds"][1].threshold,
                                      oracle["per-label thresholds"][1].threshold)


@pytest.mark.parametrize("scoring", ["jaccard", "hamming", 0.3])
def test_label_trials_tie_bit_for_bit(scoring):
    """The per-label search scores a row-wise metric from each trial's row counts; the oracle: the same trials' full
    predictions (``DecisionRule.predict``) scored by the same metric through the generic batch. Trials with the same
    predictions score the same to the last bit, so that the tie rule (the first maximum of (score, rights)) decides
    as on the full predictions; the rights of the tied best and of the thresholds as they are equal the full
    predictions'. With ties on a threshold (within TIE_TOL), rows left empty (the fallback), a label left out (NEVER),
    weights."""
    rng = np.random.default_rng(5)
    F = np.round(rng.normal(size=(90, 5)), 1)
    truth = rng.random((90, 5)) < 0.4
    F[:, 3], truth[:, 3] = NEVER, False
    metric = scorer(scoring)
    searched = np.array([0, 1, 2, 4])
    full = _Search(lambda T, P, weights: metric(T, P, weights), scoring, DecisionRule(), searched)
    thresholds = np.array([0.2, 0.5, -0.1, 0.4, 0.8])
    for weights in (None, rng.uniform(0.2, 3.0, size=90)):
        rows = _Rows(F, truth, weights)
        for fallback in (True, False):
            for k in (0, 1, 4):
                # each candidate and one 0.03 below it: the same predictions on values 0.1 apart, so scores tie
                candidates = np.sort(np.concatenate([_candidates(F[:, k])[:-1], _candidates(F[:, k])[:-1] - 0.03]))
                values, rights = label_trials(rows.F, rows.truth, rows.top, rows.w, at_least_bound(thresholds), k,
                                              np.argsort(F[:, k]), at_least_bound(candidates), fallback,
                                              metric.jaccard_weight)
                oracle = full._label_trials(rows, thresholds, k, candidates, fallback)
                np.testing.assert_array_equal(values, oracle[1])  # every score, bit for bit
                assert np.ptp(oracle[1]) > 0.01  # the trials differ: the comparison is not between constants
                tied = oracle[1] == oracle[1].max()
                assert tied.sum() >= 2  # ties among the best: the case the tie rule is for
                np.testing.assert_array_equal(rights[:-1][tied], oracle[2][tied])
                assert rights[-1] == oracle[3]


def test_learned_rule_on_known_values_is_unchanged_by_the_weights_scale():
    """Scaling every weight by 3 changes no weighted mean: the same rule and scores (up to round-off). Platt's
    smoothed targets (n₊ + 1)/(n₊ + 2) do depend on the weights' scale, so the expected-score family's sigmoids move
    (slightly); on these values its predictions, and so its score, do not."""
    rng = np.random.default_rng(2)
    F = rng.normal(size=(120, 4))
    Y = ((F + rng.normal(scale=0.7, size=F.shape)) > 0.5).astype(int)
    w = rng.uniform(0.5, 2.0, size=120)
    folds = np.arange(120) % 3
    one = learn_rule(F, Y, 0.5, sample_weight=w, selection="cv", folds=folds, guard=True)
    three = learn_rule(F, Y, 0.5, sample_weight=3 * w, selection="cv", folds=folds, guard=True)
    np.testing.assert_array_equal(one.rule.predict(F), three.rule.predict(F))
    assert one.scores == pytest.approx(three.scores, abs=1e-12)


def test_top_m_never_predicts_a_label_without_a_value():
    """The top-m rule's threshold is the row's m-th largest value, but at least its smallest known one: a label left
    out of a fit (NEVER) is not among the top m, and a row with fewer known labels than m gets those it has."""
    F = np.array([[3.0, NEVER, 1.0, 2.0], [0.5, 0.2, NEVER, NEVER]])
    expected = {1: [[1, 0, 0, 0], [1, 0, 0, 0]], 2: [[1, 0, 0, 1], [1, 1, 0, 0]], 3: [[1, 0, 1, 1], [1, 1, 0, 0]],
                4: [[1, 0, 1, 1], [1, 1, 0, 0]]}
    for m, labels in expected.items():
        np.testing.assert_array_equal(DecisionRule(top=m).predict(F), labels)


def test_top_m_on_a_row_without_a_known_value():
    """A row of NEVER only: no label before the fallback, the fallback's argmax after it, and no NumPy warning (its
    threshold is the finite "never", not inf, whose round-off bound would be inf − inf)."""
    F = np.array([[NEVER] * 3, [1.0, 2.0, 3.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(DecisionRule(top=1, fallback=False).predict(F), [[0, 0, 0], [0, 0, 1]])
        np.testing.assert_array_equal(DecisionRule(top=1).predict(F), [[1, 0, 0], [0, 0, 1]])


@pytest.mark.parametrize("scoring", ["jaccard", 0.5, "f1_micro", "f1_macro"])
def test_a_label_without_values_is_not_searched(scoring):
    """A column whose out-of-fold values are all NEVER (left out of every fold's fit) is not searched: every family's
    best and the learned rule are those of the search without it (labels=[0, 2, 3]), and no family predicts it."""
    rng = np.random.default_rng(4)
    F = rng.normal(size=(60, 4))
    Y = ((F + rng.normal(scale=0.7, size=F.shape)) > 0).astype(int)
    F[:, 1] = NEVER
    folds = np.arange(60) % 3
    everything = learn_rule(F, Y, scoring, selection="cv", folds=folds, guard=True)
    known = learn_rule(F, Y, scoring, labels=[0, 2, 3], selection="cv", folds=folds, guard=True)
    assert everything.scores == known.scores
    assert (everything.gain, everything.rule.kind) == (known.gain, known.rule.kind)
    np.testing.assert_array_equal(everything.rule.predict(F), known.rule.predict(F))
    bests = _Search(scorer(scoring), scoring, DecisionRule(), np.arange(4)).family_bests(F, Y == 1, None)
    for family, (_, rule) in bests.items():
        assert not rule.predict(F)[:, 1].any(), family
    if "expected score" in bests:  # the column left out of the search: its sigmoid never predicts it (B = inf), where
        # a searched column without values would get A = B = 0, probability ½ for any value it has later
        assert bests["expected score"][1].calibration[1][1] == np.inf
    assert "top-m" in everything.scores


def test_labels_without_any_known_value_name_labels():
    """labels= selecting only columns without a known value, on all rows or on the rows outside one group of folds
    (the held-out search): a ValueError naming labels, not a NumPy error."""
    rng = np.random.default_rng(4)
    F = rng.normal(size=(30, 3))
    Y = (F > 0).astype(int)
    F[:, 1] = NEVER
    with pytest.raises(ValueError, match=r"labels: none of the searched columns \[1\] has a known decision value"):
        learn_rule(F, Y, labels=[1])
    folds = np.arange(30) % 3
    F[folds != 0, 2] = NEVER  # known in group 0 only: nothing to search outside it
    learn_rule(F, Y, labels=[2])  # on all rows it has values
    with pytest.raises(ValueError, match=r"labels: none of the searched columns \[2\].*outside a fold"):
        learn_rule(F, Y, labels=[2], selection="cv", folds=folds)


@pytest.mark.parametrize("labels", [[3], [-1], [0, 0], [], [0.5], [[0, 1]], ["a"]])
def test_bad_labels_name_the_argument(labels):
    F = np.random.default_rng(0).normal(size=(12, 3))
    with pytest.raises(ValueError, match=r"labels must be distinct column indices of F \(0 … 2\), at least one"):
        learn_rule(F, (F > 0).astype(int), labels=labels)


@pytest.mark.parametrize("selection", ["best", "cv", "one_se"])
def test_rows_of_zero_weight_count_nowhere(selection):
    """Rows of weight 0 (a whole group of folds among them) give the rule, scores and gain of the search without
    them: they are not among the candidate thresholds, nor a group of their own (was: a NaN gain, and a
    StopIteration of the one-standard-error rule)."""
    rng = np.random.default_rng(6)
    F = rng.normal(size=(90, 4))
    Y = ((F + rng.normal(scale=0.7, size=F.shape)) > 0.3).astype(int)
    folds = np.arange(90) % 3
    w = rng.uniform(0.5, 2.0, size=90)
    w[(folds == 0) | (rng.random(90) < 0.2)] = 0.0
    kept = w > 0
    ours = learn_rule(F, Y, 0.5, sample_weight=w, selection=selection, folds=folds, guard=True)
    oracle = learn_rule(F[kept], Y[kept], 0.5, sample_weight=w[kept], selection=selection, folds=folds[kept],
                        guard=True)
    assert np.isfinite(ours.gain) and (ours.gain, ours.gain_error, ours.scores) == (
        oracle.gain, oracle.gain_error, oracle.scores)
    np.testing.assert_array_equal(ours.rule.predict(F), oracle.rule.predict(F))


@pytest.mark.parametrize("weights, match", [(-np.ones(30), "non-negative"), (np.zeros(30), "at least one nonzero"),
                                            (np.ones(29), r"shape \(30,\)"), (np.full(30, np.nan), "NaN")])
def test_bad_sample_weight_names_the_argument(weights, match):
    F = np.random.default_rng(0).normal(size=(30, 3))
    with pytest.raises(ValueError, match=f"sample_weight.*{match}|{match}.*sample_weight"):
        learn_rule(F, (F > 0).astype(int), sample_weight=weights)


def test_weight_in_one_fold_only_is_too_few_folds():
    F = np.random.default_rng(0).normal(size=(30, 3))
    with pytest.raises(ValueError, match=r"guard=True needs folds: .* at least 2 folds with rows of positive"):
        learn_rule(F, (F > 0).astype(int), sample_weight=np.where(np.arange(30) < 10, 1.0, 0.0),
                   folds=np.arange(30) // 10, guard=True)


@pytest.mark.parametrize("bad, match", [(np.nan, "finite decision values"), (np.inf, "finite decision values"),
                                        (-np.inf, "finite decision values")])
def test_values_that_are_not_decision_values_name_f(bad, match):
    """NaN compares False with everything, so it was taken for a value left out (NEVER) and the rule learned on the
    rest; an infinity broke the score-gap candidates with a NumPy warning."""
    F = np.random.default_rng(0).normal(size=(30, 3))
    Y = (F > 0).astype(int)
    F[4, 1] = bad
    with pytest.raises(ValueError, match=f"F must hold {match}"):
        learn_rule(F, Y)
    for shape in [(0, 3), (30,)]:
        with pytest.raises(ValueError, match=r"F must be an n×K array of decision values with at least one row"):
            learn_rule(np.zeros(shape), np.zeros(shape))


def _ascent(search, rows, labels, start, candidates, fallback):
    """The oracle of the per-label thresholds' coordinate ascent: ``SWEEPS`` sweeps of each label's trials scored on
    their full predictions (``_Search._label_trials`` of a scorer that is not a ``RowScorer``), each move to the first
    maximum of (score, share right) when it beats the current pair; the first best score met and its thresholds."""
    thresholds = np.full(rows.F.shape[1], start)
    P = DecisionRule(thresholds, fallback=fallback).predict(rows.F)
    current = search.score_of(rows.truth, P, rows.sample_weight)
    best = (current, thresholds)
    for _ in range(SWEEPS):
        for k, label_candidates in zip(labels, candidates):
            trials, values, rights, right = search._label_trials(rows, thresholds, k, label_candidates, fallback)
            if values.max() > best[0]:
                best = (values.max(), trials[np.argmax(values)])
            tied = np.flatnonzero(values == values.max())
            chosen = tied[np.argmax(rights[tied])]
            if values[chosen] > current or (values[chosen] == current and rights[chosen] > right):
                current, thresholds = values[chosen], trials[chosen]
    return best


@pytest.mark.parametrize("scoring", ["jaccard", "hamming", 0.3, 0.5])
def test_compiled_ascent_moves_as_the_ascent_on_full_predictions(scoring):
    """The compiled ascent (``_Search._label_ascents``, with and without the fallback) against the oracle
    ``_ascent``, bit for bit in the score and the thresholds: candidates in pairs with the same predictions (each
    one and 0.03 below it, on values 0.1 apart), so that moves tie in score and in the share right and the first of
    the tied must be taken; a label left out (NEVER, not searched), rows without labels (the fallback), weights,
    starts below, inside and above the values."""
    rng = np.random.default_rng(21)
    F = np.round(rng.normal(size=(120, 5)), 1)
    truth = (F + rng.normal(scale=0.9, size=F.shape)) > 0.5
    truth[:12] = False
    F[:, 3], truth[:, 3] = NEVER, False
    metric = scorer(scoring)
    labels = np.array([0, 1, 2, 4])
    fast = _Search(metric, scoring, DecisionRule(), labels)
    full = _Search(lambda T, P, weights: metric(T, P, weights), scoring, DecisionRule(), labels)
    candidates = [np.sort(np.concatenate([_candidates(F[:, k])[:-1], _candidates(F[:, k])[:-1] - 0.03]))
                  for k in labels]
    moved = 0
    for weights in (None, rng.uniform(0.2, 3.0, size=120)):
        rows = _Rows(F, truth, weights)
        for start in (-2.0, 0.35, 0.8, 3.0):
            for fallback, value, thresholds in fast._label_ascents(rows, labels, start, candidates):
                oracle_value, oracle_thresholds = _ascent(full, rows, labels, start, candidates, fallback)
                assert value == oracle_value
                np.testing.assert_array_equal(thresholds, oracle_thresholds)
                moved += not np.all(thresholds == start)
    assert moved >= 12  # the ascent moved: the comparison is not between starts


@pytest.mark.parametrize("complement", [False, True])
def test_group_scores_compiled_equal_the_scorer_on_each_groups_rows(complement):
    """``_group_scores`` of a ``RowScorer`` (one compiled call) against the scorer called on each group's rows, bit for
    bit, with and without weights; the groups numbered 0 … G − 1 (``np.unique``'s inverse of any labels)."""
    rng = np.random.default_rng(3)
    truth = rng.random((80, 4)) < 0.4
    predictions = rng.random((5, 80, 4)) < 0.5
    _, groups = np.unique(rng.choice([3, 7, 9], size=80), return_inverse=True)
    metric = scorer(0.3)
    for weights in (None, rng.uniform(0.2, 3.0, size=80)):
        ours = _group_scores(metric, truth, predictions, weights, groups, complement)
        oracle = _group_scores(lambda T, P, w: metric(T, P, w), truth, predictions, weights, groups, complement)
        assert ours.shape == (5, 3)
        np.testing.assert_array_equal(ours, oracle)
        assert np.ptp(ours) > 0.01
