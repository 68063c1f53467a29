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

from ...duality import GapBound, gap_bound, project_hard_constraints
from ...objective import objective
from ...problem import Problem
from .common import State, state_objective

#: fraction of the way to the boundary of the positive orthant a step may go
TO_BOUNDARY = 0.995
#: iterations without a better bound after which the method has stalled (round-off floor reached)
PATIENCE = 4


@dataclass(frozen=True)
class Point:
    """One interior-point iterate: θ as a stepper state (residuals r = 1 − a, R, b) and the four positive vectors."""

    theta: State
    xi: np.ndarray
    s: np.ndarray
    u: np.ndarray
    nu: np.ndarray

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


@dataclass
class Best:
    """The best primal point and the best dual value seen: the bound min F − max D holds whichever iterate
    produced each."""

    coef: np.ndarray | None = None
    b: np.ndarray | None = None
    primal: float = np.inf
    dual: float = -np.inf

    @property
    def bound(self) -> GapBound:
        return GapBound(primal=self.primal, dual=self.dual)

    def update(self, problem: Problem, stepper, point: Point) -> bool:
        """Evaluate the iterate (exact objective, proven dual value); True when the bound improved."""
        before = self.bound.absolute
        coef, b = project_hard_constraints(problem, *stepper.solution(point.theta))
        value = objective(problem, coef, b)
        if value < self.primal:
            self.coef, self.b, self.primal = coef, b, value
        dual = gap_bound(problem, coef, b, point.u, primal=value).dual
        self.dual = max(self.dual, dual)
        return self.bound.absolute < before


@dataclass
class InteriorOutcome:
    coef: np.ndarray | None
    b: np.ndarray | None
    bound: GapBound
    iterations: int
    converged: bool
    history: list


def _max_step(x: np.ndarray, dx: np.ndarray) -> float:
    """The largest t ≤ 1 with x + t dx ≥ 0."""
    falling = dx < 0
    return min(1.0, float(np.min(-x[falling] / dx[falling], initial=np.inf)))


class InteriorPoint:
    """Mehrotra's predictor–corrector on the OvN QP over a stepper's structured solves (docs/theory.md §9.8)."""

    def __init__(self, problem: Problem, stepper, tol: float = 1e-9):
        """``tol`` sets only when the exact evaluation starts (:meth:`near`); :meth:`run` says when to stop."""
        self.problem, self.stepper, self.tol = problem, stepper, tol
        self.c = problem.cost
        self.point, self.best, self.history = None, None, []
        self.iterations, self.idle, self.stalled = 0, 0, False

    def start(self) -> Point:
        """θ = 0, ξ = 2, s = 1, u = ν = c/2: the slack equations hold exactly, no tuning (docs/theory.md §9.8)."""
        n = self.c.size
        return Point(self.stepper.initial(), np.full(n, 2.0), np.ones(n), self.c / 2.0, self.c / 2.0)

    @staticmethod
    def weights(point: Point) -> np.ndarray:
        """D_p = d1 d2/(d1 + d2) with d1 = u/s, d2 = ν/ξ."""
        return 1.0 / (point.s / point.u + point.xi / point.nu)

    def direction(self, system, point: Point, weight: np.ndarray, target: float,
                  affine: Direction | None = None) -> Direction:
        """The Newton direction towards s∘u = ξ∘ν = ``target`` (0: the affine predictor), with Mehrotra's
        second-order correction when the ``affine`` direction is given."""
        p, c = point, self.c
        r_xi = c - p.u - p.nu
        r_s = p.xi - p.theta.r - p.s
        r_su = p.s * p.u - target
        r_xn = p.xi * p.nu - target
        if affine is not None:
            r_su += affine.s * affine.u
            r_xn += affine.xi * affine.nu
        t = r_xi + r_xn / p.xi
        v = t * weight * p.xi / p.nu - weight * (r_s + r_su / p.u)
        theta = system.fit(1.0 - p.theta.r + (p.u + v) / weight)
        da = p.theta.r - theta.r  # J Δθ
        du = v - weight * da
        dxi = (-r_s - da - r_su / p.u - t * p.s / p.u) * weight * p.xi / p.nu
        ds = (-r_su - p.s * du) / p.u
        dnu = (-r_xn - p.nu * dxi) / p.xi
        return Direction(theta, dxi, ds, du, dnu)

    @staticmethod
    def step_length(point: Point, d: Direction) -> float:
        """The longest step ≤ 1 that keeps s, ξ, u and ν nonnegative (one pass over the four)."""
        return _max_step(np.concatenate([point.s, point.xi, point.u, point.nu]),
                         np.concatenate([d.s, d.xi, d.u, d.nu]))

    def centring(self, point: Point, affine: Direction) -> float:
        """Mehrotra's σ = (μ_aff/μ)³ from the barrier after the longest affine step."""
        t = self.step_length(point, affine)
        moved = Point(point.theta, point.xi + t * affine.xi, point.s + t * affine.s, point.u + t * affine.u,
                      point.nu + t * affine.nu)
        return (moved.barrier / point.barrier) ** 3

    def advance(self, point: Point, d: Direction) -> tuple[Point, float]:
        t = min(1.0, TO_BOUNDARY * self.step_length(point, d))
        theta = d.theta if t == 1.0 else self.stepper.relax(d.theta, point.theta, t)
        return replace(point, theta=theta, xi=point.xi + t * d.xi, s=point.s + t * d.s, u=point.u + t * d.u,
                       nu=point.nu + t * d.nu), t

    def near(self, point: Point, value: float) -> bool:
        """Whether the iterate is worth the exact evaluation (an O(N·d) pass and the dual value): once the
        complementarity s·u + ξ·ν, the duality gap of a feasible iterate, is within 1e3·tol of the objective.
        The proven bound decides; this only saves work."""
        return 2 * point.s.size * point.barrier <= 1e3 * self.tol * max(1.0, abs(value))

    def run(self, max_iter: int, tol: float) -> InteriorOutcome:
        """Iterate until the proven relative bound is ≤ ``tol``, the bound stops improving (round-off), or
        ``max_iter`` iterations in all. Resumable: a second call with a smaller ``tol`` continues the same run."""
        if self.point is None:
            self.point, self.best = self.start(), Best()
            self.best.update(self.problem, self.stepper, self.point)
            self.history = [state_objective(self.problem, self.point.theta)]
        best, converged = self.best, self.best.bound.relative <= tol
        while not converged and self.iterations < max_iter and not self.stalled:
            self.iterations += 1
            point, weight = self.point, self.weights(self.point)
            system = self.stepper.system(weight)
            affine = self.direction(system, point, weight, 0.0)
            sigma = self.centring(point, affine)
            step = self.direction(system, point, weight, sigma * point.barrier, affine)
            self.point, length = self.advance(point, step)
            self.history.append(state_objective(self.problem, self.point.theta))
            if not self.near(self.point, self.history[-1]) and self.iterations < max_iter:
                continue
            self.idle = 0 if best.update(self.problem, self.stepper, self.point) else self.idle + 1
            converged = best.bound.relative <= tol
            self.stalled = self.idle >= PATIENCE or length < 1e-12
        return InteriorOutcome(best.coef, best.b, best.bound, self.iterations, converged, self.history)
