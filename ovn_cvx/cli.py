"""The ``ovn-cvx`` command line. Each sub-command lives in its own module's ``register(subparsers)``."""
from __future__ import annotations

import argparse
import importlib
import sys

COMMAND_MODULES = ("ovn_cvx.verify.commands", "ovn_cvx.experiments.commands")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ovn-cvx", description="One-versus-none SVM: solve, verify, compare.")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in COMMAND_MODULES:
        importlib.import_module(module).register(sub)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
