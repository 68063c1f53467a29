"""OvNClassifier inside Pipeline + GridSearchCV over beta and alpha with a multilabel scorer (emotions)."""
import numpy as np
from sklearn.metrics import f1_score
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ovn_cvx.datasets import load_emotions
from _paper_settings import paper_model


def test_grid_search_multilabel_scorer_matches_manual_cross_validation():
    X, Y = load_emotions("train", return_X_y=True)
    X, Y = X[:90], Y[:90]
    grid = {"ovnclassifier__beta": [0.1, 1.0], "ovnclassifier__alpha": [0.0, 0.3]}
    cv = KFold(3, shuffle=True, random_state=0)
    pipe = make_pipeline(StandardScaler(), paper_model("SwSb", solver="CLARABEL"))
    search = GridSearchCV(pipe, grid, scoring="f1_samples", cv=cv).fit(X, Y)

    # the oracle: the same folds scored by hand with fresh estimators and sklearn's f1_score
    for params, score in zip(search.cv_results_["params"], search.cv_results_["mean_test_score"]):
        folds = []
        for train, test in cv.split(X):
            scaler = StandardScaler().fit(X[train])
            est = paper_model("SwSb", solver="CLARABEL", beta=params["ovnclassifier__beta"],
                                alpha=params["ovnclassifier__alpha"]).fit(scaler.transform(X[train]), Y[train])
            folds.append(f1_score(Y[test], est.predict(scaler.transform(X[test])), average="samples"))
        assert score == np.mean(folds)
    assert search.best_estimator_.predict(X).shape == Y.shape
    assert np.isin(search.best_estimator_.predict(X), (0, 1)).all()
