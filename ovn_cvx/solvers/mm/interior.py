"""Exact finish by a primal-dual interior-point method (docs/theory.md §9.8), proven by the weak-duality bound (§6).

The QP: minimize R + B + Σ_p c_p ξ_p subject to s_p = a_p(θ) + ξ_p − 1 ≥ 0 and ξ_p ≥ 0 (a_p = y_p f_{k_p}(x_{i_p})
= 1 − r_p), with multipliers u_p ≥ 0 (of s ≥ 0: the dual μ of §6) and ν_p ≥ 0 (of ξ ≥ 0). Eliminating ξ, s, u
and ν from the Newton equations leaves, per pair, the weight D_p = 1/(s_p/u_p + ξ_p/ν_p), and the new θ is the
minimizer of R + B + ½ Σ_p D_p (a_p(θ) − t_p)² under the hard constraints: the weighted least-squares problem of
an MM step, solved by the same structured systems (per-class Cholesky blocks, or the pair form). Mehrotra's
predictor–corrector uses one factorization for both solves. Its iteration count does not depend on how many
pairs sit on the margin, where the active-set polish fails (measured: docs/theory.md §9.8).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy.linalg import lstsq

from ...duality import GapBound, gap_bound, project_hard_constraints
from ...objective import objective
from ...problem import Problem
from .active_set import IN_I, IN_S, IN_V
from .block_polish import polish_class
from .common import GramOperator, State, block_pairs, state_objective
from .primal import weighted_gram
from ..progress import SILENT, Progress

#: fraction of the way to the boundary of the positive orthant a step may go
TO_BOUNDARY = 0.995
#: the start's multipliers u = START_DUAL·c (ν = c − u): most pairs end inactive (μ_p = 0), and u = 0.2c took 7–9 %
#: fewer iterations than the centre c/2 (docs/theory.md §9.8: 192 linear problems of the real-data grid, 2389 → 2221)
START_DUAL = 0.2
#: iterations without a better bound after which the method has stalled (round-off floor reached)
PATIENCE = 4
#: the safeguard against Mehrotra's predictor–corrector cycling (it has no convergence guarantee; measured: 5-row
#: SwSb and SwHb problems alternated between two pairs of iterates at relative gaps of 1e-3 and 1e-2 for all 100
#: iterations): when his step does not lower the complementarity χ by the fraction SUFFICIENT_DECREASE of the step
#: length, the plain Newton step towards SAFE_CENTRING·χ, its length halved until it does (Armijo's rule on χ, as in
#: the long-step path-following methods; a short enough step always does, since σ < 1)
SAFE_CENTRING = 0.5
#: a block of a separable problem stops moving once its complementarity is within this fraction of its share of the
#: interior point's own accuracy (see InteriorPoint.settled). Measured on the estimator's default problem
#: (make_classification, 20 features, K = 5, N = 2 000): at 1e-2 a class with w_k = 0 and 8 000 margin pairs ran
#: on to a complementarity of 4e-13, where its ill-conditioned systems left a stationarity residual of 1.6e-4 and the
#: bound stalled at 2.7e-6; at 1, 10, 100 the bound reached 1.6e-9, 2.2e-9, 8.9e-9 in 22 iterations
SETTLED = 1.0
SUFFICIENT_DECREASE = 0.01
#: the exact evaluations start once the complementarity estimate is within NEAR·near_gap_tol of the objective
NEAR = 1e3
#: the last moving block of a separable problem is polished alone (InteriorPoint.cross_blocks) once its
#: complementarity is within this fraction of its share of max(1, |F|), at most BLOCK_ROUNDS active-set rounds a
#: partition (measured on the estimator's default problem, N = 2 000 and 10 000: 1e-2 and 1e-1, or 10 rounds, took
#: the same iterations)
BLOCK_CROSSOVER = 1e-3
BLOCK_ROUNDS = 3


@dataclass(frozen=True)
class PrimalDualPoint:
    """One interior-point iterate: θ as a stepper state (residuals r = 1 − a, R, b) and the four positive vectors."""

    theta: State
    xi: np.ndarray
    s: np.ndarray
    u: np.ndarray
    nu: np.ndarray

    def margin_sets(self, previous: "PrimalDualPoint") -> np.ndarray:
        """The active-set partition the iterate points to, by Tapia's indicators: the ratio of each slack and each
        multiplier to its value at the ``previous`` iterate. A bound that is active at the optimum has its slack
        shrink faster than its multiplier (the slack → 0, the multiplier → its positive optimum); an inactive one
        the reverse. So V: ξ_p shrinks slower than ν_p; I: s_p shrinks slower than u_p; else S. Unlike a residual band
        |r_p| ≤ δ or the comparison s_p < u_p, this does not depend on the scales of r and c (measured, docs/theory.md
        §9.8: 177 of 192 linear real-data problems certified at the first crossover, 176 of them in one round; the
        band: 151; s_p < u_p: 176, 113 in one round)."""
        return np.where(self.xi / previous.xi > self.nu / previous.nu, IN_V,
                        np.where(self.s / previous.s > self.u / previous.u, IN_I, IN_S)).astype(np.int8)

    @property
    def barrier(self) -> float:
        """The complementarity measure (s·u + ξ·ν)/(2n)."""
        return (float(self.s @ self.u) + float(self.xi @ self.nu)) / (2 * self.s.size)


@dataclass(frozen=True)
class Direction:
    theta: State  # the full-step θ (the weighted least-squares solution)
    xi: np.ndarray
    s: np.ndarray
    u: np.ndarray
    nu: np.ndarray


class PairTerms:
    """The per-pair quotients of one iterate that its weights and its Newton directions (two or three an iteration)
    share: s/u, ξ/ν, ν/ξ, the weights D = 1/(s/u + ξ/ν), the residuals r_ξ = c − u − ν and r_s = ξ − r − s,
    and the fit's target less v/D, 1 − r + u/D. Each is one pass over the pairs, and most of an iteration is such
    passes, not arithmetic (docs/theory.md §9.8)."""

    def __init__(self, point: PrimalDualPoint, c: np.ndarray):
        p = self.point = point
        self.su, self.xn, self.nx = p.s / p.u, p.xi / p.nu, p.nu / p.xi
        self.weight = 1.0 / (self.su + self.xn)
        self.r_xi = c - p.u
        self.r_xi -= p.nu
        self.r_s = p.xi - p.theta.r
        self.r_s -= p.s
        self.base = p.u / self.weight
        self.base -= p.theta.r
        self.base += 1.0


def _scaled_residual(x: np.ndarray, y: np.ndarray, target, correction: np.ndarray | None) -> np.ndarray:
    """r/y for the complementarity residual r = x∘y − ``target`` (+ ``correction``): x + (correction − target)/y,
    x itself for the affine predictor (target 0, no correction)."""
    if correction is None:
        return x if np.ndim(target) == 0 and target == 0 else x - target / y
    correction -= target
    correction /= y
    correction += x
    return correction


@dataclass
class Best:
    """The best primal point and the best dual value seen: the bound min F − max D holds whichever iterate
    produced each."""

    coef: np.ndarray | None = None
    b: np.ndarray | None = None
    primal: float = np.inf
    dual: float = -np.inf
    # the iterate of the best primal value and the one before it: past the round-off floor the iterates drift
    point: PrimalDualPoint | None = None
    previous: PrimalDualPoint | None = None
    mu: np.ndarray | None = None  # the dual-feasible point of the best dual value

    @property
    def bound(self) -> GapBound:
        return GapBound(primal=self.primal, dual=self.dual, mu=self.mu)

    def update(self, problem: Problem, coef: np.ndarray, b: np.ndarray, u: np.ndarray, point: PrimalDualPoint,
               previous: PrimalDualPoint) -> bool:
        """Evaluate the iterate's primal point (``coef``, ``b``) and multipliers ``u`` (exact objective, proven dual
        value); True when the bound improved."""
        before = self.bound.absolute
        value = objective(problem, coef, b)
        if value < self.primal:
            self.coef, self.b, self.primal, self.point, self.previous = coef, b, value, point, previous
        candidate = gap_bound(problem, coef, b, u, primal=value)
        if candidate.dual > self.dual:
            self.dual, self.mu = candidate.dual, candidate.mu
        return self.bound.absolute < before


@dataclass(frozen=True)
class Window:
    """What an interior point's iterations over some classes of a separable problem leave out (the fixed ones): the
    iterate and the one before it over all pairs (``point``, ``previous``) whose entries outside the window are the
    fixed classes' (a fixed block does not move), the positions of the window's ``pairs`` among all, and the
    objective's ``value`` over the classes outside it (a constant)."""

    point: PrimalDualPoint
    previous: PrimalDualPoint
    pairs: np.ndarray
    value: float


@dataclass
class InteriorOutcome:
    coef: np.ndarray | None
    b: np.ndarray | None
    bound: GapBound
    iterations: int
    converged: bool
    history: list


class InteriorPoint:
    """Mehrotra's predictor–corrector on the OvN QP over a stepper's structured solves (docs/theory.md §9.8)."""

    def __init__(self, problem: Problem, stepper, near_gap_tol: float = 1e-9, operator: GramOperator | None = None,
                 progress: Progress = SILENT):
        """``near_gap_tol`` is the accuracy the interior point aims at: its exact evaluations start at NEAR times it
        (:meth:`near`), and a block of a separable problem settles at its share of it (:meth:`settled`); :meth:`run`
        says when to stop. ``operator``: the Gram operator of the blocks' crossover (:meth:`cross_blocks`); with it,
        a separable problem's blocks are also fixed as they settle (:meth:`fix_settled`); without it, neither.
        ``progress``: a line per iteration, exact evaluation and block crossover."""
        self.problem, self.stepper, self.near_gap_tol, self.progress = problem, stepper, near_gap_tol, progress
        self.c = problem.cost
        # the blocks whose step lengths and centring are their own: the classes of a separable problem (K
        # independent QPs), else one block of every pair
        sizes = np.diff(problem.pairs.class_bounds(problem.n_classes))
        separable = getattr(stepper, "separable", False) and np.all(sizes > 0)
        self.sizes = sizes if separable else np.array([self.c.size])
        self.starts = np.concatenate([[0], np.cumsum(self.sizes)[:-1]])
        self.class_bounds = np.append(self.starts, self.c.size)  # the blocks' pairs over all pairs
        self.split = self.sizes.size > 1
        self.whole = stepper  # the stepper over all blocks (``stepper``: over the blocks the iterations run on)
        self.operator = operator if separable else None
        # the fixed blocks (settled, or certified by their crossover: they no longer move), their (coefficients, bias,
        # μ), and the (block, partition) pairs the crossover tried, by block over all blocks
        self.fixed, self.held, self.tried = np.zeros(self.sizes.size, dtype=bool), {}, set()
        # the blocks the iterations run on (all but the fixed ones once a window leaves those out), and the window
        self.classes, self.window = np.arange(self.sizes.size), None
        self.point, self.previous, self.best, self.history = None, None, None, []
        self.iterations, self.idle, self.stalled, self.pending, self.length = 0, 0, False, False, 1.0
        self._terms, self._chi = None, None

    def start(self) -> PrimalDualPoint:
        """θ = 0, ξ = 2, s = 1, u = START_DUAL·c, ν = c − u: the slack equations hold exactly (docs/theory.md §9.8)."""
        n = self.c.size
        u = START_DUAL * self.c
        return PrimalDualPoint(self.stepper.initial(), np.full(n, 2.0), np.ones(n), u, self.c - u)

    def terms(self, point: PrimalDualPoint) -> "PairTerms":
        """The :class:`PairTerms` of ``point``, kept for the iterate's directions."""
        if self._terms is None or self._terms.point is not point:
            self._terms = PairTerms(point, self.c)
        return self._terms

    def weights(self, point: PrimalDualPoint) -> np.ndarray:
        """D_p = d1 d2/(d1 + d2) with d1 = u/s, d2 = ν/ξ."""
        return self.terms(point).weight

    def direction(self, system, point: PrimalDualPoint, target, affine: Direction | None = None) -> Direction:
        """The Newton direction towards s∘u = ξ∘ν = ``target`` (0: the affine predictor), with Mehrotra's
        second-order correction when the ``affine`` direction is given; ``system``: the stepper's system of ``point``'s
        :meth:`weights`.

        With the residuals r_ξ = c − u − ν, r_s = ξ − r − s, r_su = s∘u − target (+ Δs_aff∘Δu_aff) and r_xn likewise,
        A = r_su/u, B = r_xn/ξ and t = r_ξ + B, the fit's targets are 1 − r + (u + v)/D with v/D = h = t ξ/ν − r_s − A,
        and then Δu = D(h − JΔθ), Δξ = (Δu − t) ξ/ν (as 1/D = s/u + ξ/ν), Δs = −A − (s/u)Δu, Δν = −B − (ν/ξ)Δξ:
        the elimination of docs/theory.md §9.8 in a few passes over the pairs, the quotients shared by the iterate's
        directions (:class:`PairTerms`)."""
        p, q = point, self.terms(point)
        A = _scaled_residual(p.s, p.u, target, None if affine is None else affine.s * affine.u)
        B = _scaled_residual(p.nu, p.xi, target, None if affine is None else affine.xi * affine.nu)
        t = q.r_xi + B
        h = t * q.xn
        h -= q.r_s
        h -= A
        theta = system.fit(q.base + h)
        du = h - p.theta.r
        du += theta.r  # h − JΔθ, JΔθ = r_old − r_new
        du *= q.weight
        dxi = du - t
        dxi *= q.xn
        ds = q.su * du
        ds += A
        dnu = q.nx * dxi
        dnu += B
        return Direction(theta, dxi, np.negative(ds, out=ds), du, np.negative(dnu, out=dnu))

    def block(self, j: int) -> slice:
        """The pairs of block j of the iterations (the pairs are sorted by class)."""
        return slice(self.starts[j], self.starts[j] + self.sizes[j])

    def per_pair(self, values: np.ndarray):
        """A per-block quantity as a per-pair vector (a scalar for one block)."""
        return np.repeat(values, self.sizes) if self.split else values[0]

    def complementarity(self, point: PrimalDualPoint) -> np.ndarray:
        """:meth:`block_barrier` of an iterate, kept: the iteration, the blocks' crossover and :meth:`estimate` read
        it for the same point."""
        if self._chi is None or self._chi[0] is not point:
            self._chi = (point, self.block_barrier(point))
        return self._chi[1]

    def block_barrier(self, point: PrimalDualPoint) -> np.ndarray:
        """Each block's complementarity measure χ_k = (s·u + ξ·ν)/(2 n_k)."""
        if not self.split:
            return np.array([point.barrier])
        products = point.s * point.u
        products += point.xi * point.nu
        return np.add.reduceat(products, self.starts) / (2 * self.sizes)

    def step_length(self, point: PrimalDualPoint, d: Direction) -> np.ndarray:
        """Each block's longest step ≤ 1 that keeps s, ξ, u and ν nonnegative: the smallest −x/dx over the falling
        entries, as 1/max(1, −min dx/x) over all entries of the block (x ≥ 0: rising entries have dx/x ≥ 0, and fmin
        passes over the 0/0 of an entry at zero that does not move). No mask: np.where over the four vectors took
        most of the time of the masked minimum."""
        with np.errstate(divide="ignore", invalid="ignore"):
            nearest = np.divide(d.s, point.s)
            ratio = np.empty_like(nearest)
            for x, dx in ((point.xi, d.xi), (point.u, d.u), (point.nu, d.nu)):
                np.fmin(nearest, np.divide(dx, x, out=ratio), out=nearest)
        return 1.0 / np.fmax(1.0, -np.fmin.reduceat(nearest, self.starts))

    def barrier_after(self, point: PrimalDualPoint, d: Direction, t: np.ndarray) -> np.ndarray:
        """Each block's complementarity χ_k after a step of length t_k along d (θ is not needed for it)."""
        length = self.per_pair(t)
        products, other, scratch = length * d.s, length * d.xi, length * d.u
        products += point.s
        scratch += point.u
        products *= scratch
        other += point.xi
        np.multiply(length, d.nu, out=scratch)
        scratch += point.nu
        other *= scratch
        products += other
        return np.add.reduceat(products, self.starts) / (2 * self.sizes)

    def centring(self, point: PrimalDualPoint, affine: Direction, chi: np.ndarray) -> np.ndarray:
        """Mehrotra's σ = (μ_aff/μ)³ from the barrier after the longest affine step, per block."""
        return (self.barrier_after(point, affine, self.step_length(point, affine)) / chi) ** 3

    def longest(self, point: PrimalDualPoint, d: Direction, settled: np.ndarray) -> np.ndarray:
        """The fraction-to-the-boundary step lengths; 0 for the ``settled`` blocks (a settled block does not move: its
        direction, on an identity system, means nothing)."""
        return np.where(settled, 0.0, np.minimum(1.0, TO_BOUNDARY * self.step_length(point, d)))

    def decreases(self, point: PrimalDualPoint, d: Direction, t: np.ndarray, chi: np.ndarray) -> np.ndarray:
        """Whether the steps of length t lower each block's complementarity to at most (1 − SUFFICIENT_DECREASE·t)·χ."""
        return self.barrier_after(point, d, t) <= (1.0 - SUFFICIENT_DECREASE * t) * chi

    def armijo(self, point: PrimalDualPoint, d: Direction, chi: np.ndarray, settled: np.ndarray) -> np.ndarray:
        """The safeguard's step lengths: the longest ones, halved until they lower χ enough (0 for the ``settled``
        blocks)."""
        t = self.longest(point, d, settled)
        while True:
            short = ~self.decreases(point, d, t, chi) & (t > 1e-12)
            if not short.any():
                return t
            t = np.where(short, t / 2.0, t)

    def advance(self, point: PrimalDualPoint, d: Direction, t: np.ndarray) -> PrimalDualPoint:
        """The steps of lengths t (one per block) along d."""
        if np.all(t == 1.0):
            return replace(point, theta=d.theta, xi=point.xi + d.xi, s=point.s + d.s, u=point.u + d.u,
                           nu=point.nu + d.nu)
        length = self.per_pair(t)
        theta = self.stepper.relax(d.theta, point.theta, t[0] if t.size == 1 else t)
        moved = {}
        for name in ("xi", "s", "u", "nu"):
            moved[name] = length * getattr(d, name)
            moved[name] += getattr(point, name)
        return replace(point, theta=theta, **moved)

    def keep(self, settled: np.ndarray, point: PrimalDualPoint) -> PrimalDualPoint:
        """The iterate before ``point`` for Tapia's indicators: a settled block's entries stay those before its last
        move (its slacks and multipliers no longer change, and their ratios would read as 1)."""
        mask = self.per_pair(settled)
        return replace(point, **{name: np.where(mask, getattr(self.previous, name), getattr(point, name))
                                 for name in ("xi", "s", "u", "nu")})

    def settled(self, chi: np.ndarray, value: float) -> np.ndarray:
        """The blocks of a separable problem that have converged: their complementarity within SETTLED of their share
        of the accuracy the interior point aims at, near_gap_tol·max(1, |F|). They stop moving: past that point a
        block's systems grow ill-conditioned and its iterates drift (measured: a class's F rose by 5e-4 relative in
        the ten iterations after it converged)."""
        if not self.split:
            return np.zeros(1, dtype=bool)
        return (2 * self.sizes * chi <= SETTLED * self.near_gap_tol * self.share(value)) | self.fixed[self.classes]

    def share(self, value: float) -> float:
        """A block's share of max(1, |F|): over all K blocks of the problem, whatever the iterations run on."""
        return max(1.0, abs(value)) / self.fixed.size

    def solution(self, point: PrimalDualPoint) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The (coef, b) and multipliers u of an iterate over all pairs (:meth:`iterates`), the fixed blocks' replaced
        by what they were fixed at (a settled block's iterate with repaired multipliers, or the exact solution of a
        block whose crossover certified)."""
        coef, b = project_hard_constraints(self.problem, *self.whole.solution(point.theta))
        if not self.held:
            return coef, b, point.u
        coef, b, u = coef.copy(), b.copy(), point.u.copy()
        for k, (column, bias, mu) in self.held.items():
            coef[:, k], b[k], u[self.class_bounds[k]:self.class_bounds[k + 1]] = column, bias, mu
        return coef, b, u

    def fix_settled(self, settled: np.ndarray):
        """Fix each block that has just settled at its iterate, with its multipliers u :meth:`repaired`: the bound of
        a settled block is limited by its stationarity residual, not by its complementarity (measured on the
        estimator's default problem, N = 50 000: a class with w_k = 0 and 40 000 margin pairs settled at χ_k = 2e-12
        with its mass Σ y_p u_p off by 4e-3, which the bound's repair took from Σ μ: a relative bound of 5.4e-8 the
        iterations after could not lower)."""
        new = np.flatnonzero(settled & ~self.fixed[self.classes])
        if not new.size:
            return
        coef, b, _ = self.solution(self.iterates()[0])
        for j in new:
            k = self.classes[j]
            self.fixed[k], self.held[k] = True, (coef[:, k].copy(), b[k], self.repaired(j))

    def narrow(self, settled: np.ndarray) -> np.ndarray:
        """Leave the fixed blocks out of the iterations: a separable problem's blocks are independent and a fixed block
        does not move, so the iterations over the others alone take the same steps, at a cost in proportion to
        their pairs (measured on the estimator's default problem, N = 50 000: one class moving alone for the last 12
        of 32 iterations, which cost as much as the first ones over all classes). The iterate, its costs, blocks and
        stepper are restricted to the blocks still moving; :attr:`window` keeps what is left out, for the iterates
        over all pairs (:meth:`iterates`) and the objective. Returns ``settled`` over the blocks kept."""
        keep = ~self.fixed[self.classes]
        if keep.all() or not keep.any():
            return settled
        # the entries left out, as the iterations over all blocks keep them: in the iterate, its own; in the one
        # before it, the previous iterate's (a fixed block's indicators read its last move, :meth:`keep`; no θ)
        point, previous = self.iterates()
        kept = np.flatnonzero(keep)
        self.stepper, theta = self.stepper.window(kept, self.point.theta)
        pairs = self.stepper.taken  # among the pairs the iterations ran on
        self.c, self.classes = self.stepper.cost, self.classes[kept]
        self.sizes, self.starts = np.diff(self.stepper.bounds), self.stepper.bounds[:-1]
        value = self.history[-1] - state_objective(self.problem, theta, cost=self.c)
        self.window = Window(point, point if previous is None else previous,
                             block_pairs(self.class_bounds, self.classes), value)
        before = self.point if self.previous is None else self.previous
        self.point, self.previous = (self._restricted(self.point, theta, pairs),
                                     self._restricted(before, theta, pairs))
        self._chi = None
        return settled[kept]

    @staticmethod
    def _restricted(point: PrimalDualPoint, theta: State, pairs: np.ndarray) -> PrimalDualPoint:
        """``point`` at the restricted ``theta``, its slacks and multipliers those of ``pairs``."""
        return replace(point, theta=theta, **{name: getattr(point, name)[pairs] for name in ("xi", "s", "u", "nu")})

    def iterates(self) -> tuple[PrimalDualPoint | None, PrimalDualPoint | None]:
        """The iterate and the one before it (for Tapia's indicators) over all pairs: the blocks a :attr:`window`
        leaves out as they were fixed."""
        if self.window is None:
            return self.point, self.previous
        return (self._expanded(self.point, self.window.point),
                None if self.previous is None else self._expanded(self.previous, self.window.previous))

    def _expanded(self, point: PrimalDualPoint, base: PrimalDualPoint) -> PrimalDualPoint:
        """``point`` over the window's pairs, over all pairs: the entries outside the window those of ``base``."""
        theta, values = (part.copy() for part in base.theta.params)
        theta[self.classes], values[self.window.pairs] = point.theta.params
        vectors = {}
        for name in ("xi", "s", "u", "nu"):
            vectors[name] = getattr(base, name).copy()
            vectors[name][self.window.pairs] = getattr(point, name)
        return PrimalDualPoint(self.whole.state(theta, values), **vectors)

    def objective(self, theta: State) -> float:
        """F at the iterate θ over the blocks the iterations run on, plus the constant part of those left out."""
        return state_objective(self.problem, theta, cost=self.c) + (0.0 if self.window is None else self.window.value)

    def repaired(self, j: int) -> np.ndarray:
        """The multipliers u of block j of the iterations moved least, in the metric of the weights u(c − u)/c (a
        pair at a bound stays there), to satisfy its stationarity: θ_j's weights = Σ_p y_p u_p φ_p and Σ_p y_p u_p = 0
        (P = I and a free bias: a separable problem, solved in the primal form, whose θ_j this reads); clipped to the
        box, and kept only when that lowers the residual (where few pairs are free it cannot remove all of it)."""
        block = self.block(j)
        rows, theta = self.stepper.rows[j], self.point.theta.params[0][j]
        u, c, y = self.point.u[block], self.c[block], self.stepper.sign[block]
        target = np.append(theta[:-1], 0.0)
        residual = target - rows.T @ (y * u)
        weight = u * (c - u) / c
        multiplier = lstsq(weighted_gram(rows, weight), residual, cond=1e-12, check_finite=False)[0]
        candidate = np.clip(u + weight * y * (rows @ multiplier), 0.0, c)
        better = np.linalg.norm(target - rows.T @ (y * candidate)) < np.linalg.norm(residual)
        return candidate if better else u.copy()

    def cross_blocks(self, value: float):
        """The crossover of the last block still moving, once its complementarity is within BLOCK_CROSSOVER of its
        share of max(1, |F|): the polish of its own QP from the partition Tapia's indicators point to
        (:func:`~.block_polish.polish_class`); when it certifies, the block is fixed at its exact solution and the run
        can end. Only the last block: fixing an earlier one saves only its share of the iterations left, measured
        less than its polishes cost."""
        chi = self.complementarity(self.point)
        moving = np.flatnonzero(~self.settled(chi, value))
        if moving.size != 1:
            return
        j = moving[0]
        if 2 * self.sizes[j] * chi[j] > BLOCK_CROSSOVER * self.share(value):
            return
        k, sets = self.classes[j], self.point.margin_sets(self.previous)[self.block(j)]
        key = (k, sets.tobytes())
        # each partition once, and no degenerate one (more margin pairs than the class's d + 1 parameters: a singular
        # system)
        if key in self.tried or np.count_nonzero(sets == IN_S) > self.problem.rank_bound + 1:
            return
        self.tried.add(key)
        point = self.iterates()[0]
        coef, b, _ = self.solution(point)
        found = polish_class(self.problem, self.operator, k, sets, coef, b, point.u, BLOCK_ROUNDS)
        self.progress("block crossover", self.iterations, block=int(k), certified=found is not None)
        if found is not None:
            self.fixed[k], self.held[k] = True, found

    def estimate(self, point: PrimalDualPoint, value: float) -> float:
        """The complementarity s·u + ξ·ν (the duality gap of a primal-feasible iterate, not a proof) relative to
        max(1, |F|), over the blocks not fixed (settled, or certified by their crossover: their frozen slacks and
        multipliers measure nothing)."""
        if not self.fixed.any():
            return 2 * point.s.size * point.barrier / max(1.0, abs(value))
        moving = ~self.fixed[self.classes]
        return 2 * float(self.sizes[moving] @ self.complementarity(point)[moving]) / max(1.0, abs(value))

    def near(self, point: PrimalDualPoint, value: float) -> bool:
        """Whether the iterate is worth the exact evaluation (an O(N·d) pass and the dual value): once the
        complementarity s·u + ξ·ν, the duality gap of a feasible iterate, is within NEAR·near_gap_tol of the
        objective.
        The proven bound decides; this only saves work."""
        return self.estimate(point, value) <= NEAR * self.near_gap_tol

    def run(self, max_iter: int, gap_tol: float, pause: float | None = None,
            patience: int = PATIENCE) -> InteriorOutcome:
        """Iterate until the proven relative bound is ≤ ``gap_tol``, the bound stops improving (round-off), or
        ``max_iter`` iterations in all. Resumable: a second call with a smaller ``gap_tol`` continues the same run.

        ``patience``: evaluations without a better bound after which the run has stalled (from this call on).
        ``pause``: also return, before its exact evaluation, at the first iterate whose complementarity is within
        ``pause``·max(1, |F|) (the caller's early crossover, on :attr:`point`); the next call evaluates it first.

        The start θ = 0 is not evaluated (its bound is never useful: F = Σc): the first evaluation is the first
        iterate that is :meth:`near`, or the last one."""
        if self.point is None:
            self.point, self.best, self.pending = self.start(), Best(), False
            self.history = [self.objective(self.point.theta)]
        best, self.patience = self.best, patience
        if self.pending and (self.near(self.point, self.history[-1]) or self.iterations >= max_iter):
            self.evaluate(best)
        converged = best.coef is not None and best.bound.relative <= gap_tol
        while not converged and self.iterations < max_iter and not self.stalled:
            self.iterations += 1
            settled = self.settled(self.complementarity(self.point), self.history[-1])
            if self.operator is not None:
                self.fix_settled(settled)
                settled = self.narrow(settled)
            point, weight, chi = self.point, self.weights(self.point), self.complementarity(self.point)
            system = self.stepper.system(weight, still=settled) if settled.any() else self.stepper.system(weight)
            affine = self.direction(system, point, 0.0)
            sigma = self.centring(point, affine, chi)
            step = self.direction(system, point, self.per_pair(sigma * chi), affine)
            # a settled block does not move (its direction, on an identity system, means nothing): a zero step, which
            # lowers nothing and so passes the decrease test
            length = self.longest(point, step, settled)
            if not np.all(self.decreases(point, step, length, chi)):
                step = self.direction(system, point, self.per_pair(SAFE_CENTRING * chi))
                length = self.armijo(point, step, chi, settled)
            self.previous = point if self.previous is None or not settled.any() else self.keep(settled, point)
            self.point, self.length = self.advance(point, step, length), float(length.max())
            self.history.append(self.objective(self.point.theta))
            self.pending = True
            if self.progress:
                self.progress("interior iteration", self.iterations, moving_blocks=int(np.count_nonzero(~settled)),
                              complementarity=self.estimate(self.point, self.history[-1]), step=self.length,
                              objective=self.history[-1])
            if self.operator is not None:
                self.cross_blocks(self.history[-1])
            if pause is not None and self.estimate(self.point, self.history[-1]) <= pause:
                return InteriorOutcome(best.coef, best.b, best.bound, self.iterations, False, self.history)
            if not self.near(self.point, self.history[-1]) and self.iterations < max_iter:
                continue
            self.evaluate(best)
            converged = best.bound.relative <= gap_tol
        if best.coef is None:  # no iterate evaluated yet (a limit reached at once): the current one
            self.evaluate(best)
            converged = best.bound.relative <= gap_tol
        return InteriorOutcome(best.coef, best.b, best.bound, self.iterations, converged, self.history)

    def evaluate(self, best: Best):
        """The exact evaluation of the current iterate (:meth:`Best.update`) and the stall test."""
        self.pending = False
        point, previous = self.iterates()
        improved = best.update(self.problem, *self.solution(point), point, previous)
        self.progress.evaluation(self.iterations, best.bound)
        self.idle = 0 if improved else self.idle + 1
        self.stalled = self.idle >= self.patience or self.length < 1e-12
