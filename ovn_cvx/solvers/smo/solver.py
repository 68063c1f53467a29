"""The decomposition method's driver: the compiled loop to a violation tolerance, the exact check on every pair,
the proven bound, a finer tolerance until the bound is within ``gap_tol`` (docs/theory.md §9.14)."""
from __future__ import annotations

import time

import numpy as np

from ...duality import EPS
from ...problem import Problem
from ...result import SolveResult
from ..verdict import report_fields, verdict
from .cache import KernelRows
from .certificate import bias, certify, estimate, exact_view
from .newton import newton_steps
from ..progress import Progress
from .selection import BUDGET, CONVERGED, NEED_ROW, STALLED, largest_violation, run
from .state import State

#: the first violation tolerance unless given (libsvm's; not below gap_tol): the Newton step of the free pairs at its
#: end finishes most problems with P⁺ diagonal, and the others take fewer steps in all than from gap_tol at once
#: (measured, N = 5 000, K = 5 with negatives, SwSb, β = 4: 40 660 steps and 2 Newton steps against 99 533 steps)
FIRST_TOL = 1e-3
#: the violation tolerance is divided by at least this when the bound is not yet within gap_tol, down to MIN_TOL
TOL_FACTOR = 0.1
MIN_TOL = 1e-10
#: the next tolerance aims the bound at this fraction of gap_tol (the proportion varies by a few tens of percent
#: between rounds: aiming at half of gap_tol missed it by 10% and cost a round)
AIM = 0.3
#: libsvm's shrinking period: at most this many steps (fewer on small problems: the number of pairs)
SHRINK_EVERY = 1000
#: with a progress report, the compiled loop returns to Python after this many steps for a line (its next call goes on
#: where it stopped: the same steps)
REPORT_STEPS = 10_000


def solve_kernel(problem: Problem, *, tol: float, gap_tol: float, max_iter: int, cache_size: float,
                 shrinking: bool, newton: bool, dual: np.ndarray | None, progress: Progress) -> SolveResult:
    """Solve a kernel problem from μ = 0 or from ``dual`` (M = Y ∘ μ); the options of
    :func:`~ovn_cvx.solvers.smo.solve_smo`, ``progress`` the report of its ``verbose``."""
    start = time.perf_counter()
    rows = KernelRows(problem, cache_size, min_rows=problem.n_classes + 2)
    state = State.start(problem, rows, dual)
    view = exact_view(problem, rows)
    shrink_every = min(SHRINK_EVERY, state.a.size) if shrinking else 0
    exact_at = 0 if dual is not None else -1  # the step count at which Z was last rebuilt exactly
    checks, current, rounds, newton_count = 0, tol, [], 0
    report_at = REPORT_STEPS if progress else max_iter
    while True:
        code = run(state.arrays, rows.arrays, rows.diagonal, state.mass_mode, current, min(max_iter, report_at),
                   shrink_every)
        steps = int(state.counters[0])
        if code == NEED_ROW:
            rows.supply(int(state.counters[2]))
            continue
        if code == BUDGET and steps < max_iter:  # a stretch of the progress report's steps, not the budget
            _report_steps(progress, state, current)
            report_at = steps + REPORT_STEPS
            continue
        if code == CONVERGED and (state.shrunk or exact_at != steps):
            # the test on every pair, on Z rebuilt from the multipliers (shrunk samples are out of date); libsvm also
            # brings every pair back once before, when the violation first falls to 10·tol: its rebuild here cost
            # more than the steps it saved (*measured*, N = 5 000, with negatives: SwHb 27 212 steps against 26 333
            # and 0.85× the time, the estimator's default the same steps and 0.86×; N = 20 000: 0.82×)
            state.rebuild(rows)
            state.activate_all()
            exact_at = steps
            continue
        if code != CONVERGED:  # budget spent or no move left: the bound of the last iterate, on an exact Z
            state.rebuild(rows)
            coef, b, bound, M = certify(problem, view, state, bias(state, state.decision()))
            checks += 1
            progress.evaluation(checks, bound, steps=steps)
            break
        b = bias(state, state.decision())
        rounds.append((current, steps, estimate(problem, state, b)))
        progress("round", len(rounds), steps=steps, tol=current, estimate=rounds[-1][2])
        taken = newton_steps(state, rows, rows.workspace_capacity) if rounds[-1][2] > gap_tol and newton else 0
        if taken:  # Z rebuilt on the columns the steps moved
            newton_count += taken
            b = bias(state, state.decision())
            rounds.append((current, steps, estimate(problem, state, b)))
            progress("round", len(rounds), steps=steps, tol=current, estimate=rounds[-1][2], newton_steps=newton_count)
        if rounds[-1][2] <= gap_tol or current <= MIN_TOL:
            # Z is exact: rebuilt when the loop converged, and again on the columns the Newton steps moved
            coef, b, bound, M = certify(problem, view, state, b)
            checks += 1
            progress.evaluation(checks, bound, steps=steps)
            if bound.relative <= gap_tol or current <= MIN_TOL:
                break
        # the bound shrinks about in proportion to the tolerance (measured): aim at AIM·gap_tol, at least
        # TOL_FACTOR lower, never below MIN_TOL
        current = max(current * min(TOL_FACTOR, AIM * gap_tol / max(rounds[-1][2], EPS)), MIN_TOL)
    status = verdict(bound, gap_tol, hit_limit=code == BUDGET)
    kind_name = {BUDGET: "max_iter", STALLED: "stalled", CONVERGED: "converged"}[code]
    info = {"stop": kind_name, "tol": current, "mass_steps": int(state.counters[3]), "bound_checks": checks,
            "newton_steps": newton_count, "rounds": rounds, "kernel_rows": int(rows.clock[2]),
            "cache_hits": int(rows.clock[1]), "cache_rows": rows.capacity}
    result = SolveResult(problem=problem, coef=coef, b=b, objective=bound.primal, status=status, method="smo",
                         solver="SMO", solve_time=time.perf_counter() - start, iterations=steps, form="smo",
                         finish="smo", info=info, **report_fields(problem, bound, gap_tol, dual=M))
    # Z is exact here (rebuilt for the certificate): the training decision values cost no kernel pass
    result.training_decision = state.training_decision(b)
    progress.done(result)
    return result


def _report_steps(progress: Progress, state: State, tol: float) -> None:
    """The progress line of a stretch of steps: the steps so far, the largest violation on the active pairs against
    the tolerance, the active and shrunk pairs, the mass steps."""
    active = int(state.n_active.sum())
    progress("steps", int(state.counters[0]), violation=largest_violation(state.arrays, state.mass_mode)[0],
             tol=tol, active_pairs=active, shrunk_pairs=state.a.size - active, mass_steps=int(state.counters[3]))
