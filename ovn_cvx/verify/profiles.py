"""Dolan–Moré performance profiles of a comparison table (as qpbenchmark draws them).

For problem p and method s let t_ps be its time when it solved p (``checked_success``: claimed success AND the
checks against the certified reference), else ∞; the performance ratio is r_ps = t_ps / min_s t_ps, and the
profile ρ_s(τ) is the share of all problems with r_ps ≤ τ: ρ_s(1) is how often s is the fastest, ρ_s(∞) its
success rate (E. D. Dolan and J. J. Moré, "Benchmarking optimization software with performance profiles",
Math. Program. 91:201–213, 2002).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .._reports import MISSING_MATPLOTLIB, matplotlib_available

PROBLEM = ["case", "formulation"]
#: the τ at which the report tabulates the profile
REPORT_TAUS = (1.0, 1.5, 2.0, 5.0, 10.0, 100.0)


def performance_ratios(comparison: pd.DataFrame, time_column: str = "wall_time") -> pd.DataFrame:
    """r_ps: one row per problem (case, formulation), one column per method that ran (first-appearance order);
    ∞ where the method did not solve the problem, or did not run on it."""
    if time_column not in comparison:
        raise ValueError(f"time_column {time_column!r} is not a column of the comparison table")
    ran = comparison[comparison["status"] != "unavailable"]
    solved = ran["checked_success"].astype(bool)
    if (ran.loc[solved, time_column] <= 0).any():
        raise ValueError(f"time_column {time_column!r} must be positive wherever a method solved a problem")
    times = ran.assign(t=np.where(solved, ran[time_column], np.inf)).pivot_table(
        index=PROBLEM, columns="method", values="t", aggfunc="min", sort=False)
    times = times.reindex(columns=list(dict.fromkeys(ran["method"]))).fillna(np.inf)
    best = times.min(axis=1)
    return times.div(best.where(np.isfinite(best)), axis=0).fillna(np.inf)  # nothing solved p: ∞ for all


def performance_profile(comparison: pd.DataFrame, taus=None, time_column: str = "wall_time") -> pd.DataFrame:
    """ρ_s(τ): index τ (default: every finite ratio and 1, sorted — the profile's breakpoints), one column per
    method, the share of all problems solved within τ× the best time.

    Parameters
    ----------
    comparison : DataFrame
        The comparison table (one row per problem × method), as from :func:`~ovn_cvx.verify.compare`.
    taus : array-like of float or None, default=None
        The ratios τ ≥ 1 of the profile; None uses every finite ratio and 1.
    time_column : str, default="wall_time"
        The column holding the times.

    Returns
    -------
    DataFrame
        Index τ, one column per method.

    Examples
    --------
    >>> import pandas as pd
    >>> from ovn_cvx.verify import performance_profile
    >>> table = pd.DataFrame({"case": ["a", "a", "b", "b"], "formulation": "linear-SwHb", "status": "optimal",
    ...                       "method": ["MM", "CLARABEL", "MM", "CLARABEL"],
    ...                       "checked_success": [True, True, True, False], "wall_time": [0.1, 0.2, 0.3, 0.1]})
    >>> performance_profile(table)        # the share of problems solved within tau times the best time
          MM  CLARABEL
    tau
    1.0  1.0       0.0
    2.0  1.0       0.5
    """
    ratios = performance_ratios(comparison, time_column)
    if taus is None:
        finite = ratios.to_numpy()[np.isfinite(ratios.to_numpy())]
        taus = np.union1d(finite, [1.0])
    taus = np.asarray(taus, dtype=float)
    if taus.ndim != 1 or taus.size == 0 or (taus < 1).any():
        raise ValueError(f"taus must be a non-empty 1-D sequence of numbers >= 1, got {taus!r}")
    shares = {method: [(ratios[method] <= tau).mean() for tau in taus] for method in ratios.columns}
    return pd.DataFrame(shares, index=pd.Index(taus, name="tau"))


def plot_performance_profile(profile: pd.DataFrame, path, title: str = "Performance profile"):
    """Draw ``profile`` (from :func:`performance_profile`) as steps on a log τ axis into ``path`` (PNG); returns the
    path, or :data:`~ovn_cvx._reports.MISSING_MATPLOTLIB` (drawing nothing) without matplotlib."""
    if not matplotlib_available():
        return MISSING_MATPLOTLIB
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    taus = profile.index.to_numpy()
    right = max(2.0, taus.max() * 1.5)  # the plateau after the last breakpoint is each method's success rate
    fig, ax = plt.subplots(figsize=(8.0, 5.0))
    styles = ["-", "--", ":", "-."]
    for i, method in enumerate(profile.columns):
        ax.step(np.append(taus, right), np.append(profile[method].to_numpy(), profile[method].iloc[-1]),
                where="post", linestyle=styles[(i // 10) % len(styles)], label=method)
    ax.set_xscale("log")
    ax.set_xlim(1.0, right)
    ax.set_ylim(0.0, 1.02)
    ax.set_xlabel("τ (time within τ × the fastest method's, per problem)")
    ax.set_ylabel("share of problems solved and correct")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2, loc="lower right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


__all__ = ["REPORT_TAUS", "performance_profile", "performance_ratios", "plot_performance_profile"]
