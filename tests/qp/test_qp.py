"""ovn_cvx.qp: the exported QP of every formulation of the default suite against the CVXPY reference."""
import numpy as np
import pytest

from ovn_cvx import Problem, objective, solve
from ovn_cvx.qp import QP, export, solve_qp
from ovn_cvx.exceptions import SolverNotAvailable
from ovn_cvx.solvers.cvxpy_solver import TIGHT_CLARABEL
from ovn_cvx.verify.suite import DEFAULT_SUITE

CASES = [(case, variant) for case in DEFAULT_SUITE for variant in ("SwSb", "SwHb", "HwSb", "HwHb")]


def _problem(case, variant) -> Problem:
    return dict(case.problems(variants=(variant,)))[variant]


@pytest.mark.parametrize("case,variant", CASES, ids=[f"{c.name}-{v}" for c, v in CASES])
def test_exported_qp_matches_the_reference(case, variant):
    problem = _problem(case, variant)
    reference = solve(problem, "cvxpy", solver="CLARABEL", **TIGHT_CLARABEL)
    result = solve_qp(problem)  # Clarabel's own API on the exported data, default settings
    assert result.status == "optimal" and result.coef.shape == problem.coef_shape
    assert abs(result.objective - reference.objective) <= 1e-7 * max(1.0, abs(reference.objective))
    # the QP's own value is F at its solution (ξ_p = [r_p]_+ up to the solver's tolerance)
    assert abs(result.info["qp_value"] - result.objective) <= 1e-7 * max(1.0, abs(reference.objective))


def test_qp_data_at_the_reference_point(multiclass_data):
    """At x = (vec W, b, [r]_+) of the reference the QP's constraints hold and its value is F exactly."""
    X, Y = multiclass_data
    for variant in ("SwSb", "HwHb"):
        problem = Problem(X, Y, variant, alpha=0.0 if variant == "HwHb" else -0.2, bias_penalty=0.5)
        ref = solve(problem, "cvxpy", solver="CLARABEL", **TIGHT_CLARABEL)
        qp = export(problem)
        pairs = problem.pairs
        residual = 1 - pairs.sign * (np.einsum("pm,pm->p", X[pairs.sample], ref.coef[:, pairs.label].T)
                                     + ref.b[pairs.label])
        x = np.concatenate([ref.coef.ravel(order="F"), ref.b, np.maximum(residual, 0)])
        assert isinstance(qp, QP) and qp.n_variables == problem.n_features * 3 + 3 + len(pairs)
        assert qp.value(x) == pytest.approx(objective(problem, ref.coef, ref.b), rel=1e-12)
        assert np.max(qp.G @ x - qp.h) <= 1e-12 and np.all(x >= qp.lb)
        if qp.A is not None:
            assert np.max(np.abs(qp.A @ x - qp.b)) <= 1e-6
        coef, b = qp.solution(x)
        np.testing.assert_array_equal(coef, ref.coef)
        np.testing.assert_array_equal(b, ref.b)


def test_kernel_map_back_is_the_eigen_parametrization():
    case = next(c for c in DEFAULT_SUITE if c.kernel == "rbf")
    problem = _problem(case, "HwHb")
    qp = export(problem)
    factor = problem.kernel_factor
    assert qp.shape == (factor.rank, problem.n_classes)
    C = np.arange(qp.n_coef, dtype=float).reshape(qp.shape, order="F")
    x = np.concatenate([C.ravel(order="F"), np.zeros(qp.n_variables - qp.n_coef)])
    np.testing.assert_allclose(qp.solution(x)[0], factor.to_coef(C))


def test_qpsolvers_back_end():
    qpsolvers = pytest.importorskip("qpsolvers")
    backend = next((s for s in ("piqp", "highs", "daqp") if s in qpsolvers.available_solvers), None)
    if backend is None:
        pytest.skip("no qpsolvers back end for this test installed")
    problem = _problem(DEFAULT_SUITE[0], "SwHb")
    reference = solve(problem, "cvxpy", solver="CLARABEL", **TIGHT_CLARABEL)
    result = solve_qp(problem, backend)
    assert result.status == "optimal" and result.solver == backend
    assert abs(result.objective - reference.objective) <= 1e-7 * max(1.0, abs(reference.objective))


def test_bad_arguments(multiclass_data):
    X, Y = multiclass_data
    problem = Problem(X, Y, "SwHb")
    with pytest.raises(TypeError, match="problem"):
        export("SwHb")
    with pytest.raises(ValueError, match="x must have shape"):
        export(problem).solution(np.zeros(3))
    with pytest.raises(TypeError, match="solver"):
        solve_qp(problem, 3)
    with pytest.raises(ValueError, match="tol_bogus"):
        solve_qp(problem, tol_bogus=1.0)
    with pytest.raises(SolverNotAvailable, match="qpsolvers:nosuch"):
        solve_qp(problem, "nosuch")


@pytest.mark.parametrize("variant", ["SwSb", "HwHb"])
def test_signed_pairs_and_weights(multilabel_data, variant):
    """Known-negative (−1) entries, sample weights and label weights reach G and q."""
    X, Y, weights = multilabel_data
    problem = Problem(X, Y, variant, "rbf", beta=2.0, sample_weight=weights, label_weight=[1.0, 2.0, 0.5, 1.0])
    reference = solve(problem, "cvxpy", solver="CLARABEL", **TIGHT_CLARABEL)
    result = solve_qp(problem, tol_gap_abs=1e-10, tol_gap_rel=1e-10)
    assert result.status == "optimal"
    assert abs(result.objective - reference.objective) <= 1e-7 * max(1.0, abs(reference.objective))
