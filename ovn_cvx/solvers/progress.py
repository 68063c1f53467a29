"""The fast solvers' progress report (``verbose=True``): one line on stdout per iteration, round or exact evaluation,
never per pair step; nothing, and no work, when off (scikit-learn's LinearSVC/SVC ``verbose``)."""
from __future__ import annotations

import numbers

import numpy as np


#: the fields printed to 10 significant digits: F, D(μ), F̃_ε
OBJECTIVES = frozenset({"objective", "primal", "dual", "smoothed"})


class Progress:
    """Prints ``"<solver> <event> <number>: <name> <value>, ..."`` lines when enabled.

    Parameters
    ----------
    solver : str
        The prefix of every line ("mm", "smo", "dcd").
    verbose : bool
        Whether to print; anything else than a bool raises a TypeError naming ``verbose``.

    Examples
    --------
    >>> progress = Progress("mm", True)
    >>> progress("iteration", 3, moving=2, step=0.5)
    mm iteration 3: moving 2, step 0.5
    >>> bool(Progress("mm", False))
    False
    """

    def __init__(self, solver: str, verbose: bool):
        if not isinstance(verbose, (bool, np.bool_)):
            raise TypeError(f"verbose must be a bool, got {type(verbose).__name__}")
        self.solver, self.enabled = solver, bool(verbose)

    def __bool__(self) -> bool:
        return self.enabled

    def __call__(self, event: str, number: int | None = None, **fields) -> None:
        """One line: the event, its number (an iteration, a round, a step count) and the fields (None: left out)."""
        if not self.enabled:
            return
        head = f"{self.solver} {event}" + ("" if number is None else f" {number}")
        parts = [f"{name.replace('_', ' ')} {_format(value, name in OBJECTIVES)}" for name, value in fields.items()
                 if value is not None]
        print(f"{head}: {', '.join(parts)}" if parts else head, flush=True)

    def evaluation(self, number: int, bound, **fields) -> None:
        """The line of an exact evaluation: ``fields`` (where the run is), then F, D(μ) and the proven relative bound
        (F − D)/max(1, |F|) of ``bound`` (a :class:`~ovn_cvx.duality.GapBound`)."""
        self("evaluation", number, **fields, primal=bound.primal, dual=bound.dual, bound=bound.relative)

    def done(self, result) -> None:
        """The closing line: the result's status, iterations, time and proven relative bound."""
        self("done", status=result.status, iterations=result.iterations, seconds=result.solve_time,
             bound=result.relative_gap_bound)


def _format(value, objective: bool) -> str:
    """Integers as they are, objective values to 10 significant digits (their progress is in the last ones), other
    numbers to 4 (a bound reads as the result's to 5e-4 relative), anything else as its str."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        return str(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    return f"{float(value):.10g}" if objective else f"{float(value):.4g}"


#: the report that prints nothing: the default of the solvers' parts
SILENT = Progress("", False)
