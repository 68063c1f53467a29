"""
Sparse, text-like multilabel data
=================================

Word-count-like data: ``make_sparse_multilabel`` draws sparse non-negative rows with a few labels each. A sparse
X is never densified. Here OvN against binary relevance with scikit-learn's ``LinearSVC``, and the two
linear-algebra forms the certified solver can use on such data: the n × n pair form and the matrix-free form,
whose memory and cost grow with the nonzeros only.
"""
import time

import matplotlib.pyplot as plt
from sklearn.metrics import f1_score
from sklearn.multiclass import OneVsRestClassifier
from sklearn.svm import LinearSVC

import ovn_cvx
from ovn_cvx.datasets import make_sparse_multilabel

X, Y = make_sparse_multilabel(n_samples=3000, n_features=5000, n_classes=10, random_state=0)
print(f"X: {X.shape}, {X.nnz} nonzeros ({X.nnz / X.shape[0]:.0f} a row), {Y.shape[1]} labels")
X_train, X_test, Y_train, Y_test = X[:2000], X[2000:], Y[:2000], Y[2000:]

problem = ovn_cvx.Problem(X_train, Y_train, "SwHb", "linear", beta=1.0)
start = time.perf_counter()
result = ovn_cvx.solve(problem, method="mm", form="matrix-free")
elapsed = time.perf_counter() - start
print(f"OvN, matrix-free form: status {result.status!r}, {elapsed:.2f} s")
F = result.decision_function(X_test)
P = (F >= 1).astype(int)
P[P.sum(axis=1) == 0, F[P.sum(axis=1) == 0].argmax(axis=1)] = 1    # the argmax fallback
scores = {"OvN (f ≥ 1, argmax fallback)": f1_score(Y_test, P, average="micro")}

start = time.perf_counter()
br = OneVsRestClassifier(LinearSVC(C=0.5)).fit(X_train, Y_train)
print(f"binary relevance, LinearSVC: {time.perf_counter() - start:.2f} s")
scores["binary relevance, LinearSVC (f > 0)"] = f1_score(Y_test, br.predict(X_test), average="micro")
for name, value in scores.items():
    print(f"{name:>36}: micro-F1 {value:.3f}")

# %%
# The form matters on wide sparse data: the pair form factors an n × n system of the pairs, the matrix-free form
# only multiplies by the sparse pair rows. The default ``form="auto"`` takes the matrix-free form on such data from
# 2 000 pairs (below that the pair form, by the cost of a step). Time both on a smaller slice.
small = ovn_cvx.Problem(X_train[:600], Y_train[:600], "SwHb", "linear", beta=1.0)
times = {}
for form in ["pair", "matrix-free"]:
    start = time.perf_counter()
    assert ovn_cvx.solve(small, method="mm", form=form).success
    times[form] = time.perf_counter() - start
    print(f"600 rows, form={form!r}: {times[form]:.2f} s")

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 2.8))
ax1.barh(list(scores), list(scores.values()))
ax1.set_xlabel("micro-F1 (test)")
ax2.barh(list(times), list(times.values()))
ax2.set_xlabel("solve time, 600 rows (s)")
fig.tight_layout()
