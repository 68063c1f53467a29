"""ovn_cvx.testing.assert_matches_reference passes on a correct result and fails, readably, on corrupted ones."""
import dataclasses

import pytest

import ovn_cvx
from ovn_cvx import Problem
from ovn_cvx.testing import assert_matches_reference


@pytest.fixture(scope="module")
def solved(multilabel_data):
    X, Y, s = multilabel_data
    p = Problem(X, Y, "HwHb", sample_weight=s)
    return ovn_cvx.solve(p, solver="ECOS"), ovn_cvx.solve(p, solver="CLARABEL")


def corrupt(result, **changes):
    return dataclasses.replace(result, **changes)


def test_passes_and_returns_the_reference(solved):
    result, reference = solved
    assert assert_matches_reference(result, reference=reference) is reference
    assert assert_matches_reference(result).success  # solves its own reference


@pytest.mark.parametrize("change, line", [
    (lambda r: dict(coef=r.coef * 1.01), "FAIL objective_gap"),
    (lambda r: dict(b=r.b + 1e-3), "FAIL max_decision_diff"),
    (lambda r: dict(objective=r.objective * 0.99), "FAIL reported_objective_error"),
    (lambda r: dict(coef=r.coef + 1e-6), "FAIL constraint_violation"),
])
def test_fails_on_corrupted_results(solved, change, line):
    result, reference = solved
    bad = corrupt(result, **change(result))
    with pytest.raises(AssertionError, match="does not match the reference") as err:
        assert_matches_reference(bad, reference=reference)
    assert line in str(err.value)


def test_no_solution_and_failed_reference(solved):
    result, reference = solved
    with pytest.raises(AssertionError, match="returned no solution"):
        assert_matches_reference(corrupt(result, coef=None, b=None, status="solver_error"), reference=reference)
    with pytest.raises(RuntimeError, match="reference .* is not a proven solution"):
        assert_matches_reference(result, reference=corrupt(reference, status="optimal_inaccurate"))


@pytest.mark.parametrize(("relative", "proven"), [(1e-6, True), (1.0000001e-6, False), (float("nan"), False)])
def test_the_reference_must_be_proven(solved, relative, proven):
    """An "optimal" reference counts only with its proven bound within its gap_tol: just inside, just outside, NaN."""
    result, reference = solved
    claimed = corrupt(reference, relative_gap_bound=relative, gap_tol=1e-6)
    if proven:
        assert assert_matches_reference(result, reference=claimed) is claimed
    else:
        with pytest.raises(RuntimeError, match="not a proven solution"):
            assert_matches_reference(result, reference=claimed)
