"""The ``flinkstate`` command's entry point: the command line imported inside it, so that
Ctrl-C or SIGTERM while the package still loads (its first 0.3 s) ends in the same one line
as during a command, not in a traceback from the middle of an import."""

from __future__ import annotations

import signal
import sys


class _TerminatedWhileLoading(KeyboardInterrupt):
    """SIGTERM before the command line could install its own handler."""


def _terminated(signum: int, frame: object) -> None:
    raise _TerminatedWhileLoading


def main() -> int:
    """Load the command line, then run it on ``sys.argv``."""
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        from flinkstate.cli import main as command_line
    except KeyboardInterrupt as interruption:
        print("flinkstate: interrupted; nothing written", file=sys.stderr)
        # 128 + the signal's number, as the command line's own statuses (cli.interruption,
        # not imported here: importing it loads the whole command line)
        return 143 if isinstance(interruption, _TerminatedWhileLoading) else 130
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)
    return command_line()
