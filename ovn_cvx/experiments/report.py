"""The reproduction's report (``report.md``): verdicts first, then protocols, tables, the claims' own measurements,
figures and the run's record. :func:`render` puts together the sections below from a run's results."""
from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path

import pandas as pd

from .._reports import environment, markdown_table
from . import paper
from .hyperplanes import to_markdown as hyperplane_markdown
from .protocols import ovn_method
from .support_vectors import REGIMES
from .tables import main_seed, summary_markdown, to_markdown
from .verdicts import HOLDS, SUPPORT_ALPHA, count, sensitivity, summary_sentence

TITLES = {
    "unseen_label": "Unseen-label set (2-D; patterns of a label absent from training)",
    "two_class": "Two-class 2-D problems: accuracy and support vectors per class",
    "multiclass": "Multiclass: glass, iris, wine",
    "multilabel": "Multilabel: synthetic, scene, emotions",
}

#: β of the parallel-hyperplane measurement (the claim is for any β; 1 keeps both SVMs in the soft-margin regime)
HYPERPLANE_BETA = 1.0


def comparisons(results: pd.DataFrame) -> list[str]:
    """Plain statements: OvN vs the best baseline (nested CV when it was run, else the paper protocol) and
    the optimism of the paper protocol, each against the fold-to-fold spread."""
    notes = []
    for (table, dataset, kernel), g in main_seed(results).groupby(["table", "dataset", "kernel"], sort=False):
        metric = g["metric"].iloc[0]  # the primary metric of the task
        g = g[g["metric"] == metric].set_index("method")
        if "OvN" not in g.index or len(g) < 2:
            continue
        col = "nested" if g["nested"].notna().all() else "paper_protocol"
        ovn, base = g.loc["OvN"], g.drop(index="OvN")
        best = base[col].idxmax()
        diff = ovn[col] - base.loc[best, col]
        spread = max(ovn[f"{col}_std"], base.loc[best, f"{col}_std"])
        verdict = "beyond" if abs(diff) > spread else "within"
        note = (f"{dataset} ({kernel}), {metric}, {col.replace('_', ' ')}: OvN {ovn[col]:.3f} vs {best} "
                f"{base.loc[best, col]:.3f} (difference {diff:+.3f}, {verdict} the fold-to-fold spread {spread:.3f})")
        if col == "nested":
            note += f"; paper protocol − nested for OvN: {ovn['paper_protocol'] - ovn['nested']:+.3f}"
        notes.append(note + ".")
    return notes


def provenance(config) -> str:
    """One line for every table file: what produced it."""
    env = environment()
    v = env["versions"]
    return (f"seed {config.seed} (band: {config.band_seeds} seeds for ≤ {config.band_max_samples} patterns), "
            f"{config.folds}-fold CV (nested {config.folds}×{config.folds}), grid "
            f"{json.dumps(config.grid.as_dict(), ensure_ascii=False)}, max_samples {config.max_samples}, OvN "
            f"{config.ovn_variant}/{config.ovn_solver}, {'raw features' if config.raw else 'standardised'}; python "
            f"{env['python']}, scikit-learn {v['scikit-learn']}, numpy {v['numpy']}, cvxpy {v['cvxpy']}, ovn-cvx "
            f"{v['ovn-cvx']}; {env['cpu']} × {env['cpu_count']}, {env['platform']}")


def verdict_summary(verdicts: pd.DataFrame, claims: pd.DataFrame) -> str:
    """The report's (and the README's) first paragraph: how many of the paper's numbers and claims hold."""
    counts = count(verdicts["verdict"]) if len(verdicts) else count([])
    claim_counts = claims["verdict"].value_counts().to_dict() if len(claims) else {}
    return summary_sentence(counts, claim_counts)


def verdict_table(verdicts: pd.DataFrame, table: str) -> str:
    """The paper's numbers of one of its tables, each beside ours, with the verdict, its margin and the evidence."""
    v = verdicts[verdicts["table"] == table]
    header = ["row", "column", "paper", "ours: protocol / nested (main seed)", "band: mean [min, max]", "verdict",
              "holds?", "margin", "evidence (measured)"]
    rows = [[r.row, r.column, r.paper, r.ours, r.band or "—", f"**{r.verdict}**", HOLDS[r.verdict],
             "—" if pd.isna(r.margin) else f"{r.margin:.4f}" + (" (sensitive)" if r.sensitive else ""),
             r.evidence or "—"] for r in v.itertuples()]
    return markdown_table(header, rows) + "\n"


def _seeds_text(results: pd.DataFrame) -> str:
    seeds = results.groupby("dataset")["seed"].nunique()
    groups = {}
    for name, n in seeds.items():
        groups.setdefault(int(n), []).append(name)
    return "; ".join(f"{n} seed{'s' if n > 1 else ''}: {', '.join(names)}" for n, names in sorted(groups.items()))


def _header(config, started, seconds, reused: dict) -> list[str]:
    lines = [f"# Reproduction of Shajari & Rangarajan, \"{paper.PAPER_TITLE}\"", "",
             f"Run {'--quick' if config.quick else '(full)'} started {started:%Y-%m-%d %H:%M:%S} UTC, "
             f"took **{seconds:.1f} s** ({seconds / 60:.1f} min) with n_jobs={config.n_jobs}. "
             f"OvN = {config.ovn_variant} solved by {config.ovn_solver or 'the default solver'}."]
    if reused:
        lines[-1] += (" Tables taken from an earlier run of the same configuration, not refitted: "
                      + "; ".join(f"{t} (run started {_dt.datetime.fromisoformat(when):%Y-%m-%d %H:%M} UTC)"
                                  for t, when in reused.items()) + ".")
    return lines + [""]


def _verdict_section(verdicts, claims) -> list[str]:
    lines = ["## Verdicts", "", verdict_summary(verdicts, claims), "",
             "Verdict of a paper number: **reproduced** when its rounding interval (\"0.10\" = [0.095, 0.105]) "
             "overlaps our *band* — the range of our numbers over the shuffle seeds and both protocols (the paper "
             "protocol at every seed, nested CV at the main seed; one seed only for the large sets, whose range is "
             "then widened by the fold standard error, max fold sd / √folds); **above** / **below** when our whole "
             "band lies above / below it (for the Hamming loss \"above\" is a larger loss); **not comparable** "
             "when the paper's data are unknown (its synthetic set, its 2-D toys: only their pattern is checked). "
             "The *margin* of a verdict is how far our band would have to move to change it. "
             "Computed by `ovn_cvx.experiments.verdicts`; the paper's numbers come from `ovn_cvx.experiments.paper` "
             "(table and row of each).", ""]
    if len(verdicts):
        by_table = verdicts.groupby("table")["verdict"].value_counts().unstack(fill_value=0)
        lines += [markdown_table(["paper table", *by_table.columns],
                                 [[t, *r] for t, r in zip(by_table.index, by_table.to_numpy().tolist())]), "",
                  "### How firm the tally is", "", *[f"* {line}" for line in sensitivity(verdicts)], ""]
    if len(claims):
        lines += ["### The paper's qualitative claims", "",
                  "Each claim is judged where it applies: the support vectors of OvN and the binary SVM at the same "
                  "regularisation, by regime (\"Fewer support vectors at matched regularisation\" below); the "
                  "parallel hyperplanes on a set whose optimum is two parallel hyperplanes (a set outside that scope "
                  "is reported, not judged); the unseen label set also at the paper's own test points. A verdict is "
                  "**holds** / **fails** when every / no seed or setting shows the claim, **mixed** otherwise.", "",
                  markdown_table(["table", "claim", "checked on", "ours", "verdict"],
                                 [[r.table, r.claim, r.scope, r.ours, f"**{r.verdict}**"]
                                  for r in claims.itertuples()]),
                  ""]
    for t in dict.fromkeys(verdicts["table"]) if len(verdicts) else ():
        lines += [f"### Paper table {t}: its numbers beside ours", "", verdict_table(verdicts, t)]
    return lines


def _decision_rules(config, ovn_class) -> str:
    params = ovn_method(config.ovn_variant, config.ovn_solver, ovn_class).build("linear").get_params()
    return (f"* **Decision rules**: OvN predicts the class of largest f_k(x) for class labels; for label sets "
            f"(`decision_rule={params['decision_rule']!r}`) every label with f_k(x) ≥ {params['threshold']:g}, and "
            f"a pattern with none gets {'its argmax label' if params['fallback'] == 'argmax' else 'no label'} "
            f"(`fallback={params['fallback']!r}`) — the paper's rule. The scikit-learn baselines use their own "
            "rules: one-vs-rest's largest decision value for class labels, each binary SVC's sign for label sets "
            "(binary relevance; a pattern may get no label).")


def _protocol_section(config, results, ovn_class) -> list[str]:
    g = config.grid
    return [
        "## Protocols", "",
        f"* **paper protocol**: {config.folds}-fold CV over the whole grid, the best mean score "
        "(`GridSearchCV.best_score_`) ± that candidate's fold-to-fold standard deviation. Chosen and scored "
        "on the same folds: optimistic. The paper's stated protocol.",
        f"* **nested CV**: `cross_validate(GridSearchCV(...))`, {config.folds} outer × {config.folds} inner "
        "folds; mean ± standard deviation over the outer folds.",
        "* **Folds**: shuffled once per seed; for class labels (multiclass and two-class sets) they are "
        "*stratified* (`StratifiedKFold(shuffle=True)`: every fold keeps the class proportions), for label sets "
        "plain `KFold(shuffle=True)`. The paper says only that the data are shuffled and cut into equal folds; "
        "stratifying is our choice (it keeps every class in every training part of the small, unbalanced glass).",
        _decision_rules(config, ovn_class),
        f"* **Seeds**: main seed {config.seed} (every table's numbers, both protocols); the band reruns data "
        f"sets of at most {config.band_max_samples} patterns under the paper protocol with "
        f"{config.band_seeds} shuffle seeds in all ({_seeds_text(results)}); the toys and the synthetic set "
        "are redrawn with each seed.",
        "* **Preprocessing**: " + ("raw features everywhere (`--raw`)." if config.raw else
                                   "every data set except the 2-D toys is standardised (`StandardScaler` "
                                   "inside the pipeline, fitted on each training part — the paper "
                                   "\"normalized\" its data sets without saying how); the toys keep their "
                                   "coordinates (the unseen-label behaviour depends on the origin)."),
        f"* **Grid** (the same for every method): β = factor/κ₀ with factors {list(g.beta)}, the baselines' "
        "C = β/2 (docs/theory.md §2/§7); κ₀ = mean_i K(x_i, x_i) is the kernel's size on the data (1 for the "
        "Gaussian kernel, the mean ‖x‖² — M after standardisation — for the linear one): scaling a kernel by s "
        "and β by 1/s gives the same classifier, so the factors mean the same regularisation on every data "
        "set (with absolute C up to 256, libsvm's linear SVC took minutes per fit on standardised scene); "
        "Gaussian kernel exp(−‖x−y‖²/(2σ²)) ⇒ gamma = 1/(2σ²), σ = factor × σ₀ with factors "
        f"{list(g.sigma_factors)} and σ₀ = sqrt(M·Var X / 2) (scikit-learn's `gamma=\"scale\"` width, after "
        f"standardisation where applied); OvN also searches α ∈ {list(g.alpha)} (no baseline counterpart). "
        "The paper's degree-2 polynomial kernel is (⟨x, y⟩ + 1)² for every method (not searched). Every "
        "selected value on the edge of its axis is listed in the tables (\"selected at the grid's edge\") "
        "and beside the verdicts.",
        "* **Metrics**: multiclass accuracy and Hamming loss (= 1 − accuracy for 1-D labels; the paper's HL "
        "columns of its multiclass table are 1 − accuracy and are not counted twice); multilabel "
        "example-based accuracy `jaccard_score(average=\"samples\", zero_division=1)` and Hamming loss, both "
        "from the one model chosen by example accuracy (`metric_best`: each metric's own best over the grid, "
        "shown as evidence); unseen-label set: also `test_points_correct`, the share of the three points "
        "(2,−2), (2,2), (0,4) given their intended sets [1,0], [1,1], [0,1] — [0,1] never occurs in training "
        "— and the predicted sets at the paper's own six test points.",
        "* **Data**: glass (Id column dropped; `glass+Id` keeps it, as evidence), iris, wine, scene and "
        "emotions (Mulan train+test) from `ovn_cvx.datasets`; `wine-raw`: wine without standardisation "
        "(evidence); 2-D toys from its generators (our constructions), each with the kernels of the paper's "
        "two-class table (hourglass: Gaussian and degree-2 polynomial; moons: Gaussian; random: linear); "
        "`synthetic` = "
        "`sklearn.datasets.make_multilabel_classification(300, n_features=10, n_classes=5, n_labels=2, "
        "allow_unlabeled=False)` (the paper's set is not described). Subsampling (max_samples) is "
        "stratified for class labels.",
        "* **Baselines**: `OneVsRestClassifier(SVC)` (OvR-SVC; on an indicator matrix: binary relevance, "
        "BR-SVC; on two classes: the binary SVC), `LinearSVC(multi_class=\"crammer_singer\")` (CS, linear "
        "only).", ""]


def _support_vector_section(path: pd.DataFrame) -> list[str]:
    """Median support vectors and the share of settings where the claim holds, per set, regime and α."""
    lines = ["### Fewer support vectors at matched regularisation (the paper's two-class table claim)", "",
             "The grid search picks, for each method, the most regularised of many models of equal accuracy, so the "
             "table's support vectors come from unrelated settings. Here OvN (SwHb) and the binary SVM are fitted "
             "at every β of the grid with the *same* regularisation, C = β/2, the same kernel (Gaussian: σ₀) and "
             "every α, on every seed. Regime of a setting, from the SVM: *training errors* (it misclassifies "
             "training patterns), *margin errors* (it separates them, some inside its margin), *hard margin* (no "
             "dual coefficient at C: C no longer changes it). *fewer*: no class with more support vectors and "
             "fewer in all; *accurate*: OvN's 3-fold accuracy no lower than the SVM's beyond the fold standard "
             f"error. The claim's verdict is taken at α = {SUPPORT_ALPHA:g}; every setting is in "
             "`support_vectors.csv` (`ovn_cvx.experiments.support_vectors`).", ""]
    rows = []
    for (dataset, kernel, regime, alpha), g in path.groupby(["dataset", "kernel", "regime", "alpha"], sort=False):
        ovn = g["ovn_support"].map(lambda v: sum(map(int, v.split("/"))))
        svc = g["svc_support"].map(lambda v: sum(map(int, v.split("/"))))
        rows.append([dataset, kernel, regime, f"{alpha:g}", len(g), f"{ovn.median():g}", f"{svc.median():g}",
                     f"{int(g['fewer'].sum())}/{len(g)}", f"{int(g['accurate'].sum())}/{len(g)}",
                     f"{int((g['fewer'] & g['accurate']).sum())}/{len(g)}"])
    rows.sort(key=lambda r: (r[0], r[1], REGIMES.index(r[2]), float(r[3])))
    return lines + [markdown_table(["data set", "kernel", "regime", "α", "settings", "median SVs OvN",
                                    "median SVs SVM", "fewer", "accurate", "both"], rows), ""]


def _hyperplane_section(sets: dict, figure) -> list[str]:
    lines = ["### Parallel hyperplanes (the paper's two-class figure claim)", "",
             f"K = 2 linear SwHb OvN for each α (β = {HYPERPLANE_BETA}) against SVC(C = β/2) — the binary SVM of "
             "docs/theory.md §7 — and SVC(C = β/(2(1 − α))), the SVM that the mathematics predicts when w₁ = −w₂ "
             "(docs/theory.md §7.1): on a two-class set w₁ = −w₂ needs the support vectors' weighted means to be "
             "mirror images through the origin, so it depends on where the origin is, not on α. A set symmetric about "
             "the origin (`point_symmetric`) has that optimum at every α and is in the claim's scope; another set "
             "is reported, not judged. Angles in degrees; `in_claim`: α in the paper's range [0.5, 1) (its [1, 2] "
             "in the appendix constants).", ""]
    for name, table in sets.items():
        lines += [f"Set: {name} (`ovn_cvx.datasets.make_parallel`, our construction).", "",
                  hyperplane_markdown(table), ""]
    if figure is not None:
        lines += [f"![hyperplanes]({figure.as_posix()})", ""]
    return lines


def _table_sections(config, tables, figure_links, measurements) -> list[str]:
    lines = []
    for name, df in tables.items():
        lines += [f"## {TITLES[name]}", ""]
        if len(df):
            primary = df["metric"].iloc[0]
            lines += [f"Summary ({primary}, main seed, paper protocol / nested CV, the paper's number in "
                      "parentheses):", "", summary_markdown(df, primary),
                      "Details (main seed: mean ± standard deviation over the folds; band over seeds and "
                      "protocols):", ""]
        lines.append(to_markdown(df, config.folds))
        failed = int(df.drop_duplicates(["dataset", "kernel", "method", "seed"])["failed_fits"].sum()) if len(df) else 0
        if failed:
            lines += [f"**{failed} fits failed** (scored NaN) in this table.", ""]
        datasets = set(df["dataset"]) if len(df) else set()
        lines += [f"![{stem}]({link.as_posix()})" + "\n" for stem, link in figure_links.items()
                  if stem.rsplit("_", 1)[0] in datasets]
        if name == "two_class":
            if len(measurements.get("support_vectors", ())):
                lines += _support_vector_section(measurements["support_vectors"])
            if measurements.get("hyperplanes"):
                lines += _hyperplane_section(measurements["hyperplanes"], figure_links.get("hyperplanes"))
    return lines


def render(config, tables, results, verdicts, claims, measurements, figures, started, seconds, *, reused=None,
           ovn_class=None) -> str:
    """The report's Markdown. ``figures``: paths relative to the report, or the message of a run without
    matplotlib; ``measurements`` as in :func:`.verdicts.check_claims`; ``reused``: table → when the run that
    computed it started (tables not refitted)."""
    figure_links = {} if isinstance(figures, str) else {Path(p).stem: Path(p) for p in figures}
    lines = [*_header(config, started, seconds, reused or {}), *_verdict_section(verdicts, claims),
             *_protocol_section(config, results, ovn_class),
             *_table_sections(config, tables, figure_links, measurements)]
    notes = comparisons(results) if len(results) else []
    if notes:
        lines += ["## OvN vs the best baseline (main seed, primary metric)", ""] + [f"* {n}" for n in notes] + [""]
    if isinstance(figures, str):
        lines += ["## Figures", "", figures, ""]
    lines += ["## Configuration", "", "```", json.dumps(config.as_dict(), indent=1, default=str), "```", "",
              "## Environment", "", "```", json.dumps(environment(), indent=1), "```", ""]
    return "\n".join(lines) + "\n"
