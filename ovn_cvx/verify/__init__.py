"""Verification: solvers against the CVXPY reference and the KKT certificate, identities, and reports."""
from .checks import (CheckResult, badly_scaled_gram_consistency, bias_limit, binary_equivalence, invariants, kkt_check,
                     linear_kernel_consistency, reference_agreement)
from .comparison import compare, register_method
from .paths import path_summary, run_path
from .profiles import performance_profile
from .results import SuiteReport
from .runner import run_suite
from .suite import DEFAULT_BINARY, DEFAULT_SUITE, FULL_BINARY, FULL_SUITE, BinaryCase, SuiteCase

__all__ = ["CheckResult", "DEFAULT_BINARY", "DEFAULT_SUITE", "FULL_BINARY", "FULL_SUITE", "BinaryCase", "SuiteCase",
           "SuiteReport", "badly_scaled_gram_consistency", "bias_limit", "binary_equivalence", "compare", "invariants",
           "kkt_check",
           "linear_kernel_consistency", "path_summary", "performance_profile", "reference_agreement", "register_method",
           "run_path", "run_suite"]
