"""PNG figures of the 2-D problems: decision regions, each class's hyperplane f_k = 1, support vectors.

matplotlib is the optional extra ``plots``; without it :func:`plot_2d_problems` returns a message and
draws nothing (the tables do not need it).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .._reports import MISSING_MATPLOTLIB, matplotlib_available


def _final(model):
    """The classifier at the end of a pipeline."""
    steps = getattr(model, "steps", None)
    return steps[-1][1] if steps else model


def decision_matrix(model, X) -> np.ndarray:
    """Decision values f_k(x), one column per entry of ``classes_``.

    OvN: the f_k of its solution (its binary ``decision_function`` is the half-difference, docs/theory.md §7).
    A binary scikit-learn SVC gives one column d: f for ``classes_[1]`` is d, for ``classes_[0]`` −d.
    """
    final = _final(model)
    result = getattr(final, "result_", None)
    if result is not None:
        if len(getattr(model, "steps", ())) > 1:
            X = model[:-1].transform(X)
        F = np.full((len(X), final.classes_.size), -1e10)  # a label never seen in training
        F[:, final.fitted_labels_] = result.decision_function(X)
        return F
    d = np.asarray(model.decision_function(X), dtype=float)
    if d.ndim == 1:
        d = np.column_stack([-d, d])
    return d


def support_indices(model, X, Y) -> list[np.ndarray]:
    """Training indices of the support vectors of each class (one array per column of Y).

    OvN: its ``support_`` (stored class by class, ``n_support_[k]`` each). One-vs-rest SVC: the support of
    the k-th binary SVC. Otherwise the hinge-active members, i with Y_ik = 1 and f_k(x_i) ≤ 1 + 1e-3.
    """
    model = _final(model)
    estimators = getattr(model, "estimators_", None)
    if estimators is not None:
        if len(estimators) == 1:  # binary: one SVC, its support split by label
            sv = estimators[0].support_
            labels = np.asarray(Y)[sv].argmax(axis=1)
            return [sv[labels == k] for k in range(Y.shape[1])]
        # a label constant in the training data gets a constant predictor: no support vectors
        return [np.sort(getattr(e, "support_", np.array([], dtype=int))) for e in estimators]
    support, counts = getattr(model, "support_", None), getattr(model, "n_support_", None)
    if support is not None and counts is not None and len(counts) == Y.shape[1]:
        return np.split(np.asarray(support), np.cumsum(counts)[:-1])  # OvN: class by class
    F = decision_matrix(model, X)
    return [np.flatnonzero((Y[:, k] > 0) & (F[:, k] <= 1.0 + 1e-3)) for k in range(Y.shape[1])]


def set_name(indicator) -> str:
    """A label set as its indicator row, e.g. [0,1] (the notation of ``ovn_cvx.datasets``)."""
    return "[" + ",".join(str(int(v)) for v in indicator) + "]"


def plot_model(ax, model, X, Y, title, *, points=None, resolution=150):
    """Regions of the prediction, the level set f_k = 1 of every class, the support vectors (circles) and
    optional extra test ``points`` (stars, annotated with their predicted label set).

    Multiclass: one colour per predicted class. Multilabel: one shade per predicted label *set*.
    """
    from matplotlib import colormaps
    from matplotlib.patches import Patch

    X = np.asarray(X, dtype=float)
    Y = np.asarray(Y)
    K = Y.shape[1]
    colors = colormaps["tab10"].colors
    everything = X if points is None else np.vstack([X, points])
    pad = 0.1 * (everything.max(axis=0) - everything.min(axis=0))
    lo, hi = everything.min(axis=0) - pad, everything.max(axis=0) + pad
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], resolution), np.linspace(lo[1], hi[1], resolution))
    grid = np.column_stack([gx.ravel(), gy.ravel()])
    F = decision_matrix(model, grid)
    pred = np.asarray(model.predict(grid))
    if pred.ndim == 2:  # label sets: code each set as a binary number, shade by set
        codes = pred @ (2 ** np.arange(K))
        present = np.unique(codes)
        shades = colormaps["Pastel2"].colors
        region = np.searchsorted(present, codes).astype(float)
        ax.contourf(gx, gy, region.reshape(gx.shape), levels=np.arange(-0.5, present.size),
                    colors=[shades[i % len(shades)] for i in range(present.size)], alpha=0.6)
        handles = [Patch(color=shades[i % len(shades)], label=set_name([c >> k & 1 for k in range(K)]))
                   for i, c in enumerate(present)]
        ax.legend(handles=handles, fontsize=6, loc="lower left", title="predicted set (indicator)", title_fontsize=6)
    else:
        region = F.argmax(axis=1).astype(float)
        ax.contourf(gx, gy, region.reshape(gx.shape), levels=np.arange(-0.5, K), colors=colors[:K], alpha=0.18)
    for k in range(K):
        ax.contour(gx, gy, F[:, k].reshape(gx.shape), levels=[1.0], colors=[colors[k]], linewidths=1.6)
    for k in range(K):
        members = X[Y[:, k] > 0]
        ax.scatter(members[:, 0], members[:, 1], s=14 if k == 0 else 6, color=colors[k], label=f"label {k}")
    for k, idx in enumerate(support_indices(model, X, Y)):
        ax.scatter(X[idx, 0], X[idx, 1], s=60 + 30 * k, facecolors="none", edgecolors=colors[k], linewidths=1.2)
    if points is not None:
        ax.scatter(points[:, 0], points[:, 1], marker="*", s=120, color="k")
        for p, row in zip(points, np.atleast_2d(model.predict(points))):
            ax.annotate(set_name(row), p, textcoords="offset points", xytext=(6, 4), fontsize=7)
    ax.set_title(title, fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])


def plot_2d_problems(panels, out_dir) -> list[Path] | str:
    """One PNG per (problem, kernel); ``panels`` maps (problem, kernel) -> list of (title, model, X, Y, points)
    (``points``: extra test patterns to mark, or None).

    Returns the written paths, or the explanation string when matplotlib is missing.
    """
    if not matplotlib_available():
        return MISSING_MATPLOTLIB
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for (problem, kernel), models in panels.items():
        fig, axes = plt.subplots(1, len(models), figsize=(4.2 * len(models), 4.0), squeeze=False)
        for ax, (title, model, X, Y, points) in zip(axes[0], models):
            plot_model(ax, model, X, Y, title, points=points)
        fig.suptitle(f"{problem}, {kernel} kernel: predicted regions, f_k = 1 (lines, colour of label k), "
                     "support vectors of label k (circles)", fontsize=9)
        fig.tight_layout()
        path = out_dir / f"{problem}_{kernel}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths
