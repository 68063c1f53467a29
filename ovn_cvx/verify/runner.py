"""The run loop of the verification suite: problems × checks × solvers.

``run_suite`` runs :func:`~ovn_cvx.verify.comparison.compare_runs` on every problem of a suite (all eight
formulations: linear/kernel × SwSb, SwHb, HwSb, HwHb) and the identity checks of
:mod:`ovn_cvx.verify.checks`; the :class:`~ovn_cvx.verify.results.SuiteReport` it returns holds the metrics
(qpbenchmark-style) and :mod:`ovn_cvx.verify.report` renders them as Markdown, CSV and JSON.

A suite **fails** when an identity check fails (KKT certificate or invariants of the reference, linear-kernel
consistency, the γ → ∞ limit, binary equivalence), when a problem has no certified reference, or when a
high-accuracy result, a result of the package's solvers (MM, SMO) or of a user's solver claims success and does not
pass its checks. A default-preset result
that claims success and fails its checks lowers that solver's correct rate but does not fail the suite: default
tolerances are the solvers' choice, not a defect of the formulations.
"""
from __future__ import annotations

import functools
import time
import warnings

import pandas as pd

from .._parallel import check_n_jobs, check_scheduler, parallel_map
from .._variants import FORMULATIONS, KINDS, VARIANTS
from .checks import (CheckResult, badly_scaled_gram_consistency, bias_limit, binary_equivalence, invariants, kkt_check,
                     linear_kernel_consistency)
from .comparison import (CVXPY_SOLVERS, EXTRA_SOLVERS, HIGH_ACCURACY, PACKAGE_SOLVERS, PRESETS, QP_METHODS, Method,
                         compare_runs, run_method, tolerances)
from .results import SuiteReport
from .suite import DEFAULT_BINARY, DEFAULT_SUITE


def formulation_name(kernel, variant: str) -> str:
    return f"{'linear' if kernel == 'linear' else 'kernel'}-{variant}"


def _check_formulations(formulations):
    """None → all; else tokens that are a variant, "linear"/"kernel", or "<kind>-<variant>"."""
    if formulations is None:
        return None
    tokens = [formulations] if isinstance(formulations, str) else list(formulations)
    bad = [t for t in tokens if t not in FORMULATIONS]
    if bad or not tokens:
        raise ValueError(f"formulations must be variants {VARIANTS}, kinds {KINDS} or '<kind>-<variant>' "
                         f"(e.g. 'kernel-HwHb'), got {bad or tokens}")
    return set(tokens)


def _selected(tokens, kernel, variant) -> bool:
    if tokens is None:
        return True
    name = formulation_name(kernel, variant)
    return bool(tokens & {variant, name.split("-")[0], name})




def _check_rows(case, formulation, check: CheckResult) -> list[dict]:
    return [{"case": case, "formulation": formulation, "check": check.name, "measure": measure, "value": value,
             "tolerance": tol, "passed": bool(value <= tol)} for measure, (value, tol) in check.deviations.items()]


def _methods(solvers, presets, methods) -> list[Method]:
    """The solvers at every preset (default: the core and the installed extra CVXPY solvers, MM, SMO and the QP
    methods), then ``methods`` as given (labels, Methods, registered names or callables)."""
    extra = [] if methods is None else [methods] if isinstance(methods, str) or callable(methods) else list(methods)
    if solvers is None:
        solvers, extra = list(CVXPY_SOLVERS + EXTRA_SOLVERS) + list(PACKAGE_SOLVERS), list(QP_METHODS) + extra
    solvers = [solvers] if isinstance(solvers, str) else list(solvers)
    if not solvers and not extra:
        raise ValueError("solvers must name at least one solver")
    out = []
    for name in solvers:
        if not isinstance(name, str):
            raise TypeError(f"solvers must be strings, got {type(name).__name__}")
        if name.upper() in PACKAGE_SOLVERS:
            out.append(Method.parse(name))
        else:
            out += [Method.parse(f"{name}:{p}") for p in presets]
    return out + [Method.parse(m) for m in extra]


def run_suite(suite=DEFAULT_SUITE, solvers=None, formulations=None, *, methods=None, presets=PRESETS,
              binary=DEFAULT_BINARY, identities: bool = True, progress: bool = True, n_jobs: int = 1,
              scheduler: str | None = None) -> SuiteReport:
    """Run the suite: every selected problem is compared across ``solvers`` (CVXPY solver names and/or
    "MM"/"SMO"; default: CLARABEL, ECOS, OSQP, SCS, the installed solvers of the ``solvers`` extra, MM, SMO and the QP
    methods; ``[]`` for none) at each preset, and across ``methods`` (a user's solvers as
    callables or registered names, "QP:clarabel", "qpsolvers:BACKEND"; see
    :class:`~ovn_cvx.verify.comparison.Method`), and — with ``identities`` — checked
    (KKT certificate and invariants of the reference, invariants of the MM and SMO results, linear-kernel consistency
    for linear problems, the γ → ∞ limit for soft-b problems, binary equivalence on ``binary``).

    ``formulations`` selects problems by variant ("SwHb"), kind ("linear", "kernel") or both
    ("kernel-HwHb"). A method that is not available (solver not installed or unknown to CVXPY) is recorded in
    ``report.unavailable`` and the others still run. ``progress`` shows a tqdm bar on stderr (without tqdm:
    a line per problem).

    ``n_jobs`` > 1 runs the problems (each with all its methods and checks) on that many local joblib workers,
    one BLAS thread each; ``scheduler`` (a ``dask.distributed`` address, the extra ``dask``) on a Dask cluster
    (:func:`ovn_cvx._parallel.parallel_map`). The report is the serial one — same rows, same order, same numbers —
    except the timing columns, which parallel workers sharing a machine distort.

    Parameters
    ----------
    suite : sequence of SuiteCase, default=DEFAULT_SUITE
        The problem families.
    solvers : sequence of str or None, default=None
        CVXPY solver names and/or "MM", "SMO"; None uses the default set, ``[]`` none.
    formulations : sequence of str or None, default=None
        Selectors of the problems run, by variant, kind or both; None runs every problem.
    methods : sequence or None, default=None
        Further methods: a user's solvers (callables or registered names) and QP method labels.
    presets : sequence of str, default=PRESETS
        The accuracy presets every CVXPY solver runs at.
    binary : sequence of BinaryCase, default=DEFAULT_BINARY
        The cases of the binary-equivalence check.
    identities : bool, default=True
        Whether to run the checks.
    progress : bool, default=True
        Whether to show the progress on stderr.
    n_jobs : int, default=1
        The number of local joblib workers.
    scheduler : str or None, default=None
        The address of a Dask scheduler to run the problems on; None runs them locally.

    Returns
    -------
    SuiteReport
        The comparison table, the checks and the unavailable methods.

    Examples
    --------
    >>> from ovn_cvx.verify import SuiteCase, run_suite
    >>> report = run_suite([SuiteCase("mc", "multiclass", 30, 2, 3)], solvers=["MM", "CLARABEL"],
    ...                    formulations=["SwHb"], presets=["default"], binary=[], progress=False)
    >>> report.comparison[["case", "formulation", "method", "checked_success"]]
      case  formulation            method  checked_success
    0   mc  linear-SwHb                MM             True
    1   mc  linear-SwHb  CLARABEL:default             True
    >>> bool(report.checks["passed"].all())
    True
    """
    n_jobs, scheduler = check_n_jobs(n_jobs), check_scheduler(scheduler)
    with warnings.catch_warnings():
        # CVXPY's "Solution may be inaccurate": the status (optimal_inaccurate) is in the report already
        warnings.filterwarnings("ignore", message="Solution may be inaccurate", category=UserWarning)
        return _run_suite(suite, solvers, formulations, methods, presets, binary, identities, progress, n_jobs,
                          scheduler)


#: per process: the labels of the methods already run once (untimed) in it, see :func:`_warm_up`
_WARMED: set = set()


def _warm_up(problem, methods) -> None:
    """One untimed run on ``problem`` of every method not yet run in this process (the serial run's or a parallel
    worker's), so that one-time costs (imports, first calls) are charged to no one."""
    for method in methods:
        if method.label not in _WARMED:
            run_method(problem, method)
            _WARMED.add(method.label)


def _run_suite(suite, solvers, formulations, methods, presets, binary, identities, progress, n_jobs,
               scheduler) -> SuiteReport:
    tokens = _check_formulations(formulations)
    if not set(presets) <= set(PRESETS) or not presets:
        raise ValueError(f"presets must be a non-empty subset of {PRESETS}, got {presets}")
    methods = _methods(solvers, presets, methods)
    tasks = [("problem", case, variant) for case in suite for variant in VARIANTS
             if _selected(tokens, case.kernel, variant)]
    if identities:
        tasks += [("binary", case, "HwHb") for case in binary if _selected(tokens, case.kernel, "HwHb")]
    start = time.perf_counter()
    first = next(((case, variant) for kind, case, variant in tasks if kind == "problem"), None)
    run = functools.partial(_run_task, methods=methods, identities=identities, warm_up=first)
    done = parallel_map(run, tasks, n_jobs, scheduler, progress=progress, desc="ovn-cvx verify", unit="problem")
    tables, checks, unavailable = [], [], {}
    for table, rows in done:
        checks += rows
        if table is None:
            continue
        for row in table[table["status"] == "unavailable"].itertuples():
            unavailable.setdefault(row.method, row.note)
        tables.append(table)
    comparison = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()
    front = ["case", "formulation", "N", "M", "K", "pairs"]
    if len(comparison):
        comparison = comparison[front + [c for c in comparison.columns if c not in front]]
    return SuiteReport(comparison=comparison, checks=pd.DataFrame(checks, columns=[
        "case", "formulation", "check", "measure", "value", "tolerance", "passed"]), unavailable=unavailable,
        elapsed=time.perf_counter() - start)


def _run_task(task, *, methods, identities, warm_up=None) -> tuple[pd.DataFrame | None, list[dict]]:
    """One problem of the suite (its comparison table and check rows) or one binary case (None, its rows).
    ``warm_up`` (case, variant): the process's first task (serial or in a worker) warms the methods up on that
    problem first."""
    kind, case, variant = task
    with warnings.catch_warnings():  # again: a worker process does not inherit the caller's filters
        warnings.filterwarnings("ignore", message="Solution may be inaccurate", category=UserWarning)
        if warm_up is not None and not {m.label for m in methods} <= _WARMED:
            (_, problem), = warm_up[0].problems(variants=(warm_up[1],))
            _warm_up(problem, methods)
        return _task_rows(kind, case, variant, methods, identities)


def _task_rows(kind, case, variant, methods, identities):
    formulation = formulation_name(case.kernel, variant)
    checks = []
    if kind == "binary":
        X, y = case.data()
        check = binary_equivalence(X, y, case.beta, case.kernel)
        return None, _check_rows(case.name, formulation, check)
    (_, problem), = case.problems(variants=(variant,))
    table, results, reference = compare_runs(problem, methods)
    table = table.assign(case=case.name, formulation=formulation, N=problem.n_samples, M=problem.n_features,
                         K=problem.n_classes, pairs=len(problem.pairs))
    if not identities:
        return table, checks
    if reference is None:
        checks.append({"case": case.name, "formulation": formulation, "check": "reference",
                       "measure": "no_certified_reference", "value": 1.0, "tolerance": 0.0, "passed": False})
        return table, checks
    found = [kkt_check(reference), invariants(reference)]
    for name in PACKAGE_SOLVERS:
        result = results.get(name)
        if result is not None and result.success:  # with the slack of the accuracy the solver claims
            found.append(invariants(result, slack=tolerances(Method.parse(name), result).objective))
            found[-1].name = f"invariants_{name.lower()}"
    if not problem.is_kernel:
        # an identity of the model: checked on high-accuracy solutions (‖ΔW‖ is only O(√ΔF))
        found.append(linear_kernel_consistency(problem, solver_options=HIGH_ACCURACY["CLARABEL"]))
        found.append(badly_scaled_gram_consistency(problem, solver_options=HIGH_ACCURACY["CLARABEL"]))
    if not problem.hard_b:
        found.append(bias_limit(problem))
    for check in found:
        checks += _check_rows(case.name, formulation, check)
    return table, checks


__all__ = ["KINDS", "formulation_name", "run_suite"]
