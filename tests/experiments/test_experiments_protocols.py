"""The protocols against independent re-computations with plain scikit-learn loops."""
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import FitFailedWarning
from sklearn.datasets import load_iris, make_multilabel_classification
from sklearn.metrics import accuracy_score, hamming_loss, jaccard_score
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score
from sklearn.multiclass import OneVsRestClassifier
from sklearn.svm import SVC

from ovn_cvx.experiments.protocols import (FIXED_KERNEL_PARAMS, METRICS, Grid, baseline_methods, evaluate, grid_edges,
                                           ovn_method, reference_kernel_scale, reference_sigma, sigma_to_gamma,
                                           splitter, with_scaler)


def test_sigma_to_gamma_gives_the_papers_gaussian_kernel():
    rng = np.random.default_rng(0)
    X, Z = rng.normal(size=(5, 3)), rng.normal(size=(4, 3))
    sigma = 0.7
    paper = np.exp(-((X[:, None, :] - Z[None, :, :]) ** 2).sum(-1) / (2 * sigma ** 2))
    np.testing.assert_allclose(rbf_kernel(X, Z, gamma=sigma_to_gamma(sigma)), paper, rtol=1e-12)
    with pytest.raises(ValueError, match="sigma"):
        sigma_to_gamma(0.0)


def test_reference_sigma_is_sklearn_scale():
    X = np.random.default_rng(1).normal(scale=3.0, size=(30, 4))
    assert sigma_to_gamma(reference_sigma(X)) == pytest.approx(1.0 / (X.shape[1] * X.var()))


def test_same_beta_grid_means_c_is_half_beta():
    grid = Grid(beta=(0.2, 2.0, 20.0), sigma_factors=(1.0, 2.0), alpha=(0.0, 0.5))
    ovr, cs, br = baseline_methods()
    ovn = ovn_method("SwHb", estimator_class=SVC)
    assert ovr.param_grid("rbf", grid, 1.0)["estimator__C"] == [0.1, 1.0, 10.0]
    assert cs.param_grid("linear", grid, 1.0) == {"C": [0.1, 1.0, 10.0]}
    p = ovn.param_grid("rbf", grid, 2.0)
    assert p["beta"] == [0.2, 2.0, 20.0] and p["alpha"] == [0.0, 0.5]
    assert p["gamma"] == pytest.approx([1 / 8.0, 1 / 32.0])  # σ = 2, 4 → 1/(2σ²)
    assert "alpha" not in ovn_method("HwHb", estimator_class=SVC).param_grid("linear", grid, 1.0)
    with pytest.raises(ValueError, match="Gaussian"):
        cs.param_grid("rbf", grid, 1.0)
    with pytest.raises(ValueError, match="beta"):
        Grid(beta=(0.0,))


def half_iris_search():
    """Every other iris row, a one-vs-rest RBF SVC and a C grid: the hand-loop tests' common setup."""
    X, y = load_iris(return_X_y=True)
    return X[::2], y[::2], OneVsRestClassifier(SVC(kernel="rbf", gamma=0.5)), {"estimator__C": [0.01, 1.0, 100.0]}


def test_paper_and_nested_protocols_match_hand_loops():
    X, y, est, grid = half_iris_search()
    ev = evaluate(est, grid, X, y, task="multiclass", folds=3, seed=4)
    cv = StratifiedKFold(3, shuffle=True, random_state=4)
    # paper protocol: the best mean over the grid, from one cross_val_score per candidate
    per_c = {C: cross_val_score(clone(est).set_params(estimator__C=C), X, y, cv=cv) for C in grid["estimator__C"]}
    best_c = max(per_c, key=lambda c: per_c[c].mean())
    assert ev.paper["accuracy"][0] == pytest.approx(per_c[best_c].mean())
    assert ev.paper["accuracy"][1] == pytest.approx(per_c[best_c].std())
    assert ev.paper["hamming_loss"][0] == pytest.approx(1 - per_c[best_c].mean())  # 1-D labels
    assert ev.best_params == {"estimator__C": best_c}
    # nested: a grid search inside every outer training fold, scored on the outer test fold
    inner = StratifiedKFold(3, shuffle=True, random_state=5)
    outer = []
    for train, test in cv.split(X, y):
        gs = GridSearchCV(est, grid, cv=inner).fit(X[train], y[train])
        outer.append(accuracy_score(y[test], gs.predict(X[test])))
    assert ev.nested["accuracy"][0] == pytest.approx(np.mean(outer))
    assert ev.nested["accuracy"][1] == pytest.approx(np.std(outer))
    assert ev.failed_fits == 0


def test_nested_protocol_alone_skips_the_paper_protocol():
    X, y, est, grid = half_iris_search()
    both = evaluate(est, grid, X, y, task="multiclass", folds=3, seed=4)
    alone = evaluate(est, grid, X, y, task="multiclass", folds=3, seed=4, paper=False)
    assert alone.nested == both.nested and alone.nested_params == both.nested_params
    assert alone.paper == {} and alone.best_params == {} and alone.best_estimator is None
    with pytest.raises(ValueError, match="paper=False requires nested=True"):
        evaluate(est, grid, X, y, task="multiclass", paper=False, nested=False)


def test_failed_fits_are_counted_not_hidden():
    X, y = load_iris(return_X_y=True)
    # C must be > 0: the C = -1 candidate raises inside every fit
    with pytest.warns(FitFailedWarning), pytest.warns(UserWarning, match="non-finite"):
        ev = evaluate(SVC(kernel="linear"), {"C": [-1.0, 1.0]}, X, y, task="multiclass", nested=False)
    assert ev.failed_fits == 3
    assert ev.best_params == {"C": 1.0}


def test_multilabel_example_accuracy_is_jaccard_samples():
    X, Y = make_multilabel_classification(60, n_features=4, n_classes=3, random_state=0)
    est = OneVsRestClassifier(SVC(kernel="linear", C=0.5))
    ev = evaluate(est, {"estimator__C": [0.5]}, X, Y, task="multilabel", nested=False)
    scores = [jaccard_score(Y[te], clone(est).fit(X[tr], Y[tr]).predict(X[te]), average="samples",
                            zero_division=1.0) for tr, te in splitter("multilabel", 3, 0).split(X, Y)]
    assert ev.paper["example_accuracy"][0] == pytest.approx(np.mean(scores))
    assert set(METRICS) >= {"accuracy", "example_accuracy", "hamming_loss"}


def test_with_scaler_fits_the_scaler_inside_the_fold():
    est, grid = with_scaler(SVC(), {"C": [1.0]}, standardize=True)
    assert grid == {"model__C": [1.0]} and est.steps[0][0] == "scale"
    assert with_scaler(SVC(), {"C": [1.0]}, standardize=False)[1] == {"C": [1.0]}


def test_each_metric_s_own_best_and_the_grid_edges():
    """metric_best: every metric maximised on its own over the grid (hand loop); grid_edges: winners on an axis end."""
    X, Y = make_multilabel_classification(90, n_features=5, n_classes=4, random_state=2)
    est = OneVsRestClassifier(SVC(kernel="linear"))
    grid = {"estimator__C": [0.001, 0.1, 10.0]}
    ev = evaluate(est, grid, X, Y, task="multilabel", nested=False, seed=3)
    cv = splitter("multilabel", 3, 3)
    hamming, jaccard = {}, {}
    for C in grid["estimator__C"]:
        preds = [(Y[te], clone(est).set_params(estimator__C=C).fit(X[tr], Y[tr]).predict(X[te]))
                 for tr, te in cv.split(X, Y)]
        hamming[C] = np.mean([hamming_loss(t, p) for t, p in preds])
        jaccard[C] = np.mean([jaccard_score(t, p, average="samples", zero_division=1.0) for t, p in preds])
    best_h = min(hamming, key=hamming.get)
    assert ev.metric_best["hamming_loss"][0] == pytest.approx(hamming[best_h])
    assert ev.metric_best["hamming_loss"][1] == {"estimator__C": best_h}
    assert ev.metric_best["example_accuracy"][0] == pytest.approx(max(jaccard.values()))
    chosen = ev.best_params["estimator__C"]
    assert (chosen in (0.001, 10.0)) == bool(ev.edges)
    assert grid_edges({"C": 3.0, "alpha": 0.5}, [{"C": 3.0, "alpha": 0.9}, {"C": 1.0, "alpha": 0.5}],
                      {"C": [1.0, 3.0], "alpha": [0.0, 0.5, 0.9], "gamma": [2.0]}) == \
        "protocol: C=3 (max); nested: C=3 (max) ×1/2, alpha=0.9 (max) ×1/2, C=1 (min) ×1/2"
    assert grid_edges({"C": 2.0}, [], {"C": [1.0, 2.0, 3.0]}) == ""


def test_kernel_scale_makes_the_beta_grid_mean_the_same_on_every_scale():
    X, y = load_iris(return_X_y=True)
    Xs = (X - X.mean(axis=0)) / X.std(axis=0)
    assert reference_kernel_scale(Xs, "linear") == pytest.approx(4.0)  # Σ_j Var x_j = M
    assert reference_kernel_scale(X, "rbf") == 1.0
    p = FIXED_KERNEL_PARAMS["poly"]
    expected = np.mean(np.diag((p["gamma"] * X @ X.T + p["coef0"]) ** p["degree"]))
    assert reference_kernel_scale(X, "poly") == pytest.approx(expected)
    with pytest.raises(ValueError, match="kernel"):
        reference_kernel_scale(X, "sigmoid")
    # why: SVC on s·K with C/s is SVC on K with C (same decision function), checked with scikit-learn
    s = 7.0
    a = SVC(kernel="linear", C=2.0).fit(Xs, y)
    b = SVC(kernel="linear", C=2.0 / s).fit(np.sqrt(s) * Xs, y)
    np.testing.assert_allclose(a.decision_function(Xs), b.decision_function(np.sqrt(s) * Xs), atol=1e-3)
    ovr = baseline_methods()[0]
    grid = Grid(beta=(1.0, 4.0), sigma_factors=(1.0,), alpha=(0.0,))
    assert ovr.param_grid("linear", grid, 1.0, kappa0=4.0) == {"estimator__C": [0.125, 0.5]}
