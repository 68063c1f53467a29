"""Support vectors at matched regularisation: the regimes, the claim's rules at their boundaries, and the path
against scikit-learn's SVC and the mathematics of docs/theory.md §7.1."""
from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.svm import SVC

from ovn_cvx import OvNClassifier
from ovn_cvx.datasets import make_parallel
from ovn_cvx.experiments.support_vectors import (AT_BOUND, COLUMNS, HARD_MARGIN, MARGIN_ERRORS, TRAINING_ERRORS, _ovn,
                                                 accurate, at_bound, fewer, regime, support_vector_path)


def blobs(gap, n=20, seed=0):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(size=(n, 2)) * 0.5 - gap / 2, rng.normal(size=(n, 2)) * 0.5 + gap / 2])
    return X, np.repeat([0, 1], n)


@pytest.mark.parametrize("ovn, svc, expected", [
    ([4, 6], [7, 7], True),
    ([7, 6], [7, 7], True),     # one class equal, fewer in all
    ([7, 7], [7, 7], False),    # equal: not fewer
    ([8, 2], [7, 7], False),    # fewer in all, but one class more
    ([0, 0], [1, 0], True),
])
def test_fewer_per_class(ovn, svc, expected):
    assert fewer(ovn, svc) is expected


def test_accurate_at_its_boundary_and_with_nan():
    svc = np.array([0.9, 0.8, 0.85])                      # mean 0.85, sd 0.0408
    se = svc.std() / np.sqrt(3)
    same_spread = svc - 0.85                               # centred: the same sd, any mean
    got_se, ok = accurate(same_spread + 0.85 - se * (1 - 1e-9), svc)   # just inside
    assert got_se == pytest.approx(se) and ok
    assert not accurate(same_spread + 0.85 - se * (1 + 1e-6), svc)[1]  # just outside
    assert accurate([0.99, 0.99, 0.99], svc)[1]
    assert not accurate([np.nan, 0.9, 0.9], svc)[1]      # a failed fit never counts as accurate
    assert not accurate([0.9, 0.9, 0.9], [np.nan, 0.8, 0.8])[1]


def test_a_dual_coefficient_is_at_the_bound_within_a_relative_1e_9():
    """|a_i| ≥ C (1 − AT_BOUND) counts as at the bound C (libsvm's round-off): at that value exactly it is, one ulp
    under it not, NaN not; the sign of the coefficient (its class) does not matter."""
    C = 3.0
    edge = C * (1 - AT_BOUND)
    svc = SimpleNamespace(C=C, dual_coef_=np.array([[edge, -edge, np.nextafter(edge, 0.0), -C, 0.5 * C, np.nan]]))
    np.testing.assert_array_equal(at_bound(svc), [True, True, False, True, False, False])


def test_regimes_from_the_svm():
    X, y = blobs(gap=0.5)                  # overlapping: training errors at any C
    svc = SVC(kernel="linear", C=100.0).fit(X, y)
    assert svc.score(X, y) < 1 and regime(svc, X, y) == TRAINING_ERRORS
    X, y = blobs(gap=6.0)                  # far apart: separable
    soft = SVC(kernel="linear", C=1e-3).fit(X, y)
    assert soft.score(X, y) == 1.0 and regime(soft, X, y) == MARGIN_ERRORS
    hard = SVC(kernel="linear", C=1e3).fit(X, y)
    assert np.abs(hard.dual_coef_).max() < 1e3 and regime(hard, X, y) == HARD_MARGIN


def test_path_at_alpha_0_on_a_symmetric_set_is_the_svm():
    """docs/theory.md §7.1: on a set symmetric about the origin K = 2 SwHb is SVC(C = β/(2(1 − α))), which at
    α = 0 is the path's SVC(C = β/2): the same support vectors, so never "fewer" (the folds' training parts are not
    symmetric: their accuracies may differ)."""
    X, y = make_parallel(40, noise=0.9, random_state=0)
    path = support_vector_path(X, y, "linear", beta_factors=(0.5, 8.0), alphas=(0.0, 0.5), ovn_class=OvNClassifier,
                               seed=3, dataset="sym")
    assert list(path.columns) == COLUMNS and len(path) == 4
    at0 = path[path["alpha"] == 0.0]
    assert (at0["ovn_support"] == at0["svc_support"]).all() and not at0["fewer"].any()
    assert path.loc[path["alpha"] == 0.5, "fewer"].any()  # at α = 0.5 it is SVC(C = β), another model
    kappa0 = np.mean(np.sum(X ** 2, axis=1))
    np.testing.assert_allclose(path["beta"], np.repeat([0.5, 8.0], 2) / kappa0)
    np.testing.assert_allclose(path["C"], path["beta"] / 2)
    for row in path.itertuples():          # the SVM's counts, independently
        svc = SVC(kernel="linear", C=row.C).fit(X, y)
        assert row.svc_support == "/".join(map(str, svc.n_support_))
        assert row.regime == regime(svc, X, y)


def test_path_passes_the_kernel_to_both_models():
    X, y = blobs(gap=2.0, n=15)
    path = support_vector_path(X, y, "rbf", beta_factors=(2.0,), alphas=(0.9,), ovn_class=OvNClassifier)
    gamma = 1.0 / (X.shape[1] * X.var())   # σ₀: scikit-learn's gamma="scale"
    svc = SVC(kernel="rbf", gamma=gamma, C=1.0).fit(X, y)
    assert path["svc_support"].iloc[0] == "/".join(map(str, svc.n_support_))
    ovn = OvNClassifier("SwHb", "rbf", gamma=gamma, alpha=0.9, beta=2.0, negatives="none").fit(X, y)
    assert path["ovn_support"].iloc[0] == "/".join(map(str, ovn.n_support_))


def test_path_rejects_bad_input_by_name():
    X, y = blobs(gap=2.0, n=6)
    with pytest.raises(ValueError, match="y must have exactly 2 classes"):
        support_vector_path(X, np.arange(12) % 3, "linear", beta_factors=(1.0,), alphas=(0.0,),
                            ovn_class=OvNClassifier)
    with pytest.raises(ValueError, match="folds"):
        support_vector_path(X, y, "linear", beta_factors=(1.0,), alphas=(0.0,), ovn_class=OvNClassifier, folds=1)
    with pytest.raises(ValueError, match="beta_factors"):
        support_vector_path(X, y, "linear", beta_factors=(0.0,), alphas=(0.0,), ovn_class=OvNClassifier)


def test_the_path_s_model_has_every_parameter_of_the_comparison_explicit():
    """The estimator's defaults must not change the comparison: β absolute, the paper's OvN (no known negatives)."""
    class Recorder:
        def __init__(self, **kwargs):
            self.kwargs = kwargs

        def get_params(self):
            return {"beta_scale": "kernel", **getattr(self, "kwargs", {})}

    made = _ovn(Recorder, "poly", {"degree": 2, "gamma": 1.0, "coef0": 1.0}, 0.5, 2.0, "mm").kwargs
    assert made == {"variant": "SwHb", "kernel": "poly", "alpha": 0.5, "beta": 2.0, "negatives": "none",
                    "class_weight": None, "gamma": 1.0, "degree": 2, "coef0": 1.0, "solver": "mm",
                    "beta_scale": "none"}
    params = _ovn(OvNClassifier, "linear", {}, 0.0, 1.0, None).get_params()   # the real estimator accepts them
    assert params["negatives"] == "none" and params.get("beta_scale", "none") == "none"
