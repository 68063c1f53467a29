"""Kernel matrices (through ``sklearn.metrics.pairwise``) and the checked eigen-factor G ≈ L Lᵀ."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.linalg import LinAlgError, cholesky
from scipy.sparse.linalg import eigsh
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.cluster import KMeans
from sklearn.kernel_approximation import Nystroem
from sklearn.metrics.pairwise import KERNEL_PARAMS, pairwise_kernels
from sklearn.utils.extmath import row_norms, safe_sparse_dot
from sklearn.utils.validation import check_is_fitted

from ._validation import check_no_dates, check_number, float_array, naming

NAMED_KERNELS = ("linear", "rbf", "poly", "sigmoid", "precomputed")
#: kernel products are computed by blocks of rows of at most this many kernel entries (128 MiB)
KERNEL_BLOCK = 2**24

# docs/theory.md §4.2: an eigenvalue below −NEGATIVE_TOL·scale means "not a kernel matrix".
NEGATIVE_TOL = 1e-8

#: a squared distance computed as ‖a‖² + ‖b‖² − 2aᵀb is recomputed as ‖a − b‖² when it is below this fraction of
#: ‖a‖² + ‖b‖²: the expansion's round-off, about M·ε·(‖a‖² + ‖b‖²), would be ≥ M·2e-13 of it (measured: rows at
#: |x| ≈ 6e6 gave κ = 0.99941 for two identical rows instead of 1)
CANCELLATION = 1e-3
#: entries of the direct differences formed at once (the pairs recomputed are taken in chunks of this size)
DIRECT_CHUNK = 1 << 20


def validate_kernel(kernel, gamma=None, degree=3, coef0=0.0) -> tuple:
    """``(gamma, degree, coef0)`` checked as ``sklearn.svm.SVC`` takes them — gamma > 0 (or "scale", "auto",
    None), an integer degree >= 0, a finite coef0 — as Python numbers; a TypeError/ValueError naming the bad one."""
    if not callable(kernel) and (not isinstance(kernel, str) or kernel not in NAMED_KERNELS):
        raise ValueError(f"kernel must be one of {NAMED_KERNELS} or a callable, got {kernel!r}")
    if gamma is not None and not (isinstance(gamma, str) and gamma in ("scale", "auto")):
        gamma = check_number("gamma", gamma, low=0, strict=True)  # or "scale", "auto"
    return gamma, check_number("degree", degree, low=0, integer=True), check_number("coef0", coef0)


def resolve_gamma(gamma, X_train) -> float:
    """The numeric γ of "scale" (1 / (M · Var X), as ``SVC``; None means "scale"), "auto" (1 / M) or a number."""
    if gamma is None or gamma == "scale":
        # Var X over all N·M entries; for a sparse X from its stored values (E[x²] − E[x]², as SVC does)
        var = X_train.multiply(X_train).mean() - X_train.mean() ** 2 if sp.issparse(X_train) else X_train.var()
        return 1.0 / (X_train.shape[1] * var) if var > 0 else 1.0
    if gamma == "auto":
        return 1.0 / X_train.shape[1]
    return float(gamma)


def kernel_matrix(kernel, X_new, X_train, *, gamma=None, degree=3, coef0=0.0, n_train=None):
    """κ(X_new, X_train) of shape (n, N), dense. X_new and X_train may be sparse (CSR or CSC; scikit-learn's pairwise
    kernels take them as they are). For "precomputed", X_new must already be (n, N) (a sparse one is densified: it
    is the kernel matrix)."""
    check_no_dates("X", X_new)
    X_new = float_array(X_new, "X", accept_sparse=("csr", "csc"))
    if isinstance(kernel, str) and kernel == "precomputed":
        if X_new.shape[1] != n_train:
            raise ValueError(f"X must be a precomputed kernel of shape (n, {n_train}), got {X_new.shape}")
        return X_new.toarray() if sp.issparse(X_new) else X_new
    if X_new.shape[1] != X_train.shape[1]:
        raise ValueError(f"X has {X_new.shape[1]} features, the problem was built with {X_train.shape[1]}")
    if callable(kernel):
        K = kernel(X_new, X_train)
        with naming("kernel"):  # the callable's output (a sparse one is the n×N kernel matrix: densified)
            K = np.asarray(K.toarray() if sp.issparse(K) else K, dtype=np.float64)
        if K.shape != (X_new.shape[0], X_train.shape[0]):
            raise ValueError(f"the kernel callable returned shape {K.shape}, expected "
                             f"{(X_new.shape[0], X_train.shape[0])}")
        if not np.isfinite(K).all():
            raise ValueError("the kernel callable returned non-finite values")
        return K
    if kernel == "rbf":
        K = squared_distances(X_new, X_train)
        K *= -resolve_gamma(gamma, X_train)
        return np.exp(K, out=K)
    params = {"gamma": resolve_gamma(gamma, X_train), "degree": degree, "coef0": coef0}
    params = {k: v for k, v in params.items() if k in KERNEL_PARAMS[kernel]}
    # n_jobs=1: under an active joblib configuration (e.g. parallel_config(backend="dask")) the default None
    # would split the matrix into column blocks computed apart, which changes its last bits (measured: 4e-14 in
    # the verification objectives); the kernel matrix must not depend on where it is computed
    with np.errstate(over="ignore", invalid="ignore"):  # reported below, by the parameters that caused it
        K = pairwise_kernels(X_new, X_train, metric=kernel, n_jobs=1, **params)
    if not np.isfinite(K).all():
        raise _overflow(kernel, params)
    return K


def _overflow(kernel: str, params: dict) -> ValueError:
    """The error of a named kernel whose values are beyond the float range on X, naming its parameters."""
    given = ", ".join(f"{name}={value:.6g}" for name, value in params.items())
    return ValueError(f"the {kernel} kernel with {given} overflows float64 on X (a kernel value is not finite): "
                      f"choose smaller {' or '.join(params)}, or rescale X")


def psd_by_construction(kernel, coef0) -> bool:
    """The named kernels whose Gram matrix is positive semidefinite on any data (docs/theory.md §4.2), so that it
    need not be built to be checked: the Gaussian kernel, and the polynomial one (γ⟨x, y⟩ + c₀)^degree with c₀ ≥ 0
    (γ⟨x, y⟩ + c₀ is the PSD linear kernel plus a nonnegative constant, and an integer power of a PSD kernel is PSD
    by the Schur product theorem). A polynomial with c₀ < 0, the sigmoid kernel and a callable can be indefinite,
    and the proven bound needs a PSD kernel: their Gram matrix is checked (:func:`check_gram`)."""
    return isinstance(kernel, str) and (kernel == "rbf" or (kernel == "poly" and coef0 >= 0))


def poly_diagonal(squared_norms: np.ndarray, gamma: float, degree, coef0: float) -> np.ndarray:
    """κ(x_i, x_i) = (γ‖x_i‖² + c₀)^degree of the polynomial kernel from the rows' squared norms, without the N × N
    matrix. A ValueError naming gamma, degree and coef0 when (γ max‖x‖² + |c₀|)^degree is beyond the float range:
    it bounds |κ(x, y)| for every pair (|⟨x, y⟩| ≤ ‖x‖‖y‖), so below it no kernel value overflows."""
    with np.errstate(over="ignore"):
        largest = (gamma * squared_norms.max(initial=0.0) + abs(coef0)) ** degree
    if not np.isfinite(largest):
        raise _overflow("poly", {"gamma": gamma, "degree": degree, "coef0": coef0})
    return (gamma * squared_norms + coef0) ** degree


def check_diagonal(diagonal: np.ndarray) -> None:
    """A kernel matrix with no positive diagonal entry has no positive eigenvalue: rejected."""
    if diagonal.max(initial=0.0) <= 0:
        raise ValueError("the kernel matrix has no positive eigenvalue (its diagonal is <= 0)")


def squared_distances(A, B) -> np.ndarray:
    """‖a_i − b_j‖² (n×N, dense) of the rows of A and B (dense or sparse), accurate for every pair: identical rows
    give exactly 0 and distances far below the rows' norms do not cancel (the Gaussian kernel is then exactly 1 on
    a duplicate row, whatever its magnitude).

    The fast expansion ‖a‖² + ‖b‖² − 2aᵀb (one matrix product, as scikit-learn's ``euclidean_distances``) is taken
    after a shift of both sets by B's mean row (distances are shift-invariant; for sparse data, which a shift would
    densify, without it); the pairs whose expansion is below ``CANCELLATION``·(‖a‖² + ‖b‖²), where its round-off
    could matter, are computed again as the direct difference of the original rows."""
    same = A is B
    if sp.issparse(B):
        A0, B0 = A, B
    else:
        shift = B.mean(axis=0)
        B0 = B - shift
        A0 = B0 if same else (A.toarray() if sp.issparse(A) else A) - shift
    a2 = row_norms(A0, squared=True)
    b2 = a2 if same else row_norms(B0, squared=True)
    D = np.asarray(safe_sparse_dot(A0, B0.T, dense_output=True))  # scikit-learn's fast product of two sparse ones
    D *= -2.0
    D += a2[:, None]
    D += b2[None, :]
    # the pairs at risk: those below the largest threshold (one comparison with a number), then each below its own
    # (flatnonzero: np.nonzero of a 2-D mask is 30x slower, measured)
    rows, cols = np.divmod(np.flatnonzero(D <= CANCELLATION * (a2.max(initial=0.0) + b2.max(initial=0.0))), D.shape[1])
    risky = D[rows, cols] <= CANCELLATION * (a2[rows] + b2[cols])
    rows, cols = rows[risky], cols[risky]
    step = max(1, DIRECT_CHUNK // max(1, A.shape[1]))
    for start in range(0, rows.size, step):
        i, j = rows[start:start + step], cols[start:start + step]
        difference = A[i] - B[j]
        D[i, j] = (np.asarray(difference.multiply(difference).sum(axis=1)).ravel() if sp.issparse(difference)
                   else np.einsum("ij,ij->i", np.asarray(difference), np.asarray(difference)))
    return np.maximum(D, 0.0, out=D)


def kernel_product(kernel, X_new, basis, weights, *, gamma=None, degree=3, coef0=0.0) -> np.ndarray:
    """κ(X_new, basis) @ weights, shape (n, K), by blocks of rows of at most ``KERNEL_BLOCK`` kernel entries:
    κ(X_new, X_S) for a million rows would not fit, and the N × N Gram matrix is never formed. ``gamma`` must already
    be resolved on the training rows (:func:`resolve_gamma`), as a block of them would resolve it differently."""
    if not basis.shape[0]:  # pairwise_kernels rejects an empty basis
        return np.zeros((X_new.shape[0], weights.shape[1]))
    rows = max(1, KERNEL_BLOCK // basis.shape[0])
    return np.vstack([kernel_matrix(kernel, X_new[start:start + rows], basis, gamma=gamma, degree=degree,
                                    coef0=coef0) @ weights for start in range(0, X_new.shape[0], rows)])

def check_gram(G: np.ndarray) -> np.ndarray:
    """Validate a training kernel matrix: square, finite, symmetric and positive semidefinite.

    PSD is tested by a Cholesky factorization of G + NEGATIVE_TOL·λ_max·I, which fails exactly when G has an
    eigenvalue below about −NEGATIVE_TOL·λ_max (docs/theory.md §4.2): an O(N³/3) test, several times cheaper than the
    eigendecomposition that only some solvers need (λ_max by Lanczos).
    """
    G = np.asarray(G, dtype=np.float64)
    if G.ndim != 2 or G.shape[0] != G.shape[1]:
        raise ValueError(f"the kernel matrix must be square, got shape {G.shape}")
    if not np.isfinite(G).all():
        raise ValueError("the kernel matrix contains NaN or infinite values")
    check_diagonal(np.diag(G))
    asymmetry = np.abs(G - G.T).max()
    if asymmetry > 1e-10 * np.abs(G).max():
        raise ValueError(f"the kernel matrix is not symmetric (max |G - Gᵀ| = {asymmetry:.3g})")
    if G.shape[0] <= 64:
        scale = np.linalg.eigvalsh(G)[-1]
    else:
        scale = eigsh(G, k=1, which="LA", return_eigenvectors=False, v0=np.ones(G.shape[0]))[0]
    try:
        cholesky(G + NEGATIVE_TOL * scale * np.eye(G.shape[0]), lower=True, check_finite=False)
    except LinAlgError:
        raise ValueError(f"the kernel matrix is not positive semidefinite: it has an eigenvalue below "
                         f"-{NEGATIVE_TOL:g} x its largest eigenvalue {scale:.3g} (a kernel must give a PSD "
                         "matrix)") from None
    return G


@dataclass(frozen=True)
class KernelFactor:
    """G = U diag(s) Uᵀ restricted to the r eigenvalues above round-off, N·ε_mach·max(s) (docs/theory.md §9.9).

    Only directions the eigensolver cannot tell from zero are dropped: a fixed relative cutoff (1e-10, before)
    changed the problem on a badly scaled Gram (columns of scales 1e6 and 1 give eigenvalue ratios ~1e-12:
    every solver then agreed on the wrong optimum).

    ``features`` is L = U_r diag(√s_r) (N×r, G ≈ L Lᵀ). Coefficients C in eigen-coordinates map back
    to A = U_r diag(s_r^{−1/2}) C (the minimum-norm coefficients, docs/theory.md §4.2b).
    """

    vectors: np.ndarray
    values: np.ndarray

    @classmethod
    def from_gram(cls, G: np.ndarray) -> "KernelFactor":
        """Factor a kernel matrix already validated by :func:`check_gram` (round-off negatives are clipped)."""
        s, U = np.linalg.eigh(G)
        keep = s > G.shape[0] * np.finfo(np.float64).eps * s[-1]
        return cls(vectors=U[:, keep], values=s[keep])

    @property
    def rank(self) -> int:
        return self.values.size

    @property
    def features(self) -> np.ndarray:
        return self.vectors * np.sqrt(self.values)

    def from_coef(self, A: np.ndarray) -> np.ndarray:
        """Kernel coefficients A (N×K) → eigen-coordinates C = Lᵀ A (r×K), the same decision values L C = G A
        (exactly when nothing is cut)."""
        return np.sqrt(self.values)[:, None] * (self.vectors.T @ A)

    def to_coef(self, C: np.ndarray) -> np.ndarray:
        """Eigen-coordinates C (r×K) → kernel coefficients A (N×K)."""
        return self.vectors @ (C / np.sqrt(self.values)[:, None])


class KMeansNystroem(TransformerMixin, BaseEstimator):
    """Nyström features whose landmarks are k-means centres of the training rows instead of a uniform sample of them
    (Zhang, Tsang & Kwok, "Improved Nyström low-rank approximation and error analysis", ICML 2008; docs/theory.md
    §9.12): scikit-learn's ``KMeans`` (one initialisation) with ``n_components`` centres, then scikit-learn's
    ``Nystroem`` with every centre in its basis. Only the fitted ``Nystroem`` is kept. Parameters as ``Nystroem``'s."""

    def __init__(self, kernel="rbf", *, gamma=None, coef0=None, degree=None, n_components=100, random_state=None):
        self.kernel = kernel
        self.gamma = gamma
        self.coef0 = coef0
        self.degree = degree
        self.n_components = n_components
        self.random_state = random_state

    def fit(self, X, y=None):
        centres = KMeans(self.n_components, n_init=1, random_state=self.random_state).fit(X).cluster_centers_
        self.nystroem_ = Nystroem(self.kernel, gamma=self.gamma, coef0=self.coef0, degree=self.degree,
                                  n_components=centres.shape[0], random_state=self.random_state,
                                  n_jobs=1).fit(centres)  # not split under an active joblib backend (kernel_matrix)
        return self

    def transform(self, X):
        check_is_fitted(self, "nystroem_")
        return self.nystroem_.transform(X)
