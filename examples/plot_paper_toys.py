"""
The paper's toy problems
========================

The 2-D illustrations of the paper, on our constructions (the paper does not publish its toy data): a label set
never seen in training predicted at a new point, the hourglass with RBF and polynomial kernels, and the moons.
The shaded regions are the predicted label sets; ringed points are support vectors.
"""
import matplotlib.pyplot as plt
import numpy as np

from ovn_cvx import OvNClassifier
from ovn_cvx.datasets import UNSEEN_TEST_POINTS, make_hourglass, make_moons, make_unseen_labelset


def draw(ax, model, X, labels, title):
    xx, yy = np.meshgrid(np.linspace(X[:, 0].min() - 1, X[:, 0].max() + 1, 200),
                         np.linspace(X[:, 1].min() - 1, X[:, 1].max() + 1, 200))
    grid = np.c_[xx.ravel(), yy.ravel()]
    P = model.predict(grid)
    code = P @ (2 ** np.arange(P.shape[1])) if P.ndim == 2 else P
    ax.contourf(xx, yy, code.reshape(xx.shape), alpha=0.3, cmap="Pastel1")
    ax.scatter(X[:, 0], X[:, 1], c=labels, s=12, cmap="coolwarm")
    ax.scatter(*X[model.support_].T, s=60, facecolors="none", edgecolors="k", linewidths=0.6)
    ax.set_title(title, fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])


fig, axes = plt.subplots(1, 4, figsize=(12, 3.2))

X, Y = make_unseen_labelset(n_samples=40, random_state=0)
# the paper's model and rule, as in its table: a rule learned from these rows (the default), where label 1 is on
# every row, would predict label 1 everywhere
model = OvNClassifier("SwHb", alpha=0.3, beta=1.0, negatives="none", beta_scale="none", fallback="none").fit(X, Y)
draw(axes[0], model, X, Y @ [1, 2], "unseen label set, linear")
axes[0].scatter(*np.asarray(UNSEEN_TEST_POINTS).T, marker="*", s=150, c="k")
print("label sets at the test points:", model.predict(np.asarray(UNSEEN_TEST_POINTS)).tolist())

X, y = make_hourglass(n_samples=200, random_state=0)
draw(axes[1], OvNClassifier("SwHb", kernel="rbf", beta=10.0).fit(X, y), X, y, "hourglass, RBF")
draw(axes[2], OvNClassifier("SwHb", kernel="poly", degree=2, coef0=1.0, beta=10.0).fit(X, y), X, y,
     "hourglass, polynomial")

X, y = make_moons(n_samples=150, noise=0.15, random_state=1)
draw(axes[3], OvNClassifier("SwHb", kernel="rbf", beta=10.0).fit(X, y), X, y, "moons, RBF")
fig.tight_layout()
