"""
The reference as an oracle in a pytest file
===========================================

A test file for your own solver: :func:`ovn_cvx.testing.assert_matches_reference` solves the same problem with the
CVXPY reference and fails with a readable line per measure when your answer is off. Here the "solver" under test
is the package's own solver, and a crude answer (the weights shrunk by 10 %) shows that the oracle catches an
answer that is off.
"""
import subprocess
import sys
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt

TEST_FILE = '''
import numpy as np
import pytest
import ovn_cvx
from ovn_cvx.testing import assert_matches_reference


def my_solver(problem):
    """The solver under test: here the package's own, or a crude answer."""
    return ovn_cvx.solve(problem, method="mm")


def crude_solver(problem):
    exact = ovn_cvx.solve(problem, method="mm")
    return ovn_cvx.SolveResult(problem, 0.9 * exact.coef, exact.b, ovn_cvx.objective(problem, 0.9 * exact.coef,
                               exact.b), "optimal", "crude", "crude", 0.0)


@pytest.fixture(params=["SwSb", "HwHb"])
def problem(request):
    X = np.random.default_rng(0).normal(size=(50, 3))
    return ovn_cvx.Problem.from_labels(X, X.argmax(axis=1), variant=request.param, beta=1.0)


def test_my_solver_matches_the_reference(problem):
    assert_matches_reference(my_solver(problem), rtol=1e-6, ftol=1e-4)


def test_a_crude_solver_is_caught(problem):
    with pytest.raises(AssertionError, match="does not match the reference"):
        assert_matches_reference(crude_solver(problem))
'''

with tempfile.TemporaryDirectory() as tmp:
    path = Path(tmp) / "test_my_solver.py"
    path.write_text(TEST_FILE)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(path)],
                         capture_output=True, text=True, cwd=tmp)
if run.returncode != 0:  # every test of the file is meant to pass
    raise RuntimeError(f"pytest exited with {run.returncode}:\n{run.stdout}{run.stderr}")
print(run.stdout.strip().splitlines()[-1])

# %%
# What the oracle reports when an answer is off: the message of the failing assertion. The figure shows how
# fast the relative objective gap grows as the weights move away from the optimum.
import numpy as np  # noqa: E402

import ovn_cvx  # noqa: E402
from ovn_cvx.testing import assert_matches_reference  # noqa: E402

X = np.random.default_rng(0).normal(size=(50, 3))
problem = ovn_cvx.Problem.from_labels(X, X.argmax(axis=1), variant="SwHb", beta=1.0)
exact = ovn_cvx.solve(problem, method="mm")
scales = np.linspace(0.8, 1.2, 21)
gaps = []
for s in scales:
    F = ovn_cvx.objective(problem, s * exact.coef, exact.b)
    gaps.append(abs(F - exact.objective) / max(1.0, abs(exact.objective)))
try:
    crude = ovn_cvx.SolveResult(problem, 0.9 * exact.coef, exact.b, ovn_cvx.objective(problem, 0.9 * exact.coef,
                                exact.b), "optimal", "crude", "crude", 0.0)
    assert_matches_reference(crude)
except AssertionError as error:
    print(error)

fig, ax = plt.subplots(figsize=(6, 3.5))
ax.semilogy(scales, np.maximum(gaps, 1e-16), "o-")
ax.axhline(1e-6, color="C3", ls=":", label="rtol = 1e-6")
ax.set_xlabel("W scaled by")
ax.set_ylabel("relative objective gap")
ax.legend()
fig.tight_layout()
