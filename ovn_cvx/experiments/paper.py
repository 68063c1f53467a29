"""What the paper reports, as far as it could be found — and where it was looked for.

Shajari & Rangarajan, "A Unified Framework for Multiclass and Multilabel Support Vector Machines"
(arXiv, 25 March 2020).

Search record (2026-11-26, the project's stored-copy search tool, corpora "pages", "docs", "code",
"issues"; queries on the title, the authors, the arXiv id, "OvN", the data set names, "hourglass",
"unseen labels", "Hamming loss", "example-based accuracy"):

* https://sandbox.awsmpapers.org/papers/a-unified-framework-for-multiclass-and-multilabel-support-vector-machines-6e568fea
  — a LaTeX-to-HTML conversion of the paper; the stored excerpt covers the title, authors and abstract only.
* https://deepai.org/publication/a-unified-framework-for-multiclass-and-multilabel-support-vector-machines
  — abstract page (dated 03/25/2020).
* a stray mirror of the paper's Section 1 (Introduction, 1.1 Motivation); no later section.

No stored copy reached the experiments section: **none of the paper's numbers could be found**.
Every entry of :data:`PAPER_RESULTS` is therefore ``None`` and the reports print "n/a" in the
"paper" columns. Nothing here is estimated, recalled or read off a figure.

What the reproduction takes from the project brief instead (not verified against the paper's text):
the baselines (scikit-learn one-vs-rest SVC, Crammer–Singer LinearSVC, binary relevance), linear
and Gaussian kernels, the data sets, the metrics and the protocol "3-fold CV, best mean score over
the grid" (``GridSearchCV.best_score_``).
"""
from __future__ import annotations

PAPER_TITLE = "A Unified Framework for Multiclass and Multilabel Support Vector Machines"
PAPER_AUTHORS = "Hoda Shajari, Anand Rangarajan"
PAPER_SOURCES = (
    "https://sandbox.awsmpapers.org/papers/a-unified-framework-for-multiclass-and-multilabel-support-vector-machines-6e568fea",
    "https://deepai.org/publication/a-unified-framework-for-multiclass-and-multilabel-support-vector-machines",
)
PAPER_NOTE = ("the paper's experiment tables could not be found in any stored copy (only the abstract and "
              "the introduction were reachable): every 'paper' column is n/a")

#: the paper's protocol as stated in the brief: k-fold CV and the best mean score over the grid
PAPER_CV_FOLDS = 3

#: (table, dataset, kernel, method, metric) -> value reported in the paper, or None when not found.
#: Filled only from the paper's own text; every table is None because no copy of its experiments
#: section was reachable (see the module docstring).
PAPER_RESULTS: dict[tuple[str, str, str, str, str], float | None] = {}


def paper_value(table: str, dataset: str, kernel: str, method: str, metric: str) -> float | None:
    """The paper's number for one cell, or None ("n/a") when it was not found."""
    return PAPER_RESULTS.get((table, dataset, kernel, method, metric))
