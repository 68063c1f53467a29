"""Reproduction of the paper's experiments: ``ovn-cvx reproduce`` (tables, verdicts, figures, report).

Library entry points: :func:`reproduce` (everything), :func:`run_table` (one table), :class:`ReproduceConfig`
(seeds, grids, subsampling), :mod:`.paper` (the paper's numbers, with their table and row), :func:`assess` and
:func:`check_claims` (each paper number and claim against a run's results, :mod:`.verdicts`),
:func:`measure_hyperplanes` (the parallel-hyperplane claim, :mod:`.hyperplanes`), :func:`support_vector_path`
(support vectors of OvN and the binary SVM at matched regularisation, :mod:`.support_vectors`).
"""
from .hyperplanes import measure_hyperplanes
from .paper import PAPER_NUMBERS, paper_numbers
from .protocols import Grid, evaluate, sigma_to_gamma
from .reproduce import reproduce
from .support_vectors import support_vector_path
from .tables import TABLES, ReproduceConfig, run_table, summary_markdown, to_markdown
from .verdicts import Band, assess, check_claims, verdict

__all__ = ["Band", "Grid", "PAPER_NUMBERS", "ReproduceConfig", "TABLES", "assess", "check_claims", "evaluate",
           "measure_hyperplanes", "paper_numbers", "reproduce", "run_table", "sigma_to_gamma", "summary_markdown",
           "support_vector_path", "to_markdown", "verdict"]
