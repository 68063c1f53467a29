"""The methods, grids, metrics and the two evaluation protocols of the reproduction.

Protocols (both on the same splits, the same grids and the same metrics):

* **paper** — k-fold CV over the whole grid, report the best mean score (``GridSearchCV.best_score_``)
  and that candidate's fold-to-fold standard deviation. The hyperparameters are chosen on the same
  folds that score them, so this number is optimistically biased.
* **nested** — ``cross_validate(GridSearchCV(...))``: the grid search runs inside each outer training
  fold (inner k-fold CV), the outer test fold scores the refitted winner. An honest estimate.

Grids: the hinge weight is β for OvN and C = β/2 for every scikit-learn baseline (docs/theory.md §2/§7: scikit-learn
writes ½‖w‖² + C Σ hinge, the paper ‖w‖² + β Σ hinge), so both see the same regularisation path.
The paper's Gaussian kernel exp(−‖x−y‖²/(2σ²)) is scikit-learn's RBF with gamma = 1/(2σ²). σ is
searched on a grid of multiples of σ₀ = sqrt(M·Var(X)/2), the width of scikit-learn's ``gamma="scale"``.
"""
from __future__ import annotations

import math
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import hamming_loss, jaccard_score, make_scorer
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold, cross_validate
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, LinearSVC

KERNELS = ("linear", "rbf", "poly")
#: fixed parameters of a kernel, the same for OvN and the baselines: the paper's "polynomial, degree 2" read as
#: (⟨x, y⟩ + 1)² (scikit-learn's (gamma⟨x, y⟩ + coef0)^degree); only the Gaussian width is searched
FIXED_KERNEL_PARAMS = {"poly": {"degree": 2, "gamma": 1.0, "coef0": 1.0}}
TASKS = ("multiclass", "multilabel", "binary")


def sigma_to_gamma(sigma: float) -> float:
    """exp(−‖x−y‖²/(2σ²)) = exp(−gamma‖x−y‖²)  ⇔  gamma = 1/(2σ²).

    Parameters
    ----------
    sigma : float
        The Gaussian kernel's width σ > 0.

    Returns
    -------
    float
        gamma = 1/(2σ²).

    Examples
    --------
    >>> from ovn_cvx.experiments import sigma_to_gamma
    >>> sigma_to_gamma(2.0)                        # 1 / (2 * 2**2)
    0.125
    """
    if not sigma > 0:
        raise ValueError(f"sigma must be > 0, got {sigma}")
    return 1.0 / (2.0 * sigma * sigma)


def reference_sigma(X) -> float:
    """σ₀ with 1/(2σ₀²) = 1/(M·Var X), scikit-learn's ``gamma="scale"``."""
    X = np.asarray(X, dtype=float)
    var = X.var()
    return math.sqrt(X.shape[1] * (var if var > 0 else 1.0) / 2.0)


def reference_kernel_scale(X, kernel: str) -> float:
    """κ₀ = mean_i K(x_i, x_i), the size of the kernel on the data: 1 for the Gaussian kernel, the mean ‖x‖² for the
    linear one (M after standardisation), the mean (γ‖x‖² + c₀)^d for the polynomial one (:data:`FIXED_KERNEL_PARAMS`).

    Scaling a kernel by s and the hinge weight by 1/s gives the same decision function (w scales by 1/√s; the
    objective is divided by s), so a β grid of multiples of 1/κ₀ means the same regularisation on every data set.
    """
    X = np.asarray(X, dtype=float)
    norms = np.einsum("ij,ij->i", X, X)
    if kernel == "linear":
        scale = float(norms.mean())
    elif kernel == "poly":
        p = FIXED_KERNEL_PARAMS["poly"]
        scale = float(((p["gamma"] * norms + p["coef0"]) ** p["degree"]).mean())
    elif kernel == "rbf":
        scale = 1.0
    else:
        raise ValueError(f"kernel must be one of {KERNELS}, got {kernel!r}")
    return scale if scale > 0 else 1.0


@dataclass(frozen=True)
class Grid:
    """Hyperparameter grid shared by all methods (β ↔ C = β/2; σ ↔ gamma = 1/(2σ²)).

    ``beta`` are multiples of 1/κ₀ (:func:`reference_kernel_scale`: 1 for the Gaussian kernel, so there they are β
    itself); ``alpha`` is OvN's coupling (soft-w variants only), with no counterpart in the baselines;
    ``sigma_factors`` multiply σ₀ of :func:`reference_sigma`. Default: β·κ₀ = 2⁻³, 2⁻¹, …, 2⁹ (C·κ₀ = 2⁻⁴ … 2⁸,
    the libsvm guide's range in steps of 4), σ/σ₀ = ¼ … 4 (gamma from 16× to 1/16× scikit-learn's "scale"), and
    α = 0, ½, 0.9 (0.5–0.9: the paper's appendix range [1, 2) in our constants, docs/theory.md §2).

    Parameters
    ----------
    beta : tuple of float, default=(0.125, 0.5, 2.0, 8.0, 32.0, 128.0, 512.0)
        The values of β·κ₀, positive.
    sigma_factors : tuple of float, default=(0.25, 0.5, 1.0, 2.0, 4.0)
        The values of σ/σ₀, positive.
    alpha : tuple of float, default=(0.0, 0.5, 0.9)
        The values of OvN's α.

    Examples
    --------
    >>> from ovn_cvx.experiments import Grid
    >>> grid = Grid(beta=(0.5, 32.0))
    >>> grid.beta, grid.alpha                    # alpha keeps its default
    ((0.5, 32.0), (0.0, 0.5, 0.9))
    """

    beta: tuple[float, ...] = (0.125, 0.5, 2.0, 8.0, 32.0, 128.0, 512.0)
    sigma_factors: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 4.0)
    alpha: tuple[float, ...] = (0.0, 0.5, 0.9)

    def __post_init__(self):
        for name in ("beta", "sigma_factors"):
            values = getattr(self, name)
            if not values or any(not v > 0 for v in values):
                raise ValueError(f"{name} must be a non-empty tuple of positive numbers, got {values!r}")
        if not self.alpha:
            raise ValueError("alpha must be a non-empty tuple")

    def as_dict(self) -> dict:
        return {"beta*kappa0": list(self.beta), "C_sklearn*kappa0=beta*kappa0/2": [b / 2 for b in self.beta],
                "sigma/sigma0": list(self.sigma_factors), "alpha (OvN)": list(self.alpha)}


@dataclass(frozen=True)
class ClassifierSpec:
    """A classifier of the comparison (a "method" of the tables): how to build it and what its grid is called.

    ``build(kernel)`` returns an unfitted estimator (with the kernel's fixed :data:`FIXED_KERNEL_PARAMS`);
    ``c_name``/``gamma_name``/``alpha_name`` are its parameter names (None = not tuned); ``beta_to_c`` maps the
    shared β grid to the method's own C.
    """

    name: str
    build: Callable[[str], object]
    tasks: tuple[str, ...]
    kernels: tuple[str, ...] = KERNELS
    c_name: str = "C"
    beta_to_c: Callable[[float], float] = lambda beta: beta / 2.0
    gamma_name: str | None = None
    alpha_name: str | None = None

    def param_grid(self, kernel: str, grid: Grid, sigma0: float, kappa0: float = 1.0, prefix: str = "") -> dict:
        """The method's grid: β = factor/κ₀ (its own C through ``beta_to_c``), gamma = 1/(2(factor·σ₀)²), α."""
        params = {prefix + self.c_name: [self.beta_to_c(b / kappa0) for b in grid.beta]}
        if kernel == "rbf":
            if self.gamma_name is None:
                raise ValueError(f"{self.name} has no Gaussian kernel")
            params[prefix + self.gamma_name] = [sigma_to_gamma(f * sigma0) for f in grid.sigma_factors]
        if self.alpha_name is not None:
            params[prefix + self.alpha_name] = list(grid.alpha)
        return params


#: every OvNClassifier parameter the reproduction relies on that has a default, named so that a change of the
#: estimator's defaults cannot change the paper's model: no known negatives, the paper's rule f ≥ 1 with the argmax
#: fallback, every pair weighed alike, γ = 1, β as given (the grids are already multiples of 1/κ₀), the MM solver's
#: accuracy
PAPER_MODEL = {"negatives": "none", "negative_balance": 0.0, "decision_rule": "paper", "threshold": 1.0,
               "fallback": "argmax", "bias_penalty": 1.0, "beta_scale": "none", "alpha": 0.0, "beta": 1.0,
               "class_weight": None, "kernel_approximation": None, "tol": 1e-6, "max_iter": 10_000}


def _ovn_class():
    from ..estimator import OvNClassifier
    return OvNClassifier


def ovn_method(variant: str = "SwHb", solver: str | None = None, estimator_class=None) -> ClassifierSpec:
    """OvN as a :class:`ClassifierSpec`: β is tuned directly, α only for soft-w variants."""
    def build(kernel):
        cls = estimator_class or _ovn_class()
        kwargs = {"variant": variant, "kernel": kernel, **FIXED_KERNEL_PARAMS.get(kernel, {}), **PAPER_MODEL}
        if solver is not None:
            kwargs["solver"] = solver
        return cls(**kwargs)

    return ClassifierSpec("OvN", build, tasks=TASKS, c_name="beta", beta_to_c=float, gamma_name="gamma",
                          alpha_name=None if variant.startswith("Hw") else "alpha")


def baseline_methods() -> tuple[ClassifierSpec, ...]:
    """The scikit-learn baselines of the paper: one-vs-rest SVC, Crammer–Singer, binary relevance.

    One-vs-rest is ``OneVsRestClassifier(SVC)`` (``SVC`` alone is one-vs-one inside); on a 2-D
    indicator matrix the same estimator is binary relevance. Crammer–Singer exists in scikit-learn
    only as the linear ``LinearSVC(multi_class="crammer_singer")``.
    """
    def ovr(kernel):
        return OneVsRestClassifier(SVC(kernel=kernel, **FIXED_KERNEL_PARAMS.get(kernel, {})))

    def crammer_singer(kernel):
        if kernel != "linear":
            raise ValueError("Crammer-Singer is linear only in scikit-learn")
        return LinearSVC(multi_class="crammer_singer", max_iter=20000, random_state=0)  # liblinear shuffles

    return (
        ClassifierSpec("OvR-SVC", ovr, tasks=("multiclass", "binary"), c_name="estimator__C",
                       gamma_name="estimator__gamma"),
        ClassifierSpec("CS-LinearSVC", crammer_singer, tasks=("multiclass", "binary"), kernels=("linear",)),
        ClassifierSpec("BR-SVC", ovr, tasks=("multilabel",), c_name="estimator__C", gamma_name="estimator__gamma"),
    )


# --- metrics --------------------------------------------------------------------------------------
def _hamming(y_true, y_pred):
    return hamming_loss(y_true, y_pred)


def _example_accuracy(y_true, y_pred):
    # an empty true set predicted empty counts as a perfect match
    return jaccard_score(y_true, y_pred, average="samples", zero_division=1.0)


#: metric name -> (scorer, greater_is_better). Hamming loss of 1-D multiclass labels is 1 − accuracy
#: (scikit-learn's definition); on an indicator matrix it is the fraction of wrong label entries.
METRICS = {
    "accuracy": ("accuracy", True),
    "example_accuracy": (make_scorer(_example_accuracy), True),
    "hamming_loss": (make_scorer(_hamming, greater_is_better=False), False),
}
TASK_METRICS = {
    "multiclass": ("accuracy", "hamming_loss"),
    "binary": ("accuracy",),
    "multilabel": ("example_accuracy", "hamming_loss"),
}


def splitter(task: str, folds: int, seed: int):
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    if task == "multilabel":
        return KFold(folds, shuffle=True, random_state=seed)
    return StratifiedKFold(folds, shuffle=True, random_state=seed)


@dataclass
class Evaluation:
    """Scores of one method on one data set under both protocols (loss metrics as positive losses)."""

    paper: dict = field(default_factory=dict)         # metric -> (best mean, std over folds)
    metric_best: dict = field(default_factory=dict)   # metric -> (its own best mean over the grid, its params)
    nested: dict = field(default_factory=dict)        # metric -> (mean, std over outer folds)
    best_params: dict = field(default_factory=dict)   # paper protocol's winner
    nested_params: list = field(default_factory=list)  # winner of each outer fold
    edges: str = ""                                    # winners at the edge of the grid (see grid_edges)
    nested_models: list = field(default_factory=list)  # the refitted winner of each outer fold
    failed_fits: int = 0                               # NaN split scores (a fit that raised)
    predicted_sets: str | None = None                  # unseen-label set: the refitted model's test-point sets
    paper_point_sets: str | None = None                # ... and its sets at the paper's own test points
    seconds: float = 0.0
    best_estimator: object = None


def _signed(metric, values):
    # + 0.0 turns the −0.0 of a negated zero loss into 0.0
    return np.asarray(values, dtype=float) * (1.0 if METRICS[metric][1] else -1.0) + 0.0


@contextmanager
def expected_warnings_ignored():
    """Ignore the warnings that the reproduction's fits give by construction (the tables record their effect)."""
    with warnings.catch_warnings():
        # liblinear's Crammer–Singer may stop at max_iter; recorded as a deviation, not an error
        warnings.simplefilter("ignore", ConvergenceWarning)
        # expected on small folds: a label constant in a training fold (OneVsRestClassifier then predicts
        # it constantly), a class with fewer members than folds
        warnings.filterwarnings("ignore", message="Label .* is present in all training examples")
        warnings.filterwarnings("ignore", message="The least populated class in y has only")
        # by construction on the unseen-label set (label 0 is in every training pattern), and on separable
        # two-class sets where one class's w_k vanishes; the estimator's degenerate_labels_ records it
        warnings.filterwarnings("ignore", message=r"label\(s\) .* are degenerate")
        yield


def evaluate(estimator, param_grid: dict, X, y, *, task: str, folds: int = 3, seed: int = 0,
             nested: bool = True, n_jobs: int = 1, paper: bool = True) -> Evaluation:
    """Run the paper protocol (and the nested one) for one estimator and grid; ``paper=False`` runs the nested
    protocol alone (``paper``, ``metric_best``, ``best_params`` and ``best_estimator`` stay empty).

    Fits that raise are scored NaN (``error_score=np.nan``) and counted in ``failed_fits``; they never
    count as successes, and a NaN mean means the method failed on some fold.

    Parameters
    ----------
    estimator : estimator
        The scikit-learn estimator tuned.
    param_grid : dict
        The grid of :class:`~sklearn.model_selection.GridSearchCV`.
    X : array-like of shape (n, M)
        Patterns.
    y : array-like of shape (n,) or (n, K)
        Labels, or the label indicator matrix of a multilabel task.
    task : {"multiclass", "binary", "multilabel"}
        The task; it selects the metrics and the splitter (stratified except for multilabel).
    folds : int, default=3
        The number of cross-validation folds (outer and inner).
    seed : int, default=0
        The seed of the outer splits; the inner splits use ``seed + 1``.
    nested : bool, default=True
        Whether to run the nested protocol.
    n_jobs : int, default=1
        The number of joblib workers of the searches.
    paper : bool, default=True
        Whether to run the paper protocol.

    Returns
    -------
    Evaluation
        The scores of each protocol, the chosen parameters and models, the failed fits and the time.

    Examples
    --------
    >>> from ovn_cvx import OvNClassifier
    >>> from ovn_cvx.datasets import load_iris
    >>> from ovn_cvx.experiments import evaluate
    >>> X, y = load_iris(return_X_y=True)
    >>> result = evaluate(OvNClassifier(), {"beta": [1.0, 4.0]}, X, y, task="multiclass", nested=False)
    >>> result.best_params, sorted(result.paper), result.failed_fits
    ({'beta': 4.0}, ['accuracy', 'hamming_loss'], 0)
    """
    if not (paper or nested):
        raise ValueError("evaluate needs at least one protocol: paper=False requires nested=True")
    metrics = TASK_METRICS[task]
    scoring = {m: METRICS[m][0] for m in metrics}
    refit = metrics[0]
    cv = splitter(task, folds, seed)
    start = time.perf_counter()
    result = Evaluation()
    with expected_warnings_ignored():
        if paper:
            _paper_protocol(result, estimator, param_grid, X, y, metrics, cv, n_jobs)
        if nested:
            inner = GridSearchCV(estimator, param_grid, scoring=scoring, refit=refit,
                                 cv=splitter(task, folds, seed + 1), n_jobs=1, error_score=np.nan)
            outer = cross_validate(inner, X, y, cv=cv, scoring=scoring, n_jobs=n_jobs, return_estimator=True,
                                   error_score=np.nan)
            for m in metrics:
                scores = _signed(m, outer[f"test_{m}"])
                result.nested[m] = (float(scores.mean()), float(scores.std()))
            result.nested_params = [dict(e.best_params_) for e in outer["estimator"]]
            result.nested_models = [e.best_estimator_ for e in outer["estimator"]]
            result.failed_fits += int(sum(np.isnan(e.cv_results_[f"split{k}_test_{refit}"]).sum()
                                          for e in outer["estimator"] for k in range(folds)))
    result.edges = grid_edges(result.best_params, result.nested_params, param_grid)
    result.seconds = time.perf_counter() - start
    return result


def _paper_protocol(result: Evaluation, estimator, param_grid, X, y, metrics, cv, n_jobs):
    """The paper protocol's grid search on the folds ``cv``, written into ``result``."""
    refit = metrics[0]
    search = GridSearchCV(estimator, param_grid, scoring={m: METRICS[m][0] for m in metrics}, refit=refit, cv=cv,
                          n_jobs=n_jobs, error_score=np.nan)
    search.fit(X, y)
    best = search.best_index_
    cvr = search.cv_results_
    for m in metrics:
        result.paper[m] = (float(_signed(m, cvr[f"mean_test_{m}"][best])), float(cvr[f"std_test_{m}"][best]))
    result.failed_fits += int(sum(np.isnan(cvr[f"split{k}_test_{refit}"]).sum() for k in range(cv.n_splits)))
    for m in metrics:  # each metric's own maximum over the grid, possibly at other parameters
        top = int(np.nanargmax(cvr[f"mean_test_{m}"])) if np.isfinite(cvr[f"mean_test_{m}"]).any() else best
        result.metric_best[m] = (float(_signed(m, cvr[f"mean_test_{m}"][top])), dict(cvr["params"][top]))
    result.best_params = dict(search.best_params_)
    result.best_estimator = search.best_estimator_


def grid_edges(best: dict, nested: list[dict], param_grid: dict) -> str:
    """Which selected values sit on the edge of their grid axis (a wider grid might have chosen beyond it):
    "β max; nested: β max ×2/3" style text, "" when none. Axes with one value have no edge."""
    def at_edge(params):
        out = []
        for name, value in params.items():
            axis = param_grid.get(name, ())
            if len(axis) > 1 and value in (min(axis), max(axis)):
                out.append(f"{name.split('__')[-1]}={value:.3g} ({'min' if value == min(axis) else 'max'})")
        return out

    parts = at_edge(best)
    text = "protocol: " + ", ".join(parts) if parts else ""
    hits = [e for p in nested for e in at_edge(p)]
    if hits:
        counts = {e: hits.count(e) for e in dict.fromkeys(hits)}
        text += ("; " if text else "") + "nested: " + ", ".join(f"{e} ×{n}/{len(nested)}" for e, n in counts.items())
    return text


def with_scaler(estimator, param_grid: dict, standardize: bool):
    """Put a StandardScaler in front (a pipeline, so it is fitted inside each training fold)."""
    if not standardize:
        return estimator, param_grid
    pipe = Pipeline([("scale", StandardScaler()), ("model", estimator)])
    return pipe, {f"model__{k}": v for k, v in param_grid.items()}

