"""
A β path with warm starts
=========================

Along a regularization path the previous solution is a good start: ``warm_start=result`` first polishes the
previous margin set, which often stays optimal, so most points certify in one round.
"""
import time

import matplotlib.pyplot as plt
import numpy as np

import ovn_cvx
from ovn_cvx.datasets import load_wine
from sklearn.preprocessing import StandardScaler

X, y = load_wine(return_X_y=True)
X = StandardScaler().fit_transform(X)
betas = np.geomspace(0.05, 20, 20)
cold, warm, iterations = [], [], []
previous = None
for beta in betas:
    problem = ovn_cvx.Problem.from_labels(X, y, variant="SwHb", kernel="rbf", alpha=0.2, beta=beta)
    start = time.perf_counter()
    result_cold = ovn_cvx.solve(problem, method="mm")
    cold.append(time.perf_counter() - start)
    start = time.perf_counter()
    previous = ovn_cvx.solve(problem, method="mm", warm_start=previous)
    warm.append(time.perf_counter() - start)
    iterations.append((result_cold.iterations, previous.iterations))
    assert result_cold.success and previous.success
    assert abs(previous.objective - result_cold.objective) <= 1e-6 * max(1.0, abs(result_cold.objective))
print(f"20 points: cold {sum(cold):.3f} s, warm {sum(warm):.3f} s; every point certified")

fig, ax = plt.subplots(figsize=(6, 3.5))
ax.loglog(betas, cold, "o-", label="cold")
ax.loglog(betas, warm, "s-", label="warm start")
ax.set_xlabel("β")
ax.set_ylabel("solve time (s)")
ax.legend()
fig.tight_layout()
