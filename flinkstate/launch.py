"""The ``flinkstate`` command's entry point: the command line imported inside it, so that
Ctrl-C or SIGTERM while the package still loads (its first 0.3 s) ends in the same one line
as during a command, not in a traceback from the middle of an import."""

from __future__ import annotations

import signal
import sys

#: the signals that came while the command line loaded, first first
_received: list[int] = []


def _signalled(signum: int, frame: object) -> None:
    """Ctrl-C or SIGTERM while loading: raised as Python raises Ctrl-C, and remembered, since
    an import may turn it into another exception (numpy's C extension makes an ImportError of
    a KeyboardInterrupt in its import)."""
    _received.append(signum)
    raise KeyboardInterrupt


def main() -> int:
    """Load the command line, then run it on ``sys.argv``."""
    previous = {s: signal.signal(s, _signalled) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        from flinkstate.cli import main as command_line
    except BaseException as error:
        if not _received and not isinstance(error, KeyboardInterrupt):
            raise  # a fault of the package's, not a signal's: shown whole
        print("flinkstate: interrupted; nothing written", file=sys.stderr)
        # 128 + the signal's number, as the command line's own statuses (cli.interruption,
        # not imported here: importing it loads the whole command line)
        return 128 + (_received[0] if _received else signal.SIGINT)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
    return command_line(exiting=True)
