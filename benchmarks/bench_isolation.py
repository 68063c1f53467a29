"""The cost of running a user's solver in a worker process, as ``compare --method`` does: every problem of the
default verification suite solved by the MM solver called in this process and through
:func:`ovn_cvx.verify.plugins.call_plugin` (a worker process, a time limit), side by side.

Run by hand (not a test):

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_isolation.py --repeats 3

Per problem, the fastest of ``--repeats`` rounds of: the in-process wall time of ``solve(problem, method="mm")``,
the wall time of the whole isolated call (the problem pickled to the worker, the solve, the answer sent back and
checked) and their difference, the cost of the isolation. Both at one BLAS thread (the environment above; the
worker also sets it per call, with threadpoolctl), interleaved problem by problem. The worker is started and has
run one call before the clock runs, as the verification run's warm-up does.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from ovn_cvx import solve
from ovn_cvx.verify.plugins import call_plugin
from ovn_cvx.verify.suite import DEFAULT_SUITE


def mm(problem):
    return solve(problem, method="mm")


def measure(repeats: int) -> list[tuple[str, float, float]]:
    problems = [(f"{case.name} {variant}", problem) for case in DEFAULT_SUITE for variant, problem in case.problems()]
    call_plugin(mm, problems[0][1], "mm", {})  # the worker's start and imports
    rows = []
    for name, problem in problems:
        direct = isolated = np.inf
        for _ in range(repeats):
            start = time.perf_counter()
            mm(problem)
            direct = min(direct, time.perf_counter() - start)
            start = time.perf_counter()
            result = call_plugin(mm, problem, "mm", {})
            isolated = min(isolated, time.perf_counter() - start)
            assert result.success, (name, result.status, result.info)
        rows.append((name, direct, isolated))
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="rounds per problem, the fastest kept (default: 3)")
    rows = measure(parser.parse_args(argv).repeats)
    print(f"{'problem':34s} {'in-process ms':>14s} {'isolated ms':>12s} {'overhead ms':>12s}")
    for name, direct, isolated in rows:
        print(f"{name:34s} {1e3 * direct:14.1f} {1e3 * isolated:12.1f} {1e3 * (isolated - direct):12.1f}")
    direct, isolated = (np.array([row[k] for row in rows]) for k in (1, 2))
    overhead = 1e3 * (isolated - direct)
    print(f"{len(rows)} problems: in-process {direct.sum():.2f} s, isolated {isolated.sum():.2f} s; overhead per "
          f"call median {np.median(overhead):.1f} ms, max {overhead.max():.1f} ms")


if __name__ == "__main__":
    main()
