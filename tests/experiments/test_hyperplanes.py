"""The parallel-hyperplane measurement (docs/theory.md §7.1) against independent oracles: the CVXPY reference
(Clarabel) for the OvN weights and scikit-learn's SVC for the SVM the mathematics predicts."""
import cvxpy as cp
import numpy as np
import pytest
from scipy.optimize import linprog
from sklearn.svm import SVC

import ovn_cvx
from ovn_cvx import Problem
from ovn_cvx.datasets import make_parallel
from ovn_cvx.experiments import figures as figures_module
from ovn_cvx.experiments import hyperplanes
from ovn_cvx.experiments.hyperplanes import (COLUMNS, angle, fit_hyperplanes, measure_hyperplanes, plot_hyperplanes,
                                             point_symmetric, to_markdown)

BETA = 1.0
OFFSET = np.array([1.0, 2.0])


@pytest.fixture(scope="module")
def overlapping():
    """Symmetric about the origin and not separable (checked below): SVC's C matters."""
    return make_parallel(40, noise=0.9, random_state=0)


@pytest.fixture(scope="module")
def moved():
    """Separable (checked below), symmetric about OFFSET, not about the origin."""
    return make_parallel(40, noise=0.5, offset=OFFSET, random_state=0)


def reference_weights(X, y, alpha):
    """w_1, w_2 of K = 2 SwHb from the CVXPY reference (classes sorted, as the estimator's)."""
    result = ovn_cvx.solve(Problem.from_labels(X, y, "SwHb", alpha=alpha, beta=BETA), solver="CLARABEL")
    assert result.status == "optimal"
    return result.coef[:, 0], result.coef[:, 1]


def degrees(a, b):
    return np.degrees(np.arccos(np.clip(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)), -1, 1)))


def separable(X, y):
    """Is there (w, b) with y_i(wᵀx_i + b) ≥ 1 for all i? (an LP feasibility problem)"""
    s = np.where(y == 1, 1.0, -1.0)
    A = -s[:, None] * np.column_stack([X, np.ones(len(X))])
    return linprog(np.zeros(X.shape[1] + 1), A_ub=A, b_ub=-np.ones(len(X)), bounds=(None, None)).status == 0


def test_fixture_data_are_what_the_tests_need(overlapping, moved):
    assert not separable(*overlapping)
    assert separable(*moved)


@pytest.mark.parametrize("alpha", [-0.5, 0.0, 0.3, 0.5, 0.8, 0.95])
def test_symmetric_set_gives_w1_equal_minus_w2_for_every_alpha(overlapping, alpha):
    # §7.1: point symmetry and a unique optimal W force w_1 = −w_2, inside the claimed range and outside it
    X, y = overlapping
    w1, w2 = reference_weights(X, y, alpha)
    assert np.linalg.norm(w1 + w2) <= 1e-6 * np.linalg.norm(w1 - w2)
    row = measure_hyperplanes(X, y, [alpha], beta=BETA).iloc[0]
    assert row["asymmetry"] <= 1e-6
    assert row["angle_w1_neg_w2"] <= 1e-4


@pytest.mark.parametrize("alpha", [0.0, 0.5, 0.8])
def test_symmetric_set_is_the_svm_with_c_beta_over_2_1_minus_alpha(overlapping, alpha):
    X, y = overlapping
    fit, = fit_hyperplanes(X, y, [alpha], beta=BETA)
    svc = SVC(kernel="linear", C=BETA / (2 * (1 - alpha)), tol=1e-8).fit(X, y)
    np.testing.assert_allclose(fit.ovn.coef_[0], svc.coef_[0], atol=1e-5)
    X_new = np.random.default_rng(3).uniform(-3, 3, size=(300, 2))
    np.testing.assert_allclose(fit.ovn.decision_function(X_new), svc.decision_function(X_new), atol=1e-4)
    row = measure_hyperplanes(X, y, [alpha], beta=BETA, X_test=X_new).iloc[0]
    assert row["C_matched"] == pytest.approx(BETA / (2 * (1 - alpha)))
    assert row["angle_svc_matched"] <= 1e-3
    assert row["agreement_svc_matched"] >= 0.99
    assert row["max_distance_diff_svc_matched"] <= 1e-4


def test_against_svc_c_beta_over_2_only_at_alpha_0(overlapping):
    # on overlapping data SVC(β/2) and SVC(β/(2(1−α))) differ, so OvN cannot equal both (can fail: C must matter)
    X, y = overlapping
    alpha = 0.8
    half = SVC(kernel="linear", C=BETA / 2, tol=1e-8).fit(X, y)
    matched = SVC(kernel="linear", C=BETA / (2 * (1 - alpha)), tol=1e-8).fit(X, y)
    expected = degrees(half.coef_[0], matched.coef_[0])
    assert expected > 1.0
    table = measure_hyperplanes(X, y, [0.0, alpha], beta=BETA)
    assert table.loc[0, "angle_svc"] <= 1e-3
    assert table.loc[1, "angle_svc"] == pytest.approx(expected, abs=1e-3)
    assert table.loc[1, "max_distance_diff_svc"] > 1e-2


@pytest.mark.parametrize("alpha", [0.0, 0.5, 0.75, 0.95])
def test_moved_set_angle_is_the_reference_angle_and_not_zero(moved, alpha):
    # §7.1: moving the symmetric set by t adds 2m·t ≠ 0 to Σ a_i x_i, so w_1 ≠ −w_2 for every α, claim range included
    X, y = moved
    w1, w2 = reference_weights(X, y, alpha)
    expected = degrees(w1, -w2)
    assert expected > 1.0
    row = measure_hyperplanes(X, y, [alpha], beta=BETA).iloc[0]
    assert row["angle_w1_neg_w2"] == pytest.approx(expected, abs=1e-3)
    assert row["asymmetry"] == pytest.approx(np.linalg.norm(w1 + w2) / np.linalg.norm(w1 - w2), rel=1e-4)
    assert row["norm_w1"] == pytest.approx(np.linalg.norm(w1), rel=1e-5)


def test_moved_separable_set_first_order_in_1_minus_alpha(moved):
    # §7.1: hard margin, v ≈ ((1 − α)/(1 + α)) Σ_i a_i x_i, a the hard-margin SVM's dual coefficients; mirror pairs of
    # support vectors make them non-unique, and the OvN dual's −‖Σ μ_i x_i‖²/(4(1 + α)) selects the smallest ‖Σ a_i x_i‖
    X, y = moved
    alpha = 0.999
    s = np.where(y == 1, 1.0, -1.0)
    hard = SVC(kernel="linear", C=1e4, tol=1e-6).fit(X, y)  # tol=1e-8 took 2.7 s here (libsvm)
    margin = np.abs(s * hard.decision_function(X) - 1) < 1e-4
    a = cp.Variable(len(X))
    cp.Problem(cp.Minimize(cp.sum_squares(X.T @ a)),
               [a >= 0, a[~margin] == 0, s @ a == 0, X.T @ cp.multiply(s, a) == hard.coef_[0]]).solve()
    predicted = (1 - alpha) / (1 + alpha) * (X.T @ a.value)
    fit, = fit_hyperplanes(X, y, [alpha], beta=BETA)
    v = 0.5 * (fit.W[:, 0] + fit.W[:, 1])
    np.testing.assert_allclose(v, predicted, rtol=0.02)
    np.testing.assert_allclose(fit.ovn.coef_[0], hard.coef_[0], rtol=0.02)


def test_angle_is_accurate_near_zero_and_undefined_for_a_zero_vector():
    assert angle([1.0, 0.0], [1.0, 1e-9]) == pytest.approx(np.degrees(1e-9), rel=1e-6)  # arccos would give 0
    assert angle([1.0, 0.0], [-2.0, 0.0]) == pytest.approx(180.0)
    assert angle([0.0, 3.0], [1.0, 0.0]) == pytest.approx(90.0)
    assert np.isnan(angle([1.0, 0.0], [0.0, 0.0]))


def test_angle_is_undefined_up_to_a_relative_zero_norm():
    """A vector counts as 0 when its norm is at most ZERO_NORM (1e-6) times the other's, whichever is the short one:
    at that ratio exactly and one ulp under it the angle is NaN; one ulp over it, the angle is measured (0° for
    parallel vectors, atan2(4, 3) in degrees against (3, 4))."""
    for t, undefined in [(1e-6, True), (np.nextafter(1e-6, 0.0), True), (np.nextafter(1e-6, 1.0), False)]:
        assert bool(np.isnan(angle([1.0, 0.0], [t, 0.0]))) is undefined
        assert bool(np.isnan(angle([0.0, 2.0 * t], [0.0, 2.0]))) is undefined
        assert bool(np.isnan(angle([3.0, 4.0], [5.0 * t, 0.0]))) is undefined
        if not undefined:
            assert angle([1.0, 0.0], [t, 0.0]) == 0.0
            assert angle([3.0, 4.0], [5.0 * t, 0.0]) == pytest.approx(np.degrees(np.arctan2(4.0, 3.0)), rel=1e-12)
    assert np.isnan(angle([0.0, 0.0], [0.0, 0.0]))


def test_table_columns_and_markdown(moved):
    X, y = moved
    table = measure_hyperplanes(X, y, [0.0, 0.5], beta=BETA, n_test=50)
    assert list(table.columns) == COLUMNS
    assert table["in_claim"].tolist() == [False, True]
    table.loc[0, "angle_svc"] = np.nan
    lines = to_markdown(table).splitlines()
    assert len(lines) == 2 + 2
    assert lines[0] == "| " + " | ".join(COLUMNS) + " |"
    assert "| n/a |" in lines[2]
    assert lines[3].startswith("| 0.5 | True |")
    with pytest.raises(ValueError, match="angle_svc"):
        to_markdown(table.drop(columns="angle_svc"))


def test_point_symmetry_is_the_claim_s_scope(overlapping, moved):
    X, y = overlapping
    assert point_symmetric(X, y) and point_symmetric(X[::-1], y[::-1])   # any order
    assert not point_symmetric(*moved)
    assert not point_symmetric(X + 1e-12, y)                               # nearly is not exactly
    flipped = y.copy()
    flipped[0] = 1 - flipped[0]                                            # one pattern's class changed
    assert not point_symmetric(X, flipped)
    assert not point_symmetric(X, np.arange(len(y)) % 3)
    table = measure_hyperplanes(*moved, [0.5], beta=BETA, n_test=10)
    assert table["point_symmetric"].tolist() == [False]


def test_default_alphas_cover_the_claim_and_contrast():
    alphas = np.array(hyperplanes.ALPHAS)
    np.testing.assert_allclose(alphas[alphas >= 0.5], np.linspace(0.5, 0.99, 8))
    assert (alphas < 0.5).sum() >= 2 and (np.abs(alphas) < 1).all()


def test_errors_name_the_argument(moved):
    X, y = moved
    with pytest.raises(ValueError, match="alphas"):
        measure_hyperplanes(X, y, [0.5, 1.0])
    with pytest.raises(TypeError, match="alphas"):
        measure_hyperplanes(X, y, 0.5)
    with pytest.raises(ValueError, match="beta"):
        measure_hyperplanes(X, y, [0.5], beta=0.0)
    with pytest.raises(ValueError, match="y must have exactly 2 classes"):
        measure_hyperplanes(X, np.arange(len(y)) % 3, [0.5])
    with pytest.raises(ValueError, match="X_test"):
        measure_hyperplanes(X, y, [0.5], X_test=np.zeros((3, 3)))


def test_plot_writes_a_png(tmp_path, overlapping, moved):
    if not figures_module.matplotlib_available():
        pytest.skip("matplotlib is not installed")
    fits = {"symmetric": fit_hyperplanes(*overlapping, [0.0, 0.5]), "moved": fit_hyperplanes(*moved, [0.5])}
    path = plot_hyperplanes(fits, tmp_path / "sub" / "parallel.png", draw_alphas=(0.0, 0.5))
    assert path == tmp_path / "sub" / "parallel.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="2-D"):
        plot_hyperplanes(fit_hyperplanes(*make_parallel(10, n_features=3, random_state=0), [0.5]), tmp_path / "x.png")


def test_plot_without_matplotlib_returns_the_message(tmp_path, monkeypatch, moved):
    monkeypatch.setattr(figures_module, "matplotlib_available", lambda: False)
    result = plot_hyperplanes(fit_hyperplanes(*moved, [0.5]), tmp_path / "parallel.png")
    assert result == figures_module.MISSING_MATPLOTLIB
    assert not (tmp_path / "parallel.png").exists()
