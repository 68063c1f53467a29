"""benchmarks/ovn_cvx_suite.py, the verification suite as a qpbenchmark test set (only where qpbenchmark is
installed: it is not a dependency)."""

import numpy as np
import pytest

from ovn_cvx.solvers.cvxpy_solver import TIGHT_CLARABEL

qpbenchmark = pytest.importorskip("qpbenchmark")
BENCHMARK = "ovn_cvx_suite"  # the conftest fixture `bench` imports it


def test_the_test_set_holds_the_suite_as_qps(bench):
    import ovn_cvx
    from ovn_cvx.verify.suite import DEFAULT_SUITE
    test_set = bench.OvnCvxSuite()  # qpbenchmark's own checks of the definitions run here
    problems = list(test_set)
    assert len(problems) == 32 and len({p.name for p in problems}) == 32
    (_, first), = DEFAULT_SUITE[0].problems(variants=("SwSb",))
    qp = problems[0]
    assert qp.name == "mc-K3_linear-SwSb"
    # the QP's value at the reference solution (slacks = hinge residuals) is the reference objective
    ref = ovn_cvx.solve(first, solver="CLARABEL", **TIGHT_CLARABEL)
    xi = np.maximum(ovn_cvx.residuals(first, ref.coef, ref.b), 0.0)
    x = np.concatenate([ref.coef.ravel(order="F"), ref.b, xi])
    assert 0.5 * x @ (qp.P @ x) + qp.q @ x == pytest.approx(ref.objective, rel=1e-9)
