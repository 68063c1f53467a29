"""Rendering of a verification run: the Markdown report, the performance-profile figure and the CSV and JSON
files."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from .._reports import markdown_table
from .profiles import REPORT_TAUS, plot_performance_profile

PROFILE_FIGURE = "performance_profile.png"


def render_markdown(report, figure: str | None = None, figure_note: str | None = None) -> str:
    """The Markdown report of a :class:`~ovn_cvx.verify.results.SuiteReport`: machine, solver comparison,
    performance profile, by-family breakdown, checks, failures. ``figure``: the profile figure's path relative to
    the report, embedded; ``figure_note``: why there is none."""
    m = report.machine
    versions = ", ".join(f"{k} {v}" for k, v in m["versions"].items())
    lines = ["# ovn_cvx verification report", "",
             f"- Date: {m['date']}", f"- Machine: {m['platform']} ({m['machine']}, {m['cpu_count']} CPUs)",
             f"- Python {m['python']}; {versions}",
             f"- Problems: {report.comparison[['case', 'formulation']].drop_duplicates().shape[0]}; "
             f"elapsed {report.elapsed:.1f} s; result: **{'PASSED' if report.passed else 'FAILED'}**", ""]
    if report.unavailable:
        lines += ["## Unavailable methods", ""] + [f"- {k}: {v}" for k, v in report.unavailable.items()] + [""]
    lines += ["## Solver comparison", "",
              "success_rate: solved and checks passed; correct_rate: claimed successes that pass the checks; "
              "certified_rate: KKT certificate (docs/theory.md §6) at 1e-6; time_sgm / wall_sgm: shifted geometric "
              "mean (shift 10 ms, 1.00 = fastest) of the solve time (CVXPY compilation excluded) / of the "
              "wall time of the whole solve call.", "", _markdown_table(report.summary()), ""]
    lines += _profile_section(report, figure, figure_note) + _breakdown_section(report)
    lines += ["## Checks", "", _markdown_table(report.check_summary()), ""]
    failures = report.failures()
    lines += ["## Failures", ""] + ([f"- {f}" for f in failures] if failures else ["none"]) + [""]
    return "\n".join(lines)


def _profile_section(report, figure, figure_note) -> list[str]:
    if report.comparison.empty:
        return []
    lines = ["## Performance profile", "",
             "Share of the problems each method solved (success AND correct) within τ× the fastest method's wall "
             "time on that problem (Dolan–Moré; ρ(1): how often it is the fastest, ρ(∞) = success_rate). Wall "
             "time of the whole solve call, CVXPY compilation included: some CVXPY interfaces report a solve time "
             "of 0, which has no ratio.", ""]
    if figure is not None:
        lines += [f"![performance profile]({figure})", ""]
    if figure_note is not None:
        lines += [f"Figure: {figure_note}", ""]
    table = report.profile(REPORT_TAUS).T.reset_index().rename(columns={"index": "method"})
    table.columns = ["method"] + [f"τ={tau:g}" for tau in REPORT_TAUS]
    return lines + [_markdown_table(table), ""]


def _breakdown_section(report) -> list[str]:
    breakdown = report.breakdown()
    if breakdown.empty:
        return []
    columns = breakdown.assign(key=breakdown["family"] + ": " + breakdown["group"])
    order = list(dict.fromkeys(columns["key"]))
    counts = columns.groupby("key", sort=False)["problems"].max()
    lines = ["## By problem family", "",
             "The summary's success_rate and wall_sgm within each family: kind (linear/kernel), variant, size "
             "(n = pairs), regime (degenerate: more pairs on the margin at the reference optimum than free primal "
             "directions, `ovn_cvx.verify.comparison.regime`). Problems per family: "
             + ", ".join(f"{k} {counts[k]}" for k in order) + ".", ""]
    for value, title in (("success_rate", "success_rate"), ("wall_sgm", "wall_sgm (1.00 = fastest in the family)")):
        pivot = columns.pivot(index="method", columns="key", values=value).reindex(
            index=list(dict.fromkeys(columns["method"])), columns=order).reset_index()
        lines += [f"{title}:", "", _markdown_table(pivot), ""]
    return lines


def write_report(report, out_dir) -> dict:
    """Write report.md, comparison.csv, summary.csv, breakdown.csv, checks.csv, report.json and, when a problem
    ran, profile.csv and the profile figure (performance_profile.png; without matplotlib the report says why
    not) into ``out_dir``; returns the paths by kind."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"markdown": out / "report.md", "comparison": out / "comparison.csv",
             "summary": out / "summary.csv", "breakdown": out / "breakdown.csv", "checks": out / "checks.csv",
             "json": out / "report.json"}
    figure = note = None
    if not report.comparison.empty:
        profile = report.profile()
        paths["profile"] = out / "profile.csv"
        profile.to_csv(paths["profile"])
        drawn = plot_performance_profile(profile, out / PROFILE_FIGURE,
                                         title=f"Performance profile (ovn_cvx, {report.machine['date'][:10]})")
        if isinstance(drawn, Path):
            paths["figure"], figure = drawn, PROFILE_FIGURE
        else:
            note = drawn
    paths["markdown"].write_text(render_markdown(report, figure, note))
    report.comparison.to_csv(paths["comparison"], index=False)
    report.summary().to_csv(paths["summary"], index=False)
    report.breakdown().to_csv(paths["breakdown"], index=False)
    report.checks.to_csv(paths["checks"], index=False)
    payload = {"passed": report.passed, "failures": report.failures(), "machine": report.machine,
               "elapsed": report.elapsed, "unavailable": report.unavailable,
               "summary": _records(report.summary()), "breakdown": _records(report.breakdown()),
               "comparison": _records(report.comparison), "checks": _records(report.checks)}
    paths["json"].write_text(json.dumps(payload, indent=1, allow_nan=False))
    return paths


def _records(frame: pd.DataFrame) -> list[dict]:
    """JSON-safe records (NaN → null)."""
    return json.loads(frame.to_json(orient="records"))


def _cell(value) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (float, np.floating)):
        if np.isnan(value):
            return "–"
        return f"{value:.3g}" if abs(value) < 1e-2 or abs(value) >= 1e4 else f"{value:.3f}"
    return str(value)


def _markdown_table(frame: pd.DataFrame) -> str:
    if frame.empty:
        return "(none)"
    return markdown_table(frame.columns, [[_cell(v) for v in row] for row in frame.itertuples(index=False)])


__all__ = ["PROFILE_FIGURE", "render_markdown", "write_report"]
