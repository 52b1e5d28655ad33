"""What channel-state recovery does in a step (classic recovery, filtering, spilling and
draining), as data for the step's note (``flinkstate.runtime.happening``; the words are
``flinkstate.runtime.world.narration``'s). A virtual channel is named by its old subtask and
old channel, as the ``SubtaskConnectionDescriptor`` names it."""

from __future__ import annotations

from dataclasses import dataclass

from flinkstate.runtime.happening import Happening
from flinkstate.runtime.restore_versions import FailedDeliveryRecycle

# -- classic recovery


@dataclass(frozen=True, slots=True)
class OutputStateRecovered(Happening):
    """A chunk of recovered output state went into subpartitions (``targets``: their indices;
    ``old_subtask`` and ``old_channel`` as the chunk holds them)."""

    old_subtask: int
    old_channel: int
    used: int
    targets: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class OutputStateFinished(Happening):
    """All output state is restored: ``EndOfOutputChannelStateEvent`` to every subpartition."""


@dataclass(frozen=True, slots=True)
class InputStateRecovered(Happening):
    """A chunk of recovered input state (or, ``upstream_output``, of an upstream's output
    state) went into a recovered channel."""

    upstream_output: bool
    old_subtask: int
    old_channel: int
    used: int
    channel: str


@dataclass(frozen=True, slots=True)
class InputStateFinished(Happening):
    """All input state is read: ``EndOfInputChannelStateEvent`` on every channel."""


@dataclass(frozen=True, slots=True)
class ConversionRefused(Happening):
    """``toInputChannel`` refused to convert a gate's recovered channels."""

    gate: str


@dataclass(frozen=True, slots=True)
class GateConverted(Happening):
    """A gate's recovered channels were converted and requested their subpartitions;
    ``migrated``: the recovered buffers moved into physical channels (V1; None otherwise);
    ``released``: the recovered buffers still queued, recycled unread (before FLINK-18989)."""

    gate: str
    migrated: int | None
    released: int = 0


@dataclass(frozen=True, slots=True)
class VirtualChannelSelected(Happening):
    """A descriptor selected the virtual channel whose bytes follow on a rescaled gate."""

    channel: str
    descriptor: tuple[int, int]


@dataclass(frozen=True, slots=True)
class DescriptorIgnored(Happening):
    """A descriptor on a gate that was not rescaled was ignored."""

    channel: str


@dataclass(frozen=True, slots=True)
class RecoveredInputConsumed(Happening):
    """A task consumed the end of a channel's recovered input state."""

    channel: str


@dataclass(frozen=True, slots=True)
class UpstreamOutputThrough(Happening):
    """The upstream's recovered output is through on a channel, which blocks."""

    channel: str


@dataclass(frozen=True, slots=True)
class UpstreamRecoveryComplete(Happening):
    """Every channel of a gate is through its upstream's recovered output: consumption
    resumes."""

    gate: str


@dataclass(frozen=True, slots=True)
class RecordFilteredOut(Happening):
    """A recovered record of an ambiguous virtual channel belongs to another subtask."""

    record: int
    subtask: int


# -- filtering (V1) and spilling (V2)


@dataclass(frozen=True, slots=True)
class PrefilterBufferRead(Happening):
    """A pre-filter buffer (taken from ``origin``) was filtered: ``kept`` records to rewrite."""

    origin: str
    channel: str
    kept: int
    filtered: int


@dataclass(frozen=True, slots=True)
class PostFilterBufferWritten(Happening):
    """The ``number``-th post-filter buffer (taken from ``origin``) was written."""

    number: int
    origin: str
    channel: str


@dataclass(frozen=True, slots=True)
class FilteredDeliveryFailed(Happening):
    """Handing filtered buffer ``failed`` (of ``total``, counted from 1) to the channel
    failed; the reader recycled the buffers ``recycled`` as ``rule`` says."""

    failed: int
    total: int
    channel: str
    recycled: tuple[int, ...]
    rule: FailedDeliveryRecycle


@dataclass(frozen=True, slots=True)
class PrefilteredSpilled(Happening):
    """Records of a virtual channel, filtered in the heap pre-filter segment, were spilled."""

    kept: int
    old_subtask: int
    old_channel: int
    channel: str
    dropped: int


@dataclass(frozen=True, slots=True)
class BytesSpilled(Happening):
    """Bytes of a virtual channel were spilled unfiltered."""

    used: int
    old_subtask: int
    old_channel: int
    channel: str


@dataclass(frozen=True, slots=True)
class NothingFetched(Happening):
    """The fetch is done and found nothing to recover."""


@dataclass(frozen=True, slots=True)
class FetchDone(Happening):
    """The fetch is done: its spill files are sealed and handed to the drainer."""

    segments: int
    files: int
    size: int


@dataclass(frozen=True, slots=True)
class FetchFailed(Happening):
    """The fetch failed after writing its spill files."""

    files: int
    bytes_written: int


@dataclass(frozen=True, slots=True)
class SpillDirectoryDeleted(Happening):
    """The failed fetch deleted its spill directory (FLINK-40520)."""


# -- draining (V2)


@dataclass(frozen=True, slots=True)
class RequestPartitionsFailed(Happening):
    """The request-partitions mail failed before converting any gate."""


@dataclass(frozen=True, slots=True)
class GatesConverted(Happening):
    """Every gate was converted; ``needs_recovery``: every channel starts in recovery, else
    there is nothing to drain (trigger NO_OP, task RUNNING)."""

    needs_recovery: bool


@dataclass(frozen=True, slots=True)
class InstallDrainerFailed(Happening):
    """The mail installing the drainer failed: no drain was submitted."""


@dataclass(frozen=True, slots=True)
class DrainerInstalled(Happening):
    """The drainer became the recovery checkpoint trigger; the task is RUNNING."""


@dataclass(frozen=True, slots=True)
class BytesDrained(Happening):
    """The drainer delivered ``used`` bytes into a channel."""

    used: int
    channel: str


@dataclass(frozen=True, slots=True)
class DrainFinished(Happening):
    """The drain ended: its end event on every channel; the spill files deleted or kept."""

    spill_deleted: bool


@dataclass(frozen=True, slots=True)
class TriggerNoOpInRecovery(Happening):
    """The trigger was reset to NO_OP while the channels were still in recovery."""


@dataclass(frozen=True, slots=True)
class RecoveredStateConsumed(Happening):
    """A task consumed a channel's end of fetched state; ``trigger_no_op``: it was the last
    channel in recovery and the trigger is NO_OP now."""

    channel: str
    trigger_no_op: bool
