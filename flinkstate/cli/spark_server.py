"""``flinkstate spark-server start|stop|status``: the local Spark Connect server that keeps Spark
warm for the other commands and the notebooks (:mod:`flinkstate.spark.connect_server`)."""

from __future__ import annotations

import argparse
from typing import Any

#: ``status``'s exit status when no server runs, so scripts can ask
NOT_RUNNING = 1


def add_spark_server_parser(subparsers: Any) -> None:
    from flinkstate.spark.connect_server import DEFAULT_PORT

    parser = subparsers.add_parser(
        "spark-server",
        help="start, stop or ask about the local Spark Connect server (warm Spark)",
        description="A local Spark Connect server, listening on 127.0.0.1 only, that keeps "
        "Spark's JVM running between commands: while it runs, 'flinkstate rescale' and the "
        "notebooks use it (unless --master or FLINKSTATE_SPARK_MASTER names a master) and "
        "answer in seconds. 'make lab' starts it and stops it when JupyterLab ends. Its "
        "state and log are in $FLINKSTATE_STATE_DIR (default ~/.local/state/flinkstate).",
    )
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)
    start = actions.add_parser("start", help="start it in the background")
    start.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"port on 127.0.0.1 (default {DEFAULT_PORT})",
    )
    start.set_defaults(handler=_start)
    stop = actions.add_parser("stop", help="stop it")
    stop.set_defaults(handler=_stop)
    status = actions.add_parser(
        "status", help=f"whether it runs, and where (exit status {NOT_RUNNING} if not)"
    )
    status.set_defaults(handler=_status)


def _start(args: argparse.Namespace) -> str:
    from flinkstate.spark.connect_server import check_port, start

    state = start(check_port(args.port))
    return f"Spark Connect server started at {state.address} (pid {state.pid}, log {state.log})"


def _stop(args: argparse.Namespace) -> str:
    from flinkstate.spark.connect_server import stop

    pid = stop()
    if pid is None:
        return "no Spark Connect server was running"
    return f"Spark Connect server (pid {pid}) stopped"


def _status(args: argparse.Namespace) -> tuple[str, int]:
    from flinkstate.spark.connect_server import read_state, running_server, unusable_because

    recorded = read_state()
    state = running_server()
    if state is None:
        if recorded is not None and read_state() is None:
            return (
                f"not running (pid {recorded.pid} is gone; its state file was removed)",
                NOT_RUNNING,
            )
        if recorded is not None:
            return (
                f"pid {recorded.pid} runs but does not answer on port {recorded.port} "
                f"(starting, or hung: see {recorded.log})",
                NOT_RUNNING,
            )
        return "not running", NOT_RUNNING
    text = f"running at {state.address} (pid {state.pid}, log {state.log})"
    reason = unusable_because(state)
    if reason:
        text += f"; not used by this flinkstate: {reason}"
    return text, 0
