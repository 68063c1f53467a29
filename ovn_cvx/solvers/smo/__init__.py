"""Dual decomposition solvers (libsvm/liblinear style) with the proven bound of docs/theory.md §6."""
from .linear import solve_linear

__all__ = ["solve_linear"]
