"""``reproduce()``: every table (CSV + Markdown), the paper's numbers with a verdict each, the claims' own
measurements, the 2-D figures (PNG) and a report with the run's record."""
from __future__ import annotations

import datetime as _dt
import json
import time
from pathlib import Path

import pandas as pd
from threadpoolctl import threadpool_limits

from .._reports import environment
from . import paper
from . import tables as _tables
from .figures import plot_2d_problems
from .hyperplanes import claim_sets, measure_hyperplanes, plot_hyperplanes
from .report import HYPERPLANE_BETA, TITLES, provenance, render, verdict_summary
from .support_vectors import support_vector_path
from .tables import TABLES, ReproduceConfig, run_table, seeded_data, selected_specs, to_markdown
from .verdicts import SUPPORT_ALPHA, assess, check_claims

__all__ = ["reproduce", "verdict_summary"]

#: the columns of the table files that hold text (read back as text, not as numbers: "0.10" stays "0.10")
TEXT_COLUMNS = ("table", "dataset", "evidence_for", "kernel", "method", "metric", "paper", "metric_best_params",
                "support_vectors", "predicted_sets", "predicted_sets_paper_points", "best_params", "nested_params",
                "edges")
#: configuration entries that do not change a table's numbers (a table may be reused across them)
NOT_NUMBERS = ("n_jobs", "tables", "datasets", "quick")


def _check_selection(config: ReproduceConfig, reuse) -> tuple[str, ...]:
    unknown = set(config.tables) - set(TABLES)
    if unknown:
        raise ValueError(f"tables must be among {TABLES}, got {sorted(unknown)}")
    names = {d.name for d in _tables.DATASETS}
    unknown = set(config.datasets or ()) - names
    if unknown:
        raise ValueError(f"datasets must be among {sorted(names)}, got {sorted(unknown)}")
    reuse = tuple(reuse)
    if not set(reuse) <= set(config.tables):
        raise ValueError(f"reuse must name tables of the run {config.tables}, got {sorted(set(reuse))}")
    return reuse


def _reused_tables(out: Path, reuse, config: ReproduceConfig) -> tuple[dict, dict]:
    """The tables of ``reuse`` read from an earlier run in ``out`` with the same configuration, and when the run
    that computed each started."""
    if not reuse:
        return {}, {}
    record = out / "run.json"
    if not record.is_file():
        raise ValueError(f"reuse needs an earlier run in {out} (no run.json there)")
    earlier = json.loads(record.read_text())
    mine = json.loads(json.dumps(config.as_dict(), default=str))
    differs = sorted(k for k in mine if k not in NOT_NUMBERS and earlier["config"].get(k) != mine[k])
    if differs:
        raise ValueError(f"reuse needs the earlier run's configuration; {out / 'run.json'} differs in {differs}")
    tables, started = {}, {}
    for table in reuse:
        path = out / f"{table}.csv"
        if not path.is_file():
            raise ValueError(f"reuse: the earlier run in {out} has no {path.name}")
        df = pd.read_csv(path, dtype={c: str for c in TEXT_COLUMNS})
        tables[table] = df.reindex(columns=_tables.COLUMNS)  # a column added since is empty
        started[table] = earlier.get("reused", {}).get(table, earlier["started_utc"])
    return tables, started


def reproduce(config: ReproduceConfig, out_dir, *, ovn_class=None, progress=print, reuse=()) -> dict:
    """Run the selected tables, write ``<table>.csv``/``.md``, ``results.csv``, ``figures/*.png`` and
    ``report.md`` (with seeds, grids, versions, machine and duration) into ``out_dir``.

    Also ``verdicts.csv`` (each paper number: ours, the band, the verdict, its margin, the evidence),
    ``claims.csv`` (the paper's qualitative claims checked as patterns) and, with the two-class table, the claims'
    own measurements ``support_vectors.csv`` and ``hyperplanes.csv``. ``reuse``: tables taken from the earlier
    run in ``out_dir`` instead of being refitted (it must have the same configuration, but for ``n_jobs`` and the
    selection); the verdicts, claims and report are computed anew.

    Parameters
    ----------
    config : ReproduceConfig
        The configuration of the run.
    out_dir : str or path-like
        The output directory.
    ovn_class : type or None, default=None
        The estimator class fitted as OvN; None uses :class:`~ovn_cvx.OvNClassifier`.
    progress : callable, default=print
        Called with each progress message.
    reuse : sequence of str, default=()
        The tables taken from the earlier run in ``out_dir``.

    Returns
    -------
    dict
        {"tables": {name: DataFrame}, "verdicts": DataFrame, "claims": DataFrame, "measurements": dict,
        "figures": [paths] or a message, "report": path, "seconds": float}.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from ovn_cvx.experiments import Grid, ReproduceConfig, reproduce
    >>> config = ReproduceConfig(tables=("multiclass",), datasets=("iris",), kernels=("linear",),
    ...                          grid=Grid(beta=(1.0,), alpha=(0.0,)), nested=False, band_seeds=1)
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     out = reproduce(config, folder, progress=lambda message: None)
    ...     written = sorted(path.name for path in Path(folder).iterdir())
    >>> written
    ['claims.csv', 'figures', 'multiclass.csv', 'multiclass.md', 'report.md', 'results.csv', 'run.json', 'verdicts.csv']
    >>> sorted(out)
    ['claims', 'figures', 'measurements', 'report', 'seconds', 'tables', 'verdicts']
    """
    reuse = _check_selection(config, reuse)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tables, reused = _reused_tables(out, reuse, config)
    started = _dt.datetime.now(_dt.timezone.utc)
    t0 = time.perf_counter()
    panels, measurements = {}, {}
    with threadpool_limits(limits=1):  # small BLAS calls: threads only add contention (docs/theory.md §9.7)
        for table in config.tables:
            if table in reused:
                progress(f"[{table}] taken from the run started {reused[table]}")
                continue
            progress(f"[{table}]")
            df, p = run_table(table, config, ovn_class=ovn_class, progress=progress)
            tables[table] = df
            panels.update(p)
            df.to_csv(out / f"{table}.csv", index=False)
            (out / f"{table}.md").write_text(f"## {TITLES[table]}\n\n{to_markdown(df, config.folds)}\n"
                                             f"{provenance(config)}\n")
        if "two_class" in config.tables:
            measurements = _claim_measurements(config, out, ovn_class, progress)
    tables = {t: tables[t] for t in config.tables}
    figures = plot_2d_problems(panels, out / "figures")
    if isinstance(figures, str):
        progress(figures)
    else:
        figures += _earlier_figures(out, reused, config)
        if measurements.get("hyperplane_figure") is not None:
            figures.append(measurements["hyperplane_figure"])
    seconds = time.perf_counter() - t0
    results = pd.concat(tables.values(), ignore_index=True) if tables else pd.DataFrame(columns=_tables.COLUMNS)
    results.to_csv(out / "results.csv", index=False)
    numbers = [n for n in paper.PAPER_NUMBERS if paper.TABLE_OF[n.table] in config.tables]
    verdicts = assess(results, config.folds, numbers)
    verdicts.to_csv(out / "verdicts.csv", index=False)
    claims = check_claims(results, config.folds, [c for c in paper.CLAIMS if paper.TABLE_OF[c.table] in config.tables],
                          measurements)
    claims.to_csv(out / "claims.csv", index=False)
    report = out / "report.md"
    links = figures if isinstance(figures, str) else [Path(p).relative_to(out) for p in figures]  # from the report
    report.write_text(render(config, tables, results, verdicts, claims, measurements, links, started, seconds,
                             reused=reused, ovn_class=ovn_class))
    (out / "run.json").write_text(json.dumps({"config": config.as_dict(), "environment": environment(),
                                              "started_utc": started.isoformat(), "seconds": seconds,
                                              "reused": reused}, indent=2, default=str))
    return {"tables": tables, "verdicts": verdicts, "claims": claims, "measurements": measurements,
            "figures": figures, "report": report, "seconds": seconds}


def _earlier_figures(out: Path, reused: dict, config: ReproduceConfig) -> list[Path]:
    """The 2-D figures an earlier run drew for the tables taken from it."""
    return [path for table in reused for spec in selected_specs(table, config) if spec.two_d
            for kernel in spec.kernels or config.kernels
            if (path := out / "figures" / f"{spec.name}_{kernel}.png").is_file()]


def _claim_measurements(config, out, ovn_class, progress) -> dict:
    """The two-class table's claims measured on their own (:mod:`.support_vectors`, :mod:`.hyperplanes`):
    ``support_vectors.csv``, ``hyperplanes.csv``, ``figures/hyperplanes.png``."""
    from ..estimator import OvNClassifier

    progress("[support vectors at matched regularisation]")
    alphas = sorted(set(config.grid.alpha) | {SUPPORT_ALPHA})
    paths = [support_vector_path(X, y, kernel, beta_factors=config.grid.beta, alphas=alphas,
                                 ovn_class=ovn_class or OvNClassifier, folds=config.folds, seed=seed,
                                 solver=config.ovn_solver, dataset=spec.name)
             for spec in selected_specs("two_class", config) for seed, X, y in seeded_data(spec, config)
             for kernel in spec.kernels or config.kernels]
    path = pd.concat(paths, ignore_index=True) if paths else pd.DataFrame()
    path.to_csv(out / "support_vectors.csv", index=False)
    progress("[parallel hyperplanes]")
    sets, fits = {}, {}
    for name, (X, y) in claim_sets(config.seed).items():
        sets[name], fits[name] = measure_hyperplanes(X, y, beta=HYPERPLANE_BETA, return_fits=True)
    pd.concat([t.assign(set=name) for name, t in sets.items()]).to_csv(out / "hyperplanes.csv", index=False)
    drawn = plot_hyperplanes(fits, out / "figures" / "hyperplanes.png")
    return {"support_vectors": path, "hyperplanes": sets,
            "hyperplane_figure": None if isinstance(drawn, str) else drawn}
