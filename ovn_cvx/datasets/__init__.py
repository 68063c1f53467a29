"""Data for ovn_cvx: bundled benchmark sets (verified by sha256, no network) and 2-D toy generators.

Loaders (Bunch with ``data``, ``target``, ``feature_names``, ``target_names``, ``DESCR``, or ``(X, y)``
with ``return_X_y=True``):

* :func:`load_emotions`, :func:`load_scene` — Mulan multilabel sets, ``target`` an (n, 6) 0/1 matrix;
* :func:`load_glass` — UCI Glass, 6 classes labelled 1, 2, 3, 5, 6, 7;
* :func:`load_iris`, :func:`load_wine` — scikit-learn's bundled copies;
* :func:`load_mulan_arff` — any Mulan-format ARFF file (labels = the last L attributes).

Generators (``random_state`` makes them deterministic): :func:`make_unseen_labelset`,
:func:`make_hourglass`, :func:`make_moons`, :func:`make_linear`; :func:`make_data` — Gaussian blobs (multiclass or
multilabel, any K and M) or one of those toys as an (X, Y) membership problem, the data of the verification suite.
:func:`make_parallel` — a point-symmetric two-class set, the data of ``ovn_cvx.experiments.hyperplanes``.
:func:`make_sparse_multilabel` — sparse word-count "text" with labels (the model of scikit-learn's
``make_multilabel_classification``, vectorized), the data of the scale benchmark.
"""
from ._generators import (UNSEEN_TEST_LABELS, UNSEEN_TEST_POINTS, make_data, make_hourglass, make_linear,
                          make_moons, make_parallel, make_sparse_multilabel, make_unseen_labelset)
from ._loaders import (CHECKSUMS, DATA_DIR, ChecksumError, load_emotions, load_glass, load_iris,
                       load_mulan_arff, load_scene, load_wine)

__all__ = ["CHECKSUMS", "ChecksumError", "DATA_DIR", "UNSEEN_TEST_LABELS", "UNSEEN_TEST_POINTS", "load_emotions",
           "load_glass", "load_iris", "load_mulan_arff", "load_scene", "load_wine", "make_data", "make_hourglass",
           "make_linear", "make_moons", "make_parallel", "make_sparse_multilabel", "make_unseen_labelset"]
