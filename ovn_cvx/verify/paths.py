"""Hyperparameter paths (sweeps): every method solves the same sequence of problems, cold or re-using what it
learnt at the previous point, and every point is checked against a certified reference.

A path varies one hyperparameter of a :class:`~ovn_cvx.Problem` over a sequence of values
(:data:`PATH_PARAMETERS`): ``"alpha"`` (the coupling; soft-w variants only — hard w ignores α), ``"beta"`` (the
hinge cost) or ``"rbf_gamma"`` (the RBF kernel width, ``Problem.gamma``; not the soft-bias penalty γ of B(b),
which is ``bias_penalty``). Path methods (:class:`PathMethod`) are a solver (the package's ``"MM"`` or ``"SMO"``,
or a CVXPY solver) and a mode:

* ``"cold"``: every point from scratch (CVXPY: a new compilation per point);
* ``"warm"`` (MM, SMO): ``warm_start=`` the previous point's result (SMO starts from its dual point);
* ``"dpp"`` (CVXPY): one formulation compiled at the first point, re-solved with new parameter values
  (DPP, :meth:`ovn_cvx.formulations.Formulation.update`), the solver started afresh (``warm_start=False``);
* ``"dpp+warm"``: the same and the solver's own warm start from the previous point (``warm_start=True``), for
  the solvers that have one (:data:`WARM_START_SOLVERS`).

DPP needs the data fixed: an α or β path re-uses one compilation, an RBF-width path changes the kernel
matrix and hence the features of the problem, so only cold CVXPY modes run on it (:func:`path_methods` says so).
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..exceptions import SolverNotAvailable
from ..formulations import build
from ..problem import Problem
from ..solve import solve
from ..solvers.cvxpy_solver import TIGHT_CLARABEL, check_solver, solve_cvxpy
from ..kkt import kkt_certificate
from .checks import reference_agreement
from .comparison import CVXPY_SOLVERS, PACKAGE_SOLVERS, Method, tolerances

#: path name → the Problem field it varies ("rbf_gamma" is the kernel width, never the soft-bias penalty)
PATH_PARAMETERS = {"alpha": "alpha", "beta": "beta", "rbf_gamma": "gamma"}
MODES = ("cold", "warm", "dpp", "dpp+warm")
#: CVXPY interfaces that start the solver at the previous solution with ``warm_start=True`` (CVXPY 1.9:
#: OSQP x, y; SCS x, y, s; ProxQP x, y, z). Clarabel's interface then only updates the data of its cached
#: solver (an interior point has no warm start), ECOS's ignores it: for them "dpp" is the whole story.
WARM_START_SOLVERS = ("OSQP", "SCS", "PROXQP")


def path_problems(problem: Problem, parameter: str, values) -> list[Problem]:
    """``problem`` with ``parameter`` (a key of :data:`PATH_PARAMETERS`) set to each of ``values`` in turn."""
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be an ovn_cvx.Problem, got {type(problem).__name__}")
    if parameter not in PATH_PARAMETERS:
        raise ValueError(f"parameter must be one of {tuple(PATH_PARAMETERS)}, got {parameter!r}")
    if parameter == "alpha" and problem.hard_w:
        raise ValueError(f"parameter='alpha' needs a soft-w variant (SwSb, SwHb): {problem.variant} ignores α")
    if parameter == "rbf_gamma" and problem.kernel != "rbf":
        raise ValueError(f"parameter='rbf_gamma' needs kernel='rbf', the problem has kernel={problem.kernel!r}")
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1 or values.size == 0 or not np.isfinite(values).all():
        raise ValueError(f"values must be a non-empty 1-D sequence of finite numbers, got {values!r}")
    return [problem.replace(**{PATH_PARAMETERS[parameter]: float(v)}) for v in values]


@dataclass(frozen=True)
class PathMethod:
    """``solver`` ("MM", "SMO" or a CVXPY solver name) run along a path in ``mode`` (see the module docstring)."""

    solver: str
    mode: str

    def __post_init__(self):
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {self.mode!r}")
        allowed = ("cold", "warm") if self.solver in PACKAGE_SOLVERS else ("cold", "dpp", "dpp+warm")
        if self.mode not in allowed:
            raise ValueError(f"mode {self.mode!r} does not apply to solver {self.solver!r}: MM and SMO run 'cold' or "
                             "'warm', a CVXPY solver 'cold', 'dpp' or 'dpp+warm'")
        if self.mode == "dpp+warm" and self.solver not in WARM_START_SOLVERS:
            raise ValueError(f"{self.solver} has no warm start in CVXPY; 'dpp+warm' applies to {WARM_START_SOLVERS}")

    @property
    def label(self) -> str:
        return f"{self.solver} {self.mode}"

    @property
    def verified_as(self) -> Method:
        """The comparison method whose tolerances judge this one's points (the solver at its default preset)."""
        return Method.parse(self.solver if self.solver in PACKAGE_SOLVERS else f"{self.solver}:default")

    def stepper(self):
        """A fresh ``step(problem) -> SolveResult`` that carries this mode's state from point to point."""
        state = {"previous": None, "formulation": None}

        def step(problem: Problem):
            if self.solver in PACKAGE_SOLVERS:
                previous = state["previous"] if self.mode == "warm" else None
                previous = previous if previous is not None and previous.has_solution else None
                state["previous"] = solve(problem, method=PACKAGE_SOLVERS[self.solver], warm_start=previous)
                return state["previous"]
            if self.mode == "cold":
                return solve(problem, method="cvxpy", solver=self.solver)
            if state["formulation"] is None:
                state["formulation"] = build(problem)
            return solve_cvxpy(problem, self.solver, formulation=state["formulation"],
                               warm_start=self.mode == "dpp+warm")

        return step


def path_methods(parameter: str, solvers=CVXPY_SOLVERS, mm: bool = True) -> tuple[list[PathMethod], dict]:
    """Every applicable mode of the package's solvers (MM and SMO: ``mm``) and of each CVXPY solver in ``solvers`` for a
    path over ``parameter``, and {label: reason} for those that cannot run (solver not installed; DPP on an RBF-width
    path)."""
    if parameter not in PATH_PARAMETERS:
        raise ValueError(f"parameter must be one of {tuple(PATH_PARAMETERS)}, got {parameter!r}")
    methods = [PathMethod(name, mode) for name in PACKAGE_SOLVERS for mode in ("cold", "warm")] if mm else []
    skipped = {}
    for name in solvers:
        try:
            name = check_solver(name)
        except SolverNotAvailable as err:
            skipped[f"{name} (all modes)"] = str(err)
            continue
        methods.append(PathMethod(name, "cold"))
        modes = ["dpp"] + (["dpp+warm"] if name in WARM_START_SOLVERS else [])
        for mode in modes:
            if parameter == "rbf_gamma":
                skipped[f"{name} {mode}"] = "the kernel width changes the problem's data: no DPP re-solve"
            else:
                methods.append(PathMethod(name, mode))
    return methods, skipped


def reference_solution(problem: Problem):
    """(result, source) of the certified reference: a tight Clarabel solve accepted with the KKT certificate
    (docs/theory.md §6), else the MM solution when its proven bound certifies it; (None, "none") otherwise."""
    tight = solve(problem, method="cvxpy", solver="CLARABEL", **TIGHT_CLARABEL)
    if tight.success and tight.certified and kkt_certificate(problem, tight.coef, tight.b).passed():
        return tight, "CLARABEL:high"
    mm = solve(problem, method="mm")
    return (mm, "MM") if mm.success and mm.certified else (None, "none")


def run_path(problem: Problem, parameter: str, values, methods=None, *, repeats: int = 1) -> pd.DataFrame:
    """Solve the path :func:`path_problems` (``problem``, ``parameter``, ``values``) with every
    :class:`PathMethod` in ``methods`` (default: :func:`path_methods` of the parameter); one row per point × method.

    Timing is interleaved: at every point each method takes its step in turn (the order rotating from point to
    point and round to round), so that a slow phase of a shared machine hits every method alike. With
    ``repeats`` > 1 the whole path is run that many times and each method's rows come from its fastest round.
    Kernel matrices and factors are computed before any timing (a cost of the data, not of a method).

    Columns: parameter, index, value, method, solver, mode, status, claimed_success, correct, objective,
    reference_objective, reference (its source: :func:`reference_solution`), rel_diff (|F − F_ref|/max(1, |F_ref|)),
    max_df (max |Δf| on the training set), gap_bound and relative_gap_bound (MM's proven bound on F − F*),
    wall_time (the whole solve call, a CVXPY compilation included), compile_time, solve_time, iterations.
    ``correct`` = claimed success, and the objective and the hard constraints agree with the reference within the
    solver's default-preset tolerances (:func:`~ovn_cvx.verify.comparison.tolerances`). Decision values are
    reported, not judged: at a degenerate point such as raw wine (F* ≈ 1e-5, features up to 1.7e3) an objective
    1e-10 above F* allows |Δf| ~ 1e-3, since ‖ΔW‖ ≤ (2ΔF/λ_min)^½, and the tight reference is no closer.

    Parameters
    ----------
    problem : Problem
        The problem at the start of the path.
    parameter : str
        The parameter varied along the path.
    values : array-like of float
        The values of ``parameter``, one point each.
    methods : sequence of PathMethod or None, default=None
        Distinct path methods; None uses :func:`path_methods` of the parameter.
    repeats : int, default=1
        The number of rounds over the whole path; each method's rows come from its fastest round.

    Returns
    -------
    DataFrame
        One row per point × method, with the columns above.

    Examples
    --------
    >>> import ovn_cvx
    >>> from ovn_cvx.datasets import make_data
    >>> from ovn_cvx.verify import run_path
    >>> from ovn_cvx.verify.paths import PathMethod
    >>> problem = ovn_cvx.Problem(*make_data(n_samples=30, n_features=2))
    >>> methods = [PathMethod("MM", "cold"), PathMethod("MM", "warm")]     # warm: started at the previous point
    >>> points = run_path(problem, "beta", [0.5, 1.0, 2.0], methods=methods)
    >>> points[["value", "method", "status", "correct"]]
       value   method   status  correct
    0    0.5  MM cold  optimal     True
    1    1.0  MM cold  optimal     True
    2    2.0  MM cold  optimal     True
    3    0.5  MM warm  optimal     True
    4    1.0  MM warm  optimal     True
    5    2.0  MM warm  optimal     True
    """
    problems = path_problems(problem, parameter, values)
    values = np.asarray(values, dtype=np.float64)
    methods = path_methods(parameter)[0] if methods is None else list(methods)
    if not methods or not all(isinstance(m, PathMethod) for m in methods) or len(set(methods)) < len(methods):
        raise ValueError(f"methods must be a non-empty list of distinct PathMethods, got {methods!r}")
    if not isinstance(repeats, (int, np.integer)) or isinstance(repeats, bool) or repeats < 1:
        raise ValueError(f"repeats must be a positive integer, got {repeats!r}")
    for problem in problems:
        if problem.is_kernel:
            problem.kernel_factor  # cached on the problem: computed once, before the clock runs
    with warnings.catch_warnings():
        # CVXPY's "Solution may be inaccurate": the status (optimal_inaccurate) is in the table already
        warnings.filterwarnings("ignore", message="Solution may be inaccurate", category=UserWarning)
        references = [reference_solution(problem) for problem in problems]
        best = {}
        for round_ in range(repeats):
            steppers = {m: m.stepper() for m in methods}
            runs = {m: [] for m in methods}
            for i, problem in enumerate(problems):
                shift = (i + round_) % len(methods)
                for method in methods[shift:] + methods[:shift]:
                    start = time.perf_counter()
                    result = steppers[method](problem)
                    runs[method].append((result, time.perf_counter() - start))
            for method, run in runs.items():
                if method not in best or sum(t for _, t in run) < sum(t for _, t in best[method]):
                    best[method] = run
    rows = [_row(parameter, i, float(values[i]), method, result, seconds, *references[i])
            for method in methods for i, (result, seconds) in enumerate(best[method])]
    return pd.DataFrame(rows)


def _row(parameter, index, value, method: PathMethod, result, seconds, reference, source) -> dict:
    row = {"parameter": parameter, "index": index, "value": value, "method": method.label,
           "solver": method.solver, "mode": method.mode,
           "status": result.status, "claimed_success": result.success, "correct": False,
           "objective": result.objective, "reference_objective": np.nan, "reference": source, "rel_diff": np.nan,
           "max_df": np.nan, "gap_bound": result.gap_bound,
           "relative_gap_bound": result.relative_gap_bound, "wall_time": seconds,
           "compile_time": result.compile_time, "solve_time": result.solve_time, "iterations": result.iterations}
    if reference is None or not result.has_solution:
        return row
    deviations = reference_agreement(result, reference, tol=tolerances(method.verified_as, result)).deviations
    judged = ("objective_gap", "constraint_violation", "reported_objective_error")
    row.update(reference_objective=reference.objective, rel_diff=deviations["objective_gap"][0],
               max_df=deviations["max_decision_diff"][0],
               correct=result.success and all(deviations[m][0] <= deviations[m][1] for m in judged))
    return row


def path_summary(points: pd.DataFrame) -> pd.DataFrame:
    """Per method of a :func:`run_path` table: points, claimed successes, correct points, worst rel_diff, max_df and
    MM gap bound, total wall time, and its ratio to the same solver's cold path and to the fastest method.

    Parameters
    ----------
    points : DataFrame
        A table from :func:`run_path`.

    Returns
    -------
    DataFrame
        One row per method; empty for an empty table.

    Examples
    --------
    >>> import ovn_cvx
    >>> from ovn_cvx.datasets import make_data
    >>> from ovn_cvx.verify import path_summary, run_path
    >>> from ovn_cvx.verify.paths import PathMethod
    >>> problem = ovn_cvx.Problem(*make_data(n_samples=30, n_features=2))
    >>> methods = [PathMethod("MM", "cold"), PathMethod("MM", "warm")]     # warm: started at the previous point
    >>> points = run_path(problem, "beta", [0.5, 1.0, 2.0], methods=methods)
    >>> path_summary(points)[["method", "points", "correct"]]
        method  points  correct
    0  MM cold       3        3
    1  MM warm       3        3
    """
    if points.empty:
        return pd.DataFrame()
    g = points.groupby("method", sort=False)
    table = pd.DataFrame({"solver": g["solver"].first(), "mode": g["mode"].first(), "points": g.size(),
                          "claimed": g["claimed_success"].sum(), "correct": g["correct"].sum(),
                          "max_rel_diff": g["rel_diff"].max(), "max_df": g["max_df"].max(),
                          "max_gap_bound": g["gap_bound"].max(),
                          "total_time_s": g["wall_time"].sum(), "iterations": g["iterations"].sum(min_count=1)})
    cold = table[table["mode"] == "cold"].set_index("solver")["total_time_s"]
    table["vs_cold"] = table["total_time_s"] / table["solver"].map(cold)
    table["vs_fastest"] = table["total_time_s"] / table["total_time_s"].min()
    return table.reset_index()


__all__ = ["MODES", "PATH_PARAMETERS", "WARM_START_SOLVERS", "PathMethod", "path_methods", "path_problems",
           "path_summary", "reference_solution", "run_path"]
