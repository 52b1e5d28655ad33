"""The kinds of action the world's actors take, one member per kind.

An :class:`~flinkstate.sim.action.Action` is the engine's and knows no model, so its ``kind`` is
a ``str``; the runtime makes and compares kinds only through :class:`ActionKind`, whose members
are that text (a ``StrEnum``), so traces and JSON read the same, and a kind read back from a
trace (plain text) equals its member and has its hash. Compare an action's kind with ``==`` or
look it up in a table, never with ``is``: a loaded trace's kinds are not the members.

Three tables hold what each kind means, each complete (a test beside each says so): the
world's handler of each kind (``world/world``), its footprint for partial-order reduction
(``world/independence``) and its caption (``views/captions``). A new kind goes into all three;
``tests/runtime/test_action_kind.py`` keeps literal kinds from being compared anywhere.
Every layer makes its actions through :func:`action`, which keeps the few it builds again and
again.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from enum import StrEnum
from typing import TypeVar, cast

from flinkstate.sim.action import Action

_V = TypeVar("_V")


class ActionKind(StrEnum):
    """What an actor does in one step, by the name actions and traces give it.

    Examples
    --------
    A kind read back from a trace is plain text: it equals its member and finds its entry in a
    table keyed by members:

    >>> ActionKind("request-floating") is ActionKind.REQUEST_FLOATING
    True
    >>> {ActionKind.REQUEST_FLOATING: "BufferManager.requestFloatingBuffers"}["request-floating"]
    'BufferManager.requestFloatingBuffers'
    """

    # -- a task's mailbox thread (``task X[i]``)
    COMPUTE = "compute"
    """The task spends one step of its operator's cost for the last record (processElement)."""
    EMIT = "emit"
    """A source emits its split's next record, watermark or idleness (SourceStreamTask)."""
    REQUEST_BUFFER = "request-buffer"
    """The task takes a buffer of its partition's pool (LocalBufferPool.requestBufferBuilder)."""
    WRITE = "write"
    """A task writes a record into a buffer (RecordWriter); a channel-state writer, its state."""
    FINISH = "finish"
    """The task's input ended: flush, EndOfPartitionEvent everywhere (ResultPartition.finish)."""
    POLL = "poll"
    """The task hands a channel's next buffer or event to its deserializer (SingleInputGate)."""
    PROCESS = "process"
    """The task processes one record or watermark and routes it on (StreamOneInputProcessor)."""
    CHECKPOINT = "checkpoint"
    """A source snapshots and puts the barrier into its outputs (SubtaskCheckpointCoordinator)."""
    BARRIER = "barrier"
    """The task takes a barrier from a channel (SingleCheckpointBarrierHandler.processBarrier)."""
    ALIGNMENT_TIMEOUT = "alignment-timeout"
    """The task's alignment timer fires: an aligned checkpoint still aligning goes unaligned
    (SingleCheckpointBarrierHandler's timer), aligned barriers still queued in its outputs
    become priority events (SubtaskCheckpointCoordinatorImpl's, alignedBarrierTimeout)."""
    RECOVER_OUTPUT = "recover-output"
    """The task restores a buffer of output state (ResultSubpartitionRecoveredStateHandler)."""
    FINISH_OUTPUT = "finish-output"
    """The task ends its output state (ResultPartition.finishReadRecoveredState): an event."""
    CONVERT = "convert"
    """The task converts a gate's recovered channels (convertRecoveredInputChannels)."""
    REQUEST_PARTITIONS = "request-partitions"
    """V2: the task converts every gate at once, channels in recovery (requestPartitions)."""
    INSTALL_DRAINER = "install-drainer"
    """V2: the task installs its drainer as checkpoint trigger (FetchedChannelStateDrainer)."""
    FAIL = "fail"
    """The task's code throws: its region fails over (RestartPipelinedRegionFailoverStrategy)."""
    CANCEL = "cancel"
    """A task of the failing region completes its cancel: CANCELED (Task.cancelExecution)."""
    # -- a remote channel's netty transport (``netty X[i]<Y[j]``)
    SEND = "send"
    """Netty sends a subpartition's head to its channel (CreditBasedSequenceNumberingViewReader)."""
    REQUEST_FLOATING = "request-floating"
    """A channel takes a floating buffer of its gate (BufferManager.requestFloatingBuffers)."""
    # -- the checkpoint coordinator
    TRIGGER = "trigger"
    """The coordinator triggers the next periodic checkpoint (CheckpointCoordinator)."""
    EXPIRE = "expire"
    """The coordinator aborts the checkpoint that timed out (CheckpointFailureManager)."""
    MANUAL_CHECKPOINT = "manual-checkpoint"
    """A checkpoint asked by REST while a region is down meets DefaultCheckpointPlanCalculator."""
    # -- the scheduler
    RESTART = "restart"
    """The scheduler restarts the failed region from its last checkpoint (DefaultScheduler)."""
    # -- a restored task's channel-state reader (``channel-state-reader X[i]``)
    RECOVER_INPUT = "recover-input"
    """The reader puts one chunk into a recovered channel (SequentialChannelStateReaderImpl)."""
    REQUEST_EXCLUSIVE = "request-exclusive"
    """The reader takes a recovered channel's exclusive buffers (RecoveredInputChannel)."""
    FINISH_INPUT = "finish-input"
    """The reader ends the input state (RecoveredInputChannel.finishReadRecoveredState)."""
    FILTER = "filter"
    """V1: the reader fills and filters a pre-filter buffer (ChannelStateFilteringHandler)."""
    REWRITE = "rewrite"
    """V1: the reader re-serializes kept records into post-filter buffers (the same handler)."""
    SPILL = "spill"
    """V2: the reader appends a chunk to its spill files (Spilling(No|With)FilteringHandler)."""
    FINISH_FETCH = "finish-fetch"
    """V2: the reader seals its spill files for the drainer (SpillWriter.close)."""
    # -- a restored task's V2 drainer (``drainer X[i]``)
    DRAIN = "drain"
    """The drainer fills a channel's buffer from the spill files (FetchedChannelStateDrainer)."""
    FINISH_DRAIN = "finish-drain"
    """The drainer ends each channel's recovery with an event (FetchedChannelStateDrainer)."""


def by_text(table: Mapping[ActionKind, _V]) -> Mapping[str, _V]:
    """``table``, typed to be looked up with an action's kind as the engine types it (``str``).
    The same dict: a member and its text hash and compare equal, so a kind made here and one
    read back from a trace find the same entry, at a dict lookup's cost.

    Examples
    --------
    >>> table = by_text({ActionKind.BARRIER: "SingleCheckpointBarrierHandler.processBarrier"})
    >>> table["barrier"]
    'SingleCheckpointBarrierHandler.processBarrier'
    """
    return cast("Mapping[str, _V]", table)


@functools.lru_cache(maxsize=65536)
def action(actor: str, kind: ActionKind, target: str = "") -> Action:
    """Actions are values; building the same few again every step is the engine's hot path."""
    return Action(actor, kind, target)
