"""The eight OvN problems (linear/kernel × SwSb, SwHb, HwSb, HwHb) as CVXPY problems.

``build(problem)`` returns a :class:`Formulation`: the compiled-once CVXPY problem plus the map from
its variables to the reported coefficients. A linear problem (kernel="linear") has variables W (M×K) and b;
a kernel problem has two parametrizations (``parametrization=``):

* ``"eigen"`` (default): the linear problem on the eigen-features L of G = L Lᵀ; variables
  C (r×K) with A = U_r diag(s_r^{−1/2}) C (docs/theory.md §4.2b). Well conditioned.
* ``"coef"``: the paper's parametrization, variables A (N×K) directly, regularizer
  ½ tr(Aᵀ L Lᵀ A P), margins G A. Numerically fragile (singular KKT systems); kept for comparison.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import cvxpy as cp
import numpy as np

from ..problem import Problem
from .common import coupling_parameters, ovn_problem

PARAMETRIZATIONS = ("eigen", "coef")


@dataclass
class Formulation:
    """A CVXPY problem for one OvN problem; ``update`` changes α, β, γ without recompiling.

    Parameters
    ----------
    problem : Problem
        The problem whose hyperparameters the CVXPY parameters hold.
    parametrization : str or None
        The parametrization of a kernel problem ("eigen" or "coef"); None for a linear one.
    cvx : cvxpy.Problem
        The CVXPY problem.
    Z : cvxpy.Variable
        The coefficient variable, in the parametrization.
    b : cvxpy.Variable
        The bias variable.
    parameters : dict
        The CVXPY parameters of the hyperparameters, by name.
    to_coef : callable
        Maps a value of ``Z`` to the reported coefficients.

    Examples
    --------
    >>> import numpy as np, ovn_cvx
    >>> from ovn_cvx.formulations import build
    >>> X = np.random.default_rng(0).normal(size=(30, 2))
    >>> formulation = build(ovn_cvx.Problem.from_labels(X, np.arange(30) % 3, alpha=0.2))
    >>> optima = []
    >>> for beta in (0.5, 1.0, 2.0):                      # a path over beta, compiled once
    ...     formulation.update(formulation.problem.replace(beta=beta))
    ...     optima.append(round(formulation.cvx.solve(solver="CLARABEL"), 4))
    >>> optima == sorted(optima)                          # F* grows with beta
    True
    """

    problem: Problem
    parametrization: str | None  # of a kernel problem; None for a linear one
    cvx: cp.Problem
    Z: cp.Variable
    b: cp.Variable
    parameters: dict
    to_coef: Callable[[np.ndarray], np.ndarray]

    def update(self, problem: Problem) -> None:
        """Take the hyperparameters of ``problem`` (same data, e.g. from ``Problem.replace``).

        Parameters
        ----------
        problem : Problem
            A problem with the same data and variant.
        """
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


def build(problem: Problem, parametrization: str | None = None) -> Formulation:
    """The CVXPY problem of ``problem``; a kernel problem in the given parametrization (default "eigen").

    Parameters
    ----------
    problem : Problem
        The problem.
    parametrization : {"eigen", "coef"} or None, default=None
        The parametrization of a kernel problem; must be None for a linear one.

    Returns
    -------
    Formulation
        The compiled-once CVXPY problem.

    Examples
    --------
    >>> import ovn_cvx
    >>> from ovn_cvx.datasets import make_data
    >>> from ovn_cvx.formulations import build
    >>> problem = ovn_cvx.Problem(*make_data(n_samples=30, n_features=2))
    >>> formulation = build(problem)
    >>> _ = formulation.cvx.solve(solver="CLARABEL")
    >>> coef, b = formulation.solution()
    >>> formulation.cvx.status, bool(abs(formulation.cvx.value - ovn_cvx.objective(problem, coef, b)) < 1e-6)
    ('optimal', True)
    """
    if not problem.is_kernel:
        if parametrization is not None:
            raise ValueError(f"parametrization={parametrization!r} applies to kernel problems only; a linear "
                             "problem (kernel='linear') has one, pass None")
        features, reg_factor, to_coef = problem.X, None, (lambda Z: Z)
    elif parametrization is None or parametrization == "eigen":
        parametrization = "eigen"
        factor = problem.kernel_factor
        features, reg_factor, to_coef = factor.features, None, factor.to_coef
    elif parametrization == "coef":
        features, reg_factor, to_coef = problem.gram, problem.kernel_factor.features.T, (lambda Z: Z)
    else:
        raise ValueError(f"parametrization must be one of {PARAMETRIZATIONS} (or None), got {parametrization!r}")
    cvx, Z, b, params = ovn_problem(problem, features, reg_factor)
    return Formulation(problem, parametrization, cvx, Z, b, params, to_coef)


__all__ = ["Formulation", "PARAMETRIZATIONS", "build"]
