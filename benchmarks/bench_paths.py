"""Warm paths: hyperparameter sweeps of 20 values solved by every method, cold and warm, measured side by side.

Run by hand (not a test):

    python benchmarks/bench_paths.py                              # every path below (4 min on 2 busy cores)
    python benchmarks/bench_paths.py --paths iris-beta wine-raw-beta --repeats 1 --out /tmp/bp

A path varies one hyperparameter over 20 values (``ovn_cvx.verify.paths``): β (hinge cost), α (coupling) or the
RBF kernel width ("rbf_gamma"; the soft-bias penalty γ of B(b) is ``bias_penalty`` and is not swept here).
Methods: the package's MM and SMO (the dual decomposition), each cold and warm (``warm_start=`` the previous
result); every CVXPY solver cold (compiled per point),
"dpp" (compiled once at the first point, re-solved with new parameter values, ``warm_start=False``) and, for OSQP
and SCS, "dpp+warm" (CVXPY's ``warm_start=True``: the previous primal-dual point). Clarabel and ECOS have no warm
start (CVXPY's Clarabel interface then only updates its cached solver's data); on an RBF-width path the data
change, so only the cold modes run. Times are the whole solve call (compilation included), interleaved point by
point (rotating order), the fastest of ``--repeats`` whole-path rounds; kernel matrices and factors are computed
before the clock runs. Every point of every method is checked against a certified reference (tight Clarabel with
the KKT certificate, else certified MM): ``correct`` = claimed success, objective agreement and hard constraints at
that solver's default-preset tolerance (max |Δf| is reported, not judged: see ``run_path``); MM also reports its
proven bound ``gap_bound`` on F − F*.

Paths (data standardized unless "raw"; regime "degenerate" = the optimum has many margin pairs or W ≈ 0):
{paths}

``--n-jobs N`` runs the paths on N local joblib workers (``--scheduler ADDRESS``: on a Dask cluster), one path per
worker: every number but the times is the serial run's, and the times are distorted by the workers sharing the
machine, so timing runs keep the default ``--n-jobs 1``.

Output (``--out``): bench_paths_points.csv (one row per path × point × method), bench_paths.csv (per path ×
method: totals and ratios), bench_paths.md (machine stamp from ``ovn_cvx._reports.environment``, one table per path).
"""
from __future__ import annotations

import argparse
import functools
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

import ovn_cvx
from ovn_cvx import datasets
from ovn_cvx._parallel import parallel_map, pickle_by_value
from ovn_cvx._reports import environment, markdown_table
from ovn_cvx.cli import add_parallel_arguments
from ovn_cvx.verify.comparison import CVXPY_SOLVERS, EXTRA_SOLVERS
from ovn_cvx.verify.paths import path_methods, path_summary, run_path

N_POINTS = 20


@dataclass(frozen=True)
class PathCase:
    name: str
    dataset: str
    variant: str
    kernel: str
    parameter: str
    values: tuple
    regime: str
    fixed: dict = field(default_factory=dict)
    standardize: bool = True

    def describe(self) -> str:
        fixed = ", ".join(f"{k}={v:g}" for k, v in self.fixed.items())
        return (f"{self.name}: {self.dataset}{'' if self.standardize else ' (raw)'}, {self.variant} {self.kernel}"
                f"{', ' + fixed if fixed else ''}; {self.parameter} from {self.values[0]:.3g} to "
                f"{self.values[-1]:.3g} ({self.regime})")


def _geom(low, high):
    return tuple(np.geomspace(low, high, N_POINTS))


PATHS = (
    PathCase("iris-beta", "iris", "SwHb", "linear", "beta", _geom(1e-2, 1e2), "benign", {"alpha": 0.2}),
    PathCase("iris-alpha", "iris", "SwSb", "linear", "alpha", tuple(np.linspace(-0.45, 0.9, N_POINTS)), "benign"),
    # the degenerate end α → 1 (P singular at 1: the minimizer stops being unique, docs/theory.md §3.2)
    PathCase("iris-alpha-to-1", "iris", "SwHb", "linear", "alpha", tuple(1 - np.geomspace(1e-1, 1e-5, N_POINTS)),
             "degenerate"),
    # RBF width relative to scikit-learn's "scale" width 1/(M Var X) = 1/4 on standardized iris
    PathCase("iris-rbf-width", "iris", "SwHb", "rbf", "rbf_gamma", _geom(0.025, 2.5), "benign", {"alpha": 0.2}),
    PathCase("glass-rbf-beta", "glass", "HwHb", "rbf", "beta", _geom(0.1, 100), "benign"),
    # raw wine: uncentred features, the optimal W is nearly 0 (README, "A solver effect, measured")
    PathCase("wine-raw-beta", "wine", "SwHb", "linear", "beta", _geom(0.2, 200), "degenerate", {"alpha": 0.9},
             standardize=False),
    PathCase("emotions-beta", "emotions", "SwHb", "linear", "beta", _geom(1e-2, 1e2), "benign", {"alpha": 0.3}),
)
__doc__ = __doc__.format(paths="\n".join(f"* {p.describe()}" for p in PATHS))


def load(case: PathCase):
    """(X, Y) of the case's data set: iris, wine, glass one-hot; emotions the Mulan training split (391 rows)."""
    if case.dataset == "emotions":
        X, Y = datasets.load_emotions("train", return_X_y=True)
    else:
        X, y = getattr(datasets, f"load_{case.dataset}")(return_X_y=True)
        Y = (y[:, None] == np.unique(y)[None, :]).astype(float)
    X = np.asarray(X, dtype=float)
    if case.standardize:
        X = (X - X.mean(axis=0)) / X.std(axis=0)
    return X, Y


def bench_path(case: PathCase, solvers, repeats):
    X, Y = load(case)
    problem = ovn_cvx.Problem(X, Y, case.variant, case.kernel, **case.fixed)
    methods, skipped = path_methods(case.parameter, solvers)
    start = time.perf_counter()
    points = run_path(problem, case.parameter, case.values, methods, repeats=repeats)
    points.insert(0, "path", case.name)
    summary = path_summary(points.drop(columns="path"))
    summary.insert(0, "path", case.name)
    facts = {"N": problem.n_samples, "M": problem.n_features, "K": problem.n_classes, "pairs": len(problem.pairs),
             "seconds": time.perf_counter() - start, "skipped": skipped}
    return points, summary, facts


def _fmt(value, spec=".2g"):
    return "–" if value is None or (isinstance(value, float) and np.isnan(value)) else format(value, spec)


def report(cases, summaries, facts, machine, args) -> str:
    versions = ", ".join(f"{k} {v}" for k, v in machine["versions"].items())
    lines = ["# Warm paths (benchmarks/bench_paths.py)", "",
             f"- Date: {machine['date']}; machine: {machine['platform']} ({machine['cpu']}, "
             f"{machine['cpu_count']} CPUs); Python {machine['python']}; {versions}",
             f"- Command: `python benchmarks/bench_paths.py --paths {' '.join(c.name for c in cases)} "
             f"--repeats {args.repeats} --solvers {' '.join(args.solvers)}`",
             "- correct: points that claim success and agree with the certified reference in the objective and the "
             "hard constraints (the verification's default-preset tolerances); max rel. diff: "
             "max |F − F_ref|/max(1, |F_ref|); max |Δf|: decision values on the training set, reported, not judged; "
             "MM gap bound: "
             "max proven bound on F − F*; total: wall time of the 20 solve calls (compilation included), the "
             f"fastest of {args.repeats} interleaved round(s); vs cold: total / the same solver's cold total; "
             "vs fastest: total / the fastest method's total on that path.", ""]
    for case in cases:
        s, f = summaries[case.name], facts[case.name]
        lines += [f"## {case.describe()}", "",
                  f"N = {f['N']}, M = {f['M']}, K = {f['K']}, {f['pairs']} pairs; run took {f['seconds']:.1f} s "
                  "(references included).", ""]
        rows = [[r.method, f"{r.correct}/{r.points}", _fmt(r.max_rel_diff), _fmt(r.max_df),
                 _fmt(r.max_gap_bound),
                 _fmt(r.total_time_s, ".3f"), _fmt(r.vs_cold, ".2f"), _fmt(r.vs_fastest, ".2f"),
                 _fmt(r.iterations, ".0f")] for r in s.itertuples()]
        lines.append(markdown_table(["method", "correct", "max rel. diff", "max |Δf|", "MM gap bound", "total [s]",
                                     "vs cold", "vs fastest", "iterations"], rows))
        if f["skipped"]:
            lines += [""] + [f"- {k} not run: {v}" for k, v in f["skipped"].items()]
        lines.append("")
    return "\n".join(lines)


def main(argv=None):
    names = [p.name for p in PATHS]
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.split("\n")[2:]))
    parser.add_argument("--paths", nargs="+", choices=names, default=names, metavar="PATH",
                        help=f"paths to run (default: all of {', '.join(names)})")
    parser.add_argument("--solvers", nargs="+", default=[*CVXPY_SOLVERS, *EXTRA_SOLVERS], type=str.upper,
                        help="CVXPY solvers (default: CLARABEL ECOS OSQP SCS and those of the 'solvers' extra: "
                             "PIQP PROXQP DAQP CVXOPT QOCO); a missing one is skipped with its reason")
    parser.add_argument("--repeats", type=int, default=1, help="whole-path rounds; each method's fastest counts")
    parser.add_argument("--out", default="bench_paths_out", help="directory for the CSV and Markdown files")
    add_parallel_arguments(parser, what="paths (one per worker)", timing=True)
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")
    machine = environment()
    cases = [p for p in PATHS if p.name in args.paths]
    points, summaries, facts = [], {}, {}
    pickle_by_value(sys.modules[__name__])
    for case, (p, summaries[case.name], facts[case.name]) in zip(cases, parallel_map(
            functools.partial(bench_path, solvers=args.solvers, repeats=args.repeats), cases, args.n_jobs,
            args.scheduler, on_result=lambda done: print(f"{done[1]['path'].iloc[0]}: {done[2]['seconds']:.1f} s",
                                                         flush=True))):
        points.append(p)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    pd.concat(points, ignore_index=True).to_csv(out / "bench_paths_points.csv", index=False)
    pd.concat(summaries.values(), ignore_index=True).to_csv(out / "bench_paths.csv", index=False)
    text = report(cases, summaries, facts, machine, args)
    (out / "bench_paths.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
