"""The interior point's iterations over the classes still moving (a separable problem, once some classes are fixed):
the same iterations, objectives, bounds and answers as the iterations over all classes (the window switched off),
the answer against the tight CVXPY reference, the stepper's work over the moving classes' pairs only, the iterates
over all pairs rebuilt with the fixed classes' entries exactly, and the restricted stepper against the whole one."""
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.preprocessing import StandardScaler

import ovn_cvx
from ovn_cvx import Problem
from ovn_cvx.solvers.cvxpy_solver import TIGHT_CLARABEL
from ovn_cvx.solvers.mm import forms
from ovn_cvx.solvers.mm.common import block_pairs
from ovn_cvx.solvers.mm.finish import EXACT_BELOW, INTERIOR_GAP_TOL
from ovn_cvx.solvers.mm.interior import InteriorPoint
from ovn_cvx.solvers.mm.primal import PrimalStepper
from ovn_cvx.solvers.verdict import GAP_TOL
from ovn_cvx.testing import assert_matches_reference

from test_mm_block_crossover import crossing_problem
from test_mm_linear_default import default_problem


def generated(n_samples, n_classes, seed, n_features=20, kind="dense"):
    """The estimator's default linear problem on the generator's classes (SwSb, every non-member a negative, free
    biases, β = 16/κ₀): K independent QPs whose classes converge at different speeds. ``kind``: "sparse" (CSR X, a
    class's own rows), "unknown" (a tenth of the labels unknown: no row matrix all classes share)."""
    X, y = make_classification(n_samples=n_samples, n_features=n_features, n_informative=n_features // 2,
                               n_classes=n_classes, n_clusters_per_class=2, flip_y=0.05, random_state=seed)
    X = StandardScaler().fit_transform(X)
    Y = 2.0 * (y[:, None] == np.arange(n_classes)) - 1.0
    beta = 16.0 / float(np.mean(np.sum(X * X, axis=1)))
    if kind == "unknown":
        Y[np.random.default_rng(seed).random(Y.shape) < 0.1] = 0.0
    return Problem(sp.csr_matrix(X) if kind == "sparse" else X, Y, "SwSb", beta=beta, bias_penalty=0.0)


PROBLEMS = {
    "N=2000, K=5": lambda: generated(2000, 5, 0),
    "N=2000, K=10": lambda: generated(2000, 10, 1),
    "N=5000, K=8": lambda: generated(5000, 8, 1),
    "N=20000, K=5": lambda: generated(20000, 5, 0),
    "sparse X": lambda: generated(2000, 5, 0, kind="sparse"),
    "unknown labels": lambda: generated(2000, 5, 0, kind="unknown"),
    "unknown labels, small blocks": lambda: generated(2000, 5, 0, n_features=8, kind="unknown"),
    "crossing fixture": crossing_problem,
    "two features": lambda: default_problem(1500, n_classes=4, seed=3),
}


def _solve(problem, monkeypatch, window=True, **options):
    """The fast solver's result and its interior point, with the window on or off."""
    runs = []
    run = InteriorPoint.run

    def recorded(self, *args, **kwargs):
        runs.append(self)
        return run(self, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(InteriorPoint, "run", recorded)
        if not window:
            patch.setattr(InteriorPoint, "narrow", lambda self, settled: settled)
        result = ovn_cvx.solve(problem, method="mm", **options)
    assert len(set(map(id, runs))) == 1
    return result, runs[0]


@pytest.mark.parametrize("gap_tol", [GAP_TOL, 1e-4])
@pytest.mark.parametrize("name", PROBLEMS)
def test_the_window_takes_the_same_steps(name, gap_tol, monkeypatch):
    """Both regimes: the exact finish (default gap_tol) and an iterate proven within 1e-4 (finish "interior").
    The same iterations and finish; objectives along the way and at the end equal to 1e-12 (the fixed classes' part of
    F added as a constant, and one class's products by a matrix–vector product, change the round-off); the bounds
    equal to 1e-6 where they are not at round-off (the interior point's own 1e-9); the coefficients as close as the
    bounds prove."""
    problem = PROBLEMS[name]()
    result, ipm = _solve(problem, monkeypatch, gap_tol=gap_tol)
    whole, control = _solve(problem, monkeypatch, window=False, gap_tol=gap_tol)
    assert ipm.window is not None and ipm.classes.size < problem.n_classes  # the window was used
    assert control.window is None and control.fixed.any()
    # the same classes fixed, by settling or by their own crossover, from the same partitions: global class indices
    assert ipm.tried == control.tried and ipm.held.keys() == control.held.keys()
    assert result.status == whole.status == "optimal"
    assert result.iterations == whole.iterations and result.finish == whole.finish
    np.testing.assert_allclose(result.history, whole.history, rtol=1e-12)
    assert result.objective == pytest.approx(whole.objective, rel=1e-12)
    assert result.relative_gap_bound == pytest.approx(whole.relative_gap_bound, rel=1e-6, abs=INTERIOR_GAP_TOL)
    if gap_tol >= EXACT_BELOW:
        assert result.finish == "interior"
    else:
        assert max(result.relative_gap_bound, whole.relative_gap_bound) <= INTERIOR_GAP_TOL
    # R = ½‖W‖² makes F strongly convex in W: F(W) − F* ≥ ½‖W − W*‖², so each answer is within √(2·bound) of W*
    apart = np.sqrt(2 * result.gap_bound) + np.sqrt(2 * whole.gap_bound)
    assert np.linalg.norm(result.coef - whole.coef) <= apart


@pytest.fixture(scope="module")
def small_and_reference():
    """600 rows, 5 classes, 20 features, and its tight CLARABEL optimum."""
    problem = generated(600, 5, 2)
    reference = ovn_cvx.solve(problem, method="cvxpy", **TIGHT_CLARABEL)
    assert reference.status == "optimal"
    return problem, reference


@pytest.mark.parametrize("gap_tol", [GAP_TOL, 1e-4])
def test_the_windowed_answer_against_the_reference(small_and_reference, gap_tol, monkeypatch):
    """The exact finish matches the reference; an iterate proven within 1e-4 holds the reference's optimum within
    its bound, and its W within √(2·bound) of the reference's (F − F* ≥ ½‖W − W*‖²)."""
    problem, reference = small_and_reference
    result, ipm = _solve(problem, monkeypatch, gap_tol=gap_tol)
    assert ipm.window is not None and result.success
    if gap_tol < EXACT_BELOW:
        assert_matches_reference(result, problem, reference=reference)
    assert result.objective - reference.objective <= result.gap_bound + 1e-9 * abs(reference.objective)
    assert 0.5 * np.sum((result.coef - reference.coef) ** 2) <= result.gap_bound + 1e-9 * abs(reference.objective)


def test_the_stepper_works_on_the_moving_classes_only(monkeypatch):
    """Each product of the stepper's fits (Σ_p v_p φ̃_p per class) covers the pairs of the classes not fixed, and
    once classes are fixed that is fewer than all pairs."""
    problem = generated(2000, 5, 0)
    bounds = problem.pairs.class_bounds(problem.n_classes)
    sizes, runs = [], []
    products, run = PrimalStepper.class_products, InteriorPoint.run

    def recorded(self, *args, **kwargs):
        runs.append(self)
        return run(self, *args, **kwargs)

    def counted(self, values):
        fixed = runs[0].fixed
        if not fixed.all():
            sizes.append((values.size, int(np.diff(bounds)[~fixed].sum())))
        return products(self, values)

    monkeypatch.setattr(InteriorPoint, "run", recorded)
    monkeypatch.setattr(PrimalStepper, "class_products", counted)
    assert ovn_cvx.solve(problem, method="mm").success
    done, expected = np.array(sizes).T
    np.testing.assert_array_equal(done, expected)
    assert done[0] == len(problem.pairs) and done[-1] < len(problem.pairs) / 2


def test_the_iterates_over_all_pairs_hold_the_fixed_classes_exactly(monkeypatch):
    """The iterate and the one before it rebuilt over all pairs: the classes the first window left out hold exactly
    the entries the iterations over all classes keep for them (the iterations are the same up to that window), in θ,
    the residuals, the four vectors and what the classes were fixed at."""
    problem = generated(2000, 10, 1)
    left_out = []
    narrow = InteriorPoint.narrow

    def recorded(self, settled):
        before = self.classes.copy()
        kept = narrow(self, settled)
        if not left_out and self.window is not None:
            left_out.extend(np.setdiff1d(before, self.classes))
        return kept

    monkeypatch.setattr(InteriorPoint, "narrow", recorded)
    _, ipm = _solve(problem, monkeypatch)
    monkeypatch.undo()
    _, control = _solve(problem, monkeypatch, window=False)
    assert left_out and ipm.classes.size < problem.n_classes - len(left_out)  # and a later window narrowed further
    pairs = block_pairs(problem.pairs.class_bounds(problem.n_classes), left_out)
    for got, expected in zip(ipm.iterates(), (control.point, control.previous)):
        for name in ("xi", "s", "u", "nu"):
            np.testing.assert_array_equal(getattr(got, name)[pairs], getattr(expected, name)[pairs])
    point = ipm.iterates()[0]
    np.testing.assert_array_equal(point.theta.params[0][left_out], control.point.theta.params[0][left_out])
    np.testing.assert_array_equal(point.theta.r[pairs], control.point.theta.r[pairs])
    for k in left_out:
        for got, expected in zip(ipm.held[k], control.held[k]):
            np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("kind", ["dense", "sparse", "unknown"])
def test_a_window_of_the_stepper_is_its_classes_alone(kind):
    """The restricted stepper's fit, relaxation and R against the whole stepper's for the same classes (a separable
    problem's blocks are independent): the same θ, residuals and R = ½ Σ_k ‖w_k‖²; a coupled problem has none."""
    problem = generated(300, 5, 0, n_features=8, kind=kind)
    stepper = forms.make_stepper(problem, "primal")
    rng = np.random.default_rng(0)
    n, classes = len(problem.pairs), np.array([1, 3, 4])
    pairs = block_pairs(stepper.bounds, classes)
    weight, target = rng.uniform(0.1, 2.0, n), rng.normal(size=n)
    full = stepper.system(weight).fit(target)
    window, state = stepper.window(classes, full)
    np.testing.assert_array_equal(state.params[0], full.params[0][classes])
    np.testing.assert_array_equal(state.r, full.r[pairs])
    fitted = window.system(weight[pairs]).fit(target[pairs])
    np.testing.assert_allclose(fitted.params[0], full.params[0][classes], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fitted.r, full.r[pairs], rtol=1e-10, atol=1e-12)
    W = fitted.params[0][:, :-1]
    assert fitted.reg == pytest.approx(0.5 * np.sum(W * W), rel=1e-12)
    t = np.array([0.25, 1.0, 0.5])
    relaxed = window.relax(fitted, state, t)
    np.testing.assert_allclose(relaxed.params[0], state.params[0] + t[:, None] * (fitted.params[0] - state.params[0]))
    np.testing.assert_allclose(relaxed.r, state.r + np.repeat(t, np.diff(window.bounds)) * (fitted.r - state.r))
    coupled = problem.replace(alpha=0.1)
    with pytest.raises(ValueError, match="separable"):
        forms.make_stepper(coupled, "primal").window(classes, full)
