"""The label rules, defined once: 1-D class labels → membership matrix, decision values → labels (docs/theory.md §5)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validation import encode_labels

#: decision values within TIE_TOL · max(1, |t|) below a threshold t (or a row's largest value) count as on it.
#: The solvers agree on decision values to about 1e-7 relative (docs/theory.md §10); a label with w_k ≈ 0 sits
#: exactly on the threshold at the optimum (docs/theory.md §5), so without a tolerance the solver's last digits decide.
TIE_TOL = 1e-6


def label_indicator(y, name: str = "y") -> tuple[np.ndarray, np.ndarray]:
    """(classes, Y) of 1-D labels ``y``: the sorted distinct labels and the N×K float 0/1 matrix with
    Y[i, k] = 1 exactly when y_i = classes[k]. Labels that mix strings and numbers: a TypeError naming ``name``."""
    classes, codes = encode_labels(np.asarray(y), name)
    Y = np.zeros((codes.size, classes.size))
    Y[np.arange(codes.size), codes] = 1.0
    return classes, Y


def at_least(F, threshold) -> np.ndarray:
    """F ≥ threshold up to round-off: F ≥ t − TIE_TOL · max(1, |t|) (``threshold`` broadcasts against F)."""
    t = np.asarray(threshold, dtype=np.float64)
    with np.errstate(over="ignore"):  # t near −max (a label left out of the fit): −inf, every value is above it
        return np.asarray(F) >= t - TIE_TOL * np.maximum(1.0, np.abs(t))


def predict_labels(F, *, multilabel: bool, threshold=1.0, fallback: bool = True, top: int | None = None,
                   gap: float | None = None) -> np.ndarray:
    """docs/theory.md §5 on decision values F (n×K), as a boolean n×K label matrix, every comparison up to ``TIE_TOL``:
    multiclass → the argmax (ties: the first class); multilabel → {k : f_k ≥ threshold} (a number, or one per label),
    or with ``top = m`` the labels at least the row's m-th largest value, or with ``gap = g`` the labels within g of
    the row's largest value; when that set is empty and ``fallback``, the argmax."""
    F = np.asarray(F, dtype=np.float64)
    top_label = np.zeros(F.shape, dtype=bool)
    top_label[np.arange(F.shape[0]), at_least(F, F.max(axis=1, keepdims=True)).argmax(axis=1)] = True
    if not multilabel:
        return top_label
    if top is not None:
        threshold = np.sort(F, axis=1)[:, -top, None]
    elif gap is not None:
        threshold = F.max(axis=1, keepdims=True) - gap
    labels = at_least(F, threshold)
    if not fallback:
        return labels
    return np.where(labels.any(axis=1, keepdims=True), labels, top_label)


@dataclass(frozen=True)
class DecisionRule:
    """A multilabel rule of :func:`predict_labels`: ``threshold`` (one number, or one per label), or the ``top``
    m labels of each row, or the labels within ``gap`` of the row's largest value (the score gap), and the argmax
    ``fallback`` for a row with no label (moot for top-m and the score gap: the argmax is always in)."""

    threshold: float | np.ndarray = 1.0
    top: int | None = None
    fallback: bool = True
    gap: float | None = None

    def __post_init__(self):
        if self.top is not None and self.gap is not None:
            raise ValueError(f"a rule has top or gap, not both (top={self.top}, gap={self.gap})")

    @property
    def kind(self) -> str:
        """"top-m", "score-gap", "per-label thresholds" or "global threshold"."""
        if self.top is not None:
            return "top-m"
        if self.gap is not None:
            return "score-gap"
        return "per-label thresholds" if np.ndim(self.threshold) else "global threshold"

    def predict(self, F) -> np.ndarray:
        return predict_labels(F, multilabel=True, threshold=self.threshold, fallback=self.fallback, top=self.top,
                              gap=self.gap)
