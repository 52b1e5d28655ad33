"""The checkpoints ``make real-checkpoints`` made (``data/generated-checkpoints``), for the
tests that need a case the committed ones do not show (a String key, another record type).

Without them such a test skips, unless ``FLINKSTATE_REQUIRE_FLINK=1`` (as in CI, which makes
them first) turns that into a failure.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pytest

from flinkstate.flinkcheckpoint.metadata import read_metadata
from flinkstate.lab.real_checkpoint import read_job_config

ROOT = Path(__file__).parents[2]
GENERATED = ROOT / "data" / "generated-checkpoints"
#: the job keyed by a String field, over Tuple2<String,Long> records (CI makes it)
STRING_KEYED = "string-keyed-p2-p3"
#: the keyed job, then the same job restored from one of its checkpoints at a new parallelism
RESTORED = "keyed-restored-p2-p4-to-3"


def job_setting(checkpoint: Path, name: str) -> str:
    """A line ``name=VALUE`` of the job's ``job-config.txt`` (what ``CheckpointJob`` ran)."""
    config = (checkpoint.parents[1] / "job-config.txt").read_text(encoding="utf-8")
    line = next(line for line in config.splitlines() if line.startswith(f"{name}="))
    return line.partition("=")[2]


def record_type(checkpoint: Path) -> str:
    """The record type the made job sent, as ``--record-type`` names it."""
    return job_setting(checkpoint, "record_type").split(" ")[0]


def made_checkpoint(variant: str) -> Path:
    """The latest checkpoint of ``variant`` with in-flight data; a skip without one (a
    failure under ``FLINKSTATE_REQUIRE_FLINK=1``)."""
    found = sorted(
        (p.parent for p in (GENERATED / variant).glob("*/chk-*/_metadata")),
        key=lambda p: int(p.name.removeprefix("chk-")),
    )
    for checkpoint in reversed(found):
        if any(h.offsets for _, h in read_metadata(checkpoint).channel_handles()):
            return checkpoint
    unavailable(
        f"no checkpoint of {variant} with in-flight data in {GENERATED}: "
        f"make real-checkpoints VARIANTS={variant}"
    )


def unavailable(reason: str) -> NoReturn:
    """Skip, or fail under ``FLINKSTATE_REQUIRE_FLINK=1`` (where CI made the checkpoints)."""
    if os.environ.get("FLINKSTATE_REQUIRE_FLINK") == "1":
        pytest.fail(reason)
    pytest.skip(reason)


@dataclass(frozen=True)
class RestoredPair:
    """A checkpoint and the checkpoints of the same job restored from it."""

    #: the checkpoint the second job restored from
    first: Path
    #: the restored job's checkpoints, by id
    restored: tuple[Path, ...]
    #: the keyed operator's parallelism before and after the restore
    before: int
    after: int
    #: whether the restored job could checkpoint during recovery
    during_recovery: bool


def restored_pair(variant: str = RESTORED) -> RestoredPair:
    """The pair ``make real-checkpoints`` made for ``variant`` (its ``restored/job-config.txt``
    names the first); a skip without it (a failure under ``FLINKSTATE_REQUIRE_FLINK=1``)."""
    root = GENERATED / variant
    config = root / "restored" / "job-config.txt"
    restored = sorted(
        (p.parent for p in root.glob("restored/*/chk-*/_metadata")),
        key=lambda p: int(p.name.removeprefix("chk-")),
    )
    if not config.is_file() or not restored:
        unavailable(
            f"no restored job of {variant} in {GENERATED}: make real-checkpoints VARIANTS={variant}"
        )
    settings = read_job_config(config)
    return RestoredPair(
        root / settings["restored_from"],
        tuple(restored),
        int(settings["downstream_parallelism_before_restore"]),
        int(settings["downstream_parallelism"]),
        settings["checkpointing_during_recovery"] == "true",
    )
