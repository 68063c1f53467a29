"""The package's own exceptions, to be caught by type (never by message text).

Each also derives from the built-in exception it refines, so ``except ValueError`` keeps working.
"""
from __future__ import annotations


class OvNError(Exception):
    """Base class of the exceptions raised by ovn_cvx."""


class SolverNotAvailable(OvNError, ValueError):
    """The requested solver is not installed, or not a solver its ``library`` (CVXPY, qpsolvers) knows.

    Parameters
    ----------
    solver : str
        The requested solver.
    installed : tuple of str
        The installed solvers, named in the message.
    known : bool
        Whether ``library`` knows the solver (then it is only not installed).
    library : str, default="CVXPY"
        The library the solver was requested from.
    """

    def __init__(self, solver: str, installed: tuple[str, ...], known: bool, library: str = "CVXPY"):
        self.solver, self.installed, self.known, self.library = solver, installed, known, library
        reason = "is not installed" if known else f"is not a known {library} solver"
        super().__init__(f"solver {solver!r} {reason}; installed solvers: {', '.join(installed) or 'none'}")


class InsufficientMemory(OvNError, MemoryError):
    """A solve would need more memory than the machine has available (checked before allocating it).

    Parameters
    ----------
    what : str
        What would need the memory, named in the message.
    needed : int
        The bytes needed.
    available : int
        The bytes available.
    remedy : str
        What to do instead, appended to the message.
    """

    def __init__(self, what: str, needed: int, available: int, remedy: str):
        self.needed, self.available = needed, available
        super().__init__(f"{what} needs about {_size(needed)}, more than the {_size(available)} this machine has "
                         f"available; {remedy}")


class DegenerateLabelWarning(UserWarning):
    """A fitted label's decision values are the same for every training pattern (w_k ≈ 0): it is predicted for every
    pattern or for none. The message says which labels and how to fix it; filter it by class when degenerate
    labels are expected."""


def _size(nbytes: int) -> str:
    return f"{nbytes / 2**30:.1f} GiB" if nbytes >= 2**30 else f"{nbytes / 2**20:.1f} MiB"


__all__ = ["DegenerateLabelWarning", "InsufficientMemory", "OvNError", "SolverNotAvailable"]
