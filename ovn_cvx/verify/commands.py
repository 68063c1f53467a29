"""``ovn-cvx verify`` and ``ovn-cvx compare``.

``verify`` runs the suite (default: small, about a minute at most; ``--full``: larger problems) with every
check, prints the solver-comparison table and the checks, optionally writes the reports (``--out DIR``:
report.md, comparison.csv, summary.csv, breakdown.csv, profile.csv, checks.csv, report.json and the performance
profile figure) and exits with status 1 when the suite fails (see :mod:`ovn_cvx.verify.runner`). ``compare`` prints
the solver-comparison report only.
"""
from __future__ import annotations

import argparse
import sys

import pandas as pd

from ..cli import add_parallel_arguments, output_directory
from ..problem import VARIANTS
from .comparison import REGISTERED, Method
from .plugins import load_callable
from .runner import KINDS, run_suite
from .suite import DEFAULT_BINARY, DEFAULT_SUITE, FULL_BINARY, FULL_SUITE


def _print_frame(frame: pd.DataFrame) -> None:
    with pd.option_context("display.max_rows", None, "display.max_columns", None, "display.width", 200,
                           "display.float_format", "{:.3g}".format):
        print(frame.to_string(index=False) if len(frame) else "(none)")


def method_spec(text: str) -> Method:
    """Argparse type: "QP:clarabel", "qpsolvers:BACKEND", a registered name, or a user's "module:function"."""
    if text in REGISTERED or text.lower().startswith(("qp:", "qpsolvers:")):
        try:
            return Method.parse(text)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None
    try:
        return Method.plugin(text, load_callable(text))
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _run_suite(args, identities: bool):
    report = run_suite(FULL_SUITE if args.full else DEFAULT_SUITE, solvers=args.solvers, methods=args.method,
                       formulations=args.formulations, binary=FULL_BINARY if args.full else DEFAULT_BINARY,
                       identities=identities, progress=not args.no_progress, n_jobs=args.n_jobs,
                       scheduler=args.scheduler)
    for method, reason in report.unavailable.items():
        print(f"warning: {method} skipped — {reason}", file=sys.stderr)
    print(f"ovn_cvx solver comparison — {report.machine['date']}, {report.machine['platform']}, "
          f"cvxpy {report.machine['versions']['cvxpy']}")
    _print_frame(report.summary())
    return report


def _finish(args, report) -> int:
    if args.out:
        paths = report.write(args.out)
        print("reports written: " + ", ".join(str(p) for p in paths.values()))
    failures = report.failures()
    print(f"\n{'PASSED' if not failures else 'FAILED'} in {report.elapsed:.1f} s" +
          (f": {len(failures)} failure(s)" if failures else ""))
    for line in failures:
        print(f"  {line}")
    return 1 if failures else 0


def _verify(args) -> int:
    report = _run_suite(args, identities=True)
    print("\nChecks:")
    _print_frame(report.check_summary())
    return _finish(args, report)


def _compare(args) -> int:
    report = _run_suite(args, identities=False)
    if args.details:
        print("\nPer problem:")
        _print_frame(report.comparison[["case", "formulation", "method", "status", "checked_success", "certified",
                                        "rel_gap", "max_df", "kkt_residual", "wall_time"]])
    return _finish(args, report)


def _add_common(p) -> None:
    p.add_argument("--full", action="store_true", help="the larger suite (more K, M, N, medium sizes, kernels)")
    p.add_argument("--solvers", nargs="+", metavar="SOLVER",
                   help="CVXPY solvers and/or MM (default: CLARABEL ECOS OSQP SCS, the installed ones of the "
                        "'solvers' extra, MM and the QP methods); each runs at the default and the "
                        "high-accuracy preset")
    p.add_argument("--method", action="append", metavar="MODULE:FUNCTION", type=method_spec,
                   help="also compare a user's solver, a callable problem -> SolveResult or (coef, b, status) "
                        "(repeatable); or QP:clarabel / qpsolvers:BACKEND on the exported QP")
    p.add_argument("--formulations", nargs="+", metavar="F",
                   choices=[*VARIANTS, *KINDS, *(f"{k}-{v}" for k in KINDS for v in VARIANTS)],
                   help=f"select problems by variant {VARIANTS}, kind {KINDS} or '<kind>-<variant>'")
    p.add_argument("--out", metavar="DIR", type=output_directory,
                   help="write report.md, comparison.csv, summary.csv, breakdown.csv, profile.csv, checks.csv, "
                        "report.json and performance_profile.png (with matplotlib) into DIR")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress on stderr (a tqdm bar when tqdm is installed, else a line per problem)")
    add_parallel_arguments(p, what="problems (each with its solvers and checks)")


def register(subparsers) -> None:
    p = subparsers.add_parser("verify", help="check every formulation and solver: reference, KKT, identities")
    _add_common(p)
    p.set_defaults(run=_verify)
    p = subparsers.add_parser("compare", help="solver-comparison report (success, correct rate, time, residuals)")
    _add_common(p)
    p.add_argument("--details", action="store_true", help="also print one row per problem and method")
    p.set_defaults(run=_compare)
