"""A Newton step on the free pairs: the decomposition method's tail, where pair steps converge slowly, replaced by one
solve on the pairs strictly inside their box (docs/theory.md §6, §9.14).

With P⁺ diagonal (c2 = 0: soft w with α = 0, the estimator's default) the classes interact only through their common
mass m. On the free pairs F_k of class k the optimum has equal slopes, v_F − c1 G_FF Δa_k = b_k 1, and the masses
move together, 1ᵀΔa_k = Δm: with H_k = c1 G_FF, u_k = H_k⁻¹ v_F and w_k = H_k⁻¹ 1, Δa_k = u_k − b_k w_k and
b_k = (1ᵀu_k − Δm)/1ᵀw_k; Δm = 0 with the mass fixed, else the value that meets the bias condition (Σ_k b_k = 0, or
m/(2γ) for soft b). The iterate moves along Δa by the step t ≤ 1 that maximizes the dual on the segment, cut at the
first pair that reaches its bound: the point stays dual feasible and D(μ) never decreases, whatever the accuracy of
the solves (the slope and the curvature along Δa are measured on the exact kernel).
"""
from __future__ import annotations

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve

from .cache import BLOCK_ENTRIES, BlockGram, KernelRows
from .state import MASS_FIXED, MASS_HARD, MASS_SOFT, State

#: Newton steps in a row at most: a step cut at a pair's bound is followed by one on the smaller free set
NEWTON_STEPS = 8


def _class_solves(state: State, rows: KernelRows, v: np.ndarray, free: np.ndarray, classes: np.ndarray, limit: int):
    """Per class: (its free pairs, 1ᵀu, 1ᵀw, u, w), no pair for a class not in ``classes``; None when a class has
    more than ``limit`` free pairs or its system is not positive definite (duplicated samples)."""
    c1, bounds, solves = state.scalars[0], state.bounds, []
    for k in range(bounds.size - 1):
        F = bounds[k] + np.flatnonzero(free[bounds[k]:bounds[k + 1]]) if classes[k] else np.zeros(0, dtype=int)
        if F.size > limit:
            return None
        if F.size == 0:
            solves.append((F, 0.0, 0.0, F * 0.0, F * 0.0))
            continue
        samples, system = state.sample[F], rows.workspace(F.size)
        step = max(1, BLOCK_ENTRIES // F.size)
        for start in range(0, F.size, step):
            system[start:start + step] = rows.entries(samples[start:start + step], samples)
        system *= c1
        try:  # in place: the transpose of the symmetric system is the Fortran-ordered array LAPACK reads
            factor = cho_factor(system.T, overwrite_a=True)
        except LinAlgError:
            return None
        u, w = cho_solve(factor, np.column_stack([v[F], np.ones(F.size)])).T
        solves.append((F, float(u.sum()), float(w.sum()), u, w))
    return solves


def _mass_change(state: State, solves) -> float:
    """Δm: 0 with the mass fixed (or a class without free pairs, whose mass cannot move), else the value meeting
    the bias condition Σ_k b_k = target(m + Δm)."""
    if state.mass_mode == MASS_FIXED or any(F.size == 0 or w_sum <= 0.0 for F, _, w_sum, _, _ in solves):
        return 0.0
    ratio = sum(u_sum / w_sum for _, u_sum, w_sum, _, _ in solves)
    weight = sum(1.0 / w_sum for _, _, w_sum, _, _ in solves)
    if state.mass_mode == MASS_HARD:
        return ratio / weight
    inverse = state.scalars[2]
    return (ratio - state.scalars[3] * inverse) / (inverse + weight)


def newton_steps(state: State, rows: KernelRows, limit: int) -> int:
    """Newton steps from the iterate (Z exact), again on the classes whose step was cut at a bound (at most
    NEWTON_STEPS in all), each class's system of at most ``limit`` free pairs; the number taken."""
    classes = np.ones(state.bounds.size - 1, dtype=bool)
    for taken in range(NEWTON_STEPS):
        cut = newton_step(state, rows, limit, classes)
        if cut is None:
            return taken
        if not cut.any():
            return taken + 1
        classes = cut
    return NEWTON_STEPS


def newton_step(state: State, rows: KernelRows, limit: int, classes: np.ndarray) -> np.ndarray | None:
    """Move the iterate (Z exact) along the Newton direction of the free pairs of ``classes``: each class by its own
    step when the masses stay (the classes are then independent), else all by one. Returns the classes whose step
    was cut at a pair's bound, or None when no step was taken (P⁺ not diagonal, no free pair, a system too large or
    singular, no ascent)."""
    if state.scalars[1] != 0.0:
        return None
    v = state.sign - state.decision()
    free = (state.a > state.lower) & (state.a < state.upper)
    solves = _class_solves(state, rows, v, free, classes, limit) if free.any() else None
    if solves is None:
        return None
    mass = _mass_change(state, solves)
    direction = np.zeros_like(state.a)
    for F, u_sum, w_sum, u, w in solves:
        if F.size:
            step = u - (u_sum - mass) / w_sum * w
            # 1ᵀΔa_k = Δm to round-off, whatever the solves' accuracy (the masses must stay equal)
            direction[F] = step + (mass - step.sum()) / F.size
    moved = np.flatnonzero(direction)
    if moved.size == 0:
        return None
    # per class, the slope and curvature of the dual along the direction, on the exact kernel (ΔZ = (G ΔM)ᵀ)
    change = (BlockGram(rows) @ state.signed_dual(state.z.size, direction)).T
    K, label, d = classes.size, state.label[moved], direction[moved]
    slope = np.bincount(label, weights=v[moved] * d, minlength=K)
    curvature = state.scalars[0] * np.bincount(label, weights=d * change[label, state.sample[moved]], minlength=K)
    room = np.where(d > 0, state.upper[moved] - state.a[moved], state.lower[moved] - state.a[moved]) / d
    reach = np.full(K, np.inf)
    np.minimum.at(reach, label, room)
    if mass == 0.0:  # the classes apart: each its own step
        ascent, step = (slope > 0.0) & (curvature > 0.0), np.zeros(K)
        step[ascent] = np.minimum(np.minimum(1.0, slope[ascent] / curvature[ascent]), reach[ascent])
    else:  # one step, the soft-b penalty's term included
        soft = state.mass_mode == MASS_SOFT
        total_slope = slope.sum() - (state.scalars[3] * state.scalars[2] * mass if soft else 0.0)
        total_curvature = curvature.sum() + (state.scalars[2] * mass * mass if soft else 0.0)
        if not (total_slope > 0.0 and total_curvature > 0.0):
            return None
        step = np.full(K, min(1.0, total_slope / total_curvature, float(reach.min())))
    if not (step > 0.0).any():
        return None
    new = state.a[moved] + step[label] * d
    blocked = room <= step[label]  # on their bound exactly (the masses change by round-off; the bound repairs them)
    new[blocked] = np.where(d[blocked] > 0, state.upper[moved][blocked], state.lower[moved][blocked])
    state.a[moved] = np.clip(new, state.lower[moved], state.upper[moved])
    state.Z += step[:, None] * change
    state.z[:] = state.Z.sum(axis=0)
    state.scalars[3] += step[0] * mass
    cut = (step > 0.0) & (step == reach)
    return np.full(K, cut.any()) if mass != 0.0 else cut
