"""
Many classes: balancing each class's negatives
==============================================

With known negatives (the default) and free biases, each class of 1-D labels is a binary hinge SVM of its n_k
patterns against the other N − n_k. When the rest surrounds a class, that SVM is often solved by w_k = 0: its score
is the constant b_k, whatever β, and the argmax never picks the class by the pattern. ``negative_balance`` p weighs
class k's negatives by (n_k/(N − n_k))^p against its positives; the default for class labels, 0.5, keeps such classes
alive. Here: ten classes from scikit-learn's ``make_classification``, the accuracy and the number of constant
classes against p, beside one-vs-rest ``LinearSVC``.
"""
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from ovn_cvx import OvNClassifier
from ovn_cvx.exceptions import DegenerateLabelWarning

X, y = make_classification(n_samples=2000, n_features=10, n_informative=8, n_redundant=0, n_classes=10,
                           n_clusters_per_class=1, flip_y=0.05, random_state=0)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, random_state=0, stratify=y)

balances, accuracy, constant = [0.0, 0.25, 0.5, 0.75, 1.0], [], []
for p in balances:
    model = make_pipeline(StandardScaler(), OvNClassifier(negative_balance=p))
    with warnings.catch_warnings():  # p = 0 warns that classes are degenerate: counted below instead
        warnings.simplefilter("ignore", DegenerateLabelWarning)
        model.fit(X_train, y_train)
    accuracy.append(model.score(X_test, y_test))
    constant.append(model[-1].degenerate_labels_.size)
    print(f"negative_balance={p:<4}: accuracy {accuracy[-1]:.3f}, {constant[-1]} of 10 classes constant "
          f"(certified: {model[-1].result_.success})")
baseline = make_pipeline(StandardScaler(), OneVsRestClassifier(LinearSVC())).fit(X_train, y_train)
print(f"one-vs-rest LinearSVC: accuracy {baseline.score(X_test, y_test):.3f}")

# %%
# Every pair weighed alike (p = 0) leaves several classes constant; balancing the negatives brings the accuracy near
# one-vs-rest ``LinearSVC``, whose squared hinge has no such flat optimum. Label matrices keep p = 0 by default: the
# learned decision rule sets each label's threshold itself.
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(balances, accuracy, "o-", label="OvNClassifier")
ax.axhline(baseline.score(X_test, y_test), color="C1", ls="--", label="one-vs-rest LinearSVC")
for p, a, k in zip(balances, accuracy, constant):
    ax.annotate(f"{k} constant", (p, a), textcoords="offset points", xytext=(4, -12), fontsize=8)
ax.set_xlabel("negative_balance p")
ax.set_ylabel("test accuracy")
ax.set_xticks(np.array(balances))
ax.legend(loc="lower right")
fig.tight_layout()
plt.show()
