"""The paper's experiment tables, recomputed: OvN next to the scikit-learn baselines, both protocols.

Tables (one long-format DataFrame each, one row per seed × data set × kernel × method × metric):

* ``unseen_label`` — 2-D multilabel set whose training label sets are only [1, 0] and [1, 1]
  (``ovn_cvx.datasets.make_unseen_labelset``): CV example accuracy and Hamming loss, and
  ``test_points_correct``, the share of the three fixed test points (``UNSEEN_TEST_POINTS``) that get their
  intended label set — the third one is [0, 1], a set no training pattern has; ``predicted_sets`` lists
  what the refitted paper-protocol model predicts there, ``predicted_sets_paper_points`` what it predicts at the
  paper's six test points;
* ``two_class``    — 2-D two-class problems (hourglass, also with the degree-2 polynomial kernel; moons, random
  linear): accuracy, support vectors per class;
* ``multiclass``   — glass, iris, wine (and the evidence variants glass+Id, wine-raw):
  accuracy and Hamming loss;
* ``multilabel``   — synthetic, scene, emotions: example-based accuracy (``jaccard_score(average="samples")``)
  and Hamming loss.

Every row has the paper's number as printed (None where the paper has none, see :mod:`.paper`), the paper
protocol's best mean score ± its fold-to-fold standard deviation, the nested-CV mean ± standard deviation over
the outer folds, the metric's own best mean over the grid (``metric_best``: the paper may have maximised each
metric separately) and the selected values at the grid's edge.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from .._reports import markdown_table
from ..labels import label_indicator
from .figures import set_name
from .paper import TABLE_A_POINTS, paper_value
from .protocols import (ClassifierSpec, Grid, baseline_methods, evaluate, ovn_method, reference_kernel_scale,
                        reference_sigma, with_scaler)
from .verdicts import Band

TABLES = ("unseen_label", "two_class", "multiclass", "multilabel")
COLUMNS = ["table", "dataset", "evidence_for", "seed", "n_samples", "n_features", "n_classes", "kernel", "method",
           "metric", "paper", "paper_protocol", "paper_protocol_std", "nested", "nested_std", "metric_best",
           "metric_best_params", "support_vectors", "predicted_sets", "predicted_sets_paper_points", "best_params",
           "nested_params", "edges", "failed_fits", "seconds"]


@dataclass(frozen=True)
class DatasetSpec:
    """A data set of a table: ``load(seed)`` returns (X, y) — 1-D labels or an indicator matrix.

    ``standardize``: a StandardScaler inside each training part (the paper "normalized" its data sets).
    ``kernels``: the kernels run on this set (None: the config's) — the 2-D toys run the paper's kernels of its
    two-class table (the hourglass also with the degree-2 polynomial). ``evidence_for``/``evidence``: a
    variant that exists only to explain a disagreement with the paper on the named data set (what it changes).
    ``test_points()`` (unseen-label set only) returns extra patterns and the label set each should get.
    """

    name: str
    table: str
    task: str
    load: Callable[[int], tuple]
    standardize: bool = True
    two_d: bool = False
    kernels: tuple[str, ...] | None = None
    evidence_for: str | None = None
    evidence: str = ""
    test_points: Callable[[], tuple] | None = None


def _ds():
    from .. import datasets
    return datasets


def _synthetic_multilabel(seed):
    # the paper's synthetic multilabel set is not described anywhere: scikit-learn's generator, 5 labels of ~2
    # per pattern, no empty label set (our choice, recorded in the report)
    from sklearn.datasets import make_multilabel_classification
    return make_multilabel_classification(n_samples=300, n_features=10, n_classes=5, n_labels=2,
                                          allow_unlabeled=False, random_state=seed)


def _toy(name, make, kernels):
    # the 2-D toys keep their coordinates: the unseen-label behaviour depends on where the origin is
    return DatasetSpec(name, "two_class", "binary", make, standardize=False, two_d=True, kernels=kernels)


DATASETS = (
    DatasetSpec("unseen_labelset", "unseen_label", "multilabel",
                lambda seed: _ds().make_unseen_labelset(40, random_state=seed), standardize=False, two_d=True,
                test_points=lambda: (_ds().UNSEEN_TEST_POINTS, _ds().UNSEEN_TEST_LABELS)),
    _toy("hourglass", lambda seed: _ds().make_hourglass(200, random_state=seed), ("rbf", "poly")),
    _toy("moons", lambda seed: _ds().make_moons(200, random_state=seed), ("rbf",)),
    _toy("random_linear", lambda seed: _ds().make_linear(100, random_state=seed)[:2], ("linear",)),
    DatasetSpec("glass", "multiclass", "multiclass", lambda seed: _ds().load_glass(return_X_y=True)),
    DatasetSpec("glass+Id", "multiclass", "multiclass",
                lambda seed: _ds().load_glass(return_X_y=True, keep_id=True), evidence_for="glass",
                evidence="the Id column kept (glass.data is sorted by class, so the row number leaks it)"),
    DatasetSpec("iris", "multiclass", "multiclass", lambda seed: _ds().load_iris(return_X_y=True)),
    DatasetSpec("wine", "multiclass", "multiclass", lambda seed: _ds().load_wine(return_X_y=True)),
    DatasetSpec("wine-raw", "multiclass", "multiclass", lambda seed: _ds().load_wine(return_X_y=True),
                standardize=False, evidence_for="wine", evidence="raw features (not standardised)"),
    DatasetSpec("synthetic", "multilabel", "multilabel", _synthetic_multilabel),
    DatasetSpec("scene", "multilabel", "multilabel", lambda seed: _ds().load_scene(return_X_y=True)),
    DatasetSpec("emotions", "multilabel", "multilabel", lambda seed: _ds().load_emotions(return_X_y=True)),
)


@dataclass(frozen=True)
class ReproduceConfig:
    """Everything that defines a run (recorded in the report).

    ``seed`` is the main seed (the tables' numbers, both protocols); data sets with at most ``band_max_samples``
    patterns are rerun under the paper protocol with the shuffle seeds seed + 1, …, seed + band_seeds − 1 (the
    toys and the synthetic set are also redrawn) to measure the band that seed and protocol explain
    (:mod:`.verdicts`).

    Parameters
    ----------
    seed : int, default=0
        The main seed.
    folds : int, default=3
        The number of cross-validation folds.
    grid : Grid, default=Grid()
        The hyperparameter grid.
    max_samples : int or None, default=None
        Every data set is subsampled to at most this many patterns; None keeps them whole.
    kernels : tuple of str, default=("linear", "rbf")
        The kernels.
    tables : tuple of str, default=TABLES
        The tables run.
    datasets : tuple of str or None, default=None
        The data sets run; None for every data set of the selected tables.
    ovn_variant : str, default="SwHb"
        The OvN variant.
    ovn_solver : str or None, default="mm"
        The ``solver`` of the OvN estimator (a CVXPY solver name, or "mm").
    nested : bool, default=True
        Whether to run the nested protocol (main seed).
    raw : bool, default=False
        No ``StandardScaler`` anywhere; by default every non-toy set is standardised.
    band_seeds : int, default=5
        The number of seeds of the band, the main one included (at least 1).
    band_max_samples : int, default=1000
        Data sets with at most this many patterns are rerun with the band's seeds.
    n_jobs : int, default=1
        The number of joblib workers of the searches.
    quick : bool, default=False
        Whether this is the quick configuration (recorded in the report).

    Examples
    --------
    >>> from ovn_cvx.experiments import Grid, ReproduceConfig
    >>> config = ReproduceConfig(tables=("multiclass",), datasets=("iris",), kernels=("linear",),
    ...                          grid=Grid(beta=(1.0,), alpha=(0.0,)), nested=False, band_seeds=1)
    >>> config.folds, config.ovn_variant
    (3, 'SwHb')
    >>> ReproduceConfig.quick_config().max_samples          # the small run of ``ovn-cvx reproduce --quick``
    90
    """

    seed: int = 0
    folds: int = 3
    grid: Grid = field(default_factory=Grid)
    max_samples: int | None = None      # subsample every data set to at most this many patterns
    kernels: tuple[str, ...] = ("linear", "rbf")
    tables: tuple[str, ...] = TABLES
    datasets: tuple[str, ...] | None = None   # None: every data set of the selected tables
    ovn_variant: str = "SwHb"
    # MM: certified exact optima, 14× (linear) to 100× (RBF) faster than Clarabel on scene-sized folds (the
    # full scene grid would take Clarabel about 20 hours); a CVXPY solver name is one option away
    ovn_solver: str | None = "mm"
    nested: bool = True
    raw: bool = False                   # no StandardScaler anywhere (default: every non-toy set standardised)
    band_seeds: int = 5
    band_max_samples: int = 1000
    n_jobs: int = 1
    quick: bool = False

    def __post_init__(self):
        if not (isinstance(self.band_seeds, int) and self.band_seeds >= 1):
            raise ValueError(f"band_seeds must be an integer >= 1, got {self.band_seeds!r}")

    @classmethod
    def quick_config(cls, **overrides):
        """Small grids, subsampled data, two seeds: finishes in a few minutes on 2 cores.

        Parameters
        ----------
        **overrides : dict
            Fields that replace the quick configuration's.

        Returns
        -------
        ReproduceConfig
            The quick configuration.
        """
        base = cls(grid=Grid(beta=(0.5, 32.0), sigma_factors=(1.0,), alpha=(0.0, 0.5)), max_samples=90,
                   band_seeds=2, quick=True)
        return replace(base, **overrides)

    def seeds_for(self, n_samples: int) -> tuple[int, ...]:
        """The seeds a data set of this size is run with (the main one first).

        Parameters
        ----------
        n_samples : int
            The number of patterns of the data set.

        Returns
        -------
        tuple of int
            ``band_seeds`` seeds from ``seed`` when ``n_samples`` ≤ ``band_max_samples``, else ``seed`` alone.
        """
        count = self.band_seeds if n_samples <= self.band_max_samples else 1
        return tuple(self.seed + i for i in range(count))

    def as_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "grid"}
        d["grid"] = self.grid.as_dict()
        return d


def subsample(X, y, n, seed, task):
    """At most n patterns: stratified for class labels, uniform for label sets (and when fewer patterns than
    classes are left out)."""
    if n is None or len(X) <= n:
        return X, y
    if task in ("multiclass", "binary") and len(X) - n >= np.unique(y).size:  # a stratified split leaves a
        X, _, y, _ = train_test_split(X, y, train_size=n, stratify=y, random_state=seed)  # pattern per class out
        return X, y
    idx = np.sort(np.random.default_rng(seed).choice(len(X), size=n, replace=False))
    return X[idx], y[idx]


def methods_for(task: str, kernel: str, config: ReproduceConfig, ovn_class=None) -> list[ClassifierSpec]:
    ovn = ovn_method(config.ovn_variant, config.ovn_solver, estimator_class=ovn_class)
    return [m for m in (ovn, *baseline_methods()) if task in m.tasks and kernel in m.kernels]


def _n_support(model):
    """Support vectors per class of the refitted best model ("a/b"), or None (no support vectors)."""
    final = model.steps[-1][1] if hasattr(model, "steps") else model
    if hasattr(final, "n_support_") and hasattr(final, "result_"):  # OvN
        counts = final.n_support_
    elif hasattr(final, "estimators_"):  # OneVsRestClassifier(SVC) on two classes holds one SVC
        counts = final.estimators_[0].n_support_
    else:
        return None
    return "/".join(str(int(c)) for c in counts)


def _jsonable(params):
    return json.dumps({k: (round(v, 6) if isinstance(v, float) else v) for k, v in params.items()},
                      sort_keys=True)


def selected_specs(table: str, config: ReproduceConfig) -> list[DatasetSpec]:
    """The data sets of a table in this run (an evidence variant runs with the set it explains)."""
    chosen = config.datasets
    return [d for d in DATASETS if d.table == table
            and (chosen is None or d.name in chosen or (d.evidence_for is not None and d.evidence_for in chosen))]


def run_table(table: str, config: ReproduceConfig, *, ovn_class=None, progress=print):
    """Rows of one table (one per seed × data set × kernel × method × metric) and the refitted 2-D models of the
    main seed (for the figures).

    Parameters
    ----------
    table : str
        The table, one of ``TABLES``.
    config : ReproduceConfig
        The configuration of the run.
    ovn_class : type or None, default=None
        The estimator class fitted as OvN; None uses :class:`~ovn_cvx.OvNClassifier`.
    progress : callable, default=print
        Called with each progress message.

    Returns
    -------
    rows : DataFrame
        The rows of the table.
    panels : dict
        The refitted 2-D models, for the figures.

    Examples
    --------
    >>> from ovn_cvx.experiments import Grid, ReproduceConfig, run_table
    >>> config = ReproduceConfig(tables=("multiclass",), datasets=("iris",), kernels=("linear",),
    ...                          grid=Grid(beta=(1.0,), alpha=(0.0,)), nested=False, band_seeds=1)
    >>> rows, panels = run_table("multiclass", config, progress=lambda message: None)
    >>> rows.loc[rows["metric"] == "accuracy", ["dataset", "method", "paper"]]
      dataset        method  paper
    0    iris           OvN  0.987
    2    iris       OvR-SVC  0.960
    4    iris  CS-LinearSVC  0.967
    """
    if table not in TABLES:
        raise ValueError(f"table must be one of {TABLES}, got {table!r}")
    rows, panels = [], {}
    for spec in selected_specs(table, config):
        for seed, X, y in seeded_data(spec, config):
            rows += _run_dataset(spec, X, y, seed, table, config, ovn_class, progress, panels)
    return pd.DataFrame(rows, columns=COLUMNS), panels


def seeded_data(spec: DatasetSpec, config: ReproduceConfig):
    """(seed, X, y) for every seed a data set runs with (:meth:`ReproduceConfig.seeds_for`), subsampled."""
    X0, y0 = spec.load(config.seed)
    for seed in config.seeds_for(min(len(X0), config.max_samples or len(X0))):
        X, y = (X0, y0) if seed == config.seed else spec.load(seed)
        X, y = subsample(np.asarray(X, dtype=float), np.asarray(y), config.max_samples, seed, spec.task)
        yield seed, X, y


def _run_dataset(spec, X, y, seed, table, config, ovn_class, progress, panels):
    rows = []
    n_classes = y.shape[1] if y.ndim == 2 else np.unique(y).size
    standardize = spec.standardize and not config.raw
    Xs = StandardScaler().fit_transform(X) if standardize else X
    sigma0 = reference_sigma(Xs)
    for kernel in spec.kernels or config.kernels:
        for method in methods_for(spec.task, kernel, config, ovn_class):
            grid = method.param_grid(kernel, config.grid, sigma0, reference_kernel_scale(Xs, kernel))
            estimator, grid = with_scaler(method.build(kernel), grid, standardize)
            # nested CV (12 fits per candidate, the paper protocol 3) on the main seed only: the band's other
            # seeds measure the shuffle's spread of the paper's protocol
            ev = evaluate(estimator, grid, X, y, task=spec.task, folds=config.folds, seed=seed,
                          nested=config.nested and seed == config.seed, n_jobs=config.n_jobs)
            if spec.test_points is not None:
                _score_test_points(ev, *spec.test_points())
            progress(f"  {table:12s} {spec.name:16s} seed {seed:<3d} {kernel:6s} {method.name:12s} "
                     + "  ".join(f"{m}={ev.paper[m][0]:.3f}" for m in ev.paper)
                     + f"  ({ev.seconds:.1f}s{', %d failed fits' % ev.failed_fits if ev.failed_fits else ''})")
            sv = _n_support(ev.best_estimator) if table == "two_class" else None
            for metric in ev.paper:
                nested = ev.nested.get(metric, (np.nan, np.nan))
                best, best_params = ev.metric_best.get(metric, (np.nan, {}))
                rows.append({
                    "table": table, "dataset": spec.name, "evidence_for": spec.evidence_for, "seed": seed,
                    "n_samples": len(X), "n_features": X.shape[1], "n_classes": int(n_classes), "kernel": kernel,
                    "method": method.name, "metric": metric,
                    "paper": None if spec.evidence_for else paper_value(spec.name, kernel, method.name, metric),
                    "paper_protocol": ev.paper[metric][0], "paper_protocol_std": ev.paper[metric][1],
                    "nested": nested[0], "nested_std": nested[1], "metric_best": best,
                    "metric_best_params": _jsonable(best_params), "support_vectors": sv,
                    "predicted_sets": ev.predicted_sets, "predicted_sets_paper_points": ev.paper_point_sets,
                    "best_params": _jsonable(ev.best_params),
                    "nested_params": json.dumps([json.loads(_jsonable(p)) for p in ev.nested_params]),
                    "edges": ev.edges, "failed_fits": ev.failed_fits, "seconds": round(ev.seconds, 2)})
            if spec.two_d and seed == config.seed:
                panels.setdefault((spec.name, kernel), []).append(
                    (f"{method.name} ({_short(ev.best_params)})", ev.best_estimator, X,
                     y if y.ndim == 2 else label_indicator(y)[1],
                     None if spec.test_points is None else spec.test_points()[0]))
    return rows


def _score_test_points(ev, points, labels):
    """Add ``test_points_correct`` (share of points given exactly their intended label set) for the refitted
    paper-protocol model and for each outer-fold model of the nested protocol, and the refitted model's predicted
    sets at ``points`` and at the paper's own test points (:data:`.paper.TABLE_A_POINTS`)."""
    def correct(model):
        return float((np.asarray(model.predict(points)) == labels).all(axis=1).mean())

    ev.paper["test_points_correct"] = (correct(ev.best_estimator), np.nan)
    if ev.nested_models:
        scores = [correct(m) for m in ev.nested_models]
        ev.nested["test_points_correct"] = (float(np.mean(scores)), float(np.std(scores)))
    ev.predicted_sets = _set_names(ev.best_estimator, points)
    ev.paper_point_sets = _set_names(ev.best_estimator, TABLE_A_POINTS)


def _set_names(model, points) -> str:
    return " ".join(set_name(row) for row in np.asarray(model.predict(np.asarray(points, dtype=float))))


def _short(params):
    names = {"beta": "β", "C": "C", "gamma": "γ_rbf", "alpha": "α"}
    out = []
    for k, v in sorted(params.items()):
        key = names.get(k.split("__")[-1], k.split("__")[-1])
        out.append(f"{key}={v:.3g}" if isinstance(v, float) else f"{key}={v}")
    return ", ".join(out)


# --- rendering ------------------------------------------------------------------------------------
def _cell(mean, std):
    if mean is None or not np.isfinite(mean):
        return "nan" if mean is not None else "n/a"
    return f"{mean:.3f} ± {std:.3f}" if np.isfinite(std) else f"{mean:.3f}"


def main_seed(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows of the main seed (the smallest of each data set: seeds run from the config's seed upwards)."""
    return rows[rows["seed"] == rows.groupby("dataset")["seed"].transform("min")]


def cells(df: pd.DataFrame):
    """(data set, kernel, method) groups in the run's order, each with its rows of every seed."""
    return df.groupby(["dataset", "kernel", "method"], sort=False)


def band_text(rows: pd.DataFrame, folds: int) -> str:
    band = Band.from_rows(rows, folds)
    return "nan" if band is None else band.text()


def to_markdown(df: pd.DataFrame, folds: int = 3) -> str:
    """One Markdown table: a row per data set × kernel × method; per metric the paper's number, the main
    seed's paper protocol (best mean over the grid ± fold sd) and nested CV (mean ± sd over the outer folds),
    and the band over seeds and protocols (:class:`~.verdicts.Band`).

    Parameters
    ----------
    df : DataFrame
        The result rows of the tables.
    folds : int, default=3
        The number of cross-validation folds, for the bands.

    Returns
    -------
    str
        The Markdown table, or "(no rows)" for an empty table.

    Examples
    --------
    >>> from ovn_cvx.experiments import Grid, ReproduceConfig, run_table, to_markdown
    >>> config = ReproduceConfig(tables=("multiclass",), datasets=("iris",), kernels=("linear",),
    ...                          grid=Grid(beta=(1.0,), alpha=(0.0,)), nested=False, band_seeds=1)
    >>> rows, _ = run_table("multiclass", config, progress=lambda message: None)
    >>> table = to_markdown(rows).splitlines()
    >>> table[0].split(" | ")[:4]
    ['| data set', 'kernel', 'method', 'accuracy: paper']
    >>> [line.split(" | ")[2:4] for line in table[2:]]        # method, the paper's number
    [['OvN', '0.987'], ['OvR-SVC', '0.960'], ['CS-LinearSVC', '0.967']]
    """
    if df.empty:
        return "(no rows)\n"
    metrics = list(dict.fromkeys(df["metric"]))
    header = ["data set", "kernel", "method"]
    for m in metrics:
        header += [f"{m}: paper", f"{m}: paper protocol", f"{m}: nested CV", f"{m}: band (mean [min, max])"]
    with_sv = df["support_vectors"].notna().any()
    if with_sv:
        header.append("SVs per class")
    with_sets = df["predicted_sets"].notna().any()
    if with_sets:
        header.append("predicted sets at the test points")
    header += ["best params (paper protocol)", "selected at the grid's edge", "failed fits"]
    rows = []
    for (dataset, kernel, method), g in cells(df):
        main = main_seed(g).set_index("metric")
        out = [dataset, kernel, method]
        for m in metrics:
            if m not in main.index:
                out += ["", "", "", ""]
                continue
            r = main.loc[m]
            out += [r["paper"] if isinstance(r["paper"], str) else "—",
                    _cell(r["paper_protocol"], r["paper_protocol_std"]), _cell(r["nested"], r["nested_std"]),
                    band_text(g[g["metric"] == m], folds)]
        first = main.iloc[0]
        if with_sv:
            out.append("n/a" if pd.isna(first["support_vectors"]) else first["support_vectors"])
        if with_sets:
            out.append(first["predicted_sets"])
        out += [_short(json.loads(first["best_params"])), first["edges"] or "—",
                str(int(g.drop_duplicates("seed")["failed_fits"].sum()))]
        rows.append(out)
    return markdown_table(header, rows) + "\n"


def summary_markdown(df: pd.DataFrame, metric: str) -> str:
    """Compact view of one metric: a row per data set × kernel, per method the main seed's "paper protocol /
    nested CV" (means) and the paper's number beside it.

    Parameters
    ----------
    df : DataFrame
        The result rows of the tables.
    metric : str
        The metric shown.

    Returns
    -------
    str
        The Markdown table, or "(no rows)" when no row has the metric.

    Examples
    --------
    >>> from ovn_cvx.experiments import Grid, ReproduceConfig, run_table, summary_markdown
    >>> config = ReproduceConfig(tables=("multiclass",), datasets=("iris",), kernels=("linear",),
    ...                          grid=Grid(beta=(1.0,), alpha=(0.0,)), nested=False, band_seeds=1)
    >>> rows, _ = run_table("multiclass", config, progress=lambda message: None)
    >>> print(summary_markdown(rows, "accuracy"))
    | data set | kernel | OvN: protocol / nested (paper) | OvR-SVC: protocol / nested (paper) | CS-LinearSVC: ...
    |---|---|---|---|---|
    | iris | linear | 0.9... / nan (0.987) | 0.8... / nan (0.960) | 0.9... / nan (0.967) |
    """
    d = df[df["metric"] == metric]
    if d.empty:
        return "(no rows)\n"
    methods = list(dict.fromkeys(d["method"]))
    header = ["data set", "kernel"] + [f"{m}: protocol / nested (paper)" for m in methods]
    rows = []
    for (dataset, kernel), g in main_seed(d).groupby(["dataset", "kernel"], sort=False):
        g = g.set_index("method")
        out = [dataset, kernel]
        for m in methods:
            if m not in g.index:
                out.append("—")
                continue
            paper = g.loc[m, "paper"]
            out.append(f"{g.loc[m, 'paper_protocol']:.3f} / {g.loc[m, 'nested']:.3f}"
                       + (f" ({paper})" if isinstance(paper, str) else ""))
        rows.append(out)
    return markdown_table(header, rows) + "\n"
