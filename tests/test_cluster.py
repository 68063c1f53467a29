"""On a Dask cluster: OvNClassifier in GridSearchCV under joblib's Dask backend equals the serial search, and
``ovn-cvx reproduce --scheduler`` runs scikit-learn's loops under that backend."""
import importlib

import joblib
import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, StratifiedKFold

from ovn_cvx import OvNClassifier
from ovn_cvx.cli import main
from ovn_cvx.datasets import make_data


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_grid_search_on_dask_equals_serial(kernel, dask_scheduler):
    from distributed import Client

    X, y = make_data("multiclass", 60, 3, 3, seed=5)
    y = y.argmax(axis=1) if y.ndim == 2 else y
    grid = {"beta": [0.5, 4.0], "alpha": [0.0, 0.4]}
    cv = StratifiedKFold(3, shuffle=True, random_state=0)

    def search():
        return GridSearchCV(OvNClassifier("SwHb", kernel=kernel), grid, cv=cv, n_jobs=2)

    serial = GridSearchCV(OvNClassifier("SwHb", kernel=kernel), grid, cv=cv).fit(X, y)
    with Client(dask_scheduler), joblib.parallel_config(backend="dask"):
        assert joblib.parallel.get_active_backend()[0].__class__.__name__ == "DaskDistributedBackend"
        on_dask = search().fit(X, y)
    assert on_dask.best_params_ == serial.best_params_
    for key in ["params", "mean_test_score", *(f"split{i}_test_score" for i in range(3)), "rank_test_score"]:
        assert list(on_dask.cv_results_[key]) == list(serial.cv_results_[key]), key
    np.testing.assert_array_equal(on_dask.best_estimator_.decision_function(X),
                                  serial.best_estimator_.decision_function(X))


def test_reproduce_scheduler_runs_under_the_dask_backend(dask_scheduler, monkeypatch, tmp_path, capsys):
    module = importlib.import_module("ovn_cvx.experiments.reproduce")  # the package exports the function
    seen = {}

    def fake_reproduce(config, out):
        seen["backend"] = type(joblib.parallel.get_active_backend()[0]).__name__
        seen["n_jobs"] = config.n_jobs
        return {"tables": {}, "verdicts": None, "claims": None, "report": out / "report.md", "seconds": 0.0,
                "figures": None}

    monkeypatch.setattr(module, "reproduce", fake_reproduce)
    monkeypatch.setattr(module, "verdict_summary", lambda verdicts, claims: "no verdicts")
    assert main(["reproduce", "--quick", "--out", str(tmp_path), "--scheduler", dask_scheduler]) == 0
    assert seen == {"backend": "DaskDistributedBackend", "n_jobs": 1}
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    assert seen["backend"] != "DaskDistributedBackend"


@pytest.mark.parametrize("command", [["verify", "--formulations", "linear-SwSb"], ["reproduce", "--quick"]])
@pytest.mark.parametrize("address, reason", [("bad-address", "missing port number"),
                                             ("tcp://127.0.0.1:1", "Timed out trying to connect")])
def test_unreachable_scheduler_is_a_usage_error(command, address, reason, monkeypatch, tmp_path, capsys):
    """A usage error naming --scheduler after the (short) connect timeout, before any work, no traceback."""
    pytest.importorskip("distributed", reason="the optional extra 'dask' (dask[distributed]) is not installed")
    from ovn_cvx import _parallel

    monkeypatch.setattr(_parallel, "SCHEDULER_TIMEOUT", 0.5)
    with pytest.raises(SystemExit) as exit_info:
        main([*command, "--out", str(tmp_path), "--no-progress" if command[0] == "verify" else "--no-nested",
              "--scheduler", address])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --scheduler: no Dask scheduler answers at '{address}' within 0.5 s" in err and reason in err
    assert "Traceback" not in err and not list(tmp_path.iterdir())
