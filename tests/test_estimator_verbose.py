"""OvNClassifier's ``verbose`` levels: 0 prints nothing, 1 the stages and each solve's summary, 2 also the fast
solvers' progress lines (the last evaluation's bound is the fitted result's); the model does not depend on it."""
import re

import numpy as np
import pytest
from sklearn.datasets import make_classification

from ovn_cvx import OvNClassifier

STAGE = "[OvNClassifier] "
BOUND = re.compile(r"\bbound ([-+0-9.eE]+|nan|inf)")


@pytest.fixture(scope="module")
def data():
    return make_classification(120, 6, n_informative=4, n_redundant=0, n_classes=3, random_state=0)


def fit(capsys, X, y, verbose, **params):
    model = OvNClassifier(verbose=verbose, **params).fit(X, y)
    return model, capsys.readouterr().out


def stages(out: str) -> list[str]:
    return [line.split()[1].rstrip(":") for line in out.splitlines() if line.startswith(STAGE)]


@pytest.mark.parametrize("params,solver", [({}, "mm"), ({"kernel": "rbf"}, "smo"), ({"solver": "smo"}, "dcd")])
def test_levels(capsys, data, params, solver):
    X, y = data
    silent, out0 = fit(capsys, X, y, 0, **params)
    assert out0 == ""
    _, out1 = fit(capsys, X, y, 1, **params)
    loud, out2 = fit(capsys, X, y, 2, **params)
    # level 1: the stage lines only, as before
    assert all(line.startswith(STAGE) for line in out1.splitlines())
    assert stages(out1) == ["targets", "problem", "solve", "fit"]
    # level 2: the same stage lines, and the solver's own between the problem and its summary
    assert stages(out2) == stages(out1)
    lines = out2.splitlines()
    inner = [line for line in lines if not line.startswith(STAGE)]
    assert len(inner) >= 2 and all(line.startswith(f"{solver} ") for line in inner)
    problem_at = next(i for i, line in enumerate(lines) if line.startswith(STAGE + "problem"))
    solve_at = next(i for i, line in enumerate(lines) if line.startswith(STAGE + "solve"))
    assert all(problem_at < lines.index(line) < solve_at for line in inner)
    evaluations = [line for line in inner if line.startswith(f"{solver} evaluation ")]
    numbers = [int(line.split()[2].rstrip(":")) for line in evaluations]
    assert evaluations and numbers == sorted(numbers)
    bound = float(BOUND.search(evaluations[-1]).group(1))
    assert bound == pytest.approx(loud.result_.relative_gap_bound, rel=1e-3)
    assert loud.result_.method == ("mm" if solver == "mm" else "smo")
    # the model does not depend on verbose
    assert loud.n_iter_ == silent.n_iter_
    assert loud.result_.objective == silent.result_.objective
    np.testing.assert_array_equal(loud.decision_function(X), silent.decision_function(X))


def test_internal_folds_stay_quiet(capsys, data):
    """verbose=2 reports the final fit's solve; the internal folds' fits (here of ``probability``) one summary line
    each."""
    X, y = data
    _, out = fit(capsys, X, y, 2, probability=True, rule_cv=3)
    assert len([line for line in out.splitlines() if line.startswith("mm done:")]) == 1
    assert stages(out).count("fold") == 3
