"""Dual decomposition (libsvm's way) with a proven bound: ``ovn_cvx.solve(problem, method="smo")``
(docs/theory.md §9.14).

The dual of docs/theory.md §6 is solved a few multipliers at a time — pair steps within a class chosen with
second-order information, a step that moves every class's mass together, kernel rows computed on demand under a
memory budget and shared by all labels of a sample, shrinking — and every iterate is dual feasible, so the result
carries the bound F − D(μ) ≥ F − F*: ``status`` is "optimal" only when it is within ``gap_tol``·max(1, |F|).
Linear problems (``kernel="linear"``) are solved by dual coordinate descent on W (``linear.py``).
"""
from __future__ import annotations

import numpy as np

from ..._validation import check_instance, check_number
from ...problem import Problem
from ...result import SolveResult
from ..progress import Progress
from ..verdict import GAP_TOL
from .solver import FIRST_TOL, solve_kernel

__all__ = ["solve_smo"]


def _warm_dual(problem: Problem, warm_start) -> np.ndarray | None:
    """M = Y ∘ μ (N × K) of ``warm_start``: a previous result's dual point, or the array itself."""
    if warm_start is None:
        return None
    if isinstance(warm_start, SolveResult):
        dual = warm_start.dual
        if dual is None:
            raise ValueError(f"warm_start holds no dual point (a {warm_start.method!r} result with status "
                             f"{warm_start.status!r}); pass a result of method='smo' or an (N, K) array M = Y∘μ")
    else:
        dual = warm_start
    dual = np.asarray(dual, dtype=np.float64)
    shape = (problem.n_samples, problem.n_classes)
    if dual.shape != shape:
        raise ValueError(f"warm_start's dual point has shape {dual.shape}, the problem needs {shape}")
    if not np.isfinite(dual).all():
        raise ValueError("warm_start's dual point has non-finite entries (NaN or inf)")
    return dual


def solve_smo(problem: Problem, *, gap_tol: float = GAP_TOL, warm_start=None, verbose: bool = False,
              **options) -> SolveResult:
    """Solve ``problem`` by dual decomposition, with a proven bound on F − F*.

    Parameters
    ----------
    problem : Problem
        Any variant, α, pair signs and costs. Kernel problems are solved here (the options below); linear ones
        (``kernel="linear"``) by dual coordinate descent (``options`` go to
        :func:`~ovn_cvx.solvers.smo.linear.solve_linear`).
    tol : float > 0, optional
        The first violation tolerance (libsvm's ``tol``; default max(gap_tol, 1e-3)): the loop stops when no move has a
        slope above ``tol``; while the bound is not within ``gap_tol`` the tolerance is lowered (at least tenfold,
        aimed at gap_tol by the bound's measured proportion to it) and the loop continues.
    gap_tol : float > 0
        The requested accuracy: ``status`` is "optimal" (``success``) only when the proven bound F − D(μ) is
        ≤ gap_tol·max(1, |F|); else "max_iter" (step budget spent) or "inaccurate", with the bound in the result.
    max_iter : int > 0, default=10_000_000
        The budget of steps (pair and mass steps).
    cache_size : float > 0, default=200.0
        Memory for cached kernel rows, in MB (as ``SVC``'s); at least K + 2 rows are kept. When every row fits in
        double precision the rows are whole; otherwise, as libsvm's, they are kept in single precision and computed
        only at the samples the steps read (the proven bound never reads them).
    shrinking : bool, default=True
        libsvm's shrinking heuristic; the answer is checked on every pair either way.
    newton : bool, default=True
        When a round ends with the bound not yet within ``gap_tol``, Newton steps on the pairs strictly inside
        their box (P⁺ diagonal: soft w with α = 0; a dense system per class, within ``cache_size``), cut to keep the
        point dual feasible (:func:`~ovn_cvx.solvers.smo.newton.newton_steps`).
    warm_start : SolveResult or array of shape (N, K), optional
        A previous result of this solver (its dual point) or a dual point M = Y ∘ μ: clipped to the box, the class
        masses equalized, and continued from (e.g. along a β or α path, for refits on the same data).
    verbose : bool, default=False
        Progress on stdout, never a line per step: every ``REPORT_STEPS`` (10 000) steps the steps so far, the
        largest violation against the tolerance, the active and shrunk pairs and the mass steps ("smo steps");
        at the end of each tolerance's round the estimated relative bound and the Newton steps so far ("smo
        round"); at each exact evaluation F, D(μ) and the proven relative bound (F − D)/max(1, |F|) ("smo
        evaluation": the last one is the result's ``relative_gap_bound``). The same steps and answer as without.
        Linear problems: the lines of :func:`~ovn_cvx.solvers.smo.linear.solve_linear`.
    """
    check_instance("problem", problem, Problem)
    if not problem.is_kernel:
        from .linear import solve_linear
        return solve_linear(problem, gap_tol=gap_tol, warm_start=warm_start, verbose=verbose, **options)
    return _solve_kernel(problem, gap_tol=gap_tol, warm_start=warm_start, verbose=verbose, **options)


def _solve_kernel(problem: Problem, *, gap_tol, warm_start, verbose, tol=None, max_iter=10_000_000,
                  cache_size=200.0, shrinking=True, newton=True) -> SolveResult:
    """The kernel options checked, each error naming its option (an unknown one: Python's own TypeError)."""
    gap_tol = check_number("gap_tol", gap_tol, low=0, strict=True)
    tol = max(gap_tol, FIRST_TOL) if tol is None else check_number("tol", tol, low=0, strict=True)
    max_iter = check_number("max_iter", max_iter, low=1, integer=True)
    cache_size = check_number("cache_size", cache_size, low=0, strict=True)
    for name, flag in (("shrinking", shrinking), ("newton", newton)):
        if not isinstance(flag, (bool, np.bool_)):
            raise TypeError(f"{name} must be a bool, got {type(flag).__name__}")
    progress = Progress("smo", verbose)
    return solve_kernel(problem, tol=tol, gap_tol=gap_tol, max_iter=max_iter, cache_size=cache_size,
                        shrinking=bool(shrinking), newton=bool(newton), dual=_warm_dual(problem, warm_start),
                        progress=progress)
