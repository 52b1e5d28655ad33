"""Exit statuses the commands share, and Ctrl-C during a command that writes files: one line
saying what it had written whole before it came (``run``, ``explore``)."""

from __future__ import annotations

#: exit status of a run that deadlocked or broke an invariant (or an exploration that found
#: one)
RUN_FAILED = 1
#: exit status of a command stopped by Ctrl-C (128 + SIGINT, as a shell reports it)
INTERRUPTED = 130
#: exit status of a command stopped by SIGTERM (128 + SIGTERM: ``timeout``, ``kill``, a
#: container's stop), after the same clean-up as Ctrl-C's
TERMINATED = 143


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the command is, so that it unwinds as from Ctrl-C: every file
    being written is removed or left whole, every temporary folder deleted."""


#: the signals (SIGINT, SIGTERM) that reached the command running, first first
RECEIVED: list[int] = []


def interrupt(signum: int, frame: object) -> None:
    """The SIGINT handler the command line installs: Ctrl-C raised as Python's own handler
    raises it, and remembered, so that an import it broke (numpy makes an ImportError of a
    KeyboardInterrupt in its C extension's import) still ends as an interruption."""
    RECEIVED.append(signum)
    raise KeyboardInterrupt


def terminate(signum: int, frame: object) -> None:
    """The SIGTERM handler the command line installs (remembered as :func:`interrupt`'s)."""
    RECEIVED.append(signum)
    raise Terminated


def status_of(interruption: BaseException) -> int:
    """The exit status of a command ended by ``interruption`` (a KeyboardInterrupt, or what
    a command raised from one): 143 if SIGTERM caused it, else 130.

    Examples
    --------
    >>> status_of(KeyboardInterrupt()), status_of(Terminated())
    (130, 143)
    """
    seen: BaseException | None = interruption
    while seen is not None:
        if isinstance(seen, Terminated):
            return TERMINATED
        seen = seen.__cause__ or seen.__context__
    return INTERRUPTED


class CommandInterrupted(Exception):
    """Ctrl-C during a command that says, in one line, what it has written."""


def interrupted(written: list[str]) -> str:
    """The line for Ctrl-C: what was written whole before it came."""
    if not written:
        return "interrupted; nothing written"
    return f"interrupted; only {', '.join(written)} written"
