"""Rendering of a verification run: the Markdown report and the CSV and JSON files."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from .._reports import markdown_table


def render_markdown(report) -> str:
    """The Markdown report of a :class:`~ovn_cvx.verify.results.SuiteReport`: machine, solver comparison, checks,
    failures."""
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
              "wall time of the whole solve call.", "", _markdown_table(report.summary()), "",
              "## Checks", "", _markdown_table(report.check_summary()), ""]
    failures = report.failures()
    lines += ["## Failures", ""] + ([f"- {f}" for f in failures] if failures else ["none"]) + [""]
    return "\n".join(lines)


def write_report(report, out_dir) -> dict:
    """Write report.md, comparison.csv, summary.csv, checks.csv and report.json of ``report`` into ``out_dir``;
    returns the paths by kind."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"markdown": out / "report.md", "comparison": out / "comparison.csv",
             "summary": out / "summary.csv", "checks": out / "checks.csv", "json": out / "report.json"}
    paths["markdown"].write_text(render_markdown(report))
    report.comparison.to_csv(paths["comparison"], index=False)
    report.summary().to_csv(paths["summary"], index=False)
    report.checks.to_csv(paths["checks"], index=False)
    payload = {"passed": report.passed, "failures": report.failures(), "machine": report.machine,
               "elapsed": report.elapsed, "unavailable": report.unavailable,
               "summary": _records(report.summary()), "comparison": _records(report.comparison),
               "checks": _records(report.checks)}
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


__all__ = ["render_markdown", "write_report"]
