"""The one result type every solver back end returns."""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp

from ._validation import float_array
from .kernels import kernel_product, resolve_gamma
from .problem import Problem

#: the status that means "a solution to the requested accuracy": CVXPY's solver verdict, or (fast solver) a
#: proven bound on F − F* within ``gap_tol`` (docs/theory.md §6)
SUCCESS_STATUSES = ("optimal",)
#: the report's entries that became typed fields of :class:`SolveResult` (read through ``info`` with a
#: DeprecationWarning for one release)
TYPED_KEYS = ("gap_bound", "relative_gap_bound", "dual_objective", "gap_tol", "certified", "form", "finish")


@dataclass(frozen=True)
class Predictor:
    """What prediction needs from a solution, and nothing else (no training Gram matrix, no other rows of X):
    f(x) = Wᵀ x + b (linear), or Σ_{i∈S} A_i κ(x_i, x) + b over the set S of training rows whose coefficients
    are not all zero (kernel; for "precomputed" only their column indices). A ``feature_map`` (a fitted
    scikit-learn transformer, e.g. a Nyström map) is applied to X first."""

    coef: np.ndarray
    b: np.ndarray
    n_features: int
    kernel: object = None  #: None: linear (coef = W)
    params: dict = field(default_factory=dict)  #: κ's gamma (resolved on the training data), degree, coef0
    support: np.ndarray | None = None  #: kernel: the rows S of the training set
    basis: np.ndarray | None = None  #: kernel (not precomputed): X[S]
    feature_map: object = None

    @classmethod
    def from_solution(cls, problem: Problem, coef: np.ndarray, b: np.ndarray, feature_map=None) -> "Predictor":
        if not problem.is_kernel:
            return cls(coef=coef, b=b, n_features=problem.n_features, feature_map=feature_map)
        # exact zeros: the rows of samples with μ_p = 0 of a dual-based solution (the MM polish, the pair form);
        # no threshold, since on a singular G a row of small coefficients can carry a real part of w
        support = np.flatnonzero((coef != 0).any(axis=1))
        precomputed = problem.is_precomputed
        gamma = problem.gamma if callable(problem.kernel) or precomputed else resolve_gamma(problem.gamma,
                                                                                              problem.X)
        return cls(coef=coef[support], b=b, n_features=problem.n_features, kernel=problem.kernel,
                   params={"gamma": gamma, "degree": problem.degree, "coef0": problem.coef0}, support=support,
                   basis=None if precomputed else problem.X[support], feature_map=feature_map)

    def decision_function(self, X_new) -> np.ndarray:
        """f_k(x) for every row of X_new (dense, or sparse CSR/CSC: never densified), shape (n, K)."""
        if self.feature_map is not None:
            X_new = self.feature_map.transform(X_new)
        X_new = float_array(X_new, "X", accept_sparse=("csr", "csc"))
        if X_new.shape[1] != self.n_features:
            what = "columns (a precomputed kernel against the training set)" if self.basis is None \
                and self.kernel is not None else "features"
            raise ValueError(f"X has {X_new.shape[1]} {what}, the problem has {self.n_features}")
        if self.kernel is None:
            return X_new @ self.coef + self.b
        if self.basis is None:  # precomputed (a sparse one: its n×|S| columns densified, the kernel values they are)
            G = X_new[:, self.support]
            G = G.toarray() if sp.issparse(G) else G
            return G @ self.coef + self.b
        return kernel_product(self.kernel, X_new, self.basis, self.coef, **self.params) + self.b


def within_gap_tol(relative_gap_bound: float, gap_tol: float | None) -> bool:
    """The one verdict on a proven bound: its relative value is within ``gap_tol`` (False without a tolerance, and
    for NaN)."""
    return gap_tol is not None and bool(relative_gap_bound <= gap_tol)


class ResultInfo(dict):
    """A result's free-form extras. Reading a key that became a typed field of :class:`SolveResult` (``gap_bound``,
    ``certified``, ``form``, ...) still answers, with a DeprecationWarning, from the values the result was made
    with."""

    def __init__(self, extras=(), typed=None):
        super().__init__(extras)
        self._typed = dict(typed or {})

    def _moved(self, key):
        warnings.warn(f"SolveResult.info[{key!r}] is deprecated: read the attribute SolveResult.{key}",
                      DeprecationWarning, stacklevel=3)
        return self._typed[key]

    def __missing__(self, key):
        if key in self._typed:
            return self._moved(key)
        raise KeyError(key)

    def get(self, key, default=None):
        if key not in self and key in self._typed:
            return self._moved(key)
        return super().get(key, default)


@dataclass
class SolveResult:
    """Solution of an OvN problem.

    ``coef`` is W (M×K) for the linear formulation and A (N×K) for kernels; ``objective`` comes from
    :func:`ovn_cvx.objective`, not from the solver. ``status`` is the solver's own verdict
    ("optimal", "optimal_inaccurate", "infeasible", "unbounded", "user_limit", "solver_error" for
    CVXPY; "optimal", "inaccurate" or "max_iter" for the fast solver, which says "optimal" only with a proven
    bound on F − F*, ``gap_bound``); only "optimal" counts as ``success``.
    When no solution was produced, ``coef`` and ``b`` are None and ``objective`` is NaN. A :meth:`slim` copy
    (a fitted ``OvNClassifier``'s ``result_``) has ``problem`` None: it keeps the solver's report, ``coef``, ``b``
    and what ``decision_function`` needs, not the training data. ``training_decision`` (set by the solver, not a
    parameter): f_k(x_i) on the training rows, N×K, when the solver kept them exact anyway (the dual decomposition of a
    kernel problem: from its G M, an N × N kernel pass saved), else None; a copy by ``dataclasses.replace`` or
    :meth:`slim` drops it.

    Parameters
    ----------
    problem : Problem or None
        The problem solved; None in a :meth:`slim` copy.
    coef : ndarray of shape (M, K) or (N, K), or None
        W (linear formulation) or A (kernel formulation); None when no solution was produced.
    b : ndarray of shape (K,) or None
        The biases; None when no solution was produced.
    objective : float
        The primal objective F of ``coef`` and ``b``, from :func:`ovn_cvx.objective`; NaN without a solution.
    status : str
        The solver's own verdict; only "optimal" counts as ``success``.
    method : str
        The method that solved the problem.
    solver : str
        The solver (back end) that solved the problem.
    solve_time : float
        Seconds spent solving.
    compile_time : float, default=0.0
        Seconds spent building the problem for the solver (CVXPY's compilation).
    iterations : int or None, default=None
        Iterations the solver reported, if any.
    history : ndarray or None, default=None
        Per-iteration values the solver recorded, if any.
    gap_bound : float, default=inf
        A proven upper bound on F − F* (docs/theory.md §6); inf when none.
    relative_gap_bound : float, default=inf
        ``gap_bound`` / max(1, |F|).
    dual_objective : float, default=nan
        D(μ) at the dual-feasible point behind the bound; NaN when none.
    gap_tol : float or None, default=None
        The tolerance on ``relative_gap_bound`` the status was judged against (None: not judged).
    form : str or None, default=None
        The form that solved the problem: "primal", "pair", "matrix-free" (MM), "smo" or "dcd" (dual decomposition,
        kernel or linear); None for other methods.
    finish : str or None, default=None
        The strategy that produced the answer (e.g. "interior", "interior + polish", "polish", "mm",
        "newton-cg"; "smo", "dcd", "dcd + polish").
    dual : ndarray of shape (N, K) or None, default=None
        The signed dual point M = Y∘μ behind the bound, or None.
    info : dict, default={}
        Free-form extras of the back end (counters, its own values).

    Examples
    --------
    >>> import numpy as np, ovn_cvx
    >>> X = np.random.default_rng(0).normal(size=(30, 2))
    >>> result = ovn_cvx.solve(ovn_cvx.Problem.from_labels(X, np.arange(30) % 3), method="mm")
    >>> result.success, result.coef.shape, result.b.shape
    (True, (2, 3), (3,))
    >>> result.decision_function(X[:4]).shape       # f_k(x) of new patterns
    (4, 3)
    """

    problem: Problem | None
    coef: np.ndarray | None
    b: np.ndarray | None
    objective: float
    status: str
    method: str
    solver: str
    solve_time: float
    compile_time: float = 0.0
    iterations: int | None = None
    history: np.ndarray | None = None
    gap_bound: float = math.inf
    relative_gap_bound: float = math.inf
    dual_objective: float = math.nan
    gap_tol: float | None = None
    form: str | None = None
    finish: str | None = None
    dual: np.ndarray | None = field(default=None, repr=False)
    info: dict = field(default_factory=dict)
    # f_k(x_i) on the training rows when the solver kept them exact (see the class docstring); not an init field, so
    # that ``dataclasses.replace`` (another problem or point) and :meth:`slim` drop it (a plain comment: a ``#:`` one
    # would render it as an attribute entry, validated through None's docstring)
    training_decision: np.ndarray | None = field(default=None, init=False, repr=False, compare=False)
    #: built on first use; not an init field, so that ``dataclasses.replace`` (another problem) drops it
    _predictor: Predictor | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self):
        self.info = ResultInfo(self.info, {key: getattr(self, key) for key in TYPED_KEYS})

    @property
    def certified(self) -> bool:
        """Whether the proven relative bound is within ``gap_tol`` (False without a tolerance, or for NaN)."""
        return within_gap_tol(self.relative_gap_bound, self.gap_tol)

    @property
    def success(self) -> bool:
        return self.status in SUCCESS_STATUSES and self.coef is not None

    @property
    def has_solution(self) -> bool:
        return self.coef is not None

    def _require_solution(self):
        if self.coef is None:
            raise RuntimeError(f"{self.method}/{self.solver} produced no solution (status {self.status!r}"
                               + (f": {self.info['error']}" if "error" in self.info else "") + ")")

    @property
    def predictor(self) -> Predictor:
        """The :class:`Predictor` of the solution (built on first use)."""
        self._require_solution()
        if self._predictor is None:
            self._predictor = Predictor.from_solution(self.problem, self.coef, self.b)
        return self._predictor

    def decision_function(self, X_new) -> np.ndarray:
        """f_k(x) for every row of X_new, shape (n, K): X_new W + 1bᵀ or κ(X_new, X_S) A_S + 1bᵀ over the training
        rows S with nonzero coefficients (the others add exact zeros).

        Parameters
        ----------
        X_new : array-like or sparse matrix of shape (n, M)
            New patterns (dense, or sparse CSR/CSC: never densified); for a precomputed kernel the (n, N) kernel
            matrix against the training patterns.

        Returns
        -------
        ndarray of shape (n, K)
            The decision values.
        """
        return self.predictor.decision_function(X_new)

    def slim(self, feature_map=None) -> "SolveResult":
        """A copy without the training problem (its data, Gram matrix and factor): the report, ``coef``, ``b`` and
        the :class:`Predictor`. ``feature_map``: a fitted transformer whose output the problem's X was (then
        ``decision_function`` takes the transformer's input).

        Parameters
        ----------
        feature_map : transformer or None, default=None
            A fitted transformer whose output the problem's X was; None when X was used as given.

        Returns
        -------
        SolveResult
            The copy, with ``problem`` None.
        """
        slim = replace(self, problem=None)
        if self.has_solution:
            slim._predictor = Predictor.from_solution(self.problem, self.coef, self.b, feature_map)
        return slim

    def __repr__(self) -> str:
        return (f"SolveResult(method={self.method!r}, solver={self.solver!r}, status={self.status!r}, "
                f"objective={self.objective:.10g}, iterations={self.iterations}, "
                f"solve_time={self.solve_time:.3g}s, compile_time={self.compile_time:.3g}s)")
