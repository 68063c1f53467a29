"""The estimator's default linear problem is K independent QPs (SwSb, α = 0, γ = 0): the MM solver's systems are
block diagonal by class. The separability rule at its boundaries, the polish's partition system class by class
against the whole system and the tight CVXPY reference, its reuse of solved class blocks, the primal system without
its coupling pass against per-class solves by hand, the row matrix all classes share against the per-class rows, and
the direct LDLᵀ solve against scipy.linalg.solve's decisions."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.linalg import LinAlgError, LinAlgWarning, solve

import ovn_cvx
from ovn_cvx.duality import project_hard_constraints
from ovn_cvx.objective import residuals
from ovn_cvx.solvers.cvxpy_solver import TIGHT_CLARABEL
from ovn_cvx.solvers.mm import forms
from ovn_cvx.solvers.mm.active_set import IN_I, IN_S, active_set_finish, partition
from ovn_cvx.solvers.mm.common import GramOperator, ldl_solve, separable
from ovn_cvx.solvers.mm.polish import DensePartition
from ovn_cvx.solvers.mm.primal import PrimalStepper, PrimalSystem

from test_mm_linear_default import default_problem


@pytest.mark.parametrize("change, expected", [
    ({}, True),
    ({"alpha": 1e-12}, False), ({"alpha": -1e-12}, False),
    ({"bias_penalty": 1e-12}, False),
    ({"variant": "SwHb"}, False), ({"variant": "HwSb"}, False), ({"variant": "HwHb"}, False),
])
def test_separable_only_without_any_coupling(change, expected):
    """α = 0 and γ = 0 exactly, soft w and soft b: any coupling, however small, ties the classes' systems."""
    problem = default_problem(60, n_features=3).replace(**change)
    assert separable(problem) is expected
    # the systems skip their coupling solve when no coordinate is coupled (e = 0): the same fact, read off e
    assert (not PrimalStepper(problem).e.any()) is expected


@pytest.fixture(scope="module")
def optimum():
    """A default problem with every class's margin set non-empty, the tight CVXPY reference's objective and its
    partition (margin set |r_p| ≤ 1e-6)."""
    problem = default_problem(150, n_features=3, n_classes=4, seed=2)
    reference = ovn_cvx.solve(problem, "cvxpy", **TIGHT_CLARABEL)
    coef, b = project_hard_constraints(problem, reference.coef, reference.b)
    sets = partition(residuals(problem, coef, b), 1e-6)
    assert all(np.any(sets[problem.pairs.label == k] == IN_S) for k in range(problem.n_classes))
    return problem, ovn_cvx.objective(problem, coef, b), sets


class Counting(DensePartition):
    """DensePartition that counts the systems it solves."""

    calls = 0

    def _solve(self, *args):
        self.calls += 1
        return super()._solve(*args)


def engine(problem, by_class, iterate_b=None):
    partition_engine = Counting(problem, GramOperator(problem), np.inf, iterate_b, None)
    partition_engine.separable = by_class
    return partition_engine


def test_class_blocks_solve_the_whole_system(optimum):
    """At the optimal partition: the same μ and b class by class as from the whole system, K solves instead of one,
    and the certified objective of the tight reference."""
    problem, reference, sets = optimum
    whole, blocks = engine(problem, False), engine(problem, True)
    expected, solution = whole.solve(sets), blocks.solve(sets)
    assert (whole.calls, blocks.calls) == (1, problem.n_classes)
    np.testing.assert_allclose(solution.mu, expected.mu, rtol=1e-9, atol=1e-9 * problem.cost.max())
    np.testing.assert_allclose(blocks.b, whole.b, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(solution.r, expected.r, atol=1e-9)
    assert active_set_finish(blocks, sets) == (1, "certified")
    assert blocks.found[2] == pytest.approx(reference, rel=1e-8)


def test_a_class_without_margin_pairs_keeps_the_iterate_bias(optimum):
    """A class whose margin pairs are all moved to I has a singular block (its bias is free): the least change from
    the iterate's b leaves that b_k, as the least change of the whole system does, and the other classes are
    untouched."""
    problem, _, sets = optimum
    sets = sets.copy()
    in_zero = (problem.pairs.label == 0) & (sets == IN_S)
    sets[in_zero] = IN_I
    iterate_b = np.array([0.37, -0.2, 0.1, 0.5])
    whole, blocks = engine(problem, False, iterate_b), engine(problem, True, iterate_b)
    expected, solution = whole.solve(sets), blocks.solve(sets)
    assert blocks.b[0] == pytest.approx(0.37, abs=1e-12)
    np.testing.assert_allclose(blocks.b, whole.b, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(solution.mu, expected.mu, rtol=1e-8, atol=1e-8 * problem.cost.max())


def test_a_round_solves_only_the_classes_whose_pairs_moved(optimum):
    """A partition differing from a solved one in one class's pairs costs one block solve, and gives what a fresh
    engine gives for it."""
    problem, _, sets = optimum
    blocks = engine(problem, True)
    blocks.solve(sets)
    moved = sets.copy()
    moved[np.flatnonzero((problem.pairs.label == 2) & (sets == IN_S))[0]] = IN_I
    before = blocks.calls
    again = blocks.solve(moved)
    assert blocks.calls - before == 1
    fresh = engine(problem, True).solve(moved)
    np.testing.assert_array_equal(again.mu, fresh.mu)
    np.testing.assert_array_equal(again.r, fresh.r)
    assert blocks.solve(sets) is not None and blocks.calls - before == 1  # the first partition: nothing to solve


def test_crossovers_of_a_solve_share_the_nonsingular_class_blocks(optimum):
    """A second crossover (another engine on the same operator) solves none of the nonsingular class blocks the
    first one solved, and gets the same numbers; a singular block (a class without margin pairs) is solved again,
    as its least change from the second crossover's own iterate b, as a fresh engine solves it."""
    problem, _, sets = optimum
    sets = sets.copy()
    sets[(problem.pairs.label == 0) & (sets == IN_S)] = IN_I  # class 0's block: singular (its bias is free)
    operator = GramOperator(problem)
    first = Counting(problem, operator, np.inf, np.array([0.37, -0.2, 0.1, 0.5]), None)
    one = first.solve(sets)
    assert first.calls == 4 and len(operator.unique_blocks) == 3 and first.b[0] == pytest.approx(0.37, abs=1e-12)
    second = Counting(problem, operator, np.inf, np.array([-0.6, 0.0, 0.0, 0.0]), None)
    two = second.solve(sets)
    assert second.calls == 1 and second.b[0] == pytest.approx(-0.6, abs=1e-12)  # class 0 alone
    np.testing.assert_array_equal(second.b[1:], first.b[1:])
    np.testing.assert_array_equal(two.mu, one.mu)
    fresh = engine(problem, True, np.array([-0.6, 0.0, 0.0, 0.0]))
    np.testing.assert_array_equal(fresh.solve(sets).mu, two.mu)
    np.testing.assert_array_equal(fresh.b, second.b)
    assert fresh.calls == 4


def test_uncoupled_primal_system_is_the_class_solves():
    """With no coupled coordinate the primal system is θ_k = (H_k + (1 − α)I)⁻¹ g_k, block by block (no coupling
    factor); checked against NumPy's solve."""
    problem = default_problem(120, n_features=5, n_classes=3, seed=5)
    stepper = PrimalStepper(problem)
    rng = np.random.default_rng(6)
    omega = rng.uniform(0.1, 5.0, len(problem.pairs))
    H = stepper.hessians(omega)
    g = rng.normal(size=(3, 6))
    system = PrimalSystem(stepper, H.copy(), omega)
    assert system.coupling is None
    D = np.eye(6)
    D[-1, -1] = 0.0  # the bias is not regularized
    expected = np.stack([np.linalg.solve(H[k] + D, g[k]) for k in range(3)])
    np.testing.assert_allclose(system.solve(g), expected, rtol=1e-10, atol=1e-12)
    coupled = PrimalStepper(problem.replace(bias_penalty=0.5))
    assert PrimalSystem(coupled, coupled.hessians(omega), omega).coupling is not None


@pytest.mark.parametrize("n_classes", [2, 6])
def test_default_problems_certified_against_the_reference(n_classes):
    """End to end through the by-class polish: certified, within the proven bound of the tight reference."""
    problem = default_problem(400, n_features=8, n_classes=n_classes, seed=7)
    assert forms.make_stepper(problem, "auto").separable
    result = ovn_cvx.solve(problem, method="mm")
    assert result.success and result.finish == "interior + polish"
    reference = ovn_cvx.solve(problem, method="cvxpy", **TIGHT_CLARABEL)
    assert result.objective - reference.objective <= result.gap_bound + 1e-9 * abs(reference.objective)
    assert reference.objective - result.objective <= 1e-7 * abs(reference.objective)


def test_shared_rows_only_when_every_class_pairs_with_every_sample():
    """One-vs-rest negatives on a full label matrix: one row matrix for all classes, and the pairs' products equal
    the per-class ones by hand; an unknown entry (0) or a sparse X leaves the per-class rows."""
    problem = default_problem(90, n_features=4, n_classes=3, seed=8)
    stepper = PrimalStepper(problem)
    assert stepper.shared_rows is not None and stepper.shared_rows.shape == (90, 5)
    pairs, rng = problem.pairs, np.random.default_rng(9)
    theta, values = rng.normal(size=(3, 5)), rng.normal(size=len(pairs))
    tilde = np.hstack([problem.X[pairs.sample], np.ones((len(pairs), 1))])
    np.testing.assert_allclose(stepper.pair_values(theta), np.einsum("pd,pd->p", tilde, theta[pairs.label]),
                               rtol=1e-12, atol=1e-12)
    expected = np.stack([tilde[pairs.label == k].T @ values[pairs.label == k] for k in range(3)])
    np.testing.assert_allclose(stepper.class_products(values), expected, rtol=1e-12, atol=1e-12)
    Y = problem.Y.copy()
    Y[5, 1] = 0  # unknown: class 1 has no pair with sample 5
    partial = PrimalStepper(problem.replace(Y=Y))
    assert partial.shared_rows is None
    assert len(partial.rows[1]) == 89
    np.testing.assert_allclose(partial.pair_values(theta)[:90], stepper.pair_values(theta)[:90], rtol=1e-12)
    assert PrimalStepper(problem.replace(X=sp.csr_matrix(problem.X))).shared_rows is None


def _symmetric_systems(seed, count):
    """Random symmetric systems: indefinite, rank-deficient, graded down to 1e-17 (around the refusal threshold),
    and the polish's saddle-point form [Q y; yᵀ 0] with Q of low rank."""
    rng = np.random.default_rng(seed)
    for trial in range(count):
        n = int(rng.integers(1, 30))
        A = rng.normal(size=(n, n))
        A = A + A.T
        if trial % 4 == 1:
            U = rng.normal(size=(n, max(1, n - 2)))
            A = U @ np.diag(rng.choice([-1.0, 1.0], U.shape[1])) @ U.T
        elif trial % 4 == 2:
            d = 10.0 ** rng.uniform(-17, 0, n)
            A *= np.sqrt(np.outer(d, d))
        elif trial % 4 == 3:
            X, y = rng.normal(size=(n, int(rng.integers(1, 6)))), rng.choice([-1.0, 1.0], n)
            A = np.zeros((n + 1, n + 1))
            A[:n, :n], A[:n, -1], A[-1, :n] = (X @ X.T) * np.outer(y, y), y, y
        yield A, rng.normal(size=A.shape[0])


def test_ldl_solve_decides_as_scipy_solve():
    """The direct LAPACK solve refuses exactly the systems that scipy.linalg.solve(assume_a="sym") finds singular or
    warns about (reciprocal condition below the machine epsilon), and solves the others to the same values; both
    kinds occur among the systems."""
    refused = 0
    for A, b in _symmetric_systems(10, 800):
        with warnings.catch_warnings():
            warnings.simplefilter("error", LinAlgWarning)
            try:
                expected = solve(A, b, assume_a="sym")
            except (LinAlgError, LinAlgWarning):
                expected = None
        x = ldl_solve(A, b)
        assert (x is None) == (expected is None)
        if expected is None:
            refused += 1
        else:
            np.testing.assert_allclose(x, expected, rtol=1e-8, atol=1e-8 * np.abs(expected).max())
    assert 100 < refused < 700
    with pytest.raises(ValueError, match="infs or NaNs"):
        ldl_solve(np.array([[1.0, np.nan], [np.nan, 1.0]]), np.ones(2))
