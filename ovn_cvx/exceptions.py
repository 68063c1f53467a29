"""The package's own exceptions, to be caught by type (never by message text).

Each also derives from the built-in exception it refines, so ``except ValueError`` keeps working.
"""
from __future__ import annotations


class OvNError(Exception):
    """Base class of the exceptions raised by ovn_cvx.

    Examples
    --------
    >>> import ovn_cvx
    >>> from ovn_cvx.datasets import make_data
    >>> from ovn_cvx.exceptions import OvNError
    >>> from ovn_cvx.qp import solve_qp
    >>> try:
    ...     solve_qp(ovn_cvx.Problem(*make_data(n_samples=20, n_features=2)), solver="no-such-backend")
    ... except OvNError as err:                        # catches every exception of the package
    ...     print(type(err).__name__, isinstance(err, ValueError))
    SolverNotAvailable True
    """


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

    Examples
    --------
    >>> import ovn_cvx
    >>> from ovn_cvx.datasets import make_data
    >>> from ovn_cvx.exceptions import SolverNotAvailable
    >>> problem = ovn_cvx.Problem(*make_data(n_samples=30, n_features=2))
    >>> try:
    ...     ovn_cvx.solve(problem, method="cvxpy", solver="NO-SUCH-SOLVER")
    ... except SolverNotAvailable as err:
    ...     print(err)
    solver 'NO-SUCH-SOLVER' is not a known CVXPY solver; installed solvers: ...CLARABEL...
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

    Examples
    --------
    >>> from ovn_cvx.exceptions import InsufficientMemory
    >>> err = InsufficientMemory("the Gram matrix", needed=8 * 2**40, available=16 * 2**30, remedy="use fewer samples")
    >>> print(err)
    the Gram matrix needs about 8192.0 GiB, more than the 16.0 GiB this machine has available; use fewer samples
    >>> isinstance(err, MemoryError), err.needed > err.available
    (True, True)
    """

    def __init__(self, what: str, needed: int, available: int, remedy: str):
        self.needed, self.available = needed, available
        super().__init__(f"{what} needs about {_size(needed)}, more than the {_size(available)} this machine has "
                         f"available; {remedy}")


class DegenerateLabelWarning(UserWarning):
    """A fitted label's decision values are the same for every training pattern (w_k ≈ 0): it is predicted for every
    pattern or for none. The message says which labels and how to fix it; filter it by class when degenerate
    labels are expected.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from ovn_cvx import OvNClassifier
    >>> from ovn_cvx.exceptions import DegenerateLabelWarning
    >>> X = np.random.default_rng(0).normal(size=(30, 2))
    >>> Y = np.column_stack([np.ones(30, int), np.arange(30) % 2])   # label 0: every pattern
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always", DegenerateLabelWarning)
    ...     _ = OvNClassifier(negatives="none").fit(X, Y)
    >>> [warning.category.__name__ for warning in caught]
    ['DegenerateLabelWarning']
    >>> with warnings.catch_warnings():                # expected: filter it by class
    ...     warnings.simplefilter("ignore", DegenerateLabelWarning)
    ...     _ = OvNClassifier(negatives="none").fit(X, Y)
    """


def _size(nbytes: int) -> str:
    return f"{nbytes / 2**30:.1f} GiB" if nbytes >= 2**30 else f"{nbytes / 2**20:.1f} MiB"


__all__ = ["DegenerateLabelWarning", "InsufficientMemory", "OvNError", "SolverNotAvailable"]
