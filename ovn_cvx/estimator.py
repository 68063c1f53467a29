"""``OvNClassifier``: the OvN SVM as a scikit-learn classifier (multiclass, binary and multilabel).

The estimator builds an :class:`ovn_cvx.Problem` (docs/theory.md §1–§3), solves it with the MM solver or a CVXPY
solver, and predicts with the rule of docs/theory.md §5. Degenerate label columns (docs/theory.md §3.4) are handled
here,
not passed to the ``Problem`` (which rejects them); see :class:`OvNClassifier`.
"""
from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_array, check_is_fitted, column_or_1d, validate_data

from ._validation import naming
from .kernels import NAMED_KERNELS
from .labels import label_indicator, predict_labels
from .objective import residuals, training_decision
from .problem import VARIANTS, Problem
from .solve import solve

#: decision value of a label that never occurs positively in the training data: the most negative finite
#: float, so it is below every threshold and never the argmax, yet scikit-learn's metrics accept it.
NEVER = -np.finfo(np.float64).max

#: the training decision values must vary by more than this (on the margin scale 1) for the solution
#: not to count as trivial (docs/theory.md §3.4: W = 0, every pattern gets the same decision values).
TRIVIAL_SPREAD = 1e-5

#: a pair is a support vector when its residual is >= −SUPPORT_TOL (the accuracy of the solvers, docs/theory.md §10)
SUPPORT_TOL = 1e-6

FALLBACKS = ("argmax", "none")


class _RealInterval(Interval):
    """scikit-learn's ``Interval`` for every ``numbers.Real``: it compares a non-integer as float (its own test
    calls ``np.isnan``, which fails on e.g. ``fractions.Fraction``)."""

    def __init__(self, left, right, *, closed):
        super().__init__(Real, left, right, closed=closed)

    def __contains__(self, val):
        return super().__contains__(val if isinstance(val, Integral) else float(val))


class OvNClassifier(ClassifierMixin, BaseEstimator):
    """One-versus-none (OvN) SVM classifier (Shajari & Rangarajan) for multiclass and multilabel data.

    It minimizes F(W, b) = R(W) + β Σ_p s_p [1 − y_p f_{k_p}(x_{i_p})]_+ + B(b) with one hinge term per
    (pattern, label) pair, f_k(x) = ⟨w_k, φ(x)⟩ + b_k (the convention of docs/theory.md §2; see the README).

    Parameters
    ----------
    variant : {"SwSb", "SwHb", "HwSb", "HwHb"}, default="SwHb"
        Soft or hard (Σ_k w_k = 0) weights, soft (γ (Σ_k b_k)²) or hard (Σ_k b_k = 0) biases.
    kernel : {"linear", "rbf", "poly", "sigmoid", "precomputed"} or callable, default="linear"
        ``"linear"`` solves the primal linear problem; the others the kernel problem.
    gamma, degree, coef0 :
        Kernel parameters as in :class:`sklearn.svm.SVC` (``gamma="scale"`` is 1 / (M · Var X)).
    alpha : float, default=0.0
        Coupling of the weight vectors, in the open interval (−1/(K−1), 1). The hard-w variants (HwSb, HwHb)
        ignore it (Σ_k w_k = 0 removes the coupling), without a warning, so that one grid can search variant
        and alpha together.
    beta : float > 0, default=1.0
        Hinge weight. For K = 2 and HwHb the model is ``SVC(C=beta/2)``.
    bias_penalty : float >= 0, default=1.0
        γ of the soft-bias term; ignored by the hard-b variants.
    solver : str, default="mm"
        ``"mm"`` (majorization–minimization, ``ovn_cvx.solvers.mm``) or the name of an installed CVXPY
        solver (``"CLARABEL"``, ``"ECOS"``, ``"OSQP"``, ``"SCS"``, ...) for the reference formulation.
    threshold : float, default=1.0
        Multilabel rule: label k is predicted when f_k(x) >= threshold (docs/theory.md §5).
    fallback : {"argmax", "none"}, default="argmax"
        Multilabel rule for a pattern with no f_k(x) >= threshold: predict its argmax label, or no label.
    tol, max_iter :
        MM only: the accuracy a fit must prove, as a bound on (F − F*)/max(1, |F|) from an exactly feasible
        dual point (docs/theory.md §6; a fit that cannot prove it warns), and the iteration limit. The CVXPY
        solvers use their own defaults.
    warm_start : bool, default=False
        MM only: start from the previous solution when refitting on data with the same shape.
    class_weight : None, "balanced" or dict, default=None
        Multiplies the cost of every pair of class (label) k by ``class_weight[k]``. Keys are the class
        labels for 1-D ``y`` and the column indices for an indicator matrix. ``"balanced"`` uses
        n_samples / (K · n_k) with n_k the number of positives of class k (scikit-learn's rule).

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
        Class labels (1-D ``y``) or ``arange(K)`` (indicator matrix ``y``).
    n_features_in_ : int
    multilabel_ : bool
        True when fitted on an indicator matrix.
    result_ : SolveResult
        The solution of the training problem (``coef`` is W or A, ``b`` the biases) of the fitted labels.
    fitted_labels_ : ndarray of int
        Columns of the membership matrix that were fitted; the others never had a positive example.
    support_ : ndarray of int
        Training-sample indices of the support vectors, class by class (a multilabel sample can be a
        support vector of several labels, so it can appear several times); ``n_support_[k]`` of them belong
        to class k. A pair is a support vector when its residual 1 − y_p f_{k_p}(x_{i_p}) >= −1e-6
        (``SUPPORT_TOL``: its dual variable can be nonzero, docs/theory.md §6).
    n_support_ : ndarray of shape (K,)
    coef_, intercept_ : linear kernel only
        Shape (K, M) and (K,): row k is w_k and b_k. Binary (1-D ``y`` with two classes): shape (1, M) and
        (1,), the half-difference (w_2 − w_1)/2, (b_2 − b_1)/2, so that ``decision_function`` is
        ``X @ coef_.T + intercept_`` as for scikit-learn's linear models.
    n_iter_ : int or None
        Iterations reported by the solver.

    Notes
    -----
    **decision_function.** Shape (n, K) of f_k(x), except binary 1-D ``y``: shape (n,), (f_2 − f_1)/2,
    positive for ``classes_[1]``. For K = 2 HwHb, f_1 = −f_2, so this is f for ``classes_[1]`` and equals
    ``SVC(kernel=..., C=beta/2).decision_function`` (docs/theory.md §7). ``predict`` is the argmax (ties: first class)
    for 1-D ``y`` and {k : f_k(x) >= threshold} (with the fallback) for an indicator matrix, returned as a
    dense 0/1 integer array.

    **Degenerate label columns (docs/theory.md §3.4).** A column with no positive entry (no example, only known
    negatives −1, or only samples of zero weight) cannot be fitted: with an empty class the optimum is the
    trivial W = 0. Such a column is left out of the problem; it is never predicted and its decision value
    is ``NEVER`` (the most negative finite float). At least two columns must have a positive entry. An
    all-positive column is an ordinary OvN class (OvN has no negatives) and is fitted as such. Rows with no
    label (empty label sets) enter no hinge term.

    **Sample weights.** Samples of weight 0 are dropped before fitting, which is exactly equivalent (their
    hinge terms vanish). With ``kernel="precomputed"``, their columns of the kernel matrix are dropped too.

    **Warnings.** ``ConvergenceWarning`` when MM stops at ``max_iter`` or a CVXPY solver reports an inaccurate
    solution; ``UserWarning`` when the training decision values are constant (‖W‖ ≈ 0, the trivial
    solution of docs/theory.md §3.4). A solver that returns no solution raises ``RuntimeError``.
    """

    def __init__(self, variant="SwHb", kernel="linear", *, gamma="scale", degree=3, coef0=0.0, alpha=0.0,
                 beta=1.0, bias_penalty=1.0, solver="mm", threshold=1.0, fallback="argmax", tol=1e-6,
                 max_iter=10_000, warm_start=False, class_weight=None):
        self.variant = variant
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.alpha = alpha
        self.beta = beta
        self.bias_penalty = bias_penalty
        self.solver = solver
        self.threshold = threshold
        self.fallback = fallback
        self.tol = tol
        self.max_iter = max_iter
        self.warm_start = warm_start
        self.class_weight = class_weight

    # --- scikit-learn plumbing ------------------------------------------------------------------
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_label = True
        tags.input_tags.sparse = True
        tags.input_tags.pairwise = isinstance(self.kernel, str) and self.kernel == "precomputed"
        return tags

    #: checked by scikit-learn (``BaseEstimator._validate_params``) when ``fit`` starts; alpha's lower bound
    #: −1/(K−1) depends on the data and is checked by ``Problem``, a CVXPY solver name by ``check_solver``
    _parameter_constraints = {
        "variant": [StrOptions(set(VARIANTS))],
        "kernel": [StrOptions(set(NAMED_KERNELS)), callable],
        "gamma": [StrOptions({"scale", "auto"}), _RealInterval(0, None, closed="neither")],
        "degree": [Interval(Integral, 0, None, closed="left")],
        "coef0": [_RealInterval(None, None, closed="neither")],
        "alpha": [_RealInterval(-1, 1, closed="neither")],
        "beta": [_RealInterval(0, None, closed="neither")],
        "bias_penalty": [_RealInterval(0, None, closed="left")],
        "solver": [str],
        "threshold": [_RealInterval(None, None, closed="neither")],
        "fallback": [StrOptions(set(FALLBACKS))],
        "tol": [_RealInterval(0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "warm_start": ["boolean"],
        "class_weight": [StrOptions({"balanced"}), dict, None],
    }

    # --- targets ------------------------------------------------------------------------------
    def _membership(self, y):
        """(Y in {−1, 0, 1}^{N×K}, classes, multilabel) from 1-D labels or an indicator matrix."""
        if sp.issparse(y) or (np.ndim(y) == 2 and np.shape(y)[1] > 1):
            Y = y.toarray() if sp.issparse(y) else np.asarray(y)
            if Y.dtype.kind not in "biuf" or not np.isin(Y, (-1, 0, 1)).all():
                raise ValueError("an indicator matrix y must contain only 0 and 1 (and -1 for a known "
                                 "negative)")
            return Y.astype(np.float64), np.arange(Y.shape[1]), True
        with naming("y"):
            y = column_or_1d(y, warn=True)
            check_classification_targets(y)
        classes, Y = label_indicator(y)
        if classes.size < 2:
            raise ValueError(f"OvNClassifier needs at least 2 classes in y, got 1 class: {classes[0]!r}")
        return Y, classes, False

    def _label_weights(self, Y):
        """Multiplier of the cost of every pair of each class (column), from ``class_weight``."""
        K = Y.shape[1]
        if self.class_weight is None:
            return np.ones(K)
        positives = (Y == 1).sum(axis=0)
        if not self.multilabel_:
            y = self.classes_[np.argmax(Y, axis=1)]
            weights = compute_class_weight(self.class_weight, classes=self.classes_, y=y)
        elif isinstance(self.class_weight, str) and self.class_weight == "balanced":
            # empty columns are left out of the fit, their weight does not matter
            weights = Y.shape[0] / (K * np.maximum(positives, 1))
        elif isinstance(self.class_weight, dict):
            unknown = set(self.class_weight) - set(range(K))
            if unknown:
                raise ValueError(f"class_weight keys must be column indices 0..{K - 1} for an indicator "
                                 f"matrix y, got {sorted(unknown, key=str)}")
            weights = np.array([self.class_weight.get(k, 1.0) for k in range(K)], dtype=np.float64)
        else:
            raise ValueError(f"class_weight must be None, 'balanced' or a dict, got {self.class_weight!r}")
        weights = np.asarray(weights, dtype=np.float64)
        if not (np.isfinite(weights).all() and (weights > 0).all()):
            raise ValueError(f"class_weight must give positive finite weights, got {weights.tolist()}")
        return weights

    # --- fit ----------------------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit on patterns X (n, M) and labels y: 1-D class labels, or an (n, K) indicator matrix
        (dense or scipy sparse; 1 = member, 0 = no information, −1 = known non-member)."""
        if self.solver.lower() != "mm":
            from .solvers.cvxpy_solver import check_solver
            check_solver(self.solver)
        with naming("X"):
            X = validate_data(self, X, accept_sparse=("csr", "csc", "coo"), dtype=np.float64)
        if sp.issparse(X):  # the formulations work on dense arrays
            X = X.toarray()
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        with naming("y"):
            y = check_array(y, accept_sparse=("csr", "csc", "coo"), ensure_2d=False, dtype=None, input_name="y")
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"X and y must have the same number of samples, got {X.shape[0]} and {y.shape[0]}")
        Y, self.classes_, self.multilabel_ = self._membership(y)
        label_weight = self._label_weights(Y)  # from all samples, as scikit-learn's "balanced"
        with naming("sample_weight"):
            s = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        keep = s > 0
        if not keep.all():
            X, Y, s = X[keep], Y[keep], s[keep]
            if self._precomputed:
                X = X[:, keep]
        self._train_index = np.flatnonzero(keep)
        self.fitted_labels_ = np.flatnonzero((Y == 1).any(axis=0))
        if self.fitted_labels_.size < 2:
            raise ValueError("OvNClassifier needs at least 2 classes with a positive example of positive "
                             f"sample_weight, got {self.fitted_labels_.size} class(es)")
        label_weight = label_weight[self.fitted_labels_]
        Y = Y[:, self.fitted_labels_]
        alpha = 0.0 if self.variant.startswith("Hw") else self.alpha  # ignored by hard w: no warning per fit
        problem = Problem(X, Y, self.variant, self.kernel, alpha=alpha, beta=self.beta,
                          bias_penalty=self.bias_penalty, gamma=self.gamma, degree=self.degree,
                          coef0=self.coef0, sample_weight=s, label_weight=label_weight)
        result = self._solve(problem)
        self._check_result(result)
        self.result_ = result
        self.n_iter_ = result.iterations
        self._set_support(result)
        if problem.is_kernel:
            for stale in ("coef_", "intercept_"):  # from an earlier linear fit
                self.__dict__.pop(stale, None)
        else:
            self._set_linear_coef(result)
        return self

    @property
    def _precomputed(self):
        return isinstance(self.kernel, str) and self.kernel == "precomputed"

    def _solve(self, problem):
        if self.solver.lower() != "mm":
            return solve(problem, method="cvxpy", solver=self.solver)
        previous = getattr(self, "result_", None) if self.warm_start else None
        if previous is not None and (previous.problem.variant != problem.variant
                                     or previous.problem.is_kernel != problem.is_kernel
                                     or previous.problem.coef_shape != problem.coef_shape):
            previous = None  # not a starting point for this problem: start cold
        return solve(problem, method="mm", gap_tol=self.tol, max_iter=self.max_iter, warm_start=previous)

    def _check_result(self, result):
        where = f"{result.method}/{result.solver}"
        if not result.has_solution:
            raise RuntimeError(f"{where} produced no solution (status {result.status!r}"
                               + (f": {result.info['error']}" if "error" in result.info else "") + ")")
        if not result.success:
            if result.method == "mm":
                hint = (f"its proven bound on (F − F*)/max(1, |F|) is {result.info['relative_gap_bound']:.2g}, "
                        f"above tol={self.tol:g}; increase tol or max_iter, or try a CVXPY solver")
            else:
                hint = "try another solver"
            warnings.warn(f"{where} did not reach the requested accuracy (status {result.status!r}, "
                          f"{result.iterations} iterations): {hint}", ConvergenceWarning, stacklevel=3)
        F = training_decision(result.problem, result.coef, result.b)
        spread = float(np.ptp(F, axis=0).max())
        if spread <= TRIVIAL_SPREAD:
            warnings.warn(f"the solution is trivial: the decision values are the same for every training "
                          f"pattern (spread {spread:.2g}, ‖W‖ ≈ 0; docs/theory.md §3.4); every pattern gets the same "
                          "prediction. Increase beta, or use hard biases.", UserWarning, stacklevel=3)

    def _set_support(self, result):
        problem = result.problem
        pairs = problem.pairs
        support = residuals(problem, result.coef, result.b) >= -SUPPORT_TOL
        # pairs are class-major, so the support samples come out class by class
        self.support_ = self._train_index[pairs.sample[support]]
        self.n_support_ = np.zeros(self.classes_.size, dtype=np.int32)
        self.n_support_[self.fitted_labels_] = np.bincount(pairs.label[support],
                                                           minlength=problem.n_classes)

    def _set_linear_coef(self, result):
        W, b = self._embed(result.coef, 0.0).T, self._embed(result.b[None, :], NEVER)[0]
        if self._binary:
            W, b = 0.5 * (W[1] - W[0])[None, :], np.array([0.5 * (b[1] - b[0])])
        self.coef_, self.intercept_ = W, b

    @property
    def _binary(self):
        return not self.multilabel_ and self.classes_.size == 2

    def _embed(self, F, fill):
        """Columns of the fitted labels → all K columns (the never-positive ones get ``fill``)."""
        full = np.full((F.shape[0], self.classes_.size), fill, dtype=np.float64)
        full[:, self.fitted_labels_] = F
        return full

    # --- prediction ---------------------------------------------------------------------------
    def decision_function(self, X):
        """f_k(x), shape (n, K); binary 1-D y: (f_2 − f_1)/2, shape (n,), positive for ``classes_[1]``."""
        check_is_fitted(self)
        with naming("X"):
            X = validate_data(self, X, accept_sparse=("csr", "csc", "coo"), dtype=np.float64, reset=False)
        if sp.issparse(X):
            X = X.toarray()
        if self._precomputed:
            X = X[:, self._train_index]
        F = self._embed(self.result_.decision_function(X), NEVER)
        if self._binary:
            return 0.5 * (F[:, 1] - F[:, 0])
        return F

    def predict(self, X):
        """Class labels (argmax, docs/theory.md §5), or for an indicator-matrix fit a 0/1 matrix (n, K):
        {k : f_k(x) >= threshold}, or the argmax label when that set is empty and ``fallback="argmax"``."""
        F = self.decision_function(X)
        if self._binary:
            return self.classes_[(F > 0).astype(int)]
        if not self.multilabel_:
            return self.classes_[np.argmax(F, axis=1)]
        return predict_labels(F, multilabel=True, threshold=self.threshold,
                              fallback=self.fallback == "argmax").astype(int)
