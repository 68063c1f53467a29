"""The matrix-free form (docs/theory.md §9.11) against the CVXPY reference: every variant, multiclass and
multilabel (with sample weights, an unlabeled row and a −1 entry), the soundness of its proven bound, warm starts,
the automatic choice, and the ε extrapolation on a hand-made path."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_multilabel_classification

import ovn_cvx
from ovn_cvx import Problem
from ovn_cvx.datasets import make_sparse_multilabel
from ovn_cvx.solvers.mm import forms
from ovn_cvx.solvers.cvxpy_solver import TIGHT_CLARABEL
from ovn_cvx.solvers.mm.matrix_free import Stage, extrapolate
from ovn_cvx.testing import assert_matches_reference


def tight_reference(problem):
    ref = ovn_cvx.solve(problem, solver="CLARABEL", **TIGHT_CLARABEL)
    assert ref.status == "optimal"
    return ref


@pytest.mark.parametrize("variant", ovn_cvx.VARIANTS)
def test_matrix_free_matches_reference(data, variant, make_problem):
    problem = make_problem(data, variant, "linear")
    result = ovn_cvx.solve(problem, method="mm", form="matrix-free")
    assert result.success and result.form == "matrix-free" and result.finish == "newton-cg"
    reference = assert_matches_reference(result, rtol=1e-6, ftol=1e-3, reference=tight_reference(problem))
    # the proven bound is a bound: the true gap (to a reference within 1e-9) never exceeds it
    true_gap = result.objective - reference.objective
    assert true_gap <= result.gap_bound + 1e-9 * max(1.0, abs(reference.objective))


@pytest.mark.parametrize("variant", ["SwSb", "HwHb"])
@pytest.mark.parametrize("alpha, beta", [(0.9, 1e3), (-0.45, 1e-2)])
def test_matrix_free_at_the_edges(variant, alpha, beta):
    """α near either end of its interval (K = 3: −0.5 < α < 1) and β over five decades: certified, and the bound
    holds against the tight reference."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 4)) * np.array([1e-2, 1.0, 10.0, 1.0])
    y = rng.integers(0, 3, 60)
    X[y == 2] += 0.5
    problem = Problem.from_labels(X, y, variant, alpha=alpha if variant.startswith("Sw") else 0.0, beta=beta)
    result = ovn_cvx.solve(problem, method="mm", form="matrix-free")
    reference = tight_reference(problem)
    assert result.objective - reference.objective <= result.gap_bound + 1e-9 * max(1, reference.objective)
    assert result.success, result.info
    assert_matches_reference(result, rtol=1e-6, ftol=None, reference=reference)


def test_matrix_free_without_success_reports_its_bound(multilabel_data, make_problem):
    """An iteration limit too small to certify: a non-success status, and a bound that still holds."""
    problem = make_problem(multilabel_data, "SwHb", "linear")
    result = ovn_cvx.solve(problem, method="mm", form="matrix-free", max_iter=3)
    assert result.status == "max_iter" and not result.success
    reference = tight_reference(problem)
    assert result.relative_gap_bound > result.gap_tol
    assert result.objective - reference.objective <= result.gap_bound + 1e-9


def test_matrix_free_warm_start(multiclass_data, make_problem):
    """From the solution at β, the problem at 1.5β: certified, and in fewer Newton iterations than cold."""
    problem = make_problem(multiclass_data, "SwHb", "linear")
    first = ovn_cvx.solve(problem, method="mm", form="matrix-free")
    moved = problem.replace(beta=1.5 * problem.beta)
    cold = ovn_cvx.solve(moved, method="mm", form="matrix-free")
    warm = ovn_cvx.solve(moved, method="mm", form="matrix-free", warm_start=first)
    assert warm.success and cold.success
    assert warm.iterations < cold.iterations
    assert_matches_reference(warm, rtol=1e-6, ftol=None, reference=tight_reference(moved))


def test_matrix_free_rejects_kernel_problems(multiclass_data, make_problem):
    problem = make_problem(multiclass_data, "SwHb", "rbf")
    with pytest.raises(ValueError, match="form='matrix-free' solves linear problems"):
        ovn_cvx.solve(problem, method="mm", form="matrix-free")


def test_auto_form_goes_matrix_free_beyond_the_budget(multiclass_data, make_problem, monkeypatch):
    """The automatic choice: the structured forms while they fit the budget, matrix-free beyond it."""
    problem = make_problem(multiclass_data, "HwHb", "linear")
    assert ovn_cvx.solve(problem, method="mm").form == "primal"
    monkeypatch.setattr(forms, "STRUCTURED_BUDGET", 10)
    result = ovn_cvx.solve(problem, method="mm")
    assert result.form == "matrix-free" and result.success


@pytest.fixture(scope="module")
def sparse_wide():
    """Sparse rows, more features than pairs: the pair form is the cheaper structured form."""
    X, Y = make_sparse_multilabel(n_samples=60, n_features=300, n_classes=4, random_state=1)
    problem = Problem(X, Y, "SwHb", "linear", beta=1.0)
    assert forms.structured_form(problem) == "pair"
    return problem


def test_auto_form_goes_matrix_free_on_sparse_wide_data_from_the_pair_threshold(sparse_wide, monkeypatch):
    """Sparse data whose structured choice is the pair form: matrix-free from SPARSE_MATRIX_FREE_PAIRS pairs on
    (just at the threshold), the pair form a pair below it and for the same data dense; both certified, with the
    objective of the tight reference."""
    n = len(sparse_wide.pairs)
    monkeypatch.setattr(forms, "SPARSE_MATRIX_FREE_PAIRS", n)
    result = ovn_cvx.solve(sparse_wide, method="mm")
    assert result.form == "matrix-free" and result.success
    # objective only: a proven gap of 1e-6 bounds |ΔW| by √(2·gap), loose on decision values at this small F
    assert_matches_reference(result, reference=ovn_cvx.solve(sparse_wide, method="cvxpy", **TIGHT_CLARABEL), ftol=None)
    dense = Problem(sparse_wide.X.toarray(), sparse_wide.Y, "SwHb", "linear", beta=1.0)
    assert ovn_cvx.solve(dense, method="mm").form == "pair"
    monkeypatch.setattr(forms, "SPARSE_MATRIX_FREE_PAIRS", n + 1)
    assert ovn_cvx.solve(sparse_wide, method="mm").form == "pair"


def test_auto_form_finishes_in_pair_form_what_matrix_free_did_not_prove(sparse_wide, monkeypatch):
    """An uncertified matrix-free answer on sparse wide data: the pair form solves it again and the answer with the
    smaller proven bound is kept, recording the first attempt."""
    from ovn_cvx.solvers.mm import driver
    monkeypatch.setattr(forms, "SPARSE_MATRIX_FREE_PAIRS", len(sparse_wide.pairs))
    unproven = driver._matrix_free

    def one_iteration(problem, gap_tol, max_iter, warm_coef, warm_b, progress):
        return unproven(problem, gap_tol, 1, warm_coef, warm_b, progress)

    monkeypatch.setattr(driver, "_matrix_free", one_iteration)
    result = ovn_cvx.solve(sparse_wide, method="mm")
    attempt = result.info["matrix_free_attempt"]
    assert result.form == "pair" and result.success and attempt["relative_gap_bound"] > result.gap_tol


def test_extrapolation_is_exact_on_polynomial_paths():
    """W, b, μ quadratic in ε through three stages: the extrapolation to 0 (and to any ε) is exact."""
    rng = np.random.default_rng(0)
    c0, c1, c2 = (rng.normal(size=(4, 3)) for _ in range(3))

    def path(eps):
        W = c0 + eps * c1 + eps**2 * c2
        return Stage(eps, W, W[0], W[:, 1], np.zeros(4, dtype=np.int8))

    chain = [path(0.2), path(0.02), path(0.002)]
    for eps in (0.0, 2e-4):
        W, b, mu = extrapolate(chain, eps)
        np.testing.assert_allclose(W, path(eps).W, rtol=0, atol=1e-12)
        np.testing.assert_allclose(b, path(eps).b, rtol=0, atol=1e-12)
        np.testing.assert_allclose(mu, path(eps).mu, rtol=0, atol=1e-12)


def sparse_text_problem(variant):
    """Sparse counts (about 10 words per row over M = 60, every row in one or more of K = 4 labels)."""
    X, Y = make_sparse_multilabel(150, n_features=60, n_classes=4, length=10, random_state=1)
    problem = Problem(X, Y, variant, alpha=0.3 if variant.startswith("Sw") else 0.0, beta=2.0)
    assert sp.issparse(problem.X)
    return problem


def test_matrix_free_on_sparse_text():
    """The sparse path gives the reference's objective, certified, and the result of the dense copy."""
    problem = sparse_text_problem("SwHb")
    result = ovn_cvx.solve(problem, method="mm", form="matrix-free")
    assert result.success, result.info
    dense = ovn_cvx.solve(problem.replace(X=problem.X.toarray()), method="mm", form="matrix-free")
    assert dense.success
    assert abs(result.objective - dense.objective) <= 1e-6 * max(1.0, dense.objective)
    assert_matches_reference(result, rtol=1e-6, ftol=None, reference=tight_reference(problem))


def test_matrix_free_degenerate_sparse_text():
    """HwSb on the same data, a degenerate optimum (margin pairs whose multipliers sit at 0 or c_p): the ε stages
    alone kept pairs drifting in and out of the band and ended "inaccurate" at a bound of 1.4e-6 after 61 Newton
    iterations (measured); the exact finish on a stage's partition (docs/theory.md §9.11) certifies it, and the
    bound holds."""
    problem = sparse_text_problem("HwSb")
    result = ovn_cvx.solve(problem, method="mm", form="matrix-free", max_iter=150)
    reference = tight_reference(problem)
    assert result.objective - reference.objective <= result.gap_bound + 1e-9 * max(1, reference.objective)
    assert result.success, result.info
    assert_matches_reference(result, rtol=1e-6, ftol=None, reference=reference)


def test_exact_finish_certifies_a_fully_degenerate_optimum():
    """The exact finish (docs/theory.md §9.11) where the ε stages cannot: HwSb at β = 100 on wide sparse counts has
    W* = 0 and b* = 1, every one of its 86 pairs on the margin, and multipliers that are not unique (8 rows carry
    every label: raising the multipliers of one such row's pairs together changes neither W nor the class masses'
    differences). Without the finish the stages ended "inaccurate" at a bound of 2.0e-6 after 237 Newton
    iterations (measured); the finish on the first stage's partition certifies within a few iterations, and its
    point is the reference's."""
    X, Y = make_sparse_multilabel(40, n_features=200, n_classes=4, length=15, random_state=1)
    problem = Problem(X, Y, "HwSb", beta=100.0, bias_penalty=0.5)
    result = ovn_cvx.solve(problem, method="mm", form="matrix-free")
    reference = tight_reference(problem)
    assert result.objective - reference.objective <= result.gap_bound + 1e-9 * max(1, reference.objective)
    assert result.success and result.info["finish_solves"] > 0 and result.iterations <= 5, result.info
    assert_matches_reference(result, rtol=1e-7, ftol=1e-4, reference=reference)
    # the degenerate optimum itself: F* = γ(Σb)² = 8 at W = 0, b = 1
    assert np.abs(result.coef).max() < 1e-6 and np.allclose(result.b, 1.0, atol=1e-6)


def test_sparse_multilabel_generator_statistics():
    """The generator's documented model: CSR word counts with ~length words per row (few collisions over many
    features), Poisson(n_labels) labels per row drawn again while 0, reproducible; label and word frequencies follow the
    same kind of draws as scikit-learn's make_multilabel_classification (mean labels per row within 5 %)."""
    X, Y = make_sparse_multilabel(4000, n_features=20000, n_classes=10, n_labels=2.0, length=50.0, random_state=0)
    assert sp.isspmatrix_csr(X) and X.shape == (4000, 20000) and Y.shape == (4000, 10)
    assert set(np.unique(Y)) <= {0, 1} and Y.sum(axis=1).min() >= 1
    assert abs(X.sum(axis=1).mean() - 50.0) < 1.0  # Poisson(50) words per row
    assert abs(Y.sum(axis=1).mean() - 2.0 / (1.0 - np.exp(-2.0))) < 0.1  # zero-truncated Poisson(2)
    X2, Y2 = make_sparse_multilabel(4000, n_features=20000, n_classes=10, n_labels=2.0, length=50.0, random_state=0)
    assert (X2 != X).nnz == 0 and np.array_equal(Y, Y2)
    _, Y_sk = make_multilabel_classification(400, n_features=2000, n_classes=10, n_labels=2, length=50,
                                             allow_unlabeled=False, random_state=0)
    assert abs(Y_sk.sum(axis=1).mean() - Y.sum(axis=1).mean()) < 0.05 * Y_sk.sum(axis=1).mean() + 0.15


def test_estimator_default_takes_the_matrix_free_form_beyond_the_budget(monkeypatch):
    """``OvNClassifier()`` with default settings on sparse data chooses by itself: the structured form while it
    fits, the matrix-free one beyond the budget — same predictions, both certified."""
    from ovn_cvx import OvNClassifier

    X, Y = make_sparse_multilabel(150, n_features=60, n_classes=4, length=10, random_state=1)
    structured = OvNClassifier().fit(X, Y)
    assert structured.result_.form in ("primal", "pair") and structured.result_.success
    monkeypatch.setattr(forms, "STRUCTURED_BUDGET", 10)
    free = OvNClassifier().fit(X, Y)
    assert free.result_.form == "matrix-free" and free.result_.success
    f_structured, f_free = structured.decision_function(X), free.decision_function(X)
    # W is unique (strong convexity); b may not be (docs/theory.md §8): compare the W part of the decision values
    np.testing.assert_allclose(f_free - free.result_.b, f_structured - structured.result_.b, atol=1e-3)


# --- the Newton system in pair and in primal coordinates (docs/theory.md §9.11) ---------------------------------

def dense_newton_step(problem, W, b, eps, band):
    """The Newton step of the model of F̃_ε whose pairs in ``band`` are quadratic, from the definitions: the
    gradient and Hessian of ½tr(WPWᵀ) + Σ_p c_p h(r_p) + B(b) written out densely over z = (vec W row-major, b), the
    hard constraints by a KKT system solved with numpy."""
    X = problem.X.toarray() if sp.issparse(problem.X) else problem.X
    M, K = X.shape[1], problem.n_classes
    i, k, y, c = problem.pairs.sample, problem.pairs.label, problem.pairs.sign, problem.cost
    r = 1.0 - y * (np.einsum("pj,jp->p", X[i], W[:, k]) + b[k])
    mu = c * np.clip((r + eps) / (2 * eps), 0.0, 1.0)
    mu[band] = c[band] * (r[band] + eps) / (2 * eps)
    P = np.eye(K) if problem.hard_w else (1 - problem.alpha) * np.eye(K) + problem.alpha
    rows = np.zeros((len(k), M * K + K))  # ∂u_p/∂z: x_{i_p} at (j, k_p), 1 at b_{k_p}
    for p in range(len(k)):
        rows[p, np.arange(M) * K + k[p]] = X[i[p]]
        rows[p, M * K + k[p]] = 1.0
    gradient = np.concatenate([(W @ P).ravel(), np.zeros(K)]) - rows.T @ (mu * y)
    hessian = np.zeros((M * K + K, M * K + K))
    hessian[:M * K, :M * K] = np.kron(np.eye(M), P)
    hessian += rows[band].T @ (rows[band] * (c[band] / (2 * eps))[:, None])
    if not problem.hard_b:
        gradient[M * K:] += 2 * problem.bias_penalty * b.sum()
        hessian[M * K:, M * K:] += 2 * problem.bias_penalty
    constraints = []
    if problem.hard_w:
        constraints += [np.concatenate([np.kron(np.eye(M)[j], np.ones(K)), np.zeros(K)]) for j in range(M)]
    if problem.hard_b:
        constraints.append(np.concatenate([np.zeros(M * K), np.ones(K)]))
    A = np.array(constraints).reshape(len(constraints), M * K + K)
    kkt = np.block([[hessian, A.T], [A, np.zeros((len(A), len(A)))]])
    step = np.linalg.lstsq(kkt, np.concatenate([-gradient, np.zeros(len(A))]), rcond=None)[0][:M * K + K]
    return step[:M * K].reshape(M, K), step[M * K:]


@pytest.mark.parametrize("copy_share", [0.0, 2.0])  # the band's rows masked / copied
@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("variant", ovn_cvx.VARIANTS)
def test_pair_and_primal_newton_systems_give_the_hand_derived_step(variant, sparse, copy_share, monkeypatch):
    """Both coordinate systems solve the same Newton system: the step of a dense KKT solve built from the
    definitions, to 1e-7 relative, on a wide multilabel problem with weights, sparse and dense X, the band's rows
    copied or masked; and both call it an exact solve."""
    from ovn_cvx.solvers.mm import pair_rows
    from ovn_cvx.solvers.mm.band_systems import BandHessian, BandPairSystem
    from ovn_cvx.solvers.mm.matrix_free import NewtonCG

    monkeypatch.setattr(pair_rows, "BAND_COPY_SHARE", copy_share)
    X, Y = make_sparse_multilabel(40, n_features=80, n_classes=4, length=12, random_state=2)
    problem = Problem(X if sparse else X.toarray(), Y, variant=variant, alpha=0.3 if variant.startswith("Sw") else 0.0,
                      beta=2.0, bias_penalty=0.7, sample_weight=np.linspace(0.5, 2.0, 40))
    rng = np.random.default_rng(0)
    W, b = 0.15 * rng.normal(size=(80, problem.n_classes)), 0.3 * rng.normal(size=problem.n_classes)
    if problem.hard_w:
        W -= W.mean(axis=1, keepdims=True)
    if problem.hard_b:
        b -= b.mean()
    run = NewtonCG(problem, 1e-6)
    run.point, run.eps = run.at(W, b), 1.0
    band = np.flatnonzero(np.abs(run.point.r) < run.eps)
    assert set(problem.pairs.label[band]) == set(range(problem.n_classes))  # no damped class: the exact model
    V_ref, d_ref = dense_newton_step(problem, W, b, run.eps, band)
    grad_W, grad_b = run.gradient(band)
    for system in (BandPairSystem(problem, run.rows, run.row_squares, band, run.eps),
                   BandHessian(problem, run.rows, band, run.eps)):
        V, d, used, exact = system.step(grad_W, grad_b, 1e-12)
        assert exact and used > 0
        scale = np.abs(np.concatenate([V_ref.ravel(), d_ref])).max()
        assert np.abs(V - V_ref).max() <= 1e-7 * scale and np.abs(d - d_ref).max() <= 1e-7 * scale
    if problem.hard_b:  # round-off along 1 in g_b (left by centring a larger vector) is not the system's to solve
        shifted = grad_b + 1e-6 * np.abs(grad_b).max()
        V, d, _, exact = BandPairSystem(problem, run.rows, run.row_squares, band, run.eps).step(grad_W, shifted, 1e-12)
        assert exact and np.abs(V - V_ref).max() <= 1e-7 * scale and np.abs(d - d_ref).max() <= 1e-7 * scale


@pytest.mark.parametrize("variant", ovn_cvx.VARIANTS)
def test_finish_system_solves_the_partition_qp(variant):
    """The exact finish's system (the pair system at ε = 0, docs/theory.md §9.11), from an arbitrary point with its
    band as the margin set: the step puts every margin pair on the margin and, with the multipliers it returns, the
    Lagrangian's projected gradient vanishes (W- and b-stationarity, equal class masses) — with −1 entries and
    sample weights."""
    from ovn_cvx.solvers.mm.band_systems import BandPairSystem
    from ovn_cvx.solvers.mm.matrix_free import NewtonCG
    from ovn_cvx.solvers.mm.active_set import IN_I, IN_S, IN_V, partition

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 80))
    Y = rng.choice([-1, 0, 1], size=(30, 3), p=[0.3, 0.3, 0.4])
    Y[np.arange(3), np.arange(3)] = 1
    problem = Problem(X, Y, variant, alpha=0.3 if variant.startswith("Sw") else 0.0, beta=1.0, bias_penalty=0.7,
                      sample_weight=np.linspace(0.5, 2.0, 30))
    run = NewtonCG(problem, 1e-6)
    W = 0.05 * rng.normal(size=(80, 3))
    run.point, run.eps = run.at(W - W.mean(axis=1, keepdims=True) if problem.hard_w else W, np.zeros(3)), 0.5
    sets = partition(run.point.r, run.eps)
    mu = np.where(sets == IN_V, problem.cost, np.where(sets == IN_I, 0.0, run.slopes(run.point.r)))
    margin = np.flatnonzero(sets == IN_S)
    assert 0 < margin.size < len(mu)
    system = BandPairSystem(problem, run.rows, run.row_squares, margin, 0.0)
    V, d, t, _, exact = system.solve(*run.lagrangian_gradient(run.point, mu), 1e-12, run.point.r[margin])
    point = run.at(run.point.W + V, run.point.b + d)
    mu[margin] -= problem.pairs.sign[margin] * t
    assert exact and np.abs(point.r[margin]).max() < 1e-10
    assert max(np.abs(g).max() for g in run.lagrangian_gradient(point, mu)) < 1e-10


def test_minres_solves_an_indefinite_system():
    """The hand-written MINRES on a symmetric indefinite matrix with an SPD (Jacobi) preconditioner, against
    numpy's direct solve; the iteration limit is honoured."""
    from ovn_cvx.solvers.mm.krylov import minres

    rng = np.random.default_rng(1)
    Q = np.linalg.qr(rng.normal(size=(30, 30)))[0]
    A = Q @ np.diag(np.r_[np.linspace(1, 50, 25), -np.linspace(0.5, 5, 5)]) @ Q.T

    class System:
        apply = staticmethod(lambda x: A @ x)
        precondition = staticmethod(lambda x: x / np.abs(np.diag(A)).clip(1e-3))

    rhs = rng.normal(size=30)
    x, used = minres(System, rhs, 1e-12, 500)
    assert np.linalg.norm(A @ x - rhs) <= 1e-9 * np.linalg.norm(rhs)
    np.testing.assert_allclose(x, np.linalg.solve(A, rhs), rtol=1e-8, atol=1e-10)
    _, used = minres(System, rhs, 1e-12, 3)
    assert used == 3


def test_krylov_breakdowns_end_the_solve_without_overflow():
    """An overflowing curvature (CG) and a singular breakdown (MINRES: A = 0, a large preconditioner) end the solve
    with the step so far, finite and without a floating-point warning (the adversarial search met both on column
    scales 1e±6: overflows, then NaN steps; MINRES's rotation floored at the smallest normal float overflowed)."""
    from ovn_cvx.solvers.mm.krylov import conjugate_gradient, minres

    class Overflowing:
        apply = staticmethod(lambda x: x * 1e300)
        precondition = staticmethod(lambda x: x.copy())

    class Singular:
        apply = staticmethod(lambda x: np.zeros_like(x))
        precondition = staticmethod(lambda x: x * 1e20)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x, used = conjugate_gradient(Overflowing, np.full(2, 1e10), 1e-10, 10)
        assert used == 1 and np.array_equal(x, np.zeros(2))
        x, used = minres(Singular, np.ones(2), 1e-10, 10)
        assert used == 1 and np.isfinite(x).all()


def test_exact_solve_check_on_a_broken_down_solve():
    """The true-residual check of an exact solve, on a step so large that squaring its residual overflows (the slow
    adversarial search met one: HwHb, β = 1000, N = 7) or on a non-finite step: not exact, and no warning; a true
    solution within the tolerance is."""
    from ovn_cvx.solvers.mm.band_systems import EXACT_RTOL, solved_exactly

    class Identity:
        apply = staticmethod(lambda x: x.copy())

    rhs = np.array([1.0, -2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not solved_exactly(Identity, np.array([1e200, 1e200]), rhs, EXACT_RTOL)
        assert not solved_exactly(Identity, np.array([np.inf, np.nan]), rhs, EXACT_RTOL)
        assert solved_exactly(Identity, rhs * (1 + 1e-16), rhs, EXACT_RTOL)
        assert not solved_exactly(Identity, rhs, rhs, 10 * EXACT_RTOL)  # not asked for an exact solve


def test_stage_ends_at_the_smoothed_minimizer():
    """Each ε stage that ends on an exact step over an unchanged partition — a Newton step, or the stage's
    prediction itself — ends at F̃_ε's minimizer: the gradient there is round-off beside the gradient at the
    start. (A bias curvature given to every class, not only to those without band pairs, left gradients 1e-7 of the
    start's and stalled the bound near 3e-5 on this problem.)"""
    from ovn_cvx.solvers.mm.matrix_free import NewtonCG

    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 4)) * np.array([1e-2, 1.0, 10.0, 1.0])
    y = rng.integers(0, 3, 60)
    X[y == 2] += 0.5
    problem = Problem.from_labels(X, y, "SwSb", alpha=0.9, beta=1e3)
    run = NewtonCG(problem, 1e-6)
    start = np.sqrt(sum(np.sum(g * g) for g in run.gradient(np.flatnonzero(np.abs(run.point.r) < run.eps))))
    stages = proven = 0
    while not run.certified and run.iterations < 200:
        proven += run.stage_done  # ended by its prediction (exact, on the partition it assumed): no Newton step
        if run.iterate():
            run.record_stage()
            stages += 1
            band = np.flatnonzero(np.abs(run.point.r) < run.eps)
            assert np.sqrt(sum(np.sum(g * g) for g in run.gradient(band))) <= 1e-7 * start
            if not run.certified:
                run.refine_eps()
    assert run.certified and stages >= 3 and proven >= 1


def test_wide_sparse_data_take_the_pair_coordinates():
    """Wide sparse counts (N = 300, M = 3 000): every Newton system in the band's pair coordinates, certified,
    the reference's objective; the systems stay well conditioned (a few dozen MINRES iterations each, where the
    primal coordinates needed hundreds)."""
    X, Y = make_sparse_multilabel(300, n_features=3000, n_classes=5, length=40, random_state=4)
    problem = Problem(X, Y)
    result = ovn_cvx.solve(problem, method="mm", form="matrix-free")
    assert result.success and result.info["primal_solves"] == 0 and result.info["pair_solves"] > 0
    assert result.info["cg_iterations"] <= 80 * result.info["pair_solves"]
    assert_matches_reference(result, rtol=1e-6, ftol=None, reference=tight_reference(problem))


@pytest.mark.slow
@pytest.mark.parametrize("variant", ovn_cvx.VARIANTS)
def test_wide_sparse_sweep_keeps_its_bound(variant):
    """Wide sparse multilabel data (150 × 1 500, K = 4, pair coordinates) over α and β: every point certified, and
    the proven bound holds against the tight reference. (Before the exact finish, three hard-w points ended
    "inaccurate" at bounds 1.6e-6–1.2e-5, docs/theory.md §9.11.)"""
    X, Y = make_sparse_multilabel(150, n_features=1500, n_classes=4, length=30, random_state=7)
    for alpha in ([-0.3, 0.0, 0.95] if variant.startswith("Sw") else [0.0]):
        for beta in (0.01, 1.0, 100.0):
            problem = Problem(X, Y, variant=variant, alpha=alpha, beta=beta, bias_penalty=0.5)
            result = ovn_cvx.solve(problem, method="mm", form="matrix-free")
            reference = tight_reference(problem)
            scale = max(1.0, abs(reference.objective))
            assert result.objective - reference.objective <= result.gap_bound + 1e-9 * scale
            assert result.success and result.relative_gap_bound <= result.gap_tol, (alpha, beta)
            assert result.info["primal_solves"] == 0


@pytest.mark.parametrize("variant", ovn_cvx.VARIANTS)
def test_an_all_zero_row_is_solved(variant):
    """A row of X that is zero (an empty document) has no diagonal entry in the exact finish's pair system: the form
    still certifies, and agrees with the reference."""
    X = np.random.default_rng(0).normal(size=(40, 5))
    X[3] = 0.0
    problem = Problem.from_labels(X, np.arange(40) % 4, variant=variant)
    result = ovn_cvx.solve(problem, method="mm", form="matrix-free")
    assert result.success and result.form == "matrix-free"
    reference = tight_reference(problem)
    assert result.objective - reference.objective <= result.gap_bound + 1e-9 * max(1, reference.objective)
    assert_matches_reference(result, reference=reference, ftol=None)


def test_sparse_data_with_empty_rows_through_the_automatic_form(monkeypatch):
    """Sparse data with empty rows, as text data has, where the automatic choice takes the matrix-free form."""
    X, Y = make_sparse_multilabel(150, n_features=60, n_classes=4, length=10, random_state=1)
    X = X.tolil()
    X[::10] = 0.0
    X = X.tocsr()
    X.eliminate_zeros()
    assert np.count_nonzero(X.getnnz(axis=1) == 0) >= 15
    monkeypatch.setattr(forms, "STRUCTURED_BUDGET", 10)
    problem = Problem(X, Y)
    result = ovn_cvx.solve(problem, method="mm")
    assert result.form == "matrix-free" and result.success
    assert_matches_reference(result, reference=tight_reference(problem), ftol=None)
