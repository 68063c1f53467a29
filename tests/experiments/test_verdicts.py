"""Verdicts and claims on hand-made cells: each outcome of the rule, the band, the evidence."""
import math

import numpy as np
import pandas as pd
import pytest

from ovn_cvx.experiments import paper
from ovn_cvx.experiments.paper import PaperNumber
from ovn_cvx.experiments.tables import COLUMNS
from ovn_cvx.experiments.verdicts import (ABOVE, BELOW, NOT_COMPARABLE, NOT_RUN, REPRODUCED, Band, assess,
                                          check_claims, count, summary_sentence, verdict)


def number(text, metric="accuracy", dataset="glass", kernel="linear", method="OvN", why=None):
    return PaperNumber("C", f"{dataset}, L", "OvN SwHb", dataset, kernel, method, metric, text, why)


def band(lo, hi):
    return Band((lo + hi) / 2, lo, hi, n_seeds=5)


@pytest.mark.parametrize("lo, hi, expected", [
    (0.80, 0.90, REPRODUCED),     # inside
    (0.8515, 0.90, REPRODUCED),   # touches the rounding interval [0.8505, 0.8515]
    (0.852, 0.90, ABOVE),         # ours entirely above
    (0.70, 0.850, BELOW),         # ours entirely below
])
def test_verdict_against_the_rounding_interval_of_the_printed_number(lo, hi, expected):
    assert verdict(number("0.851"), band(lo, hi)) == expected


def test_two_printed_decimals_mean_a_wider_interval():
    assert number("0.10").half_unit == pytest.approx(0.005)
    assert verdict(number("0.10", "hamming_loss"), band(0.0951, 0.0990)) == REPRODUCED
    assert verdict(number("0.10", "hamming_loss"), band(0.0800, 0.0949)) == BELOW
    assert verdict(number("0.100", "hamming_loss"), band(0.0800, 0.0990)) == BELOW


def test_unknown_data_is_not_comparable_and_a_missing_cell_not_run():
    assert verdict(number("0.837", why=paper.SYNTHETIC), band(0.0, 1.0)) == NOT_COMPARABLE
    assert verdict(number("[9, 10]", "support_vectors"), band(0.0, 1.0)) == NOT_COMPARABLE
    assert verdict(number("0.851"), None) == NOT_RUN


def rows(values, dataset="glass", metric="accuracy", method="OvN", kernel="linear", evidence_for=None, stds=0.02,
         best=None, edges=""):
    """Result rows of one cell: one per seed, values = [(paper protocol, nested), ...]."""
    out = []
    for seed, (protocol, nested) in enumerate(values):
        row = dict.fromkeys(COLUMNS)
        row.update(table="multiclass", dataset=dataset, evidence_for=evidence_for, seed=seed, kernel=kernel,
                   method=method, metric=metric, paper_protocol=protocol, nested=nested, paper_protocol_std=stds,
                   nested_std=stds, metric_best=protocol if best is None else best[seed], edges=edges,
                   support_vectors=None, predicted_sets=None)
        out.append(row)
    return pd.DataFrame(out, columns=COLUMNS)


def test_band_spans_seeds_and_protocols():
    b = Band.from_rows(rows([(0.60, 0.58), (0.65, 0.61), (0.62, 0.55)]), folds=3)
    assert (b.lo, b.hi, b.n_seeds) == (0.55, 0.65, 3)
    assert b.mean == pytest.approx(np.mean([0.60, 0.58, 0.65, 0.61, 0.62, 0.55]))
    assert b.widened_by == 0.0


def test_one_seed_band_is_widened_by_the_fold_standard_error():
    b = Band.from_rows(rows([(0.60, 0.58)], stds=0.06), folds=3)
    se = 0.06 / math.sqrt(3)
    assert (b.lo, b.hi) == pytest.approx((0.58 - se, 0.60 + se))
    assert b.n_seeds == 1 and "one seed" in b.text()


def test_band_of_failed_fits_is_none():
    assert Band.from_rows(rows([(np.nan, np.nan)]), folds=3) is None


def test_assess_explains_a_disagreement_by_the_variant_that_reproduces_it():
    results = pd.concat([
        rows([(0.40, 0.38), (0.42, 0.39)], edges="protocol: beta=512 (max)"),
        rows([(0.84, 0.86), (0.85, 0.83)], dataset="glass+Id", evidence_for="glass"),
        rows([(0.30, 0.28), (0.31, 0.29)], dataset="glass-raw", evidence_for="glass"),
    ], ignore_index=True)
    v = assess(results, 3, [number("0.851")]).iloc[0]
    assert v["verdict"] == BELOW
    assert v["ours"] == "0.400 / 0.380"  # the main seed (0)
    assert "glass+Id" in v["evidence"] and "→ reproduced" in v["evidence"]
    assert "glass-raw" in v["evidence"] and "→ below" in v["evidence"]
    assert "consistent with: glass+Id" in v["evidence"]
    assert "beta=512 (max)" in v["evidence"]


def test_assess_says_unexplained_and_uses_each_metric_s_own_best():
    results = rows([(0.23, 0.24), (0.22, 0.23)], dataset="emotions", metric="hamming_loss", method="BR-SVC",
                   best=[0.196, 0.194])
    n = PaperNumber("D", "emotions, L", "BR HL", "emotions", "linear", "BR-SVC", "hamming_loss", "0.195")
    v = assess(results, 3, [n]).iloc[0]
    assert v["verdict"] == ABOVE
    assert "own best over the grid" in v["evidence"] and "consistent with: hamming_loss maximised on its own" \
        in v["evidence"]
    far = rows([(0.23, 0.24)], dataset="emotions", metric="hamming_loss", method="BR-SVC", best=[0.22])
    assert "unexplained" in assess(far, 3, [n]).iloc[0]["evidence"]


def test_assess_of_a_cell_not_in_the_run():
    v = assess(rows([(0.9, 0.9)]), 3, [number("0.987", dataset="iris")]).iloc[0]
    assert (v["verdict"], v["ours"]) == (NOT_RUN, "not run")


def test_counts_and_summary_sentence():
    counts = count([REPRODUCED, REPRODUCED, ABOVE, BELOW, NOT_COMPARABLE])
    assert counts == {REPRODUCED: 2, ABOVE: 1, BELOW: 1, NOT_COMPARABLE: 1, NOT_RUN: 0}
    text = summary_sentence(counts, {"holds": 2, "fails": 1})
    assert "5 table numbers" in text and "**2 hold**" in text and "**2 fail**" in text
    assert "**1 cannot be tested**" in text and "3 checks" in text


def claim_rows(ovn_sets, br_sets):
    out = []
    for method, sets in (("OvN", ovn_sets), ("BR-SVC", br_sets)):
        for seed, s in enumerate(sets):
            row = dict.fromkeys(COLUMNS)
            row.update(dataset="unseen_labelset", kernel="linear", method=method, metric="test_points_correct",
                       seed=seed, predicted_sets=s)
            out.append(row)
    return pd.DataFrame(out, columns=COLUMNS)


@pytest.mark.parametrize("ovn, expected", [
    (["[1,0] [1,1] [0,1]", "[1,0] [1,1] [0,1]"], "holds"),
    (["[1,0] [1,1] [0,1]", "[1,0] [1,1] [1,1]"], "mixed"),
    (["[1,0] [1,1] [1,0]", "[1,0] [1,1] [1,1]"], "fails"),
])
def test_unseen_set_claim(ovn, expected):
    claims = [c for c in paper.CLAIMS if c.check == "unseen_set"]
    out = check_claims(claim_rows(ovn, ["[1,0] [1,1] [1,1]"] * 2), 3, claims)
    assert out["verdict"].tolist() == [expected]


def sv_rows(ovn_sv, svm_sv, ovn_acc, svm_acc):
    out = []
    for method, svs, accs in (("OvN", ovn_sv, ovn_acc), ("OvR-SVC", svm_sv, svm_acc)):
        for seed, (sv, acc) in enumerate(zip(svs, accs)):
            row = dict.fromkeys(COLUMNS)
            row.update(dataset="moons", kernel="rbf", method=method, metric="accuracy", seed=seed, support_vectors=sv,
                       paper_protocol=acc, nested=acc, paper_protocol_std=0.01, nested_std=0.01)
            out.append(row)
    return pd.DataFrame(out, columns=COLUMNS)


@pytest.mark.parametrize("ovn_sv, ovn_acc, expected", [
    (["4/6", "5/5"], [0.99, 0.98], "holds"),
    (["4/6", "7/7"], [0.99, 0.98], "mixed"),   # seed 1: not fewer (equal)
    (["4/6", "5/5"], [0.90, 0.91], "fails"),   # fewer, but less accurate beyond the band
    (["8/6", "7/8"], [0.99, 0.99], "fails"),
])
def test_fewer_support_vectors_claim(ovn_sv, ovn_acc, expected):
    claims = [c for c in paper.CLAIMS if c.check == "fewer_support_vectors"]
    out = check_claims(sv_rows(ovn_sv, ["7/7", "7/7"], ovn_acc, [0.99, 0.98]), 3, claims)
    moons = out[out["scope"] == "moons, rbf"]
    assert moons["verdict"].tolist() == [expected]
    assert set(out.loc[out["scope"] != "moons, rbf", "verdict"]) == {NOT_RUN}


def parallel_table(angles, svc_angles, agreement=1.0):
    alphas = [0.0, 0.5, 0.75, 0.9]
    return pd.DataFrame({"alpha": alphas, "in_claim": [a >= 0.5 for a in alphas], "angle_w1_neg_w2": angles,
                         "angle_svc": svc_angles, "agreement_svc": agreement, "angle_svc_matched": 0.0,
                         "agreement_svc_matched": 1.0})


def test_parallel_claim_is_judged_on_the_claim_s_alphas_only():
    claims = [c for c in paper.CLAIMS if c.check == "parallel"]
    out = check_claims(rows([]), 3, claims, {
        "a": parallel_table([30.0, 0.0, 0.05, 0.0], [9.0, 0.0, 0.0, 0.0]),   # α = 0 is outside the claim
        "b": parallel_table([0.0, 0.0, 0.0, 0.0], [0.0, 5.0, 0.0, 0.0]),
        "c": parallel_table([0.0, 2.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]),
        "d": parallel_table([0.0, 3.0, 2.0, 1.0], [0.0, 0.0, 0.0, 0.0]),
    })
    assert out["verdict"].tolist() == ["holds", "holds", "holds", "mixed", "mixed", "fails"]
    assert "identical" not in " ".join(out["scope"][out["scope"].str.startswith(("c", "d"))])
    assert check_claims(rows([]), 3, claims)["verdict"].tolist() == [NOT_RUN]
