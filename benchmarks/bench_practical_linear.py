"""Linear OvN by dual coordinate descent against one-vs-rest LinearSVC and the MM solver, side by side.

Run by hand (not a test), one BLAS thread:

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_practical_linear.py
    ... --sizes 2000 10000 --sparse 0 --max-iter 200 --out docs/benchmarks/practical_linear.md

Data: ``make_classification(n_features=20, n_informative=10, n_classes=5, n_clusters_per_class=2, flip_y=0.05)``,
standardised (dense); and a sparse text-like set: ``scipy.sparse.random`` rows (density 0.002, 100 stored entries a
row on average, values uniform on [0, 1)) of shape N × 50 000 labelled by the argmax of a planted linear model
(5 classes) with 5 % of the labels flipped. Models: OvN SwHb, α = 0, β = 2, with ``negatives="none"`` (Y the
one-hot membership) and ``"rest"`` (every non-member a −1); ``OneVsRestClassifier(LinearSVC())`` at scikit-learn's
defaults (C = 1, squared hinge: another loss, time only; C = 1 is β = 2 for the hinge); the MM solver
(``method="mm"``) on the same OvN problem. In one process, one after the other per size; LinearSVC, the MM solver and
the estimator's fit are timed three times and the best kept, the dual coordinate descent once.
The smo column's time includes its first call's numba compile (or disk-cache load), also shown alone. "gap" is the
proven relative bound (F − D)/max(1, |F|) of the result, "status" its verdict (``max_iter`` when the round budget
``--max-iter`` ran out first: the bound then says how far the answer is). The growth slope is the log-log slope of
fit time over N of the dense sizes.

The estimator's default problem (what ``OvNClassifier()`` solves on class labels: SwSb, every non-member a negative,
bias_penalty 0, so that the K classes are independent binary SVMs with free biases, and β = 16/κ₀ with κ₀ the mean
‖x‖²) gets its own rows: ``OvNClassifier().fit`` as a user calls it (its solver: ``solver="auto"``, the MM solver for
linear problems; "solve s" is ``result_.solve_time``, the rest is validation and the fitted attributes), and the dual
coordinate descent on the same problem; and the default with ``tol=1e-4`` (``LOOSE_TOL``: an iterate proven within
it, not the exact optimum). ``--real`` adds the bundled real sets (emotions and scene, their training
splits, and glass; standardised): ``OvNClassifier().fit`` against ``OneVsRestClassifier(LinearSVC())``, best of three,
with the solve alone (``result_.solve_time``) beside the whole fit (which includes the learned decision rule's
cross-validation folds on multilabel data).
"""
from __future__ import annotations

import argparse
import subprocess
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.multiclass import OneVsRestClassifier
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

import ovn_cvx
from ovn_cvx import OvNClassifier
from ovn_cvx._reports import environment, markdown_table
from ovn_cvx.estimator import auto_defaults
from ovn_cvx.solvers.smo.linear import solve_linear

from bench_practical import SWHB, problem_of, timed  # the OvN problems and the best of repeated fits, as there

K = 5
#: LinearSVC's, the MM solver's and the estimator's fits are timed this many times, the best kept (the machine is
#: shared); the dual coordinate descent's once
REPEAT = 3
#: the estimator's default with a looser tol beside it: the interior point stops once an iterate is proven within it
#: instead of running on to the exact optimum (the solver's gap_tol from EXACT_BELOW up)
LOOSE_TOL = 1e-4
METHODS = ("OvR LinearSVC()", "OvN smo, negatives=rest", "OvN mm, negatives=rest", "OvN smo, negatives=none",
           "OvN mm, negatives=none", "OvN default: OvNClassifier().fit", f"OvN default, tol={LOOSE_TOL:g}",
           "OvN default problem, smo")
HEADER = ("data", "method", "fit s", "× OvR LinearSVC", "proven gap", "status", "compile s", "form / finish")


def dense_data(n: int, seed: int = 0):
    X, y = make_classification(n_samples=n, n_features=20, n_informative=10, n_classes=K, n_clusters_per_class=2,
                               flip_y=0.05, random_state=seed)
    return StandardScaler().fit_transform(X), y


def sparse_data(n: int, n_features: int = 50_000, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, n_features, density=0.002, format="csr", random_state=rng)
    scores = X @ rng.normal(size=(n_features, K))
    y = np.argmax(scores, axis=1)
    flip = rng.random(n) < 0.05
    y[flip] = rng.integers(0, K, size=flip.sum())
    return X, y


def run(name: str, X, y, max_iter: int) -> list:
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        svc, _ = timed(lambda: OneVsRestClassifier(LinearSVC()).fit(X, y), REPEAT)
    rows.append((name, "OvR LinearSVC()", svc, 1.0, "", "", "", ""))
    for negatives in ("rest", "none"):
        problem = problem_of(X, y, negatives, SWHB, "linear")
        seconds, smo = timed(lambda: solve_linear(problem, max_iter=max_iter))
        rows.append((name, f"OvN smo, negatives={negatives}", seconds, seconds / svc,
                     f"{smo.relative_gap_bound:.1e}", smo.status, f"{smo.compile_time:.2f}", smo.finish))
        seconds, mm = timed(lambda: ovn_cvx.solve(problem, "mm"), REPEAT)
        rows.append((name, f"OvN mm, negatives={negatives}", seconds, seconds / svc,
                     f"{mm.relative_gap_bound:.1e}", mm.status, "", f"{mm.form} / {mm.finish}"))
    models = {}
    for method, options in (("OvN default: OvNClassifier().fit", {}), (f"OvN default, tol={LOOSE_TOL:g}",
                                                                        {"tol": LOOSE_TOL})):
        seconds, models[method] = timed(lambda: OvNClassifier(**options).fit(X, y), REPEAT)
        result = models[method].result_
        rows.append((name, method, seconds, seconds / svc, f"{result.relative_gap_bound:.1e}", result.status, "",
                     f"solve {result.solve_time:.3g} s, {result.form} / {result.finish}, {result.iterations} it."))
    hinge_weight = models["OvN default: OvNClassifier().fit"].hinge_weight_
    default = problem_of(X, y, "rest", ("SwSb", hinge_weight, 0.0, auto_defaults("linear", False)[1]), "linear")
    seconds, smo = timed(lambda: solve_linear(default, max_iter=max_iter))
    rows.append((name, "OvN default problem, smo", seconds, seconds / svc, f"{smo.relative_gap_bound:.1e}",
                 smo.status, f"{smo.compile_time:.2f}", f"{smo.finish}, {smo.iterations} rounds"))
    return rows


def real_sets() -> list:
    """The bundled real sets: (name, fit s of OvR LinearSVC, OvN solve s, solve × OvR, OvN fit s, fit × OvR, gap,
    status, form / finish), each time the best of REPEAT."""
    from ovn_cvx.datasets import load_emotions, load_glass, load_scene
    sets = {"emotions (train)": load_emotions("train", return_X_y=True),
            "scene (train)": load_scene("train", return_X_y=True), "glass": load_glass(return_X_y=True)}
    rows = []
    for name, (X, y) in sets.items():
        X = StandardScaler().fit_transform(X)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            svc = timed(lambda: OneVsRestClassifier(LinearSVC()).fit(X, y), REPEAT)[0]
        fits = [timed(lambda: OvNClassifier().fit(X, y)) for _ in range(REPEAT)]
        fit = min(seconds for seconds, _ in fits)
        result = fits[-1][1].result_
        solve = min(model.result_.solve_time for _, model in fits)
        rows.append((f"{name}, {X.shape[0]} × {X.shape[1]}", f"{svc:.3g}", f"{solve:.3g}", f"{solve / svc:.2f}",
                     f"{fit:.3g}", f"{fit / svc:.2f}", f"{result.relative_gap_bound:.1e}", result.status,
                     f"{result.form} / {result.finish}, {result.iterations} it."))
    return rows


def slope(sizes, rows, method) -> float:
    times = [row[2] for row in rows if row[1] == method and row[0].startswith("dense")]
    if len(times) < 2:
        return float("nan")
    return float(np.polyfit(np.log(sizes[:len(times)]), np.log(times), 1)[0])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[2000, 10000, 50000])
    parser.add_argument("--sparse", type=int, default=20000, help="rows of the sparse set (0: none)")
    parser.add_argument("--max-iter", type=int, default=1000, help="smo's round budget")
    parser.add_argument("--real", action="store_true", help="also time the default on the bundled real sets")
    parser.add_argument("--out", default=None, help="also write the report (markdown) here")
    args = parser.parse_args(argv)
    rows = []
    for n in args.sizes:
        rows += run(f"dense N={n}", *dense_data(n), args.max_iter)
        print(markdown_table(HEADER, rows[-len(METHODS):]), flush=True)
    if args.sparse:
        rows += run(f"sparse {args.sparse}×50000", *sparse_data(args.sparse), args.max_iter)
    table = markdown_table(HEADER, [(d, m, f"{s:.3g}", f"{r:.3g}", *rest) for d, m, s, r, *rest in rows])
    slopes = {method: slope(args.sizes, rows, method) for method in METHODS}
    stamp = environment()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    report = "\n".join([
        "# Linear OvN by dual coordinate descent against one-vs-rest LinearSVC", "",
        f"Command: `OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH=. python "
        f"benchmarks/bench_practical_linear.py --sizes {' '.join(map(str, args.sizes))} --sparse {args.sparse} "
        f"--max-iter {args.max_iter}{' --real' if args.real else ''}`", "",
        "One BLAS thread; the machine was shared with other jobs during the run (ratios from fits run one after the "
        "other in the same process).", "",
        f"Date {stamp['date']}, machine {stamp.get('cpu', stamp.get('platform'))}, commit {commit or 'unknown'}.", "",
        table, "",
        "Growth slopes (log-log, fit seconds over N, dense): "
        + ", ".join(f"{method} {value:.2f}" for method, value in slopes.items()), ""]
        + ([markdown_table(("data", "OvR LinearSVC() fit s", "OvN solve s", "solve × OvR", "OvN fit s", "fit × OvR",
                            "proven gap", "status", "form / finish"), real_sets()), ""] if args.real else []))
    print(report)
    if args.out:
        with open(args.out, "w") as handle:
            handle.write(report)


if __name__ == "__main__":
    main()
