"""The ``flinkstate`` command line.

Every error a user can cause is one of the package's own exceptions; ``main`` prints its
message and returns a non-zero status instead of showing a traceback. Ctrl-C ends any command
with one line (status 130; ``run`` says what it had written whole, every other command writes
its files whole or not at all), and a reader that closes the pipe (``| head``) ends it quietly.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flinkstate import FLINK_VERSION, __version__
from flinkstate.cli.arithmetic import add_keygroup_parser, add_mapping_parser
from flinkstate.cli.buffers import add_buffers_parser
from flinkstate.cli.explore import add_explore_parser
from flinkstate.cli.forecast import add_forecast_parser
from flinkstate.cli.generate import add_generate_parser
from flinkstate.cli.inspect import add_inspect_parser
from flinkstate.cli.interruption import (
    RECEIVED,
    CommandInterrupted,
    interrupt,
    status_of,
    terminate,
)
from flinkstate.cli.lessons_site import add_lessons_parser
from flinkstate.cli.rescale import add_rescale_parser
from flinkstate.cli.run import add_run_parser, add_topologies_parser
from flinkstate.cli.samples import add_samples_parser
from flinkstate.cli.scenarios import add_scenarios_parser, add_whatif_parser
from flinkstate.cli.spark_server import add_spark_server_parser
from flinkstate.errors import FlinkstateError, printable, printable_lines

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

#: Exit status for a user error (bad parameter, bad key); argparse uses the same.
USAGE_ERROR = 2
#: Exit status when the reader of standard output went away: a shell's for SIGPIPE
CLOSED_PIPE = 128 + 13
#: exit status when standard output cannot be written (ENOSPC on a full disk, EIO)
OUTPUT_FAILED = 74  # EX_IOERR of sysexits.h


class _Parser(argparse.ArgumentParser):
    """argparse's parser, except that its help, version and usage reach the terminal or fail
    loudly: argparse drops an ``OSError`` of its own writes, so ``--help > /dev/full`` ended
    with status 0 and nothing written. Here the error reaches :func:`main`, which names it."""

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        if message:
            (file or sys.stderr).write(message)

    def _get_values(self, action: argparse.Action, arg_strings: list[str]) -> Any:
        """``--seed=--`` gives no value: argparse strips the ``--`` and handed the command an
        empty list as the option's value (a TypeError in every command that read it)."""
        if action.nargs is None and action.option_strings and arg_strings == ["--"]:
            raise argparse.ArgumentError(action, "expected one argument")
        return super()._get_values(action, arg_strings)

    def _get_value(self, action: argparse.Action, arg_string: str) -> Any:
        """An empty path names nothing: ``Path("")`` is the working folder, where ``samples
        --write ''`` wrote every sample."""
        if action.type is Path and arg_string == "":
            raise argparse.ArgumentError(action, "an empty path names no file or folder")
        return super()._get_value(action, arg_string)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="flinkstate",
        description=(
            "Explore how Apache Flink recovers in-flight data after unaligned checkpoints: "
            f"key groups, rescaling of channel state (Flink {FLINK_VERSION} semantics)."
        ),
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"flinkstate {__version__} (models Flink {FLINK_VERSION})",
    )
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    add_keygroup_parser(subparsers)
    add_mapping_parser(subparsers)
    add_buffers_parser(subparsers)
    add_topologies_parser(subparsers)
    add_scenarios_parser(subparsers)
    add_run_parser(subparsers)
    add_explore_parser(subparsers)
    add_whatif_parser(subparsers)
    add_samples_parser(subparsers)
    add_generate_parser(subparsers)
    add_rescale_parser(subparsers)
    add_inspect_parser(subparsers)
    add_forecast_parser(subparsers)
    add_lessons_parser(subparsers)
    add_spark_server_parser(subparsers)
    return parser


__all__ = ["main"]


def main(argv: Sequence[str] | None = None, *, exiting: bool = False) -> int:
    """Run the command ``argv`` (default: ``sys.argv``) names; its exit status. ``exiting``:
    the process ends with it (the entry point's call): a signal once it has finished is
    ignored, where Python's shutdown would let it kill the process (status -2 or -15, and not
    the one line), its work done."""
    RECEIVED.clear()
    previous = _installed({signal.SIGTERM: terminate, signal.SIGINT: interrupt})
    try:
        try:
            status = _main(argv)
        except SystemExit:  # argparse's --help, --version and usage errors: flushed here too
            sys.stdout.flush()
            raise
        sys.stdout.flush()
        return status
    except KeyboardInterrupt as interruption:
        print("flinkstate: interrupted; nothing written", file=sys.stderr)
        return status_of(interruption)
    except BrokenPipeError:
        # Nothing more can reach the reader; Python's own flush at exit must not complain.
        _silence_stdout()
        return CLOSED_PIPE
    except OSError as error:  # standard output itself failed: a full disk, a closed terminal
        _silence_stdout()
        print(
            f"flinkstate: error: cannot write the output: {error.strerror or error}",
            file=sys.stderr,
        )
        return OUTPUT_FAILED
    except Exception:
        if not RECEIVED:
            raise
        # the signal broke what was running into another exception (an import that Ctrl-C
        # interrupted is an ImportError): an interruption all the same
        print("flinkstate: interrupted; nothing written", file=sys.stderr)
        return 128 + RECEIVED[0]
    finally:
        for signum, handler in previous.items():
            if exiting:  # ignored, not Python's default: that kills a process on its way out
                handler = signal.SIG_IGN
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)


def _installed(handlers: dict[signal.Signals, Any]) -> dict[signal.Signals, Any]:
    """Install ``handlers``; returns those they replaced (none outside the main thread,
    where the signals keep theirs)."""
    previous = {}
    for signum, handler in handlers.items():
        try:
            previous[signum] = signal.signal(signum, handler)
        except ValueError:  # not the main thread
            break
    return previous


def _silence_stdout() -> None:
    """Standard output from now on goes nowhere: what is left in its buffer is dropped
    rather than reported again by Python's own flush at exit ("Exception ignored")."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:  # argparse's usage and one line, as for any other missing argument
        parser.error("name a command (flinkstate --help lists them)")
    try:
        output = handler(args)
    except FlinkstateError as error:
        # one line, whatever names from a file or the user it quotes
        print(f"flinkstate: error: {printable(str(error))}", file=sys.stderr)
        return USAGE_ERROR
    except OSError as error:
        if isinstance(error, BrokenPipeError):
            raise
        where = f"{error.filename}: " if error.filename else ""
        print(f"flinkstate: error: {where}{error.strerror or error}", file=sys.stderr)
        return USAGE_ERROR
    except CommandInterrupted as interruption:
        print(f"flinkstate: {interruption}", file=sys.stderr)
        return status_of(interruption)
    status = 0
    if isinstance(output, tuple):
        output, status = output
    print(printable_lines(str(output)))  # names from a file: no terminal escape gets through
    sys.stdout.flush()
    return int(status)
