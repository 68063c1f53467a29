"""The ``ovn-cvx`` command line. Each sub-command lives in its own module's ``register(subparsers)``.

Every argument is checked while the command line is parsed (the argparse types below), so that a bad value is
a one-line usage error (exit status 2), never a traceback from deep inside a run.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

COMMAND_MODULES = ("ovn_cvx.verify.commands", "ovn_cvx.experiments.commands")


def positive_int(text: str) -> int:
    """Argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def scheduler_address(text: str) -> str:
    """Argparse type: a ``dask.distributed`` scheduler address; a usage error naming the extra ``dask`` when
    dask.distributed is not installed."""
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
    """Argparse type: a directory that exists or can be created (its nearest existing ancestor is a directory)."""
    path = Path(text)
    if not text.strip():
        raise argparse.ArgumentTypeError("must be a directory name, got an empty string")
    existing = next(p for p in (path.absolute(), *path.absolute().parents) if p.exists())
    if not existing.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is not a directory: {existing} is a file")
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


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(prog="ovn-cvx", description="One-versus-none SVM: solve, verify, compare.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in COMMAND_MODULES:
        importlib.import_module(module).register(sub)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
