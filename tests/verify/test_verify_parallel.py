"""run_suite / compare / the CLI with --n-jobs and --scheduler: the serial report, row for row, except timings."""
import re
import sys

import pandas as pd
import pytest

from ovn_cvx.cli import main
from ovn_cvx.verify import compare
from ovn_cvx.verify.runner import run_suite

TIMING = ["compile_time", "solve_time", "wall_time"]
#: a quick selection of the tiny suite: every check kind (linear and kernel, soft and hard b, binary)
SELECTION = dict(solvers=["CLARABEL", "MM"], formulations=["SwSb", "HwHb"], progress=False)


def assert_same_report(serial, other):
    """Same rows in the same order with the same values; only the timing columns may differ."""
    pd.testing.assert_frame_equal(serial.comparison.drop(columns=TIMING), other.comparison.drop(columns=TIMING),
                                  check_exact=True)
    pd.testing.assert_frame_equal(serial.checks, other.checks, check_exact=True)
    assert serial.unavailable == other.unavailable
    assert serial.failures() == other.failures()


@pytest.fixture(scope="module")
def serial(tiny):
    suite, binary = tiny
    return run_suite(suite, binary=binary, **SELECTION)


def test_n_jobs_2_gives_the_serial_report(tiny, serial):
    suite, binary = tiny
    assert len(serial.comparison) == 2 * 2 * 3 and len(serial.checks)
    assert_same_report(serial, run_suite(suite, binary=binary, n_jobs=2, **SELECTION))


def test_dask_scheduler_gives_the_serial_report(tiny, serial, dask_scheduler):
    suite, binary = tiny
    assert_same_report(serial, run_suite(suite, binary=binary, scheduler=dask_scheduler, **SELECTION))


def test_compare_methods_in_parallel(tiny):
    (_, problem), = tiny[0][1].problems(variants=("SwHb",))  # the RBF case
    methods = ["CLARABEL:default", "CLARABEL:high", "MM", "ECOS"]
    one, two = compare(problem, methods), compare(problem, methods, n_jobs=2)
    pd.testing.assert_frame_equal(one.drop(columns=TIMING), two.drop(columns=TIMING), check_exact=True)


def test_run_suite_rejects_bad_n_jobs(tiny):
    with pytest.raises(ValueError, match="n_jobs must be a positive integer or -1"):
        run_suite(tiny[0], n_jobs=0, **SELECTION)


def test_cli_n_jobs_and_scheduler_run(tiny_suite, dask_scheduler, capsys):
    argv = ["compare", "--solvers", "CLARABEL", "--formulations", "linear-SwHb", "--no-progress"]
    assert main([*argv, "--n-jobs", "2"]) == 0
    assert "PASSED" in capsys.readouterr().out
    assert main([*argv, "--scheduler", dask_scheduler]) == 0
    assert "PASSED" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["verify", "compare", "reproduce"])
@pytest.mark.parametrize("value, message", [("0", "must be >= 1, got 0"), ("-1", "must be >= 1, got -1"),
                                            ("two", "must be an integer, got 'two'")])
def test_cli_bad_n_jobs_is_a_usage_error(command, value, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--n-jobs", value])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --n-jobs: {message}" in err and "Traceback" not in err


@pytest.mark.parametrize("command", ["verify", "compare", "reproduce"])
def test_cli_scheduler_without_dask_names_the_extra(command, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if dask.distributed were not installed
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--scheduler", "tcp://127.0.0.1:8786"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert re.search(r"argument --scheduler: .*dask\.distributed.* not installed", err)
    assert 'pip install "ovn-cvx[dask]"' in err and "Traceback" not in err


@pytest.mark.slow
def test_larger_problems_equal_the_serial_run():
    """Where OpenBLAS would split the work among its threads (N = 200 RBF, the kernel-form checks of N = 150), the
    serial run and the workers both use one BLAS thread (ovn_cvx._parallel): the same arithmetic, the same report."""
    from ovn_cvx.verify.suite import FULL_SUITE

    suite = tuple(case for case in FULL_SUITE if case.name in ("ml-K5-rbf-N200", "mc-K5-N150"))
    options = dict(solvers=["CLARABEL", "MM"], formulations=["SwSb", "HwHb"], binary=(), progress=False)
    assert_same_report(run_suite(suite, **options), run_suite(suite, n_jobs=2, **options))
