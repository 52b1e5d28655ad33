"""UnalignedCheckpointRescaleITCase's (topology, old, new) parameter rows: each of its topologies
upscaled and downscaled, every operator's parallelism the ITCase's function of the job's."""

from __future__ import annotations

from collections.abc import Mapping

from flinkstate.catalogue.scenario import Outcome, Scenario

#: the ITCase's keys are value % 100 (NUM_GROUPS)
#: (the checkpoint comes late enough for in-flight data to reach the keyBy exchange)
_ITCASE = {
    "records": 150,
    "record_size": 2000,
    "keys": 100,
    "cost": 8,
    "checkpoint_interval": 800,
}

#: the multi-pipeline topologies are several times larger: fewer records keep a run short
_ITCASE_LARGE = {**_ITCASE, "records": 60}


def _itcase_pair(
    kind: str, old: int, new: int, what: str, parameters: Mapping[str, object] = _ITCASE
) -> Scenario:
    """One of UnalignedCheckpointRescaleITCase's (topology, old, new) parameter rows, its
    operators rescaled with the job parallelism as the ITCase's functions of it say."""
    direction = "upscaled" if new > old else "downscaled"
    flink_name = kind.upper().replace("-", "_")
    return Scenario(
        f"itcase-{kind}-{old}-to-{new}",
        f"UnalignedCheckpointRescaleITCase: {flink_name} {direction} {old} -> {new}",
        what,
        f"itcase-{kind}",
        {**parameters, "parallelism": old, "new_job_parallelism": new},
        Outcome.RECOVERED,
        f"UnalignedCheckpointRescaleITCase ({direction.removesuffix('d')}, {flink_name}, "
        f"{old}, {new})",
        ("parallelism", "new_job_parallelism"),
    )


_PIPELINE = (
    "The ITCase's pipeline, every operator rescaled with the job parallelism: global, "
    "rebalance and shuffle exchanges split their state round robin or to the first subtask, "
    "the keyBy exchange by key group with filtering; the pointwise rescale exchange carries no "
    "channel state. Sources' splits are dealt out anew."
)

_UNION = (
    "Three source pipelines unioned into the failing map: its subtasks have one input gate "
    "per pipeline, each with its own channel state, rescaled round robin like any shuffle. "
    "(The ITCase's three sources emit the same numbers and filter them apart; here each "
    "emits its own.)"
)

_MULTI_INPUT = (
    "Three source pipelines combined by two two-input maps: min1 reads two rebalanced gates, "
    "each with its own channel state rescaled round robin; min2 reads min1 over a forward "
    "exchange, so Flink aligns both of min2's inputs and neither carries channel state."
)

_KEYED_DIFFERENT = (
    "Two source pipelines at p/2 and p/3 keyed into one keyed co-process function at p: both "
    "input gates are split by key group, each old subtask's state read by every new subtask "
    "whose range overlaps, and filtered."
)

_BROADCAST = (
    "A broadcast source connected to a rebalanced pipeline in a broadcast process function at "
    "2p. Broadcast exchanges are never checkpointed unaligned, and Flink then aligns every "
    "input of that operator, the rebalanced one too: the process function persists no input "
    "state and the map none for it. The in-flight data recovered is the source pipeline's."
)

_KEYED_BROADCAST = (
    "Three single-subtask broadcast sources and a keyed pipeline into a keyed broadcast "
    "process function at p + 2. Reading broadcast inputs, the operator has all its inputs "
    "aligned, the keyBy one too, so its key groups are redistributed with its keyed state but "
    "no in-flight data reaches it from the checkpoint; the source pipeline's is rescaled and "
    "filtered. The broadcast sources keep parallelism 1."
)


SCENARIOS: tuple[Scenario, ...] = (
    _itcase_pair("pipeline", 3, 7, _PIPELINE),
    _itcase_pair("pipeline", 7, 3, "The same pipeline downscaled."),
    _itcase_pair("union", 2, 3, _UNION, _ITCASE_LARGE),
    _itcase_pair("union", 3, 2, _UNION, _ITCASE_LARGE),
    _itcase_pair("multi-input", 2, 3, _MULTI_INPUT, _ITCASE_LARGE),
    _itcase_pair("multi-input", 3, 2, _MULTI_INPUT, _ITCASE_LARGE),
    _itcase_pair("keyed-different-parallelism", 12, 7, _KEYED_DIFFERENT, _ITCASE_LARGE),
    _itcase_pair("keyed-different-parallelism", 7, 12, _KEYED_DIFFERENT, _ITCASE_LARGE),
    _itcase_pair("keyed-broadcast", 7, 2, _KEYED_BROADCAST, _ITCASE_LARGE),
    _itcase_pair("keyed-broadcast", 2, 7, _KEYED_BROADCAST, _ITCASE_LARGE),
    _itcase_pair("broadcast", 5, 2, _BROADCAST, _ITCASE_LARGE),
    _itcase_pair("broadcast", 2, 5, _BROADCAST, _ITCASE_LARGE),
)
