"""The §6 KKT certificate: ~0 on exact solutions, large on corrupted ones; multipliers against
independent oracles (CVXPY's dual of Σb = 0, scikit-learn's SVC dual)."""
import numpy as np
import pytest
from sklearn.svm import SVC

from ovn_cvx import Problem, solve
from ovn_cvx.formulations import build
from ovn_cvx.kkt import KKT_TOL, kkt_certificate
from ovn_cvx.verify.checks import binary_problem
from ovn_cvx.verify.suite import BinaryCase

VARIANT_ALPHA = {"SwSb": 0.3, "SwHb": -0.2, "HwSb": 0.0, "HwHb": 0.0}


@pytest.fixture(scope="module", params=[("linear", v) for v in VARIANT_ALPHA] + [("rbf", "SwHb"), ("rbf", "HwSb")],
                ids=lambda p: f"{p[0]}-{p[1]}")
def solved(request, multiclass_data):
    kernel, variant = request.param
    X, Y = multiclass_data
    problem = Problem(X, Y, variant, kernel, alpha=VARIANT_ALPHA[variant], beta=1.0, bias_penalty=0.5)
    result = solve(problem, solver="CLARABEL")
    assert result.success
    return problem, result


def test_exact_solutions_are_certified(solved):
    problem, result = solved
    cert = kkt_certificate(problem, result.coef, result.b)
    assert cert.passed(), cert.residuals
    assert cert.max_residual() <= KKT_TOL
    c = problem.cost
    assert (cert.mu >= -1e-8).all() and (cert.mu <= c * (1 + 1e-8)).all()
    assert cert.n_margin > 0  # the optimum has margin support vectors on these data


def test_multilabel_with_negatives_and_weights_is_certified(multilabel_data):
    X, Y, w = multilabel_data
    for variant in ("SwSb", "HwHb"):
        problem = Problem(X, Y, variant, alpha=0.1 if variant == "SwSb" else 0.0, sample_weight=w)
        result = solve(problem)
        assert kkt_certificate(problem, result.coef, result.b).passed()


@pytest.mark.parametrize("corruption", ["W", "b", "W_small"])
def test_corrupted_solutions_fail(solved, corruption):
    problem, result = solved
    coef, b = result.coef.copy(), result.b.copy()
    if corruption == "W":
        coef[:, 0] += 0.05 * np.abs(coef).max()
    elif corruption == "W_small":
        coef[0, 1] += 1e-3 * np.abs(coef).max()
    else:  # keeps Σb, so the hard constraint still holds: the failure must come from the KKT residuals
        b[0] += 0.05
        b[1] -= 0.05
    cert = kkt_certificate(problem, coef, b)
    assert not cert.passed()
    assert cert.max_residual() > 1e-4


def test_violated_hard_constraints_fail(multiclass_data):
    X, Y = multiclass_data
    problem = Problem(X, Y, "HwHb")
    result = solve(problem)
    cert = kkt_certificate(problem, result.coef, result.b + 1e-4)
    assert cert.residuals["sum_b"] == pytest.approx(3e-4, rel=1e-6)
    assert not cert.passed()
    coef = result.coef.copy()
    coef[:, 2] += 1e-4  # Σ_k w_k ≠ 0
    assert kkt_certificate(problem, coef, result.b).residuals["sum_w"] == pytest.approx(1e-4, rel=1e-6)


def test_class_mass_equals_cvxpy_multiplier_of_sum_b(multiclass_data):
    """b-stationarity: every class carries the same dual mass m, and m is the multiplier of Σb = 0."""
    X, Y = multiclass_data
    for variant in ("SwHb", "HwHb"):
        problem = Problem(X, Y, variant, alpha=0.2 if variant == "SwHb" else 0.0, beta=2.0)
        formulation = build(problem)
        result = solve(problem, formulation=formulation)
        lam = float(formulation.cvx.constraints[-1].dual_value)
        cert = kkt_certificate(problem, result.coef, result.b)
        assert cert.residuals["spread"] <= 1e-7
        np.testing.assert_allclose(cert.class_mass, lam, rtol=1e-6)


def test_soft_bias_mass_relation_and_spread_under_corruption(multiclass_data):
    X, Y = multiclass_data
    problem = Problem(X, Y, "SwSb", alpha=0.1, bias_penalty=0.7)
    result = solve(problem)
    cert = kkt_certificate(problem, result.coef, result.b)
    # docs/theory.md §6: m = 2γ Σ_k b_k > 0 (every y_p = +1)
    np.testing.assert_allclose(cert.class_mass, 2 * 0.7 * result.b.sum(), rtol=1e-6)
    assert result.b.sum() > 0
    b = result.b.copy()
    b[2] += 0.2  # class 2's margin pairs leave the margin: its mass no longer matches the others
    bad = kkt_certificate(problem, result.coef, b, margin_band=1e-6)
    assert bad.residuals["spread"] > 1e-2 or bad.residuals["stationarity"] > 1e-2


def test_binary_multipliers_are_twice_svc_dual():
    """docs/theory.md §7: μ = 2a with a = |dual_coef_| of SVC(C=β/2) (a = 0 off the support)."""
    X, y = BinaryCase("k", 60, 3, seed=21).data()
    beta = 1.0
    problem = binary_problem(X, y, beta)
    result = solve(problem)
    cert = kkt_certificate(problem, result.coef, result.b)
    svm = SVC(kernel="linear", C=beta / 2, tol=1e-12).fit(X, y)
    a = np.zeros(X.shape[0])
    a[svm.support_] = np.abs(svm.dual_coef_.ravel())
    pairs = problem.pairs
    mu_by_sample = np.zeros(X.shape[0])
    mu_by_sample[pairs.sample] = cert.mu  # one pair per sample
    np.testing.assert_allclose(mu_by_sample, 2 * a, atol=1e-5 * beta)


def test_singular_linear_gram_is_certified(multiclass_data):
    """κ = xᵀy gives rank G = M < N: the eigen-features have M columns, the certificate still applies."""
    from sklearn.metrics.pairwise import linear_kernel
    X, Y = multiclass_data
    problem = Problem(X, Y, "HwHb", linear_kernel)
    assert problem.kernel_factor.rank == X.shape[1]
    result = solve(problem)
    assert kkt_certificate(problem, result.coef, result.b).passed()


def test_bad_input(multiclass_data):
    X, Y = multiclass_data
    problem = Problem(X, Y, "SwHb")
    W, b = np.zeros((3, 3)), np.zeros(3)
    with pytest.raises(TypeError, match="problem"):
        kkt_certificate("not a problem", W, b)
    with pytest.raises(ValueError, match="margin_band"):
        kkt_certificate(problem, W, b, margin_band=-1.0)
    with pytest.raises(ValueError, match="coef"):
        kkt_certificate(problem, np.zeros((2, 3)), b)


@pytest.mark.parametrize("variant", ["SwSb", "HwHb"])
def test_certificate_dual_matches_the_dual_qp(multiclass_data, variant):
    """Oracle: the §6 dual QP solved by CVXPY. Zero duality gap, and the certificate's multipliers reach D*."""
    import cvxpy as cp
    import scipy.sparse as sp

    X, Y = multiclass_data
    problem = Problem(X, Y, variant, alpha=0.3 if variant == "SwSb" else 0.0, beta=1.5, bias_penalty=0.4)
    pairs, K, n = problem.pairs, problem.n_classes, len(problem.pairs)
    result = solve(problem)
    P = problem.coupling
    P_plus = np.eye(K) - 1.0 / K if problem.hard_w else np.linalg.inv(P)
    root = P_plus if problem.hard_w else np.linalg.cholesky(P_plus)  # root rootᵀ = P⁺ (Π² = Π)

    mu = cp.Variable(n)
    m = cp.Variable()
    # column k of XᵀM = Σ_{p in class k} y_p μ_p x_{i_p}; Y_b maps μ to the class masses m_k
    blocks = [X[pairs.sample].T @ sp.diags(pairs.sign * (pairs.label == k)) @ mu for k in range(K)]
    XtM = cp.vstack(blocks).T  # M×K
    Yb = sp.csr_matrix((pairs.sign, (pairs.label, np.arange(n))), shape=(K, n))
    dual = cp.sum(mu) - 0.5 * cp.sum_squares(XtM @ root)
    if not problem.hard_b:
        dual -= cp.square(m) / (4 * problem.bias_penalty)
    qp = cp.Problem(cp.Maximize(dual), [mu >= 0, mu <= problem.cost, Yb @ mu == m])
    qp.solve(solver="CLARABEL")
    assert qp.value == pytest.approx(result.objective, rel=1e-7)  # zero duality gap (docs/theory.md §6)

    cert = kkt_certificate(problem, result.coef, result.b)
    assert cert.residuals["duality_gap"] <= 1e-7
    np.testing.assert_allclose(cert.class_mass, m.value, rtol=1e-5)
