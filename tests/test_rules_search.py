"""The learned rule's search, made fast without changing its answer: the per-label threshold trials screened from
sorted cumulative row scores (against the full predictions, bit for bit where ties are decided), and the row counts
and weighted means (against numpy's). Platt's sigmoids of the expected-score rule: tests/test_platt.py."""
import numpy as np
import pytest

from ovn_cvx.labels import NEVER, DecisionRule
from ovn_cvx.rules import _candidates, _count, _mean, _Rows, _Search, learn_rule, scorer


@pytest.mark.parametrize("weighted", [False, True])
def test_count_and_mean_are_numpys_bit_for_bit(weighted, monkeypatch):
    rng = np.random.default_rng(0)
    B = rng.random((7, 50, 6)) < 0.4
    np.testing.assert_array_equal(_count(B), np.count_nonzero(B, axis=-1))
    monkeypatch.setattr("ovn_cvx.rules.COUNT_BY_PRODUCT", B.size - 1)  # just below: numpy's count
    np.testing.assert_array_equal(_count(B), np.count_nonzero(B, axis=-1))
    assert _count(B).dtype == np.float64
    w = rng.random(50) if weighted else None
    for values in (B[..., 0], rng.random((7, 50)), rng.integers(0, 4, size=50) / 3):
        np.testing.assert_array_equal(_mean(values, w), np.average(values, weights=w, axis=-1))


@pytest.mark.parametrize("scoring", ["jaccard", "hamming", 0.5])
def test_screened_search_finds_the_rules_of_the_full_predictions(scoring):
    """Every family's best rule and score equal those of the search that scores every candidate on its full
    predictions (the oracle), bit for bit — on values rounded to one decimal, where many candidates tie."""
    rng = np.random.default_rng(11)
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


def test_screened_trials_tie_bit_for_bit():
    """The trials within round-off of the best are scored exactly as their full predictions; the others within
    round-off of it — the screening decides nothing but which trials are re-scored."""
    rng = np.random.default_rng(5)
    F = np.round(rng.normal(size=(90, 4)), 1)
    truth = rng.random((90, 4)) < 0.4
    metric = scorer(0.5)
    fast = _Search(metric, 0.5, DecisionRule(), np.arange(4))
    full = _Search(lambda T, P, weights: metric(T, P, weights), 0.5, DecisionRule(), np.arange(4))
    rows = _Rows(F, truth, None)
    for fallback in (True, False):
        # each candidate and one 0.03 below it: the same predictions on values 0.1 apart, so every score ties
        candidates = np.sort(np.concatenate([_candidates(F[:, 1])[:-1], _candidates(F[:, 1])[:-1] - 0.03]))
        trials = np.repeat(np.array([[0.2, 0.5, -0.1, 0.4]]), candidates.size, axis=0)
        trials[:, 1] = candidates
        values, rights = fast._label_trials(rows, trials, 1, fallback)
        expected_values, expected_rights = full._label_trials(rows, trials, 1, fallback)
        near = expected_values >= expected_values.max() - 1e-9
        assert near.sum() >= 2  # ties among the best: the case the exact re-scoring is for
        np.testing.assert_array_equal(values[near], expected_values[near])
        np.testing.assert_array_equal(rights[near], expected_rights[near])
        np.testing.assert_allclose(values, expected_values, rtol=0, atol=1e-14)


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
