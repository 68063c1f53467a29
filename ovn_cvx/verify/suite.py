"""Built-in problem suite: small synthetic multiclass and multilabel data sets, all eight formulations."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..problem import VARIANTS, Problem


def make_data(kind: str = "multiclass", n_samples: int = 60, n_features: int = 4, n_classes: int = 3,
              seed: int = 0, separation: float = 1.5):
    """Overlapping Gaussian blobs. Returns (X, Y) with Y an N×K membership matrix.

    "multiclass": one-hot rows. "multilabel": each sample is drawn near the mean of 1 or 2 class
    centres and labelled with those classes; the last sample gets no label (allowed, SPEC §1)."""
    if kind not in ("multiclass", "multilabel"):
        raise ValueError(f"kind must be 'multiclass' or 'multilabel', got {kind!r}")
    rng = np.random.default_rng(seed)
    centres = separation * rng.normal(size=(n_classes, n_features))
    Y = np.zeros((n_samples, n_classes))
    first = np.arange(n_samples) % n_classes  # every class gets members
    Y[np.arange(n_samples), first] = 1.0
    if kind == "multilabel":
        second = rng.integers(0, n_classes, n_samples)
        extra = rng.random(n_samples) < 0.4
        Y[np.flatnonzero(extra), second[extra]] = 1.0
    X = (Y @ centres) / np.maximum(Y.sum(axis=1, keepdims=True), 1) + rng.normal(size=(n_samples, n_features))
    if kind == "multilabel":
        Y[-1] = 0.0
    return X, Y


@dataclass(frozen=True)
class SuiteCase:
    name: str
    kind: str
    n_samples: int
    n_features: int
    n_classes: int
    kernel: str = "linear"
    seed: int = 0

    def problems(self, variants=VARIANTS, alpha=0.2, beta=1.0, bias_penalty=1.0):
        """One Problem per variant (α is passed to soft-w variants only)."""
        X, Y = make_data(self.kind, self.n_samples, self.n_features, self.n_classes, self.seed)
        for variant in variants:
            a = 0.0 if variant.startswith("Hw") else alpha
            yield variant, Problem(X, Y, variant, self.kernel, alpha=a, beta=beta, bias_penalty=bias_penalty)


DEFAULT_SUITE = (
    SuiteCase("mc-K3", "multiclass", 60, 4, 3),
    SuiteCase("ml-K4", "multilabel", 70, 5, 4, seed=1),
    SuiteCase("mc-K3-rbf", "multiclass", 60, 4, 3, kernel="rbf", seed=2),
    SuiteCase("ml-K4-rbf", "multilabel", 70, 5, 4, kernel="rbf", seed=1),
)
