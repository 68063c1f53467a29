"""Verdicts and claims on hand-made cells: each outcome of the rule, the band, the evidence."""
import math

import numpy as np
import pandas as pd
import pytest

from ovn_cvx.experiments import paper, verdicts
from ovn_cvx.experiments.paper import PaperNumber
from ovn_cvx.experiments.tables import COLUMNS
from ovn_cvx.experiments.support_vectors import HARD_MARGIN, MARGIN_ERRORS, TRAINING_ERRORS
from ovn_cvx.experiments.verdicts import (ABOVE, BELOW, NOT_COMPARABLE, NOT_RUN, OUT_OF_SCOPE, PARALLEL_DEGREES,
                                          REPRODUCED, SENSITIVE, SUPPORT_ALPHA, THREE_DIGITS, Band, assess,
                                          check_claims, count, margin, sensitivity, summary_sentence, verdict)


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


def test_the_rounding_interval_is_closed_and_one_ulp_outside_is_not_reproduced():
    """The interval of "0.851" is [0.851 − e, 0.851 + e], e = 0.0005 + 1e-12 (the allowance for 0.851 ± 0.0005 in
    binary), closed: a band ending exactly on either edge reproduces the number, one ulp beyond it does not. A band
    that ends on the printed edge 0.8505 or starts on 0.8515 touches the interval despite the binary round-off."""
    n = number("0.851")
    edge = 0.0005 + 1e-12
    lo, hi = 0.851 - edge, 0.851 + edge
    assert verdict(n, band(0.70, lo)) == REPRODUCED
    assert verdict(n, band(0.70, np.nextafter(lo, 0.0))) == BELOW
    assert verdict(n, band(hi, 0.95)) == REPRODUCED
    assert verdict(n, band(np.nextafter(hi, 1.0), 0.95)) == ABOVE
    assert verdict(n, band(0.70, 0.8505)) == verdict(n, band(0.8515, 0.95)) == REPRODUCED
    assert verdict(n, band(0.70, 0.8505 - 1e-9)) == BELOW and verdict(n, band(0.8515 + 1e-9, 0.95)) == ABOVE


def test_a_band_without_a_number_or_upside_down_is_refused_not_reproduced():
    """A NaN end fails both comparisons with the interval, so it would read as "reproduced": refused, naming the
    band, as is lo > hi; a one-point band (lo = hi) is a band."""
    for lo, hi in [(np.nan, 0.86), (0.84, np.nan), (np.nan, np.nan), (0.86, 0.84)]:
        with pytest.raises(ValueError, match="band must have lo <= hi"):
            verdict(number("0.851"), Band(0.85, lo, hi, n_seeds=5))
        with pytest.raises(ValueError, match="band must have lo <= hi"):
            margin(number("0.851"), Band(0.85, lo, hi, n_seeds=5))
    assert verdict(number("0.851"), band(0.851, 0.851)) == REPRODUCED


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


def claim_rows(ovn_sets, br_sets, ovn_paper=None, br_paper=None):
    out = []
    for method, sets, at_paper in (("OvN", ovn_sets, ovn_paper), ("BR-SVC", br_sets, br_paper)):
        for seed, s in enumerate(sets):
            row = dict.fromkeys(COLUMNS)
            row.update(dataset="unseen_labelset", kernel="linear", method=method, metric="test_points_correct",
                       seed=seed, predicted_sets=s, predicted_sets_paper_points=None if at_paper is None
                       else at_paper[seed])
            out.append(row)
    return pd.DataFrame(out, columns=COLUMNS)


UNSEEN = [c for c in paper.CLAIMS if c.check == "unseen_set"]


@pytest.mark.parametrize("ovn, expected", [
    (["[1,0] [1,1] [0,1]", "[1,0] [1,1] [0,1]"], "holds"),
    (["[1,0] [1,1] [0,1]", "[1,0] [1,1] [1,1]"], "mixed"),
    (["[1,0] [1,1] [1,0]", "[1,0] [1,1] [1,1]"], "fails"),
])
def test_unseen_set_claim(ovn, expected):
    out = check_claims(claim_rows(ovn, ["[1,0] [1,1] [1,1]"] * 2), 3, UNSEEN)
    assert out["verdict"].tolist() == [expected, NOT_RUN]  # no sets at the paper's points in these rows


AS_PRINTED = " ".join(paper.TABLE_A_OVN)    # [0,1] [0,1] [0,1] [1,1] [1,0] [1,1]
OVR_PRINTED = " ".join(paper.TABLE_A_OVR)   # [1,1] [1,1] [1,1] [1,1] [1,0] [1,1]


@pytest.mark.parametrize("ovn_paper, expected", [
    ([AS_PRINTED, AS_PRINTED], "holds"),
    ([AS_PRINTED, "[0,1] [0,1] [1,1] [1,1] [1,0] [1,1]"], "mixed"),      # seed 1: (−3, 3) gets [1,1]
    (["[1,1] [1,0] [1,1] [1,1] [1,0] [1,1]"] * 2, "fails"),
])
def test_unseen_set_claim_at_the_paper_s_own_test_points(ovn_paper, expected):
    ours = ["[1,0] [1,1] [0,1]"] * 2
    out = check_claims(claim_rows(ours, ["[1,0] [1,1] [1,1]"] * 2, ovn_paper, [OVR_PRINTED] * 2), 3, UNSEEN)
    row = out.iloc[1]
    assert "paper's test points" in row["scope"] and row["verdict"] == expected
    assert f"{6 if ovn_paper[0] == AS_PRINTED else 3}/6 as the paper's OvN" in row["ours"]
    assert "6/6 as the paper's OvR" in row["ours"]


def test_table_a_numbers_show_ours_at_the_paper_s_point_and_stay_not_comparable():
    rows = claim_rows(["[1,0] [1,1] [0,1]"] * 2, ["[1,0] [1,1] [1,1]"] * 2,
                      ["[0,1] [1,1] [0,1] [1,1] [1,0] [1,1]", "[0,1] [0,1] [0,1] [1,1] [1,0] [1,1]"], [OVR_PRINTED] * 2)
    rows["metric"] = "test_points_correct"
    v = assess(rows, 3, paper.paper_numbers("A")).set_index(["row", "column"])
    assert v.loc[("test point (−5, 2)", "OvN SwHb"), "ours"] == "[1,1] (seeds [0, 1]: [1,1] [0,1])"
    assert v.loc[("test point (0, 3)", "OvR (scikit-learn)"), "ours"].startswith("[1,0] ")
    assert set(v["verdict"]) == {NOT_COMPARABLE} and v["margin"].isna().all() and not v["sensitive"].any()


# --- support vectors at matched regularisation ---------------------------------------------------------------
FEWER = [c for c in paper.CLAIMS if c.check == "fewer_support_vectors"]


def path_rows(settings, alpha=SUPPORT_ALPHA, dataset="moons", kernel="rbf"):
    """Rows of support_vector_path: settings = [(regime, fewer, accurate), ...], one β each."""
    return pd.DataFrame([{"dataset": dataset, "kernel": kernel, "seed": 0, "beta_factor": float(i), "alpha": alpha,
                          "regime": reg, "fewer": f, "accurate": a} for i, (reg, f, a) in enumerate(settings)])


def test_support_vector_claim_is_judged_per_regime_at_its_alpha():
    settings = [(TRAINING_ERRORS, True, True), (TRAINING_ERRORS, True, True),
                (MARGIN_ERRORS, True, True), (MARGIN_ERRORS, True, False),      # fewer, but less accurate
                (HARD_MARGIN, False, True)]
    other_alpha = path_rows([(reg, False, False) for reg, *_ in settings], alpha=0.0)
    out = check_claims(rows([]), 3, FEWER, {"support_vectors": pd.concat([path_rows(settings), other_alpha])})
    assert out["scope"].tolist() == ["moons, rbf: training errors", "moons, rbf: margin errors",
                                     "moons, rbf: hard margin"]
    assert out["verdict"].tolist() == ["holds", "mixed", "fails"]
    assert "both in 1/2" in out["ours"].iloc[1] and "α = 0: 0/2" in out["ours"].iloc[1]


def test_support_vector_claim_without_its_alpha_or_path_is_not_run():
    out = check_claims(rows([]), 3, FEWER, {"support_vectors": path_rows([(HARD_MARGIN, True, True)], alpha=0.5)})
    assert out["verdict"].tolist() == [NOT_RUN] and f"α = {SUPPORT_ALPHA} not measured" in out["ours"].iloc[0]
    assert check_claims(rows([]), 3, FEWER)["verdict"].tolist() == [NOT_RUN]


# --- parallel hyperplanes ---------------------------------------------------------------------------------------
def parallel_table(angles, svc_angles, agreement=1.0, symmetric=True):
    alphas = [0.0, 0.5, 0.75, 0.9]
    return pd.DataFrame({"alpha": alphas, "in_claim": [a >= 0.5 for a in alphas], "angle_w1_neg_w2": angles,
                         "angle_svc": 3.0, "agreement_svc": 0.99, "angle_svc_matched": svc_angles,
                         "agreement_svc_matched": agreement, "point_symmetric": symmetric})


def test_parallel_claim_is_judged_on_the_claim_s_alphas_and_scope_only():
    claims = [c for c in paper.CLAIMS if c.check == "parallel"]
    edge = PARALLEL_DEGREES
    out = check_claims(rows([]), 3, claims, {"hyperplanes": {
        "a": parallel_table([30.0, 0.0, edge, 0.0], [9.0, 0.0, 0.0, 0.0]),    # α = 0 outside the claim; the edge in
        "b": parallel_table([0.0, 0.0, 0.0, 0.0], [0.0, edge * 1.001, 0.0, 0.0]),   # just outside for the SVM
        "c": parallel_table([0.0, edge * 1.001, np.nan, 0.0], [0.0, 0.0, 0.0, 0.0]),   # NaN: w_k = 0, not parallel
        "d": parallel_table([0.0, 3.0, 2.0, 1.0], [0.0, 0.0, 0.0, 0.0]),
        "e": parallel_table([90.0, 30.0, 2.0, 0.0], [0.0, 0.0, 0.0, 0.0], symmetric=False),
    }})
    assert out["verdict"].tolist() == ["holds", "holds", "holds", "mixed", "mixed", "fails", OUT_OF_SCOPE]
    assert "identical" not in " ".join(out["scope"][out["scope"].str.startswith(("c", "d", "e"))])
    e = out.iloc[-1]
    assert e["scope"] == "e: w₁ ∥ −w₂" and "90.0° at α = 0 → 0.00° at α = 0.9" in e["ours"]
    assert check_claims(rows([]), 3, claims)["verdict"].tolist() == [NOT_RUN]


# --- how firm the tally is ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("lo, hi, expected_verdict, expected_margin", [
    (0.80, 0.8510, REPRODUCED, 0.0005),          # the band's top sits at the paper's value
    (0.8515, 0.90, REPRODUCED, 0.0),             # touches the interval's top
    (0.8525, 0.90, ABOVE, 0.001),
    (0.70, 0.8495, BELOW, 0.001),
])
def test_margin_is_the_distance_to_a_changed_verdict(lo, hi, expected_verdict, expected_margin):
    n = number("0.851")
    assert verdict(n, band(lo, hi)) == expected_verdict
    assert margin(n, band(lo, hi)) == pytest.approx(expected_margin, abs=1e-9)


def test_margin_without_a_numeric_verdict_is_nan():
    assert np.isnan(margin(number("0.851"), None))
    assert np.isnan(margin(number("0.837", why=paper.SYNTHETIC), band(0.8, 0.9)))


def test_three_decimal_reading_of_a_two_decimal_number():
    n = number("0.10", "hamming_loss")
    assert verdict(n, band(0.1040, 0.11)) == REPRODUCED                    # inside [0.095, 0.105]
    assert verdict(n, band(0.1040, 0.11), THREE_DIGITS) == ABOVE          # outside [0.0995, 0.1005]
    assert verdict(n, band(0.1004, 0.11), THREE_DIGITS) == REPRODUCED


def test_a_verdict_is_sensitive_only_under_the_limit(monkeypatch):
    """"sensitive" is margin < SENSITIVE: a margin equal to the limit is not sensitive, one ulp under it is. The
    margin is the hand-computed gap of a band 0.001 above the interval's top 0.851 + 0.0005 + 1e-12."""
    results = rows([(0.8525, 0.86)], stds=0.0)
    m = margin(number("0.851"), Band.from_rows(results, folds=3))
    assert m == pytest.approx(0.001 - 1e-12, abs=1e-15)
    for limit, sensitive in [(m, False), (np.nextafter(m, 1.0), True)]:
        monkeypatch.setattr(verdicts, "SENSITIVE", limit)
        v = assess(results, 3, [number("0.851")])
        assert v["verdict"].tolist() == [ABOVE] and v["margin"].tolist() == [m]
        assert v["sensitive"].tolist() == [sensitive]


def test_sensitivity_flags_verdicts_near_the_edge_and_gives_the_tally_s_range():
    results = pd.concat([rows([(0.8515 + SENSITIVE / 2, 0.86)]),                 # reproduced? no: above by 0.001
                         rows([(0.40, 0.41)], dataset="iris"),                       # far below
                         rows([(0.85, 0.851)], dataset="wine"),                      # reproduced, deep inside
                         rows([(0.0951, 0.096)], dataset="scene", metric="hamming_loss")], ignore_index=True)
    for name in ("glass", "iris", "wine", "scene"):
        results.loc[results["dataset"] == name, ["paper_protocol_std", "nested_std"]] = 0.0
    numbers = [number("0.851"), number("0.851", dataset="iris"), number("0.851", dataset="wine"),
               number("0.10", "hamming_loss", dataset="scene")]
    v = assess(results, 3, numbers)
    assert v["verdict"].tolist() == [ABOVE, BELOW, REPRODUCED, REPRODUCED]
    assert v["sensitive"].tolist() == [True, False, True, True]   # wine: 0.851 − 0.8505 = 0.0005 from the bottom
    assert v["verdict_three_digits"].tolist() == [ABOVE, BELOW, REPRODUCED, BELOW]
    text = " ".join(sensitivity(v))
    assert "**3 verdicts lie within 0.002" in text and "between 0 and 3 of the numbers would hold" in text
    assert "1 verdict changes (scene, L, OvN SwHb (0.10): reproduced → below) and 1 numbers hold" in text
    assert "No verdict lies within" in sensitivity(v.iloc[[1]])[0]
