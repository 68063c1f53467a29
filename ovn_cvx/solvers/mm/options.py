"""The MM solver's settings, validated once, and the result it returns."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...duality import GapBound
from ...problem import Problem
from ...result import SolveResult
from ..progress import SILENT, Progress
from ..verdict import report_fields

FORMS = ("auto", "primal", "pair", "matrix-free")
FINISHES = ("auto", "interior", "polish", "none")


def check_warm_start(problem: Problem, warm_start):
    if warm_start is None:
        return None, None
    if not isinstance(warm_start, SolveResult):
        raise TypeError(f"warm_start must be a SolveResult, got {type(warm_start).__name__}")
    if not warm_start.has_solution:
        raise ValueError(f"warm_start holds no solution (status {warm_start.status!r})")
    old = warm_start.problem
    if old.is_kernel != problem.is_kernel or old.variant != problem.variant:
        raise ValueError(f"warm_start solves a {old.variant} {'kernel' if old.is_kernel else 'linear'} problem, "
                         f"not a {problem.variant} {'kernel' if problem.is_kernel else 'linear'} one")
    coef, b = np.asarray(warm_start.coef, dtype=float), np.asarray(warm_start.b, dtype=float)
    if coef.shape != problem.coef_shape or b.shape != (problem.n_classes,):
        raise ValueError(f"warm_start has coef {coef.shape} and b {b.shape}, the problem needs "
                         f"{problem.coef_shape} and ({problem.n_classes},)")
    if not (np.isfinite(coef).all() and np.isfinite(b).all()):
        raise ValueError("warm_start has non-finite coefficients (NaN or inf)")
    return coef, b


@dataclass(frozen=True)
class Options:
    """The MM run's settings, validated once (see :func:`solve_mm`)."""

    eps: float
    decrease_tol: float
    gap_tol: float
    max_iter: int
    relax: bool
    newton: bool
    finish: str
    polish_every: int
    burn_in: int
    #: the report of ``verbose`` (silent by default)
    progress: Progress = SILENT

    @property
    def polishes(self) -> bool:
        return self.finish == "polish"


def check_flag(name, flag):
    if not isinstance(flag, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(flag).__name__}")
    return bool(flag)


def pack_result(problem, stepper, coef, b, bound: GapBound, gap_tol, status, iterations, info, history=None):
    finish = info.pop("finish")
    return SolveResult(problem=problem, coef=coef, b=b, objective=bound.primal, status=status, method="mm",
                       solver=f"MM-{stepper.form}", solve_time=0.0, iterations=iterations,
                       history=None if history is None else np.asarray(history), form=stepper.form, finish=finish,
                       info=info, **report_fields(problem, bound, gap_tol))
