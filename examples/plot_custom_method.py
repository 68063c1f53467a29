"""
Your own method in ``ovn-cvx compare``
======================================

Any importable callable ``problem -> (coef, b, status)`` or ``problem -> SolveResult`` is judged in the solver
comparison beside the built-in solvers: ``ovn-cvx compare --method module:function``. Only status ``"optimal"``
claims success; the objective is re-scored by the exact evaluator and every claim is checked against a certified
reference. Here two methods: a correct one (the certified solver) and one that stops early but claims
``"optimal"`` anyway — the comparison catches it: its correct rate is 0. In CI, ``compare``'s exit status
is the gate (see the user guide, *Verification and solver comparison*).
"""
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

MODULE = '''
import ovn_cvx


def careful(problem):
    result = ovn_cvx.solve(problem, method="mm")
    return result.coef, result.b, result.status


def hasty(problem):
    """Ten iterations of plain MM, and a claim of optimality it cannot back."""
    result = ovn_cvx.solve(problem, method="mm", finish="none", max_iter=10)
    return result.coef, result.b, "optimal"
'''

with tempfile.TemporaryDirectory() as tmp:
    Path(tmp, "my_methods.py").write_text(MODULE)
    out = Path(tmp, "report")
    command = [sys.executable, "-m", "ovn_cvx.cli", "compare", "--solvers", "CLARABEL", "--formulations", "SwHb",
               "--method", "my_methods:careful", "--method", "my_methods:hasty", "--no-progress", "--out", str(out)]
    run = subprocess.run(command, cwd=tmp, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join([tmp, os.environ.get("PYTHONPATH", "")])})
    print("$ ovn-cvx compare --solvers CLARABEL --formulations SwHb "
          "--method my_methods:careful --method my_methods:hasty")
    print("exit status:", run.returncode)
    summary = pd.read_csv(out / "summary.csv")
print(summary.iloc[:, :6].to_string(index=False))

# %%
# The correct rate: the share of claimed successes that survive the checks.
fig, ax = plt.subplots(figsize=(6, 2.8))
ax.barh(summary["method"].astype(str), summary["correct_rate"])
ax.set_xlabel("correct rate (claimed successes that pass the checks)")
fig.tight_layout()
