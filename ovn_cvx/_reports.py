"""What every report of the package shares: the environment stamp, the Markdown table writer and the test for
the optional matplotlib (the extra ``plots``)."""
from __future__ import annotations

import importlib.metadata
import os
import platform
import sys
from datetime import datetime, timezone

#: the distributions whose versions are stamped on every report
PACKAGES = ("ovn-cvx", "numpy", "scipy", "scikit-learn", "pandas", "cvxpy", "clarabel", "ecos", "osqp", "scs",
            "joblib", "threadpoolctl", "matplotlib")


def _cpu_name() -> str:
    """The CPU model (Linux: /proc/cpuinfo), else what ``platform`` knows."""
    try:
        with open("/proc/cpuinfo") as f:
            name = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        name = ""
    return name or platform.processor() or "unknown"


def environment() -> dict:
    """Date (UTC), machine, CPU, Python and package versions ("not installed" for a missing one)."""
    versions = {}
    for package in PACKAGES:
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = "not installed"
    return {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "platform": platform.platform(),
            "machine": platform.machine(), "cpu": _cpu_name(), "cpu_count": os.cpu_count(),
            "python": sys.version.split()[0], "versions": versions}


def markdown_table(header, rows) -> str:
    """A Markdown table (no final newline): one line per row, every cell written with ``str``."""
    lines = ["| " + " | ".join(map(str, header)) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(map(str, row)) + " |" for row in rows]
    return "\n".join(lines)


MISSING_MATPLOTLIB = ("matplotlib is not installed: figures skipped (install the extra: "
                      "pip install 'ovn-cvx[plots]'); the tables are complete without it")


def matplotlib_available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True
