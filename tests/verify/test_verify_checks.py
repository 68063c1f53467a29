"""The identity checks pass on correct solutions and fail on corrupted ones."""
import dataclasses

import numpy as np
import pytest

from sklearn.metrics.pairwise import linear_kernel

from ovn_cvx import Problem, objective, solve
from ovn_cvx.formulations import build
from ovn_cvx.verify import checks
from ovn_cvx.verify.checks import (bias_limit, binary_equivalence, binary_problem, invariants, kkt_check,
                                   linear_kernel_consistency, linear_kernel_problem, on_boundary, reference_agreement)
from ovn_cvx.datasets import make_data
from ovn_cvx.labels import predict_labels
from ovn_cvx.verify.suite import BinaryCase

VARIANTS = {"SwSb": 0.3, "SwHb": -0.2, "HwSb": 0.0, "HwHb": 0.0}


def corrupt(result, coef=None, b=None, objective_value=None):
    """A copy of ``result`` with other coefficients / biases / reported objective (status stays 'optimal')."""
    coef = result.coef if coef is None else coef
    b = result.b if b is None else b
    value = objective(result.problem, coef, b) if objective_value is None else objective_value
    return dataclasses.replace(result, coef=coef, b=b, objective=value)


@pytest.fixture(scope="module")
def solutions(multiclass_data):
    X, Y = multiclass_data
    out = {}
    for variant, alpha in VARIANTS.items():
        problem = Problem(X, Y, variant, alpha=alpha, beta=1.0, bias_penalty=0.5)
        out[variant] = solve(problem, solver="CLARABEL"), solve(problem, solver="ECOS")
    return out


# --- binary equivalence (docs/theory.md §7) -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def binary_data():
    return BinaryCase("b", 60, 3, seed=21).data()


@pytest.mark.parametrize("kernel, params", [("linear", {}), ("rbf", {"gamma": 0.5})])
@pytest.mark.parametrize("beta", [0.5, 4.0])
def test_binary_equivalence_passes(binary_data, kernel, params, beta):
    X, y = binary_data
    check = binary_equivalence(X, y, beta, kernel, **params)
    assert check.passed, check
    assert check.details["bounded_sv"]  # non-separable: the factor 2 of C is visible
    assert "b_diff" in check.deviations  # a free SV exists, so b is compared
    value, tol = check.deviations["objective_vs_2svc"]
    assert value <= tol <= 1e-6


def test_binary_equivalence_fails_on_corrupted_solutions(binary_data):
    X, y = binary_data
    problem = binary_problem(X, y, 1.0)
    good = solve(problem)
    W = good.coef.copy()
    W[:, 0] += 1e-3
    W[:, 1] -= 1e-3
    assert not binary_equivalence(X, y, 1.0, result=corrupt(good, coef=W)).passed
    b = good.b + np.array([1e-3, -1e-3])
    check = binary_equivalence(X, y, 1.0, result=corrupt(good, b=b))
    assert set(check.failures) >= {"decision_diff", "b_diff"}


def test_binary_equivalence_detects_the_wrong_c_factor(binary_data):
    """A solution of the problem with C = β (i.e. OvN β' = 2β) is not SVC(C=β/2)'s."""
    X, y = binary_data
    wrong = solve(binary_problem(X, y, 2.0))
    check = binary_equivalence(X, y, 1.0, result=dataclasses.replace(wrong, problem=binary_problem(X, y, 1.0)))
    assert {"objective_vs_2svc", "w_diff"} <= set(check.failures)


def test_binary_equivalence_coarsens_the_svc_tolerance_where_libsvm_cycles():
    """30 points where libsvm cycles at tol ≤ 1e-8 (a flat dual direction, several free support vectors): the
    reference SVC is refitted 100 times coarser until it converges (1e-6 here), and the check still compares
    OvN with it at the default tolerances; at the requested 1e-6 it converges at once."""
    X, Y = make_data("multiclass", 30, 2, 3, seed=0)
    y = (Y.argmax(1) == 0).astype(int)
    check = binary_equivalence(X, y, 1.0)
    assert check.details["svc_tol"] == 1e-6 and check.passed, check
    assert binary_equivalence(X, y, 1.0, svc_tol=1e-6).details["svc_tol"] == 1e-6


def test_binary_equivalence_refuses_a_reference_svc_that_never_converges(binary_data, monkeypatch):
    """No converged SVC even at the coarsest tolerance: an error, not a comparison with an unfinished reference."""
    monkeypatch.setattr(checks, "SVC_MAX_ITER", 1)
    with pytest.raises(RuntimeError, match="did not converge in 1 iterations at tol=1e-06"):
        binary_equivalence(*binary_data, 1.0)


def test_binary_problem_rejects_more_labels():
    with pytest.raises(ValueError, match="two labels"):
        binary_problem(np.zeros((3, 2)), [0, 1, 2], 1.0)


# --- reference agreement, KKT, invariants --------------------------------------------------------------
@pytest.mark.parametrize("variant", VARIANTS)
def test_reference_agreement(solutions, variant):
    clarabel, ecos = solutions[variant]
    assert reference_agreement(ecos, clarabel).passed
    W = clarabel.coef.copy()
    W[0, 0] += 1e-2
    bad = reference_agreement(corrupt(ecos, coef=W), clarabel)
    assert {"objective_gap", "max_decision_diff"} <= set(bad.failures)
    if variant.endswith("Hb"):
        shifted = reference_agreement(corrupt(ecos, b=ecos.b + 1e-5), clarabel)
        assert "constraint_violation" in shifted.failures


@pytest.mark.parametrize("variant", VARIANTS)
def test_kkt_check(solutions, variant):
    clarabel, _ = solutions[variant]
    assert kkt_check(clarabel).passed
    W = clarabel.coef * 1.01
    assert not kkt_check(corrupt(clarabel, coef=W)).passed


@pytest.mark.parametrize("variant", VARIANTS)
def test_invariants_hold_at_the_optimum(solutions, variant):
    clarabel, ecos = solutions[variant]
    for result in (clarabel, ecos):
        check = invariants(result)
        assert check.passed, check
    problem = clarabel.problem
    assert clarabel.objective <= problem.cost.sum()
    if not problem.hard_b:
        assert clarabel.objective <= problem.bias_penalty * problem.n_classes ** 2
        assert "negative_sum_b" in invariants(clarabel).deviations


def test_invariants_fail_on_corruption(solutions):
    clarabel, _ = solutions["SwSb"]
    wrong_objective = dataclasses.replace(clarabel, objective=clarabel.objective * 1.01)
    assert invariants(wrong_objective).failures == ["reported_objective_error"]
    # Σb < 0 (and an objective above both bounds)
    bad_b = corrupt(clarabel, b=clarabel.b - 3.0)
    assert {"negative_sum_b", "above_sum_of_costs", "above_soft_bias_bound"} <= set(invariants(bad_b).failures)
    huge = corrupt(clarabel, coef=clarabel.coef * 50)
    assert "above_sum_of_costs" in invariants(huge).failures


def test_soft_bias_bound_is_attained_when_every_pattern_has_every_label():
    """docs/theory.md §3.4: with every label on every pattern, W = 0 and b = 1 is optimal, F* = γK² (HwSb)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    problem = Problem(X, np.ones((30, 4)), "HwSb", beta=1.0, bias_penalty=1.0)
    result = solve(problem)
    assert result.objective == pytest.approx(16.0, rel=1e-7)
    assert invariants(result).passed
    assert not invariants(dataclasses.replace(result, objective=16.5)).passed


# --- linear-kernel consistency (docs/theory.md §8) -----------------------------------------------------------------
@pytest.mark.parametrize("variant", VARIANTS)
def test_linear_kernel_consistency(solutions, variant):
    clarabel, _ = solutions[variant]
    kernel_problem = linear_kernel_problem(clarabel.problem)
    kernel_result = solve(kernel_problem)
    check = linear_kernel_consistency(clarabel.problem, results=(clarabel, kernel_result))
    assert check.passed, check
    A = kernel_result.coef.copy()
    A[0] += 1e-2
    bad = linear_kernel_consistency(clarabel.problem, results=(clarabel, corrupt(kernel_result, coef=A)))
    assert {"objective_diff", "W_diff"} <= set(bad.failures)


def test_linear_kernel_consistency_needs_a_linear_problem(multiclass_data):
    X, Y = multiclass_data
    with pytest.raises(ValueError, match="linear"):
        linear_kernel_consistency(Problem(X, Y, "SwHb", "rbf"))


# --- γ → ∞ (soft b → hard b) -------------------------------------------------------------------------------
def test_bias_limit_passes_and_rate_is_one_over_gamma(multiclass_data):
    X, Y = multiclass_data
    problem = Problem(X, Y, "SwSb", alpha=0.2)
    check = bias_limit(problem, (10.0, 100.0, 1000.0))
    assert check.passed, check
    gaps, sums = np.array(check.details["gaps"]), np.array(check.details["sum_b"])
    assert (gaps > 0).all() and (sums > 0).all()
    # 1/γ rate, measured independently of the certificate: γ·gap and γ·Σb settle as γ grows ten-fold
    gammas = check.details["gammas"]
    assert np.all(np.diff(gaps) < 0)
    assert abs(gammas[2] * gaps[2] / (gammas[1] * gaps[1]) - 1) < 0.02
    assert abs(gammas[2] * sums[2] / (gammas[1] * sums[1]) - 1) < 0.02
    # the limit constants are m_H²/4 and m_H/2 with m_H the CVXPY multiplier of Σb = 0 (hard b)
    hard = Problem(X, Y, "SwHb", alpha=0.2)
    formulation = build(hard)
    solve(hard, formulation=formulation)
    m_hard = float(formulation.cvx.constraints[-1].dual_value)
    assert gammas[2] * gaps[2] == pytest.approx(m_hard ** 2 / 4, rel=5e-3)
    assert 2 * gammas[2] * sums[2] == pytest.approx(m_hard, rel=5e-3)


def test_bias_limit_fails_on_corrupted_soft_solutions(multiclass_data, monkeypatch):
    X, Y = multiclass_data
    problem = Problem(X, Y, "HwSb")
    assert not bias_limit(problem, (100.0,), rate_tol=1e-9).passed  # the rate measure is live
    real_solve = checks.solve

    def biased(p, **options):  # soft-b solutions with a wrong bias: Σb no longer m/(2γ)
        result = real_solve(p, **options)
        return result if p.hard_b else corrupt(result, b=result.b + 0.01)

    monkeypatch.setattr(checks, "solve", biased)
    assert "mass_relation" in bias_limit(problem, (10.0, 100.0)).failures


def test_bias_limit_rejects_bad_penalties(multiclass_data):
    X, Y = multiclass_data
    with pytest.raises(ValueError, match="bias_penalties"):
        bias_limit(Problem(X, Y, "SwSb"), (0.0, 10.0))


# --- predictions -------------------------------------------------------------------------------------------------
def test_predict_labels_and_boundary(multilabel_data):
    X, Y, _ = multilabel_data
    problem = Problem(X, Y, "SwHb")
    F = np.array([[2.0, 0.5, 1.5, -1.0], [0.2, 0.9, 0.1, 0.0], [1.0, 0.0, 0.0, 0.0]])
    labels = predict_labels(F, multilabel=True)
    np.testing.assert_array_equal(labels, [[1, 0, 1, 0], [0, 1, 0, 0], [1, 0, 0, 0]])
    np.testing.assert_array_equal(on_boundary(problem, F), [False, False, True])


def test_boundary_is_a_top_two_gap_of_twice_tie_tol_or_a_value_tie_tol_from_the_threshold(multiclass_data,
                                                                                          multilabel_data):
    """A row is on the boundary when its top two values lie within 2·tie_tol (each may move by tie_tol) or, for a
    label matrix, some value lies within tie_tol of the threshold: at those gaps exactly it is, one ulp further it
    is not; the top two are the two largest, wherever they are. Values near 0 keep the gaps exact. A NaN row is
    not on the boundary: it counts as a decided row (a disagreement), never excused."""
    tie = 1e-6
    wider = np.nextafter(2 * tie, 1.0)
    F = np.array([[2 * tie, 0.0, -1.0], [wider, 0.0, -1.0], [-5.0, 2 * tie, 0.0], [0.0, np.nan, -1.0],
                  [1.0, -3.0, -5.0]])  # the last at the multilabel threshold 1, which a class label ignores
    multiclass = Problem(*multiclass_data)
    np.testing.assert_array_equal(on_boundary(multiclass, F, tie_tol=tie), [True, False, True, False, False])
    X, Y, _ = multilabel_data
    multilabel = Problem(X, Y)
    G = np.array([[-3.0, tie, 1.0, 2.0], [-3.0, -tie, 1.0, 2.0], [-3.0, np.nextafter(tie, 1.0), 1.0, 2.0],
                  [-3.0, -np.nextafter(tie, 1.0), 1.0, 2.0], [-3.0, np.nan, 1.0, 2.0]])
    np.testing.assert_array_equal(on_boundary(multilabel, G, tie_tol=tie, threshold=0.0),
                                  [True, True, False, False, False])


# --- derived problems keep every field (regression: label_weight was dropped) ---------------------------------
def test_derived_problems_keep_the_label_weights():
    """linear_kernel_consistency and bias_limit check the weighted problem itself: their derived problems
    (kernel κ = xᵀy; hard b) are the weighted ones, with the optimal values of independent solves of them.
    Before Problem.replace they dropped label_weight: objective diff 0.11, decision diff 2.5 on these data."""
    X, Y = make_data("multiclass", 60, 4, 3, seed=0, separation=1.0)  # overlapping: the weights matter
    weights = [1.0, 3.0, 0.5]
    problem = Problem(X, Y, "SwSb", alpha=0.2, label_weight=weights)
    kernel_problem = linear_kernel_problem(problem)
    np.testing.assert_array_equal(kernel_problem.label_weight, weights)
    check = linear_kernel_consistency(problem)
    assert check.passed, check
    direct = solve(Problem(X, Y, "SwSb", linear_kernel, alpha=0.2, label_weight=weights))
    assert check.details["kernel_objective"] == pytest.approx(direct.objective, rel=1e-7)

    limit = bias_limit(problem)
    assert limit.passed, limit
    hard = solve(Problem(X, Y, "SwHb", alpha=0.2, label_weight=weights)).objective
    unweighted = solve(Problem(X, Y, "SwHb", alpha=0.2)).objective
    assert limit.details["hard_objective"] == pytest.approx(hard, rel=1e-7)
    assert unweighted != pytest.approx(hard, rel=1e-5)  # the weights matter: the old check solved another problem


@pytest.mark.parametrize("variant", ["SwHb", "HwSb"])
def test_badly_scaled_gram_keeps_the_linear_optimum(multiclass_data, variant):
    """One feature ×1e6: the precomputed-style kernel form must keep the linear form's optimum (issue: the old
    1e-10 eigen-cutoff dropped the scale-1 directions and every solver agreed on F 25 % too high)."""
    from ovn_cvx.verify.checks import badly_scaled_gram_consistency
    from ovn_cvx.verify.comparison import HIGH_ACCURACY

    X, Y = multiclass_data
    check = badly_scaled_gram_consistency(Problem(X, Y, variant, beta=2.0),
                                          solver_options=HIGH_ACCURACY["CLARABEL"])
    assert check.passed, check
    # the check is not vacuous: dropping the small eigen-directions, as before, moves the optimum far outside it
    scaled = X * np.r_[1e6, np.ones(X.shape[1] - 1)]
    G = scaled @ scaled.T
    s, U = np.linalg.eigh(G)
    keep = s > 1e-10 * s[-1]
    truncated = (U[:, keep] * s[keep]) @ U[:, keep].T
    old = solve(Problem(truncated, Y, variant, "precomputed", beta=2.0), "cvxpy")
    assert abs(old.objective - check.details["objective"]) > 1e-3 * check.details["objective"]
