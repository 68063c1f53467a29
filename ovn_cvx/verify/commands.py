"""``ovn-cvx verify`` and ``ovn-cvx compare``.

Both run the verification suite (:func:`~ovn_cvx.verify.runner.run_suite`) and print a one-line verdict first, the
optional solvers that are not installed in one line, then a short summary per method (every table with
``--details``); ``--out DIR`` writes the full reports. ``verify`` adds the identity checks. Their exit statuses are
:data:`EXIT_STATUSES`. The solvers are imported when a command runs, not when its ``--help`` is asked for.
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
import textwrap

from .._variants import FORMULATIONS, KINDS, VARIANTS
from ..cli import add_parallel_arguments, output_directory, positive_seconds, summary

#: exit statuses: every success claim true and every check passed / a false success claim or a failed check /
#: a usage error / no false claim, but a user's solver gave no answer somewhere
PASSED, FAILED, USAGE, UNANSWERED = 0, 1, 2, 3
EXIT_STATUSES = f"""\
exit status:
  {PASSED}  every success claim holds (within its tolerance of the proven
     reference) and every check passed
  {FAILED}  a false success claim (a high-accuracy, MM, SMO or --method run claims
     "optimal" and is not within its tolerance of the proven reference), a
     failed check, a problem without a proven reference, or no method ran
  {USAGE}  usage error: a bad argument, --out not writable, a --method that
     cannot be imported, a --scheduler that does not answer
  {UNANSWERED}  no false claim, but a --method run gave no answer: it raised,
     called sys.exit, took longer than --time-limit or returned something that
     is not a solution (--details shows why)"""
#: the summary columns printed without --details
SHORT_COLUMNS = ["method", "problems", "success_rate", "correct_rate", "certified_rate", "wall_sgm", "max_rel_gap"]
#: how to install the optional solvers that are compared when installed
SOLVERS_EXTRA = 'pip install "ovn-cvx[solvers]"'


def _print_frame(frame) -> None:
    import pandas as pd

    with pd.option_context("display.max_rows", None, "display.max_columns", None, "display.width", 200,
                           "display.max_colwidth", 200, "display.float_format", "{:.3g}".format):
        print(frame.to_string(index=False) if len(frame) else "(none)")


def method_spec(text: str):
    """Argparse type: "QP:clarabel", "qpsolvers:BACKEND", a registered name, or a user's "module:function" (found
    from the current directory, as ``python -m`` finds modules)."""
    from .comparison import REGISTERED, Method
    from .plugins import load_callable

    try:
        if text in REGISTERED or text.lower().startswith(("qp:", "qpsolvers:")):
            return Method.parse(text)
        return Method.plugin(text, load_callable(text))
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _skipped(unavailable: dict) -> list[str]:
    """The methods that could not run, in one line for the optional solvers (with the install hint) and one line
    for the others (each with its reason)."""
    from .comparison import EXTRA_SOLVERS, Method

    optional, other = {}, {}
    for label, reason in unavailable.items():
        method = Method.parse(label)
        name = method.label if method.method == "qp" else method.solver  # a CVXPY solver once, not per preset
        if method.solver in EXTRA_SOLVERS or label.startswith("qpsolvers:"):
            optional[name] = reason
        else:
            other.setdefault(name, reason)
    lines = [f"not installed, skipped: {', '.join(optional)} ({SOLVERS_EXTRA} adds them)"] if optional else []
    return lines + [f"skipped: {name} — {reason}" for name, reason in other.items()]


def _verdict(report, failures: list[str], unanswered) -> tuple[int, str]:
    """The exit status and the one-line verdict."""
    ran = report.comparison[report.comparison["status"] != "unavailable"] if len(report.comparison) else None
    problems = 0 if ran is None else len(ran[["case", "formulation"]].drop_duplicates())
    on = f"on {problems} problem{'s' * (problems != 1)}"
    seconds = f"{report.elapsed:.1f} s"
    if failures:
        return FAILED, f"FAILED: {len(failures)} failure(s) {on} ({seconds}); listed below"
    if len(unanswered):
        return UNANSWERED, (f"NO ANSWER: no false success claim {on}, but {len(unanswered)} run(s) of a --method "
                            f"gave no answer ({seconds}); listed below")
    return PASSED, (f"PASSED: every success claim {on} holds against a proven reference "
                    f"({ran['method'].nunique()} methods, {seconds})")


def _run(args, identities: bool) -> int:
    from . import suite
    from .runner import run_suite

    methods = [dataclasses.replace(m, time_limit=args.time_limit) if m.method == "plugin" else m
               for m in args.method or ()]
    report = run_suite(suite.FULL_SUITE if args.full else suite.DEFAULT_SUITE, solvers=args.solvers,
                       methods=methods or None, formulations=args.formulations,
                       binary=suite.FULL_BINARY if args.full else suite.DEFAULT_BINARY, identities=identities,
                       progress=not args.no_progress, n_jobs=args.n_jobs, scheduler=args.scheduler)
    failures, unanswered = report.failures(), report.unanswered()
    status, verdict = _verdict(report, failures, unanswered)
    print(verdict)
    for line in _skipped(report.unavailable):
        print(line)
    summary_table = report.summary()
    if args.details:
        machine = report.machine
        print(f"\nSolver comparison — {machine['date']}, {machine['platform']}, cvxpy {machine['versions']['cvxpy']}")
        _print_frame(summary_table)
    else:
        print()
        _print_frame(summary_table[SHORT_COLUMNS] if len(summary_table) else summary_table)
    if identities:
        _print_checks(report, args.details)
    if args.details and not identities:
        print("\nPer problem:")
        _print_frame(report.comparison[["case", "formulation", "method", "status", "checked_success", "certified",
                                        "rel_gap", "max_df", "kkt_residual", "wall_time"]])
    if failures:
        print("\nFailures:\n" + "\n".join(f"  {line}" for line in failures))
    if len(unanswered):
        print("\nRuns of a --method without an answer:\n" + "\n".join(_no_answers(unanswered, args.details)))
    if args.out:
        paths = report.write(args.out)
        print(f"\nreports written to {args.out}: " + ", ".join(p.name for p in paths.values()))
    if not args.details:
        print("\n--details: every column, " + ("the per-check table" if identities else "one row per problem")
              + "; --out DIR: the full reports")
    return status


def _no_answers(unanswered, details: bool) -> list[str]:
    """Each run and its reason (``details``), else one line per method: how many runs, of which status."""
    if details:
        return [f"  {r.case} {r.formulation}: {r.method} {r.status} — {r.note}" for r in unanswered.itertuples()]
    lines = []
    for method, runs in unanswered.groupby("method", sort=False):
        statuses = ", ".join(f"{status} {count}" for status, count in runs["status"].value_counts().items())
        lines.append(f"  {method}: {len(runs)} run(s) ({statuses}); --details shows why")
    return lines


def _print_checks(report, details: bool) -> None:
    checks = report.check_summary()
    if details:
        print("\nChecks:")
        _print_frame(checks)
    else:
        kinds = ", ".join(dict.fromkeys(checks["check"]))
        print(f"\nchecks: {int(checks['passed'].sum())} of {len(checks)} passed ({kinds})")


def _add_common(p) -> None:
    p.add_argument("--full", action="store_true",
                   help="the larger suite (more K, M, N, medium sizes, kernels; about 3 min with --n-jobs 1 and "
                        "the 'solvers' extra)")
    p.add_argument("--solvers", nargs="+", metavar="SOLVER",
                   help="CVXPY solvers and/or the package's MM and SMO (default: CLARABEL ECOS OSQP SCS, the "
                        "installed ones of the 'solvers' extra, MM, SMO and the QP methods); each CVXPY solver runs "
                        "at the default and the high-accuracy preset")
    p.add_argument("--method", action="append", metavar="MODULE:FUNCTION", type=method_spec,
                   help="also compare your own solver: a function problem -> SolveResult or (coef, b, status), "
                        "imported from the current directory like 'python -m' (repeatable). It runs in a separate "
                        "process: an exception, a sys.exit, a hang or an invalid answer is its row, not the end of "
                        "the run. Or QP:clarabel / qpsolvers:BACKEND on the exported QP")
    p.add_argument("--time-limit", type=positive_seconds, default=300.0, metavar="SECONDS",
                   help="stop a --method that has not answered on one problem after this many seconds "
                        "(default: %(default)g)")
    p.add_argument("--formulations", nargs="+", metavar="F", choices=FORMULATIONS,
                   help=f"select problems by variant {', '.join(VARIANTS)}, kind {', '.join(KINDS)} or "
                        "'<kind>-<variant>' (e.g. kernel-HwHb)")
    p.add_argument("--details", action="store_true",
                   help="print every table: all summary columns, "
                        + "the per-check table (verify), one row per problem and method (compare)")
    p.add_argument("--out", metavar="DIR", type=output_directory,
                   help="write report.md, comparison.csv, summary.csv, breakdown.csv, profile.csv, checks.csv, "
                        "report.json and performance_profile.png (with matplotlib) into DIR (checked to be "
                        "writable before the run)")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress on stderr (a tqdm bar when tqdm is installed, else a line per problem)")
    add_parallel_arguments(p, what="problems (each with its solvers and checks)")


#: what each command does; the runtimes: the default suite's CPU time (user + sys, one BLAS thread), measured
#: with /usr/bin/time on a 2-core machine (verify 18.3 s, compare 15.4 s; their wall time there, shared with
#: other jobs: 123 s and 117 s)
DESCRIPTIONS = {
    "verify": "Run the built-in suite — multiclass and multilabel data, linear and RBF kernels, the four "
              "formulations — with every installed solver at its default and high-accuracy settings, the package's "
              "MM and dual decomposition (SMO) solvers and the QP methods; judge every answer against a proven "
              "reference (objective gap, decision values, constraints, the KKT certificate) and check the "
              "identities of the model (linear-kernel consistency, the gamma -> infinity limit, binary "
              "equivalence). Prints a one-line verdict first, then a short summary per method. Takes about 20 s on "
              "a 2-core machine (more while other jobs share it).",
    "compare": "Compare solvers on the built-in suite of problems — every installed solver at its default and "
               "high-accuracy settings, the package's MM and SMO solvers, the QP methods and your own solver "
               "(--method MODULE:FUNCTION) — each answer judged against a proven reference: a method claims "
               "success through its status, and the claim is true only when the answer is within its tolerance of "
               "the reference. Prints a one-line verdict first, then a short summary per method. Use it as a CI "
               "gate on your own solver: the exit status is 1 when it makes a false success claim. Takes about 15 s "
               "on a 2-core machine (more while other jobs share it), plus your method's own time.",
}


def register(subparsers) -> None:
    for name, identities in (("verify", True), ("compare", False)):
        p = subparsers.add_parser(name, help=summary(name), epilog=EXIT_STATUSES,
                                  description=textwrap.fill(DESCRIPTIONS[name], 78),
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
        _add_common(p)
        p.set_defaults(run=functools.partial(_run, identities=identities))
