"""The primal form's class blocks as stacks: the batched weighted Grams on shared rows against the per-class
symmetric products, and the stacked Cholesky factorization against the per-block :class:`Cholesky` (its solves,
its diagonal shifts, its errors naming the block)."""
import numpy as np
import pytest
from scipy.linalg import LinAlgError

from ovn_cvx.objective import regularizer
from ovn_cvx.solvers.mm.common import BlockCholesky, Cholesky, GramOperator, State
from ovn_cvx.solvers.mm.primal import PrimalStepper, PrimalSystem, shared_grams, weighted_gram

from test_mm_linear_default import default_problem

WHAT = "MM block {} of the majorizer"


def spread_weights(rng, shape, orders):
    """Positive weights spanning 2·``orders`` orders of magnitude, as an interior point's late iterations have."""
    return 10.0 ** rng.uniform(-orders, orders, size=shape)


def test_shared_grams_are_the_per_class_grams():
    """The same numbers as the per-class :func:`weighted_gram`, to the last bit, for weights spanning 16 orders of
    magnitude, zero weights and equal ones (the per-class function's own shortcut)."""
    rng = np.random.default_rng(0)
    rows = np.hstack([rng.normal(size=(300, 7)), np.ones((300, 1))])
    weights = spread_weights(rng, (4, 300), 8)
    weights[2, ::3] = 0.0  # pairs without weight
    got = shared_grams(rows, weights)
    assert got.shape == (4, 8, 8)
    np.testing.assert_array_equal(got, np.stack([weighted_gram(rows, w) for w in weights]))
    weights[1] = 3.0  # equal weights: a multiple of ΦᵀΦ, as the per-class function's shortcut
    np.testing.assert_array_equal(shared_grams(rows, weights), np.stack([weighted_gram(rows, w) for w in weights]))


@pytest.mark.parametrize("shared", [True, False])
def test_hessians_are_the_per_class_weighted_grams(shared, multiclass_data, make_problem):
    """The estimator's default problem shares its rows, a problem with pairs of other classes does not: either way
    the Hessians are the per-class weighted Grams, a ``still`` class gets the identity, and the cost Gram is the
    Hessians of the costs."""
    problem = (default_problem(150, n_features=4, n_classes=3, seed=2) if shared
               else make_problem(multiclass_data, "SwSb", "linear"))
    stepper = PrimalStepper(problem)
    assert (stepper.shared_rows is not None) == shared
    omega = spread_weights(np.random.default_rng(3), len(problem.pairs), 6)
    expected = np.stack([weighted_gram(rows, omega[s]) for rows, s in zip(stepper.rows, stepper.slices)])
    np.testing.assert_array_equal(stepper.hessians(omega), expected)
    still = np.arange(problem.n_classes) == 1
    held = stepper.hessians(omega, still)
    np.testing.assert_array_equal(held[1], np.eye(stepper.d + 1))
    np.testing.assert_array_equal(held[~still], expected[~still])
    cost = np.stack([weighted_gram(rows, problem.cost[s]) for rows, s in zip(stepper.rows, stepper.slices)])
    np.testing.assert_array_equal(stepper.cost_gram, cost)


def spd_stack(rng, K, D, orders):
    """K symmetric positive definite blocks B_kᵀ diag(w) B_k with weights spanning 2·``orders`` orders."""
    A = rng.normal(size=(K, 3 * D, D))
    w = spread_weights(rng, (K, 3 * D), orders)
    return A.transpose(0, 2, 1) @ (w[:, :, None] * A)


@pytest.mark.parametrize("orders", [0, 4])
def test_block_cholesky_solves_as_the_per_block_factors(orders):
    """The same numbers as the per-block :class:`Cholesky`, one right-hand side a block (``solve``) or one for every
    block summed over the blocks (``inverse_sum``, the coupling's columns), and each block's system solved."""
    rng = np.random.default_rng(5)
    H = spd_stack(rng, 5, 9, orders)
    stack = BlockCholesky(H.copy(), WHAT)
    assert not stack.shifted  # no block needed the per-block path
    single = [Cholesky(h.copy(), "block") for h in H]
    g = rng.normal(size=(5, 9))
    got = stack.solve(g)
    np.testing.assert_array_equal(got, np.stack([c.solve(gk) for c, gk in zip(single, g)]))
    residual = np.einsum("kij,kj->ki", H, got) - g
    assert np.abs(residual).max() <= 1e-9 * np.abs(g).max() * max(1.0, np.abs(H).max())
    columns = rng.normal(size=(9, 3))
    total = stack.inverse_sum(columns)
    np.testing.assert_array_equal(total, sum(c.solve(columns) for c in single))
    np.testing.assert_allclose(total, sum(np.linalg.solve(h, columns) for h in H), rtol=1e-6 if orders else 1e-10)


def test_block_cholesky_semidefinite_block_is_shifted_as_per_block():
    """A numerically semidefinite block (rank deficient) fails its factorization: every block then goes through
    :class:`Cholesky`, whose diagonal shift factors it, with the same solves."""
    rng = np.random.default_rng(6)
    H = spd_stack(rng, 3, 6, 0)
    H[1] = np.ones((6, 6))  # rank 1, unit diagonal: the second pivot is exactly 0
    stack = BlockCholesky(H.copy(), WHAT)
    assert stack.shifted and len(stack.factors) == 3 and stack.scale.shape == (3, 6)
    single = [Cholesky(h.copy(), "block") for h in H]
    g = rng.normal(size=(3, 6))
    np.testing.assert_array_equal(stack.solve(g), np.stack([c.solve(gk) for c, gk in zip(single, g)]))
    columns = rng.normal(size=(6, 2))
    np.testing.assert_array_equal(stack.inverse_sum(columns), sum(c.solve(columns) for c in single))


@pytest.mark.parametrize("entry, message", [
    (0.0, r"MM block 2 of the majorizer is not positive definite \(diagonal entry 4 <= 0\)"),
    (-1.0, r"MM block 2 of the majorizer is not positive definite \(diagonal entry 4 <= 0\)"),
    (np.nan, r"MM block 2 of the majorizer is not positive definite \(diagonal entry 4 <= 0\)"),
    (1e-300, None),  # just inside: a positive diagonal entry passes the test (equilibrated, the block factors)
])
def test_block_cholesky_diagonal_boundary(entry, message):
    """A zero, negative or NaN diagonal entry is the error of :class:`Cholesky` naming the block and the entry; a
    tiny positive one (1e-300) is not: the stack takes its fast path and solves as the per-block factors."""
    rng = np.random.default_rng(7)
    H = spd_stack(rng, 4, 6, 0)
    H[2, 4, :] = H[2, :, 4] = 0.0
    H[2, 4, 4] = entry
    if message is None:
        stack = BlockCholesky(H.copy(), WHAT)
        assert not stack.shifted
        g = rng.normal(size=(4, 6))
        expected = np.stack([Cholesky(h.copy(), "block").solve(gk) for h, gk in zip(H, g)])
        assert expected[2, 4] == pytest.approx(g[2, 4] / 1e-300, rel=1e-14)  # the tiny entry's own equation
        np.testing.assert_array_equal(stack.solve(g), expected)
        return
    with pytest.raises(LinAlgError, match=message):
        BlockCholesky(H.copy(), WHAT)
    with pytest.raises(LinAlgError, match=message.replace("MM block 2 of the majorizer", "block")):
        Cholesky(H[2].copy(), "block")


def test_block_cholesky_indefinite_block_is_the_per_block_error():
    """An indefinite block with a positive diagonal, which no shift factors: the error of :class:`Cholesky` for that
    block (the first one it rejects), with LAPACK's info."""
    rng = np.random.default_rng(8)
    H = spd_stack(rng, 4, 5, 0)
    H[3] = np.eye(5)
    H[3, 0, 1] = H[3, 1, 0] = 2.0  # eigenvalues −1 and 3: indefinite
    with pytest.raises(LinAlgError) as single:
        Cholesky(H[3].copy(), "MM block 3 of the majorizer")
    with pytest.raises(LinAlgError) as stacked:
        BlockCholesky(H.copy(), WHAT)
    assert str(stacked.value) == str(single.value)
    assert "MM block 3 of the majorizer is not positive definite (LAPACK info" in str(stacked.value)


def test_primal_system_coupled_solve_against_the_dense_system():
    """With a coupled coordinate (γ > 0: the biases' sum) the stacked blocks and the coupling solve give the
    minimizer of the whole quadratic: checked against the dense (K·D)×(K·D) system of the same problem."""
    problem = default_problem(120, n_features=4, n_classes=3, seed=9).replace(bias_penalty=0.7)
    stepper = PrimalStepper(problem)
    rng = np.random.default_rng(10)
    omega = spread_weights(rng, len(problem.pairs), 3)
    H = stepper.hessians(omega)
    system = PrimalSystem(stepper, H.copy(), omega)
    assert system.coupling is not None
    K, D = H.shape[:2]
    g = rng.normal(size=(K, D))
    dense = np.zeros((K * D, K * D))
    for k in range(K):
        block = H[k].copy()
        block[np.arange(D - 1), np.arange(D - 1)] += 1.0  # R = ½Σ‖w_k‖² at α = 0
        dense[k * D:(k + 1) * D, k * D:(k + 1) * D] = block
    bias = np.arange(K) * D + D - 1
    dense[np.ix_(bias, bias)] += 2.0 * 0.7  # B = γ(Σ b_k)²
    expected = np.linalg.solve(dense, g.ravel()).reshape(K, D)
    np.testing.assert_allclose(system.solve(g), expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("alpha", [0.0, 0.4])
def test_pair_block_of_one_class_is_the_general_formula(multiclass_data, make_problem, alpha):
    """Q_pq = y_p y_q P⁺_{k_p k_q} G_{i_p i_q} by hand, for the pairs of one class (the polish of a separable
    problem: P⁺ read once) and for pairs of several classes; P⁺_kk ≠ 1 at α ≠ 0."""
    p = make_problem(multiclass_data, "SwSb", "linear", alpha=alpha)
    operator = GramOperator(p)
    pairs, G, pinv = p.pairs, p.X @ p.X.T, p.coupling_pinv
    assert bool(pinv[1, 1] != 1.0) is (alpha != 0.0)
    one = np.flatnonzero(pairs.label == 1)[::2]
    mixed = np.arange(0, len(pairs), 3)
    assert np.unique(pairs.label[mixed]).size > 1
    for index in (one, mixed):
        s, k, y = pairs.sample[index], pairs.label[index], pairs.sign[index]
        expected = np.outer(y, y) * pinv[np.ix_(k, k)] * G[np.ix_(s, s)]
        np.testing.assert_allclose(operator.pair_block(index), expected, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("n_present, as_slice", [(0, False), (1, False), (22, False), (23, True), (45, True)])
def test_dual_coef_support_at_its_boundary(multiclass_data, make_problem, n_present, as_slice):
    """The rows of A = M P⁺ of the samples with a nonzero μ_p, in sample order; all samples (a slice) once more than
    half of them are present (N = 45 here: 23 samples or more; 22 is just inside the index form)."""
    p = make_problem(multiclass_data, "SwSb", "linear", alpha=0.3)
    N, pairs = p.n_samples, p.pairs
    assert N == 45
    rng = np.random.default_rng(11)
    samples = rng.permutation(N)[:n_present]
    mu = np.zeros(len(pairs))
    for i in samples:  # one or two pairs of each chosen sample
        mine = np.flatnonzero(pairs.sample == i)
        mu[rng.choice(mine, size=min(2, mine.size), replace=False)] = rng.uniform(0.1, 1.0)
    support, A = GramOperator(p).dual_coef(mu)
    M = np.zeros((N, p.n_classes))
    np.add.at(M, (pairs.sample, pairs.label), pairs.sign * mu)
    expected = M @ p.coupling_pinv
    if as_slice:
        assert support == slice(None)
        np.testing.assert_array_equal(A, expected)
    else:
        np.testing.assert_array_equal(support, np.sort(samples))
        np.testing.assert_array_equal(A, expected[np.sort(samples)])


def test_state_regularizer_is_computed_once_at_its_first_read():
    """R given as a function is called at the first read of ``reg`` and never again; a primal iterate's R is the
    objective's regularizer of its coefficients."""
    calls = []
    state = State(None, np.zeros(1), lambda: calls.append(1) or 2.5, np.zeros(1))
    assert not calls
    assert state.reg == 2.5 and state.reg == 2.5 and calls == [1]
    assert State(None, np.zeros(1), 1.25, np.zeros(1)).reg == 1.25
    problem = default_problem(90, n_features=3, n_classes=3, seed=4).replace(alpha=0.3)
    stepper = PrimalStepper(problem)
    theta = np.random.default_rng(12).normal(size=(3, stepper.d + 1))
    coef, _ = stepper.solution(stepper.state(theta))
    assert stepper.state(theta).reg == pytest.approx(regularizer(problem, coef), rel=1e-13)
