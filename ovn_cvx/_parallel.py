"""The one parallel loop of the package: :func:`parallel_map` runs ``func`` over ``items`` serially, on local joblib
workers (``n_jobs``) or on a Dask cluster (``scheduler``, a ``dask.distributed`` scheduler address), and returns
the results **in the order of** ``items``.

* Every call runs with one BLAS/OpenMP thread (threadpoolctl around it), in every mode: OpenBLAS splits products
  and factorizations differently for each thread count (measured: the last bits of verify --full's N = 200 RBF
  problem and three verdicts at the edge of their tolerances), so one count everywhere makes a run's results
  independent of ``n_jobs``, the scheduler and the machine's cores.
* ``n_jobs=1`` and no scheduler is a plain ``for`` loop in this process.
* ``n_jobs`` > 1 (or −1: every core): joblib's default process backend (loky), with joblib's
  ``inner_max_num_threads=1`` as well, so that N workers on N cores do not oversubscribe.
* ``scheduler="tcp://host:8786"``: the same joblib loop under ``joblib.parallel_config(backend="dask")`` with a
  ``distributed.Client`` connected to that scheduler; every worker of the cluster is used (joblib's Dask backend
  ignores ``n_jobs``). Needs the optional extra ``dask`` (``pip install "ovn-cvx[dask]"``); without it
  :class:`DaskNotInstalled` says so, and a scheduler that does not answer within :data:`SCHEDULER_TIMEOUT` seconds
  is a :class:`SchedulerUnreachable`. The cluster's workers must be able to import ovn_cvx (and any user's solver).

Progress (``progress=True``) goes through :mod:`ovn_cvx._progress` in the calling process, one step per finished
item (in order); ``on_result`` is called there with each result, also in order. Timings measured inside ``func``
are distorted by parallel workers sharing the machine: timing benchmarks default to ``n_jobs=1``.
"""
from __future__ import annotations

import contextlib
import numbers

from ._progress import progress_steps

#: how to install the optional Dask backend
DASK_EXTRA = 'pip install "ovn-cvx[dask]"'


#: seconds to wait for a Dask scheduler to answer (dask.distributed's own default is 30 s)
SCHEDULER_TIMEOUT = 5.0


class DaskNotInstalled(ImportError):
    """``scheduler=`` was given but ``dask.distributed`` cannot be imported."""


class SchedulerUnreachable(ConnectionError):
    """``scheduler=`` is not the address of a Dask scheduler that answers within :data:`SCHEDULER_TIMEOUT`."""


def check_n_jobs(n_jobs, name: str = "n_jobs") -> int:
    """``n_jobs`` as an int: a positive number of workers, or −1 (every core). ValueError naming ``name``."""
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or not (n_jobs >= 1 or n_jobs == -1):
        raise ValueError(f"{name} must be a positive integer or -1 (every core), got {n_jobs!r}")
    return int(n_jobs)


def check_scheduler(scheduler, name: str = "scheduler"):
    """None, or a non-empty scheduler address string (e.g. "tcp://127.0.0.1:8786")."""
    if scheduler is not None and (not isinstance(scheduler, str) or not scheduler.strip()):
        raise ValueError(f"{name} must be a dask.distributed scheduler address such as 'tcp://127.0.0.1:8786', "
                         f"got {scheduler!r}")
    return scheduler


def require_dask():
    """``distributed.Client``; :class:`DaskNotInstalled` naming the extra when dask.distributed is missing."""
    try:
        from distributed import Client
    except ImportError as err:
        raise DaskNotInstalled(f"a Dask scheduler needs dask.distributed, which is not installed ({err}); "
                               f"install the optional extra: {DASK_EXTRA}") from None
    return Client


def _probe_scheduler(scheduler: str) -> None:
    """Open and close one connection to ``scheduler``; :class:`SchedulerUnreachable` with the reason when that
    fails or takes longer than :data:`SCHEDULER_TIMEOUT` (probed first: a ``Client`` that cannot connect leaves
    warnings behind when it is collected)."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from distributed.comm import connect

    async def probe():
        comm = await connect(scheduler, timeout=SCHEDULER_TIMEOUT)
        await comm.close()

    try:  # in a thread of its own: the caller may be inside an event loop (Jupyter)
        with ThreadPoolExecutor(1) as thread:
            thread.submit(asyncio.run, probe()).result()
    except Exception as err:  # noqa: BLE001 — whatever the address does wrong, it is not a scheduler
        raise SchedulerUnreachable(f"no Dask scheduler answers at {scheduler!r} within {SCHEDULER_TIMEOUT:g} s "
                                   f"({type(err).__name__}: {err})") from None


@contextlib.contextmanager
def dask_backend(scheduler: str):
    """Within this context every joblib loop (ours, scikit-learn's ``n_jobs``) runs on the Dask cluster at
    ``scheduler``: a ``distributed.Client`` and ``joblib.parallel_config(backend="dask")``.
    :class:`SchedulerUnreachable` when the scheduler does not answer within :data:`SCHEDULER_TIMEOUT` seconds."""
    import joblib

    check_scheduler(scheduler)
    client_class = require_dask()
    _probe_scheduler(scheduler)
    with client_class(scheduler, timeout=SCHEDULER_TIMEOUT) as client, joblib.parallel_config(backend="dask"):
        yield client


def cloudpickle():
    """The cloudpickle module joblib uses: the package (joblib >= 1.5) or joblib's own copy (older joblib)."""
    try:
        import cloudpickle as module
    except ImportError:
        from joblib.externals import cloudpickle as module
    return module


def pickle_by_value(module) -> None:
    """Let the workers receive ``module``'s functions and classes by value (cloudpickle, as joblib and Dask use it):
    a benchmark script imported from its file (a test) is not importable by name in a worker process. Nothing to
    do for ``__main__``, which cloudpickle always ships by value."""
    if module.__name__ != "__main__":
        cloudpickle().register_pickle_by_value(module)


class _SingleThreaded:
    """``func`` with the BLAS/OpenMP pools limited to one thread during the call (picklable, for the workers)."""

    def __init__(self, func):
        self.func = func

    def __call__(self, item):
        from ._blas import blas_controller

        with blas_controller().limit(limits=1):  # the process's pools, inspected once (not per item)
            return self.func(item)


def parallel_map(func, items, n_jobs: int = 1, scheduler: str | None = None, *, progress: bool = False,
                 desc: str = "ovn-cvx", unit: str = "item", on_result=None) -> list:
    """``[func(item) for item in items]``, serially (``n_jobs=1``, no ``scheduler``), on ``n_jobs`` local
    joblib workers, or on the Dask cluster at ``scheduler``; the results in the order of ``items``.

    Items are dispatched one at a time (``batch_size=1``: they are coarse, a problem with all its solvers, and
    joblib's automatic batching could pair two long ones on one worker). ``func`` and the items must be picklable
    for the parallel runs (joblib uses cloudpickle: lambdas and local functions are fine). ``progress`` reports
    each finished item on stderr (:mod:`ovn_cvx._progress`); ``on_result(result)`` is called in this process for
    each result in order, as soon as it and its predecessors are done.
    """
    n_jobs = check_n_jobs(n_jobs)
    check_scheduler(scheduler)
    items = list(items)
    if n_jobs == 1 and scheduler is None:
        results, single = [], _SingleThreaded(func)
        for item in progress_steps(items, len(items), desc=desc, enabled=progress, unit=unit):
            results.append(single(item))
            if on_result is not None:
                on_result(results[-1])
        return results
    import joblib

    task = joblib.delayed(_SingleThreaded(func))
    with contextlib.ExitStack() as stack:
        if scheduler is not None:
            stack.enter_context(dask_backend(scheduler))
            runner = joblib.Parallel(n_jobs=-1, return_as="generator", batch_size=1)
        else:
            stack.enter_context(joblib.parallel_config(backend="loky", inner_max_num_threads=1))
            runner = joblib.Parallel(n_jobs=n_jobs, return_as="generator", batch_size=1)
        results = []
        for result in progress_steps(runner(task(item) for item in items), len(items), desc=desc,
                                     enabled=progress, unit=unit):
            results.append(result)
            if on_result is not None:
                on_result(result)
    return results


__all__ = ["DASK_EXTRA", "DaskNotInstalled", "SCHEDULER_TIMEOUT", "SchedulerUnreachable", "check_n_jobs",
           "check_scheduler", "cloudpickle", "dask_backend", "parallel_map", "pickle_by_value",
           "require_dask"]
