"""Boundary tests of the code that decides "optimal", "certified" or "correct": every threshold just inside, just
outside and at NaN, and the proven bound's ingredients on data with known negatives.

The solvers' internals are reached through two names only: the one verdict (``ovn_cvx.solvers.verdict.verdict``)
and the fast solver's choice between two forms' answers (``ovn_cvx.solvers.mm.forms.better``); everything else is
public.
``benchmarks/mutation.py`` runs this file against small plausible bugs in that code.
"""
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ovn_cvx
from ovn_cvx import Problem, alpha_interval
from ovn_cvx.duality import GapBound, class_masses, dual_value, feasible_dual, gap_bound, support_index
from ovn_cvx.kkt import CONSTRAINT_TOL, KKT_TOL, KKTCertificate, box_violation, kkt_certificate
from ovn_cvx.qp import solve_qp
from ovn_cvx.solvers.mm.forms import better as _better
from ovn_cvx.solvers.verdict import verdict as _verdict
from ovn_cvx.verify.checks import CheckResult

#: the soundness searches are derandomized: the same examples on every run, so a pass is reproducible
PROPERTY = settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
NAN = float("nan")
EPS = np.finfo(np.float64).eps
UP, DOWN = np.nextafter(1.0, 2.0), np.nextafter(1.0, 0.0)  # one ulp either side of 1


# --- the fast solver's verdict ------------------------------------------------------------------------------
@pytest.mark.parametrize("primal, dual, gap_tol, status", [
    (0.5, 0.5 - 2.0**-20, 2.0**-20, "optimal"),  # |F| < 1: relative = absolute, exactly at the tolerance (binary)
    (0.5, 0.5 - 2.0**-20 - 2.0**-40, 2.0**-20, "inaccurate"),  # just above it
    (2.0**20, 2.0**20 - 1.0, 2.0**-20, "optimal"),  # |F| = 2^20: an absolute gap of 1 is 2^-20 relative
    (2.0**20, 2.0**20 - 1.0 - 2.0**-20, 2.0**-20, "inaccurate"),
    (3.0, 3.0 - 2.9e-6, 1e-6, "optimal"),  # absolute 2.9e-6 > gap_tol, relative 9.7e-7 ≤ it: relative decides
    (3.0, 3.0 - 3.1e-6, 1e-6, "inaccurate"),
    (2.0, 2.5, 1e-6, "optimal"),  # dual above primal (round-off): the bound is 0, not negative
    (NAN, 0.0, 1e-6, "inaccurate"), (1.0, NAN, 1e-6, "inaccurate"), (1.0, -np.inf, 1e-6, "inaccurate"),
])
def test_verdict_is_the_relative_bound_against_gap_tol(primal, dual, gap_tol, status):
    bound = GapBound(primal=primal, dual=dual)
    assert _verdict(bound, gap_tol, hit_limit=False) == status
    assert _verdict(bound, gap_tol, hit_limit=True) == ("optimal" if status == "optimal" else "max_iter")


def test_verdict_at_the_tolerance_exactly_and_one_ulp_above():
    bound = GapBound(primal=10.0, dual=9.0)  # relative 0.1 exactly
    assert bound.relative == 0.1
    assert _verdict(bound, 0.1, hit_limit=False) == "optimal"
    assert _verdict(bound, np.nextafter(0.1, 0.0), hit_limit=False) == "inaccurate"
    assert _verdict(bound, NAN, hit_limit=False) == "inaccurate"


@pytest.mark.parametrize("primal, dual, absolute, relative", [
    (0.25, 0.125, 0.125, 0.125), (-0.5, -0.75, 0.25, 0.25), (8.0, 6.0, 2.0, 0.25), (-8.0, -10.0, 2.0, 0.25),
    (1.0, 2.0, 0.0, 0.0),
])
def test_gap_bound_is_absolute_over_max_one_and_abs_f(primal, dual, absolute, relative):
    bound = GapBound(primal=primal, dual=dual)
    assert (bound.absolute, bound.relative) == (absolute, relative)


def _answer(bound, form):
    return SimpleNamespace(relative_gap_bound=bound, finish="interior", info={}, iterations=3, form=form)


@pytest.mark.parametrize("primal, pair, chosen", [(1e-7, 2e-2, "primal"), (2e-2, 1e-7, "pair"),
                                                  (1e-7, 1e-7, "primal"), (NAN, 1e-7, "pair")])
def test_the_smaller_proven_bound_is_kept(primal, pair, chosen):
    """The primal-form retry against the pair form's answer: the one with the smaller bound (a NaN bound never)."""
    answers = {"primal": _answer(primal, "primal"), "pair": _answer(pair, "pair")}
    assert _better(answers["primal"], answers["pair"]) is answers[chosen]
    assert answers["primal"].info["pair_attempt"]["relative_gap_bound"] == pair or np.isnan(pair)


# --- every solver answer keeps its promise ------------------------------------------------------------------
@pytest.fixture(scope="module")
def negatives():
    """A multilabel problem with known negatives (Y = −1 entries) and soft b: the general case of §6."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(24, 3))
    Y = np.where(rng.random((24, 3)) < 0.4, 1.0, np.where(rng.random((24, 3)) < 0.5, -1.0, 0.0))
    Y[:3] = np.eye(3)
    return Problem(X, Y, "SwSb", alpha=0.3, beta=2.0, bias_penalty=0.5)


@pytest.fixture(scope="module")
def reference_objective(negatives):
    return ovn_cvx.solve(negatives, method="cvxpy").objective


@pytest.mark.parametrize("options", [{}, {"form": "matrix-free"}, {"form": "pair"}, {"finish": "polish"},
                                     {"finish": "none", "max_iter": 30}])
def test_every_answer_reports_its_own_bound_and_success_only_within_it(negatives, reference_objective, options):
    result = ovn_cvx.solve(negatives, method="mm", **options)
    F = ovn_cvx.objective(negatives, result.coef, result.b)
    assert result.objective == pytest.approx(F, rel=1e-12)
    assert result.relative_gap_bound == result.gap_bound / max(1.0, abs(F))
    assert result.success == result.certified == (result.relative_gap_bound <= result.gap_tol)
    assert F - reference_objective <= result.gap_bound + 1e-9 * max(1.0, abs(F))  # the bound is a bound
    if options.get("finish") != "none":
        assert result.success  # an easy problem: every finish certifies it


@pytest.mark.parametrize("options", [{}, {"finish": "polish"}, {"form": "pair"}, {"form": "matrix-free"}])
@pytest.mark.parametrize("gap_tol", [1e-14, 1e-15])
def test_a_gap_tol_below_round_off_is_met_or_refused(negatives, options, gap_tol):
    """gap_tol near or below the round-off floor (the bounds reached are ~3e-14): every path — the early crossover,
    the interior point's polish, MM's polish, the matrix-free finish — says "optimal" only with its bound within it."""
    result = ovn_cvx.solve(negatives, method="mm", gap_tol=gap_tol, **options)
    assert result.success == (result.relative_gap_bound <= gap_tol)


@pytest.mark.parametrize("gap_tol", [1e-12, 1e-15])
def test_a_warm_polish_is_optimal_only_within_gap_tol(negatives, gap_tol):
    """From the optimum of a nearby β the warm polish certifies at once (bound ~3e-14): "optimal" at gap_tol = 1e-12,
    not at 1e-15."""
    warm = ovn_cvx.solve(negatives, method="mm")
    result = ovn_cvx.solve(negatives.replace(beta=2.2), method="mm", gap_tol=gap_tol, warm_start=warm)
    assert result.success == (result.relative_gap_bound <= gap_tol)
    assert result.success == (gap_tol == 1e-12)


def test_matrix_free_stops_on_the_relative_bound(negatives):
    """F ≈ 3e7 (β = 1e6): the relative bound reaches gap_tol (stop "certified"); an absolute bound of 1e-6 would
    need 3e-14 relative, below what the run reaches, and the run would go on to its ε floor."""
    result = ovn_cvx.solve(negatives.replace(beta=1e6), method="mm", form="matrix-free")
    assert result.objective > 1e7
    assert result.success and result.info["stop"] == "certified"


@pytest.mark.parametrize("solve", [ovn_cvx.solve, solve_qp], ids=["cvxpy", "exported-qp"])
@pytest.mark.parametrize(("relative", "status"), [
    (1e-6, "optimal"), (np.nextafter(1e-6, 1.0), "optimal_inaccurate"), (np.nan, "optimal_inaccurate"),
    (np.inf, "optimal_inaccurate")])
def test_a_back_end_s_optimal_stands_only_on_the_proven_bound(multiclass_data, monkeypatch, solve, relative, status):
    """The reference solvers' "optimal" (CVXPY's, and Clarabel's on the exported QP) stands only with the relative
    bound within gap_tol: just inside, just outside, NaN, infinite."""
    from ovn_cvx.solvers import bound

    # F = 0, D = −relative: the relative bound is ``relative`` exactly
    monkeypatch.setattr(bound, "proven_bound", lambda problem, coef, b: GapBound(
        primal=0.0, dual=-relative, mu=np.zeros(len(problem.pairs))))
    r = solve(Problem(*multiclass_data), gap_tol=1e-6)
    assert r.status == status and r.success == (status == "optimal") and r.certified == (status == "optimal")
    assert r.has_solution
    np.testing.assert_equal(r.relative_gap_bound, relative)


# --- the dual point behind every bound ----------------------------------------------------------------------
@st.composite
def problems_and_candidates(draw):
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    K, N = draw(st.integers(2, 4)), draw(st.integers(4, 12))
    Y = rng.choice([-1.0, 0.0, 1.0], size=(N, K), p=[0.45, 0.2, 0.35])  # many known negatives
    Y[np.arange(K), np.arange(K)] = 1.0
    variant = draw(st.sampled_from(ovn_cvx.VARIANTS))
    bias_penalty = draw(st.sampled_from([0.0, 0.5, 10.0]))
    problem = Problem(rng.normal(size=(N, 2)), Y, variant, beta=draw(st.sampled_from([0.1, 1.0, 30.0])),
                      bias_penalty=bias_penalty, sample_weight=rng.uniform(0.2, 3.0, size=N))
    c = problem.cost
    scale = draw(st.sampled_from([0.5, 1.0, 3.0]))  # candidates from inside the box to far outside it
    mu = c * rng.uniform(-scale, 1.0 + scale, size=c.size)
    if draw(st.booleans()):
        mu[rng.random(c.size) < 0.2] = np.nan
    return problem, mu


def _masses(problem, mu):
    pairs = problem.pairs
    return np.bincount(pairs.label, weights=pairs.sign * mu, minlength=problem.n_classes)


@PROPERTY
@given(problems_and_candidates())
def test_feasible_dual_lies_in_the_box_with_equal_masses(case):
    problem, candidate = case
    c = problem.cost
    mu = feasible_dual(problem, candidate)
    assert np.isfinite(mu).all()
    assert (mu >= 0).all() and (mu <= c).all()  # exactly inside the box
    mass = _masses(problem, mu)
    # one common class mass, to the round-off of summing it (measured: at most 0.24 ε·Σc over 300 random cases; not
    # exactly equal in floating point)
    assert np.ptp(mass) <= 8 * EPS * c.sum()
    if not problem.hard_b and problem.bias_penalty == 0:
        assert np.abs(mass).max() <= 8 * EPS * c.sum()  # b free: stationarity forces m = 0
    # the common mass is the smallest one reachable by every class (moving down only removes weight)
    clipped = _masses(problem, np.clip(np.nan_to_num(candidate), 0.0, c))
    positive = problem.pairs.sign > 0
    highest = np.bincount(problem.pairs.label, weights=np.where(positive, c, 0.0), minlength=problem.n_classes)
    lowest = -np.bincount(problem.pairs.label, weights=np.where(positive, 0.0, c), minlength=problem.n_classes)
    if problem.hard_b or problem.bias_penalty > 0:
        expected = np.clip(clipped.min(), lowest.max(), highest.min())
        assert mass.mean() == pytest.approx(expected, abs=1e-12 * c.sum())


@pytest.mark.parametrize("size", [0, 1, 7, 60])
def test_support_is_numpy_unique_with_its_inverse(size):
    samples = np.random.default_rng(size).integers(0, 20, size=size)
    support, row = support_index(20, samples)
    expected, inverse = np.unique(samples, return_inverse=True)
    np.testing.assert_array_equal(support, expected)
    np.testing.assert_array_equal(row, inverse)


def test_class_masses_are_the_signed_sums_by_class(multilabel_data):
    """m_k = Σ_{p: k_p = k} y_p μ_p, by hand (a bincount over the labels), with the class bounds given or not."""
    X, Y, _ = multilabel_data
    problem = Problem(X, np.where(Y > 0, 1.0, -1.0), "SwSb", beta=1.0)
    pairs = problem.pairs
    assert (pairs.sign < 0).any() and (pairs.sign > 0).any()
    mu = np.random.default_rng(15).uniform(0.0, 1.0, len(pairs))
    expected = np.bincount(pairs.label, weights=pairs.sign * mu, minlength=problem.n_classes)
    np.testing.assert_allclose(class_masses(problem, mu), expected, rtol=1e-14, atol=1e-14)
    given = class_masses(problem, mu, pairs.class_bounds(problem.n_classes))
    np.testing.assert_array_equal(given, class_masses(problem, mu))
    assert given.dtype == np.float64 and given.shape == (problem.n_classes,)


def test_feasible_dual_caps_the_shift_on_a_class_with_negatives():
    """Class 0 must move its mass from +0.6 down to −1 (class 1's, the lowest): its positive pairs release all
    their weight (a shift of 1.6 asks for 2.7 times what they hold: capped at all of it), then its negative pairs
    take the remaining 1.0 in proportion to their room — without the cap the positive multipliers go negative."""
    Y = np.array([[1.0, 1.0], [1.0, -1.0], [-1.0, 0.0], [-1.0, 0.0]])
    p = Problem(np.zeros((4, 1)), Y, "SwHb", beta=1.0)
    # pairs (class-major): class 0 → samples 0+, 1+, 2−, 3−; class 1 → samples 0+, 1−; every c_p = 1
    mu = feasible_dual(p, np.array([0.3, 0.3, 0.0, 0.0, 0.0, 1.0]))
    np.testing.assert_array_equal(mu, [0.0, 0.0, 0.5, 0.5, 0.0, 1.0])
    np.testing.assert_array_equal(_masses(p, mu), [-1.0, -1.0])


def test_feasible_dual_release_that_covers_the_shift_leaves_the_other_pairs_alone():
    """Class 0 (mass 0.78 + 0.61 = 1.39) must come down to class 1's 0.92: its positive pairs release 0.47 of their
    1.39 and its negative pairs — which take weight only when the release falls short — keep their zeros exactly.
    (The release's round-off, 2.8e-17 here, used to be spread over them, growing the support.)"""
    Y = np.array([[1.0, 1.0], [1.0, -1.0], [-1.0, 1.0], [-1.0, 0.0]])
    p = Problem(np.zeros((4, 1)), Y, "SwHb", beta=1.0)
    # pairs (class-major): class 0 → samples 0+, 1+, 2−, 3−; class 1 → samples 0+, 1−, 2+; every c_p = 1
    mu = feasible_dual(p, np.array([0.78, 0.61, 0.0, 0.0, 0.92, 0.0, 0.0]))
    np.testing.assert_allclose(mu[:2], np.array([0.78, 0.61]) * 0.92 / 1.39, rtol=1e-15)
    np.testing.assert_array_equal(mu[2:], [0.0, 0.0, 0.92, 0.0, 0.0])
    np.testing.assert_allclose(_masses(p, mu), [0.92, 0.92], rtol=1e-15)

def test_feasible_dual_with_a_mass_below_another_class_range():
    """Class 0 can only reach masses in [0, 2] (no negatives), class 1 in [−2, 1]: a candidate with class 1 at −2
    must bring class 1 up to 0 (the clip to the highest of the lowest reachable masses), not class 0 below 0."""
    X = np.zeros((3, 1))
    Y = np.array([[1.0, 1.0], [1.0, -1.0], [0.0, -1.0]])
    p = Problem(X, Y, "SwHb", beta=1.0)
    mu = feasible_dual(p, np.array([1.0, 1.0, 0.0, 1.0, 1.0]))  # class 0: +2; class 1: 0 − 1 − 1 = −2
    assert (mu >= 0).all() and (mu <= p.cost).all()
    np.testing.assert_array_equal(_masses(p, mu), [0.0, 0.0])


def _exact_dual(problem, mu):
    """D(μ) in rational arithmetic (linear problem, X and μ as exact fractions)."""
    F = Fraction
    K, pairs = problem.n_classes, problem.pairs
    M = [[F(0)] * K for _ in range(problem.n_samples)]
    for p in range(len(pairs)):
        M[pairs.sample[p]][pairs.label[p]] += F(float(pairs.sign[p])) * F(float(mu[p]))
    X = [[F(float(v)) for v in row] for row in problem.X]
    V = [[sum(X[i][j] * M[i][k] for i in range(problem.n_samples)) for k in range(K)] for j in range(len(X[0]))]
    Pp = [[F(float(v)) for v in row] for row in problem.coupling_pinv]  # P⁺ is exact for α = 0 and hard w
    quadratic = sum(V[j][k] * Pp[k][q] * V[j][q] for j in range(len(V)) for k in range(K) for q in range(K))
    value = sum(F(float(m)) for m in mu) - quadratic / 2
    if not problem.hard_b and problem.bias_penalty > 0:
        m = sum(sum(M[i][k] for i in range(problem.n_samples)) for k in range(K)) / K
        value -= m * m / (4 * F(problem.bias_penalty))
    return value


@pytest.mark.parametrize("variant", ["HwHb", "SwSb"])
def test_dual_value_is_never_above_the_exact_one(variant):
    """D(μ) as computed is a lower bound of the exact D(μ): its round-off allowance is subtracted, never added."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(8, 2)) * np.array([1e3, 1.0])
    Y = np.eye(2)[np.arange(8) % 2]
    p = Problem(X, Y, variant, alpha=0.0, beta=1.0, bias_penalty=0.5)
    for seed in range(5):
        mu = feasible_dual(p, np.random.default_rng(seed).uniform(0, 1, len(p.pairs)) * p.cost)
        computed, exact = dual_value(p, mu), _exact_dual(p, mu)
        assert Fraction(computed) <= exact
        assert float(exact) - computed <= 1e-9 * max(1.0, abs(float(exact)))


def test_gap_bound_makes_its_candidate_feasible_first(negatives):
    """A candidate outside the box (2c everywhere) still gives a proven bound: F − D ≥ F − F*."""
    W, b = np.zeros(negatives.coef_shape), np.zeros(negatives.n_classes)
    bound = gap_bound(negatives, W, b, 2.0 * negatives.cost)
    assert bound.primal == ovn_cvx.objective(negatives, W, b)
    assert bound.dual <= ovn_cvx.solve(negatives, method="cvxpy").objective + 1e-9


# --- the KKT certificate ------------------------------------------------------------------------------------
def _certificate(**residuals):
    measures = dict.fromkeys(KKTCertificate.KKT_MEASURES, 0.0)
    measures.update(residuals)
    return KKTCertificate(mu=np.zeros(1), class_mass=np.zeros(2), n_margin=0, margin_band=1e-7, residuals=measures)


@pytest.mark.parametrize("measure", [*KKTCertificate.KKT_MEASURES, "sum_b", "sum_w"])
def test_certificate_thresholds(measure):
    limit = CONSTRAINT_TOL if measure in ("sum_b", "sum_w") else KKT_TOL
    assert _certificate(**{measure: limit}).passed()
    assert not _certificate(**{measure: limit * UP}).passed()
    assert not _certificate(**{measure: NAN}).passed()
    assert _certificate(**{measure: 0.5 * limit}).passed(tol=KKT_TOL, constraint_tol=CONSTRAINT_TOL)


def test_a_nan_measure_after_the_first_still_fails():
    """Python's max skips a NaN that is not first: the certificate must not."""
    last = KKTCertificate.KKT_MEASURES[-1]
    assert np.isnan(_certificate(**{last: NAN}).max_residual())
    assert not _certificate(**{last: NAN}).passed()


def test_box_violation_flags_both_ends():
    c = np.array([2.0, 2.0, 2.0, 2.0, 2.0, 2.0])
    mu = np.array([0.0, 2.0, 2.0 * UP, -1e-9, 1.0, NAN])
    violation = box_violation(mu, c)
    np.testing.assert_array_equal(violation[:5], [0.0, 0.0, (2.0 * UP - 2.0) / 2.0, 5e-10, 0.0])
    assert np.isnan(violation[5])


def test_certificate_reports_the_proven_gap_of_its_multipliers(negatives):
    """The duality-gap measure is the proven relative bound F − D(μ) of the recovered multipliers (made feasible):
    near the optimum it is small but not zero, and it is what decides when the residuals are small and F* is not."""
    result = ovn_cvx.solve(negatives, method="mm")
    for coef, b in ((result.coef, result.b), (1.01 * result.coef, result.b)):
        cert = kkt_certificate(negatives, coef, b)
        expected = gap_bound(negatives, coef, b, cert.mu).relative
        assert cert.residuals["duality_gap"] == expected
    assert expected > 1e-6 and not cert.passed()


def test_certificate_flags_hard_constraint_violations():
    """HwHb at its optimum: passes; b moved off Σb = 0 by 2·CONSTRAINT_TOL (or W off Σw = 0): fails on that
    measure; by half of it: the measure is reported within its tolerance."""
    rng = np.random.default_rng(2)
    p = Problem.from_labels(rng.normal(size=(15, 2)), np.arange(15) % 3, "HwHb")
    result = ovn_cvx.solve(p, method="mm")
    assert kkt_certificate(p, result.coef, result.b).passed()
    for factor, ok in ((2.0, False), (0.5, True)):
        b = result.b + factor * CONSTRAINT_TOL / 3
        cert = kkt_certificate(p, result.coef, b)
        assert (cert.residuals["sum_b"] <= CONSTRAINT_TOL) == ok
        if not ok:
            assert not cert.passed()
        W = result.coef.copy()
        W[0] += factor * CONSTRAINT_TOL / 3
        cert = kkt_certificate(p, W, result.b)
        assert (cert.residuals["sum_w"] <= CONSTRAINT_TOL) == ok
        if not ok:
            assert not cert.passed()


def test_certificate_flags_multipliers_above_their_cost():
    """The optimum of β = 1 checked against β' = β/4: the margin pairs' multipliers the stationarity equations
    need exceed the new costs, and the certificate fails (its box measure, or the stationarity it gives up for it)."""
    rng = np.random.default_rng(4)
    p = Problem.from_labels(rng.normal(size=(20, 2)), np.arange(20) % 2, "SwHb", beta=1.0)
    result = ovn_cvx.solve(p, method="mm")
    assert kkt_certificate(p, result.coef, result.b).passed()
    cert = kkt_certificate(p.replace(beta=0.25), result.coef, result.b)
    assert not cert.passed()
    np.testing.assert_array_equal(cert.residuals["box"], box_violation(cert.mu, p.replace(beta=0.25).cost).max())


# --- the verification checks --------------------------------------------------------------------------------
@pytest.mark.parametrize("value, tol, passed", [(1.0, 1.0, True), (UP, 1.0, False), (DOWN, 1.0, True),
                                                (NAN, 1.0, False), (0.0, NAN, False), (np.inf, np.inf, True),
                                                (-np.inf, 0.0, True)])
def test_check_result_passes_only_within_every_tolerance(value, tol, passed):
    check = CheckResult("boundary")
    check.add("ok", 0.0, 1.0)
    check.add("measure", value, tol)
    assert check.passed == passed
    assert check.failures == ([] if passed else ["measure"])
    assert check.to_frame()["passed"].tolist() == [True, passed]


# --- the reference of a comparison --------------------------------------------------------------------------
def test_the_fallback_reference_is_the_lowest_certified_objective():
    """When the preferred reference is not certified, the certified successful result with the LOWEST objective
    is the reference (a higher one is further from F*); an uncertified or unsuccessful one never is."""
    from ovn_cvx.verify.comparison import REFERENCE_METHOD, Method, _pick_reference

    def run(label, objective, success=True, certified=True):
        result = SimpleNamespace(objective=objective, success=success, certified=certified)
        return Method.parse(label) if label == REFERENCE_METHOD else SimpleNamespace(label=label), result, "", 0.0

    def certificate(result):
        return SimpleNamespace(passed=lambda: result.certified)

    runs = [run(REFERENCE_METHOD, 0.5, certified=False), run("a", 2.0), run("b", 1.0), run("c", 3.0),
            run("d", 0.9, success=False), run("e", 0.8, certified=False)]
    assert _pick_reference(None, runs, certificate) is runs[2][1]
    runs[0][1].certified = True  # the preferred one certified: it is the reference whatever the others say
    assert _pick_reference(None, runs, certificate) is runs[0][1]


# --- the label rules ----------------------------------------------------------------------------------------
def test_multilabel_threshold_counts_values_within_the_tie_tolerance():
    from ovn_cvx.labels import TIE_TOL, predict_labels
    t = 1.0
    F = np.array([[t - TIE_TOL, 0.0], [np.nextafter(t - TIE_TOL, 0.0), 0.0], [NAN, 0.0]])
    labels = predict_labels(F, multilabel=True, threshold=t, fallback=False)
    np.testing.assert_array_equal(labels[:, 0], [True, False, False])
    big = 1e4  # the tolerance is relative beyond |t| = 1
    F = np.array([[big - TIE_TOL * big, 0.0], [np.nextafter(big - TIE_TOL * big, 0.0), 0.0]])
    np.testing.assert_array_equal(predict_labels(F, multilabel=True, threshold=big, fallback=False)[:, 0],
                                  [True, False])


def test_the_argmax_is_the_first_label_within_the_tie_tolerance_of_the_largest_value():
    """Multiclass prediction (and the multilabel fallback): the first label whose value is within TIE_TOL·max(1, |m|)
    of the row's largest value m (docs/theory.md §5), so round-off does not pick the class: at that distance exactly
    the first label, one ulp further the largest; relative beyond |m| = 1."""
    from ovn_cvx.labels import TIE_TOL, predict_labels
    for m in (1.0, -0.5, 1e4):
        near = m - TIE_TOL * max(1.0, abs(m))
        F = np.array([[near, m, -3.0], [np.nextafter(near, -np.inf), m, -3.0], [-3.0, m, near]])
        expected = np.array([[True, False, False], [False, True, False], [False, True, False]])
        np.testing.assert_array_equal(predict_labels(F, multilabel=False), expected)
        fallback = predict_labels(F, multilabel=True, threshold=m + 1.0)  # no label passes: the argmax
        np.testing.assert_array_equal(fallback, expected)


def test_the_argmax_is_added_only_to_an_empty_label_set():
    """Per-label thresholds: a row whose largest value is below its own threshold while another label passes its
    threshold gets that label only; a row with no label at all gets the argmax (the documented fallback)."""
    from ovn_cvx.labels import predict_labels
    thresholds = np.array([5.0, 1.0, 1.0])
    F = np.array([[4.0, 2.0, 0.0],   # label 1 passes; the argmax (label 0) is below its threshold: not added
                  [4.0, 0.5, 0.0],   # nothing passes: the argmax, label 0
                  [6.0, 2.0, 0.0]])  # labels 0 and 1 pass
    expected = np.array([[False, True, False], [True, False, False], [True, True, False]])
    np.testing.assert_array_equal(predict_labels(F, multilabel=True, threshold=thresholds), expected)
    np.testing.assert_array_equal(predict_labels(F, multilabel=True, threshold=thresholds, fallback=False)[1],
                                  [False, False, False])


def test_alpha_interval_is_open_at_both_ends():
    lo, hi = alpha_interval(3)
    X, y = np.random.default_rng(0).normal(size=(6, 2)), np.arange(6) % 3
    for alpha in (lo, hi, NAN):
        with pytest.raises(ValueError, match="alpha"):
            Problem.from_labels(X, y, alpha=alpha)
    for alpha in (np.nextafter(lo, 0.0), np.nextafter(hi, 0.0)):
        assert Problem.from_labels(X, y, alpha=alpha).alpha == alpha
