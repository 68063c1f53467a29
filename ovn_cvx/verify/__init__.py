"""Verification: solvers against the CVXPY reference and the KKT certificate, identities, and reports.

The names are imported on first use, so that the command line's ``--help`` does not import the solvers."""
from typing import TYPE_CHECKING as _TYPE_CHECKING

from .._lazy import attach as _attach

__all__ = ["CheckResult", "DEFAULT_BINARY", "DEFAULT_SUITE", "FULL_BINARY", "FULL_SUITE", "BinaryCase", "SuiteCase",
           "SuiteReport", "badly_scaled_gram_consistency", "bias_limit", "binary_equivalence", "compare", "invariants",
           "kkt_check", "linear_kernel_consistency", "path_summary", "performance_profile", "reference_agreement",
           "register_method", "run_path", "run_suite"]
_attach(__name__, {
    **dict.fromkeys(["CheckResult", "badly_scaled_gram_consistency", "bias_limit", "binary_equivalence", "invariants",
                     "kkt_check", "linear_kernel_consistency", "reference_agreement"], "checks"),
    **dict.fromkeys(["compare", "register_method"], "comparison"),
    **dict.fromkeys(["path_summary", "run_path"], "paths"),
    **dict.fromkeys(["DEFAULT_BINARY", "DEFAULT_SUITE", "FULL_BINARY", "FULL_SUITE", "BinaryCase", "SuiteCase"],
                    "suite"),
    "performance_profile": "profiles", "SuiteReport": "results", "run_suite": "runner"})

if _TYPE_CHECKING:  # the names as static analysis sees them
    from .checks import (CheckResult, badly_scaled_gram_consistency, bias_limit, binary_equivalence, invariants,
                         kkt_check, linear_kernel_consistency, reference_agreement)
    from .comparison import compare, register_method
    from .paths import path_summary, run_path
    from .profiles import performance_profile
    from .results import SuiteReport
    from .runner import run_suite
    from .suite import DEFAULT_BINARY, DEFAULT_SUITE, FULL_BINARY, FULL_SUITE, BinaryCase, SuiteCase
