"""The Gaussian kernel matrix is exact where the fast expansion cancels: duplicates, near-duplicates, large offsets."""
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import rbf_kernel

from ovn_cvx.kernels import CANCELLATION, kernel_matrix, squared_distances


def exact_squared_distances(A, B):
    """‖a − b‖² in exact rational arithmetic (every float64 is a fraction)."""
    return np.array([[float(sum((Fraction(x) - Fraction(y)) ** 2 for x, y in zip(a, b))) for b in B] for a in A])


def far_rows(seed=0, n=12, m=3, offset=6e6):
    """Rows at |x| ≈ ``offset`` and ~10 apart, with row 1 a copy of row 0 and row 2 a hair away from it."""
    rng = np.random.default_rng(seed)
    X = offset + 10.0 * rng.normal(size=(n, m))
    X[1] = X[0]
    X[2] = X[0] + np.array([1e-3, 0.0, -2e-3])[:m]
    return X


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("offset", [0.0, 6e6, 1e9])
def test_squared_distances_are_exact_to_rounding(sparse, offset):
    X = far_rows(offset=offset)
    exact = exact_squared_distances(X, X)
    A = sp.csr_matrix(X) if sparse else X
    D = squared_distances(A, A)
    assert D[0, 1] == D[1, 0] == 0.0 and (np.diag(D) == 0.0).all()
    # every entry within a few ulps of the exact value (relative to the entry itself, not to ‖x‖²)
    assert np.abs(D - exact).max() <= 8 * np.finfo(float).eps * exact.max()
    assert np.abs(D[0, 2] - exact[0, 2]) <= 1e-12 * exact[0, 2]
    # new rows against training rows: the same values
    assert np.abs(squared_distances(A[:5], A) - exact[:5]).max() <= 8 * np.finfo(float).eps * exact.max()


def test_scikit_learn_cancels_where_the_package_does_not():
    """The weak spot being guarded: the expansion ‖a‖² + ‖b‖² − 2aᵀb at |x| ≈ 6e6 loses every digit of a
    distance of 5e-6 (the entry that decides whether two rows are the same point)."""
    X = far_rows()
    exact = exact_squared_distances(X[:1], X[2:3])[0, 0]
    assert exact == pytest.approx(5e-6, rel=1e-6)
    assert squared_distances(X[:1], X[2:3])[0, 0] == pytest.approx(exact, rel=1e-10)
    assert abs(rbf_kernel(X[:1], X[2:3], gamma=1.0)[0, 0] - np.exp(-exact)) > 1e-6  # scikit-learn's cancellation


def test_the_gram_matrix_has_a_unit_diagonal_and_is_symmetric_to_rounding():
    X = np.random.default_rng(3).normal(size=(300, 7)) * 1e3
    G = kernel_matrix("rbf", X, X, gamma=1e-6)
    assert (np.diag(G) == 1.0).all()
    assert np.abs(G - G.T).max() <= 4 * np.finfo(float).eps


@pytest.mark.parametrize("m", [2, 40])
def test_normal_data_agree_with_scikit_learn(m):
    X = np.random.default_rng(m).normal(size=(200, m))
    Z = np.random.default_rng(m + 1).normal(size=(30, m))
    assert np.abs(kernel_matrix("rbf", Z, X, gamma=0.3) - rbf_kernel(Z, X, gamma=0.3)).max() <= 1e-14
    Xs, Zs = sp.csr_matrix(X), sp.csr_matrix(Z)
    for A, B in ((Zs, Xs), (Z, Xs), (Zs, X)):  # every mix of sparse and dense
        assert np.abs(kernel_matrix("rbf", A, B, gamma=0.3) - rbf_kernel(Z, X, gamma=0.3)).max() <= 1e-14


def test_the_recomputed_pairs_are_those_at_risk():
    """Just inside and just outside the cancellation threshold: both exact (the direct difference inside, the
    expansion outside, where its relative error is at most about M·ε / CANCELLATION)."""
    a = np.array([[1.0, 0.0]])
    for factor in (0.5, 2.0):  # d = factor·CANCELLATION·(‖a‖² + ‖b‖²), approximately
        b = np.array([[1.0 + np.sqrt(factor * CANCELLATION * 2.0), 0.0]])
        exact = exact_squared_distances(a, b)[0, 0]
        assert squared_distances(a, b)[0, 0] == pytest.approx(exact, rel=1e-12)
