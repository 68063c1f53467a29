"""The ``ovn-cvx`` command line. Each sub-command lives in its own module's ``register(subparsers)``.

Every argument is checked while the command line is parsed (the argparse types below), so that a bad value is
a one-line usage error (exit status 2), never a traceback from deep inside a run. A command's module is imported
only when that command is named: ``ovn-cvx --version`` and ``ovn-cvx --help`` import neither scikit-learn nor CVXPY.
"""
from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
from pathlib import Path

#: the sub-commands: name → (the module whose ``register(subparsers)`` adds it, its one-line summary)
COMMANDS = {
    "verify": ("ovn_cvx.verify.commands",
               "check every formulation and solver against a proven reference (KKT, identities)"),
    "compare": ("ovn_cvx.verify.commands",
                "compare solvers, your own included, on the verification suite; a CI gate on false success claims"),
    "reproduce": ("ovn_cvx.experiments.commands", "recompute the paper's experiment tables and figures"),
    "compile": ("ovn_cvx.precompile", "compile the fits' numba loops ahead of the first fit that needs them"),
}
def summary(command: str) -> str:
    """The one-line summary of ``command`` (``ovn-cvx --help``)."""
    return COMMANDS[command][1]


def positive_int(text: str) -> int:
    """Argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def positive_seconds(text: str) -> float:
    """Argparse type: a finite number of seconds > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds > 0, got {text!r}")
    return value


def scheduler_address(text: str) -> str:
    """Argparse type: a ``dask.distributed`` scheduler address; a usage error naming the extra ``dask`` when
    dask.distributed is not installed. Whether it answers is found when the run connects (a usage error then
    too, after a short connect timeout: :class:`ovn_cvx._parallel.SchedulerUnreachable`)."""
    from ._parallel import DaskNotInstalled, check_scheduler, require_dask
    try:
        check_scheduler(text)
        require_dask()
    except (ValueError, DaskNotInstalled) as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text.strip()


def add_parallel_arguments(parser, *, what: str = "problems", timing: bool = False) -> None:
    """``--n-jobs`` and ``--scheduler`` (see :func:`ovn_cvx._parallel.parallel_map`)."""
    note = (" Parallel workers share the machine and distort the timings: keep 1 for timing runs." if timing
            else " Timing columns are distorted by workers sharing the machine; every other number is the "
                 "serial run's.")
    parser.add_argument("--n-jobs", type=positive_int, default=1, metavar="N",
                        help=f"run the {what} on N local joblib workers, one BLAS thread each (default: %(default)s, "
                             f"serial).{note}")
    parser.add_argument("--scheduler", type=scheduler_address, metavar="ADDRESS",
                        help=f"run the {what} on the Dask cluster at this dask.distributed scheduler address (e.g. "
                             "tcp://127.0.0.1:8786; all its workers, --n-jobs is ignored); needs the extra 'dask': "
                             'pip install "ovn-cvx[dask]"')


def output_directory(text: str) -> Path:
    """Argparse type: a directory that exists or can be created, and that this process can write into (checked
    by creating and removing a file in it or in its nearest existing ancestor), so that a run does not end
    without its reports."""
    path = Path(text)
    if not text.strip():
        raise argparse.ArgumentTypeError("must be a directory name, got an empty string")
    existing = next(p for p in (path.absolute(), *path.absolute().parents) if p.exists())
    if not existing.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is not a directory: {existing} is a file")
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as err:
        what = "is not writable" if existing == path.absolute() else f"cannot be created in {existing}"
        raise argparse.ArgumentTypeError(f"{text!r} {what} ({err.strerror or err})") from None
    return path


def solver_name(text: str) -> str:
    """Argparse type: "mm" or an installed CVXPY solver (upper-cased)."""
    if text.lower() == "mm":
        return "mm"
    from .solvers.cvxpy_solver import check_solver
    try:
        return check_solver(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"{err} (or 'mm')") from None


def build_parser(load=None) -> argparse.ArgumentParser:
    """The parser of ``ovn-cvx``. ``load``: the names of the commands whose modules are imported (default: all);
    the others are listed by their summaries only."""
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="ovn-cvx", description="One-versus-none SVM: verify the formulations and solvers, compare solvers "
                                    "(your own included), reproduce the paper.",
        epilog="Run 'ovn-cvx COMMAND --help' for what a command does, how long it takes and its exit statuses.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    load = COMMANDS if load is None else load
    for module in dict.fromkeys(COMMANDS[name][0] for name in load):
        importlib.import_module(module).register(sub)
    for name in COMMANDS:
        if name not in sub.choices:  # not loaded: listed with its summary
            sub.add_parser(name, help=summary(name))
    for command_parser in sub.choices.values():
        command_parser.set_defaults(usage_error=command_parser.error)
    return parser


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    # the top-level options take no value: the first other word names the command
    command = next((word for word in argv if not word.startswith("-")), None)
    args = build_parser([command] if command in COMMANDS else []).parse_args(argv)
    from ._parallel import SchedulerUnreachable

    try:
        return int(args.run(args) or 0)
    except SchedulerUnreachable as err:  # found when the run connects, before any work: a usage error too
        args.usage_error(f"argument --scheduler: {err}")  # exits with status 2


if __name__ == "__main__":
    sys.exit(main())
