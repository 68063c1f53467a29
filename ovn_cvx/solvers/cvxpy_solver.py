"""The reference: the CVXPY formulations solved by a conic/QP solver (Clarabel, ECOS, OSQP, SCS, ...)."""
from __future__ import annotations

import functools
import time

import cvxpy as cp
import numpy as np

from ..exceptions import SolverNotAvailable
from .._validation import check_instance, check_number
from ..formulations import Formulation, build
from ..objective import objective
from ..problem import Problem
from ..result import SolveResult
from .bound import bound_fields
from .verdict import GAP_TOL

DEFAULT_SOLVER = "CLARABEL"
#: the relative proven bound a back end's "optimal" must reach to be reported as "optimal" (the fast solver's default)
#: Clarabel's options for a tight reference (gaps and feasibility 1e-10): at its defaults Clarabel leaves
#: |Δf| up to ~1e-4 on the suite's problems, while the certified MM solutions are exact to round-off
TIGHT_CLARABEL = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10, "tol_ktratio": 1e-8}

#: options of ``cvxpy.Problem.solve`` and its solvers whose type is known, checked before CVXPY sees them
BOOLEAN_OPTIONS = ("verbose", "warm_start", "ignore_dpp", "enforce_dpp")
COUNT_OPTIONS = ("max_iters", "max_iter")
POSITIVE_OPTIONS = ("eps", "eps_abs", "eps_rel", "abstol", "reltol", "feastol", "tol_gap_abs", "tol_gap_rel",
                    "tol_feas", "time_limit")


def check_options(options: dict) -> None:
    """A TypeError/ValueError naming the option for a known solver option of the wrong type or range
    (CVXPY would raise one that does not name it, or an OverflowError)."""
    for key, value in options.items():
        if key in BOOLEAN_OPTIONS and not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"solver option {key} must be True or False, got {value!r}")
        if key in COUNT_OPTIONS:
            check_number(f"solver option {key}", value, low=1, integer=True)
            if value > np.iinfo(np.int32).max:
                raise ValueError(f"solver option {key} must be at most {np.iinfo(np.int32).max}, got {value}")
        if key in POSITIVE_OPTIONS:
            check_number(f"solver option {key}", value, low=0, strict=True)


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
                formulation: Formulation | None = None, gap_tol: float = GAP_TOL, **options) -> SolveResult:
    """Solve with CVXPY. ``options`` go to ``cvxpy.Problem.solve`` (hence to the solver).

    ``parametrization`` (kernel problems): "eigen" (default) or "coef", see :func:`ovn_cvx.formulations.build`.
    Pass a ``formulation`` built for the same data to re-use its compiled problem (a sweep).
    Solver errors and inaccurate statuses are returned as such, never as "optimal". Every solution carries the
    proven bound of docs/theory.md §6 (``gap_bound``, from the multipliers recovered from the solver's point,
    :func:`ovn_cvx.kkt.primal_bound`): the back end's "optimal" is reported as "optimal" (``success``) only when
    that bound is within ``gap_tol``·max(1, |F|), else as "optimal_inaccurate" (``info["backend_status"]`` keeps the
    back end's word).
    """
    name = check_solver(solver)
    check_options(options)
    gap_tol = check_number("gap_tol", gap_tol, low=0, strict=True)
    if formulation is None:
        formulation = build(problem, parametrization)
    else:
        check_instance("formulation", formulation, Formulation).update(problem)
    cvx = formulation.cvx
    info = {"parametrization": formulation.parametrization}
    start = time.perf_counter()
    try:
        cvx.solve(solver=name, **options)
        status = cvx.status
    except cp.error.SolverError as err:
        status, info["error"] = "solver_error", str(err)
    except (TypeError, ValueError, OverflowError) as err:
        if not options:
            raise
        raise (TypeError if isinstance(err, TypeError) else ValueError)(
            f"{name} rejected the solver options {sorted(options)}: {err}") from err
    wall = time.perf_counter() - start
    compile_time = float(getattr(cvx, "compilation_time", None) or 0.0)
    stats = cvx.solver_stats if status != "solver_error" else None
    solve_time = stats.solve_time if stats is not None and stats.solve_time is not None else wall - compile_time
    coef, b = formulation.solution() if status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE, cp.USER_LIMIT) \
        else (None, None)
    proven = {"gap_tol": gap_tol}
    if coef is not None:
        info["cvxpy_value"] = float(cvx.value)
        proven, certified, info["bound_time"] = bound_fields(problem, coef, b, gap_tol)
        if status == cp.OPTIMAL and not certified:
            status, info["backend_status"] = cp.OPTIMAL_INACCURATE, cp.OPTIMAL
    value = objective(problem, coef, b) if coef is not None else np.nan
    return SolveResult(problem=problem, coef=coef, b=b, objective=value, status=status, method="cvxpy",
                       solver=name, solve_time=float(solve_time), compile_time=compile_time,
                       iterations=getattr(stats, "num_iters", None), info=info, **proven)
