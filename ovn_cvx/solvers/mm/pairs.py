"""One MM iteration in pair ("dual") form (docs/theory.md §9.3): unknowns μ ∈ R^n and b, one n×n Cholesky.

Q_pq = y_p y_q P⁺_{k_p k_q} G_{i_p i_q} is formed once. The iterates are exactly the primal ones.
"""
from __future__ import annotations

from functools import cached_property

import numpy as np
from scipy.linalg import LinAlgError

from ...objective import regularizer, residuals
from ...problem import Problem
from .common import NEWTON_DAMPING, Cholesky, GramOperator, State, hinge_slope, ldl_solve, least_change


class PairStepper:
    form = "pair"

    def __init__(self, problem: Problem, operator: GramOperator):
        pairs = problem.pairs
        n, K = len(pairs), problem.n_classes
        self.problem, self.operator = problem, operator
        self.sign, self.label, self.cost = pairs.sign, pairs.label, problem.cost
        self.Yb = np.zeros((n, K))
        self.Yb[np.arange(n), pairs.label] = pairs.sign
        self.diag = np.arange(n)

    def initial(self, coef=None, b=None) -> State:
        """θ = 0 (μ = 0), or a warm start given as (coef, b): then no μ is known (params None)."""
        if coef is None:
            n = len(self.sign)
            return State((np.zeros(n), np.zeros(n)), np.ones(n), 0.0, np.zeros(self.problem.n_classes))
        return State(None, residuals(self.problem, coef, b), regularizer(self.problem, coef), b.copy())

    def system(self, omega: np.ndarray) -> "PairSystem":
        """The factored pair-form system of min R + B + ½ Σ_p ω_p (a_p(θ) − t_p)²: its minimizer has μ_p =
        ω_p (t_p − a_p) and solves (Q + diag(1/ω)) μ + Y_b b = t with the b-equations of the variant
        (docs/theory.md §9.3)."""
        return PairSystem(self, 1.0 / omega)

    def step(self, z: np.ndarray) -> State:
        """Solve (Q + diag(2z/c)) μ + Y_b b = 1 + z with the b-equations of the variant (docs/theory.md §9.3)."""
        return PairSystem(self, 2.0 * z / self.cost).fit(1.0 + z)

    def newton(self, state: State, eps: float, damping: float = NEWTON_DAMPING) -> State:
        """The generalized Newton step on F̃_ε of the primal form (see ``PrimalStepper.newton``) in pair form:
        the primal weights ω_p and linear terms g_p become (Q + diag(1/ω)) μ + Y_b b = y∘g/ω, i.e. band pairs
        get 1/ω = 2ε/c and right-hand side 1 + ε, pairs outside it 1/ω = 2ε/(damping·c), which pins their μ
        at c (r > ε) or 0 (r < −ε). Needs only the residuals."""
        r = state.r
        band = np.abs(r) < eps
        inv_omega = 2.0 * eps / self.cost
        inv_omega[~band] /= damping
        return PairSystem(self, inv_omega).fit(1.0 - r + self.cost * hinge_slope(r, eps) * inv_omega)

    @cached_property
    def Q(self) -> np.ndarray:
        """Q_pq = y_p y_q P⁺_{k_p k_q} G_{i_p i_q}, formed at the first solve: a warm start certified at once never
        needs it."""
        return self.operator.pair_block(slice(None))

    @cached_property
    def _work(self) -> np.ndarray:
        """The buffer each system's matrix Q + diag(1/ω) is built and factored in."""
        return np.empty_like(self.Q)

    def relax(self, new: State, old: State, t: float = 2.0) -> State:
        """θ ← θ_old + t(θ_new − θ_old), linear in (μ, Qμ, b); t = 2 is over-relaxation (docs/theory.md §9.7)."""
        mu = old.params[0] + t * (new.params[0] - old.params[0])
        u = old.params[1] + t * (new.params[1] - old.params[1])
        b = old.b + t * (new.b - old.b)
        return State((mu, u), 1.0 - u - self.sign * b[self.label], 0.5 * float(mu @ u), b)

    def solution(self, state: State):
        return self.operator.coef(state.params[0]), state.b


class PairSystem:
    """The factored system (Q + diag(1/ω)) μ + Y_b b = t with the b-equations of the variant (docs/theory.md §9.3): one
    n×n Cholesky and the K×K (bordered) system for b; each :meth:`fit` then costs O(n²)."""

    def __init__(self, stepper: PairStepper, inv_omega: np.ndarray):
        self.stepper, self.inv_omega = stepper, inv_omega
        H = stepper._work
        np.copyto(H, stepper.Q)
        H[stepper.diag, stepper.diag] += inv_omega
        self.cholesky = Cholesky(H, "the pair-form system")
        self.HY = self.cholesky.solve(stepper.Yb)
        S = stepper.Yb.T @ self.HY
        K = S.shape[0]
        if stepper.problem.hard_b:
            # S b = rhs_b − λ1, 1ᵀb = 0 (λ: multiplier of Σb = 0, the common class mass m)
            self.b_system = np.block([[S, np.ones((K, 1))], [np.ones((1, K)), np.zeros((1, 1))]])
        else:
            self.b_system = S + 2.0 * stepper.problem.bias_penalty * np.ones((K, K))

    def fit(self, rhs: np.ndarray) -> State:
        st = self.stepper
        h = self.cholesky.solve(rhs)
        rhs_b = st.Yb.T @ h
        K = rhs_b.size
        rhs_b = np.append(rhs_b, 0.0) if st.problem.hard_b else rhs_b
        b = ldl_solve(self.b_system, rhs_b)
        if b is None:
            # singular near the ends of α's interval: the least-squares solution (the certificate, not the solve,
            # decides what is accepted)
            b = least_change(self.b_system, rhs_b)
            if b is None:
                raise LinAlgError("the b-equations of the pair-form system could not be solved")
        b = b[:K]
        mu = h - self.HY @ b
        yb = st.sign * b[st.label]
        # Qμ by the product, not as rhs − μ/ω − Y_b b: with an interior point's 1/ω ~ 1e10 that difference of two
        # large numbers loses every digit of the residuals (measured 8e-6 in r)
        u = st.Q @ mu
        return State((mu, u), 1.0 - u - yb, 0.5 * float(mu @ u), b)
