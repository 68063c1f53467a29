"""Compiled inner loop of the linear dual coordinate descent (numba, cached on disk; docs/theory.md §9.14).

The patterns come either dense (``Xd``, N×M, C order) or sparse (CSR ``data, indices, indptr`` with sorted indices,
``Xd`` then of shape (0, 0)): every row operation reads whichever is given. The dual state: the signed pair variables
a_p = y_p μ_p in [lower_p, upper_p], V = XᵀM (M×K, feature-major: a sample's K pairs read and write the same cache
lines of V) and u = Σ_k V[:, k] (M×1), so that w_k = c1 V[:, k] + c2 u (P⁺ = c1 I + c2 11ᵀ), and the class masses
m_k = Σ_{p ∈ k} a_p.
"""
from __future__ import annotations

import numpy as np
from ..._numba import compiled


@compiled()
def _dot(Xd, data, indices, indptr, i, V, k):
    """x_iᵀ V[:, k]."""
    s = 0.0
    if Xd.shape[0] > 0:
        for f in range(Xd.shape[1]):
            s += Xd[i, f] * V[f, k]
    else:
        for t in range(indptr[i], indptr[i + 1]):
            s += data[t] * V[indices[t], k]
    return s


@compiled()
def _axpy(Xd, data, indices, indptr, i, scale, V, k):
    """V[:, k] += scale · x_i."""
    if Xd.shape[0] > 0:
        for f in range(Xd.shape[1]):
            V[f, k] += scale * Xd[i, f]
    else:
        for t in range(indptr[i], indptr[i + 1]):
            V[indices[t], k] += scale * data[t]


@compiled()
def row_norms(Xd, data, indices, indptr, n):
    """|x_i|² of every row."""
    out = np.empty(n)
    for i in range(n):
        s = 0.0
        if Xd.shape[0] > 0:
            for f in range(Xd.shape[1]):
                s += Xd[i, f] * Xd[i, f]
        else:
            for t in range(indptr[i], indptr[i + 1]):
                s += data[t] * data[t]
        out[i] = s
    return out


@compiled()
def _common_mass(masses, bias, rho, inv2g, mass_free):
    """The m that maximizes m Σ_k b_k − m²/(4γ) − (ρ/2) Σ_k (m_k − m)² (0 when the mass is fixed)."""
    if not mass_free:
        return 0.0
    return (bias.sum() + rho * masses.sum()) / (inv2g + rho * masses.size)


@compiled()
def coordinate_descent(Xd, data, indices, indptr, sq, sample, label, sign, lower, upper, a, V, u, c1, c2, bias,
                       masses, rho, inv2g, mass_free, order, pairs_of, shrunk, tol, max_sweeps, seed):
    """Coordinate ascent on the augmented Lagrangian of the dual for fixed multipliers b (the biases),

        L(a) = Σ_p y_p a_p − ½ tr(P⁺ VᵀV) − Σ_k b_k (m_k − m) − (ρ/2) Σ_k (m_k − m)² [− m²/(4γ)],

    with m at its maximizer after every step: ∂L/∂a_p = v_p − b_k − ρ (m_k − m), v_p = y_p − x_iᵀ w_k, curvature
    P⁺_kk |x_i|² + ρ. liblinear's sweeps (Hsieh et al. 2008): each coordinate to its box-clipped optimum, shrinking
    of coordinates at a bound whose gradient points outward beyond the last sweep's extremes, until the projected
    gradients span at most ``tol`` over all coordinates. The samples are visited in a random order (``order``,
    reordered in place), each sample's pairs (``pairs_of``: CSR of the pairs by sample) one after another, so that
    they share the cache lines of x_i and of V's rows; ``shrunk`` marks the pairs set aside. Returns (sweeps, the span
    of the projected gradients at the end)."""
    h = c1 + c2
    n = sample.size
    n_shrunk = 0
    for p in range(n):
        shrunk[p] = False
    high_old, low_old = np.inf, -np.inf
    span = np.inf
    mass = _common_mass(masses, bias, rho, inv2g, mass_free)
    np.random.seed(seed)
    sweeps = 0
    m = order.size
    while sweeps < max_sweeps and n > 0:
        sweeps += 1
        high, low = -np.inf, np.inf
        for s in range(m):  # a random order of the samples
            j = s + np.random.randint(m - s)
            order[s], order[j] = order[j], order[s]
        for s in range(m):
            i = order[s]
            for t in range(pairs_of[0][i], pairs_of[0][i + 1]):
                p = pairs_of[1][t]
                if shrunk[p]:
                    continue
                k = label[p]
                w_dot = c1 * _dot(Xd, data, indices, indptr, i, V, k)
                if c2 != 0.0:
                    w_dot += c2 * _dot(Xd, data, indices, indptr, i, u, 0)
                g = sign[p] - w_dot - bias[k] - rho * (masses[k] - mass)
                projected = g
                if a[p] <= lower[p]:
                    if g < low_old:  # wants to fall, cannot, and more than anything did last sweep: shrink
                        shrunk[p] = True
                        n_shrunk += 1
                        continue
                    projected = max(g, 0.0)
                elif a[p] >= upper[p]:
                    if g > high_old:
                        shrunk[p] = True
                        n_shrunk += 1
                        continue
                    projected = min(g, 0.0)
                high = max(high, projected)
                low = min(low, projected)
                if projected != 0.0:
                    new = min(max(a[p] + g / (h * sq[i] + rho), lower[p]), upper[p])
                    step = new - a[p]
                    if step != 0.0:
                        a[p] = new
                        _axpy(Xd, data, indices, indptr, i, step, V, k)
                        if c2 != 0.0:
                            _axpy(Xd, data, indices, indptr, i, step, u, 0)
                        masses[k] += step
                        mass = _common_mass(masses, bias, rho, inv2g, mass_free)
        span = high - low
        if span <= tol:
            if n_shrunk == 0:
                break
            for p in range(n):  # converged on the active coordinates: look at all of them again
                shrunk[p] = False
            n_shrunk = 0
            high_old, low_old = np.inf, -np.inf
            continue
        high_old = high if high > 0.0 else np.inf
        low_old = low if low < 0.0 else -np.inf
    return sweeps, span
