"""The dual decomposition solver (method="smo") on kernel problems: the CVXPY reference's optimum for every variant,
kernel, pair sign and α; the proven bound never behind a false success; shrinking, warm starts, the step budget,
memory without an N × N array, and option errors that name the option."""
import dataclasses
import math
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, assume, given, settings
from scipy.linalg import cho_factor
from sklearn.svm import SVC
from test_mm_soundness import adversarial_problems, assert_sound, best_reference

import ovn_cvx
from ovn_cvx import Problem
from ovn_cvx.datasets import make_data
from ovn_cvx.duality import dual_value, feasible_dual
from ovn_cvx.objective import constraint_violation
from ovn_cvx.solvers.smo import cache
from ovn_cvx.solvers.smo.cache import EXP_CHUNK, UNDERFLOW, KernelRows, negative_exp
from ovn_cvx.solvers.smo.newton import _bordered_solve, group_steps
from ovn_cvx.solvers.smo.selection import CONVERGED, run
from ovn_cvx.solvers.smo.state import State

TIGHT = 1e-9  # gap_tol of the comparisons: far inside their 1e-6


def linear_kernel(A, B):
    return A @ B.T


def make(variant, kernel, negatives, alpha, n_samples=30, seed=4, **kwargs):
    X, Y = make_data("multiclass", n_samples=n_samples, n_features=3, n_classes=3, seed=seed)
    if negatives == "rest":
        Y = np.where(Y == 1, 1.0, -1.0)
    alpha = alpha if variant.startswith("Sw") else 0.0
    if kernel == "precomputed":
        X = np.exp(-0.5 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    kernel = linear_kernel if kernel == "linear kernel" else kernel
    return Problem(X, Y, variant, kernel, alpha=alpha, beta=kwargs.pop("beta", 1.3), bias_penalty=0.4, **kwargs)


def assert_matches_reference(problem, result, reference=None):
    reference = ovn_cvx.solve(problem, "cvxpy") if reference is None else reference
    assert result.success and result.method == "smo"
    scale = max(1.0, abs(reference.objective))
    assert abs(result.objective - reference.objective) <= 1e-6 * scale
    assert result.objective == pytest.approx(ovn_cvx.objective(problem, result.coef, result.b), rel=1e-12)
    assert all(v <= 1e-8 for v in constraint_violation(problem, result.coef, result.b).values())
    assert result.relative_gap_bound <= result.gap_tol


@pytest.mark.parametrize("negatives", ["none", "rest"])
@pytest.mark.parametrize("kernel", ["rbf", "poly", "precomputed", "linear kernel"])
@pytest.mark.parametrize(("variant", "alpha"), [(v, a) for v in ovn_cvx.VARIANTS
                                                for a in ([-0.3, 0.0, 0.5] if v.startswith("Sw") else [0.0])])
def test_every_variant_reaches_the_reference_optimum(variant, kernel, negatives, alpha):
    problem = make(variant, kernel, negatives, alpha)
    result = ovn_cvx.solve(problem, "smo", gap_tol=TIGHT)
    assert_matches_reference(problem, result)


@pytest.mark.parametrize("variant", ovn_cvx.VARIANTS)
def test_multilabel_with_weights_a_known_negative_and_an_unlabelled_row(multilabel_data, make_problem, variant):
    problem = make_problem(multilabel_data, variant, "rbf")
    result = ovn_cvx.solve(problem, "smo", gap_tol=TIGHT)
    assert_matches_reference(problem, result)
    assert not result.coef[-1].any()  # the unlabelled row enters no hinge term


@pytest.mark.parametrize("beta", [0.1, 0.3])
def test_hard_biases_of_a_class_without_free_pairs_far_from_the_others(beta):
    """Glass, RBF, the paper's pairs, a small β: its fifth class (9 rows) has every pair at its bound, so its b_k is
    only bounded on one side and Σ_k b_k = 0 must be met by it alone, at ≈ −4.5 while the other classes' free pairs
    fix theirs at ≈ 0.9; a shift sought only within twice the largest bias stopped at −1.9 and spread the rest over
    every class (F 13.46 against 5.11, "inaccurate" after 622 steps)."""
    from ovn_cvx.datasets import load_glass

    X, y = load_glass(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    problem = Problem.from_labels(X, y, "HwHb", "rbf", beta=beta)
    result = ovn_cvx.solve(problem, "smo")
    assert_matches_reference(problem, result)
    assert result.b.min() < -3.0 and np.sort(result.b)[1] > 0.4  # the one class far below, the others fixed


@pytest.mark.parametrize("variant", ovn_cvx.VARIANTS)
@pytest.mark.parametrize("negatives, cache_size", [("none", 200.0), ("rest", 200.0), ("rest", 1e-3)])
def test_the_training_decision_values_kept_are_the_solutions(variant, negatives, cache_size):
    """The result's training decision values, from the loop's G M: those of its own (coef, b) by a kernel pass —
    with a cache too small for a row too (single-precision partial rows in the loop, Z rebuilt in double)."""
    problem = make(variant, "rbf", negatives, 0.3)
    result = ovn_cvx.solve(problem, "smo", cache_size=cache_size)
    expected = ovn_cvx.training_decision(problem, result.coef, result.b)
    assert result.training_decision.shape == expected.shape
    assert np.abs(result.training_decision - expected).max() <= 1e-10 * max(1.0, np.abs(expected).max())
    assert result.slim().training_decision is None
    assert dataclasses.replace(result, b=result.b + 1.0).training_decision is None  # another point: not its values
    assert ovn_cvx.solve(problem, "mm").training_decision is None  # recomputed where needed


def test_soft_bias_without_penalty_keeps_the_masses_at_zero():
    """bias_penalty = 0: b is free, its stationarity forces every class mass to 0 (no mass step)."""
    problem = make("SwSb", "rbf", "rest", 0.0).replace(bias_penalty=0.0)
    result = ovn_cvx.solve(problem, "smo", gap_tol=TIGHT)
    assert_matches_reference(problem, result)
    assert result.info["mass_steps"] == 0
    assert np.abs(result.dual.sum(axis=0)).max() <= 1e-12


def test_binary_hwhb_is_svc():
    """K = 2, HwHb: f_1 is SVC(C=β/2)'s decision function (docs/theory.md §7), an independent oracle."""
    X, Y = make_data("multiclass", n_samples=60, n_features=2, n_classes=2, seed=7)
    problem = Problem(X, Y, "HwHb", "rbf", beta=2.0, gamma=0.7)
    result = ovn_cvx.solve(problem, "smo", gap_tol=1e-12)
    svc = SVC(kernel="rbf", gamma=0.7, C=1.0, tol=1e-10).fit(X, np.where(Y[:, 0] == 1, 1, -1))
    f = result.decision_function(X)
    assert np.abs(f[:, 0] - svc.decision_function(X)).max() <= 1e-5
    assert np.abs(f[:, 0] + f[:, 1]).max() <= 1e-10


def test_sparse_data_is_never_densified():
    """Sparse X with a named kernel: rows from scikit-learn's pairwise kernels on request, the dense fit's optimum."""
    problem = make("HwHb", "rbf", "rest", 0.0)
    sparse = problem.replace(X=sp.csr_matrix(problem.X))
    dense, result = (ovn_cvx.solve(p, "smo", gap_tol=TIGHT) for p in (problem, sparse))
    assert result.success and sp.issparse(sparse.X)
    assert result.objective == pytest.approx(dense.objective, rel=1e-8)
    assert result.info["kernel_rows"] > 0  # computed in Python, one by one


def test_linear_kernel_equals_the_linear_problem():
    """A callable linear kernel (rows computed in Python on request) has the linear problem's optimum (§8)."""
    problem = make("SwHb", "linear kernel", "rest", 0.5)
    linear = ovn_cvx.solve(problem.replace(kernel="linear"), "mm", gap_tol=1e-10)
    result = ovn_cvx.solve(problem, "smo", gap_tol=1e-10)
    assert result.success and result.objective == pytest.approx(linear.objective, rel=1e-8)


@pytest.mark.parametrize("variant", ovn_cvx.VARIANTS)
def test_shrinking_on_and_off_reach_the_same_optimum(variant):
    """Every variant (soft biases with bias_penalty 0.4): the reference's optimum either way."""
    problem = make(variant, "rbf", "rest", 0.5, n_samples=120, seed=9, beta=5.0)
    on = ovn_cvx.solve(problem, "smo", gap_tol=TIGHT, shrinking=True)
    off = ovn_cvx.solve(problem, "smo", gap_tol=TIGHT, shrinking=False)
    assert problem.bias_penalty == 0.4
    assert_matches_reference(problem, on)
    assert off.success
    assert on.objective == pytest.approx(off.objective, rel=2e-9)
    assert np.abs(on.decision_function(problem.X) - off.decision_function(problem.X)).max() <= 1e-3


@pytest.mark.parametrize("variant", ovn_cvx.VARIANTS)
def test_warm_start_reaches_the_cold_optimum_in_fewer_steps(variant):
    problem = make(variant, "rbf", "rest", -0.2, n_samples=150, seed=5)
    previous = ovn_cvx.solve(problem, "smo", gap_tol=TIGHT)
    neighbour = problem.replace(beta=1.1 * problem.beta)
    cold = ovn_cvx.solve(neighbour, "smo", gap_tol=TIGHT)
    warm = ovn_cvx.solve(neighbour, "smo", gap_tol=TIGHT, warm_start=previous)
    from_array = ovn_cvx.solve(neighbour, "smo", gap_tol=TIGHT, warm_start=previous.dual)
    assert cold.success and warm.success and from_array.success
    assert warm.objective == pytest.approx(cold.objective, rel=2e-9)
    assert warm.iterations < cold.iterations
    assert from_array.iterations == warm.iterations
    same = ovn_cvx.solve(problem, "smo", warm_start=previous)  # its own optimum, at the default gap_tol
    assert same.success and same.iterations <= previous.iterations // 10


@pytest.mark.parametrize(("variant", "bias_penalty"), [("SwSb", 0.0), ("SwHb", 0.4), ("HwSb", 0.4)])
def test_warm_start_from_the_full_fit_restricted_to_a_fold(variant, bias_penalty):
    """A refit on 4/5 of the rows from the full fit's dual point restricted to them (class masses no longer equal:
    repaired) reaches the fold's own optimum, the reference's."""
    problem = make(variant, "rbf", "rest", 0.0, n_samples=100, seed=2, beta=3.0).replace(bias_penalty=bias_penalty)
    full = ovn_cvx.solve(problem, "smo", gap_tol=TIGHT)
    rows = np.random.default_rng(0).permutation(problem.n_samples)[:80]
    fold = problem.replace(X=problem.X[rows], Y=problem.Y[rows], sample_weight=problem.sample_weight[rows])
    restricted = full.dual[rows]
    assert np.ptp(restricted.sum(axis=0)) > 1e-3  # the restriction alone is not dual feasible
    warm = ovn_cvx.solve(fold, "smo", gap_tol=TIGHT, warm_start=restricted)
    assert_matches_reference(fold, warm)


def test_warm_start_from_an_infeasible_point_is_repaired():
    """Any N × K array: clipped to the box, class masses equalized, then solved to the same optimum."""
    problem = make("SwHb", "rbf", "rest", 0.0)
    rng = np.random.default_rng(0)
    warm = ovn_cvx.solve(problem, "smo", gap_tol=TIGHT, warm_start=rng.normal(scale=5.0, size=problem.Y.shape))
    assert_matches_reference(problem, warm)


@pytest.mark.parametrize(("variant", "bias_penalty"), [("SwSb", 0.0), ("SwSb", 0.4), ("SwHb", 0.4)])
def test_newton_steps_finish_at_the_reference_optimum(variant, bias_penalty):
    """P⁺ diagonal (soft w, α = 0) with the class masses fixed at 0, penalised, and free: the Newton steps on the
    free pairs are taken, and the optimum is the reference's, as without them (in more steps)."""
    problem = make(variant, "rbf", "rest", 0.0, n_samples=150, seed=5, beta=4.0).replace(bias_penalty=bias_penalty)
    result = ovn_cvx.solve(problem, "smo", gap_tol=TIGHT)
    assert result.info["newton_steps"] > 0
    assert_matches_reference(problem, result)
    without = ovn_cvx.solve(problem, "smo", gap_tol=TIGHT, newton=False)
    assert without.success and without.info["newton_steps"] == 0
    assert without.objective == pytest.approx(result.objective, rel=2e-9)
    assert result.iterations < without.iterations


def _loose_iterate(variant, bias_penalty, duplicated):
    """(problem, rows, state, D(μ)) at a loose iterate (the loop to tolerance 0.3, Z rebuilt): the start of the
    Newton step tests; ``duplicated`` repeats the first 40 samples (a singular kernel block)."""
    problem = make(variant, "rbf", "rest", 0.0, n_samples=80, seed=3, beta=4.0).replace(bias_penalty=bias_penalty)
    if duplicated:
        problem = problem.replace(X=np.vstack([problem.X[:40], problem.X[:40]]))
    rows = KernelRows(problem, 200.0, problem.n_classes + 2)
    state = State.start(problem, rows)
    assert run(state.arrays, rows.arrays, rows.diagonal, state.mass_mode, 0.3, 10**6, 0) == CONVERGED
    state.rebuild(rows)
    return problem, rows, state, dual_value(problem, feasible_dual(problem, np.abs(state.a)))


@pytest.mark.parametrize("duplicated", [False, True])
@pytest.mark.parametrize(("variant", "bias_penalty"), [("SwSb", 0.0), ("SwSb", 0.4), ("SwHb", 0.4)])
def test_a_newton_step_keeps_the_point_feasible_and_never_lowers_the_dual(variant, bias_penalty, duplicated):
    """From a loose iterate: the box holds, the class masses stay equal, D(μ) does not decrease (also with
    duplicated samples, whose kernel block is singular), and the kept Z is G M."""
    problem, rows, state, before = _loose_iterate(variant, bias_penalty, duplicated)
    taken = group_steps(state, rows, list(range(problem.n_classes)), 10**8)
    assert duplicated or taken > 0
    assert np.all(state.lower <= state.a) and np.all(state.a <= state.upper)
    masses = state.masses
    assert np.ptp(masses) <= 1e-12 * max(1.0, np.abs(state.a).sum())
    if bias_penalty == 0.0:
        assert np.abs(masses).max() <= 1e-12 * max(1.0, np.abs(state.a).sum())
    assert dual_value(problem, feasible_dual(problem, np.abs(state.a))) >= before - 1e-12 * abs(before)
    exact = problem.gram @ state.signed_dual(problem.n_samples)
    assert np.abs(state.Z - exact.T).max() <= 1e-10 * max(1.0, np.abs(exact).max())


@pytest.mark.parametrize("n_held", [0, 1, 4])
def test_the_bordered_solve_is_the_reduced_systems(n_held):
    """Solves with some pairs held, from the whole system's factor by bordering: the reduced system's solutions
    solved directly (u = H_FF⁻¹ v_F, w = H_FF⁻¹ 1), 0 on the held pairs."""
    rng = np.random.default_rng(n_held)
    A = rng.normal(size=(12, 12))
    H, v = A @ A.T + 0.1 * np.eye(12), rng.normal(size=12)
    held = np.zeros(12, dtype=bool)
    held[rng.choice(12, n_held, replace=False)] = True
    u, w = _bordered_solve(cho_factor(H), v, held)
    free = ~held
    reduced = np.linalg.solve(H[np.ix_(free, free)], np.column_stack([v[free], np.ones(free.sum())]))
    assert np.allclose(np.column_stack([u, w])[free], reduced, rtol=1e-10, atol=1e-12)
    assert np.all(u[held] == 0.0) and np.all(w[held] == 0.0)


@pytest.mark.parametrize("duplicated", [False, True])
def test_separate_class_steps_keep_the_point_feasible_and_z_exact(duplicated):
    """The mass fixed (the estimator's default): each class's Newton steps alone, from a loose iterate — the box
    holds, every class's mass stays 0, D(μ) does not decrease, Z is G M; a singular block (duplicated samples) is
    skipped, not a failure."""
    problem, rows, state, before = _loose_iterate("SwSb", 0.0, duplicated)
    taken = [group_steps(state, rows, [k], 10**8) for k in range(problem.n_classes)]
    assert (sum(taken) == 0) == duplicated
    assert np.all(state.lower <= state.a) and np.all(state.a <= state.upper)
    assert np.abs(state.masses).max() <= 1e-12 * max(1.0, np.abs(state.a).sum())
    after = dual_value(problem, feasible_dual(problem, np.abs(state.a)))
    assert after >= before - 1e-12 * abs(before) and (duplicated or after > before)
    exact = problem.gram @ state.signed_dual(problem.n_samples)
    assert np.abs(state.Z - exact.T).max() <= 1e-10 * max(1.0, np.abs(exact).max())


def test_a_rebuild_from_the_last_exact_z_is_g_m():
    """The rebuild after more steps adds the product of the change to the last exact Z: still G M on every sample
    (to round-off), computed on the columns of the samples that moved only."""
    problem = make("SwSb", "rbf", "rest", 0.0, n_samples=120, seed=4, beta=4.0)
    rows = KernelRows(problem, 1e-3, problem.n_classes + 2)  # partial single-precision rows: the loop's Z drifts
    state = State.start(problem, rows)
    for tol in (0.3, 1e-3):
        assert run(state.arrays, rows.arrays, rows.diagonal, state.mass_mode, tol, 10**6, 50) == CONVERGED
        before = None if state.exact is None else state.exact[0]
        state.rebuild(rows)
        exact = problem.gram @ state.signed_dual(problem.n_samples)
        assert np.abs(state.Z - exact.T).max() <= 1e-13 * max(1.0, np.abs(exact).max())
        assert np.array_equal(state.z, state.Z.sum(axis=0))
    moved = np.any(state.exact[0] != before, axis=1)
    assert 0 < moved.sum() < np.any(state.exact[0] != 0, axis=1).sum()  # fewer columns than the support's


def test_step_budget_gives_an_honest_answer():
    problem = make("SwHb", "rbf", "rest", 0.0, n_samples=120)
    result = ovn_cvx.solve(problem, "smo", max_iter=5)
    assert result.status == "max_iter" and not result.success and result.iterations == 5
    reference = ovn_cvx.solve(problem, "cvxpy")
    assert result.objective - reference.objective <= result.gap_bound * (1 + 1e-9)
    assert result.relative_gap_bound > result.gap_tol


def test_optimal_exactly_at_gap_tol_and_not_just_below_it():
    """The verdict's boundary: the same iterate (fixed tol, the same steps) is "optimal" when its proven bound equals
    gap_tol and "max_iter" when gap_tol is a hair smaller."""
    problem = make("SwHb", "rbf", "rest", 0.0, n_samples=120)
    first = ovn_cvx.solve(problem, "smo", tol=1e-4, gap_tol=1.0)
    bound, steps = first.relative_gap_bound, first.iterations
    assert first.success and 0 < bound < 1
    at = ovn_cvx.solve(problem, "smo", tol=1e-4, gap_tol=bound, max_iter=steps)
    below = ovn_cvx.solve(problem, "smo", tol=1e-4, gap_tol=bound * (1 - 1e-9), max_iter=steps)
    assert at.success and at.relative_gap_bound == bound
    assert below.status == "max_iter" and not below.success and below.relative_gap_bound == bound


def test_a_tiny_cache_gives_the_same_answer():
    problem = make("SwSb", "rbf", "rest", 0.5, n_samples=120)
    small = ovn_cvx.solve(problem, "smo", gap_tol=TIGHT, cache_size=1e-4)  # K + 2 rows
    large = ovn_cvx.solve(problem, "smo", gap_tol=TIGHT)
    assert small.info["cache_rows"] == problem.n_classes + 2 and small.info["kernel_rows"] > problem.n_samples
    assert small.objective == pytest.approx(large.objective, rel=2e-9)


#: 52 KB of rows: under the 180 KB of every row of N = 150 in double precision (single precision, partial rows)
SMALL_CACHE = 0.05


@pytest.mark.parametrize("shrinking", [True, False])
@pytest.mark.parametrize(("variant", "kernel", "bias_penalty"), [
    ("SwSb", "rbf", 0.0), ("SwSb", "rbf", 0.4), ("SwHb", "rbf", 0.4), ("SwSb", "poly", 0.0),
    ("SwHb", "linear kernel", 0.4)])
def test_single_precision_partial_rows_reach_the_reference_optimum(variant, kernel, bias_penalty, shrinking):
    """A cache too small for every row in double precision keeps the rows in single precision, computed only where
    the steps read them (separate classes, SwSb with bias_penalty 0: the moved class's active samples; else every
    active sample; a callable kernel: whole rows from Python): the reference's certified optimum to TIGHT, as with a
    cache holding every row, shrinking on or off."""
    problem = make(variant, kernel, "rest", 0.0, n_samples=150, seed=5, beta=4.0).replace(bias_penalty=bias_penalty)
    rows = KernelRows(problem, SMALL_CACHE, problem.n_classes + 2)
    assert rows.partial and rows.rows.dtype == np.float32 and problem.n_classes + 2 < rows.capacity < 150
    small = ovn_cvx.solve(problem, "smo", gap_tol=TIGHT, cache_size=SMALL_CACHE, shrinking=shrinking)
    full = ovn_cvx.solve(problem, "smo", gap_tol=TIGHT, shrinking=shrinking)
    assert small.info["cache_rows"] == rows.capacity and full.info["cache_rows"] == 150
    assert_matches_reference(problem, small)
    assert small.objective == pytest.approx(full.objective, rel=2e-9)


def test_a_cache_holding_every_row_keeps_them_whole_in_double_precision():
    """At exactly N² doubles the rows are whole and in double precision (the exact products read them); a byte less
    and they are partial, in single precision; a precomputed Gram matrix is read directly (no cache)."""
    problem = make("SwSb", "rbf", "rest", 0.0, n_samples=150)
    exact = 8 * 150 * 150 / 2**20
    whole, partial = KernelRows(problem, exact, 5), KernelRows(problem, exact - 2**-20, 5)
    assert not whole.partial and whole.rows.dtype == np.float64 and whole.capacity == 150
    assert partial.partial and partial.rows.dtype == np.float32 and partial.capacity == 150
    gram = KernelRows(make("SwSb", "precomputed", "rest", 0.0, n_samples=150), 1e-4, 5)
    assert gram.capacity == 0 and not gram.partial


def test_negative_exp_is_numpy_exp_to_an_ulp():
    """The vectorized exponential of the Gaussian kernel: within 1 ulp of np.exp on [−700, 0] (1 exactly at 0), and a
    chunk holding a value below UNDERFLOW (where 2^k would be subnormal) is np.exp's exactly, just inside not."""
    rng = np.random.default_rng(0)
    values = np.concatenate([[0.0, -0.0, -5e-324, -1e-17], -rng.random(5000) * 3, -rng.random(5000) * 700,
                             -np.abs(rng.normal(size=5000)) * 1e-8])
    result = values.copy()
    negative_exp(result)
    assert np.all(np.abs(result - np.exp(values)) <= np.spacing(np.exp(values)))
    assert np.all(result[:4] == 1.0)
    for edge, by_numpy in [(np.nextafter(UNDERFLOW, -np.inf), True), (-745.2, True), (-1e300, True),
                           (UNDERFLOW, False)]:
        chunk = -rng.random(EXP_CHUNK) * 3  # about 4% of these differ from np.exp by an ulp (measured)
        chunk[5] = edge
        result = chunk.copy()
        negative_exp(result)
        assert np.all(np.abs(result - np.exp(chunk)) <= np.spacing(np.exp(chunk)))
        assert np.array_equal(result, np.exp(chunk)) == by_numpy


@pytest.mark.parametrize("offset", [0.0, 1e3, 1e6])
def test_gaussian_blocks_are_accurate_for_every_pair(offset):
    """The exact products' Gaussian entries (one matrix product after a shift, then the expansion's risky pairs
    again as direct differences of the original points): within the expansion's round-off of exp(−γ Σ (x − y)²)
    summed directly (as :func:`ovn_cvx.kernels.kernel_matrix`), exactly 1 on duplicated rows, and the same on the
    columns prepared once (:meth:`KernelRows.columns`) — with points far from the origin, some far from the others,
    and pairs far closer than their norms."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(120, 6)) + offset
    X[7], X[30] = X[3], X[3] + 1e-7  # a duplicate and a near-duplicate
    X[100:] *= 1e4  # far from the rest
    problem = Problem.from_labels(X, np.arange(120) % 3, kernel="rbf", gamma=0.2)
    rows = KernelRows(problem, 1e-6, min_rows=1)
    every = np.arange(120)
    block = rows.block(every, every)
    direct = np.exp(-0.2 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=-1))
    # the expansion's round-off, about γ·M·eps·(‖a‖² + ‖b‖²) relative (15 ulps here, as kernel_matrix's)
    assert np.all(np.abs(block - direct) <= 32 * np.spacing(direct))
    assert block[3, 7] == 1.0 and block[7, 3] == 1.0 and np.all(np.diag(block) == 1.0)
    assert 0.0 < 1.0 - block[3, 30] < 1e-13
    cols = every[::2]  # columns prepared once, shifted by their own mean: as accurate
    prepared, expected = rows.block(every[5:40], cols, rows.columns(cols)), direct[5:40][:, cols]
    assert np.all(np.abs(prepared - expected) <= 32 * np.spacing(expected))


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(adversarial_problems())
def test_no_false_success_on_adversarial_problems(problem):
    """The generator of the MM soundness tests (columns of scale 1e±6, α near its ends, β up to 1e6), as the
    precomputed linear Gram X Xᵀ: the same optimum as the linear problem, whose references are the tightest.
    A Gram with eigenvalues from 1e12 down to round-off is where coordinate steps crawl (measured: 9 of 60 examples
    not done after 10⁵ steps): the step budget keeps the test short, the answer must be honest either way."""
    kernel = problem.replace(X=problem.X @ problem.X.T, kernel="precomputed")
    result = ovn_cvx.solve(kernel, "smo", max_iter=20000)
    assert np.isfinite(result.gap_bound)
    reference = best_reference(problem, required=False)
    assume(reference is not None)
    assert_sound(result, reference)


#: a cache smaller than one row of the adversarial problems (N ≤ 14): single-precision rows, computed only where the
#: steps read them, K + 2 of them
ROW_OF_NOTHING = 1e-6


def check_gaussian_sound(problem, cache_size):
    """The problem with the Gaussian kernel (γ = "scale": the columns of scale 1e6 dominate it, the others are
    round-off beside them), its rows computed in the compiled loop, whole in double precision or, under a cache
    smaller than one row, partial and in single precision: the bound holds against the best reference, for the
    reported objective and for the answer's own, and a success is within it."""
    kernel = problem.replace(kernel="rbf")
    assert KernelRows(kernel, cache_size, kernel.n_classes + 2).partial == (cache_size == ROW_OF_NOTHING)
    result = ovn_cvx.solve(kernel, "smo", max_iter=20000, cache_size=cache_size)
    assert np.isfinite(result.gap_bound)
    reference = best_reference(kernel, required=False)
    assume(reference is not None)
    assert_sound(result, reference)
    # the bound holds for the answer's own objective too, evaluated on the Gram matrix, not on single-precision rows
    # (the two evaluations differ by round-off that α near its ends amplifies: measured 9e-9 at α = 1 − 1e-8)
    own = ovn_cvx.objective(kernel, result.coef, result.b)
    assert own - reference <= result.gap_bound + 1e-9 * max(1.0, abs(own))
    assert not result.success or own - reference <= 1e-6 * max(1.0, abs(own))


@pytest.mark.parametrize("cache_size", [200.0, ROW_OF_NOTHING], ids=["whole-rows", "partial-rows"])
@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(adversarial_problems())
def test_no_false_success_with_a_gaussian_kernel_on_adversarial_problems(cache_size, problem):
    check_gaussian_sound(problem, cache_size)


@pytest.mark.slow
@pytest.mark.parametrize("cache_size", [200.0, ROW_OF_NOTHING], ids=["whole-rows", "partial-rows"])
@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(adversarial_problems())
def test_no_false_success_with_a_gaussian_kernel_on_many_adversarial_problems(cache_size, problem):
    check_gaussian_sound(problem, cache_size)


def test_no_n_by_n_array_is_allocated():
    """An RBF fit at N = 3 000 (its Gram: 72 MB) under a 5 MB row cache peaks far below N²."""
    X, Y = make_data("multiclass", n_samples=3000, n_features=5, n_classes=4, seed=1)
    problem = Problem(X, Y, "SwHb", "rbf", beta=0.5)
    tracemalloc.start()
    try:
        result = ovn_cvx.solve(problem, "smo", cache_size=5, gap_tol=1e-4)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.success
    assert peak < 8 * 3000 * 3000 / 2
    assert "gram" not in problem.__dict__


def test_the_newton_system_stays_within_the_cache_budget():
    """The Newton system goes beside the cached rows when both fit in ``cache_size``, else into the rows' own memory
    (the cached rows dropped); a fit with Newton steps under a 5 MB cache peaks below the cache plus one block of
    the exact products (8 MiB) plus O(N·K), with the optimum of a fit whose cache holds everything."""
    X, Y = make_data("multiclass", n_samples=3000, n_features=5, n_classes=4, seed=1)
    Y = np.where(Y == 1, 1.0, -1.0)
    problem = Problem(X, Y, "SwSb", "rbf", beta=4.0, bias_penalty=0.0)
    rows = KernelRows(problem, 5.0, problem.n_classes + 2)
    beside = int(rows.budget - rows.rows.nbytes) // 8
    assert rows.workspace_capacity == rows.rows.nbytes // 8 > beside
    rows.prefetch(np.arange(3))
    small = rows.workspaces([3, 2])
    assert [a.shape for a in small] == [(3, 3), (2, 2)] and not np.shares_memory(small[0], rows.rows)
    assert rows.slot_of[2] >= 0 and not np.shares_memory(small[0], small[1])
    n = math.isqrt(beside) + 1
    large = rows.workspaces([n, 5])
    assert [a.shape for a in large] == [(n, n), (5, 5)] and np.all(rows.slot_of < 0)
    assert np.shares_memory(large[0], rows.rows) and not np.shares_memory(large[0], large[1])
    ovn_cvx.solve(Problem(X[:100], Y[:100], "SwSb", "rbf"), "smo", cache_size=0.05)  # the compiled code loaded
    tracemalloc.start()
    try:
        result = ovn_cvx.solve(problem, "smo", cache_size=5)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.success and result.info["newton_steps"] > 0
    assert peak <= 5 * 2**20 + 8 * cache.BLOCK_ENTRIES + 64 * 8 * 3000 * 4  # 15.4 MB (measured; 22.8 MB before)
    whole = ovn_cvx.solve(problem, "smo", cache_size=100)
    assert result.objective == pytest.approx(whole.objective, rel=2e-6)


@pytest.mark.parametrize(("option", "value", "error"), [
    ("cache_size", 0, ValueError), ("cache_size", -1.0, ValueError), ("tol", 0.0, ValueError),
    ("gap_tol", float("nan"), ValueError), ("max_iter", 0, ValueError), ("max_iter", 2.5, TypeError),
    ("shrinking", "yes", TypeError), ("warm_start", np.zeros((2, 2)), ValueError),
    ("warm_start", np.full((30, 3), np.nan), ValueError), ("colour", 1, TypeError)])
def test_bad_options_are_named(option, value, error):
    problem = make("SwHb", "rbf", "none", 0.0)
    with pytest.raises(error, match=option if option != "colour" else "colour"):
        ovn_cvx.solve(problem, "smo", **{option: value})


def test_warm_start_from_any_method_with_a_dual_point_and_named_without_one():
    """Every result carries the dual point behind its proven bound (the reference's too): a warm start from it
    reaches the same optimum; a result without one is named."""
    problem = make("SwHb", "rbf", "none", 0.0)
    reference = ovn_cvx.solve(problem, "cvxpy")
    warm = ovn_cvx.solve(problem, "smo", warm_start=reference)
    assert warm.success and warm.objective == pytest.approx(reference.objective, rel=1e-6)
    with pytest.raises(ValueError, match="warm_start"):
        ovn_cvx.solve(problem, "smo", warm_start=dataclasses.replace(reference, dual=None))


def test_newton_steps_leave_the_next_rebuild_only_the_columns_the_pair_steps_move():
    """After the Newton steps Z is rebuilt from M and that M recorded, so the next rebuild evaluates no kernel column
    the Newton steps moved (it used to evaluate them all a second time)."""
    problem, rows, state, _ = _loose_iterate("SwSb", 0.0, False)
    assert sum(group_steps(state, rows, [k], 10**8) for k in range(problem.n_classes)) > 0
    np.testing.assert_array_equal(state.exact[0], state.signed_dual(problem.n_samples))
