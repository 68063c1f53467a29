"""The label rules, defined once: 1-D class labels → membership matrix, decision values → labels (docs/theory.md §5)."""
from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import column_or_1d

from ._validation import encode_labels, naming

#: how to turn label sets into the indicator matrix the estimator takes
BINARIZER_HINT = ("convert it with scikit-learn's MultiLabelBinarizer: Y = MultiLabelBinarizer().fit_transform(y) "
                  "(its classes_ names the columns)")

#: decision values within TIE_TOL · max(1, |t|) below a threshold t (or a row's largest value) count as on it.
#: The solvers agree on decision values to about 1e-7 relative (docs/theory.md §10); a label with w_k ≈ 0 sits
#: exactly on the threshold at the optimum (docs/theory.md §5), so without a tolerance the solver's last digits decide.
TIE_TOL = 1e-6

#: decision value of a label that never occurs positively in the (fold's) training data: the most negative finite
#: float, so it is below every threshold and never the argmax, yet scikit-learn's metrics accept it.
NEVER = -np.finfo(np.float64).max


def label_indicator(y, name: str = "y") -> tuple[np.ndarray, np.ndarray]:
    """(classes, Y) of 1-D labels ``y``: the sorted distinct labels and the N×K float 0/1 matrix with
    Y[i, k] = 1 exactly when y_i = classes[k]. Labels that mix strings and numbers: a TypeError naming ``name``."""
    classes, codes = encode_labels(np.asarray(y), name)
    Y = np.zeros((codes.size, classes.size))
    Y[np.arange(codes.size), codes] = 1.0
    return classes, Y


def reject_label_sets(y, name: str = "y") -> None:
    """A ValueError naming ``MultiLabelBinarizer`` when ``y`` is a sequence of label sets (sets, or lists of unequal
    lengths) rather than 1-D labels or an indicator matrix."""
    if not isinstance(y, (list, tuple)) and not (isinstance(y, np.ndarray) and y.dtype == object and y.ndim == 1):
        return
    rows = list(y)
    sets = any(isinstance(row, (set, frozenset)) for row in rows)
    ragged = all(isinstance(row, (list, tuple, np.ndarray)) for row in rows) and len({len(row) for row in rows}) > 1
    if sets or ragged:
        raise ValueError(f"{name} is a list of label {'sets' if sets else 'lists'}; OvNClassifier takes 1-D labels or "
                         f"an (n, K) indicator matrix: {BINARIZER_HINT}")


def membership(y, columns=None, name: str = "y") -> tuple[np.ndarray, np.ndarray, bool]:
    """(Y in {−1, 0, 1}^{N×K}, classes, multilabel) of checked targets ``y``: 1-D class labels (classes: the sorted
    labels), or an indicator matrix (dense or sparse; classes: ``columns``, e.g. a DataFrame's column names, or
    ``arange(K)``). Errors name ``name``."""
    if isinstance(y, np.ndarray) and y.dtype == object and all(isinstance(v, Real) for v in y.flat):
        y = np.array(y.tolist())  # numbers in object columns (pandas), as the numbers: numpy infers their type
    if sp.issparse(y) or (np.ndim(y) == 2 and np.shape(y)[1] > 1):
        Y = y.toarray() if sp.issparse(y) else np.asarray(y)
        if Y.dtype.kind not in "biuf" or not np.isin(Y, (-1, 0, 1)).all():
            raise ValueError(f"an indicator matrix {name} must contain only 0 and 1 (and -1 for a known negative); "
                             f"for label sets, {BINARIZER_HINT}")
        classes = np.arange(Y.shape[1]) if columns is None else np.asarray(columns)
        return Y.astype(np.float64), classes, True
    with naming(name):
        y = column_or_1d(y, warn=True)
        rows = np.flatnonzero(np.equal(y, None)) if y.dtype == object else ()
        if len(rows):  # else a sort's TypeError comparing None with a label
            raise ValueError(f"{name} has no label (None) in {len(rows)} row(s), the first at index {rows[0]}: every "
                             "row needs a class label; drop those rows or give them one")
        check_classification_targets(y)
    classes, Y = label_indicator(y, name)
    if classes.size < 2:
        raise ValueError(f"OvNClassifier needs at least 2 classes in {name}, got 1 class: {classes[0]!r}")
    return Y, classes, False


def at_least_bound(threshold) -> np.ndarray:
    """The least value that counts as at least ``threshold`` up to round-off: t − TIE_TOL · max(1, |t|)."""
    t = np.asarray(threshold, dtype=np.float64)
    with np.errstate(over="ignore"):  # t near −max (a label left out of the fit): −inf, every value is above it
        return t - TIE_TOL * np.maximum(1.0, np.abs(t))


def at_least(F, threshold) -> np.ndarray:
    """F ≥ threshold up to round-off: F ≥ t − TIE_TOL · max(1, |t|) (``threshold`` broadcasts against F)."""
    return np.asarray(F) >= at_least_bound(threshold)


def argmax_index(F) -> np.ndarray:
    """Each row's argmax label of F (n×K, a float array), up to ``TIE_TOL``: the first label within round-off of the
    row's largest value."""
    return at_least(F, F.max(axis=1, keepdims=True)).argmax(axis=1)


def argmax_labels(F) -> np.ndarray:
    """The boolean n×K matrix of each row's argmax label of F (``argmax_index``)."""
    top_label = np.zeros(F.shape, dtype=bool)
    top_label[np.arange(F.shape[0]), argmax_index(F)] = True
    return top_label


def rule_thresholds(F, *, top=None, gap=None) -> np.ndarray:
    """The per-row thresholds (n×1) of the top-m rule, each row's m-th largest value (``top`` = m, or an array of m:
    one n×1 column each) but at least its smallest known one (a label without a value, ``NEVER``, is never among the
    top m: a row with fewer known labels, or F fewer labels, gets them all; a row with none gets no label before the
    fallback), or of the score-gap rule, the row's
    largest value less ``gap`` (broadcast: a gap with leading axes gives one n×1 column per gap) (docs/theory.md
    §5)."""
    if top is not None:
        known = F > NEVER
        # a row without a known value: the threshold no value reaches (the finite "never", as the rule search's)
        lowest = np.where(known, F, np.finfo(np.float64).max).min(axis=1, keepdims=True)
        ranks = np.minimum(np.asarray(top), F.shape[1])  # more labels than F has: all of them
        return np.moveaxis(np.sort(np.where(known, F, lowest), axis=1)[:, -ranks], 0, -1)[..., None]
    return F.max(axis=1, keepdims=True) - gap


def predict_labels(F, *, multilabel: bool, threshold=1.0, fallback: bool = True, top: int | None = None,
                   gap: float | None = None) -> np.ndarray:
    """docs/theory.md §5 on decision values F (n×K), as a boolean n×K label matrix, every comparison up to ``TIE_TOL``:
    multiclass → the argmax (ties: the first class); multilabel → {k : f_k ≥ threshold} (a number, or one per label),
    or with ``top = m`` the labels at least the row's m-th largest value, or with ``gap = g`` the labels within g of
    the row's largest value; when that set is empty and ``fallback``, the argmax."""
    F = np.asarray(F, dtype=np.float64)
    top_label = argmax_labels(F)
    if not multilabel:
        return top_label
    if top is not None:
        threshold = rule_thresholds(F, top=top)
    elif gap is not None:
        threshold = rule_thresholds(F, gap=gap)
    labels = at_least(F, threshold)  # a threshold with leading axes gives one n×K matrix per leading index
    if not fallback:
        return labels
    return np.where(labels.any(axis=-1, keepdims=True), labels, top_label)


#: the metrics an expected-score rule maximizes, by their weight λ in the trade λ · Jaccard + (1 − λ) · (1 − Hamming
#: loss): the score of a row whose predicted set has m labels of which a are true, with b true labels outside it, K
#: labels in all, is example-based Jaccard a / (m + b) (1 when nothing is true or predicted) for "jaccard" and the
#: share of labels right, 1 − ((m − a) + b) / K (1 − Hamming loss), for "hamming"
UTILITIES = {"jaccard": 1.0, "hamming": 0.0}


def is_jaccard_weight(utility) -> bool:
    """True for a number in [0, 1]: the weight λ of Jaccard in the trade λ · Jaccard + (1 − λ) · (1 − Hamming loss)."""
    return isinstance(utility, Real) and not isinstance(utility, bool) and 0.0 <= utility <= 1.0


def jaccard_weight(utility) -> float:
    """The weight λ of Jaccard of ``utility``: a key of ``UTILITIES``, or λ in [0, 1] itself (``is_jaccard_weight``);
    each utility λ · Jaccard + (1 − λ) · (1 − Hamming loss) rises with a and falls with b at fixed m."""
    if is_jaccard_weight(utility):
        return float(utility)
    if isinstance(utility, str) and utility in UTILITIES:
        return UTILITIES[utility]
    raise ValueError(f"utility must be one of {sorted(UTILITIES)} or a Jaccard weight in [0, 1], got {utility!r}")


def expected_best_labels(P, utility="jaccard", fallback: bool = True) -> np.ndarray:
    """The label set of each row of P (n×K, P(label k) per row) with the largest expected ``utility`` (a key of
    ``UTILITIES`` or a Jaccard weight, :func:`jaccard_weight`) when the labels are independent with those
    probabilities (docs/theory.md §5.1): the set is the m most probable labels for the best m (a swap of a less
    probable label in the set for a more probable one outside never lowers a utility that rises with a and falls with
    b), and the expectation is exact, E[a/(m + b)] = E[a]·E[1/(m + b)] (a and b are independent) — O(K²) a row,
    compiled (``_rule_loops.expected_best_sizes``). ``fallback``: at least one label, the expectation taken given at
    least one true label. Ties go to the smaller set."""
    P = np.clip(np.asarray(P, dtype=np.float64), 0.0, 1.0)
    order = np.argsort(-P, axis=1, kind="stable")
    from ._rule_loops import expected_best_sizes  # at the first use: numba's start-up is not paid by the import

    sizes = expected_best_sizes(np.take_along_axis(P, order, axis=1), jaccard_weight(utility), fallback)
    chosen = np.zeros(P.shape, dtype=bool)
    np.put_along_axis(chosen, order, np.arange(P.shape[1])[None, :] < sizes[:, None], axis=1)
    return chosen


@dataclass(frozen=True)
class DecisionRule:
    """A multilabel rule: of :func:`predict_labels` — ``threshold`` (one number, or one per label), or the ``top``
    m labels of each row, or the labels within ``gap`` of the row's largest value (the score gap), and the argmax
    ``fallback`` for a row with no label (moot for top-m and the score gap: the argmax is always in) — or, with
    ``calibration`` = (A, B), the expected-score rule: P(label k) = 1 / (1 + exp(A_k f_k + B_k)) (Platt's sigmoid;
    B_k = +inf: never), then the set of largest expected ``utility`` (:func:`expected_best_labels`, with
    ``fallback``: never empty)."""

    threshold: float | np.ndarray = 1.0
    top: int | None = None
    fallback: bool = True
    gap: float | None = None
    calibration: tuple[np.ndarray, np.ndarray] | None = None
    utility: str | float = "jaccard"

    def __post_init__(self):
        given = [name for name in ("top", "gap", "calibration") if getattr(self, name) is not None]
        if len(given) > 1:
            raise ValueError(f"a rule has at most one of top, gap and calibration, got {given}")
        jaccard_weight(self.utility)  # a ValueError for an unknown utility
        top, gap = self.top, self.gap
        if top is not None and (isinstance(top, bool) or not isinstance(top, Integral) or top < 1):
            raise ValueError(f"top must be a positive integer (the number of labels a row gets), got {top!r}")
        if gap is not None:  # a number, or one per leading index (a batch of rules)
            with naming("gap"):
                gaps = np.asarray(gap, dtype=np.float64)
            if isinstance(gap, bool) or not (np.isfinite(gaps) & (gaps >= 0.0)).all():
                raise ValueError(f"gap must be a finite number >= 0 (below the row's largest value), got {gap!r}")
        with naming("threshold"):
            finite = np.isfinite(np.asarray(self.threshold, dtype=np.float64)).all()
        if not finite:  # NaN would leave every row to the fallback
            raise ValueError(f"threshold must be finite, got {self.threshold!r}")

    @property
    def kind(self) -> str:
        """"top-m", "score-gap", "expected score", "per-label thresholds" or "global threshold"."""
        if self.top is not None:
            return "top-m"
        if self.gap is not None:
            return "score-gap"
        if self.calibration is not None:
            return "expected score"
        return "per-label thresholds" if np.ndim(self.threshold) else "global threshold"

    def probabilities(self, F) -> np.ndarray:
        """The calibrated P(label k) of the expected-score rule on decision values F (n×K)."""
        A, B = self.calibration
        F = np.asarray(F, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):  # B = inf (a label never predicted): P = 0
            P = 1.0 / (1.0 + np.exp(F * A + B))
        return np.where(F > NEVER, P, 0.0)

    def predict(self, F) -> np.ndarray:
        """The boolean n×K label matrix of the rule on decision values F (n×K); per-label thresholds: one per column
        of F (a ValueError naming ``threshold`` otherwise)."""
        if np.ndim(self.threshold) == 1 and np.size(self.threshold) != np.shape(F)[-1]:
            raise ValueError(f"threshold has {np.size(self.threshold)} entries; F has {np.shape(F)[-1]} labels, one "
                             "threshold per label")
        if self.calibration is not None:
            return expected_best_labels(self.probabilities(F), self.utility, self.fallback)
        return predict_labels(F, multilabel=True, threshold=self.threshold, fallback=self.fallback, top=self.top,
                              gap=self.gap)
