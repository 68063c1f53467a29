"""
Multilabel: a learned decision rule and probabilities
=====================================================

On the *emotions* data set (music clips, 6 mood labels), compare the paper's model and rule {k : f_k(x) ≥ 1}
(``negatives="none"``) with a rule learned on out-of-fold decision values (``decision_rule="cv"``, tuned here for
the Jaccard score), without and with known negatives (``negatives="rest"``, the default), and read per-label
probabilities from ``predict_proba``.
"""
import matplotlib.pyplot as plt
import numpy as np
from sklearn.metrics import jaccard_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ovn_cvx import OvNClassifier
from ovn_cvx.datasets import load_emotions

X, Y = load_emotions("train", return_X_y=True)
X_test, Y_test = load_emotions("test", return_X_y=True)
settings = {
    "paper's rule": dict(negatives="none"),
    "learned rule": dict(negatives="none", decision_rule="cv", rule_scoring="jaccard"),
    "negatives + learned rule": dict(negatives="rest", decision_rule="cv", rule_scoring="jaccard", probability=True),
}
scores, models = {}, {}
for name, options in settings.items():
    model = make_pipeline(StandardScaler(), OvNClassifier("SwHb", beta=1.0, random_state=0, **options))
    models[name] = model.fit(X, Y)
    P = model.predict(X_test)
    scores[name] = jaccard_score(Y_test, P, average="samples")
    print(f"{name:>26}: Jaccard {scores[name]:.3f}, {P.sum(axis=1).mean():.2f} labels a row "
          f"(true {Y_test.sum(axis=1).mean():.2f})")
print("learned rule:", models["negatives + learned rule"][-1].rule_)

# %%
# Per-label probabilities of the last model (Platt scaling on out-of-fold values): the mean predicted probability
# of each label against its frequency in the test set.
proba = models["negatives + learned rule"].predict_proba(X_test)
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.5))
ax1.barh(list(scores), list(scores.values()))
ax1.set_xlabel("Jaccard (test)")
labels = np.arange(Y.shape[1])
ax2.bar(labels - 0.2, proba.mean(axis=0), width=0.4, label="mean predicted probability")
ax2.bar(labels + 0.2, Y_test.mean(axis=0), width=0.4, label="frequency in the test set")
ax2.set_xlabel("label")
ax2.legend(fontsize=8)
fig.tight_layout()
