"""Validation of the problem model: every bad input raises a clear error naming what is wrong."""
import inspect
import warnings

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

import ovn_cvx
from ovn_cvx import Problem, alpha_interval
from ovn_cvx.problem import COST_RANGE, FIELDS, Pairs, class_sums

X = np.random.default_rng(0).normal(size=(9, 2))
Y = np.eye(3)[np.arange(9) % 3]


def test_pairs_are_the_nonzero_entries_in_class_major_order():
    Ym = Y.copy()
    Ym[0, 1] = 1.0
    Ym[1, 2] = -1.0
    p = Problem(X, Ym, beta=2.0, sample_weight=np.arange(1, 10))
    rows, cols = np.nonzero(Ym)
    assert len(p.pairs) == rows.size == 11
    assert set(zip(p.pairs.sample, p.pairs.label)) == set(zip(rows, cols))
    assert np.all(np.diff(p.pairs.label) >= 0)
    np.testing.assert_array_equal(p.pairs.sign, Ym[p.pairs.sample, p.pairs.label])
    np.testing.assert_array_equal(p.cost, 2.0 * (p.pairs.sample + 1))


@pytest.mark.parametrize("counts", [(3, 1, 2), (0, 4, 1), (3, 0, 2), (2, 3, 0), (2, 0, 0, 3), (0, 0, 0), (5,)])
@pytest.mark.parametrize("width", [None, 3])
def test_class_sums_are_the_sums_over_each_class_with_empty_classes(counts, width):
    """Sums of each class's run of per-pair values (or rows), against a plain loop over the classes: classes
    without pairs (first, inside, last, several, all) sum to 0."""
    label = np.repeat(np.arange(len(counts)), counts)
    pairs = Pairs(np.arange(label.size), label, np.ones(label.size), np.ones(label.size))
    shape = (label.size,) if width is None else (label.size, width)
    values = np.random.default_rng(label.size).normal(size=shape)
    expected = np.zeros((len(counts),) + shape[1:])
    for k in range(len(counts)):
        for p in np.flatnonzero(label == k):
            expected[k] += values[p]
    got = class_sums(values, pairs.class_bounds(len(counts)))
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-14, atol=0)
    assert np.all(got[np.array(counts) == 0] == 0.0)


@pytest.mark.parametrize("counts", [(3, 1, 2), (3, 0, 2)])
@pytest.mark.parametrize("dtype", [np.int64, np.float32, np.float64, np.bool_])
def test_class_sums_are_float64_with_or_without_an_empty_class(counts, dtype):
    """One result type whatever the classes: float64 sums (accumulated in float64) of integer, boolean, single or
    double values, the same numbers as the sums of the values converted to float64 first."""
    label = np.repeat(np.arange(len(counts)), counts)
    bounds = Pairs(np.arange(label.size), label, np.ones(label.size), np.ones(label.size)).class_bounds(len(counts))
    values = (np.random.default_rng(1).normal(size=label.size) * 1e3).astype(dtype)
    got = class_sums(values, bounds)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, class_sums(values.astype(np.float64), bounds))
    expected = [values[label == k].astype(np.float64).sum() for k in range(len(counts))]
    np.testing.assert_allclose(got, expected, rtol=1e-14, atol=0)


def test_label_weight_multiplies_the_pair_cost():
    p = Problem(X, Y, beta=0.5, sample_weight=np.arange(1, 10), label_weight=[1.0, 2.0, 4.0])
    np.testing.assert_array_equal(p.cost, 0.5 * (p.pairs.sample + 1) * np.array([1.0, 2.0, 4.0])[p.pairs.label])


def test_negative_weight_multiplies_the_cost_of_the_negative_pairs_only():
    Yn = 2.0 * Y - 1.0  # every other class a known negative
    u = np.array([0.5, 2.0, 4.0])
    p = Problem(X, Yn, beta=0.5, sample_weight=np.arange(1, 10), label_weight=[1.0, 2.0, 3.0], negative_weight=u)
    expected = 0.5 * (p.pairs.sample + 1) * np.array([1.0, 2.0, 3.0])[p.pairs.label]
    expected = np.where(p.pairs.sign < 0, expected * u[p.pairs.label], expected)
    assert (p.pairs.sign > 0).any() and (p.pairs.sign < 0).any()
    np.testing.assert_array_equal(p.cost, expected)


@pytest.mark.parametrize("method", ["mm", "smo"])
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_negative_weight_problem_is_solved_as_the_reference(method, kernel):
    """Every solver reads the weighted costs: the fast solvers' certified optimum is the CVXPY reference's."""
    rng = np.random.default_rng(3)
    Xr = rng.normal(size=(40, 3))
    yr = np.argmax(Xr @ rng.normal(size=(3, 3)) + rng.normal(size=(40, 3)), axis=1)
    Yn = np.where(np.eye(3)[yr] == 1, 1.0, -1.0)
    p = Problem(Xr, Yn, "SwSb", kernel, bias_penalty=0.0, beta=2.0, negative_weight=[0.3, 0.6, 1.5])
    ref = ovn_cvx.solve(p, method="cvxpy", solver="CLARABEL")
    fast = ovn_cvx.solve(p, method=method, gap_tol=1e-8)
    assert fast.success
    assert fast.objective == pytest.approx(ref.objective, rel=1e-6)
    unweighted = ovn_cvx.solve(p.replace(negative_weight=None), method="cvxpy", solver="CLARABEL")
    assert abs(unweighted.objective - ref.objective) > 1e-3 * abs(ref.objective)  # the weights matter here


def test_from_labels_one_hot_with_sorted_classes():
    p = Problem.from_labels(X, np.array(["b", "a", "c"] * 3))
    assert list(p.classes) == ["a", "b", "c"]
    assert p.Y.shape == (9, 3) and (p.Y.sum(axis=1) == 1).all() and p.Y[0, 1] == 1


@pytest.mark.parametrize("K, interval", [(2, (-1.0, 1.0)), (5, (-0.25, 1.0))])
def test_alpha_interval(K, interval):
    assert alpha_interval(K) == pytest.approx(interval)


def test_replace_shares_data_and_validates():
    p = Problem(X, Y, "SwHb", "rbf", alpha=0.1)
    q = p.replace(beta=3.0, alpha=-0.2)
    assert q.X is p.X and q.kernel_factor is p.kernel_factor and (q.beta, q.alpha) == (3.0, -0.2)
    assert p.beta == 1.0
    with pytest.raises(ValueError, match="alpha"):
        p.replace(alpha=-0.5)
    with pytest.raises(TypeError, match=r"\['C', 'lambda_'\]"):
        p.replace(C=1.0, lambda_=2.0, beta=2.0)


Ym = np.where(np.arange(9)[:, None] == 0, 1.0, Y)  # sample 0 in every class: another set of pairs
CHANGES = [dict(X=X + 1.0), dict(Y=Ym), dict(variant="HwSb", alpha=0.0), dict(kernel="poly"), dict(alpha=0.3),
           dict(beta=2.5), dict(bias_penalty=0.1), dict(gamma=0.7), dict(degree=2), dict(coef0=1.5),
           dict(sample_weight=np.arange(1.0, 10.0)), dict(label_weight=[1.0, 3.0, 0.5]),
           dict(negative_weight=[0.5, 1.0, 3.0]), dict(Y=2.0 * Y - 1.0, negative_weight=[0.5, 1.0, 3.0])]


@pytest.mark.parametrize("changes", CHANGES, ids=lambda c: "+".join(c))
def test_replace_equals_the_constructor_for_every_field(changes):
    """``replace(**changes)`` is the problem the constructor builds with those changes, and shares the kernel
    matrix and its factor exactly when X and the kernel's parameters are unchanged."""
    fields = dict(X=X, Y=Y, variant="SwSb", kernel="rbf", alpha=0.2, beta=1.5, bias_penalty=0.4, gamma=0.5,
                  degree=3, coef0=0.0, sample_weight=np.full(9, 2.0), label_weight=[2.0, 1.0, 1.0],
                  negative_weight=[1.0, 2.0, 1.0])
    assert tuple(fields) == tuple(inspect.signature(Problem).parameters) == FIELDS  # every constructor argument
    p = Problem(**fields)
    p.kernel_factor, p.cost  # computed (and kept) before the copy
    q = p.replace(**changes)
    expected = Problem(**{**fields, **changes})
    for name in ("variant", "kernel", "alpha", "beta", "bias_penalty", "gamma", "degree", "coef0"):
        assert getattr(q, name) == getattr(expected, name), name
    for name in ("X", "Y", "sample_weight", "label_weight", "negative_weight", "cost", "gram"):
        np.testing.assert_array_equal(getattr(q, name), getattr(expected, name), err_msg=name)
    for name in ("sample", "label", "sign", "weight"):
        np.testing.assert_array_equal(getattr(q.pairs, name), getattr(expected.pairs, name), err_msg=name)
    same_kernel = not set(changes) & {"X", "kernel", "gamma", "degree", "coef0"}
    assert (q.kernel_factor is p.kernel_factor) == same_kernel
    assert (q.gram is p.gram) == same_kernel
    np.testing.assert_allclose(q.kernel_factor.features @ q.kernel_factor.features.T, expected.gram, atol=1e-10)
    assert p.beta == 1.5 and p.variant == "SwSb" and p.label_weight[0] == 2.0  # the original is unchanged


@pytest.mark.parametrize("changes, match", [
    (dict(variant="SwXb"), "variant"), (dict(kernel="cubic"), "kernel"), (dict(Y=Y[:8]), "same number of rows"),
    (dict(label_weight=[1.0, -1.0, 1.0]), "label_weight"), (dict(sample_weight=np.ones(8)), "sample_weight"),
    (dict(gamma=-1.0), "gamma"), (dict(kernel="precomputed"), "square"),
])
def test_replace_validates_what_changed(changes, match):
    with pytest.raises(ValueError, match=match):
        Problem(X, Y, "SwHb", "rbf").replace(**changes)


def test_replace_of_y_drops_the_class_labels():
    p = Problem.from_labels(X, np.array(["b", "a", "c"] * 3))
    assert list(p.replace(beta=2.0).classes) == ["a", "b", "c"]
    assert not hasattr(p.replace(Y=Ym), "classes")


def test_hard_w_warns_that_alpha_is_ignored():
    with pytest.warns(UserWarning, match="ignored"):
        Problem(X, Y, "HwSb", alpha=0.3)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(X=np.where(np.eye(9, 2) == 1, np.nan, X)), ValueError, "NaN"),
    (dict(X=np.where(np.eye(9, 2) == 1, np.inf, X)), ValueError, "infinity"),
    (dict(Y=np.where(np.eye(9, 3) == 1, np.nan, Y)), ValueError, "NaN"),
    (dict(Y=Y[:8]), ValueError, "same number of rows"),
    (dict(Y=2 * Y), ValueError, "only -1, 0 and 1"),
    (dict(Y=Y[:, :1]), ValueError, "at least 2 classes"),
    (dict(Y=np.c_[Y, np.zeros(9)]), ValueError, r"class\(es\) \[3\].*no member"),
    (dict(Y=np.c_[Y, -np.ones(9)]), ValueError, r"class\(es\) \[3\].*no member"),
    (dict(Y=Y[:, 0]), ValueError, "2-D membership"),
    (dict(alpha=-0.5), ValueError, r"open interval \(-0.5, 1\)"),
    (dict(alpha=1.0), ValueError, r"open interval"),
    (dict(alpha=np.inf), ValueError, "alpha must be finite"),
    (dict(alpha="0.1"), TypeError, "alpha must be a real number"),
    (dict(beta=0.0), ValueError, "beta must be > 0"),
    (dict(beta=-1.0), ValueError, "beta must be > 0"),
    (dict(bias_penalty=-0.1), ValueError, "bias_penalty must be >= 0"),
    (dict(variant="SwXb"), ValueError, "variant must be one of"),
    (dict(kernel="cosine"), ValueError, "kernel must be one of"),
    (dict(kernel="rbf", gamma=-1.0), ValueError, "gamma must be"),
    (dict(sample_weight=np.ones(8)), ValueError, r"sample_weight must have shape \(9,\)"),
    (dict(sample_weight=np.r_[np.ones(8), 0.0]), ValueError, "sample_weight must be > 0"),
    (dict(sample_weight=np.r_[np.ones(8), np.nan]), ValueError, "NaN"),
    (dict(label_weight=np.ones(2)), ValueError, r"label_weight must have shape \(3,\)"),
    (dict(label_weight=np.array([1.0, -1.0, 1.0])), ValueError, "label_weight must be > 0"),
    (dict(negative_weight=np.ones(2)), ValueError, r"negative_weight must have shape \(3,\)"),
    (dict(negative_weight=np.array([1.0, 0.0, 1.0])), ValueError, "negative_weight must be > 0"),
    (dict(negative_weight=np.array([1.0, np.nan, 1.0])), ValueError, "NaN"),
])
def test_bad_input_raises(kwargs, error, match):
    args = dict(X=X, Y=Y, variant="SwHb", kernel="linear")
    args.update(kwargs)
    with pytest.raises(error, match=match):
        Problem(args.pop("X"), args.pop("Y"), args.pop("variant"), args.pop("kernel"), **args)


G = rbf_kernel(X)


@pytest.mark.parametrize("gram, match", [
    (G[:, :5], "square kernel matrix"),
    (G + np.triu(np.full((9, 9), 0.1), 1), "not symmetric"),
    (G - 0.5 * np.eye(9), "not positive semidefinite"),
    (G - 2 * np.eye(9), "no positive eigenvalue"),
    (np.zeros((9, 9)), "no positive eigenvalue"),
])
def test_bad_precomputed_kernel_raises(gram, match):
    with pytest.raises(ValueError, match=match):
        Problem(gram, Y, kernel="precomputed")


def test_rank_bound():
    assert Problem(X, Y).rank_bound == 2
    assert Problem(X, Y, kernel="rbf").rank_bound == 9
    assert Problem(X, Y, kernel=lambda A, B: A @ B.T).rank_bound == 2  # from the eigen-factor


def test_bad_kernel_callable_raises():
    with pytest.raises(ValueError, match="returned shape"):
        Problem(X, Y, kernel=lambda A, B: A @ B.T[:, :2])
    with pytest.raises(ValueError, match="not positive semidefinite"):
        Problem(X, Y, kernel=lambda A, B: (A @ B.T) ** 2 - 1.0)


def test_precomputed_kernel_prediction_needs_training_columns():
    p = Problem(G, Y, kernel="precomputed")
    with pytest.raises(ValueError, match=r"shape \(n, 9\)"):
        p.kernel_matrix(G[:, :4])


@pytest.mark.parametrize("n", [9, 150])  # the largest eigenvalue by eigvalsh (small n) and by Lanczos
def test_psd_check_threshold_is_relative_to_the_largest_eigenvalue(n):
    Xn = np.random.default_rng(1).normal(size=(n, 3))
    Gn = rbf_kernel(Xn, gamma=0.2)
    s, U = np.linalg.eigh(Gn)
    Yn = np.eye(3)[np.arange(n) % 3]
    for depth, ok in [(1e-10, True), (1e-6, False)]:  # docs/theory.md §4.2: reject below −1e-8 · λ_max
        bent = Gn - (s[0] + depth * s[-1]) * np.outer(U[:, 0], U[:, 0])
        bent = 0.5 * (bent + bent.T)
        if ok:
            Problem(bent, Yn, kernel="precomputed")
        else:
            with pytest.raises(ValueError, match="not positive semidefinite"):
                Problem(bent, Yn, kernel="precomputed")


@pytest.mark.parametrize("scale", [1.0, 3.0])
def test_symmetry_check_threshold_is_relative_to_the_largest_entry(scale):
    """A kernel matrix counts as symmetric while max |G − Gᵀ| ≤ 1e-10 · max |G|: at that asymmetry exactly it is
    accepted, one ulp above it refused. G = scale · I, so the asymmetry d put in one upper entry is exact and the
    PSD test (which reads the lower triangle) holds."""
    limit = 1e-10 * scale
    for d, ok in [(limit, True), (np.nextafter(limit, 1.0), False)]:
        G = scale * np.eye(9)
        G[0, 1] = d
        if ok:
            assert Problem(G, Y, kernel="precomputed").n_samples == 9
        else:
            with pytest.raises(ValueError, match="not symmetric"):
                Problem(G, Y, kernel="precomputed")


@pytest.mark.parametrize("variant, alpha", [("SwSb", -0.4), ("SwHb", 0.7), ("HwHb", 0.0)])
def test_coupling_pinv_is_the_inverse_or_the_centring(variant, alpha):
    p = Problem(X, Y, variant, alpha=alpha)
    expected = np.eye(3) - 1 / 3 if p.hard_w else np.linalg.inv(p.coupling)
    np.testing.assert_allclose(p.coupling_pinv, expected, atol=1e-12)


@pytest.mark.parametrize("field, value", [("X", 1e200), ("beta", 1e300), ("bias_penalty", 1e120)])
def test_magnitudes_beyond_float64_squares_are_named_errors(field, value):
    """X ×1e200 or β = 1e300 broke the solvers' factorizations with a raw LinAlgError; X ×1e99 still solves."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(12, 3)), np.arange(12) % 3
    kwargs = {"beta": 1.0, "bias_penalty": 1.0}
    if field == "X":
        X = X * value
    else:
        kwargs[field] = value
    with pytest.raises(ValueError, match=f"{field} has magnitude"):
        Problem.from_labels(X, y, "SwSb", **kwargs)
    fine = Problem.from_labels(rng.normal(size=(12, 3)) * 1e99, y, "SwSb")
    assert ovn_cvx.solve(fine, "mm").success


def _costs_problem(beta=1.0, sample_weight=None, label_weight=None, **kwargs):
    rng = np.random.default_rng(0)
    return Problem.from_labels(rng.normal(size=(12, 3)), np.arange(12) % 3, beta=beta, sample_weight=sample_weight,
                               label_weight=label_weight, **kwargs)


@pytest.mark.parametrize("inside", [True, False])
@pytest.mark.parametrize("end", ["low", "high"])
@pytest.mark.parametrize("source", ["beta", "sample_weight", "label_weight"])
def test_pair_costs_at_either_end_of_their_range(source, end, inside):
    """c_p = β s_i v_k just inside [1e-100, 1e100] is accepted, just outside it is a ValueError naming the three (β
    above 1e100 is named by its own magnitude check first)."""
    lo, hi = COST_RANGE
    value = (lo if end == "low" else hi) * (1.0 if inside else (0.5 if end == "low" else 2.0))
    weights = {"beta": value} if source == "beta" else {source: np.full(12 if source == "sample_weight" else 3, value)}
    if inside:
        costs = _costs_problem(**weights).cost
        assert costs.min() == costs.max() == value
    else:
        product = r"beta \* sample_weight\[i\] \* label_weight"
        named = "beta has magnitude" if (source, end) == ("beta", "high") else product
        with pytest.raises(ValueError, match=named):
            _costs_problem(**weights)


def test_pair_costs_are_checked_as_products():
    """Each factor inside the range, their product outside it (or beyond the float range): rejected; a product
    back inside: accepted. ``replace`` checks the same rule."""
    with pytest.raises(ValueError, match="range from 1e-120"):
        _costs_problem(beta=1e-60, label_weight=np.array([1e-60, 1.0, 1.0]))
    with pytest.raises(ValueError, match="range from 1 to inf"):
        _costs_problem(sample_weight=np.r_[1e300, np.ones(11)], label_weight=np.array([1e300, 1.0, 1.0]))
    p = _costs_problem(beta=1e-90, label_weight=np.array([1e180, 1.0, 1.0]))
    assert (p.cost.min(), p.cost.max()) == (1e-90, pytest.approx(1e90))
    with pytest.raises(ValueError, match="pair costs"):
        p.replace(beta=1e-79)  # 1e101 for class 0
    with pytest.raises(ValueError, match="pair costs"):
        p.replace(label_weight=np.array([1.0, 1e-11, 1.0]))  # 1e-101 for class 1


@pytest.mark.parametrize("inside", [True, False])
def test_negative_weight_counts_in_the_cost_range_on_negative_pairs_only(inside):
    """u_k multiplies only a known negative's cost: at the range's low end just inside/outside on a ±1 problem, and
    no effect at all on a problem without negatives."""
    lo = COST_RANGE[0]
    factor = np.array([lo if inside else lo / 2, 1.0, 1.0])
    plain = Problem(X, Y, negative_weight=np.array([lo / 2, 1.0, 1.0]))  # no negative pair: nothing to check
    assert plain.cost.min() == 1.0
    if not inside:
        with pytest.raises(ValueError, match="negative_weight"):
            Problem(X, 2.0 * Y - 1.0, negative_weight=factor)
        return
    signed = Problem(X, 2.0 * Y - 1.0, negative_weight=factor)
    assert signed.cost.min() == lo and signed.cost[signed.pairs.sign > 0].min() == 1.0


@pytest.mark.parametrize("weights", [dict(beta=1e100, label_weight=np.array([1e-200, 1.0, 1.0])),
                                     dict(sample_weight=np.where(np.arange(12) % 2, 1e100, 1e-100))],
                         ids=["beta-1e100-and-1e-100", "samples-1e100-next-to-1e-100"])
@pytest.mark.parametrize("form", ["auto", "matrix-free"])
def test_extreme_costs_inside_the_range_get_an_answer_with_its_bound(weights, form):
    """The corners of the accepted range: no raw error, a finite proven bound, and success only within it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = ovn_cvx.solve(_costs_problem(**weights), "mm", form=form)
    bound = result.relative_gap_bound
    assert np.isfinite(result.objective) and not np.isnan(bound)
    assert result.success == (bound <= 1e-6)


def test_gram_product_without_the_gram_equals_the_gram_times_coef(monkeypatch):
    """G @ A by blocks over the rows with nonzero coefficients (the Gram not built: an RBF problem, whose Gram is not
    checked up front) equals the Gram's own product, the blocks small enough here to need several, and a zero row of
    A skipped."""
    kernel = "rbf"
    from ovn_cvx import kernels

    rng = np.random.default_rng(0)
    X, A = rng.normal(size=(30, 4)), rng.normal(size=(30, 3))
    A[[2, 7]] = 0.0
    blocked = Problem.from_labels(X, np.arange(30) % 3, kernel=kernel)
    monkeypatch.setattr(kernels, "KERNEL_BLOCK", 5 * 28)  # 5 rows a block against the 28 support rows
    product = blocked.gram_product(A)
    assert "gram" not in vars(blocked)
    full = Problem.from_labels(X, np.arange(30) % 3, kernel=kernel)
    np.testing.assert_allclose(product, full.gram @ A, rtol=0, atol=1e-12)
