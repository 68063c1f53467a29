"""Mutation study of the code that decides "optimal", "certified" or "correct": does the test suite notice small,
plausible bugs there?

Run by hand (a slow job, not part of the test run; about 15 minutes on two cores):

    python benchmarks/mutation.py                 # every mutant, the decision tests
    python benchmarks/mutation.py --list          # the mutation sites
    python benchmarks/mutation.py --only M1 K3    # some of them

Each mutant is one textual change at a declared site (``MUTANTS``: flip a comparison, drop a factor or a cap, take
the max instead of the min, ...) in a copy of the package; the tests of ``TESTS`` then run on the copy (stopping at
the first failure). A mutant is *killed* when they fail (or exceed ``--timeout``), *survives* when they pass. A site
whose text is no longer in the code (the code moved) is reported as *missing*, not scored. The score is killed over
killed + survived. Prints one Markdown row per mutant and the score.

Measured on this code (two shared cores, about 25 minutes): 40 of 40 mutants killed (the first list, before the
decision tests were extended, 34 of 38: the polish accepted whatever its bound, the matrix-free form stopping on the
absolute bound, the certificate without its duality gap, and an equivalent mutant survived).

Equivalent mutants (no observable change, so no test can kill them) are left out of the list: the interior point
keeping a worse primal point (its bound stays honest, and the iterates decrease anyway) and a looser tolerance for
the early crossover (the polish's own acceptance takes the minimum with gap_tol again: mutant M6 is that guard).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the tests run against every mutant
TESTS = ("tests/test_decisions.py", "tests/test_decisions_rules.py", "tests/test_problem.py",
         "tests/verify/test_kkt.py", "tests/test_reproducers.py")


@dataclass(frozen=True)
class Mutant:
    key: str
    path: str
    original: str
    mutated: str
    what: str


RESULT = "ovn_cvx/result.py"
VERDICT = "ovn_cvx/solvers/verdict.py"
FORMS = "ovn_cvx/solvers/mm/forms.py"
FINISH = "ovn_cvx/solvers/mm/finish.py"
OPTIONS = "ovn_cvx/solvers/mm/options.py"
DUALITY = "ovn_cvx/duality.py"
MATRIX_FREE = "ovn_cvx/solvers/mm/matrix_free.py"
INTERIOR = "ovn_cvx/solvers/mm/interior.py"
KKT = "ovn_cvx/kkt.py"
CHECKS = "ovn_cvx/verify/checks.py"
COMPARISON = "ovn_cvx/verify/comparison.py"
LABELS = "ovn_cvx/labels.py"
PROBLEM = "ovn_cvx/problem.py"
RULES = "ovn_cvx/rules.py"
MUTANTS = (
    # the proven bound (docs/theory.md §6)
    Mutant("D1", DUALITY, "return max(self.primal - self.dual, 0.0)", "return max(self.dual - self.primal, 0.0)",
           "bound: D − F instead of F − D"),
    Mutant("D2", DUALITY, "return self.absolute / max(1.0, abs(self.primal))",
           "return self.absolute / abs(self.primal)", "relative bound without max(1, |F|)"),
    Mutant("D3", DUALITY, "return self.absolute / max(1.0, abs(self.primal))",
           "return self.absolute / max(1.0, abs(self.dual))", "relative bound over |D| instead of |F|"),
    Mutant("D4", DUALITY, "np.clip(mass.min(), lowest.max(), highest.min())",
           "np.clip(mass.max(), lowest.max(), highest.min())", "common mass: the largest instead of the smallest"),
    Mutant("D5", DUALITY, "return float(np.clip(mass.min(), lowest.max(), highest.min()))",
           "return float(mass.min())", "common mass not capped to every class's reachable range"),
    Mutant("D6", DUALITY, "if not problem.hard_b and problem.bias_penalty == 0:", "if False:",
           "free b (γ = 0) without m = 0"),
    Mutant("D7", DUALITY, "take = min(1.0, abs(delta) / release) if release > 0 else 0.0",
           "take = abs(delta) / release if release > 0 else 0.0", "mass shift: release without its cap"),
    Mutant("D8", DUALITY, "against = sign < 0 if delta > 0 else sign > 0",
           "against = sign > 0 if delta > 0 else sign < 0", "mass shift: releases the wrong pairs"),
    Mutant("D9", DUALITY, "nan=0.0), 0.0, c)", "nan=0.0), 0.0, None)",
           "candidate not clipped to μ ≤ c"),
    Mutant("D10", DUALITY, "np.flatnonzero(mass != target)", "np.flatnonzero(mass > target)",
           "only the classes above the target moved"),
    Mutant("D11", DUALITY, "    return value - error\n", "    return value + error\n",
           "dual value: round-off allowance added instead of subtracted"),
    Mutant("D12", DUALITY, "value -= m * m / (4.0 * problem.bias_penalty)",
           "value += m * m / (4.0 * problem.bias_penalty)", "dual value: soft-b term with the wrong sign"),
    # the fast solver's verdict and choices
    Mutant("M1", RESULT, "bool(relative_gap_bound <= gap_tol)", "bool(relative_gap_bound <= 10 * gap_tol)",
           "verdict accepts 10 × gap_tol"),
    Mutant("M2", VERDICT, "if within_gap_tol(bound.relative, gap_tol):", "if within_gap_tol(bound.absolute, gap_tol):",
           "verdict on the absolute bound"),
    Mutant("M3", RESULT, "bool(relative_gap_bound <= gap_tol)", "bool(relative_gap_bound < gap_tol)",
           "verdict: < instead of ≤"),
    Mutant("M4", FORMS, "return retry if retry.relative_gap_bound <= attempt.relative_gap_bound else attempt",
           "return retry if retry.relative_gap_bound >= attempt.relative_gap_bound else attempt",
           "form retry keeps the larger bound"),
    Mutant("M5", RESULT, "return within_gap_tol(self.relative_gap_bound, self.gap_tol)", "return True",
           "every result claims certified"),
    Mutant("M6", FINISH, "bound.relative <= min(options.gap_tol, accept_gap_tol or np.inf)",
           "bound.relative <= max(options.gap_tol, accept_gap_tol or np.inf)", "polish accepted whatever its bound"),
    Mutant("M7", MATRIX_FREE, "if self.best is None or bound.absolute < self.best[1].absolute:",
           "if self.best is None or bound.absolute > self.best[1].absolute:", "matrix-free keeps the larger bound"),
    Mutant("M8", MATRIX_FREE, "within_gap_tol(self.best[1].relative, self.gap_tol)",
           "within_gap_tol(self.best[1].absolute, self.gap_tol)", "matrix-free stops on the absolute bound"),
    Mutant("M9", INTERIOR, "if candidate.dual > self.dual:", "if candidate.dual < self.dual:",
           "interior point keeps the worst dual value"),
    Mutant("M10", OPTIONS, 'objective=bound.primal, status=status, method="mm"',
           'objective=bound.dual, status=status, method="mm"',
           "the dual value reported as the objective"),
    # the KKT certificate
    Mutant("K1", KKT, "return bool(self.max_residual() <= tol and all(v <= constraint_tol for v in constraints))",
           "return bool(self.max_residual() <= tol)", "certificate ignores the hard constraints"),
    Mutant("K2", KKT, "return bool(self.max_residual() <= tol and",
           "return bool(self.max_residual() <= 10 * tol and", "certificate accepts 10 × tol"),
    Mutant("K3", KKT, "return np.maximum(np.maximum(-mu, mu - c), 0.0) / c", "return np.maximum(-mu, 0.0) / c",
           "box measure never flags μ > c"),
    Mutant("K4", KKT, "return float(np.max([self.residuals[k] for k in self.KKT_MEASURES]))",
           "return max(self.residuals[k] for k in self.KKT_MEASURES)", "largest measure skips a later NaN"),
    Mutant("K5", KKT, "return min(tried, key=KKTCertificate.max_residual)",
           "return max(tried, key=KKTCertificate.max_residual)", "certificate of the worst margin band"),
    Mutant("K6", KKT, '"duality_gap": bound.relative,', '"duality_gap": 0.0,',
           "certificate without its duality gap"),
    # the verification checks and the reference
    Mutant("C1", CHECKS, "return all(value <= tol for value, tol in self.deviations.values())",
           "return all(not value > tol for value, tol in self.deviations.values())",
           "CheckResult.passed lets NaN through"),
    Mutant("C2", CHECKS, "if not value <= tol]", "if value > tol]", "failures omit a NaN"),
    Mutant("C3", CHECKS, '"passed": v <= t}', '"passed": not v > t}', "table marks NaN passed"),
    Mutant("R1", COMPARISON, "return min(candidates, key=lambda r: r.objective) if candidates else None",
           "return max(candidates, key=lambda r: r.objective) if candidates else None",
           "fallback reference: the highest objective"),
    Mutant("R2", "ovn_cvx/verify/comparison.py",
           "return result is not None and result.success and result.certified and certificate(result).passed()",
           "return result is not None and result.success", "reference without its proof"),
    # the label rules
    Mutant("L1", LABELS, "return np.where(labels.any(axis=-1, keepdims=True), labels, top_label)",
           "return labels | top_label", "argmax always added"),
    Mutant("L2", LABELS, "return np.asarray(F) >= t - TIE_TOL * np.maximum(1.0, np.abs(t))",
           "return np.asarray(F) >= t", "threshold without its tie tolerance"),
    Mutant("L3", LABELS, "return np.asarray(F) >= t - TIE_TOL * np.maximum(1.0, np.abs(t))",
           "return np.asarray(F) >= t - TIE_TOL", "tie tolerance absolute instead of relative"),
    # the learned decision rule
    Mutant("S1", RULES, "error = np.std(per_fold, ddof=1) / np.sqrt(len(groups))", "error = np.std(per_fold, ddof=1)",
           "one-standard-error rule without its √n"),
    Mutant("S2", RULES, "consider(family, [self.score_of(truth, rule.predict(F), sample_weight)], lambda _: rule)",
           "consider(family, [self.score_of(truth, rule.predict(F), None)], lambda _: rule)",
           "learned rule ignores sample_weight (fixed rules)"),
    # what the problem model accepts
    Mutant("P1", PROBLEM, "if not (lo <= low and high <= hi):", "if not (lo <= low or high <= hi):",
           "cost range: one end enough"),
    Mutant("P2", PROBLEM, "if not lo < alpha < hi:", "if not lo <= alpha <= hi:",
           "alpha interval closed"),
)


def cell(text: str) -> str:
    """``text`` inside a Markdown table cell."""
    return text.replace("|", "&#124;")


def copy_tree(destination: Path) -> None:
    shutil.copytree(ROOT, destination, ignore=shutil.ignore_patterns(".git", "__pycache__", "*.pyc", ".pytest_cache",
                                                                      ".hypothesis", "_build"), dirs_exist_ok=True)


def run_tests(tree: Path, tests, timeout: float) -> tuple[str, float]:
    """("killed" | "survived" | "timeout", seconds) of the tests on the tree."""
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONDONTWRITEBYTECODE="1")
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]
    start = time.perf_counter()
    try:
        done = subprocess.run(command, cwd=tree, env=env, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", time.perf_counter() - start
    return ("survived" if done.returncode == 0 else "killed"), time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="mutant keys (default: all)")
    parser.add_argument("--list", action="store_true", help="print the mutation sites and exit")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per mutant (then counted killed)")
    parser.add_argument("--tests", nargs="*", default=list(TESTS))
    args = parser.parse_args(argv)
    mutants = [m for m in MUTANTS if not args.only or m.key in args.only]
    if args.list:
        for m in mutants:
            print(f"{m.key:4} {m.path}: {m.what}")
        return 0
    with tempfile.TemporaryDirectory(prefix="ovn-mutation-") as tmp:
        tree = Path(tmp)
        copy_tree(tree)
        status, seconds = run_tests(tree, args.tests, args.timeout)
        if status != "survived":
            print(f"the tests fail on the unmutated code ({status}): no score", file=sys.stderr)
            return 2
        print(f"unmutated: tests pass in {seconds:.0f} s\n")
        print("| mutant | site | change | outcome | s |")
        print("|---|---|---|---|---|")
        outcomes = {}
        for m in mutants:
            target = tree / m.path
            source = (ROOT / m.path).read_text()
            if source.count(m.original) != 1:
                outcomes[m.key] = "missing"
                found = source.count(m.original)
                print(f"| {m.key} | {m.path} | {cell(m.what)} | missing (site found {found} times) | |")
                continue
            target.write_text(source.replace(m.original, m.mutated))
            try:
                outcome, seconds = run_tests(tree, args.tests, args.timeout)
            finally:
                target.write_text(source)
            outcomes[m.key] = outcome
            print(f"| {m.key} | {m.path} | {cell(m.what)} | {outcome} | {seconds:.0f} |", flush=True)
    killed = sum(o in ("killed", "timeout") for o in outcomes.values())
    survived = [k for k, o in outcomes.items() if o == "survived"]
    scored = killed + len(survived)
    missing = [k for k, o in outcomes.items() if o == "missing"]
    print(f"\nscore: {killed}/{scored} killed ({100.0 * killed / max(scored, 1):.1f} %); survived: "
          f"{', '.join(survived) or 'none'}; missing sites: {', '.join(missing) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
