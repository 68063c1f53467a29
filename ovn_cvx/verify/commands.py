"""``ovn-cvx verify``: the reference on the built-in suite, every solver, a table of objectives and statuses.

Exit status 1 when a solver fails or disagrees with Clarabel beyond the SPEC §10 tolerance.
"""
from __future__ import annotations

import pandas as pd

from ..solve import solve
from .suite import DEFAULT_SUITE

# SPEC §10: |ΔF| / max(1, |F|) against Clarabel
TOLERANCE = {"CLARABEL": 1e-6, "ECOS": 1e-6, "OSQP": 1e-4, "SCS": 1e-3}


def run_reference_table(solvers=tuple(TOLERANCE)) -> pd.DataFrame:
    rows = []
    for case in DEFAULT_SUITE:
        for variant, problem in case.problems():
            results = {s: solve(problem, solver=s) for s in solvers}
            ref = results["CLARABEL"].objective if "CLARABEL" in results else None
            for s, r in results.items():
                gap = abs(r.objective - ref) / max(1.0, abs(ref)) if ref is not None else float("nan")
                rows.append({"problem": case.name, "variant": variant, "solver": s, "status": r.status,
                             "objective": r.objective, "rel_gap_vs_clarabel": gap,
                             "passed": r.success and not gap > TOLERANCE.get(s, 1e-3)})
    return pd.DataFrame(rows)


def _run(args) -> int:
    table = run_reference_table()
    with pd.option_context("display.max_rows", None, "display.width", 160):
        print(table.to_string(index=False))
    failed = int((~table["passed"]).sum())
    print(f"\n{len(table) - failed} passed, {failed} failed")
    return 1 if failed else 0


def register(subparsers) -> None:
    p = subparsers.add_parser("verify", help="check every formulation and solver against the reference")
    p.set_defaults(run=_run)
