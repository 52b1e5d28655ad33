"""The three reads of every broken checkpoint and what their outcomes are.

Each mutation is read three ways, through the command line: ``inspect --json`` (the framing
alone), ``inspect --json --export DIR`` (records decoded, keys checked, a dataset written to a
new folder) and ``forecast --json`` (the checkpoint restored and run in the simulator, with the
``job-config.txt`` beside it). Each read ends in one of:

- ``error``: one line ``flinkstate: error: ...`` and exit status 2; an export leaves nothing
  where it was to write;
- ``answer``: figures that are the unbroken checkpoint's, or a summary's figures with a
  warning, or a forecast of a checkpoint ``inspect`` reads otherwise (state moved to another
  channel, another parallelism: a checkpoint Flink could have written);
- ``silent``: other figures without a word (the reader was fooled and said nothing);
- ``partial``: an export that failed and left files, or exited 0 without its whole dataset;
- ``traceback``, ``hang``, ``memory``: the failures the harness exists to find.

The figures are where bytes are and how many (chunks, offsets, lengths, records, split
records, key groups, entries; a forecast's every figure), never what a record holds: Flink
writes no checksum, so a bit flipped inside a record's value is another record, which no
reader can tell from one Flink wrote. So that a key changed that way cannot move a record to
another subtask either, a forecast restores each job at a parallelism whose subtasks' key
groups are unions of the old ones (2 for the jobs keyed at 4, 1 for the one keyed at 3).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flinkstate.flinkcheckpoint.metadata import read_metadata

OUTCOMES = ("error", "answer", "silent", "partial", "traceback", "hang", "memory")
FAILURES = ("silent", "partial", "traceback", "hang", "memory")
READS = ("json", "export", "forecast")
RECORD_TYPE = "Tuple2<Long,String>"
KEYED = "hash:f0%1000"
#: a forecast's steps: every committed checkpoint's recovery ends in fewer (under 6,000)
FORECAST_STEPS = 20_000


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """What one committed job is read with: its exchanges (``--exchange``) and the
    parallelism its forecast restores it at."""

    exchanges: tuple[str, ...]
    to: int

    @classmethod
    def of(cls, chk: Path) -> ReadOptions:
        metadata = read_metadata(chk)
        variant = chk.parents[1].name
        if variant.startswith("rebalance"):
            return cls(("to-record->relay=rebalance",), 2)
        ups = ["to-record", "to-record-b"] if variant.startswith("union") else ["to-record"]
        keyed = metadata.operator("slow-counter").parallelism
        return cls(tuple(f"{up}->slow-counter={KEYED}" for up in ups), 2 if keyed % 2 == 0 else 1)


def argv(read: str, chk: Path, target: Path, options: ReadOptions) -> list[str]:
    """The command line of ``read`` on the checkpoint ``chk`` (an export written to
    ``target``)."""
    exchanges = [part for e in options.exchanges for part in ("--exchange", e)]
    if read == "json":
        return ["inspect", str(chk), "--json"]
    if read == "export":
        return [
            "inspect",
            str(chk),
            "--json",
            "--export",
            str(target),
            *exchanges,
            "--record-type",
            RECORD_TYPE,
            "--segment-size",
            "4kb",
        ]
    return [
        "forecast",
        str(chk),
        "--to",
        str(options.to),
        *exchanges,
        "--record-type",
        RECORD_TYPE,
        "--quiet",
        "--json",
        "--steps",
        str(FORECAST_STEPS),
    ]


def summary_figures(summary: dict[str, Any]) -> dict[str, Any]:
    """What ``inspect``'s summary says of where the bytes are and how many: each subtask's
    channels as a multiset (which of a subtask's channels holds some state is
    :func:`attribution`), the totals, the keyed state and the key-group checks."""
    return {
        "totals": summary["totals"],
        "channels": sorted(
            [c[k] for k in ("subtask", "side", "chunks", "offsets", "lengths", "bytes")]
            for c in summary["channels"]
        ),
        "keyed": [
            [k["subtask"], k["key_groups"], k["bytes"], k["entries"]]
            for k in summary["keyed_state"]
        ],
        "key_groups": [[c["records"], c["outside"]] for c in summary["key_groups"]["checked"]],
    }


def attribution(summary: dict[str, Any]) -> dict[str, Any]:
    """Which channel holds what and the operators' parallelism: a checkpoint whose state moved
    to a channel that had none, or whose operator has another parallelism, is one Flink could
    have written, which reads otherwise (and forecasts otherwise) without a reader's fault."""
    return {
        "channels": [
            [c[k] for k in ("operator", "subtask", "side", "gate_or_partition")]
            + [c["channel_or_subpartition"], c["bytes"]]
            for c in summary["channels"]
        ],
        "logical": [
            [c[k] for k in ("edge", "upstream_subtask", "downstream_subtask", "input_bytes")]
            + [c[k] for k in ("output_bytes", "records", "split_record", "trailing_bytes")]
            for c in summary["logical_channels"]
        ],
        "operators": [[o["parallelism"], o["max_parallelism"]] for o in summary["operators"]],
    }


def forecast_figures(summary: dict[str, Any]) -> dict[str, Any]:
    """Every figure of a forecast but where it was read from, its notes and the names of the
    operators it leaves out (a bit flipped in one's name is another name)."""
    leave = ("checkpoint", "notes", "settings", "left_out_operators")
    figures = {k: v for k, v in summary.items() if k not in leave}
    figures["settings"] = {s["name"]: s["value"] for s in summary["settings"]}
    figures["left_out"] = len(summary["left_out_operators"])
    return figures


def figures(read: str, summary: dict[str, Any], answer: Mapping[str, Any]) -> dict[str, Any]:
    if read == "forecast":
        return forecast_figures(summary)
    found = summary_figures(summary)
    if read == "export":
        found["dataset"] = answer.get("dataset")
    return found


def warnings(read: str, summary: dict[str, Any]) -> list[str]:
    """What a summary said beside its figures. A forecast's notes say where its settings came
    from and what the model leaves out, never that the checkpoint is damaged: a forecast that
    differs must be refused, or come from a checkpoint ``inspect`` reads otherwise."""
    return [] if read == "forecast" else list(summary.get("warnings", []))


def normalized(text: str, root: Path) -> str:
    """``text`` with the copy's folder written as ``<root>``, so that two copies compare."""
    return text.replace(str(root), "<root>")


def _one_line(status: Any, stderr: str) -> str | None:
    lines = stderr.strip().splitlines()
    if (
        status == 2
        and len(lines) == 1
        and lines[0].startswith("flinkstate: error: ")
        and "Traceback" not in stderr
    ):
        return lines[0]
    return None


def classify(
    read: str,
    answer: Mapping[str, Any],
    expected: Mapping[str, Any],
    root: Path,
    otherwise: str = "",
) -> tuple[str, str]:
    """The outcome of one read and a line saying why; ``expected``: the unbroken
    checkpoint's figures for this read. ``otherwise``: what ``inspect`` found
    attributed otherwise in the same broken checkpoint (a valid one, read otherwise), where a
    forecast's figures may differ too."""
    status = answer["status"]
    stdout, stderr = normalized(answer["stdout"], root), normalized(answer["stderr"], root)
    last = stderr.strip().splitlines()[-1][:300] if stderr.strip() else f"status {status}"
    if status == "hang":
        return "hang", "no answer in time"
    if status in ("memory", "killed") or "MemoryError" in stderr:
        return "memory", last
    left = answer.get("left") or []
    if read == "export" and status != 0 and left:
        return "partial", f"exit {status}, but the export's folder holds {left}: {last}"
    if status == 0 or (status == 1 and read == "forecast"):
        try:
            summary = json.loads(stdout)
        except json.JSONDecodeError:
            return "traceback", f"exit {status} without a JSON summary: {last}"
        if read == "export" and answer.get("dataset") is None:
            return "partial", f"exit 0, but the export's folder holds {left}"
        found = figures(read, summary, answer)
        said = warnings(read, summary)
        if found == expected["figures"] or said:
            return "answer", "; ".join(said)[:300]
        if read == "forecast" and otherwise:
            return "answer", f"a checkpoint inspect reads otherwise ({otherwise})"[:300]
        changed = {k: v for k, v in found.items() if expected["figures"].get(k) != v}
        return "silent", json.dumps(changed)[:300]
    line = _one_line(status, stderr)
    if line is not None:
        return "error", line[:300]
    return "traceback", last


def read_otherwise(answer: Mapping[str, Any], expected: Mapping[str, Any], root: Path) -> str:
    """What an ``inspect --json`` read that answered attributes otherwise than the unbroken
    checkpoint's (empty where it did not answer, or attributes alike)."""
    if answer["status"] != 0:
        return ""
    try:
        summary = json.loads(normalized(answer["stdout"], root))
    except json.JSONDecodeError:
        return ""
    found = attribution(summary)
    return ", ".join(k for k in found if found[k] != expected["attribution"][k])


def expected_of(read: str, answer: Mapping[str, Any], root: Path) -> dict[str, Any]:
    """The figures of an unbroken checkpoint's read, to hold broken ones to."""
    if answer["status"] != 0:
        raise RuntimeError(
            f"the unbroken checkpoint's {read} read failed ({answer['status']}): "
            + normalized(answer["stderr"], root)[-2000:]
        )
    summary = json.loads(normalized(answer["stdout"], root))
    expected = {"figures": figures(read, summary, answer)}
    if read == "json":
        expected["attribution"] = attribution(summary)
    return expected
