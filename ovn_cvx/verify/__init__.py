"""Verification: solvers against the CVXPY reference, identities, and reports."""
from .suite import DEFAULT_SUITE, SuiteCase, make_data

__all__ = ["DEFAULT_SUITE", "SuiteCase", "make_data"]
