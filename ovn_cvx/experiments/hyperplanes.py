"""The paper's parallel-hyperplane claim, measured: K = 2, SwHb, "parallel hyperplanes identical to the binary SVM
for any α ∈ [1, 2]" (appendix constants), i.e. α ∈ [0.5, 1) here (docs/theory.md §11; α = 1 is degenerate).

**What the mathematics says (docs/theory.md §7.1).** Write the estimator's two classes as class 1 (y = −1) and
class 2 (y = +1, scikit-learn's positive class), u = (w_2 − w_1)/2, v = (w_1 + w_2)/2 and b = b_2 = −b_1 (hard b).
Then f_2 = vᵀx + (uᵀx + b), f_1 = vᵀx − (uᵀx + b), every hinge reads [1 − y_i(uᵀx_i + b) − vᵀx_i]_+, and
R(W) = ½‖w_1‖² + ½‖w_2‖² + α⟨w_1, w_2⟩ = (1 − α)‖u‖² + (1 + α)‖v‖², so

    F(u, v, b) = (1 − α)‖u‖² + (1 + α)‖v‖² + β Σ_i [1 − y_i(uᵀx_i + b) − vᵀx_i]_+.

* At v = 0 (w_1 = −w_2) F is 2(1 − α) times the SVM objective with C_α = β/(2(1 − α)).
* v = 0 is optimal iff the v-stationarity 2(1 + α)v = Σ_i μ_i x_i holds there, i.e. iff SVC(C_α)'s dual
  coefficients a (μ = 2(1 − α)a) satisfy Σ_i a_i x_i = 0: the a-weighted means of the two classes' support
  vectors are mirror images through the origin. Then the binary decision (f_2 − f_1)/2 *is* SVC(C_α)'s.
* Nothing here singles out α ∈ [0.5, 1). On a set symmetric under (x, class 1) ↔ (−x, class 2)
  (:func:`ovn_cvx.datasets.make_parallel`) w_1 = −w_2 for every α ∈ (−1, 1). Moving the data by t adds 2m·t to
  Σ_i a_i x_i (m = Σ_{y=+1} a_i): in general it breaks the condition for every α, and on separable data
  v ≈ ((1 − α)/(1 + α)) Σ_i a_i x_i → 0 only as α → 1 (first order in 1 − α; a: the hard-margin coefficients,
  those with the smallest ‖Σ_i a_i x_i‖ when they are not unique).
* "Identical to the binary SVM" holds for SVC(C = β/(2(1 − α))); it equals the §7 SVM SVC(C = β/2) only at α = 0
  or when C does not matter (separable data in the hard-margin regime).

:func:`measure_hyperplanes` fits ``OvNClassifier(variant="SwHb", kernel="linear")`` for each α and compares it with
both SVMs; :func:`plot_hyperplanes` draws the fits and the angles; :func:`to_markdown` formats the table.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.svm import SVC
from sklearn.utils import check_random_state

from .._reports import markdown_table
from .._validation import check_number
from ..estimator import OvNClassifier
from . import figures

#: the α of the claim, np.linspace(0.5, 0.99, 8), after three values outside it for contrast
ALPHAS = (-0.5, 0.0, 0.25, *np.round(np.linspace(0.5, 0.99, 8), 4).tolist())

#: a weight vector shorter than this fraction of the longer one counts as 0: its direction (angle) is undefined
ZERO_NORM = 1e-6

#: libsvm's stopping tolerance for the SVC references. Measured on make_parallel(200) (offset 0 and (1, 2)),
#: C ∈ [1/3, 50]: max |Δcoef_| ≤ 3.1e-6 against the certified K = 2 HwHb OvN (which is SVC(C), docs/theory.md §7),
#: in ≤ 0.11 s; at C = 50, 1e-7 and 1e-8 came no closer, and 1e-10 took 134 s (10⁹ libsvm iterations).
SVC_TOL = 1e-6

COLUMNS = ["alpha", "in_claim", "norm_w1", "norm_w2", "angle_w1_neg_w2", "asymmetry", "angle_svc", "agreement_svc",
           "max_distance_diff_svc", "C_matched", "angle_svc_matched", "agreement_svc_matched",
           "max_distance_diff_svc_matched", "point_symmetric"]


@dataclass(frozen=True)
class HyperplaneFit:
    """One α: the OvN fit and the two SVMs it is compared with, on the training data ``X``, ``y``.

    ``svc`` is SVC(C = β/2) (docs/theory.md §7); ``svc_matched`` is SVC(C = β/(2(1 − α))), the SVM that OvN equals
    when w_1 = −w_2 (docs/theory.md §7.1).
    """

    alpha: float
    beta: float
    X: np.ndarray
    y: np.ndarray
    ovn: OvNClassifier
    svc: SVC
    svc_matched: SVC

    @property
    def W(self) -> np.ndarray:
        """w_1, w_2 as the columns of an (M, 2) array (``coef_`` is their half-difference, one row)."""
        return self.ovn.result_.coef

    @property
    def b(self) -> np.ndarray:
        return self.ovn.result_.b


def angle(a, b) -> float:
    """Angle in degrees between vectors a and b, NaN when either is 0 (norm ≤ ``ZERO_NORM`` times the longer).

    Kahan's form 2·atan2(‖â − b̂‖, ‖â + b̂‖): arccos of the cosine loses half the digits near 0°, the case measured.
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    if min(na, nb) <= ZERO_NORM * max(na, nb):  # both 0 included
        return float("nan")
    a, b = a / na, b / nb
    return float(np.degrees(2 * np.arctan2(np.linalg.norm(a - b), np.linalg.norm(a + b))))


def _check_data(X, y):
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    if X.ndim != 2 or not np.isfinite(X).all():
        raise ValueError(f"X must be a finite 2-D array, got shape {X.shape}")
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must be 1-D with one label per row of X ({X.shape[0]}), got shape {y.shape}")
    if np.unique(y).size != 2:
        raise ValueError(f"y must have exactly 2 classes (the claim is about K = 2), got {np.unique(y).size}")
    return X, y


def _check_alphas(alphas, name="alphas"):
    alphas = ALPHAS if alphas is None else alphas
    try:
        alphas = [check_number(name, a) for a in alphas]
    except TypeError:
        raise TypeError(f"{name} must be an iterable of real numbers, got {alphas!r}") from None
    if not alphas or not all(-1 < a < 1 for a in alphas):
        raise ValueError(f"{name} must be a non-empty list in the open interval (-1, 1) of K = 2 "
                         f"(docs/theory.md §3.1), got {alphas}")
    return alphas


def fit_hyperplanes(X, y, alphas=None, *, beta: float = 1.0, solver: str = "mm") -> list[HyperplaneFit]:
    """For every α of ``alphas`` (default ``ALPHAS``): ``OvNClassifier(variant="SwHb", kernel="linear", alpha=α,
    beta=β, solver=solver)``, ``SVC(kernel="linear", C=β/2)`` and ``SVC(kernel="linear", C=β/(2(1 − α)))`` on
    (X, y), a two-class set."""
    X, y = _check_data(X, y)
    alphas = _check_alphas(alphas)
    beta = check_number("beta", beta, low=0, strict=True)
    svc = SVC(kernel="linear", C=beta / 2, tol=SVC_TOL).fit(X, y)  # the same for every α
    fits = []
    for a in alphas:
        ovn = OvNClassifier(variant="SwHb", kernel="linear", alpha=a, beta=beta, solver=solver, negatives="none",
                            decision_rule="paper", bias_penalty=1.0, beta_scale="none").fit(X, y)
        matched = SVC(kernel="linear", C=beta / (2 * (1 - a)), tol=SVC_TOL).fit(X, y)
        fits.append(HyperplaneFit(a, beta, X, y, ovn, svc, matched))
    return fits


def sample_box(X, n_test: int = 2000, random_state=0) -> np.ndarray:
    """``n_test`` points uniform on the bounding box of X, widened by 10 % on every side (where the hyperplanes
    are drawn)."""
    X = np.asarray(X, dtype=float)
    n_test = check_number("n_test", n_test, low=1, integer=True)
    lo, hi = X.min(axis=0), X.max(axis=0)
    pad = 0.1 * (hi - lo)
    return check_random_state(random_state).uniform(lo - pad, hi + pad, size=(n_test, X.shape[1]))


def _compare(ovn, svc, X_test):
    """Angle of the binary normals, agreement of the predictions, max |difference| of the signed distances."""
    w_ovn, w_svc = ovn.coef_[0], svc.coef_[0]
    agreement = float(np.mean(ovn.predict(X_test) == svc.predict(X_test)))
    n_ovn, n_svc = np.linalg.norm(w_ovn), np.linalg.norm(w_svc)
    if n_ovn == 0 or n_svc == 0:  # a constant decision function has no distance to compare
        return angle(w_ovn, w_svc), agreement, float("nan")
    # decision/‖w‖ is the signed distance to the hyperplane: comparable whatever the scale of w
    gap = np.abs(ovn.decision_function(X_test) / n_ovn - svc.decision_function(X_test) / n_svc).max()
    return angle(w_ovn, w_svc), agreement, float(gap)


def point_symmetric(X, y) -> bool:
    """Is the two-class set mapped onto itself by (x, class 1) ↔ (−x, class 2)? Then K = 2 SwHb's optimum is two
    parallel hyperplanes, w_1 = −w_2, for every α (docs/theory.md §7.1): the scope of the paper's claim."""
    X, y = np.asarray(X, dtype=float), np.asarray(y)
    classes = np.unique(y)
    if classes.size != 2:
        return False
    second = (y == classes[1]).astype(float)
    mine, mirrored = np.column_stack([X, second]), np.column_stack([-X, 1.0 - second])
    # negation is exact in floating point: a set built by mirroring sorts into the same rows
    return bool(np.array_equal(mine[np.lexsort(mine.T[::-1])], mirrored[np.lexsort(mirrored.T[::-1])]))


def hyperplane_table(fits, X_test) -> pd.DataFrame:
    """The measurements of :func:`measure_hyperplanes` for given ``fits`` (one row each) and test points."""
    rows = []
    symmetric = point_symmetric(fits[0].X, fits[0].y) if fits else False
    for fit in fits:
        w1, w2 = fit.W[:, 0], fit.W[:, 1]
        n1, n2 = np.linalg.norm(w1), np.linalg.norm(w2)
        spread = np.linalg.norm(w1 - w2)
        rows.append([fit.alpha, 0.5 <= fit.alpha < 1, n1, n2, angle(w1, -w2),
                     np.linalg.norm(w1 + w2) / spread if spread > 0 else float("nan"),
                     *_compare(fit.ovn, fit.svc, X_test), fit.svc_matched.C,
                     *_compare(fit.ovn, fit.svc_matched, X_test), symmetric])
    return pd.DataFrame(rows, columns=COLUMNS)


def measure_hyperplanes(X, y, alphas=None, *, beta: float = 1.0, solver: str = "mm", X_test=None, n_test: int = 2000,
                     random_state=0, return_fits: bool = False):
    """One row per α: is K = 2 linear SwHb OvN two parallel hyperplanes, and is it the binary SVM?

    Columns (angles in degrees; w_k = column k of ``result_.coef``, classes in ``classes_`` order; the OvN binary
    normal is ``coef_`` = (w_2 − w_1)/2, its decision (f_2 − f_1)/2, docs/theory.md §7):

    * ``alpha``; ``in_claim``: 0.5 ≤ α < 1, the range of the paper's claim;
    * ``norm_w1``, ``norm_w2``: ‖w_1‖, ‖w_2‖ (an angle is NaN when one of them is 0, see ``ZERO_NORM``);
    * ``angle_w1_neg_w2``: angle between w_1 and −w_2, 0 iff f_1 = 1 and f_2 = 1 are parallel with opposite normals;
    * ``asymmetry``: ‖w_1 + w_2‖ / ‖w_1 − w_2‖ = ‖v‖/‖u‖, 0 iff w_1 = −w_2 exactly (parallel *and* equal lengths);
    * ``angle_svc``, ``agreement_svc``, ``max_distance_diff_svc``: against ``SVC(kernel="linear", C=β/2)``: angle of
      the normals, fraction of equal predictions on ``X_test``, max |d_OvN(x) − d_SVC(x)| over ``X_test`` of the
      signed distances d(x) = decision(x)/‖normal‖;
    * ``C_matched`` = β/(2(1 − α)) and the same three against ``SVC(kernel="linear", C=C_matched)``, the SVM the
      mathematics predicts when w_1 = −w_2 (module docstring);
    * ``point_symmetric``: :func:`point_symmetric` of (X, y), the same on every row: the set is in the claim's
      scope, its optimum two parallel hyperplanes at every α.

    ``X_test`` defaults to :func:`sample_box` (``n_test`` points, ``random_state``). With ``return_fits`` the
    result is (table, fits), the fits for :func:`plot_hyperplanes`. Other arguments as in :func:`fit_hyperplanes`.

    Parameters
    ----------
    X : array-like of shape (n, M)
        Patterns of a two-class set.
    y : array-like of shape (n,)
        Labels of the two classes.
    alphas : sequence of float or None, default=None
        The values of α; None uses ``ALPHAS``.
    beta : float, default=1.0
        The hinge weight β > 0.
    solver : str, default="mm"
        The ``solver`` of the OvN estimator.
    X_test : array-like of shape (n_test, M) or None, default=None
        The points the predictions and distances are compared on; None samples them with :func:`sample_box`.
    n_test : int, default=2000
        The number of points sampled when ``X_test`` is None.
    random_state : int, default=0
        The seed of the sampled points.
    return_fits : bool, default=False
        Whether to return the fits too.

    Returns
    -------
    DataFrame or tuple of (DataFrame, list of HyperplaneFit)
        The table, and with ``return_fits`` the fits.

    Examples
    --------
    >>> from ovn_cvx.datasets import make_parallel
    >>> from ovn_cvx.experiments import measure_hyperplanes
    >>> X, y = make_parallel(40, random_state=0)
    >>> table = measure_hyperplanes(X, y, alphas=[0.0, 0.5], n_test=200)
    >>> table[["alpha", "in_claim", "point_symmetric"]]
       alpha  in_claim  point_symmetric
    0    0.0     False             True
    1    0.5      True             True
    >>> bool((table["angle_w1_neg_w2"] < 1e-3).all())       # two parallel hyperplanes (degrees)
    True
    """
    fits = fit_hyperplanes(X, y, alphas, beta=beta, solver=solver)
    if X_test is None:
        X_test = sample_box(fits[0].X, n_test, random_state)
    X_test = np.asarray(X_test, dtype=float)
    if X_test.ndim != 2 or X_test.shape[1] != fits[0].X.shape[1]:
        raise ValueError(f"X_test must be 2-D with {fits[0].X.shape[1]} columns, got shape {X_test.shape}")
    table = hyperplane_table(fits, X_test)
    return (table, fits) if return_fits else table


#: column → format string of :func:`to_markdown`
FORMATS = {"alpha": "{:g}", "in_claim": "{}", "norm_w1": "{:.4g}", "norm_w2": "{:.4g}", "angle_w1_neg_w2": "{:.4f}",
           "asymmetry": "{:.2e}", "angle_svc": "{:.4f}", "agreement_svc": "{:.4f}", "max_distance_diff_svc": "{:.2e}",
           "C_matched": "{:.4g}", "angle_svc_matched": "{:.4f}", "agreement_svc_matched": "{:.4f}",
           "max_distance_diff_svc_matched": "{:.2e}", "point_symmetric": "{}"}


def to_markdown(table: pd.DataFrame) -> str:
    """The table of :func:`measure_hyperplanes` in Markdown (no final newline); a NaN (undefined angle) is "n/a"."""
    missing = [c for c in COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"table lacks the column(s) {missing} of measure_hyperplanes")
    rows = [["n/a" if isinstance(v, float) and np.isnan(v) else FORMATS[c].format(v) for c, v in zip(COLUMNS, row)]
            for row in table[COLUMNS].itertuples(index=False)]
    return markdown_table(COLUMNS, rows)


def claim_sets(random_state=0) -> dict:
    """The reproduction's two sets for the claim: :func:`~ovn_cvx.datasets.make_parallel` (200 points, symmetric
    about the origin: the optimum is parallel) and the same set moved by (1, 2) (the origin elsewhere)."""
    from ..datasets import make_parallel
    return {"symmetric about the origin": make_parallel(200, random_state=random_state),
            "moved by (1, 2)": make_parallel(200, offset=(1.0, 2.0), random_state=random_state)}


def _lines(ax, grid, shape, values, levels, **style):
    """Level sets of a linear function sampled on ``grid``."""
    ax.contour(grid[0], grid[1], values.reshape(shape), levels=levels, **style)


def _draw_fit(ax, fit, colors):
    X, y = fit.X, fit.y
    # a square view of the data and the origin (where the w_k start: OvN is not translation invariant)
    both = np.vstack([X, np.zeros((1, 2))])
    centre = 0.5 * (both.min(axis=0) + both.max(axis=0))
    half = 0.6 * np.ptp(both, axis=0).max()
    ticks = np.linspace(-half, half, 200)
    gx, gy = np.meshgrid(centre[0] + ticks, centre[1] + ticks)
    points = np.column_stack([gx.ravel(), gy.ravel()])
    F = points @ fit.W + fit.b
    for k, label in enumerate(fit.ovn.classes_):
        members = X[y == label]
        ax.scatter(members[:, 0], members[:, 1], s=8, color=colors[k])
        _lines(ax, (gx, gy), gx.shape, F[:, k], [1.0], colors=[colors[k]], linewidths=1.8)
    _lines(ax, (gx, gy), gx.shape, F[:, 1] - F[:, 0], [0.0], colors=["k"], linewidths=1.2)
    _lines(ax, (gx, gy), gx.shape, fit.svc.decision_function(points), [-1.0, 0.0, 1.0], colors=["0.45"],
           linewidths=1.0, linestyles="dotted")
    _lines(ax, (gx, gy), gx.shape, fit.svc_matched.decision_function(points), [-1.0, 0.0, 1.0], colors=["0.2"],
           linewidths=0.8, linestyles="dashed")
    ax.scatter([0.0], [0.0], marker="+", s=80, color="k")
    ax.set_title(f"α = {fit.alpha:g}: ∠(w₁, −w₂) = {angle(fit.W[:, 0], -fit.W[:, 1]):.2f}°", fontsize=8)
    ax.set_xlim(centre[0] - half, centre[0] + half)
    ax.set_ylim(centre[1] - half, centre[1] + half)
    ax.set_aspect("equal")
    ax.tick_params(labelsize=7)


def _draw_angles(ax, fits):
    table = hyperplane_table(fits, fits[0].X)  # only the angles are drawn, which need no test points
    ax.axvspan(0.5, 1.0, color="0.92", label="claim: α ∈ [0.5, 1)")
    for column, label, style in [("angle_w1_neg_w2", "∠(w₁, −w₂)", "o-"),
                                 ("angle_svc", "∠(OvN, SVC(C=β/2))", "s--"),
                                 ("angle_svc_matched", "∠(OvN, SVC(C=β/(2(1−α))))", "^:")]:
        ax.plot(table["alpha"], table[column], style, markersize=4, label=label)
    ax.set_xlabel("α", fontsize=8)
    ax.set_ylabel("angle (degrees)", fontsize=8)
    ax.set_xlim(-1, 1)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=6)


def plot_hyperplanes(fits, path, *, draw_alphas=(0.0, 0.5, 0.99)) -> Path | str:
    """One PNG: per data set a row of panels, the fits nearest to each α of ``draw_alphas`` (the data; OvN's f_1 = 1
    and f_2 = 1 in the colour of each class and its decision boundary f_1 = f_2 in black; the SVC(C=β/2) decision
    line and margins ±1 dotted grey, SVC(C=β/(2(1 − α)))'s dashed) and the angles of :func:`measure_hyperplanes`
    against α.

    ``fits``: a list of :class:`HyperplaneFit` of one 2-D data set (:func:`fit_hyperplanes`), or a mapping
    name → such a list (one row each). Returns ``path``, or the message ``figures.MISSING_MATPLOTLIB`` without
    drawing when matplotlib is not installed.
    """
    sets = dict(fits) if isinstance(fits, Mapping) else {"": fits}
    for name, group in sets.items():
        group = list(group)
        if not group or not all(isinstance(f, HyperplaneFit) for f in group):
            raise TypeError(f"fits must be a non-empty list of HyperplaneFit (or a mapping of them), got {group!r} "
                            f"for {name!r}")
        if group[0].X.shape[1] != 2:
            raise ValueError(f"fits must be on 2-D data to be drawn, got {group[0].X.shape[1]} features")
        sets[name] = group
    draw_alphas = _check_alphas(draw_alphas, "draw_alphas")
    if not figures.matplotlib_available():
        return figures.MISSING_MATPLOTLIB
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import colormaps

    colors = colormaps["tab10"].colors
    fig, axes = plt.subplots(len(sets), len(draw_alphas) + 1, figsize=(3.2 * (len(draw_alphas) + 1), 3.2 * len(sets)),
                             squeeze=False)
    for row, (name, group) in zip(axes, sets.items()):
        available = np.array([f.alpha for f in group])
        for ax, a in zip(row, draw_alphas):
            _draw_fit(ax, group[int(np.abs(available - a).argmin())], colors)
        _draw_angles(row[-1], group)
        if name:
            row[0].set_ylabel(name, fontsize=9)
    fig.suptitle("K = 2 linear SwHb OvN: f₁ = 1, f₂ = 1 (class colours), f₁ = f₂ (black); SVC(C=β/2) dotted, "
                 "SVC(C=β/(2(1−α))) dashed (decision line and margins ±1); + the origin", fontsize=9)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
