"""The compiled scores of the rule search (ovn_cvx/_rule_loops.py) against scikit-learn's metrics on the candidates'
full predictions — random thresholds, sample weights, the argmax fallback, a label left out of a fold (NEVER),
values on a threshold — and against numpy's weighted mean of the row scores bit for bit (numpy's summation order,
so that equal predictions tie exactly)."""
import numpy as np
import pytest
from sklearn.metrics import hamming_loss, jaccard_score

from ovn_cvx._rule_loops import (_pairwise_sum, _scratch, expected_best_sizes, group_scores, label_trials,
                                 prediction_scores, threshold_scores)
from ovn_cvx.labels import NEVER, DecisionRule, argmax_index, at_least_bound, rule_thresholds
from ovn_cvx.rules import _candidates, learn_rule, scorer

WEIGHTS = [1.0, 0.0, 0.5, 0.3]


def _sklearn(truth, P, w, jaccard_weight):
    """λ · jaccard_score(average="samples", zero_division=1) + (1 − λ) · (1 − hamming_loss)."""
    jaccard = jaccard_score(truth, P, average="samples", zero_division=1.0, sample_weight=w)
    return jaccard_weight * jaccard + (1 - jaccard_weight) * (1 - hamming_loss(truth, P, sample_weight=w))


def _numpy(truth, P, w, jaccard_weight):
    """The same score as numpy's weighted means of the row scores (the rule search's definition before it was
    compiled): bit for bit what the compiled scores give."""
    common, predicted, true = (truth & P).sum(axis=1), P.sum(axis=1), truth.sum(axis=1)
    union = predicted + true - common
    rows = np.where(union > 0, common / np.maximum(union, 1), 1.0), (predicted + true - 2 * common) / truth.shape[1]
    if w is None:
        jaccard, loss = rows[0].mean(), rows[1].mean()
    else:
        jaccard, loss = (rows[0] * w).sum() / w.sum(), (rows[1] * w).sum() / w.sum()
    return jaccard_weight * jaccard + (1.0 - jaccard_weight) * (1.0 - loss)


def _data(n=150, K=5, seed=0):
    """Decision values rounded to one decimal (many on a candidate threshold), a label left out of a fold's fit
    (NEVER on a third of its rows), rows without labels, weights."""
    rng = np.random.default_rng(seed)
    F = np.round(rng.normal(size=(n, K)), 1)
    truth = (F + rng.normal(scale=0.8, size=F.shape)) > 0.5
    truth[: n // 10] = False
    F[: n // 3, 2] = NEVER
    return np.ascontiguousarray(F), np.ascontiguousarray(truth), rng.uniform(0.2, 3.0, size=n)


def test_pairwise_sum_is_numpys_bit_for_bit():
    rng = np.random.default_rng(1)
    work = _scratch()
    for n in [*range(0, 300), 511, 1211, 4097, 20000]:
        a = rng.random(n + 3) * 10.0 ** rng.integers(-4, 5, size=n + 3)
        assert _pairwise_sum(a, 3, n, work) == a[3:].sum(), n


@pytest.mark.parametrize("jaccard_weight", WEIGHTS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("fallback", [True, False])
def test_threshold_scores_equal_sklearn(jaccard_weight, weighted, fallback):
    F, truth, w = _data()
    w = w if weighted else None
    weights, top = np.ones(len(F)) if w is None else w, argmax_index(F)
    global_thresholds = _candidates(F)
    ranks = np.arange(1, F.shape[1] + 1)
    for thresholds, rules in (
            (global_thresholds[:, None, None], [DecisionRule(t, fallback=fallback) for t in global_thresholds]),
            (rule_thresholds(F, top=ranks), [DecisionRule(top=m, fallback=fallback) for m in ranks])):
        bounds = at_least_bound(thresholds)[..., 0].reshape(len(thresholds), -1)
        ours = threshold_scores(F, truth, top, weights, bounds, fallback if rules[0].top is None else True,
                                jaccard_weight)
        for value, rule in zip(ours, rules):
            P = rule.predict(F)
            assert value == pytest.approx(_sklearn(truth, P, w, jaccard_weight), abs=1e-12)
            assert value == _numpy(truth, P, w, jaccard_weight)  # bit for bit
    assert np.ptp(ours) > 0.05  # the candidates differ: not a comparison of constants


@pytest.mark.parametrize("jaccard_weight", WEIGHTS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("fallback", [True, False])
def test_label_trials_equal_sklearn(jaccard_weight, weighted, fallback):
    """Every trial of label k against the full predictions of its per-label thresholds; the share of rows right in
    label k for the trials of the largest score and for the thresholds as they are; NaN for the others."""
    F, truth, w = _data(seed=2)
    w = w if weighted else None
    weights, top = np.ones(len(F)) if w is None else w, argmax_index(F)
    thresholds = np.array([0.3, 1.0, -0.2, 0.5, 0.8])
    for k in range(F.shape[1]):
        candidates = _candidates(F[:, k])
        values, rights = label_trials(F, truth, top, weights, at_least_bound(thresholds), k, np.argsort(F[:, k]),
                                      at_least_bound(candidates), fallback, jaccard_weight)
        assert values.shape == candidates.shape and rights.shape == (candidates.size + 1,)
        largest = values == values.max()
        assert np.isnan(rights[:-1][~largest]).all()
        for j, candidate in enumerate([*candidates, thresholds[k]]):
            trial = thresholds.copy()
            trial[k] = candidate
            P = DecisionRule(trial, fallback=fallback).predict(F)
            if j < candidates.size:
                assert values[j] == pytest.approx(_sklearn(truth, P, w, jaccard_weight), abs=1e-12)
                assert values[j] == _numpy(truth, P, w, jaccard_weight)
            if j == candidates.size or largest[j]:
                assert rights[j] == np.average(P[:, k] == truth[:, k], weights=w)
        assert np.ptp(values) > 0.01


@pytest.mark.parametrize("fallback", [True, False])
def test_label_trials_on_bounds_that_are_values(fallback):
    """Candidate bounds equal to values of label k (a value on its bound is on) and repeated bounds: every trial
    against the full predictions ``F >= bound`` (the argmax for a row left empty with ``fallback``), bit for bit."""
    F, truth, w = _data(seed=9)
    top, k = argmax_index(F), 1
    bounds = np.array([0.3, 1.0, -0.2, 0.5, 0.8])
    candidate_bounds = np.repeat(np.unique(F[:, k]), 2)  # every value of label k, twice
    values, rights = label_trials(F, truth, top, w, bounds, k, np.argsort(F[:, k]), candidate_bounds, fallback, 0.5)
    for value, bound in zip(values, candidate_bounds):
        trial = bounds.copy()
        trial[k] = bound
        P = F >= trial
        if fallback:
            P[np.flatnonzero(~P.any(axis=1)), top[~P.any(axis=1)]] = True
        assert value == _numpy(truth, P, w, 0.5)
    assert np.ptp(values) > 0.05


def test_equal_predictions_score_bit_for_bit():
    """Thresholds between the same two data values predict the same labels: the same score to the last bit from
    every entry point — the threshold rules', a label's trials', and the predictions' (the scorer's)."""
    F, truth, w = _data(seed=4)
    top, metric = argmax_index(F), scorer(0.5)
    thresholds = np.array([0.21, 0.22, 0.23, 0.24])  # no value of F in between (one decimal)
    by_threshold = threshold_scores(F, truth, top, w, at_least_bound(thresholds)[:, None], True, 0.5)
    by_label, _ = label_trials(F, truth, top, w, at_least_bound(np.full(5, 0.21)), 1, np.argsort(F[:, 1]),
                               at_least_bound(thresholds), True, 0.5)
    by_prediction = metric(truth, DecisionRule(0.21).predict(F), w)
    assert len({*by_threshold, *by_label, by_prediction}) == 1


@pytest.mark.parametrize("jaccard_weight", WEIGHTS)
def test_prediction_scores_of_a_batch_equal_sklearn(jaccard_weight):
    F, truth, w = _data(seed=6)
    rng = np.random.default_rng(6)
    batch = np.ascontiguousarray(rng.random((4, *F.shape)) < 0.4)
    batch[0], batch[1, :5] = False, False  # nothing predicted: rows with neither true nor predicted labels
    for weights in (np.ones(len(F)), w):
        ours = prediction_scores(truth, batch, weights, jaccard_weight)
        for value, P in zip(ours, batch):
            assert value == pytest.approx(_sklearn(truth, P, weights, jaccard_weight), abs=1e-12)
            assert value == _numpy(truth, P, weights, jaccard_weight)
        np.testing.assert_array_equal(scorer(jaccard_weight)(truth, batch, weights), ours)


@pytest.mark.parametrize("complement", [False, True])
def test_group_scores_are_the_scores_of_the_groups_rows(complement):
    """Each prediction matrix on each group's rows (or the rows outside it) scores what the rows alone score, bit for
    bit, and against scikit-learn; groups of one row and of rows without labels, weights, λ = 0, 0.3, 1."""
    F, truth, w = _data(seed=7)
    rng = np.random.default_rng(7)
    batch = np.ascontiguousarray(rng.random((3, *F.shape)) < 0.4)
    batch[0, :20] = False  # rows without true labels (the first 15) and without predicted ones
    groups = rng.integers(0, 4, size=len(F))
    groups[17] = 4  # a group of one row
    for jaccard_weight in (0.0, 0.3, 1.0):
        ours = group_scores(truth, batch, w, groups, 5, complement, jaccard_weight)
        assert ours.shape == (3, 5)
        for g in range(5):
            rows = (groups == g) != complement
            expected = prediction_scores(truth[rows], batch[:, rows], w[rows], jaccard_weight)
            np.testing.assert_array_equal(ours[:, g], expected)
            for value, P in zip(ours[:, g], batch):
                assert value == _numpy(truth[rows], P[rows], w[rows], jaccard_weight)
                assert value == pytest.approx(_sklearn(truth[rows], P[rows], w[rows], jaccard_weight), abs=1e-12)
        assert np.ptp(ours) > 0.01


def test_expected_best_sizes_ties_go_to_the_smaller_set():
    """Under Hamming loss a label is worth predicting when P(label) > 1/2: at exactly 1/2 every set size ties (the
    smallest, none, wins), just above it every label is in, just below none is. With the fallback the expectation is
    given a nonempty truth, which lifts every P(label) = 1/2 to 1/2 / (1 − 2⁻⁵) > 1/2: all five."""
    half = np.full((1, 5), 0.5)
    assert expected_best_sizes(half, 0.0, False)[0] == 0
    assert expected_best_sizes(half + 1e-6, 0.0, False)[0] == 5
    assert expected_best_sizes(half - 1e-6, 0.0, False)[0] == 0
    assert expected_best_sizes(np.array([[0.9, 0.6, 0.5, 0.4, 0.1]]), 0.0, False)[0] == 2  # sorted, decreasing
    assert expected_best_sizes(half, 0.0, True)[0] == 5
    assert expected_best_sizes(np.full((1, 5), 0.01), 0.0, True)[0] == 1  # never empty


def test_compiled_loops_load_at_the_first_rule_search_not_with_the_package():
    """Numba's start-up (~0.4 s) is paid by the first rule search, not by ``import ovn_cvx`` or a fit without a learned
    rule (a fresh interpreter: this process has loaded numba already)."""
    import subprocess
    import sys

    code = ("import sys, numpy as np; from ovn_cvx import OvNClassifier; "
            "X = np.random.default_rng(0).normal(size=(30, 3)); "
            "OvNClassifier().fit(X, np.arange(30) % 3); print('numba' in sys.modules); "
            "Y = (X[:, :2] > 0).astype(int); OvNClassifier().fit(X, Y); print('numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True"]


def test_row_weights_and_truth_of_another_size_are_refused_by_name():
    """The compiled loops do not check their indices: a weight vector or a truth matrix of another size is refused
    before them (a weight vector five short read past its end and scored 0.285 instead of raising)."""
    rng = np.random.default_rng(0)
    T, P = rng.random((50, 3)) < 0.5, rng.random((50, 3)) < 0.5
    score = scorer(0.5)
    assert score(T, P, np.ones(50)) == score(T, P, None)
    for size in (45, 51):
        with pytest.raises(ValueError, match=r"sample_weight must have shape \(50,\)"):
            score(T, P, np.ones(size))
    with pytest.raises(ValueError, match="must be the truth's"):
        score(T[:49], P, None)
    with pytest.raises(ValueError, match="Y must have the shape of F"):
        learn_rule(rng.normal(size=(50, 3)), T[:, :2].astype(int))
    # learn_rule checks its weights once, at its entry, with the same message
    for weights, match in ((np.ones(45), r"sample_weight must have shape \(50,\)"),
                           (np.r_[-1.0, np.ones(49)], "sample_weight must be non-negative"),
                           (np.r_[np.nan, np.ones(49)], "sample_weight"), (np.zeros(50), "at least one nonzero")):
        with pytest.raises(ValueError, match=match):
            learn_rule(rng.normal(size=(50, 3)), T.astype(int), sample_weight=weights)


def test_expected_best_sizes_at_many_labels_against_the_direct_expectation():
    """The factorised expectation (E[a/(m + b)] = E[a]·E[1/(m + b)], no (K+1)³ table) against the utility summed over
    every (a, b) of the two Poisson-binomial distributions (K = 40, where the table was 0.5 MB a call, and K = 8)."""
    rng = np.random.default_rng(5)
    for K, rows in ((40, 6), (8, 150)):
        _check_expected_best_sizes(-np.sort(-rng.random((rows, K)) ** 3, axis=1))


def _check_expected_best_sizes(P):
    """Every row's size is a largest expected utility (within 1e-9: the sums' round-off)."""
    K = P.shape[1]
    for jaccard_weight in (0.0, 0.3, 0.5, 0.7, 1.0):
        for fallback in (False, True):
            sizes = expected_best_sizes(P, jaccard_weight, fallback)
            for row, m_best in zip(P, sizes):
                values = []
                for m in range(K + 1):
                    inside, outside = np.array([1.0]), np.array([1.0])
                    for p in row[:m]:
                        inside = np.convolve(inside, [1 - p, p])
                    for p in row[m:]:
                        outside = np.convolve(outside, [1 - p, p])
                    a, b = np.arange(m + 1)[:, None], np.arange(K - m + 1)[None, :]
                    with np.errstate(invalid="ignore", divide="ignore"):
                        jac = np.where(m + b > 0, a / (m + b), 1.0)
                    utility = jaccard_weight * jac + (1 - jaccard_weight) * (1 - (m - a + b) / K)
                    if fallback:
                        utility = np.where((a == 0) & (b == 0), 0.0, utility)
                    values.append(inside @ utility @ outside)
                values = np.array(values)
                if fallback:
                    values[0] = -np.inf
                assert values[m_best] >= values.max() - 1e-9
