"""A restored task's operator chain opened before its recovered output was written, as Flink's
code of 2020 did it, and after, as Flink fixed it: FLINK-19907, watermarks that overtook the
in-flight records of the checkpoint."""

from __future__ import annotations

from flinkstate.catalogue.scenario import Outcome, Scenario
from flinkstate.catalogue.scenarios.workloads import BACKPRESSURED

#: the back-pressured keyed job with event time: its sources' subpartitions hold in-flight
#: records when the checkpoint is taken, so each restored source has output state; each record
#: flushed (buffer timeout 0), so that none spans a buffer the recovered output then follows
_CHAIN_BEFORE_OUTPUT = {
    **BACKPRESSURED,
    "watermark_interval": 5,
    "flush_every_record": True,
}

_CHAIN_BEFORE_OUTPUT_TEXT = (
    "The keyed job with event time (each source emits a watermark every 5 records, a "
    "record's timestamp its position in its split; the counter stands for a window operator) "
    "is restored from an unaligned checkpoint taken while it was back-pressured: each "
    "source's subpartitions held records it had emitted before the checkpoint, older than "
    "any it emits after the restore. StreamTask.beforeInvoke opens the operator chain and "
    "writes that recovered output into the result partitions, in one order or the other. "
)


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "chain-before-output-restored",
        "A chain opened before its output is restored: late records (before FLINK-19907)",
        _CHAIN_BEFORE_OUTPUT_TEXT
        + "Before FLINK-19907 (Flink 1.11.0 to 1.11.2) the chain was opened first, and "
        "readRecoveredChannelState ran after it: what the opened chain emitted went into the "
        "subpartitions ahead of the old data. Here each source emits on from its restored "
        "offsets, watermarks among its records, before its recovered output is written; the "
        "counter's watermark passes the timestamps of the recovered records still behind, "
        "and it drops them as late (the non-deterministic OverWindowITCase failures). The "
        "late-record invariant stops the run at the first.",
        "keyed-restore-order",
        {**_CHAIN_BEFORE_OUTPUT, "restore_order": "flink-1.11.2"},
        Outcome.VIOLATION,
        "FLINK-19907 (PR #13866, 1.11 backport #13881; commit 3ab31a0473c); StreamTask."
        "beforeInvoke, OverWindowITCase",
        ("restore_order", "watermark_interval", "checkpoint_interval"),
    ),
    Scenario(
        "output-restored-before-chain",
        "FLINK-19907: a restored task writes its recovered output before its chain opens",
        _CHAIN_BEFORE_OUTPUT_TEXT
        + "Since FLINK-19907 (1.11.3, 1.12.0, master) readRecoveredChannelState runs "
        "before initializeStateAndOpenOperators: the recovered output is in the "
        "subpartitions before the chain can emit anything, every new watermark follows the "
        "records it passes, and no recovered record is late.",
        "keyed-restore-order",
        _CHAIN_BEFORE_OUTPUT,
        Outcome.RECOVERED,
        "FLINK-19907 (PR #13866; commit 3ab31a0473c); StreamTask.beforeInvoke",
        ("restore_order", "watermark_interval", "checkpoint_interval"),
    ),
)
