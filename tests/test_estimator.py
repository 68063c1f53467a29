"""OvNClassifier: scikit-learn's estimator checks, and the estimator against two oracles — the CVXPY
reference (``ovn_cvx.solve`` on a ``Problem`` built here from the raw data) and scikit-learn's SVC."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.estimator_checks import parametrize_with_checks

import ovn_cvx
from ovn_cvx import OvNClassifier, Problem
from ovn_cvx.datasets import make_data, make_linear
from ovn_cvx.labels import NEVER
from ovn_cvx.result import SolveResult
from ovn_cvx.testing import assert_matches_reference
from _paper_settings import paper_model

REFERENCE = "CLARABEL"


def _expected_failed_checks(estimator):
    if estimator.probability:
        folds = ("internal folds (probability, decision_rule='cv') put a repeated row and its integer weight in "
                 "different places, so weights are not repetitions (as for scikit-learn's CalibratedClassifierCV)")
        return {
            "check_classifiers_train":
                "the argmax of predict_proba (calibrated out-of-fold values) need not be predict's argmax of the "
                "decision values, as for SVC(probability=True)",
            "check_sample_weight_equivalence_on_dense_data": folds,
            "check_sample_weight_equivalence_on_sparse_data": folds,
        }
    if estimator.kernel_approximation == "nystroem":
        sampled = ("Nyström builds its map from n_components rows drawn from the training set; a repeated row is "
                   "drawn (or not) differently from one row of integer weight, so weights are not repetitions")
        return {"check_sample_weight_equivalence_on_dense_data": sampled,
                "check_sample_weight_equivalence_on_sparse_data": sampled}
    if estimator.kernel == "precomputed":
        return {
            "check_positive_only_tag_during_fit":
                "the check passes a matrix with negative entries as the precomputed kernel; it is not positive "
                "semidefinite, and a non-PSD kernel matrix is rejected with a ValueError (docs/theory.md §4.2)",
            "check_estimators_dtypes":
                "the check passes X Xᵀ computed in float32 as the kernel; its round-off gives eigenvalues of "
                "-1.4e-8 × the largest, beyond the PSD tolerance 1e-8 of docs/theory.md §4.2, so it is rejected",
        }
    return {}


# MM is the default solver; a small max_iter keeps the run fast (the certified polish usually finishes first)
@pytest.mark.degenerate_labels
@parametrize_with_checks([OvNClassifier(max_iter=300), paper_model(max_iter=300),
                          paper_model(kernel="precomputed", solver=REFERENCE),
                          paper_model(negatives="rest", decision_rule="cv", probability=True, rule_cv=2, max_iter=300),
                          paper_model(kernel="rbf", kernel_approximation="nystroem", n_components=20, random_state=0,
                                      max_iter=300)],
                         expected_failed_checks=_expected_failed_checks)
def test_sklearn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


@pytest.mark.slow
@parametrize_with_checks([paper_model("HwSb", kernel="rbf", gamma=0.5, solver=REFERENCE)],
                         expected_failed_checks=_expected_failed_checks)
def test_sklearn_estimator_checks_rbf(estimator, check):
    # scikit-learn's small check data: the reference's default answer is not always proven ("optimal_inaccurate")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


def _reference(X, Y, variant="SwHb", kernel="linear", sample_weight=None, **params):
    problem = Problem(X, Y, variant, kernel, sample_weight=sample_weight, **params)
    result = ovn_cvx.solve(problem, method="cvxpy", solver=REFERENCE)
    assert result.success, result.status
    return result


@pytest.mark.degenerate_labels
@pytest.mark.parametrize("variant, alpha", [("SwSb", 0.3), ("SwHb", -0.2), ("HwSb", 0.0), ("HwHb", 0.0)])
@pytest.mark.parametrize("solver", ["mm", REFERENCE])
def test_multiclass_decision_function_equals_reference(multiclass_data, variant, alpha, solver):
    X, Y = multiclass_data
    labels = np.array(["cat", "dog", "emu"])[np.argmax(Y, axis=1)]
    est = paper_model(variant, alpha=alpha, beta=2.0, bias_penalty=0.5, solver=solver).fit(X, labels)
    ref = _reference(X, Y, variant, alpha=alpha, beta=2.0, bias_penalty=0.5)
    assert_matches_reference(est.result_, ref.problem, reference=ref, rtol=1e-7, ftol=1e-4)
    X_new = np.random.default_rng(5).normal(size=(20, X.shape[1]))
    np.testing.assert_allclose(est.decision_function(X_new), ref.decision_function(X_new), atol=1e-4)
    assert list(est.classes_) == ["cat", "dog", "emu"]
    np.testing.assert_array_equal(est.predict(X_new), est.classes_[np.argmax(ref.decision_function(X_new), axis=1)])
    # linear: decision_function = X coef_ᵀ + intercept_ with row k = (w_k, b_k)
    np.testing.assert_allclose(est.coef_, est.result_.coef.T)
    np.testing.assert_allclose(X_new @ est.coef_.T + est.intercept_, est.decision_function(X_new), atol=1e-12)


@pytest.mark.parametrize("variant", ["SwHb", "HwSb"])
def test_multilabel_kernel_equals_reference(multilabel_data, variant):
    """Multilabel with an empty row, a known negative (−1) and sample weights; RBF kernel."""
    X, Y, w = multilabel_data
    # tol: the proven accuracy the comparison at rtol=1e-7 needs (the default 1e-6 allows more)
    est = paper_model(variant, kernel="rbf", gamma=0.3, beta=1.5, tol=1e-9).fit(X, Y, sample_weight=w)
    ref = _reference(X, Y, variant, "rbf", sample_weight=w, gamma=0.3, beta=1.5)
    assert_matches_reference(est.result_, ref.problem, reference=ref, rtol=1e-7, ftol=1e-4)
    X_new = np.random.default_rng(6).normal(size=(15, X.shape[1]))
    F = ref.decision_function(X_new)
    np.testing.assert_allclose(est.decision_function(X_new), F, atol=1e-4)
    # docs/theory.md §5: {k : f_k ≥ 1}, else the argmax (decide on the reference's values away from the threshold)
    expected = (F >= 1).astype(int)
    empty = ~expected.any(axis=1)
    expected[empty, np.argmax(F[empty], axis=1)] = 1
    clear = np.abs(F - 1).min(axis=1) > 1e-3
    np.testing.assert_array_equal(est.predict(X_new)[clear], expected[clear])
    assert not hasattr(est, "coef_")


def test_binary_hwhb_equals_svc():
    """docs/theory.md §7: K = 2 HwHb is SVC(C=β/2); decision_function = (f_2 − f_1)/2 = SVC's, coef_ and intercept_
    too."""
    X, y, _, _ = make_linear(80, n_features=3, flip=0.15, random_state=4)  # not separable
    beta = 0.8
    est = paper_model("HwHb", beta=beta).fit(X, y)
    svc = SVC(kernel="linear", C=beta / 2, tol=1e-10).fit(X, y)
    X_new = np.random.default_rng(0).normal(size=(30, 3))
    assert est.decision_function(X_new).shape == (30,)
    np.testing.assert_allclose(est.decision_function(X_new), svc.decision_function(X_new), atol=1e-5)
    np.testing.assert_allclose(est.coef_, svc.coef_, atol=1e-5)
    np.testing.assert_allclose(est.intercept_, svc.intercept_, atol=1e-4)
    np.testing.assert_array_equal(est.predict(X_new), svc.predict(X_new))
    # F_OvN = 2 F_SVC, with F_SVC = ½‖w‖² + C Σ hinge
    w, b = svc.coef_[0], svc.intercept_[0]
    f_svc = 0.5 * w @ w + beta / 2 * np.maximum(0, 1 - (2 * y - 1) * (X @ w + b)).sum()
    assert est.result_.objective == pytest.approx(2 * f_svc, rel=1e-6)
    # support vectors: SVC's, per class (same samples, same layout class by class)
    np.testing.assert_array_equal(est.n_support_, svc.n_support_)
    np.testing.assert_array_equal(est.support_, svc.support_)


@pytest.mark.parametrize("negatives, beta_scale", [("rest", "kernel"), ("rest", "none"), ("none", "kernel")])
def test_binary_hwhb_matching_svc_c_under_each_scale(negatives, beta_scale):
    """The SVC that K = 2 HwHb equals away from the paper's settings: known negatives give each sample both pairs
    (the same hinge twice, f_1 = −f_2), doubling C; the relative scale divides β by κ₀ (``kernel_scale_``). Without
    ``negative_balance`` (p = 0) every sample weighs alike."""
    X, y, _, _ = make_linear(80, n_features=3, flip=0.15, random_state=4)
    beta = 0.8
    est = OvNClassifier("HwHb", beta=beta, negatives=negatives, beta_scale=beta_scale, negative_balance=0.0).fit(X, y)
    C = (beta if negatives == "rest" else beta / 2) / (est.kernel_scale_ if beta_scale == "kernel" else 1.0)
    svc = SVC(kernel="linear", C=C, tol=1e-10).fit(X, y)
    X_new = np.random.default_rng(0).normal(size=(30, 3))
    np.testing.assert_allclose(est.decision_function(X_new), svc.decision_function(X_new), atol=1e-5)


@pytest.mark.parametrize("balance", [0.5, 1.0])
def test_binary_balanced_negatives_are_svc_class_weights(balance):
    """K = 2 HwHb with known negatives and ``negative_balance`` p, derived by hand: a sample of class 1 carries its
    positive pair (weight a_1) and class 2's negative pair (a_2 ρ_2) with the same hinge (f_2 = −f_1), so it is one
    SVC sample of weight a_1 + a_2 ρ_2, where ρ_k = (n_k/n_other)^p and a_k = N/(n_k + ρ_k n_other): SVC with C = β/2
    and those class weights."""
    X, y, _, _ = make_linear(80, n_features=3, flip=0.15, random_state=4)
    n1, n2 = np.bincount(y)
    assert n1 != n2  # unequal classes: the weights differ from 1
    beta, N = 0.8, n1 + n2
    rho1, rho2 = (n1 / n2) ** balance, (n2 / n1) ** balance
    a1, a2 = N / (n1 + rho1 * n2), N / (n2 + rho2 * n1)
    est = OvNClassifier("HwHb", beta=beta, beta_scale="none", negative_balance=balance).fit(X, y)
    svc = SVC(kernel="linear", C=beta / 2, class_weight={0: a1 + a2 * rho2, 1: a2 + a1 * rho1}, tol=1e-10).fit(X, y)
    X_new = np.random.default_rng(0).normal(size=(30, 3))
    np.testing.assert_allclose(est.decision_function(X_new), svc.decision_function(X_new), atol=1e-5)


def test_binary_rbf_hwhb_equals_svc():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(50, 2))
    y = np.where(np.hypot(*X.T) + 0.3 * rng.normal(size=50) > 1.1, "out", "in")
    est = paper_model("HwHb", kernel="rbf", gamma=0.7, beta=2.0).fit(X, y)
    svc = SVC(kernel="rbf", gamma=0.7, C=1.0, tol=1e-10).fit(X, y)
    X_new = rng.normal(size=(25, 2))
    np.testing.assert_allclose(est.decision_function(X_new), svc.decision_function(X_new), atol=1e-5)
    np.testing.assert_array_equal(est.predict(X_new), svc.predict(X_new))


@pytest.mark.degenerate_labels
def test_sparse_indicator_and_sparse_X_equal_dense(multilabel_data):
    X, Y, _ = multilabel_data
    Y01 = np.clip(Y, 0, None)
    dense = paper_model(solver=REFERENCE).fit(X, Y01)
    for Xs, Ys in [(X, sp.csr_matrix(Y01)), (sp.csr_matrix(X), Y01)]:
        est = paper_model(solver=REFERENCE).fit(Xs, Ys)
        np.testing.assert_allclose(est.decision_function(X), dense.decision_function(X), atol=1e-6)
        np.testing.assert_array_equal(est.predict(X), dense.predict(X))


@pytest.mark.degenerate_labels
def test_never_positive_column_is_never_predicted(multilabel_data):
    """A label with no positive example is left out (docs/theory.md §3.4): the other labels are the reference fit
    without it, its decision value is NEVER, it is never predicted, and it has no support vectors."""
    X, Y, w = multilabel_data
    Y = np.clip(Y, 0, None)
    with_empty = np.insert(Y, 1, 0.0, axis=1)
    with_empty[:3, 1] = -1.0  # known negatives only: still no positive
    est = paper_model(solver=REFERENCE).fit(X, with_empty, sample_weight=w)
    ref = _reference(X, Y, sample_weight=w)
    F = est.decision_function(X)
    assert F.shape == (X.shape[0], 5)
    np.testing.assert_array_equal(F[:, 1], NEVER)
    np.testing.assert_allclose(np.delete(F, 1, axis=1), ref.decision_function(X), atol=1e-5)
    np.testing.assert_array_equal(est.fitted_labels_, [0, 2, 3, 4])
    P = est.predict(X)
    assert not P[:, 1].any() and P.any(axis=1).all()
    assert est.n_support_[1] == 0 and est.n_support_.sum() == est.support_.size
    np.testing.assert_array_equal(est.coef_[1], 0.0)


@pytest.mark.degenerate_labels
def test_all_positive_column_is_an_ordinary_class(multilabel_data):
    X, Y, _ = multilabel_data
    Y = np.clip(Y, 0, None)
    Y[:, 2] = 1.0
    est = paper_model("SwSb", alpha=0.2).fit(X, Y)
    ref = _reference(X, Y, "SwSb", alpha=0.2)
    assert_matches_reference(est.result_, ref.problem, reference=ref, rtol=1e-7, ftol=1e-4)
    np.testing.assert_array_equal(est.fitted_labels_, np.arange(4))


def test_empty_rows_and_fallback_none(multilabel_data):
    """Rows without labels are allowed; fallback="none" may predict no label, "argmax" always one."""
    X, Y, _ = multilabel_data
    Y = np.clip(Y, 0, None)
    Y[::4] = 0.0
    est = paper_model(threshold=1.5, fallback="none", solver=REFERENCE).fit(X, Y)
    F = est.decision_function(X)
    none = est.predict(X)
    np.testing.assert_array_equal(none, (F >= 1.5).astype(int))
    assert not none.any(axis=1).all(), "the threshold 1.5 should leave some rows without a label"
    arg = est.set_params(fallback="argmax").predict(X)
    assert arg.any(axis=1).all()
    np.testing.assert_array_equal(arg[none.any(axis=1)], none[none.any(axis=1)])


def test_too_few_labels_and_single_class_raise():
    X = np.random.default_rng(0).normal(size=(10, 2))
    with pytest.raises(ValueError, match="at least 2 classes"):
        paper_model().fit(X, np.zeros(10))
    Y = np.zeros((10, 3))
    Y[:, 0] = 1
    with pytest.raises(ValueError, match="at least 2 classes with a positive example"):
        paper_model().fit(X, Y)
    with pytest.raises(ValueError, match="only 0 and 1"):
        paper_model().fit(X, np.full((10, 3), 2))


def test_object_dtype_targets_of_numbers_are_the_numeric_ones():
    """An indicator matrix or class labels of Python numbers in object columns (a DataFrame after mixed operations)
    are the same targets as numbers (were: rejected as not "only 0 and 1", and as of "unknown" type); strings in an
    indicator matrix are still rejected."""
    import pandas as pd
    rng = np.random.default_rng(0)
    X = rng.normal(size=(24, 3))
    Y = (X + rng.normal(scale=0.5, size=X.shape) > 0).astype(int)
    Y[0, 1] = -1
    expected = paper_model().fit(X, Y).decision_function(X)
    for objects in (Y.astype(object), pd.DataFrame(Y, columns=["a", "b", "c"]).astype(object)):
        np.testing.assert_array_equal(paper_model().fit(X, objects).decision_function(X), expected)
    y = X.argmax(axis=1)
    numeric = OvNClassifier().fit(X, y)
    objects = OvNClassifier().fit(X, y.astype(object))
    np.testing.assert_array_equal(objects.classes_, numeric.classes_)
    assert objects.classes_.dtype == numeric.classes_.dtype
    np.testing.assert_array_equal(objects.decision_function(X), numeric.decision_function(X))
    strings = Y.astype(object)
    strings[1, 1] = "1"
    with pytest.raises(ValueError, match="only 0 and 1"):
        paper_model().fit(X, strings)


def test_class_weight_multiclass_equals_sample_weight(multiclass_data):
    X, Y = multiclass_data
    y = np.argmax(Y, axis=1)
    for class_weight in ({0: 2.0, 2: 0.5}, "balanced"):
        est = paper_model("SwSb", alpha=0.1, class_weight=class_weight).fit(X, y)
        cw = compute_class_weight(class_weight, classes=np.arange(3), y=y)
        ref = _reference(X, Y, "SwSb", alpha=0.1, sample_weight=cw[y])
        assert_matches_reference(est.result_, ref.problem, reference=ref, rtol=1e-7, ftol=1e-4)


@pytest.mark.degenerate_labels
def test_class_weight_multilabel_per_label(multiclass_data):
    """Per-label weights on an indicator matrix with one label per row equal per-sample weights."""
    X, Y = multiclass_data
    est = paper_model(class_weight={1: 3.0, 2: 0.25}).fit(X, Y)
    ref = _reference(X, Y, sample_weight=np.array([1.0, 3.0, 0.25])[np.argmax(Y, axis=1)])
    assert est.result_.objective == pytest.approx(ref.objective, rel=1e-7)
    # label 1 is degenerate (w ≈ 0): the polish cannot certify and the answer is the interior point's, whose proven
    # bound (8e-9 relative) fixes W only to O(√bound) by strong convexity (docs/theory.md §9.1.3): measured 3e-5 in W,
    # 1.2e-4 in the decision values (an interior point that ran 16 iterations longer at its round-off floor: 1.5e-6)
    np.testing.assert_allclose(est.decision_function(X), ref.decision_function(X), atol=5e-4)
    with pytest.raises(ValueError, match="column indices"):
        paper_model(class_weight={"a": 1.0}).fit(X, Y)


@pytest.mark.degenerate_labels  # a class weighed down to 1e-3 has w ≈ 0
@pytest.mark.parametrize("labels", ["classes", "indicator"])
def test_class_weight_must_be_positive_and_finite(multiclass_data, labels):
    """A class weight of 0 would drop the class's pairs (its samples, for class labels) without a word: refused with
    the other non-positive and non-finite ones, naming class_weight; a small positive one keeps the class."""
    X, Y = multiclass_data
    y = np.argmax(Y, axis=1) if labels == "classes" else Y
    for weight in (0.0, -0.0, -1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match=r"class_weight must give positive finite weights, got \[.*, 1.0, 1.0\]"):
            paper_model(class_weight={0: weight}).fit(X, y)
    np.testing.assert_array_equal(paper_model(class_weight={0: 1e-3}).fit(X, y).fitted_labels_, [0, 1, 2])


def test_zero_sample_weight_equals_dropping(multiclass_data):
    X, Y = multiclass_data
    y = np.argmax(Y, axis=1)
    w = np.ones(len(y))
    w[::4] = 0.0  # every class keeps members
    keep = w > 0
    X_new = np.random.default_rng(1).normal(size=(10, X.shape[1]))
    dropped = paper_model(kernel="rbf", gamma=0.5, solver=REFERENCE).fit(X[keep], y[keep])
    weighted = paper_model(kernel="rbf", gamma=0.5, solver=REFERENCE).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(weighted.decision_function(X_new), dropped.decision_function(X_new), atol=1e-5)
    # precomputed kernel: the zero-weight samples' columns are dropped as well
    from sklearn.metrics.pairwise import rbf_kernel
    pre = paper_model(kernel="precomputed", solver=REFERENCE).fit(rbf_kernel(X, gamma=0.5), y, sample_weight=w)
    np.testing.assert_allclose(pre.decision_function(rbf_kernel(X_new, X, gamma=0.5)),
                               dropped.decision_function(X_new), atol=1e-5)
    np.testing.assert_array_equal(np.unique(weighted.support_), np.unique(np.flatnonzero(keep)[dropped.support_]))


def test_sample_weight_is_refused_below_zero_and_all_zero(multiclass_data):
    """0 is a weight (the row is dropped, above); the least negative float is refused, naming sample_weight, and
    is never dropped like a 0 would be; so are NaN and all-zero weights, as an array or a scalar."""
    X, Y = multiclass_data
    for w, match in [(-5e-324, "sample_weight must be non-negative"), (np.nan, "sample_weight"),
                     (0.0, "sample_weight must have at least one nonzero weight")]:
        weights = np.ones(len(X)) if w != 0.0 else np.zeros(len(X))
        weights[3] = w
        with pytest.raises(ValueError, match=match):
            paper_model().fit(X, Y, sample_weight=weights)
    for w, match in [(-1.0, "sample_weight must be >= 0"), (0.0, "at least one nonzero weight")]:
        with pytest.raises(ValueError, match=match):
            paper_model().fit(X, Y, sample_weight=w)


def test_support_vectors_are_the_nonnegative_residual_pairs(multilabel_data):
    X, Y, w = multilabel_data
    est = paper_model("HwHb").fit(X, Y, sample_weight=w)
    ref = _reference(X, Y, "HwHb", sample_weight=w)
    r = ovn_cvx.residuals(ref.problem, ref.coef, ref.b)
    pairs = ref.problem.pairs
    clear = np.abs(r) > 1e-5  # pairs exactly on the margin are support vectors up to round-off
    sv = r >= 0
    assert np.isin(pairs.sample[sv & clear], est.support_).all()
    counts = np.bincount(pairs.label[sv & clear], minlength=4)
    assert (est.n_support_ >= counts).all() and (est.n_support_ <= np.bincount(pairs.label[sv | ~clear],
                                                                                minlength=4)).all()


def test_support_vectors_are_the_pairs_at_least_minus_the_limit(multiclass_data, monkeypatch):
    """A pair is a support vector when its residual is ≥ −SUPPORT_TOL. Moving the limit onto the residual of the
    nearest pair outside the margin adds exactly that pair (just inside: ≥, not >); one ulp short of it, not (just
    outside)."""
    X, Y = multiclass_data
    residuals, problems = [], []
    keep = ovn_cvx.estimator.pair_residuals

    def record(problem, F):
        residuals.append(keep(problem, F))
        problems.append(problem)
        return residuals[-1]

    monkeypatch.setattr(ovn_cvx.estimator, "pair_residuals", record)
    model = paper_model(negatives="rest").fit(X, Y)
    r = residuals[-1]
    pairs = problems[-1].pairs
    inside = r >= -ovn_cvx.estimator.SUPPORT_TOL
    np.testing.assert_array_equal(model.n_support_, np.bincount(pairs.label[inside], minlength=3))
    nearest = np.flatnonzero(r == r[~inside].max())
    assert nearest.size == 1 and r[nearest[0]] < -1e-4  # a clear gap: the limit alone decides below
    for limit, added in [(-r[nearest[0]], True), (np.nextafter(-r[nearest[0]], 0.0), False)]:
        monkeypatch.setattr(ovn_cvx.estimator, "SUPPORT_TOL", limit)
        moved = paper_model(negatives="rest").fit(X, Y)
        np.testing.assert_array_equal(residuals[-1], r)  # the same fit: the limit decided, not the data
        expected = inside.copy()
        expected[nearest] = added
        np.testing.assert_array_equal(moved.n_support_, np.bincount(pairs.label[expected], minlength=3))
        np.testing.assert_array_equal(moved.support_, pairs.sample[expected])


@pytest.mark.degenerate_labels
def test_trivial_solution_warns():
    """docs/theory.md §3.4: with a tiny soft-bias penalty the optimum is W = 0, b = 1 (F* = γK²): warn."""
    X, Y = ovn_cvx.datasets.make_data("multilabel", n_samples=40, n_features=3, n_classes=3, seed=1)
    # Clarabel: MM needs ~10^4 iterations on this degenerate optimum (measured)
    with pytest.warns(UserWarning, match="trivial"):
        est = paper_model("HwSb", bias_penalty=1e-4, solver=REFERENCE).fit(X, Y)
    assert est.result_.objective == pytest.approx(1e-4 * 9, rel=1e-5)
    np.testing.assert_allclose(est.result_.b, 1.0, atol=1e-5)
    with warnings.catch_warnings():  # hard b cannot be trivial (docs/theory.md §6): no such warning
        warnings.filterwarnings("error", message="the solution is trivial")
        paper_model("HwHb", solver=REFERENCE).fit(X, Y)


@pytest.mark.degenerate_labels
def test_degenerate_labels_are_those_spread_at_most_the_limit(multiclass_data, monkeypatch):
    """A label is degenerate when its training decision values spread (max − min) at most TRIVIAL_SPREAD. Moving the
    limit onto the spread of an ordinary label makes it degenerate (just inside: ≤, not <); one ulp below, it is
    not (just outside). Label 1 of these data is degenerate at the real limit (w_1 = 0 to round-off)."""
    X, Y = multiclass_data
    spreads = []
    keep = OvNClassifier._degenerate_labels

    def record(self, result, F):
        spreads.append(np.ptp(F, axis=0))
        return keep(self, result, F)

    monkeypatch.setattr(OvNClassifier, "_degenerate_labels", record)
    model = paper_model().fit(X, Y)
    spread = spreads[-1]
    np.testing.assert_allclose(spread, np.ptp(model.decision_function(X), axis=0), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(model.degenerate_labels_, [1])
    assert spread[1] <= ovn_cvx.estimator.TRIVIAL_SPREAD < spread[[0, 2]].min()
    k = 2 if spread[2] < spread[0] else 0
    monkeypatch.setattr(ovn_cvx.estimator, "TRIVIAL_SPREAD", spread[k])
    np.testing.assert_array_equal(paper_model().fit(X, Y).degenerate_labels_, sorted([1, k]))
    monkeypatch.setattr(ovn_cvx.estimator, "TRIVIAL_SPREAD", np.nextafter(spread[k], 0.0))
    np.testing.assert_array_equal(paper_model().fit(X, Y).degenerate_labels_, [1])
    assert [s[k] for s in spreads] == [spread[k]] * 3  # the same fit each time: the limit decided, not the data


def test_max_iter_warns_and_missing_solution_raises(multiclass_data, monkeypatch):
    X, Y = multiclass_data
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        paper_model(max_iter=1).fit(X, Y)

    def no_solution(problem, method, **options):
        return SolveResult(problem=problem, coef=None, b=None, objective=np.nan, status="solver_error",
                           method="cvxpy", solver=REFERENCE, solve_time=0.0, info={"error": "boom"})

    monkeypatch.setattr("ovn_cvx.estimator.solve", no_solution)
    with pytest.raises(RuntimeError, match="no solution .status 'solver_error': boom"):
        paper_model(solver=REFERENCE).fit(X, Y)


@pytest.mark.parametrize("params, match", [
    ({"solver": "NOPE"}, "NOPE"), ({"fallback": "all"}, "fallback"), ({"threshold": np.nan}, "threshold"),
    ({"tol": 0}, "tol"), ({"max_iter": 0}, "max_iter"), ({"alpha": 1.0}, "alpha"),
    ({"beta": 0}, "beta"), ({"beta": "Auto"}, "beta"), ({"beta": np.nan}, "beta"), ({"variant": "SwXb"}, "variant"),
    ({"class_weight": "auto"}, "class_weight"),
    ({"degree": "3"}, "degree"), ({"coef0": np.inf}, "coef0"), ({"gamma": -1.0}, "gamma"),
])
def test_bad_parameters_name_the_argument(multiclass_data, params, match):
    X, Y = multiclass_data
    with pytest.raises(ValueError, match=match):
        paper_model(**params).fit(X, np.argmax(Y, axis=1))


def test_warm_start_gives_the_same_solution(multiclass_data):
    X, Y = multiclass_data
    est = paper_model("SwSb", alpha=0.2, warm_start=True).fit(X, Y)
    first = est.result_
    est.set_params(beta=2.0).fit(X, Y)
    cold = paper_model("SwSb", alpha=0.2, beta=2.0).fit(X, Y)
    assert est.result_ is not first
    assert est.result_.objective == pytest.approx(cold.result_.objective, rel=1e-9)


def test_pipeline_with_scaling():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 3)) * [1, 100, 0.01] + [5, -300, 2]
    y = (X[:, 0] - 5 + (X[:, 2] - 2) * 100 > 0).astype(int)
    pipe = make_pipeline(StandardScaler(), paper_model("HwHb", beta=10.0)).fit(X, y)
    scaled = StandardScaler().fit(X)
    est = paper_model("HwHb", beta=10.0).fit(scaled.transform(X), y)
    np.testing.assert_allclose(pipe.decision_function(X), est.decision_function(scaled.transform(X)), atol=1e-9)
    assert pipe.score(X, y) > 0.9


@pytest.mark.degenerate_labels
def test_refit_with_a_kernel_drops_linear_coef(multiclass_data):
    X, Y = multiclass_data
    est = paper_model(solver=REFERENCE).fit(X, Y)
    assert est.coef_.shape == (3, X.shape[1])
    est.set_params(kernel="rbf").fit(X, Y)
    assert not hasattr(est, "coef_") and not hasattr(est, "intercept_")


def test_grid_over_variant_and_alpha_does_not_warn(multiclass_data):
    """The hard-w variants ignore alpha: the estimator does not pass it (Problem would warn on every fit)."""
    from sklearn.model_selection import GridSearchCV
    X, Y = multiclass_data
    grid = GridSearchCV(paper_model(), {"variant": ["SwHb", "HwHb"], "alpha": [0.0, 0.3]}, cv=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        grid.fit(X, np.argmax(Y, axis=1))
    hard = [paper_model("HwHb", alpha=a).fit(X, Y).result_.objective for a in (0.0, 0.3)]
    assert hard[0] == hard[1]
    with pytest.warns(UserWarning, match="ignored by the hard-w variant"):  # direct users of Problem are told
        Problem(X, Y, "HwHb", alpha=0.3)


def test_cache_size_reaches_the_dual_decomposition(multiclass_data):
    """``cache_size`` is the row cache of the exact kernel fit: a cache of a few rows gives the same certified model
    as the default one (more rows computed), and it is refused by name when not positive."""
    from sklearn.utils._param_validation import InvalidParameterError
    X, Y = multiclass_data
    y = Y.argmax(axis=1)
    default = OvNClassifier(kernel="rbf", decision_rule="paper").fit(X, y)
    small = OvNClassifier(kernel="rbf", decision_rule="paper", cache_size=1e-4).fit(X, y)
    assert default.result_.method == small.result_.method == "smo" and small.result_.success
    assert small.result_.info["cache_rows"] < default.result_.info["cache_rows"]
    assert small.result_.info["kernel_rows"] > default.result_.info["kernel_rows"]
    np.testing.assert_allclose(small.decision_function(X), default.decision_function(X), atol=1e-4)
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(InvalidParameterError, match="cache_size"):
            OvNClassifier(kernel="rbf", cache_size=bad).fit(X, y)


def _recorded_solves(monkeypatch, **overrides):
    """The calls of ``ovn_cvx.estimator.solve``, each as (method, options, result); ``overrides[method]`` options
    replace the estimator's for that method."""
    calls = []

    def recording(problem, method, **options):
        options = {**options, **overrides.get(method, {})}
        result = ovn_cvx.solve(problem, method, **options)
        calls.append((method, options, result))
        return result

    monkeypatch.setattr("ovn_cvx.estimator.solve", recording)
    return calls


def _kernel_data():
    return make_data("multiclass", n_samples=150, n_features=3, n_classes=3, seed=5)


def _assert_at_the_reference(result):
    reference = ovn_cvx.solve(result.problem, "cvxpy", solver=REFERENCE)
    assert result.success and reference.success
    assert abs(result.objective - reference.objective) <= 1e-6 * max(1.0, abs(reference.objective))


def test_warm_start_with_a_kernel_starts_the_dual_decomposition_from_the_previous_dual(monkeypatch):
    """A refit with another β by dual decomposition starts from the previous fit's dual point: fewer pair steps than
    the cold fit of the same problem, at the reference's optimum."""
    X, Y = _kernel_data()
    calls = _recorded_solves(monkeypatch)
    est = OvNClassifier(kernel="rbf", beta=1.0, decision_rule="paper", warm_start=True).fit(X, Y)
    first = est.result_
    est.set_params(beta=1.2).fit(X, Y)
    cold = OvNClassifier(kernel="rbf", beta=1.2, decision_rule="paper").fit(X, Y)
    (_, first_options, _), (method, options, warm), (_, cold_options, _) = calls
    assert [first_options["warm_start"], method, cold_options["warm_start"]] == [None, "smo", None]
    np.testing.assert_array_equal(options["warm_start"].dual, first.dual)
    assert warm.method == "smo" and warm.objective == est.result_.objective
    assert warm.iterations < cold.result_.iterations
    _assert_at_the_reference(warm)
    assert warm.objective == pytest.approx(cold.result_.objective, rel=1e-6)


def test_kernel_fit_falls_back_from_the_dual_decomposition_to_mm(monkeypatch):
    """solver="auto" with a kernel: when the dual decomposition stops short of its bound (here after 5 pair steps),
    the MM solver finishes from its answer, certified at the reference's optimum."""
    X, Y = _kernel_data()
    calls = _recorded_solves(monkeypatch, smo={"max_iter": 5})
    est = OvNClassifier(kernel="rbf", beta=1.0, decision_rule="paper").fit(X, Y)
    (first, _, short), (second, options, final) = calls
    assert [first, second] == ["smo", "mm"]
    assert short.status == "max_iter" and not short.success and short.iterations == 5
    assert options["warm_start"] is short
    assert final.method == "mm" and final.objective == est.result_.objective
    _assert_at_the_reference(final)
