"""A user's solver as a comparison method: a callable ``problem -> SolveResult`` or ``problem -> (coef, b, status)``.

:func:`call_plugin` runs it and turns its answer into a :class:`~ovn_cvx.result.SolveResult` that
:mod:`ovn_cvx.verify.comparison` judges exactly like the package's own results (claimed success = status
"optimal" with a solution; correct = the independent checks against the certified reference; certified = the
KKT certificate). :func:`load_callable` resolves the command line's ``module:function``.
"""
from __future__ import annotations

import dataclasses
import importlib
import time

import numpy as np

from ..objective import objective
from ..problem import Problem
from ..result import SolveResult


def load_callable(spec: str):
    """``"package.module:function"`` → the function; ValueError naming the spec when it cannot be loaded."""
    if not isinstance(spec, str):
        raise TypeError(f"a method must be a string 'module:function', got {type(spec).__name__}")
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name.strip() or not attribute.strip():
        raise ValueError(f"a method must be given as 'module:function', got {spec!r}")
    try:
        module = importlib.import_module(module_name.strip())
    except ImportError as err:
        raise ValueError(f"method {spec!r}: cannot import module {module_name!r} ({err})") from None
    function = module
    for part in attribute.strip().split("."):
        function = getattr(function, part, None)
        if function is None:
            raise ValueError(f"method {spec!r}: module {module_name!r} has no attribute {attribute!r}")
    if not callable(function):
        raise ValueError(f"method {spec!r}: {attribute!r} is not callable")
    return function


def _as_result(problem: Problem, label: str, out, elapsed: float) -> SolveResult:
    if isinstance(out, SolveResult):  # its objective is scored here, not taken on trust
        value = objective(problem, out.coef, out.b) if out.coef is not None else np.nan
        return dataclasses.replace(out, problem=problem, objective=value,
                                   info={**out.info, "claimed_objective": out.objective})
    if not (isinstance(out, tuple) and len(out) == 3):
        raise TypeError(f"method {label!r} must return a SolveResult or (coef, b, status), got "
                        f"{type(out).__name__}")
    coef, b, status = out
    if not isinstance(status, str):
        raise TypeError(f"method {label!r} returned a status of type {type(status).__name__}, not a string")
    if coef is None or b is None:
        return SolveResult(problem=problem, coef=None, b=None, objective=np.nan, status=status, method="plugin",
                           solver=label, solve_time=elapsed)
    coef, b = np.asarray(coef, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if coef.shape != problem.coef_shape or b.shape != (problem.n_classes,):
        raise ValueError(f"method {label!r} returned coef of shape {coef.shape} and b of shape {b.shape}; the "
                         f"problem needs {problem.coef_shape} and ({problem.n_classes},)")
    return SolveResult(problem=problem, coef=coef, b=b, objective=objective(problem, coef, b), status=status,
                       method="plugin", solver=label, solve_time=elapsed)


def call_plugin(function, problem: Problem, label: str, options: dict) -> SolveResult:
    """Run a user's solver. An exception it raises is its result (status "solver_error", the error in
    ``info["error"]``), as a CVXPY solver's error is, so that one failing method does not stop a comparison;
    a malformed return value is a TypeError/ValueError naming the method."""
    start = time.perf_counter()
    try:
        out = function(problem, **options)
    except Exception as err:  # noqa: BLE001 — any failure of foreign code is that method's result
        return SolveResult(problem=problem, coef=None, b=None, objective=np.nan, status="solver_error",
                           method="plugin", solver=label, solve_time=time.perf_counter() - start,
                           info={"error": f"{type(err).__name__}: {err}"})
    return _as_result(problem, label, out, time.perf_counter() - start)


__all__ = ["call_plugin", "load_callable"]
