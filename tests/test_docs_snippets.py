"""The Python snippets of the README, the getting-started page and the user guide run as written (each page on its
own, with the imports it gives), and the outputs their comments state are what they compute."""
from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDE = sorted(path.relative_to(ROOT).as_posix() for path in (ROOT / "docs" / "guide").glob("*.md"))
PAGES = ["README.md", "docs/getting_started.md", *GUIDE]
#: cluster.md starts a Dask LocalCluster under ``if __name__ == "__main__"``: tests/test_cluster.py covers that path
NOT_RUN = {"docs/guide/cluster.md"}


def snippets(page: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / page).read_text(encoding="utf-8"), flags=re.S)


@cache  # each page runs once; the claims tests read the namespace its run left
def run_page(page: str) -> dict:
    namespace = {"__name__": "docs_snippet"}
    for code in snippets(page):
        exec(compile(code, page, "exec"), namespace)
    return namespace


def test_every_page_with_snippets_is_covered():
    with_snippets = {page for page in PAGES if snippets(page)}
    assert {"README.md", "docs/getting_started.md", "docs/guide/estimator.md"} <= with_snippets
    # no page outside PAGES (the benchmark pages, theory, the gallery's sources) has a Python snippet left unrun
    pages = ["README.md", *(path.relative_to(ROOT).as_posix() for path in (ROOT / "docs").rglob("*.md"))]
    assert {page for page in pages if snippets(page)} <= set(PAGES)
    assert NOT_RUN <= with_snippets  # a page left out still exists and still has its snippet


@pytest.mark.parametrize("page", [page for page in PAGES if page not in NOT_RUN and snippets(page)])
def test_snippets_run(page):
    run_page(page)


def test_readme_claims():
    ns = run_page("README.md")
    result = ns["result"]  # the oracle snippet's result: the certified solver's, as in the first snippet
    assert (result.success, result.certified) == (True, True)
    assert 0 <= result.gap_bound <= 1e-6 * max(1.0, abs(result.objective))
    assert result.decision_function(result.problem.X[:5]).shape == (5, 3)  # X is the emotions data by now
    assert ns["Y"].shape == (391, 6)
    assert ns["model"].predict(ns["X"][:3]).shape == (3, 6)
    assert ns["paper"].negatives == "none"


def test_getting_started_claims():
    ns = run_page("docs/getting_started.md")
    result = ns["result"]
    assert result.status == "optimal" and result.certified
    assert ns["Y"].shape == (391, 6)
    assert ns["model"].predict(ns["X_test"][:3]).shape == (3, 6)
    assert ns["ovn"].result_.certified and ns["ovn"].tol == 1e-6
    jaccard = ns["jaccard_score"]
    ovn = jaccard(ns["Y_test"], ns["model"].predict(ns["X_test"]), average="samples")
    baseline = jaccard(ns["Y_test"], ns["baseline"].predict(ns["X_test"]), average="samples")
    stated = re.findall(r'average="samples"\)\s+#\s*([0-9.]+)', (ROOT / "docs/getting_started.md").read_text())
    assert len(stated) == 2
    np.testing.assert_allclose([ovn, baseline], [float(value) for value in stated], atol=0.005)  # rounded to 0.01


def test_guide_claims():
    estimator = run_page("docs/guide/estimator.md")
    assert estimator["model"].predict(estimator["X_test"]).shape == (202, 6)
    model = run_page("docs/guide/model.md")
    assert set(np.unique(model["Y"])) == {-1.0, 1.0} and model["problem"].variant == "SwSb"
    solving = run_page("docs/guide/solving.md")
    assert solving["result"].method == "cvxpy" and solving["result"].certified
    assert solving["fast"].finish == "interior" and solving["fast"].relative_gap_bound <= 1e-4
