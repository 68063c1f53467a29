"""The compiled loops' decorator: numba's on-disk cache where it can write one, compiled per process elsewhere."""
import numba
import numpy as np

import ovn_cvx._numba as compiled_loops
from ovn_cvx._numba import compiled


def test_compiled_loops_are_cached_on_disk():
    @compiled(error_model="numpy")
    def twice(x):
        return 2.0 * x

    assert twice(np.float64(1.5)) == 3.0
    assert twice._cache.__class__.__name__ == "FunctionCache"  # numba's on-disk cache, not its no-op


def test_compiled_loops_compile_without_a_cache_where_numba_cannot_write_one(monkeypatch):
    """Numba raises when it decorates with cache=True and finds no writable cache directory (a read-only install
    without a writable home): the loop is then compiled without the cache instead of failing to import."""
    calls = []

    def njit(**options):
        calls.append(options)
        if options.get("cache"):
            raise RuntimeError("cannot cache function 'twice': no locator available for file '<read-only>'")
        return numba.njit(**options)

    monkeypatch.setattr(compiled_loops, "njit", njit)

    @compiled(fastmath=True)
    def twice(x):
        return 2.0 * x

    assert twice(np.float64(1.5)) == 3.0
    assert calls == [{"cache": True, "fastmath": True}, {"fastmath": True}]
    assert twice._cache.__class__.__name__ == "NullCache"
