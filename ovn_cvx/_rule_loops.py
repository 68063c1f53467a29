"""The compiled scoring of the rule search (``ovn_cvx.rules``): the row-wise metrics — example-based Jaccard, 1 −
Hamming loss, and the trade λ · Jaccard + (1 − λ) · (1 − Hamming loss) — of label predictions, of threshold rules
and of one label's threshold moves, each candidate scored exactly from its row counts.

Every score is one definition (``_add_row``, ``_score``) with numpy's summation order (``_pairwise_sum``), so that
equal predictions score bit for bit the same whichever entry point scored them (the search's ties depend on it) and
as numpy's weighted mean of the row scores would. λ = 1 is Jaccard and λ = 0 is 1 − Hamming loss exactly (the other
term is multiplied by 0). A comparison "value ≥ threshold" is ``value >= bound`` with the bounds of
``labels.at_least_bound`` computed by the caller (one tie rule).
"""
from __future__ import annotations

import numpy as np
from numba import njit

#: ``_pairwise_sum`` adds blocks of up to this many values in 8 lanes, as numpy's pairwise summation
BLOCK = 128


@njit(cache=True)
def _block_sum(a, start, n):
    """The sum of a[start:start + n], n ≤ ``BLOCK``, as numpy adds a block: in 8 interleaved lanes from 8 values on."""
    if n < 8:
        total = 0.0
        for i in range(start, start + n):
            total += a[i]
        return total
    lanes = a[start:start + 8].copy()
    end = start + n - n % 8
    for i in range(start + 8, end, 8):
        for j in range(8):
            lanes[j] += a[i + j]
    total = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]))
    for i in range(end, start + n):
        total += a[i]
    return total


@njit(cache=True)
def _pairwise_sum(a, start, n):
    """The sum of a[start:start + n] in numpy's order (``np.add.reduce`` on contiguous float64: the sum of the two
    halves, the first of a multiple of 8 values, down to blocks of ``BLOCK``, ``_block_sum``), so that it equals
    ``a[start:start + n].sum()`` bit for bit (tests/test_rules_search.py). The halving runs on an explicit stack:
    numba's cache does not load recursive functions reliably."""
    if n <= BLOCK:
        return _block_sum(a, start, n)
    # tasks: (start, n) to sum, or n = -1: add the two sums on top of the value stack
    task_start, task_n, values = np.empty(192, np.int64), np.empty(192, np.int64), np.empty(64)
    tasks, depth = 1, 0
    task_start[0], task_n[0] = start, n
    while tasks > 0:
        tasks -= 1
        s, m = task_start[tasks], task_n[tasks]
        if m < 0:
            depth -= 1
            values[depth - 1] += values[depth]
        elif m <= BLOCK:
            values[depth] = _block_sum(a, s, m)
            depth += 1
        else:
            half = m // 2
            half -= half % 8
            task_n[tasks] = -1
            task_start[tasks + 1], task_n[tasks + 1] = s + half, m - half
            task_start[tasks + 2], task_n[tasks + 2] = s, half
            tasks += 3
    return values[0]


@njit(cache=True, error_model="numpy")
def _add_row(rows, i, common, predicted, true, n_labels, weight):
    """Row i's w-weighted Jaccard (1 with nothing true or predicted) and Hamming loss into ``rows`` (2×n)."""
    union = predicted + true - common
    rows[0, i] = weight * (common / union if union > 0 else 1.0)
    rows[1, i] = weight * ((predicted + true - 2.0 * common) / n_labels)


@njit(cache=True, error_model="numpy")
def _score(rows, total_weight, jaccard_weight):
    """λ · (weighted mean Jaccard) + (1 − λ) · (1 − weighted mean Hamming loss) of the ``_add_row`` rows."""
    n = rows.shape[1]
    jaccard, hamming_loss = _pairwise_sum(rows[0], 0, n) / total_weight, _pairwise_sum(rows[1], 0, n) / total_weight
    return jaccard_weight * jaccard + (1.0 - jaccard_weight) * (1.0 - hamming_loss)


@njit(cache=True, error_model="numpy")
def prediction_scores(truth, predictions, w, jaccard_weight):
    """The score of each boolean prediction matrix ``predictions[c]`` (C×n×K) against ``truth`` (n×K), rows weighted
    by ``w``."""
    C, n, K = predictions.shape
    out, rows, total_weight = np.empty(C), np.empty((2, n)), _pairwise_sum(w, 0, n)
    for c in range(C):
        for i in range(n):
            common, predicted, true = 0.0, 0.0, 0.0
            for k in range(K):
                common += truth[i, k] and predictions[c, i, k]
                predicted += predictions[c, i, k]
                true += truth[i, k]
            _add_row(rows, i, common, predicted, true, K, w[i])
        out[c] = _score(rows, total_weight, jaccard_weight)
    return out


@njit(cache=True, error_model="numpy")
def threshold_scores(F, truth, top, w, bounds, fallback, jaccard_weight):
    """The score of each threshold rule c: label k of row i predicted when F[i, k] ≥ ``bounds[c, i, k]`` (C×n×K, an
    axis of size 1 broadcast); with ``fallback`` a row left empty gets its argmax label ``top[i]``."""
    C, n, K = bounds.shape[0], F.shape[0], F.shape[1]
    by_row, by_label = bounds.shape[1] > 1, bounds.shape[2] > 1
    out, rows, total_weight = np.empty(C), np.empty((2, n)), _pairwise_sum(w, 0, n)
    for c in range(C):
        for i in range(n):
            common, predicted, true = 0.0, 0.0, 0.0
            for k in range(K):
                on = F[i, k] >= bounds[c, i if by_row else 0, k if by_label else 0]
                common += on and truth[i, k]
                predicted += on
                true += truth[i, k]
            if fallback and predicted == 0.0:
                common, predicted = (1.0 if truth[i, top[i]] else 0.0), 1.0
            _add_row(rows, i, common, predicted, true, K, w[i])
        out[c] = _score(rows, total_weight, jaccard_weight)
    return out


@njit(cache=True, error_model="numpy")
def label_trials(F, truth, top, w, bounds, k, candidate_bounds, fallback, jaccard_weight):
    """Label k's threshold moves: for each candidate c, the score of the per-label thresholds whose bounds are
    ``bounds`` (K) but ``candidate_bounds[c]`` for label k, and the weighted share of rows it gets label k right in;
    last, that share at ``bounds[k]`` (the thresholds as they are). The other labels' row counts are the same in
    every trial: O(nK) once, then O(n) a candidate."""
    n, K = F.shape
    rest_common, rest_predicted, true = np.zeros(n), np.zeros(n), np.zeros(n)
    for i in range(n):
        for j in range(K):
            true[i] += truth[i, j]
            if j != k and F[i, j] >= bounds[j]:
                rest_common[i] += truth[i, j]
                rest_predicted[i] += 1.0
    C = candidate_bounds.size
    values, rights = np.empty(C), np.empty(C + 1)
    rows, right, total_weight = np.empty((2, n)), np.empty(n), _pairwise_sum(w, 0, n)
    for c in range(C + 1):
        bound = candidate_bounds[c] if c < C else bounds[k]
        for i in range(n):
            on = F[i, k] >= bound
            common, predicted, label_k = rest_common[i] + (on and truth[i, k]), rest_predicted[i] + on, on
            if fallback and predicted == 0.0:
                common, predicted, label_k = (1.0 if truth[i, top[i]] else 0.0), 1.0, top[i] == k
            _add_row(rows, i, common, predicted, true[i], K, w[i])
            right[i] = w[i] * (label_k == truth[i, k])
        if c < C:
            values[c] = _score(rows, total_weight, jaccard_weight)
        rights[c] = _pairwise_sum(right, 0, n) / total_weight
    return values, rights
