"""The MM phase (docs/theory.md §9.1–§9.7): MM steps on the ε-smoothed objective, generalized Newton steps with
backtracking, over-relaxation, the polish schedule and the ε continuation."""
from __future__ import annotations

import numpy as np

from ...duality import gap_bound, project_hard_constraints
from ...result import SolveResult
from .common import (GramOperator, State, Stepper, backtrack, continuation, hinge_slope, next_eps, smoothed_hinge,
                     state_objective)
from ..verdict import verdict
from .options import Options, pack_result
from .active_set import partition
from .polish import polish

#: the MM phase's ε continuation (when the polish fails at convergence) stops at this floor
MM_MIN_EPS = 1e-6
#: the MM phase's ε continuation divides ε by this (measured linear N = 10000: 2 fewer iterations than 10, certified
#: at ε = 0.5 instead of 0.1)
MM_EPS_FACTOR = 2.0
#: step halvings of the MM phase's Newton backtracking
MM_MAX_HALVINGS = 30
#: band half-width of the first polish partition from a warm start: the margin pairs of a certified solution
WARM_DELTA = 1e-6


def _newton_step(stepper: Stepper, state: State, smooth: float, eps: float, values):
    """Generalized Newton direction on F̃_ε with backtracking: (state, F, F̃_ε, step length), or a None state
    when no step lowers F̃_ε."""
    if state.params is None:  # a warm start given as (coef, b): no iterate to step back to
        return None, None, None, 0.0
    full = stepper.newton(state, eps)
    candidate, step = backtrack(lambda t: full if t == 1.0 else stepper.relax(full, state, t),
                                lambda candidate: values(candidate)[1], smooth, MM_MAX_HALVINGS)
    if candidate is None:
        return None, None, None, 0.0
    return (candidate, *values(candidate), step)


class PolishSchedule:
    """When the MM phase attempts the polish: when the active-set partition has been stable for 3 iterations
    (and changed since the last attempt), at convergence, at the iteration limit, and at least every
    ``polish_every``·(1, 2, 4, 8, 8, …) iterations (backing off after failures)."""

    def __init__(self, every: int, eps: float, r: np.ndarray):
        self.every, self.wait = every, every
        self.attempts, self.last, self.attempted = 0, 0, None
        self.sets, self.stable = partition(r, eps), 0

    def observe(self, r: np.ndarray, eps: float) -> bool:
        """Record the partition of the new iterate; True if it is the one the previous iterate had."""
        new = partition(r, eps)
        kept = np.array_equal(new, self.sets)
        self.stable = self.stable + 1 if kept else 0
        self.sets = new
        return kept

    def due(self, t: int, forced: bool) -> bool:
        settled = self.stable >= 3 and t - self.last >= 10 and (
            self.attempted is None or not np.array_equal(self.sets, self.attempted))
        return forced or settled or t - self.last >= self.wait

    def attempted_at(self, t: int):
        self.attempts += 1
        if self.attempts > 1:
            self.wait = min(2 * self.wait, 8 * self.every)
        self.last, self.attempted = t, self.sets


class MMRun:
    """The state of one MM run (docs/theory.md §9.1–§9.7) and its named steps; :func:`~.common.continuation` is the
    loop over them (a :class:`~.common.ContinuationRun`)."""

    #: F̃_ε converged at the ε floor (or without the polish, where there is no ε continuation)
    stop_at_floor = "decrease"

    def __init__(self, problem, stepper, options: Options, warm_coef, warm_b):
        self.problem, self.stepper, self.options = problem, stepper, options
        self.progress = options.progress
        self.eps, self.min_eps = options.eps, min(options.eps, MM_MIN_EPS)
        self.state = stepper.initial(warm_coef, warm_b)
        self.exact, self.smooth = self.values(self.state)
        self.history, self.smoothed = [self.exact], [self.smooth]
        self.t, self.relaxed, self.newton_steps = 0, 0, 0
        self.operator = GramOperator(problem) if options.polishes else None
        self.schedule = PolishSchedule(options.polish_every, self.eps, self.state.r)
        self.outcome = None
        if options.polishes and warm_coef is not None:
            # first the warm start's own margin set (|r| at round-off): along a β or α path it often stays the
            # optimal partition (measured: the same 157 margin pairs for β from 0.25 to 4)
            self.attempt_polish((WARM_DELTA,))

    @property
    def certified(self) -> bool:
        return self.outcome is not None and self.outcome.certified

    @property
    def iterations(self) -> int:
        return self.t

    def values(self, state: State):
        """(F, F̃_ε) at ``state``."""
        return (state_objective(self.problem, state),
                state_objective(self.problem, state, smoothed_hinge(state.r, self.eps)))

    def mm_step(self):
        """One MM step at z = max(|r|, ε), over-relaxed when that lowers F̃_ε (docs/theory.md §9.2, §9.7)."""
        new = self.stepper.step(np.maximum(np.abs(self.state.r), self.eps))
        exact, smooth = self.values(new)
        if self.options.relax and self.t > self.options.burn_in and self.state.params is not None:
            candidate = self.stepper.relax(new, self.state)
            cand_exact, cand_smooth = self.values(candidate)
            if cand_smooth < smooth:
                self.relaxed += 1
                return candidate, cand_exact, cand_smooth, 0.0
        return new, exact, smooth, 0.0

    def step(self) -> tuple[float, float]:
        """Newton with backtracking after the burn-in, else (or when it fails) an MM step; returns (decrease of
        F̃_ε, Newton step length)."""
        self.t += 1
        new = None
        if self.options.newton and self.t > self.options.burn_in:
            new, exact, smooth, length = _newton_step(self.stepper, self.state, self.smooth, self.eps, self.values)
            self.newton_steps += new is not None
        if new is None:
            new, exact, smooth, length = self.mm_step()
        decrease = self.smooth - smooth
        self.state, self.exact, self.smooth = new, exact, smooth
        self.history.append(exact)
        self.smoothed.append(smooth)
        return decrease, length

    def attempt_polish(self, deltas=()):
        # δ = ε fits the iterates near θ_ε; δ = 10ε (docs/theory.md §9.5) those still far from it
        self.schedule.attempted_at(self.t)
        self.outcome = polish(self.problem, self.operator, self.state.r, self.exact,
                              (*deltas, self.eps, 10.0 * self.eps))
        self.progress("polish", self.t, certified=self.outcome.certified)

    def iterate(self) -> bool:
        """One step and, with the polish, the schedule's attempt; whether F̃_ε has converged: its relative decrease
        within decrease_tol, or (with the polish) a full Newton step that kept the partition it was modelled on,
        which lands on θ_ε up to the damping."""
        options = self.options
        decrease, length = self.step()
        converged = decrease <= options.decrease_tol * abs(self.smooth)
        if options.polishes:
            kept = self.schedule.observe(self.state.r, self.eps)
            converged = converged or (length == 1.0 and kept)
            if self.schedule.due(self.t, converged or self.t == options.max_iter):
                self.attempt_polish()
        return converged

    def end_stage(self) -> None:
        """Nothing: the polish schedule has made its attempt at convergence."""

    def at_limit(self) -> None:
        """Nothing: the polish schedule has made its attempt at the limit."""

    def refine_eps(self) -> bool:
        """F̃_ε has converged but θ_ε is too far from the optimum for the polish: continue MM on a smaller floor
        (F̃ stays monotone, h_ε is nondecreasing in ε). False at the floor, and without the polish (whose failure is
        what calls for a smaller floor)."""
        if not self.options.polishes:
            return False
        eps = next_eps(self.eps, MM_EPS_FACTOR, self.min_eps)
        if eps is None:
            return False
        self.eps = eps
        self.smooth = self.values(self.state)[1]
        self.schedule.sets = partition(self.state.r, self.eps)
        return True

    def dual_estimate(self) -> np.ndarray:
        """μ_p = c_p h'_ε(r_p), the slope of the smoothed hinge: the dual point MM converges to (docs/theory.md
        §9.3)."""
        return self.problem.cost * hinge_slope(self.state.r, self.eps)


def run_mm(problem, stepper, options: Options, warm_coef, warm_b) -> SolveResult:
    """finish="polish"/"none": MM (with Newton steps) until the polish certifies or F̃_ε converges at the floor."""
    run = MMRun(problem, stepper, options, warm_coef, warm_b)
    return mm_result(run, continuation(run, options.max_iter))


def mm_result(run: MMRun, stop: str) -> SolveResult:
    problem, options = run.problem, run.options
    info = {"eps": run.eps, "eps_initial": options.eps, "decrease_tol": options.decrease_tol,
            "smoothed_history": np.asarray(run.smoothed), "relaxed_steps": run.relaxed,
            "newton_steps": run.newton_steps, "polish_attempts": run.schedule.attempts}
    if run.certified:
        out = run.outcome
        coef, b, mu, primal = out.coef, out.b, out.mu, out.objective
        info.update(finish="polish", certificate=out.certificate, polish_rounds=out.rounds, polish_iteration=run.t)
        stop = "certified"
    else:
        coef, b = project_hard_constraints(problem, *run.stepper.solution(run.state))
        mu, primal = run.dual_estimate(), None
        band = np.abs(run.state.r) < run.eps
        # F̃_ε − F at this iterate; at the limit θ_ε it bounds F(θ_ε) − F* (docs/theory.md §9.1.3)
        info.update(finish="mm", smoothing_bound=float(run.eps / 4.0 * problem.cost[band].sum()))
        if run.outcome is not None:
            info["polish_failure"] = run.outcome.reason
    info["stop"] = stop
    bound = gap_bound(problem, coef, b, mu, primal=primal)
    status = verdict(bound, options.gap_tol, hit_limit=stop == "max_iter")
    return pack_result(problem, run.stepper, coef, b, bound, options.gap_tol, status, run.t, info, run.history)
