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


def _factor(rows: KernelRows, c1: float, samples: np.ndarray):
    """The Cholesky factor of c1 G on ``samples``, formed by blocks in :meth:`~.cache.KernelRows.workspace` (within
    the cache's budget); None when it is not positive definite (duplicated samples)."""
    system, step = rows.workspace(samples.size), max(1, BLOCK_ENTRIES // samples.size)
    for start in range(0, samples.size, step):
        system[start:start + step] = rows.entries(samples[start:start + step], samples)
    system *= c1
    try:  # in place: the transpose of the symmetric system is the Fortran-ordered array LAPACK reads
        return cho_factor(system.T, overwrite_a=True)
    except LinAlgError:
        return None


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
        factor = _factor(rows, c1, state.sample[F])
        if factor is None:
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
    NEWTON_STEPS in a row), each class's system of at most ``limit`` free pairs; the number taken (with the mass
    fixed, the classes' steps summed: each class steps alone, :func:`class_steps`)."""
    if state.scalars[1] != 0.0:
        return 0
    if state.mass_mode == MASS_FIXED:
        return sum(class_steps(state, rows, k, limit) for k in range(state.bounds.size - 1))
    classes = np.ones(state.bounds.size - 1, dtype=bool)
    for taken in range(NEWTON_STEPS):
        cut = newton_step(state, rows, limit, classes)
        if cut is None:
            return taken
        if not cut.any():
            return taken + 1
        classes = cut
    return NEWTON_STEPS


def class_steps(state: State, rows: KernelRows, k: int, limit: int) -> int:
    """Newton steps on class k alone (the mass fixed, P⁺ diagonal: the classes are independent), from Z exact: one
    factorization of its free pairs' system; after a step cut where pairs reach their bounds, the next one solves
    the system of the other pairs by bordering the same factor (the cut pairs held); the slopes and curvatures on
    the exact kernel's block of the free pairs, and Z[k] moved once, by the exact product of the steps' sum. The
    number of steps taken."""
    lo, hi = state.bounds[k], state.bounds[k + 1]
    F = lo + np.flatnonzero((state.a[lo:hi] > state.lower[lo:hi]) & (state.a[lo:hi] < state.upper[lo:hi]))
    if F.size == 0 or F.size > limit:
        return 0
    c1, samples = state.scalars[0], state.sample[F]
    factor = _factor(rows, c1, samples)
    if factor is None:
        return 0
    block = BlockGram(rows)[np.ix_(samples, samples)]
    v = state.sign[F] - c1 * state.Z[k, samples]  # the slopes (c2 = 0)
    held, total, taken = np.zeros(F.size, dtype=bool), np.zeros(F.size), 0
    while taken < NEWTON_STEPS:
        d = _bordered_direction(factor, v, held)
        g = c1 * (block @ d[:, None])[:, 0]  # H d on the exact kernel
        slope, curvature = float(v @ d), float(d @ g)
        if not (slope > 0.0 and curvature > 0.0):
            break
        moving = d != 0.0
        a, lower, upper = state.a[F], state.lower[F], state.upper[F]
        room = np.full(F.size, np.inf)
        room[moving] = np.where(d[moving] > 0, upper[moving] - a[moving], lower[moving] - a[moving]) / d[moving]
        reach = float(room.min())
        t = min(1.0, slope / curvature, reach)
        new = a + t * d
        blocked = moving & (room <= t)  # on their bound exactly (the mass changes by round-off; the bound repairs it)
        new[blocked] = np.where(d[blocked] > 0, upper[blocked], lower[blocked])
        new = np.clip(new, lower, upper)
        total += new - a
        state.a[F] = new
        v -= t * g
        taken += 1
        if t < reach or not blocked.any():
            break
        held |= blocked
    if taken:
        state.Z[k] += (BlockGram(rows)[np.ix_(np.arange(state.z.size), samples)] @ total[:, None])[:, 0]
        state.z[:] = state.Z.sum(axis=0)
    return taken


def _bordered_direction(factor, v: np.ndarray, held: np.ndarray) -> np.ndarray:
    """The Newton direction of the pairs not ``held`` (0 on the held ones), its sum 0: with H the factored system,
    u and w solve H_FF u = v_F and H_FF w = 1 on the free set F, by bordering H's factor — x = H⁻¹(r − E λ) with E
    the held pairs' columns and λ such that x vanishes on them — and d = u − (1ᵀu/1ᵀw) w."""
    free = ~held
    rhs = np.column_stack([np.where(free, v, 0.0), free.astype(float)])
    x = cho_solve(factor, rhs)
    if held.any():
        columns = np.zeros((v.size, int(held.sum())))
        columns[np.flatnonzero(held), np.arange(columns.shape[1])] = 1.0
        inverse = cho_solve(factor, columns)  # H⁻¹ E
        x -= inverse @ np.linalg.solve(inverse[held], x[held])
        x[held] = 0.0
    u, w = x.T
    w_sum = w.sum()
    if not w_sum > 0.0:
        return np.zeros_like(v)
    d = u - u.sum() / w_sum * w
    d[free] -= d.sum() / free.sum()  # 1ᵀd = 0 to round-off, whatever the solves' accuracy (the mass stays)
    return d


def newton_step(state: State, rows: KernelRows, limit: int, classes: np.ndarray) -> np.ndarray | None:
    """Move the iterate (Z exact) along the Newton direction of the free pairs of ``classes``: each class by its own
    step when the masses stay (the classes are then independent), else all by one. Returns the classes whose step
    was cut at a pair's bound, or None when no step was taken (no free pair, a system too large or singular, no
    ascent)."""
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
