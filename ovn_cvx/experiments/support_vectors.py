"""The paper's "fewer support vectors" claim (its two-class table), compared at matched regularisation.

The grid search of the tables picks, for each method, the most regularised of many models with the same
cross-validated accuracy, so the support vectors of its OvN and SVM winners come from unrelated settings. Here both
are fitted along the whole regularisation path of the grid at the *same* hinge weight: OvN with β and the binary SVM
with C = β/2 (the grid's mapping, docs/theory.md §7), one kernel width (σ₀, scikit-learn's ``gamma="scale"``) and
every α of the path. Each setting is put in a *regime* by the SVM's solution:

* ``"training errors"`` — the SVM misclassifies training patterns;
* ``"margin errors"`` — it separates them, but some sit inside its margin (dual coefficients at the bound C);
* ``"hard margin"`` — no dual coefficient at the bound: the hard-margin SVM, which C no longer changes.

:func:`support_vector_path` returns one row per setting; :mod:`.verdicts` judges the claim per data set and regime.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.model_selection import cross_val_score
from sklearn.svm import SVC

from .._validation import check_number
from .protocols import (FIXED_KERNEL_PARAMS, expected_warnings_ignored, reference_kernel_scale, reference_sigma,
                        sigma_to_gamma, splitter)

TRAINING_ERRORS, MARGIN_ERRORS, HARD_MARGIN = "training errors", "margin errors", "hard margin"
REGIMES = (TRAINING_ERRORS, MARGIN_ERRORS, HARD_MARGIN)

#: a dual coefficient within this relative distance of C is at the bound (libsvm stores the bound itself)
AT_BOUND = 1e-9

COLUMNS = ["dataset", "kernel", "seed", "beta_factor", "beta", "C", "alpha", "regime", "ovn_support", "svc_support",
           "svc_at_bound", "fewer", "ovn_accuracy", "svc_accuracy", "accuracy_se", "accurate"]


def kernel_params(X, kernel: str) -> dict:
    """The kernel's parameters on the path, the same for OvN and the SVM: the grid's fixed ones, and for the
    Gaussian kernel the reference width σ₀ (:func:`.protocols.reference_sigma`)."""
    if kernel == "rbf":
        return {"gamma": sigma_to_gamma(reference_sigma(X))}
    return dict(FIXED_KERNEL_PARAMS.get(kernel, {}))


def at_bound(svc) -> np.ndarray:
    """Which support vectors of a fitted binary ``svc`` have their dual coefficient at the bound C."""
    return np.abs(svc.dual_coef_[0]) >= svc.C * (1 - AT_BOUND)


def regime(svc, X, y) -> str:
    """The regime of a fitted binary ``svc`` on its training data (module docstring)."""
    if svc.score(X, y) < 1.0:
        return TRAINING_ERRORS
    return MARGIN_ERRORS if at_bound(svc).any() else HARD_MARGIN


def fewer(ovn_counts, svc_counts) -> bool:
    """The claim's "fewer support vectors per class": no class more, and fewer in all."""
    ovn_counts, svc_counts = np.asarray(ovn_counts), np.asarray(svc_counts)
    return bool((ovn_counts <= svc_counts).all() and ovn_counts.sum() < svc_counts.sum())


def accurate(ovn_scores, svc_scores) -> tuple[float, bool]:
    """The claim's "equal or better accuracy" on the same folds: the standard error (the larger fold standard
    deviation over √folds) and whether OvN's mean accuracy is no lower than the SVM's by more than it (NaN: no)."""
    ovn_scores, svc_scores = np.asarray(ovn_scores, dtype=float), np.asarray(svc_scores, dtype=float)
    se = max(ovn_scores.std(), svc_scores.std()) / np.sqrt(ovn_scores.size)
    return float(se), bool(ovn_scores.mean() >= svc_scores.mean() - se)


def _counts(counts) -> str:
    return "/".join(str(int(c)) for c in counts)


def _ovn(ovn_class, kernel, params, alpha, beta, solver):
    """K = 2 OvN as the paper's table has it, every parameter the comparison relies on given explicitly."""
    kernel_args = {"gamma": "scale", "degree": 3, "coef0": 0.0, **params}  # the unused ones at their defaults
    solver_args = {} if solver is None else {"solver": solver}  # None: the estimator's own choice
    # β is given as the SVM's C = β/2 sees it: an estimator that can rescale β by the kernel's size must not
    scale_args = {"beta_scale": "none"} if "beta_scale" in ovn_class().get_params() else {}
    return ovn_class(variant="SwHb", kernel=kernel, alpha=alpha, beta=beta, negatives="none", class_weight=None,
                     **kernel_args, **solver_args, **scale_args)


def support_vector_path(X, y, kernel: str, *, beta_factors, alphas, ovn_class, folds: int = 3, seed: int = 0,
                        solver: str | None = "mm", dataset: str = "") -> pd.DataFrame:
    """One row per (β, α): OvN SwHb and ``SVC(C = β/2)`` on the two-class set (X, y) with the same kernel.

    β = factor/κ₀ for each of ``beta_factors`` (κ₀ of :func:`.protocols.reference_kernel_scale`, as in the grid);
    support vectors per class ("a/b") of the fits on all of (X, y) (OvN's ``n_support_``, SVC's) and the SVM's
    number at the bound; accuracies are the mean over ``folds`` stratified folds (the tables' splits of ``seed``);
    ``fewer``: :func:`fewer`; ``accuracy_se`` and ``accurate``: :func:`accurate`. ``ovn_class`` is the estimator class
    (:class:`~ovn_cvx.OvNClassifier` or a stand-in with its parameters).

    Parameters
    ----------
    X : array-like of shape (n, M)
        Patterns of a two-class set.
    y : array-like of shape (n,)
        Labels of the two classes.
    kernel : str
        The kernel of both estimators.
    beta_factors : sequence of float
        The values of β·κ₀.
    alphas : sequence of float
        The values of OvN's α.
    ovn_class : type
        The estimator class fitted as OvN.
    folds : int, default=3
        The number of stratified folds of the accuracies.
    seed : int, default=0
        The seed of the folds.
    solver : str or None, default="mm"
        The ``solver`` of the OvN estimator; None keeps the class's default.
    dataset : str, default=""
        The data set's name, recorded in the rows.

    Returns
    -------
    DataFrame
        One row per (β, α).

    Examples
    --------
    >>> from ovn_cvx import OvNClassifier
    >>> from ovn_cvx.datasets import make_parallel
    >>> from ovn_cvx.experiments import support_vector_path
    >>> X, y = make_parallel(40, random_state=0)
    >>> rows = support_vector_path(X, y, "linear", beta_factors=[1.0], alphas=[0.0, 0.5], ovn_class=OvNClassifier)
    >>> rows[["alpha", "ovn_support", "svc_support", "fewer"]]
       alpha ovn_support svc_support  fewer
    0    0.0         5/5         5/5  False
    1    0.5         4/4         5/5   True
    """
    X, y = np.asarray(X, dtype=float), np.asarray(y)
    if np.unique(y).size != 2:
        raise ValueError(f"y must have exactly 2 classes (the claim is about the binary SVM), got {np.unique(y).size}")
    folds = check_number("folds", folds, low=2, integer=True)
    params = kernel_params(X, kernel)
    kappa0 = reference_kernel_scale(X, kernel)
    cv = splitter("binary", folds, seed)
    rows = []
    with expected_warnings_ignored():
        for factor in beta_factors:
            beta = check_number("beta_factors", factor, low=0, strict=True) / kappa0
            svc = SVC(kernel=kernel, C=beta / 2, **params)
            svc_scores = cross_val_score(svc, X, y, cv=cv)
            svc.fit(X, y)
            for alpha in alphas:
                ovn = _ovn(ovn_class, kernel, params, alpha, beta, solver)
                ovn_scores = cross_val_score(ovn, X, y, cv=cv)
                ovn.fit(X, y)
                rows.append([dataset, kernel, seed, factor, beta, beta / 2, alpha, regime(svc, X, y),
                             _counts(ovn.n_support_), _counts(svc.n_support_), int(at_bound(svc).sum()),
                             fewer(ovn.n_support_, svc.n_support_), ovn_scores.mean(), svc_scores.mean(),
                             *accurate(ovn_scores, svc_scores)])
    return pd.DataFrame(rows, columns=COLUMNS)
