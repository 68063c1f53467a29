"""The two label rules, defined once: 1-D class labels → membership matrix, decision values → labels (docs/theory.md
§5)."""
from __future__ import annotations

import numpy as np

from ._validation import encode_labels


def label_indicator(y, name: str = "y") -> tuple[np.ndarray, np.ndarray]:
    """(classes, Y) of 1-D labels ``y``: the sorted distinct labels and the N×K float 0/1 matrix with
    Y[i, k] = 1 exactly when y_i = classes[k]. Labels that mix strings and numbers: a TypeError naming ``name``."""
    classes, codes = encode_labels(np.asarray(y), name)
    Y = np.zeros((codes.size, classes.size))
    Y[np.arange(codes.size), codes] = 1.0
    return classes, Y


def predict_labels(F, *, multilabel: bool, threshold: float = 1.0, fallback: bool = True) -> np.ndarray:
    """docs/theory.md §5 on decision values F (n×K), as a boolean n×K label matrix: multiclass → the argmax (ties: the
    first class); multilabel → {k : f_k ≥ threshold}, or the argmax when that set is empty and ``fallback``."""
    F = np.asarray(F)
    top = np.zeros(F.shape, dtype=bool)
    top[np.arange(F.shape[0]), F.argmax(axis=1)] = True
    if not multilabel:
        return top
    labels = F >= threshold
    if not fallback:
        return labels
    return np.where(labels.any(axis=1, keepdims=True), labels, top)
