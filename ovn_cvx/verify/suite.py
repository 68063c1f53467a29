"""Built-in problem suite: synthetic multiclass and multilabel data sets and the paper's 2-D toy problems,
all eight formulations."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..datasets import make_data
from ..problem import VARIANTS, Problem


@dataclass(frozen=True)
class SuiteCase:
    """A problem family of the verification suite: the data of :func:`~ovn_cvx.datasets.make_data`, one problem per
    variant.

    Parameters
    ----------
    name : str
        The case's name in the report.
    kind : str
        The ``kind`` of :func:`~ovn_cvx.datasets.make_data`.
    n_samples : int
        The number of patterns N.
    n_features : int
        The number of features M (blobs only).
    n_classes : int
        The number of classes K (blobs only).
    kernel : str, default="linear"
        The kernel of the problems.
    seed : int, default=0
        The seed of the data.

    Examples
    --------
    >>> from ovn_cvx.verify import SuiteCase
    >>> case = SuiteCase("mc-K3", "multiclass", n_samples=30, n_features=2, n_classes=3)
    >>> [(variant, problem.coef_shape) for variant, problem in case.problems()]
    [('SwSb', (2, 3)), ('SwHb', (2, 3)), ('HwSb', (2, 3)), ('HwHb', (2, 3))]
    """

    name: str
    kind: str
    n_samples: int
    n_features: int
    n_classes: int
    kernel: str = "linear"
    seed: int = 0

    def problems(self, variants=VARIANTS, alpha=0.2, beta=1.0, bias_penalty=1.0):
        """One Problem per variant (α is passed to soft-w variants only).

        Parameters
        ----------
        variants : sequence of str, default=VARIANTS
            The variants, one problem each.
        alpha : float, default=0.2
            The coupling α of the soft-w variants (hard-w variants get 0).
        beta : float, default=1.0
            The hinge weight β.
        bias_penalty : float, default=1.0
            The soft-bias penalty γ.

        Yields
        ------
        variant : str
            The variant.
        problem : Problem
            Its problem.
        """
        X, Y = make_data(self.kind, self.n_samples, self.n_features, self.n_classes, self.seed)
        for variant in variants:
            a = 0.0 if variant.startswith("Hw") else alpha
            yield variant, Problem(X, Y, variant, self.kernel, alpha=a, beta=beta, bias_penalty=bias_penalty)


DEFAULT_SUITE = (
    SuiteCase("mc-K3", "multiclass", 60, 4, 3),
    SuiteCase("ml-K4", "multilabel", 70, 5, 4, seed=1),
    SuiteCase("mc-K3-rbf", "multiclass", 60, 4, 3, kernel="rbf", seed=2),
    SuiteCase("ml-K4-rbf", "multilabel", 70, 5, 4, kernel="rbf", seed=1),
    SuiteCase("mc-K5", "multiclass", 100, 6, 5, seed=3),
    SuiteCase("ml-K3-N150", "multilabel", 150, 8, 3, seed=4),
    SuiteCase("unseen-labelset", "unseen-labelset", 40, 2, 2),
    SuiteCase("moons-rbf", "moons", 80, 2, 2, kernel="rbf", seed=1),
)


FULL_SUITE = DEFAULT_SUITE + (
    SuiteCase("mc-K2", "multiclass", 80, 3, 2, seed=3),
    SuiteCase("mc-K5-N150", "multiclass", 150, 8, 5, seed=4),
    SuiteCase("ml-K3", "multilabel", 90, 6, 3, seed=5),
    SuiteCase("ml-K5", "multilabel", 160, 10, 5, seed=6),
    SuiteCase("mc-K4-N400", "multiclass", 400, 10, 4, seed=7),
    SuiteCase("ml-K4-N300", "multilabel", 300, 12, 4, seed=8),
    SuiteCase("mc-K3-poly", "multiclass", 80, 3, 3, kernel="poly", seed=9),
    SuiteCase("ml-K5-rbf-N200", "multilabel", 200, 6, 5, kernel="rbf", seed=10),
    SuiteCase("hourglass-rbf", "hourglass", 120, 2, 2, kernel="rbf", seed=2),
    SuiteCase("linear-two-class", "linear-two-class", 100, 2, 2, seed=3),
)


@dataclass(frozen=True)
class BinaryCase:
    """Two overlapping blobs for the SVC equivalence (docs/theory.md §7): non-separable, so that the factor 2 in
    C = β/2 matters.

    Parameters
    ----------
    name : str
        The case's name in the report.
    n_samples : int
        The number of patterns.
    n_features : int
        The number of features.
    kernel : str, default="linear"
        The kernel.
    beta : float, default=1.0
        The hinge weight β.
    seed : int, default=0
        The seed of the data.

    Examples
    --------
    >>> from ovn_cvx.verify import BinaryCase
    >>> X, y = BinaryCase("two-blobs", n_samples=40, n_features=2, seed=3).data()
    >>> X.shape, sorted(set(y.tolist()))
    ((40, 2), [-1, 1])
    """

    name: str
    n_samples: int
    n_features: int
    kernel: str = "linear"
    beta: float = 1.0
    seed: int = 0

    def data(self):
        X, Y = make_data("multiclass", self.n_samples, self.n_features, 2, self.seed, separation=1.0)
        return X, np.where(Y[:, 0] == 1, 1, -1)


DEFAULT_BINARY = (
    BinaryCase("bin-linear", 60, 4, seed=3),
    BinaryCase("bin-rbf", 60, 4, kernel="rbf", seed=4),
)
FULL_BINARY = DEFAULT_BINARY + (
    BinaryCase("bin-linear-b0.5", 120, 5, beta=0.5, seed=5),
    BinaryCase("bin-linear-b10", 120, 5, beta=10.0, seed=6),
    BinaryCase("bin-rbf-b10", 120, 5, kernel="rbf", beta=10.0, seed=7),
)
