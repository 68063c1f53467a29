"""numba's ``njit`` for the package's compiled loops, with numba's on-disk cache wherever it can write one."""
from __future__ import annotations

from numba import njit


def compiled(**options):
    """``njit(cache=True, **options)`` as a decorator; where numba finds no writable cache directory (a read-only
    install and no writable home or ``NUMBA_CACHE_DIR``: numba raises when it decorates), ``njit(**options)``: the
    loops are compiled in each process instead of failing to import."""
    def decorate(function):
        try:
            return njit(cache=True, **options)(function)
        except RuntimeError:  # numba's "cannot cache function ...: no locator available"
            return njit(**options)(function)

    return decorate
