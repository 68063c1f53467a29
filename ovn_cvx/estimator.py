"""``OvNClassifier``: the OvN SVM as a scikit-learn classifier (multiclass, binary and multilabel).

The estimator builds an :class:`ovn_cvx.Problem` (docs/theory.md §1–§3), solves it with the MM solver or a CVXPY
solver, and predicts with the rule of docs/theory.md §5. Degenerate label columns (docs/theory.md §3.4) are handled
here, not passed to the ``Problem`` (which rejects them); see :class:`OvNClassifier`.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, replace
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.decomposition import TruncatedSVD
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_approximation import Nystroem, RBFSampler
from sklearn.model_selection import KFold
from sklearn.pipeline import Pipeline
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from ._blas import blas_controller
from ._parallel import parallel_map
from ._sklearn_compat import HasMethods, Interval, StrOptions, fit_context
from ._validation import check_no_dates, check_sample_weight, naming
from .exceptions import DegenerateLabelWarning
from .kernels import KMeansNystroem, kernel_matrix, poly_diagonal, resolve_gamma, validate_kernel
from .labels import NEVER, TIE_TOL, DecisionRule, membership, predict_labels, reject_label_sets
from .objective import pair_residuals, training_decision
from .problem import VARIANTS, Problem, alpha_interval
from .rules import CALIBRATIONS, GUARD_LEVEL, SCORERS, SELECTIONS, fit_calibrators, learn_rule
from .solve import solve
from .solvers.mm.forms import sparse_and_wide

#: a label's training decision values must vary by more than this (on the margin scale 1) for it not to count as
#: degenerate (w_k ≈ 0, f_k ≈ b_k everywhere; docs/theory.md §3.4 and §5); all labels degenerate: the trivial solution
TRIVIAL_SPREAD = 1e-5

#: a pair is a support vector when its residual is >= −SUPPORT_TOL (the accuracy of the solvers, docs/theory.md §10)
SUPPORT_TOL = 1e-6

#: ``beta="auto"``: the hinge weight (relative to κ₀ with ``beta_scale="kernel"``) for an indicator matrix and for 1-D
#: class labels, each with the linear kernel and with any other, chosen from the measured 0.5–64 for its kind of
#: target (docs/benchmarks/defaults.md): the learned multilabel rule preferred 2–4 with the linear kernel, and 1 with
#: RBF (against 4, 2 seeds: Jaccard / Hamming loss emotions +0.006 / −0.005, scene +0.004 / −0.002, mlc-6 +0.031 /
#: −0.019, mlc-12 −0.007 / +0.002; nested cross-validation picked it too); the linear argmax of 1-D y gained from
#: weaker regularisation (16 against 4: glass +0.019, iris +0.011, wine −0.008, digits +0.002 accuracy), the kernel
#: one lost (RBF, 16 against 4: make_classification's 5 and 10 classes −0.028 and −0.034, glass +0.011, iris −0.004,
#: wine ±0)
AUTO_BETA = {"linear multilabel": 4.0, "kernel multilabel": 1.0, "linear classes": 16.0, "kernel classes": 4.0}
#: ``negative_balance="auto"``: p for an indicator matrix and for 1-D class labels (docs/benchmarks/defaults.md,
#: linear, 2 seeds, p ∈ {0, 0.25, 0.5, 0.75, 1}): the argmax of class labels needs it (0.5: make_classification with
#: 5 and 10 classes 0.497 → 0.535 and 0.310 → 0.544, glass +0.019, iris +0.004, wine ±0, digits −0.002); the learned
#: multilabel rule sets each label's threshold itself, and a balance there raised the Hamming loss (mlc-6 0.191 → 0.214
#: at 0.5)
AUTO_NEGATIVE_BALANCE = {"multilabel": 0.0, "classes": 0.5}


def auto_defaults(kernel, multilabel: bool) -> tuple[float, float]:
    """(β, negative_balance) of ``beta="auto"`` and ``negative_balance="auto"`` for a kernel (a name or a callable)
    and a kind of target: ``AUTO_BETA`` and ``AUTO_NEGATIVE_BALANCE`` read by one rule."""
    target = "multilabel" if multilabel else "classes"
    linear = isinstance(kernel, str) and kernel == "linear"
    return AUTO_BETA[f"{'linear' if linear else 'kernel'} {target}"], AUTO_NEGATIVE_BALANCE[target]

FALLBACKS = ("argmax", "none")
NEGATIVES = ("none", "rest")
#: the package's own certified solvers (any other ``solver`` names a CVXPY solver)
FAST_SOLVERS = ("auto", "mm", "smo")
#: ``solver="auto"`` on sparse, wide linear data with at most AUTO_DCD_FEATURES features per pair: the dual coordinate
#: descent first, for at most AUTO_DCD_ROUNDS rounds, then the MM solver from its point. Measured (one BLAS thread),
#: against the MM solver's matrix-free form: make_sparse_multilabel (10 labels, negatives) 600 × 5 000 0.20 s / 0.38 s,
#: 1 200 × 5 000 0.37 / 1.68 s, 3 000 × 5 000 2.0 / 9.7 s, 10 000 × 20 000 8.8 / 27.8 s; the 20 000 × 50 000 benchmark
#: set 6.9 / 15.1 s (8 rounds; docs/benchmarks/practical_linear.md); but 1 000 × 500 000 (3 000 pairs, 167 features
#: a pair) 0.76 / 0.24 s
AUTO_DCD_ROUNDS = 100
AUTO_DCD_FEATURES = 10
DECISION_RULES = ("auto", "paper", "cv")
KERNEL_APPROXIMATIONS = ("nystroem", "rff")
BETA_SCALES = ("kernel", "none")
#: the kernels scikit-learn's ``Nystroem`` evaluates on whole matrices (it calls a callable pair by pair, and a
#: precomputed matrix has no rows to sample the map from)
NYSTROEM_KERNELS = ("linear", "rbf", "poly", "sigmoid")


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

    The defaults were chosen by measurement (docs/benchmarks/defaults.md): every pattern outside a class is a known
    negative of it, the classes' biases are free, β is relative to the kernel's size, and for multilabel data a
    decision rule is learned from out-of-fold values and kept only when it beats the paper's rule by more than its
    noise. The paper's OvN is one parameter away: ``OvNClassifier(negatives="none")`` (no known negatives, the
    paper's rule f ≥ 1 with the argmax fallback, soft biases with γ = 1; add ``beta_scale="none"`` for the paper's
    absolute β).

    Parameters
    ----------
    variant : {"SwSb", "SwHb", "HwSb", "HwHb"}, default="SwSb"
        Soft or hard (Σ_k w_k = 0) weights, soft (γ (Σ_k b_k)²) or hard (Σ_k b_k = 0) biases.
    kernel : {"linear", "rbf", "poly", "sigmoid", "precomputed"} or callable, default="linear"
        ``"linear"`` solves the primal linear problem; the others the kernel problem.
    gamma : {"scale", "auto"} or float, default="scale"
        Kernel parameter as in :class:`sklearn.svm.SVC` (``gamma="scale"`` is 1 / (M · Var X)).
    degree : int, default=3
        Degree of the ``"poly"`` kernel, as in :class:`sklearn.svm.SVC`.
    coef0 : float, default=0.0
        Independent term of the ``"poly"`` and ``"sigmoid"`` kernels, as in :class:`sklearn.svm.SVC`.
    kernel_approximation : {None, "nystroem", "rff"}, default=None
        None: the exact kernel (a problem of N coefficients per class, with the N×N Gram matrix; one that would not
        fit in the machine's memory raises :class:`~ovn_cvx.exceptions.InsufficientMemory` before it is built,
        docs/theory.md §9.13). ``"nystroem"``
        (scikit-learn's ``Nystroem``, kernels "linear", "rbf", "poly", "sigmoid") or ``"rff"`` (random Fourier
        features, scikit-learn's ``RBFSampler``; ``kernel="rbf"`` only): the kernel is replaced by an explicit
        feature map of ``n_components`` features and the problem is solved in the linear (primal) form on them,
        for large N. Nyström with ``n_components`` = N spans the exact kernel's feature space (the same
        solution).
    n_components : int >= 1, default=100
        Number of features r of ``kernel_approximation`` (Nyström: at most the number of training samples).
    n_landmarks : int >= n_components or None, default=None
        Nyström only: sample this many training rows (at most all) and keep the r = ``n_components`` leading
        directions of their feature map (scikit-learn's ``TruncatedSVD`` of the training features) — the best
        rank-r approximation of the landmarks' Nyström kernel, closer to the exact kernel than r landmarks alone
        (docs/theory.md §9.12). None: r landmarks.
    landmarks : {"random", "kmeans"}, default="random"
        Nyström only: the landmarks are a uniform sample of the training rows (scikit-learn's ``Nystroem``) or
        the centres of scikit-learn's ``KMeans`` on them (one initialisation; Zhang, Tsang & Kwok 2008): closer
        to the exact kernel at the same r, at the cost of the k-means iterations (docs/theory.md §9.12).
    random_state : int, RandomState instance or None, default=None
        The random choices of ``kernel_approximation`` (Nyström's sample or k-means start, the Fourier
        frequencies).
    alpha : float, default=0.0
        Coupling of the weight vectors, in the open interval (−1/(K−1), 1). The hard-w variants (HwSb, HwHb)
        ignore it (Σ_k w_k = 0 removes the coupling), without a warning, so that one grid can search variant
        and alpha together.
    beta : float > 0 or "auto", default="auto"
        Hinge weight, relative to the kernel's size with ``beta_scale="kernel"``. ``"auto"``: 4, except 16 for 1-D class
        labels with the linear kernel and 1 for a label matrix with any other kernel (``AUTO_BETA``, measured with RBF).
        Suggested grid: 2⁻³ … 2⁹ in factors of 4 (0.125, 0.5, 2, 8, 32, 128, 512) with the relative scale — the same
        range on every data set and kernel: measured on six data sets with both kernels, the searches won on an edge (11
        of 55: glass and iris at 512, wine and once emotions at 0.125) won on a plateau, at most 0.02 above the
        neighbouring point, and a wider grid gained at most one test row (docs/benchmarks/defaults.md). For K = 2 and
        HwHb the model is ``SVC(C=beta/2)`` with ``negatives="none"`` and absolute β, ``SVC(C=beta)`` with known
        negatives (each sample's two pairs) and ``negative_balance=0``; the relative scale divides C by κ₀.
    beta_scale : {"kernel", "none"}, default="kernel"
        ``"kernel"``: the problem's hinge weight is beta / κ₀, κ₀ = the mean of κ(x_i, x_i) over the training rows
        (weighted by ``sample_weight``; ``kernel_scale_``): 1 for the RBF kernel, the mean ‖x‖² for the linear one
        (M on standardized data). Scaling a kernel by s and β by 1/s gives the same decision function, so a relative
        β means the same regularisation on every data set. ``"none"``: β as given (the paper's convention).
    bias_penalty : float >= 0 or "auto", default="auto"
        γ of the soft-bias term; ignored by the hard-b variants. ``"auto"``: 0 with ``negatives="rest"`` (each
        class its own offset: with α = 0 and SwSb each class is then its own binary hinge SVM, one-vs-rest), 1
        with ``negatives="none"`` (there γ = 0 would make the trivial solution optimal, docs/theory.md §3.4).
    solver : str, default="auto"
        ``"auto"``: the dual decomposition solver for an exact kernel and for sparse, wide linear data (at least
        2 000 pairs, too many features for the primal form, at most ``AUTO_DCD_FEATURES`` a pair: its dual
        coordinate descent, at most ``AUTO_DCD_ROUNDS`` rounds), the MM solver for other linear problems and for a
        fit the dual decomposition could not prove: the fastest certified choice measured
        (docs/benchmarks/practical.md, docs/benchmarks/practical_linear.md). ``"smo"`` (dual decomposition,
        ``ovn_cvx.solvers.smo``), ``"mm"`` (majorization–minimization with an interior-point finish,
        ``ovn_cvx.solvers.mm``), or the name of an
        installed CVXPY solver (``"CLARABEL"``, ``"ECOS"``, ``"OSQP"``, ``"SCS"``, ...) for the reference
        formulation.
    threshold : float, default=1.0
        Multilabel rule: label k is predicted when f_k(x) >= threshold (docs/theory.md §5), up to round-off:
        values within ``TIE_TOL`` · max(1, |threshold|) (1e-6) below it count as on it.
    fallback : {"argmax", "none"}, default="argmax"
        Multilabel rule for a pattern with no f_k(x) >= threshold: predict its argmax label, or no label.
    negatives : {"none", "rest"}, default="rest"
        ``"none"``: the paper's OvN, a class sees only its own patterns. ``"rest"``: every pattern outside a class
        (multilabel: every row without the label, unlabeled rows included) is a known negative of it
        (Y_ik = −1, docs/theory.md §1), a coupled one-vs-rest that keeps the α coupling.
    negative_balance : float in [0, 1] or "auto", default="auto"
        How a label's known negatives weigh against its positives: with P_k and N_k the numbers of label k's
        positive and negative pairs, weighted by ``sample_weight`` and, for 1-D ``y``, ``class_weight`` (so with
        ``class_weight="balanced"`` every class has P_k/N_k = 1/(K − 1)), each negative pair's cost is multiplied
        by (P_k/N_k)^p, p = ``negative_balance``, and all of the label's pair costs by the factor that keeps their
        total (``Problem``'s ``negative_weight`` and ``label_weight``). 0: every pair alike (one-vs-rest's
        weighting); 1: the negatives together weigh as much as the positives. ``"auto"``: 0.5 for 1-D class labels, 0
        for an indicator matrix (``AUTO_NEGATIVE_BALANCE``, measured). Without the balance a class that the rest
        surrounds is often fitted as w_k = 0 — a constant score, which the argmax cannot rank by the pattern: on 10
        classes from scikit-learn's ``make_classification`` the accuracy fell to 0.31 against one-vs-rest
        ``LinearSVC``'s 0.56; 0.5 gives 0.54 and keeps the bundled sets (docs/benchmarks/defaults.md). Label matrices
        keep 0: the learned rule sets each label's threshold itself. No effect on a label without known negatives (e.g.
        ``negatives="none"`` with 0/1 targets). Binary 1-D ``y`` measured within 0.005 of p = 0 (breast cancer and
        generated sets with 50–95 % in one class, linear and RBF; docs/benchmarks/defaults.md).
    decision_rule : {"auto", "paper", "cv"}, default="auto"
        Multilabel only (1-D ``y`` is always predicted by the argmax). ``"paper"``: ``threshold`` and
        ``fallback``. ``"auto"``: "cv" with ``negatives="rest"``, "paper" with ``negatives="none"``. ``"cv"``: a
        rule learned in ``fit`` from out-of-fold decision values (docs/theory.md §5.1), kept only when the learner's
        held-out score beats the paper rule's beyond its noise (a paired one-sided t-test over the training rows at
        level 0.975, ``rules.outweighs_noise``; else ``rule_`` is the paper's rule):
        the paper's rule, one global threshold, per-label thresholds (each with and without the argmax
        fallback), the top m labels, the labels within a score gap of the row's largest value, or (``rule_scoring``
        "jaccard", "hamming" or a number) the label set of largest expected score under Platt-calibrated per-label
        probabilities, whichever family ``rule_selection`` picks by ``rule_scoring``.
    rule_scoring : {"jaccard", "f1_micro", "f1_macro", "hamming"} or float in [0, 1], default=0.5
        The metric the learned rule maximizes (example-based Jaccard, F1, 1 − Hamming loss), or a number λ: the
        trade λ · Jaccard + (1 − λ) · (1 − Hamming loss) (1 is "jaccard", 0 "hamming"). The default 0.5 keeps
        both: a rule tuned for Jaccard alone can buy it with many labels a row and a large Hamming loss.
    rule_selection : {"cv", "best", "one_se"}, default="cv"
        ``decision_rule="cv"``: how the family of rules is chosen. ``"cv"``: by its held-out score — the rows of
        each ``rule_cv`` fold predicted by the families' best rules searched on the other folds' rows (no refit:
        the same out-of-fold values), so that a family is not preferred for how well its search fits the rows it
        was tuned on; ``"best"``: the family whose best rule scores highest on all the values; ``"one_se"`` (the
        one-standard-error rule): the simplest family (paper, global threshold, top-m, score-gap, expected score,
        per-label thresholds) whose score is within one standard error of the best, the error from the best
        rule's scores on the ``rule_cv`` folds. The chosen family's best rule on all the values is kept.
    rule_cv : int or cross-validation splitter, default=3
        The internal folds of ``decision_rule="cv"`` and ``probability``: an int n is ``KFold(n, shuffle=True,
        random_state=0)``; both use the same out-of-fold decision values. A splitter's test folds must hold every row
        exactly once (as ``cross_val_predict`` requires; an empty test fold is skipped), at least two of them, and
        each fold's training part must have at least 2 classes with a positive example of positive weight; else a
        ValueError names ``rule_cv``.
        Each fold is fitted once (from a cold start), whatever the number of candidate rules; ``n_jobs`` of them at a
        time.
    probability : bool, default=False
        Enable ``predict_proba``: ``fit`` calibrates the out-of-fold decision values of ``rule_cv`` per label.
    calibration : {"sigmoid", "isotonic"}, default="sigmoid"
        Platt's sigmoid (the fit of scikit-learn's ``CalibratedClassifierCV(method="sigmoid")``) or scikit-learn's
        isotonic regression.
    cache_size : float, default=200.0
        The dual decomposition's kernel row cache, in MB (as ``SVC``'s; one row serves every label). When it cannot
        hold every row in double precision, rows are kept in single precision and only where the steps read them
        (N = 20 000, the RBF default with 200 MB: 1.2–1.3× one-vs-rest ``SVC``'s time, docs/benchmarks/practical.md).
        The fit's memory stays within it plus O(N·K).
    tol : float, default=1e-6
        The accuracy a fit must prove, as a bound on (F − F*)/max(1, |F|) from an exactly feasible dual point
        (docs/theory.md §6; a fit that cannot prove it warns; every solver). The CVXPY solvers use their own
        defaults. The MM solver's interior point (dense linear fits) runs on to the exact optimum below 1e-5 and
        stops once an iterate is proven within ``tol`` from 1e-5 up: ``tol=1e-4`` fits the default linear model
        1.5–2× as fast. Any linear fit's coefficients lie within √(2·tol·max(1, |F|)) of the exact ones (Frobenius;
        F is 1-strongly convex in W at α = 0).
    max_iter : int, default=10_000
        The MM solver's iteration limit (the dual decomposition has its own step budget). The CVXPY solvers use
        their own defaults.
    warm_start : bool, default=False
        Start from the previous solution when refitting on data with the same shape (MM: its coefficients; the
        dual decomposition: its dual point, when the rows are the same).
    class_weight : None, "balanced" or dict, default=None
        1-D ``y``: multiplies the weight of every sample of class k (all its pairs, with ``negatives="rest"`` its
        known-negative pairs too) by ``class_weight[k]``, as scikit-learn's classifiers. Indicator matrix:
        multiplies the cost of every pair of label k. Keys are the class labels for 1-D ``y`` and the column
        indices for an indicator matrix. ``"balanced"`` uses n_samples / (K · n_k) with n_k the number of
        positives of class k (scikit-learn's rule).
    verbose : int, default=0
        Progress on stdout (scikit-learn's convention). 0: nothing. 1: each stage — the targets, the problem (β, κ₀,
        the number of pairs), each solve (its iterations, time and proven bound against ``tol``), each internal
        fold, the learned rule and its held-out gain. 2 (and above): also the solver's own lines while it runs
        (``verbose=True`` of :func:`ovn_cvx.solve`: the MM solver's interior-point iterations and exact
        evaluations, the dual decomposition's stretches of steps, rounds and evaluations, the dual coordinate
        descent's rounds; a CVXPY solver's own output), for the final fit (the internal folds' fits report their
        summary only).
    n_jobs : int or None, default=None
        The internal folds of ``decision_rule="cv"`` and ``probability`` fitted in parallel (joblib processes, one
        BLAS thread each; None: 1, −1: every core). Every fold fit starts cold, so the result does not depend on
        it.

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
        Class labels (1-D ``y``), the column names of a pandas DataFrame indicator matrix, or ``arange(K)`` (other
        indicator matrices).
    n_features_in_ : int
    multilabel_ : bool
        True when fitted on an indicator matrix.
    result_ : SolveResult
        The solution of the training problem of the fitted labels (``coef`` is W or A, ``b`` the biases), without
        the problem itself (``problem`` is None: a fitted model keeps no training Gram matrix and, for kernels,
        only the training rows with nonzero coefficients); ``result_.decision_function`` takes X.
    fitted_labels_ : ndarray of int
        Columns of the membership matrix that were fitted; the others never had a positive example.
    support_ : ndarray of int
        Training-sample indices of the support vectors, class by class (a multilabel sample can be a
        support vector of several labels, so it can appear several times); ``n_support_[k]`` of them belong
        to class k. A pair is a support vector when its residual 1 − y_p f_{k_p}(x_{i_p}) >= −1e-6
        (``SUPPORT_TOL``: its dual variable can be nonzero, docs/theory.md §6).
    n_support_ : ndarray of shape (K,)
    coef_, intercept_ : linear kernel (without ``kernel_approximation``) only
        Shape (K, M) and (K,): row k is w_k and b_k. Binary (1-D ``y`` with two classes): shape (1, M) and
        (1,), the half-difference (w_2 − w_1)/2, (b_2 − b_1)/2, so that ``decision_function`` is
        ``X @ coef_.T + intercept_`` as for scikit-learn's linear models.
    n_iter_ : int or None
        Iterations reported by the solver.
    degenerate_labels_ : ndarray of int
        Fitted columns whose training decision values are constant up to ``TRIVIAL_SPREAD`` (1e-5): w_k ≈ 0,
        f_k ≈ b_k everywhere, so such a label is predicted for every pattern or for none (a
        :class:`~ovn_cvx.exceptions.DegenerateLabelWarning` says which, and what fixes it).
    kernel_scale_ : float
        κ₀, the mean κ(x_i, x_i) over the training rows (on the features of ``kernel_approximation``, if any).
    hinge_weight_ : float
        The problem's β: ``beta / kernel_scale_`` (``beta_scale="kernel"``) or ``beta`` (``"auto"``: its value for
        the fitted kind of target and kernel).
    rule_ : DecisionRule
        A learned rule (``decision_rule`` "cv", or "auto" with negatives) with an indicator matrix only: the rule
        used (``rule_.predict(F)``), the paper's when the learner did not beat it.
    rule_gain_, rule_gain_error_ : float
        With ``rule_``: the learner's held-out score minus the paper rule's on the training rows (each ``rule_cv``
        fold predicted by the family chosen on the other folds, its rule learned without the fold), and its standard
        error over the rows (jackknife; for a row-wise score without weights std(ddof=1)/√n of the rows'
        differences). The learned rule is used when ``rule_gain_`` exceeds ``rule_gain_error_`` times Student's t
        quantile of level 0.975 with n − 1 degrees of freedom (about 2).
    rule_scores_ : dict
        ``decision_rule="cv"`` with an indicator matrix only: the score of each family of rules that
        ``rule_selection`` compared (held-out for "cv", else its best rule's on all out-of-fold values).
    calibrators_ : list
        ``probability=True`` only: the fitted calibrator of each fitted label (binary: one, of class 1): a
        ``ovn_cvx.rules.PlattSigmoid`` (``a_``, ``b_``) or an ``IsotonicRegression``.

    Notes
    -----
    **decision_function.** Shape (n, K) of f_k(x), except binary 1-D ``y``: shape (n,), (f_2 − f_1)/2,
    positive for ``classes_[1]``. For K = 2 HwHb, f_1 = −f_2, so this is f for ``classes_[1]`` and equals
    ``SVC(kernel=..., C=beta/2).decision_function`` for the paper's model (``negatives="none"``,
    ``beta_scale="none"``; docs/theory.md §7; other settings: ``beta``). ``predict`` is the argmax (ties: first class)
    for 1-D ``y`` and {k : f_k(x) >= threshold} (with the fallback) for an indicator matrix, returned as a
    dense 0/1 integer array.

    **Degenerate label columns (docs/theory.md §3.4).** A column with no positive entry (no example, only known
    negatives −1, or only samples of zero weight) cannot be fitted: with an empty class the optimum is the
    trivial W = 0. Such a column is left out of the problem; it is never predicted and its decision value
    is ``NEVER`` (the most negative finite float). At least two columns must have a positive entry. An
    all-positive column is an ordinary OvN class (OvN has no negatives) and is fitted as such. Rows with no
    label (empty label sets) enter no hinge term.

    **Sample weights.** Samples of weight 0 are dropped before fitting, which is exactly equivalent (their
    hinge terms vanish). With ``kernel="precomputed"``, their columns of the kernel matrix are dropped too. They
    count nowhere in the learned rule's search and the calibration either.

    **Warnings.** ``ConvergenceWarning`` when MM stops at ``max_iter`` or a CVXPY solver reports an inaccurate
    solution; ``DegenerateLabelWarning`` (a ``UserWarning``) when the training decision values of a label are
    constant (``degenerate_labels_``; all of them: ‖W‖ ≈ 0, the trivial solution of docs/theory.md §3.4). A solver
    that returns no solution raises ``RuntimeError``.

    Examples
    --------
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from ovn_cvx import OvNClassifier
    >>> from ovn_cvx.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> model = make_pipeline(StandardScaler(), OvNClassifier()).fit(X, y)
    >>> model.predict(X[:3]), round(model.score(X, y), 2)
    (array([0, 0, 0]), 0.96)
    >>> Y = (X[:, :3] > X[:, :3].mean(axis=0)).astype(int)     # multilabel: a 0/1 indicator matrix
    >>> OvNClassifier(negatives="none").fit(X, Y).predict(X[:2])  # the paper's model
    array([[0, 1, 0],
           [0, 1, 0]])
    """

    def __init__(self, variant="SwSb", kernel="linear", *, gamma="scale", degree=3, coef0=0.0, alpha=0.0,
                 beta="auto", beta_scale="kernel", bias_penalty="auto", solver="auto", threshold=1.0, fallback="argmax",
                 negatives="rest", negative_balance="auto", decision_rule="auto", rule_scoring=0.5, rule_selection="cv",
                 rule_cv=3, probability=False, calibration="sigmoid", cache_size=200.0, tol=1e-6, max_iter=10_000,
                 warm_start=False, class_weight=None, kernel_approximation=None, n_components=100, n_landmarks=None,
                 landmarks="random", random_state=None, verbose=0, n_jobs=None):
        self.variant = variant
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.alpha = alpha
        self.beta = beta
        self.beta_scale = beta_scale
        self.bias_penalty = bias_penalty
        self.solver = solver
        self.threshold = threshold
        self.fallback = fallback
        self.negatives = negatives
        self.negative_balance = negative_balance
        self.decision_rule = decision_rule
        self.rule_scoring = rule_scoring
        self.rule_selection = rule_selection
        self.rule_cv = rule_cv
        self.probability = probability
        self.calibration = calibration
        self.tol = tol
        self.max_iter = max_iter
        self.cache_size = cache_size
        self.warm_start = warm_start
        self.class_weight = class_weight
        self.kernel_approximation = kernel_approximation
        self.n_components = n_components
        self.n_landmarks = n_landmarks
        self.landmarks = landmarks
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs

    # --- scikit-learn plumbing ------------------------------------------------------------------
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_label = True
        tags.input_tags.sparse = True
        tags.input_tags.pairwise = isinstance(self.kernel, str) and self.kernel == "precomputed"
        return tags

    #: checked by scikit-learn (``BaseEstimator._validate_params``) when ``fit`` starts; alpha's lower bound
    #: −1/(K−1) depends on the number of fitted classes and is checked in ``fit`` (``_check_alpha``), the kernel by
    #: ``kernels.validate_kernel``, a CVXPY solver name by ``check_solver``
    _parameter_constraints = {
        "variant": [StrOptions(set(VARIANTS))],
        "kernel": "no_validation",
        "gamma": [StrOptions({"scale", "auto"}), _RealInterval(0, None, closed="neither")],
        "degree": [Interval(Integral, 0, None, closed="left")],
        "coef0": [_RealInterval(None, None, closed="neither")],
        "alpha": [_RealInterval(-1, 1, closed="neither")],
        "beta": [StrOptions({"auto"}), _RealInterval(0, None, closed="neither")],
        "beta_scale": [StrOptions(set(BETA_SCALES))],
        "bias_penalty": [StrOptions({"auto"}), _RealInterval(0, None, closed="left")],
        "solver": [str],
        "threshold": [_RealInterval(None, None, closed="neither")],
        "fallback": [StrOptions(set(FALLBACKS))],
        "negatives": [StrOptions(set(NEGATIVES))],
        "negative_balance": [StrOptions({"auto"}), _RealInterval(0, 1, closed="both")],
        "decision_rule": [StrOptions(set(DECISION_RULES))],
        "rule_scoring": [StrOptions(set(SCORERS)), _RealInterval(0, 1, closed="both")],
        "rule_selection": [StrOptions(set(SELECTIONS))],
        "rule_cv": [Interval(Integral, 2, None, closed="left"), HasMethods(["split", "get_n_splits"])],
        "probability": ["boolean"],
        "calibration": [StrOptions(set(CALIBRATIONS))],
        "tol": [_RealInterval(0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "cache_size": [_RealInterval(0, None, closed="neither")],
        "warm_start": ["boolean"],
        "class_weight": [StrOptions({"balanced"}), dict, None],
        "kernel_approximation": [StrOptions(set(KERNEL_APPROXIMATIONS)), None],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "n_landmarks": [Interval(Integral, 1, None, closed="left"), None],
        "landmarks": [StrOptions({"random", "kmeans"})],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "n_jobs": [Interval(Integral, -1, None, closed="left"), None],
    }

    @property
    def _bias_penalty(self) -> float:
        """γ: ``bias_penalty``, or for "auto" 0 with known negatives (each class its own offset, as one-vs-rest) and
        1 without them (there γ = 0 would make the trivial solution optimal, docs/theory.md §3.4)."""
        if isinstance(self.bias_penalty, str):
            return 0.0 if self.negatives == "rest" else 1.0
        return float(self.bias_penalty)

    @property
    def _negative_balance(self) -> float:
        """p: ``negative_balance``, or for "auto" ``AUTO_NEGATIVE_BALANCE`` of the fitted kind of target."""
        if isinstance(self.negative_balance, str):
            return auto_defaults(self.kernel, self.multilabel_)[1]
        return float(self.negative_balance)

    @property
    def _beta(self) -> float:
        """β: ``beta``, or for "auto" ``AUTO_BETA`` of the fitted kind of target and kernel."""
        if isinstance(self.beta, str):
            return auto_defaults(self.kernel, self.multilabel_)[0]
        return float(self.beta)

    @property
    def _learns_rule(self) -> bool:
        """Whether ``fit`` learns ``rule_`` (an indicator matrix only): ``decision_rule`` "cv", or "auto" with known
        negatives."""
        rule = self.decision_rule
        return self.multilabel_ and (rule == "cv" or (rule == "auto" and self.negatives == "rest"))

    def _say(self, message: str, level: int = 1) -> None:
        """Progress on stdout when ``verbose`` >= ``level`` (scikit-learn's convention)."""
        if self.verbose >= level:
            print(f"[{type(self).__name__}] {message}", flush=True)

    # --- targets and weights --------------------------------------------------------------------
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

    def _training_set(self, X, Y, sample_weight) -> "_TrainingSet":
        """The rows, signed targets and weights that enter the problem: class weights folded in, rows of zero weight
        dropped, the columns with a positive entry kept (``fitted_labels_``), the known negatives marked."""
        label_weight = self._label_weights(Y)  # from all samples, as scikit-learn's "balanced"
        s = sample_weight
        if not self.multilabel_:  # a class's weight is the weight of its samples (all their pairs), as scikit-learn's
            s = s * label_weight[np.argmax(Y, axis=1)]
            label_weight = np.ones_like(label_weight)
        keep = s > 0
        self._train_index = np.flatnonzero(keep)
        if not keep.all():
            X, Y, s = _rows(X, self._train_index, self._precomputed), Y[keep], s[keep]
        self.fitted_labels_ = np.flatnonzero((Y == 1).any(axis=0))
        if self.fitted_labels_.size < 2:
            raise ValueError("OvNClassifier needs at least 2 classes with a positive example of positive "
                             f"sample_weight, got {self.fitted_labels_.size} class(es)")
        self._check_alpha(self.fitted_labels_.size)
        Y = Y[:, self.fitted_labels_]
        if self.negatives == "rest":
            Y = np.where(Y == 0, -1.0, Y)
        scale, negative_weight = balance_weights(Y, s, self._negative_balance)
        return _TrainingSet(X, Y, s, label_weight[self.fitted_labels_] * scale, negative_weight,
                            sample_weight[self._train_index])

    def _check_alpha(self, n_classes):
        """Alpha in the open interval (−1/(K−1), 1) of the K fitted classes (ignored by the hard-w variants)."""
        lo, hi = alpha_interval(n_classes)
        if self.variant.startswith("Sw") and not lo < self.alpha < hi:
            raise ValueError(f"alpha must lie in the open interval ({lo:g}, {hi:g}) for the {n_classes} classes of "
                             f"this fit (−1/(K−1) < alpha < 1), got alpha={self.alpha}")

    # --- fit ----------------------------------------------------------------------------------
    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit on patterns X (n, M) and labels y: 1-D class labels, or an (n, K) indicator matrix (dense, scipy
        sparse or a pandas DataFrame, whose column names become ``classes_``; 1 = member, 0 = no information,
        −1 = known non-member). A list of label lists or sets is not accepted: convert it with scikit-learn's
        ``MultiLabelBinarizer``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, M)
            Training patterns; for ``kernel="precomputed"`` the (n, n) kernel matrix.
        y : array-like of shape (n,) or (n, K), sparse matrix or DataFrame
            Class labels, or the indicator matrix of label membership (1, 0 or −1).
        sample_weight : array-like of shape (n,), optional
            Positive per-sample weights; None gives every sample weight 1.

        Returns
        -------
        self : OvNClassifier
            The fitted estimator.
        """
        started = time.perf_counter()
        X, y, names, sample_weight = self._check_fit_input(X, y, sample_weight)
        Y, self.classes_, self.multilabel_ = membership(y, names)
        train = self._training_set(X, Y, sample_weight)
        self._say(f"targets: {train.Y.shape[0]} rows, {train.Y.shape[1]} of {Y.shape[1]} "
                  f"{'labels' if self.multilabel_ else 'classes'} fitted, negatives={self.negatives!r}")
        problem, feature_map = self._problem(train)
        result = self._solve(problem)
        self._set_solution(result, feature_map)
        self._learn_rule_and_calibrate(X, y, Y, sample_weight)
        self._say(f"fit done in {time.perf_counter() - started:.3g} s")
        return self

    def _check_fit_input(self, X, y, sample_weight):
        """(X, y, y's column names or None, sample weights) checked, each error naming its argument."""
        if self.solver.lower() not in FAST_SOLVERS:
            from .solvers.cvxpy_solver import check_solver
            check_solver(self.solver)
        validate_kernel(self.kernel)
        self._check_approximation()
        with naming("X"):
            # sparse X stays sparse (docs/theory.md §9.10); COO and the other scipy formats are converted to CSR
            check_no_dates("X", X)
            X = validate_data(self, X, accept_sparse=("csr", "csc"), dtype=np.float64)
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        reject_label_sets(y)
        names = getattr(y, "columns", None)
        with naming("y"):
            y = check_array(y, accept_sparse=("csr", "csc", "coo"), ensure_2d=False, dtype=None, input_name="y")
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"X and y must have the same number of samples, got {X.shape[0]} and {y.shape[0]}")
        return X, y, names, check_sample_weight(sample_weight, X.shape[0])

    def _problem(self, train):
        """The ``Problem`` of the training set (on the kernel approximation's features, if any) and the unfitted
        feature map (or None); β from ``beta`` and ``beta_scale``."""
        feature_map = self._feature_map(train.X)
        X = train.X
        if feature_map is not None:
            # one BLAS thread, as the solver: Nyström's SVD of its r×r block measured 14.6 s threaded, 1.0 s not
            # (r = 1000, 2 cores)
            with blas_controller().limit(limits=1, user_api="blas"):
                X = feature_map.fit_transform(X)
        kernel = self.kernel if feature_map is None else "linear"
        self.kernel_scale_ = kernel_scale(kernel, X, gamma=self.gamma, degree=self.degree, coef0=self.coef0,
                                          sample_weight=train.row_weight)
        beta = self._beta
        self.hinge_weight_ = beta / self.kernel_scale_ if self.beta_scale == "kernel" else beta
        alpha = 0.0 if self.variant.startswith("Hw") else self.alpha  # ignored by hard w: no warning per fit
        problem = Problem(X, train.Y, self.variant, kernel, alpha=alpha, beta=self.hinge_weight_,
                          bias_penalty=self._bias_penalty, gamma=self.gamma, degree=self.degree, coef0=self.coef0,
                          sample_weight=train.sample_weight, label_weight=train.label_weight,
                          negative_weight=train.negative_weight)
        self._say(f"problem: {self.variant}, kernel={kernel!r}, alpha={float(alpha):g}, beta={beta:g} "
                  f"(kernel scale {self.kernel_scale_:.4g}: hinge weight {self.hinge_weight_:.4g}), "
                  f"bias_penalty={self._bias_penalty:g}, negative_balance={self._negative_balance:g}, "
                  f"{problem.pairs.sample.size} pairs")
        return problem, feature_map

    def _set_solution(self, result, feature_map):
        """The fitted attributes of the solution: support, degenerate labels, coef_ (linear), the slim result."""
        self._check_result(result)
        self._say(f"solve: {_solve_summary(result, self.tol)}")
        # the training decision values once, for both (with an exact kernel each is an N×N kernel pass: measured,
        # scene's three RBF fold fits with their predictions took 0.47 s with two of them, 0.38 s with one), none
        # where the solver kept them (the dual decomposition: 0.34 of a 4.2 s default RBF fit at N = 5 000)
        F = (result.training_decision if result.training_decision is not None
             else training_decision(result.problem, result.coef, result.b))
        self.degenerate_labels_ = self._degenerate_labels(result, F)
        self.n_iter_ = result.iterations
        self._set_support(result, F)
        if result.problem.is_kernel or feature_map is not None:
            for stale in ("coef_", "intercept_"):  # from an earlier linear fit
                self.__dict__.pop(stale, None)
        else:
            self._set_linear_coef(result)
        # the fitted model keeps what prediction needs, not the training problem (its X, Gram matrix, factor)
        self.result_ = result.slim(feature_map)
        self._start = (result.problem.variant, result.problem.is_kernel, self.result_)  # for warm_start

    def _learn_rule_and_calibrate(self, X, y, Y, sample_weight):
        """``rule_`` (the learned rule, when ``_learns_rule``) and ``calibrators_`` (``probability``) from the
        out-of-fold decision values of the internal folds."""
        for stale in ("rule_", "rule_scores_", "rule_gain_", "rule_gain_error_", "calibrators_"):
            self.__dict__.pop(stale, None)  # from an earlier fit with other parameters
        if not (self._learns_rule or self.probability):
            return
        F, folds = self._out_of_fold(X, y, sample_weight)
        if self._learns_rule:
            learned = learn_rule(F, Y, self.rule_scoring, paper=self._paper_rule(), labels=self.fitted_labels_,
                                 sample_weight=sample_weight, selection=self.rule_selection, folds=folds, guard=True)
            self.rule_, self.rule_scores_ = learned.rule, learned.scores
            self.rule_gain_, self.rule_gain_error_ = learned.gain, learned.gain_error
            self._say(f"rule: {learned.rule.kind}; held-out gain over the paper's rule {learned.gain:+.4f} ± "
                      f"{learned.gain_error:.4f} (its standard error over the rows; the one-sided t-test at level "
                      f"{GUARD_LEVEL}): "
                      + ("the paper's rule kept" if learned.kept_paper else "learned rule used"))
        if self.probability:
            self._calibrate(F, Y, sample_weight)

    def _out_of_fold(self, X, y, sample_weight):
        """Out-of-fold decision values (n, K) of every training pattern (docs/theory.md §5.1) and the fold of each:
        one fit per fold of ``rule_cv``, ``n_jobs`` folds at a time."""
        # shuffled: the bundled multilabel files are sorted by label set, so contiguous folds would lack labels
        folds = KFold(self.rule_cv, shuffle=True, random_state=0) if isinstance(self.rule_cv, Integral) \
            else self.rule_cv
        # cold starts, so that the fold values do not depend on the full fit's solution: from it the MM fold fits
        # were measured slower and the dual decomposition's 5–15 % faster (docs/benchmarks/defaults.md, "The rule
        # search")
        fold_model = clone(self).set_params(decision_rule="paper", probability=False, warm_start=False, verbose=0,
                                            n_jobs=None)
        n_rows = X.shape[0]
        with naming("rule_cv"):
            splits = [(_split_rows(train, n_rows), _split_rows(test, n_rows)) for train, test in folds.split(X, y)]
        splits = [(train, test) for train, test in splits if test.size]  # an empty fold predicts nothing
        fold_of = _fold_of(splits, n_rows)
        fits = parallel_map(_FoldFit(fold_model, X, y, sample_weight), list(enumerate(splits)),
                            n_jobs=self.n_jobs or 1)
        F = np.full((X.shape[0], self.classes_.size), NEVER)
        for fold, ((_, test), (classes, values, summary)) in enumerate(zip(splits, fits)):
            # an indicator matrix keeps its K columns in a fold (without a DataFrame's names: classes are 0..K−1);
            # 1-D y: a fold can miss a class (its values stay NEVER, as a label left out of a fold fit)
            columns = np.arange(self.classes_.size) if self.multilabel_ else np.searchsorted(self.classes_, classes)
            F[np.ix_(test, columns)] = values
            self._say(f"fold {fold + 1}/{len(splits)}: {summary}")
        return F, fold_of

    def _calibrate(self, F, Y, sample_weight):
        """``calibrators_``: Platt's sigmoid (``rules.PlattSigmoid``, all labels in one fit) or scikit-learn's isotonic
        regression of membership on the out-of-fold decision values, one per fitted label (binary: one, on
        (f_2 − f_1)/2)."""
        if self._binary:
            values, member = 0.5 * (F[:, [1]] - F[:, [0]]), Y[:, [1]] == 1
        else:
            values, member = F[:, self.fitted_labels_], Y[:, self.fitted_labels_] == 1
        self.calibrators_ = fit_calibrators(values, member, sample_weight, self.calibration)

    @property
    def _precomputed(self):
        return isinstance(self.kernel, str) and self.kernel == "precomputed"

    def _check_approximation(self):
        approximation = self.kernel_approximation
        if approximation == "rff" and not (isinstance(self.kernel, str) and self.kernel == "rbf"):
            raise ValueError(f"kernel_approximation='rff' (random Fourier features) approximates the RBF kernel "
                             f"only; got kernel={self.kernel!r}: use kernel='rbf' or kernel_approximation='nystroem'")
        if approximation == "nystroem" and not (isinstance(self.kernel, str) and self.kernel in NYSTROEM_KERNELS):
            raise ValueError(f"kernel_approximation='nystroem' needs one of the kernels {NYSTROEM_KERNELS}, got "
                             f"kernel={self.kernel!r} (scikit-learn's Nystroem calls a callable kernel pair by "
                             "pair, and a precomputed matrix has no rows to build the map from)")
        if self.landmarks != "random" and approximation != "nystroem":
            raise ValueError(f"landmarks is a parameter of kernel_approximation='nystroem', got "
                             f"kernel_approximation={approximation!r}")
        if self.n_landmarks is not None:
            if approximation != "nystroem":
                raise ValueError(f"n_landmarks is a parameter of kernel_approximation='nystroem', got "
                                 f"kernel_approximation={approximation!r}")
            if self.n_landmarks < self.n_components:
                raise ValueError(f"n_landmarks must be at least n_components (the rank kept), got "
                                 f"n_landmarks={self.n_landmarks}, n_components={self.n_components}")

    def _feature_map(self, X):
        """The unfitted scikit-learn map of ``kernel_approximation`` for the training patterns X, or None;
        gamma is resolved on X as for the exact kernel."""
        if self.kernel_approximation is None:
            return None
        gamma = resolve_gamma(self.gamma, X)
        if self.kernel_approximation == "rff":
            return RBFSampler(gamma=gamma, n_components=self.n_components, random_state=self.random_state)
        # Nyström from n_landmarks (default n_components) landmarks: at most as many as training rows
        rank = min(self.n_components, X.shape[0])
        landmarks = min(self.n_landmarks or rank, X.shape[0])
        common = {"gamma": gamma, "coef0": self.coef0, "degree": self.degree, "n_components": landmarks,
                  "random_state": self.random_state}
        if self.landmarks == "kmeans":
            nystroem = KMeansNystroem(self.kernel, **common)
        else:  # n_jobs=1: not split under an active joblib backend (kernels.kernel_matrix)
            nystroem = Nystroem(self.kernel, n_jobs=1, **common)
        if landmarks == rank:
            return nystroem
        # the r leading right singular vectors of the training features: no centring (PCA's would move the biases)
        return Pipeline([("nystroem", nystroem),
                         ("rank", TruncatedSVD(rank, algorithm="arpack", random_state=self.random_state))])

    def _solve(self, problem):
        method = self.solver.lower()
        if method not in FAST_SOLVERS:
            return solve(problem, method="cvxpy", solver=self.solver, verbose=self.verbose >= 2)
        start = None
        if self.warm_start and hasattr(self, "_start"):
            variant, is_kernel, previous = self._start
            if (variant, is_kernel, previous.coef.shape) == (problem.variant, problem.is_kernel, problem.coef_shape):
                start = replace(previous, problem=problem)  # the previous solution as a start for this problem
        if method == "smo" or (method == "auto" and (problem.is_kernel or _dual_descent_first(problem))):
            dual_fits = start is not None and start.dual is not None and start.dual.shape == problem.coef_shape
            if problem.is_kernel:
                options = {"cache_size": self.cache_size}
            else:
                options = {"max_iter": AUTO_DCD_ROUNDS} if method == "auto" else {}
            result = solve(problem, method="smo", gap_tol=self.tol, warm_start=start if dual_fits else None,
                           verbose=self.verbose >= 2, **options)
            if result.success or method == "smo":
                return result
            start = result  # "auto": the MM solver finishes, from this point, what the decomposition could not prove
        return solve(problem, method="mm", gap_tol=self.tol, max_iter=self.max_iter, warm_start=start,
                     verbose=self.verbose >= 2)

    def _check_result(self, result):
        where = f"{result.method}/{result.solver}"
        if not result.has_solution:
            raise RuntimeError(f"{where} produced no solution (status {result.status!r}"
                               + (f": {result.info['error']}" if "error" in result.info else "") + ")")
        if not result.success:
            if result.method in FAST_SOLVERS:
                hint = (f"its proven bound on (F − F*)/max(1, |F|) is {result.relative_gap_bound:.2g}, "
                        f"above tol={self.tol:g}; increase tol or max_iter, or try a CVXPY solver")
            else:
                hint = "try another solver"
            warnings.warn(f"{where} did not reach the requested accuracy (status {result.status!r}, "
                          f"{result.iterations} iterations): {hint}", ConvergenceWarning, stacklevel=3)

    def _degenerate_labels(self, result, F):
        """The fitted columns with constant training decision values F (w_k ≈ 0), with a warning that says what they
        do to predictions."""
        spread = np.ptp(F, axis=0)
        constant = spread <= TRIVIAL_SPREAD
        if constant.all():
            # measured on labels the features do not explain: a larger beta keeps W = 0 either way (no known
            # negatives: W = 0, b = 1 has no hinge loss at all)
            fix = ("use hard biases (variant 'SwHb' or 'HwHb': Σ_k b_k = 0 rules out every b_k = 1) or give every "
                   "label known negatives (negatives='rest')" if self.negatives == "none"
                   else "raise negative_balance towards 1 (a label's negatives then weigh more like its positives)")
            warnings.warn(f"the solution is trivial: the decision values are the same for every training "
                          f"pattern (spread {spread.max():.2g}, ‖W‖ ≈ 0; docs/theory.md §3.4); every pattern gets the "
                          f"same prediction. A larger beta does not change that; to fix it, {fix}.",
                          DegenerateLabelWarning, stacklevel=4)
        elif constant.any():
            labels = self.fitted_labels_[constant]
            # measured (make_multilabel_classification, 6 labels, 3 seeds, 5 of 6 labels degenerate): known negatives
            # left 0, 2 and 0; β 0.25 left 1, 5, 5; β 16 left 6, 5, 5
            fix = ("give every label known negatives (negatives='rest'); a larger beta does not (it can make more "
                   "labels degenerate)" if self.negatives == "none"
                   else "raise negative_balance towards 1 (a label's negatives then weigh more like its positives; "
                        "neither beta nor, for a label matrix, class_weight changes that balance, docs/theory.md §5)")
            values = ", ".join(f"b = {b:.7g} for {k!r}" for k, b in zip(self.classes_[labels].tolist(),
                                                                         result.b[constant]))
            warnings.warn(f"label(s) {self.classes_[labels].tolist()} are degenerate: their decision values are the "
                          f"same for every training pattern (w_k ≈ 0, spread ≤ {TRIVIAL_SPREAD:g}; f_k ≈ b_k: "
                          f"{values}). The threshold rule gives each of them to every pattern or to none, by b_k "
                          f"against the threshold (a value within {TIE_TOL:g}·max(1, |threshold|) below it counts as "
                          "on it, so round-off does not decide); the argmax ranks them the same everywhere. "
                          f"See degenerate_labels_ (docs/theory.md §5). To fix it, {fix}.", DegenerateLabelWarning,
                          stacklevel=4)
        return self.fitted_labels_[constant]

    def _set_support(self, result, F):
        """``support_`` and ``n_support_``: the pairs on or inside the margin by the training decision values F."""
        problem = result.problem
        pairs = problem.pairs
        support = pair_residuals(problem, F) >= -SUPPORT_TOL
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
        """f_k(x), shape (n, K); binary 1-D y: (f_2 − f_1)/2, shape (n,), positive for ``classes_[1]``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, M)
            Patterns; for ``kernel="precomputed"`` the (n, N) kernel matrix against the training patterns.

        Returns
        -------
        ndarray of shape (n, K) or (n,)
            The decision values.
        """
        F = self._decision(X)
        if self._binary:
            return 0.5 * (F[:, 1] - F[:, 0])
        return F

    def _decision(self, X):
        """f_k(x) of all K columns, shape (n, K), binary included."""
        check_is_fitted(self)
        shape = getattr(X, "shape", None)
        if (shape[0] if shape else len(X) if isinstance(X, (list, tuple)) else None) == 0:
            raise ValueError(f"X has no rows (shape {shape or (0,)}): decision_function, predict and predict_proba "
                             "need at least one pattern")
        with naming("X"):
            check_no_dates("X", X)
            X = validate_data(self, X, accept_sparse=("csr", "csc"), dtype=np.float64, reset=False)
        if self._precomputed:
            X = X[:, self._train_index]
        return self._embed(self.result_.decision_function(X), NEVER)

    def _paper_rule(self):
        return DecisionRule(self.threshold, fallback=self.fallback == "argmax")

    def predict(self, X):
        """Class labels (argmax, docs/theory.md §5), or for an indicator-matrix fit a 0/1 matrix (n, K): ``rule_``
        (``decision_rule="cv"``), else {k : f_k(x) >= threshold}, or the argmax label when that set is empty and
        ``fallback="argmax"``; every comparison up to ``TIE_TOL``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, M)
            Patterns; for ``kernel="precomputed"`` the (n, N) kernel matrix against the training patterns.

        Returns
        -------
        ndarray of shape (n,) or (n, K)
            The predicted class labels, or the 0/1 label matrix.
        """
        F = self._decision(X)
        if not self.multilabel_:
            return self.classes_[np.argmax(predict_labels(F, multilabel=False), axis=1)]
        rule = getattr(self, "rule_", None) or self._paper_rule()
        return rule.predict(F).astype(int)

    @available_if(lambda self: self.probability)
    def predict_proba(self, X):
        """Calibrated probabilities (``probability=True``), shape (n, K): multiclass and binary rows sum to 1 (the
        per-class calibrated values normalized, as ``CalibratedClassifierCV``); multilabel: P(label k) per label,
        0 for a label left out of the fit.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, M)
            Patterns; for ``kernel="precomputed"`` the (n, N) kernel matrix against the training patterns.

        Returns
        -------
        ndarray of shape (n, K)
            The calibrated probabilities.
        """
        check_is_fitted(self, "calibrators_")
        F = self._decision(X)
        if self._binary:
            p = self.calibrators_[0].predict(0.5 * (F[:, 1] - F[:, 0]))
            return np.column_stack([1.0 - p, p])
        P = np.zeros(F.shape)
        for k, model in zip(self.fitted_labels_, self.calibrators_):
            P[:, k] = model.predict(F[:, k])
        if self.multilabel_:
            return P
        total = P.sum(axis=1, keepdims=True)
        return np.where(total > 0, P / np.where(total > 0, total, 1.0), 1.0 / P.shape[1])



@dataclass(frozen=True)
class _TrainingSet:
    """The rows that enter the problem: patterns, signed targets of the fitted labels, pair weights per row, per
    label and per label's negatives, and the rows' own sample weights (without class weights)."""

    X: object
    Y: np.ndarray
    sample_weight: np.ndarray
    label_weight: np.ndarray
    negative_weight: np.ndarray
    row_weight: np.ndarray


def _rows(X, rows, pairwise: bool, columns=None):
    """The rows ``rows`` of X (dense or sparse); a precomputed kernel (``pairwise``): also its columns ``columns``
    (default: the same rows), the kernel against those training rows."""
    X = X[rows]
    return X[:, rows if columns is None else columns] if pairwise else X


class _FoldFit:
    """One internal fold's fit (picklable, for ``parallel_map``): the fold model fitted on the other folds' rows,
    returning its classes, the decision values of the fold's rows and a one-line summary of its solve."""

    def __init__(self, model, X, y, sample_weight):
        self.model, self.X, self.y, self.sample_weight = model, X, y, sample_weight

    def __call__(self, numbered_split):
        fold, (train, test) = numbered_split
        pairwise = self.model._precomputed
        with warnings.catch_warnings():  # the full fit reports its own degenerate labels, once
            warnings.simplefilter("ignore", DegenerateLabelWarning)
            try:
                model = self.model.fit(_rows(self.X, train, pairwise), self.y[train],
                                       sample_weight=self.sample_weight[train])
            except ValueError as err:  # the full fit succeeded: what fails is this fold's part of the rows
                raise ValueError(f"rule_cv: internal fold {fold + 1} cannot be fitted on its training part "
                                 f"({len(train)} rows): {err}. Every fold's training part needs rows of positive "
                                 "sample_weight with a positive example of at least 2 classes (labels): use fewer "
                                 "folds, or a splitter that spreads the rows of every label") from err
        return model.classes_, model._decision(_rows(self.X, test, pairwise, columns=train)), \
            _solve_summary(model.result_, model.tol)


def _split_rows(part, n_rows: int) -> np.ndarray:
    """A part of a ``rule_cv`` split as row indices. scikit-learn's splitters yield indices; a custom one may yield a
    boolean mask, which scikit-learn's indexing (``_safe_indexing``) also takes: its rows, once, so that an empty part
    is empty by its size; a ValueError naming ``rule_cv`` when a mask is not one entry per row."""
    part = np.asarray(part)
    if part.dtype != bool:
        return part
    if part.shape != (n_rows,):
        raise ValueError(f"rule_cv's splitter yielded a boolean mask of shape {part.shape}; a mask must have one entry "
                         f"per row ({n_rows},)")
    return np.flatnonzero(part)


def _fold_of(splits, n_rows: int) -> np.ndarray:
    """The internal fold of every row, the test part ``splits`` (non-empty, as (train, test) index arrays) put it in;
    a ValueError naming ``rule_cv`` unless the test parts hold every row exactly once, in at least 2 folds (the
    out-of-fold decision values need a value of every row, and one only)."""
    fold_of = np.full(n_rows, -1)
    times = np.zeros(n_rows, dtype=np.intp)
    for fold, (_, test) in enumerate(splits):
        fold_of[test] = fold
        np.add.at(times, test, 1)
    if len(splits) < 2 or (times != 1).any():
        raise ValueError(f"rule_cv must split the {n_rows} rows into test folds that hold every row exactly once, at "
                         f"least 2 non-empty (as KFold does): the out-of-fold decision values of the learned rule and "
                         f"of probability=True come from them; got {len(splits)} non-empty test fold(s), "
                         f"{(times == 0).sum()} row(s) in none, {(times > 1).sum()} in several")
    return fold_of


def balance_weights(Y, sample_weight, power: float) -> tuple[np.ndarray, np.ndarray]:
    """(scale, negative_weight) of ``negative_balance`` = ``power`` p for the signed targets Y (N×K; 1, −1, 0) and
    the rows' weights: label k's negative pairs weigh ρ_k = (P_k/N_k)^p each, and all its pairs are scaled by
    (P_k + N_k)/(P_k + ρ_k N_k) to keep their total (P_k, N_k: the weights of its positive and negative rows; ρ_k = 1
    for a label without negatives) — ``Problem``'s ``negative_weight`` and a factor of its ``label_weight``. Every
    label needs a positive row of positive weight (as every ``Problem`` class does)."""
    positive = sample_weight @ (Y == 1)
    negative = sample_weight @ (Y == -1)
    ratio = np.divide(positive, negative, out=np.ones_like(positive), where=negative > 0) ** power
    return (positive + negative) / (positive + ratio * negative), ratio


def _dual_descent_first(problem) -> bool:
    """Whether ``solver="auto"`` starts a linear problem with the dual coordinate descent: sparse, wide data (the
    MM solver's matrix-free case) with at most AUTO_DCD_FEATURES features per pair."""
    return sparse_and_wide(problem) and problem.n_features <= AUTO_DCD_FEATURES * len(problem.pairs)


def _solve_summary(result, tol) -> str:
    """The solve in one line: method, status, iterations, time and the proven bound against ``tol``."""
    bound = result.relative_gap_bound
    return (f"{result.method}/{result.solver} {result.status} after {result.iterations} iterations, "
            f"{result.solve_time:.3g} s; proven bound on (F − F*)/max(1, |F|) {bound:.2g} (tol {float(tol):g})")


def kernel_scale(kernel, X, *, gamma="scale", degree=3, coef0=0.0, sample_weight=None) -> float:
    """κ₀ = mean_i κ(x_i, x_i), the size of the kernel on the training rows X (weighted by ``sample_weight``: a row of
    weight 2 counts as two rows): 1 for the Gaussian kernel, the mean ‖x‖² for the linear one (M on standardized
    data), the mean diagonal of a precomputed Gram matrix. Scaling a kernel by s and β by 1/s gives the same decision
    function, so β/κ₀ means the same regularisation on every data set (``beta_scale="kernel"``). 1 when the mean is
    not positive (a sigmoid kernel can give that). A polynomial kernel whose values overflow on X raises a ValueError
    naming gamma, degree and coef0."""
    if isinstance(kernel, str) and kernel == "precomputed":
        if X.shape[0] != X.shape[1]:
            raise ValueError(f"X must be the square kernel matrix of the training rows for kernel='precomputed', got "
                             f"shape {X.shape}")
        diagonal = X.diagonal()
    elif callable(kernel):
        diagonal = [kernel_matrix(kernel, X[i:i + 1], X[i:i + 1])[0, 0] for i in range(X.shape[0])]
    else:
        norms = np.asarray(X.multiply(X).sum(axis=1)).ravel() if sp.issparse(X) else np.einsum("ij,ij->i", X, X)
        g = resolve_gamma(gamma, X)
        diagonal = {"linear": lambda: norms, "rbf": lambda: np.ones_like(norms),
                    "poly": lambda: poly_diagonal(norms, g, degree, coef0),
                    "sigmoid": lambda: np.tanh(g * norms + coef0)}[kernel]()
    scale = float(np.average(diagonal, weights=sample_weight))
    return scale if np.isfinite(scale) and scale > 0 else 1.0
