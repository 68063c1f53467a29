"""The per-fit overhead cuts of the fast solver (docs/theory.md §9.7, §9.8) keep every guarantee: the batched primal
system solves the structured system of the per-class one, and the early crossover returns only answers whose
proven bound is within gap_tol, checked against a tight CVXPY reference."""
import numpy as np
import pytest

import ovn_cvx
from ovn_cvx import Problem
from ovn_cvx.duality import project_hard_constraints
from ovn_cvx.solvers.mm.forms import make_stepper
from ovn_cvx.solvers.mm.batched import BatchedPrimalStepper, BatchedSystem, batchable
from ovn_cvx.solvers.mm.primal import PrimalStepper

TIGHT = {"solver": "CLARABEL", "tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12, "max_iter": 500}


def reference_objective(problem):
    ref = ovn_cvx.solve(problem, "cvxpy", **TIGHT)
    assert ref.has_solution
    return ovn_cvx.objective(problem, *project_hard_constraints(problem, ref.coef, ref.b))


@pytest.mark.parametrize("variant", ovn_cvx.VARIANTS)
def test_batched_system_solves_the_per_class_system(data, variant, make_problem):
    """Same fit as the per-class Cholesky blocks, to round-off amplified by the blocks' condition: weights spanning
    8 orders of magnitude agree to 1e-9, 24 orders (an interior point's last iterations) to 1e-5, where two
    backward-stable solves of such blocks differ anyway."""
    p = make_problem(data, variant, "linear")
    assert batchable(p, p.X) and isinstance(make_stepper(p, "auto"), BatchedPrimalStepper)
    batched, plain = BatchedPrimalStepper(p), PrimalStepper(p)
    rng = np.random.default_rng(1)
    target = 1.0 + rng.normal(size=len(p.pairs))
    for spread, tol in ((0.0, 1e-12), (4.0, 1e-9), (12.0, 1e-5)):
        omega = p.cost * 10.0 ** rng.uniform(-spread, spread, size=len(p.pairs))
        system = batched.system(omega)
        assert isinstance(system, BatchedSystem)
        fit, expected = system.fit(target), plain.system(omega).fit(target)
        theta, theta0 = fit.params[0], expected.params[0]
        assert np.abs(theta - theta0).max() <= tol * max(1.0, np.abs(theta0).max())
        assert np.abs(fit.r - expected.r).max() <= tol * max(1.0, np.abs(expected.r).max())


def test_batched_system_falls_back_on_a_singular_block(multiclass_data, make_problem):
    """A class without weight has a zero b-diagonal: the per-class system (its shifts, its error) decides."""
    p = make_problem(multiclass_data, "SwSb", "linear")
    omega = p.cost.copy()
    omega[p.pairs.label == 0] = 0.0
    for stepper in (BatchedPrimalStepper(p), PrimalStepper(p)):
        with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
            stepper.system(omega)


def test_large_blocks_are_not_batched():
    rng = np.random.default_rng(0)
    p = Problem.from_labels(rng.normal(size=(60, 50)), np.arange(60) % 3, "SwSb")
    assert not batchable(p, p.X) and type(make_stepper(p, "primal")) is PrimalStepper


@pytest.mark.parametrize("beta", [0.01, 1.0, 100.0, 1e4])
@pytest.mark.parametrize("variant", ovn_cvx.VARIANTS)
def test_early_crossover_answers_are_proven(multiclass_data, variant, beta, make_problem):
    """Whatever finished the solve (early crossover, crossover, interior point), "optimal" means a proven bound
    within gap_tol, and the bound holds against the tight reference: F − F_ref ≤ F − F* ≤ bound."""
    p = make_problem(multiclass_data, variant, "linear", alpha=0.2, beta=beta)
    result = ovn_cvx.solve(p, "mm")
    assert result.success and result.certified
    assert result.relative_gap_bound <= result.gap_tol
    reference = reference_objective(p)
    scale = max(1.0, abs(result.objective))
    assert result.objective - reference <= result.gap_bound + 1e-9 * scale
    assert result.objective == pytest.approx(ovn_cvx.objective(p, result.coef, result.b), rel=1e-12)
    if result.info.get("early_crossover"):
        assert result.finish == "interior + polish"
        assert result.objective - reference <= 1e-9 * scale  # the polish: exact to round-off
    assert result.iterations == len(result.history) - 1


def test_early_crossover_happens_and_saves_iterations(multiclass_data, make_problem):
    """On a non-degenerate problem the early crossover certifies before the interior point's first evaluation."""
    p = make_problem(multiclass_data, "SwSb", "linear", alpha=0.2, beta=1.0)
    result = ovn_cvx.solve(p, "mm")
    assert result.info.get("early_crossover") and result.success
    assert result.objective - reference_objective(p) <= 1e-9 * max(1.0, abs(result.objective))


def test_batched_system_falls_back_when_lu_breaks_down(multiclass_data, make_problem, monkeypatch):
    """Cholesky can pass where LU then meets an exactly zero pivot (an interior point run far past its optimum):
    the per-class system takes over instead of a raw LinAlgError."""
    p = make_problem(multiclass_data, "SwSb", "linear")
    omega = p.cost * np.linspace(0.5, 2.0, len(p.pairs))

    def singular(_):
        raise np.linalg.LinAlgError("Singular matrix")

    expected = PrimalStepper(p).system(omega).fit(np.ones(len(p.pairs)))
    monkeypatch.setattr(np.linalg, "inv", singular)
    system = BatchedPrimalStepper(p).system(omega)
    assert not isinstance(system, BatchedSystem)
    np.testing.assert_allclose(system.fit(np.ones(len(p.pairs))).params[0], expected.params[0], atol=1e-12)


def test_margin_sets_by_tapias_indicators():
    """Hand-made iterates (c = 1e4) and their predecessors: a violated pair (ξ stays, ν shrinks), an inactive one (s
    stays, u shrinks), a margin pair with a small multiplier (μ = 3e-3 ≪ c) still 1.5e-6 inside the margin (s
    shrinks, u stays), an inactive pair 5e-5 from the margin whose s and u are alike (5e-5: s stays, u shrinks),
    and an ordinary margin pair. The indicators get all five; a residual band |r| ≤ 1e-6 misses the third, the
    comparison s_p < u_p the fourth."""
    from ovn_cvx.solvers.mm.interior import PrimalDualPoint
    from ovn_cvx.solvers.mm.active_set import IN_I, IN_S, IN_V, partition
    c = np.full(5, 1e4)

    def point(xi, s, u):
        u = np.asarray(u, dtype=float)
        return PrimalDualPoint(theta=None, xi=np.asarray(xi, dtype=float), s=np.asarray(s, dtype=float), u=u, nu=c - u)

    previous = point([0.5, 1e-7, 1e-7, 1e-7, 1e-7], [1e-6, 0.3, 1e-4, 4.8e-5, 1e-6],
                     [c[0] - 1e-6, 1e-7, 3e-3, 5e-4, 5e3])
    now = point([0.5, 1e-9, 1e-9, 1e-9, 1e-9], [1e-8, 0.3, 1.5e-6, 4.7e-5, 1e-8],
                [c[0] - 1e-8, 1e-9, 3e-3, 5e-5, 5e3])
    np.testing.assert_array_equal(now.margin_sets(previous), [IN_V, IN_I, IN_S, IN_I, IN_S])
    r = now.xi - now.s  # s = ξ − r at a primal-feasible iterate
    assert partition(r, 1e-6)[2] == IN_I and now.s[3] < now.u[3]


def test_crossover_keeps_the_interior_points_biases():
    """glass, SwSb, α = 0.5, β = 0.01: two classes have no margin pair, so their b_k are free within an interval and
    the partition system is singular. Solved by the least change from the interior point's (μ, b), the polish
    certifies in one round and lands on the tight reference; the minimum-norm solution put b_k outside the interval
    (a wrong partition, complementarity off by O(1))."""
    from sklearn.preprocessing import StandardScaler
    from ovn_cvx.datasets import load_glass
    from ovn_cvx.solvers.mm.active_set import IN_S
    from ovn_cvx.solvers.mm.common import GramOperator
    from ovn_cvx.solvers.mm.interior import InteriorPoint
    from ovn_cvx.solvers.mm.polish import polish_partition
    X, y = load_glass(return_X_y=True)
    p = Problem.from_labels(StandardScaler().fit_transform(X), y, "SwSb", alpha=0.5, beta=0.01)
    ipm = InteriorPoint(p, make_stepper(p, "auto"), 1e-9)
    run = ipm.run(100, 1e-9)
    point = ipm.best.point  # past the round-off floor (here 2e-9) the iterates' free b_k drift
    sets = point.margin_sets(ipm.best.previous)
    classes = np.unique(p.pairs.label[sets == IN_S])
    assert classes.size < p.n_classes  # the singular case this is about
    found = polish_partition(p, GramOperator(p), sets, run.bound.primal, iterate_b=point.theta.b,
                             iterate_mu=point.u, max_rounds=1)
    assert found.certified
    scale = max(1.0, abs(found.objective))
    assert abs(found.objective - reference_objective(p)) <= 1e-9 * scale
    minimum_norm = polish_partition(p, GramOperator(p), sets, run.bound.primal, max_rounds=1)
    assert not minimum_norm.certified and minimum_norm.certificate["complementarity"] > 1e-3
    result = ovn_cvx.solve(p, "mm")
    assert result.success and result.finish == "interior + polish"
    assert abs(result.objective - found.objective) <= 1e-9 * scale
