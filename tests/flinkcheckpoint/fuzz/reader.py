"""The reading side of the checkpoint fuzzer: a process of its own that imports the flinkstate
under test once and runs each command line on a broken checkpoint in a forked child, its
memory bounded and its time limited.

It is started as ``python -P reader.py`` with ``PYTHONPATH`` naming the tree whose
``flinkstate`` is under test (this worktree's by default; an older commit's to count what it
did), so it imports nothing but that package, the standard library and pyarrow: the fuzzer
itself (the mutations, their classification) keeps running on this tree's code.

Requests and answers are JSON lines on its standard input and output, which are moved to other
descriptors at start, so that a child writing to descriptor 1 cannot break the exchange. A
request is ``{"argv": [...], "out": FOLDER or null, "memory": BYTES, "seconds": S}``; the
answer holds the child's status (its exit status, ``"memory"``, ``"traceback"``, ``"killed"``
or ``"hang"``), what it printed, what ``out`` holds after it (a failed export must leave it
empty) and the figures of the dataset written there.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import multiprocessing
import os
import resource
import signal
import sys
import traceback
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

#: the modules every read uses, imported once before the first fork (whatever this tree has)
PRELOAD = (
    "flinkstate.cli",
    "flinkstate.cli.inspect",
    "flinkstate.cli.forecast",
    "flinkstate.flinkcheckpoint.summary",
    "flinkstate.flinkcheckpoint.export",
    "flinkstate.dataset",
    "flinkstate.lab.forecast",
)
#: what of each table of a dataset its figures keep: the columns that say how many bytes are
#: where, rows compared as a multiset (which of two channels of a subtask holds some state is
#: not told apart: moving it to a channel that had none makes a checkpoint Flink could have
#: written). Left out: what records say (a bit flipped in a record's key is another record,
#: which no reader can tell from Flink's own), names and parallelism, which ``_metadata``
#: states and the dataset repeats.
KEPT = {
    "operators": ("kind", "max_parallelism"),
    "exchanges": ("exchange", "partitioner", "key_type"),
    "buffers": ("operator", "subtask", "side", "exchange", "size"),
    "fragments": (
        "record_bytes",
        "fragment_start",
        "fragment_bytes",
        "continues_from_previous",
        "continues_into_next",
    ),
    "keyed_state": ("operator", "subtask", "key_group_start", "key_group_end", "entries"),
}


def _child(argv: list[str], memory: int, send: Connection) -> None:
    """Run the command line ``argv`` and send (status, stdout, stderr) back."""
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    stdout, stderr = io.StringIO(), io.StringIO()
    status: int | str
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            from flinkstate.cli import main

            status = main(argv)
    except MemoryError:
        status = "memory"
    except BaseException as error:  # the fuzzer's whole point: report it, do not die
        status = "traceback"
        stderr.write("".join(traceback.format_exception(error)))
    send.send((status, stdout.getvalue()[-5_000_000:], stderr.getvalue()[-20_000:]))
    send.close()


def read(request: dict[str, Any]) -> dict[str, Any]:
    """One command line run in a child: its outcome, and what it left in ``out``."""
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(request["argv"], request["memory"], send))
    child.start()
    send.close()
    report = None
    if receive.poll(request["seconds"]):
        with contextlib.suppress(EOFError):
            report = receive.recv()
    child.join(5 if report is not None else 0)
    answer: dict[str, Any] = {"status": None, "stdout": "", "stderr": ""}
    if child.is_alive():
        child.kill()
        child.join()
        answer["status"] = "hang"
    elif report is None:
        child.join()
        answer["status"] = "killed" if child.exitcode == -signal.SIGKILL else "traceback"
        answer["stderr"] = f"the reader died (exit {child.exitcode})"
    else:
        answer["status"], answer["stdout"], answer["stderr"] = report
    receive.close()
    if request.get("out"):
        answer.update(_left(Path(request["out"])))
    return answer


def _left(out: Path) -> dict[str, Any]:
    """What a read left in its export's folder, and the written dataset's figures."""
    left = sorted(p.name for p in out.iterdir())
    figures = None
    target = out / "dataset"
    if left == ["dataset"] and target.is_dir() and not target.is_symlink():
        with contextlib.suppress(Exception):
            figures = dataset_figures(target)
    return {"left": left, "dataset": figures}


def dataset_figures(folder: Path) -> dict[str, Any]:
    """A written dataset's shape: each table's rows, a digest of the multiset of its kept
    columns' rows (:data:`KEPT`), its records, and the manifest; a missing file raises."""
    import pyarrow.parquet as pq

    figures: dict[str, Any] = {}
    for name, kept in KEPT.items():
        table = pq.read_table(folder / f"{name}.parquet")
        rows = sorted(zip(*(table.column(c).to_pylist() for c in kept), strict=True), key=repr)
        digest = hashlib.sha256(json.dumps(rows, default=str).encode()).hexdigest()[:16]
        figures[name] = [table.num_rows, digest]
        if name == "fragments":
            figures["records"] = len(set(table.column("record").to_pylist()))
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    manifest.pop("description", None)  # says the path it was read from
    figures["manifest"] = manifest
    return figures


def _protocol() -> tuple[io.TextIOWrapper, io.TextIOWrapper]:
    """The request and answer streams, on descriptors of their own; 0 and 1 become
    ``/dev/null`` for everything else."""
    requests = os.fdopen(os.dup(0), "r", encoding="utf-8")
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - for the process's life
    sys.stdout = sys.stderr
    return requests, answers


def serve() -> None:
    requests, answers = _protocol()
    import importlib

    loaded = []
    for name in PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
            loaded.append(name)
    import flinkstate

    hello = {"flinkstate": str(Path(flinkstate.__file__).resolve().parents[1]), "loaded": loaded}
    answers.write(json.dumps(hello) + "\n")
    answers.flush()
    for line in requests:
        answers.write(json.dumps(read(json.loads(line))) + "\n")
        answers.flush()


if __name__ == "__main__":
    serve()
