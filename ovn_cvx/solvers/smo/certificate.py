"""The primal point of a dual iterate and its proven bound (docs/theory.md §6, §9.14).

Every iterate is dual feasible (box and equal class masses, repaired to the last bit by
:func:`~ovn_cvx.duality.feasible_dual`), so D(μ) ≤ F*. The primal point is A = M P⁺ with each b_k inside its
class's KKT interval [largest slope of a pair that can rise, smallest of a pair that can fall], the intervals shifted
together to meet the bias condition; F − D(μ) then bounds F − F*. Both are evaluated by the package's evaluators
(:func:`ovn_cvx.objective`, :func:`ovn_cvx.duality.gap_bound`) on the exact kernel, by blocks when the problem does
not hold its Gram matrix (:class:`~.cache.BlockGram`). :func:`estimate` is the same quantity from the loop's own Z:
it only decides when the exact evaluation is worth its cost, and never decides the verdict.
"""
from __future__ import annotations

import numpy as np

from ...duality import GapBound, feasible_dual, gap_bound, project_hard_constraints
from ...objective import objective
from ...problem import Problem
from .cache import BlockGram, KernelRows
from .state import MASS_FIXED, MASS_SOFT, State

#: bisection steps for the common shift of the bias intervals (far below round-off of any bias)
SHIFT_STEPS = 200


def interval_biases(top: np.ndarray, bottom: np.ndarray, target: float | None) -> np.ndarray:
    """b_k in class k's KKT interval [top_k, bottom_k] (the largest slope of a pair that can rise, the smallest of a
    pair that can fall, ±inf where there is none; an empty interval swapped): its middle, or its finite end, all
    shifted by one amount — each clipped to its interval — so that Σ_k b_k = ``target`` (the bias condition: 0 for
    hard b, m/(2γ) for soft b; None where Σ b is free); the remainder, when the intervals cannot reach it (the
    iterate is not optimal), spread evenly."""
    lo, hi = np.minimum(top, bottom), np.maximum(top, bottom)
    middle = np.where(np.isfinite(lo) & np.isfinite(hi), 0.5 * (lo + hi), np.where(np.isfinite(lo), lo, hi))
    if target is None:
        return middle
    # the shift that meets the condition, if one does, is within this: a class unbounded towards it moves the sum
    # one for one, and one bounded on both sides stops moving within its interval's width
    finite = np.isfinite(lo) & np.isfinite(hi)
    reach = abs(target - middle.sum()) + (np.max(hi[finite] - lo[finite]) if finite.any() else 0.0) + 1.0
    left, right = -reach, reach
    for _ in range(SHIFT_STEPS):
        shift = 0.5 * (left + right)
        if np.clip(middle + shift, lo, hi).sum() < target:
            left = shift
        else:
            right = shift
    b = np.clip(middle + 0.5 * (left + right), lo, hi)
    return b + (target - b.sum()) / b.size


def bias(state: State, h: np.ndarray) -> np.ndarray:
    """:func:`interval_biases` of the iterate: the pairs' slopes y_p − h_p bound each class's interval."""
    K = state.bounds.size - 1
    v = state.sign - h
    rise, fall = state.a < state.upper, state.a > state.lower
    label = state.label
    top, bottom = np.full(K, -np.inf), np.full(K, np.inf)
    np.maximum.at(top, label[rise], v[rise])
    np.minimum.at(bottom, label[fall], v[fall])
    if state.mass_mode == MASS_FIXED:
        return interval_biases(top, bottom, None)
    return interval_biases(top, bottom, state.scalars[3] * state.scalars[2] if state.mass_mode == MASS_SOFT else 0.0)


def estimate(problem: Problem, state: State, b: np.ndarray) -> float:
    """(F − D)/max(1, |F|) from the loop's Z (just rebuilt): F = R + hinge + B, D = Σμ − R − m²/(4γ),
    R = ½ Σ_p a_p h_p."""
    h = state.decision()
    label = state.label
    regularizer = 0.5 * float(state.a @ h)
    hinge = float(problem.cost @ np.maximum(0.0, 1.0 - state.sign * (h + b[label])))
    soft = state.mass_mode == MASS_SOFT
    primal = regularizer + hinge + (problem.bias_penalty * b.sum() ** 2 if soft else 0.0)
    dual = float(np.abs(state.a).sum()) - regularizer - (0.5 * state.scalars[3] ** 2 * state.scalars[2] if soft
                                                         else 0.0)
    return (primal - dual) / max(1.0, abs(primal))


def exact_view(problem: Problem, rows: KernelRows) -> Problem:
    """``problem`` itself when it holds its Gram matrix (precomputed, or computed when the problem was validated);
    otherwise a copy whose ``gram`` is evaluated by blocks (:class:`~.cache.BlockGram`), never formed."""
    if problem.is_precomputed or "gram" in problem.__dict__:
        return problem
    view = problem.replace()
    view.__dict__["gram"] = BlockGram(rows)  # overrides the cached property on this copy only
    return view


def certify(problem: Problem, view: Problem, state: State, b: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                                    GapBound, np.ndarray]:
    """(A, b, the proven bound, M): A = M P⁺ and b made exactly feasible, F and D(μ) evaluated exactly; M = Y ∘ μ of
    the dual point behind the bound (a warm start for the next solve). Z must be exact (just rebuilt)."""
    coef, b = project_hard_constraints(problem, state.signed_dual(problem.n_samples) @ problem.coupling_pinv, b)
    mu = feasible_dual(problem, np.abs(state.a))
    # the residuals from Z = (G M)ᵀ, exact after the rebuild: G A = G M P⁺ without another pass over the kernel
    residual = 1.0 - state.sign * (state.decision() + b[problem.pairs.label])
    bound = gap_bound(view, coef, b, mu, primal=objective(view, coef, b, residual=residual))
    pairs = problem.pairs
    M = np.zeros((problem.n_samples, problem.n_classes))
    M[pairs.sample, pairs.label] = pairs.sign * mu
    return coef, b, bound, M
