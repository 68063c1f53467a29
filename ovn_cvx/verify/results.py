"""The results of a verification run and their metrics: why it fails, qpbenchmark's per-method summary
(success and correct rates, shifted geometric means of the times), the same by problem family, the performance
profile and the per-check summary."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._reports import environment
from .comparison import PACKAGE_SOLVERS
from .plugins import NO_ANSWER
from .profiles import performance_profile
from .report import render_markdown, write_report

#: qpbenchmark's shift for the shifted geometric mean; applied to times in milliseconds (the suite's
#: problems solve in tens of ms, so a shift of 10 s would make every solver score 1.00)
TIME_SHIFT_MS = 10.0


def shifted_geometric_mean(values, shift: float = TIME_SHIFT_MS) -> float:
    """exp(mean(log(v + shift))) − shift (qpbenchmark's aggregate of runtimes)."""
    values = np.asarray(values, dtype=float)
    return float(np.exp(np.log(values + shift).mean()) - shift) if values.size else np.nan


#: size families of :meth:`SuiteReport.breakdown`, by the number of pairs n (hinge terms)
SIZE_BUCKETS = ((100, "n<100"), (1000, "100≤n<1000"), (np.inf, "n≥1000"))


def size_bucket(pairs: int) -> str:
    return next(label for limit, label in SIZE_BUCKETS if pairs < limit)


def _summarize(ran: pd.DataFrame) -> pd.DataFrame:
    """The per-method metrics of :meth:`SuiteReport.summary` over the rows ``ran`` (methods that ran)."""
    if ran.empty:
        return pd.DataFrame()
    ran = ran.copy()
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
        # normalised with the shift (as qpbenchmark): a method whose own times round to 0 (some CVXPY
        # interfaces report solve_time 0) must not divide every other method by ~1e-15
        table[column] = (table[column] + TIME_SHIFT_MS) / (table[column].min() + TIME_SHIFT_MS)
    return table


def _users(comparison: pd.DataFrame) -> pd.Series:
    """The rows of a user's solver (a table made by hand may have no column "kind": then none)."""
    kind = comparison["kind"] if "kind" in comparison else pd.Series("", index=comparison.index)
    return kind == "plugin"


@dataclass
class SuiteReport:
    """Results of :func:`run_suite`: ``comparison`` (one row per problem × method, the columns of
    :func:`~ovn_cvx.verify.comparison.compare` plus case, formulation, N, M, K, pairs), ``checks`` (one row per
    check × measure: value, tolerance, passed), ``unavailable`` (method → reason), ``machine``, ``elapsed``.

    Parameters
    ----------
    comparison : DataFrame
        One row per problem × method.
    checks : DataFrame
        One row per check × measure.
    unavailable : dict, default={}
        Method → the reason it could not run.
    machine : dict, optional
        A description of the machine and the library versions; by default the current environment's.
    elapsed : float, default=0.0
        Seconds the suite took.

    Examples
    --------
    >>> from ovn_cvx.verify import SuiteCase, run_suite
    >>> report = run_suite([SuiteCase("mc", "multiclass", 30, 2, 3)], solvers=["MM"], formulations=["SwHb"],
    ...                    binary=[], identities=False, progress=False)
    >>> report.comparison[["method", "status"]], report.unavailable
    (  method   status
    0     MM  optimal, {})
    """

    comparison: pd.DataFrame
    checks: pd.DataFrame
    unavailable: dict = field(default_factory=dict)
    machine: dict = field(default_factory=environment)
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
            # a user's solver is judged at the tolerances it was given (the high-accuracy ones by default)
            strict = (ran["preset"] == "high") | ran["method"].isin(list(PACKAGE_SOLVERS)) | _users(ran)
            wrong = ran[ran["claimed_success"] & ~ran["checked_success"] & strict]
            out += [f"{r.case} {r.formulation}: {r.method} claims {r.status!r} but fails its checks "
                    f"(rel_gap {r.rel_gap:.3g}, max_df {r.max_df:.3g}, constraints {r.constraint_violation:.3g})"
                    for r in wrong.itertuples()]
        return out

    def unanswered(self) -> pd.DataFrame:
        """The runs of a user's solver that gave no answer (it raised, exited, took longer than its time limit
        or answered with something that is not a solution: :data:`~ovn_cvx.verify.plugins.NO_ANSWER`): their
        case, formulation, method, status and note (the reason)."""
        columns = ["case", "formulation", "method", "status", "note"]
        if self.comparison.empty:
            return pd.DataFrame(columns=columns)
        return self.comparison.loc[_users(self.comparison) & self.comparison["status"].isin(NO_ANSWER), columns]

    @property
    def passed(self) -> bool:
        return not self.failures()

    def summary(self) -> pd.DataFrame:
        """Per method (solver and preset), qpbenchmark's metrics over the problems it ran on:
        success_rate (solved AND checks pass), correct_rate (claimed successes that pass the checks),
        certified_rate (the KKT certificate at 1e-6: stronger than a proven bound within gap_tol, which SMO's answers
        meet without being exact to round-off), time_sgm and wall_sgm (shifted geometric means, shift 10 ms,
        normalised to the best method, of the solve time — the solver's own, CVXPY compilation excluded; the package's
        solvers' whole run — and of the wall time of the whole ``solve`` call; a run that did not pass its checks is
        charged the slowest time of any method on that problem), median and max of the objective gap,
        max |Δf|, constraint violation and KKT residual, and the total wall time."""
        return _summarize(self.comparison[self.comparison["status"] != "unavailable"])

    def breakdown(self) -> pd.DataFrame:
        """:meth:`summary`'s success_rate, correct_rate, time_sgm and wall_sgm per problem family (as qpbenchmark's
        per-test-set results): ``family`` "kind" (linear/kernel), "variant", "size" (pairs: :data:`SIZE_BUCKETS`)
        or "regime" (benign/degenerate, :func:`~ovn_cvx.verify.comparison.regime`), ``group`` its value; the
        times normalised to the best method within the group."""
        ran = self.comparison[self.comparison["status"] != "unavailable"]
        columns = ["family", "group", "method", "problems", "success_rate", "correct_rate", "time_sgm", "wall_sgm"]
        if ran.empty:
            return pd.DataFrame(columns=columns)
        parts = ran["formulation"].str.split("-", n=1, expand=True)
        families = {"kind": parts[0], "variant": parts[1], "size": ran["pairs"].map(size_bucket),
                    "regime": ran["regime"]}
        tables = [_summarize(ran[key == group]).assign(family=family, group=group)
                  for family, key in families.items() for group in key.drop_duplicates()]
        return pd.concat(tables, ignore_index=True)[columns]

    def profile(self, taus=None, time_column: str = "wall_time") -> pd.DataFrame:
        """The Dolan–Moré performance profile (:func:`~ovn_cvx.verify.profiles.performance_profile`).

        Parameters
        ----------
        taus : array-like of float or None, default=None
            The ratios τ ≥ 1 of the profile; None uses every finite ratio and 1.
        time_column : str, default="wall_time"
            The column of ``comparison`` holding the times.

        Returns
        -------
        DataFrame
            Index τ, one column per method.
        """
        return performance_profile(self.comparison, taus, time_column)

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
        """The Markdown report: machine, solver comparison, performance profile (table; the figure only with
        :meth:`write`), by-family breakdown, checks, failures."""
        return render_markdown(self)

    def write(self, out_dir) -> dict:
        """Write the report files into ``out_dir`` (:func:`~ovn_cvx.verify.report.write_report`).

        Parameters
        ----------
        out_dir : str or path-like
            The directory, created if missing.

        Returns
        -------
        dict
            The paths of the files written, by kind.
        """
        return write_report(self, out_dir)


__all__ = ["SIZE_BUCKETS", "SuiteReport", "TIME_SHIFT_MS", "shifted_geometric_mean", "size_bucket"]
