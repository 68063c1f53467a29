"""Real-data benchmark: the MM solver against CVXPY (Clarabel, ECOS, OSQP at default settings), side by side.

Run by hand (not a test):

    python benchmarks/bench_real.py --quick                       # 6 problems per data set, N ≤ 300 (~5 min)
    python benchmarks/bench_real.py --quick --datasets iris,glass --out /tmp/bq
    python benchmarks/bench_real.py --full --out results/real     # the whole grid, N ≤ 2000 (hours)

Data: glass, emotions, scene (bundled with ovn_cvx) and iris, wine, breast_cancer, digits (bundled with
scikit-learn), standardized (StandardScaler after subsampling). Above ``--max-samples`` rows a deterministic
subsample (a fixed permutation, every class kept) is taken. Multilabel Y is the 0/1 indicator (0 = no information).
Grid (``--full``): the four variants × α ∈ {−1/(K−1) + 1e-3, 0, 0.5, 0.9, 0.99} (soft-w variants only; hard-w
use α = 0) × β ∈ {0.01, 1, 100, 1e4} × linear and RBF (γ = "scale"): 96 problems per data set.
``--quick``: 6 fixed points of that grid per data set (every variant, both kernels, both ends of α and β).

Per problem: every method's wall time (the whole ``ovn_cvx.solve`` call: CVXPY's compile included; the fastest of
``--repeats`` runs, taken in interleaved rounds whose order rotates, each run on a fresh ``Problem`` with the Gram
matrix given, so that no method inherits another's kernel factorization), status, ``success``, MM's proven bound
``gap_bound`` (absent in older MM versions: recorded as empty) and the gap to the best objective found.
A tight Clarabel solve (tolerances 1e-10) is the reference; it enters "best" but is never timed as a competitor.
All BLAS/OpenMP pools are limited to one thread for every method. The report defines every statistic.
``--n-jobs N`` (``--scheduler ADDRESS``: a Dask cluster) runs the problems of each data set on N workers (each warmed
up once, one BLAS thread): every number but the times is the serial run's; the times are distorted by the workers
sharing the machine, so timing runs keep the default ``--n-jobs 1``.
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
import math
import subprocess
import sys
import time
import warnings
from pathlib import Path

DATASETS = ("iris", "wine", "glass", "breast_cancer", "digits", "emotions", "scene")
VARIANTS = ("SwSb", "SwHb", "HwSb", "HwHb")
KERNELS = ("linear", "rbf")
ALPHAS = ("low", 0.0, 0.5, 0.9, 0.99)  # "low": the lower end −1/(K−1) plus LOW_OFFSET
LOW_OFFSET = 1e-3
BETAS = (0.01, 1.0, 100.0, 1e4)
CVXPY_SOLVERS = ("CLARABEL", "ECOS", "OSQP")
#: the quick subset: (variant, kernel, alpha, beta) — every variant, both kernels, both ends of α and β
QUICK = (("SwSb", "linear", 0.0, 1.0), ("SwHb", "linear", "low", 100.0), ("HwSb", "linear", 0.0, 1e4),
         ("HwHb", "rbf", 0.0, 1.0), ("SwSb", "rbf", 0.99, 0.01), ("SwHb", "rbf", 0.5, 100.0))
MAX_SAMPLES = {"full": 2000, "quick": 300}
REFERENCE = "reference"  # a tight Clarabel solve: defines "best", not a competitor
REFERENCE_OPTIONS = {"solver": "CLARABEL", "tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10,
                     "max_iter": 2000}
GAP_TOL = 1e-6  # requested relative accuracy: certified / false-claim threshold
FEAS_TOL = 1e-6  # relative violation of the hard constraints above which a point is not a solution
COLUMNS = ("problem", "dataset", "task", "n", "m", "k", "pairs", "variant", "kernel", "alpha", "beta", "method",
           "competitor", "seconds", "runs", "status", "success", "objective", "feasible_objective", "violation",
           "iterations", "margin_pairs", "gap_bound", "best_objective", "rel_gap", "ref_accuracy", "certified",
           "false_claim", "bound_unsound", "warnings", "error")


# --------------------------------------------------------------------------------------------------------------
# data and grid
def _one_hot(y):
    import numpy as np
    classes, codes = np.unique(y, return_inverse=True)
    Y = np.zeros((len(y), classes.size))
    Y[np.arange(len(y)), codes] = 1.0
    return Y


def subsample(Y, n, seed=0):
    """Indices (sorted) of a deterministic subsample of n rows: the first n of a fixed permutation, then, for every
    class left without a member, its first member in the rest of the permutation swapped in for a row of a class
    that keeps at least two members."""
    import numpy as np
    if Y.shape[0] <= n:
        return np.arange(Y.shape[0])
    order = np.random.default_rng(seed).permutation(Y.shape[0])
    keep, rest = list(order[:n]), order[n:]
    for k in np.flatnonzero(~(Y[keep] == 1).any(axis=0)):
        counts = (Y[keep] == 1).sum(axis=0)
        donor = next(j for j in range(len(keep) - 1, -1, -1)
                     if all(counts[c] >= 2 for c in np.flatnonzero(Y[keep[j]] == 1)))
        keep[donor] = next(i for i in rest if Y[i, k] == 1)
    return np.sort(np.asarray(keep))


def load(name, max_samples):
    """(X standardized, Y membership, task) of a data set, subsampled to at most max_samples rows."""
    import sklearn.datasets
    from sklearn.preprocessing import StandardScaler
    from ovn_cvx import datasets
    if name in ("emotions", "scene"):
        X, Y = getattr(datasets, f"load_{name}")(return_X_y=True)
        task = "multilabel"
    else:
        loader = datasets.load_glass if name == "glass" else getattr(sklearn.datasets, f"load_{name}")
        X, y = loader(return_X_y=True)
        Y, task = _one_hot(y), "multiclass"
    keep = subsample(Y, max_samples)
    X, Y = X[keep], Y[keep]
    return StandardScaler().fit_transform(X), Y, task


@dataclasses.dataclass(frozen=True)
class Point:
    variant: str
    kernel: str
    alpha: object  # a float or "low"
    beta: float

    def alpha_value(self, n_classes):
        if self.variant.startswith("Hw"):
            return 0.0
        return -1.0 / (n_classes - 1) + LOW_OFFSET if self.alpha == "low" else float(self.alpha)


def grid(quick, variants, kernels):
    if quick:
        points = [Point(*p) for p in QUICK]
    else:
        points = [Point(v, kern, a, b) for kern in KERNELS for v in VARIANTS
                  for a in (ALPHAS if v.startswith("Sw") else (0.0,)) for b in BETAS]
    return [p for p in points if p.variant in variants and p.kernel in kernels]


# --------------------------------------------------------------------------------------------------------------
# measuring
def make_problem(X, Y, point, gram=None):
    """A fresh Problem (no cached kernel factorization); the Gram matrix, data rather than solver work, is given."""
    import ovn_cvx
    problem = ovn_cvx.Problem(X, Y, point.variant, point.kernel, alpha=point.alpha_value(Y.shape[1]),
                              beta=point.beta)
    if gram is not None:
        try:
            problem.gram = gram  # fills the cached property (computed once per data set and kernel)
        except AttributeError:  # not settable in this version: every call computes its own, alike
            pass
    return problem


def methods(solvers):
    import ovn_cvx
    out = {"MM": lambda p: ovn_cvx.solve(p, method="mm")}
    for solver in solvers:
        out[solver] = lambda p, s=solver: ovn_cvx.solve(p, "cvxpy", solver=s)
    return out


def _call(fn, problem):
    """(result or exception, seconds, warning messages) of fn(problem): the whole call is timed, less the time a
    reference back end's result spent proving its own bound (``info["bound_time"]``: the package's work, not the
    back end's)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        try:
            value = fn(problem)
        except Exception as err:  # noqa: BLE001 — a raw error on valid input is a result to report
            value = err
        seconds = time.perf_counter() - start
    if isinstance(getattr(value, "info", None), dict):
        seconds -= value.info.get("bound_time", 0.0)
    return value, seconds, sorted({f"{w.category.__name__}: {str(w.message)[:80]}" for w in caught})


def measure(fns, make, repeats, repeat_below):
    """{name: (result or exception, fastest seconds, runs, warnings)}: ``repeats`` interleaved rounds (every method
    once per round, the order rotated each round, so that a slow phase of the shared machine hits every method
    alike); a method whose first run took longer than ``repeat_below`` seconds is not run again."""
    names, out = list(fns), {}
    for r in range(repeats):
        for name in names[r % len(names):] + names[:r % len(names)]:
            if name in out and out[name][1] > repeat_below:
                continue
            value, seconds, caught = _call(fns[name], make())
            if name not in out:
                out[name] = (value, seconds, 1, caught)
            else:
                _, best, runs, caught0 = out[name]
                out[name] = (value, min(best, seconds), runs + 1, caught0)
    return out


def _project(problem, coef, b):
    """The nearest point satisfying the variant's hard constraints (Σ_k w_k = 0, Σ_k b_k = 0) exactly."""
    if problem.hard_w:
        coef = coef - coef.mean(axis=1, keepdims=True)
    if problem.hard_b:
        b = b - b.mean()
    return coef, b


def describe(problem, name, value, seconds, runs, caught):
    """One CSV row (without the per-problem comparison columns) of a method's outcome."""
    import numpy as np
    import ovn_cvx
    row = {"method": name, "competitor": name != REFERENCE, "seconds": seconds, "runs": runs,
           "warnings": "; ".join(caught), "error": "", "gap_bound": math.nan, "iterations": math.nan,
           "objective": math.nan, "feasible_objective": math.nan, "violation": math.nan, "success": False,
           "margin_pairs": math.nan}
    if isinstance(value, Exception):
        row.update(status=f"exception {type(value).__name__}", error=str(value)[:200].replace("\n", " "))
        return row
    row.update(status=value.status, success=bool(value.success), objective=float(value.objective),
               iterations=value.iterations if value.iterations is not None else math.nan)
    bound = getattr(value, "gap_bound", None)
    row["gap_bound"] = float(bound) if bound is not None else math.nan
    if "error" in value.info:
        row["error"] = str(value.info["error"])[:200].replace("\n", " ")
    if value.coef is not None:
        coef, b = np.asarray(value.coef, dtype=float), np.asarray(value.b, dtype=float)
        scale = max(1.0, float(np.abs(coef).max(initial=0.0)), float(np.abs(b).max(initial=0.0)))
        violation = ovn_cvx.constraint_violation(problem, coef, b)
        row["violation"] = max(violation.values(), default=0.0) / scale
        row["feasible_objective"] = ovn_cvx.objective(problem, *_project(problem, coef, b))
        # pairs with |1 − y f| ≤ 1e-6: many more than K(d+1) = a degenerate optimum (MM's hard regime)
        row["margin_pairs"] = int((np.abs(ovn_cvx.residuals(problem, coef, b)) <= 1e-6).sum())
        if name == REFERENCE and "cvxpy_value" in value.info:
            row["_model_value"] = float(value.info["cvxpy_value"])
    return row


def compare(rows):
    """Fill the comparison columns of one problem's rows in place (definitions in the report).

    best = the lowest objective of any method's point made exactly feasible (an upper bound on F*);
    rel_gap = (objective − best) / max(1, |best|); ref_accuracy ρ = max(the reference's shortfall
    (F_ref − best) / max(1, |best|), |CVXPY's model value − F_ref| / max(1, |best|)), 0 without a reference;
    certified = success and gap_bound ≤ 1e-6 max(1, |F|); false_claim = success and (rel_gap > 1e-6 + ρ or
    violation > 1e-6); bound_unsound = gap_bound < F − best − 1e-9 max(1, |best|) (a bound below a measured gap)."""
    finite = [r["feasible_objective"] for r in rows if math.isfinite(r["feasible_objective"])]
    best = min(finite) if finite else math.nan
    scale = max(1.0, abs(best)) if finite else math.nan
    ref = next((r for r in rows if r["method"] == REFERENCE), None)
    rho = 0.0
    if ref is not None and math.isfinite(ref["objective"]):
        rho = max(0.0, (ref["objective"] - best) / scale,
                  abs(ref.get("_model_value", ref["objective"]) - ref["objective"]) / scale)
    for r in rows:
        r.pop("_model_value", None)
        r["best_objective"], r["ref_accuracy"] = best, rho
        r["rel_gap"] = (r["objective"] - best) / scale if math.isfinite(r["objective"]) else math.nan
        bound = r["gap_bound"]
        r["certified"] = bool(r["success"] and math.isfinite(bound)
                              and bound <= GAP_TOL * max(1.0, abs(r["objective"])))
        r["false_claim"] = bool(r["success"] and (not r["rel_gap"] <= GAP_TOL + rho
                                                  or not r["violation"] <= FEAS_TOL))
        r["bound_unsound"] = bool(math.isfinite(bound) and math.isfinite(r["rel_gap"])
                                  and bound < r["rel_gap"] * scale - 1e-9 * scale)
    return rows


def bench_dataset(name, points, solvers, max_samples, repeats, repeat_below, reference=True, log=print, n_jobs=1,
                  scheduler=None):
    """Rows of every problem (point of the grid) on one data set; ``n_jobs`` > 1 (``scheduler``: a Dask cluster) runs
    the points on that many workers, each warmed up once and single-threaded (times distorted, see ``--n-jobs``)."""
    from ovn_cvx._parallel import parallel_map, pickle_by_value
    X, Y, task = load(name, max_samples)
    grams = {}
    for point in points:  # the Gram matrix is data, computed once per kernel before any timing
        if point.kernel != "linear" and point.kernel not in grams:
            grams[point.kernel] = make_problem(X, Y, point).gram
    serial = n_jobs == 1 and scheduler is None
    pickle_by_value(sys.modules[__name__])
    run = functools.partial(bench_point, name=name, X=X, Y=Y, task=task, grams=grams, solvers=solvers,
                            repeats=repeats, repeat_below=repeat_below, reference=reference,
                            warm=None if serial else solvers)
    done = parallel_map(run, points, n_jobs, scheduler, on_result=lambda rows: log(progress_line(rows)))
    return [row for rows in done for row in rows]


#: per process: the solvers :func:`warm_up` has run (a parallel worker warms up before its first problem)
_WARMED = set()


def bench_point(point, name, X, Y, task, grams, solvers, repeats, repeat_below, reference=True, warm=None):
    """The rows of one problem (every method, and the reference) of data set ``name``. ``warm``: the solvers to
    warm up first if this process has not (a parallel worker), with its BLAS pools at one thread as in :func:`run`."""
    import ovn_cvx
    if warm is not None and not set(warm) <= _WARMED:
        warm_up(warm)
    gram = grams.get(point.kernel)
    problem = make_problem(X, Y, point, gram)
    alpha = point.alpha_value(Y.shape[1])
    pid = f"{name}/{point.variant}/{point.kernel}/a={alpha:.4g}/b={point.beta:g}"
    measured = measure(methods(solvers), lambda: make_problem(X, Y, point, gram), repeats, repeat_below)
    if reference:
        ref_fn = lambda p: ovn_cvx.solve(p, "cvxpy", **REFERENCE_OPTIONS)  # noqa: E731
        value, seconds, caught = _call(ref_fn, make_problem(X, Y, point, gram))
        measured[REFERENCE] = (value, seconds, 1, caught)
    problem_rows = []
    for method, (value, seconds, runs, caught) in measured.items():
        row = {"problem": pid, "dataset": name, "task": task, "n": problem.n_samples, "m": problem.n_features,
               "k": problem.n_classes, "pairs": len(problem.pairs), "variant": point.variant,
               "kernel": point.kernel, "alpha": alpha, "beta": point.beta}
        row.update(describe(problem, method, value, seconds, runs, caught))
        problem_rows.append(row)
    compare(problem_rows)
    return problem_rows


def progress_line(rows):
    mm = next(r for r in rows if r["method"] == "MM")
    cvx = [r for r in rows if r["competitor"] and r["method"] != "MM"]
    parts = [f"{r['method']} {r['seconds']:.3f}s {r['status']}" for r in cvx]
    bound = "–" if not math.isfinite(mm["gap_bound"]) else f"{mm['gap_bound']:.1e}"
    margin = _f(mm["margin_pairs"], ".0f")
    return (f"{mm['problem']:<42} N={mm['n']:<5} pairs={mm['pairs']:<6} margin={margin:<5} "
            f"MM {mm['seconds']:.3f}s {mm['status']} gap {mm['rel_gap']:.1e} bound {bound} | " + " | ".join(parts))


# --------------------------------------------------------------------------------------------------------------
# summary
def geomean(values):
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else math.nan


def per_problem(rows):
    """One record per problem: MM's time and verdicts, and the fastest successful CVXPY solver (time, name), and
    the fastest one whose objective is within 1e-6 (+ρ) of the best ("accurate")."""
    problems = {}
    for r in rows:
        problems.setdefault(r["problem"], []).append(r)
    out = []
    for pid, group in problems.items():
        mm = next((r for r in group if r["method"] == "MM"), None)
        if mm is None:
            continue
        cvx = [r for r in group if r["competitor"] and r["method"] != "MM"]
        ok = [r for r in cvx if r["success"]]
        accurate = [r for r in ok if r["rel_gap"] <= GAP_TOL + r["ref_accuracy"]]
        fastest = min(ok, key=lambda r: r["seconds"]) if ok else None
        fastest_acc = min(accurate, key=lambda r: r["seconds"]) if accurate else None
        out.append({"problem": pid, "dataset": mm["dataset"], "kernel": mm["kernel"], "variant": mm["variant"],
                    "n": mm["n"], "k": mm["k"], "pairs": mm["pairs"], "mm_seconds": mm["seconds"],
                    "mm_status": mm["status"], "mm_certified": mm["certified"],
                    "cvxpy_fastest": fastest["method"] if fastest else None,
                    "cvxpy_seconds": fastest["seconds"] if fastest else math.nan,
                    "speedup": fastest["seconds"] / mm["seconds"] if fastest else math.nan,
                    "speedup_accurate": fastest_acc["seconds"] / mm["seconds"] if fastest_acc else math.nan})
    return out


def summarize(rows):
    """Every number of the report's summary, computed from the CSV rows alone."""
    records = per_problem(rows)
    timed = [p for p in records if math.isfinite(p["speedup"])]

    def speed(group):
        values = [p["speedup"] for p in group]
        worst = min(group, key=lambda p: p["speedup"]) if group else None
        return {"problems": len(group), "geomean": geomean(values),
                "mm_faster": sum(v > 1 for v in values), "worst": worst["speedup"] if worst else math.nan,
                "worst_problem": worst["problem"] if worst else None}

    by = {}
    for key in ("kernel", "dataset", "variant"):
        by[key] = {value: speed([p for p in timed if p[key] == value])
                   for value in dict.fromkeys(p[key] for p in timed)}
    accurate = [p["speedup_accurate"] for p in records if math.isfinite(p["speedup_accurate"])]
    worst = min(timed, key=lambda p: p["speedup"]) if timed else None
    claims = {}
    for method in dict.fromkeys(r["method"] for r in rows):
        mine = [r for r in rows if r["method"] == method]
        claimed = [r for r in mine if r["success"]]
        claims[method] = {"runs": len(mine), "success": len(claimed),
                          "false": sum(r["false_claim"] for r in mine),
                          "exceptions": sum(r["status"].startswith("exception") for r in mine),
                          "max_gap_claimed": max((r["rel_gap"] for r in claimed), default=math.nan),
                          "bound_unsound": sum(r["bound_unsound"] for r in mine)}
    mm_rows = [r for r in rows if r["method"] == "MM"]
    refs = [r for r in rows if r["method"] == REFERENCE]
    return {"problems": len(records), "timed": len(timed), "no_cvxpy_success": len(records) - len(timed),
            "overall": speed(timed), "by": by,
            "geomean_accurate": geomean(accurate), "accurate_problems": len(accurate),
            "worst": {"problem": worst["problem"], "speedup": worst["speedup"], "mm_seconds": worst["mm_seconds"],
                      "cvxpy": worst["cvxpy_fastest"], "cvxpy_seconds": worst["cvxpy_seconds"]} if worst else None,
            "certified": sum(r["certified"] for r in mm_rows), "mm_runs": len(mm_rows),
            "with_bound": sum(math.isfinite(r["gap_bound"]) for r in mm_rows),
            "claims": claims,
            "reference_failed": sum(not r["success"] for r in refs),
            "ref_accuracy_max": max((r["ref_accuracy"] for r in refs), default=math.nan),
            "ref_accuracy_median": sorted(r["ref_accuracy"] for r in refs)[len(refs) // 2] if refs else math.nan}


# --------------------------------------------------------------------------------------------------------------
# report
def _f(value, spec=".3g"):
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    return format(value, spec)


def _x(value):
    return _f(value) + ("×" if value is not None and math.isfinite(value) else "")


DEFINITIONS = f"""\
## Definitions

- **time**: wall time of the whole `ovn_cvx.solve` call (CVXPY: building and compiling the formulation included;
  kernels: the Gram matrix is given, every factorization is the method's own), the fastest of the runs taken in
  interleaved rounds (order rotated each round); one BLAS/OpenMP thread for every method.
- **best**: the lowest objective F of any method's point (the competitors and the reference) after projecting it
  onto the variant's hard constraints (Σ_k w_k = 0, Σ_k b_k = 0, exact up to round-off). A feasible point's F is
  ≥ F*, so best ≥ F* and the **gap** (F − best) / max(1, |best|) is a *lower bound* on the true relative gap.
- **reference**: Clarabel with tol_gap_abs = tol_gap_rel = tol_feas = 1e-10 (not timed as a competitor).
  **ρ (measured reference accuracy)** = max((F_ref − best) / max(1, |best|), |CVXPY's model value − F_ref| /
  max(1, |best|)): how far the tight reference is from the best point found, and how far CVXPY's value of its
  own model is from the exact objective (0 when the reference produced no solution).
- **false success claim**: `success` is True (MM "converged", CVXPY "optimal") but gap > {GAP_TOL:g} + ρ, or the
  point violates a hard constraint by more than {FEAS_TOL:g} relative to max(1, max|coef|, max|b|). As the gap
  is a lower bound on the true gap, every counted claim is false for certain; ρ only makes the count more
  conservative where the reference itself is off. (The reference's own gap is part of ρ: only a violated
  constraint can make its claim count as false.)
- **certified** (MM): `success` and `gap_bound` (a proven bound on F − F*) ≤ {GAP_TOL:g}·max(1, |F|);
  MM versions without `gap_bound` certify nothing. **unsound bound**: gap_bound < F − best − 1e-9·max(1, |best|)
  (a proven bound below a measured gap: impossible for a correct bound).
- **speed-up** = time of the fastest CVXPY solver whose `success` is True / time of MM (> 1: MM faster), per
  problem; aggregated by geometric mean. Problems where no CVXPY solver succeeded are left out (counted apart).
  "accurate" speed-up: the same against the fastest CVXPY solver whose gap ≤ {GAP_TOL:g} + ρ.
"""


def report(rows, summary, meta):
    s, lines = summary, []
    add = lines.append
    add("# Real-data benchmark: MM vs CVXPY\n")
    add(f"Command: `{meta['command']}`  ")
    m = meta["machine"]
    add(f"Machine: {m['date']}, {m['platform']} ({m['machine']}, {m['cpu']}, {m['cpu_count']} CPUs), "
        f"Python {m['python']}; " + ", ".join(f"{k} {v}" for k, v in m["versions"].items()) + "  ")
    add(f"Code: {meta['commit']}; BLAS/OpenMP threads: 1; repeats: {meta['repeats']} (runs over "
        f"{meta['repeat_below']:g} s not repeated); max samples: {meta['max_samples']}; "
        f"solvers: {', '.join(meta['solvers'])}; elapsed {meta['elapsed']:.0f} s\n")
    add("## Summary\n")
    o = s["overall"]
    add(f"- Problems: {s['problems']} ({s['no_cvxpy_success']} without a successful CVXPY solver, left out of "
        "the speed-ups)")
    add(f"- **Speed-up of MM over the fastest successful CVXPY solver (geometric mean): {_x(o['geomean'])}** "
        f"over {o['problems']} problems; MM faster on {o['mm_faster']}/{o['problems']}; over the fastest "
        f"accurate CVXPY solver: {_x(s['geomean_accurate'])} ({s['accurate_problems']} problems)")
    if s["worst"]:
        w = s["worst"]
        add(f"- **Worst case: {_x(w['speedup'])}** on `{w['problem']}` (MM {w['mm_seconds']:.3f} s, "
            f"{w['cvxpy']} {w['cvxpy_seconds']:.3f} s)")
    share = 100 * s["certified"] / max(1, s["mm_runs"])
    add(f"- **MM certified: {s['certified']}/{s['mm_runs']}** ({_f(share, '.0f')} %; {s['with_bound']} results carry "
        "a gap_bound)")
    false = ", ".join(f"{k} {v['false']}" for k, v in s["claims"].items())
    add(f"- **False success claims: {false}**")
    add(f"- Reference: {s['reference_failed']} without success; ρ median {_f(s['ref_accuracy_median'], '.1e')}, "
        f"max {_f(s['ref_accuracy_max'], '.1e')}\n")
    add("| group | problems | geo-mean speed-up | MM faster | worst | worst problem |")
    add("|---|---|---|---|---|---|")
    add(f"| all | {o['problems']} | {_x(o['geomean'])} | {o['mm_faster']} | {_x(o['worst'])} | "
        f"{o['worst_problem'] or '–'} |")
    for key, groups in s["by"].items():
        for value, g in groups.items():
            add(f"| {key} = {value} | {g['problems']} | {_x(g['geomean'])} | {g['mm_faster']} | "
                f"{_x(g['worst'])} | {g['worst_problem'] or '–'} |")
    add("\n| method | runs | success claimed | false claims | max gap claimed | exceptions | unsound bounds |")
    add("|---|---|---|---|---|---|---|")
    for method, c in s["claims"].items():
        add(f"| {method} | {c['runs']} | {c['success']} | {c['false']} | {_f(c['max_gap_claimed'], '.1e')} | "
            f"{c['exceptions']} | {c['bound_unsound']} |")
    add("")
    add(DEFINITIONS)
    add("## Per problem\n")
    methods_seen = [m for m in dict.fromkeys(r["method"] for r in rows) if m not in ("MM", REFERENCE)]
    add("| problem | N | K | pairs | on margin | MM time [s] | MM status | MM gap | gap_bound | speed-up | "
        + " | ".join(f"{m} time / status / gap" for m in methods_seen) + " | ρ | false claims |")
    add("|---" * (11 + len(methods_seen)) + "|")
    groups = {}
    for r in rows:
        groups.setdefault(r["problem"], {})[r["method"]] = r
    speedups = {p["problem"]: p["speedup"] for p in per_problem(rows)}
    for pid, g in groups.items():
        mm = g["MM"]
        cells = [f"{_f(g[m]['seconds'], '.3f')} / {g[m]['status']} / {_f(g[m]['rel_gap'], '.0e')}" if m in g
                 else "–" for m in methods_seen]
        false = ", ".join(m for m, r in g.items() if r["false_claim"]) or "–"
        cert = " (certified)" if mm["certified"] else ""
        add(f"| {pid} | {mm['n']} | {mm['k']} | {mm['pairs']} | {_f(mm['margin_pairs'], '.0f')} | "
            f"{mm['seconds']:.3f} | {mm['status']}{cert} | "
            f"{_f(mm['rel_gap'], '.0e')} | {_f(mm['gap_bound'], '.0e')} | {_x(speedups.get(pid))} | "
            + " | ".join(cells) + f" | {_f(mm['ref_accuracy'], '.0e')} | {false} |")
    return "\n".join(lines) + "\n"


def write_outputs(rows, summary, meta, out):
    import json
    import pandas as pd
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows, columns=list(COLUMNS)).to_csv(out / "bench_real.csv", index=False)
    text = report(rows, summary, meta)
    (out / "bench_real.md").write_text(text)
    (out / "summary.json").write_text(json.dumps({"meta": meta, "summary": summary}, indent=1, default=str))
    return text


def read_rows(path):
    """The CSV rows back as dicts (booleans and numbers restored): what the summary is computed from."""
    import pandas as pd
    frame = pd.read_csv(path, keep_default_na=False, na_values=[""])
    frame = frame.astype({c: bool for c in ("competitor", "success", "certified", "false_claim", "bound_unsound")})
    records = frame.to_dict("records")
    for r in records:
        for key in ("status", "warnings", "error"):
            r[key] = "" if not isinstance(r[key], str) else r[key]
    return records


# --------------------------------------------------------------------------------------------------------------
# command line
def _commit():
    try:
        root = Path(__file__).resolve().parent.parent
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=5).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5).stdout.strip()
        return (head or "unknown") + (" (modified)" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _names(text, allowed, what):
    names = [t.strip() for t in text.split(",") if t.strip()]
    lookup = {a.lower(): a for a in allowed}
    bad = [n for n in names if n.lower() not in lookup]
    if bad:
        raise SystemExit(f"unknown {what}: {', '.join(bad)}; choose from {', '.join(allowed)}")
    return [lookup[n.lower()] for n in names]


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.split("\n")[2:]))
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="6 points of the grid per data set (the default)")
    mode.add_argument("--full", action="store_true", help="the whole grid (96 problems per data set)")
    parser.add_argument("--datasets", default=",".join(DATASETS), help=f"comma-separated ({','.join(DATASETS)})")
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated (default: all four)")
    parser.add_argument("--kernels", default=",".join(KERNELS), help="comma-separated (linear,rbf)")
    parser.add_argument("--max-samples", type=int, default=None,
                        help=f"subsample larger data sets (default {MAX_SAMPLES['quick']} quick, "
                             f"{MAX_SAMPLES['full']} full)")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved rounds; the fastest run counts")
    parser.add_argument("--repeat-below", type=float, default=1.0,
                        help="do not repeat a method whose first run took longer than this (seconds)")
    parser.add_argument("--solvers", default=",".join(CVXPY_SOLVERS), help="CVXPY competitors, comma-separated")
    parser.add_argument("--no-reference", action="store_true",
                        help="skip the tight Clarabel reference (best = the competitors' best only)")
    parser.add_argument("--out", default="bench_real_out", help="directory for bench_real.csv, .md, summary.json")
    from ovn_cvx.cli import add_parallel_arguments
    add_parallel_arguments(parser, what="problems of each data set", timing=True)
    args = parser.parse_args(argv)
    args.datasets = _names(args.datasets, DATASETS, "data set")
    args.variants = _names(args.variants, VARIANTS, "variant")
    args.kernels = _names(args.kernels, KERNELS, "kernel")
    args.solvers = [s.strip().upper() for s in args.solvers.split(",") if s.strip()]
    args.quick = not args.full
    if args.max_samples is None:
        args.max_samples = MAX_SAMPLES["quick" if args.quick else "full"]
    if args.repeats < 1 or args.max_samples < 10:
        parser.error("--repeats must be ≥ 1 and --max-samples ≥ 10")
    return args


def warm_up(solvers):
    """One tiny solve per method first: imports and first-call costs are nobody's time."""
    import numpy as np
    import ovn_cvx
    X = np.random.default_rng(0).normal(size=(12, 2))
    problem = ovn_cvx.Problem.from_labels(X, np.arange(12) % 3)
    for fn in methods(solvers).values():
        _call(fn, problem)
    _call(lambda p: ovn_cvx.solve(p, "cvxpy", **REFERENCE_OPTIONS), problem)
    _WARMED.update(solvers)


def run(args, log=print):
    """(rows, summary, meta) of the benchmark described by parsed ``args``."""
    from threadpoolctl import threadpool_limits
    from ovn_cvx._reports import environment
    start = time.perf_counter()
    points = grid(args.quick, args.variants, args.kernels)
    rows = []
    with threadpool_limits(limits=1):
        warm_up(args.solvers)
        for name in args.datasets:
            rows.extend(bench_dataset(name, points, args.solvers, args.max_samples, args.repeats,
                                      args.repeat_below, reference=not args.no_reference, log=log,
                                      n_jobs=args.n_jobs, scheduler=args.scheduler))
    meta = {"command": " ".join(["python", "benchmarks/bench_real.py"] + list(getattr(args, "argv", []))),
            "machine": environment(), "commit": _commit(), "repeats": args.repeats,
            "repeat_below": args.repeat_below, "max_samples": args.max_samples, "solvers": args.solvers,
            "elapsed": time.perf_counter() - start}
    return rows, summarize(rows), meta


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse_args(argv)
    args.argv = argv
    rows, summary, meta = run(args, log=lambda line: print(line, flush=True))
    text = write_outputs(rows, summary, meta, args.out)
    print()
    print(text.split("## Definitions")[0])
    print(f"Written: {Path(args.out) / 'bench_real.csv'}, {Path(args.out) / 'bench_real.md'}, "
          f"{Path(args.out) / 'summary.json'}")


if __name__ == "__main__":
    main()
