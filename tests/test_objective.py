"""The exact evaluator against a loop-by-loop transcription of docs/theory.md §2, and hand-derived optima."""
import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

import ovn_cvx
from ovn_cvx import Problem, constraint_violation, objective


def naive_objective(X, Y, variant, alpha, beta, gamma, s, W, b, G=None):
    """docs/theory.md §2 written term by term: ½Σ‖w_k‖² + α Σ_{k<l}⟨w_k,w_l⟩ + Σ_{Y_ik≠0} β s_i [1 − Y_ik f_k(x_i)]_+ +
    γ(Σb)²."""
    N, K = Y.shape
    inner = (lambda u, v: u @ G @ v) if G is not None else (lambda u, v: u @ v)
    value = sum(0.5 * inner(W[:, k], W[:, k]) for k in range(K))
    if variant.startswith("Sw"):
        value += alpha * sum(inner(W[:, k], W[:, j]) for k in range(K) for j in range(k + 1, K))
    for i in range(N):
        for k in range(K):
            if Y[i, k] != 0:
                f = (G[i] @ W[:, k] if G is not None else X[i] @ W[:, k]) + b[k]
                value += beta * s[i] * max(0.0, 1.0 - Y[i, k] * f)
    if variant.endswith("Sb"):
        value += gamma * b.sum() ** 2
    return value


@pytest.mark.parametrize("variant", ovn_cvx.VARIANTS)
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_objective_matches_the_formula_term_by_term(variant, kernel, multilabel_data):
    X, Y, s = multilabel_data
    rng = np.random.default_rng(5)
    alpha = -0.2 if variant.startswith("Sw") else 0.0
    p = Problem(X, Y, variant, kernel, alpha=alpha, beta=1.7, bias_penalty=0.3, sample_weight=s, gamma=0.5)
    coef, b = rng.normal(size=p.coef_shape), rng.normal(size=4)
    G = rbf_kernel(X, gamma=0.5) if kernel == "rbf" else None
    assert objective(p, coef, b) == pytest.approx(naive_objective(X, Y, variant, alpha, 1.7, 0.3, s, coef, b, G),
                                                  rel=1e-12)


def test_objective_rejects_wrong_shapes(multiclass_data):
    p = Problem(*multiclass_data)
    with pytest.raises(ValueError, match=r"coef must be W \(M×K\) of shape \(3, 3\)"):
        objective(p, np.zeros((4, 3)), np.zeros(3))
    with pytest.raises(ValueError, match=r"b must have shape \(3,\)"):
        objective(p, np.zeros((3, 3)), np.zeros(2))


def test_constraint_violation_reports_each_hard_constraint(multiclass_data):
    W = np.ones((3, 3))
    assert constraint_violation(Problem(*multiclass_data, "SwSb"), W, np.ones(3)) == {}
    assert constraint_violation(Problem(*multiclass_data, "HwHb"), W, np.ones(3)) == {"sum_b": 3.0, "sum_w": 3.0}


# Tiny problems solved by hand. Two 1-D points: x = +1 in class 1, x = −1 in class 2, K = 2, hard b.
X2 = np.array([[1.0], [-1.0]])
Y2 = np.eye(2)


@pytest.mark.parametrize("alpha, beta", [(0.5, 0.25), (-0.5, 0.25), (0.0, 2.0), (0.5, 1.0)])
def test_tiny_swhb_optimum_derived_by_hand(alpha, beta):
    # The problem is invariant under (w1, w2, t) → (−w2, −w1, −t) with b = (t, −t), and W is unique (P ≻ 0), so
    # w2 = −w1 =: −w. Then R = ½(w² + w²) − α w² = (1−α) w² and the two hinge terms are both β[1 − w ∓ t]_+.
    # For |t| ≤ 1 − w the hinge sum is 2β(1 − w), so F(w) = (1−α)w² + 2β[1 − w]_+, minimized at
    # w* = min(1, β/(1−α)) with F* = (1−α)w*² + 2β(1 − w*).
    w = min(1.0, beta / (1 - alpha))
    expected = (1 - alpha) * w**2 + 2 * beta * (1 - w)
    p = Problem(X2, Y2, "SwHb", alpha=alpha, beta=beta)
    for solver in ("CLARABEL", "ECOS"):
        r = ovn_cvx.solve(p, solver=solver)
        assert r.status == "optimal"
        assert r.objective == pytest.approx(expected, rel=1e-7, abs=1e-9)
        # ‖ΔW‖ is only O(√(objective error)) (strong convexity, docs/theory.md §9.1.3): 1e-5 measured with ECOS defaults
        np.testing.assert_allclose(r.coef, [[w, -w]], atol=1e-4)


@pytest.mark.parametrize("beta", [0.5, 2.0])
def test_tiny_hwhb_optimum_derived_by_hand(beta):
    # HwHb, K = 2: w2 = −w1 = −w, b = (t, −t): F = ‖w1‖² + β([1 − w − t]_+ + [1 − w + t]_+) (docs/theory.md §7).
    # Minimizing w² + 2β[1 − w]_+ (at t = 0): w* = min(1, β), F* = w*² + 2β(1 − w*).
    # β = 0.5: w* = 0.5, F* = 0.75;  β = 2: w* = 1, F* = 1 (then t = 0 is the unique bias).
    w = min(1.0, beta)
    p = Problem(X2, Y2, "HwHb", beta=beta)
    r = ovn_cvx.solve(p, solver="CLARABEL")
    assert r.objective == pytest.approx(w**2 + 2 * beta * (1 - w), rel=1e-7)
    np.testing.assert_allclose(r.coef, [[w, -w]], atol=1e-6)
    if beta > 1:
        np.testing.assert_allclose(r.b, [0.0, 0.0], atol=1e-6)


def test_trivial_soft_bias_bound_is_attained_by_hand():
    # docs/theory.md §3.4: with W = 0 and b = 1 every hinge vanishes, so F* ≤ γK². With every pattern in both classes
    # and HwSb, symmetry forces w1 = −w2 = w; then F(w, b) ≥ ... the optimum is the trivial W = 0, b_k = 1 when γK² is
    # below any margin-based solution: a single pattern x = 0 in both classes leaves nothing for W to do, and
    # F(b) = Σ_k β[1 − b_k]_+ + γ(Σb)² is minimized at b_k = 1 for γ ≤ β/(2K): F* = γK².
    p = Problem(np.zeros((1, 1)), np.ones((1, 2)), "HwSb", beta=1.0, bias_penalty=0.2)
    r = ovn_cvx.solve(p, solver="CLARABEL")
    assert r.objective == pytest.approx(0.2 * 4, rel=1e-7)
    np.testing.assert_allclose(r.b, [1.0, 1.0], atol=1e-6)
