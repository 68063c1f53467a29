"""The compiled loops of the decision rules: the rule search's scoring (``ovn_cvx.rules``) — the row-wise metrics
example-based Jaccard, 1 − Hamming loss and the trade λ · Jaccard + (1 − λ) · (1 − Hamming loss) of label
predictions (on all rows or by group of rows), of threshold rules and of one label's threshold moves (and the
per-label thresholds' coordinate ascent made of them), each candidate scored exactly from its row counts — and the
expected-score rule's best set sizes (``labels.expected_best_labels``).

Every score is one definition (``_add_row``, ``_score``) with numpy's summation order (``_pairwise_sum``), so that
equal predictions score bit for bit the same whichever entry point scored them (the search's ties depend on it) and
as numpy's weighted mean of the row scores would (tests/test_rule_loops.py checks the match; were numpy's order to
change, the scores would still agree among themselves). λ = 1 is Jaccard and λ = 0 is 1 − Hamming loss exactly (the
other term is multiplied by 0). A comparison "value ≥ threshold" is ``value >= bound`` with the bounds of
``labels.at_least_bound`` computed by the caller (one tie rule).
"""
from __future__ import annotations

import numpy as np
from ._numba import compiled

#: ``_pairwise_sum`` adds blocks of up to this many values in 8 lanes, as numpy's pairwise summation
BLOCK = 128


@compiled()
def _block_sum(a, start, n):
    """The sum of a[start:start + n], n ≤ ``BLOCK``, as numpy adds a block: in 8 interleaved lanes from 8 values on."""
    if n < 8:
        total = 0.0
        for i in range(start, start + n):
            total += a[i]
        return total
    r0, r1, r2, r3, r4, r5, r6, r7 = a[start], a[start + 1], a[start + 2], a[start + 3], a[start + 4], \
        a[start + 5], a[start + 6], a[start + 7]
    end = start + n - n % 8
    for i in range(start + 8, end, 8):
        r0, r1, r2, r3 = r0 + a[i], r1 + a[i + 1], r2 + a[i + 2], r3 + a[i + 3]
        r4, r5, r6, r7 = r4 + a[i + 4], r5 + a[i + 5], r6 + a[i + 6], r7 + a[i + 7]
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for i in range(end, start + n):
        total += a[i]
    return total


@compiled()
def _scratch():
    """The work arrays of ``_pairwise_sum``: its stack of tasks (start and size of a sum; size −1: add the two sums
    on top of the value stack) and of values, deep enough for any array (the size halves at each level)."""
    return np.empty((2, 192), np.int64), np.empty(64)


@compiled()
def _pairwise_sum(a, start, n, work):
    """The sum of a[start:start + n] in numpy's order (``np.add.reduce`` on contiguous float64: the sum of the two
    halves, the first of a multiple of 8 values, down to blocks of ``BLOCK``, ``_block_sum``), so that it equals
    ``a[start:start + n].sum()`` bit for bit (tests/test_rule_loops.py). The halving runs on the explicit stacks
    ``work`` (``_scratch``): numba's cache does not load recursive functions reliably."""
    if n <= BLOCK:
        return _block_sum(a, start, n)
    task, values = work
    tasks, depth = 1, 0
    task[0, 0], task[1, 0] = start, n
    while tasks > 0:
        tasks -= 1
        s, m = task[0, tasks], task[1, tasks]
        if m < 0:
            depth -= 1
            values[depth - 1] += values[depth]
        elif m <= BLOCK:
            values[depth] = _block_sum(a, s, m)
            depth += 1
        else:
            half = m // 2
            half -= half % 8
            task[1, tasks] = -1
            task[0, tasks + 1], task[1, tasks + 1] = s + half, m - half
            task[0, tasks + 2], task[1, tasks + 2] = s, half
            tasks += 3
    return values[0]


@compiled()
def _row_scores(w, n_labels):
    """What a scoring pass works in: the rows' weighted Jaccard and Hamming loss (2×n, filled by ``_add_row``), the
    number of labels, the stacks of ``_pairwise_sum`` and the total weight."""
    work = _scratch()
    return np.empty((2, w.size)), n_labels, work, _pairwise_sum(w, 0, w.size, work)


@compiled()
def _add_row(scores, i, common, predicted, true, weight):
    """Row i's w-weighted Jaccard |T ∩ P| / |T ∪ P| (1 when the union is empty) and Hamming loss |T Δ P| / K from its
    counts |T ∩ P|, |P| and |T| into ``scores`` (``_row_scores``)."""
    rows, n_labels = scores[0], scores[1]
    union = predicted + true - common
    rows[0, i] = weight * (common / union if union > 0 else 1.0)
    rows[1, i] = weight * ((predicted + true - 2 * common) / n_labels)


@compiled(error_model="numpy")
def _score(scores, jaccard_weight):
    """λ · (weighted mean Jaccard) + (1 − λ) · (1 − weighted mean Hamming loss) of the ``_add_row`` rows."""
    rows, work, total_weight = scores[0], scores[2], scores[3]
    n = rows.shape[1]
    jaccard = _pairwise_sum(rows[0], 0, n, work) / total_weight
    hamming_loss = _pairwise_sum(rows[1], 0, n, work) / total_weight
    return jaccard_weight * jaccard + (1.0 - jaccard_weight) * (1.0 - hamming_loss)


@compiled()
def prediction_scores(truth, predictions, w, jaccard_weight):
    """The score of each boolean prediction matrix ``predictions[c]`` (C×n×K) against ``truth`` (n×K), rows weighted
    by ``w``."""
    C, n, K = predictions.shape
    out, scores, true = np.empty(C), _row_scores(w, K), _row_counts(truth)
    for c in range(C):
        for i in range(n):
            common, predicted = 0, 0
            for k in range(K):
                common += truth[i, k] and predictions[c, i, k]
                predicted += predictions[c, i, k]
            _add_row(scores, i, common, predicted, true[i], w[i])
        out[c] = _score(scores, jaccard_weight)
    return out


@compiled()
def group_scores(truth, predictions, w, groups, n_groups, complement, jaccard_weight):
    """The score of each boolean prediction matrix ``predictions[c]`` (C×n×K) on the rows of each group g of
    ``groups`` (each row's group, 0 … ``n_groups`` − 1), with ``complement`` on the rows outside it (C × n_groups),
    rows weighted by ``w``: bit for bit ``prediction_scores`` of those rows alone."""
    C, n, K = predictions.shape
    out, true, index = np.empty((C, n_groups)), _row_counts(truth), np.empty(n, np.int64)
    for g in range(n_groups):
        m = 0
        for i in range(n):
            if (groups[i] == g) != complement:
                index[m] = i
                m += 1
        weights = w[index[:m]]
        scores = _row_scores(weights, K)
        for c in range(C):
            for r in range(m):
                i = index[r]
                common, predicted = 0, 0
                for k in range(K):
                    common += truth[i, k] and predictions[c, i, k]
                    predicted += predictions[c, i, k]
                _add_row(scores, r, common, predicted, true[i], weights[r])
            out[c, g] = _score(scores, jaccard_weight)
    return out


@compiled()
def threshold_scores(F, truth, top, w, bounds, fallback, jaccard_weight):
    """The score of each threshold rule c: label k of row i predicted when F[i, k] ≥ ``bounds[c, i]`` (C×n, or C×1:
    one bound for every row); with ``fallback`` a row left empty gets its argmax label ``top[i]``."""
    C, n, K = bounds.shape[0], F.shape[0], F.shape[1]
    by_row = bounds.shape[1] > 1
    out, scores, true = np.empty(C), _row_scores(w, K), _row_counts(truth)
    for c in range(C):
        for i in range(n):
            bound = bounds[c, i if by_row else 0]
            common, predicted = 0, 0
            for k in range(K):
                on = F[i, k] >= bound
                common += on & truth[i, k]
                predicted += on
            if fallback:
                common, predicted = _fall_back(common, predicted, truth[i, top[i]])
            _add_row(scores, i, common, predicted, true[i], w[i])
        out[c] = _score(scores, jaccard_weight)
    return out


@compiled()
def _fall_back(common, predicted, top_truth):
    """The counts |T ∩ P| and |P| of a row after the fallback: a row the rule leaves empty gets its argmax label, whose
    truth is ``top_truth``."""
    if predicted == 0:
        return int(top_truth), 1
    return common, predicted


@compiled()
def _row_counts(truth):
    """|T| of each row."""
    true = np.zeros(truth.shape[0], np.int64)
    for i in range(truth.shape[0]):
        for k in range(truth.shape[1]):
            true[i] += truth[i, k]
    return true


@compiled()
def _add_label_row(scores, i, on, rest_common, rest_predicted, true, label_truth, top_truth, weight, fallback):
    """Row i's scores (``_add_row``) with label k ``on`` or off and the other labels' counts ``rest_common`` and
    ``rest_predicted``; ``label_truth``: row i's truth in label k."""
    common, predicted = rest_common + (on and label_truth), rest_predicted + on
    if fallback:
        common, predicted = _fall_back(common, predicted, top_truth)
    _add_row(scores, i, common, predicted, true, weight)


@compiled(error_model="numpy")
def label_trials(F, truth, top, w, bounds, k, order, candidate_bounds, fallback, jaccard_weight):
    """Label k's threshold moves: for each candidate c, the score of the per-label thresholds whose bounds are
    ``bounds`` (K) but ``candidate_bounds[c]`` (ascending) for label k, and the weighted share of rows it gets label k
    right in (for the candidates of the largest score only, NaN for the others: the tie rule reads no others); last,
    that share at ``bounds[k]`` (the thresholds as they are). ``order``: the rows in ascending order of F[:, k]. The
    other labels' row counts are the same in every trial, and a trial's row scores are the previous trial's but in
    the rows where label k turns off, those between the two bounds in ``order``: O(nK) once, then the sums and the
    rows that change a trial."""
    n, K = F.shape
    rest_common, rest_predicted, true = np.zeros(n, np.int64), np.zeros(n, np.int64), _row_counts(truth)
    for i in range(n):
        for j in range(K):
            if j != k and F[i, j] >= bounds[j]:
                rest_common[i] += truth[i, j]
                rest_predicted[i] += 1
    C = candidate_bounds.size
    values, scores = np.empty(C), _row_scores(w, K)
    for i in range(n if C > 0 else 0):  # the first candidate: every row
        _add_label_row(scores, i, F[i, k] >= candidate_bounds[0], rest_common[i], rest_predicted[i], true[i],
                       truth[i, k], truth[i, top[i]], w[i], fallback)
    position = 0  # the rows before it in ``order`` are off at the current candidate
    for c in range(C):
        while position < n and F[order[position], k] < candidate_bounds[c]:
            i = order[position]
            if c > 0:
                _add_label_row(scores, i, False, rest_common[i], rest_predicted[i], true[i], truth[i, k],
                               truth[i, top[i]], w[i], fallback)
            position += 1
        values[c] = _score(scores, jaccard_weight)
    rights, right = np.full(C + 1, np.nan), np.empty(n)
    largest = values.max() if C > 0 else 0.0
    for c in range(C + 1):
        if c < C and values[c] != largest:
            continue
        bound = candidate_bounds[c] if c < C else bounds[k]
        for i in range(n):
            label_k = F[i, k] >= bound
            if fallback and not label_k and rest_predicted[i] == 0:
                label_k = top[i] == k
            right[i] = w[i] * (label_k == truth[i, k])
        rights[c] = _pairwise_sum(right, 0, n, scores[2]) / scores[3]
    return values, rights


@compiled()
def _add_bernoulli(pmf, source, p, size):
    """``pmf[:size + 1]``: the distribution of a count after one more independent Bernoulli(p), from its distribution
    ``source[:size]`` (P(count = j) for j < size); ``pmf`` may be ``source`` (updated from the top down)."""
    pmf[size] = 0.0 + source[size - 1] * p
    for j in range(size - 1, 0, -1):
        pmf[j] = source[j] * (1.0 - p) + source[j - 1] * p
    pmf[0] = source[0] * (1.0 - p)


@compiled()
def expected_best_sizes(sorted_p, jaccard_weight, fallback):
    """Per row of ``sorted_p`` (n×K, each row's label probabilities in decreasing order), the number m of most
    probable labels whose set has the largest expected λ · Jaccard + (1 − λ) · (1 − Hamming loss) (λ =
    ``jaccard_weight``) when the labels are independent: ``labels.expected_best_labels`` (docs/theory.md §5.1).
    With a true labels in the set and b outside, E[a/(m + b)] = E[a] · E[1/(m + b)] (a and b are independent) and the
    Hamming loss is (m − a + b)/K, so each m costs O(K) from the distribution of b: O(K²) a row, no table."""
    n, K = sorted_p.shape
    best = np.zeros(n, np.int64)
    outside = np.zeros((K + 1, K + 1))
    for i in range(n):
        outside[K, 0] = 1.0  # outside[m]: the distribution of b, the true labels among the K − m least probable
        for m in range(K - 1, -1, -1):
            _add_bernoulli(outside[m], outside[m + 1], sorted_p[i, m], K - m)
        inside_mean, inside_empty = 0.0, 1.0  # E[a] and P(a = 0) for the m most probable
        best_value = -np.inf
        for m in range(K + 1):
            reciprocal, outside_mean = 0.0, 0.0
            for b in range(K - m + 1):
                outside_mean += b * outside[m, b]
                if m + b > 0:
                    reciprocal += outside[m, b] / (m + b)
            # the empty set scores Jaccard 1 against an empty truth only
            jaccard = inside_mean * reciprocal if m > 0 else outside[0, 0]
            value = jaccard_weight * jaccard + (1.0 - jaccard_weight) * (1.0 - (m - inside_mean + outside_mean) / K)
            if fallback:  # given a nonempty truth: the common factor 1 / (1 − P(empty)) does not move the argmax
                empty = jaccard_weight * (1.0 if m == 0 else 0.0) + (1.0 - jaccard_weight) * (1.0 - m / K)
                value -= inside_empty * outside[m, 0] * empty
            if (m > 0 or not fallback) and value > best_value + 1e-12:  # ties go to the smaller set
                best_value, best[i] = value, m
            if m < K:
                inside_mean += sorted_p[i, m]
                inside_empty *= 1.0 - sorted_p[i, m]
    return best


@compiled(error_model="numpy")
def label_ascent(F, truth, top, w, start_bound, labels, orders, candidate_bounds, sizes, fallback, jaccard_weight,
                 sweeps):
    """The per-label thresholds' coordinate ascent from one global threshold (``rules._Search.family_bests``): every
    label's bound starts at ``start_bound``; each of ``sweeps`` sweeps moves each label ``labels[m]`` in turn to the
    best of its candidate bounds ``candidate_bounds[m, :sizes[m]]`` (ascending; ``orders[m]``: the rows in ascending
    order of its values; ``label_trials``; ties go to the candidate that gets more entries of the label right, and a
    move must beat the current (score, share right) strictly).

    Returns (best, choice): the first largest score met — the start's, then each trial's in order — and the choice of
    its thresholds, per label in ``labels`` the index of its candidate (−1: the start)."""
    K = F.shape[1]
    bounds = np.full(K, start_bound)
    current_choice = np.full(labels.size, -1, np.int64)
    current = threshold_scores(F, truth, top, w, bounds[:1].reshape(1, 1), fallback, jaccard_weight)[0]
    best, best_choice = current, current_choice.copy()
    for _ in range(sweeps):
        for m in range(labels.size):
            k = labels[m]
            values, rights = label_trials(F, truth, top, w, bounds, k, orders[m], candidate_bounds[m, :sizes[m]],
                                          fallback, jaccard_weight)
            C = sizes[m]
            first, chosen = 0, -1
            for c in range(C):
                if values[c] > values[first]:
                    first = c
            if values[first] > best:
                best, best_choice = values[first], current_choice.copy()
                best_choice[m] = first
            for c in range(C):  # the first maximum of (value, share right) among the largest values
                if values[c] == values[first] and (chosen < 0 or rights[c] > rights[chosen]):
                    chosen = c
            if values[chosen] > current or (values[chosen] == current and rights[chosen] > rights[C]):
                current = values[chosen]
                current_choice[m] = chosen
                bounds[k] = candidate_bounds[m, chosen]
    return best, best_choice
