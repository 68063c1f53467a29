import contextlib
import importlib.util
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import ovn_cvx.estimator
from ovn_cvx import Problem, solve
from ovn_cvx.datasets import make_data


def pytest_collection_modifyitems(items):
    """``@pytest.mark.degenerate_labels``: the test fits data on which some labels are degenerate by design (the
    small fixtures have them), so the estimator's DegenerateLabelWarning is expected there and nowhere else (the
    test run turns it into an error, pyproject.toml)."""
    for item in items:
        if item.get_closest_marker("degenerate_labels"):
            item.add_marker(pytest.mark.filterwarnings("ignore::ovn_cvx.exceptions.DegenerateLabelWarning"))


@pytest.fixture(scope="session")
def multiclass_data():
    return make_data("multiclass", n_samples=45, n_features=3, n_classes=3, seed=11)


@pytest.fixture(scope="session")
def multilabel_data():
    """Multilabel with an unlabeled last row, sample weights and one known-negative (−1) entry."""
    X, Y = make_data("multilabel", n_samples=48, n_features=4, n_classes=4, seed=12)
    assert not Y[-1].any()
    Y = Y.copy()
    Y[0, np.flatnonzero(Y[0] == 0)[0]] = -1.0
    weights = np.random.default_rng(3).uniform(0.5, 2.0, size=X.shape[0])
    return X, Y, weights


@pytest.fixture(params=["multiclass", "multilabel"])
def data(request, multiclass_data, multilabel_data):
    return multiclass_data if request.param == "multiclass" else multilabel_data


def _make_problem(data, variant, kernel, alpha=-0.3, beta=1.3, bias_penalty=0.4):
    """A Problem on (X, Y) or (X, Y, sample_weight); α only for soft-w variants."""
    X, Y, s = data if len(data) == 3 else (*data, None)
    alpha = alpha if variant.startswith("Sw") else 0.0
    return Problem(X, Y, variant, kernel, alpha=alpha, beta=beta, bias_penalty=bias_penalty, sample_weight=s)


@pytest.fixture
def make_problem():
    return _make_problem


@pytest.fixture(autouse=True)
def _no_alpha_warning_noise():
    # Hard-w variants warn when given alpha != 0; tests that care use pytest.warns explicitly.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="alpha=.* is ignored")
        yield


@pytest.fixture
def solved_problems(monkeypatch):
    """The Problems ``OvNClassifier`` hands to its solver, in order (a fitted model does not keep its problem)."""
    problems = []

    def spy(problem, **options):
        problems.append(problem)
        return solve(problem, **options)

    monkeypatch.setattr(ovn_cvx.estimator, "solve", spy)
    return problems


BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@contextlib.contextmanager
def benchmark_script(name: str):
    """A script of benchmarks/ imported as a module (they are scripts, not a package), removed afterwards."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(spec.name, None)


@pytest.fixture(scope="module")
def bench(request):
    """The benchmark script named by the test module's ``BENCHMARK``."""
    with benchmark_script(request.module.BENCHMARK) as module:
        yield module


@pytest.fixture(scope="session")
def dask_scheduler():
    """The address of a small local Dask cluster (2 workers, 1 thread each, in this process: quick to start),
    shared by the tests that run through ``--scheduler``; skipped without the extra ``dask``."""
    pytest.importorskip("distributed", reason="the optional extra 'dask' (dask[distributed]) is not installed")
    from distributed import LocalCluster

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # distributed's own start-up chatter (ports, dashboard)
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None)
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()
