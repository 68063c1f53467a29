"""The matrix-free form's Newton systems on the band (docs/theory.md §9.11): in primal coordinates (solved by
projected CG) and in the band's pair coordinates (a saddle-point system, solved by MINRES), with their
preconditioners, and the test of an exact solve."""
from __future__ import annotations

import numpy as np
from scipy.linalg import norm

from ...problem import Problem, class_sums
from .krylov import conjugate_gradient, minres
from .pair_rows import band_rows

#: curvature of the bias of a class without band pairs relative to Σ_{p∈k} c_p/(2ε), so that the Newton system
#: stays definite (the backtracking makes any definite model a descent method); the other classes get none, so that
#: an exact step on an unchanged partition is F̃_ε's minimizer
BIAS_DAMPING = 1e-6
#: conjugate gradients / MINRES: at most this many iterations per Newton step
CG_MAX_ITER = 500
#: a Newton step solved this accurately (relative residual) is exact; on an unchanged partition it ends the stage
EXACT_RTOL = 1e-10
#: the true residual of an exact solve may exceed the asked one by this factor (a preconditioned norm, round-off)
SOLVE_SLACK = 100.0
#: the smallest diagonal entry of the pair system's bias preconditioner, relative to its largest
SCHUR_FLOOR = 1e-12


class BandHessian:
    """The generalized Hessian of F̃_ε at a point, as an operator on directions (V, d) (docs/theory.md §9.11):

        (V, d) ↦ (V P + Σ_{p∈band} κ_p u_p x_{i_p} e_{k_p}ᵀ,  Σ_{p∈band, k_p=k} κ_p u_p + damping·d + 2γ Σd),

    u_p = x_{i_p}ᵀ v_{k_p} + d_{k_p}, κ_p = c_p/(2ε), restricted to the hard constraints' subspace by projection.
    Directions are flat vectors (V row-major, then d)."""

    def __init__(self, problem: Problem, rows, band: np.ndarray, eps: float):
        self.problem, self.coupling = problem, problem.coupling_ops
        self.M, self.K = problem.n_features, problem.n_classes
        self.band, self.curvature = band_rows(rows, band), problem.cost[band] / (2.0 * eps)
        self.damping = bias_damping(problem, self.band.label, eps)
        diag_w = 1.0 + self.band.squares_backward(self.curvature)  # P_kk = 1 in every variant
        diag_b = self.damping + np.bincount(self.band.label, weights=self.curvature, minlength=self.K)
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
        t = self.curvature * (self.band.forward(V) + d[self.band.label])
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
        self.band, self.inverse_curvature = band_rows(rows, band), 2.0 * eps / problem.cost[band]
        self.sign = problem.pairs.sign[band]
        # ε = 0 (the exact finish): the true bias curvature, a class without band pairs keeps its b_k free
        self.damping = bias_damping(problem, self.band.label, eps) if eps > 0 else np.zeros(self.K)
        diagonal_C = self.coupling.apply_inverse(np.eye(self.K)).diagonal()
        diag_t = self.inverse_curvature + row_squares[band] * diagonal_C[self.band.label]
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
        return np.concatenate([self.inverse_curvature * t + q - d[label], tangent(self.problem, None, out_d)[1]])

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
    return empty * BIAS_DAMPING * class_sums(problem.cost, problem.pairs.class_bounds(K)) / (2.0 * eps)
