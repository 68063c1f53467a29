"""Beyond the paper (issue 14): the round-off-proof rule and degenerate labels, negative labels
(``negatives="rest"``), and decision rules learned from out-of-fold decision values (``decision_rule="cv"``)."""
import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score, hamming_loss, jaccard_score, log_loss
from sklearn.model_selection import KFold

import ovn_cvx
from ovn_cvx import Problem
from ovn_cvx.labels import (NEVER, TIE_TOL, UTILITIES, DecisionRule, at_least, expected_best_labels,
                            predict_labels)
from ovn_cvx.rules import SELECTIONS, learn_rule
from ovn_cvx.testing import assert_matches_reference
from _paper_settings import paper_model

REFERENCE = "CLARABEL"


# --- round-off-proof prediction ---------------------------------------------------------------------------
def test_tolerance_on_hand_made_values():
    assert at_least([1 - 0.5e-6, 1 - 2e-6], 1.0).tolist() == [True, False]
    assert at_least([100 - 50e-6, 100 - 200e-6], 100.0).tolist() == [True, False]  # relative beyond 1
    assert at_least([-3e-7], 0.0).tolist() == [True]  # absolute below 1
    # near-ties of the argmax go to the first label, also for the fallback and top-m
    F = np.array([[0.5, 0.5 + 1e-9, 0.1], [0.2, 0.3, 0.3 - 1e-9]])
    np.testing.assert_array_equal(predict_labels(F, multilabel=False), [[1, 0, 0], [0, 1, 0]])
    np.testing.assert_array_equal(predict_labels(F, multilabel=True), [[1, 0, 0], [0, 1, 0]])
    np.testing.assert_array_equal(predict_labels(F, multilabel=True, top=1), [[1, 1, 0], [0, 1, 1]])
    assert TIE_TOL == 1e-6


@pytest.fixture(scope="module")
def degenerate_data():
    """Label 0 holds for every training pattern: with hard biases its optimum is w_0 = 0, b_0 = 1 exactly (every
    positive pair at zero cost, Σ_k b_k = 0 forbids a larger b_0), so f_0 ≡ 1 = the threshold everywhere."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    Y = np.column_stack([np.ones(60), X[:, 0] > 0.3, X[:, 1] > 0.5]).astype(float)
    return X, Y, rng.normal(size=(200, 3))


def test_degenerate_label_predictions_agree_across_solvers(degenerate_data):
    X, Y, X_test = degenerate_data
    raw, predictions = [], []
    for solver in ("mm", "CLARABEL", "ECOS"):
        with pytest.warns(UserWarning, match=r"label\(s\) \[0\] are degenerate.*every pattern or to none"):
            est = paper_model("HwHb", solver=solver).fit(X, Y)
        np.testing.assert_array_equal(est.degenerate_labels_, [0])
        F = est.decision_function(X_test)
        np.testing.assert_allclose(F[:, 0], 1.0, atol=1e-6)  # on the threshold up to the solver's last digits
        raw.append((F[:, 0] >= 1).mean())
        predictions.append(est.predict(X_test))
    assert len(set(raw)) > 1, f"the exact rule should disagree across solvers here, got {raw}"
    for P in predictions[1:]:
        np.testing.assert_array_equal(P, predictions[0])
    assert predictions[0][:, 0].all()  # b_0 = 1 is on the threshold: label 0 for every pattern


@pytest.mark.parametrize("params", [{"negatives": "rest"}, {"decision_rule": "cv", "rule_cv": 3},
                                    {"negatives": "rest", "decision_rule": "cv", "rule_cv": 3}])
def test_learned_rule_and_negatives_predict_the_same_with_every_solver(degenerate_data, params):
    """Issue 14 target (c) for the settings beyond the paper: a rule learned from each solver's own out-of-fold values
    and the model with known negatives give the same predictions with MM, Clarabel and ECOS. Their thresholds do not
    sit on a degenerate label's value here (the tolerance itself is the test above): this guards the rule learning
    against the solvers' differences."""
    X, Y, X_test = degenerate_data
    fitted = []
    for solver in ("mm", "CLARABEL", "ECOS"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # the degenerate label 0, checked in the test above
            fitted.append(paper_model("HwHb", solver=solver, **params).fit(X, Y))
    # the solvers agree to their accuracy, not exactly (up to 4e-5 here)
    F = [est.decision_function(X_test) for est in fitted]
    assert 0 < max(np.abs(f - F[0]).max() for f in F[1:]) < 1e-4
    P = [est.predict(X_test) for est in fitted]
    for other in P[1:]:
        np.testing.assert_array_equal(other, P[0])
    assert 0 < P[0].sum() < P[0].size  # neither every label nor none: the comparison has something to agree on
    if "decision_rule" in params:
        assert len({est.rule_.kind for est in fitted}) == 1


def test_degenerate_label_reported_only_when_constant(multiclass_data):
    """On this data SwHb puts class 1 at w_1 = 0, b_1 = 1 (all its pairs at zero cost); HwHb does not."""
    X, Y = multiclass_data
    y = np.argmax(Y, axis=1)
    with pytest.warns(UserWarning, match=r"label\(s\) \[1\] are degenerate.*b = 1 for 1\b"):
        est = paper_model(solver=REFERENCE).fit(X, y)
    np.testing.assert_array_equal(est.degenerate_labels_, [1])
    np.testing.assert_allclose(est.decision_function(X)[:, 1], 1.0, atol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        est = paper_model("HwHb", solver=REFERENCE).fit(X, y)
    assert est.degenerate_labels_.size == 0


# --- negative labels ----------------------------------------------------------------------------------------
@pytest.mark.degenerate_labels
def test_negatives_rest_multilabel_is_the_reference_problem(multilabel_data, solved_problems):
    """Every 0 of a fitted column becomes −1 (unlabeled rows too), a user's −1 stays; the never-positive column is
    left out as before."""
    X, Y, w = multilabel_data
    Y = np.insert(Y, 2, 0.0, axis=1)  # a never-positive column
    est = paper_model("SwHb", alpha=0.3, negatives="rest").fit(X, Y, sample_weight=w)
    expected = np.delete(Y, 2, axis=1)
    expected[expected == 0] = -1.0
    np.testing.assert_array_equal(solved_problems[-1].Y, expected)
    ref = ovn_cvx.solve(Problem(X, expected, "SwHb", alpha=0.3, sample_weight=w), method="cvxpy", solver=REFERENCE)
    assert_matches_reference(est.result_, ref.problem, reference=ref, rtol=1e-7, ftol=1e-4)
    np.testing.assert_allclose(np.delete(est.decision_function(X), 2, axis=1), ref.decision_function(X), atol=1e-4)
    assert not est.predict(X)[:, 2].any()


def test_negatives_rest_multiclass_is_the_reference_problem(multiclass_data):
    X, Y = multiclass_data
    y = np.array(["a", "b", "c"])[np.argmax(Y, axis=1)]
    est = paper_model("SwSb", alpha=-0.2, negatives="rest", kernel="rbf", gamma=0.5, tol=1e-9).fit(X, y)
    ref = ovn_cvx.solve(Problem(X, 2 * Y - 1, "SwSb", "rbf", alpha=-0.2, gamma=0.5), method="cvxpy",
                        solver=REFERENCE)
    assert_matches_reference(est.result_, ref.problem, reference=ref, rtol=1e-7, ftol=1e-4)
    np.testing.assert_array_equal(est.predict(X), np.array(["a", "b", "c"])[np.argmax(ref.decision_function(X), 1)])


@pytest.mark.degenerate_labels
def test_negatives_rest_class_weight_weighs_the_samples(multiclass_data):
    """1-D y: a class weight multiplies its samples' weight, negative pairs included (scikit-learn's meaning)."""
    X, Y = multiclass_data
    y = np.argmax(Y, axis=1)
    est = paper_model(negatives="rest", class_weight={0: 3.0, 2: 0.5}).fit(X, y)
    ref = ovn_cvx.solve(Problem(X, 2 * Y - 1, sample_weight=np.array([3.0, 1.0, 0.5])[y]), method="cvxpy",
                        solver=REFERENCE)
    assert_matches_reference(est.result_, ref.problem, reference=ref, rtol=1e-7, ftol=1e-4)


# --- learned decision rules: the learner on constructed decision values --------------------------------------
def test_learner_finds_per_label_thresholds():
    """Label k holds exactly when f_k ≥ t_k with t = (−0.5, 0.2, 1.5): no single threshold does it, and rows without
    labels need the rule without fallback; the best rule is known and scores 1."""
    rng = np.random.default_rng(0)
    F = rng.uniform(-2, 3, size=(30, 3))
    t = np.array([-0.5, 0.2, 1.5])
    Y = (F >= t).astype(int)
    Y[np.argsort(F[:, 0])[:3]] = 0  # rows with no label (all below their thresholds)
    F[np.argsort(F[:, 0])[:3]] = t - 0.1
    rule, scores = learn_rule(F, Y, "jaccard")[:2]
    assert rule.kind == "per-label thresholds" and not rule.fallback
    np.testing.assert_array_equal(rule.predict(F), Y)
    assert scores["per-label thresholds"] == 1.0
    assert max(scores["global threshold"], scores["top-m"], scores["paper"]) < 1.0
    assert scores["paper"] == jaccard_score(Y, predict_labels(F, multilabel=True), average="samples")


def test_learner_finds_top_m_and_prefers_the_paper_on_ties():
    rng = np.random.default_rng(1)
    F = rng.normal(size=(40, 5)) + rng.normal(scale=5, size=(40, 1))  # row shifts: no threshold separates
    Y = np.zeros(F.shape, dtype=int)
    np.put_along_axis(Y, np.argsort(-F, axis=1)[:, :2], 1, axis=1)  # the two largest of every row
    for scoring in ("jaccard", "f1_micro", "f1_macro", "hamming"):
        rule, scores = learn_rule(F, Y, scoring)[:2]
        assert rule == DecisionRule(top=2) and scores["top-m"] == 1.0
    # values where the paper's rule is already perfect: it wins the tie against every other perfect rule
    Y = (F >= 1).astype(int)
    Y[~Y.any(axis=1), np.argmax(F[~Y.any(axis=1)], axis=1)] = 1
    rule, scores = learn_rule(F, Y, "hamming")[:2]
    assert rule == DecisionRule() and scores["paper"] == 1.0


def test_learner_scores_are_sklearn_metrics():
    rng = np.random.default_rng(2)
    F = rng.normal(size=(50, 4))
    Y = (F + rng.normal(size=F.shape) > 0.5).astype(int)
    metrics = {"jaccard": lambda P: jaccard_score(Y, P, average="samples", zero_division=1.0),
               "f1_micro": lambda P: f1_score(Y, P, average="micro"),
               "f1_macro": lambda P: f1_score(Y, P, average="macro", zero_division=1.0),
               "hamming": lambda P: 1 - hamming_loss(Y, P)}
    for scoring, metric in metrics.items():
        rule, scores = learn_rule(F, Y, scoring)[:2]
        assert max(scores.values()) == pytest.approx(metric(rule.predict(F).astype(int)), abs=1e-12)
        assert scores["paper"] == pytest.approx(metric(predict_labels(F, multilabel=True).astype(int)), abs=1e-12)
    with pytest.raises(ValueError, match="rule_scoring"):
        learn_rule(F, Y, "accuracy")


# --- learned decision rules in the estimator ---------------------------------------------------------------
@pytest.fixture
def count_fits(monkeypatch):
    calls = []

    def counting(problem, method="cvxpy", **options):
        calls.append(options)
        return ovn_cvx.solve(problem, method=method, **options)

    monkeypatch.setattr("ovn_cvx.estimator.solve", counting)
    return calls


@pytest.mark.degenerate_labels
def test_cv_rule_fits_once_per_fold_cold(multilabel_data, count_fits):
    X, Y, _ = multilabel_data
    Y = np.clip(Y, 0, None)
    est = paper_model(decision_rule="cv", rule_cv=KFold(4, shuffle=True, random_state=0)).fit(X, Y)
    assert len(count_fits) == 1 + 4  # the full fit and one per fold, whatever the number of candidate rules
    assert all(options["warm_start"] is None for options in count_fits)
    assert [options["gap_tol"] for options in count_fits] == [1e-6] * 5  # the folds to tol, as the full fit
    assert isinstance(est.rule_, DecisionRule) and set(est.rule_scores_) >= {"paper", "per-label thresholds"}
    np.testing.assert_array_equal(est.predict(X), est.rule_.predict(est.decision_function(X)))
    count_fits.clear()
    y = np.argmax(Y, axis=1)  # 1-D y: the argmax, nothing to learn, no fold fits
    est = paper_model(decision_rule="cv").fit(X, y)
    assert len(count_fits) == 1 and not hasattr(est, "rule_")


@pytest.mark.degenerate_labels
def test_cv_rule_scores_out_of_fold_values(multilabel_data):
    """The oracle: the same folds fitted from scratch by hand, the paper's rule scored by sklearn's Jaccard."""
    X, Y, _ = multilabel_data
    Y = np.clip(Y, 0, None)
    folds = KFold(3, shuffle=True, random_state=1)
    est = paper_model(solver=REFERENCE, decision_rule="cv", rule_cv=folds).fit(X, Y)
    F, fold_of = np.empty(Y.shape), np.empty(len(X), dtype=int)
    for fold, (train, test) in enumerate(folds.split(X)):
        F[test] = paper_model(solver=REFERENCE).fit(X[train], Y[train]).decision_function(X[test])
        fold_of[test] = fold
    paper = predict_labels(F, multilabel=True).astype(int)
    assert est.rule_scores_["paper"] == pytest.approx(jaccard_score(Y, paper, average="samples", zero_division=1.0))
    # every selection gets the fold of every row from the same folds (the default: the held-out choice)
    for selection in SELECTIONS:
        fitted = est if selection == "cv" else paper_model(solver=REFERENCE, decision_rule="cv", rule_cv=folds,
                                                              rule_selection=selection).fit(X, Y)
        rule, scores = learn_rule(F, Y, "jaccard", labels=est.fitted_labels_, selection=selection, folds=fold_of,
                                  guard=True)[:2]
        assert fitted.rule_.kind == rule.kind
        np.testing.assert_array_equal(fitted.rule_.predict(F), rule.predict(F))
        assert fitted.rule_scores_ == pytest.approx(scores, abs=1e-9)


@pytest.mark.parametrize("v1, t1, gap, error, kind", [
    # per-label thresholds beat the best global threshold by 0.125, more than its error 0.0625: kept
    ([0.9, 0.7, 0.2, 0.95, 0.9, 0.6, 0.3, 0.1], [1, 0, 0, 1, 1, 0, 0, 1], 0.125, 0.0625, "per-label thresholds"),
    # by 0.0625, less than its error 0.125: the simpler global threshold
    ([0.9, 0.7, 0.2, 0.95, 0.9, 0.6, 0.1, 0.05], [1, 0, 0, 1, 1, 0, 1, 1], 0.0625, 0.125, "global threshold"),
])
def test_one_standard_error_rule_on_hand_made_values(v1, t1, gap, error, kind):
    """Label 0 is in every row at f = 0.5, so one global threshold must stay <= 0.5 to keep it, while label 1 is
    best cut at 0.9: only per-label thresholds do both. Two folds of four rows; the error of the best rule is
    std(ddof=1)/sqrt(2) of its per-fold Jaccard, computed here with scikit-learn."""
    F = np.column_stack([np.full(8, 0.5), v1])
    Y = np.column_stack([np.ones(8), t1]).astype(int)
    folds = np.repeat([0, 1], 4)
    best, scores = learn_rule(F, Y)[:2]
    assert best.kind == "per-label thresholds"
    assert scores["per-label thresholds"] - scores["global threshold"] == pytest.approx(gap)
    P = best.predict(F)
    per_fold = [jaccard_score(Y[folds == f], P[folds == f], average="samples", zero_division=1.0) for f in (0, 1)]
    assert np.std(per_fold, ddof=1) / np.sqrt(2) == pytest.approx(error)
    rule, same_scores = learn_rule(F, Y, selection="one_se", folds=folds)[:2]
    assert rule.kind == kind and same_scores == scores
    if kind == "global threshold":
        assert learn_rule(F, Y)[1]["global threshold"] == pytest.approx(
            jaccard_score(Y, rule.predict(F), average="samples", zero_division=1.0))
    with pytest.raises(ValueError, match="needs folds"):
        learn_rule(F, Y, selection="one_se")
    with pytest.raises(ValueError, match="rule_selection"):
        learn_rule(F, Y, selection="simplest", folds=folds)


@pytest.mark.parametrize("params, match", [
    ({"negatives": "all"}, "negatives"), ({"decision_rule": "best"}, "decision_rule"),
    ({"rule_scoring": "accuracy"}, "rule_scoring"), ({"rule_cv": 1}, "rule_cv"), ({"rule_cv": "3"}, "rule_cv"),
    ({"rule_selection": "simplest"}, "rule_selection"),
])
def test_bad_rule_parameters_name_the_argument(multilabel_data, params, match):
    X, Y, _ = multilabel_data
    with pytest.raises(ValueError, match=match):
        paper_model(**params).fit(X, np.clip(Y, 0, None))


def test_scorers_equal_sklearn_with_weights_and_empty_rows():
    from ovn_cvx.rules import SCORERS
    rng = np.random.default_rng(3)
    T, P = rng.random((60, 5)) > 0.6, rng.random((60, 5)) > 0.5
    T[:5], P[:3] = False, False  # rows with no true labels, some also with none predicted
    T[:, 4], P[:, 4] = False, False  # a label never true nor predicted
    w = rng.uniform(0.2, 3.0, size=60)
    oracles = {"jaccard": lambda **kw: jaccard_score(T, P, average="samples", zero_division=1.0, **kw),
               "f1_micro": lambda **kw: f1_score(T, P, average="micro", zero_division=1.0, **kw),
               "f1_macro": lambda **kw: f1_score(T, P, average="macro", zero_division=1.0, **kw),
               "hamming": lambda **kw: 1 - hamming_loss(T, P, **kw)}
    for name, oracle in oracles.items():
        assert SCORERS[name](T, P, None) == pytest.approx(oracle(), abs=1e-12), name
        assert SCORERS[name](T, P, w) == pytest.approx(oracle(sample_weight=w), abs=1e-12), name
    # a batch of predictions (leading axis, as the search scores candidates): one score each, the same
    batch = np.stack([P, ~P, np.zeros_like(P), P[::-1]])
    for name, scorer in SCORERS.items():
        np.testing.assert_allclose(scorer(T, batch, w), [scorer(T, one, w) for one in batch], atol=1e-15)


def test_a_batch_of_rules_predicts_as_each_rule():
    """A threshold or gap with leading axes (the search's batches) gives each rule's own predictions."""
    rng = np.random.default_rng(6)
    F = rng.normal(size=(30, 4))
    F[:4] = -5.0  # rows where the fallback decides
    thresholds = rng.normal(size=(5, 4))
    for fallback in (True, False):
        batch = DecisionRule(thresholds[:, None, :], fallback=fallback).predict(F)
        for t, P in zip(thresholds, batch):
            np.testing.assert_array_equal(P, DecisionRule(t, fallback=fallback).predict(F))
    gaps = np.array([0.0, 0.5, 2.0])
    for g, P in zip(gaps, DecisionRule(gap=gaps[:, None, None]).predict(F)):
        np.testing.assert_array_equal(P, DecisionRule(gap=float(g)).predict(F))


# --- probabilities ------------------------------------------------------------------------------------------
def test_predict_proba_matches_the_bayes_posterior():
    """Two unit Gaussians at ±1, equal priors: P(class 1 | x) = 1 / (1 + e^{−2x}); the OvN decision value is linear in
    x, so Platt's sigmoid on out-of-fold values recovers the posterior."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, size=2000)
    X = (2.0 * y - 1.0 + rng.normal(size=2000))[:, None]
    est = paper_model("HwHb", probability=True).fit(X, y)
    grid = np.linspace(-2, 2, 41)[:, None]
    P = est.predict_proba(grid)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_allclose(P[:, 1], 1 / (1 + np.exp(-2 * grid[:, 0])), atol=0.06)
    # the sample's own logistic fit (the posterior estimate a linear score allows): closer still
    logistic = LogisticRegression(C=1e6).fit(X, y).predict_proba(grid)
    np.testing.assert_allclose(P, logistic, atol=0.02)
    assert not hasattr(paper_model(), "predict_proba")


@pytest.mark.degenerate_labels
@pytest.mark.parametrize("calibration", ["sigmoid", "isotonic"])
def test_predict_proba_ranges_and_sums(multiclass_data, multilabel_data, calibration):
    X, Y = multiclass_data
    est = paper_model(probability=True, calibration=calibration).fit(X, np.argmax(Y, axis=1))
    P = est.predict_proba(X)
    assert P.shape == (X.shape[0], 3) and ((P >= 0) & (P <= 1)).all()
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert log_loss(np.argmax(Y, axis=1), P) < 0.9 * np.log(3)  # better than the uniform guess
    X, Y, w = multilabel_data
    Y = np.insert(np.clip(Y, 0, None), 1, 0.0, axis=1)  # a never-positive label: probability 0
    est = paper_model(probability=True, calibration=calibration).fit(X, Y, sample_weight=w)
    P = est.predict_proba(X)
    assert P.shape == Y.shape and ((P >= 0) & (P <= 1)).all()
    np.testing.assert_array_equal(P[:, 1], 0.0)
    # calibrated on the training labels: the mean probability of a label is near its frequency
    np.testing.assert_allclose(np.average(P, axis=0, weights=w), np.average(Y, axis=0, weights=w), atol=0.1)


@pytest.mark.degenerate_labels
def test_probability_and_cv_rule_share_the_fold_fits(multilabel_data, count_fits):
    X, Y, _ = multilabel_data
    paper_model(decision_rule="cv", probability=True, rule_cv=3).fit(X, np.clip(Y, 0, None))
    assert len(count_fits) == 1 + 3


def test_cv_rule_with_a_precomputed_kernel_equals_the_named_kernel(multilabel_data):
    """The internal folds slice a precomputed kernel matrix by rows and columns (``_safe_split``)."""
    from sklearn.metrics.pairwise import rbf_kernel
    X, Y, _ = multilabel_data
    Y = np.clip(Y, 0, None)
    params = dict(solver=REFERENCE, decision_rule="cv", rule_cv=3, probability=True)
    named = paper_model(kernel="rbf", gamma=0.3, **params).fit(X, Y)
    pre = paper_model(kernel="precomputed", **params).fit(rbf_kernel(X, gamma=0.3), Y)
    assert pre.rule_scores_ == pytest.approx(named.rule_scores_, abs=1e-12)
    np.testing.assert_allclose(pre.predict_proba(rbf_kernel(X, gamma=0.3)), named.predict_proba(X), atol=1e-6)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_negatives_rest_with_free_biases_is_one_vs_rest(kernel):
    """With α = 0 and uncoupled biases (SwSb, bias_penalty = 0) the classes separate, and each is scikit-learn's
    binary hinge SVM of the class against the rest with C = β: the same decision values as
    ``OneVsRestClassifier(SVC(C=β))``, hence (docs/theory.md §5) the benchmark's "OvN rest, free b"."""
    from sklearn.datasets import load_iris
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    beta = 2.0
    ovn = paper_model("SwSb", kernel=kernel, negatives="rest", bias_penalty=0.0, beta=beta, gamma=0.5).fit(X, y)
    ovr = OneVsRestClassifier(SVC(kernel=kernel, C=beta, gamma=0.5, tol=1e-10)).fit(X, y)
    np.testing.assert_allclose(ovn.decision_function(X), ovr.decision_function(X), atol=1e-5)
    assert np.array_equal(ovn.predict(X), ovr.predict(X))


def test_learner_finds_a_score_gap():
    """Label k holds exactly when f_k is within 0.8 of the row's largest value: rows shifted as a whole and a varying
    number of labels per row, so no threshold, per-label threshold or top-m gets it; the score gap scores 1."""
    rng = np.random.default_rng(2)
    F = rng.choice([0.0, 0.5, 1.2, 1.6, 2.4], size=(60, 5))
    F[:, 0] = 2.4  # the row's largest value: gaps 0, 0.8, 1.2, 1.9, 2.4
    F = F[:, rng.permutation(5)] + rng.normal(scale=5, size=(60, 1))
    Y = (F.max(axis=1, keepdims=True) - F <= 0.8 + 1e-9).astype(int)
    assert len(np.unique(Y.sum(axis=1))) > 1
    rule, scores = learn_rule(F, Y, "jaccard")[:2]
    assert rule.kind == "score-gap" and 0.8 - 1e-9 <= rule.gap < 1.2
    np.testing.assert_array_equal(rule.predict(F), Y)
    assert scores["score-gap"] == 1.0
    assert max(v for k, v in scores.items() if k != "score-gap") < 1.0
    np.testing.assert_array_equal(predict_labels(F, multilabel=True, gap=0.8), Y == 1)


def test_a_rule_has_one_kind():
    calibration = (np.ones(2), np.zeros(2))
    for kinds in ({"top": 2, "gap": 0.5}, {"top": 2, "calibration": calibration},
                  {"gap": 0.5, "calibration": calibration}):
        with pytest.raises(ValueError, match="at most one of top, gap and calibration"):
            DecisionRule(**kinds)
    with pytest.raises(ValueError, match="utility"):
        DecisionRule(calibration=calibration, utility="f1_micro")


@pytest.mark.parametrize("params, match", [
    ({"top": 0}, "top must be a positive integer"), ({"top": -1}, "top must be a positive integer"),
    ({"top": 1.5}, "top must be a positive integer"), ({"top": True}, "top must be a positive integer"),
    ({"gap": -1e-9}, "gap must be a finite number >= 0"), ({"gap": np.nan}, "gap must be a finite number >= 0"),
    ({"gap": np.inf}, "gap must be a finite number >= 0"), ({"threshold": np.nan}, "threshold must be finite"),
    ({"threshold": np.array([0.5, np.inf])}, "threshold must be finite"), ({"threshold": "a"}, "threshold: could not")])
def test_a_rule_that_means_nothing_names_its_parameter(params, match):
    """top=0 predicted every label and top=-1 the labels above the smallest; a NaN threshold or gap left every row to
    the fallback: each is refused by name."""
    with pytest.raises(ValueError, match=match):
        DecisionRule(**params)


def test_a_rule_fits_the_labels_it_predicts():
    """Per-label thresholds: one per label of F, by name (was NumPy's broadcast error); top m beyond the labels of F
    gives every label (as a row with fewer known labels gets them all), on the boundary m = K and just past it;
    gap 0 is the argmax (ties within TIE_TOL)."""
    F = np.array([[3.0, 1.0, 2.0], [0.5, 0.2, 0.5 - 1e-7]])
    for thresholds in (np.zeros(2), np.zeros(4)):
        with pytest.raises(ValueError, match=f"threshold has {thresholds.size} entries; F has 3 labels"):
            DecisionRule(thresholds).predict(F)
    np.testing.assert_array_equal(DecisionRule(np.array([2.5, 0.0, 2.5])).predict(F), [[1, 1, 0], [0, 1, 0]])
    for m in (3, 4, 10):
        assert DecisionRule(top=m).predict(F).all()
    np.testing.assert_array_equal(DecisionRule(top=2).predict(F), [[1, 0, 1], [1, 0, 1]])
    np.testing.assert_array_equal(DecisionRule(gap=0.0).predict(F), [[1, 0, 0], [1, 0, 1]])


def test_expected_score_rule_never_gives_a_label_without_a_value():
    """P(label) = 1 / (1 + exp(A f + B)) by hand; a value NEVER (a label left out of a fold's fit) and B = inf (a
    label not searched) give P = 0 whatever the sign of A, without warnings."""
    rule = DecisionRule(calibration=(np.array([2.0, 3.0, -1.0]), np.array([0.0, -5.0, np.inf])), fallback=False)
    F = np.array([[0.0, NEVER, 1.0], [-2.0, 1.0, 50.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        P = rule.probabilities(F)
        labels = rule.predict(F)
    np.testing.assert_allclose(P, [[0.5, 0.0, 0.0], [1 / (1 + np.exp(-4.0)), 1 / (1 + np.exp(-2.0)), 0.0]])
    np.testing.assert_array_equal(labels, expected_best_labels(P, "jaccard", fallback=False))
    assert not labels[:, 2].any() and not labels[0, 1]


# --- the expected-score rule and the held-out choice of the family ------------------------------------------
def _expected_by_enumeration(p, subset, utility, fallback):
    """E u over all 2^K independent truths (given a nonempty one with ``fallback``), by brute force."""
    K = p.size
    truths = np.array(np.meshgrid(*[[False, True]] * K, indexing="ij")).reshape(K, -1).T
    weight = np.prod(np.where(truths, p, 1 - p), axis=1) * (truths.any(axis=1) if fallback else 1)
    a, b = (truths & subset).sum(axis=1), (truths & ~subset).sum(axis=1)
    m = subset.sum()
    u = {"jaccard": np.where(m + b > 0, a / np.maximum(m + b, 1), 1.0), "hamming": 1 - ((m - a) + b) / K}[utility]
    return weight @ u / weight.sum()


@pytest.mark.parametrize("utility", sorted(UTILITIES))
@pytest.mark.parametrize("fallback", [True, False])
def test_expected_best_labels_is_the_best_of_all_label_sets(utility, fallback):
    """The oracle: every one of the 2^K label sets (not only the top m) scored by enumerating all 2^K truths."""
    rng = np.random.default_rng(5)
    for _ in range(40):
        K = int(rng.integers(1, 7))
        p = rng.random(K) ** rng.uniform(0.3, 3.0)
        chosen = expected_best_labels(p[None, :], utility, fallback)[0]
        subsets = np.array(np.meshgrid(*[[False, True]] * K, indexing="ij")).reshape(K, -1).T
        values = [_expected_by_enumeration(p, s, utility, fallback) for s in subsets if s.any() or not fallback]
        assert not fallback or chosen.any()
        assert _expected_by_enumeration(p, chosen, utility, fallback) == pytest.approx(max(values), abs=1e-12)


def test_learner_finds_the_expected_score_rule_on_independent_labels():
    """Labels independent given p, decision values f = logit(p) (Platt recovers A = −1, B = 0): the rule of largest
    expected Jaccard is the Bayes rule, the best any rule can do; learned and chosen on held-out rows, it scores on
    fresh rows as the oracle that knows p."""
    rng = np.random.default_rng(3)

    def draw(n):
        p = rng.beta(0.6, 0.9, size=(n, 5))
        return np.log(p / (1 - p)), (rng.random(p.shape) < p).astype(int), p

    F, Y, _ = draw(3000)
    folds = np.arange(3000) % 5
    rule, scores = learn_rule(F, Y, "jaccard", selection="cv", folds=folds)[:2]
    assert rule.kind == "expected score" and scores["expected score"] == max(scores.values())
    A, B = rule.calibration
    np.testing.assert_allclose(A, -1.0, atol=0.1)
    np.testing.assert_allclose(B, 0.0, atol=0.1)
    F_new, Y_new, p_new = draw(20000)
    learned = jaccard_score(Y_new, rule.predict(F_new), average="samples", zero_division=1.0)
    oracle = jaccard_score(Y_new, expected_best_labels(p_new, "jaccard", rule.fallback), average="samples",
                           zero_division=1.0)
    assert learned == pytest.approx(oracle, abs=0.005)


def test_held_out_choice_scores_each_fold_with_rules_searched_on_the_others():
    """The oracle for one family by hand: the top m chosen on the other folds' rows by scikit-learn's Jaccard,
    applied to the fold's rows, the pooled predictions scored; and the returned rule is the chosen family's best
    on all rows. With noisier labels the tuned families fit the rows they are scored on: chosen on those rows,
    per-label thresholds win; on held-out rows, the untuned paper rule."""
    rng = np.random.default_rng(4)
    F = rng.normal(size=(90, 4)) + rng.normal(scale=3, size=(90, 1))
    noise = rng.normal(size=F.shape)
    folds = np.arange(90) % 3
    Y = (F + 0.5 * noise > np.sort(F, axis=1)[:, [-2]]).astype(int)
    rule, held_out = learn_rule(F, Y, "jaccard", selection="cv", folds=folds)[:2]
    pooled = np.zeros(Y.shape, dtype=int)
    for fold in range(3):
        train = folds != fold
        top = [jaccard_score(Y[train], predict_labels(F[train], multilabel=True, top=m), average="samples",
                             zero_division=1.0) for m in range(1, 5)]
        pooled[~train] = predict_labels(F[~train], multilabel=True, top=1 + int(np.argmax(top)))
    assert held_out["top-m"] == pytest.approx(jaccard_score(Y, pooled, average="samples", zero_division=1.0))
    assert rule.kind == max(held_out, key=held_out.get) == "score-gap"
    _, in_sample = learn_rule(F, Y, "jaccard")[:2]
    assert jaccard_score(Y, rule.predict(F), average="samples", zero_division=1.0) == pytest.approx(
        in_sample["score-gap"])
    Y = (F + 1.5 * noise > np.sort(F, axis=1)[:, [-2]]).astype(int)
    assert learn_rule(F, Y, "jaccard")[0].kind == "per-label thresholds"
    assert learn_rule(F, Y, "jaccard", selection="cv", folds=folds)[0] == DecisionRule()


def test_a_degenerate_label_is_reported_once_not_per_internal_fold():
    """The learned rule's fold fits keep quiet about degenerate labels: the user sees the full fit's warning once."""
    from ovn_cvx import OvNClassifier
    from ovn_cvx.exceptions import DegenerateLabelWarning
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    Y = np.zeros((60, 3), dtype=int)
    Y[:, 0] = X[:, 0] > 0
    Y[:, 1] = X[:, 1] > 0
    Y[:2, 2] = 1  # two members: w ≈ 0 at a small beta
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        OvNClassifier(beta=1e-3, decision_rule="cv").fit(X, Y)
    degenerate = [w for w in caught if issubclass(w.category, DegenerateLabelWarning)]
    assert len(degenerate) == 1
