"""The finishing strategy (docs/theory.md §9.5, §9.8): the MM phase alone ("polish", "none"), or the interior point
and its crossover ("interior", "auto": after a warm start's own margin set, or a cold start's MM phase where it
wins). Every answer is proven: a polish is accepted only with its bound within gap_tol."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ...duality import gap_bound
from .common import GramOperator, state_objective
from .forms import MM_FIRST_BUDGET, mm_first
from .interior import NEAR, PATIENCE, InteriorPoint
from ...result import SolveResult
from ..verdict import verdict
from .options import pack_result
from .phase import WARM_DELTA, run_mm
from .active_set import IN_S, free_parameters
from .polish import polish, polish_partition

#: iteration limit of the interior-point finish (measured 5–24 iterations; docs/theory.md §9.8)
INTERIOR_MAX_ITER = 100
#: the interior point's own target for the relative bound: well inside the default gap_tol, near round-off
INTERIOR_GAP_TOL = 1e-9
#: rounds of each crossover: an interior point's margin set is right or nearly right (measured: ≤ 4 rounds when
#: it certifies); where it is not (margin pairs with μ at a bound, which the active set moves back and forth)
#: more rounds only cost time (glass, SwHb, β = 0.01: 40 rounds, 42 ms, for an interior point that took 17 ms)
CROSSOVER_ROUNDS = 5
#: the early crossover: once the interior point's complementarity is within EARLY_CROSSOVER·max(1, |F|) (before
#: any exact evaluation), the polish of the margin set it points to, at most EARLY_ROUNDS rounds
EARLY_CROSSOVER = 1e-4
EARLY_ROUNDS = 3
#: ... accepted with a proven relative bound within this fraction of gap_tol (at least INTERIOR_GAP_TOL): a hundredfold
#: margin to the promise. Near the ends of α a certified partition's bound can stay at ~1e-7 (P⁻¹ amplifies the dual
#: point's round-off, docs/theory.md §9.9), where the interior point alone gets to 1.5e-8 (breast_cancer, SwSb,
#: α = −0.999, β = 1e4): that one goes on; glass, SwHb, α = −0.199, β = 1e4 certified at 1.5e-9, where requiring
#: the interior point's 1e-9 cost two iterations and the crossover (27 ms, slower than ECOS's 24 ms)
EARLY_ACCEPT = 1e-2
#: the interior point's second pass (to INTERIOR_GAP_TOL, after a failed crossover, the result already within gap_tol)
#: stops after this many evaluations without a better bound (the first pass: interior.PATIENCE)
REFINE_PATIENCE = 2
#: from this gap_tol up the interior point stops once an iterate is proven within gap_tol, short of the exact optimum
#: (no crossover): a looser tol then buys time (measured on the estimator's default linear problem, N = 2 000 /
#: 10 000 / 50 000: 15 / 16 / 32 iterations exact, 11 / 11 / 22 to a proven 1e-4, 9 / 9 / 16 to 1e-3); below it the
#: answer is exact to round-off whatever gap_tol asks (the reference's use)
EXACT_BELOW = 1e-5


def run_finish(problem, stepper, options, warm_coef, warm_b) -> SolveResult:
    """The strategy ``options.finish`` names: "polish"/"none": the MM phase alone (with the polish, or the paper's
    algorithm); "auto"/"interior": the MM phase where it wins (auto), else the interior point and its crossover."""
    if options.finish in ("polish", "none"):
        return run_mm(problem, stepper, options, warm_coef, warm_b)
    operator = GramOperator(problem)
    if options.finish == "auto" and warm_coef is not None:
        found = _warm_polish(problem, stepper, operator, options, warm_coef, warm_b)
        if found is not None:
            return found
    spent = 0
    if options.finish == "auto" and warm_coef is None and mm_first(problem, stepper):
        phase = run_mm(problem, stepper, replace(options, finish="polish", eps=0.5 if options.newton else options.eps,
                                                 max_iter=min(options.max_iter, MM_FIRST_BUDGET)), None, None)
        if phase.success:
            return phase
        spent = phase.iterations
    return _interior(problem, stepper, operator, options, spent)


def _warm_polish(problem, stepper, operator, options, warm_coef, warm_b) -> SolveResult | None:
    """The warm start's own margin set, polished: along a β or α path often still optimal (one round)."""
    state = stepper.initial(warm_coef, warm_b)
    exact = state_objective(problem, state)
    found = _certified_polish(problem, operator, state.r, exact, (WARM_DELTA,), options)
    options.progress("warm polish", certified=found is not None, bound=None if found is None else found[2].relative)
    if found is None:
        return None
    return pack_result(problem, stepper, *found, options.gap_tol, "optimal", 0, {"finish": "warm polish"}, [exact])


def _interior(problem, stepper, operator, options, spent: int) -> SolveResult:
    """The interior point to ``gap_tol``, then the crossover: the polish of the margin set its last two iterates
    point to (Tapia's indicators, ``PrimalDualPoint.margin_sets``), exact to round-off when it certifies; otherwise the
    interior point goes on to its own target INTERIOR_GAP_TOL and the crossover is tried once more from there (unless
    from a partition that failed, or a degenerate one after a failure). Before all that, the early crossover: one
    polish at the first iterate whose complementarity is within EARLY_CROSSOVER, before any exact evaluation
    (docs/theory.md §9.8: on tiny problems it saves 1–2 iterations and the evaluations). Every answer is proven: a
    polish is accepted only with its bound within gap_tol. ``spent``: iterations of an MM phase before it (counted
    in ``iterations``). From ``gap_tol`` = EXACT_BELOW up, the interior point alone, until an iterate is proven
    within gap_tol."""
    limit = min(options.max_iter, INTERIOR_MAX_ITER)
    info = {"finish": "interior", "mm_iterations": spent}
    if options.gap_tol >= EXACT_BELOW:
        # aiming at gap_tol/NEAR: its exact evaluations start once the complementarity, the duality gap of a feasible
        # iterate, is within gap_tol, and a separable problem's blocks settle at their share of gap_tol/NEAR, which
        # leaves the bound its margin
        run = InteriorPoint(problem, stepper, options.gap_tol / NEAR, operator, options.progress).run(
            limit, options.gap_tol)
        return _packed(problem, stepper, options, run, run.coef, run.b, run.bound, spent, info)
    ipm = InteriorPoint(problem, stepper, min(INTERIOR_GAP_TOL, options.gap_tol), operator, options.progress)
    failed = set()  # the initial partitions of failed crossovers: the same partition fails again

    def crossover(sets, point, reference, rounds, accept_gap_tol=None):
        key = sets.tobytes()
        # a degenerate margin set (more pairs than free parameters) after a failed crossover: the same failure
        # (measured on glass: 96 then 98 margin pairs of 60 parameters, 5 rounds each, never certified)
        if key in failed or (failed and np.count_nonzero(sets == IN_S) > free_parameters(problem)):
            return None
        found = _proven(problem, polish_partition(problem, operator, sets, reference, iterate_b=point.theta.b,
                                                  iterate_mu=point.u, max_rounds=rounds), options, accept_gap_tol)
        options.progress("crossover", ipm.iterations, margin_pairs=int(np.count_nonzero(sets == IN_S)),
                         certified=found is not None)
        if found is None:
            failed.add(key)
        else:
            options.progress.evaluation(ipm.iterations, found[2], source="crossover")
        return found

    run = ipm.run(limit, options.gap_tol, pause=EARLY_CROSSOVER)
    # paused at the early crossover point (not evaluated): the polish of the iterate over all pairs (the iterations
    # may leave fixed classes out), if its margin set is not degenerate (more margin pairs than free parameters: a
    # singular system whose rounds rarely certify and cost most)
    sets = None
    if ipm.pending:
        point, previous = ipm.iterates()
        sets = point.margin_sets(previous)
    if sets is not None and np.count_nonzero(sets == IN_S) <= free_parameters(problem):
        found = crossover(sets, point, ipm.history[-1], EARLY_ROUNDS,
                          accept_gap_tol=min(options.gap_tol, max(INTERIOR_GAP_TOL, EARLY_ACCEPT * options.gap_tol)))
        if found is not None:
            info.update(finish="interior + polish", interior_iterations=run.iterations, early_crossover=True)
            return pack_result(problem, stepper, *found, options.gap_tol, "optimal", spent + run.iterations, info,
                           run.history)
    for target, patience in ((options.gap_tol, PATIENCE), (min(INTERIOR_GAP_TOL, options.gap_tol), REFINE_PATIENCE)):
        run = ipm.run(limit, target, patience=patience)
        coef, b, bound = run.coef, run.b, run.bound
        if bound.relative > options.gap_tol:
            break
        best = ipm.best
        found = crossover(best.point.margin_sets(best.previous), best.point, bound.primal, CROSSOVER_ROUNDS)
        if found is not None and found[2].primal <= bound.primal:
            (coef, b, bound), info["finish"] = found, "interior + polish"
            break
        if bound.relative <= INTERIOR_GAP_TOL:
            break
    return _packed(problem, stepper, options, run, coef, b, bound, spent, info)


def _packed(problem, stepper, options, run, coef, b, bound, spent: int, info: dict) -> SolveResult:
    """The result of an interior-point finish ``run`` whose answer is (``coef``, ``b``) with its ``bound``."""
    info["interior_iterations"] = run.iterations
    status = verdict(bound, options.gap_tol, hit_limit=not run.converged and run.iterations >= options.max_iter)
    return pack_result(problem, stepper, coef, b, bound, options.gap_tol, status, spent + run.iterations, info,
                       run.history)


def _certified_polish(problem, operator, r, reference, deltas, options):
    """(coef, b, bound) of a polish from residuals ``r`` that certifies with a proven bound within gap_tol, else
    None."""
    return _proven(problem, polish(problem, operator, r, reference, deltas), options)


def _proven(problem, outcome, options, accept_gap_tol=None):
    """(coef, b, bound) of a polish outcome that certifies with a proven bound within gap_tol (or ``accept_gap_tol``
    ≤ gap_tol), else None."""
    if not outcome.certified:
        return None
    bound = gap_bound(problem, outcome.coef, outcome.b, outcome.mu, primal=outcome.objective)
    accepted = bound.relative <= min(options.gap_tol, accept_gap_tol or np.inf)
    return (outcome.coef, outcome.b, bound) if accepted else None
