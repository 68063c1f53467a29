"""The eight OvN problems as explicit sparse quadratic programs, for any QP solver (docs/theory.md §6).

:func:`export` writes ``problem`` in the variables x = (vec Z, b, ξ), with vec Z column by column (z_1, …, z_K),
Z = W (linear) or the eigen-coordinates C of the kernel problem (the features are then L of G ≈ L Lᵀ, as in
the CVXPY ``"eigen"`` parametrization, docs/theory.md §4.2b) and ξ the n hinge slacks, in the form that
``qpsolvers`` expects::

    minimize   ½ xᵀ P x + qᵀ x
    subject to G x ≤ h,   A x = b,   lb ≤ x ≤ ub

with P = blkdiag(P_K ⊗ I_d, 2γ 11ᵀ (soft b) or 0, 0), q = (0, 0, c), one row of G per pair
(−y_p(φ_{i_p}ᵀ z_{k_p} + b_{k_p}) − ξ_p ≤ −1), A the hard constraints (Σ_k z_k = 0, Σ_k b_k = 0) and the
bounds ξ ≥ 0 (the other bounds are infinite). At any feasible x with ξ_p = [r_p]_+ the QP objective is F.

:meth:`QP.solution` maps x back to (coef, b): coef = W, or A = ``problem.kernel_factor.to_coef(C)``.
:func:`solve_qp` solves the exported QP with Clarabel's own Python API (no CVXPY compilation) or any
``qpsolvers`` back end (the optional extra ``solvers``).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import scipy.sparse as sp

from ._validation import check_instance, check_number
from .exceptions import SolverNotAvailable
from .objective import objective
from .problem import Problem
from .result import SolveResult
from .solvers.bound import bound_fields
from .solvers.verdict import GAP_TOL

#: the QP solver that :func:`solve_qp` calls directly (a core dependency); any other name is a qpsolvers back end
DIRECT_SOLVER = "clarabel"


@dataclass(frozen=True)
class QP:
    """Sparse QP data of one OvN problem (qpsolvers' names) and the map back to its solution.

    ``n_coef`` = d·K entries of vec Z come first, then the K biases, then the n slacks.

    Parameters
    ----------
    P : scipy.sparse.csc_matrix
        The quadratic term of the objective ½ xᵀ P x + qᵀ x.
    q : ndarray of shape (n_variables,)
        The linear term of the objective.
    G : scipy.sparse.csc_matrix
        The inequality constraints G x ≤ h.
    h : ndarray
        Their right-hand side.
    A : scipy.sparse.csc_matrix or None
        The equality constraints A x = b (the hard constraints); None when there are none.
    b : ndarray or None
        Their right-hand side.
    lb : ndarray of shape (n_variables,)
        The lower bounds of x (0 for the slacks, −inf otherwise).
    ub : ndarray of shape (n_variables,)
        The upper bounds of x (inf).
    shape : tuple of int
        (d, K), the shape of Z.
    to_coef : callable
        Maps Z to the reported coefficients.

    Examples
    --------
    >>> import numpy as np, ovn_cvx
    >>> from ovn_cvx.datasets import make_data
    >>> from ovn_cvx.qp import export
    >>> problem = ovn_cvx.Problem(*make_data(n_samples=30, n_features=2))
    >>> qp = export(problem)
    >>> qp.n_coef, qp.n_variables                        # 2 x 3 weights, 3 biases, 30 slacks
    (6, 39)
    >>> x = np.concatenate([np.zeros(qp.n_coef + 3), np.ones(30)])   # W = 0, b = 0, every slack 1
    >>> qp.value(x), ovn_cvx.objective(problem, *qp.solution(x))
    (30.0, 30.0)
    """

    P: sp.csc_matrix
    q: np.ndarray
    G: sp.csc_matrix
    h: np.ndarray
    A: sp.csc_matrix | None
    b: np.ndarray | None
    lb: np.ndarray
    ub: np.ndarray
    shape: tuple[int, int]
    to_coef: Callable[[np.ndarray], np.ndarray]

    @property
    def n_coef(self) -> int:
        return self.shape[0] * self.shape[1]

    @property
    def n_variables(self) -> int:
        return self.q.size

    def value(self, x: np.ndarray) -> float:
        """½ xᵀ P x + qᵀ x.

        Parameters
        ----------
        x : ndarray of shape (n_variables,)
            A point of the QP.

        Returns
        -------
        float
            The QP's objective at ``x``.
        """
        return float(0.5 * x @ (self.P @ x) + self.q @ x)

    def solution(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(coef, b) of a QP point x: coef = W (linear) or the kernel coefficients A.

        Parameters
        ----------
        x : ndarray of shape (n_variables,)
            A point of the QP (vec Z, b, ξ).

        Returns
        -------
        coef : ndarray
            W (M × K) or the kernel coefficients A (N × K).
        b : ndarray of shape (K,)
            The biases.

        Raises
        ------
        ValueError
            When ``x`` has the wrong shape.
        """
        x = np.asarray(x, dtype=np.float64)
        if x.shape != (self.n_variables,):
            raise ValueError(f"x must have shape ({self.n_variables},), got {x.shape}")
        d, K = self.shape
        Z = x[:self.n_coef].reshape((d, K), order="F")
        return self.to_coef(Z), x[self.n_coef:self.n_coef + K].copy()


def export(problem: Problem) -> QP:
    """The QP of ``problem`` (any of the eight variants, linear or kernel).

    Parameters
    ----------
    problem : Problem
        The problem to export.

    Returns
    -------
    QP
        Sparse QP data ``P, q, G, h, A, b, lb, ub`` (qpsolvers' names) and :meth:`QP.solution`, the map back to
        (coef, b).

    Examples
    --------
    >>> import numpy as np, ovn_cvx
    >>> from ovn_cvx.qp import export
    >>> X = np.random.default_rng(0).normal(size=(20, 2))
    >>> qp = export(ovn_cvx.Problem.from_labels(X, X.argmax(axis=1)))
    >>> qp.P.shape == (qp.n_variables, qp.n_variables)
    True
    """
    check_instance("problem", problem, Problem)
    if problem.is_kernel:
        factor = problem.kernel_factor
        features, to_coef = factor.features, factor.to_coef
    else:
        features, to_coef = problem.X, (lambda Z: Z)
    d, K = features.shape[1], problem.n_classes
    pairs, n = problem.pairs, len(problem.pairs)
    n_coef = d * K
    bias_block = (sp.csc_matrix((K, K)) if problem.hard_b
                  else sp.csc_matrix(np.full((K, K), 2.0 * problem.bias_penalty)))
    P = sp.block_diag([sp.kron(sp.csc_matrix(problem.coupling), sp.identity(d)), bias_block,
                       sp.csc_matrix((n, n))], format="csc")
    q = np.concatenate([np.zeros(n_coef + K), problem.cost])
    # pair p: −y_p φ_{i_p}ᵀ z_{k_p} − y_p b_{k_p} − ξ_p ≤ −1
    sign = pairs.sign.astype(np.float64)
    if sp.issparse(features):  # a sparse X: its stored entries only, row p shifted to class k_p's columns
        entries = (sp.diags(-sign) @ features[pairs.sample]).tocoo()
        margin = sp.csc_matrix((entries.data, (entries.row, pairs.label[entries.row] * d + entries.col)),
                               shape=(n, n_coef))
    else:
        rows = np.repeat(np.arange(n), d)
        cols = (pairs.label[:, None] * d + np.arange(d)[None, :]).ravel()
        margin = sp.csc_matrix((-(sign[:, None] * features[pairs.sample]).ravel(), (rows, cols)), shape=(n, n_coef))
    bias = sp.csc_matrix((-sign, (np.arange(n), pairs.label)), shape=(n, K))
    G = sp.hstack([margin, bias, -sp.identity(n)], format="csc")
    h = -np.ones(n)
    equalities = []
    if problem.hard_w:  # Σ_k z_k = 0, one row per coordinate
        equalities.append(sp.hstack([sp.kron(np.ones((1, K)), sp.identity(d)), sp.csc_matrix((d, K + n))]))
    if problem.hard_b:  # Σ_k b_k = 0
        equalities.append(sp.hstack([sp.csc_matrix((1, n_coef)), np.ones((1, K)), sp.csc_matrix((1, n))]))
    A = sp.vstack(equalities, format="csc") if equalities else None
    b = np.zeros(A.shape[0]) if A is not None else None
    lb = np.concatenate([np.full(n_coef + K, -np.inf), np.zeros(n)])
    ub = np.full(n_coef + K + n, np.inf)
    return QP(P=P, q=q, G=G, h=h, A=A, b=b, lb=lb, ub=ub, shape=(d, K), to_coef=to_coef)


def _solve_clarabel(qp: QP, **settings) -> tuple[np.ndarray | None, str, int | None]:
    """Clarabel's Python API on the QP: equalities in the zero cone, G and the finite bounds in the
    nonnegative cone. Returns (x or None, status, iterations)."""
    import clarabel

    finite = np.flatnonzero(np.isfinite(qp.lb))
    bound_rows = sp.csc_matrix((-np.ones(finite.size), (np.arange(finite.size), finite)),
                               shape=(finite.size, qp.n_variables))
    blocks, rhs, cones = [], [], []
    if qp.A is not None:
        blocks.append(qp.A)
        rhs.append(qp.b)
        cones.append(clarabel.ZeroConeT(qp.A.shape[0]))
    blocks += [qp.G, bound_rows]
    rhs += [qp.h, -qp.lb[finite]]
    cones.append(clarabel.NonnegativeConeT(qp.G.shape[0] + finite.size))
    options = clarabel.DefaultSettings()
    options.verbose = False
    for key, value in settings.items():
        if not hasattr(options, key):
            raise ValueError(f"clarabel has no setting {key!r}")
        setattr(options, key, value)
    solver = clarabel.DefaultSolver(sp.triu(qp.P, format="csc"), qp.q, sp.vstack(blocks, format="csc"),
                                    np.concatenate(rhs), cones, options)
    out = solver.solve()
    status = str(out.status)
    ok = status in ("Solved", "AlmostSolved")
    return (np.asarray(out.x) if ok else None), ("optimal" if status == "Solved" else
                                                  "optimal_inaccurate" if ok else status.lower()), out.iterations


def _solve_qpsolvers(qp: QP, solver: str, **options) -> tuple[np.ndarray | None, str, int | None]:
    try:
        import qpsolvers
    except ImportError as err:  # the optional extra: pip install ovn-cvx[solvers]
        raise SolverNotAvailable(f"qpsolvers:{solver} (qpsolvers itself)", (), known=True,
                                 library="qpsolvers") from err
    if solver not in qpsolvers.available_solvers:
        raise SolverNotAvailable(f"qpsolvers:{solver}", tuple(qpsolvers.available_solvers), known=True,
                                 library="qpsolvers")
    data = qpsolvers.Problem(qp.P, qp.q, qp.G, qp.h, qp.A, qp.b, qp.lb, qp.ub)
    solution = qpsolvers.solve_problem(data, solver=solver, **options)
    found = solution.found and solution.x is not None and np.all(np.isfinite(solution.x))
    return (solution.x if found else None), ("optimal" if found else "solver_error"), None


def solve_qp(problem: Problem, solver: str = DIRECT_SOLVER, *, gap_tol: float = GAP_TOL, **options) -> SolveResult:
    """Export ``problem`` (:func:`export`) and solve the QP: ``solver="clarabel"`` calls Clarabel's Python API
    (``options`` are its settings, e.g. ``tol_gap_abs``); any other name is a ``qpsolvers`` back end ("piqp",
    "proxqp", "daqp", "highs", "cvxopt", "osqp", ...; ``options`` go to it). The status is "optimal" when the
    solver reports a solution whose proven bound (``gap_bound``, docs/theory.md §6) is within
    ``gap_tol``·max(1, |F|), "optimal_inaccurate" for a solution without that proof, else the solver's verdict; the
    objective is scored by :func:`ovn_cvx.objective`.

    Parameters
    ----------
    problem : Problem
        The problem to solve.
    solver : str, default=DIRECT_SOLVER
        "clarabel", or the name of a qpsolvers back end.
    gap_tol : float, default=1e-6
        The proven relative bound "optimal" requires.
    **options : dict
        The solver's settings.

    Returns
    -------
    SolveResult
        With ``method="qp"``; the objective by the exact evaluator.

    Raises
    ------
    TypeError
        When ``solver`` is not a string.
    SolverNotAvailable
        When the solver (or qpsolvers) is not installed.

    Examples
    --------
    >>> import ovn_cvx
    >>> from ovn_cvx.datasets import make_data
    >>> from ovn_cvx.qp import solve_qp
    >>> problem = ovn_cvx.Problem(*make_data(n_samples=30, n_features=2))
    >>> result = solve_qp(problem)                     # Clarabel on the exported QP
    >>> result.status, result.method, result.certified
    ('optimal', 'qp', True)
    """
    if not isinstance(solver, str):
        raise TypeError(f"solver must be a string, got {type(solver).__name__}")
    gap_tol = check_number("gap_tol", gap_tol, low=0, strict=True)
    start = time.perf_counter()
    qp = export(problem)
    compile_time = time.perf_counter() - start
    start = time.perf_counter()
    if solver == DIRECT_SOLVER:
        x, status, iterations = _solve_clarabel(qp, **options)
    else:
        x, status, iterations = _solve_qpsolvers(qp, solver, **options)
    solve_time = time.perf_counter() - start
    coef, b = qp.solution(x) if x is not None else (None, None)
    info = {"qp_value": qp.value(x)} if x is not None else {}
    proven = {"gap_tol": gap_tol}
    if x is not None:
        proven, certified, info["bound_time"] = bound_fields(problem, coef, b, gap_tol)
        if status == "optimal" and not certified:
            status = "optimal_inaccurate"
    return SolveResult(problem=problem, coef=coef, b=b, objective=objective(problem, coef, b) if x is not None
                       else np.nan, status=status, method="qp", solver=solver, solve_time=solve_time,
                       compile_time=compile_time, iterations=iterations, info=info, **proven)


__all__ = ["DIRECT_SOLVER", "QP", "export", "solve_qp"]
