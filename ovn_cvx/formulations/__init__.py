"""The eight OvN problems (linear/kernel × SwSb, SwHb, HwSb, HwHb) as CVXPY problems.

``build(problem)`` returns a :class:`Formulation`: the compiled-once CVXPY problem plus the map from
its variables to the reported coefficients. Forms:

* ``"linear"`` (kernel="linear"): variables W (M×K), b.
* ``"eigen"`` (kernels, default): the linear problem on the eigen-features L of G = L Lᵀ; variables
  C (r×K) with A = U_r diag(s_r^{−1/2}) C (SPEC §4.2b). Well conditioned.
* ``"coef"`` (kernels): the paper's parametrization, variables A (N×K) directly, regularizer
  ½ tr(Aᵀ L Lᵀ A P), margins G A. Numerically fragile (singular KKT systems); kept for comparison.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import cvxpy as cp
import numpy as np

from ..problem import Problem
from .common import coupling_parameters, ovn_problem

FORMS = ("linear", "eigen", "coef")


@dataclass
class Formulation:
    """A CVXPY problem for one OvN problem; ``update`` changes α, β, γ without recompiling."""

    problem: Problem
    form: str
    cvx: cp.Problem
    Z: cp.Variable
    b: cp.Variable
    parameters: dict
    to_coef: Callable[[np.ndarray], np.ndarray]

    def update(self, problem: Problem) -> None:
        """Take the hyperparameters of ``problem`` (same data, e.g. from ``Problem.replace``)."""
        if problem.X is not self.problem.X or problem.variant != self.problem.variant:
            raise ValueError("update() needs a problem with the same data and variant "
                             "(use Problem.replace); build a new formulation otherwise")
        for name, value in coupling_parameters(problem).items():
            self.parameters[name].value = value
        self.problem = problem

    def solution(self):
        """(coef, b) in the reported parametrization, or (None, None) when the solver gave none."""
        if self.Z.value is None or self.b.value is None:
            return None, None
        return self.to_coef(np.asarray(self.Z.value)), np.asarray(self.b.value, dtype=np.float64)


def build(problem: Problem, form: str | None = None) -> Formulation:
    """The CVXPY problem of ``problem`` in the given form (default: "linear" or "eigen")."""
    if form is None:
        form = "eigen" if problem.is_kernel else "linear"
    if form not in FORMS:
        raise ValueError(f"form must be one of {FORMS}, got {form!r}")
    if (form == "linear") == problem.is_kernel:
        allowed = "'eigen' or 'coef'" if problem.is_kernel else "'linear'"
        raise ValueError(f"form={form!r} does not fit kernel={problem.kernel!r}; use {allowed}")
    if form == "linear":
        features, reg_factor, to_coef = problem.X, None, (lambda Z: Z)
    elif form == "eigen":
        factor = problem.kernel_factor
        features, reg_factor, to_coef = factor.features, None, factor.to_coef
    else:
        features, reg_factor, to_coef = problem.gram, problem.kernel_factor.features.T, (lambda Z: Z)
    cvx, Z, b, params = ovn_problem(problem, features, reg_factor)
    return Formulation(problem, form, cvx, Z, b, params, to_coef)


__all__ = ["FORMS", "Formulation", "build"]
