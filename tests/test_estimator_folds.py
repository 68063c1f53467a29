"""The internal folds of ``decision_rule="cv"`` and ``probability=True`` on awkward but legal input: sample weights
that leave a fold's rows (or a fold's training part) without weight, splitters that are not a partition of the rows
or yield an empty fold, more folds than rows. Each gives the answer of the equivalent well-posed fit, or a
ValueError naming ``rule_cv``."""
import warnings

import numpy as np
import pytest
from sklearn.model_selection import KFold, PredefinedSplit, ShuffleSplit

from ovn_cvx import OvNClassifier
from ovn_cvx.exceptions import DegenerateLabelWarning


def _data(n=36):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3))
    Y = (X + rng.normal(scale=0.5, size=X.shape) > 0).astype(int)
    return X, Y


class _Splits:
    """A splitter that yields the given (train, test) pairs."""

    def __init__(self, *splits):
        self.splits = splits

    def split(self, X, y=None, groups=None):
        yield from self.splits

    def get_n_splits(self, X=None, y=None, groups=None):
        return len(self.splits)


def _fitted(X, Y, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateLabelWarning)
        return OvNClassifier(**params).fit(X, Y)


@pytest.mark.parametrize("selection", ["cv", "best", "one_se"])
def test_a_fold_of_zero_weight_rows_counts_nowhere(selection):
    """The rows of one fold all of weight 0: the learned rule, its scores and gain, and the calibrated
    probabilities are those of the fit without those rows and folds (weight-0 rows are dropped before every fit, so
    the other folds' values are the same) — not a NaN gain, nor a StopIteration of the one-standard-error rule."""
    X, Y = _data()
    folds = np.repeat([0, 1, 2], 12)
    w = np.where(folds == 0, 0.0, 1.0)
    params = dict(rule_selection=selection, probability=True)
    with_zeros = OvNClassifier(rule_cv=PredefinedSplit(folds), **params).fit(X, Y, sample_weight=w)
    rows = folds > 0
    without = OvNClassifier(rule_cv=PredefinedSplit(folds[rows]), **params).fit(X[rows], Y[rows])
    assert np.isfinite(with_zeros.rule_gain_) and np.isfinite(with_zeros.rule_gain_error_)
    assert (with_zeros.rule_gain_, with_zeros.rule_gain_error_) == pytest.approx(
        (without.rule_gain_, without.rule_gain_error_), abs=1e-12)
    assert with_zeros.rule_scores_ == pytest.approx(without.rule_scores_, abs=1e-12)
    np.testing.assert_array_equal(with_zeros.predict(X), without.predict(X))
    np.testing.assert_allclose(with_zeros.predict_proba(X), without.predict_proba(X), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("params", [dict(decision_rule="cv"), dict(decision_rule="auto"),
                                    dict(decision_rule="paper", probability=True)])
def test_a_fold_whose_training_part_has_no_weight_names_rule_cv(params):
    """Only the first fold's rows weigh: the other folds' fits have no row of positive weight. The error names
    rule_cv and the fold, with what its training part lacks (was: the inner fit's "sample_weight ... all zero", about
    weights the user did give)."""
    X, Y = _data()
    folds = np.repeat([0, 1, 2], 12)
    w = np.where(folds == 0, 1.0, 0.0)
    with pytest.raises(ValueError, match=r"rule_cv: internal fold 1 cannot be fitted on its training part \(24 rows\)"
                                         r": sample_weight must have at least one nonzero weight"):
        OvNClassifier(rule_cv=PredefinedSplit(folds), **params).fit(X, Y, sample_weight=w)


def test_a_fold_whose_training_part_has_one_label_names_rule_cv():
    X, Y = _data()
    Y[:, 2] = 1
    Y[12:, :2] = 0  # labels 0 and 1 only in the first fold: its training part has label 2 alone
    with pytest.raises(ValueError, match=r"rule_cv: internal fold 1 cannot .* at least 2 classes"):
        _fitted(X, Y, rule_cv=PredefinedSplit(np.repeat([0, 1, 2], 12)))


@pytest.mark.parametrize("params", [dict(), dict(decision_rule="paper", probability=True)])
@pytest.mark.parametrize("splitter, counts", [
    (ShuffleSplit(3, test_size=0.2, random_state=0), "3 non-empty test fold(s), 18 row(s) in none, 6 in several"),
    (_Splits((np.arange(12, 36), np.arange(12))), "1 non-empty test fold(s), 24 row(s) in none, 0 in several"),
    (_Splits((np.arange(36)[:0], np.arange(36)), (np.arange(36), np.arange(36)[:0])),
     "1 non-empty test fold(s), 0 row(s) in none, 0 in several")])
def test_a_splitter_that_is_not_a_partition_names_rule_cv(splitter, counts, params):
    """Test folds that leave rows out or hold a row twice (ShuffleSplit), a single fold, or one fold of every row
    (an empty training part): the out-of-fold values would be missing or overwritten (was: a fit on NEVER values, or
    a NumPy concatenation error)."""
    X, Y = _data()
    with pytest.raises(ValueError, match=r"rule_cv must split the 36 rows into test folds that hold every row "
                                         r"exactly once, at least 2 non-empty") as error:
        OvNClassifier(rule_cv=splitter, **params).fit(X, Y)
    assert str(error.value).endswith(counts)


def test_an_empty_test_fold_is_skipped():
    """A splitter that also yields an empty test fold gives the fit of the same splitter without it (was: the empty
    fold's prediction raised "X has no rows")."""
    X, Y = _data()
    folds = np.repeat([0, 1, 2], 12)
    splits = list(PredefinedSplit(folds).split(X))
    params = dict(probability=True)
    with_empty = _fitted(X, Y, rule_cv=_Splits(*splits[:2], (np.arange(36), np.arange(36)[:0]), splits[2]), **params)
    plain = _fitted(X, Y, rule_cv=PredefinedSplit(folds), **params)
    assert (with_empty.rule_gain_, with_empty.rule_scores_) == (plain.rule_gain_, plain.rule_scores_)
    np.testing.assert_array_equal(with_empty.predict_proba(X), plain.predict_proba(X))


def _masks(splits, n_rows):
    """The splits as boolean masks of the rows, as a custom splitter may yield them."""
    def mask(rows):
        out = np.zeros(n_rows, dtype=bool)
        out[rows] = True
        return out
    return [(mask(train), mask(test)) for train, test in splits]


@pytest.mark.parametrize("params", [dict(), dict(decision_rule="paper", probability=True)])
def test_a_splitter_of_boolean_masks_is_the_splitter_of_their_rows(params):
    """Boolean masks (which scikit-learn's indexing takes) give the fit of the index splitter of the same rows; an
    empty test mask is skipped as an empty index array is (was: kept as a fold, len(mask) being the number of rows);
    a mask of another length names rule_cv."""
    X, Y = _data()
    folds = np.repeat([0, 1, 2], 12)
    splits = list(PredefinedSplit(folds).split(X))
    plain = _fitted(X, Y, rule_cv=PredefinedSplit(folds), **params)
    empty = (np.arange(36), np.arange(36)[:0])
    for masked in (_Splits(*_masks(splits, 36)), _Splits(*_masks(splits[:2] + [empty] + splits[2:], 36))):
        fitted = _fitted(X, Y, rule_cv=masked, **params)
        np.testing.assert_array_equal(fitted.predict(X), plain.predict(X))
        if params:
            np.testing.assert_array_equal(fitted.predict_proba(X), plain.predict_proba(X))
        else:
            assert fitted.rule_ == plain.rule_
            assert (fitted.rule_gain_, fitted.rule_scores_) == (plain.rule_gain_, plain.rule_scores_)
    # a single real fold beside an empty one is one fold, refused as a single index fold is
    with pytest.raises(ValueError, match="1 non-empty test fold"):
        _fitted(X, Y, rule_cv=_Splits(*_masks([(np.arange(36)[:0], np.arange(36)), empty], 36)), **params)
    short = [(train[:-1], test[:-1]) for train, test in _masks(splits, 36)]
    with pytest.raises(ValueError, match=r"rule_cv's splitter yielded a boolean mask of shape \(35,\)"):
        _fitted(X, Y, rule_cv=_Splits(*short), **params)


@pytest.mark.parametrize("y_kind", ["multilabel", "classes"])
def test_more_folds_than_rows_names_rule_cv(y_kind):
    X, Y = _data(12)
    y = Y if y_kind == "multilabel" else np.arange(12) % 3
    with pytest.raises(ValueError, match="rule_cv: Cannot have number of splits n_splits=13"):
        OvNClassifier(rule_cv=13, probability=True).fit(X, y)
    assert OvNClassifier(rule_cv=KFold(12), probability=True).fit(X, y).predict_proba(X).shape == (12, 3)


def test_a_label_without_weight_in_a_fold_is_calibrated_on_the_folds_that_fit_it():
    """Label 0's positives outside the first fold all weigh 0: the first fold's fit leaves the label out (its rows'
    values are NEVER) and its sigmoid is scikit-learn's on the other folds' out-of-fold values alone, rebuilt here
    from fits of the folds by hand."""
    from sklearn.calibration import _SigmoidCalibration

    X, Y = _data()
    folds = np.repeat([0, 1, 2], 12)
    w = np.ones(36)
    w[(folds > 0) & (Y[:, 0] == 1)] = 0.0
    est = OvNClassifier(rule_cv=PredefinedSplit(folds), probability=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateLabelWarning)
        est.fit(X, Y, sample_weight=w)
        values = np.zeros(Y.shape)
        for fold in range(3):
            train, test = folds != fold, folds == fold
            model = OvNClassifier().fit(X[train], Y[train], sample_weight=w[train])
            assert (0 in model.fitted_labels_) == (fold > 0)
            values[test] = model.decision_function(X[test])
    known = folds > 0
    theirs = _SigmoidCalibration().fit(values[known, 0], Y[known, 0] == 1, w[known])
    G = est.decision_function(X)
    np.testing.assert_allclose(est.predict_proba(X)[:, 0], theirs.predict(G[:, 0]), rtol=0, atol=1e-6)
