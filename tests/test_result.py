"""The typed report of a SolveResult and the deprecated ``info`` keys."""
import math
import pickle

import numpy as np
import pytest

import ovn_cvx
from ovn_cvx import Problem
from ovn_cvx.result import SolveResult


@pytest.fixture(scope="module")
def solved():
    X = np.random.default_rng(0).normal(size=(30, 3))
    return ovn_cvx.solve(Problem.from_labels(X, np.arange(30) % 3), method="mm")


def test_typed_fields_carry_the_proven_bound(solved):
    assert solved.success and solved.certified and solved.form == "primal" and solved.gap_tol == 1e-6
    assert solved.gap_bound == pytest.approx(solved.objective - solved.dual_objective, abs=1e-12)
    assert solved.relative_gap_bound == solved.gap_bound / max(1.0, abs(solved.objective))
    # the signed dual point: one entry per pair, y_p μ_p with 0 ≤ μ_p ≤ c_p
    p = solved.problem
    M = solved.dual
    assert M.shape == (p.n_samples, p.n_classes)
    mu = M[p.pairs.sample, p.pairs.label] * p.pairs.sign
    assert (mu >= 0).all() and (mu <= p.cost + 1e-15).all()
    assert ovn_cvx.duality.dual_value(p, mu) == solved.dual_objective


@pytest.mark.parametrize("key", ["gap_bound", "relative_gap_bound", "certified", "form", "finish", "gap_tol"])
def test_old_info_keys_answer_with_a_deprecation_warning(solved, key):
    with pytest.warns(DeprecationWarning, match=f"SolveResult.{key}"):
        assert solved.info[key] == getattr(solved, key)
    with pytest.warns(DeprecationWarning):
        assert solved.info.get(key) == getattr(solved, key)
    assert solved.info.get("no such key", 5) == 5
    with pytest.raises(KeyError):
        solved.info["no such key"]


def test_report_survives_pickling_and_slim(solved):
    for copy in (pickle.loads(pickle.dumps(solved)), solved.slim()):
        assert copy.certified and copy.finish == solved.finish and copy.gap_bound == solved.gap_bound
        with pytest.warns(DeprecationWarning):
            assert copy.info["form"] == "primal"


@pytest.mark.parametrize(("relative", "gap_tol", "certified"), [
    (1e-6, 1e-6, True), (np.nextafter(1e-6, 1.0), 1e-6, False), (math.nan, 1e-6, False), (0.0, None, False),
    (math.inf, 1e-6, False)])
def test_certified_boundary(relative, gap_tol, certified):
    result = SolveResult(problem=None, coef=None, b=None, objective=1.0, status="optimal", method="x", solver="y",
                         solve_time=0.0, relative_gap_bound=relative, gap_tol=gap_tol)
    assert result.certified is certified
