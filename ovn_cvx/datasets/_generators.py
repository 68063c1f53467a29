"""Two-dimensional toy data for the paper's illustrations; deterministic for a given ``random_state``.

The paper (Shajari & Rangarajan) is not available to this project, so the constructions below are our own
and documented as such: they reproduce the *kind* of picture the paper describes, not its exact data.
"""
from __future__ import annotations


import numpy as np
import scipy.sparse as sp
import sklearn.datasets
from sklearn.utils import check_random_state

from .._validation import check_number
from ..labels import label_indicator

#: centres of the two training label sets of :func:`make_unseen_labelset`
UNSEEN_CENTRES = {(1, 0): (2.0, -2.0), (1, 1): (2.0, 2.0)}

#: test points of :func:`make_unseen_labelset` and the label set each should get. The third one, (0, 4),
#: lies beyond the [1, 1] cluster in the direction of label 2 only: the intended prediction is the label
#: set [0, 1], which never occurs in the training data.
UNSEEN_TEST_POINTS = np.array([[2.0, -2.0], [2.0, 2.0], [0.0, 4.0]])
UNSEEN_TEST_LABELS = np.array([[1, 0], [1, 1], [0, 1]])


def make_unseen_labelset(n_samples: int = 40, *, noise: float = 0.3, random_state=None):
    """Multilabel toy whose training label sets are only [1, 0] and [1, 1] (two labels).

    Construction (ours; the paper's data are not available): half of the patterns (the first
    ``n_samples // 2``) are labelled [1, 0] and drawn from N((2, −2), noise² I), the others are labelled
    [1, 1] and drawn from N((2, 2), noise² I). Label 1 is therefore "every pattern" and label 2 "the upper
    cluster". OvN learns one weight vector per label relative to the origin: w_1 points along the first
    axis (towards both clusters), w_2 towards the upper cluster, so a point such as (0, 4) — beyond the
    upper cluster in the direction of w_2 but not of w_1 — can receive the label set [0, 1], which no
    training pattern has. ``UNSEEN_TEST_POINTS``/``UNSEEN_TEST_LABELS`` give three test points and the
    intended label sets. Whether OvN reproduces [0, 1] at (0, 4) depends on α (α < 0 rewards aligned weight
    vectors and shrinks the [0, 1] region) and on the geometry; see the README ("Datasets") for the
    measured range of α.

    Parameters
    ----------
    n_samples : int, default=40
        The number of patterns (at least 2).
    noise : float, default=0.3
        The standard deviation of the Gaussian clusters; 0 puts every pattern on its cluster's centre.
    random_state : int, RandomState instance or None, default=None
        The seed or generator of the draws.

    Returns
    -------
    X : ndarray of shape (n_samples, 2)
    Y : ndarray of shape (n_samples, 2), int 0/1 indicator matrix

    Examples
    --------
    >>> import numpy as np
    >>> from ovn_cvx.datasets import make_unseen_labelset
    >>> X, Y = make_unseen_labelset(40, random_state=0)
    >>> np.unique(Y, axis=0).tolist()                      # the training label sets
    [[1, 0], [1, 1]]
    """
    n_samples = check_number("n_samples", n_samples, low=2, integer=True)
    noise = check_number("noise", noise, low=0)
    rng = check_random_state(random_state)
    counts = (n_samples // 2, n_samples - n_samples // 2)
    X = np.vstack([rng.normal(centre, noise, size=(count, 2)) if noise > 0 else np.tile(centre, (count, 1))
                   for centre, count in zip(UNSEEN_CENTRES.values(), counts)])
    Y = np.vstack([np.tile(labels, (count, 1)) for labels, count in zip(UNSEEN_CENTRES, counts)])
    return X, Y.astype(np.int64)


#: the largest ``margin`` of :func:`make_hourglass`: its rejection sampler keeps a fraction (1 − √2·margin)² of the
#: square, here 1e-3 (about 500 batches of 2·n_samples draws); towards 1/√2 it tends to 0 and the sampler would not end
HOURGLASS_MAX_MARGIN = (1 - np.sqrt(1e-3)) / np.sqrt(2)


def make_hourglass(n_samples: int = 200, *, margin: float = 0.05, noise: float = 0.0, random_state=None):
    """Two-class "hourglass": class 1 fills the two vertical cones |x₂| > |x₁| of the square [−1, 1]²
    (an hourglass standing on its tip), class 0 the two horizontal cones |x₂| < |x₁|.

    Construction (ours): points uniform on the square, points closer than ``margin`` to the diagonals
    |x₂| = |x₁| rejected (a gap between the classes; ``margin`` ≤ ``HOURGLASS_MAX_MARGIN`` ≈ 0.6847), then Gaussian
    noise of standard deviation ``noise`` added. Each class occupies two opposite cones meeting at the origin, so no
    linear OvN weight vector (a half-plane through the data) can represent it; a kernel (e.g. RBF or the degree-2
    polynomial x₂² − x₁²) is needed. The classes are balanced in expectation (equal areas).

    Returns ``X`` (n_samples, 2) and ``y`` (n_samples,) int in {0, 1}.

    Parameters
    ----------
    n_samples : int, default=200
        The number of patterns.
    margin : float, default=0.05
        The half-width of the gap around the diagonals, at most ``HOURGLASS_MAX_MARGIN``.
    noise : float, default=0.0
        The standard deviation of the Gaussian noise added to the patterns.
    random_state : int, RandomState instance or None, default=None
        The seed or generator of the draws.

    Examples
    --------
    >>> import numpy as np
    >>> from ovn_cvx.datasets import make_hourglass
    >>> X, y = make_hourglass(100, random_state=0)
    >>> X.shape, np.unique(y).tolist()
    ((100, 2), [0, 1])
    >>> bool((np.abs(X[y == 1, 1]) > np.abs(X[y == 1, 0])).all())   # class 1: the vertical cones
    True
    """
    n_samples = check_number("n_samples", n_samples, low=1, integer=True)
    margin = check_number("margin", margin, low=0)
    noise = check_number("noise", noise, low=0)
    if margin > HOURGLASS_MAX_MARGIN:
        left = max(1 - np.sqrt(2) * margin, 0) ** 2
        raise ValueError(f"margin must be at most {HOURGLASS_MAX_MARGIN:.4f}, got {margin}: the gap leaves a fraction "
                         f"{left:.2g} of the square to the classes (none from 1/sqrt(2) = 0.7071 on), too little for "
                         "rejection sampling")
    rng = check_random_state(random_state)
    X = np.empty((0, 2))
    while X.shape[0] < n_samples:  # rejection sampling; the accepted fraction is (1 - sqrt(2) margin)^2
        batch = rng.uniform(-1.0, 1.0, size=(2 * n_samples, 2))
        distance = np.abs(np.abs(batch[:, 1]) - np.abs(batch[:, 0])) / np.sqrt(2)
        X = np.vstack([X, batch[distance >= margin]])
    X = X[:n_samples]
    y = (np.abs(X[:, 1]) > np.abs(X[:, 0])).astype(np.int64)
    if noise > 0:
        X = X + rng.normal(0.0, noise, size=X.shape)
    return X, y


def make_moons(n_samples: int = 200, *, noise: float = 0.1, random_state=None):
    """scikit-learn's two interleaving half circles (:func:`sklearn.datasets.make_moons`), the paper's
    "moons" illustration. Returns ``X`` (n_samples, 2) and ``y`` (n_samples,) int in {0, 1}.

    Parameters
    ----------
    n_samples : int, default=200
        The number of patterns (at least 2).
    noise : float, default=0.1
        The standard deviation of the Gaussian noise added to the patterns.
    random_state : int, RandomState instance or None, default=None
        The seed or generator of the draws.

    Examples
    --------
    >>> import numpy as np
    >>> from ovn_cvx.datasets import make_moons
    >>> X, y = make_moons(100, noise=0.1, random_state=0)
    >>> X.shape, np.bincount(y).tolist()
    ((100, 2), [50, 50])
    """
    n_samples = check_number("n_samples", n_samples, low=2, integer=True)
    return sklearn.datasets.make_moons(n_samples=n_samples, noise=check_number("noise", noise, low=0),
                                       random_state=random_state)


def make_linear(n_samples: int = 100, *, n_features: int = 2, flip: float = 0.0, random_state=None):
    """A random linear two-class set.

    Construction (ours; the paper gives none): a unit normal vector v uniform on the sphere and an offset
    c ~ U(−0.5, 0.5) are drawn, patterns x ~ N(0, I), labels y = 1 if vᵀx + c > 0 else 0, and then a
    fraction ``flip`` of the labels (chosen at random) is flipped, so the set is linearly separable when
    ``flip == 0``. The hyperplane is returned so that tests can compare with it.

    Returns ``X`` (n_samples, n_features), ``y`` (n_samples,) int in {0, 1}, ``v`` (n_features,) and ``c``.

    Parameters
    ----------
    n_samples : int, default=100
        The number of patterns.
    n_features : int, default=2
        The number of features.
    flip : float, default=0.0
        The fraction of labels flipped, in [0, 1].
    random_state : int, RandomState instance or None, default=None
        The seed or generator of the draws.

    Examples
    --------
    >>> import numpy as np
    >>> from ovn_cvx.datasets import make_linear
    >>> X, y, v, c = make_linear(50, random_state=0)
    >>> X.shape, bool(np.array_equal(y, (X @ v + c > 0).astype(int)))   # separable by v, c (no flips)
    ((50, 2), True)
    """
    n_samples = check_number("n_samples", n_samples, low=1, integer=True)
    n_features = check_number("n_features", n_features, low=1, integer=True)
    flip = check_number("flip", flip, low=0)
    if flip > 1:
        raise ValueError(f"flip must be a fraction in [0, 1], got {flip}")
    rng = check_random_state(random_state)
    v = rng.normal(size=n_features)
    v /= np.linalg.norm(v)
    c = rng.uniform(-0.5, 0.5)
    X = rng.normal(size=(n_samples, n_features))
    y = (X @ v + c > 0).astype(np.int64)
    flipped = rng.choice(n_samples, size=int(round(flip * n_samples)), replace=False)
    y[flipped] = 1 - y[flipped]
    return X, y, v, float(c)


def make_parallel(n_samples: int = 100, *, n_features: int = 2, separation: float = 3.0, noise: float = 0.5,
                  offset=None, random_state=None):
    """Two-class set, point-symmetric about ``offset``. With ``offset`` = 0, K = 2 SwHb OvN gives two parallel
    hyperplanes (w_1 = −w_2) on it for every admissible α.

    Construction (ours; the data behind the paper's parallel-hyperplane figure are not available): the first
    ``n_samples // 2`` patterns (class 0) are drawn from N(−c, noise² I) with c = (separation/2) e_1, the
    others (class 1) are their mirror images, x ↦ −x, and then every pattern is moved by ``offset``:

        X = [X_0; −X_0] + offset,   y = [0, …, 0, 1, …, 1].

    With ``offset`` = 0 the map (x, class 0) ↔ (−x, class 1) sends the data to themselves, and with them the
    K = 2 SwHb problem: (w_1, w_2, b_1, b_2) ↦ (−w_2, −w_1, b_2, b_1) permutes the hinge terms and keeps
    R(W) = ½‖w_1‖² + ½‖w_2‖² + α⟨w_1, w_2⟩ and Σ_k b_k. The optimal W is unique (docs/theory.md §3.1), so
    w_1 = −w_2 for every α in (−1, 1), and the model is the binary SVM with C = β/(2(1 − α))
    (docs/theory.md §7.1). A nonzero ``offset`` moves the origin away from the centre of symmetry, which
    breaks the argument: the contrast case. The classes overlap when ``noise`` is large against
    ``separation`` (then the SVM's C matters).

    Returns ``X`` (n_samples, n_features) and ``y`` (n_samples,) int in {0, 1}; ``n_samples`` must be even.

    Parameters
    ----------
    n_samples : int, default=100
        The number of patterns; must be even.
    n_features : int, default=2
        The number of features.
    separation : float, default=3.0
        The distance between the two class centres.
    noise : float, default=0.5
        The standard deviation of the Gaussian draws of class 0.
    offset : array-like of shape (n_features,) or None, default=None
        The vector every pattern is moved by; None is the zero vector.
    random_state : int, RandomState instance or None, default=None
        The seed or generator of the draws.

    Examples
    --------
    >>> import numpy as np
    >>> from ovn_cvx.datasets import make_parallel
    >>> X, y = make_parallel(100, random_state=0)
    >>> X.shape, bool(np.allclose(X.mean(axis=0), 0))     # point-symmetric about offset 0
    ((100, 2), True)
    """
    n_samples = check_number("n_samples", n_samples, low=2, integer=True)
    if n_samples % 2:
        raise ValueError(f"n_samples must be even (every pattern has its mirror image), got {n_samples}")
    n_features = check_number("n_features", n_features, low=1, integer=True)
    separation = check_number("separation", separation, low=0)
    noise = check_number("noise", noise, low=0)
    if offset is None:
        offset = np.zeros(n_features)
    offset = np.asarray(offset, dtype=float)
    if offset.shape != (n_features,) or not np.isfinite(offset).all():
        raise ValueError(f"offset must be a finite vector of length n_features={n_features}, got {offset!r}")
    rng = check_random_state(random_state)
    centre = np.zeros(n_features)
    centre[0] = -separation / 2
    half = centre + noise * rng.normal(size=(n_samples // 2, n_features))
    X = np.vstack([half, -half]) + offset
    y = np.repeat(np.array([0, 1], dtype=np.int64), n_samples // 2)
    return X, y


#: the paper's 2-D illustrations as kinds of :func:`make_data`: kind -> (n_samples, seed) -> (X, y or Y)
TOYS = {
    "unseen-labelset": lambda n, seed: make_unseen_labelset(n, random_state=seed),
    "moons": lambda n, seed: make_moons(n, noise=0.2, random_state=seed),
    "hourglass": lambda n, seed: make_hourglass(n, random_state=seed),
    "linear-two-class": lambda n, seed: make_linear(n, flip=0.1, random_state=seed)[:2],
}


def make_data(kind: str = "multiclass", n_samples: int = 60, n_features: int = 4, n_classes: int = 3,
              seed: int = 0, separation: float = 1.5):
    """Overlapping Gaussian blobs, or one of the 2-D ``TOYS``. Returns (X, Y) with Y an N×K membership matrix.

    "multiclass": one-hot rows. "multilabel": each sample is drawn near the mean of 1 or 2 class
    centres and labelled with those classes; the last sample gets no label (allowed, docs/theory.md §1).
    A toy kind ignores ``n_features``, ``n_classes`` and ``separation`` (its data are 2-D, K = 2).

    Parameters
    ----------
    kind : str, default="multiclass"
        ``"multiclass"``, ``"multilabel"`` or a key of ``TOYS``.
    n_samples : int, default=60
        The number of patterns.
    n_features : int, default=4
        The number of features (blobs only).
    n_classes : int, default=3
        The number of classes K (blobs only).
    seed : int, default=0
        The seed of the draws.
    separation : float, default=1.5
        The scale of the random class centres (blobs only).

    Examples
    --------
    >>> from ovn_cvx.datasets import make_data
    >>> X, Y = make_data("multiclass", n_samples=30, n_features=2, n_classes=3)
    >>> X.shape, Y.shape, Y.sum(axis=1).tolist()[:5]    # Y: one class per row
    ((30, 2), (30, 3), [1.0, 1.0, 1.0, 1.0, 1.0])
    >>> X, Y = make_data("multilabel", n_samples=30)
    >>> int(Y.sum(axis=1).max()), int(Y[-1].sum())       # up to 2 labels; the last row has none
    (2, 0)
    """
    if kind in TOYS:
        X, y = TOYS[kind](n_samples, seed)
        return X, (np.asarray(y, dtype=float) if np.ndim(y) == 2 else label_indicator(y)[1])
    if kind not in ("multiclass", "multilabel"):
        raise ValueError(f"kind must be 'multiclass', 'multilabel' or one of {sorted(TOYS)}, got {kind!r}")
    rng = np.random.default_rng(seed)
    centres = separation * rng.normal(size=(n_classes, n_features))
    Y = np.zeros((n_samples, n_classes))
    first = np.arange(n_samples) % n_classes  # every class gets members
    Y[np.arange(n_samples), first] = 1.0
    if kind == "multilabel":
        second = rng.integers(0, n_classes, n_samples)
        extra = rng.random(n_samples) < 0.4
        Y[np.flatnonzero(extra), second[extra]] = 1.0
    X = (Y @ centres) / np.maximum(Y.sum(axis=1, keepdims=True), 1) + rng.normal(size=(n_samples, n_features))
    if kind == "multilabel":
        Y[-1] = 0.0
    return X, Y


def make_sparse_multilabel(n_samples: int = 1000, *, n_features: int = 5000, n_classes: int = 20,
                           n_labels: float = 2.0, length: float = 100.0, random_state=None):
    """Sparse multilabel "text": word counts of documents drawn from a mixture of per-label word distributions.

    The generative model of scikit-learn's :func:`~sklearn.datasets.make_multilabel_classification`
    (``sparse=True``, ``allow_unlabeled=False``), drawn for all documents at once: that function draws document
    by document in Python (measured 30 s for 10 000 documents of 100 words over 50 000 features, so about five
    minutes for the 100 000 of the scale benchmark; this one takes seconds). Label prevalences p_c and word
    distributions p(w | c) are uniform draws, normalized; each document has distinct
    labels (Poisson(n_labels) drawn again while 0, at most ``n_classes``) drawn by prevalence, Poisson(length)
    words (at least one), each word from p(w | c) of one of its labels chosen uniformly. The same model, not the
    same draws.

    Returns ``X``, a CSR matrix (n_samples, n_features) of word counts (float64), and ``Y``, the (n_samples,
    n_classes) 0/1 label matrix (every class present when n_samples is large enough; not guaranteed).

    Parameters
    ----------
    n_samples : int, default=1000
        The number of documents.
    n_features : int, default=5000
        The size of the vocabulary.
    n_classes : int, default=20
        The number of labels (at least 2).
    n_labels : float, default=2.0
        The mean of the Poisson number of labels of a document (at least 1).
    length : float, default=100.0
        The mean of the Poisson number of words of a document (positive).
    random_state : int, RandomState instance or None, default=None
        The seed or generator of the draws.

    Examples
    --------
    >>> from ovn_cvx.datasets import make_sparse_multilabel
    >>> X, Y = make_sparse_multilabel(200, n_features=500, n_classes=5, random_state=0)
    >>> X.format, X.shape, Y.shape
    ('csr', (200, 500), (200, 5))
    """
    n_samples = check_number("n_samples", n_samples, low=1, integer=True)
    n_features = check_number("n_features", n_features, low=1, integer=True)
    n_classes = check_number("n_classes", n_classes, low=2, integer=True)
    n_labels = check_number("n_labels", n_labels, low=1)
    length = check_number("length", length, low=0, strict=True)
    rng = check_random_state(random_state)
    prevalence = rng.uniform(size=n_classes)
    prevalence /= prevalence.sum()
    word_cdf = np.cumsum(rng.uniform(size=(n_classes, n_features)), axis=1)
    word_cdf /= word_cdf[:, -1:]
    # labels: the first n of a random order weighted by prevalence (Gumbel top-k: sampling without replacement)
    count = rng.poisson(n_labels, size=n_samples)
    while not count.all():  # Poisson(n_labels) drawn again while 0, as scikit-learn's allow_unlabeled=False
        count[count == 0] = rng.poisson(n_labels, size=np.count_nonzero(count == 0))
    count = np.minimum(count, n_classes)
    order = np.argsort(np.log(prevalence) - np.log(-np.log(rng.uniform(size=(n_samples, n_classes)))), axis=1)[:, ::-1]
    Y = np.zeros((n_samples, n_classes), dtype=np.int64)
    rows = np.repeat(np.arange(n_samples), count)
    Y[rows, order[rows, np.arange(rows.size) - np.repeat(np.cumsum(count) - count, count)]] = 1
    # words: each of a document's Poisson(length) words from one of its labels, chosen uniformly
    words = np.maximum(rng.poisson(length, size=n_samples), 1)
    document = np.repeat(np.arange(n_samples), words)
    choice = (rng.uniform(size=document.size) * count[document]).astype(np.int64)
    label = order[document, choice]
    word = np.empty(document.size, dtype=np.int64)
    draws = rng.uniform(size=document.size)
    for k in range(n_classes):
        mine = label == k
        word[mine] = np.searchsorted(word_cdf[k], draws[mine], side="right").clip(max=n_features - 1)
    X = sp.csr_matrix((np.ones(document.size), (document, word)), shape=(n_samples, n_features))
    X.sum_duplicates()
    return X, Y
