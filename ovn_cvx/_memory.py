"""What the machine has left: checked before an allocation that would not fit, so that it fails with a message
that says what to do instead of a NumPy MemoryError (or the kernel's out-of-memory killer) deep inside a solve."""
from __future__ import annotations

from pathlib import Path

from .exceptions import InsufficientMemory

#: cgroup limits (v2, then v1) that cap a container below the host's memory: (limit, usage)
_CGROUPS = (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
            ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"))


def _read_int(path: str) -> int | None:
    try:
        text = Path(path).read_text().split()
    except OSError:
        return None
    return int(text[0]) if text and text[0].isdigit() else None  # "max": no limit


def available_memory() -> int | None:
    """Bytes this process can still allocate: the kernel's MemAvailable, capped by the cgroup's limit less its
    usage; None where neither is known (not Linux): then nothing is checked."""
    available = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                available = int(line.split()[1]) * 1024
    except OSError:
        pass
    for limit_path, usage_path in _CGROUPS:
        limit, usage = _read_int(limit_path), _read_int(usage_path)
        if limit is not None and usage is not None:
            room = max(limit - usage, 0)
            available = room if available is None else min(available, room)
            break
    return available


#: smaller allocations are not checked: reading the machine's state costs about 0.2 ms, a few per cent of a small
#: kernel fit, and any machine that runs the package has this much
CHECK_FROM = 2**28


def fits(needed: int) -> bool:
    """Whether ``needed`` bytes fit in what is available (unchecked below CHECK_FROM, or where nothing is known)."""
    if needed < CHECK_FROM:
        return True
    available = available_memory()
    return available is None or needed <= available


def check_fits(needed: int, what: str, remedy: str) -> None:
    """Raise :class:`~ovn_cvx.exceptions.InsufficientMemory` if ``needed`` bytes do not :func:`fit <fits>`."""
    if not fits(needed):
        raise InsufficientMemory(what, needed, available_memory(), remedy)
