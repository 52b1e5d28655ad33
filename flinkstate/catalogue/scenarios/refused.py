"""Configurations Flink refuses before anything runs, with Flink's own error."""

from __future__ import annotations

from flinkstate.catalogue.scenario import Outcome, Scenario
from flinkstate.catalogue.scenarios.workloads import BACKPRESSURED

SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "small-page-size",
        "A 1 KiB page size is refused",
        "taskmanager.memory.segment-size below Flink's 4096-byte minimum is refused with "
        "Flink's own configuration error before anything runs (in the seed it surfaced "
        "during recovery, from the record filter's page size).",
        "keyed",
        {**BACKPRESSURED, "segment_size": 1024},
        Outcome.REJECTED,
        "PR #28001 (third commit), FLINK-39519; ConfigurationParserUtils.getPageSize",
        ("segment_size",),
    ),
)
