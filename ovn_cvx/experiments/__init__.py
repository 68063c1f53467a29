"""Reproduction of the paper's experiments: ``ovn-cvx reproduce`` (tables, figures, report).

Library entry points: :func:`reproduce` (everything), :func:`run_table` (one table),
:class:`ReproduceConfig` (seeds, grids, subsampling), :mod:`.paper` (the paper's reported numbers).
"""
from .protocols import Grid, evaluate, sigma_to_gamma
from .reproduce import reproduce
from .tables import TABLES, ReproduceConfig, run_table, summary_markdown, to_markdown

__all__ = ["Grid", "ReproduceConfig", "TABLES", "evaluate", "reproduce", "run_table", "sigma_to_gamma",
           "summary_markdown", "to_markdown"]
