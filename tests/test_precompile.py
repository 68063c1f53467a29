"""``ovn-cvx compile``: one small fit of each kind compiles (or loads) every loop the package's fits use."""
import subprocess
import sys

from ovn_cvx.cli import main
from ovn_cvx.precompile import JOBS


#: run in a fresh interpreter, so that only what ``compile_loops`` compiled (or loaded) is there: the suite's earlier
#: tests compile the same loops in this process, which would hide a kind of fit the jobs miss
CHILD = r"""
import sys
import numpy as np
import scipy.sparse as sp
from numba.core.registry import CPUDispatcher
from ovn_cvx import OvNClassifier
from ovn_cvx.precompile import JOBS, compile_loops


def signatures():
    found = set()
    for name, module in list(sys.modules.items()):
        if name == "ovn_cvx" or name.startswith("ovn_cvx."):
            for attr, value in vars(module).items():
                if isinstance(value, CPUDispatcher) and value.py_func.__module__ == name:
                    found.update((name, attr, str(signature)) for signature in value.signatures)
    return found


done = compile_loops()
assert [what for what, _ in done] == [what for what, _, _ in JOBS]
compiled = signatures()
print("modules", sorted({module for module, _, _ in compiled}))
rng = np.random.default_rng(1)
X = rng.normal(size=(90, 6))
Y = (X[:, :4] + 0.5 * rng.normal(size=(90, 4)) > 0.2).astype(int)
y = X[:, :4].argmax(axis=1)
weight = rng.uniform(0.5, 2.0, size=90)
OvNClassifier().fit(X, Y, sample_weight=weight)
OvNClassifier(kernel="rbf", decision_rule="cv", probability=True).fit(X, Y, sample_weight=weight)
OvNClassifier(kernel="rbf", cache_size=1e-3).fit(X, Y)
OvNClassifier(kernel="poly", negatives="none").fit(X, y)
OvNClassifier(kernel="precomputed").fit(X @ X.T, y)
OvNClassifier(solver="smo").fit(sp.csr_matrix(X), y)
print("added", len(signatures() - compiled))
"""


def test_compile_loops_leaves_nothing_for_later_fits_to_compile():
    """In a fresh interpreter, fits of other shapes, weights and options after it find every loop they call compiled
    for their argument types: none adds a signature (a fit kind the jobs miss would)."""
    child = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, check=True)
    lines = dict(line.split(" ", 1) for line in child.stdout.splitlines())
    for module in ("ovn_cvx._rule_loops", "ovn_cvx.solvers.smo.selection", "ovn_cvx.solvers.smo.cache",
                   "ovn_cvx.solvers.smo._linear_loops"):
        assert repr(module) in lines["modules"]
    assert lines["added"] == "0"


def test_compile_command_reports_each_kind_of_fit(capsys):
    assert main(["compile"]) == 0
    out = capsys.readouterr().out
    for what, _, _ in JOBS:
        assert what in out
    assert out.rstrip().endswith("later processes load the loops from the cache.")
