"""The one exact objective evaluator (docs/theory.md §2) and the hard-constraint residuals.

Every solver's reported objective comes from here, never only from the solver itself.
"""
from __future__ import annotations

import numpy as np

from ._validation import check_instance, naming
from .problem import Problem


def _check_solution(problem: Problem, coef, b):
    check_instance("problem", problem, Problem)
    with naming("coef"):
        coef = np.asarray(coef, dtype=np.float64)
    with naming("b"):
        b = np.asarray(b, dtype=np.float64)
    if coef.shape != problem.coef_shape:
        name = "A (N×K)" if problem.is_kernel else "W (M×K)"
        raise ValueError(f"coef must be {name} of shape {problem.coef_shape}, got {coef.shape}")
    if b.shape != (problem.n_classes,):
        raise ValueError(f"b must have shape ({problem.n_classes},), got {b.shape}")
    return coef, b


def training_decision(problem: Problem, coef, b) -> np.ndarray:
    """f_k(x_i) on the training set, shape (N, K): X W + 1bᵀ or G A + 1bᵀ (without forming G where the problem does
    not hold it: :meth:`~ovn_cvx.Problem.gram_product`).

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
    ndarray of shape (N, K)
        The decision values on the training patterns.

    Examples
    --------
    >>> import numpy as np, ovn_cvx
    >>> X = np.random.default_rng(0).normal(size=(30, 2))
    >>> problem = ovn_cvx.Problem.from_labels(X, np.arange(30) % 3)
    >>> result = ovn_cvx.solve(problem, method="mm")
    >>> F = ovn_cvx.training_decision(problem, result.coef, result.b)
    >>> F.shape, bool(np.allclose(F, result.decision_function(X)))
    ((30, 3), True)
    """
    coef, b = _check_solution(problem, coef, b)
    return (problem.gram_product(coef) if problem.is_kernel else problem.X @ coef) + b


def residuals(problem: Problem, coef, b) -> np.ndarray:
    """r_p = 1 − y_p f_{k_p}(x_{i_p}) for every pair.

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
    ndarray of shape (n_pairs,)
        The residuals, in the order of ``problem.pairs``.

    Examples
    --------
    >>> import numpy as np, ovn_cvx
    >>> X = np.random.default_rng(0).normal(size=(30, 2))
    >>> problem = ovn_cvx.Problem.from_labels(X, np.arange(30) % 3)
    >>> r = ovn_cvx.residuals(problem, np.zeros((2, 3)), np.zeros(3))
    >>> r.shape, float(r.max())                     # one residual per pair, all 1 at zero
    ((30,), 1.0)
    """
    return pair_residuals(problem, training_decision(problem, coef, b))


def pair_residuals(problem: Problem, F: np.ndarray) -> np.ndarray:
    """r_p = 1 − y_p F[i_p, k_p] from the training decision values F (N×K) of :func:`training_decision`: the
    residuals without a second product with X or the kernel when the caller holds F."""
    pairs = problem.pairs
    return 1.0 - pairs.sign * F[pairs.sample, pairs.label]


def regularizer(problem: Problem, coef) -> float:
    """R = ½ tr(W P Wᵀ) (linear) or ½ tr(Aᵀ G A P) (kernel), by the round-off-safe square of
    :meth:`~ovn_cvx.coupling.Coupling.square`."""
    coef, _ = _check_solution(problem, coef, np.zeros(problem.n_classes))
    return 0.5 * problem.coupling_ops.square(coef, problem.gram if problem.is_kernel else None)


def objective(problem: Problem, coef, b, residual: np.ndarray | None = None) -> float:
    """F(W, b) = R(W) + Σ_p c_p [1 − y_p f_{k_p}(x_{i_p})]_+ + B(b)  (docs/theory.md §2).

    ``residual``: the pair residuals r_p = 1 − y_p f_{k_p}(x_{i_p}) of (coef, b) when the caller has just
    computed them (the MM polish): saves a pass over the data; not recomputed or checked.
    The hard constraints are not enforced here; see :func:`constraint_violation`.

    Parameters
    ----------
    problem : Problem
        The training problem.
    coef : array-like of shape (M, K) or (N, K)
        W (linear formulation) or A (kernel formulation).
    b : array-like of shape (K,)
        The biases.
    residual : ndarray of shape (n_pairs,), optional
        The pair residuals of (coef, b), if already computed; None computes them.

    Returns
    -------
    float
        The objective value F.

    Examples
    --------
    >>> import numpy as np, ovn_cvx
    >>> X = np.random.default_rng(0).normal(size=(30, 2))
    >>> problem = ovn_cvx.Problem.from_labels(X, np.arange(30) % 3)
    >>> ovn_cvx.objective(problem, np.zeros((2, 3)), np.zeros(3))   # every hinge term is 1 at zero
    30.0
    >>> result = ovn_cvx.solve(problem, method="mm")
    >>> bool(ovn_cvx.objective(problem, result.coef, result.b) == result.objective)
    True
    """
    coef, b = _check_solution(problem, coef, b)
    if residual is None:
        residual = residuals(problem, coef, b)
    hinge = problem.cost @ np.maximum(residual, 0.0)
    bias = 0.0 if problem.hard_b else problem.bias_penalty * float(b.sum()) ** 2
    return regularizer(problem, coef) + float(hinge) + bias


def constraint_violation(problem: Problem, coef, b) -> dict[str, float]:
    """Residuals of the variant's hard constraints: |Σ_k b_k| and max |Σ_k w_k| (kernel: max_i |Σ_k A_ik|).

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
    dict of str to float
        ``"sum_b"`` for a hard-b variant and ``"sum_w"`` for a hard-w variant; empty for SwSb.

    Examples
    --------
    >>> import numpy as np, ovn_cvx
    >>> X = np.random.default_rng(0).normal(size=(30, 2))
    >>> problem = ovn_cvx.Problem.from_labels(X, np.arange(30) % 3, variant="HwHb")
    >>> ovn_cvx.constraint_violation(problem, np.ones((2, 3)), np.array([1.0, 0.0, -0.5]))
    {'sum_b': 0.5, 'sum_w': 3.0}
    """
    coef, b = _check_solution(problem, coef, b)
    out = {}
    if problem.hard_b:
        out["sum_b"] = abs(float(b.sum()))
    if problem.hard_w:
        out["sum_w"] = float(np.abs(coef.sum(axis=1)).max())
    return out
