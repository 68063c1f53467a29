"""The command line as a user meets it: --version and --help without the heavy imports, what --help says, the
verdict first and one line for the optional solvers that are not installed, --out checked before the run."""
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import ovn_cvx
from ovn_cvx.cli import main, output_directory
from ovn_cvx.solvers import cvxpy_solver
from ovn_cvx.verify import runner

HEAVY = ("cvxpy", "sklearn", "scipy", "pandas")


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["verify", "--help"], ["compare", "--help"]])
def test_version_and_help_import_nothing_heavy(argv):
    """In a fresh interpreter, as the console script runs: the answer, and none of the heavy modules imported."""
    script = (f"import sys\nfrom ovn_cvx.cli import main\ntry:\n    main({argv!r})\nexcept SystemExit as e:\n"
              f"    code = e.code\nprint('IMPORTED', sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
              f"print('CODE', code)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          cwd=os.path.dirname(os.path.dirname(ovn_cvx.__file__)))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-2] == "IMPORTED []" and lines[-1] == "CODE 0"
    if argv == ["--version"]:
        assert lines[0] == f"ovn-cvx {ovn_cvx.__version__}"


def test_python_m_version():
    done = subprocess.run([sys.executable, "-m", "ovn_cvx.cli", "--version"], capture_output=True, text=True,
                          timeout=120, cwd=os.path.dirname(os.path.dirname(ovn_cvx.__file__)))
    assert done.returncode == 0 and done.stdout.strip() == f"ovn-cvx {ovn_cvx.__version__}"


def test_lazy_package_names():
    """The package's names are the functions, also after their same-named submodules were imported."""
    import ovn_cvx.objective  # noqa: F401 — binds the submodule's name on the package
    import ovn_cvx.solve  # noqa: F401
    from ovn_cvx import Problem, objective, solve

    assert callable(solve) and solve.__module__ == "ovn_cvx.solve" and ovn_cvx.solve is solve
    assert ovn_cvx.objective is objective and objective.__module__ == "ovn_cvx.objective"
    assert Problem.__module__ == "ovn_cvx.problem" and ovn_cvx.datasets.make_data is not None
    assert set(ovn_cvx.__all__) <= set(dir(ovn_cvx))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        ovn_cvx.nope  # noqa: B018


@pytest.mark.parametrize("command, runtime", [("verify", "about 20 s"), ("compare", "about 15 s")])
def test_help_says_what_how_long_and_exit_statuses(command, runtime, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert f"{runtime} on a 2-core machine" in text and "proven reference" in text
    for status in ("0 every success claim holds", "1 a false success claim", "2 usage error",
                   "3 no false claim, but a --method run gave no answer"):
        assert status in text
    assert "--time-limit SECONDS" in text and "--details" in text


def test_top_level_help_lists_every_command(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for command in ("verify", "compare", "reproduce"):
        assert f"    {command}" in out


def _writable(directory) -> bool:
    try:
        with tempfile.TemporaryFile(dir=directory):
            return True
    except OSError:
        return False


def _unwritable(tmp_path) -> Path:
    """A directory this process cannot write into (root writes into a read-only one: then /sys, if it is not)."""
    read_only = tmp_path / "read-only"
    read_only.mkdir()
    read_only.chmod(0o500)
    for candidate in (read_only, Path("/sys")):
        if candidate.is_dir() and not _writable(candidate):
            return candidate
    pytest.skip("no unwritable directory on this machine")


@pytest.mark.parametrize("below", ["", "new/deeper"])
def test_unwritable_out_is_a_usage_error_before_the_run(below, tmp_path, monkeypatch, capsys):
    def no_run(*args, **kwargs):
        raise AssertionError("the suite ran")

    monkeypatch.setattr(runner, "run_suite", no_run)
    out = str(_unwritable(tmp_path) / below)
    with pytest.raises(SystemExit) as exit_info:
        main(["verify", "--out", out])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "argument --out: " in err and ("is not writable" in err or "cannot be created" in err)
    assert "Traceback" not in err


def test_writable_out_is_accepted_and_not_created(tmp_path):
    assert output_directory(str(tmp_path / "a" / "b")) == tmp_path / "a" / "b"
    assert not (tmp_path / "a").exists() and list(tmp_path.iterdir()) == []


def test_verdict_first_and_one_line_for_missing_optional_solvers(tiny_suite, monkeypatch, capsys):
    """The optional solvers absent (the 'solvers' extra not installed): one line with the install hint, no
    warning per solver, and the whole screen short."""
    monkeypatch.setattr(cvxpy_solver, "installed_solvers", lambda: ("CLARABEL", "ECOS", "OSQP", "SCS"))
    monkeypatch.setitem(sys.modules, "qpsolvers", None)
    status = main(["verify", "--formulations", "linear-SwSb", "--no-progress"])
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert status == 0
    assert lines[0].startswith("PASSED: every success claim on 1 problem holds against a proven reference (11 "
                               "methods, ")
    assert lines[1] == ('not installed, skipped: PIQP, PROXQP, DAQP, CVXOPT, QOCO, qpsolvers:piqp, qpsolvers:daqp, '
                        'qpsolvers:proxqp (pip install "ovn-cvx[solvers]" adds them)')
    assert sum("PIQP" in line for line in lines) == 1 and "PIQP" not in captured.err
    assert len(lines) <= 20 and any(line.startswith("checks: ") and " passed " in line for line in lines)
