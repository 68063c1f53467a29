"""The estimator as it was before its defaults were chosen by measurement (docs/benchmarks/defaults.md): the paper's
OvN (no known negatives, the paper's rule), SwHb, absolute β = 1. Tests about that model pass these settings
explicitly, so that they keep testing what they were written for."""
from ovn_cvx import OvNClassifier

#: the former defaults that differ from today's
PAPER = {"negatives": "none", "negative_balance": 0.0, "beta": 1.0, "beta_scale": "none", "bias_penalty": 1.0,
         "decision_rule": "paper", "rule_scoring": "jaccard"}


def paper_model(variant="SwHb", *args, **params) -> OvNClassifier:
    """``OvNClassifier`` with ``PAPER`` and SwHb unless given."""
    return OvNClassifier(variant, *args, **{**PAPER, **params})
