"""Platt's sigmoid calibration (``rules.platt_sigmoids``, ``rules.PlattSigmoid``, ``rules.fit_calibrators``) against
the independent oracle, scikit-learn's ``CalibratedClassifierCV(method="sigmoid")`` fit (its private
``_SigmoidCalibration``, read here only as the oracle): the probabilities within ``PLATT_ATOL`` of scikit-learn's and
Platt's objective no larger than at scikit-learn's (the optimum of a convex problem: ours may be lower)."""
import numpy as np
import pytest
from scipy.special import expit
from sklearn.calibration import _SigmoidCalibration
from sklearn.isotonic import IsotonicRegression
from sklearn.model_selection import KFold

from ovn_cvx import OvNClassifier
from ovn_cvx.labels import NEVER
from ovn_cvx.rules import PLATT_GTOL, PlattSigmoid, _platt_done, _platt_lbfgs, fit_calibrators, platt_sigmoids

#: the agreement of our probabilities with scikit-learn's: its L-BFGS stops at a gradient of 1e-6
PLATT_ATOL = 1e-6


def _log_loss(a, b, f, member, w):
    """Platt's objective (the smoothed targets' log-loss) of the sigmoid (a, b) on one column's values, written from
    Platt's paper (not the package's code)."""
    positives, negatives = w @ member, w @ ~member
    target = np.where(member, (positives + 1) / (positives + 2), 1 / (negatives + 2))
    z = a * f + b  # P = σ(−z): −log P = log(1 + e^z), −log(1 − P) = log(1 + e^−z)
    return w @ (target * np.logaddexp(0.0, z) + (1 - target) * np.logaddexp(0.0, -z))


def _columns():
    """Decision values of six labels: ordinary, large (scaled by the fit), a label left out of a fold (NEVER on a
    third of the rows), constant (a degenerate label: singular Hessian), separable with a margin (the smoothed
    targets keep the optimum finite, but far out: large |a|), and separable at a threshold."""
    rng = np.random.default_rng(3)
    n = 240
    F = rng.normal(size=(n, 6))
    member = rng.random((n, 6)) < expit(2.0 * F)
    F[:, 1] *= 100.0
    F[: n // 3, 2] = NEVER
    F[:, 3] = 0.7
    F[:, 4] = np.where(F[:, 4] > 0, 0.05, -0.05) + 0.005 * F[:, 4]  # a margin of 0.1
    member[:, 4] = F[:, 4] > 0
    member[:, 5] = F[:, 5] > 0.2
    return F, member, rng.uniform(0.2, 3.0, size=n)


def _assert_scikit_learns_fit(A, B, F, member, w):
    """Every column's sigmoid (A_k, B_k) against scikit-learn's on the column's known values."""
    for k in range(F.shape[1]):
        known = F[:, k] > NEVER
        f, truth = F[known, k], member[known, k]
        weights = np.ones(known.sum()) if w is None else w[known]
        theirs = _SigmoidCalibration().fit(f, truth, None if w is None else w[known])
        np.testing.assert_allclose(PlattSigmoid(A[k], B[k]).predict(f), theirs.predict(f), rtol=0, atol=PLATT_ATOL)
        assert _log_loss(A[k], B[k], f, truth, weights) <= _log_loss(theirs.a_, theirs.b_, f, truth, weights) + 1e-9


@pytest.mark.parametrize("weighted", [False, True])
def test_platt_sigmoids_equal_scikit_learns(weighted):
    F, member, w = _columns()
    w = w if weighted else None
    A, B = platt_sigmoids(F, member, w)
    _assert_scikit_learns_fit(A, B, F, member, w)
    assert A[4] < -50.0  # the separable column runs far out (scikit-learn's own fit: the same)
    assert np.isfinite(A).all() and np.isfinite(B).all()


@pytest.mark.parametrize("largest", [np.nextafter(30.0, 0.0), 30.0, 31.0])
def test_platt_sigmoids_equal_scikit_learns_around_its_scaling_threshold(largest):
    """scikit-learn scales values from size 30 on (just below, at and above that size); ours, scaled always, give
    the same sigmoid."""
    rng = np.random.default_rng(5)
    f = rng.normal(size=200)
    f = largest * f / np.abs(f).max()
    member = rng.random(200) < expit(0.2 * f)
    A, B = platt_sigmoids(f[:, None], member[:, None])
    _assert_scikit_learns_fit(A, B, f[:, None], member[:, None], None)


def _stationary(A, B, F, member, w):
    """The largest component of each column's gradient of Platt's objective in (A·max|f|, B) at (A, B), relative to
    the column's total weight, written from Platt's paper: zero at the optimum of the convex problem."""
    sizes = []
    for k in range(F.shape[1]):
        f, truth, weights = F[:, k], member[:, k], w
        positives, negatives = weights @ truth, weights @ ~truth
        target = np.where(truth, (positives + 1) / (positives + 2), 1 / (negatives + 2))
        r = weights * (target - expit(-(A[k] * f + B[k])))
        sizes.append(max(abs(r @ f) / np.abs(f).max(), abs(r.sum())) / weights.sum())
    return np.array(sizes)


@pytest.mark.parametrize("weight", [1e-6, 1.0, 1e6])
def test_platt_sigmoids_do_not_depend_on_the_scale_of_the_values(weight):
    """Values s·F give the sigmoid (A/s, B) for every s from 1e-9 to 1e9, at every scale of the weights: the fit is
    stationary to round-off (Platt's gradient, relative to the weights, below 1e-12), and where scikit-learn's own
    fit is accurate (values of size 1 and more, which it scales from 30 on; weights of size 1 and more) its
    probabilities are ours. On unscaled values of size 1e-6 the slope's Hessian entry falls below the 1e-12 ridge
    (ours stopped early, 4e-7 off); at 1e-9, or with weights of size 1e-6 (its absolute gradient test), scikit-learn's
    fit keeps the start A = 0."""
    rng = np.random.default_rng(1)
    f = rng.normal(size=200)
    member = (f + rng.normal(size=200)) > 0
    w = weight * rng.uniform(0.2, 3.0, size=200)
    A1, B1 = platt_sigmoids(f[:, None], member[:, None], w)
    assert A1[0] < (-1.0 if weight > 1e-3 else -1e-5)  # a slope that matters (tiny weights: targets near 1/2)
    for s in (1e-9, 1e-6, 1e-3, 1.0, 1e3, 1e6, 1e9):
        A, B = platt_sigmoids(s * f[:, None], member[:, None], w)
        np.testing.assert_allclose([A[0] * s, B[0]], [A1[0], B1[0]], rtol=1e-9, atol=0)
        assert _stationary(A, B, s * f[:, None], member[:, None], w)[0] <= 1e-12
        if s >= 1.0 and weight >= 1.0:
            _assert_scikit_learns_fit(A, B, s * f[:, None], member[:, None], w)


@pytest.mark.parametrize("max_iter", [0, 1, 3])
@pytest.mark.parametrize("weighted", [False, True])
def test_columns_newton_does_not_finish_go_to_lbfgs(max_iter, weighted, monkeypatch):
    """A column whose Newton fit does not reach PLATT_GTOL is finished by L-BFGS on the same objective: the same fit
    as scikit-learn's. No iteration at all sends every column there; fifty (the default) none."""
    F, member, w = _columns()
    w = w if weighted else None
    finished = []

    def spy(a, b, f, *args):
        finished.append(f)
        return _platt_lbfgs(a, b, f, *args)

    monkeypatch.setattr("ovn_cvx.rules._platt_lbfgs", spy)
    A, B = platt_sigmoids(F, member, w, max_iter=max_iter)
    _assert_scikit_learns_fit(A, B, F, member, w)
    assert (len(finished) == F.shape[1]) if max_iter == 0 else (len(finished) > 0)
    finished.clear()
    platt_sigmoids(F, member, w)
    assert finished == []


@pytest.mark.parametrize("total", [1e-6, 1.0, 250.0])
def test_the_fit_is_done_within_platt_gtol(total):
    """The stopping rule's boundary, relative to the column's total weight: a gradient component at PLATT_GTOL times
    it is done, the next float above is not, nor NaN; and the rule is stricter than scikit-learn's own stop (1e-6)."""
    at = PLATT_GTOL * total
    above = np.nextafter(at, 1.0)
    ga = np.array([at, -at, above, 0.0, np.nan, 0.0])
    gb = np.array([-at, 0.0, 0.0, -above, 0.0, np.nan])
    np.testing.assert_array_equal(_platt_done(ga, gb, total), [True, True, False, False, False, False])
    assert PLATT_GTOL < 1e-6


def test_platt_sigmoids_stop_at_the_boundary(monkeypatch):
    """With no Newton iteration, the start is kept when its gradient is within PLATT_GTOL of the total weight (just
    inside) and handed to L-BFGS when it is not (just outside)."""
    F, member, _ = _columns()
    f, member = F[:, :1], member[:, :1]
    positives = member.sum()
    target = np.where(member, (positives + 1) / (positives + 2), 1 / (member.size - positives + 2))
    start = np.log((member.size - positives + 1) / (positives + 1))
    r = target - expit(-start)
    gradient = max(abs(r.sum()), abs((r * f / np.abs(f).max()).sum())) / member.size
    finished = []
    monkeypatch.setattr("ovn_cvx.rules._platt_lbfgs", lambda a, b, *args: finished.append(a) or (a, b))
    monkeypatch.setattr("ovn_cvx.rules.PLATT_GTOL", gradient * (1 + 1e-12))
    A, B = platt_sigmoids(f, member, max_iter=0)
    assert (A[0], B[0]) == (0.0, start)
    assert finished == []
    monkeypatch.setattr("ovn_cvx.rules.PLATT_GTOL", gradient * (1 - 1e-12))
    platt_sigmoids(f, member, max_iter=0)
    assert finished == [0.0]


@pytest.mark.parametrize("weighted", [False, True])
def test_fit_calibrators_fit_each_column_on_its_known_values(weighted):
    F, member, w = _columns()
    w = w if weighted else None
    sigmoids = fit_calibrators(F, member, w)
    A, B = platt_sigmoids(F, member, w)
    assert sigmoids == [PlattSigmoid(a, b) for a, b in zip(A, B)]
    assert all(isinstance(s.a_, float) and isinstance(s.b_, float) for s in sigmoids)
    for k, isotonic in enumerate(fit_calibrators(F, member, w, "isotonic")):
        known = F[:, k] > NEVER
        theirs = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(
            F[known, k], member[known, k], sample_weight=None if w is None else w[known])
        grid = np.linspace(-3.0, 3.0, 13) * np.abs(F[known, k]).max()
        np.testing.assert_array_equal(isotonic.predict(grid), theirs.predict(grid))
    with pytest.raises(ValueError, match="method must be one of.*'platt'"):
        fit_calibrators(F, member, w, "platt")


@pytest.mark.degenerate_labels  # a fold of the multilabel data
@pytest.mark.parametrize("kind", ["multiclass", "binary", "multilabel"])
def test_predict_proba_is_scikit_learns_sigmoid_on_out_of_fold_values(multiclass_data, multilabel_data, kind):
    """The estimator's probabilities rebuilt independently: the out-of-fold decision values of its internal folds,
    scikit-learn's sigmoid per label (multiclass: normalized over the classes; binary: one sigmoid on the decision
    function, P(class 1))."""
    if kind == "multilabel":
        X, y, w = multilabel_data
        member = y == 1
    else:
        X, Y = multiclass_data
        y = np.argmax(Y, axis=1)
        X, y = (X[y < 2], y[y < 2]) if kind == "binary" else (X, y)
        w = np.random.default_rng(1).uniform(0.5, 2.0, size=y.size)
        member = (y == 1)[:, None] if kind == "binary" else y[:, None] == np.arange(3)
    est = OvNClassifier(probability=True).fit(X, y, sample_weight=w)
    fold_model = OvNClassifier()
    values = np.zeros(member.shape)
    for train, test in KFold(3, shuffle=True, random_state=0).split(X, y):
        values[test] = fold_model.fit(X[train], y[train], sample_weight=w[train]).decision_function(X[test]) \
            .reshape(test.size, -1)
    G = est.decision_function(X).reshape(X.shape[0], -1)
    P = np.column_stack([_SigmoidCalibration().fit(values[:, k], member[:, k], w).predict(G[:, k])
                         for k in range(member.shape[1])])
    P = {"multiclass": P / P.sum(axis=1, keepdims=True), "binary": np.column_stack([1 - P, P]),
         "multilabel": P}[kind]
    np.testing.assert_allclose(est.predict_proba(X), P, rtol=0, atol=PLATT_ATOL)
    assert len(est.calibrators_) == (1 if kind == "binary" else member.shape[1])
    assert all(isinstance(model, PlattSigmoid) for model in est.calibrators_)


def test_values_that_are_not_decision_values_name_f():
    """A NaN value was taken for a value left out (NEVER) and silently dropped from the fit; an isotonic fit of a
    column without a known value raised scikit-learn's "0 sample(s)". Platt's fit of such a column is the prior's
    (A = 0, B = log(1/1) = 0: probability 1/2)."""
    F, member, _ = _columns()
    F[7, 0] = np.nan
    for fit in (platt_sigmoids, fit_calibrators):
        with pytest.raises(ValueError, match="F must hold finite decision values"):
            fit(F, member)
    F[:, 0] = NEVER
    with pytest.raises(ValueError, match="F: column 0 has no known value"):
        fit_calibrators(F, member, method="isotonic")
    A, B = platt_sigmoids(F, member)
    assert (A[0], B[0]) == (0.0, 0.0)
