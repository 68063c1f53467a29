"""
Comparing solvers, with a performance profile
=============================================

:func:`ovn_cvx.verify.compare` runs several methods on one problem and checks every claimed success against a
certified reference. Over a few problems, a Dolan–Moré performance profile shows, for each method, the share of
problems it solved correctly within τ times the fastest method's time.
"""
import matplotlib.pyplot as plt
import pandas as pd

import ovn_cvx
from ovn_cvx.datasets import make_data
from ovn_cvx.verify import compare, performance_profile

methods = ["CLARABEL", "ECOS", "OSQP", "MM"]
rows = []
for seed, (kind, kernel) in enumerate([("multiclass", "linear"), ("multilabel", "linear"), ("multiclass", "rbf"),
                                       ("multilabel", "rbf")]):
    X, Y = make_data(kind, n_samples=60, n_features=4, n_classes=3, seed=seed)
    problem = ovn_cvx.Problem(X, Y, "SwHb", kernel, alpha=0.2, beta=1.0)
    table = compare(problem, methods)
    table["case"], table["formulation"] = kind, kernel
    rows.append(table)
comparison = pd.concat(rows, ignore_index=True)
columns = ["case", "formulation", "method", "status", "checked_success", "rel_gap", "wall_time"]
print(comparison[columns].to_string(index=False))

# %%
# The profile: ρ(τ) is the share of all problems a method solved (success and correct) within τ× the best time.
profile = performance_profile(comparison)
fig, ax = plt.subplots(figsize=(6, 3.5))
for method in profile.columns:
    ax.step(profile.index, profile[method], where="post", label=method)
ax.set_xscale("log")
ax.set_xlabel("τ (time / fastest time)")
ax.set_ylabel("share of problems solved")
ax.legend(fontsize=8)
fig.tight_layout()
