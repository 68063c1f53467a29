"""Benchmark of the MM solver against CVXPY (Clarabel, ECOS, OSQP) and scikit-learn, measured side by side.

Run by hand (not a test):

    python benchmarks/bench_mm.py --sizes small        # linear N=1000, RBF N=500 (about a minute)
    python benchmarks/bench_mm.py --sizes all          # + N=3000/10000 linear, N=1000/2000 RBF (CVXPY: many minutes)
    python benchmarks/bench_mm.py --sizes all --no-cvxpy

Problems: SwHb, K = 5, M = 50, α = 0.2, β = 1, overlapping Gaussian blobs (``make_data``) at separation 0.5 (a
non-degenerate optimum) and 0.3 (degenerate at large N: most pairs on the margin, W ≈ 0 — MM's hard regime, shown,
not hidden; ``--separations`` picks them). For every size and separation: wall time (the fastest of ``--repeats``
runs, every method alike, taken in interleaved rounds so that a slow phase of the shared machine hits every method;
compile time included for CVXPY and shown apart), iterations, peak Python-heap memory (one more run under
tracemalloc, never timed: numpy arrays and CVXPY's Python objects; the solvers' native memory is not seen), the
relative objective gap to the best objective found at that size and separation (the certified MM optimum agrees with
a tight Clarabel solve to ~1e-10), the status and the number of pairs on the margin (|1 − y f| ≤ 1e-6: many = a
degenerate optimum). "MM cold" is the default (``finish="auto"``: the MM phase first when there are at least 5000
pairs, else the interior point); its two halves are also timed alone (``finish="interior"``; ``finish="polish"``:
Newton steps, ε continuation and the polish, no interior point); "MM warm" starts from the solution at β/1.2;
"plain MM" newton=False with the polish (over-relaxation only, at most 3000 iterations). scikit-learn's
LinearSVC(crammer_singer) / SVC solve *other* models: time only.
Then a warm-started path of 20 β values vs 20 cold fits (fastest of ``--repeats`` alternating runs), at the
first separation. The report starts with the machine stamp (``ovn_cvx._reports.environment``).
For real data sets and the whole (variant, α, β, kernel) grid see ``benchmarks/bench_real.py``.
``--n-jobs N`` (``--scheduler ADDRESS``: a Dask cluster) runs the (kernel, N, separation) problems and the paths on N
workers, one BLAS thread each: the times are then distorted by the workers sharing the machine (and by the single
BLAS thread), so timing runs keep the default ``--n-jobs 1``.
"""
from __future__ import annotations

import argparse
import functools
import sys
import time
import tracemalloc
import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.svm import SVC, LinearSVC

import ovn_cvx
from ovn_cvx._parallel import parallel_map, pickle_by_value
from ovn_cvx._reports import environment
from ovn_cvx.cli import add_parallel_arguments
from ovn_cvx.datasets import make_data

SIZES = {"small": {"linear": [1000], "rbf": [500]},
         "medium": {"linear": [1000, 3000], "rbf": [500, 1000]},
         "all": {"linear": [1000, 3000, 10000], "rbf": [500, 1000, 2000]}}
CVXPY_SOLVERS = ("CLARABEL", "ECOS", "OSQP")
# 0.5: overlapping blobs with a non-degenerate optimum at every size; 0.3: a degenerate optimum (at N = 10000,
# 6097 of 10000 pairs on the margin, W ≈ 0, beyond what the polish handles): kept in the report on purpose
SEPARATIONS = (0.5, 0.3)
PLAIN_MM = {"newton": False, "finish": "polish", "max_iter": 3000}  # bounded: plain MM crawls on separable data


@dataclass
class Row:
    kernel: str
    n: int
    separation: float
    method: str
    seconds: float
    compile_seconds: float = float("nan")
    iterations: int | None = None
    objective: float = float("nan")
    status: str = ""
    peak_mb: float = float("nan")
    margin: int | None = None  # pairs with |1 − y f| ≤ 1e-6 at the solution: many of them = a degenerate optimum


def peak_memory(fn):
    """Peak traced MB of one run of fn() under tracemalloc (tracing slows allocation-heavy code: never timed)."""
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return peak


def measure(methods: dict, repeats=1):
    """{name: (value, wall seconds, peak traced MB)} of every fn in ``methods``: the fastest of ``repeats``
    untraced runs, taken in interleaved rounds (every method once per round, so that a slow phase of the shared
    machine hits all of them alike, not whichever ran during it), then one traced run each for the memory."""
    seconds, values = dict.fromkeys(methods, np.inf), {}
    for _ in range(repeats):
        for name, fn in methods.items():
            start = time.perf_counter()
            values[name] = fn()
            seconds[name] = min(seconds[name], time.perf_counter() - start)
    return {name: (values[name], seconds[name], peak_memory(fn)) for name, fn in methods.items()}


def make_problem(kernel, n, beta=1.0, separation=SEPARATIONS[0]):
    X, Y = make_data("multiclass", n, 50, 5, seed=0, separation=separation)
    problem = ovn_cvx.Problem(X, Y, "SwHb", kernel, alpha=0.2, beta=beta)
    if problem.is_kernel:
        problem.gram  # computed on first use and cached: timed here, not inside the first fit
    return problem, X, Y


def is_certified(result, accuracy=1e-6):
    """A proven bound ``gap_bound`` on F − F* within ``accuracy``·max(1, |F|) (the MM with an exact finish)."""
    return bool(result.success and result.gap_bound <= accuracy * max(1.0, abs(result.objective)))


def margin_pairs(result, tol=1e-6):
    if not result.has_solution:
        return None
    return int((np.abs(ovn_cvx.residuals(result.problem, result.coef, result.b)) <= tol).sum())


def fit_quietly(model, X, y):
    """scikit-learn's convergence warnings are about *its* model, not the one benchmarked here."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(X, y)


def bench_size(kernel, n, cvxpy_solvers, max_rbf_n, repeats, separation=SEPARATIONS[0]):
    rows = []
    # the Gram matrix belongs to the problem (built once per kernel, shared by replace()): timed apart; a fit
    # "including the kernel" costs setup + MM cold
    setup = measure({"setup": lambda: make_problem(kernel, n, separation=separation)})["setup"]
    (problem, X, Y), seconds, peak = setup
    if kernel != "linear":
        rows.append(Row(kernel, n, separation, "problem setup (Gram matrix)", seconds, peak_mb=peak))
    previous = ovn_cvx.solve(problem.replace(beta=1.0 / 1.2), method="mm")
    variants = {"MM cold": {}, "MM cold, interior point only": {"finish": "interior"},
                "MM cold, MM phase + polish only": {"finish": "polish"}, "MM warm": {"warm_start": previous}}
    if kernel == "linear":  # plain MM (over-relaxation only, no Newton steps) for comparison
        variants.update({"plain MM cold": PLAIN_MM, "plain MM warm": {**PLAIN_MM, "warm_start": previous}})
    methods = {name: functools.partial(ovn_cvx.solve, problem, method="mm", **options)
               for name, options in variants.items()}
    skipped = []
    for solver in cvxpy_solvers:
        limit = max_rbf_n.get(solver, max_rbf_n["*"]) if kernel != "linear" else np.inf
        if n > limit:
            skipped.append(Row(kernel, n, separation, f"CVXPY {solver}", float("nan"),
                               status=f"skipped (N > {limit}: too slow)"))
        else:
            methods[f"CVXPY {solver}"] = functools.partial(ovn_cvx.solve, problem, solver=solver)
    y = Y.argmax(axis=1)
    if kernel == "linear":
        model = LinearSVC(multi_class="crammer_singer", C=problem.beta, max_iter=100000)
        other = "LinearSVC(crammer_singer) [other model]"
    else:
        model = SVC(kernel="rbf", C=problem.beta / 2)
        other = "SVC rbf (one-vs-one) [other model]"
    methods[other] = functools.partial(fit_quietly, model, X, y)
    measured = measure(methods, repeats)
    for name, (result, seconds, peak) in measured.items():
        if name == other:
            rows.extend(skipped)
            rows.append(Row(kernel, n, separation, name, seconds, status="(time only)", peak_mb=peak))
        elif name.startswith("CVXPY"):
            rows.append(Row(kernel, n, separation, name, seconds, result.compile_time, result.iterations,
                            result.objective, result.status, peak, margin_pairs(result)))
        else:
            status = result.status + (" (certified)" if is_certified(result) else "")
            rows.append(Row(kernel, n, separation, name, seconds, result.info.get("setup_time", float("nan")),
                            result.iterations, result.objective, status, peak, margin_pairs(result)))
    return rows


def bench_path(kernel, n, cold_options, warm_options, repeats, n_betas=20, separation=SEPARATIONS[0]):
    """A warm-started β path (each fit starts at the previous solution, the first one cold) vs the same fits
    cold; the fastest of ``repeats`` runs of each, alternating."""
    problem, _, _ = make_problem(kernel, n, separation=separation)
    betas = np.geomspace(0.25, 4.0, n_betas)
    out = {}
    for _ in range(repeats):
        for mode, options in (("cold", cold_options), ("warm", warm_options)):
            previous, iterations, certified, start = None, 0, 0, time.perf_counter()
            for beta in betas:
                result = ovn_cvx.solve(problem.replace(beta=beta), method="mm", **options,
                                       warm_start=previous if mode == "warm" else None)
                previous = result
                iterations += result.iterations
                certified += is_certified(result)
            seconds = time.perf_counter() - start
            if mode not in out or seconds < out[mode][0]:
                out[mode] = (seconds, iterations, certified)
    return out


PATHS = [("MM", {}, {}), ("plain MM", PLAIN_MM, PLAIN_MM)]


def fmt(value, spec):
    return "–" if value is None or (isinstance(value, float) and np.isnan(value)) else format(value, spec)


def print_table(rows):
    print("| kernel | N | separation | method | time [s] | setup/compile [s] | iterations | rel. gap | status | "
          "pairs on the margin | peak MB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    best = {}
    for row in rows:
        if np.isfinite(row.objective):
            key = (row.kernel, row.n, row.separation)
            best[key] = min(best.get(key, np.inf), row.objective)
    for row in rows:
        ref = best.get((row.kernel, row.n, row.separation))
        gap = (row.objective - ref) / max(1.0, abs(ref)) if np.isfinite(row.objective) else float("nan")
        print(f"| {row.kernel} | {row.n} | {row.separation:g} | {row.method} | "
              f"{fmt(row.seconds, '.3f')} | "
              f"{fmt(row.compile_seconds, '.3f')} | "
              f"{fmt(row.iterations, 'd')} | {fmt(gap, '.1e')} | {row.status} | {fmt(row.margin, 'd')} | "
              f"{fmt(row.peak_mb, '.1f')} |",
              flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", choices=sorted(SIZES), default="small")
    parser.add_argument("--no-cvxpy", action="store_true", help="skip the CVXPY solvers")
    parser.add_argument("--solvers", nargs="+", default=list(CVXPY_SOLVERS), help="CVXPY solvers to run")
    parser.add_argument("--cvxpy-rbf-max", type=int, default=1000,
                        help="skip the CVXPY solvers on RBF problems larger than this (dense N×N eigen-features)")
    parser.add_argument("--ecos-rbf-max", type=int, default=500, help="the same for ECOS (9–12 s at N=500)")
    parser.add_argument("--no-path", action="store_true", help="skip the 20-β path")
    parser.add_argument("--repeats", type=int, default=3,
                        help="time every method this many times and report the fastest (default 3)")
    parser.add_argument("--separations", type=float, nargs="+", default=list(SEPARATIONS),
                        help="blob separations (default 0.5 and the degenerate 0.3); the path uses the first")
    add_parallel_arguments(parser, what="problems and paths", timing=True)
    args = parser.parse_args(argv)
    solvers = [] if args.no_cvxpy else [s.upper() for s in args.solvers]
    m = environment()
    print(f"Machine: {m['date']}, {m['platform']} ({m['machine']}, {m['cpu']}, {m['cpu_count']} CPUs), "
          f"Python {m['python']}; " + ", ".join(f"{k} {v}" for k, v in m["versions"].items()) + "\n", flush=True)
    pickle_by_value(sys.modules[__name__])
    sizes = [(kernel, n, separation) for kernel in ("linear", "rbf") for n in SIZES[args.sizes][kernel]
             for separation in args.separations]
    limits = {"*": args.cvxpy_rbf_max, "ECOS": args.ecos_rbf_max}
    rows = [row for rows in parallel_map(lambda size: bench_size(*size[:2], solvers, limits, args.repeats, size[2]),
                                         sizes, args.n_jobs, args.scheduler) for row in rows]
    print_table(rows)
    if not args.no_path:
        print(f"\n| path (20 β in [0.25, 4], separation {args.separations[0]:g}) | N | "
              "cold: time [s] / iterations | warm: time [s] / iterations | speed-up | certified (cold, warm) |")
        print("|---|---|---|---|---|---|")
        paths = [(kernel, SIZES[args.sizes][kernel][0 if args.sizes == "small" else 1], name, cold, warm)
                 for kernel in ("linear", "rbf") for name, cold, warm in (PATHS if kernel == "linear" else PATHS[:1])]

        def show(done):
            (kernel, n, name, _, _), out = done
            (tc, ic, cc), (tw, iw, cw) = out["cold"], out["warm"]
            print(f"| {name} {kernel} | {n} | {tc:.2f} / {ic} | {tw:.2f} / {iw} | {tc / tw:.1f}× | "
                  f"{cc}/20, {cw}/20 |", flush=True)

        parallel_map(lambda p: (p, bench_path(p[0], p[1], p[3], p[4], args.repeats, separation=args.separations[0])),
                     paths, args.n_jobs, args.scheduler, on_result=show)


if __name__ == "__main__":
    main()
