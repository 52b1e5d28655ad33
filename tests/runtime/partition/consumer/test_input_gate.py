"""An input channel (and the subpartition it reads) notes its own changes: every change to its
state goes through a method of the channel that notes it in the ``Changes`` it is given, a
copied world's channels into the copy's, and no other module notes a channel's change by hand."""

from __future__ import annotations

import ast
import doctest
from pathlib import Path
from types import ModuleType

import pytest

from flinkstate.catalogue.topologies import topology
from flinkstate.runtime.action_kind import ActionKind
from flinkstate.runtime.actor_ref import transport_name
from flinkstate.runtime.buffer.buffer import Buffer
from flinkstate.runtime.buffer.ledger import Changes
from flinkstate.runtime.buffer.owners import ChannelOwners
from flinkstate.runtime.checkpoint import coordinator
from flinkstate.runtime.checkpoint.happenings import StaleBarrierDropped
from flinkstate.runtime.events import BARRIER
from flinkstate.runtime.options import CheckpointFailureReason
from flinkstate.runtime.partition import result_partition
from flinkstate.runtime.partition.consumer import input_gate
from flinkstate.runtime.partition.consumer.input_gate import Channel, RecycledTo
from flinkstate.runtime.world.world import COPY_ON_WRITE_FROM, NetworkWorld
from flinkstate.sim import Simulation, make_scheduler
from flinkstate.sim.action import Action

PACKAGE = Path(input_gate.__file__).parents[3]


def notes(path: Path, kind: str) -> list[int]:
    """The lines of ``path`` that call ``changes.<kind>(...)`` (on any ``changes``)."""
    tree = ast.parse(path.read_text(), str(path))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == kind
        and (
            (isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "changes")
            or (isinstance(node.func.value, ast.Name) and node.func.value.id == "changes")
        )
    ]


def by_hand(kind: str, *own: Path) -> dict[str, list[int]]:
    """Where a module other than ``own`` notes a change of ``kind`` by hand."""
    for path in own:
        assert notes(path, kind), f"the scan finds {path.name}'s own notes"
    return {
        str(path.relative_to(PACKAGE)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if path not in own and (lines := notes(path, kind))
    }


def test_only_the_channel_notes_a_channels_change() -> None:
    assert by_hand("channel", Path(input_gate.__file__)) == {}


def test_only_the_subpartition_and_its_channel_note_a_subpartitions_change() -> None:
    # a channel notes its subpartition where what its task takes lets the producer's side on
    own = (Path(result_partition.__file__), Path(input_gate.__file__))
    assert by_hand("subpartition", *own) == {}


def with_send(world: NetworkWorld) -> Action:
    """Step ``world`` (its first enabled action each time) until a transport can send."""
    for _ in range(500):
        actions = list(world.enabled_actions())
        send = next((a for a in actions if a.kind == ActionKind.SEND), None)
        if send is not None:
            return send
        world.apply(actions[0])
    raise AssertionError("no transport sent within 500 steps")


def marks(changes: Changes) -> tuple[frozenset[int], frozenset[str]]:
    return frozenset(changes.stale), frozenset(changes.touched)


@pytest.mark.parametrize(
    ("copy", "parallelism"),
    [("clone", 2), ("snapshot", 2), ("clone_within", 2), ("snapshot", 16)],
    ids=["clone", "snapshot-whole", "clone-within", "snapshot-on-write"],
)
def test_a_copied_worlds_channels_note_into_the_copys_journal(copy: str, parallelism: int) -> None:
    values = {"records": 20, "parallelism": parallelism, "source_parallelism": parallelism}
    world = topology("keyed").build(values)
    if parallelism > 2:  # the copy shares the components and copies each before it changes
        assert world.component_count >= COPY_ON_WRITE_FROM
    send = with_send(world)
    if copy == "clone_within":
        twin = world.clone_within(world.footprint(send))
    else:
        twin = getattr(world, copy)()
    channel = next(c for c in world.channels.values() if transport_name(c.name) == send.actor)
    before = marks(world.journal.changes)
    assert channel.name not in twin.journal.changes.touched
    twin.apply(send)
    assert channel.name in twin.journal.changes.touched
    readers_of = world.actions.index.readers_of
    assert set(readers_of.channels[channel.name]) <= twin.journal.changes.stale
    # the subpartition it sent from noted its change too, into the copy's journal
    assert set(readers_of.subpartitions[channel.subpartition]) <= twin.journal.changes.stale
    assert marks(world.journal.changes) == before, "the original's journal is left alone"
    assert twin.channels[channel.name] is not world.channels[channel.name]
    # and the other way round: the original's step notes into its own journal only
    twin_before = marks(twin.journal.changes)
    world.apply(send)
    assert channel.name in world.journal.changes.touched
    assert marks(twin.journal.changes) == twin_before


def test_a_recycled_exclusive_buffer_gives_back_a_floating_one_beyond_the_backlog() -> None:
    world = topology("keyed").build({"records": 5})
    channel = next(c for c in world.channels.values() if c.remote)
    changes = world.journal.changes
    segment = channel.buffers.exclusive.pop()
    channel.buffers.floating.append(12345)
    exclusive_per_channel = len(channel.buffers.exclusive_segments)
    recycled = channel.recycle(segment, exclusive_per_channel, changes)
    assert recycled == (RecycledTo.EXCLUSIVE, 12345)
    assert segment in channel.buffers.exclusive
    assert channel.buffers.floating == []


@pytest.mark.parametrize("module", [input_gate, result_partition], ids=lambda m: m.__name__)
def test_the_channels_and_subpartitions_examples_run(module: ModuleType) -> None:
    # the modules are not among ``tests/test_doctests.py``'s (not all of them has examples)
    results = doctest.testmod(module, optionflags=doctest.REPORT_NDIFF)
    assert results.attempted > 0
    assert results.failed == 0


# -- Flink's ChannelStatePersisterTest, on the persister's part of a remote channel. Flink's
# startPersisting is the barrier handler's snapshot of the channel here (it persists what was
# received before an arrived barrier, ``pre_barrier`` buffers, and persists what arrives later
# only while ``persisting`` names the checkpoint); checkForBarrier is ``on_event``, told by the
# transport whether the barrier is the pending checkpoint's; maybePersist is the transport's
# check of ``persisting``.


def remote_channel() -> tuple[Channel, Changes]:
    channel = Channel("c", "g", "t", "p", "s", True, 0, ChannelOwners.of("c"))
    return channel, Changes(channels={"c": (7,)})


def barrier(checkpoint: int) -> Buffer:
    return Buffer(-1, 0, event=BARRIER, checkpoint=checkpoint, priority=True)


def test_new_barrier_not_overwritten_by_stop_persisting() -> None:
    """ChannelStatePersisterTest.testNewBarrierNotOverwrittenByStopPersisting (FLINK-20097):
    checkpoint 1's barrier arrives behind one buffer, which is all its snapshot persists;
    checkpoint 1 is aborted, 2's barrier arrives, and the late stop of 1 leaves 2's barrier
    received and persists nothing more."""
    channel, changes = remote_channel()
    channel.received.append(Buffer(3, 32, 20))
    channel.on_event(barrier(1), True, changes)
    persister = channel.persister
    assert (persister.barrier_arrived, persister.pre_barrier) == (1, 1)  # persisted: 1
    assert not persister.persisting  # maybePersist: nothing more
    channel.on_event(barrier(2), True, changes)
    assert not persister.persisting
    persister.stop_persisting(1)
    assert not persister.persisting
    assert persister.barrier_arrived == 2  # hasBarrierReceived


def test_new_barrier_not_overwritten_by_check_for_barrier() -> None:
    """ChannelStatePersisterTest.testNewBarrierNotOverwrittenByCheckForBarrier: persisting for
    checkpoint 2 (started after 1), checkpoint 1's barrier arrives: it is not the pending
    checkpoint's, so it neither counts as received nor stops persisting for 2."""
    channel, changes = remote_channel()
    channel.persister.persisting = 2
    channel.on_event(barrier(1), False, changes)
    assert channel.persister.persisting == 2
    assert channel.persister.barrier_arrived == 0  # hasBarrierReceived: false


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("started", [False, True])
def test_late_barrier_on_cancelled_checkpoint(seed: int, started: bool) -> None:
    """ChannelStatePersisterTest.testLateBarrierOnCancelledCheckpoint and, ``started``,
    .testLateBarrierOnStartedAndCancelledCheckpoint (FLINK-21104): checkpoint 1 is cancelled
    while its barriers are still on their way to remote channels (which, ``started``, persist
    for it already); each arrives late and is ignored, and the next checkpoint persists its
    channels' data and completes (the world's invariants hold every in-flight buffer to
    exactly one snapshot)."""
    params = {
        "checkpoints": 2,
        "checkpoint_interval": 100,
        "record_size": 2500,
        "records": 60,
        "cost": 8,
        "tolerable_failed_checkpoints": 1,
    }
    sim = Simulation(
        lambda: topology("backpressure").build(params, seed=seed, full_check_every=5),
        make_scheduler("random", seed),
    )
    world = sim.model
    assert isinstance(world, NetworkWorld)
    late: set[str] = set()
    while sim.step() is not None:
        pending = world.checkpoints.pending
        if late or pending is None:
            continue
        late = {
            c.name
            for c in world.channels.values()
            if c.remote
            and (c.persister.persisting == pending.id) is started
            and any(
                b.event == BARRIER and b.checkpoint == pending.id
                for b in world.subpartitions[c.subpartition].queue
            )
        }
        if late:
            assert pending.id == 1
            coordinator.abort_pending(world, CheckpointFailureReason.CHECKPOINT_EXPIRED, "late")
            assert not any(world.channels[name].persister.persisting for name in late)
    dropped = [h for e in sim.events for h in e.happenings if isinstance(h, StaleBarrierDropped)]
    assert late
    assert dropped
    assert all(h.checkpoint == 1 for h in dropped)
    assert [c.id for c in world.checkpoints.completed][:1] == [2]
    assert world.violations == []
