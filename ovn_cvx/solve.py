"""``ovn_cvx.solve``: one entry point for every method."""
from __future__ import annotations

from ._validation import check_instance
from .problem import Problem
from .result import SolveResult

METHODS = ("cvxpy", "mm", "smo")


def solve(problem: Problem, method: str = "cvxpy", **options) -> SolveResult:
    """Solve an OvN problem.

    method="cvxpy": the reference; options ``solver`` ("CLARABEL" default, "ECOS", "OSQP", "SCS", ...),
    ``parametrization`` (kernels: "eigen" default, "coef"), ``formulation`` (re-use a compiled problem) and any
    option of ``cvxpy.Problem.solve``. method="mm": the fast solver (MM phases, the interior-point finish, a
    proven bound on F − F* behind every "optimal"; options of :func:`ovn_cvx.solvers.mm.solve_mm`). method="smo":
    dual decomposition as libsvm's, kernel rows on demand, the same proven bound (options of
    :func:`ovn_cvx.solvers.smo.solve_smo`). ``verbose=True`` (every method; default False) prints progress on
    stdout: the CVXPY solver's own output, or the fast solvers' lines per iteration, round and exact evaluation
    (never per pair step), the closing "done" line carrying the result's ``relative_gap_bound``.

    Parameters
    ----------
    problem : Problem
        The problem to solve.
    method : {"cvxpy", "mm", "smo"}, default="cvxpy"
        The solver family.
    **options : dict
        Options of the method, as above.

    Returns
    -------
    SolveResult
        The solution and the solver's report.

    Examples
    --------
    >>> import numpy as np, ovn_cvx
    >>> X = np.random.default_rng(0).normal(size=(30, 2))
    >>> problem = ovn_cvx.Problem.from_labels(X, np.arange(30) % 3, alpha=0.2)
    >>> result = ovn_cvx.solve(problem, method="mm")
    >>> result.status, result.certified
    ('optimal', True)
    >>> bool(result.relative_gap_bound <= result.gap_tol)   # the proven bound on (F - F*) / max(1, |F|)
    True
    >>> reference = ovn_cvx.solve(problem, method="cvxpy", solver="CLARABEL")
    >>> bool(abs(result.objective - reference.objective) <= 1e-5 * abs(reference.objective))
    True
    """
    check_instance("problem", problem, Problem)
    if method == "cvxpy":
        from .solvers.cvxpy_solver import solve_cvxpy
        return solve_cvxpy(problem, **options)
    if method == "mm":
        from .solvers.mm import solve_mm
        return solve_mm(problem, **options)
    if method == "smo":
        from .solvers.smo import solve_smo
        return solve_smo(problem, **options)
    raise ValueError(f"method must be one of {METHODS}, got {method!r}")
