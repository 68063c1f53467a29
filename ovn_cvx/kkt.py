"""Solver-independent KKT certificate of an OvN solution (docs/theory.md §6).

Given (W, b) (kernel: (A, b)), the pairs are split by their residual r_p = 1 − y_p f_{k_p}(x_{i_p}):
V = {r_p > δ} gets μ_p = c_p, I = {r_p < −δ} gets μ_p = 0, and the multipliers of the margin pairs
S = {|r_p| ≤ δ} (with ρ for Σ_k w_k = 0 and λ for Σ_k b_k = 0) are recovered by least squares from the
stationarity equations

    Φᵀ M − W P − ρ 1ᵀ = 0    (W-stationarity; ρ only for hard w, where P = I)
    m_k − λ = 0 (hard b),   m_k − 2γ Σ_k b_k = 0 (soft b)     (b-stationarity)

with M_ik = Σ_{p=(i,k)} y_p μ_p, m_k = Σ_{p: k_p=k} y_p μ_p, Φ the features (linear: X; kernel: the
eigen-features L of G = L Lᵀ, with W replaced by Lᵀ A, which gives the same equations as G(AP − M) = 0).
An exact optimum admits multipliers with every residual zero; the certificate reports how far the
given point is from that: stationarity, b-stationarity and the spread of the m_k, the box violation of
the recovered μ, complementarity on the margin pairs, the duality gap F − D(μ) with
D(μ) = Σ_p μ_p − ½ tr(P⁺ Mᵀ G M) [− m²/(4γ) for soft b], and the hard-constraint residuals.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.optimize import lsq_linear
from threadpoolctl import threadpool_limits

from .duality import GapBound, gap_bound
from ._validation import check_instance, check_number
from .objective import constraint_violation, objective, residuals
from .problem import Problem

#: docs/theory.md §10: KKT residuals ≤ 1e-6 relative, hard constraints ≤ 1e-8 absolute
KKT_TOL = 1e-6
CONSTRAINT_TOL = 1e-8
#: candidate bands δ (|r_p| ≤ δ counts as "on the margin"); the certificate keeps the best one, since a
#: solver's margin residuals are only as small as its accuracy (complementarity ≤ δ reports the price)
MARGIN_BANDS = (1e-7, 1e-6, 1e-5, 1e-4)


@dataclass
class KKTCertificate:
    """Recovered multipliers and the (relative) KKT residuals of one solution.

    ``residuals`` maps each measure to its value; ``passed(tol)`` compares the relative KKT measures
    with ``tol`` and the hard-constraint residuals with ``constraint_tol``.

    Parameters
    ----------
    mu : ndarray of shape (n_pairs,)
        The recovered pair multipliers, in the order of ``problem.pairs``.
    class_mass : ndarray of shape (K,)
        The signed class masses Σ_p y_p μ_p of each class (the column sums of M = Y∘μ).
    n_margin : int
        The number of pairs counted as on the margin.
    margin_band : float
        δ, the band of residuals counted as on the margin.
    residuals : dict of str to float, default={}
        Each measure's value: the relative KKT measures of ``KKT_MEASURES`` and the hard-constraint residuals.
    bound : GapBound or None, default=None
        The proven bound F − D(μ̂) of the recovered μ made dual feasible (``residuals["duality_gap"]`` is its
        relative value).

    Examples
    --------
    >>> import numpy as np, ovn_cvx
    >>> from ovn_cvx.kkt import kkt_certificate
    >>> X = np.random.default_rng(0).normal(size=(30, 2))
    >>> problem = ovn_cvx.Problem.from_labels(X, np.arange(30) % 3)
    >>> result = ovn_cvx.solve(problem, method="mm")
    >>> certificate = kkt_certificate(problem, result.coef, result.b)
    >>> certificate.passed(), certificate.mu.shape
    (True, (30,))
    """

    mu: np.ndarray
    class_mass: np.ndarray
    n_margin: int
    margin_band: float
    residuals: dict = field(default_factory=dict)
    bound: GapBound | None = None

    #: the measures compared with the KKT tolerance (the others with the constraint tolerance)
    KKT_MEASURES = ("stationarity", "b_stationarity", "spread", "box", "complementarity", "duality_gap")

    def max_residual(self) -> float:
        """The largest KKT measure; NaN when any is NaN (Python's ``max`` would skip a NaN after the first entry)."""
        return float(np.max([self.residuals[k] for k in self.KKT_MEASURES]))

    def passed(self, tol: float = KKT_TOL, constraint_tol: float = CONSTRAINT_TOL) -> bool:
        """Every KKT measure ≤ ``tol`` and every hard-constraint residual ≤ ``constraint_tol`` (NaN fails).

        Parameters
        ----------
        tol : float, default=KKT_TOL
            The tolerance on every KKT measure.
        constraint_tol : float, default=CONSTRAINT_TOL
            The tolerance on every hard-constraint residual.

        Returns
        -------
        bool
            Whether every measure is within its tolerance.
        """
        constraints = [v for k, v in self.residuals.items() if k not in self.KKT_MEASURES]
        return bool(self.max_residual() <= tol and all(v <= constraint_tol for v in constraints))


def box_violation(mu: np.ndarray, c: np.ndarray) -> np.ndarray:
    """How far each multiplier lies outside its box [0, c_p], relative to c_p: max(−μ_p, μ_p − c_p, 0) / c_p.

    Parameters
    ----------
    mu : ndarray of shape (n_pairs,)
        The pair multipliers.
    c : ndarray of shape (n_pairs,)
        The pair costs c_p, the upper ends of the boxes.

    Returns
    -------
    ndarray of shape (n_pairs,)
        The relative violation of each multiplier.

    Examples
    --------
    >>> import numpy as np
    >>> from ovn_cvx.kkt import box_violation
    >>> box_violation(np.array([-0.5, 0.5, 3.0]), np.array([1.0, 1.0, 2.0]))
    array([0.5, 0. , 0.5])
    """
    return np.maximum(np.maximum(-mu, mu - c), 0.0) / c


def _features_and_weights(problem: Problem, coef: np.ndarray):
    """Φ (N×d) and the weights in Φ-coordinates (d×K): (X, W) or (L, Lᵀ A)."""
    if problem.is_kernel:
        L = problem.kernel_factor.features
        return L, L.T @ coef
    return problem.X, coef


def kkt_certificate(problem: Problem, coef, b, *, margin_band: float | None = None) -> KKTCertificate:
    """The KKT certificate of (coef, b) for ``problem`` (docs/theory.md §6); see the module docstring.

    Parameters
    ----------
    problem : Problem
        The problem the point is checked for.
    coef : ndarray of shape (M, K), or (N, K) for kernel problems
        W, or the kernel coefficients A.
    b : ndarray of shape (K,)
        The biases.
    margin_band : float or None, default=None
        δ, the band of residuals counted as on the margin. By default the bands of ``MARGIN_BANDS`` are tried in
        turn and the first certificate that passes at ``KKT_TOL`` is returned, else the one with the smallest
        largest residual.

    Returns
    -------
    KKTCertificate
        The recovered multipliers' residuals and the proven bound ``duality_gap`` on F − F*.

    Examples
    --------
    >>> import numpy as np, ovn_cvx
    >>> from ovn_cvx.kkt import kkt_certificate
    >>> X = np.random.default_rng(0).normal(size=(30, 2))
    >>> problem = ovn_cvx.Problem.from_labels(X, X.argmax(axis=1))
    >>> result = ovn_cvx.solve(problem)
    >>> bool(kkt_certificate(problem, result.coef, result.b).max_residual() <= 1e-6)
    True
    """
    check_instance("problem", problem, Problem)
    if margin_band is not None:
        margin_band = check_number("margin_band", margin_band, low=0)
    value = objective(problem, coef, b)  # also validates the shapes
    coef, b = np.asarray(coef, dtype=np.float64), np.asarray(b, dtype=np.float64)
    bands = MARGIN_BANDS if margin_band is None else (margin_band,)
    tried = []
    # the least-squares systems are small: threaded BLAS only contends on a loaded machine (docs/theory.md §9.7)
    with threadpool_limits(limits=1, user_api="blas"):
        for band in bands:
            tried.append(_certificate(problem, coef, b, value, band))
            if tried[-1].max_residual() <= KKT_TOL:
                break
    return min(tried, key=KKTCertificate.max_residual)


def _certificate(problem: Problem, coef: np.ndarray, b: np.ndarray, value: float,
                 margin_band: float) -> KKTCertificate:
    pairs, K, c = problem.pairs, problem.n_classes, problem.cost
    Phi, Wphi = _features_and_weights(problem, coef)
    d = Phi.shape[1]
    P = problem.coupling
    r = residuals(problem, coef, b)

    mu = np.where(r > margin_band, c, 0.0)
    margin = np.flatnonzero(np.abs(r) <= margin_band)
    target_b = 0.0 if problem.hard_b else 2.0 * problem.bias_penalty * float(b.sum())

    def stationarity_parts(mu_full, rho, lam):
        M = np.zeros((problem.n_samples, K))
        np.add.at(M, (pairs.sample, pairs.label), pairs.sign * mu_full)
        m = M.sum(axis=0)
        w_res = Phi.T @ M - Wphi @ P - np.outer(rho, np.ones(K))
        b_res = m - (lam if problem.hard_b else target_b)
        return M, m, w_res, b_res

    # Unknowns: μ_S, then ρ (d, hard w), then λ (1, hard b); the system is linear in them.
    n_s = margin.size
    n_rho = d if problem.hard_w else 0
    n_lam = 1 if problem.hard_b else 0
    columns = np.zeros((d * K + K, n_s + n_rho + n_lam))
    for j, p in enumerate(margin):  # rows k·d … (k+1)·d − 1: the W-equations of class k
        k = pairs.label[p]
        row = Phi[pairs.sample[p]]
        columns[k * d:(k + 1) * d, j] = pairs.sign[p] * (row.toarray().ravel() if sp.issparse(row) else row)
        columns[d * K + k, j] = pairs.sign[p]
    for k in range(K):
        if n_rho:
            columns[k * d:(k + 1) * d, n_s:n_s + d] = -np.eye(d)
        if n_lam:
            columns[d * K + k, -1] = -1.0
    _, _, w0, b0 = stationarity_parts(mu, np.zeros(d), 0.0)
    rhs = -np.concatenate([w0.T.ravel(), b0])

    unknowns = np.linalg.lstsq(columns, rhs, rcond=None)[0] if columns.shape[1] else np.zeros(0)
    c_s = c[margin]
    if n_s and ((unknowns[:n_s] < 0).any() or (unknowns[:n_s] > c_s).any()):
        # KKT asks only that *some* multiplier lie in the box: search for one before blaming the point.
        lower = np.concatenate([np.zeros(n_s), np.full(n_rho + n_lam, -np.inf)])
        upper = np.concatenate([c_s, np.full(n_rho + n_lam, np.inf)])
        bounded = lsq_linear(columns, rhs, bounds=(lower, upper), method="bvls", tol=1e-14).x
        if np.linalg.norm(columns @ bounded - rhs) <= np.linalg.norm(columns @ unknowns - rhs) + 1e-12 * (
                1 + np.linalg.norm(rhs)):
            unknowns = bounded
    mu[margin] = unknowns[:n_s]
    rho = unknowns[n_s:n_s + n_rho] if n_rho else np.zeros(d)
    lam = unknowns[-1] if n_lam else 0.0
    M, m, w_res, b_res = stationarity_parts(mu, rho, lam)

    # Scales: weights in Φ-coordinates, total dual mass per class, objective.
    w_scale = max(1.0, float(np.abs(Wphi @ P).max()))
    m_scale = max(1.0, float(np.abs(m).max()))
    box = box_violation(mu, c)
    complementarity = (np.maximum(r, 0.0) * (c - mu) + np.maximum(-r, 0.0) * mu) / c
    # the proven bound (docs/theory.md §6): the recovered μ made exactly dual feasible; residual tests alone can pass
    # while F − F* is large (β ≫ 1 with F* ≪ 1)
    bound = gap_bound(problem, coef, b, mu, primal=value)
    out = {
        "stationarity": float(np.abs(w_res).max()) / w_scale,
        "b_stationarity": float(np.abs(b_res).max()) / m_scale,
        "spread": float(m.max() - m.min()) / m_scale,
        "box": float(box.max(initial=0.0)),
        "complementarity": float(complementarity.max(initial=0.0)),
        "duality_gap": bound.relative,
    }
    out.update(constraint_violation(problem, coef, b))
    return KKTCertificate(mu=mu, class_mass=m, n_margin=int(n_s), margin_band=margin_band, residuals=out,
                          bound=bound)


def primal_bound(problem: Problem, coef, b) -> GapBound:
    """The proven bound on F − F* of a primal point alone (docs/theory.md §6): the multipliers recovered from it as
    in the certificate, for each band of ``MARGIN_BANDS`` (a solver's margin residuals are only as small as its
    accuracy), made dual feasible; the smallest bound. For solvers that report no usable multipliers (CVXPY does
    not return the duals of the hinge's ``pos`` atom). The bound is about the point as given (D(μ) ≤ F* whatever the
    point).

    Parameters
    ----------
    problem : Problem
        The training problem.
    coef : array-like of shape (M, K) or (N, K)
        W (linear formulation) or A (kernel formulation).
    b : array-like of shape (K,)
        The biases.

    Returns
    -------
    GapBound
        The smallest bound over the margin bands.

    Examples
    --------
    >>> import numpy as np, ovn_cvx
    >>> from ovn_cvx.kkt import primal_bound
    >>> X = np.random.default_rng(0).normal(size=(30, 2))
    >>> problem = ovn_cvx.Problem.from_labels(X, np.arange(30) % 3)
    >>> result = ovn_cvx.solve(problem, method="mm")
    >>> bool(primal_bound(problem, result.coef, result.b).relative <= 1e-6)   # the point alone proves it
    True
    >>> bool(primal_bound(problem, np.zeros((2, 3)), np.zeros(3)).relative > 0.1)   # zero is far from optimal
    True
    """
    value = objective(problem, coef, b)
    coef, b = np.asarray(coef, dtype=np.float64), np.asarray(b, dtype=np.float64)
    with threadpool_limits(limits=1, user_api="blas"):
        bounds = [_certificate(problem, coef, b, value, band).bound for band in MARGIN_BANDS]
    return min(bounds, key=lambda bound: bound.absolute)


__all__ = ["CONSTRAINT_TOL", "KKT_TOL", "KKTCertificate", "MARGIN_BANDS", "box_violation", "kkt_certificate",
           "primal_bound"]
