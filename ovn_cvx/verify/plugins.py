"""A user's solver as a comparison method: a callable ``problem -> SolveResult`` or ``problem -> (coef, b, status)``.

:func:`call_plugin` runs it and turns its answer into a :class:`~ovn_cvx.result.SolveResult` that
:mod:`ovn_cvx.verify.comparison` judges exactly like the package's own results (claimed success = status
"optimal" with a solution; correct = the independent checks against the certified reference; certified = the
KKT certificate). :func:`load_callable` resolves the command line's ``module:function``, from the current
directory as ``python -m`` would.
"""
from __future__ import annotations

import dataclasses
import importlib
import os
import sys

import numpy as np

from ..objective import objective
from ..problem import Problem
from ..result import SolveResult
from ..solvers.bound import bound_fields
from ..solvers.verdict import GAP_TOL
from . import _worker

#: seconds a user's solver may take on one problem before it is stopped
DEFAULT_TIME_LIMIT = 300.0
#: the statuses of a user's solver that gave no answer: it raised, exited or ended its process, took longer
#: than its time limit, or answered with something that is not a solution
NO_ANSWER = ("solver_error", "time_limit", "invalid_answer")
#: the key of a user's result's ``info``: seconds before its call started (a new worker process's start, the
#: transfer and unpickling of the problem), not charged to the method's wall time
WORKER_LOAD_TIME = "worker_load_time"


def load_callable(spec: str):
    """``"package.module:function"`` → the function; ValueError naming the spec when it cannot be loaded."""
    if not isinstance(spec, str):
        raise TypeError(f"a method must be a string 'module:function', got {type(spec).__name__}")
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name.strip() or not attribute.strip():
        raise ValueError(f"a method must be given as 'module:function', got {spec!r}")
    if os.getcwd() not in sys.path and "" not in sys.path:  # a console script does not search it
        sys.path.insert(0, os.getcwd())
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


def _invalid(problem, label, message, elapsed) -> SolveResult:
    return _no_answer(problem, label, "invalid_answer", f"returned an invalid answer: {message}", elapsed)


def _no_answer(problem, label, status, message, elapsed) -> SolveResult:
    return SolveResult(problem=problem, coef=None, b=None, objective=np.nan, status=status, method="plugin",
                       solver=label, solve_time=elapsed, info={"error": message})


def _as_result(problem: Problem, label: str, out, elapsed: float) -> SolveResult:
    """The user's answer as a SolveResult, its objective scored here (not taken on trust); an answer that is not
    a SolveResult or (coef, b, status), a status that is not a string, or coefficients of the wrong shape or not
    finite is the status "invalid_answer" (the reason in ``info["error"]``)."""
    if isinstance(out, SolveResult):
        coef, b, status = out.coef, out.b, out.status
    elif isinstance(out, tuple) and len(out) == 3:
        coef, b, status = out
    else:
        return _invalid(problem, label, f"a {type(out).__name__}, not a SolveResult or (coef, b, status)", elapsed)
    if not isinstance(status, str):
        return _invalid(problem, label, f"a status of type {type(status).__name__}, not a string", elapsed)
    if coef is None or b is None:  # no solution, and the method says why in its status
        return SolveResult(problem=problem, coef=None, b=None, objective=np.nan, status=status, method="plugin",
                           solver=label, solve_time=elapsed)
    try:
        coef, b = np.asarray(coef, dtype=np.float64), np.asarray(b, dtype=np.float64)
    except (TypeError, ValueError) as err:
        return _invalid(problem, label, f"coef and b must be arrays of numbers ({err})", elapsed)
    if coef.shape != problem.coef_shape or b.shape != (problem.n_classes,):
        return _invalid(problem, label, f"coef of shape {coef.shape} and b of shape {b.shape}; the problem needs "
                                        f"{problem.coef_shape} and ({problem.n_classes},)", elapsed)
    if not (np.isfinite(coef).all() and np.isfinite(b).all()):
        return _invalid(problem, label, "coef or b has NaN or infinite entries", elapsed)
    value = objective(problem, coef, b)
    # the proven bound of the user's point, computed here (docs/theory.md §6): the user's status stays their claim
    bound, _, _ = bound_fields(problem, coef, b, GAP_TOL)
    if isinstance(out, SolveResult):  # the user's other fields kept; the claimed objective beside the scored one
        return dataclasses.replace(out, problem=problem, coef=coef, b=b, objective=value,
                                   info={**out.info, "claimed_objective": out.objective}, **bound)
    return SolveResult(problem=problem, coef=coef, b=b, objective=value, status=status, method="plugin",
                       solver=label, solve_time=elapsed, **bound)


def _answer(function, problem: Problem, options: dict):
    """In the worker process: the user's answer, a SolveResult without its copy of the problem (sent back)."""
    out = function(problem, **options)
    return dataclasses.replace(out, problem=None) if isinstance(out, SolveResult) else out


def call_plugin(function, problem: Problem, label: str, options: dict,
                time_limit: float = DEFAULT_TIME_LIMIT) -> SolveResult:
    """Run a user's solver in a worker process (:mod:`ovn_cvx.verify._worker`), so that whatever it does is its
    own result and the comparison goes on: an exception it raises, a ``sys.exit`` and the end of its process are
    the status "solver_error", no answer within ``time_limit`` seconds "time_limit" (the worker is stopped), a
    malformed answer "invalid_answer" (see :func:`_as_result`); the reason is in ``info["error"]``, as for a CVXPY
    solver's error. ``info[WORKER_LOAD_TIME]``: the seconds before the call started in the worker."""
    outcome = _worker.call(_answer, (function, problem, options), time_limit)
    if outcome.kind == "returned":
        result = _as_result(problem, label, outcome.value, outcome.seconds)
    else:
        status = {"timeout": "time_limit", "unsendable": "invalid_answer"}.get(outcome.kind, "solver_error")
        result = _no_answer(problem, label, status, outcome.message, outcome.seconds)
    result.info[WORKER_LOAD_TIME] = outcome.load_seconds
    return result


__all__ = ["DEFAULT_TIME_LIMIT", "NO_ANSWER", "WORKER_LOAD_TIME", "call_plugin", "load_callable"]
