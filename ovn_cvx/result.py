"""The one result type every solver back end returns."""
from __future__ import annotations

from dataclasses import dataclass, field


import numpy as np
from sklearn.utils.validation import check_array

from .problem import Problem

#: the status that means "a solution to the requested accuracy": CVXPY's solver verdict, or (fast solver) a
#: proven bound on F − F* within ``gap_tol`` (docs/theory.md §6)
SUCCESS_STATUSES = ("optimal",)


@dataclass
class SolveResult:
    """Solution of an OvN problem.

    ``coef`` is W (M×K) for the linear formulation and A (N×K) for kernels; ``objective`` comes from
    :func:`ovn_cvx.objective`, not from the solver. ``status`` is the solver's own verdict
    ("optimal", "optimal_inaccurate", "infeasible", "unbounded", "user_limit", "solver_error" for
    CVXPY; "optimal", "inaccurate" or "max_iter" for the fast solver, which says "optimal" only with a proven
    bound on F − F*, in ``info["gap_bound"]``); only "optimal" counts as ``success``.
    When no solution was produced, ``coef`` and ``b`` are None and ``objective`` is NaN.
    """

    problem: Problem
    coef: np.ndarray | None
    b: np.ndarray | None
    objective: float
    status: str
    method: str
    solver: str
    solve_time: float
    compile_time: float = 0.0
    iterations: int | None = None
    history: np.ndarray | None = None
    info: dict = field(default_factory=dict)

    @property
    def success(self) -> bool:
        return self.status in SUCCESS_STATUSES and self.coef is not None

    @property
    def has_solution(self) -> bool:
        return self.coef is not None

    def _require_solution(self):
        if self.coef is None:
            raise RuntimeError(f"{self.method}/{self.solver} produced no solution (status {self.status!r}"
                               + (f": {self.info['error']}" if "error" in self.info else "") + ")")

    def decision_function(self, X_new) -> np.ndarray:
        """f_k(x) for every row of X_new, shape (n, K): X_new W + 1bᵀ or κ(X_new, X_train) A + 1bᵀ."""
        self._require_solution()
        if self.problem.is_kernel:
            return self.problem.kernel_matrix(X_new) @ self.coef + self.b
        X_new = check_array(X_new, dtype=np.float64, input_name="X")
        if X_new.shape[1] != self.problem.n_features:
            raise ValueError(f"X has {X_new.shape[1]} features, the problem has {self.problem.n_features}")
        return X_new @ self.coef + self.b

    def __repr__(self) -> str:
        return (f"SolveResult(method={self.method!r}, solver={self.solver!r}, status={self.status!r}, "
                f"objective={self.objective:.10g}, iterations={self.iterations}, "
                f"solve_time={self.solve_time:.3g}s, compile_time={self.compile_time:.3g}s)")
