"""The reference: the CVXPY formulations solved by a conic/QP solver (Clarabel, ECOS, OSQP, SCS, ...)."""
from __future__ import annotations

import functools
import time

import cvxpy as cp
import numpy as np

from ..exceptions import SolverNotAvailable
from ..formulations import Formulation, build
from ..objective import objective
from ..problem import Problem
from ..result import SolveResult

DEFAULT_SOLVER = "CLARABEL"
#: Clarabel's options for a tight reference (gaps and feasibility 1e-10): at its defaults Clarabel leaves
#: |Δf| up to ~1e-4 on the suite's problems, while the certified MM solutions are exact to round-off
TIGHT_CLARABEL = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10, "tol_ktratio": 1e-8}


@functools.lru_cache(maxsize=1)
def installed_solvers() -> tuple[str, ...]:
    """CVXPY's installed solvers, asked once (the query imports every back end: ~20 ms)."""
    return tuple(cp.installed_solvers())


def check_solver(solver: str | None) -> str:
    """Upper-cased CVXPY solver name; :class:`~ovn_cvx.exceptions.SolverNotAvailable` for unknown or
    not-installed solvers."""
    if solver is None:
        return DEFAULT_SOLVER
    if not isinstance(solver, str):
        raise TypeError(f"solver must be a string, got {type(solver).__name__}")
    name = solver.upper()
    installed = installed_solvers()
    if name not in installed:
        raise SolverNotAvailable(solver, installed, known=name in {s.upper() for s in cp.settings.SOLVERS})
    return name


def solve_cvxpy(problem: Problem, solver: str | None = None, *, parametrization: str | None = None,
                formulation: Formulation | None = None, **options) -> SolveResult:
    """Solve with CVXPY. ``options`` go to ``cvxpy.Problem.solve`` (hence to the solver).

    ``parametrization`` (kernel problems): "eigen" (default) or "coef", see :func:`ovn_cvx.formulations.build`.
    Pass a ``formulation`` built for the same data to re-use its compiled problem (a sweep).
    Solver errors and inaccurate statuses are returned as such, never as "optimal".
    """
    name = check_solver(solver)
    if formulation is None:
        formulation = build(problem, parametrization)
    else:
        formulation.update(problem)
    cvx = formulation.cvx
    info = {"parametrization": formulation.parametrization}
    start = time.perf_counter()
    try:
        cvx.solve(solver=name, **options)
        status = cvx.status
    except cp.error.SolverError as err:
        status, info["error"] = "solver_error", str(err)
    wall = time.perf_counter() - start
    compile_time = float(getattr(cvx, "compilation_time", None) or 0.0)
    stats = cvx.solver_stats if status != "solver_error" else None
    solve_time = stats.solve_time if stats is not None and stats.solve_time is not None else wall - compile_time
    coef, b = formulation.solution() if status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE, cp.USER_LIMIT) \
        else (None, None)
    if coef is not None:
        info["cvxpy_value"] = float(cvx.value)
    value = objective(problem, coef, b) if coef is not None else np.nan
    return SolveResult(problem=problem, coef=coef, b=b, objective=value, status=status, method="cvxpy",
                       solver=name, solve_time=float(solve_time), compile_time=compile_time,
                       iterations=getattr(stats, "num_iters", None), info=info)
