"""The package's own exceptions, to be caught by type (never by message text).

Each also derives from the built-in exception it refines, so ``except ValueError`` keeps working.
"""
from __future__ import annotations


class OvNError(Exception):
    """Base class of the exceptions raised by ovn_cvx."""


class SolverNotAvailable(OvNError, ValueError):
    """The requested CVXPY solver is not installed, or not a solver CVXPY knows."""

    def __init__(self, solver: str, installed: tuple[str, ...], known: bool):
        self.solver, self.installed, self.known = solver, installed, known
        reason = "is not installed" if known else "is not a known CVXPY solver"
        super().__init__(f"solver {solver!r} {reason}; installed solvers: {', '.join(installed)}")


__all__ = ["OvNError", "SolverNotAvailable"]
