"""Exit statuses the commands share, and Ctrl-C during a command that writes files: one line
saying what it had written whole before it came (``run``, ``explore``)."""

from __future__ import annotations

#: exit status of a run that deadlocked or broke an invariant (or an exploration that found
#: one)
RUN_FAILED = 1
#: exit status of a command stopped by Ctrl-C (128 + SIGINT, as a shell reports it)
INTERRUPTED = 130


class CommandInterrupted(Exception):
    """Ctrl-C during a command that says, in one line, what it has written."""


def interrupted(written: list[str]) -> str:
    """The line for Ctrl-C: what was written whole before it came."""
    if not written:
        return "interrupted; nothing written"
    return f"interrupted; only {', '.join(written)} written"
