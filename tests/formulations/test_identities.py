"""Identities of the model checked on the reference: K = 2 HwHb is scikit-learn's SVC(C=β/2) (docs/theory.md §7), and
the kernel formulation with the linear kernel is the linear formulation (docs/theory.md §8)."""
import numpy as np
import pytest
from sklearn.metrics.pairwise import linear_kernel
from sklearn.svm import SVC

import ovn_cvx
from ovn_cvx import Problem, training_decision
from ovn_cvx.datasets import make_data


def binary_data(seed):
    X, Y = make_data("multiclass", n_samples=40, n_features=2, n_classes=2, seed=seed, separation=1.0)
    return X, np.where(Y[:, 1] == 1, 1, -1)  # overlapping: the hinge is active, so C vs 2C would show


def svc_objective(svc, X, y):
    w = svc.coef_[0]
    return 0.5 * w @ w + svc.C * np.maximum(0, 1 - y * svc.decision_function(X)).sum()


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("beta", [0.5, 2.0])
def test_binary_linear_hwhb_is_svc_with_c_half_beta(seed, beta):
    X, y = binary_data(seed)
    p = Problem.from_labels(X, y, "HwHb", beta=beta)
    plus = list(p.classes).index(1)
    r = ovn_cvx.solve(p, solver="CLARABEL")
    svc = SVC(kernel="linear", C=beta / 2, tol=1e-10).fit(X, y)
    assert abs(r.objective - 2 * svc_objective(svc, X, y)) / r.objective <= 1e-6
    np.testing.assert_allclose(r.coef[:, plus], svc.coef_[0], atol=1e-5)
    np.testing.assert_allclose(r.coef[:, 1 - plus], -svc.coef_[0], atol=1e-5)
    free = np.abs(svc.dual_coef_[0]) < svc.C * (1 - 1e-6)  # b is unique only with a free support vector
    if free.any():
        assert r.b[plus] == pytest.approx(svc.intercept_[0], abs=1e-4)
    f = r.decision_function(X)
    np.testing.assert_allclose(f[:, plus], svc.decision_function(X), atol=1e-4)
    assert (p.classes[f.argmax(axis=1)] == svc.predict(X)).mean() >= 0.99


@pytest.mark.parametrize("beta", [0.5, 4.0])
def test_binary_rbf_hwhb_is_svc_with_c_half_beta(beta):
    X, y = binary_data(3)
    p = Problem.from_labels(X, y, "HwHb", kernel="rbf", gamma=0.7, beta=beta)
    plus = list(p.classes).index(1)
    r = ovn_cvx.solve(p, solver="CLARABEL")
    svc = SVC(kernel="rbf", gamma=0.7, C=beta / 2, tol=1e-10).fit(X, y)
    X_new = np.random.default_rng(9).normal(size=(25, 2))
    np.testing.assert_allclose(r.decision_function(X_new)[:, plus], svc.decision_function(X_new), atol=1e-3)
    np.testing.assert_allclose(r.coef.sum(axis=1), 0, atol=1e-8)  # A_2 = −A_1


def test_c_equal_to_beta_is_detectably_wrong():
    # guards the check itself: with the other constant (C = β) the weights differ by far more than the tolerance
    X, y = binary_data(0)
    r = ovn_cvx.solve(Problem.from_labels(X, y, "HwHb", beta=0.5), solver="CLARABEL")
    svc = SVC(kernel="linear", C=0.5, tol=1e-10).fit(X, y)
    assert np.abs(r.coef[:, 1] - svc.coef_[0]).max() > 1e-2


@pytest.mark.parametrize("variant", ovn_cvx.VARIANTS)
def test_linear_kernel_equals_linear_formulation(multilabel_data, variant):
    X, Y, s = multilabel_data
    alpha = -0.2 if variant.startswith("Sw") else 0.0
    lin = Problem(X, Y, variant, alpha=alpha, beta=1.1, bias_penalty=0.5, sample_weight=s)
    ker = Problem(X, Y, variant, linear_kernel, alpha=alpha, beta=1.1, bias_penalty=0.5, sample_weight=s)
    r_lin, r_ker = ovn_cvx.solve(lin), ovn_cvx.solve(ker)
    assert abs(r_ker.objective - r_lin.objective) / r_lin.objective <= 1e-6
    np.testing.assert_allclose(X.T @ r_ker.coef, r_lin.coef, atol=1e-4)  # W = XᵀA is unique
    np.testing.assert_allclose(training_decision(ker, r_ker.coef, r_ker.b),
                               training_decision(lin, r_lin.coef, r_lin.b), atol=1e-3)
