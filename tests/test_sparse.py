"""Sparse X (CSR/CSC) end to end (docs/theory.md §9.10): every solver, the evaluator, the certificate, the exported QP,
prediction and the estimator give on a sparse X what the dense X gives, checked against the CVXPY reference solved on
the dense X (the oracle), and nothing densifies X (a spy on scipy's densifying methods; a process whose address space
is too small for the dense X)."""
import contextlib
import subprocess
import sys
import textwrap
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import rbf_kernel

import ovn_cvx
from ovn_cvx import OvNClassifier, Problem
from ovn_cvx.datasets import make_data
from ovn_cvx.kkt import kkt_certificate
from ovn_cvx.qp import solve_qp
from ovn_cvx.solvers.cvxpy_solver import TIGHT_CLARABEL
from ovn_cvx.testing import assert_matches_reference

FORMATS = {"csr": sp.csr_matrix, "csc": sp.csc_matrix}
ROOT = Path(__file__).resolve().parent.parent


def _sparsify(X, seed, keep=0.4):
    """X with about 1 − ``keep`` of its entries set to 0 (dense)."""
    return X * (np.random.default_rng(seed).random(X.shape) < keep)


@pytest.fixture(scope="module")
def sparse_multiclass():
    X, Y = make_data("multiclass", n_samples=45, n_features=8, n_classes=3, seed=21)
    return _sparsify(X, 1), Y, None


@pytest.fixture(scope="module")
def sparse_multilabel():
    """Multilabel data as the suite's (an unlabeled row, a known negative, sample weights) with 8 features, half of
    them zero. (Not the suite's 4 features sparsified: that leaves all-zero rows, on which the pair form, dense or
    sparse, is not certified; the primal form is.)"""
    X, Y = make_data("multilabel", n_samples=48, n_features=8, n_classes=4, seed=12)
    assert not Y[-1].any()
    Y = Y.copy()
    Y[0, np.flatnonzero(Y[0] == 0)[0]] = -1.0
    weights = np.random.default_rng(3).uniform(0.5, 2.0, size=X.shape[0])
    return _sparsify(X, 2, keep=0.5), Y, weights


@pytest.fixture(params=["multiclass", "multilabel"])
def sparse_data(request, sparse_multiclass, sparse_multilabel):
    return sparse_multiclass if request.param == "multiclass" else sparse_multilabel


def _problem(X, Y, w, variant, kernel="linear", **kernel_params):
    alpha = -0.3 if variant.startswith("Sw") else 0.0
    return Problem(X, Y, variant, kernel, alpha=alpha, beta=1.3, bias_penalty=0.4, sample_weight=w, **kernel_params)


def _tight_reference(problem):
    ref = ovn_cvx.solve(problem, method="cvxpy", solver="CLARABEL", **TIGHT_CLARABEL)
    assert ref.status == "optimal"
    return ref


@contextlib.contextmanager
def no_densified_patterns(n_features):
    """Fail on densifying a sparse matrix shaped like rows or columns of an X with ``n_features`` columns: every
    ``toarray``/``todense`` of scipy's sparse classes (``todense`` and ``np.asarray(X.todense())`` go through them;
    ``np.asarray`` of a sparse matrix itself is an object array, which no computation accepts) raises when the
    matrix is not square, has more than one row and column, and has M or M + 1 (the primal form's ones column)
    rows or columns. Square results (BᵀB, d×d), single rows (the certificate's margin pairs) and n×n pair blocks
    are what the solvers are meant to densify."""
    sizes = {n_features, n_features + 1}

    def guarded(method):
        def guard(self, *args, **kwargs):
            rows, cols = self.shape
            if rows != cols and min(rows, cols) > 1 and {rows, cols} & sizes:
                raise AssertionError(f"a sparse {rows}×{cols} matrix (rows or columns of X) was densified")
            return method(self, *args, **kwargs)
        return guard

    classes = {cls for fmt in (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix, sp.csr_array, sp.csc_array, sp.coo_array)
               for cls in fmt.__mro__}
    with contextlib.ExitStack() as stack:
        for cls in classes:
            for name in ("toarray", "todense"):
                if name in cls.__dict__:
                    stack.enter_context(mock.patch.object(cls, name, guarded(cls.__dict__[name])))
        yield


# --- the problem model ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("convert", [sp.csr_matrix, sp.csc_matrix, sp.coo_matrix, sp.lil_matrix, sp.csr_array],
                         ids=["csr", "csc", "coo", "lil", "csr_array"])
def test_problem_stores_csr_float64(sparse_multiclass, convert):
    """Every scipy format (COO, LIL, sparse arrays: converted) is kept as a float64 CSR matrix with X's values."""
    X, Y, _ = sparse_multiclass
    p = Problem(convert(X.astype(np.float32)), Y)
    assert sp.isspmatrix_csr(p.X) and p.X.dtype == np.float64 and p.X.has_canonical_format
    np.testing.assert_array_equal(p.X.toarray(), X.astype(np.float32).astype(np.float64))
    assert (p.n_samples, p.n_features) == X.shape


def test_problem_sums_duplicate_entries_without_touching_the_input():
    X = sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([0, 0, 1]), np.array([0, 2, 3, 3])), shape=(3, 2))
    assert not X.has_canonical_format
    p = Problem(X, np.eye(3)[:, :2] + np.eye(3)[:, 2:3] * [1, 0])
    np.testing.assert_array_equal(p.X.toarray(), [[3.0, 0.0], [0.0, 3.0], [0.0, 0.0]])
    assert X.data.size == 3  # the caller's matrix is not canonicalized in place


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_sparse_non_finite_rejected(sparse_multiclass, bad):
    X, Y, _ = sparse_multiclass
    Xs = sp.csr_matrix(X)
    Xs.data[3] = bad
    with pytest.raises(ValueError, match=r"\bX\b.*(NaN|infinity)"):
        Problem(Xs, Y)
    with pytest.raises(ValueError, match=r"\bX\b.*(NaN|infinity)"):
        OvNClassifier().fit(Xs, np.argmax(Y, axis=1))


def test_sparse_magnitude_checked_on_stored_values(sparse_multiclass):
    X, Y, _ = sparse_multiclass
    Xs = sp.csr_matrix(X)
    Xs.data[0] = -1e150
    with pytest.raises(ValueError, match="X has magnitude 1e\\+150"):
        Problem(Xs, Y)


def test_replace_shares_and_swaps_sparse_data(sparse_multiclass):
    X, Y, _ = sparse_multiclass
    p = Problem(sp.csr_matrix(X), Y, "SwHb")
    q = p.replace(beta=2.5)
    assert q.X is p.X and q.beta == 2.5
    r = p.replace(X=sp.csc_matrix(2.0 * X))
    assert sp.isspmatrix_csr(r.X)
    np.testing.assert_array_equal(r.X.toarray(), 2.0 * X)
    k = p.replace(kernel="rbf", gamma=0.5)
    np.testing.assert_allclose(k.gram, rbf_kernel(X, gamma=0.5), rtol=1e-12, atol=1e-14)


def test_sparse_precomputed_kernel_is_densified(sparse_multiclass):
    """A precomputed kernel given as a sparse matrix is the N×N matrix it stands for: stored dense, the same problem
    as the dense kernel."""
    X, Y, _ = sparse_multiclass
    G = X @ X.T
    p = Problem(sp.csr_matrix(G), Y, "HwHb", "precomputed")
    assert isinstance(p.X, np.ndarray)
    np.testing.assert_array_equal(p.gram, G)
    result = ovn_cvx.solve(p, method="mm")
    ref = _tight_reference(Problem(G, Y, "HwHb", "precomputed"))
    assert result.success
    assert_matches_reference(result, rtol=1e-7, ftol=1e-5, reference=ref)
    np.testing.assert_allclose(result.decision_function(sp.csr_matrix(G[:7])), ref.decision_function(G[:7]),
                               atol=1e-5)


def test_gamma_scale_on_sparse_is_the_variance_of_all_entries(sparse_multiclass):
    """gamma="scale" = 1/(M · Var X) over all N·M entries, zeros included (as SVC), from a sparse X."""
    X, Y, _ = sparse_multiclass
    p = Problem(sp.csr_matrix(X), Y, "SwHb", "rbf")
    np.testing.assert_allclose(p.gram, rbf_kernel(X, gamma=1.0 / (X.shape[1] * np.var(X))), rtol=1e-12)


# --- the solvers -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("variant", ovn_cvx.VARIANTS)
def test_sparse_linear_matches_dense_reference(sparse_data, variant, fmt):
    """All four variants, linear: the reference on sparse X and MM in both forms agree with the tight reference on
    the dense X (docs/theory.md §10: certified MM to 1e-7 in F and 1e-5 in f), also in prediction on sparse new data."""
    X, Y, w = sparse_data
    ref = _tight_reference(_problem(X, Y, w, variant))
    p = _problem(FORMATS[fmt](X), Y, w, variant)
    assert sp.isspmatrix_csr(p.X)
    X_new = FORMATS[fmt](_sparsify(np.random.default_rng(3).normal(size=(12, X.shape[1])), 4))
    assert_matches_reference(ovn_cvx.solve(p, method="cvxpy"), rtol=1e-6, ftol=1e-4, reference=ref)
    for form in ("primal", "pair"):
        result = ovn_cvx.solve(p, method="mm", form=form)
        assert result.success and result.form == form, result.info
        assert_matches_reference(result, rtol=1e-7, ftol=1e-5, reference=ref)
        np.testing.assert_allclose(result.decision_function(X_new), ref.decision_function(X_new.toarray()),
                                   atol=1e-5)


@pytest.mark.parametrize("form", ["primal", "pair"])
def test_sparse_rbf_matches_dense_reference(sparse_multilabel, form):
    X, Y, w = sparse_multilabel
    ref = _tight_reference(_problem(X, Y, w, "SwHb", "rbf", gamma=0.4))
    p = _problem(sp.csr_matrix(X), Y, w, "SwHb", "rbf", gamma=0.4)
    result = ovn_cvx.solve(p, method="mm", form=form)
    assert result.success and result.form == form
    assert_matches_reference(result, rtol=1e-7, ftol=1e-5, reference=ref)
    assert_matches_reference(ovn_cvx.solve(p, method="cvxpy"), rtol=1e-6, ftol=1e-4, reference=ref)
    X_new = _sparsify(np.random.default_rng(5).normal(size=(10, X.shape[1])), 6)
    # the slim predictor keeps the support rows of the sparse X
    slim = result.slim()
    assert sp.issparse(slim.predictor.basis)
    np.testing.assert_allclose(slim.decision_function(sp.csc_matrix(X_new)), ref.decision_function(X_new), atol=1e-5)


@pytest.mark.parametrize("variant", ["SwSb", "HwHb"])
def test_sparse_certificate_and_exported_qp(sparse_multilabel, variant):
    """The KKT certificate of the reference solution computed on the sparse problem passes, and the QP exported from
    the sparse problem solves to the dense reference."""
    X, Y, w = sparse_multilabel
    ref = _tight_reference(_problem(X, Y, w, variant))
    p = _problem(sp.csr_matrix(X), Y, w, variant)
    assert kkt_certificate(p, ref.coef, ref.b).passed()
    qp = solve_qp(p, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert qp.status == "optimal"
    assert_matches_reference(qp, rtol=1e-7, ftol=1e-4, reference=ref)


# --- no densification ------------------------------------------------------------------------------------------------
def test_spy_catches_a_densified_X():
    """The spy of the tests below fails on X.toarray(), X.todense(), np.asarray(X.todense()) and on a block of rows."""
    Xs = sp.random(20, 7, density=0.3, format="csr", random_state=0)
    with no_densified_patterns(7):
        for densify in (lambda: Xs.toarray(), lambda: Xs.todense(), lambda: np.asarray(Xs.tocsc().todense()),
                        lambda: Xs[:5].toarray(), lambda: Xs.T.toarray(), lambda: Xs.tocoo().toarray()):
            with pytest.raises(AssertionError, match="densified"):
                densify()
        (Xs.T @ Xs).toarray()  # a d×d product is allowed
        Xs[3].toarray()  # ... and a single row


@pytest.mark.degenerate_labels  # the default model on these random sparse rows leaves a label constant
def test_no_densified_X_in_any_path():
    """Problem, both MM forms, the reference, the certificate, the exported QP, prediction and the estimator (exact
    kernels and both kernel approximations) on a sparse X: nothing densifies rows or columns of X."""
    rng = np.random.default_rng(0)
    N, M = 240, 30
    X = sp.random(N, M, density=0.2, format="csr", random_state=1)
    y = np.argmax(X @ rng.normal(size=(M, 3)) + 0.3 * rng.normal(size=(N, 3)), axis=1)
    with no_densified_patterns(M):
        p = Problem.from_labels(X, y, "SwHb")
        results = [ovn_cvx.solve(p, method="mm", form=form) for form in ("primal", "pair")]
        reference = ovn_cvx.solve(p, method="cvxpy")
        assert all(r.success for r in [*results, reference])
        assert kkt_certificate(p, reference.coef, reference.b).passed()
        assert solve_qp(p).status == "optimal"
        reference.decision_function(X.tocsc())
        Y = np.eye(3)[y]
        Y[::4, 0] = 1.0  # multilabel, with a second label on every fourth row
        for est in (OvNClassifier(), OvNClassifier(kernel="rbf", gamma=0.5),
                    OvNClassifier(kernel="rbf", kernel_approximation="nystroem", n_components=20, random_state=0),
                    OvNClassifier(kernel="rbf", kernel_approximation="rff", n_components=20, random_state=0)):
            est.fit(X, y).predict(X.tocsc())
        OvNClassifier(decision_rule="cv", rule_cv=2).fit(X, Y).predict(X)


WIDE_DATA = """
import resource, sys
limit = 2 * 2**30
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
import numpy as np, scipy.sparse as sp
N, M, per_row = 1000, 500_000, 10
rng = np.random.default_rng(0)
X = sp.csr_matrix((rng.exponential(size=N * per_row), rng.integers(0, M, size=N * per_row),
                   np.arange(0, N * per_row + 1, per_row)), shape=(N, M))
y = np.argmax(X @ rng.normal(size=(M, 3)), axis=1)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS caps the address space on Linux")
def test_wide_sparse_fit_within_an_address_space_below_the_dense_X():
    """A 1000×500000 CSR X (10 entries per row; 4 GB dense) fitted by ``OvNClassifier`` in a process whose address
    space is capped at 2 GiB: ``solver="auto"``'s route for such wide data (3 000 pairs, 167 features a pair), the
    matrix-free form (measured 0.24 s against the dual coordinate descent's 0.76 s), certifies, and the predictions
    are right on the training set.
    In the same process the dense X cannot even be allocated (the check on the cap)."""
    fit = textwrap.dedent("""
        from ovn_cvx import OvNClassifier
        est = OvNClassifier().fit(X, y)
        r = est.result_
        print(r.status, r.form, r.relative_gap_bound, np.mean(est.predict(X) == y))
        """)
    env = {"PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "PATH": "/usr/bin:/bin"}
    dense = subprocess.run([sys.executable, "-c", WIDE_DATA + "X.toarray()"], capture_output=True, text=True,
                           env=env, timeout=300)
    assert dense.returncode != 0 and "MemoryError" in dense.stderr
    run = subprocess.run([sys.executable, "-c", WIDE_DATA + fit], capture_output=True, text=True, env=env,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    status, form, bound, accuracy = run.stdout.split()
    assert status == "optimal" and form == "matrix-free" and float(bound) <= 1e-6
    assert float(accuracy) >= 0.99  # y is the argmax of a linear function of X: separable


# --- the estimator ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["multiclass", "multilabel"])
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_estimator_on_sparse_equals_dense(sparse_multiclass, sparse_multilabel, kind, kernel):
    """Fitting on CSR gives the decision values and predictions of the fit on the dense X (itself checked against the
    reference in test_estimator.py); prediction on CSR, CSC and COO new data equals that on the dense new data."""
    X, Y, w = sparse_multiclass if kind == "multiclass" else sparse_multilabel
    y = np.argmax(Y, axis=1) if kind == "multiclass" else np.clip(Y, 0, None)
    params = {"kernel": kernel, "gamma": 0.4, "beta": 1.5}
    dense = OvNClassifier(**params).fit(X, y, sample_weight=w)
    est = OvNClassifier(**params).fit(sp.csr_matrix(X), y, sample_weight=w)
    X_new = _sparsify(np.random.default_rng(7).normal(size=(30, X.shape[1])), 8)
    F = dense.decision_function(X_new)
    for convert in (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix):
        np.testing.assert_allclose(est.decision_function(convert(X_new)), F, atol=1e-5)
        # predictions wherever the dense values are not within the solvers' accuracy of a tie or the threshold
        clear = np.ones(len(X_new), bool)
        if kind == "multiclass":
            top = np.sort(F, axis=1)
            clear = top[:, -1] - top[:, -2] > 1e-4
        else:
            clear = np.abs(F - 1.0).min(axis=1) > 1e-4
        np.testing.assert_array_equal(est.predict(convert(X_new))[clear], dense.predict(X_new)[clear])
    # mixed: the sparse fit on dense new data, the dense fit on sparse new data
    np.testing.assert_allclose(est.decision_function(X_new), F, atol=1e-5)
    np.testing.assert_allclose(dense.decision_function(sp.csr_matrix(X_new)), F, rtol=0, atol=1e-12)
    assert est.n_features_in_ == X.shape[1]
    if kernel == "linear":
        np.testing.assert_allclose(est.coef_, dense.coef_, atol=1e-5)


@pytest.mark.parametrize("approximation", ["nystroem", "rff"])
def test_estimator_kernel_approximation_on_sparse(sparse_multiclass, approximation):
    X, Y, _ = sparse_multiclass
    y = np.argmax(Y, axis=1)
    params = {"kernel": "rbf", "kernel_approximation": approximation, "n_components": 15, "random_state": 0}
    dense = OvNClassifier(**params).fit(X, y)
    est = OvNClassifier(**params).fit(sp.csc_matrix(X), y)
    np.testing.assert_allclose(est.decision_function(sp.csr_matrix(X)), dense.decision_function(X), atol=1e-5)


def test_estimator_sparse_precomputed_and_probability(sparse_multiclass):
    X, Y, _ = sparse_multiclass
    y = np.argmax(Y, axis=1)
    G = X @ X.T
    dense = OvNClassifier(kernel="precomputed").fit(G, y)
    est = OvNClassifier(kernel="precomputed").fit(sp.csr_matrix(G), y)
    np.testing.assert_allclose(est.decision_function(sp.csr_matrix(G[:9])), dense.decision_function(G[:9]),
                               atol=1e-5)
    proba = OvNClassifier(probability=True, rule_cv=3).fit(sp.csr_matrix(X), y)
    P = proba.predict_proba(sp.csr_matrix(X[:9]))
    np.testing.assert_allclose(P, OvNClassifier(probability=True, rule_cv=3).fit(X, y).predict_proba(X[:9]),
                               atol=1e-4)


def test_estimator_tags_say_sparse():
    assert OvNClassifier().__sklearn_tags__().input_tags.sparse


# --- solver="auto" on sparse, wide data ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def sparse_wide():
    """Word counts with more features than rows and 2 000 pairs (400 rows, 5 labels, every non-member a negative):
    the regime where ``solver="auto"`` starts with the dual coordinate descent; its problem and the tight
    reference."""
    from ovn_cvx.datasets import make_sparse_multilabel
    from ovn_cvx.solvers.mm.forms import sparse_and_wide
    X, Y = make_sparse_multilabel(n_samples=400, n_features=1000, n_classes=5, random_state=0)
    beta = OvNClassifier(decision_rule="paper").fit(X, Y).hinge_weight_
    problem = Problem(X, 2.0 * Y - 1.0, "SwSb", beta=beta, bias_penalty=0.0)
    assert sparse_and_wide(problem)
    return X, Y, _tight_reference(problem)


@pytest.mark.parametrize("rounds", [None, 1], ids=["dcd", "mm finish"])
def test_auto_on_sparse_wide_data_starts_with_the_dual_coordinate_descent(sparse_wide, rounds, monkeypatch):
    """The fit is the dual coordinate descent's, certified and at the reference's objective; with a budget too small
    to prove it (1 round), the MM solver finishes from its point, to the same optimum."""
    from ovn_cvx import estimator
    X, Y, reference = sparse_wide
    if rounds is not None:
        monkeypatch.setattr(estimator, "AUTO_DCD_ROUNDS", rounds)
    calls, solve = [], estimator.solve

    def recording(problem, method, **options):
        calls.append((method, options.get("warm_start"), solve(problem, method=method, **options)))
        return calls[-1][2]

    monkeypatch.setattr(estimator, "solve", recording)
    result = OvNClassifier(decision_rule="paper").fit(X, Y).result_
    assert [method for method, _, _ in calls] == (["smo"] if rounds is None else ["smo", "mm"])
    if rounds is not None:  # the MM solver starts from the unproven dual coordinate descent's point
        assert not calls[0][2].success and calls[1][1] is calls[0][2]
    assert result.success and result.method == ("smo" if rounds is None else "mm")
    assert result.form == "dcd" if rounds is None else result.form != "dcd"
    assert result.objective == pytest.approx(reference.objective, rel=1e-6)
    assert result.objective >= reference.objective - 1e-6 * abs(reference.objective)


@pytest.mark.parametrize("per_pair, first", [(10, True), (10 + 1 / 2000, False)], ids=["at", "beyond"])
def test_dual_descent_first_up_to_its_features_per_pair(per_pair, first):
    """``solver="auto"`` starts with the dual coordinate descent up to AUTO_DCD_FEATURES (10) features a pair: at it
    (20 000 features, 2 000 pairs) yes, one feature more no (the matrix-free form wins on very wide data)."""
    from ovn_cvx.estimator import AUTO_DCD_FEATURES, _dual_descent_first
    assert AUTO_DCD_FEATURES == 10
    n_features = round(per_pair * 2000)
    X = sp.random(400, n_features, density=5 / n_features, format="csr", random_state=0)
    Y = 2.0 * np.eye(5)[np.arange(400) % 5] - 1.0
    assert _dual_descent_first(Problem(X, Y, "SwSb", beta=1.0, bias_penalty=0.0)) is first
