"""Progress of a long loop on stderr: a tqdm bar when the optional tqdm is installed, else one line per step."""
from __future__ import annotations

import sys
import time


def progress_steps(iterable, total: int, *, desc: str, enabled: bool = True, unit: str = "problem"):
    """``iterable``, reporting each step on stderr (nothing when not ``enabled``)."""
    if not enabled:
        return iterable
    try:
        from tqdm.auto import tqdm
    except ImportError:  # the optional extra "progress" is not installed: a plain line per step
        return _lines(iterable, total, desc, unit)
    return tqdm(iterable, total=total, desc=desc, unit=unit)


def _lines(iterable, total, desc, unit):
    start = time.perf_counter()
    for done, item in enumerate(iterable):
        print(f"{desc}: {unit} {done + 1}/{total} ({time.perf_counter() - start:.0f} s)", file=sys.stderr, flush=True)
        yield item
