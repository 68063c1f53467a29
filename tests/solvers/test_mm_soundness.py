"""`success` is a promise: every fast-solver result carries a proven bound on F − F* (docs/theory.md §6), and
"optimal" is claimed only when that bound is within gap_tol. Checked against independent references: tight
Clarabel and ECOS objectives (any feasible point's objective is ≥ F*, so F − F_ref ≤ F − F* ≤ bound must hold
whatever the reference's own accuracy), the linear form of a precomputed linear Gram, and hand-made optima."""
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import ovn_cvx
from ovn_cvx import Problem, alpha_interval
from ovn_cvx.duality import dual_value, feasible_dual, project_hard_constraints
from ovn_cvx.kkt import kkt_certificate
from ovn_cvx.objective import regularizer

TIGHT = {"solver": "CLARABEL", "tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12, "max_iter": 500}


def best_reference(problem, required=True):
    """The lowest objective any CVXPY solver reaches, at its point projected onto the hard constraints (a
    violation of 1e-8 is worth 1e-2 of objective with features of scale 1e6): an upper bound on F*,
    independent of the fast solver. None when no solver produced a point and not ``required``."""
    values = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for options in (TIGHT, {"solver": "ECOS"}, {"solver": "CLARABEL"}, {"solver": "OSQP"}):
            try:
                ref = ovn_cvx.solve(problem, "cvxpy", **options)
            except ValueError:  # a solver that is not installed
                continue
            if ref.has_solution:
                values.append(ovn_cvx.objective(problem, *project_hard_constraints(problem, ref.coef, ref.b)))
    assert values or not required, "no reference solved the problem"
    return min(values) if values else None


def assert_sound(result, reference):
    """The bound holds (up to the round-off of evaluating F at the reference) and success means it is small."""
    scale = max(1.0, abs(result.objective))
    assert result.objective - reference <= result.gap_bound + 1e-9 * scale
    if result.success:
        assert result.relative_gap_bound <= result.gap_tol
        assert result.objective - reference <= 1e-6 * scale


@pytest.fixture(scope="module")
def points():
    rng = np.random.default_rng(0)
    return rng.normal(size=(20, 2)), np.arange(20) % 3


# --- the reproducers of the false success claims -------------------------------------------------------------
@pytest.mark.parametrize("distance", [1e-6, 1e-8])
@pytest.mark.parametrize("end", ["upper", "lower"])
def test_alpha_near_either_end(points, end, distance):
    """MM once "converged" at F = 0.288 where F* = 1.6e-5 (α = 1 − 1e-8). At 1e-6 from either end the bound
    certifies; at 1e-8 from the upper end P⁻¹ = Π/(1−α) + … amplifies the dual point's round-off 1e8-fold and
    the bound may stay above gap_tol: then the answer is an honest "inaccurate", never a false "optimal"."""
    X, y = points
    lo, hi = alpha_interval(3)
    alpha = hi - distance if end == "upper" else lo + distance
    p = Problem.from_labels(X, y, "SwSb", alpha=alpha)
    result = ovn_cvx.solve(p, "mm")
    assert result.success or (end, distance) == ("upper", 1e-8)
    assert_sound(result, best_reference(p))


def test_huge_beta_on_a_tiny_problem_has_the_hand_optimum():
    """4 points on a line, alternating classes, SwHb, β = 8e5: F* = 2 (W with margin 1 at every point is
    impossible; the hinge is so expensive that every residual is ≤ 0 — the reference was at 200, MM at 189 705)."""
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    p = Problem.from_labels(X, np.array([0, 1, 0, 1]), "SwHb", beta=8e5)
    result = ovn_cvx.solve(p, "mm")
    reference = best_reference(p)
    assert result.success and result.objective == pytest.approx(reference, rel=1e-7)
    assert_sound(result, reference)


def test_tiny_eps_plain_mm_is_not_a_success(points):
    """ε = 1e-12 without a finish: MM cannot get there in the iteration budget, and says so with its bound."""
    X, y = points
    p = Problem.from_labels(X, y, "SwHb")
    result = ovn_cvx.solve(p, "mm", eps=1e-12, finish="none", max_iter=200)
    assert not result.success and result.status == "max_iter"
    assert_sound(result, best_reference(p))
    exact = ovn_cvx.solve(p, "mm", eps=1e-12, finish="polish")
    assert exact.success and exact.objective == pytest.approx(best_reference(p), rel=1e-7)


def test_a_kkt_certificate_that_passes_is_within_its_tolerance():
    """β = 1e5 with F* ≪ 1: residual tests relative to c_p pass at a point 3.5× above the optimum; the proven
    bound does not."""
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(size=(10, 2)) + [4, 0], rng.normal(size=(10, 2)) - [4, 0]])
    p = Problem.from_labels(X, np.repeat([0, 1], 10), "SwHb", beta=1e5)
    exact = ovn_cvx.solve(p, "mm")
    assert exact.success and kkt_certificate(p, exact.coef, exact.b).passed()
    worse = kkt_certificate(p, 1.9 * exact.coef, exact.b)
    truth = (ovn_cvx.objective(p, 1.9 * exact.coef, exact.b) - exact.objective) / max(1.0, exact.objective)
    assert truth > 1e-6 and not worse.passed()
    assert worse.residuals["duality_gap"] >= truth * (1 - 1e-9)


# --- badly scaled and degenerate data: no raw numerical error, an honest answer ------------------------------
def test_badly_scaled_precomputed_gram_keeps_the_problem():
    """Columns of scales 1e6 and 1: the kernel form on the precomputed G = XXᵀ has the linear form's optimum (the
    old 1e-10 eigen-cutoff dropped the small direction: every solver agreed on F = 44.79 against 35.76).
    Agreement is to G's own precision: its entries are ~1e12, so the scale-1 direction is known to ~1e-4."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 2)) * [1e6, 1.0]
    y = np.arange(30) % 3
    linear = ovn_cvx.solve(Problem.from_labels(X, y, "SwHb"), "mm")
    kernel = ovn_cvx.solve(Problem.from_labels(X @ X.T, y, "SwHb", kernel="precomputed"), "mm")
    assert linear.success
    assert kernel.objective == pytest.approx(linear.objective, rel=1e-4)
    eigen = ovn_cvx.solve(Problem.from_labels(X @ X.T, y, "SwHb", kernel="precomputed"), "cvxpy")
    assert eigen.objective == pytest.approx(linear.objective, rel=1e-4)


@pytest.mark.parametrize("case", ["features x1e8", "N < M x1e3", "poly mixed scales", "duplicated columns"])
def test_no_raw_linalg_error_on_valid_data(case):
    rng = np.random.default_rng(2)
    if case == "features x1e8":
        p = Problem.from_labels(rng.normal(size=(14, 5)) * 1e8, np.arange(14) % 3, "HwSb")
    elif case == "N < M x1e3":
        p = Problem.from_labels(rng.normal(size=(8, 20)) * 1e3, np.arange(8) % 3, "SwHb")
    elif case == "poly mixed scales":
        X = rng.normal(size=(25, 3)) * [100.0, 1.0, 0.01]
        p = Problem.from_labels(X, np.arange(25) % 3, "SwHb", kernel="poly", degree=3)
    else:
        X = rng.normal(size=(20, 2))
        p = Problem.from_labels(np.hstack([X, X]), np.arange(20) % 3, "SwSb", alpha=0.5)
    result = ovn_cvx.solve(p, "mm")
    assert result.success
    assert_sound(result, best_reference(p))


def test_warm_start_and_eps_outside_their_meaning_are_rejected(points):
    X, y = points
    p = Problem.from_labels(X, y, "SwHb")
    result = ovn_cvx.solve(p, "mm")
    result.coef[0, 0] = np.nan
    with pytest.raises(ValueError, match="warm_start"):
        ovn_cvx.solve(p, "mm", warm_start=result)
    with pytest.raises(ValueError, match="eps"):
        ovn_cvx.solve(p, "mm", eps=1e300)


def test_interior_point_iterations_do_not_grow_with_degeneracy():
    """Every pattern duplicated with conflicting labels and many pairs exactly on the margin: the active-set
    polish cannot certify such optima; the interior point reaches its bound in a bounded number of iterations."""
    rng = np.random.default_rng(4)
    X = np.repeat(rng.normal(size=(30, 3)), 4, axis=0)
    Y = (rng.random((120, 5)) < 0.6).astype(float)
    Y[np.arange(5), np.arange(5)] = 1.0
    p = Problem(X, Y, "SwHb", alpha=0.5, beta=1.0)
    result = ovn_cvx.solve(p, "mm", finish="interior")
    assert result.success and result.info["interior_iterations"] <= 30
    assert_sound(result, best_reference(p))


CYCLING = {  # 5-row problems found by the property test on which Mehrotra's predictor–corrector cycled
    "SwSb": dict(X=[[-0.94843762, -2.62845651], [-2.53550231, -3.26394857], [-6.00537182, -5.23379686],
                    [-2.08132935, -1.80088134], [-0.6348733, -0.39256526]],
                 Y=[[1, 0, 0], [0, 1, 1], [1, 0, 1], [1, 0, 0], [0, 0, 0]], alpha=-0.3125, beta=3.0),
    "SwHb": dict(X=[[-0.06719929, -0.33455811], [0.51372304, -1.7999904], [-0.44506873, -1.65147732],
                    [1.10018977, -0.15380392], [0.24773362, -1.64585001]],
                 Y=[[1, 0, 0], [1, 1, 0], [0, 0, 1], [1, 0, 0], [0, 0, 0]], alpha=-0.425, beta=4.70115,
                 bias_penalty=0.745684, sample_weight=[2.94022893, 2.76071891, 1.32632653, 2.63480304, 2.30511464]),
}


@pytest.mark.parametrize("variant", sorted(CYCLING))
def test_interior_point_does_not_cycle(variant):
    """Mehrotra's predictor–corrector alternated between two pairs of iterates (relative gaps 1e-3 and 1e-2) until
    the iteration limit, "inaccurate" after 100; a first safeguard (a more central step when his would raise the
    complementarity χ) fixed the first problem, not the second, whose central steps raised χ as well. With Armijo's
    rule on χ for the safeguard step both converge to the reference."""
    case = dict(CYCLING[variant])
    p = Problem(np.array(case.pop("X")), np.array(case.pop("Y"), dtype=float), variant,
                sample_weight=case.pop("sample_weight", None), **case)
    result = ovn_cvx.solve(p, "mm", finish="interior")
    assert result.success and result.info["interior_iterations"] <= 30
    assert_sound(result, best_reference(p))
    assert result.objective == pytest.approx(best_reference(p), rel=1e-8)


def test_pair_form_on_a_nearly_singular_gram_falls_back_to_the_primal_form():
    """An RBF kernel on 1-D data: the Gram's eigenvalues fall to round-off, the pair form's interior point stalls
    short of gap_tol (found by a longer run of the property test; "inaccurate", honestly), and "auto" then solves
    the primal form on the eigen-features, which certifies."""
    rng = np.random.default_rng(8)
    X = rng.normal(size=(18, 1))
    p = Problem.from_labels(X, np.arange(18) % 2, "HwSb", "rbf", beta=float(rng.uniform(1, 6)))
    pair = ovn_cvx.solve(p, "mm", form="pair")
    assert not pair.success and pair.relative_gap_bound > pair.gap_tol
    assert_sound(pair, best_reference(p))
    result = ovn_cvx.solve(p, "mm")
    assert result.success and result.form == "primal" and "pair_attempt" in result.info
    assert_sound(result, best_reference(p))
    assert result.objective == pytest.approx(best_reference(p), rel=1e-7)


def test_matrix_free_near_the_lower_alpha_end():
    """Found by the matrix-free search below: K = 2, α = −1 + 1e-8, features of scale 1e5: C = P⁻¹ ~ 5e7 made the
    pair system's bias preconditioner 1e-18·I + 2γ11ᵀ, singular in round-off — a raw LinAlgError. Now a sound
    result; the reference reaches F* ≈ 0."""
    X = np.array([[1.2573022109339328e-07, -132104.86329130188], [6.40422650443282e-07, 104900.11715303971]])
    p = Problem.from_labels(X, np.array([0, 1]), "SwSb", alpha=alpha_interval(2)[0] + 1e-8, beta=0.01,
                            bias_penalty=0.1)
    assert_sound(ovn_cvx.solve(p, "mm", form="matrix-free"), best_reference(p))


def _exact_dual(problem, mu, gram=None):
    """D(μ) of docs/theory.md §6 in exact rational arithmetic on the float inputs: X's columns (linear problems) or
    the Gram matrix ``gram`` the evaluation reads (kernel problems)."""
    pairs, K = problem.pairs, problem.n_classes
    M = [[Fraction(0)] * K for _ in range(problem.n_samples)]
    for p in range(len(mu)):
        M[int(pairs.sample[p])][int(pairs.label[p])] += int(pairs.sign[p]) * Fraction(mu[p])
    if gram is None:  # Mᵀ X Xᵀ M, column by column of X
        Q = [[Fraction(0)] * K for _ in range(K)]
        for column in problem.X.T:
            q = [sum((Fraction(x) * M[i][k] for i, x in enumerate(column)), Fraction(0)) for k in range(K)]
            Q = [[Q[k][j] + q[k] * q[j] for j in range(K)] for k in range(K)]
    else:
        Q = _exact_gram_products(gram, M)
    value = sum((Fraction(m) for m in mu), Fraction(0)) - _exact_quadratic(problem, Q) / 2
    if not problem.hard_b and problem.bias_penalty > 0:
        mass = sum((M[i][k] for i in range(len(M)) for k in range(K)), Fraction(0)) / K
        value -= mass * mass / (4 * Fraction(problem.bias_penalty))
    return value


def test_dual_value_never_exceeds_the_exact_dual():
    """The bound's dual value carries its own round-off allowance (docs/theory.md §6): near either end of α's
    interval P⁺ amplifies the rounding of M's parts (measured without the allowance: 174 of these 300 computed
    values above the exact D, one by 2.4e4). Against exact rational arithmetic: never above, and at most 1e-10
    (relative) below."""
    rng = np.random.default_rng(1)
    for trial in range(300):
        K, N, M = int(rng.integers(2, 5)), int(rng.integers(4, 8)), int(rng.integers(1, 4))
        X = rng.normal(size=(N, M)) * 10.0 ** rng.choice([-6, 0, 6], size=M)
        lo, hi = alpha_interval(K)
        variant, alpha = (("SwSb", lo + 1e-8), ("SwHb", hi - 1e-8), ("HwSb", 0.0))[trial % 3]
        problem = Problem.from_labels(X, np.arange(N) % K, variant, alpha=alpha,
                                      beta=float(10.0 ** rng.integers(-2, 7)), bias_penalty=0.1)
        mu = feasible_dual(problem, rng.uniform(0, 1, len(problem.cost)) * problem.cost)
        exact, computed = _exact_dual(problem, mu), Fraction(dual_value(problem, mu))
        assert computed <= exact, trial
        assert float(exact - computed) <= 1e-10 * max(1.0, abs(float(exact))), trial


def test_regularizer_is_exact_near_the_alpha_ends():
    """R = ½ tr(W P Wᵀ) as two squares (docs/theory.md §6): W large along the direction P nearly annihilates
    (α = −1/(K−1) + 1e-8: the class mean) cancelled in the direct form (4e-5 of round-off in R = 1.4e5,
    measured); against exact rational arithmetic."""
    rng = np.random.default_rng(0)
    for alpha in (alpha_interval(4)[0] + 1e-8, alpha_interval(4)[1] - 1e-8):
        p = Problem.from_labels(rng.normal(size=(8, 3)), np.arange(8) % 4, "SwSb", alpha=alpha)
        along = np.ones(4) if alpha < 0 else np.array([1.0, -1.0, 0.5, -0.5])  # P's small-eigenvalue direction
        W = 1e6 * rng.normal(size=(3, 1)) * along + rng.normal(size=(3, 4))
        a = Fraction(alpha)
        exact = sum(((1 - a) * sum(Fraction(v) ** 2 for v in row) + a * sum((Fraction(v) for v in row), Fraction(0))
                     ** 2 for row in W), Fraction(0)) / 2
        assert abs(Fraction(regularizer(p, W)) - exact) <= Fraction(1e-13) * exact


def _exact_gram_products(gram, M):
    """Mᵀ G M (K × K) in exact rational arithmetic on the float Gram matrix (M: N × K of Fractions)."""
    G = [[Fraction(float(v)) for v in row] for row in gram]
    N, K = len(M), len(M[0])
    GM = [[sum((G[i][j] * M[j][k] for j in range(N)), Fraction(0)) for k in range(K)] for i in range(N)]
    return [[sum((M[i][k] * GM[i][q] for i in range(N)), Fraction(0)) for q in range(K)] for k in range(K)]


def _exact_quadratic(problem, Q):
    """tr(P⁺ Q) in exact rational arithmetic for Q = Mᵀ G M (K × K)."""
    K, a = problem.n_classes, Fraction(problem.alpha)
    trace, total = sum((Q[k][k] for k in range(K)), Fraction(0)), sum((v for row in Q for v in row), Fraction(0))
    if problem.hard_w:  # P⁺ = Π
        return trace - total / K
    return (trace - total / K) / (1 - a) + total / (K * (1 + (K - 1) * a))


@pytest.mark.parametrize("kernel", ["rbf", "poly", "precomputed"])
@pytest.mark.parametrize("by_blocks", [False, True])
def test_kernel_dual_value_never_exceeds_the_exact_dual(kernel, by_blocks):
    """The kernel dual value's allowance (docs/theory.md §6), whether |G| comes from its own pass or, for the
    Gaussian kernel (G ≥ 0), from G's: never above the exact D(μ) on the Gram matrix the evaluation reads (held, or
    evaluated by blocks as the dual decomposition's certificate does), and at most 1e-10 (relative) below — near
    both ends of α's interval, with multipliers on a part of the samples only."""
    from ovn_cvx.solvers.smo.cache import KernelRows
    from ovn_cvx.solvers.smo.certificate import exact_view

    rng = np.random.default_rng(3)
    for trial in range(60):
        K, N = int(rng.integers(2, 4)), int(rng.integers(4, 9))
        X = rng.normal(size=(N, 3))
        lo, hi = alpha_interval(K)
        variant, alpha = (("SwSb", lo + 1e-8), ("SwHb", hi - 1e-8), ("HwSb", 0.0))[trial % 3]
        options = dict(variant=variant, alpha=alpha, beta=float(10.0 ** rng.integers(-2, 7)), bias_penalty=0.1)
        if kernel == "precomputed":
            Z = rng.normal(size=(N, N))
            problem = Problem.from_labels(Z @ Z.T, np.arange(N) % K, kernel="precomputed", **options)
        else:
            problem = Problem.from_labels(X, np.arange(N) % K, kernel=kernel, gamma=0.5, coef0=1.0, **options)
        assert problem.nonnegative_gram == (kernel == "rbf")
        evaluated = problem
        if by_blocks:
            rows = KernelRows(problem, 1e-6, min_rows=1)  # a cache too small for whole rows: evaluated by blocks
            evaluated = exact_view(problem, rows)
            gram = rows.block(np.arange(N), np.arange(N))
        else:
            gram = problem.gram
        mu = feasible_dual(problem, rng.uniform(0, 1, len(problem.cost)) * problem.cost * (rng.uniform(size=len(
            problem.cost)) < 0.7))
        exact, computed = _exact_dual(problem, mu, gram), Fraction(dual_value(evaluated, mu))
        assert computed <= exact, trial
        assert float(exact - computed) <= 1e-10 * max(1.0, abs(float(exact))), trial


@pytest.mark.parametrize("alpha_end", [0, 1])
def test_kernel_regularizer_on_a_partial_support_is_exact(alpha_end):
    """R = ½ tr(Aᵀ G A P) of a sparse A (a dual decomposition's: zero rows, its kernel evaluated by blocks) near
    either end of α: against exact rational arithmetic on the whole Gram matrix."""
    from ovn_cvx.solvers.smo.cache import KernelRows
    from ovn_cvx.solvers.smo.certificate import exact_view

    rng = np.random.default_rng(5)
    K, N = 3, 7
    alpha = alpha_interval(K)[alpha_end] + (1e-8 if alpha_end == 0 else -1e-8)
    problem = Problem.from_labels(rng.normal(size=(N, 2)), np.arange(N) % K, "SwSb", kernel="rbf", alpha=alpha)
    rows = KernelRows(problem, 1e-6, min_rows=1)
    A = rng.normal(size=(N, K)) + 1e3 * (np.ones(K) if alpha_end == 0 else np.array([1.0, -1.0, 0.0]))
    A[[1, 4]] = 0.0
    gram = rows.block(np.arange(N), np.arange(N))
    Q, a = _exact_gram_products(gram, [[Fraction(float(v)) for v in row] for row in A]), Fraction(alpha)
    exact = ((1 - a) * sum((Q[k][k] for k in range(K)), Fraction(0)) + a * sum((v for row in Q for v in row),
                                                                              Fraction(0))) / 2  # ½ tr(AᵀGA P)
    computed = Fraction(regularizer(exact_view(problem, rows), A))
    assert abs(computed - exact) <= Fraction(1e-13) * exact


def test_bound_holds_near_the_lower_alpha_end_with_a_huge_hinge_weight():
    """Found by the matrix-free adversarial search: SwHb, K = 4, α = −1/3 + 1e-8, β = 1e6, features of scale 1e-7
    (W ~ 1e6 along the class mean): the objective's direct form lost 4e-5 (the structured forms) and 6.6e-4 (the
    matrix-free form's own evaluation) to cancellation — F below its true value, the bound 4e-5 against a true
    gap of at least 2.5e-4. Now both forms agree with the reference and their bounds hold."""
    X = np.array([[5.532605888887388e-07], [-5.7989987866526184e-08], [4.314941677088505e-07],
                  [9.099212170226342e-07]]) @ np.ones((1, 2))
    p = Problem.from_labels(X, np.arange(4), "SwHb", alpha=alpha_interval(4)[0] + 1e-8, beta=1e6, bias_penalty=0.1)
    reference = best_reference(p)
    for form in ("auto", "matrix-free"):
        result = ovn_cvx.solve(p, "mm", form=form)
        assert result.objective == pytest.approx(ovn_cvx.objective(p, result.coef, result.b), rel=1e-14)
        assert_sound(result, reference)


# --- the adversarial search ----------------------------------------------------------------------------------
@st.composite
def adversarial_problems(draw):
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    K = draw(st.integers(2, 4))
    N = draw(st.integers(K, 14))
    M = draw(st.integers(1, 18))  # N < M included
    X = rng.normal(size=(N, M)) * 10.0 ** rng.choice([-6, 0, 0, 6], size=M)  # column scales 1e±6
    if M > 1 and draw(st.booleans()):
        X[:, -1] = X[:, 0]  # a duplicated column
    y = np.arange(N) % K
    variant = draw(st.sampled_from(ovn_cvx.VARIANTS))
    lo, hi = alpha_interval(K)
    alpha = draw(st.sampled_from([lo + 1e-8, 0.0, 0.5, hi - 1e-8])) if variant.startswith("Sw") else 0.0
    beta = draw(st.sampled_from([1e-2, 1.0, 1e3, 1e6]))
    return Problem.from_labels(X, y, variant, alpha=alpha, beta=beta, bias_penalty=draw(st.sampled_from([0.1, 1e3])))


def check_sound(problem, form="auto"):
    result = ovn_cvx.solve(problem, "mm", form=form)
    assert np.isfinite(result.gap_bound)
    reference = best_reference(problem, required=False)
    assume(reference is not None)  # measured: β = 1e6 with columns of scale 1e±6 can defeat every CVXPY solver
    assert_sound(result, reference)


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(adversarial_problems())
def test_no_false_success_on_adversarial_problems(problem):
    check_sound(problem)


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(adversarial_problems())
def test_no_false_success_of_the_matrix_free_form_on_adversarial_problems(problem):
    """The matrix-free form (docs/theory.md §9.11) on the same problems. Found by it: near α = −1/(K−1), C = P⁻¹
    ~ 1e8 made the bias preconditioner B + 2γ11ᵀ singular in round-off (a raw LinAlgError), and a bound that did
    not hold (R's direct form cancelled). Measured at 1 000 examples on the final code: no unsound claim, 733
    certified, 267 honest "inaccurate"."""
    check_sound(problem, form="matrix-free")


@pytest.mark.slow
@settings(max_examples=1000, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(adversarial_problems(), st.sampled_from(["auto", "matrix-free"]))
def test_no_false_success_on_adversarial_problems_long_search(problem, form):
    """Measured at 3 000 examples (the structured forms): no unsound claim; 230 honest non-successes (column scales
    1e±6 with β = 1e6 or γ = 1e3)."""
    check_sound(problem, form)
