"""Exact RBF fits where practitioners compare: OvN by dual decomposition (``method="smo"``) beside
``OneVsRestClassifier(SVC())``, side by side in one run with one BLAS thread.

Run by hand (not a test):

    python benchmarks/bench_practical.py                    # N = 2 000 and 5 000 (a few minutes on 2 cores)
    python benchmarks/bench_practical.py --full             # and N = 20 000
    python benchmarks/bench_practical.py --quick            # N = 500 and 1 000, no table written
    python benchmarks/bench_practical.py --sizes 1000 3000  # any sizes
    python benchmarks/bench_practical.py --repeat 2         # each fit (not the interior point's) timed twice, the
                                                            # fastest kept: for a shared machine

Data: ``make_classification(n_features=20, n_informative=10, n_classes=5, n_clusters_per_class=2, flip_y=0.05)``,
standardised; RBF kernel with ``gamma="scale"``; OvN with variant SwHb, β = 2 (the hinge weight of ``SVC(C=1)``,
docs/theory.md §7), bias_penalty 1, ``gap_tol`` 1e-6 (the estimator's default): the paper's model
(``negatives="none"``) and every non-label a negative (``negatives="rest"``, Y = ±1). Beside them
``OneVsRestClassifier(SVC())`` (C = 1, its defaults: tol 1e-3, a 200 MB kernel cache) and the interior-point fast
solver (``method="mm"``) up to ``--mm-max`` rows. Also the estimator's default problem for class labels
(``OvNClassifier(kernel="rbf")``: SwSb, α = 0, β = 4, bias_penalty 0 with negatives, ``negative_balance`` 0.5 — K
independent binary SVMs, each ``SVC(C=4)``'s problem with the class's negatives weighed against its positives, timed
beside ``OneVsRestClassifier(SVC(C=4))``) and its fit through the estimator (``OvNClassifier(kernel="rbf").fit``),
and, for both OvN problems with negatives, a refit on 4/5 of the
rows (the first of 5 shuffled folds, as the estimator's rule folds) from μ = 0 ("cold") and from the full fit's dual
point restricted to those rows (``warm_start=full.dual[rows]``, "warm"). Fit seconds include building the
``Problem``; each ratio is to SVC's fit on all rows in the same run. The proven relative gap is
(F − D(μ))/max(1, |F|) (docs/theory.md §6); the growth slope is the least-squares slope of log(time) against
log(N). The learned decision rule on real data: ``OvNClassifier(kernel="rbf", negatives="rest",
decision_rule="cv")`` (three fold fits and the rule search on top of the full fit) beside
``OneVsRestClassifier(SVC(probability=True))`` (libsvm's five internal fold fits per label for Platt scaling), both
after ``StandardScaler`` on scene's standard training split (1 211 × 294, 6 labels). Peak memory: ``tracemalloc``'s
peak during a second, traced fit (numpy's allocations; SVC's, made in C by
libsvm, are not traced). The first-call time of the compiled loop is measured in fresh processes: with an empty
on-disk cache (compilation) and with the cache filled.
"""
from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
import tracemalloc
import warnings
from datetime import datetime, timezone
from pathlib import Path

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's package, whatever else is installed

import numpy as np  # noqa: E402
from sklearn.datasets import make_classification  # noqa: E402
from sklearn.model_selection import KFold  # noqa: E402
from sklearn.multiclass import OneVsRestClassifier  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

import ovn_cvx  # noqa: E402
from ovn_cvx import OvNClassifier, Problem  # noqa: E402
from ovn_cvx.estimator import auto_defaults, balance_weights  # noqa: E402

OUTPUT = ROOT / "docs" / "benchmarks" / "practical.md"
K = 5
#: a tiny fit that only exercises the compiled loop (first-call time)
FIRST_CALL = """
import time
start = time.perf_counter()
import numpy as np
from ovn_cvx import Problem, solve
X = np.random.default_rng(0).normal(size=(40, 3))
imported = time.perf_counter()
solve(Problem(X, np.eye(3)[np.arange(40) % 3], "SwHb", "rbf"), "smo")
first = time.perf_counter()
solve(Problem(X, np.eye(3)[np.arange(40) % 3], "SwHb", "rbf"), "smo")
print(first - imported - (time.perf_counter() - first))
"""


def data(n: int):
    X, y = make_classification(n_samples=n, n_features=20, n_informative=10, n_classes=K, n_clusters_per_class=2,
                               flip_y=0.05, random_state=0)
    return StandardScaler().fit_transform(X), y


#: the OvN models: (variant, β, bias_penalty, negative_balance); SwHb as the paper's experiments, and the estimator's
#: default for class labels (``OvNClassifier(kernel="rbf")``: SwSb, α = 0, β of ``auto_defaults("rbf", False)`` on the
#: Gaussian kernel's scale 1, bias_penalty 0 with negatives, the negatives balanced: K independent binary SVMs, each
#: SVC(C=a_k β)'s problem with class weights)
SWHB = ("SwHb", 2.0, 1.0, 0.0)
DEFAULT = ("SwSb", auto_defaults("rbf", False)[0], 0.0, auto_defaults("rbf", False)[1])


def problem_of(X, y, negatives: str, model=SWHB, kernel: str = "rbf") -> Problem:
    Y = np.eye(K)[y]
    if negatives == "rest":
        Y = 2.0 * Y - 1.0
    variant, beta, bias_penalty, balance = model
    scale, negative_weight = balance_weights(Y, np.ones(len(y)), balance)
    return Problem(X, Y, variant, kernel, beta=beta, bias_penalty=bias_penalty, gamma="scale", label_weight=scale,
                   negative_weight=negative_weight)


def ovn(X, y, negatives: str, method: str, model=SWHB, **options):
    return ovn_cvx.solve(problem_of(X, y, negatives, model), method, **options)


def timed(fit, repeat: int = 1):
    """The fastest of ``repeat`` fits (on a shared machine the others' load only adds time) and its result."""
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        result = fit()
        best = min(best, time.perf_counter() - start)
    return best, result


def traced_peak(fit) -> float:
    tracemalloc.start()
    try:
        fit()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def first_call_times() -> tuple[float, float]:
    """Seconds the first solve spends beyond the second in a fresh process: with an empty numba cache (compiling),
    then with the cache it left (loading)."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT))
        runs = [float(subprocess.run([sys.executable, "-c", FIRST_CALL], env=env, check=True, capture_output=True,
                                     text=True).stdout) for _ in range(2)]
    return runs[0], runs[1]


def fold_rows(n: int) -> np.ndarray:
    """The training rows of the first of 5 shuffled folds (4/5 of the rows), as the estimator's rule folds."""
    return next(iter(KFold(5, shuffle=True, random_state=0).split(np.zeros(n))))[0]


def measure(sizes, mm_max: int, memory: bool, repeat: int):
    rows = []
    for n in sizes:
        X, y = data(n)
        svc_time, _ = timed(lambda: OneVsRestClassifier(SVC()).fit(X, y), repeat)
        rows.append({"N": n, "model": "OneVsRestClassifier(SVC())", "time": svc_time, "ratio": 1.0})
        print(f"N={n} SVC {svc_time:.2f}s", flush=True)
        seconds, _ = timed(lambda: OneVsRestClassifier(SVC(C=DEFAULT[1])).fit(X, y), repeat)
        rows.append({"N": n, "model": f"OneVsRestClassifier(SVC(C={DEFAULT[1]:g}))", "time": seconds,
                     "ratio": seconds / svc_time})
        fits = [(f"OvN {method}, negatives={negatives!r}", method, negatives, SWHB)
                for method, negatives in [("smo", "none"), ("smo", "rest")]
                + ([("mm", "none"), ("mm", "rest")] if n <= mm_max else [])]
        fits.append(("OvN smo, estimator's default, negatives='rest'", "smo", "rest", DEFAULT))
        full = {}
        for name, method, negatives, model in fits:
            seconds, result = timed(lambda: ovn(X, y, negatives, method, model), repeat if method == "smo" else 1)
            full[model, method, negatives] = result
            row = report(n, name, seconds, svc_time, result)
            if memory and method == "smo":
                row["peak"] = traced_peak(lambda: ovn(X, y, negatives, method, model))
            rows.append(row)
        # the same default problem through the estimator, as a user fits it: κ₀, the input checks and the problem's
        # construction on top of the solve
        seconds, fitted = timed(lambda: OvNClassifier(kernel="rbf").fit(X, y), repeat)
        rows.append(report(n, "OvNClassifier(kernel='rbf').fit", seconds, svc_time, fitted.result_))
        train = fold_rows(n)
        for model, label in ((SWHB, "SwHb"), (DEFAULT, "estimator's default")):
            for start in ("cold", "warm"):
                dual = full[model, "smo", "rest"].dual[train] if start == "warm" else None
                seconds, result = timed(lambda: ovn(X[train], y[train], "rest", "smo", model, warm_start=dual),
                                        repeat)
                rows.append(report(n, f"OvN smo, {label}, negatives='rest', fold of 4/5, {start}", seconds, svc_time,
                                   result))
    return rows


def warm_rule_search() -> None:
    """One small learned-rule fit: the rule search's compiled loops are loaded (or compiled) before anything is timed,
    not in the first scene fit."""
    from sklearn.datasets import make_multilabel_classification

    X, Y = make_multilabel_classification(n_samples=40, n_features=5, n_classes=3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        OvNClassifier(decision_rule="cv").fit(X, Y)


def scene_rule(repeat: int) -> list[tuple[str, float]]:
    """(model, fit seconds) of the learned-rule fit and its baseline on scene's training split."""
    from sklearn.pipeline import make_pipeline

    from ovn_cvx.datasets import load_scene

    X, Y = load_scene("train", return_X_y=True)
    models = {"OneVsRestClassifier(SVC(probability=True))":
              lambda: OneVsRestClassifier(SVC(probability=True, random_state=0)),
              "OvNClassifier(kernel='rbf', negatives='rest', decision_rule='cv')":
              lambda: OvNClassifier(kernel="rbf", negatives="rest", decision_rule="cv")}
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # SVC's probability: deprecated in scikit-learn 1.9
        for name, model in models.items():
            seconds, _ = timed(lambda: make_pipeline(StandardScaler(), model()).fit(X, Y), repeat)
            out.append((name, seconds))
            print(f"scene {name} {seconds:.2f}s", flush=True)
    return out


def scene_table(fits) -> str:
    base = fits[0][1]
    lines = ["| scene, training split | fit s | × SVC(probability=True) |", "|---|---|---|"]
    lines += [f"| {name} | {seconds:.2f} | {seconds / base:.2f} |" for name, seconds in fits]
    return "\n".join(lines)


def report(n: int, name: str, seconds: float, svc_time: float, result) -> dict:
    row = {"N": n, "model": name, "time": seconds, "ratio": seconds / svc_time, "gap": result.relative_gap_bound,
           "status": result.status, "iterations": result.iterations}
    print(f"N={n} {name} {seconds:.2f}s ×{row['ratio']:.2f} gap {row['gap']:.1e} {row['status']} "
          f"{row['iterations']} steps", flush=True)
    return row


def slopes(rows) -> dict[str, float]:
    out = {}
    for model in dict.fromkeys(r["model"] for r in rows):
        points = [(r["N"], r["time"]) for r in rows if r["model"] == model]
        if len(points) >= 2:
            n, t = np.log(np.array(points)).T
            out[model] = float(np.polyfit(n, t, 1)[0])
    return out


def grouped(n: int) -> str:
    return f"{n:,}".replace(",", " ")


def table(rows, growth) -> str:
    lines = ["| N | model | fit s | × SVC | proven relative gap | status | steps / iterations | peak MB (traced) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        gap = f"{r['gap']:.1e}" if "gap" in r else "—"
        peak = f"{r['peak']:.0f}" if "peak" in r else "—"
        steps = grouped(r["iterations"]) if "iterations" in r else "—"
        lines.append(f"| {grouped(r['N'])} | {r['model']} | {r['time']:.2f} | {r['ratio']:.2f} | {gap} | "
                     f"{r.get('status', '—')} | {steps} | {peak} |")
    lines += ["", "| model | log-log growth slope |", "|---|---|"]
    lines += [f"| {model} | {slope:.2f} |" for model, slope in growth.items()]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=int, default=[2000, 5000])
    parser.add_argument("--full", action="store_true", help="add N = 20 000")
    parser.add_argument("--quick", action="store_true", help="N = 500 and 1 000; no table written")
    parser.add_argument("--mm-max", type=int, default=2000, help="largest N for the interior-point solver")
    parser.add_argument("--no-memory", action="store_true", help="skip the traced second fits")
    parser.add_argument("--repeat", type=int, default=1, help="time each fit this many times, keep the fastest")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()
    sizes = [500, 1000] if args.quick else sorted(set(args.sizes + ([20000] if args.full else [])))
    load_before = os.getloadavg()[0]
    compile_time, load_time = first_call_times()
    print(f"first call: {compile_time:.1f}s compiling, {load_time:.2f}s from the on-disk cache", flush=True)
    for cache_size in (200.0, 0.01):  # loaded once in this process before anything is timed (whole rows; partial)
        ovn(*data(100), "rest", "smo", cache_size=cache_size)
    warm_rule_search()
    rows = measure(sizes, args.mm_max, not args.no_memory, args.repeat)
    growth = slopes(rows)
    text = table(rows, growth) + "\n\n" + scene_table(scene_rule(args.repeat))
    print(text)
    if args.quick:
        return
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    header = (f"Command: `python benchmarks/bench_practical.py {' '.join(sys.argv[1:])}`  \n"
              f"Date: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; commit {commit}; machine: {platform.machine()}, "
              f"{os.cpu_count()} cores ({platform.processor() or platform.platform()}), Python "
              f"{platform.python_version()}, one BLAS thread; the machine was shared with other jobs (load average "
              f"{load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end): compare the ratios, measured "
              "side by side, rather than the seconds.  \n"
              f"First call of the compiled loop in a fresh process: {compile_time:.1f} s compiling (empty on-disk "
              f"cache), {load_time:.2f} s loading it from the on-disk cache; excluded from the fits below.")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(PAGE.format(header=header, table=text))
    print(f"written to {args.output}")


PAGE = """# Exact RBF fits against one-vs-rest SVC

How long an exact (no kernel approximation) OvN fit takes beside scikit-learn's `OneVsRestClassifier(SVC())` on the
same data, with the dual decomposition solver (`ovn_cvx.solve(problem, method="smo")`): every answer carries a
proven bound on its distance to the optimum (the "proven relative gap"); `status` "optimal" means that bound is
within 1e-6. See `benchmarks/bench_practical.py` for the data and the settings.

{header}

{table}
"""

if __name__ == "__main__":
    main()
