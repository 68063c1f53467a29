"""ovn_cvx: the "one versus none" multiclass/multilabel SVM — reference formulations, solvers, checks.

The public names are imported on first use (``ovn_cvx.solve``, ``from ovn_cvx import Problem``), so that the
command line answers ``--version`` and ``--help`` without importing scikit-learn or CVXPY.
"""
from importlib import metadata as _metadata
from typing import TYPE_CHECKING as _TYPE_CHECKING

from ._lazy import attach as _attach

try:
    __version__ = _metadata.version("ovn-cvx")
except _metadata.PackageNotFoundError:  # a source tree that is not installed
    __version__ = "0+unknown"

__all__ = ["OvNClassifier", "Problem", "SolveResult", "VARIANTS", "alpha_interval", "constraint_violation",
           "datasets", "objective", "residuals", "solve", "training_decision"]
_attach(__name__, {"OvNClassifier": "estimator", "Problem": "problem", "SolveResult": "result",
                   "VARIANTS": "problem", "alpha_interval": "problem", "constraint_violation": "objective",
                   "datasets": "datasets", "objective": "objective", "residuals": "objective", "solve": "solve",
                   "training_decision": "objective"})

if _TYPE_CHECKING:  # the names as static analysis sees them
    from . import datasets
    from .estimator import OvNClassifier
    from .objective import constraint_violation, objective, residuals, training_decision
    from .problem import VARIANTS, Problem, alpha_interval
    from .result import SolveResult
    from .solve import solve
