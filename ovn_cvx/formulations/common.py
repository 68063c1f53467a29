"""The OvN objective as one CVXPY problem, shared by the linear, eigen-kernel and A-kernel forms.

All three are the same program in a variable matrix Z (d×K) and biases b (K):

    minimize   ½ tr((TZ) P (TZ)ᵀ)  +  β Σ_p s_p [1 − y_p (φ_{i_p}ᵀ z_{k_p} + b_{k_p})]_+  +  γ (Σ_k b_k)²
    subject to Σ_k z_k = 0 (hard w),  Σ_k b_k = 0 (hard b)

with φ_i the margin features (x_i, the eigen-features L_i, or the Gram row G_i) and T the factor of
the regularizer (identity, identity, or Lᵀ). P = (1−α) Π + (1+(K−1)α) J/K is written with two
nonnegative parameters c1 = 1−α, c2 = 1+(K−1)α so the problem is DCP for every admissible α (α < 0
included) and DPP, so a sweep over α, β or γ re-uses the compiled problem (docs/theory.md §4.1).
"""
from __future__ import annotations

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

from ..problem import Problem


def coupling_parameters(problem: Problem) -> dict[str, float]:
    """Values of the CVXPY parameters that carry the hyperparameters."""
    coupling = problem.coupling_ops
    values = {"beta": problem.beta}
    if not problem.hard_w:
        values.update(c1=coupling.centred, c2=coupling.mean)
    if not problem.hard_b:
        values["bias_penalty"] = problem.bias_penalty
    return values


def regularizer(TZ: cp.Expression, K: int, params: dict) -> cp.Expression:
    """Soft w: ½ c1 ‖TZ Π‖² + ½ (c2/K) ‖TZ 1‖² = ½ tr(TZ P (TZ)ᵀ); hard w: ½ ‖TZ‖²."""
    if "c1" not in params:
        return 0.5 * cp.sum_squares(TZ)
    centring = np.eye(K) - np.full((K, K), 1.0 / K)
    return (0.5 * params["c1"] * cp.sum_squares(TZ @ centring)
            + 0.5 * (params["c2"] / K) * cp.sum_squares(cp.sum(TZ, axis=1)))


def hinge(features: np.ndarray, Z: cp.Variable, b: cp.Variable, problem: Problem, beta) -> cp.Expression:
    """β Σ_p s_p [1 − y_p (φ_{i_p}ᵀ z_{k_p} + b_{k_p})]_+ : one term per pair, one ``cp.pos`` over all pairs.

    Why pairs and not ``cp.multiply(Y, cp.pos(1 − (ΦZ + 1bᵀ)))``: the whole-margin-matrix form builds N·K hinge
    epigraph variables and N·K·d nonzeros (K times more than needed for multiclass; docs/theory.md §4.1 measured
    Clarabel 3.0 s against 0.8 s at N = 1000).
    """
    pairs = problem.pairs
    if sp.issparse(features):
        # sparse X: the pairs of class k (contiguous, pairs are class-major) as one sparse product Φ[S_k] z_k; CVXPY
        # densifies a sparse constant inside cp.multiply (measured: 320 MB for a 400×20000 X of 64 MB dense)
        bounds = pairs.class_bounds(problem.n_classes)
        products = cp.hstack([features[pairs.sample[bounds[k]:bounds[k + 1]]] @ Z[:, k]
                              for k in range(problem.n_classes)])
    else:
        products = cp.sum(cp.multiply(features[pairs.sample].T, Z[:, pairs.label]), axis=0)
    margins = products + b[pairs.label]
    return beta * (pairs.weight @ cp.pos(1 - cp.multiply(pairs.sign, margins)))


def ovn_problem(problem: Problem, features: np.ndarray, reg_factor: np.ndarray | None = None):
    """Assemble the CVXPY problem; returns (cp.Problem, Z, b, parameters)."""
    K = problem.n_classes
    params = {name: cp.Parameter(nonneg=True, name=name, value=value)
              for name, value in coupling_parameters(problem).items()}
    Z = cp.Variable((features.shape[1], K), name="Z")
    b = cp.Variable(K, name="b")
    TZ = Z if reg_factor is None else reg_factor @ Z
    objective = regularizer(TZ, K, params) + hinge(features, Z, b, problem, params["beta"])
    constraints = []
    if problem.hard_w:
        constraints.append(cp.sum(Z, axis=1) == 0)
    if problem.hard_b:
        constraints.append(cp.sum(b) == 0)
    else:
        objective = objective + params["bias_penalty"] * cp.square(cp.sum(b))
    return cp.Problem(cp.Minimize(objective), constraints), Z, b, params
