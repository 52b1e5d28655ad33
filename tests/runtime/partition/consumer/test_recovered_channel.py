"""A recovered input channel's buffers: exclusive ones first (requested on first use), then
the gate's floating ones, each returning where it came from; conversion hands them over."""

from __future__ import annotations

import dataclasses

import pytest

from flinkstate.catalogue.topologies import topology
from flinkstate.runtime.action_kind import ActionKind
from flinkstate.runtime.buffer.buffer import HEAP
from flinkstate.runtime.buffer.owners import OwnerKind
from flinkstate.runtime.checkpoint.channel import classic_recovery
from flinkstate.runtime.checkpoint.channel.happenings import GateConverted
from flinkstate.runtime.checkpoint.state_assignment import assign_state
from flinkstate.runtime.events import END_OF_INPUT_STATE
from flinkstate.runtime.partition.consumer import recovered_channel
from flinkstate.runtime.partition.consumer.input_gate import Gate
from flinkstate.runtime.partition.consumer.recovered_channel import ConversionRefusal
from flinkstate.runtime.restore_versions import ConversionCheck
from flinkstate.runtime.tasks import barrier_handler
from flinkstate.runtime.world.invariants import check_consistency
from flinkstate.runtime.world.state import NetworkState
from flinkstate.sim.action import Action
from tests.runtime.checkpoint.channel.test_classic_recovery import PARAMS, restored, taken, world


def restored_world() -> NetworkState:
    checkpoint = taken("keyed", 0)
    assignment = assign_state(checkpoint, {})
    return topology("keyed").build({**PARAMS, "checkpoint_interval": 0}, restore=assignment)


def test_a_recovered_channel_asks_for_its_exclusive_buffers_before_anything_else() -> None:
    world = restored_world()
    gate = world.tasks["counter[0]"].gates[0]
    channel = gate.channels[1]
    assert recovered_channel.needs_exclusive(gate, channel)
    step = recovered_channel.buffer_step(world, gate, channel, "recover-input")
    assert step == ("request-exclusive", channel.name)
    free = world.buffer_pools.free_in(gate.pool.global_pool)
    recovered_channel.request_exclusive(world, gate, channel)
    taken_now = free - world.buffer_pools.free_in(gate.pool.global_pool)
    assert taken_now == gate.exclusive_per_channel == len(channel.recovery.exclusive)
    assert recovered_channel.buffer_step(world, gate, channel, "recover-input") == (
        "recover-input",
        channel.name,
    )


def test_an_exclusive_buffer_is_taken_first_and_returns_to_its_channel() -> None:
    world = restored_world()
    gate = world.tasks["counter[0]"].gates[0]
    channel = gate.channels[1]
    recovered_channel.request_exclusive(world, gate, channel)
    exclusive = set(channel.recovery.exclusive)
    taken = [
        recovered_channel.take_buffer(world, gate, channel, channel.owners.recovered)
        for _ in range(len(exclusive) + 1)
    ]
    assert set(taken[:-1]) == exclusive
    assert taken[-1] not in exclusive  # a floating buffer of the gate
    assert world.owner[taken[-1]] == channel.owners.recovered
    for segment in taken:
        recovered_channel.recycle(world, channel, segment, channel.owners.recovered)
    assert set(channel.recovery.exclusive) == exclusive
    assert taken[-1] in gate.pool.free
    assert world.violations == []


def test_conversion_gives_idle_recovery_buffers_back_and_remote_channels_take_exclusive_ones() -> (
    None
):
    world = restored_world()
    gate = world.tasks["counter[0]"].gates[0]
    for channel in gate.channels:
        recovered_channel.request_exclusive(world, gate, channel)
    free = world.buffer_pools.free_in(gate.pool.global_pool)
    recovered_channel.convert_gate(world, gate, lambda channel: channel.remote)
    remote = [c for c in gate.channels if c.remote]
    assert gate.converted
    assert all(not c.recovered and not c.recovery.exclusive for c in gate.channels)
    assert all(len(c.buffers.exclusive) == gate.exclusive_per_channel for c in remote)
    assert all(world.home[s] == c.owners.exclusive for c in remote for s in c.buffers.exclusive)
    # every channel gave its recovery buffers back; the remote ones took as many again
    assert world.buffer_pools.free_in(gate.pool.global_pool) == free + gate.exclusive_per_channel
    assert world.violations == []


def scanned_holders(world: NetworkState, gate: Gate, kinds: tuple[OwnerKind, ...]) -> set[str]:
    """The rule the holders follow, stated on the owners: a channel's task for segments of one
    of ``kinds`` held for one of the gate's channels, the task for its deserializer's segment."""
    names = {c.name for c in gate.channels}
    holders = set()
    for kind, holder in set(world.owner):  # each owner once: a segment's holder is one of few
        if kind in kinds and holder in names:
            holders.add(world.channels[holder].task)
        elif kind is OwnerKind.DESERIALIZER and holder == gate.task:
            holders.add(gate.task)
    return holders


@pytest.mark.slow
@pytest.mark.parametrize(("generation", "seed"), [("classic", 0), ("v1", 1), ("v2", 2)])
def test_buffer_holders_are_the_owners_of_the_gates_buffers_as_a_restore_runs(
    generation: str, seed: int
) -> None:
    sim = restored(
        "keyed",
        seed,
        3,
        generation=generation,
        checkpointing_during_recovery=generation != "classic",
        downstream=generation != "classic",
    )
    world = sim.model
    assert isinstance(world, NetworkState)
    checked = 0
    while (event := sim.step()) is not None:
        if event.step % 4:
            continue  # every fourth step: the owner scan is slow
        for gate in world.gates.values():
            both = scanned_holders(world, gate, (OwnerKind.RECOVERED, OwnerKind.RECEIVED))
            recovered = scanned_holders(world, gate, (OwnerKind.RECOVERED,))
            # the holders are the tasks' actors, found without reading any owner's text
            assert recovered_channel.buffer_holders(world, gate, received=True) == {
                world.actor(task) for task in both
            }
            assert recovered_channel.buffer_holders(world, gate) == {
                world.actor(task) for task in recovered
            }
            checked += bool(both)
    assert checked


# -- RecoveredInputChannel.toInputChannel's checks


def test_classic_conversion_waits_for_the_state_and_the_queue_as_flinks_checks_do() -> None:
    """Up to 2.3 the check asks that the recovered state be consumed; master's, that no
    received buffer is left. In the classic sequence the one holds when the other does."""
    sim = restored("keyed", 1)
    model = world(sim)
    refusal = recovered_channel.conversion_refusal
    channels = [c for g in model.tasks["counter[0]"].gates for c in g.channels]
    assert {refusal(model, c) for c in channels} == {ConversionRefusal.STATE_NOT_CONSUMED}
    seen = set()
    while sim.step() is not None and not all(g.converted for g in model.tasks["counter[0]"].gates):
        for channel in channels:
            why = refusal(model, channel)
            seen.add(why)
            if channel.recovery.queue and channel.recovered:
                assert why is ConversionRefusal.BUFFERS_QUEUED
            elif channel.recovered and channel.recovery.state_consumed:
                assert why is None  # consumed: the queue is empty too
            elif not channel.recovered:
                assert why is None  # converted: nothing to refuse
    assert seen == {ConversionRefusal.STATE_NOT_CONSUMED, ConversionRefusal.BUFFERS_QUEUED, None}


def test_flink_2_3_converts_once_filtering_is_complete_with_buffers_still_queued() -> None:
    sim = restored(
        "keyed", 0, 3, downstream=True, generation="v1", checkpointing_during_recovery=True
    )
    model = world(sim)
    refusal = recovered_channel.conversion_refusal
    queued_at_conversion = False
    while (event := sim.step()) is not None:
        reader_done = all(r.finished for r in model.readers.values())
        for channel in model.channels.values():
            why = refusal(model, channel)
            if channel.recovered and not model.readers[channel.task].finished:
                assert why is ConversionRefusal.FILTERING_INCOMPLETE
            else:
                assert why is None
        if event.action.kind == "convert":
            gate = model.gates[event.action.target]
            queued_at_conversion |= any(c.recovery.queue for c in gate.channels)
        if reader_done and all(g.converted for g in model.gates.values()):
            break
    assert queued_at_conversion  # the buffers migrate: no refusal


def test_refusals_say_what_is_not_done_and_which_flink_checks_it() -> None:
    assert "not filtered" in ConversionRefusal.FILTERING_INCOMPLETE.meaning
    assert "Flink 2.3" in ConversionRefusal.FILTERING_INCOMPLETE.flink
    assert "not consumed" in ConversionRefusal.STATE_NOT_CONSUMED.meaning
    assert "checkpointing during recovery off" in ConversionRefusal.STATE_NOT_CONSUMED.flink
    assert "still queues" in ConversionRefusal.BUFFERS_QUEUED.meaning
    assert ConversionRefusal.BUFFERS_QUEUED.flink.startswith("Flink master")


# -- Flink's RecoveredInputChannelTest (master), on the classic restore of the keyed job


def test_checkpoint_start_impossible() -> None:
    # RecoveredInputChannelTest.testCheckpointStartImpossible (FLINK-20654): checkpointStarted
    # on a RecoveredInputChannel throws a CheckpointException: the task declines as not ready
    world = restored_world()
    task = world.tasks["counter[0]"]
    assert task.gates[0].channels[0].recovered
    assert "is still a RecoveredInputChannel" in barrier_handler.not_ready(world, task)


def test_to_input_channel_rejected_while_recovered_state_unconsumed() -> None:
    """RecoveredInputChannelTest.testToInputChannelRejectedWhileRecoveredStateUnconsumed and
    .testStateConsumedFutureCompletesAfterLegacySentinelIsConsumed: the end-of-state event
    the reader queues last (finishReadRecoveredState) leaves the state unconsumed and the
    conversion refused; once the task consumed it, the state is consumed and the channel
    converts."""
    world = restored_world()
    task = world.tasks["counter[0]"]
    channel = task.gates[0].channels[1]

    def consumed() -> bool:  # Flink's stateConsumedFuture, done
        return channel.recovery.state_consumed

    assert not consumed()
    end = world.new_buffer(HEAP, 0, event=END_OF_INPUT_STATE)
    channel.on_recovered_state_buffer(end, world.journal.changes)
    assert not consumed()
    assert recovered_channel.conversion_refusal(world, channel) is ConversionRefusal.BUFFERS_QUEUED
    polled = channel.poll_recovered(world.journal.changes)
    classic_recovery.on_recovery_event(world, task, channel, polled)
    assert consumed()
    assert recovered_channel.conversion_refusal(world, channel) is None


def test_to_input_channel_requires_empty_recovered_buffers() -> None:
    # RecoveredInputChannelTest.testToInputChannelRequiresEmptyRecoveredBuffers: a recovered
    # buffer and the end-of-state event queued: "Received buffer should be empty"
    world = restored_world()
    channel = world.tasks["counter[0]"].gates[0].channels[1]
    changes = world.journal.changes
    channel.on_recovered_state_buffer(world.new_buffer(HEAP, 0), changes)
    channel.on_recovered_state_buffer(world.new_buffer(HEAP, 0, event=END_OF_INPUT_STATE), changes)
    assert recovered_channel.conversion_refusal(world, channel) is ConversionRefusal.BUFFERS_QUEUED


def test_buffer_pool_exhausted_blocks_rather_than_heap_allocate() -> None:
    """RecoveredInputChannelTest.testBufferPoolExhaustedBlocksRatherThanHeapAllocate: once the
    channel's exclusive buffers and the gate's floating ones are taken, the next request
    waits; no buffer comes from the heap instead. (Flink's case: a pool of 4 segments, all
    exclusive; the model's keyed job has its own pool sizes.)"""
    world = restored_world()
    gate = world.tasks["counter[0]"].gates[0]
    channel = gate.channels[1]
    recovered_channel.request_exclusive(world, gate, channel)
    taken = []
    while recovered_channel.has_buffer(world, gate, channel):
        taken.append(recovered_channel.take_buffer(world, gate, channel, channel.owners.recovered))
    assert len(taken) >= gate.exclusive_per_channel
    assert HEAP not in taken
    assert recovered_channel.buffer_step(world, gate, channel, ActionKind.RECOVER_INPUT) is None


# -- FLINK-18989: the conversion before and since Flink 1.12


def with_check(world: NetworkState, check: ConversionCheck) -> NetworkState:
    world.options = dataclasses.replace(world.options, conversion_check=check)
    return world


def test_conversion_only_possible_after_consumed() -> None:
    """RecoveredInputChannelTest#testConversionOnlyPossibleAfterConsumed (de2ab7af3fa): a
    recovered channel fresh from its gate (Flink's: channel 0, 10 buffers per channel), its
    state neither read nor consumed: ``toInputChannel`` throws an IllegalStateException since
    FLINK-18989, and converted it in Flink 1.11."""
    world = restored_world()
    channel = world.tasks["counter[0]"].gates[0].channels[0]
    assert channel.recovered
    assert not channel.recovery.queue
    refusal = recovered_channel.conversion_refusal(world, channel)
    assert refusal is ConversionRefusal.STATE_NOT_CONSUMED
    assert recovered_channel.conversion_refusal(
        with_check(world, ConversionCheck.NONE), channel
    ) is (None)


def test_a_gate_converts_once_every_channel_consumed_its_end_of_state() -> None:
    """SingleInputGateTest as FLINK-18989 left it: ``finishReadRecoveredState``, then
    ``pollNext`` until the gate's state-consumed future is done, then
    ``convertRecoveredInputChannels`` succeeds."""
    world = restored_world()
    task = world.tasks["counter[0]"]
    gate = task.gates[0]
    changes = world.journal.changes
    for channel in gate.channels:
        channel.on_recovered_state_buffer(
            world.new_buffer(HEAP, 0, event=END_OF_INPUT_STATE), changes
        )
    assert recovered_channel.refuse_conversion(world, gate) is not None
    for channel in gate.channels:
        classic_recovery.on_recovery_event(world, task, channel, channel.poll_recovered(changes))
    assert classic_recovery.state_consumed(gate)
    world.journal.violations.clear()
    assert recovered_channel.refuse_conversion(world, gate) is None


def test_flink_1_11_converts_a_channel_that_still_queues_and_releases_its_buffers_unread() -> None:
    """Before FLINK-18989 the conversion checked nothing, and releasing the recovered channel
    (``releaseAllResources``) recycled the buffer it still queued: its records are never read."""
    world = with_check(restored_world(), ConversionCheck.NONE)
    task = world.tasks["counter[0]"]
    gate = task.gates[0]
    channel = gate.channels[1]
    recovered_channel.request_exclusive(world, gate, channel)
    segment = recovered_channel.take_buffer(world, gate, channel, channel.owners.recovered)
    data = world.new_buffer(segment, world.config.segment_size, 100, recovered=True)
    channel.on_recovered_state_buffer(data, world.journal.changes)
    classic_recovery.do_convert(world, task, Action(f"task {task.name}", "convert", gate.name))
    assert gate.converted
    assert not channel.recovered
    assert not channel.recovery.queue
    assert world.violations == []  # nothing refused, nothing failed
    # the released buffer went back to the global pool with the channel's other recovery
    # buffers (from where the remote channels take their exclusive ones), every segment owned
    assert world.owner[segment] != channel.owners.recovered
    check_consistency(world)
    assert world.violations == []
    converted = [h for h in world.journal.happenings if isinstance(h, GateConverted)]
    assert [(h.gate, h.released) for h in converted] == [(gate.name, 1)]
