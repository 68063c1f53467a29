"""The package's warning classes and the test run's warning policy (pyproject.toml, tests/conftest.py)."""
import warnings

import numpy as np
import pytest

import ovn_cvx
from ovn_cvx import OvNClassifier
from ovn_cvx.exceptions import DegenerateLabelWarning


def test_degenerate_label_warning_is_a_user_warning():
    assert issubclass(DegenerateLabelWarning, UserWarning)
    assert "DegenerateLabelWarning" in ovn_cvx.exceptions.__all__


def test_an_unexpected_degenerate_label_warning_fails_the_test():
    with pytest.raises(DegenerateLabelWarning):
        warnings.warn("label(s) [0] are degenerate", DegenerateLabelWarning)


@pytest.mark.degenerate_labels
def test_a_test_that_expects_degenerate_labels_says_so():
    first = next(f for f in warnings.filters if f[2] is DegenerateLabelWarning)
    assert first[0] == "ignore"  # the mark's filter comes before the run's "error"
    warnings.warn("label(s) [0] are degenerate", DegenerateLabelWarning)  # raises without the mark (test above)


def test_the_estimator_warns_with_the_class_on_a_constant_label():
    """Label 0 is carried by every pattern: its optimum is w_0 = 0, b_0 = 1 exactly (docs/theory.md §5)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    Y = np.zeros((40, 2), dtype=int)
    Y[:, 0] = 1
    Y[:, 1] = X[:, 0] > 0
    with pytest.warns(DegenerateLabelWarning, match=r"label\(s\) \[0\] are degenerate"):
        model = OvNClassifier("SwHb", solver="CLARABEL").fit(X, Y)
    np.testing.assert_array_equal(model.degenerate_labels_, [0])
