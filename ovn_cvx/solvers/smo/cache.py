"""Kernel rows on demand, under a memory budget (docs/theory.md §9.14).

A step of the dual decomposition needs the rows κ(x_i, ·) of the few samples it moves; one row serves every label
of its sample. Rows of the named kernels on dense data are computed inside the compiled loop and kept in a
least-recently-used cache of ``cache_size`` MB (as ``SVC``'s): whole and in double precision when all N fit, else in
single precision and only at the samples the steps read (:func:`lookup`); a precomputed Gram matrix is read
directly; rows of a callable kernel or of sparse data come from :func:`ovn_cvx.kernels.kernel_matrix`, computed in
Python when the loop asks for them. The exact products (:class:`BlockGram`) read only whole double-precision rows.
No N × N array is built unless the caller gave one.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from ..._numba import compiled

from ...kernels import CANCELLATION, kernel_matrix, resolve_gamma
from ...problem import Problem

#: how rows are obtained: computed in the compiled loop (the named kernels on dense data), read from a precomputed
#: Gram matrix, or computed in Python on request (a callable kernel, sparse data)
RBF, POLY, SIGMOID, PRECOMPUTED, PYTHON = 0, 1, 2, 3, 4
NAMED = {"rbf": RBF, "poly": POLY, "sigmoid": SIGMOID}
#: the blocks of kernel entries computed at once outside the loop (the exact Z and the bound) hold at most this many
#: entries (8 MiB): far below any N × N matrix it would be worth avoiding
BLOCK_ENTRIES = 2**20
#: the diagonal of a callable kernel is read off blocks of this many rows
DIAGONAL_BLOCK = 256
#: the scope of a cached row computed at every sample (the others: computed only at the samples the steps read,
#: see :func:`lookup`)
FULL = -1


#: the sums over the features may be reordered (vectorized), in κ inlined into each of its callers, which all
#: compile it with these flags (one formula, the same bits: κ(x, y) = κ(y, x) bit for bit still): rows 1.9×
#: faster at d = 20 (measured)
SUMS = {"reassoc", "contract"}


@compiled(fastmath=SUMS, inline="always")
def kernel_value(kind, params, x, y):
    """κ(x, y) of a named kernel, by scikit-learn's formulas: exp(−γ‖x − y‖²), (γ⟨x, y⟩ + c0)^degree,
    tanh(γ⟨x, y⟩ + c0)."""
    gamma, degree, coef0 = params[0], params[1], params[2]
    s = 0.0
    if kind == RBF:
        for t in range(x.shape[0]):
            d = x[t] - y[t]
            s += d * d
        return np.exp(-gamma * s)
    for t in range(x.shape[0]):
        s += x[t] * y[t]
    if kind == POLY:
        return (gamma * s + coef0) ** degree
    return np.tanh(gamma * s + coef0)


#: exp(v) for v ≤ 0 in vectorized passes (:func:`negative_exp`): v = k ln 2 + r with |r| ≤ ln 2 / 2 (ln 2 split in
#: two, Cody & Waite), exp(r) by its Taylor polynomial of degree 13 (remainder below 1e-17), times 2^k set in the
#: exponent bits. Below UNDERFLOW 2^k could be subnormal: a chunk holding such a value is left to np.exp
LOG2E, LN2_HI, LN2_LO = 1.4426950408889634, 6.93147180369123816490e-01, 1.90821492927058770002e-10
T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12, T13 = (1.0 / math.factorial(n) for n in range(2, 14))
UNDERFLOW = -708.0
#: k = round(v log₂e) without a float-to-integer conversion (not vectorized without AVX-512): v log₂e + 1.5·2⁵² is
#: rounded to an integer by the addition itself, which is then the low bits of its pattern, SHIFTER_BITS + k
SHIFTER = 6755399441055744.0
SHIFTER_BITS = 0x4338000000000000
#: the values exponentiated at once (the buffer of their exponent bits)
EXP_CHUNK = 1024


@compiled(fastmath={"contract"})
def negative_exp(values):
    """exp(v) in place for every v ≤ 0 of the 1-d array ``values``: vectorized, within about 1 ulp of np.exp
    (*measured* 2.7× faster than np.exp); exp(0) = 1 exactly."""
    shifted = np.empty(EXP_CHUNK)
    pattern = shifted.view(np.int64)
    bits = np.empty(EXP_CHUNK, dtype=np.int64)
    scale = bits.view(np.float64)
    for start in range(0, values.shape[0], EXP_CHUNK):
        chunk = values[start:start + EXP_CHUNK]
        if chunk.min() < UNDERFLOW:
            for t in range(chunk.shape[0]):
                chunk[t] = np.exp(chunk[t])
            continue
        for t in range(chunk.shape[0]):
            v = chunk[t]
            shifted[t] = v * LOG2E + SHIFTER
            k = shifted[t] - SHIFTER
            r = (v - k * LN2_HI) - k * LN2_LO
            p = ((((((T13 * r + T12) * r + T11) * r + T10) * r + T9) * r + T8) * r + T7) * r + T6
            chunk[t] = (((((p * r + T5) * r + T4) * r + T3) * r + T2) * r + 1.0) * r + 1.0
        for t in range(chunk.shape[0]):
            bits[t] = (pattern[t] - SHIFTER_BITS + 1023) << 52
        for t in range(chunk.shape[0]):
            chunk[t] *= scale[t]


@compiled(fastmath={"contract"})
def gaussian_entries(products, norms, column_norms, source, rows, cols, gamma):
    """exp(−γ‖x_r − x_c‖²) for r in ``rows``, c in ``cols``, in place of the products aᵀb of their points shifted by
    one common row (``norms``, ``column_norms``: the shifted points' squared norms), by the expansion
    ‖a‖² + ‖b‖² − 2aᵀb, each pair whose expansion is below CANCELLATION·(‖a‖² + ‖b‖²) computed again as the direct
    difference of the original points, as :func:`~ovn_cvx.kernels.squared_distances` (the same threshold): the
    distances, their scaling and exponentials in one pass a row (*measured* 1.35× faster than those separate passes on
    the certificate's exact products, N = 20 000)."""
    for i in range(products.shape[0]):
        row = products[i]
        risky = 0
        for j in range(row.shape[0]):  # branch-free: vectorized
            scale = norms[i] + column_norms[j]
            d = scale - 2.0 * row[j]
            risky += d <= CANCELLATION * scale
            row[j] = -gamma * max(d, 0.0)
        if risky:
            x = source[rows[i]]
            for j in range(row.shape[0]):
                if row[j] >= -gamma * CANCELLATION * (norms[i] + column_norms[j]):
                    y = source[cols[j]]
                    d = 0.0
                    for f in range(x.shape[0]):
                        t = x[f] - y[f]
                        d += t * t
                    row[j] = -gamma * d
        negative_exp(row)


@compiled()
def lookup(i, want, kind, rows, slot_of, owner, stamp, clock, scope):
    """(slot, fresh): the slot of sample i's row, ``fresh`` when its entries for ``want`` must be computed into it
    (:func:`compute`) — a row not cached takes the least recently used slot, a cached row computed for another
    scope is recomputed in place; slot −1 when it is missing and must come from Python (kind PYTHON). A row is
    valid for ``want`` when it was computed for that scope or in full (``FULL``). Precomputed rows are not cached."""
    clock[0] += 1
    slot = slot_of[i]
    if slot >= 0 and (scope[slot] == want or scope[slot] == FULL):
        stamp[slot] = clock[0]
        clock[1] += 1
        return slot, False
    if kind == PYTHON:
        return -1, False
    if slot < 0:
        slot = np.argmin(stamp)  # the least recently used
    _claim(i, slot, slot_of, owner, stamp, clock)
    scope[slot] = want
    return slot, True


@compiled(fastmath=SUMS)
def compute(i, slot, kind, source, params, rows, targets):
    """κ(x_i, x_r) into the row of ``slot`` at the samples ``targets`` (its other entries are left as they are); the
    Gaussian kernel's exponentials in one vectorized pass (:func:`negative_exp`)."""
    x = source[i]
    out = rows[slot]
    if kind != RBF:
        for t in range(targets.shape[0]):
            r = targets[t]
            out[r] = kernel_value(kind, params, x, source[r])
        return
    values = np.empty(targets.shape[0])
    for t in range(targets.shape[0]):
        y = source[targets[t]]
        s = 0.0
        for f in range(x.shape[0]):  # as kernel_value's: κ(x, y) = κ(y, x) bit for bit
            d = x[f] - y[f]
            s += d * d
        values[t] = -params[0] * s
    negative_exp(values)
    for t in range(targets.shape[0]):
        out[targets[t]] = values[t]


@compiled()
def _claim(i, slot, slot_of, owner, stamp, clock):
    if owner[slot] >= 0:
        slot_of[owner[slot]] = -1
    owner[slot] = i
    slot_of[i] = slot
    stamp[slot] = clock[0]
    clock[2] += 1


@compiled()
def store(i, values, rows, slot_of, owner, stamp, clock, scope):
    """Put a full row computed in Python into the least recently used slot."""
    clock[0] += 1
    slot = np.argmin(stamp)  # the least recently used
    rows[slot, :] = values
    _claim(i, slot, slot_of, owner, stamp, clock)
    scope[slot] = FULL


class KernelRows:
    """The rows of κ on the training set: how they are obtained, the cache and its counters.

    ``clock`` holds [accesses, hits, rows computed]; ``scope`` what each cached row was computed for (``FULL``, or
    the scope of :func:`lookup`); ``partial``: the rows are single precision and computed only where the steps read
    them. The arrays are what the compiled loop receives."""

    def __init__(self, problem: Problem, cache_size: float, min_rows: int):
        N = problem.n_samples
        self.problem = problem
        self.params = np.array([0.0, float(problem.degree), float(problem.coef0)])
        kernel = problem.kernel
        if problem.is_precomputed:
            self.kind, self.source = PRECOMPUTED, np.ascontiguousarray(problem.X)
        elif isinstance(kernel, str) and kernel in NAMED and not sp.issparse(problem.X):
            self.kind, self.source = NAMED[kernel], np.ascontiguousarray(problem.X)
        else:
            self.kind, self.source = PYTHON, np.zeros((1, 1))
        if not callable(kernel) and not problem.is_precomputed:
            self.params[0] = resolve_gamma(problem.gamma, problem.X)
        # when the cache cannot hold every row in double precision, the rows are computed only where the steps read
        # them and kept in single precision, as libsvm's (twice as many fit; the exact products never read them);
        # else in full, each computed once and read again by the exact products (:meth:`entries`)
        budget = self.budget = cache_size * 2**20
        self.partial = self.kind != PRECOMPUTED and budget < 8.0 * N * N
        dtype = np.float32 if self.partial else np.float64
        slots = min(N, max(min_rows, int(budget // (np.dtype(dtype).itemsize * N))))
        # a precomputed Gram matrix is read directly: it stands for the rows (row i of sample i, not cached)
        self.rows = self.source if self.kind == PRECOMPUTED else np.zeros((slots, N), dtype=dtype)
        self.slot_of = np.full(N, -1, dtype=np.int64)
        self.owner = np.full(slots, -1, dtype=np.int64)
        self.stamp = np.zeros(slots, dtype=np.int64)
        self.scope = np.full(slots, FULL, dtype=np.int64)
        self.clock = np.zeros(3, dtype=np.int64)
        self.diagonal = self._diagonal()

    @property
    def capacity(self) -> int:
        """How many rows the cache holds (0: a precomputed Gram matrix, read directly)."""
        return 0 if self.kind == PRECOMPUTED else self.rows.shape[0]

    @property
    def arrays(self) -> tuple:
        """The arguments of the compiled loop's row access, in order."""
        return (self.kind, self.source, self.params, self.rows, self.slot_of, self.owner, self.stamp, self.clock,
                self.scope, self.partial)

    def columns(self, cols: np.ndarray):
        """What every block against the samples ``cols`` shares, prepared once (the Gaussian kernel's: the points
        shifted by their mean row — distances are shift-invariant, and the expansion's round-off scales with the
        norms — and their squared norms; None for the others)."""
        if self.kind != RBF or not cols.size:
            return None
        points = self.source[cols]
        shift = points.mean(axis=0)
        points -= shift
        return shift, points, np.einsum("ij,ij->i", points, points)

    def block(self, rows: np.ndarray, cols: np.ndarray, columns=None) -> np.ndarray:
        """κ(x_rows, x_cols) as the problem defines it (precomputed, the Gaussian kernel by one
        matrix product and :func:`gaussian_entries`, the others by :func:`~ovn_cvx.kernels.kernel_matrix`); ``columns``:
        :meth:`columns` of ``cols`` when already prepared."""
        problem = self.problem
        if self.kind == PRECOMPUTED:
            return problem.X[np.ix_(rows, cols)]
        if not rows.size or not cols.size:  # scikit-learn's checks reject an empty side
            return np.zeros((rows.size, cols.size))
        if self.kind == RBF:
            shift, points, norms = columns if columns is not None else self.columns(cols)
            own = self.source[rows] - shift
            out = own @ points.T
            gaussian_entries(out, np.einsum("ij,ij->i", own, own), norms, self.source, rows.astype(np.int64),
                             cols.astype(np.int64), self.params[0])
            return out
        gamma = problem.gamma if callable(problem.kernel) else self.params[0]
        return kernel_matrix(problem.kernel, problem.X[rows], problem.X[cols], gamma=gamma, degree=problem.degree,
                             coef0=problem.coef0)

    def entries(self, rows: np.ndarray, cols: np.ndarray, absolute: bool = False, columns=None) -> np.ndarray:
        """κ(x_rows, x_cols) (|κ| when ``absolute``): the rows of samples cached whole (double precision) read from
        the cache, the others computed by :meth:`block` (one matrix product and vectorized exponentials: *measured*
        2× faster per entry than the compiled loop's sums, N = 20 000, d = 20); ``columns`` as :meth:`block`'s."""
        slots = np.full(rows.size, -1, dtype=np.int64)
        if self.kind not in (PRECOMPUTED, PYTHON) and not self.partial:
            slots = self.slot_of[rows]
        missing = np.flatnonzero(slots < 0)
        if missing.size == rows.size:
            out = self.block(rows, cols, columns)
        else:
            out = _gather(self.rows, slots, cols.astype(np.int64))
            out[missing] = self.block(rows[missing], cols, columns)
        return np.abs(out) if absolute else out

    @property
    def workspace_capacity(self) -> int:
        """The most doubles :meth:`workspaces` gives: beside the cached rows within the budget, or in the cached rows'
        own memory."""
        cached = 0 if self.kind == PRECOMPUTED else self.rows.nbytes
        return int(max(self.budget - cached, cached)) // 8

    def workspaces(self, sizes: list[int]) -> list[np.ndarray]:
        """Square arrays of doubles, n × n for each n of ``sizes``, within the cache's budget (Σ n² ≤
        :attr:`workspace_capacity`): new ones when they fit beside the cached rows, else in the rows' own memory,
        every cached row dropped (the steps compute again the rows they read). The fit's memory stays within
        ``cache_size`` plus O(N·K)."""
        total = sum(n * n for n in sizes)
        if self.kind == PRECOMPUTED or self.rows.nbytes + 8 * total <= self.budget:
            memory = np.empty(total)
        else:
            self.slot_of[:], self.owner[:], self.stamp[:] = -1, -1, 0
            memory = self.rows.reshape(-1).view(np.uint8)[:8 * total].view(np.float64)
        ends = np.cumsum([n * n for n in sizes])
        return [memory[end - n * n:end].reshape(n, n) for n, end in zip(sizes, ends)]

    def prefetch(self, samples: np.ndarray) -> None:
        """Compute and cache the rows of ``samples`` (named kernels on dense data; as many as the cache holds): a
        warm start's support, whose rows the exact Z reads and the steps need (measured, N = 1 600: its first Z
        computed entry by entry, and again at the next exact Z, cost as much as the steps it saved)."""
        if self.kind in (PRECOMPUTED, PYTHON):
            return
        every = np.arange(self.problem.n_samples)
        for i in samples[:self.rows.shape[0]]:
            slot, fresh = lookup(int(i), FULL, self.kind, self.rows, self.slot_of, self.owner, self.stamp, self.clock,
                                 self.scope)
            if fresh:
                compute(int(i), slot, self.kind, self.source, self.params, self.rows, every)

    def supply(self, i: int) -> None:
        """Compute the row the loop asked for (kind PYTHON) and cache it."""
        row = self.block(np.array([i]), np.arange(self.problem.n_samples))[0]
        store(i, row, self.rows, self.slot_of, self.owner, self.stamp, self.clock, self.scope)

    def _diagonal(self) -> np.ndarray:
        """κ(x_i, x_i) for every sample (for a callable kernel or sparse data: the diagonals of small blocks)."""
        problem = self.problem
        if problem.is_precomputed:
            return np.ascontiguousarray(np.diag(problem.X))
        if self.kind != PYTHON:
            return _named_diagonal(self.kind, self.source, self.params)
        starts = range(0, problem.n_samples, DIAGONAL_BLOCK)
        return np.concatenate([np.diag(self.block(rows, rows)) for rows in
                               (np.arange(s, min(s + DIAGONAL_BLOCK, problem.n_samples)) for s in starts)])


class BlockGram:
    """The training Gram matrix G (or a submatrix G[rows][:, cols], or |G|) as the package's evaluators use it —
    ``G @ U``, ``abs(G)``, ``G[np.ix_(rows, cols)]`` — computed by blocks of :meth:`KernelRows.entries` and never
    stored: the exact objective and dual value (:func:`ovn_cvx.objective`, :func:`ovn_cvx.duality.dual_value`) of a
    problem too large for its N × N matrix."""

    def __init__(self, rows: KernelRows, index: tuple | None = None, absolute: bool = False):
        N = rows.problem.n_samples
        self.rows = rows
        self.index = index if index is not None else (np.arange(N), np.arange(N))
        self.absolute = absolute

    @property
    def shape(self) -> tuple[int, int]:
        return self.index[0].size, self.index[1].size

    def __getitem__(self, key) -> "BlockGram":
        rows, cols = (np.ravel(k) for k in key)
        return BlockGram(self.rows, (self.index[0][rows], self.index[1][cols]), self.absolute)

    def __abs__(self) -> "BlockGram":
        return BlockGram(self.rows, self.index, True)

    def __matmul__(self, U: np.ndarray) -> np.ndarray:
        """G @ U over the columns where U is nonzero, by blocks of at most BLOCK_ENTRIES kernel entries
        (:meth:`KernelRows.entries`), each multiplied by BLAS."""
        U = np.asarray(U, dtype=np.float64)
        rows, cols = self.index
        nonzero = np.flatnonzero(np.any(U != 0, axis=1))
        out = np.zeros((rows.size, U.shape[1]))
        if nonzero.size == 0:
            return out
        weights, cols = np.ascontiguousarray(U[nonzero]), cols[nonzero]
        step, columns = max(1, BLOCK_ENTRIES // nonzero.size), self.rows.columns(cols)
        for start in range(0, rows.size, step):
            out[start:start + step] = self.rows.entries(rows[start:start + step], cols, self.absolute,
                                                        columns) @ weights
        return out


@compiled()
def _gather(rows, slots, cols):
    """rows[slots[t], cols] for every t with slots[t] ≥ 0 (the others left unset)."""
    out = np.empty((slots.shape[0], cols.shape[0]))
    for t in range(slots.shape[0]):
        if slots[t] >= 0:
            row = rows[slots[t]]
            for u in range(cols.shape[0]):
                out[t, u] = row[cols[u]]
    return out


@compiled(fastmath=SUMS)
def _named_diagonal(kind, source, params):
    out = np.empty(source.shape[0])
    for i in range(source.shape[0]):
        out[i] = kernel_value(kind, params, source[i], source[i])
    return out
