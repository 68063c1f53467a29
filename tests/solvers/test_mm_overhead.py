"""The per-fit overhead cuts of the fast solver (docs/theory.md §9.7, §9.8) keep every guarantee: the batched primal
system solves the structured system of the per-class one, and the early crossover returns only answers whose
proven bound is within gap_tol, checked against a tight CVXPY reference."""
import numpy as np
import pytest

import ovn_cvx
from ovn_cvx import Problem
from ovn_cvx.duality import project_hard_constraints
from ovn_cvx.solvers.mm import _make_stepper
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
    assert batchable(p, p.X) and isinstance(_make_stepper(p, "auto"), BatchedPrimalStepper)
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
    assert not batchable(p, p.X) and type(_make_stepper(p, "primal")) is PrimalStepper


@pytest.mark.parametrize("beta", [0.01, 1.0, 100.0, 1e4])
@pytest.mark.parametrize("variant", ovn_cvx.VARIANTS)
def test_early_crossover_answers_are_proven(multiclass_data, variant, beta, make_problem):
    """Whatever finished the solve (early crossover, crossover, interior point), "optimal" means a proven bound
    within gap_tol, and the bound holds against the tight reference: F − F_ref ≤ F − F* ≤ bound."""
    p = make_problem(multiclass_data, variant, "linear", alpha=0.2, beta=beta)
    result = ovn_cvx.solve(p, "mm")
    assert result.success and result.info["certified"]
    assert result.info["relative_gap_bound"] <= result.info["gap_tol"]
    reference = reference_objective(p)
    scale = max(1.0, abs(result.objective))
    assert result.objective - reference <= result.info["gap_bound"] + 1e-9 * scale
    assert result.objective == pytest.approx(ovn_cvx.objective(p, result.coef, result.b), rel=1e-12)
    if result.info.get("early_crossover"):
        assert result.info["finish"] == "interior + polish"
        assert result.objective - reference <= 1e-9 * scale  # the polish: exact to round-off
    assert result.iterations == len(result.history) - 1


def test_early_crossover_happens_and_saves_iterations(multiclass_data, make_problem):
    """On a non-degenerate problem the early crossover certifies before the interior point's first evaluation."""
    p = make_problem(multiclass_data, "SwSb", "linear", alpha=0.2, beta=1.0)
    result = ovn_cvx.solve(p, "mm")
    assert result.info.get("early_crossover") and result.success
    assert result.objective - reference_objective(p) <= 1e-9 * max(1.0, abs(result.objective))
