"""Solver comparison on one problem: every CVXPY solver at two accuracy presets, the package's certified solvers (MM
and the dual decomposition, SMO), QP back ends on the exported QP (:mod:`ovn_cvx.qp`) and any user's solver
(:func:`register_method`), each checked independently against a high-accuracy reference and the KKT certificate.

Methodology (as qpbenchmark): a method *claims* success through its status; the claim is *correct* only
when the independent checks pass too (objective gap to the reference, decision values, hard constraints,
each with the tolerance of docs/theory.md §10 for that method and preset). ``certified`` says whether the §6 KKT
certificate holds at 1e-6 — stronger than "correct", and reported separately.
"""
from __future__ import annotations

import dataclasses
import functools
import numbers
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from .._parallel import parallel_map
from ..exceptions import SolverNotAvailable
from ..kkt import KKT_TOL, KKTCertificate, kkt_certificate
from ..problem import Problem
from ..qp import DIRECT_SOLVER, solve_qp
from ..result import SolveResult
from ..solve import solve
from ..solvers.cvxpy_solver import TIGHT_CLARABEL
from .checks import Tolerance, reference_agreement
from .plugins import DEFAULT_TIME_LIMIT, WORKER_LOAD_TIME, call_plugin

CVXPY_SOLVERS = ("CLARABEL", "ECOS", "OSQP", "SCS")
#: the package's own solvers, each a method of :func:`ovn_cvx.solve` that proves its success: label → method
PACKAGE_SOLVERS = {"MM": "mm", "SMO": "smo"}
#: the certified reference's own error in the relative objective, added to a proven bound when a certified answer is
#: compared with it (the tight Clarabel reference agrees with certified MM to ~1e-11 on the suites)
REFERENCE_ERROR = 1e-8
#: CVXPY solvers of the optional extra ``solvers`` (pip install ovn-cvx[solvers]), compared by default when
#: installed and skipped with a message otherwise. HiGHS is in the extra but not in the default comparison:
#: its QP solver took 222 s for the 32 problems of the default suite (measured; PIQP 0.5 s).
EXTRA_SOLVERS = ("PIQP", "PROXQP", "DAQP", "CVXOPT", "QOCO")
#: methods on the exported QP: Clarabel's own API ("QP:clarabel", no CVXPY compilation) and qpsolvers back ends
QP_METHODS = (f"QP:{DIRECT_SOLVER}", "qpsolvers:piqp", "qpsolvers:daqp", "qpsolvers:proxqp")
PRESETS = ("default", "high")
#: solver options of the "high" preset ("default" passes none). Iteration caps keep the first-order
#: solvers from running for minutes; reaching them gives an honest "optimal_inaccurate"/"user_limit".
HIGH_ACCURACY = {
    "CLARABEL": TIGHT_CLARABEL,
    "ECOS": {"abstol": 1e-10, "reltol": 1e-10, "feastol": 1e-10, "max_iters": 500},
    "OSQP": {"eps_abs": 1e-8, "eps_rel": 1e-8, "max_iter": 20000, "polishing": True},
    "SCS": {"eps_abs": 1e-8, "eps_rel": 1e-8, "max_iters": 20000},
    "PIQP": {"eps_abs": 1e-10, "eps_rel": 1e-10},
    "PROXQP": {"eps_abs": 1e-10, "eps_rel": 1e-10, "max_iter": 10000},
    "CVXOPT": {"abstol": 1e-9, "reltol": 1e-9, "feastol": 1e-9},
    "QOCO": {"abstol": 1e-10, "reltol": 1e-10},
    "HIGHS": {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},
}
REFERENCE_METHOD = "CLARABEL:high"
#: docs/theory.md §10 check tolerances (objective gap, max |Δf| on the training set, hard constraints). Deviations from
#: §10, measured on the full suite: the first-order solvers' "high" preset (eps 1e-8) leaves |Σb| up to
#: 2.4e-8, so their constraint tolerance is 1e-7; certified MM is compared with f at 1e-4, not 1e-5, because
#: the Clarabel reference itself is only that accurate in f (ml-K5-rbf-N200: objectives agree to 3e-11,
#: f differs by 1.6e-5 — consistent with ‖ΔW‖ ≤ (2ΔF/λ_min)^½).
TOLERANCES = {
    ("high", "CLARABEL"): Tolerance(),
    ("high", "ECOS"): Tolerance(),
    ("high", "OSQP"): Tolerance(constraints=1e-7),
    ("high", "SCS"): Tolerance(constraints=1e-7),
    ("default", "CLARABEL"): Tolerance(),
    ("default", "ECOS"): Tolerance(),
    ("default", "OSQP"): Tolerance(objective=1e-4, decision=1e-2, constraints=1e-6),
    ("default", "SCS"): Tolerance(objective=1e-3, decision=1e-2, constraints=1e-6),
    # the package's solvers: a certified answer's objective is judged by its promise (``tolerances``); f: MM ends exact
    # to round-off, SMO within its proven bound, which holds f only through ‖ΔW‖ ≤ (2ΔF/λ_min)^½, and b not even that
    # where it is not unique (measured on the default suite: max |Δf| 2.3e-4 at a proven 7.3e-7, mc-K3 linear-SwHb)
    ("default", "MM"): Tolerance(),
    ("default", "SMO"): Tolerance(decision=1e-2),
    # PIQP at 1e-10 solves unseen-labelset linear-HwHb to ΔF = 3.3e-10 with f apart by 3.8e-4 (a degenerate b:
    # Clarabel at its defaults and on the exported QP differ from the reference by as much), measured
    ("high", "PIQP"): Tolerance(decision=1e-3),
    ("default", DIRECT_SOLVER): Tolerance(),  # Clarabel on the exported QP: 4.5e-9 on the default suite
}
#: methods registered by name (:func:`register_method`), found by :meth:`Method.parse`
REGISTERED: dict[str, "Method"] = {}


@dataclass(frozen=True)
class Method:
    """One row of the comparison: ``label`` is "SOLVER:preset", "MM", "SMO", "QP:clarabel", "qpsolvers:BACKEND" or the
    name of a user's solver (``method`` "plugin", its callable in ``function``, checked with ``tolerance`` or
    the high-accuracy tolerances, run in a worker process and stopped after ``time_limit`` seconds on one
    problem). ``options`` reach the solver (MM's and a plugin's included)."""

    label: str
    method: str
    solver: str
    preset: str
    options: dict = field(default_factory=dict, hash=False, compare=False)
    function: Callable | None = field(default=None, hash=False, compare=False)
    tolerance: Tolerance | None = field(default=None, hash=False, compare=False)
    time_limit: float = field(default=DEFAULT_TIME_LIMIT, hash=False, compare=False)

    @classmethod
    def parse(cls, spec) -> "Method":
        """"CLARABEL" (default preset), "OSQP:high", "MM", "SMO", "QP:clarabel", "qpsolvers:piqp", a registered
        name, or a callable (a plugin named after it)."""
        if isinstance(spec, Method):
            return spec
        if callable(spec):
            return cls.plugin(getattr(spec, "__name__", type(spec).__name__), spec)
        if not isinstance(spec, str):
            raise TypeError(f"a method must be a string like 'CLARABEL:high' or 'MM', or a callable, got "
                            f"{type(spec).__name__}")
        if spec in REGISTERED:
            return REGISTERED[spec]
        name, _, preset = spec.partition(":")
        name, preset = name.strip().upper(), (preset.strip().lower() or "default")
        if name in PACKAGE_SOLVERS:
            return cls(name, PACKAGE_SOLVERS[name], name, "default")
        if name in ("QP", "QPSOLVERS"):
            backend = preset if name == "QPSOLVERS" else DIRECT_SOLVER
            if backend == "default" or (name == "QP" and preset not in ("default", DIRECT_SOLVER)):
                raise ValueError(f"a QP method is 'QP:{DIRECT_SOLVER}' or 'qpsolvers:BACKEND', got {spec!r}")
            return cls(f"{'QP' if name == 'QP' else 'qpsolvers'}:{backend}", "qp", backend, "default")
        if preset not in PRESETS:
            raise ValueError(f"preset must be one of {PRESETS}, got {preset!r} in {spec!r}")
        options = HIGH_ACCURACY.get(name, {}) if preset == "high" else {}
        return cls(f"{name}:{preset}", "cvxpy", name, preset, options)

    @classmethod
    def plugin(cls, name: str, function: Callable, *, tolerance: Tolerance | None = None,
               time_limit: float = DEFAULT_TIME_LIMIT, **options) -> "Method":
        """A user's solver ``function(problem, **options)`` returning a SolveResult or (coef, b, status), run in a
        worker process with at most ``time_limit`` seconds per problem (:func:`~ovn_cvx.verify.plugins.call_plugin`:
        whatever it does, raise, exit, hang or answer nonsense, is its row of the comparison)."""
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"name must be a non-empty string, got {name!r}")
        if not callable(function):
            raise TypeError(f"function must be callable, got {type(function).__name__}")
        if tolerance is not None and not isinstance(tolerance, Tolerance):
            raise TypeError(f"tolerance must be an ovn_cvx.verify.checks.Tolerance, got {type(tolerance).__name__}")
        if isinstance(time_limit, bool) or not isinstance(time_limit, numbers.Real) or not 0 < time_limit < np.inf:
            raise ValueError(f"time_limit must be a finite number of seconds > 0, got {time_limit!r}")
        return cls(name, "plugin", name, "default", options, function, tolerance, float(time_limit))


def register_method(name: str, function: Callable, *, tolerance: Tolerance | None = None,
                    time_limit: float = DEFAULT_TIME_LIMIT, **options) -> Method:
    """Make ``function(problem, **options)`` (returning a SolveResult or (coef, b, status)) the method ``name`` of
    :func:`compare`, :func:`~ovn_cvx.verify.run_suite` and the CLI; judged like every other method, with the
    high-accuracy tolerances unless ``tolerance`` is given, and run in a worker process that is stopped after
    ``time_limit`` seconds on one problem. Returns the :class:`Method`.

    Parameters
    ----------
    name : str
        The method's name.
    function : callable
        Called as ``function(problem, **options)``; returns a SolveResult or (coef, b, status).
    tolerance : Tolerance or None, default=None
        The tolerances the method's answers are judged with; None uses the high-accuracy ones.
    time_limit : float, default=DEFAULT_TIME_LIMIT
        Seconds after which the worker process running the method on one problem is stopped.
    **options : dict
        Keyword arguments passed to ``function``.

    Returns
    -------
    Method
        The registered method.

    Examples
    --------
    >>> import ovn_cvx
    >>> from ovn_cvx.datasets import make_data
    >>> from ovn_cvx.verify import compare, register_method
    >>> method = register_method("my-mm", ovn_cvx.solve, method="mm")   # called as solve(problem, method="mm")
    >>> table = compare(ovn_cvx.Problem(*make_data(n_samples=30, n_features=2)), ["my-mm", "CLARABEL:high"])
    >>> table[["method", "status", "checked_success"]]
              method   status  checked_success
    0          my-mm  optimal             True
    1  CLARABEL:high  optimal             True
    """
    method = Method.plugin(name, function, tolerance=tolerance, time_limit=time_limit, **options)
    REGISTERED[name] = method
    return method


def default_methods(solvers=CVXPY_SOLVERS + EXTRA_SOLVERS, presets=PRESETS, mm: bool = True,
                    qp=QP_METHODS) -> list[Method]:
    """Every solver at every preset, the package's solvers (MM and SMO: ``mm``), and the QP methods ``qp``."""
    methods = [Method.parse(f"{s}:{p}") for s in solvers for p in presets]
    return methods + ([Method.parse(name) for name in PACKAGE_SOLVERS] if mm else []) + [Method.parse(m) for m in qp]


def run_method(problem: Problem, method: Method) -> tuple[SolveResult | None, str]:
    """Solve; (None, reason) when the method is not available (a CVXPY solver not installed or unknown to
    CVXPY, qpsolvers or its back end not installed, a solver module that cannot be imported)."""
    try:
        if method.method == "plugin":
            return call_plugin(method.function, problem, method.label, method.options, method.time_limit), ""
        if method.method in PACKAGE_SOLVERS.values():
            return solve(problem, method=method.method, **method.options), ""
        if method.method == "qp":
            return solve_qp(problem, method.solver, **method.options), ""
        return solve(problem, method="cvxpy", solver=method.solver, **method.options), ""
    except (SolverNotAvailable, ImportError) as err:
        return None, f"unavailable: {err}"


def tolerances(method: Method, result: SolveResult) -> Tolerance:
    """Check tolerances for a method's result (docs/theory.md §10); a plugin its own or the high-accuracy ones;
    a certified answer of the package's solvers its own proven bound, ``gap_tol`` plus REFERENCE_ERROR, on the
    objective; other solvers get SCS's (the loosest)."""
    if method.method == "plugin":
        return method.tolerance if method.tolerance is not None else Tolerance()
    if method.method == "mm" and not result.certified:
        # ε-smoothing bias of an uncertified MM result: gap ≤ β ε n / (4 F*) (docs/theory.md §9.1.3) plus convergence
        # slack; its W is only O(√ε) accurate, so f is compared loosely
        p = result.problem
        band = p.beta * result.info.get("eps", 1e-2) * len(p.pairs) / 4 / max(1.0, abs(result.objective))
        return Tolerance(objective=band + 1e-6, decision=1e-1)
    found = TOLERANCES.get((method.preset, method.solver), TOLERANCES[(method.preset, "SCS")])
    if method.method in PACKAGE_SOLVERS.values() and result.certified:
        return dataclasses.replace(found, objective=result.gap_tol + REFERENCE_ERROR)
    return found


def _row(problem, method, result, note, reference, elapsed, certificate) -> dict:
    row = {"method": method.label, "kind": method.method, "solver": method.solver, "preset": method.preset,
           "status": result.status if result is not None else "unavailable",
           "claimed_success": bool(result is not None and result.success),
           "checked_success": False, "certified": False,
           "objective": result.objective if result is not None else np.nan,
           "rel_gap": np.nan, "max_df": np.nan, "prediction_agreement": np.nan, "constraint_violation": np.nan,
           "kkt_residual": np.nan, **{f"kkt_{m}": np.nan for m in KKTCertificate.KKT_MEASURES},
           "compile_time": result.compile_time if result is not None else np.nan,
           "solve_time": result.solve_time if result is not None else np.nan,
           "wall_time": elapsed, "iterations": result.iterations if result is not None else None, "note": note}
    if result is None or not result.has_solution:
        if result is not None and "error" in result.info:
            row["note"] = str(result.info["error"])[:200]
        return row
    cert = certificate(result)
    row.update({f"kkt_{m}": cert.residuals[m] for m in cert.KKT_MEASURES},
               kkt_residual=cert.max_residual(), certified=cert.passed(KKT_TOL))
    if reference is None:
        row["note"] = (row["note"] + "; " if row["note"] else "") + "no certified reference"
        return row
    check = reference_agreement(result, reference, tol=tolerances(method, result))
    dev = check.deviations
    row.update(rel_gap=dev["objective_gap"][0], max_df=dev["max_decision_diff"][0],
               constraint_violation=dev["constraint_violation"][0],
               prediction_agreement=check.details["prediction_agreement"])
    row["checked_success"] = bool(row["claimed_success"] and check.passed)
    return row


def compare(problem: Problem, methods=None, *, n_jobs: int = 1, scheduler: str | None = None) -> pd.DataFrame:
    """One row per method (default: every CVXPY solver in ``CVXPY_SOLVERS`` and the installed ``EXTRA_SOLVERS`` at
    both presets, the package's MM and SMO, and ``QP_METHODS``; a method is a label, a :class:`Method`, a registered
    name or a callable).

    Columns: method, kind ("cvxpy", "mm", "smo", "qp" or "plugin": a user's solver), solver, preset, status (a user's
    solver that gave no answer: "solver_error", "time_limit" or "invalid_answer", the reason in note),
    claimed_success, checked_success, certified, objective,
    rel_gap (to the reference), max_df (max |Δf| on the training set), prediction_agreement (fraction of
    training samples given the reference's labels by docs/theory.md §5, among those not within 1e-6 of a tie or of the
    multilabel threshold), constraint_violation, kkt_residual and its parts kkt_*, compile_time, solve_time,
    wall_time, iterations, note (why a method did not run, or the solver's error), reference (this row is the
    reference), margin_pairs (pairs on the margin at the reference, by its KKT certificate; −1 without one) and
    regime (:func:`regime`; "unknown" without a reference). The reference is
    ``CLARABEL:high`` when it succeeds and is certified, else the
    certified successful result with the lowest objective; its own row is checked by its certificate.

    ``n_jobs`` > 1 runs the methods on that many local joblib workers, ``scheduler`` on a Dask cluster
    (:func:`ovn_cvx._parallel.parallel_map`); the table is the serial one except the timing columns (compile_time,
    solve_time, wall_time), which workers sharing a machine distort.

    Parameters
    ----------
    problem : Problem
        The problem every method solves.
    methods : sequence or None, default=None
        The methods: labels, :class:`Method` objects, registered names or callables; None uses the default set.
    n_jobs : int, default=1
        The number of local joblib workers.
    scheduler : str or None, default=None
        The address of a Dask scheduler to run the methods on; None runs them locally.

    Returns
    -------
    DataFrame
        One row per method, with the columns above.

    Examples
    --------
    >>> import ovn_cvx
    >>> from ovn_cvx.datasets import make_data
    >>> from ovn_cvx.verify import compare
    >>> problem = ovn_cvx.Problem(*make_data(n_samples=30, n_features=2))
    >>> table = compare(problem, ["MM", "CLARABEL:high", "OSQP:default"])
    >>> table[["method", "status", "checked_success", "certified"]]
              method   status  checked_success  certified
    0             MM  optimal             True       True
    1  CLARABEL:high  optimal             True       True
    2   OSQP:default  optimal             True       True
    """
    return compare_runs(problem, methods, n_jobs=n_jobs, scheduler=scheduler)[0]


def _timed_run(method: Method, problem: Problem) -> tuple[Method, SolveResult | None, str, float]:
    start = time.perf_counter()
    result, note = run_method(problem, method)
    elapsed = time.perf_counter() - start
    if result is not None:  # a user's solver is not charged for the start of its worker process (after a hang)
        elapsed -= result.info.get(WORKER_LOAD_TIME, 0.0)
    return method, result, note, elapsed


def compare_runs(problem: Problem, methods=None, *, n_jobs: int = 1,
                 scheduler: str | None = None) -> tuple[pd.DataFrame, dict, SolveResult | None]:
    """:func:`compare` plus the results by method label and the reference result (None if none is certified)."""
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be an ovn_cvx.Problem, got {type(problem).__name__}")
    methods = default_methods() if methods is None else [Method.parse(m) for m in methods]
    if not methods:
        raise ValueError("methods must name at least one method")
    runs = parallel_map(functools.partial(_timed_run, problem=problem), methods, n_jobs, scheduler)
    certificates = {}

    def certificate(result) -> KKTCertificate:  # each result is certified once
        if id(result) not in certificates:
            certificates[id(result)] = kkt_certificate(problem, result.coef, result.b)
        return certificates[id(result)]

    reference = _pick_reference(problem, runs, certificate)
    table = pd.DataFrame([_row(problem, m, r, note, reference, t, certificate) for m, r, note, t in runs])
    is_ref = np.array([reference is not None and r is reference for _, r, _, _ in runs])
    table.loc[is_ref, "checked_success"] = table.loc[is_ref, "claimed_success"] & table.loc[is_ref, "certified"]
    table["reference"] = is_ref
    margin = certificate(reference).n_margin if reference is not None else -1
    table["margin_pairs"] = margin
    table["regime"] = "unknown" if reference is None else regime(problem, margin)
    return table, {m.label: r for m, r, _, _ in runs}, reference


def regime(problem: Problem, margin_pairs: int) -> str:
    """"degenerate" when more pairs lie on the margin at the optimum than there are free primal directions,
    (d+1)K − d·[hard w] − [hard b] (d = M, or the kernel factor's rank): the margin constraints are then linearly
    dependent and their multipliers not unique (on the default suite: pairs where W ≈ 0, the separable
    unseen-label set, and soft-w problems with many pairs on the margin); else "benign"."""
    d = problem.kernel_factor.rank if problem.is_kernel else problem.n_features
    free = (d + 1) * problem.n_classes - (d if problem.hard_w else 0) - (1 if problem.hard_b else 0)
    return "degenerate" if margin_pairs > free else "benign"


def _pick_reference(problem, runs, certificate) -> SolveResult | None:
    def certified(result):  # proven: its own bound and the KKT certificate's (whose duality gap is a proven bound)
        return result is not None and result.success and result.certified and certificate(result).passed()

    by_label = {m.label: r for m, r, _, _ in runs}
    preferred = by_label.get(REFERENCE_METHOD)
    if preferred is None:
        preferred, _ = run_method(problem, Method.parse(REFERENCE_METHOD))
    if certified(preferred):
        return preferred
    candidates = [r for _, r, _, _ in runs if certified(r)]
    return min(candidates, key=lambda r: r.objective) if candidates else None


__all__ = ["CVXPY_SOLVERS", "EXTRA_SOLVERS", "HIGH_ACCURACY", "Method", "PACKAGE_SOLVERS", "PRESETS", "QP_METHODS",
           "REFERENCE_METHOD",
           "REGISTERED", "TOLERANCES", "compare", "compare_runs", "default_methods", "regime", "register_method",
           "run_method", "tolerances"]
