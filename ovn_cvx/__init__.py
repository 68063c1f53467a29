"""ovn_cvx: the "one versus none" multiclass/multilabel SVM — reference formulations, solvers, checks."""
from .objective import constraint_violation, objective, residuals, training_decision
from .problem import VARIANTS, Problem, alpha_interval
from .result import SolveResult
from .solve import solve
from .estimator import OvNClassifier
from . import datasets

__version__ = "0.1.0"
__all__ = ["OvNClassifier", "Problem", "SolveResult", "VARIANTS", "alpha_interval", "constraint_violation",
           "datasets", "objective", "residuals", "solve", "training_decision"]
