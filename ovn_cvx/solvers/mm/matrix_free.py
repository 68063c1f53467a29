"""Matrix-free Newton on the smoothed objective (docs/theory.md §9.11): large linear problems, such as wide sparse
data (a d×d block per class and an n×n pair matrix are both out of reach) or dense data with millions of pairs.

Only products with the rows of X that carry pairs are used (sparse X: one matrix S whose row p is x_{i_p} in the
column block of class k_p; dense X: one block of rows per class): per Newton iteration one pass for the margins
and one transposed pass for the gradient, and per MINRES/CG iteration a pass over the rows of the *band* pairs only
(|r_p| < ε, the only ones with curvature). The Newton system is solved in the band's pair coordinates when the band
is small beside W's degrees of freedom (well conditioned as ε → 0), else in primal coordinates. Memory: the pair
rows (nnz(X) times the mean number of labels per row) plus O(n + K·M). After each ε stage, an exact finish at ε = 0
on the stage's partition (the same pair-coordinate system, active-set rounds as in the polish). The proven bound of
§6 decides, as in the MM phases: "optimal" only when F − D(μ̂) ≤ gap_tol·max(1, |F|) with μ̂ the candidate's
multipliers (the smoothed hinge's slopes, their extrapolation, the finish's) made dual feasible.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.linalg import norm

from ...duality import GapBound, gap_bound, project_hard_constraints
from ...problem import Pairs, Problem
from .common import State, smoothed_hinge, state_objective
from .polish import IN_I, IN_S, IN_V, active_set_move, free_limit, partition

#: the first floor of a cold start: above 1, every pair of W = 0, b = 0 (r ≡ 1) lies in the band, so the first stage
#: starts from the minimizer with every pair in the band (the least-squares fit of the margins)
COLD_EPS = 2.0
#: the first floor of a warm start: near a neighbouring optimum, its margin pairs are within ~1e-2 of the margin
WARM_EPS = 1e-2
#: ε continuation factor, and the floor where it stops (the bound then says how far the answer is)
EPS_FACTOR = 10.0
MIN_EPS = 1e-9
#: curvature of the bias of a class without band pairs relative to Σ_{p∈k} c_p/(2ε), so that the Newton system
#: stays definite (the backtracking makes any definite model a descent method); the other classes get none, so that
#: an exact step on an unchanged partition is F̃_ε's minimizer
BIAS_DAMPING = 1e-6
#: the Newton system is solved in the band's pair coordinates when the band has at most this share of the weights'
#: degrees of freedom (K·M, hard w: (K−1)·M): their Gram matrix is then far from singular (for rows in general
#: position, a condition number ≲ 34 by the Marchenko–Pastur law), where the primal system's grows like 1/ε
PAIR_SHARE = 0.5
#: a band with fewer than this share of the pairs gets a copy of its rows, a larger one is a mask over all rows
BAND_COPY_SHARE = 0.5
#: conjugate gradients / MINRES: at most this many iterations per Newton step, and the forcing term's bounds
CG_MAX_ITER = 500
FORCING = (1e-12, 1e-2)
#: a Newton step solved this accurately (relative residual) is exact; on an unchanged partition it ends the stage
EXACT_RTOL = 1e-10
#: the true residual of an exact solve may exceed the asked one by this factor (a preconditioned norm, round-off)
SOLVE_SLACK = 100.0
#: a Newton step that predicts a decrease below this size relative to F̃_ε and to gap_tol ends the stage: far
#: below what the bound needs (a pair on the band's edge can otherwise keep the partition changing for long)
STAGE_DECREASE = 1e-3
#: Newton iterations per ε stage before the stage is declared converged anyway
STAGE_MAX_ITER = 50
MAX_HALVINGS = 40
#: the highest degree of the extrapolation in ε to 0 (through up to this many + 1 of the last stages)
EXTRAPOLATION_ORDER = 2
#: the smallest diagonal entry of the pair system's bias preconditioner, relative to its largest
SCHUR_FLOOR = 1e-12
#: the exact finish: active-set rounds, and the relative tolerance of its box and sign tests
FINISH_ROUNDS = 10
FINISH_TOL = 1e-9


def pair_rows(problem: Problem) -> "SparsePairRows | DensePairRows":
    """The rows x_{i_p} of every pair, as an operator (docs/theory.md §9.11): margins u_p = x_{i_p}ᵀ w_{k_p} and
    their transpose Σ_p t_p x_{i_p} e_{k_p}ᵀ cost nnz of the pair rows, against K·nnz(X) for X W (a multilabel
    row enters only its own labels' products)."""
    pairs = problem.pairs
    if sp.issparse(problem.X):
        return SparsePairRows(problem.X.tocsr(), pairs, problem.n_classes)
    return DensePairRows(problem.X, pairs, problem.n_classes)


class SparsePairRows:
    """Sparse X: one CSR matrix S (n × K·M) whose row p is x_{i_p} placed in the column block of class k_p, so
    that the margins are S vec(Wᵀ) and the transpose Sᵀt: one sparse product each, for all classes."""

    def __init__(self, X, pairs: Pairs, n_classes: int):
        self.M, self.K, self.label = X.shape[1], n_classes, pairs.label
        rows = X[pairs.sample]
        shift = np.repeat(pairs.label.astype(np.int64) * self.M, np.diff(rows.indptr))
        self.S = sp.csr_matrix((rows.data, rows.indices + shift, rows.indptr), shape=(len(pairs), self.K * self.M))

    def restrict(self, index: np.ndarray) -> "SparsePairRows":
        sub = object.__new__(SparsePairRows)
        sub.M, sub.K, sub.label, sub.S = self.M, self.K, self.label[index], self.S[index]
        return sub

    def forward(self, V: np.ndarray) -> np.ndarray:
        return self.S @ V.T.ravel()

    def backward(self, t: np.ndarray) -> np.ndarray:
        return (self.S.T @ t).reshape(self.K, self.M).T

    def _squared(self) -> sp.csr_matrix:
        """S with its entries squared, sharing S's index arrays."""
        return sp.csr_matrix((self.S.data ** 2, self.S.indices, self.S.indptr), shape=self.S.shape)

    def squares_backward(self, t: np.ndarray) -> np.ndarray:
        """Σ_p t_p x_{i_p}² e_{k_p}ᵀ (elementwise squares): the diagonal of the band Hessian."""
        return (self._squared().T @ t).reshape(self.K, self.M).T

    def row_squares(self) -> np.ndarray:
        """‖x_{i_p}‖² for every pair."""
        return np.asarray(self._squared().sum(axis=1)).ravel()


class DensePairRows:
    """Dense X: the rows of each class's pairs as one dense block per class (pairs are sorted by class)."""

    def __init__(self, X, pairs: Pairs, n_classes: int):
        self.M, self.K, self.label = X.shape[1], n_classes, pairs.label
        bounds = pairs.class_bounds(n_classes)
        self.slices = [slice(bounds[k], bounds[k + 1]) for k in range(n_classes)]
        self.blocks = [X[pairs.sample[s]] for s in self.slices]

    def restrict(self, index: np.ndarray) -> "DensePairRows":
        sub = object.__new__(DensePairRows)
        sub.M, sub.K, sub.label = self.M, self.K, self.label[index]
        cuts = np.searchsorted(index, [s.start for s in self.slices] + [self.slices[-1].stop])
        sub.slices = [slice(cuts[k], cuts[k + 1]) for k in range(self.K)]
        sub.blocks = [B[index[s] - outer.start] for B, s, outer in zip(self.blocks, sub.slices, self.slices)]
        return sub

    def forward(self, V: np.ndarray) -> np.ndarray:
        return np.concatenate([B @ V[:, k] for k, B in enumerate(self.blocks)])

    def backward(self, t: np.ndarray) -> np.ndarray:
        return np.stack([B.T @ t[s] for B, s in zip(self.blocks, self.slices)], axis=1)

    def squares_backward(self, t: np.ndarray) -> np.ndarray:
        # one pass without a squared copy of the rows (the blocks are the size of the data)
        return np.stack([np.einsum("pj,pj,p->j", B, B, t[s]) for B, s in zip(self.blocks, self.slices)], axis=1)

    def row_squares(self) -> np.ndarray:
        return np.concatenate([np.einsum("ij,ij->i", B, B) for B in self.blocks])


def band_rows(rows, band: np.ndarray):
    """The band's pair rows: a copy when the band is a small share of the pairs (the products then cost the band
    only), else all rows, masked (no second copy of the data; the products cost at most twice the band's)."""
    if band.size < BAND_COPY_SHARE * len(rows.label):
        return rows.restrict(band)
    return MaskedRows(rows, band)


class MaskedRows:
    """The rows of the pairs in ``band`` (indices) as products with all rows and a mask."""

    def __init__(self, rows, band: np.ndarray):
        self.rows, self.band, self.label = rows, band, rows.label[band]

    def _padded(self, t: np.ndarray) -> np.ndarray:
        full = np.zeros(len(self.rows.label))
        full[self.band] = t
        return full

    def forward(self, V: np.ndarray) -> np.ndarray:
        return self.rows.forward(V)[self.band]

    def backward(self, t: np.ndarray) -> np.ndarray:
        return self.rows.backward(self._padded(t))

    def squares_backward(self, t: np.ndarray) -> np.ndarray:
        return self.rows.squares_backward(self._padded(t))


class BandHessian:
    """The generalized Hessian of F̃_ε at a point, as an operator on directions (V, d) (docs/theory.md §9.11):

        (V, d) ↦ (V P + Σ_{p∈band} κ_p u_p x_{i_p} e_{k_p}ᵀ,  Σ_{p∈band, k_p=k} κ_p u_p + damping·d + 2γ Σd),

    u_p = x_{i_p}ᵀ v_{k_p} + d_{k_p}, κ_p = c_p/(2ε), restricted to the hard constraints' subspace by projection.
    Directions are flat vectors (V row-major, then d)."""

    def __init__(self, problem: Problem, rows, band: np.ndarray, eps: float):
        self.problem, self.coupling = problem, problem.coupling_ops
        self.M, self.K = problem.n_features, problem.n_classes
        self.band, self.kappa = band_rows(rows, band), problem.cost[band] / (2.0 * eps)
        self.damping = bias_damping(problem, self.band.label, eps)
        diag_w = 1.0 + self.band.squares_backward(self.kappa)  # P_kk = 1 in every variant
        diag_b = self.damping + np.bincount(self.band.label, weights=self.kappa, minlength=self.K)
        if not problem.hard_b:
            diag_b += 2.0 * problem.bias_penalty
        self.inverse_diag = 1.0 / np.concatenate([diag_w.ravel(), diag_b])

    def split(self, x: np.ndarray):
        return x[:-self.K].reshape(self.M, self.K), x[-self.K:]

    def step(self, grad_W: np.ndarray, grad_b: np.ndarray, rtol: float):
        """As :meth:`BandPairSystem.step`, by projected PCG."""
        rhs = -np.concatenate([grad_W.ravel(), grad_b])
        x, used = conjugate_gradient(self, rhs, rtol, CG_MAX_ITER)
        return *self.split(x), used, solved_exactly(self, x, rhs, rtol)

    def project(self, x: np.ndarray) -> np.ndarray:
        V, d = tangent(self.problem, *self.split(x))
        return np.concatenate([V.ravel(), d])

    def apply(self, x: np.ndarray) -> np.ndarray:
        problem = self.problem
        V, d = self.split(x)
        t = self.kappa * (self.band.forward(V) + d[self.band.label])
        out_V = self.coupling.apply(V) + self.band.backward(t)
        out_d = self.damping * d + np.bincount(self.band.label, weights=t, minlength=self.K)
        if not problem.hard_b:
            out_d += 2.0 * problem.bias_penalty * d.sum()
        return self.project(np.concatenate([out_V.ravel(), out_d]))

    def precondition(self, x: np.ndarray) -> np.ndarray:
        """Π D⁻¹ Π x: symmetric, and definite on the subspace (D > 0), so projected PCG stays in it."""
        return self.project(self.inverse_diag * self.project(x))


class BandPairSystem:
    """The same Newton system in the band's pair coordinates (docs/theory.md §9.11), for a band small beside W's
    degrees of freedom (PAIR_SHARE; wide data): with t_p = κ_p u_p (p in the band) and C = P⁻¹ (soft w) or Π (hard w),
    the step is V = −(G_W + Σ_p t_p x_{i_p} e_{k_p}ᵀ) C and (t, d) solve the symmetric saddle-point system

        [κ⁻¹ + Q   −E] [t]   [−h ]
        [  −Eᵀ     −B] [d] = [g_b],   Q_pq = x_{i_p}ᵀx_{i_q} C_{k_p k_q},  h_p = x_{i_p}ᵀ (G_W C)_{k_p},

    E the band's class indicator, B the bias curvature (damping, + 2γ11ᵀ for soft b; hard b: d and the second row
    on 1^⊥). κ⁻¹ + Q does not grow ill-conditioned as ε → 0 when the band's rows are far from dependent, where the
    primal system's curvature κ ∝ 1/ε does. Solved by MINRES with the SPD block-diagonal preconditioner
    (diag(κ⁻¹ + Q), B + Eᵀ diag(κ⁻¹ + Q)⁻¹ E). At ε = 0 (κ⁻¹ = 0, no bias damping) it is the exact finish's
    system, singular when the margin set's multipliers are not unique; MINRES solves it where it is consistent."""

    def __init__(self, problem: Problem, rows, row_squares: np.ndarray, band: np.ndarray, eps: float):
        self.problem, self.coupling, self.K = problem, problem.coupling_ops, problem.n_classes
        self.band, self.inverse_kappa = band_rows(rows, band), 2.0 * eps / problem.cost[band]
        self.sign = problem.pairs.sign[band]
        # ε = 0 (the exact finish): the true bias curvature, a class without band pairs keeps its b_k free
        self.damping = bias_damping(problem, self.band.label, eps) if eps > 0 else np.zeros(self.K)
        diagonal_C = self.coupling.apply_inverse(np.eye(self.K)).diagonal()
        diag_t = self.inverse_kappa + row_squares[band] * diagonal_C[self.band.label]
        # at ε = 0 a pair whose row of X is zero (an empty row of text data) has no diagonal entry: the definite
        # preconditioner gives it the band's mean (or 1), as it does a class without band pairs below
        self.diag_t = np.where(diag_t > 0, diag_t, diag_t[diag_t > 0].mean() if (diag_t > 0).any() else 1.0)
        schur = self.damping + np.bincount(self.band.label, weights=1.0 / self.diag_t, minlength=self.K)
        # the preconditioner must stay definite: a class without band pairs at ε = 0 gets the others' mean (or 1),
        # and entries that vanish in round-off beside the rest (C = P⁻¹ huge near α = −1/(K−1): 1/diag_t ~ 1e-18
        # beside 2γ measured, a singular B + 2γ11ᵀ) are raised to a floor
        filler = schur.sum() / np.count_nonzero(schur) if schur.any() else 1.0
        schur = np.where(schur > 0, schur, filler)
        floor = SCHUR_FLOOR * (schur.max() + (0.0 if problem.hard_b else 2.0 * problem.bias_penalty * self.K))
        schur = np.diag(np.maximum(schur, floor))
        if problem.hard_b:
            centre = np.eye(self.K) - 1.0 / self.K
            self.inverse_schur = np.linalg.pinv(centre @ schur @ centre, hermitian=True)
        else:
            self.inverse_schur = np.linalg.inv(schur + 2.0 * problem.bias_penalty)

    def apply(self, x: np.ndarray) -> np.ndarray:
        t, d = x[:-self.K], x[-self.K:]
        label = self.band.label
        q = self.band.forward(self.coupling.apply_inverse(self.band.backward(t)))
        out_d = -np.bincount(label, weights=t, minlength=self.K) - self.damping * d
        if not self.problem.hard_b:
            out_d -= 2.0 * self.problem.bias_penalty * d.sum()
        return np.concatenate([self.inverse_kappa * t + q - d[label], tangent(self.problem, None, out_d)[1]])

    def precondition(self, x: np.ndarray) -> np.ndarray:
        return np.concatenate([x[:-self.K] / self.diag_t, self.inverse_schur @ x[-self.K:]])

    def step(self, grad_W: np.ndarray, grad_b: np.ndarray, rtol: float):
        """The Newton step (V, d) from the projected gradient, the MINRES iterations used, and whether the system
        was solved exactly (:func:`solved_exactly`)."""
        V, d, _, used, exact = self.solve(grad_W, grad_b, rtol)
        return V, d, used, exact

    def solve(self, grad_W: np.ndarray, grad_b: np.ndarray, rtol: float, residuals: np.ndarray | float = 0.0):
        """:meth:`step`, with the band's residuals lowered by ``residuals`` beyond the model's step (the exact
        finish: by r_p itself, onto the margin), also returning t = −y∘Δμ, the change of the band's multipliers."""
        descent = self.coupling.apply_inverse(grad_W)
        # centred again here: a gradient's b-part centred where it was large keeps that size's round-off along 1,
        # which the system cannot reduce once the gradient is small (measured: 7e-8 of ‖g_b‖, stages floundering)
        rhs = np.concatenate([-self.band.forward(descent) - self.sign * residuals,
                              tangent(self.problem, None, grad_b)[1]])
        x, used = minres(self, rhs, rtol, CG_MAX_ITER)
        t, d = x[:-self.K], x[-self.K:]
        V = -descent - self.coupling.apply_inverse(self.band.backward(t))
        return V, d, t, used, solved_exactly(self, x, rhs, rtol)


def solved_exactly(system, x: np.ndarray, rhs: np.ndarray, rtol: float) -> bool:
    """Asked for an exact solve (rtol ≤ EXACT_RTOL) and got one, judged by the true residual: the recursively
    updated one of CG and MINRES drifts from it on ill-conditioned systems."""
    if rtol > EXACT_RTOL:
        return False
    with np.errstate(all="ignore"):  # a solve that broke down (huge or non-finite x) is not exact: no warning
        residual = rhs - system.apply(x)
    # BLAS's scaled 2-norm: squaring a residual above 1e154 would overflow
    return bool(norm(residual, check_finite=False) <= SOLVE_SLACK * rtol * norm(rhs, check_finite=False))


def tangent(problem: Problem, V: np.ndarray | None, d: np.ndarray):
    """(V, d) projected on the directions that keep the hard constraints: Σ_k v_k = 0 (hard w), Σ_k d_k = 0
    (hard b). V may be None (a bias block alone)."""
    if problem.hard_w and V is not None:
        V = V - V.mean(axis=1, keepdims=True)
    if problem.hard_b:
        d = d - d.mean()
    return V, d


def bias_damping(problem: Problem, band_label: np.ndarray, eps: float) -> np.ndarray:
    """BIAS_DAMPING · Σ_{p∈k} c_p/(2ε) for each class without band pairs (``band_label``: their classes), else 0."""
    K = problem.n_classes
    empty = np.bincount(band_label, minlength=K) == 0
    return empty * BIAS_DAMPING * np.bincount(problem.pairs.label, weights=problem.cost, minlength=K) / (2.0 * eps)


def conjugate_gradient(hessian: BandHessian, rhs: np.ndarray, rtol: float, max_iter: int) -> tuple[np.ndarray, int]:
    """Projected preconditioned CG for H x = rhs (rhs in the subspace): (x, iterations). Written out rather than
    scipy's ``cg`` because the projection and the forcing term need the loop, and scipy renamed its tolerance
    (``tol`` → ``rtol``) inside the range of versions the package supports."""
    x = np.zeros_like(rhs)
    if not rhs.any():
        return x, 0
    residual = rhs.copy()
    z = hessian.precondition(residual)
    direction = z.copy()
    rz = residual @ z
    if rz <= 0:  # rhs is round-off outside the subspace
        return x, 0
    target = rtol * np.sqrt(rhs @ rhs)
    # overflows and zero curvature (features of scale 1e6, α at its end) end the solve as a breakdown does: the step
    # so far, judged by the caller
    with np.errstate(all="ignore"):
        for iteration in range(1, max_iter + 1):
            Hd = hessian.apply(direction)
            curvature = direction @ Hd
            step = rz / curvature
            trial, residual_trial = x + step * direction, residual - step * Hd
            if not (0 < curvature < np.inf and np.isfinite(trial).all() and np.isfinite(residual_trial).all()):
                return x, iteration
            x, residual = trial, residual_trial
            if np.sqrt(residual @ residual) <= target:
                return x, iteration
            z = hessian.precondition(residual)
            rz, previous = residual @ z, rz
            if not 0 < rz < np.inf:
                return x, iteration
            direction = z + (rz / previous) * direction
    return x, max_iter


def minres(system: BandPairSystem, rhs: np.ndarray, rtol: float, max_iter: int) -> tuple[np.ndarray, int]:
    """Preconditioned MINRES (Paige & Saunders) for the symmetric, indefinite ``system``: (x, iterations). Stops
    when the preconditioned residual norm, which MINRES updates for free, is below ``rtol`` times its start."""
    x = np.zeros_like(rhs)
    r1 = r2 = rhs
    y = system.precondition(rhs)
    beta = beta1 = float(np.sqrt(max(rhs @ y, 0.0)))
    if beta1 == 0.0:
        return x, 0
    old_beta = dbar = epsilon = 0.0
    phibar, cs, sn = beta1, -1.0, 0.0
    w = w2 = np.zeros_like(rhs)
    for iteration in range(1, max_iter + 1):
        v = y / beta
        y = system.apply(v)
        if iteration > 1:
            y = y - (beta / old_beta) * r1
        alpha = float(v @ y)
        y = y - (alpha / beta) * r2
        r1, r2 = r2, y
        y = system.precondition(r2)
        old_beta, beta = beta, float(np.sqrt(max(r2 @ y, 0.0)))
        old_epsilon = epsilon
        delta = cs * dbar + sn * alpha
        gbar = sn * dbar - cs * alpha
        epsilon, dbar = sn * beta, -cs * beta
        # floored at machine epsilon as scipy's minres does (a singular breakdown, gbar = beta = 0, then leaves x
        # unchanged: phi = 0); the smallest normal float made w overflow (measured)
        gamma = max(float(np.hypot(gbar, beta)), np.finfo(float).eps)
        cs, sn = gbar / gamma, beta / gamma
        phi, phibar = cs * phibar, sn * phibar
        w1, w2 = w2, w
        w = (v - old_epsilon * w1 - delta * w2) / gamma
        x = x + phi * w
        if phibar <= rtol * beta1 or beta == 0.0:
            return x, iteration
    return x, max_iter


@dataclass
class Point:
    """An iterate: W (M×K), b, the pair margins u_p = x_{i_p}ᵀ w_{k_p} and residuals r_p."""

    W: np.ndarray
    b: np.ndarray
    u: np.ndarray
    r: np.ndarray


@dataclass
class Stage:
    """The end of one ε stage: the floor, the point, its slopes μ and its partition (−1 below the band, 0 in
    it, 1 above)."""

    eps: float
    W: np.ndarray
    b: np.ndarray
    mu: np.ndarray
    sets: np.ndarray


class NewtonCG:
    """The state of one matrix-free run and its named steps; :func:`solve_matrix_free` is the loop over them."""

    form = "matrix-free"

    def __init__(self, problem: Problem, gap_tol: float, warm_coef=None, warm_b=None):
        self.problem, self.coupling, self.gap_tol = problem, problem.coupling_ops, gap_tol
        self.rows = pair_rows(problem)
        self.row_squares = self.rows.row_squares()
        self.sign, self.cost, self.label = problem.pairs.sign, problem.cost, problem.pairs.label
        M, K = problem.n_features, problem.n_classes
        W = np.zeros((M, K)) if warm_coef is None else np.array(warm_coef, dtype=float)
        b = np.zeros(K) if warm_b is None else np.array(warm_b, dtype=float)
        self.point = self.at(W, b)
        self.eps = COLD_EPS if warm_coef is None else WARM_EPS
        self.smooth = self.smoothed(self.point)
        self.iterations = self.stage_iterations = self.cg_iterations = self.extrapolations = 0
        self.pair_solves = self.primal_solves = 0  # Newton systems solved in each coordinate system
        self.finish_solves = 0  # systems of the exact finish (pair coordinates, ε = 0)
        self.finished: set[bytes] = set()  # the partitions the finish has solved
        self.stage_gradient: float | None = None  # ‖g‖ at the stage's start, set by its first direction
        self.history = [self.exact(self.point)]
        self.best: tuple[Point, GapBound] | None = None
        self.chain: list[Stage] = []  # the last stages
        self.stage_done = False  # set when a prediction is proven to be the stage's minimizer
        if warm_coef is None:
            self.start_on_partition(np.zeros(len(self.cost), dtype=np.int8))

    # --- values -------------------------------------------------------------------------------------
    def at(self, W, b, u=None) -> Point:
        u = self.rows.forward(W) if u is None else u
        return Point(W, b, u, 1.0 - self.sign * (u + b[self.label]))

    def _state(self, point: Point) -> State:
        reg = 0.5 * self.coupling.square(point.W)
        return State(None, point.r, reg, point.b)

    def exact(self, point: Point) -> float:
        return state_objective(self.problem, self._state(point))

    def smoothed(self, point: Point) -> float:
        return state_objective(self.problem, self._state(point), smoothed_hinge(point.r, self.eps))

    def slopes(self, r: np.ndarray) -> np.ndarray:
        """μ_p = c_p h'_ε(r_p): the smoothed hinge's slopes, the dual estimate of §9.3."""
        return self.cost * np.clip((r + self.eps) / (2.0 * self.eps), 0.0, 1.0)

    @property
    def certified(self) -> bool:
        return self.best is not None and self.best[1].relative <= self.gap_tol

    # --- the steps ----------------------------------------------------------------------------------
    def gradient(self, band: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """∇ of F̃_ε with the hinge of the pairs in ``band`` (indices) replaced by its quadratic piece
        c(r+ε)²/(4ε) (F̃_ε itself when ``band`` is the band), projected on the hard constraints' subspace."""
        point = self.point
        slopes = self.slopes(point.r)
        slopes[band] = self.cost[band] * (point.r[band] + self.eps) / (2.0 * self.eps)
        return self.lagrangian_gradient(point, slopes)

    def lagrangian_gradient(self, point: Point, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """∇ of R + B − Σ_p μ_p y_p f_p at ``point`` (the hinges' slopes fixed at μ), projected as :meth:`gradient`."""
        problem, signed = self.problem, self.sign * mu
        grad_W = self.coupling.apply(point.W) - self.rows.backward(signed)
        grad_b = -np.bincount(self.label, weights=signed, minlength=problem.n_classes)
        if not problem.hard_b:
            grad_b += 2.0 * problem.bias_penalty * point.b.sum()
        return tangent(problem, grad_W, grad_b)

    def direction(self, band: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, bool, float]:
        """The Newton direction (V, d) of F̃_ε — or, given ``band``, the step to the minimizer of the model whose
        pairs in it are quadratic, solved to EXACT_RTOL — whether it was solved exactly, and the model's predicted
        decrease −½gᵀ(V, d). The forcing term (‖g‖/‖g₀‖)² (g₀: the gradient at the stage's start, before its
        prediction) is superlinear and exact near the stage's minimizer. In the band's pair coordinates (MINRES)
        when the band is small beside W's degrees of freedom (PAIR_SHARE), else in the primal ones (PCG)."""
        problem, point = self.problem, self.point
        model = band is not None
        if band is None:
            band = np.flatnonzero(np.abs(point.r) < self.eps)
        grad_W, grad_b = self.gradient(band)
        size = float(np.sqrt(np.sum(grad_W * grad_W) + grad_b @ grad_b))
        if self.stage_gradient is None:
            self.stage_gradient = max(size, np.finfo(float).tiny)
        rtol = EXACT_RTOL if model else float(np.clip((size / self.stage_gradient) ** 2, *FORCING))
        if band.size <= PAIR_SHARE * (grad_W.size - problem.n_features * problem.hard_w):
            system = BandPairSystem(problem, self.rows, self.row_squares, band, self.eps)
            self.pair_solves += 1
        else:
            system = BandHessian(problem, self.rows, band, self.eps)
            self.primal_solves += 1
        V, d, used, exact = system.step(grad_W, grad_b, rtol)
        self.cg_iterations += used
        return V, d, exact, -0.5 * float(np.sum(grad_W * V) + grad_b @ d)

    def line_search(self, V: np.ndarray, d: np.ndarray) -> float:
        """Backtracking on F̃_ε along the direction (V, d); every trial is O(n) (margins move linearly). Returns
        the step length taken (0 when none lowers F̃_ε)."""
        p = self.point
        du = self.rows.forward(V)
        t = 1.0
        for _ in range(MAX_HALVINGS):
            trial = Point(p.W + t * V, p.b + t * d, p.u + t * du, p.r - t * self.sign * (du + d[self.label]))
            value = self.smoothed(trial)
            if value < self.smooth:
                self.point, self.smooth = trial, value
                return t
            t /= 2.0
        return 0.0

    def newton_step(self) -> bool:
        """One Newton iteration; True when the ε stage has converged: a full step, from an exact solve, that
        kept the partition it was modelled on (F̃_ε is quadratic there: its minimizer), a step whose predicted
        decrease is negligible beside gap_tol (STAGE_DECREASE), or no decrease."""
        sets = partition(self.point.r, self.eps)
        V, d, exact, decrease = self.direction()
        length = self.line_search(V, d)
        self.iterations += 1
        self.stage_iterations += 1
        self.history.append(self.exact(self.point))
        kept = length == 1.0 and exact and np.array_equal(sets, partition(self.point.r, self.eps))
        negligible = decrease <= STAGE_DECREASE * self.gap_tol * max(1.0, abs(self.smooth))
        return length == 0.0 or kept or negligible or self.stage_iterations >= STAGE_MAX_ITER

    def end_stage(self) -> None:
        """Record the stage and try for the proven bound: at the stage's point with its slopes, and at the
        extrapolations to ε = 0 through the last two and three stages (exact in the limit when they ended on one
        partition, docs/theory.md §9.11; otherwise merely candidates, which the bound judges)."""
        point = self.at(*project_hard_constraints(self.problem, self.point.W, self.point.b))
        self.point, self.smooth = point, self.smoothed(point)
        stage = Stage(self.eps, point.W, point.b, self.slopes(point.r), partition(point.r, self.eps))
        self.chain = [*self.chain[-EXTRAPOLATION_ORDER:], stage]
        self.offer(point, stage.mu)
        for order in range(1, len(self.chain)):
            W, b, mu = extrapolate(self.chain[-order - 1:], 0.0)
            self.offer(self.at(*project_hard_constraints(self.problem, W, b)), mu)
            self.extrapolations += 1

    def offer(self, candidate: Point, mu: np.ndarray) -> None:
        """Keep ``candidate`` as the answer if its proven bound with multipliers ``mu`` is the smallest yet."""
        bound = gap_bound(self.problem, candidate.W, candidate.b, mu, primal=self.exact(candidate))
        if self.best is None or bound.absolute < self.best[1].absolute:
            self.best = candidate, bound

    def finish(self) -> None:
        """The exact finish (docs/theory.md §9.11) from the last stage's partition: the minimizer of F with the band
        pairs held on the margin (r_p = 0, multipliers free) and the V and I pairs' multipliers fixed at c_p and 0 —
        one pair-coordinate solve at ε = 0 from the stage's point and slopes — then active-set rounds as in the
        polish (§9.5). Every point solved exactly is a candidate for the bound; an inexact solve means an
        inconsistent partition and ends the finish. A partition is solved once (and refined once), and only while
        its margin set is within the polish's limit."""
        sets, point, mu = self.chain[-1].sets, self.point, self.chain[-1].mu
        c, again = self.cost, False
        for _ in range(FINISH_ROUNDS):
            if self.certified or not (again or self.untried(sets)):
                return
            self.finished.add(sets.tobytes())
            mu = np.where(sets == IN_V, c, np.where(sets == IN_I, 0.0, mu))
            margin = np.flatnonzero(sets == IN_S)
            system = BandPairSystem(self.problem, self.rows, self.row_squares, margin, 0.0)
            V, d, t, used, exact = system.solve(*self.lagrangian_gradient(point, mu), EXACT_RTOL, point.r[margin])
            self.cg_iterations += used
            self.finish_solves += 1
            if not exact:
                return
            point = self.at(*project_hard_constraints(self.problem, point.W + V, point.b + d))
            mu[margin] -= self.sign[margin] * t
            self.offer(point, mu)
            r_tol = FINISH_TOL * max(1.0, float(np.abs(point.u + point.b[self.label]).max()))
            moved = active_set_move(sets, mu, c, point.r, FINISH_TOL, r_tol)
            if moved is None and again:
                return
            # no pair moves but no certificate: once more from this point (iterative refinement; the first solve's
            # residual, small beside a far start, was measured to leave r_S at 5e-10 and the bound at 1.7e-6)
            again = moved is None
            sets = sets if again else moved

    def untried(self, sets: np.ndarray) -> bool:
        """Whether the finish has yet to solve ``sets``, and its margin set is within the polish's limit."""
        return sets.tobytes() not in self.finished and np.count_nonzero(sets == IN_S) <= free_limit(self.problem)

    def refine_eps(self) -> bool:
        """The next, smaller floor (False at MIN_EPS), started from the better of two predictions when it lowers
        F̃ there: the minimizer of F̃ at the new floor on the last stage's partition, and the stages'
        extrapolation to the new floor when the last two ended on one partition (along a fixed partition the path
        is smooth in ε)."""
        if self.eps <= MIN_EPS:
            return False
        self.eps = max(self.eps / EPS_FACTOR, MIN_EPS)
        self.smooth = self.smoothed(self.point)
        self.stage_iterations, self.stage_gradient = 0, None
        self.start_on_partition(self.chain[-1].sets)
        if len(self.chain) > 1 and np.array_equal(self.chain[-1].sets, self.chain[-2].sets):
            if self.predict(extrapolate(self.chain, self.eps)[:2]):
                self.stage_done = False
        return True

    def start_on_partition(self, sets: np.ndarray) -> None:
        """Move to the minimizer of F̃_ε on the partition ``sets`` (−1 below the band, 0 in it, 1 above; one linear
        solve, as F̃_ε is quadratic on a fixed partition) if that lowers F̃_ε. When the solve was exact and the
        point lies on ``sets`` itself, it is F̃_ε's minimizer: the stage is done without a Newton step."""
        V, d, exact, _ = self.direction(np.flatnonzero(sets == 0))
        moved = self.predict((self.point.W + V, self.point.b + d))
        self.stage_done = moved and exact and np.array_equal(partition(self.point.r, self.eps), sets)

    def predict(self, candidate: tuple[np.ndarray, np.ndarray]) -> bool:
        """Move to (W, b) (the hard constraints made exact) if it lowers F̃_ε; whether it did."""
        predicted = self.at(*project_hard_constraints(self.problem, *candidate))
        value = self.smoothed(predicted)
        if value >= self.smooth:
            return False
        self.point, self.smooth = predicted, value
        return True


def extrapolate(chain: list[Stage], eps: float):
    """(W, b, μ) of the polynomial through the stages' values in ε, at ``eps`` (Lagrange form): on a fixed
    partition the smoothed minimizer is a rational, smooth function of ε (docs/theory.md §9.11), so with floors
    a factor 10 apart each further stage gains a factor ~10 in accuracy."""
    floors = np.array([stage.eps for stage in chain])
    weights = [np.prod([(eps - floors[j]) / (floors[i] - floors[j]) for j in range(len(chain)) if j != i])
               for i in range(len(chain))]
    return tuple(sum(w * getattr(stage, name) for w, stage in zip(weights, chain)) for name in ("W", "b", "mu"))


def solve_matrix_free(problem: Problem, *, gap_tol: float, max_iter: int, warm_coef=None,
                      warm_b=None) -> tuple[NewtonCG, str]:
    """Newton-CG with ε continuation, each stage followed by the exact finish, until the proven bound is within
    ``gap_tol``: (the run, why it stopped). The answer is ``run.best``: the point with the smallest proven bound."""
    run = NewtonCG(problem, gap_tol, warm_coef, warm_b)
    while run.iterations < max_iter:
        if run.stage_done or run.newton_step():
            run.end_stage()
            run.finish()
            if run.certified:
                return run, "certified"
            if not run.refine_eps():
                return run, "eps floor"
    run.end_stage()
    return run, "max_iter"
