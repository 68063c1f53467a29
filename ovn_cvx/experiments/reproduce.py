"""``reproduce()``: every table (CSV + Markdown), the 2-D figures (PNG) and a report with the run's record."""
from __future__ import annotations

import datetime as _dt
import json
import time
from pathlib import Path

import pandas as pd
from threadpoolctl import threadpool_limits

from .._reports import environment
from . import paper
from .figures import plot_2d_problems
from . import tables as _tables
from .tables import TABLES, ReproduceConfig, run_table, summary_markdown, to_markdown

TITLES = {
    "unseen_label": "Unseen-label set (2-D; patterns of a label absent from training)",
    "two_class": "Two-class 2-D problems: accuracy and support vectors per class",
    "multiclass": "Multiclass: glass, iris, wine",
    "multilabel": "Multilabel: synthetic, scene, emotions",
}


def comparisons(results: pd.DataFrame) -> list[str]:
    """Plain statements: OvN vs the best baseline (nested CV when it was run, else the paper protocol) and
    the optimism of the paper protocol, each against the fold-to-fold spread."""
    notes = []
    for (table, dataset, kernel), g in results.groupby(["table", "dataset", "kernel"], sort=False):
        metric = g["metric"].iloc[0]  # the primary metric of the task
        g = g[g["metric"] == metric].set_index("method")
        if "OvN" not in g.index or len(g) < 2:
            continue
        col = "nested" if g["nested"].notna().all() else "paper_protocol"
        ovn, base = g.loc["OvN"], g.drop(index="OvN")
        best = base[col].idxmax()
        diff = ovn[col] - base.loc[best, col]
        spread = max(ovn[f"{col}_std"], base.loc[best, f"{col}_std"])
        verdict = "beyond" if abs(diff) > spread else "within"
        note = (f"{dataset} ({kernel}), {metric}, {col.replace('_', ' ')}: OvN {ovn[col]:.3f} vs {best} "
                f"{base.loc[best, col]:.3f} (difference {diff:+.3f}, {verdict} the fold-to-fold spread {spread:.3f})")
        if col == "nested":
            note += f"; paper protocol − nested for OvN: {ovn['paper_protocol'] - ovn['nested']:+.3f}"
        notes.append(note + ".")
    return notes


def reproduce(config: ReproduceConfig, out_dir, *, ovn_class=None, progress=print) -> dict:
    """Run the selected tables, write ``<table>.csv``/``.md``, ``results.csv``, ``figures/*.png`` and
    ``report.md`` (with seeds, grids, versions, machine and duration) into ``out_dir``.

    Returns {"tables": {name: DataFrame}, "figures": [paths] or a message, "report": path, "seconds": float}.
    """
    unknown = set(config.tables) - set(TABLES)
    if unknown:
        raise ValueError(f"tables must be among {TABLES}, got {sorted(unknown)}")
    names = {d.name for d in _tables.DATASETS}
    unknown = set(config.datasets or ()) - names
    if unknown:
        raise ValueError(f"datasets must be among {sorted(names)}, got {sorted(unknown)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    started = _dt.datetime.now(_dt.timezone.utc)
    t0 = time.perf_counter()
    tables, panels = {}, {}
    with threadpool_limits(limits=1):  # small BLAS calls: threads only add contention (docs/theory.md §9.7)
        for table in config.tables:
            progress(f"[{table}]")
            df, p = run_table(table, config, ovn_class=ovn_class, progress=progress)
            tables[table] = df
            panels.update(p)
            df.to_csv(out / f"{table}.csv", index=False)
            (out / f"{table}.md").write_text(f"## {TITLES[table]}\n\n{to_markdown(df)}\n{_provenance(config)}\n")
    figures = plot_2d_problems(panels, out / "figures")
    if isinstance(figures, str):
        progress(figures)
    seconds = time.perf_counter() - t0
    results = pd.concat(tables.values(), ignore_index=True) if tables else pd.DataFrame()
    results.to_csv(out / "results.csv", index=False)
    report = out / "report.md"
    links = figures if isinstance(figures, str) else [Path(p).relative_to(out) for p in figures]  # from the report
    report.write_text(_report(config, tables, results, links, started, seconds))
    (out / "run.json").write_text(json.dumps({"config": config.as_dict(), "environment": environment(),
                                              "started_utc": started.isoformat(), "seconds": seconds},
                                             indent=2, default=str))
    return {"tables": tables, "figures": figures, "report": report, "seconds": seconds}


def _provenance(config) -> str:
    """One line for every table file: what produced it."""
    env = environment()
    v = env["versions"]
    return (f"seed {config.seed}, {config.folds}-fold CV (nested {config.folds}×{config.folds}), grid "
            f"{json.dumps(config.grid.as_dict(), ensure_ascii=False)}, max_samples {config.max_samples}, OvN "
            f"{config.ovn_variant}/{config.ovn_solver}; python {env['python']}, scikit-learn {v['scikit-learn']}, "
            f"numpy {v['numpy']}, cvxpy {v['cvxpy']}, ovn-cvx {v['ovn-cvx']}; {env['cpu']} × {env['cpu_count']}, "
            f"{env['platform']}")


def _report(config, tables, results, figures, started, seconds) -> str:
    env = environment()
    lines = [f"# Reproduction of Shajari & Rangarajan, \"{paper.PAPER_TITLE}\"", "",
             f"Run {'--quick' if config.quick else '(full)'} started {started:%Y-%m-%d %H:%M:%S} UTC, "
             f"took **{seconds:.1f} s** with n_jobs={config.n_jobs}.", "",
             f"**Paper numbers:** {paper.PAPER_NOTE}. Sources searched: " + ", ".join(paper.PAPER_SOURCES) + ".", "",
             "## Protocols", "",
             f"* **paper protocol**: {config.folds}-fold CV over the whole grid, the best mean score "
             "(`GridSearchCV.best_score_`) ± that candidate's fold-to-fold standard deviation. Chosen and scored "
             "on the same folds: optimistic.",
             f"* **nested CV**: `cross_validate(GridSearchCV(...))`, {config.folds} outer × {config.folds} inner "
             "folds; mean ± standard deviation over the outer folds.",
             "* Same splits (seeded), same grids and metrics for every method. C_sklearn = β/2; Gaussian kernel "
             "exp(−‖x−y‖²/(2σ²)) ⇒ gamma = 1/(2σ²), σ = factor × σ₀, σ₀ = sqrt(M·Var X / 2) of the data set "
             "(after standardisation where applied).",
             "* Metrics: multiclass accuracy and Hamming loss (scikit-learn's `hamming_loss` of 1-D labels = "
             "1 − accuracy); multilabel example-based accuracy `jaccard_score(average=\"samples\", "
             "zero_division=1)` and Hamming loss; unseen-label set (`make_unseen_labelset`, training label "
             "sets [1,0] and [1,1] only): also `test_points_correct`, the share of the three points "
             "(2,−2), (2,2), (0,4) given their intended sets [1,0], [1,1], [0,1] — [0,1] never occurs in "
             "training (paper protocol: the refitted best model; nested: the mean over the outer-fold models).",
             "* Data: glass, iris, wine, scene (Mulan train+test), emotions (Mulan train+test) from "
             "`ovn_cvx.datasets`; 2-D toys from its generators (our constructions: the paper's data are not "
             "available); `synthetic` = `sklearn.datasets.make_multilabel_classification(300, n_features=10, "
             "n_classes=5, n_labels=2, allow_unlabeled=False)` (the paper's synthetic set is not described "
             "in any source we could read). Subsampling (max_samples) is stratified for class labels.",
             "* Baselines: `OneVsRestClassifier(SVC)` (OvR-SVC; on an indicator matrix: binary relevance, "
             "BR-SVC), `LinearSVC(multi_class=\"crammer_singer\")` (CS, linear only). "
             + ("Every data set is standardised" if config.standardize_all else "emotions is standardised")
             + " (`StandardScaler` inside the pipeline, fitted on each training fold).", "",
             "## Configuration", "", "```", json.dumps(config.as_dict(), indent=1, default=str), "```", "",
             "## Environment", "", "```", json.dumps(env, indent=1), "```", ""]
    for name, df in tables.items():
        lines += [f"## {TITLES[name]}", ""]
        if len(df):
            primary = df["metric"].iloc[0]
            lines += [f"Summary ({primary}, means, paper protocol / nested CV):", "", summary_markdown(df, primary),
                      "Details (mean ± standard deviation over the folds):", ""]
        lines.append(to_markdown(df))
        failed = int(df.drop_duplicates(["dataset", "kernel", "method"])["failed_fits"].sum()) if len(df) else 0
        if failed:
            lines += [f"**{failed} fits failed** (scored NaN) in this table.", ""]
    notes = comparisons(results) if len(results) else []
    if notes:
        lines += ["## OvN vs the best baseline (nested CV, primary metric)", ""] + [f"* {n}" for n in notes] + [""]
    lines += ["## Figures", ""]
    if isinstance(figures, str):
        lines.append(figures)
    else:
        lines += [f"* [{p.name}]({p.as_posix()})" for p in figures]
    return "\n".join(lines) + "\n"
