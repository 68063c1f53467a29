"""
A grid search on a Dask cluster
===============================

``OvNClassifier`` is a scikit-learn estimator, so ``GridSearchCV`` runs on a Dask cluster through joblib's Dask
backend. Here a small ``LocalCluster`` in this process (two workers, one thread each); with a real cluster, pass
its scheduler address to ``Client("tcp://scheduler:8786")`` instead.
"""
import joblib
import matplotlib.pyplot as plt
import numpy as np
from distributed import Client, LocalCluster
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ovn_cvx import OvNClassifier
from ovn_cvx.datasets import load_glass

X, y = load_glass(return_X_y=True)
grid = {"ovnclassifier__beta": [0.25, 1, 4, 16], "ovnclassifier__alpha": [0.0, 0.3]}
pipeline = make_pipeline(StandardScaler(), OvNClassifier("SwHb", kernel="rbf"))

if __name__ == "__main__":
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            Client(cluster), joblib.parallel_config(backend="dask"):
        search = GridSearchCV(pipeline, grid, cv=3).fit(X, y)
    print("best:", search.best_params_, f"accuracy {search.best_score_:.3f}")

    # %%
    # Mean cross-validated accuracy over the grid.
    scores = search.cv_results_["mean_test_score"].reshape(len(grid["ovnclassifier__beta"]), -1)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for j, alpha in enumerate(grid["ovnclassifier__alpha"]):
        ax.semilogx(grid["ovnclassifier__beta"], scores[:, j], "o-", label=f"α = {alpha}")
    ax.set_xlabel("β")
    ax.set_ylabel("mean CV accuracy")
    ax.set_ylim(np.min(scores) - 0.05, np.max(scores) + 0.05)
    ax.legend()
    fig.tight_layout()
