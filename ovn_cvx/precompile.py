"""Compile the package's loops ahead of the first fit that needs them (``ovn-cvx compile``).

The learned decision rule (``ovn_cvx._rule_loops``) and the dual decomposition solver (``ovn_cvx.solvers.smo``) run
loops compiled by numba and cached on disk. The first fit that uses them after installation compiles them, about
10 s for the learned rule and 20 s more for the exact-kernel solver (measured on a 2-core x86_64 machine); every
later process loads them from the cache in a fraction of a second. :func:`compile_loops` pays that cost at a moment
of your choosing (a Docker image's build, a CI job's set-up) by fitting one small model of each kind whose loops
differ; it returns what it compiled and how long each took.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp

__all__ = ["JOBS", "compile_loops"]

#: a kernel cache of this many MB holds no full kernel row of the small data below: the solver's single-precision
#: partial rows, a loop of its own
TINY_CACHE_MB = 1e-3


def _data():
    """60 rows, 4 features; 3 labels (label k: feature k above a noisy threshold) and 3 classes (the largest of the
    first three features): a signal every fit can learn."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    Y = (X[:, :3] + 0.3 * rng.normal(size=(60, 3)) > 0).astype(int)
    return X, Y, X[:, :3].argmax(axis=1)


#: the fits whose compiled loops differ: (what they compile, the model and the data it is fitted on)
JOBS = (
    ("the learned decision rule (a label matrix)", {}, "Y"),
    ("the exact-kernel dual decomposition", {"kernel": "rbf"}, "Y"),
    ("its single-precision rows (a kernel cache smaller than a row)", {"kernel": "rbf", "cache_size": TINY_CACHE_MB},
     "y"),
    ("the dual coordinate descent (sparse linear data)", {"solver": "smo"}, "sparse"),
)


def compile_loops(report=None) -> list[tuple[str, float]]:
    """Compile (or load from numba's on-disk cache) every compiled loop a fit can use.

    Parameters
    ----------
    report : callable, optional
        Called as ``report(what, seconds)`` after each kind of fit, e.g. ``print``-like progress.

    Returns
    -------
    list of (str, float)
        What each fit compiled and its seconds: tens of seconds the first time after installation, a fraction of a
        second once cached.

    Examples
    --------
    >>> from ovn_cvx.precompile import compile_loops
    >>> [what for what, seconds in compile_loops()][0]
    'the learned decision rule (a label matrix)'
    """
    from .estimator import OvNClassifier

    X, Y, y = _data()
    targets = {"Y": (X, Y), "y": (X, y), "sparse": (sp.csr_matrix(X), Y)}
    done = []
    for what, params, data in JOBS:
        start = time.perf_counter()
        OvNClassifier(**params).fit(*targets[data])
        done.append((what, time.perf_counter() - start))
        if report is not None:
            report(*done[-1])
    return done


def _run(args) -> int:
    print("Compiling the package's loops (numba, cached on disk: once per machine and numba version) ...", flush=True)
    total = sum(seconds for _, seconds in compile_loops(
        lambda what, seconds: print(f"  {seconds:6.1f} s  {what}", flush=True)))
    print(f"Done in {total:.1f} s: later processes load the loops from the cache.")
    return 0


def register(subparsers) -> None:
    from .cli import summary

    parser = subparsers.add_parser(
        "compile", help=summary("compile"), formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Compile the loops of the learned decision rule and of the dual decomposition solver (numba)\n"
                    "ahead of the first fit that needs them. That first fit would otherwise pay it: about 10 s for\n"
                    "the learned rule and 20 s more for the exact-kernel solver, once per machine and numba version.\n"
                    "Exit status 0.")
    parser.set_defaults(run=_run)
