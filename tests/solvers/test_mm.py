"""The MM solver against the CVXPY reference, scikit-learn's binary SVM and the MM theory of docs/theory.md §9."""
import numpy as np
import pytest
from scipy.linalg import LinAlgError
from sklearn.svm import SVC

import ovn_cvx
from ovn_cvx import Problem, training_decision
from ovn_cvx.testing import assert_matches_reference
from ovn_cvx.datasets import make_data
from ovn_cvx.labels import predict_labels
from ovn_cvx.solvers.cvxpy_solver import TIGHT_CLARABEL
from ovn_cvx.solvers.mm import pairs as pair_form
from ovn_cvx.solvers.mm.common import GramOperator

KERNELS = ["linear", "rbf"]
# Clarabel at its default tolerances is off by up to 1.3e-4 in f (multilabel HwSb: ΔF 1.8e-8, ECOS 6.7e-7) while
# the certified MM is exact to round-off; compare with a tight reference.


def tight_reference(problem):
    ref = ovn_cvx.solve(problem, solver="CLARABEL", **TIGHT_CLARABEL)
    assert ref.status == "optimal"
    return ref


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("variant", ovn_cvx.VARIANTS)
def test_mm_matches_reference(data, variant, kernel, make_problem):
    """All eight formulations; the multilabel data has sample weights, an unlabeled row and a −1 entry."""
    p = make_problem(data, variant, kernel)
    result = ovn_cvx.solve(p, method="mm")
    assert result.status == "optimal" and result.certified, result.info
    assert result.method == "mm" and result.iterations == len(result.history) - 1
    assert result.form == ("pair" if kernel == "rbf" else "primal")  # RBF: rank(G) = N
    # the 1e-6 objective gap; docs/theory.md §10 for certified MM: gap ≤ 1e-7, max |Δf| ≤ 1e-5
    ref = assert_matches_reference(result, rtol=1e-7, ftol=1e-5, reference=tight_reference(p))
    multilabel = len(data) == 3
    X = data[0]
    agree = (predict_labels(result.decision_function(X), multilabel=multilabel)
             == predict_labels(ref.decision_function(X), multilabel=multilabel))
    # a prediction may only differ where the reference itself is on a tie/threshold within its accuracy
    f_ref = ref.decision_function(X)
    close = np.abs(f_ref - (1.0 if multilabel else np.sort(f_ref, axis=1)[:, [-2]])) < 1e-5
    assert np.all(agree | close.any(axis=1, keepdims=True))


@pytest.mark.parametrize("newton", [False, True])
@pytest.mark.parametrize("variant", ovn_cvx.VARIANTS)
def test_pair_form_iterates_equal_primal_iterates(multilabel_data, variant, newton, make_problem):
    """docs/theory.md §9.3: the pair-form MM on G = XXᵀ and the primal MM on X produce the same iterates, MM steps and
    generalized Newton steps alike (the same model of F̃_ε, solved in the other coordinates)."""
    p = make_problem(multilabel_data, variant, "linear", alpha=0.3)
    runs = [ovn_cvx.solve(p, method="mm", form=form, max_iter=40, finish="none", newton=newton, eps=0.05)
            for form in ("primal", "pair")]
    assert runs[0].form == "primal" and runs[1].form == "pair"
    assert runs[0].info["newton_steps"] == runs[1].info["newton_steps"]
    assert (runs[0].info["newton_steps"] > 0) == newton
    np.testing.assert_allclose(runs[1].history, runs[0].history, rtol=1e-9)
    np.testing.assert_allclose(training_decision(p, runs[1].coef, runs[1].b),
                               training_decision(p, runs[0].coef, runs[0].b), atol=1e-7)


@pytest.mark.parametrize("variant", ["SwSb", "SwHb"])
def test_pair_form_b_equations_fall_back_to_least_squares(multiclass_data, variant, monkeypatch):
    """b-equations that LDLᵀ rejects (singular or worse conditioned than eps) take their least-squares solution: on
    a nonsingular system that is the same step; when that fails too, the error names the b-equations."""
    X, Y = multiclass_data
    p = Problem(X, Y, variant, alpha=0.2, beta=1.0, bias_penalty=0.3)
    stepper = pair_form.PairStepper(p, GramOperator(p))
    system = stepper.system(np.random.default_rng(13).uniform(0.5, 2.0, len(p.pairs)))
    t = np.random.default_rng(14).normal(size=len(p.pairs))
    direct = system.fit(t)
    monkeypatch.setattr(pair_form, "ldl_solve", lambda matrix, rhs: None)
    fallback = system.fit(t)
    assert np.abs(direct.b).max() > 1e-3
    np.testing.assert_allclose(fallback.b, direct.b, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(fallback.params[0], direct.params[0], rtol=1e-9, atol=1e-12)
    monkeypatch.setattr(pair_form, "least_change", lambda matrix, rhs: None)
    with pytest.raises(LinAlgError, match="the b-equations of the pair-form system could not be solved"):
        system.fit(t)


def test_kernel_primal_on_eigen_features_matches_pair_form(multiclass_data, make_problem):
    """The kernel primal iterates on L (G = LLᵀ) and maps back with to_coef; the pair form uses G."""
    p = make_problem(multiclass_data, "SwHb", "rbf", alpha=0.2)
    primal = ovn_cvx.solve(p, method="mm", form="primal", max_iter=30, finish="none", newton=False)
    pair = ovn_cvx.solve(p, method="mm", form="pair", max_iter=30, finish="none", newton=False)
    np.testing.assert_allclose(primal.history, pair.history, rtol=1e-8)
    X = multiclass_data[0][:7] + 0.1
    np.testing.assert_allclose(primal.decision_function(X), pair.decision_function(X), atol=1e-6)
    assert primal.coef.shape == p.coef_shape


def test_precomputed_linear_kernel_equals_linear(multiclass_data):
    """docs/theory.md §8: the kernel problem with G = XXᵀ has the linear problem's optimum and W = XᵀA."""
    X, Y = multiclass_data
    lin = ovn_cvx.solve(Problem(X, Y, "HwSb", alpha=0.0, beta=2.0, bias_penalty=0.5), method="mm")
    ker = ovn_cvx.solve(Problem(X @ X.T, Y, "HwSb", "precomputed", beta=2.0, bias_penalty=0.5), method="mm")
    assert lin.certified and ker.certified
    # rank(G) = M = 3 ≪ n: the cheaper eigen-feature primal form is chosen (docs/theory.md §9.3 "Choice for kernels")
    assert ker.form == "primal" and lin.form == "primal"
    assert ker.objective == pytest.approx(lin.objective, rel=1e-8)
    np.testing.assert_allclose(X.T @ ker.coef, lin.coef, atol=1e-6)


@pytest.mark.parametrize("form, newton", [("primal", False), ("pair", False), ("primal", True), ("pair", True)])
@pytest.mark.parametrize("variant", ["SwSb", "HwHb"])
def test_smoothed_objective_monotone_and_exact_within_slack(multilabel_data, variant, form, newton, make_problem):
    """docs/theory.md §9.1: F̃_ε never increases; F ≤ F̃_ε ≤ F + (ε/4)Σc; F(θ_{t+1}) ≤ F̃_ε(θ_t)."""
    p = make_problem(multilabel_data, variant, "linear", alpha=0.5)
    eps = 0.05
    result = ovn_cvx.solve(p, method="mm", eps=eps, form=form, max_iter=300, finish="none", decrease_tol=1e-13,
                           newton=newton)
    F, Fs = result.history, result.info["smoothed_history"]
    assert F.shape == Fs.shape == (result.iterations + 1,)
    assert np.all(np.isfinite(F))
    round_off = 1e-12 * Fs[0]
    assert np.all(np.diff(Fs) <= round_off)
    slack = eps / 4.0 * p.cost.sum()
    assert np.all(Fs - F >= -round_off) and np.all(Fs - F <= slack + round_off)
    assert np.all(F[1:] <= Fs[:-1] + round_off)
    # the exact objective does rise on some iterations, by less than the slack: the check is not vacuous
    assert np.diff(F).max() <= slack
    assert result.info["newton_steps" if newton else "relaxed_steps"] > 0


@pytest.mark.parametrize("variant", ovn_cvx.VARIANTS)
def test_plain_mm_reaches_the_same_certified_optimum(multilabel_data, variant, make_problem):
    """Linear problems take Newton steps by default; plain MM (+ relaxation, polish) must get there too."""
    p = make_problem(multilabel_data, variant, "linear")
    default = ovn_cvx.solve(p, method="mm", finish="polish")
    assert default.info["newton_steps"] > 0
    result = ovn_cvx.solve(p, method="mm", newton=False, finish="polish")
    assert result.certified and result.info["newton_steps"] == 0
    assert_matches_reference(result, rtol=1e-7, ftol=1e-5, reference=tight_reference(p))


def test_stopping_rule_with_continuation_keeps_smoothed_objective_monotone(multilabel_data, make_problem):
    p = make_problem(multilabel_data, "SwSb", "linear")
    result = ovn_cvx.solve(p, method="mm", eps=0.5, decrease_tol=1e-6, finish="polish")
    Fs = result.info["smoothed_history"]
    assert np.all(np.diff(Fs) <= 1e-12 * Fs[0])
    assert result.certified


def test_max_iter_is_not_converged(multiclass_data, make_problem):
    p = make_problem(multiclass_data, "SwHb", "linear")
    result = ovn_cvx.solve(p, method="mm", max_iter=3, finish="none")
    assert result.status == "max_iter" and not result.success and not result.certified
    assert result.iterations == 3 and result.history.shape == (4,)
    assert result.objective == pytest.approx(result.history[-1], rel=1e-12)
    # without polish the answer is the ε-smoothed one: the gap to the reference is real, and bounded
    ref = ovn_cvx.solve(p, solver="CLARABEL")
    assert result.objective > ref.objective + 1e-6


def test_without_polish_gap_is_within_smoothing_bound(multiclass_data, make_problem):
    """docs/theory.md §9.1.3: 0 ≤ F(θ_ε) − F* ≤ β ε n/4 (here with tol slack)."""
    p = make_problem(multiclass_data, "SwSb", "linear")
    eps = 1e-3
    result = ovn_cvx.solve(p, method="mm", eps=eps, decrease_tol=1e-12, finish="none", max_iter=20000)
    ref = ovn_cvx.solve(p, solver="CLARABEL")
    assert result.status == "inaccurate" and not result.success and not result.certified
    gap = result.objective - ref.objective
    assert -1e-7 <= gap <= eps * p.cost.sum() / 4.0
    assert gap <= result.gap_bound + 1e-9  # the proven bound holds, and is not vacuous:
    assert result.gap_bound <= 10 * eps * p.cost.sum()
    assert gap > 1e-3 * eps  # the ε bias is visible: it is what the polish removes


@pytest.mark.parametrize("kernel", KERNELS)
def test_warm_start_from_optimum_finishes_at_once(multilabel_data, kernel, make_problem):
    p = make_problem(multilabel_data, "SwHb", kernel)
    cold = ovn_cvx.solve(p, method="mm")
    warm = ovn_cvx.solve(p, method="mm", warm_start=cold)
    assert warm.certified and warm.iterations <= 1 < cold.iterations
    assert warm.objective == pytest.approx(cold.objective, rel=1e-10)


@pytest.mark.parametrize("finish", ["none", "polish"])
def test_kernel_primal_form_warm_starts_at_the_given_point(multiclass_data, finish, make_problem):
    """A warm start given as kernel coefficients A enters the primal form's eigen-coordinates (C = LᵀA)."""
    p = make_problem(multiclass_data, "SwHb", "rbf", alpha=0.2)
    cold = ovn_cvx.solve(p, method="mm", form="primal")
    q = p.replace(beta=1.25 * p.beta)
    warm = ovn_cvx.solve(q, method="mm", form="primal", warm_start=cold, finish=finish)
    assert warm.history[0] == pytest.approx(ovn_cvx.objective(q, cold.coef, cold.b), rel=1e-9)
    if finish == "polish":
        assert warm.certified
        assert_matches_reference(warm, reference=tight_reference(q))
    else:  # F̃_ε from near its minimizer: fewer iterations than from zero
        assert warm.iterations < ovn_cvx.solve(q, method="mm", form="primal", finish="none").iterations


@pytest.mark.parametrize("kernel", KERNELS)
def test_warm_started_beta_path(multiclass_data, kernel, make_problem):
    base = make_problem(multiclass_data, "HwHb", kernel)
    previous, warm_iters, cold_iters = None, 0, 0
    for beta in (0.8, 1.0, 1.25, 1.6):
        p = base.replace(beta=beta)
        warm = ovn_cvx.solve(p, method="mm", warm_start=previous)
        cold = ovn_cvx.solve(p, method="mm")
        assert warm.certified and cold.certified
        assert warm.objective == pytest.approx(cold.objective, rel=1e-9)
        if previous is not None:
            warm_iters, cold_iters = warm_iters + warm.iterations, cold_iters + cold.iterations
        previous = warm
    assert warm_iters < cold_iters


@pytest.mark.parametrize("kernel", KERNELS)
def test_same_input_same_output(multilabel_data, kernel, make_problem):
    p = make_problem(multilabel_data, "HwSb", kernel)
    a, b = (ovn_cvx.solve(p, method="mm") for _ in range(2))
    np.testing.assert_array_equal(a.coef, b.coef)
    np.testing.assert_array_equal(a.b, b.b)
    np.testing.assert_array_equal(a.history, b.history)


def binary_data(seed=5, n=80):
    """Overlapping classes (non-separable): the C vs 2C factor of docs/theory.md §7 is visible."""
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, 1, -1)
    X = rng.normal(size=(n, 3)) + 0.7 * y[:, None]
    return X, y


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("beta", [0.5, 4.0])
def test_binary_hwhb_equals_svc(kernel, beta):
    """docs/theory.md §7: K = 2 HwHb is SVC(C=β/2); f_1 = decision_function, f_2 = −f_1, F_OvN = 2 F_SVC."""
    X, y = binary_data()
    Y = np.column_stack([y == 1, y == -1]).astype(float)
    p = Problem(X, Y, "HwHb", kernel, beta=beta, gamma=0.4)
    result = ovn_cvx.solve(p, method="mm")
    assert result.certified
    svc = SVC(kernel=kernel, C=beta / 2, gamma=0.4, tol=1e-10).fit(X, y)
    X_test = np.random.default_rng(1).normal(size=(30, 3))
    f = result.decision_function(np.vstack([X, X_test]))
    np.testing.assert_allclose(f[:, 0], svc.decision_function(np.vstack([X, X_test])), atol=1e-5)
    np.testing.assert_allclose(f[:, 1], -f[:, 0], atol=1e-10)
    a = svc.dual_coef_[0]
    G = p.gram if kernel != "linear" else X @ X.T
    sv = svc.support_
    f_svc = G[:, sv] @ a + svc.intercept_[0]
    hinge = np.maximum(0.0, 1.0 - y * f_svc).sum()
    F_svc = 0.5 * a @ G[np.ix_(sv, sv)] @ a + beta / 2 * hinge
    assert result.objective == pytest.approx(2.0 * F_svc, rel=1e-6)


@pytest.mark.parametrize("options, exc, name", [
    ({"eps": 0.0}, ValueError, "eps"),
    ({"eps": -1e-3}, ValueError, "eps"),
    ({"eps": "small"}, TypeError, "eps"),
    ({"decrease_tol": 0}, ValueError, "decrease_tol"),
    ({"decrease_tol": np.nan}, ValueError, "decrease_tol"),
    # gap_tol decides the finish (exact below 1e-5): a NaN would compare False there, so it is refused by name
    ({"gap_tol": np.nan}, ValueError, "gap_tol"),
    ({"gap_tol": 0.0}, ValueError, "gap_tol"),
    ({"gap_tol": np.inf}, ValueError, "gap_tol"),
    ({"max_iter": 0}, ValueError, "max_iter"),
    ({"max_iter": 2.5}, TypeError, "max_iter"),
    ({"max_iter": True}, TypeError, "max_iter"),
    ({"relax": "yes"}, TypeError, "relax"),
    ({"polish": 1}, TypeError, "polish"),
    ({"form": "dense"}, ValueError, "form"),
    ({"newton": None}, TypeError, "newton"),
    ({"burn_in": 0}, ValueError, "burn_in"),
    ({"polish_every": -1}, ValueError, "polish_every"),
    ({"warm_start": np.zeros((3, 3))}, TypeError, "warm_start"),
    ({"unknown": 1}, TypeError, "unknown"),
])
def test_bad_options_rejected(multiclass_data, options, exc, name, make_problem):
    p = make_problem(multiclass_data, "SwHb", "linear")
    with pytest.raises(exc, match=name):
        ovn_cvx.solve(p, method="mm", **options)


def test_tol_is_a_deprecated_alias_of_decrease_tol(multiclass_data, make_problem):
    p = make_problem(multiclass_data, "SwHb", "linear")
    expected = ovn_cvx.solve(p, method="mm", finish="none", decrease_tol=1e-4)
    with pytest.warns(DeprecationWarning, match="decrease_tol"):
        result = ovn_cvx.solve(p, method="mm", finish="none", tol=1e-4)
    assert result.info["decrease_tol"] == 1e-4 and result.iterations == expected.iterations
    assert result.objective == expected.objective


def test_warm_start_of_another_problem_rejected(multiclass_data, multilabel_data, make_problem):
    p = make_problem(multiclass_data, "SwHb", "linear")
    cold = ovn_cvx.solve(p, method="mm", max_iter=5)
    for other in (make_problem(multiclass_data, "HwHb", "linear"), make_problem(multiclass_data, "SwHb", "rbf"),
                  make_problem(multilabel_data, "SwHb", "linear")):
        with pytest.raises(ValueError, match="warm_start"):
            ovn_cvx.solve(other, method="mm", warm_start=cold)


def test_kernel_coefficients_predict_new_data():
    """Prediction on new data uses κ(X_new, X_train) A: compare with the reference on held-out points."""
    X, Y = make_data("multiclass", 50, 3, 3, seed=4)
    p = Problem(X[:40], Y[:40], "SwSb", "rbf", alpha=0.1, beta=2.0, bias_penalty=0.3)
    result = ovn_cvx.solve(p, method="mm")
    ref = tight_reference(p)
    np.testing.assert_allclose(result.decision_function(X[40:]), ref.decision_function(X[40:]), atol=1e-5)


def test_polish_certifies_only_a_kkt_point_below_the_iterate(multilabel_data, make_problem):
    """docs/theory.md §9.5: from the residuals at the optimum the polish certifies it; it refuses when the candidate is
    above the iterate's objective (here: a pretend iterate better than the optimum) or when the KKT conditions
    fail (from W = 0, b = 0 the partition 'all pairs violated' is not optimal within 0 rounds)."""
    from ovn_cvx.solvers.mm.common import GramOperator
    from ovn_cvx.solvers.mm.polish import polish

    p = make_problem(multilabel_data, "SwHb", "linear")
    ref = tight_reference(p)
    r = ovn_cvx.residuals(p, ref.coef, ref.b)
    operator = GramOperator(p)
    ok = polish(p, operator, r, ref.objective + 1e-9, (1e-6,))
    assert ok.certified and ok.objective == pytest.approx(ref.objective, rel=1e-8)
    # the polish evaluates F from the residuals it has just computed: the shared evaluator's own pass agrees
    assert ok.objective == pytest.approx(ovn_cvx.objective(p, ok.coef, ok.b), rel=1e-13)
    assert ok.certificate["complementarity"] <= 1e-9 and ok.certificate["mass_spread"] <= 1e-9
    refused = polish(p, operator, r, ref.objective - 1e-3, (1e-6,))
    assert not refused.certified and refused.reason == "objective above the MM iterate"
    start = np.ones(len(p.pairs))  # residuals at W = 0, b = 0
    assert not polish(p, operator, start, np.inf, (1e-6,), max_rounds=1).certified


def test_indefinite_majorizer_block_is_an_error_not_a_step(multiclass_data, make_problem):
    """A block that Cholesky rejects (impossible for valid data: every class has a pair of positive cost) is
    reported with its class, never turned into a step."""
    from scipy.linalg import LinAlgError

    from ovn_cvx.solvers.mm.primal import PrimalStepper, PrimalSystem

    p = make_problem(multiclass_data, "SwSb", "linear")
    stepper = PrimalStepper(p)
    hessians = np.zeros((p.n_classes, stepper.d + 1, stepper.d + 1))
    hessians[1, -1, -1] = -1.0  # the bias curvature of class 1; class 0 is singular first
    with pytest.raises(LinAlgError, match="block 0 .* not positive definite"):
        PrimalSystem(stepper, hessians)


@pytest.mark.parametrize("form", ["primal", "pair"])
def test_system_fit_residuals_are_exact_under_extreme_weights(multiclass_data, form, make_problem):
    """An interior point's weights span ~1e±10 (pairs far from the margin get tiny ω): the residuals a stepper
    returns must still be those of its coefficients (the pair form once derived Qμ as t − μ/ω − Y_b b, a difference
    of two ~1e10 numbers, and lost every digit of r: objectives off by 1e-6 relative)."""
    from ovn_cvx.solvers.mm.forms import make_stepper

    p = make_problem(multiclass_data, "SwHb", "rbf", alpha=0.2)
    stepper = make_stepper(p, form)
    n = len(p.pairs)
    omega = np.where(np.arange(n) % 3 == 0, 1e10, 1e-10)
    state = stepper.system(omega).fit(np.linspace(0.5, 1.5, n) + np.where(np.arange(n) % 3 == 0, 0.0, 1e10))
    coef, b = stepper.solution(state)
    np.testing.assert_allclose(state.r, ovn_cvx.residuals(p, coef, b), rtol=0, atol=1e-9)
