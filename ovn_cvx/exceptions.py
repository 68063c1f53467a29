"""The package's own exceptions, to be caught by type (never by message text).

Each also derives from the built-in exception it refines, so ``except ValueError`` keeps working.
"""
from __future__ import annotations


class OvNError(Exception):
    """Base class of the exceptions raised by ovn_cvx."""


class SolverNotAvailable(OvNError, ValueError):
    """The requested solver is not installed, or not a solver its ``library`` (CVXPY, qpsolvers) knows."""

    def __init__(self, solver: str, installed: tuple[str, ...], known: bool, library: str = "CVXPY"):
        self.solver, self.installed, self.known, self.library = solver, installed, known, library
        reason = "is not installed" if known else f"is not a known {library} solver"
        super().__init__(f"solver {solver!r} {reason}; installed solvers: {', '.join(installed) or 'none'}")


__all__ = ["OvNError", "SolverNotAvailable"]
