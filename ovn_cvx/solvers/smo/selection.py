"""The compiled loop: working-set selection and the two kinds of step (docs/theory.md §9.14).

* Within class k (libsvm's pair step, second-order selection of Fan, Chen & Lin 2005): i raises a_i with the largest
  slope v_i, j lowers a_j chosen by the gain (v_i − v_j)²/η_ij, η_ij = P⁺_kk (κ_ii + κ_jj − 2κ_ij); the step keeps the
  class mass.
* The mass step moves every class's mass together (each class's best pair to raise, or to lower): it is needed when
  the classes' bias intervals [max v over pairs that can rise, min v over pairs that can fall] cannot be shifted to
  satisfy the bias condition Σ_k b_k = 0 (hard b) or Σ_k b_k = m/(2γ) (soft b).
* The move with the largest violation is taken; the loop ends when none exceeds ``tol`` (on the active pairs).

A step costs O(N): one or two kernel rows (K for the mass step) added to Z on the active samples; with P⁺ diagonal
(soft w, α = 0) only the moved class is scanned again, else every class.
"""
from __future__ import annotations

import numpy as np
from ..._numba import compiled

from .cache import FULL, PRECOMPUTED, compute, lookup
from .shrinking import shrink
from .state import MASS_FIXED, MASS_SOFT

#: the loop's exits: converged on the active pairs, step budget spent, a kernel row wanted from Python, no move
CONVERGED, BUDGET, NEED_ROW, STALLED = 0, 1, 2, 3
#: what a class scan adds to Z_k first: nothing, step·(κ_i − κ_j), step·κ_i
NONE, PAIR, ONE = 0, 1, 2
#: the curvature of a step along which the kernel is flat (duplicated samples), as libsvm's
TAU = 1e-12


@compiled()
def _row(i, kr, st, k):
    """(found, sample i's kernel row) for a step in class k (k = K: a mass step, or a pair step when the classes are
    not separate problems). A row is computed only at the samples the step can read — class k's active pairs', or
    (k = K) every active sample —, which the shrinking only narrows until the pairs are brought back
    (``counters[5]`` counts those times): a cached row serves while that count and its scope are the same."""
    kind, source, params, rows, slot_of, owner, stamp, clock, scope, partial = kr
    if kind == PRECOMPUTED:  # rows is the Gram matrix
        return True, rows[i]
    sample, order, bounds, n_active, active_rows, n_rows, counters = st[0], st[6], st[5], st[7], st[8], st[9], st[18]
    K = bounds.shape[0] - 1
    want = counters[5] * (K + 1) + k if partial else FULL
    slot, fresh = lookup(i, want, kind, rows, slot_of, owner, stamp, clock, scope)
    if slot < 0:
        return False, rows[0]
    if fresh:
        if not partial:
            targets = np.arange(rows.shape[1])
        elif k < K:
            targets = sample[order[bounds[k]:bounds[k] + n_active[k]]]
        else:
            targets = active_rows[:n_rows[0]]
        compute(i, slot, kind, source, params, rows, targets)
    return True, rows[slot]


@compiled()
def _scan(st, k, update, step, row_i, row_j):
    """Class k's largest slope over the active pairs that can rise and smallest over those that can fall; first, at
    each pair's sample, Z_k += step·(κ_i − κ_j) (update PAIR) or step·κ_i (update ONE)."""
    sample, sign, lower, upper, a, bounds, order, n_active = st[0], st[1], st[2], st[3], st[4], st[5], st[6], st[7]
    Zk, z, c1, c2 = st[10][k], st[11], st[13][0], st[13][1]
    best_up, best_low, i_up, i_low = -np.inf, np.inf, -1, -1
    for t in range(bounds[k], bounds[k] + n_active[k]):
        p = order[t]
        s = sample[p]
        if update == PAIR:
            Zk[s] += step * (row_i[s] - row_j[s])
        elif update == ONE:
            Zk[s] += step * row_i[s]
        v = sign[p] - c1 * Zk[s] - c2 * z[s] if c2 != 0.0 else sign[p] - c1 * Zk[s]
        if v > best_up and a[p] < upper[p]:
            best_up, i_up = v, p
        if v < best_low and a[p] > lower[p]:
            best_low, i_low = v, p
    st[14][k], st[15][k], st[16][k], st[17][k] = best_up, i_up, best_low, i_low


@compiled()
def scan_all(st):
    for k in range(st[14].shape[0]):
        _scan(st, k, NONE, 0.0, st[11], st[11])


@compiled()
def _apply(st, k, update, step, row_i, row_j):
    """Z_k += step·(κ_i − κ_j) (PAIR) or step·κ_i (ONE). With P⁺ diagonal (c2 = 0) a class's slopes read only its
    own column of Z: it is updated at the class's active pairs alone and the class rescanned in the same pass;
    otherwise at every active sample, with z (the caller rescans every class)."""
    if st[13][1] == 0.0:
        _scan(st, k, update, step, row_i, row_j)
        return
    Zk, z, active_rows, n_rows = st[10][k], st[11], st[8], st[9]
    for t in range(n_rows[0]):
        r = active_rows[t]
        d = step * (row_i[r] - row_j[r]) if update == PAIR else step * row_i[r]
        Zk[r] += d
        z[r] += d


@compiled()
def class_step(st, kr, diagonal, k, separable):
    """The pair step in class k (``separable``: the classes are separate problems, the step reads class k's
    samples alone); returns −1 when done, else the sample whose kernel row is missing."""
    sample, a, lower, upper, bounds, order, n_active, scalars = st[0], st[4], st[2], st[3], st[5], st[6], st[7], st[13]
    i = st[15][k]
    si = sample[i]
    scope = k if separable else bounds.shape[0] - 1
    ok, row_i = _row(si, kr, st, scope)
    if not ok:
        return si
    sign, Zk, z, c1, c2 = st[1], st[10][k], st[11], scalars[0], scalars[1]
    v_i = sign[i] - c1 * Zk[si] - c2 * z[si]
    curvature = c1 + c2  # P⁺_kk
    # the gain gap²/η compared as gap²·η_j > gain_j·η without a division per pair
    j, eta_j, gap_j, diagonal_i = -1, 1.0, 0.0, diagonal[si]
    for t in range(bounds[k], bounds[k] + n_active[k]):
        q = order[t]
        if a[q] > lower[q]:
            sq = sample[q]
            gap = v_i - (sign[q] - c1 * Zk[sq] - c2 * z[sq]) if c2 != 0.0 else v_i - (sign[q] - c1 * Zk[sq])
            if gap > 0.0:
                eta = curvature * (diagonal_i + diagonal[sq] - 2.0 * row_i[sq])
                if eta <= TAU:
                    eta = TAU
                if gap * gap * eta_j > gap_j * gap_j * eta:
                    j, eta_j, gap_j = q, eta, gap
    if j < 0:
        return -2
    ok, row_j = _row(sample[j], kr, st, scope)
    if not ok:
        return sample[j]
    room_i, room_j = upper[i] - a[i], a[j] - lower[j]
    step = min(gap_j / eta_j, room_i, room_j)
    a[i] = upper[i] if step == room_i else a[i] + step
    a[j] = lower[j] if step == room_j else a[j] - step
    _apply(st, k, PAIR, step, row_i, row_j)
    return -1


@compiled()
def mass_target(st, mass_mode):
    """The value Σ_k b_k must take: 0 (hard b) or m/(2γ) (soft b)."""
    scalars = st[13]
    return scalars[3] * scalars[2] if mass_mode == MASS_SOFT else 0.0


@compiled()
def mass_step(st, kr, diagonal, mass_mode, direction, violation):
    """Every class's mass up (direction +1, each class's best pair to raise) or down (−1); −1 when done, else the
    sample whose kernel row is missing."""
    sample, a, lower, upper, pinv, scalars = st[0], st[4], st[2], st[3], st[12], st[13]
    chosen = st[15] if direction > 0 else st[17]
    K = chosen.shape[0]
    for k in range(K):  # all K rows cached at once (the cache holds at least K + 2)
        ok, _ = _row(sample[chosen[k]], kr, st, K)
        if not ok:
            return sample[chosen[k]]
    curvature = scalars[2] if mass_mode == MASS_SOFT else 0.0
    room = np.inf
    for k in range(K):
        p = chosen[k]
        _, row_k = _row(sample[p], kr, st, K)
        for other in range(K):
            curvature += pinv[k, other] * row_k[sample[chosen[other]]]
        room = min(room, upper[p] - a[p] if direction > 0 else a[p] - lower[p])
    step = min(violation / curvature, room) if curvature > TAU else room
    for k in range(K):
        p = chosen[k]
        edge = upper[p] - a[p] if direction > 0 else a[p] - lower[p]
        if step == edge:
            a[p] = upper[p] if direction > 0 else lower[p]
        else:
            a[p] += direction * step
        _, row_k = _row(sample[p], kr, st, K)
        _apply(st, k, ONE, direction * step, row_k, row_k)
    scalars[3] += direction * step
    return -1


@compiled()
def largest_violation(st, mass_mode):
    """The largest violation and its move: a class k (its pair step), K (every mass up) or K + 1 (down)."""
    up_value, low_value = st[14], st[16]
    K = up_value.shape[0]
    best, move = -np.inf, -1
    for k in range(K):
        if up_value[k] - low_value[k] > best:
            best, move = up_value[k] - low_value[k], k
    if mass_mode != MASS_FIXED:
        target = mass_target(st, mass_mode)
        if (up_value.sum() - target) / K > best:
            best, move = (up_value.sum() - target) / K, K
        if (target - low_value.sum()) / K > best:
            best, move = (target - low_value.sum()) / K, K + 1
    return best, move


@compiled()
def run(st, kr, diagonal, mass_mode, tol, max_steps, shrink_every):
    """Steps until no violation exceeds ``tol`` on the active pairs, or ``max_steps`` steps in all (counters[0]);
    shrinking every ``shrink_every`` steps (0: never). Returns the exit code; a wanted row is in counters[2]."""
    up_value, low_value, counters, scalars = st[14], st[16], st[18], st[13]
    K = up_value.shape[0]
    # fixed masses and P⁺ diagonal (soft w, α = 0, free biases): the classes share nothing, K separate problems
    separable = mass_mode == MASS_FIXED and scalars[1] == 0.0
    scan_all(st)
    while True:
        if shrink_every > 0 and counters[1] >= shrink_every:
            shrink(st)
            counters[1] = 0
            scan_all(st)
        best, move = largest_violation(st, mass_mode)
        if best <= tol:
            return CONVERGED
        if counters[0] >= max_steps:
            return BUDGET
        current = counters[4]
        if separable and current >= 0 and up_value[current] - low_value[current] > tol:
            move = current  # a separate problem is solved before the next: the row cache serves one working set
        if move < K:
            need = class_step(st, kr, diagonal, move, separable)
        else:
            need = mass_step(st, kr, diagonal, mass_mode, 1 if move == K else -1, best * K)
        if need == -2:
            return STALLED
        if need >= 0:
            counters[2] = need
            return NEED_ROW
        counters[0] += 1
        counters[1] += 1
        counters[4] = move
        if move >= K:
            counters[3] += 1
        if scalars[1] != 0.0:  # else _apply rescanned the moved classes
            scan_all(st)
