"""The verification suite: problems × checks × solvers, and the solver-comparison report.

``run_suite`` runs :func:`~ovn_cvx.verify.comparison.compare_runs` on every problem of a suite (all eight
formulations: linear/kernel × SwSb, SwHb, HwSb, HwHb) and the identity checks of
:mod:`ovn_cvx.verify.checks`; :class:`SuiteReport` aggregates them (qpbenchmark-style metrics) and writes
Markdown, CSV and JSON.

A suite **fails** when an identity check fails (KKT certificate or invariants of the reference, linear-kernel
consistency, the γ → ∞ limit, binary equivalence), when a problem has no certified reference, or when a
high-accuracy or MM result claims success and does not pass its checks. A default-preset result that claims
success and fails its checks lowers that solver's correct rate but does not fail the suite: default
tolerances are the solvers' choice, not a defect of the formulations.
"""
from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import sys
import time
import warnings
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from .._progress import progress_steps
from ..problem import VARIANTS
from .checks import CheckResult, bias_limit, binary_equivalence, invariants, kkt_check, linear_kernel_consistency
from .comparison import CVXPY_SOLVERS, HIGH_ACCURACY, PRESETS, Method, compare_runs, run_method, tolerances
from .suite import DEFAULT_BINARY, DEFAULT_SUITE

KINDS = ("linear", "kernel")
#: qpbenchmark's shift for the shifted geometric mean; applied to times in milliseconds (the suite's
#: problems solve in tens of ms, so a shift of 10 s would make every solver score 1.00)
TIME_SHIFT_MS = 10.0
PACKAGES = ("ovn-cvx", "numpy", "scipy", "scikit-learn", "pandas", "cvxpy", "clarabel", "ecos", "osqp", "scs")


def formulation_name(kernel, variant: str) -> str:
    return f"{'linear' if kernel == 'linear' else 'kernel'}-{variant}"


def _check_formulations(formulations):
    """None → all; else tokens that are a variant, "linear"/"kernel", or "<kind>-<variant>"."""
    if formulations is None:
        return None
    tokens = [formulations] if isinstance(formulations, str) else list(formulations)
    valid = set(VARIANTS) | set(KINDS) | {f"{k}-{v}" for k in KINDS for v in VARIANTS}
    bad = [t for t in tokens if t not in valid]
    if bad or not tokens:
        raise ValueError(f"formulations must be variants {VARIANTS}, kinds {KINDS} or '<kind>-<variant>' "
                         f"(e.g. 'kernel-HwHb'), got {bad or tokens}")
    return set(tokens)


def _selected(tokens, kernel, variant) -> bool:
    if tokens is None:
        return True
    name = formulation_name(kernel, variant)
    return bool(tokens & {variant, name.split("-")[0], name})


def shifted_geometric_mean(values, shift: float = TIME_SHIFT_MS) -> float:
    """exp(mean(log(v + shift))) − shift (qpbenchmark's aggregate of runtimes)."""
    values = np.asarray(values, dtype=float)
    return float(np.exp(np.log(values + shift).mean()) - shift) if values.size else np.nan


def machine_info() -> dict:
    """Machine, Python and package versions, and the date: stamped on every report."""
    versions = {}
    for package in PACKAGES:
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = "not installed"
    return {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "platform": platform.platform(),
            "machine": platform.machine(), "processor": platform.processor() or "unknown",
            "cpu_count": os.cpu_count(), "python": sys.version.split()[0], "versions": versions}


@dataclass
class SuiteReport:
    """Results of :func:`run_suite`: ``comparison`` (one row per problem × method, the columns of
    :func:`~ovn_cvx.verify.comparison.compare` plus case, formulation, N, M, K, pairs), ``checks`` (one row per
    check × measure: value, tolerance, passed), ``unavailable`` (method → reason), ``machine``, ``elapsed``."""

    comparison: pd.DataFrame
    checks: pd.DataFrame
    unavailable: dict = field(default_factory=dict)
    machine: dict = field(default_factory=machine_info)
    elapsed: float = 0.0

    def failures(self) -> list[str]:
        """Human-readable reasons why the suite fails (see the module docstring); empty when it passes."""
        out = []
        if self.comparison.empty:
            out.append("no problem was selected")
        elif (self.comparison["status"] == "unavailable").all():
            out.append("no method could run: every requested solver is unavailable")
        if len(self.checks):
            bad = self.checks[~self.checks["passed"]]
            out += [f"{r.case} {r.formulation}: check {r.check} — {r.measure} = {r.value:.3g} > {r.tolerance:.1g}"
                    for r in bad.itertuples()]
        if not self.comparison.empty:
            ran = self.comparison[self.comparison["status"] != "unavailable"]
            strict = (ran["preset"] == "high") | (ran["method"] == "MM")
            wrong = ran[ran["claimed_success"] & ~ran["checked_success"] & strict]
            out += [f"{r.case} {r.formulation}: {r.method} claims {r.status!r} but fails its checks "
                    f"(rel_gap {r.rel_gap:.3g}, max_df {r.max_df:.3g}, constraints {r.constraint_violation:.3g})"
                    for r in wrong.itertuples()]
        return out

    @property
    def passed(self) -> bool:
        return not self.failures()

    def summary(self) -> pd.DataFrame:
        """Per method (solver and preset), qpbenchmark's metrics over the problems it ran on:
        success_rate (solved AND checks pass), correct_rate (claimed successes that pass the checks),
        certified_rate (KKT certificate at 1e-6), time_sgm and wall_sgm (shifted geometric means, shift 10 ms,
        normalised to the best method, of the solve time — the solver's own, CVXPY compilation excluded; MM's
        whole run — and of the wall time of the whole ``solve`` call; a run that did not pass its checks is
        charged the slowest time of any method on that problem), median and max of the objective gap,
        max |Δf|, constraint violation and KKT residual, and the total wall time."""
        ran = self.comparison[self.comparison["status"] != "unavailable"].copy()
        if ran.empty:
            return pd.DataFrame()
        for column, charged in (("solve_time", "charged_solve"), ("wall_time", "charged_wall")):
            ms = ran[column] * 1e3
            slowest = ms.groupby([ran["case"], ran["formulation"]]).transform("max")
            ran[charged] = np.where(ran["checked_success"], ms, slowest)
        rows = []
        for method, g in ran.groupby("method", sort=False):
            claimed = g["claimed_success"]
            rows.append({
                "method": method, "problems": len(g),
                "success_rate": g["checked_success"].mean(),
                "correct_rate": (g["checked_success"] & claimed).sum() / claimed.sum() if claimed.any() else np.nan,
                "certified_rate": g["certified"].mean(),
                "time_sgm": shifted_geometric_mean(g["charged_solve"]),
                "wall_sgm": shifted_geometric_mean(g["charged_wall"]),
                "median_rel_gap": g["rel_gap"].median(), "max_rel_gap": g["rel_gap"].max(),
                "max_df": g["max_df"].max(), "max_constraint_violation": g["constraint_violation"].max(),
                "max_kkt_residual": g["kkt_residual"].max(), "total_time_s": g["wall_time"].sum()})
        table = pd.DataFrame(rows)
        for column in ("time_sgm", "wall_sgm"):
            table[column] = table[column] / table[column].min()
        return table

    def check_summary(self) -> pd.DataFrame:
        """One row per (case, formulation, check): passed, and the measure closest to its tolerance."""
        if self.checks.empty:
            return pd.DataFrame(columns=["case", "formulation", "check", "passed", "worst_measure", "value",
                                         "tolerance"])
        c = self.checks.assign(ratio=self.checks["value"] / self.checks["tolerance"])
        worst = c.loc[c.groupby(["case", "formulation", "check"], sort=False)["ratio"].idxmax()]
        passed = c.groupby(["case", "formulation", "check"], sort=False)["passed"].all().values
        return worst.assign(passed=passed).rename(columns={"measure": "worst_measure"})[
            ["case", "formulation", "check", "passed", "worst_measure", "value", "tolerance"]].reset_index(drop=True)

    def to_markdown(self) -> str:
        m = self.machine
        versions = ", ".join(f"{k} {v}" for k, v in m["versions"].items())
        lines = ["# ovn_cvx verification report", "",
                 f"- Date: {m['date']}", f"- Machine: {m['platform']} ({m['machine']}, {m['cpu_count']} CPUs)",
                 f"- Python {m['python']}; {versions}",
                 f"- Problems: {self.comparison[['case', 'formulation']].drop_duplicates().shape[0]}; "
                 f"elapsed {self.elapsed:.1f} s; result: **{'PASSED' if self.passed else 'FAILED'}**", ""]
        if self.unavailable:
            lines += ["## Unavailable methods", ""] + [f"- {k}: {v}" for k, v in self.unavailable.items()] + [""]
        lines += ["## Solver comparison", "",
                  "success_rate: solved and checks passed; correct_rate: claimed successes that pass the checks; "
                  "certified_rate: KKT certificate (SPEC §6) at 1e-6; time_sgm / wall_sgm: shifted geometric "
                  "mean (shift 10 ms, 1.00 = fastest) of the solve time (CVXPY compilation excluded) / of the "
                  "wall time of the whole solve call.", "", _markdown_table(self.summary()), "",
                  "## Checks", "", _markdown_table(self.check_summary()), ""]
        failures = self.failures()
        lines += ["## Failures", ""] + ([f"- {f}" for f in failures] if failures else ["none"]) + [""]
        return "\n".join(lines)

    def write(self, out_dir) -> dict:
        """Write report.md, comparison.csv, summary.csv, checks.csv and report.json into ``out_dir``."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = {"markdown": out / "report.md", "comparison": out / "comparison.csv",
                 "summary": out / "summary.csv", "checks": out / "checks.csv", "json": out / "report.json"}
        paths["markdown"].write_text(self.to_markdown())
        self.comparison.to_csv(paths["comparison"], index=False)
        self.summary().to_csv(paths["summary"], index=False)
        self.checks.to_csv(paths["checks"], index=False)
        payload = {"passed": self.passed, "failures": self.failures(), "machine": self.machine,
                   "elapsed": self.elapsed, "unavailable": self.unavailable,
                   "summary": _records(self.summary()), "comparison": _records(self.comparison),
                   "checks": _records(self.checks)}
        paths["json"].write_text(json.dumps(payload, indent=1, allow_nan=False))
        return paths


def _records(frame: pd.DataFrame) -> list[dict]:
    """JSON-safe records (NaN → null)."""
    return json.loads(frame.to_json(orient="records"))


def _markdown_table(frame: pd.DataFrame) -> str:
    if frame.empty:
        return "(none)"

    def fmt(v):
        if isinstance(v, (bool, np.bool_)):
            return "yes" if v else "no"
        if isinstance(v, (float, np.floating)):
            return "–" if np.isnan(v) else (f"{v:.3g}" if abs(v) < 1e-2 or abs(v) >= 1e4 else f"{v:.3f}")
        return str(v)

    header = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    body = ["| " + " | ".join(fmt(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *body])


def _check_rows(case, formulation, check: CheckResult) -> list[dict]:
    return [{"case": case, "formulation": formulation, "check": check.name, "measure": measure, "value": value,
             "tolerance": tol, "passed": bool(value <= tol)} for measure, (value, tol) in check.deviations.items()]


def _methods(solvers, presets) -> list[Method]:
    solvers = list(CVXPY_SOLVERS) + ["MM"] if solvers is None else [solvers] if isinstance(solvers, str) \
        else list(solvers)
    if not solvers:
        raise ValueError("solvers must name at least one solver")
    out = []
    for name in solvers:
        if not isinstance(name, str):
            raise TypeError(f"solvers must be strings, got {type(name).__name__}")
        out += [Method.parse("MM")] if name.upper() == "MM" else [Method.parse(f"{name}:{p}") for p in presets]
    return out


def run_suite(suite=DEFAULT_SUITE, solvers=None, formulations=None, *, presets=PRESETS, binary=DEFAULT_BINARY,
              identities: bool = True, progress: bool = True) -> SuiteReport:
    """Run the suite: every selected problem is compared across ``solvers`` (CVXPY solver names and/or
    "MM"; default: CLARABEL, ECOS, OSQP, SCS and MM) at each preset, and — with ``identities`` — checked
    (KKT certificate and invariants of the reference, invariants of the MM result, linear-kernel consistency
    for linear problems, the γ → ∞ limit for soft-b problems, binary equivalence on ``binary``).

    ``formulations`` selects problems by variant ("SwHb"), kind ("linear", "kernel") or both
    ("kernel-HwHb"). A method that is not available (solver not installed, no MM module) is recorded in
    ``report.unavailable`` and the others still run. ``progress`` shows a tqdm bar on stderr (without tqdm:
    a line per problem).
    """
    with warnings.catch_warnings():
        # CVXPY's "Solution may be inaccurate": the status (optimal_inaccurate) is in the report already
        warnings.filterwarnings("ignore", message="Solution may be inaccurate", category=UserWarning)
        return _run_suite(suite, solvers, formulations, presets, binary, identities, progress)


def _run_suite(suite, solvers, formulations, presets, binary, identities, progress) -> SuiteReport:
    tokens = _check_formulations(formulations)
    if not set(presets) <= set(PRESETS) or not presets:
        raise ValueError(f"presets must be a non-empty subset of {PRESETS}, got {presets}")
    methods = _methods(solvers, presets)
    tasks = [("problem", case, variant) for case in suite for variant in VARIANTS
             if _selected(tokens, case.kernel, variant)]
    if identities:
        tasks += [("binary", case, "HwHb") for case in binary if _selected(tokens, case.kernel, "HwHb")]
    start = time.perf_counter()
    first = next((case.problems(variants=(variant,)) for kind, case, variant in tasks if kind == "problem"), None)
    if first is not None:  # one untimed pass, so that one-time costs (imports, first calls) are charged to no one
        (_, problem), = first
        for method in methods:
            run_method(problem, method)
    tables, checks, unavailable = [], [], {}
    for kind, case, variant in progress_steps(tasks, len(tasks), desc="ovn-cvx verify", enabled=progress):
        formulation = formulation_name(case.kernel, variant)
        if kind == "binary":
            X, y = case.data()
            check = binary_equivalence(X, y, case.beta, case.kernel)
            checks += _check_rows(case.name, formulation, check)
            continue
        (_, problem), = case.problems(variants=(variant,))
        table, results, reference = compare_runs(problem, methods)
        for row in table[table["status"] == "unavailable"].itertuples():
            unavailable.setdefault(row.method, row.note)
        tables.append(table.assign(case=case.name, formulation=formulation, N=problem.n_samples,
                                   M=problem.n_features, K=problem.n_classes, pairs=len(problem.pairs)))
        if not identities:
            continue
        if reference is None:
            checks.append({"case": case.name, "formulation": formulation, "check": "reference",
                           "measure": "no_certified_reference", "value": 1.0, "tolerance": 0.0, "passed": False})
            continue
        found = [kkt_check(reference), invariants(reference)]
        mm = results.get("MM")
        if mm is not None and mm.success:  # with the slack of the accuracy MM claims
            found.append(invariants(mm, slack=tolerances(Method.parse("MM"), mm)["objective"]))
            found[-1].name = "invariants_mm"
        if not problem.is_kernel:
            # an identity of the model: checked on high-accuracy solutions (‖ΔW‖ is only O(√ΔF))
            found.append(linear_kernel_consistency(problem, solver_options=HIGH_ACCURACY["CLARABEL"]))
        if not problem.hard_b:
            found.append(bias_limit(problem))
        for check in found:
            checks += _check_rows(case.name, formulation, check)
    comparison = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()
    front = ["case", "formulation", "N", "M", "K", "pairs"]
    if len(comparison):
        comparison = comparison[front + [c for c in comparison.columns if c not in front]]
    return SuiteReport(comparison=comparison, checks=pd.DataFrame(checks, columns=[
        "case", "formulation", "check", "measure", "value", "tolerance", "passed"]), unavailable=unavailable,
        elapsed=time.perf_counter() - start)


__all__ = ["SuiteReport", "formulation_name", "machine_info", "run_suite", "shifted_geometric_mean"]
