"""The rows x_{i_p} of the pairs as an operator (docs/theory.md §9.11): the margins u_p = x_{i_p}ᵀ w_{k_p} of W and
the transpose Σ_p t_p x_{i_p} e_{k_p}ᵀ, for sparse and dense X, and the band's rows (a copy or a mask)."""
from __future__ import annotations

from typing import Protocol

import numpy as np
import scipy.sparse as sp

from ...problem import Pairs, Problem

#: a band with fewer than this share of the pairs gets a copy of its rows, a larger one is a mask over all rows
BAND_COPY_SHARE = 0.5


class PairRows(Protocol):
    """What the matrix-free form needs of the pair rows: ``label`` (the pairs' classes), the margins of W (M×K)
    and the transpose product of a vector t over the pairs, and the same with the rows squared entrywise."""

    label: np.ndarray

    def forward(self, V: np.ndarray) -> np.ndarray: ...

    def backward(self, t: np.ndarray) -> np.ndarray: ...

    def squares_backward(self, t: np.ndarray) -> np.ndarray: ...


def pair_rows(problem: Problem) -> "SparsePairRows | DensePairRows":
    """The rows x_{i_p} of every pair, as an operator (docs/theory.md §9.11): margins u_p = x_{i_p}ᵀ w_{k_p} and
    their transpose Σ_p t_p x_{i_p} e_{k_p}ᵀ cost nnz of the pair rows, against K·nnz(X) for X W (a multilabel
    row enters only its own labels' products)."""
    pairs = problem.pairs
    if sp.issparse(problem.X):
        return SparsePairRows(problem.X.tocsr(), pairs, problem.n_classes)
    return DensePairRows(problem.X, pairs, problem.n_classes)


class SparsePairRows:
    """Sparse X: one CSR matrix S (n × K·M) whose row p is x_{i_p} placed in the column block of class k_p, so
    that the margins are S vec(Wᵀ) and the transpose Sᵀt: one sparse product each, for all classes."""

    def __init__(self, X, pairs: Pairs, n_classes: int):
        self.M, self.K, self.label = X.shape[1], n_classes, pairs.label
        rows = X[pairs.sample]
        shift = np.repeat(pairs.label.astype(np.int64) * self.M, np.diff(rows.indptr))
        self.S = sp.csr_matrix((rows.data, rows.indices + shift, rows.indptr), shape=(len(pairs), self.K * self.M))

    def restrict(self, index: np.ndarray) -> "SparsePairRows":
        sub = object.__new__(SparsePairRows)
        sub.M, sub.K, sub.label, sub.S = self.M, self.K, self.label[index], self.S[index]
        return sub

    def forward(self, V: np.ndarray) -> np.ndarray:
        return self.S @ V.T.ravel()

    def backward(self, t: np.ndarray) -> np.ndarray:
        return (self.S.T @ t).reshape(self.K, self.M).T

    def _squared(self) -> sp.csr_matrix:
        """S with its entries squared, sharing S's index arrays."""
        return sp.csr_matrix((self.S.data ** 2, self.S.indices, self.S.indptr), shape=self.S.shape)

    def squares_backward(self, t: np.ndarray) -> np.ndarray:
        """Σ_p t_p x_{i_p}² e_{k_p}ᵀ (elementwise squares): the diagonal of the band Hessian."""
        return (self._squared().T @ t).reshape(self.K, self.M).T

    def row_squares(self) -> np.ndarray:
        """‖x_{i_p}‖² for every pair."""
        return np.asarray(self._squared().sum(axis=1)).ravel()


class DensePairRows:
    """Dense X: the rows of each class's pairs as one dense block per class (pairs are sorted by class)."""

    def __init__(self, X, pairs: Pairs, n_classes: int):
        self.M, self.K, self.label = X.shape[1], n_classes, pairs.label
        bounds = pairs.class_bounds(n_classes)
        self.slices = [slice(bounds[k], bounds[k + 1]) for k in range(n_classes)]
        self.blocks = [X[pairs.sample[s]] for s in self.slices]

    def restrict(self, index: np.ndarray) -> "DensePairRows":
        sub = object.__new__(DensePairRows)
        sub.M, sub.K, sub.label = self.M, self.K, self.label[index]
        cuts = np.searchsorted(index, [s.start for s in self.slices] + [self.slices[-1].stop])
        sub.slices = [slice(cuts[k], cuts[k + 1]) for k in range(self.K)]
        sub.blocks = [B[index[s] - outer.start] for B, s, outer in zip(self.blocks, sub.slices, self.slices)]
        return sub

    def forward(self, V: np.ndarray) -> np.ndarray:
        return np.concatenate([B @ V[:, k] for k, B in enumerate(self.blocks)])

    def backward(self, t: np.ndarray) -> np.ndarray:
        return np.stack([B.T @ t[s] for B, s in zip(self.blocks, self.slices)], axis=1)

    def squares_backward(self, t: np.ndarray) -> np.ndarray:
        # one pass without a squared copy of the rows (the blocks are the size of the data)
        return np.stack([np.einsum("pj,pj,p->j", B, B, t[s]) for B, s in zip(self.blocks, self.slices)], axis=1)

    def row_squares(self) -> np.ndarray:
        return np.concatenate([np.einsum("ij,ij->i", B, B) for B in self.blocks])


def band_rows(rows, band: np.ndarray):
    """The band's pair rows: a copy when the band is a small share of the pairs (the products then cost the band
    only), else all rows, masked (no second copy of the data; the products cost at most twice the band's)."""
    if band.size < BAND_COPY_SHARE * len(rows.label):
        return rows.restrict(band)
    return MaskedRows(rows, band)


class MaskedRows:
    """The rows of the pairs in ``band`` (indices) as products with all rows and a mask."""

    def __init__(self, rows, band: np.ndarray):
        self.rows, self.band, self.label = rows, band, rows.label[band]

    def _padded(self, t: np.ndarray) -> np.ndarray:
        full = np.zeros(len(self.rows.label))
        full[self.band] = t
        return full

    def forward(self, V: np.ndarray) -> np.ndarray:
        return self.rows.forward(V)[self.band]

    def backward(self, t: np.ndarray) -> np.ndarray:
        return self.rows.backward(self._padded(t))

    def squares_backward(self, t: np.ndarray) -> np.ndarray:
        return self.rows.squares_backward(self._padded(t))
