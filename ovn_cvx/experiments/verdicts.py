"""Verdicts: each paper number against the band of our measurements that seed and protocol explain.

A cell's **band** is the range of our numbers for it over the shuffle seeds and both protocols: the paper's
optimistic protocol at every seed and nested CV at the main seed (the reproduction runs nested CV once: it costs
four times the paper protocol). A data set measured with one seed
only (too large to rerun) gets that range widened by the fold standard error, max(fold sd)/√folds, on each
side — a stand-in for the seed spread it could not measure (the report says which cells).

The paper prints rounded numbers: "0.10" stands for [0.095, 0.105]. The verdict of a paper number p:

* ``reproduced`` — the paper's interval overlaps the band;
* ``above`` / ``below`` — our whole band lies above / below the paper's interval (literally: for a loss such as
  the Hamming loss "above" means a larger loss than the paper's);
* ``not comparable`` — the paper's data or protocol for the cell are unknown (:mod:`.paper` says why);
* ``not run`` — the cell was not part of this run (or every fit of it failed).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .paper import PAPER_NUMBERS, PaperNumber

REPRODUCED, ABOVE, BELOW, NOT_COMPARABLE, NOT_RUN = "reproduced", "above", "below", "not comparable", "not run"
VERDICTS = (REPRODUCED, ABOVE, BELOW, NOT_COMPARABLE, NOT_RUN)
#: a verdict as an answer to "does the paper's number hold?"
HOLDS = {REPRODUCED: "holds", ABOVE: "fails", BELOW: "fails", NOT_COMPARABLE: "cannot be tested",
         NOT_RUN: "cannot be tested"}


@dataclass(frozen=True)
class Band:
    """Our numbers for one cell: their mean, and the interval [lo, hi] that seed and protocol spread explain."""

    mean: float
    lo: float
    hi: float
    n_seeds: int
    widened_by: float = 0.0   # the fold standard error added on each side (one seed only)

    @classmethod
    def from_rows(cls, rows: pd.DataFrame, folds: int, values: tuple[str, ...] = ("paper_protocol", "nested")):
        """The band of the rows of one cell (one row per seed); None when no number is finite.

        ``values`` are the columns that enter the band (the two protocols; the per-metric best for evidence).
        """
        numbers = rows[list(values)].to_numpy(float).ravel()
        numbers = numbers[np.isfinite(numbers)]
        if numbers.size == 0:
            return None
        n_seeds = int(rows["seed"].nunique())
        widen = 0.0
        if n_seeds == 1:
            stds = [f"{v}_std" for v in values if f"{v}_std" in rows]
            spread = rows[stds].to_numpy(float) if stds else np.zeros(1)
            widen = float(np.nanmax(spread)) / math.sqrt(folds) if np.isfinite(spread).any() else 0.0
        return cls(float(numbers.mean()), float(numbers.min()) - widen, float(numbers.max()) + widen, n_seeds,
                   widen)

    def text(self) -> str:
        extra = f", one seed ± {self.widened_by:.3f}" if self.n_seeds == 1 else f", {self.n_seeds} seeds"
        return f"{self.mean:.3f} [{self.lo:.3f}, {self.hi:.3f}{extra}]"


def verdict(number: PaperNumber, band: Band | None) -> str:
    """The verdict of one paper number against our band (see the module docstring)."""
    if number.not_comparable is not None or not number.numeric:
        return NOT_COMPARABLE
    if band is None:
        return NOT_RUN
    edge = number.half_unit + 1e-12  # 0.851 + 0.0005 is 0.85149999… in binary: the interval is closed
    if band.hi < number.value - edge:
        return BELOW
    if band.lo > number.value + edge:
        return ABOVE
    return REPRODUCED


def count(verdicts) -> dict[str, int]:
    """How many verdicts of each kind (every kind listed, zeros included)."""
    verdicts = list(verdicts)
    return {v: verdicts.count(v) for v in VERDICTS}


def summary_sentence(counts: dict[str, int], claims: dict[str, int] | None = None) -> str:
    """"Of the paper's N numbers, a hold (reproduced), b fail (…), c cannot be tested" (+ the claims)."""
    fails = counts[ABOVE] + counts[BELOW]
    untested = counts[NOT_COMPARABLE] + counts[NOT_RUN]
    total = sum(counts.values())
    text = (f"Of the paper's {total} table numbers, **{counts[REPRODUCED]} hold** (reproduced within the band), "
            f"**{fails} fail** ({counts[ABOVE]} with ours above, {counts[BELOW]} with ours below the paper beyond "
            f"the band) and **{untested} cannot be tested** ({counts[NOT_COMPARABLE]} not comparable: unknown "
            f"data or toy sets"
            + (f"; {counts[NOT_RUN]} not run" if counts[NOT_RUN] else "") + ").")
    if claims:
        text += (f" Of its qualitative claims checked as patterns ({sum(claims.values())} checks): "
                 + ", ".join(f"{n} {k}" for k, n in claims.items()) + ".")
    return text


# --- the paper's numbers against a run's results -----------------------------------------------------------
#: the result rows that carry a non-score paper column (support vectors and predicted sets are stored on the
#: rows of the table's first metric)
CARRIER = {"support_vectors": "accuracy", "predicted_set": "test_points_correct"}


def _cell_rows(results: pd.DataFrame, dataset, kernel, method, metric) -> pd.DataFrame:
    r, metric = results, CARRIER.get(metric, metric)
    return r[(r["dataset"] == dataset) & (r["kernel"] == kernel) & (r["method"] == method) & (r["metric"] == metric)]


def _main(rows: pd.DataFrame) -> pd.Series | None:
    return None if rows.empty else rows.loc[rows["seed"].idxmin()]


def _evidence(number: PaperNumber, rows: pd.DataFrame, variants: pd.DataFrame, folds: int, own: str) -> list[str]:
    """Measured evidence beside one paper number, from its cell's ``rows`` and the ``variants`` rows of its data
    set: each variant's band and verdict, each metric's own best over the grid, the grid edges, and whether any of
    them holds the paper's number ("consistent with") when ours does not."""
    texts, consistent = [], []
    dataset, kernel, method, metric = number.key
    for name in dict.fromkeys(variants["dataset"]):
        band = Band.from_rows(_cell_rows(variants, name, kernel, method, metric), folds)
        if band is not None:
            v = verdict(number, band)
            texts.append(f"{name}: {band.text()} → {v}")
            if v == REPRODUCED:
                consistent.append(name)
    if (rows["metric_best"] - rows["paper_protocol"]).abs().max() > 1e-12:
        band = Band.from_rows(rows, folds, values=("metric_best",))
        if band is not None:
            v = verdict(number, band)
            texts.append(f"{metric}'s own best over the grid (other parameters than the one model): {band.text()} "
                         f"→ {v}")
            if v == REPRODUCED:
                consistent.append(f"{metric} maximised on its own")
    edges = _main(rows)["edges"]
    if isinstance(edges, str) and edges:
        texts.append(f"selected at the grid's edge ({edges})")
    if own in (ABOVE, BELOW):
        texts.append("consistent with: " + ", ".join(consistent) if consistent
                     else "unexplained by the measured variants")
    return texts


def assess(results: pd.DataFrame, folds: int, numbers) -> pd.DataFrame:
    """One row per paper number: where it is, the paper's text, our main-seed numbers (paper protocol / nested),
    the band, the verdict and the measured evidence."""
    out = []
    main_rows = results[results["evidence_for"].isna()] if len(results) else results
    for number in numbers:
        rows = _cell_rows(main_rows, *number.key) if len(results) else results
        main = _main(rows)
        band = Band.from_rows(rows, folds) if number.numeric and main is not None else None
        if main is None:
            ours = "not run"
        elif number.metric == "support_vectors":
            ours = str(main["support_vectors"]).replace("/", ", ")
        elif number.metric == "predicted_set":
            ours = f"at ours (2,−2), (2,2), (0,4): {main['predicted_sets']}"
        else:
            ours = f"{main['paper_protocol']:.3f} / {main['nested']:.3f}"
        v = verdict(number, band)
        evidence = _evidence(number, rows, results[results["evidence_for"] == number.dataset], folds, v) \
            if main is not None and number.numeric else []
        out.append({"table": number.table, "row": number.row, "column": number.column, "dataset": number.dataset,
                    "kernel": number.kernel, "method": number.method, "metric": number.metric,
                    "paper": number.text, "ours": ours, "band": "" if band is None else band.text(), "verdict": v,
                    "evidence": "; ".join(evidence) if evidence else (number.not_comparable or "")})
    return pd.DataFrame(out)


# --- the paper's qualitative claims, checked as patterns ----------------------------------------------------
HOLDS_ALL, FAILS_ALL, MIXED = "holds", "fails", "mixed"
FAR_POINT = 2  # (0, 4), the test point whose intended set [0,1] no training pattern has


def _pattern(hits: list[bool]) -> str:
    if not hits:
        return NOT_RUN
    return HOLDS_ALL if all(hits) else FAILS_ALL if not any(hits) else MIXED


def check_claims(results: pd.DataFrame, folds: int, claims, parallel: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per check of a qualitative claim: its scope, what we measured and holds / fails / mixed (over
    the seeds) / not run."""
    out = []
    for claim in claims:
        for scope, ours, status in _CHECKS[claim.check](results, folds, parallel):
            out.append({"table": claim.table, "claim": claim.text, "scope": scope, "ours": ours, "verdict": status})
    return pd.DataFrame(out, columns=["table", "claim", "scope", "ours", "verdict"])


def _unseen_set(results, folds, parallel):
    rows = _cell_rows(results, "unseen_labelset", "linear", "OvN", "predicted_set")
    base = _cell_rows(results, "unseen_labelset", "linear", "BR-SVC", "predicted_set")
    if rows.empty or base.empty:
        return [("unseen label set, linear", "not run", NOT_RUN)]
    sets = {s: r.split()[FAR_POINT] for s, r in zip(rows["seed"], rows["predicted_sets"])}
    base_sets = {s: r.split()[FAR_POINT] for s, r in zip(base["seed"], base["predicted_sets"])}
    hits = [sets[s] == "[0,1]" and base_sets.get(s) == "[1,1]" for s in sets]
    ours = (f"at (0, 4), seeds {sorted(sets)}: OvN {' '.join(sets.values())}, BR-SVC {' '.join(base_sets.values())}"
            f" ({sum(hits)}/{len(hits)} seeds as claimed)")
    return [("unseen label set, linear", ours, _pattern(hits))]


def _fewer_support_vectors(results, folds, parallel):
    checks = []
    for number in PAPER_NUMBERS:
        if number.table != "B" or number.metric != "support_vectors" or number.method != "OvN":
            continue
        ovn = _cell_rows(results, number.dataset, number.kernel, "OvN", "accuracy")
        svm = _cell_rows(results, number.dataset, number.kernel, "OvR-SVC", "accuracy")
        scope = f"{number.dataset}, {number.kernel}"
        if ovn.empty or svm.empty:
            checks.append((scope, "not run", NOT_RUN))
            continue
        counts = {s: [int(c) for c in v.split("/")] for s, v in zip(svm["seed"], svm["support_vectors"])}
        fewer = [all(a <= b for a, b in zip(map(int, v.split("/")), counts[s])) and
                 sum(map(int, v.split("/"))) < sum(counts[s]) for s, v in zip(ovn["seed"], ovn["support_vectors"])]
        a, b = Band.from_rows(ovn, folds), Band.from_rows(svm, folds)
        # "equal or better": OvN's mean no lower than the SVM's beyond half the SVM's band
        accurate = a.mean >= b.mean - (b.hi - b.lo) / 2
        ours = (f"SVs fewer in every class in {sum(fewer)}/{len(fewer)} seeds (main seed: OvN "
                f"{ovn['support_vectors'].iloc[0]}, SVC {svm['support_vectors'].iloc[0]}); accuracy OvN "
                f"{a.mean:.3f} vs SVC {b.mean:.3f} ({'equal or better' if accurate else 'lower'})")
        checks.append((scope, ours, _pattern([f and accurate for f in fewer])))
    return checks


#: two hyperplanes count as parallel (and two normals as the same) within this angle, in degrees
PARALLEL_DEGREES = 0.1


def _parallel(results, folds, parallel):
    """``parallel``: set name → the table of :func:`.hyperplanes.measure_hyperplanes`. Per set: w_1 ∥ −w_2 for
    every α of the claim's range, then (where parallel) the same normal as SVC(C = β/2), the binary SVM of
    docs/theory.md §7."""
    if not parallel:
        return [("parallel-optimum set", "not run", NOT_RUN)]
    checks = []
    for name, table in parallel.items():
        claim = table[table["in_claim"].astype(bool)]
        hits = list(claim["angle_w1_neg_w2"] <= PARALLEL_DEGREES)
        checks.append((f"{name}: w₁ ∥ −w₂", f"angle(w₁, −w₂) over α ∈ [0.5, 1): max "
                       f"{claim['angle_w1_neg_w2'].max():.4f}° (parallel within {PARALLEL_DEGREES}° at "
                       f"{sum(hits)}/{len(hits)} α)", _pattern(hits)))
        if all(hits):
            same = list((claim["angle_svc"] <= PARALLEL_DEGREES) & (claim["agreement_svc"] == 1.0))
            checks.append((f"{name}: identical to the binary SVM SVC(C=β/2)",
                           f"angle to SVC(C=β/2) max {claim['angle_svc'].max():.3f}° (agreement min "
                           f"{claim['agreement_svc'].min():.4f}); to SVC(C=β/(2(1−α))) max "
                           f"{claim['angle_svc_matched'].max():.4f}° (agreement min "
                           f"{claim['agreement_svc_matched'].min():.4f})", _pattern(same)))
    return checks


_CHECKS = {"unseen_set": _unseen_set, "fewer_support_vectors": _fewer_support_vectors, "parallel": _parallel}
