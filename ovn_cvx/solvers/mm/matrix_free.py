"""Matrix-free Newton on the smoothed objective (docs/theory.md §9.11): large linear problems, such as wide sparse
data (a d×d block per class and an n×n pair matrix are both out of reach) or dense data with millions of pairs.

Only products with the rows of X that carry pairs are used (sparse X: one matrix S whose row p is x_{i_p} in the
column block of class k_p; dense X: one block of rows per class): per Newton iteration one pass for the margins
and one transposed pass for the gradient, and per MINRES/CG iteration a pass over the rows of the *band* pairs only
(|r_p| < ε, the only ones with curvature). The Newton system is solved in the band's pair coordinates when the band
is small beside W's degrees of freedom (well conditioned as ε → 0), else in primal coordinates. Memory: the pair
rows (nnz(X) times the mean number of labels per row) plus O(n + K·M). After each ε stage, an exact finish at ε = 0
on the stage's partition (the same pair-coordinate system, active-set rounds as in the polish). The proven bound of
§6 decides, as in the MM phases: "optimal" only when F − D(μ̂) ≤ gap_tol·max(1, |F|) with μ̂ the candidate's
multipliers (the smoothed hinge's slopes, their extrapolation, the finish's) made dual feasible.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...duality import GapBound, gap_bound, project_hard_constraints
from ...problem import Problem, class_sums
from ...result import within_gap_tol
from .common import State, backtrack, continuation, hinge_slope, next_eps, smoothed_hinge, state_objective
from .band_systems import EXACT_RTOL, BandHessian, BandPairSystem, tangent
from .pair_rows import pair_rows
from ..progress import SILENT, Progress
from .active_set import IN_I, IN_S, IN_V, PartitionSolution, active_set_finish, partition

#: the first floor of a cold start: above 1, every pair of W = 0, b = 0 (r ≡ 1) lies in the band, so the first stage
#: starts from the minimizer with every pair in the band (the least-squares fit of the margins)
COLD_EPS = 2.0
#: the first floor of a warm start: near a neighbouring optimum, its margin pairs are within ~1e-2 of the margin
WARM_EPS = 1e-2
#: the matrix-free form's ε continuation factor, and the floor where it stops (the bound then says how far the answer
#: is)
NEWTON_CG_EPS_FACTOR = 10.0
NEWTON_CG_MIN_EPS = 1e-9
#: the Newton system is solved in the band's pair coordinates when the band has at most this share of the weights'
#: degrees of freedom (K·M, hard w: (K−1)·M): their Gram matrix is then far from singular (for rows in general
#: position, a condition number ≲ 34 by the Marchenko–Pastur law), where the primal system's grows like 1/ε
PAIR_SHARE = 0.5
FORCING = (1e-12, 1e-2)
#: a Newton step that predicts a decrease below this size relative to F̃_ε and to gap_tol ends the stage: far
#: below what the bound needs (a pair on the band's edge can otherwise keep the partition changing for long)
STAGE_DECREASE = 1e-3
#: Newton iterations per ε stage before the stage is declared converged anyway
STAGE_MAX_ITER = 50
#: step halvings of the matrix-free form's line search
NEWTON_CG_MAX_HALVINGS = 40
#: the highest degree of the extrapolation in ε to 0 (through up to this many + 1 of the last stages)
EXTRAPOLATION_ORDER = 2


@dataclass
class PrimalPoint:
    """An iterate: W (M×K), b, the pair margins u_p = x_{i_p}ᵀ w_{k_p} and residuals r_p."""

    W: np.ndarray
    b: np.ndarray
    u: np.ndarray
    r: np.ndarray


@dataclass
class Stage:
    """The end of one ε stage: the floor, the point, its slopes μ and its partition (−1 below the band, 0 in
    it, 1 above)."""

    eps: float
    W: np.ndarray
    b: np.ndarray
    mu: np.ndarray
    sets: np.ndarray


class NewtonCG:
    """The state of one matrix-free run and its named steps; :func:`~.common.continuation` is the loop over them
    (a :class:`~.common.ContinuationRun`)."""

    form = "matrix-free"
    stop_at_floor = "eps floor"

    def __init__(self, problem: Problem, gap_tol: float, warm_coef=None, warm_b=None, progress: Progress = SILENT):
        self.problem, self.coupling, self.gap_tol = problem, problem.coupling_ops, gap_tol
        self.progress = progress
        self.offers = 0  # the candidates offered for the bound
        self.rows = pair_rows(problem)
        self.row_squares = self.rows.row_squares()
        self.sign, self.cost, self.label = problem.pairs.sign, problem.cost, problem.pairs.label
        self.bounds = problem.pairs.class_bounds(problem.n_classes)
        M, K = problem.n_features, problem.n_classes
        W = np.zeros((M, K)) if warm_coef is None else np.array(warm_coef, dtype=float)
        b = np.zeros(K) if warm_b is None else np.array(warm_b, dtype=float)
        self.point = self.at(W, b)
        self.eps = COLD_EPS if warm_coef is None else WARM_EPS
        self.smooth = self.smoothed(self.point)
        self.iterations = self.stage_iterations = self.cg_iterations = self.extrapolations = 0
        self.pair_solves = self.primal_solves = 0  # Newton systems solved in each coordinate system
        self.finish_solves = 0  # systems of the exact finish (pair coordinates, ε = 0)
        self.finished: set[bytes] = set()  # the partitions the finish has solved
        self.stage_gradient: float | None = None  # ‖g‖ at the stage's start, set by its first direction
        self.history = [self.exact(self.point)]
        self.best: tuple[PrimalPoint, GapBound] | None = None
        self.chain: list[Stage] = []  # the last stages
        self.stage_done = False  # set when a prediction is proven to be the stage's minimizer
        if warm_coef is None:
            self.start_on_partition(np.zeros(len(self.cost), dtype=np.int8))

    # --- values -------------------------------------------------------------------------------------
    def at(self, W, b, u=None) -> PrimalPoint:
        u = self.rows.forward(W) if u is None else u
        return PrimalPoint(W, b, u, 1.0 - self.sign * (u + b[self.label]))

    def _state(self, point: PrimalPoint) -> State:
        reg = 0.5 * self.coupling.square(point.W)
        return State(None, point.r, reg, point.b)

    def exact(self, point: PrimalPoint) -> float:
        return state_objective(self.problem, self._state(point))

    def smoothed(self, point: PrimalPoint) -> float:
        return state_objective(self.problem, self._state(point), smoothed_hinge(point.r, self.eps))

    def slopes(self, r: np.ndarray) -> np.ndarray:
        """μ_p = c_p h'_ε(r_p): the smoothed hinge's slopes, the dual estimate of §9.3."""
        return self.cost * hinge_slope(r, self.eps)

    @property
    def certified(self) -> bool:
        return self.best is not None and within_gap_tol(self.best[1].relative, self.gap_tol)

    # --- the steps ----------------------------------------------------------------------------------
    def gradient(self, band: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """∇ of F̃_ε with the hinge of the pairs in ``band`` (indices) replaced by its quadratic piece
        c(r+ε)²/(4ε) (F̃_ε itself when ``band`` is the band), projected on the hard constraints' subspace."""
        point = self.point
        slopes = self.slopes(point.r)
        slopes[band] = self.cost[band] * (point.r[band] + self.eps) / (2.0 * self.eps)
        return self.lagrangian_gradient(point, slopes)

    def lagrangian_gradient(self, point: PrimalPoint, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """∇ of R + B − Σ_p μ_p y_p f_p at ``point`` (the hinges' slopes fixed at μ), projected as :meth:`gradient`."""
        problem, signed = self.problem, self.sign * mu
        grad_W = self.coupling.apply(point.W) - self.rows.backward(signed)
        grad_b = -class_sums(signed, self.bounds)
        if not problem.hard_b:
            grad_b += 2.0 * problem.bias_penalty * point.b.sum()
        return tangent(problem, grad_W, grad_b)

    def direction(self, band: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, bool, float]:
        """The Newton direction (V, d) of F̃_ε — or, given ``band``, the step to the minimizer of the model whose
        pairs in it are quadratic, solved to EXACT_RTOL — whether it was solved exactly, and the model's predicted
        decrease −½gᵀ(V, d). The forcing term (‖g‖/‖g₀‖)² (g₀: the gradient at the stage's start, before its
        prediction) is superlinear and exact near the stage's minimizer. In the band's pair coordinates (MINRES)
        when the band is small beside W's degrees of freedom (PAIR_SHARE), else in the primal ones (PCG)."""
        problem, point = self.problem, self.point
        model = band is not None
        if band is None:
            band = np.flatnonzero(np.abs(point.r) < self.eps)
        grad_W, grad_b = self.gradient(band)
        size = float(np.sqrt(np.sum(grad_W * grad_W) + grad_b @ grad_b))
        if self.stage_gradient is None:
            self.stage_gradient = max(size, np.finfo(float).tiny)
        rtol = EXACT_RTOL if model else float(np.clip((size / self.stage_gradient) ** 2, *FORCING))
        if band.size <= PAIR_SHARE * (grad_W.size - problem.n_features * problem.hard_w):
            system = BandPairSystem(problem, self.rows, self.row_squares, band, self.eps)
            self.pair_solves += 1
        else:
            system = BandHessian(problem, self.rows, band, self.eps)
            self.primal_solves += 1
        V, d, used, exact = system.step(grad_W, grad_b, rtol)
        self.cg_iterations += used
        return V, d, exact, -0.5 * float(np.sum(grad_W * V) + grad_b @ d)

    def line_search(self, V: np.ndarray, d: np.ndarray) -> float:
        """Backtracking on F̃_ε along the direction (V, d); every trial is O(n) (margins move linearly). Returns
        the step length taken (0 when none lowers F̃_ε)."""
        p = self.point
        du = self.rows.forward(V)
        dr = self.sign * (du + d[self.label])
        trial, t = backtrack(lambda t: PrimalPoint(p.W + t * V, p.b + t * d, p.u + t * du, p.r - t * dr),
                             self.smoothed, self.smooth, NEWTON_CG_MAX_HALVINGS)
        if trial is not None:
            self.point, self.smooth = trial, self.smoothed(trial)
        return t

    def newton_step(self) -> bool:
        """One Newton iteration; True when the ε stage has converged: a full step, from an exact solve, that
        kept the partition it was modelled on (F̃_ε is quadratic there: its minimizer), a step whose predicted
        decrease is negligible beside gap_tol (STAGE_DECREASE), or no decrease."""
        sets = partition(self.point.r, self.eps)
        V, d, exact, decrease = self.direction()
        length = self.line_search(V, d)
        self.iterations += 1
        self.stage_iterations += 1
        self.history.append(self.exact(self.point))
        kept = length == 1.0 and exact and np.array_equal(sets, partition(self.point.r, self.eps))
        negligible = decrease <= STAGE_DECREASE * self.gap_tol * max(1.0, abs(self.smooth))
        return length == 0.0 or kept or negligible or self.stage_iterations >= STAGE_MAX_ITER

    def iterate(self) -> bool:
        """A Newton iteration, unless the stage's prediction was proven to be its minimizer; whether the stage has
        converged."""
        return self.stage_done or self.newton_step()

    def end_stage(self) -> None:
        """The stage recorded (:meth:`record_stage`), then the exact finish from its partition."""
        self.record_stage()
        self.exact_finish()

    def at_limit(self) -> None:
        """The last stage recorded: its point and extrapolations are candidates for the bound."""
        self.record_stage()

    def record_stage(self) -> None:
        """Record the stage and try for the proven bound: at the stage's point with its slopes, and at the
        extrapolations to ε = 0 through the last two and three stages (exact in the limit when they ended on one
        partition, docs/theory.md §9.11; otherwise merely candidates, which the bound judges)."""
        point = self.at(*project_hard_constraints(self.problem, self.point.W, self.point.b))
        self.point, self.smooth = point, self.smoothed(point)
        stage = Stage(self.eps, point.W, point.b, self.slopes(point.r), partition(point.r, self.eps))
        self.chain = [*self.chain[-EXTRAPOLATION_ORDER:], stage]
        self.offer(point, stage.mu)
        for order in range(1, len(self.chain)):
            W, b, mu = extrapolate(self.chain[-order - 1:], 0.0)
            self.offer(self.at(*project_hard_constraints(self.problem, W, b)), mu)
            self.extrapolations += 1

    def offer(self, candidate: PrimalPoint, mu: np.ndarray) -> None:
        """Keep ``candidate`` as the answer if its proven bound with multipliers ``mu`` is the smallest yet."""
        bound = gap_bound(self.problem, candidate.W, candidate.b, mu, primal=self.exact(candidate))
        if self.best is None or bound.absolute < self.best[1].absolute:
            self.best = candidate, bound
        self.offers += 1
        self.progress.evaluation(self.offers, self.best[1], iteration=self.iterations)

    def exact_finish(self) -> None:
        """The exact finish (docs/theory.md §9.11) from the last stage's partition: the active-set finish (§9.5)
        with the engine :class:`PartitionRestart`, from the stage's point and slopes."""
        if not self.certified:
            stage = self.chain[-1]
            active_set_finish(PartitionRestart(self, self.point, stage.mu), stage.sets, tried=self.finished)

    def refine_eps(self) -> bool:
        """The next, smaller floor (False at NEWTON_CG_MIN_EPS), started from the better of two predictions when it
        lowers F̃ there: the minimizer of F̃ at the new floor on the last stage's partition, and the stages'
        extrapolation to the new floor when the last two ended on one partition (along a fixed partition the path
        is smooth in ε)."""
        eps = next_eps(self.eps, NEWTON_CG_EPS_FACTOR, NEWTON_CG_MIN_EPS)
        if eps is None:
            return False
        self.eps = eps
        self.smooth = self.smoothed(self.point)
        self.stage_iterations, self.stage_gradient = 0, None
        self.start_on_partition(self.chain[-1].sets)
        if len(self.chain) > 1 and np.array_equal(self.chain[-1].sets, self.chain[-2].sets):
            if self.predict(extrapolate(self.chain, self.eps)[:2]):
                self.stage_done = False
        return True

    def start_on_partition(self, sets: np.ndarray) -> None:
        """Move to the minimizer of F̃_ε on the partition ``sets`` (−1 below the band, 0 in it, 1 above; one linear
        solve, as F̃_ε is quadratic on a fixed partition) if that lowers F̃_ε. When the solve was exact and the
        point lies on ``sets`` itself, it is F̃_ε's minimizer: the stage is done without a Newton step."""
        V, d, exact, _ = self.direction(np.flatnonzero(sets == 0))
        moved = self.predict((self.point.W + V, self.point.b + d))
        self.stage_done = moved and exact and np.array_equal(partition(self.point.r, self.eps), sets)

    def predict(self, candidate: tuple[np.ndarray, np.ndarray]) -> bool:
        """Move to (W, b) (the hard constraints made exact) if it lowers F̃_ε; whether it did."""
        predicted = self.at(*project_hard_constraints(self.problem, *candidate))
        value = self.smoothed(predicted)
        if value >= self.smooth:
            return False
        self.point, self.smooth = predicted, value
        return True


class PartitionRestart:
    """The matrix-free form's :class:`~.active_set.PartitionEngine`: the minimizer of F with the margin pairs held on
    the margin (r_p = 0, multipliers free) and the V and I pairs' multipliers fixed at c_p and 0, one pair-coordinate
    solve at ε = 0 (``BandPairSystem``) from the last point and multipliers; every point solved exactly is offered
    to the run as a candidate for the bound. An inexact solve means an inconsistent partition and ends the finish;
    a partition no pair leaves is solved once more from its own solution (iterative refinement: the first solve's
    residual, small beside a far start, was measured to leave r_S at 5e-10 and the bound at 1.7e-6)."""

    refines = True

    def __init__(self, run: NewtonCG, point: PrimalPoint, mu: np.ndarray):
        self.run, self.problem, self.point, self.mu = run, run.problem, point, mu

    def solve(self, sets: np.ndarray) -> PartitionSolution | None:
        run, point, c = self.run, self.point, self.problem.cost
        mu = np.where(sets == IN_V, c, np.where(sets == IN_I, 0.0, self.mu))
        margin = np.flatnonzero(sets == IN_S)
        system = BandPairSystem(self.problem, run.rows, run.row_squares, margin, 0.0)
        V, d, t, used, exact = system.solve(*run.lagrangian_gradient(point, mu), EXACT_RTOL, point.r[margin])
        run.cg_iterations += used
        run.finish_solves += 1
        if not exact:
            return None
        self.point = point = run.at(*project_hard_constraints(self.problem, point.W + V, point.b + d))
        mu[margin] -= run.sign[margin] * t
        self.mu = mu
        return PartitionSolution(mu, point.r, float(np.abs(point.u + point.b[run.label]).max()))

    def offer(self, sets: np.ndarray, solution: PartitionSolution, settled: bool) -> str | None:
        """The point to the run as a candidate; "certified" once the run's bound is within gap_tol."""
        self.run.offer(self.point, solution.mu)
        return "certified" if self.run.certified else None


def extrapolate(chain: list[Stage], eps: float):
    """(W, b, μ) of the polynomial through the stages' values in ε, at ``eps`` (Lagrange form): on a fixed
    partition the smoothed minimizer is a rational, smooth function of ε (docs/theory.md §9.11), so with floors
    a factor 10 apart each further stage gains a factor ~10 in accuracy."""
    floors = np.array([stage.eps for stage in chain])
    weights = [np.prod([(eps - floors[j]) / (floors[i] - floors[j]) for j in range(len(chain)) if j != i])
               for i in range(len(chain))]
    return tuple(sum(w * getattr(stage, name) for w, stage in zip(weights, chain)) for name in ("W", "b", "mu"))


def solve_matrix_free(problem: Problem, *, gap_tol: float, max_iter: int, warm_coef=None,
                      warm_b=None, progress: Progress = SILENT) -> tuple[NewtonCG, str]:
    """Newton-CG with ε continuation, each stage followed by the exact finish, until the proven bound is within
    ``gap_tol``: (the run, why it stopped). The answer is ``run.best``: the point with the smallest proven bound.
    ``progress``: a line per iteration, stage and offered bound (:class:`~ovn_cvx.solvers.progress.Progress`)."""
    run = NewtonCG(problem, gap_tol, warm_coef, warm_b, progress)
    return run, continuation(run, max_iter)
