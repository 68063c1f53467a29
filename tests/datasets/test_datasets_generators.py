"""The 2-D generators: determinism, shapes, and the geometry each one documents."""
import numpy as np
import pytest
import sklearn.datasets

from ovn_cvx import datasets
from ovn_cvx.datasets._generators import HOURGLASS_MAX_MARGIN


@pytest.mark.parametrize("make", [
    lambda seed: datasets.make_unseen_labelset(30, random_state=seed),
    lambda seed: datasets.make_hourglass(50, noise=0.05, random_state=seed),
    lambda seed: datasets.make_moons(40, random_state=seed),
    lambda seed: datasets.make_linear(40, n_features=3, flip=0.1, random_state=seed)[:2],
    lambda seed: datasets.make_parallel(40, offset=(1.0, 2.0), random_state=seed),
])
def test_deterministic_with_random_state(make):
    first, again, other = make(0), make(0), make(1)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0], other[0])


def test_unseen_labelset():
    X, Y = datasets.make_unseen_labelset(41, noise=0.0)
    assert X.shape == (41, 2) and Y.shape == (41, 2)
    np.testing.assert_array_equal(Y[:20], np.tile([1, 0], (20, 1)))
    np.testing.assert_array_equal(Y[20:], np.tile([1, 1], (21, 1)))
    np.testing.assert_array_equal(X[:20], np.tile([2.0, -2.0], (20, 1)))
    np.testing.assert_array_equal(X[20:], np.tile([2.0, 2.0], (21, 1)))
    X, Y = datasets.make_unseen_labelset(2000, noise=0.3, random_state=0)
    np.testing.assert_allclose(X[:1000].mean(axis=0), [2, -2], atol=0.05)
    np.testing.assert_allclose(X[1000:].std(axis=0), [0.3, 0.3], atol=0.02)
    assert datasets.UNSEEN_TEST_POINTS.shape == datasets.UNSEEN_TEST_LABELS.shape == (3, 2)
    # the never-seen label set is the one expected at the third test point
    assert not (Y == datasets.UNSEEN_TEST_LABELS[2]).all(axis=1).any()


def test_hourglass_geometry():
    X, y = datasets.make_hourglass(500, margin=0.1, random_state=3)
    assert X.shape == (500, 2) and y.shape == (500,)
    assert np.abs(X).max() <= 1
    np.testing.assert_array_equal(y, np.abs(X[:, 1]) > np.abs(X[:, 0]))
    assert (np.abs(np.abs(X[:, 1]) - np.abs(X[:, 0])) / np.sqrt(2) >= 0.1).all()
    assert 0.4 < y.mean() < 0.6
    with pytest.raises(ValueError, match="margin"):
        datasets.make_hourglass(10, margin=0.8)


@pytest.mark.parametrize("margin", [np.nextafter(HOURGLASS_MAX_MARGIN, 1.0), 0.7071, 1 / np.sqrt(2), np.nan])
def test_hourglass_margin_beyond_the_sampler_is_named(margin):
    """A margin of 0.7071 (a fraction 9e-11 of the square left to the classes) used to run forever."""
    with pytest.raises(ValueError, match="margin"):
        datasets.make_hourglass(10, margin=margin)


def test_hourglass_at_the_largest_margin_keeps_the_gap():
    X, y = datasets.make_hourglass(40, margin=HOURGLASS_MAX_MARGIN, random_state=0)
    assert X.shape == (40, 2) and set(y) <= {0, 1}
    assert (np.abs(np.abs(X[:, 1]) - np.abs(X[:, 0])) / np.sqrt(2) >= HOURGLASS_MAX_MARGIN).all()


def test_moons_are_sklearns():
    X, y = datasets.make_moons(60, noise=0.2, random_state=7)
    X0, y0 = sklearn.datasets.make_moons(60, noise=0.2, random_state=7)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)


def test_linear_set():
    X, y, v, c = datasets.make_linear(200, n_features=4, random_state=2)
    assert X.shape == (200, 4) and y.shape == (200,)
    assert np.linalg.norm(v) == pytest.approx(1.0) and -0.5 <= c <= 0.5
    np.testing.assert_array_equal(y, X @ v + c > 0)  # separable by the returned hyperplane
    Xf, yf, vf, cf = datasets.make_linear(200, n_features=4, flip=0.1, random_state=2)
    np.testing.assert_array_equal(Xf, X)
    assert (yf != (X @ v + c > 0)).sum() == 20
    with pytest.raises(ValueError, match="flip"):
        datasets.make_linear(10, flip=1.5)


def test_parallel_set_is_point_symmetric_about_the_offset():
    offset = np.array([1.0, -2.0, 0.5])
    X, y = datasets.make_parallel(400, n_features=3, separation=4.0, noise=0.5, offset=offset, random_state=5)
    assert X.shape == (400, 3) and y.shape == (400,)
    np.testing.assert_array_equal(y, np.repeat([0, 1], 200))
    np.testing.assert_allclose(X[200:] - offset, -(X[:200] - offset))  # pattern i of class 1 mirrors pattern i
    np.testing.assert_allclose(X[:200].mean(axis=0) - offset, [-2.0, 0.0, 0.0], atol=0.1)
    np.testing.assert_allclose(X[:200].std(axis=0), 0.5, atol=0.06)
    X0, _ = datasets.make_parallel(400, n_features=3, separation=4.0, noise=0.5, random_state=5)
    np.testing.assert_allclose(X, X0 + offset)
    with pytest.raises(ValueError, match="n_samples must be even"):
        datasets.make_parallel(7)
    with pytest.raises(ValueError, match="offset"):
        datasets.make_parallel(8, offset=(1.0, 2.0, 3.0))
