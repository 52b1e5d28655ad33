"""The actor index and the action cache: a change marks exactly the actors that read it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flinkstate.catalogue.topologies import topology
from flinkstate.runtime.actor_ref import ActorKind, ActorRef
from flinkstate.runtime.buffer.ledger import Changes
from flinkstate.runtime.partition.consumer import transport
from flinkstate.runtime.world.actors import ActionCache, EnabledActions, StaleActionsError
from flinkstate.sim.action import Action


def keyed_cache() -> ActionCache:
    world = topology("keyed").build({})
    cache = world.actions.copy()
    cache.stale.clear()
    return cache


def listening(cache: ActionCache) -> Changes:
    changes = Changes()
    cache.listen(changes)
    return changes


def test_actors_have_slots_tasks_then_transports_then_writers() -> None:
    index = keyed_cache().index
    assert index.actors[:2] == ("source[0]", "source[1]")
    assert index.task_count == 12
    assert all(" " not in name for name in index.actors[: index.task_count])
    assert all("<" in name for name in index.actors[index.task_count : index.transport_end])
    writers = index.actors[index.transport_end : index.writer_end]
    assert writers
    assert all(name.startswith("channel-state-writer") for name in writers)
    assert index.refs["task counter[1]"] == ActorRef(
        ActorKind.TASK, "task counter[1]", task="counter[1]"
    )
    assert index.refs["netty counter[0]<source[1]"] == ActorRef(
        ActorKind.NETTY, "netty counter[0]<source[1]", channel="counter[0]<source[1]"
    )
    # an actor's text is its name, and every name the index knows maps to an actor of it
    assert all(str(ref) == name for name, ref in index.refs.items())


def test_a_changed_remote_channel_marks_its_consumer_and_its_transport() -> None:
    cache = keyed_cache()
    index = cache.index
    listening(cache).channel("counter[0]<source[1]")
    consumer = index.by_task_actor["task counter[0]"][0]
    transport = index.actors.index("counter[0]<source[1]")
    assert cache.stale == {consumer, transport}


def test_a_changed_subpartition_marks_its_producer_and_consumer_side() -> None:
    cache = keyed_cache()
    index = cache.index
    listening(cache).subpartition("source[0]>counter[0]")  # a local channel
    assert cache.stale == {
        index.by_task_actor["task source[0]"][0],
        index.by_task_actor["task counter[0]"][0],
    }


def test_a_changed_gate_pool_marks_only_the_transports_waiting_on_it() -> None:
    # a transport reads its gate's pools only while it waits for floating buffers (Flink's
    # buffer listener); it listens to the global pool behind it too
    cache = keyed_cache()
    index = cache.index
    changes = listening(cache)
    changes.pool("pool counter[0]<source")
    assert cache.stale == set()
    waiting = index.actors.index("counter[0]<source[1]")
    local, global_pool = index.floating_pools[waiting]
    assert local == "pool counter[0]<source"
    twin = cache.copy()
    available = {local: False}
    cache.wait_for_floating(waiting, True, available.__getitem__)
    cache.wait_for_floating(waiting, True)  # once is enough
    changes.pool(local)  # a change that leaves the pool unable to give a buffer: not stale
    cache.recheck_pools(available.__getitem__)
    assert cache.stale == set()
    available[local] = True
    changes.pool(local)
    cache.recheck_pools(available.__getitem__)
    assert cache.stale == {waiting}
    cache.stale.clear()
    available[local] = False
    changes.network_pool(global_pool)  # the global pool behind it: its availability changed
    cache.recheck_pools(available.__getitem__)
    assert waiting in cache.stale
    cache.stale.clear()
    cache.wait_for_floating(waiting, False)
    changes.pool(local)
    changes.network_pool(global_pool)
    available[local] = True
    cache.recheck_pools(available.__getitem__)
    assert waiting not in cache.stale
    assert twin.waiting_local.get(local, frozenset()) == frozenset()  # a copy's own


def test_a_transport_waits_while_its_backlog_needs_more_buffers_than_it_holds() -> None:
    world = topology("keyed").build({"records": 40, "buffers_per_channel": 1}, check_actions=True)
    waited = 0
    for _ in range(400):
        enabled = world.enabled_actions()
        if not enabled:
            break
        cache = world.actions
        for slot, (local, _) in cache.index.floating_pools.items():
            channel = world.channels[cache.index.actors[slot]]
            waits = slot in cache.waiting_local.get(local, frozenset())
            assert waits == transport.waits_for_floating(world, channel)
            waited += waits
        world.apply(enabled[len(enabled) // 2])
    assert waited  # some transport did wait, so the run tried the listening


def test_everything_changed_marks_every_actor_and_a_copy_is_independent() -> None:
    cache = keyed_cache()
    twin = cache.copy()
    cache.invalidate()
    assert cache.stale == set(range(len(cache.index.actors)))
    assert twin.stale == set()


def test_each_kind_of_change_marks_what_the_index_says_reads_it() -> None:
    index = keyed_cache().index
    sink = index.by_task_actor["task sink[2]"][0]
    assert index.readers_of.tasks["task sink[2]"] == (sink,)
    writer = next(iter(index.readers_of.writers))
    assert index.readers_of.writers[writer] == (index.actors.index(writer),)
    cache = keyed_cache()
    listening(cache).writer(writer)
    assert cache.stale == {index.actors.index(writer)}


def test_every_actor_s_actions_are_found_in_its_own_slot() -> None:
    world = topology("keyed").build({})
    index = world.actions.index
    enabled = world.enabled_actions()
    assert enabled
    for action in enabled:
        assert action.actor in index.slot_of_actor
        assert action in world.actions.cached[index.slot_of_actor[action.actor]]


def _slotted(count: int) -> ActionCache:
    index = keyed_cache().index
    return ActionCache(index, [()] * count, set(), [0] * (count + 1))


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 5), st.lists(st.sampled_from("abc"), max_size=3)),
        max_size=40,
    ),
    st.integers(0, 40),
    st.lists(st.sampled_from("xy"), max_size=2),
)
def test_the_enabled_actions_are_every_slot_in_order_whatever_changed(
    updates: list[tuple[int, list[str]]], copy_after: int, extra: list[str]
) -> None:
    # the view finds each action by the counts' tree, wherever slots grew or shrank; a copy
    # taken part-way goes on on its own
    cache = _slotted(6)
    more = tuple(Action("checkpoint-coordinator", kind) for kind in extra)
    twin: ActionCache | None = None
    expected: list[tuple[Action, ...]] = [()] * 6
    twin_expected: list[tuple[Action, ...]] = []
    for step, (slot, kinds) in enumerate(updates):
        if step == copy_after:
            twin = cache.copy()
            twin_expected = list(expected)
        actions = tuple(Action(f"actor {slot}", kind) for kind in kinds)
        cache.update(slot, actions)
        expected[slot] = actions
        flat = [a for t in expected for a in t] + list(more)
        enabled = EnabledActions(cache, more)
        assert len(enabled) == len(flat)
        assert list(enabled) == flat == enabled
        assert [enabled[i] for i in range(len(flat))] == flat
        assert [enabled[-i] for i in range(1, len(flat) + 1)] == flat[::-1]
        assert enabled[1:3] == flat[1:3]
        with pytest.raises(IndexError):
            enabled[len(flat)]
    if twin is not None:
        assert list(EnabledActions(twin)) == [a for t in twin_expected for a in t]


def test_enabled_actions_read_after_their_world_moved_on_raise() -> None:
    world = topology("keyed").build({"records": 3})
    enabled = world.enabled_actions()
    kept = list(enabled)
    first = enabled[0]
    assert first in enabled
    assert Action("nobody", "x") not in enabled
    world.apply(first)
    assert list(enabled) == kept  # not recomputed yet: still the state it was taken in
    world.enabled_actions()
    with pytest.raises(StaleActionsError):
        enabled[0]
    with pytest.raises(StaleActionsError):
        list(enabled)
    with pytest.raises(StaleActionsError):
        _ = first in enabled


def test_changes_made_for_a_cache_mark_what_changes_it_listens_to_mark() -> None:
    """``ActionCache.changes`` (a copied journal's) is ``listen`` on new changes, field by
    field: the same marks and readers, not copies of them."""
    cache = keyed_cache()
    made = cache.changes()
    listened = listening(cache)
    for name in Changes.__slots__:
        assert getattr(made, name) is getattr(listened, name), name
    made.channel("counter[0]<source[1]")
    assert cache.stale == {
        cache.index.by_task_actor["task counter[0]"][0],
        cache.index.actors.index("counter[0]<source[1]"),
    }
