"""Issue 14: the paper's multilabel rule against a rule learned from out-of-fold decision values
(``decision_rule="cv"``) and against known negatives (``negatives="rest"``), at fixed hyperparameters on the bundled
train/test splits, or (``--nested``) against binary relevance / one-vs-rest in nested CV with tuned hyperparameters.

Run by hand (not a test):

    python benchmarks/bench_rules.py                 # emotions (about a minute)
    python benchmarks/bench_rules.py --data scene    # scene (negatives='rest' takes minutes: 7 266 pairs)
    python benchmarks/bench_rules.py --data glass iris wine   # multiclass: 5-fold CV accuracy, seconds
    python benchmarks/bench_rules.py --rule-cv 3 5 10         # emotions, the learned rule with 3, 5, 10 folds
    python benchmarks/bench_rules.py --nested --max-rows 600 --n-jobs 2 --out docs/rules   # the honest comparison

Fixed mode. Fixed hyperparameters (no search): StandardScaler, SwHb, α = 0, β = 1, linear kernel, MM. Example-based
Jaccard on the test split (a row with neither true nor predicted labels counts 1), and for reference binary relevance
with scikit-learn's LinearSVC (C = 1, f > 0) on the same features. Multiclass sets (no split bundled): mean accuracy
over StratifiedKFold(5, shuffle=True, random_state=0), OvN (paper) and negatives='rest' against one-vs-rest
LinearSVC (C = 1).

Nested mode (``--nested``): ``ovn_cvx.experiments.protocols.evaluate``'s nested protocol alone — 3 outer folds, a
grid search on 3 inner folds of each outer training part, the refitted winner scored on the outer test fold — once
per outer-split seed (``--seeds``; the inner split uses seed + 1). Every model is a pipeline StandardScaler → model
(fitted inside each fold). Multilabel sets: Mulan train + test together (``--part train``: the train part alone;
``--max-rows n``: a set above n rows subsampled to n, seed 0); multiclass: the whole set. Settings: OvN (SwHb, MM, α
= 0) with the paper's rule, with ``decision_rule="cv"`` (``rule_scoring="jaccard"``, the reported metric;
``--rule-cv`` internal folds; the default ``rule_selection="cv"``), the same with ``rule_selection="one_se"``, with
``negatives="rest"``, with negatives and the learned rule, with negatives and uncoupled biases (SwSb,
``bias_penalty=0``); binary relevance / one-vs-rest ``OneVsRestClassifier(SVC)``; Crammer–Singer ``LinearSVC``
(multiclass, linear). A 1-D target is always predicted by the argmax, so multiclass runs no learned-rule setting.
Grid (``NESTED_GRID``, the same for every method): β (OvN) = 2·C (scikit-learn) over every second value of
``Grid``'s β axis, in multiples of 1/κ₀ as the reproduction's (``reference_kernel_scale``: a linear kernel on M
standardized features has K(x, x) ≈ M, so an absolute β = 1/8 would leave C·M ≥ 4.5 on 72 features), σ/σ₀ over
its middle three, α fixed at 0 (OvN's coupling has no baseline counterpart). Metrics:
multilabel example-based Jaccard (the refit metric) and Hamming loss of the same models; multiclass accuracy.
Targets of issue 14 are judged on the mean over the seeds of the paired per-seed difference (the same outer splits
for every setting of a seed). Also: OvN with the paper's rule and with negatives fitted with MM, Clarabel and ECOS
(linear, β = 2, one split) and the number of predicted entries where they disagree.

Output (nested mode, ``--out``): bench_rules_nested.csv (one row per data set × kernel × setting × seed × metric),
bench_rules_agreement.csv (the solver check) and bench_rules_nested.md (machine stamp from
``ovn_cvx._reports.environment``, tables, targets).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.metrics import jaccard_score
from sklearn.model_selection import StratifiedKFold, cross_val_score, train_test_split
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from ovn_cvx import OvNClassifier
from ovn_cvx._reports import environment, markdown_table
from ovn_cvx.datasets import load_emotions, load_glass, load_iris, load_scene, load_wine
from ovn_cvx.experiments.protocols import (PAPER_MODEL, Grid, baseline_methods, evaluate, ovn_method,
                                          reference_kernel_scale, reference_sigma, with_scaler)
from ovn_cvx.experiments.tables import subsample

LOADERS = {"emotions": load_emotions, "scene": load_scene}
MULTICLASS = {"glass": load_glass, "iris": load_iris, "wine": load_wine}

#: the OvN settings compared (estimator parameters on top of SwHb); the learned rule's internal folds are added
OVN_SETTINGS = {
    "OvN paper": {},
    "OvN cv": {"decision_rule": "cv", "rule_scoring": "jaccard"},
    "OvN cv 1-SE": {"decision_rule": "cv", "rule_scoring": "jaccard", "rule_selection": "one_se"},
    "OvN rest": {"negatives": "rest"},
    "OvN rest+cv": {"negatives": "rest", "decision_rule": "cv", "rule_scoring": "jaccard"},
    # soft biases without penalty: the classes' biases uncoupled (with α = 0 this is one-vs-rest with C = β)
    "OvN rest, free b": {"negatives": "rest", "variant": "SwSb", "bias_penalty": 0.0},
}

#: every second β of ``Grid`` (C·κ₀ = β·κ₀/2 = 1/16, 1, 16) and its middle three widths: 3 linear and 9 RBF
#: candidates keep the nested run of every set, kernel, setting and 3 seeds within 30 minutes on 2 cores
#: (27 min with ``--max-rows 600``, measured)
NESTED_GRID = Grid(beta=Grid().beta[::2][:3], sigma_factors=Grid().sigma_factors[1:4], alpha=(0.0,))

#: the issue's targets: (name, task of the data sets, setting, reference setting, margin on the primary metric)
TARGETS = (
    ("(a) cv rule ≥ paper rule + 0.03 (Jaccard)", "multilabel", "OvN cv", "OvN paper", 0.03),
    ("(a) rest + cv rule ≥ BR − 0.01 (Jaccard)", "multilabel", "OvN rest+cv", "BR-SVC", -0.01),
    ("(b) rest ≥ OvR − 0.01 (accuracy)", "multiclass", "OvN rest", "OvR-SVC", -0.01),
    ("(b) rest, free b ≥ OvR − 0.01 (accuracy)", "multiclass", "OvN rest, free b", "OvR-SVC", -0.01),
)
PRIMARY = {"multilabel": "example_accuracy", "multiclass": "accuracy"}


def settings(rule_cv):
    """The fixed mode's multilabel settings: each of ``OVN_SETTINGS``, a learned rule with each number of folds."""
    rows = {}
    for name, params in OVN_SETTINGS.items():
        if "decision_rule" in params:
            rows.update({f"{name} ({n} folds)": {**params, "rule_cv": n} for n in rule_cv})
        else:
            rows[name] = params
    return rows


def load(name, part="all", max_rows=None):
    """(X, y, task) of a bundled set; a multilabel one's Mulan ``part``: "all" (train and test together) or
    "train"; at most ``max_rows`` rows (the reproduction's ``subsample``, seed 0: the same rows for every split)."""
    if name in LOADERS:
        X, y = LOADERS[name](part, return_X_y=True)
        task = "multilabel"
    else:
        X, y = MULTICLASS[name](return_X_y=True)
        task = "multiclass"
    return *subsample(X, y, max_rows, 0, task), task


def nested_settings(task, kernel, rule_cv):
    """The settings of one task and kernel: name -> (ClassifierSpec, estimator parameters)."""
    ovn = ovn_method("SwHb", "mm")
    out = {}
    for name, params in OVN_SETTINGS.items():
        if "decision_rule" in params:
            if task != "multilabel":  # 1-D y is always predicted by the argmax
                continue
            params = {**params, "rule_cv": rule_cv}
        out[name] = (ovn, params)
    out.update({spec.name: (spec, {}) for spec in baseline_methods() if task in spec.tasks and kernel in spec.kernels})
    return out


def rule_name(model):
    """The learned rule of a fitted pipeline's OvN, in short ("paper", "per-label, no fallback", ...), or ""."""
    est = model[-1]
    rule = getattr(est, "rule_", None)
    if rule is None:
        return ""
    paper = est.threshold, est.fallback == "argmax"
    if rule.kind == "global threshold" and (rule.threshold, rule.fallback) == paper:
        return "paper"
    return rule.kind.split(" ")[0] + ("" if rule.fallback or rule.kind in ("top-m", "score-gap") else ", no fallback")


def nested_cell(dataset, X, y, task, kernel, setting, spec, params, seed, grid, folds):
    """One data set × kernel × setting × seed: the rows (one per metric) of the nested protocol."""
    Xs = StandardScaler().fit_transform(X)
    estimator, param_grid = with_scaler(spec.build(kernel).set_params(**params), spec.param_grid(
        kernel, grid, reference_sigma(Xs), reference_kernel_scale(Xs, kernel)), standardize=True)
    ev = evaluate(estimator, param_grid, X, y, task=task, folds=folds, seed=seed, paper=False)
    params_text = json.dumps([{k.split("__")[-1]: round(v, 6) for k, v in p.items() if len(param_grid[k]) > 1}
                              for p in ev.nested_params])
    rules = "; ".join(rule_name(m) for m in ev.nested_models) if "decision_rule" in params else ""
    return [{"dataset": dataset, "task": task, "kernel": kernel, "setting": setting, "seed": seed, "metric": metric,
             "nested": mean, "outer_std": std, "params": params_text, "rules": rules, "failed_fits": ev.failed_fits,
             "seconds": round(ev.seconds, 2)} for metric, (mean, std) in ev.nested.items()]


def cost(kernel, setting, y, rule_cv):
    """A rough relative cost of a cell, to start the longest first: negatives multiply the pairs by K, a learned rule
    the fits by 1 + rule_cv; kernel problems grow faster with the rows."""
    params = OVN_SETTINGS.get(setting, {})
    n_classes = y.shape[1] if y.ndim == 2 else np.unique(y).size
    return (len(y) ** (2 if kernel == "rbf" else 1) * (n_classes if "negatives" in params else 1)
            * (1 + rule_cv if "decision_rule" in params else 1))


def run_nested(data, kernels, seeds, rule_cv, folds=3, n_jobs=1, grid=NESTED_GRID, solver_check=False,
               progress=print, record=None):
    """Every cell of the comparison on ``data`` (name -> (X, y, task), as :func:`load`) and, with ``solver_check``,
    the solver agreement of :func:`agreement_cell`, run in parallel over cells (each single-threaded), the longest
    first: (rows, one per metric; agreement rows or None). ``record`` is called with each cell's result as it
    ends (a long run keeps what it finished)."""
    jobs = []
    for dataset, (X, y, task) in data.items():
        for kernel in kernels:
            for setting, (spec, params) in nested_settings(task, kernel, rule_cv).items():
                jobs += [(cost(kernel, setting, y, rule_cv), nested_cell,
                          (dataset, X, y, task, kernel, setting, spec, params, seed, grid, folds)) for seed in seeds]
        if solver_check:
            split = agreement_split(dataset, X, y, task)
            # a CVXPY fit of a linear model costs roughly what an MM fit of a kernel model does
            jobs += [(cost("rbf", setting, y, rule_cv), agreement_cell, (dataset, setting, params, *split))
                     for setting, (_, params) in nested_settings(task, "linear", rule_cv).items()
                     if setting in AGREEMENT_SETTINGS]
    jobs.sort(key=lambda job: -job[0])
    rows, agreement = [], []
    for result in Parallel(n_jobs=n_jobs, return_as="generator_unordered")(
            delayed(function)(*args) for _, function, args in jobs):
        if record is not None:
            record(result)
        if isinstance(result, dict):
            agreement.append(result)
            progress(f"  {result['dataset']:9s} solvers {result['setting']:13s} done")
            continue
        first = result[0]
        progress(f"  {first['dataset']:9s} {first['kernel']:6s} {first['setting']:13s} seed {first['seed']}  "
                 f"{first['metric']}={first['nested']:.3f}  ({first['seconds']:.0f} s)")
        rows += result
    rank = {"dataset": {d: i for i, d in enumerate(data)},
            "setting": {s: i for i, s in enumerate([*OVN_SETTINGS, *(spec.name for spec in baseline_methods())])}}

    def ordered(df, keys):
        return df.sort_values(keys, key=lambda col: col.map(rank[col.name]) if col.name in rank else col,
                              ignore_index=True)

    return (ordered(pd.DataFrame(rows), ["dataset", "kernel", "setting", "seed", "metric"]),
            ordered(pd.DataFrame(agreement), ["dataset", "setting"]) if solver_check else None)


def summarize(rows: pd.DataFrame) -> pd.DataFrame:
    """Mean, min and max over the seeds of each data set × kernel × setting × metric (losses stay losses)."""
    return (rows.groupby(["dataset", "task", "kernel", "setting", "metric"], sort=False)["nested"]
            .agg(mean="mean", low="min", high="max", seeds="count").reset_index())


def judge_targets(rows: pd.DataFrame) -> pd.DataFrame:
    """Each target on each data set and kernel: the per-seed difference setting − reference of the primary metric
    (paired: the same outer splits), its mean, min and max over the seeds, and met = mean ≥ margin."""
    out = []
    for name, task, setting, reference, margin in TARGETS:
        metric = rows[(rows["task"] == task) & (rows["metric"] == PRIMARY[task])]
        for (dataset, kernel), cell in metric.groupby(["dataset", "kernel"], sort=False):
            by_seed = cell.pivot_table(index="seed", columns="setting", values="nested")
            if setting not in by_seed or reference not in by_seed:
                continue
            diff = (by_seed[setting] - by_seed[reference]).dropna()
            out.append({"target": name, "dataset": dataset, "kernel": kernel, "setting": by_seed[setting].mean(),
                        "reference": by_seed[reference].mean(), "difference": diff.mean(), "low": diff.min(),
                        "high": diff.max(), "needed": margin, "met": bool(diff.mean() >= margin)})
    return pd.DataFrame(out)


#: the settings of the solver check (target (c)); the learned rule's own check is tests/test_estimator_rules.py (a CVXPY
#: fit of scene with negatives takes 30-60 s, and the learned rule multiplies the fits by 1 + rule_cv)
AGREEMENT_SETTINGS = ("OvN paper", "OvN rest")


def agreement_split(dataset, X, y, task):
    """(X, y, X_test) of the solver check: Mulan's train and test parts, else a stratified two thirds and the rest."""
    if task == "multilabel":
        X, y = LOADERS[dataset]("train", return_X_y=True)
        return X, y, LOADERS[dataset]("test", return_X_y=True)[0]
    X, X_test, y, _ = train_test_split(X, y, train_size=2 / 3, stratify=y, random_state=0)
    return X, y, X_test


def agreement_cell(dataset, setting, params, X, y, X_test, solvers=("mm", "CLARABEL", "ECOS"), beta=2.0):
    """Target (c): OvN (linear, SwHb, β fixed) fitted with each solver, and the predicted test entries where each
    solver differs from the first."""
    predictions, degenerate = [], set()
    for solver in solvers:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # degenerate labels: counted below
            model = make_pipeline(StandardScaler(), OvNClassifier(**{**PAPER_MODEL, "variant": "SwHb", "beta": beta,
                                                                      "solver": solver, **params})).fit(X, y)
        predictions.append(np.asarray(model.predict(X_test)))
        degenerate.update(model[-1].degenerate_labels_.tolist())
    return {"dataset": dataset, "setting": setting, "test entries": predictions[0].size,
            "degenerate labels": len(degenerate),
            **{f"{s} differs": int((p != predictions[0]).sum()) for s, p in zip(solvers[1:], predictions[1:])}}


def _cell(mean, low, high, seeds):
    return f"{mean:.3f}" if seeds == 1 else f"{mean:.3f} [{low:.3f}, {high:.3f}]"


def nested_report(rows, summary, targets, agreement, machine, command, seconds, rule_cv, sizes) -> str:
    versions = ", ".join(f"{k} {v}" for k, v in machine["versions"].items())
    grid = NESTED_GRID.as_dict()
    lines = ["# Learned rules and negatives against binary relevance / one-vs-rest, nested CV "
             "(benchmarks/bench_rules.py --nested)", "",
             f"- Date: {machine['date']}; machine: {machine['platform']} ({machine['cpu']}, "
             f"{machine['cpu_count']} CPUs); Python {machine['python']}; {versions}",
             f"- Command: `{command}`; wall time {seconds / 60:.1f} min",
             f"- Data (rows × features): {sizes}.",
             "- Protocol: nested CV, 3 outer × 3 inner folds (KFold for label sets, StratifiedKFold for classes, "
             "shuffled; outer seed s, inner seed s + 1), StandardScaler inside the pipeline; OvN SwHb with MM, "
             f"α = 0; the learned rule: `decision_rule=\"cv\", rule_scoring=\"jaccard\", rule_cv={rule_cv}` and the "
             "default `rule_selection=\"cv\"` (the family chosen on held-out rows; \"OvN cv 1-SE\": `\"one_se\"`).",
             f"- Grid, the same for every method: β·κ₀ = {list(NESTED_GRID.beta)} (scikit-learn C·κ₀ = β·κ₀/2 = "
             f"{[b / 2 for b in NESTED_GRID.beta]}; κ₀ = mean K(x, x) on the standardized set: 1 for RBF, the "
             f"number of features for linear, as in the reproduction); RBF σ/σ₀ = {grid['sigma/sigma0']} "
             "(gamma = 1/(2σ²), σ₀ = "
             "sqrt(M·Var X/2), scikit-learn's \"scale\").",
             "- Cells: mean over the outer-split seeds of the nested score, [min, max] over the seeds.", ""]
    for task, metrics in (("multilabel", ("example_accuracy", "hamming_loss")), ("multiclass", ("accuracy",))):
        part = summary[summary["task"] == task]
        if part.empty:
            continue
        settings_ = list(dict.fromkeys(part["setting"]))
        for metric in metrics:
            label = {"example_accuracy": "example-based Jaccard (higher is better)",
                     "hamming_loss": "Hamming loss (lower is better; the Jaccard-selected models)",
                     "accuracy": "accuracy"}[metric]
            lines += [f"## {task.capitalize()}: {label}", ""]
            table = []
            for (dataset, kernel), cell in part[part["metric"] == metric].groupby(["dataset", "kernel"], sort=False):
                by = cell.set_index("setting")
                table.append([dataset, kernel] + [_cell(*by.loc[s, ["mean", "low", "high", "seeds"]])
                                                  if s in by.index else "–" for s in settings_])
            lines += [markdown_table(["data", "kernel", *settings_], table), ""]
    if not targets.empty:
        lines += ["## Targets", "",
                  "Difference = setting − reference of the primary metric per seed (paired), mean [min, max] over "
                  "the seeds; met when the mean is at least the margin.", ""]
        lines += [markdown_table(["target", "data", "kernel", "setting", "reference", "difference", "margin", "met"],
                                 [[t.target, t.dataset, t.kernel, f"{t.setting:.3f}", f"{t.reference:.3f}",
                                   f"{t.difference:+.3f} [{t.low:+.3f}, {t.high:+.3f}]", f"{t.needed:+.2f}",
                                   "met" if t.met else "**missed**"] for t in targets.itertuples()]), ""]
    learned = rows[(rows["rules"] != "") & (rows["metric"] == "example_accuracy")]
    if not learned.empty:
        lines += ["## The learned rules chosen (one per outer fold, seeds in order)", ""]
        lines += [markdown_table(["data", "kernel", "setting", "rules"],
                                 [[d, k, s, " / ".join(g["rules"])] for (d, k, s), g in
                                  learned.groupby(["dataset", "kernel", "setting"], sort=False)]), ""]
    lines += ["## Selected hyperparameters (one per outer fold, seeds in order)", "",
              markdown_table(["data", "kernel", "setting", "params"],
                             [[d, k, s, " / ".join(g["params"])] for (d, k, s), g in
                              rows[rows["metric"] == rows["task"].map(PRIMARY)]
                              .groupby(["dataset", "kernel", "setting"], sort=False)]), ""]
    if agreement is not None and not agreement.empty:
        lines += ["## Target (c): the same model fitted with each solver", "",
                  "OvN linear, β = 2, fitted on Mulan's train part (multilabel) or a stratified two thirds "
                  "(multiclass); entries of the test predictions where Clarabel / ECOS differ from MM.", "",
                  markdown_table(list(agreement.columns), agreement.values.tolist()), ""]
    cells = rows.drop_duplicates(["dataset", "kernel", "setting", "seed"])
    lines += [f"Failed fits: {int(cells['failed_fits'].sum())}."]
    return "\n".join(lines)


def main_nested(args, argv):
    start = time.perf_counter()
    machine = environment()
    datasets = args.data or [*LOADERS, *MULTICLASS]
    data = {name: load(name, args.part, args.max_rows) for name in datasets}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "bench_rules_nested.partial.jsonl", "w") as log:
        def record(result):
            log.write(json.dumps(result) + "\n")
            log.flush()

        rows, agreement = run_nested(data, args.kernels, args.seeds, args.rule_cv[0], n_jobs=args.n_jobs,
                                     solver_check=args.solver_check, record=record)
    (out / "bench_rules_nested.partial.jsonl").unlink()  # complete: the CSV and the report replace it
    summary, targets = summarize(rows), judge_targets(rows)
    rows.to_csv(out / "bench_rules_nested.csv", index=False)
    if agreement is not None:
        agreement.to_csv(out / "bench_rules_agreement.csv", index=False)
    command = "python benchmarks/bench_rules.py " + " ".join(argv)
    sizes = "; ".join(f"{name} {X.shape[0]} × {X.shape[1]}, K = {y.shape[1] if y.ndim == 2 else np.unique(y).size}"
                      + (f" (Mulan {'train + test' if args.part == 'all' else 'train'})" if y.ndim == 2 else "")
                      for name, (X, y, _) in data.items())
    if args.max_rows is not None:
        sizes += (f"; sets above {args.max_rows} rows subsampled to it (uniformly for label sets, stratified for "
                  "classes, seed 0, the same rows for every outer seed)")
    text = nested_report(rows, summary, targets, agreement, machine, command, time.perf_counter() - start,
                         args.rule_cv[0], sizes)
    (out / "bench_rules_nested.md").write_text(text + "\n")
    print(text)


def main_fixed(args):
    for name in (n for n in args.data or ["emotions"] if n in MULTICLASS):
        X, y = MULTICLASS[name](return_X_y=True)
        models = {"OvN, paper (negatives='none')": OvNClassifier(**PAPER_MODEL, variant="SwHb"),
                  "OvN, negatives='rest'": OvNClassifier(**{**PAPER_MODEL, "negatives": "rest"}, variant="SwHb"),
                  "one-vs-rest LinearSVC (C = 1)": OneVsRestClassifier(LinearSVC(C=1.0, max_iter=20_000))}
        print(f"{name}: {X.shape[0]} rows, K = {len(set(y))}, 5-fold CV accuracy")
        for label, model in models.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                scores = cross_val_score(make_pipeline(StandardScaler(), model), X, y,
                                         cv=StratifiedKFold(5, shuffle=True, random_state=0))
            print(f"  {label:40s} accuracy {scores.mean():.3f} ± {scores.std():.3f}")
    for name in (n for n in args.data or ["emotions"] if n in LOADERS):
        X, Y = LOADERS[name]("train", return_X_y=True)
        X_test, Y_test = LOADERS[name]("test", return_X_y=True)
        print(f"{name}: {X.shape[0]} train / {X_test.shape[0]} test rows, K = {Y.shape[1]}")
        for label, params in settings(args.rule_cv).items():
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # degenerate labels are reported below
                model = OvNClassifier(**{**PAPER_MODEL, "variant": "SwHb", **params})
                model = make_pipeline(StandardScaler(), model).fit(X, Y)
            seconds = time.perf_counter() - start
            est = model[-1]
            P = model.predict(X_test)
            rule = f", rule: {rule_name(model)}" if hasattr(est, "rule_") else ""
            print(f"  {label:40s} Jaccard {jaccard_score(Y_test, P, average='samples', zero_division=1.0):.3f}  "
                  f"labels/row {P.sum(axis=1).mean():.2f} (true {Y_test.sum(axis=1).mean():.2f})  "
                  f"degenerate {est.degenerate_labels_.tolist()}{rule}  fit {seconds:.1f} s")
        br = make_pipeline(StandardScaler(), OneVsRestClassifier(LinearSVC(C=1.0, max_iter=20_000))).fit(X, Y)
        P = br.predict(X_test)
        print(f"  {'binary relevance, LinearSVC (C = 1)':40s} Jaccard "
              f"{jaccard_score(Y_test, P, average='samples', zero_division=1.0):.3f}  labels/row {P.sum(1).mean():.2f}")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[2:]))
    parser.add_argument("--data", nargs="+", choices=sorted(LOADERS) + sorted(MULTICLASS),
                        help="data sets (default: emotions; nested: all five)")
    parser.add_argument("--rule-cv", nargs="+", type=int, default=[5],
                        help="internal folds of the learned rule (nested: one number)")
    parser.add_argument("--nested", action="store_true", help="the nested-CV comparison with tuned hyperparameters")
    parser.add_argument("--kernels", nargs="+", choices=["linear", "rbf"], default=["linear", "rbf"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2], help="outer-split seeds (nested)")
    parser.add_argument("--n-jobs", type=int, default=1, help="cells run in parallel (nested)")
    parser.add_argument("--part", choices=["all", "train"], default="all",
                        help="nested: the multilabel sets' Mulan part (train + test, or train alone)")
    parser.add_argument("--max-rows", type=int, help="nested: subsample larger sets to this many rows (seed 0)")
    parser.add_argument("--no-solver-check", dest="solver_check", action="store_false",
                        help="nested: skip target (c), the fits with MM, Clarabel and ECOS")
    parser.add_argument("--out", default="bench_rules_out", help="nested: directory for the CSV and Markdown files")
    args = parser.parse_args(argv)
    if args.nested and len(args.rule_cv) != 1:
        parser.error(f"--rule-cv takes one number with --nested, got {args.rule_cv}")
    if args.n_jobs < 1:
        parser.error(f"--n-jobs must be at least 1, got {args.n_jobs}")
    if args.max_rows is not None and args.max_rows < 30:
        parser.error(f"--max-rows must be at least 30 (3 × 3 folds need rows), got {args.max_rows}")
    if args.nested:
        main_nested(args, argv)
    else:
        main_fixed(args)


if __name__ == "__main__":
    main()
