"""A selective (InputSelectable) reader restored: converting recovered gates only together
deadlocks it, converting each on its own recovers (StreamTaskSelectiveReadingITCase,
docs/concepts/hazards.md#selective-reading)."""

from __future__ import annotations

from flinkstate.catalogue.scenario import Outcome, Scenario

#: the sequential reader restored at the same parallelism, cost enough that both of its inputs
#: hold in-flight data at the checkpoint (the second one waits behind the first throughout)
_SEQUENTIAL = {
    "records": 60,
    "record_size": 2000,
    "cost": 4,
    "checkpoint_interval": 150,
    "parallelism": 2,
    "source_parallelism": 2,
}

_SEQUENTIAL_READER = (
    "The operator implements InputSelectable like StreamTaskSelectiveReadingITCase's "
    "sequential reader: it reads input 0 until every channel of that input has sent "
    "EndOfPartitionEvent, and only then looks at input 1. That holds during recovery too: "
    "while input 0 is selected the task never polls input 1's channels, so input 1's "
    "recovered state (and its EndOfInputChannelStateEvent) stays unread. "
)


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "selective-reading-all-gates",
        "Gates converted only together: a selective reader deadlocks on restore",
        _SEQUENTIAL_READER
        + "In the intermediate rewrite of PR #28554, no recovered gate was converted to "
        "local/remote channels (requestPartitions) before every gate's recovered state "
        "was consumed. The task consumes input 0's recovered state, then needs input 0's "
        "live data and EndOfPartitionEvent to move on to input 1, and those arrive only "
        "after input 0's gate is converted. The conversion waits for input 1's recovered "
        "state to be consumed, which the task will not read while input 0 is selected: "
        "the task waits for the conversion, the conversion for the task. (Flink refuses to "
        "checkpoint InputSelectable operators, but every task start restores its gates, so "
        "there the same cycle forms even with no state at all.)",
        "sequential-reading",
        {**_SEQUENTIAL, "gate_conversion": "all-gates"},
        Outcome.DEADLOCK,
        "PR #28554 (last commit); StreamTaskSelectiveReadingITCase",
        ("gate_conversion", "exchange", "parallelism"),
    ),
    Scenario(
        "selective-reading-per-gate",
        "Each gate converted on its own: the selective reader recovers",
        _SEQUENTIAL_READER
        + "Master converts each gate as soon as its own recovered state is consumed; only "
        "the end of restore waits for every gate. Input 0's gate converts right after its "
        "recovered state, its live data and EndOfPartitionEvent arrive, input 0 ends, and "
        "the task then reads input 1's recovered state, converts that gate, and finishes "
        "restoring. (This needs input 1's recovered state to fit its recovered channels' "
        "buffers: the reader thread appends the end-of-state events only after reading "
        "every gate's state, so a reader blocked on input 1's buffers would hold input 0 "
        "back too.)",
        "sequential-reading",
        {**_SEQUENTIAL, "gate_conversion": "per-gate"},
        Outcome.RECOVERED,
        "FLINK-39522; StreamTask.recoverChannelsWithoutCheckpointing",
        (
            "gate_conversion",
            "exchange",
            "parallelism",
            "buffers_per_channel",
            "floating_buffers",
        ),
    ),
)
