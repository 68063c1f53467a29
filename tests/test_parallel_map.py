"""ovn_cvx._parallel: order, argument checks, one BLAS thread per worker, the message without dask."""
import re
import sys
import time

import pytest

from ovn_cvx._parallel import DASK_EXTRA, DaskNotInstalled, check_n_jobs, parallel_map


def _slow_square(x):
    time.sleep(0.05 * (4 - x))  # the first items finish last
    return x * x


def _blas_threads(_):
    from threadpoolctl import threadpool_info
    return max((pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"), default=1)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_results_keep_the_order_of_the_items(n_jobs):
    seen = []
    assert parallel_map(_slow_square, range(5), n_jobs, on_result=seen.append) == [0, 1, 4, 9, 16]
    assert seen == [0, 1, 4, 9, 16]
    assert parallel_map(_slow_square, [], n_jobs) == []


def test_a_lambda_runs_on_workers():
    assert parallel_map(lambda x: -x, [1, 2, 3], n_jobs=2) == [-1, -2, -3]


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_every_call_uses_one_blas_thread(n_jobs):
    """Serial too: one thread count everywhere, so that results do not depend on n_jobs or the machine's cores."""
    assert parallel_map(_blas_threads, range(2), n_jobs=n_jobs) == [1, 1]


@pytest.mark.parametrize("bad", [0, -2, 1.5, True, "2", None])
def test_bad_n_jobs_is_a_value_error_naming_it(bad):
    with pytest.raises(ValueError, match=r"n_jobs must be a positive integer or -1"):
        parallel_map(abs, [1], bad)
    with pytest.raises(ValueError, match=r"n_jobs must be"):
        check_n_jobs(bad)


@pytest.mark.parametrize("bad", ["", "  ", 8786])
def test_bad_scheduler_is_a_value_error_naming_it(bad):
    with pytest.raises(ValueError, match="scheduler must be a dask.distributed scheduler address"):
        parallel_map(abs, [1], scheduler=bad)


def test_scheduler_without_dask_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if dask.distributed were not installed
    with pytest.raises(DaskNotInstalled, match=re.escape(f"install the optional extra: {DASK_EXTRA}")) as info:
        parallel_map(abs, [1], scheduler="tcp://127.0.0.1:8786")
    assert 'pip install "ovn-cvx[dask]"' in str(info.value)


def test_progress_lines_in_order(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # the plain-line fallback of ovn_cvx._progress
    assert parallel_map(abs, [-1, -2, -3], n_jobs=2, progress=True, desc="test", unit="job") == [1, 2, 3]
    err = capsys.readouterr().err
    assert [line.split(" (")[0] for line in err.splitlines()] == [f"test: job {i}/3" for i in (1, 2, 3)]


def test_dask_scheduler_keeps_the_order(dask_scheduler):
    assert parallel_map(_slow_square, range(5), scheduler=dask_scheduler) == [0, 1, 4, 9, 16]
