"""The one active-set finish (docs/theory.md §9.5, §9.11) driven directly with each of its two engines, from a wrong
partition that one primal–dual move makes optimal; the move's box and sign tests at their boundaries."""
import numpy as np
import pytest

import ovn_cvx
from ovn_cvx import Problem
from ovn_cvx.duality import project_hard_constraints
from ovn_cvx.objective import residuals
from ovn_cvx.solvers.cvxpy_solver import TIGHT_CLARABEL
from ovn_cvx.solvers.mm.active_set import IN_I, IN_S, IN_V, KKT_TOL, active_set_finish, active_set_move, partition
from ovn_cvx.solvers.mm.common import GramOperator
from ovn_cvx.solvers.mm.matrix_free import NewtonCG, PartitionRestart
from ovn_cvx.solvers.mm.polish import DensePartition
from ovn_cvx.solvers.verdict import GAP_TOL


def recording(engine_class):
    """``engine_class`` that also records every partition it is asked to solve."""

    class Recording(engine_class):
        def solve(self, sets):
            self.solved = [*getattr(self, "solved", []), sets.copy()]
            return super().solve(sets)

    return Recording


def optimum(variant):
    """A small three-class problem with a non-degenerate optimum (7 to 9 margin pairs, K(d+1) = 15 free parameters), the
    tight CVXPY reference's objective and its partition (margin set |r_p| ≤ 1e-6)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 4))
    y = rng.integers(0, 3, 40)
    X += 1.5 * np.eye(4)[y]
    problem = Problem.from_labels(X, y, variant, alpha=0.3 if variant.startswith("Sw") else 0.0, beta=1.0)
    reference = ovn_cvx.solve(problem, "cvxpy", solver="CLARABEL", **TIGHT_CLARABEL)
    coef, b = project_hard_constraints(problem, reference.coef, reference.b)
    return problem, ovn_cvx.objective(problem, coef, b), partition(residuals(problem, coef, b), 1e-6)


def dense_engine(problem):
    return recording(DensePartition)(problem, GramOperator(problem), np.inf, None, None)


def restart_engine(problem):
    """The matrix-free engine from a cold run's first point and its smoothed slopes."""
    run = NewtonCG(problem, GAP_TOL)
    return recording(PartitionRestart)(run, run.point, run.slopes(run.point.r))


def certified_objective(engine):
    if isinstance(engine, DensePartition):
        return engine.found[2]
    assert engine.run.certified
    return engine.run.best[1].primal


# (variant, margin pair of the optimum, the set it is wrongly put in): its μ_p lies inside (0, c_p); held at 0 (I)
# or c_p (V), the partition's solution gives it a residual of the wrong sign, and the move returns it to S
WRONG_PARTITIONS = [("SwSb", 8, IN_I), ("SwSb", 30, IN_V), ("HwSb", 8, IN_I), ("HwHb", 24, IN_I)]


@pytest.mark.parametrize("make_engine", [dense_engine, restart_engine], ids=["dense", "matrix-free"])
@pytest.mark.parametrize("variant, pair, wrong_set", WRONG_PARTITIONS)
def test_one_move_makes_a_wrong_partition_optimal(variant, pair, wrong_set, make_engine):
    problem, reference, optimal = optimum(variant)
    assert optimal[pair] == IN_S
    wrong = optimal.copy()
    wrong[pair] = wrong_set
    engine = make_engine(problem)
    rounds, reason = active_set_finish(engine, wrong)
    assert (rounds, reason) == (2, "certified")
    # one move: the wrong partition, then the optimal one
    assert len(engine.solved) == 2
    np.testing.assert_array_equal(engine.solved[0], wrong)
    np.testing.assert_array_equal(engine.solved[1], optimal)
    assert abs(certified_objective(engine) - reference) <= 1e-8 * abs(reference)


def test_the_finish_stops_at_a_partition_already_tried():
    """A partition in ``tried`` is not solved again (the matrix-free form's record across its stages)."""
    problem, _, optimal = optimum("SwSb")
    engine = dense_engine(problem)
    assert active_set_finish(engine, optimal, tried={optimal.tobytes()}) == (1, "cycle")
    assert not hasattr(engine, "solved")


def test_active_set_move_at_its_tolerances():
    """A multiplier moves only beyond ``box_tol`` (relative to c_p) outside [0, c_p], a residual only beyond
    ``sign_tol`` on the wrong side; just inside, nothing moves. NaN fails no test (no move): the engine's own check
    then rejects the solution."""
    c = np.array([2.0, 2.0, 2.0, 2.0])
    sets = np.array([IN_S, IN_S, IN_V, IN_I], dtype=np.int8)
    r = np.array([0.0, 0.0, 0.5, -0.5])
    inside = np.array([-0.99 * KKT_TOL * 2.0, 2.0 * (1 + 0.99 * KKT_TOL), 2.0, 0.0])
    assert active_set_move(sets, inside, c, r, KKT_TOL, 1e-6) is None
    outside = np.array([-1.01 * KKT_TOL * 2.0, 2.0 * (1 + 1.01 * KKT_TOL), 2.0, 0.0])
    np.testing.assert_array_equal(active_set_move(sets, outside, c, r, KKT_TOL, 1e-6), [IN_I, IN_V, IN_V, IN_I])
    mu = np.array([1.0, 1.0, 2.0, 0.0])
    just_inside = np.array([0.0, 0.0, -0.99e-6, 0.99e-6])
    assert active_set_move(sets, mu, c, just_inside, KKT_TOL, 1e-6) is None
    just_outside = np.array([0.0, 0.0, -1.01e-6, 1.01e-6])
    np.testing.assert_array_equal(active_set_move(sets, mu, c, just_outside, KKT_TOL, 1e-6), [IN_S] * 4)
    assert active_set_move(sets, np.array([np.nan, 1.0, 2.0, 0.0]), c, r, KKT_TOL, 1e-6) is None
