"""The OvN problem model: data, pairs, hyperparameters and kernel, validated once.

Convention (docs/theory.md §2): for a variant in {"SwSb", "SwHb", "HwSb", "HwHb"}

    F(W, b) = R(W) + Σ_p c_p [1 − y_p f_{k_p}(x_{i_p})]_+ + B(b),

with one hinge term per nonzero Y_ik (a *pair* p = (i_p, k_p), sign y_p = Y_{i_p k_p}, cost
c_p = β s_{i_p}), R(W) = ½ tr(W P Wᵀ) with P = (1−α) I + α 11ᵀ (soft w) or P = I under Σ_k w_k = 0
(hard w), and B(b) = γ (Σ_k b_k)² (soft b) or 0 under Σ_k b_k = 0 (hard b). γ is ``bias_penalty``.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp
from sklearn.utils.extmath import row_norms
from sklearn.utils.validation import check_array

from ._memory import check_fits
from ._validation import check_no_dates, check_number, float_array, naming
from ._variants import VARIANTS
from .coupling import Coupling
from .kernels import (KernelFactor, check_diagonal, check_gram, kernel_matrix, kernel_product, poly_diagonal,
                      psd_by_construction, resolve_gamma, validate_kernel)
from .labels import label_indicator

#: the constructor's arguments: the fields ``Problem.replace`` can change
FIELDS = ("X", "Y", "variant", "kernel", "alpha", "beta", "bias_penalty", "gamma", "degree", "coef0",
          "sample_weight", "label_weight", "negative_weight")
#: the fields the pairs and their weights depend on
WEIGHT_FIELDS = ("X", "Y", "sample_weight", "label_weight", "negative_weight")
#: the fields the kernel matrix depends on: while none of them changes, ``replace`` shares it and its factor
KERNEL_FIELDS = ("X", "kernel", "gamma", "degree", "coef0")
#: what to do when an exact kernel problem does not fit in memory
KERNEL_REMEDY = ("approximate the kernel by r explicit features (OvNClassifier(kernel_approximation='nystroem', "
                 "n_components=r), or a linear Problem on scikit-learn's Nystroem features), or use fewer samples")


def alpha_interval(n_classes: int) -> tuple[float, float]:
    """Open interval of admissible α for K classes: −1/(K−1) < α < 1 (docs/theory.md §3.1).

    Parameters
    ----------
    n_classes : int
        The number of classes K (at least 2).

    Returns
    -------
    tuple of float
        The interval's ends (−1/(K−1), 1).

    Examples
    --------
    >>> import ovn_cvx
    >>> ovn_cvx.alpha_interval(3)
    (-0.5, 1.0)
    """
    return -1.0 / (n_classes - 1), 1.0


@dataclass(frozen=True)
class Pairs:
    """The hinge terms: pair p is (sample[p], label[p]) with sign[p] = ±1 and weight[p] = s_i v_k (times u_k for a
    known-negative pair).

    Pairs are sorted by class, then by sample, so ``label`` is non-decreasing.
    The cost of a pair is ``beta * weight``.
    """

    sample: np.ndarray
    label: np.ndarray
    sign: np.ndarray
    weight: np.ndarray

    def __len__(self) -> int:
        return self.sample.shape[0]

    def class_bounds(self, n_classes: int) -> np.ndarray:
        """The pairs of class k are ``bounds[k]:bounds[k + 1]`` (pairs are sorted by class); :func:`class_sums`
        sums per-pair values by class over them."""
        return np.searchsorted(self.label, np.arange(n_classes + 1))


def class_sums(values: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """Σ of ``values`` over each class's pairs, 0 for a class without pairs: ``values`` holds one entry (or one row)
    per pair in the pairs' order, ``bounds`` is :meth:`Pairs.class_bounds`. The pairs are sorted by class, so these
    are sums of runs (np.bincount by label measured 40× slower at 50 000 pairs).

    Parameters
    ----------
    values : ndarray of shape (n_pairs,) or (n_pairs, d)
        Per-pair values (or rows), in the order of the pairs.
    bounds : ndarray of shape (n_classes + 1,)
        The class bounds of the pairs, :meth:`Pairs.class_bounds`.

    Returns
    -------
    ndarray of shape (n_classes,) or (n_classes, d)
        The sums by class, in float64 (or the values' type, if wider), whether or not a class is empty.

    Examples
    --------
    >>> import numpy as np
    >>> from ovn_cvx.problem import class_sums
    >>> class_sums(np.array([1.0, 2.0, 3.0]), np.array([0, 2, 2, 3]))   # class 1 has no pairs
    array([3., 0., 3.])
    """
    starts, dtype = bounds[:-1], np.result_type(values, np.float64)
    filled = starts < bounds[1:]
    if filled.all():
        return np.add.reduceat(values, starts, axis=0, dtype=dtype)
    # reduceat gives an empty run the entry at its start (and a start past the end is an error): the classes with
    # pairs alone, whose runs are the same
    sums = np.zeros((starts.size,) + values.shape[1:], dtype=dtype)
    if filled.any():
        sums[filled] = np.add.reduceat(values, starts[filled], axis=0, dtype=dtype)
    return sums


def _positive_weights(name, weights, size):
    if weights is None:
        return np.ones(size)
    with naming(name):
        w = float_array(weights, name, ensure_2d=False)
    if w.shape != (size,):
        raise ValueError(f"{name} must have shape ({size},), got {w.shape}")
    if (w <= 0).any():
        raise ValueError(f"{name} must be > 0 for every entry")
    return w


#: the largest magnitude of data and hyperparameters: the solvers form squares and products of them (Gram
#: entries, c_p·ξ_p, c_p²-sized Newton weights), which overflow float64 near 1e154 (measured: X ×1e200 and
#: β = 1e300 broke the factorizations; X ×1e150 still solves)
MAX_MAGNITUDE = 1e100


#: the range of every pair cost c_p = β s_i v_k (u_k): [1/MAX_MAGNITUDE, MAX_MAGNITUDE]. The solvers' systems weigh the
#: pairs by c_p and by c_p² (Newton weights c/(2ε), the interior point's ξ/ν); costs beyond it under- or overflow there
#: (measured: β = 5e-324, a label weight of 1e-300 or 1e300 next to 1, a sample weight of 1e300 ended in a raw
#: LinAlgError), while every combination of costs inside it gets an answer with its proven bound (an extreme
#: mix, 1e-100 next to 1e100, an honest "inaccurate" one)
COST_RANGE = (1.0 / MAX_MAGNITUDE, MAX_MAGNITUDE)


def _check_costs(beta: float, weight: np.ndarray) -> None:
    """The pair costs c_p = β·weight_p (weight_p = s_i v_k, times u_k for a negative pair) finite and inside
    ``COST_RANGE``, or a ValueError naming the arguments they come from."""
    with np.errstate(over="ignore", under="ignore"):
        low, high = beta * weight.min(), beta * weight.max()
    lo, hi = COST_RANGE
    if not (lo <= low and high <= hi):
        raise ValueError(f"the pair costs c_p = beta * sample_weight[i] * label_weight[k] (* negative_weight[k]) range "
                         f"from {low:.3g} to "
                         f"{high:.3g}; they must lie within [{lo:g}, {hi:g}] (the solvers square them in float64): "
                         "rescale beta, sample_weight, label_weight or negative_weight (an estimator's class_weight "
                         "and negative_balance multiply them); "
                         "a weight many orders of magnitude below the others is better dropped")


def _check_magnitude(name: str, value: float) -> float:
    if value > MAX_MAGNITUDE:
        raise ValueError(f"{name} has magnitude {value:.3g}, beyond what the solvers can square in float64 "
                         f"(at most {MAX_MAGNITUDE:g}); rescale it (the model is invariant under X → X/σ, "
                         "β → βσ², bias_penalty → bias_penalty·σ², docs/theory.md §9.9)")
    return value


def _check_patterns(X, kernel):
    """X as float64: a dense array, or for a sparse X (any scipy format: CSC, COO, ... are converted) a CSR matrix
    in canonical form, never densified (docs/theory.md §9.10); a precomputed kernel given as a sparse matrix is the
    dense N×N matrix it stands for. Non-finite entries and magnitudes beyond MAX_MAGNITUDE are rejected (for a
    sparse X by its stored values)."""
    check_no_dates("X", X)
    with naming("X"):
        X = float_array(X, "X", accept_sparse=("csr", "csc"))
    if sp.issparse(X):
        if isinstance(kernel, str) and kernel == "precomputed":
            X = X.toarray()  # the N×N kernel matrix: the Gram matrix the kernel formulation needs anyway
        else:
            X = sp.csr_matrix(X.tocsr())  # spmatrix, also for a sparse array: the package's products are matrix ones
            if not X.has_canonical_format:  # duplicate entries summed (on a copy: the caller's matrix is untouched)
                X = X.copy()
                X.sum_duplicates()
    values = X.data if sp.issparse(X) else X
    _check_magnitude("X", float(np.abs(values).max(initial=0.0)))
    return X


def _check_membership(Y) -> np.ndarray:
    """Y as a float N×K matrix over {−1, 0, 1} with K ≥ 2 and at least one member in every class."""
    if sp.issparse(Y):
        Y = Y.toarray()
    with naming("Y"):
        Y = float_array(Y, "Y", ensure_2d=False)
    if Y.ndim != 2:
        raise ValueError(f"Y must be a 2-D membership matrix (N, K), got shape {Y.shape}; "
                         "use Problem.from_labels for 1-D labels")
    if not np.isin(Y, (-1.0, 0.0, 1.0)).all():
        bad = np.unique(Y[~np.isin(Y, (-1.0, 0.0, 1.0))])[:5]
        raise ValueError(f"Y must contain only -1, 0 and 1, found {bad.tolist()}")
    if Y.shape[1] < 2:
        raise ValueError(f"Y must have at least 2 classes (columns), got {Y.shape[1]}")
    empty = np.flatnonzero(~(Y == 1).any(axis=0))
    if empty.size:
        raise ValueError(f"class(es) {empty.tolist()} of Y have no member (no entry equal to 1); "
                         "every class needs at least one positive pair (docs/theory.md §3.4)")
    return Y


class Problem:
    """An OvN training problem (docs/theory.md §1–§3).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (N, M)
        Patterns; for ``kernel="precomputed"`` the (N, N) kernel matrix. A sparse X (CSR; CSC and the other
        scipy formats are converted) is kept sparse through every solver (docs/theory.md §9.10); a sparse
        precomputed kernel is densified (it is the N×N Gram matrix).
    Y : array-like or sparse matrix of shape (N, K)
        Membership: 1 = in class k, 0 = no information, −1 = known not in class k (extension).
        Rows without any nonzero entry are allowed (they enter no hinge term).
    variant : {"SwSb", "SwHb", "HwSb", "HwHb"}
        Soft/hard constraint on the weights (Σ_k w_k = 0) and on the biases (Σ_k b_k = 0).
    kernel : "linear", "rbf", "poly", "sigmoid", "precomputed" or callable
        ``"linear"`` is the primal linear formulation (coefficients W, M×K); every other kernel uses
        the kernel formulation (coefficients A, N×K). A callable is called as ``kernel(X1, X2)``
        and must return the kernel matrix, as in scikit-learn's ``SVC``.
    alpha : float
        Coupling of the weight vectors, in the open interval (−1/(K−1), 1); ignored by hard-w variants.
    beta : float > 0
        Hinge weight.
    bias_penalty : float >= 0
        γ of the soft-bias term γ (Σ_k b_k)²; ignored by hard-b variants.
    gamma : {"scale", "auto"}, float or None, default=None
        Kernel parameter as in ``sklearn.metrics.pairwise``; ``gamma=None`` means ``"scale"``,
        1 / (M · Var X), as in ``SVC``.
    degree : int, default=3
        Degree of the ``"poly"`` kernel, as in ``sklearn.metrics.pairwise``.
    coef0 : float, default=0.0
        Independent term of the ``"poly"`` and ``"sigmoid"`` kernels, as in ``sklearn.metrics.pairwise``.
    sample_weight : array-like of shape (N,), optional
        Positive weights s_i.
    label_weight : array-like of shape (K,), optional
        Positive per-class weights v_k (e.g. class weights of a multilabel problem); the cost of a pair is
        c_p = β s_{i_p} v_{k_p} (times ``negative_weight``'s u_{k_p} for a known negative). Every cost must lie
        within ``COST_RANGE`` = [1e-100, 1e100] (a ValueError naming the weights otherwise).
    negative_weight : array-like of shape (K,), optional
        Positive factors u_k on the cost of class k's known-negative pairs (Y = −1): their cost is
        c_p = β s_{i_p} v_{k_p} u_{k_p}, a positive pair's stays β s_{i_p} v_{k_p} (e.g. to balance a class's
        negatives against its positives; default 1).

    Examples
    --------
    >>> import numpy as np, ovn_cvx
    >>> X = np.random.default_rng(0).normal(size=(30, 2))
    >>> Y = np.eye(3)[np.arange(30) % 3]          # one class per row: a 0/1 indicator matrix
    >>> problem = ovn_cvx.Problem(X, Y, variant="SwHb", alpha=0.2, beta=1.0)
    >>> problem
    Problem(N=30, M=2, K=3, pairs=30, variant='SwHb', kernel='linear', alpha=0.2, beta=1, bias_penalty=1)
    >>> problem.replace(beta=4.0).beta              # a changed copy
    4.0
    """

    def __init__(self, X, Y, variant="SwHb", kernel="linear", *, alpha=0.0, beta=1.0,
                 bias_penalty=1.0, gamma=None, degree=3, coef0=0.0, sample_weight=None,
                 label_weight=None, negative_weight=None):
        self._set(X=X, Y=Y, variant=variant, kernel=kernel, alpha=alpha, beta=beta, bias_penalty=bias_penalty,
                  gamma=gamma, degree=degree, coef0=coef0, sample_weight=sample_weight, label_weight=label_weight,
                  negative_weight=negative_weight)

    def _set(self, **changes):
        """Validate the changed constructor fields and set them with everything derived from them.

        What depends only on unchanged fields is kept: a ``replace`` copy shares it with the original
        (the kernel matrix and the lazily computed data-only quantities of ``_shared``)."""
        def value(name):
            return changes[name] if name in changes else getattr(self, name)

        changed = changes.keys()
        variant, kernel = value("variant"), value("kernel")
        if not isinstance(variant, str) or variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
        gamma, degree, coef0 = value("gamma"), value("degree"), value("coef0")
        if changed & {"kernel", "gamma", "degree", "coef0"}:
            gamma, degree, coef0 = validate_kernel(kernel, gamma, degree, coef0)
        if "X" in changed:
            X = _check_patterns(changes["X"], kernel)
        else:
            X = self.X
            if sp.issparse(X) and isinstance(kernel, str) and kernel == "precomputed":  # replace(kernel=...)
                X = X.toarray()
        Y = _check_membership(changes["Y"]) if "Y" in changed else self.Y
        if Y.shape[0] != X.shape[0]:
            raise ValueError(f"X and Y must have the same number of rows, got {X.shape[0]} and {Y.shape[0]}")
        if kernel == "precomputed" and X.shape[0] != X.shape[1]:
            raise ValueError(f"X must be a square kernel matrix for kernel='precomputed', got shape {X.shape}")

        self.X, self.Y, self.variant, self.kernel = X, Y, variant, kernel
        self.gamma, self.degree, self.coef0 = gamma, degree, coef0
        self.n_samples, self.n_classes = Y.shape
        self.n_features = X.shape[1]
        if "Y" in changed:
            self.__dict__.pop("classes", None)  # the labels of from_labels name the columns of the old Y
        if changed & set(WEIGHT_FIELDS):
            self.sample_weight = s = _positive_weights("sample_weight", value("sample_weight"), self.n_samples)
            self.label_weight = v = _positive_weights("label_weight", value("label_weight"), self.n_classes)
            self.negative_weight = u = _positive_weights("negative_weight", value("negative_weight"), self.n_classes)
            label, sample = np.nonzero(Y.T)  # class-major order
            sign = Y[sample, label]
            negative = sign < 0
            with np.errstate(over="ignore", under="ignore"):  # a product beyond the float range: _check_costs
                weight = s[sample] * v[label]
                weight[negative] *= u[label[negative]]
            self.pairs = Pairs(sample=sample, label=label, sign=sign, weight=weight)
        if changed & {"alpha", "beta", "bias_penalty", "variant", "Y"}:
            self._set_hyperparameters(value("alpha"), value("beta"), value("bias_penalty"))
        if changed & {*WEIGHT_FIELDS, "beta"}:
            _check_costs(self.beta, self.pairs.weight)
            self.__dict__.pop("cost", None)  # a replace() copy's costs are its own
        if changed & set(KERNEL_FIELDS):
            self.__dict__.pop("gram", None)
            self._shared: dict = {}  # lazily computed, data-only quantities; the same dict in every replace() copy
            if self.is_kernel:
                self._check_kernel()

    def _check_kernel(self):
        """A kernel PSD by construction (the Gaussian, a polynomial with coef0 ≥ 0) is checked on its diagonal alone:
        finite (for a PSD kernel |κ(x, y)| ≤ √(κ(x, x) κ(y, y)) bounds every entry) and not all zero, so that a fit
        by dual decomposition never needs the N × N matrix; any other kernel matrix is built and checked whole
        (square, finite, symmetric, PSD), up front."""
        if not psd_by_construction(self.kernel, self.coef0):
            check_gram(self.gram)
        elif self.kernel == "poly":  # the Gaussian kernel's diagonal is 1
            gamma = resolve_gamma(self.gamma, self.X)
            check_diagonal(poly_diagonal(row_norms(self.X, squared=True), gamma, self.degree, self.coef0))

    def _set_hyperparameters(self, alpha, beta, bias_penalty):
        alpha = check_number("alpha", alpha)
        lo, hi = alpha_interval(self.n_classes)
        if not lo < alpha < hi:
            raise ValueError(f"alpha must lie in the open interval ({lo:g}, {hi:g}) for K={self.n_classes} "
                             f"classes, got {alpha}: outside it the objective is unbounded below or "
                             "degenerate (docs/theory.md §3)")
        if self.hard_w and alpha != 0:
            warnings.warn(f"alpha={alpha} is ignored by the hard-w variant {self.variant} (docs/theory.md §2)",
                          UserWarning, stacklevel=4)
        self.alpha = alpha
        self.beta = _check_magnitude("beta", check_number("beta", beta, low=0, strict=True))
        self.bias_penalty = _check_magnitude("bias_penalty", check_number("bias_penalty", bias_penalty, low=0))

    @classmethod
    def from_labels(cls, X, y, variant="SwHb", kernel="linear", **kwargs) -> "Problem":
        """Build a multiclass problem from 1-D labels; ``problem.classes`` holds the sorted labels
        and column k of Y is ``classes[k]``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (N, M)
            Patterns, as for the constructor.
        y : array-like of shape (N,)
            Class labels; a 2-D ``y`` raises a ValueError.
        variant : {"SwSb", "SwHb", "HwSb", "HwHb"}, default="SwHb"
            The constraint variant, as for the constructor.
        kernel : str or callable, default="linear"
            The kernel, as for the constructor.
        **kwargs : dict
            Further keyword arguments of the constructor (``alpha``, ``beta``, ``gamma``, ...).

        Returns
        -------
        Problem
            The problem, with the ``classes`` attribute set.
        """
        with naming("y"):
            y = check_array(y, ensure_2d=False, dtype=None, input_name="y")
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D, got shape {y.shape}")
        classes, Y = label_indicator(y)
        problem = cls(X, Y, variant, kernel, **kwargs)
        problem.classes = classes
        return problem

    def replace(self, **changes) -> "Problem":
        """A copy with other values of any constructor fields (``FIELDS``), validated as by the constructor.

        Only what the changes affect is validated and computed again: a change of ``alpha``, ``beta`` or
        ``bias_penalty`` alone re-checks those three, and the data, pairs, kernel matrix and kernel
        factorization are shared with this problem as long as none of ``KERNEL_FIELDS`` changes.

        Parameters
        ----------
        **changes : dict
            New values of constructor fields, by name; an unknown name raises a TypeError.

        Returns
        -------
        Problem
            The new problem.
        """
        unknown = changes.keys() - set(FIELDS)
        if unknown:
            raise TypeError(f"replace() got unknown field(s) {sorted(unknown)}; the fields are {FIELDS}")
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new._set(**changes)
        return new

    # --- derived quantities -------------------------------------------------------------------
    @property
    def is_kernel(self) -> bool:
        return not (isinstance(self.kernel, str) and self.kernel == "linear")

    @property
    def is_precomputed(self) -> bool:
        """X is the caller's training Gram matrix (kernel "precomputed")."""
        return isinstance(self.kernel, str) and self.kernel == "precomputed"

    @property
    def nonnegative_gram(self) -> bool:
        """Every entry of the training Gram matrix is ≥ 0 by construction (the Gaussian kernel, an exponential), so
        that |G| = G."""
        return isinstance(self.kernel, str) and self.kernel == "rbf"

    @property
    def hard_w(self) -> bool:
        return self.variant.startswith("Hw")

    @property
    def hard_b(self) -> bool:
        return self.variant.endswith("Hb")

    @cached_property
    def cost(self) -> np.ndarray:
        """c_p = β s_{i_p} v_{k_p} (times u_{k_p} for a known negative) for every pair; formed once (the solvers read
        it at every evaluation: 7 % of a default fit at N = 2 000 went to forming it again)."""
        return self.beta * self.pairs.weight

    @property
    def coupling_ops(self) -> Coupling:
        """The coupling P of R(W) = ½ tr(W P Wᵀ) as a value: its eigenvalues, products with P and P⁺, the safe
        square (:class:`~ovn_cvx.coupling.Coupling`)."""
        return Coupling(self.alpha, self.n_classes, self.hard_w)

    @property
    def coupling(self) -> np.ndarray:
        """The K×K coupling matrix P of R(W) = ½ tr(W P Wᵀ)."""
        return self.coupling_ops.matrix

    @property
    def coupling_pinv(self) -> np.ndarray:
        """P⁺ of the dual (docs/theory.md §6): P⁻¹ = Π/(1−α) + (J/K)/(1+(K−1)α) (soft w) or the centring Π (hard w)."""
        return self.coupling_ops.pinv

    @property
    def coef_shape(self) -> tuple[int, int]:
        """(M, K) for the linear formulation (W), (N, K) for kernels (A)."""
        rows = self.n_samples if self.is_kernel else self.n_features
        return rows, self.n_classes

    @cached_property
    def gram(self) -> np.ndarray:
        """G_ij = κ(x_i, x_j) on the training set (kernel formulations only)."""
        if not self.is_kernel:
            raise AttributeError("gram is only defined for kernel formulations")
        if not self.is_precomputed:  # else X is the Gram
            N = self.n_samples
            check_fits(8 * N * N, f"the {N}×{N} training Gram matrix", KERNEL_REMEDY)
        return self.kernel_matrix(self.X)

    @property
    def kernel_factor(self) -> KernelFactor:
        """Eigen-factor G ≈ L Lᵀ (docs/theory.md §4.2), computed on first use and shared by ``replace``."""
        if "factor" not in self._shared:
            self._shared["factor"] = KernelFactor.from_gram(self.gram)
        return self._shared["factor"]

    @property
    def rank_bound(self) -> int:
        """An upper bound on the rank of the features: M (linear), N for "rbf" (the Gaussian kernel is strictly
        positive definite, so G has full rank for distinct points: no factorization needed to know it), and
        the eigen-factor's rank otherwise."""
        if not self.is_kernel:
            return self.n_features
        if isinstance(self.kernel, str) and self.kernel == "rbf":
            return self.n_samples
        return self.kernel_factor.rank

    def gram_product(self, coef: np.ndarray) -> np.ndarray:
        """G @ coef, shape (N, K): from the Gram matrix when the problem holds it, else κ(X, X_S) coef_S by blocks of
        rows over the rows S whose coefficients are not all zero — the N × N matrix a fit by dual decomposition never
        builds is not built here either.

        Parameters
        ----------
        coef : ndarray of shape (N, K)
            Kernel coefficients.

        Returns
        -------
        ndarray of shape (N, K)
            The product G @ coef.
        """
        if self.is_precomputed or "gram" in self.__dict__:
            return self.gram @ coef
        support = np.flatnonzero((coef != 0).any(axis=1))
        gamma = self.gamma if callable(self.kernel) else resolve_gamma(self.gamma, self.X)
        return kernel_product(self.kernel, self.X, self.X[support], coef[support], gamma=gamma, degree=self.degree,
                              coef0=self.coef0)

    def kernel_matrix(self, X_new) -> np.ndarray:
        """κ(X_new, X_train), shape (n, N); for ``"precomputed"`` X_new is returned checked.

        Parameters
        ----------
        X_new : array-like or sparse matrix of shape (n, M)
            New patterns; for ``"precomputed"`` the (n, N) kernel matrix against the training patterns.

        Returns
        -------
        ndarray of shape (n, N)
            The kernel matrix.
        """
        return kernel_matrix(self.kernel, X_new, self.X, gamma=self.gamma, degree=self.degree,
                             coef0=self.coef0, n_train=self.n_samples)

    def __repr__(self) -> str:
        kernel = self.kernel if isinstance(self.kernel, str) else getattr(self.kernel, "__name__", "callable")
        return (f"Problem(N={self.n_samples}, M={self.n_features}, K={self.n_classes}, pairs={len(self.pairs)}, "
                f"variant={self.variant!r}, kernel={kernel!r}, alpha={self.alpha:g}, beta={self.beta:g}, "
                f"bias_penalty={self.bias_penalty:g})")
