"""The explorer's memory budget: the process's resident memory, read cheaply, the default
budget, and the one error an exploration that ran out of memory before its budget ends with.

The explorer reads the resident memory a few times a second, as it reads the clock, and stops
as a bound stops it once the budget is reached (``Bounds.max_memory``): a breadth first search
holds its whole frontier, and nothing else keeps it from growing until the process dies.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from flinkstate.errors import FlinkstateError, InvalidParameterError
from flinkstate.memory_size import parse_bytes

MIB = 1024**2
GIB = 1024**3
#: the default budget where the machine has memory to spare: enough for every exploration
#: the README, the tests and the recorded configurations make, well under a developer's machine
DEFAULT_CEILING = 4 * GIB
#: where the current resident set is read on Linux (pages: size, resident, ...)
STATM = Path("/proc/self/statm")
#: a cgroup v2 container's memory limit ("max" when it has none)
CGROUP_LIMIT = Path("/sys/fs/cgroup/memory.max")


class ExplorationMemoryError(FlinkstateError):
    """An exploration could not allocate memory before its budget stopped it (the process's
    address space is limited below it, as by ``ulimit -v``, or the machine has no more): the
    message says what was explored and names the budget.

    Examples
    --------
    What ``explore`` raises where a ``MemoryError`` came first; the command line prints it
    as one line:

    >>> raise ExplorationMemoryError("out of memory after 12 states")
    Traceback (most recent call last):
        ...
    flinkstate.sim.explore.budget.ExplorationMemoryError: out of memory after 12 states
    """


def resident_bytes() -> int:
    """The process's resident memory now, in bytes: the resident set of ``/proc/self/statm``
    (one small read), or where there is none the peak resident set ``getrusage`` reports.

    Examples
    --------
    >>> 1 * MIB < resident_bytes() < 1024 * GIB
    True
    """
    try:
        pages = int(STATM.read_bytes().split()[1])
    except (OSError, ValueError, IndexError):
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024  # bytes there, KiB elsewhere
    return pages * os.sysconf("SC_PAGE_SIZE")


def machine_memory() -> int | None:
    """The memory this process may use in all, in bytes: the machine's physical memory, or
    its container's limit where that is less; None where neither can be read.

    Examples
    --------
    >>> memory = machine_memory()
    >>> memory is None or memory > 64 * MIB
    True
    """
    sizes = []
    with contextlib.suppress(OSError, ValueError, AttributeError):
        sizes.append(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    try:
        limit = CGROUP_LIMIT.read_text(encoding="ascii").strip()
    except OSError:
        limit = ""
    if limit.isdigit():
        sizes.append(int(limit))
    sizes = [size for size in sizes if size > 0]
    return min(sizes) if sizes else None


def address_space_limit() -> int | None:
    """The process's soft limit on its address space (``ulimit -v``) in bytes; None: none.

    Examples
    --------
    >>> limit = address_space_limit()
    >>> limit is None or limit > 0
    True
    """
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError, ValueError):
        return None
    return None if soft == resource.RLIM_INFINITY or soft <= 0 else soft


def default_memory_budget() -> int:
    """The budget ``flinkstate explore`` and the explorer widget use unless told otherwise:
    4 GiB, or half the machine's (or container's) memory where that is less, or three
    quarters of what an address-space limit (``ulimit -v``) leaves beside what the process
    maps without holding it resident (its libraries, reserved arenas) where that is less
    still, so that the budget stops an exploration before the machine or the limit does.

    Examples
    --------
    >>> 0 < default_memory_budget() <= DEFAULT_CEILING
    True
    """
    budget = DEFAULT_CEILING
    memory = machine_memory()
    if memory is not None:
        budget = min(budget, memory // 2)
    limit = address_space_limit()
    if limit is not None:
        budget = min(budget, max(limit - _mapped_not_resident(), 0) * 3 // 4)
    return max(budget, MIB)


def _mapped_not_resident() -> int:
    """The bytes the process maps but does not hold resident now (0 where unknown)."""
    try:
        size, resident = (int(pages) for pages in STATM.read_bytes().split()[:2])
    except (OSError, ValueError):
        return 0
    return max(size - resident, 0) * os.sysconf("SC_PAGE_SIZE")


def memory_bound(raw: str | None, what: str) -> int:
    """A memory budget typed as text (a command-line option, a widget's box), as Flink writes
    memory sizes (``512mb``, ``2gb``: :func:`~flinkstate.memory_size.parse_bytes`) and of at
    least one mebibyte, or the default budget (:func:`default_memory_budget`) when none is
    given; anything else is refused naming ``what``.

    Examples
    --------
    >>> memory_bound("512mb", "--max-memory"), memory_bound("2 g", "--max-memory")
    (536870912, 2147483648)
    >>> memory_bound(None, "--max-memory") == default_memory_budget()
    True
    >>> memory_bound("12", "--max-memory")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    flinkstate.errors.InvalidParameterError: --max-memory takes a memory size of at least 1mb ...
    """
    if raw is None:
        return default_memory_budget()
    try:
        size = parse_bytes(raw)
    except InvalidParameterError as error:
        raise InvalidParameterError(f"{what}: {error}") from None
    if size < MIB:
        raise InvalidParameterError(
            f"{what} takes a memory size of at least 1mb (512mb, 2gb), got {raw!r}"
        )
    return size


def mebibytes(size: int) -> str:
    """A size in bytes as whole mebibytes, for messages.

    Examples
    --------
    >>> mebibytes(4 * GIB), mebibytes(1536 * 1024)
    ('4,096 MiB', '2 MiB')
    """
    return f"{(size + MIB // 2) // MIB:,} MiB"
