"""The fast solvers' progress report (``verbose=True``): lines per iteration, round and exact evaluation whose numbers
increase and whose last evaluation is the result's proven bound; the same answer and iterations as without; nothing
by default; a non-bool ``verbose`` refused by name."""
import re

import numpy as np
import pytest

import ovn_cvx
from ovn_cvx import Problem
from ovn_cvx.datasets import make_data
from ovn_cvx.solvers import progress as progress_module
from ovn_cvx.solvers.progress import Progress
from ovn_cvx.solvers.smo import solver as smo_solver

BOUND = re.compile(r"\bbound ([-+0-9.eE]+|nan|inf)")


def problem_of(kernel="linear", variant="SwSb", negatives=False, n_samples=60, seed=3, **kwargs):
    X, Y = make_data("multiclass", n_samples=n_samples, n_features=4, n_classes=3, seed=seed)
    if negatives:
        Y = np.where(Y == 1, 1.0, -1.0)
    return Problem(X, Y, variant, kernel, **{"alpha": 0.0, "beta": 2.0, **kwargs})


def lines_of(out: str, prefix: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith(prefix)]


def numbers(lines: list[str], prefix: str) -> list[int]:
    return [int(re.match(re.escape(prefix) + r" (\d+)", line).group(1)) for line in lines]


def last_bound(lines: list[str]) -> float:
    return float(BOUND.search(lines[-1]).group(1))


def solve_twice(capsys, problem, method, **options):
    """(silent result, verbose result, the verbose run's stdout), the silent run asserted to print nothing."""
    quiet = ovn_cvx.solve(problem, method=method, **options)
    assert capsys.readouterr().out == ""
    loud = ovn_cvx.solve(problem, method=method, verbose=True, **options)
    return quiet, loud, capsys.readouterr().out


def assert_same(quiet, loud):
    """Verbose changes nothing: the same iterations, objective, bound and point, to the last bit."""
    assert (loud.status, loud.iterations, loud.finish) == (quiet.status, quiet.iterations, quiet.finish)
    assert loud.objective == quiet.objective
    assert loud.relative_gap_bound == quiet.relative_gap_bound
    np.testing.assert_array_equal(loud.coef, quiet.coef)
    np.testing.assert_array_equal(loud.b, quiet.b)


def assert_closing_line(out, solver, result):
    done = lines_of(out, f"{solver} done:")
    assert len(done) == 1 and out.splitlines()[-1] == done[0]
    assert f"status {result.status}, iterations {result.iterations}," in done[0]
    assert last_bound(done) == pytest.approx(result.relative_gap_bound, rel=1e-3)


def test_line_format(capsys):
    assert bool(Progress("smo", True)) and not Progress("smo", False) and not Progress("smo", np.False_)
    Progress("smo", True)("round", 3, steps=12, tol=1e-3, estimate=2.5e-07, objective=1234.56789012345, left=None,
                          certified=True, kind="pair")
    Progress("smo", True)("done")
    Progress("smo", False)("round", 4, steps=1)
    assert capsys.readouterr().out == ("smo round 3: steps 12, tol 0.001, estimate 2.5e-07, objective 1234.56789, "
                                       "certified True, kind pair\nsmo done\n")


@pytest.mark.parametrize("flag", [1, "yes", None, 0.0])
@pytest.mark.parametrize("method,kernel", [("mm", "linear"), ("smo", "rbf"), ("smo", "linear")])
def test_verbose_must_be_a_bool(flag, method, kernel):
    with pytest.raises(TypeError, match="verbose must be a bool"):
        ovn_cvx.solve(problem_of(kernel), method=method, verbose=flag)


@pytest.mark.parametrize("variant,gap_tol", [("SwSb", 1e-6), ("SwHb", 1e-8)])
def test_mm_interior_point(capsys, variant, gap_tol):
    quiet, loud, out = solve_twice(capsys, problem_of(variant=variant), "mm", gap_tol=gap_tol)
    assert_same(quiet, loud)
    assert quiet.finish.startswith("interior")
    iterations = lines_of(out, "mm interior iteration ")
    assert len(iterations) >= 2 and len(iterations) == quiet.info["interior_iterations"]
    assert numbers(iterations, "mm interior iteration") == list(range(1, len(iterations) + 1))
    assert all(re.search(r"moving blocks \d+, complementarity \S+, step \S+, objective \S+", line)
               for line in iterations)
    evaluations = lines_of(out, "mm evaluation ")
    assert evaluations and numbers(evaluations, "mm evaluation") == sorted(numbers(evaluations, "mm evaluation"))
    assert last_bound(evaluations) == pytest.approx(quiet.relative_gap_bound, rel=1e-3)
    assert lines_of(out, "mm form:") == [f"mm form: form {quiet.form}, finish auto"]
    if quiet.finish == "interior + polish":  # the crossover that certified: reported with its bound
        assert "certified True" in lines_of(out, "mm crossover ")[-1]
        assert "source crossover" in evaluations[-1]
    assert_closing_line(out, "mm", quiet)


@pytest.mark.parametrize("options", [{"finish": "polish"}, {"form": "matrix-free"}])
def test_mm_phase_and_matrix_free(capsys, options):
    quiet, loud, out = solve_twice(capsys, problem_of(variant="SwHb"), "mm", **options)
    assert_same(quiet, loud)
    iterations = lines_of(out, "mm iteration ")
    assert len(iterations) >= 2
    assert numbers(iterations, "mm iteration") == sorted(set(numbers(iterations, "mm iteration")))
    assert all(re.search(r"eps \S+, objective \S+, smoothed \S+", line) for line in iterations)
    assert lines_of(out, "mm stage end ")
    if "form" in options:  # every bound offered is reported: the last is the answer's
        assert last_bound(lines_of(out, "mm evaluation ")) == pytest.approx(quiet.relative_gap_bound, rel=1e-3)
    else:
        assert "certified True" in lines_of(out, "mm polish ")[-1]
    assert_closing_line(out, "mm", quiet)


def test_mm_warm_polish(capsys):
    problem = problem_of(variant="SwHb")
    first = ovn_cvx.solve(problem, method="mm")
    quiet, loud, out = solve_twice(capsys, problem.replace(beta=2.1), "mm", warm_start=first)
    assert_same(quiet, loud)
    warm = lines_of(out, "mm warm polish")
    assert len(warm) == 1 and (("certified True" in warm[0]) == (quiet.finish == "warm polish"))


@pytest.mark.parametrize("variant,negatives", [("SwSb", True), ("SwHb", False), ("HwSb", True)])
def test_smo_kernel_rounds(capsys, variant, negatives):
    problem = problem_of("rbf", variant=variant, negatives=negatives, n_samples=50,
                         bias_penalty=0.0 if variant == "SwSb" else 0.5)
    quiet, loud, out = solve_twice(capsys, problem, "smo", gap_tol=1e-8)
    assert_same(quiet, loud)
    np.testing.assert_array_equal(loud.dual, quiet.dual)
    rounds, evaluations = lines_of(out, "smo round "), lines_of(out, "smo evaluation ")
    assert len(rounds) + len(evaluations) >= 2 and rounds and evaluations
    assert numbers(rounds, "smo round") == sorted(set(numbers(rounds, "smo round")))
    assert len(rounds) == len(quiet.info["rounds"])
    assert numbers(evaluations, "smo evaluation") == list(range(1, quiet.info["bound_checks"] + 1))
    assert last_bound(evaluations) == pytest.approx(quiet.relative_gap_bound, rel=1e-3)
    assert f"steps {quiet.iterations}," in evaluations[-1]
    assert_closing_line(out, "smo", quiet)


@pytest.mark.parametrize("variant,negatives,shrinking", [("SwSb", True, True), ("SwHb", False, True),
                                                         ("SwSb", True, False)])
def test_smo_stretches_take_the_same_steps(capsys, monkeypatch, variant, negatives, shrinking):
    """A line every few steps: the compiled loop is left and re-entered between stretches, on the same steps."""
    monkeypatch.setattr(smo_solver, "REPORT_STEPS", 7)
    problem = problem_of("rbf", variant=variant, negatives=negatives, n_samples=50,
                         bias_penalty=0.0 if variant == "SwSb" else 0.5)
    quiet, loud, out = solve_twice(capsys, problem, "smo", gap_tol=1e-8, shrinking=shrinking)
    assert_same(quiet, loud)
    np.testing.assert_array_equal(loud.dual, quiet.dual)
    assert quiet.info["mass_steps"] == loud.info["mass_steps"]
    stretches = lines_of(out, "smo steps ")
    steps = numbers(stretches, "smo steps")
    assert len(stretches) >= 2 and steps == sorted(set(steps)) and steps[-1] <= quiet.iterations
    assert all(np.diff([0, *steps]) >= 7)
    total = len(problem.pairs)
    for line in stretches:
        fields = dict(re.findall(r"(violation|tol|active pairs|shrunk pairs|mass steps) (\S+?)(?:,|$)", line))
        assert int(fields["active pairs"]) + int(fields["shrunk pairs"]) == total
        assert float(fields["violation"]) > float(fields["tol"])  # the loop stopped for the line, not converged
        assert shrinking or int(fields["shrunk pairs"]) == 0


def test_smo_budget_is_the_budget(capsys, monkeypatch):
    """Stretches shorter than max_iter do not end the run; max_iter still does."""
    monkeypatch.setattr(smo_solver, "REPORT_STEPS", 5)
    problem = problem_of("rbf", negatives=True, n_samples=50, bias_penalty=0.0)
    quiet, loud, out = solve_twice(capsys, problem, "smo", max_iter=23)
    assert_same(quiet, loud)
    assert quiet.status == "max_iter" and quiet.iterations == 23
    assert numbers(lines_of(out, "smo steps "), "smo steps") == [5, 10, 15, 20]


@pytest.mark.parametrize("variant,negatives", [("SwSb", False), ("SwHb", True)])
def test_dcd_rounds(capsys, variant, negatives):
    problem = problem_of(variant=variant, negatives=negatives, n_samples=80)
    quiet, loud, out = solve_twice(capsys, problem, "smo", gap_tol=1e-7)
    assert_same(quiet, loud)
    rounds, evaluations = lines_of(out, "dcd round "), lines_of(out, "dcd evaluation ")
    assert len(rounds) == quiet.iterations >= 2
    assert numbers(rounds, "dcd round") == list(range(1, quiet.iterations + 1))
    assert all(re.search(r"sweeps \d+, span \S+, tol \S+, bias step \S+, active pairs \d+, shrunk pairs \d+", line)
               for line in rounds)
    assert numbers(evaluations, "dcd evaluation") == sorted(numbers(evaluations, "dcd evaluation"))
    assert len(set(numbers(evaluations, "dcd evaluation"))) == quiet.info["checks"]
    assert last_bound(evaluations) == pytest.approx(quiet.relative_gap_bound, rel=1e-3)
    assert len(lines_of(out, "dcd polish ")) == quiet.info["polishes"]
    assert_closing_line(out, "dcd", quiet)


def test_silent_default_does_no_work(monkeypatch, capsys):
    """verbose=False formats nothing: the line builder is never reached."""
    def refuse(*args, **kwargs):
        raise AssertionError("a line was formatted while silent")

    monkeypatch.setattr(progress_module, "_format", refuse)
    for kernel, method in (("linear", "mm"), ("rbf", "smo"), ("linear", "smo")):
        assert ovn_cvx.solve(problem_of(kernel), method=method).success
    assert capsys.readouterr().out == ""
