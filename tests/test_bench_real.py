"""benchmarks/bench_real.py runs on a tiny problem and its summary is computed from its CSV rows."""
import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

BENCHMARK = "bench_real"  # the conftest fixture `bench` imports it
BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture(scope="module")
def outputs(bench, tmp_path_factory):
    points = [bench.Point("SwHb", "linear", 0.5, 1.0), bench.Point("HwHb", "linear", 0.0, 100.0)]
    rows = bench.bench_dataset("iris", points, ["CLARABEL", "OSQP"], max_samples=30, repeats=2,
                               repeat_below=5.0, log=lambda line: None)
    out = tmp_path_factory.mktemp("bench_real")
    meta = {"command": "test", "machine": {"date": "d", "platform": "p", "machine": "m", "cpu": "c",
                                           "cpu_count": 1, "python": "3", "versions": {}},
            "commit": "x", "repeats": 2, "repeat_below": 5.0, "max_samples": 30, "solvers": ["CLARABEL", "OSQP"],
            "elapsed": 0.0}
    text = bench.write_outputs(rows, bench.summarize(rows), meta, out)
    return rows, out, text


def test_help_does_no_work(bench):
    with pytest.raises(SystemExit) as exit_:
        bench.parse_args(["--help"])
    assert exit_.value.code == 0
    args = bench.parse_args(["--datasets", "IRIS,glass", "--kernels", "linear"])
    assert args.quick and args.datasets == ["iris", "glass"] and args.max_samples == bench.MAX_SAMPLES["quick"]


def test_csv_columns_and_rows(bench, outputs):
    rows, out, text = outputs
    frame = pd.read_csv(out / "bench_real.csv")
    assert tuple(frame.columns) == bench.COLUMNS
    assert len(frame) == 2 * 4  # 2 problems × (MM, CLARABEL, OSQP, reference)
    assert set(frame["method"]) == {"MM", "CLARABEL", "OSQP", bench.REFERENCE}
    assert (frame["n"] == 30).all() and (frame["seconds"] > 0).all()
    assert not frame.loc[frame["method"] == bench.REFERENCE, "competitor"].any()
    # best is the lowest feasible objective, and every gap is measured to it
    for _, g in frame.groupby("problem"):
        assert np.isclose(g["best_objective"], g["feasible_objective"].min()).all()
        assert (g["rel_gap"] >= -1e-9).all()
    assert "## Definitions" in text and "false success claim" in text
    assert (out / "bench_real.md").read_text() == text


def test_summary_recomputed_from_csv(bench, outputs):
    rows, out, _ = outputs
    frame = pd.read_csv(out / "bench_real.csv")
    ratios = []
    for _, g in frame.groupby("problem", sort=False):
        mm = g.loc[g["method"] == "MM", "seconds"].iloc[0]
        ok = g[g["competitor"] & (g["method"] != "MM") & g["success"]]
        if len(ok):
            ratios.append(ok["seconds"].min() / mm)
    expected = float(np.exp(np.mean(np.log(ratios))))
    for summary in (bench.summarize(rows), bench.summarize(bench.read_rows(out / "bench_real.csv"))):
        assert summary["problems"] == 2 and summary["overall"]["problems"] == len(ratios)
        assert math.isclose(summary["overall"]["geomean"], expected, rel_tol=1e-12)
        assert math.isclose(summary["overall"]["worst"], min(ratios), rel_tol=1e-12)
        assert summary["by"]["kernel"]["linear"]["geomean"] == pytest.approx(expected, rel=1e-12)
        assert summary["certified"] == int(frame.loc[frame["method"] == "MM", "certified"].sum())
        for method, claims in summary["claims"].items():
            mine = frame[frame["method"] == method]
            assert claims["false"] == int(mine["false_claim"].sum())
            assert claims["success"] == int(mine["success"].sum())


def test_compare_definitions(bench):
    def row(method, objective, success=True, bound=math.nan, violation=0.0):
        return {"method": method, "objective": objective, "feasible_objective": objective, "success": success,
                "gap_bound": bound, "violation": violation}
    rows = bench.compare([row("MM", 10.0 + 1e-4, bound=1e-3), row("A", 10.0), row("B", 10.0 + 2e-5, bound=1e-5),
                          row("C", 10.0, violation=1e-3), row(bench.REFERENCE, 10.0 + 1e-6)])
    by = {r["method"]: r for r in rows}
    assert by["A"]["best_objective"] == 10.0 and by["MM"]["rel_gap"] == pytest.approx(1e-5)
    assert by["MM"]["ref_accuracy"] == pytest.approx(1e-7)
    assert by["MM"]["false_claim"] and not by["MM"]["certified"] and not by["MM"]["bound_unsound"]
    assert by["B"]["bound_unsound"] and by["B"]["certified"] and by["B"]["false_claim"]
    assert by["C"]["false_claim"] and not by["A"]["false_claim"]


def test_subsample_keeps_every_class(bench):
    Y = np.zeros((100, 3))
    Y[:95, 0] = 1
    Y[95:98, 1] = 1
    Y[98:, 2] = 1
    keep = bench.subsample(Y, 10)
    assert len(keep) == 10 and (Y[keep] == 1).any(axis=0).all()
    assert np.array_equal(keep, bench.subsample(Y, 10))


def test_parallel_points_give_the_serial_rows(bench, outputs):
    """--n-jobs 2: the same rows in the same order; only the times (and so the number of timed runs) differ."""
    rows, _, _ = outputs
    points = [bench.Point("SwHb", "linear", 0.5, 1.0), bench.Point("HwHb", "linear", 0.0, 100.0)]
    lines = []
    parallel = bench.bench_dataset("iris", points, ["CLARABEL", "OSQP"], max_samples=30, repeats=2,
                                   repeat_below=5.0, log=lines.append, n_jobs=2)
    timing = ["seconds", "runs"]
    pd.testing.assert_frame_equal(pd.DataFrame(rows).drop(columns=timing),
                                  pd.DataFrame(parallel).drop(columns=timing), check_exact=True)
    assert [line.split()[0] for line in lines] == ["iris/SwHb/linear/a=0.5/b=1", "iris/HwHb/linear/a=0/b=100"]


@pytest.mark.parametrize("script", ["bench_real", "bench_paths", "bench_mm"])
def test_timing_benchmarks_default_to_one_job_and_say_why(script, capsys):
    spec = importlib.util.spec_from_file_location(f"_{script}_help", BENCHMARKS / f"{script}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
        parse = module.parse_args if hasattr(module, "parse_args") else module.main
        with pytest.raises(SystemExit) as exit_:
            parse(["--help"])
        assert exit_.value.code == 0
        text = " ".join(capsys.readouterr().out.split())
        assert "--n-jobs N" in text and "(default: 1, serial)" in text and "keep 1 for timing runs" in text
        assert "--scheduler ADDRESS" in text
        with pytest.raises(SystemExit) as exit_:
            parse(["--n-jobs", "0"])
        assert exit_.value.code == 2 and "argument --n-jobs: must be >= 1, got 0" in capsys.readouterr().err
    finally:
        sys.modules.pop(spec.name, None)
