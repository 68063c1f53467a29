"""The package's Gaussian kernel matrix against scikit-learn's ``rbf_kernel``: time and accuracy.

Run by hand (not a test; about half a minute):

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_kernels.py

Both compute κ(X, X) of N standard normal rows (dense: M = 2, 50, 500; sparse: a word-count matrix) side by side,
the best of ``--repeat`` runs each, and print the ratio (the package's time over scikit-learn's) and the largest
difference of the two matrices. Then the same on rows shifted to |x| ≈ 6e6 with one duplicate row: the largest
error of each against the direct difference ‖x − y‖² in extended precision (``np.longdouble``).
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.metrics.pairwise import rbf_kernel

from ovn_cvx.datasets import make_sparse_multilabel
from ovn_cvx.kernels import kernel_matrix


def best_time(function, repeat: int) -> float:
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def cases(n: int):
    rng = np.random.default_rng(0)
    for m in (2, 50, 500):
        yield f"dense N={n} M={m}", rng.normal(size=(n, m)), 1.0 / m
    X, _ = make_sparse_multilabel(n, n_features=5000, random_state=0)
    yield f"sparse N={n} M=5000 (words)", X, 1.0 / 5000


def exact_gram(X: np.ndarray, gamma: float) -> np.ndarray:
    Xl = X.astype(np.longdouble)
    return np.exp(-gamma * ((Xl[:, None, :] - Xl[None, :, :]) ** 2).sum(axis=2))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    print("| data | ovn_cvx (s) | scikit-learn (s) | ratio | max difference |")
    print("|---|---|---|---|---|")
    for name, X, gamma in cases(args.n):
        ours = best_time(lambda: kernel_matrix("rbf", X, X, gamma=gamma), args.repeat)
        theirs = best_time(lambda: rbf_kernel(X, X, gamma=gamma), args.repeat)
        difference = np.abs(kernel_matrix("rbf", X, X, gamma=gamma) - rbf_kernel(X, X, gamma=gamma)).max()
        print(f"| {name} | {ours:.4f} | {theirs:.4f} | {ours / theirs:.2f} | {difference:.1e} |")
    rng = np.random.default_rng(1)
    X = 6e6 + 10.0 * rng.normal(size=(200, 3))
    X[1] = X[0]
    exact = exact_gram(X, 0.01)
    print(f"\nrows at |x| ~ 6e6 (N = 200, M = 3, one duplicate): largest error against extended precision: "
          f"ovn_cvx {np.abs(kernel_matrix('rbf', X, X, gamma=0.01) - exact).max():.1e}, "
          f"scikit-learn {np.abs(rbf_kernel(X, X, gamma=0.01) - exact).max():.1e}")


if __name__ == "__main__":
    main()
