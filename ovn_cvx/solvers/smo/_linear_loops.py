"""Compiled inner loop of the linear dual decomposition (numba, cached on disk): the working-set subproblem.

The working set S holds q pairs with their Gram block G_S = X_S X_Sᵀ (rows x_{i_p}), classes, signed variables
a_p = y_p μ_p in [lower_p, upper_p] and values v_p = y_p − x_{i_p}ᵀ w_{k_p}. A change t of a_q moves w_l (l = k_q) and
every other w through P⁺ = c1 I + c2 11ᵀ, so v_r changes by −t (c1 [k_r = l] + c2) G_rq: every step updates the values
of S in O(q), as libsvm's SMO does with kernel rows.
"""
from __future__ import annotations

import numpy as np
from numba import njit

#: curvatures below this fraction of their scale are zero (two equal rows, or a mass step that P⁺ annihilates): the
#: step then goes to the box
FLAT = 1e-12


@njit(cache=True)
def extremes(label, a, lower, upper, v, K):
    """Per class, the pair that can rise with the largest v and the one that can fall with the smallest (−1 where
    there is none)."""
    rise = np.full(K, -1)
    fall = np.full(K, -1)
    for r in range(v.size):
        k = label[r]
        if a[r] < upper[r] and (rise[k] < 0 or v[r] > v[rise[k]]):
            rise[k] = r
        if a[r] > lower[r] and (fall[k] < 0 or v[r] < v[fall[k]]):
            fall[k] = r
    return rise, fall


@njit(cache=True)
def _pair_step(G, label, a, lower, upper, v, p, q, c1, c2):
    """Raise a_p and lower a_q (one class) by the t that maximizes D in the box; values of S updated."""
    h = c1 + c2
    curvature = h * (G[p, p] + G[q, q] - 2.0 * G[p, q])
    t = min(upper[p] - a[p], a[q] - lower[q])
    if curvature > FLAT * abs(h) * (G[p, p] + G[q, q]):
        t = min(t, (v[p] - v[q]) / curvature)
    if t <= 0.0:
        return False
    a[p] += t
    a[q] -= t
    k = label[p]
    for r in range(v.size):
        v[r] -= t * ((c1 if label[r] == k else 0.0) + c2) * (G[r, p] - G[r, q])
    return True


@njit(cache=True)
def _mass_step(G, label, a, lower, upper, v, chosen, direction, gain, c1, c2, inv2g):
    """Move one pair per class (``chosen``) by the same δ, every class mass with it: dD/dδ = ``gain``, curvature
    Σ_kl (c1 [k = l] + c2) G_{p_k p_l} + 1/(2γ). Returns δ."""
    K = chosen.size
    curvature = inv2g
    scale = inv2g
    room = np.inf
    for k in range(K):
        p = chosen[k]
        room = min(room, upper[p] - a[p] if direction > 0 else a[p] - lower[p])
        for m in range(K):
            entry = G[p, chosen[m]]
            curvature += ((c1 if k == m else 0.0) + c2) * entry
            scale += (abs(c1) if k == m else 0.0) * abs(entry) + abs(c2 * entry)
    delta = direction * room
    if curvature > FLAT * scale:
        delta = gain / curvature
        delta = min(delta, room) if direction > 0 else max(delta, -room)
    if delta * direction <= 0.0:
        return 0.0
    for k in range(K):
        a[chosen[k]] += delta
    for r in range(v.size):
        change = 0.0
        for k in range(K):
            change += ((c1 if label[r] == k else 0.0) + c2) * G[r, chosen[k]]
        v[r] -= delta * change
    return delta


@njit(cache=True)
def subproblem(G, label, a, lower, upper, v, K, c1, c2, mass, inv2g, mass_free, tol, max_steps):
    """SMO on the working set: the largest violation — a class's rising pair above its falling one, or the common
    mass (Σ_k v_rise − m/(2γ) > 0, Σ_k v_fall − m/(2γ) < 0) — stepped until none exceeds ``tol``. Returns (steps,
    the class mass, the largest violation left)."""
    steps = 0
    violation = 0.0
    while steps < max_steps:
        rise, fall = extremes(label, a, lower, upper, v, K)
        best, kind = tol, -1
        for k in range(K):
            if rise[k] >= 0 and fall[k] >= 0 and v[rise[k]] - v[fall[k]] > best:
                best, kind = v[rise[k]] - v[fall[k]], k
        up = down = 0.0
        if mass_free:
            if (rise >= 0).all():
                up = -mass * inv2g
                for k in range(K):
                    up += v[rise[k]]
                if up > best:
                    best, kind = up, K
            if (fall >= 0).all():
                down = -mass * inv2g
                for k in range(K):
                    down += v[fall[k]]
                if -down > best:
                    best, kind = -down, K + 1
        violation = best if kind >= 0 else 0.0
        if kind < 0:
            break
        if kind < K:
            moved = _pair_step(G, label, a, lower, upper, v, rise[kind], fall[kind], c1, c2)
        elif kind == K:
            delta = _mass_step(G, label, a, lower, upper, v, rise, 1.0, up, c1, c2, inv2g)
            mass += delta
            moved = delta != 0.0
        else:
            delta = _mass_step(G, label, a, lower, upper, v, fall, -1.0, down, c1, c2, inv2g)
            mass += delta
            moved = delta != 0.0
        if not moved:
            break
        steps += 1
    return steps, mass, violation
