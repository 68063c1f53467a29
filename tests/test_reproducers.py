"""The robustness study's reproducers: each call ends in a certified answer or an error that names the argument.

Every case is the study's own call (or its smallest form); never a raw LinAlgError, never a hang.
"""
import signal
from contextlib import contextmanager

import numpy as np
import pytest

import ovn_cvx
from ovn_cvx import OvNClassifier, Problem, datasets
from ovn_cvx.testing import assert_matches_reference


@contextmanager
def time_limit(seconds: int):
    """Fail (instead of hanging the suite) when the block runs longer than ``seconds`` (POSIX alarm)."""
    def expired(signum, frame):
        raise TimeoutError(f"did not return within {seconds} s")
    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="module")
def data():
    X, Y = datasets.make_data("multiclass", n_samples=30, n_features=3, n_classes=3, seed=0)
    return X, Y.argmax(axis=1)


@pytest.mark.parametrize("weights, named", [
    (dict(sample_weight=np.full(30, 1e300)), "sample_weight"),
    (dict(label_weight=np.array([1e300, 1.0, 1.0])), "label_weight"),
    (dict(label_weight=np.array([1e-300, 1.0, 1.0])), "label_weight"),
    (dict(beta=5e-324), "beta"),
], ids=["sample_weight=1e300", "label_weight=1e300", "label_weight=1e-300", "beta=5e-324"])
def test_extreme_weights_are_named(data, weights, named):
    """They ended in LinAlgError("MM block 0 of the majorizer is not positive definite")."""
    with pytest.raises(ValueError, match=rf"{named}.*range from"):
        Problem.from_labels(*data, **weights)


@pytest.mark.parametrize("fit", [
    lambda X, y: OvNClassifier(class_weight={0: 1e300}).fit(X, y),
    lambda X, y: OvNClassifier().fit(X, y, sample_weight=np.full(len(y), 1e300)),
], ids=["class_weight", "sample_weight"])
def test_extreme_estimator_weights_are_named(data, fit):
    """The estimator hands its weights to the problem model, whose check names them."""
    with pytest.raises(ValueError, match=r"sample_weight\[i\] \* label_weight\[k\].*class_weight"):
        fit(*data)


def test_rbf_of_identical_rows_far_from_the_origin_is_one_and_the_answer_certified():
    """κ of two identical rows at |x| ≈ 6e6 was 0.999414910489; the solver then certified the optimum of the
    perturbed Gram matrix, 2.6e-5 relative above the optimum of the problem as given."""
    rng = np.random.default_rng(0)
    X = 6e6 + rng.normal(size=(20, 4))
    X[7] = X[3]
    problem = Problem.from_labels(X, np.arange(20) % 3, kernel="rbf", gamma=0.5)
    assert problem.gram[3, 7] == problem.gram[7, 3] == 1.0
    Xl = X.astype(np.longdouble)
    exact = np.exp(-0.5 * ((Xl[:, None, :] - Xl[None, :, :]) ** 2).sum(axis=2))
    assert np.abs(problem.gram - exact).max() <= 1e-14
    result = ovn_cvx.solve(problem, method="mm")
    assert result.success
    # the problem as given: the same optimum as on the centred data, whose Gram matrix never cancelled
    assert_matches_reference(result, Problem.from_labels(X - 6e6, np.arange(20) % 3, kernel="rbf", gamma=0.5),
                             ftol=None)


def test_hourglass_with_an_unreachable_margin_is_named():
    """make_hourglass(10, margin=0.7071) never returned."""
    with time_limit(20), pytest.raises(ValueError, match="margin must be at most"):
        datasets.make_hourglass(10, margin=0.7071)


@pytest.mark.parametrize("unit", ["D", "ns"])
def test_datetime_patterns_are_named(data, unit):
    """A datetime64 X with the poly kernel raised a raw LinAlgError (or, depending on its unit, silently became days
    or nanoseconds after 1970)."""
    X = (np.datetime64("2020-01-01") + np.arange(30).reshape(-1, 1).astype("timedelta64[D]")).astype(
        f"datetime64[{unit}]")
    y = data[1]
    with pytest.raises(TypeError, match="X holds dates"):
        Problem.from_labels(X, y, kernel="poly")
    with pytest.raises(TypeError, match="X holds dates"):
        OvNClassifier(kernel="poly").fit(X, y)
    fitted = OvNClassifier().fit(*data)
    with pytest.raises(TypeError, match="X holds dates"):
        fitted.predict(np.tile(X, 3))
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"when": X.ravel(), "size": np.arange(30.0)})
    with pytest.raises(TypeError, match=r"X holds dates or durations \(datetime64"):
        Problem.from_labels(frame, y)


@pytest.mark.parametrize("argument", ["rtol", "ftol", "ctol"])
@pytest.mark.parametrize("value", ["1e-6", -1.0, np.nan])
def test_reference_tolerances_are_named(data, argument, value):
    result = ovn_cvx.solve(Problem.from_labels(*data), method="mm")
    with pytest.raises((TypeError, ValueError), match=rf"^{argument} must"):
        assert_matches_reference(result, **{argument: value})


@pytest.mark.parametrize("parameter, value", [("degree", 10**30), ("coef0", 1e200), ("gamma", 1e300)])
def test_kernel_overflow_names_the_parameter(data, parameter, value):
    with pytest.raises(ValueError, match=rf"poly kernel with .*{parameter}="):
        Problem.from_labels(*data, kernel="poly", **{parameter: value})


def test_matrix_free_form_with_an_all_zero_row():
    X = np.random.default_rng(0).normal(size=(40, 5))
    X[3] = 0.0
    result = ovn_cvx.solve(Problem.from_labels(X, np.arange(40) % 4), method="mm", form="matrix-free")
    assert result.success and result.form == "matrix-free"
    assert_matches_reference(result)  # the certified answer is the CVXPY reference's, not only its own bound's
    np.testing.assert_array_equal(result.decision_function(X[3:4])[0], result.b)  # the zero row scores b
