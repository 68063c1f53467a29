"""The reproduction's OvN names every parameter its model relies on: a change of the estimator's defaults cannot
change it."""
import inspect

import pytest

from ovn_cvx import OvNClassifier
from ovn_cvx.experiments.protocols import PAPER_MODEL, ovn_method

#: the parameters a default of which may change without changing the reproduction's model, and why
NOT_THE_MODEL = {
    "gamma": "the RBF kernel's is searched by the grid, the polynomial's fixed (FIXED_KERNEL_PARAMS), else unused",
    "degree": "the polynomial kernel's is fixed (FIXED_KERNEL_PARAMS), else unused",
    "coef0": "the polynomial kernel's is fixed (FIXED_KERNEL_PARAMS), else unused",
    "rule_scoring": "the learned rule's; decision_rule is the paper's", "rule_selection": "the learned rule's",
    "rule_cv": "the learned rule's and probability's internal folds", "probability": "predict_proba only",
    "calibration": "predict_proba only", "cache_size": "memory, not the solution", "warm_start": "a fresh fit per "
    "grid point (GridSearchCV clones)", "n_components": "kernel_approximation only (None)",
    "n_landmarks": "kernel_approximation only", "landmarks": "kernel_approximation only",
    "random_state": "kernel_approximation only", "verbose": "output only", "n_jobs": "parallel internal folds only",
}
VARIANTS = ("SwHb", "SwSb", "HwHb", "HwSb")
KERNELS = ("linear", "rbf", "poly")


def _other_default(name, value):
    """A value of another type than the default: equal to no value the reproduction could set."""
    return ("changed", name, value)


def _paper_params(solver):
    return {(variant, kernel): ovn_method(variant, solver).build(kernel).get_params()
            for variant in VARIANTS for kernel in KERNELS}


@pytest.mark.parametrize("solver", ["mm", None])
def test_no_default_of_the_estimator_changes_the_reproductions_model(monkeypatch, solver):
    """Every default of ``OvNClassifier.__init__`` replaced (the positional ones and the keyword-only ones): the
    reproduction's estimators keep every parameter but those of ``NOT_THE_MODEL`` (and ``solver`` when the
    reproduction leaves the choice to the estimator)."""
    before = _paper_params(solver)
    init = OvNClassifier.__init__
    names = [p.name for p in inspect.signature(init).parameters.values() if p.default is not inspect.Parameter.empty]
    assert set(NOT_THE_MODEL) < set(names) and set(PAPER_MODEL) < set(names)
    assert not set(NOT_THE_MODEL) & set(PAPER_MODEL)
    monkeypatch.setattr(init, "__defaults__", tuple(_other_default(f"#{i}", v) for i, v in
                                                     enumerate(init.__defaults__)))
    monkeypatch.setattr(init, "__kwdefaults__", {k: _other_default(k, v) for k, v in init.__kwdefaults__.items()})
    assert OvNClassifier().get_params()["negatives"][0] == "changed"  # the patch took
    free = set(NOT_THE_MODEL) | ({"solver"} if solver is None else set())
    for key, params in _paper_params(solver).items():
        changed = {name for name in names if params[name] != before[key][name]}
        assert changed <= free, f"{key}: {sorted(changed - free)} follow the estimator's defaults"
