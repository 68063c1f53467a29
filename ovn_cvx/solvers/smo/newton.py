"""Newton steps on the free pairs: the decomposition method's tail, where pair steps converge slowly, replaced by
solves on the pairs strictly inside their box (docs/theory.md §6, §9.14).

With P⁺ diagonal (c2 = 0: soft w with α = 0, the estimator's default) the classes interact only through their common
mass m. On the free pairs F_k of class k the optimum has equal slopes, v_F − c1 G_FF Δa_k = b_k 1, and the masses
move together, 1ᵀΔa_k = Δm: with H_k = c1 G_FF, u_k = H_k⁻¹ v_F and w_k = H_k⁻¹ 1, Δa_k = u_k − b_k w_k and
b_k = (1ᵀu_k − Δm)/1ᵀw_k; Δm = 0 with the mass fixed, else the value that meets the bias condition (Σ_k b_k = 0, or
m/(2γ) for soft b). The iterate moves along Δa by the step t ≤ 1 that maximizes the dual on the segment, cut at the
first pair that reaches its bound: the point stays dual feasible and D(μ) never decreases, whatever the accuracy of
the solves (the slope and the curvature along Δa are measured on the exact kernel). After a cut the pairs that
reached their bounds are held and the next step solves the system of the others by bordering the same factors.
With the mass fixed each class is a group of its own (its own step length); else all classes step together.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve

from .cache import BLOCK_ENTRIES, BlockGram, KernelRows
from .state import MASS_FIXED, MASS_HARD, MASS_SOFT, State

#: Newton steps of a group in a row at most: a step cut at a pair's bound is followed by one on the smaller free set,
#: which costs two solves with the kept factors and a product with the free pairs' block (*measured*, N = 20 000,
#: SwHb with negatives: 8 steps, each cut by one pair, left the bound at 3.7e-5 and a round of 47 000 pair steps to
#: go; the 9th step was not cut and took it to 6.1e-8: 38.6 s → 25.8 s)
NEWTON_STEPS = 32


@dataclass
class _ClassSystem:
    """Class k's free pairs F (positions in the pair arrays) and what its steps keep: the factor of H = c1 G_FF, the
    exact block G_FF, the slopes v_F, the pairs held at the bound a cut put them on."""

    F: np.ndarray
    factor: tuple
    block: BlockGram
    v: np.ndarray
    held: np.ndarray


def newton_steps(state: State, rows: KernelRows, capacity: int) -> int:
    """Newton steps from the iterate (Z exact), the classes in groups (:func:`group_steps`), each group's systems
    within ``capacity`` doubles; the number of steps taken, summed over the groups."""
    if state.scalars[1] != 0.0:
        return 0
    K = state.bounds.size - 1
    groups = [[k] for k in range(K)] if state.mass_mode == MASS_FIXED else [list(range(K))]
    return sum(group_steps(state, rows, group, capacity) for group in groups)


def group_steps(state: State, rows: KernelRows, group: list[int], capacity: int) -> int:
    """At most NEWTON_STEPS Newton steps of the classes ``group`` together (one step length), from Z exact: each
    class's system factored once (none taken when the systems exceed ``capacity`` doubles or one is not positive
    definite: duplicated samples), the slopes and curvatures on the exact kernel's blocks of the free pairs, a cut
    step followed by one with the cut pairs held, and Z rebuilt once from the moved multipliers (``State.rebuild``:
    the kernel columns of the samples the steps moved). The number of steps taken."""
    systems = _systems(state, rows, group, capacity)
    if systems is None:
        return 0
    c1, taken = state.scalars[0], 0
    while taken < NEWTON_STEPS:
        solves = [(s, *_bordered_solve(s.factor, s.v, s.held)) for s in systems]
        mass = _mass_change(state, [(u.sum(), w.sum()) for _, u, w in solves])
        directions = [_direction(u, w, s.held, mass) for s, u, w in solves]
        products = [c1 * (s.block @ d[:, None])[:, 0] for s, d in zip(systems, directions)]  # H d, exact kernel
        slope = sum(float(s.v @ d) for s, d in zip(systems, directions))
        curvature = sum(float(d @ g) for d, g in zip(directions, products))
        if state.mass_mode == MASS_SOFT:  # the penalty m²/(4γ)'s terms
            slope -= state.scalars[3] * state.scalars[2] * mass
            curvature += state.scalars[2] * mass * mass
        if not (slope > 0.0 and curvature > 0.0):
            break
        rooms = [_room(state, s.F, d) for s, d in zip(systems, directions)]
        reach = min((float(room.min()) for room in rooms if room.size), default=np.inf)
        t = min(1.0, slope / curvature, reach)
        for s, d, g, room in zip(systems, directions, products, rooms):
            a, lower, upper = state.a[s.F], state.lower[s.F], state.upper[s.F]
            new = a + t * d
            blocked = (d != 0.0) & (room <= t)  # on their bound exactly (the masses change by round-off; the bound
            new[blocked] = np.where(d[blocked] > 0, upper[blocked], lower[blocked])  # repairs them)
            new = np.clip(new, lower, upper)
            state.a[s.F] = new
            s.v -= t * g
            s.held |= blocked
        state.scalars[3] += t * mass
        taken += 1
        if t < reach:  # not cut (at t = reach the pair that sets it is blocked)
            break
    if taken:  # the kernel columns of the moved samples, once: the rebuild's record of M keeps the next one off them
        state.rebuild(rows)
    return taken


def _systems(state: State, rows: KernelRows, group: list[int], capacity: int) -> list[_ClassSystem] | None:
    """The group's class systems (classes without a free pair included, with empty F), factored in the cache's
    workspaces; None when there is no free pair, the systems exceed ``capacity`` or one is not positive definite."""
    frees = []
    for k in group:
        lo, hi = state.bounds[k], state.bounds[k + 1]
        frees.append(lo + np.flatnonzero((state.a[lo:hi] > state.lower[lo:hi]) & (state.a[lo:hi] < state.upper[lo:hi])))
    sizes = [F.size for F in frees]
    if not any(sizes) or sum(n * n for n in sizes) > capacity:
        return None
    c1, systems = state.scalars[0], []
    for k, F, space in zip(group, frees, rows.workspaces(sizes)):
        samples = state.sample[F]
        step, columns = max(1, BLOCK_ENTRIES // max(1, F.size)), rows.columns(samples)  # the columns prepared once
        for start in range(0, F.size, step):
            space[start:start + step] = rows.entries(samples[start:start + step], samples, columns=columns)
        space *= c1
        try:  # in place: the transpose of the symmetric system is the Fortran-ordered array LAPACK reads
            factor = cho_factor(space.T, overwrite_a=True) if F.size else None
        except LinAlgError:
            return None
        systems.append(_ClassSystem(F, factor, BlockGram(rows)[np.ix_(samples, samples)],
                                    state.sign[F] - c1 * state.Z[k, samples], np.zeros(F.size, dtype=bool)))
    return systems


def _bordered_solve(factor, v: np.ndarray, held: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(u, w) of the pairs not ``held`` (0 on the held ones): H_FF u = v_F and H_FF w = 1 on the free set F, by
    bordering H's factor — x = H⁻¹(r − E λ) with E the held pairs' columns and λ such that x vanishes on them."""
    if factor is None:  # a class without free pairs
        return np.zeros(0), np.zeros(0)
    free = ~held
    x = cho_solve(factor, np.column_stack([np.where(free, v, 0.0), free.astype(float)]))
    if held.any():
        columns = np.zeros((v.size, int(held.sum())))
        columns[np.flatnonzero(held), np.arange(columns.shape[1])] = 1.0
        inverse = cho_solve(factor, columns)  # H⁻¹ E
        x -= inverse @ np.linalg.solve(inverse[held], x[held])
        x[held] = 0.0
    return x[:, 0], x[:, 1]


def _mass_change(state: State, sums: list[tuple[float, float]]) -> float:
    """Δm from each class's (1ᵀu, 1ᵀw): 0 with the mass fixed or when a class cannot move its mass (1ᵀw ≤ 0: no
    free pair left, its sums are 0), else the value meeting the bias condition Σ_k b_k = target(m + Δm)."""
    if state.mass_mode == MASS_FIXED or any(not w_sum > 0.0 for _, w_sum in sums):
        return 0.0
    ratio = sum(u_sum / w_sum for u_sum, w_sum in sums)
    weight = sum(1.0 / w_sum for _, w_sum in sums)
    if state.mass_mode == MASS_HARD:
        return ratio / weight
    inverse = state.scalars[2]
    return (ratio - state.scalars[3] * inverse) / (inverse + weight)


def _direction(u: np.ndarray, w: np.ndarray, held: np.ndarray, mass: float) -> np.ndarray:
    """Δa = u − b w with b = (1ᵀu − Δm)/1ᵀw, its sum Δm restored to round-off over the pairs not held (the masses
    must stay equal whatever the solves' accuracy); 0 when there is no free pair to move."""
    free = ~held
    w_sum = w.sum()
    if not (free.any() and w_sum > 0.0):
        return np.zeros_like(u)
    d = u - (u.sum() - mass) / w_sum * w
    d[free] += (mass - d.sum()) / free.sum()
    return d


def _room(state: State, F: np.ndarray, d: np.ndarray) -> np.ndarray:
    """The step at which each moving pair of F reaches its bound (∞ for a pair that does not move)."""
    room = np.full(F.size, np.inf)
    moving = d != 0.0
    a = state.a[F][moving]
    room[moving] = np.where(d[moving] > 0, state.upper[F][moving] - a, state.lower[F][moving] - a) / d[moving]
    return room
