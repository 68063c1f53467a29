"""Shrinking (libsvm's rule, docs/theory.md §9.14): a pair at a bound that cannot take part in a violating move is set
aside — one that can only rise with a slope below its class's smallest slope among pairs that can fall, or one that
can only fall with a slope above the largest among pairs that can rise. The steps then scan and update only the
active pairs and samples. Before the solver stops, every pair is re-activated on an exact Z (``State.rebuild``)
and the optimality test is repeated."""
from __future__ import annotations

import numpy as np
from ..._numba import compiled


@compiled()
def shrink(st):
    """Deactivate the pairs libsvm's rule sets aside (class summaries as last scanned), then list the samples that
    still have an active pair."""
    sample, sign, lower, upper, a, bounds, order, n_active = st[0], st[1], st[2], st[3], st[4], st[5], st[6], st[7]
    active_rows, n_rows, Z, z, scalars = st[8], st[9], st[10], st[11], st[13]
    up_value, low_value = st[14], st[16]
    keep = np.zeros(z.shape[0], dtype=np.bool_)
    for k in range(bounds.shape[0] - 1):
        # a stable partition: the active pairs stay in ascending sample order, so that the steps read Z and the
        # kernel rows in ascending positions (the memory prefetcher's pattern; a swap-based one measured slower)
        start, end = bounds[k], bounds[k] + n_active[k]
        aside = np.empty(end - start, dtype=order.dtype)
        kept = removed = 0
        for t in range(start, end):
            p = order[t]
            s = sample[p]
            v = sign[p] - scalars[0] * Z[k, s] - scalars[1] * z[s]
            can_rise, can_fall = a[p] < upper[p], a[p] > lower[p]
            if (can_rise and not can_fall and v < low_value[k]) or (can_fall and not can_rise and v > up_value[k]):
                aside[removed] = p
                removed += 1
            else:
                order[start + kept] = p
                keep[s] = True
                kept += 1
        order[start + kept:end] = aside[:removed]
        n_active[k] = kept
    count = 0
    for s in range(keep.shape[0]):
        if keep[s]:
            active_rows[count] = s
            count += 1
    n_rows[0] = count
