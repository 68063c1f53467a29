"""The estimator's default linear problem (SwSb, one-vs-rest negatives, free biases: K independent binary SVMs) in
the fast solver: the form "auto" takes for dense data with many pairs per feature, the matrix-free retry of a
stalled interior point, the MM phase only where the free parameters are many, and the interior point's step
length and complementarity, each against an independent reference."""
import dataclasses

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.preprocessing import StandardScaler

import ovn_cvx
from ovn_cvx import Problem
from ovn_cvx.solvers.cvxpy_solver import TIGHT_CLARABEL
from ovn_cvx.solvers.mm import finish, forms
from ovn_cvx.solvers.mm.interior import Direction, InteriorPoint, PrimalDualPoint
from ovn_cvx.testing import assert_matches_reference


def default_problem(n_samples, n_features=2, n_classes=3, seed=0):
    """What ``OvNClassifier(negative_balance=0)`` solves on class labels: SwSb, every non-member a negative,
    bias_penalty 0, β = 16/κ₀ (the estimator's default also balances each class's negatives)."""
    X, y = make_classification(n_samples=n_samples, n_features=n_features, n_informative=n_features, n_redundant=0,
                               n_classes=n_classes, n_clusters_per_class=1, flip_y=0.05, random_state=seed)
    X = StandardScaler().fit_transform(X)
    Y = 2.0 * (y[:, None] == np.arange(n_classes)) - 1.0
    return Problem(X, Y, "SwSb", beta=16.0 / float(np.mean(np.sum(X * X, axis=1))), bias_penalty=0.0)


@pytest.fixture(scope="module")
def many_pairs_per_feature():
    """12 000 pairs on 2 features: 4 000 pairs per parameter of a class block, where "auto" once went matrix-free
    (from 4 000 pairs per feature, n ≥ 4 000·(M + 1))."""
    problem = default_problem(4000)
    assert len(problem.pairs) >= 4000 * (problem.n_features + 1)
    return problem


@pytest.fixture(scope="module")
def reference(many_pairs_per_feature):
    ref = ovn_cvx.solve(many_pairs_per_feature, method="cvxpy", **TIGHT_CLARABEL)
    assert ref.status == "optimal"
    return ref


def test_auto_keeps_dense_data_with_many_pairs_per_feature_in_primal_form(many_pairs_per_feature, reference):
    problem = many_pairs_per_feature
    assert not forms.out_of_reach(problem)
    result = ovn_cvx.solve(problem, method="mm")
    assert result.success and result.form == "primal"
    assert result.relative_gap_bound <= result.gap_tol
    assert result.objective - reference.objective <= result.gap_bound + 1e-9 * abs(reference.objective)
    assert_matches_reference(result, reference=reference, ftol=None)


def test_auto_solves_a_stalled_interior_point_again_matrix_free(many_pairs_per_feature, reference, monkeypatch):
    """An interior point stopped short of gap_tol ("inaccurate"): the matrix-free form solves it again, the answer
    with the smaller proven bound is kept and the first attempt recorded."""
    monkeypatch.setattr(finish, "INTERIOR_MAX_ITER", 1)
    stalled = ovn_cvx.solve(many_pairs_per_feature, method="mm", form="primal")
    assert stalled.status == "inaccurate" and stalled.form == "primal"
    result = ovn_cvx.solve(many_pairs_per_feature, method="mm")
    assert result.form == "matrix-free" and result.success
    attempt = result.info["primal_attempt"]
    assert attempt["relative_gap_bound"] == pytest.approx(stalled.relative_gap_bound)
    assert attempt["relative_gap_bound"] > result.gap_tol
    assert result.objective - reference.objective <= result.gap_bound + 1e-9 * abs(reference.objective)


@pytest.mark.parametrize("status, finish_option, kernel, retried", [
    ("inaccurate", "auto", "linear", True),
    ("inaccurate", "interior", "linear", True),
    ("max_iter", "auto", "linear", False),  # the user's iteration limit, not a stall
    ("optimal", "auto", "linear", False),
    ("inaccurate", "none", "linear", False),  # the paper's MM is asked for: its answer stands
    ("inaccurate", "polish", "linear", False),
    ("inaccurate", "auto", "rbf", False),  # no matrix-free form for kernels
])
def test_matrix_free_retry_rule(multiclass_data, make_problem, status, finish_option, kernel, retried):
    problem = make_problem(multiclass_data, "SwSb", kernel)
    result = dataclasses.replace(ovn_cvx.solve(problem, method="mm"), status=status)
    assert forms.retry_matrix_free(problem, result, finish_option) is retried
    assert not forms.retry_matrix_free(problem, dataclasses.replace(result, form="matrix-free"), finish_option)


def test_default_problem_takes_the_interior_point_alone(many_pairs_per_feature):
    """Few free parameters (K(d + 1) = 9) against 12 000 pairs: no MM phase before the interior point."""
    result = ovn_cvx.solve(many_pairs_per_feature, method="mm")
    assert result.finish.startswith("interior") and result.info["mm_iterations"] == 0


@pytest.mark.parametrize("n_features, n_samples, expected", [
    (199, 1100, False),  # K(d + 1) = 1 000 free parameters: not more than MM_FIRST_FREE
    (200, 1005, True),   # 1 005 free parameters, 5 025 pairs = 5 per parameter
    (200, 1004, False),  # 5 020 pairs: just under 5 per parameter
])
def test_mm_phase_first_only_with_many_free_parameters_and_pairs(n_features, n_samples, expected):
    X = np.random.default_rng(0).normal(size=(n_samples, n_features))
    Y = 2.0 * (np.arange(n_samples)[:, None] % 5 == np.arange(5)) - 1.0
    problem = Problem(X, Y, "SwSb", bias_penalty=0.0)
    assert len(problem.pairs) == 5 * n_samples
    assert forms.mm_first(problem, forms.make_stepper(problem, "primal")) is expected


def _point(s, xi, u, nu):
    return PrimalDualPoint(None, *(np.asarray(v, dtype=float) for v in (xi, s, u, nu)))


def _direction(ds, dxi, du, dnu):
    return Direction(None, *(np.asarray(v, dtype=float) for v in (dxi, ds, du, dnu)))


def _interior_point(separable: bool) -> InteriorPoint:
    """An interior point of a 3-class problem: one block of pairs per class (separable) or one block in all."""
    problem = default_problem(30, n_features=2, n_classes=3, seed=6)
    if not separable:
        problem = problem.replace(variant="SwHb")
    ip = InteriorPoint(problem, forms.make_stepper(problem, "primal"))
    assert ip.sizes.size == (3 if separable else 1) and ip.sizes.sum() == len(problem.pairs) == 90
    return ip


@pytest.mark.parametrize("separable", [False, True])
def test_step_length_against_the_masked_minimum(separable):
    ip = _interior_point(separable)
    rng = np.random.default_rng(5)
    x = [rng.uniform(0.1, 2.0, 90) for _ in range(4)]
    dx = [rng.normal(size=90) for _ in range(4)]
    got = ip.step_length(_point(*x), _direction(*dx))
    assert got.shape == ip.sizes.shape
    for t, block in zip(got, np.split(np.arange(90), ip.starts[1:])):
        expected = min(1.0, min(np.min(-a[block][b[block] < 0] / b[block][b[block] < 0]) for a, b in zip(x, dx)))
        assert t == pytest.approx(expected, rel=2 * np.finfo(float).eps, abs=0.0)  # 1/(−dx/x): two roundings


@pytest.mark.parametrize("scale, expected", [
    (1.0, 1.0),           # the boundary exactly at t = 1
    (1.0 - 1e-12, 1.0),   # just short of it: the full step
    (1.0 + 1e-12, 1.0 / (1.0 + 1e-12)),  # just beyond: the step stops at the boundary
    (0.0, 1.0),           # nothing falls
])
def test_step_length_at_the_boundary(scale, expected):
    ip = _interior_point(False)
    x, dx = np.ones(90), np.ones(90)
    dx[7] = -scale
    t = ip.step_length(_point(x, x, x, x), _direction(dx, dx, dx, dx))
    assert t[0] == pytest.approx(expected, rel=1e-15, abs=0.0)


def test_step_length_with_an_entry_at_zero():
    """Round-off can leave an entry at exactly 0: falling, no step; not falling, it does not limit the step; each
    block on its own."""
    ip = _interior_point(True)
    x, dx = np.ones(90), np.full(90, -0.5)
    x[[3, 40]] = 0.0
    dx[40] = 0.0
    t = ip.step_length(_point(x, x, x, x), _direction(dx, dx, dx, dx))
    assert list(t) == [0.0, 1.0, 1.0]


def test_step_length_passes_over_entries_that_do_not_limit_it():
    """A block whose entries all sit at zero without moving (0/0) takes the full step; a NaN entry of a direction
    does not fall, so it does not limit the step either."""
    ip = _interior_point(True)
    x, dx = np.ones(90), np.full(90, -0.25)
    x[:30], dx[:30] = 0.0, 0.0
    dx[45] = np.nan
    t = ip.step_length(_point(x, x, x, x), _direction(dx, dx, dx, dx))
    assert list(t) == [1.0, 1.0, 1.0]
    dx[60] = -2.0
    assert list(ip.step_length(_point(x, x, x, x), _direction(dx, dx, dx, dx))) == [1.0, 1.0, 0.5]


def _eliminated_direction(ip, system, p, weight, target, affine):
    """The Newton direction by the elimination as docs/theory.md §9.8 writes it, term by term."""
    r_xi, r_s = ip.c - p.u - p.nu, p.xi - p.theta.r - p.s
    r_su, r_xn = p.s * p.u - target, p.xi * p.nu - target
    if affine is not None:
        r_su, r_xn = r_su + affine.s * affine.u, r_xn + affine.xi * affine.nu
    t = r_xi + r_xn / p.xi
    v = t * weight * p.xi / p.nu - weight * (r_s + r_su / p.u)
    theta = system.fit(1.0 - p.theta.r + (p.u + v) / weight)
    da = p.theta.r - theta.r
    du = v - weight * da
    dxi = (-r_s - da - r_su / p.u - t * p.s / p.u) * weight * p.xi / p.nu
    return theta, dxi, (-r_su - p.s * du) / p.u, du, (-r_xn - p.nu * dxi) / p.xi


@pytest.mark.parametrize("separable", [False, True])
def test_newton_direction_solves_the_newton_equations(separable):
    """The predictor, the corrector (per-pair target, second-order term) and the plain centring direction from a
    random interior point: the linearized complementarity, dual and primal equations hold, and every vector
    agrees with the elimination written term by term."""
    ip = _interior_point(separable)
    rng = np.random.default_rng(11)
    xi, s, u = (rng.uniform(0.2, 2.0, 90) for _ in range(3))
    u = u * ip.c / 2.5
    point = PrimalDualPoint(ip.stepper.initial(), xi, s, u, ip.c - u + rng.uniform(0.0, 0.1, 90))
    weight = ip.weights(point)
    assert weight == pytest.approx(1.0 / (s / u + xi / point.nu), rel=1e-14)
    system = ip.stepper.system(weight)
    affine = ip.direction(system, point, 0.0)
    target = rng.uniform(0.01, 0.1, 90)
    for d, tau, a in ((affine, 0.0, None), (ip.direction(system, point, target, affine), target, affine),
                      (ip.direction(system, point, target), target, None)):
        r_su, r_xn = s * u - tau, xi * point.nu - tau
        if a is not None:
            r_su, r_xn = r_su + a.s * a.u, r_xn + a.xi * a.nu
        assert u * d.s + s * d.u == pytest.approx(-r_su, rel=1e-10, abs=1e-12)
        assert point.nu * d.xi + xi * d.nu == pytest.approx(-r_xn, rel=1e-10, abs=1e-12)
        assert d.u + d.nu == pytest.approx(ip.c - u - point.nu, rel=1e-10, abs=1e-12)
        da = point.theta.r - d.theta.r
        assert d.s - d.xi - da == pytest.approx(xi - point.theta.r - s, rel=1e-10, abs=1e-12)
        theta, *vectors = _eliminated_direction(ip, system, point, weight, tau, a)
        assert d.theta.r == pytest.approx(theta.r, rel=1e-10, abs=1e-12)
        for got, expected in zip((d.xi, d.s, d.u, d.nu), vectors):
            assert got == pytest.approx(expected, rel=1e-9, abs=1e-11)


@pytest.mark.parametrize("separable", [False, True])
@pytest.mark.parametrize("t", [0.0, 0.3, 1.0])
def test_complementarity_after_a_step_against_the_trial_point(separable, t):
    ip = _interior_point(separable)
    rng = np.random.default_rng(7)
    x = [rng.uniform(0.1, 2.0, 90) for _ in range(4)]
    dx = [rng.normal(size=90) for _ in range(4)]
    lengths = np.full(ip.sizes.size, t)
    trial = _point(*(a + t * b for a, b in zip(x, dx)))
    products = trial.s * trial.u + trial.xi * trial.nu
    expected = [products[block].sum() / (2 * block.size) for block in np.split(np.arange(90), ip.starts[1:])]
    assert ip.barrier_after(_point(*x), _direction(*dx), lengths) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("n_classes", [3, 5])
def test_separable_default_problem_steps_each_class_on_its_own(n_classes):
    """The default problem's classes are independent QPs: one block each, and the answer certified against the
    tight CVXPY reference; a coupled problem (hard b) keeps one block."""
    problem = default_problem(600, n_features=4, n_classes=n_classes, seed=1)
    stepper = forms.make_stepper(problem, "primal")
    assert stepper.separable
    assert InteriorPoint(problem, stepper).sizes.size == n_classes
    result = ovn_cvx.solve(problem, method="mm", finish="interior")
    assert result.success and result.relative_gap_bound <= result.gap_tol
    reference = ovn_cvx.solve(problem, method="cvxpy", **TIGHT_CLARABEL)
    assert result.objective - reference.objective <= result.gap_bound + 1e-9 * abs(reference.objective)
    assert_matches_reference(result, reference=reference, ftol=None)
    coupled = problem.replace(variant="SwHb")
    assert not forms.make_stepper(coupled, "primal").separable
    assert InteriorPoint(coupled, forms.make_stepper(coupled, "primal")).sizes.size == 1


@pytest.mark.parametrize("change", [{"alpha": 0.3}, {"bias_penalty": 0.5}, {"variant": "HwSb"}])
def test_coupled_problems_are_not_separable(change):
    problem = default_problem(200, n_features=3).replace(**change)
    assert not forms.make_stepper(problem, "primal").separable



@pytest.mark.parametrize("n_features", [4, 20])  # the batched stepper (small blocks) and the per-class one
def test_converged_classes_skip_their_weighted_products(n_features):
    """The classes marked still get the identity; the others the weighted Gram Σ ω_p φ̃_p φ̃_pᵀ, as computed by hand."""
    problem = default_problem(300, n_features=n_features, n_classes=3, seed=3)
    stepper = forms.make_stepper(problem, "primal")
    omega = np.random.default_rng(4).uniform(0.1, 10.0, len(problem.pairs))
    still = np.array([False, True, False])
    H = stepper.hessians(omega, still)
    # the stepper's own system (batched or per class) forwards ``still``: that class's block is the identity plus
    # the regularizer's diagonal
    g = np.random.default_rng(5).normal(size=(3, n_features + 1))
    identity = np.eye(n_features + 1)
    identity[stepper.diag, stepper.diag] += stepper.centred
    np.testing.assert_allclose(stepper.system(omega, still=still).solve(g)[1], np.linalg.solve(identity, g[1]),
                               rtol=1e-12)
    pairs, D = problem.pairs, n_features + 1
    for k in range(3):
        in_k = pairs.label == k
        rows = np.hstack([problem.X[pairs.sample[in_k]], np.ones((in_k.sum(), 1))])
        expected = np.eye(D) if still[k] else rows.T @ (omega[in_k, None] * rows)
        np.testing.assert_allclose(H[k], expected, rtol=1e-12, atol=1e-12)
