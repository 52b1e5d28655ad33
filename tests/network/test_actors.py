"""The actor index and the action cache: a change marks exactly the actors that read it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from flinkstate.network.actors import ActionCache, ActorKind, ActorRef
from flinkstate.network.ledger import Changes
from flinkstate.network.topologies import topology
from flinkstate.sim.action import Action


def keyed_cache() -> ActionCache:
    world = topology("keyed").build({})
    return ActionCache(world.actions.index, list(world.actions.cached), set())


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


def test_a_changed_gate_pool_marks_the_transports_that_request_floating_buffers() -> None:
    cache = keyed_cache()
    index = cache.index
    listening(cache).pool("pool counter[0]<source")
    remote = {f"counter[0]<source[{i}]" for i in (1, 2, 3)}
    assert {index.actors[slot] for slot in cache.stale} == remote


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


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 5), st.lists(st.sampled_from("abc"), max_size=3)),
        max_size=40,
    ),
    st.integers(0, 40),
)
def test_the_joined_actions_are_every_slot_in_order_whatever_changed(
    updates: list[tuple[int, list[str]]], copy_after: int
) -> None:
    # patched in place where a slot keeps its number of actions, joined again where not;
    # a copy taken part-way is patched on its own
    index = keyed_cache().index
    cache = ActionCache(index, [()] * 6, set())
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
        joined = cache.actions()
        assert joined == [a for t in expected for a in t]
        joined.append(Action("caller", "own"))  # the caller's list: the cache is unmoved
        assert cache.actions() == [a for t in expected for a in t]
    if twin is not None:
        assert twin.actions() == [a for t in twin_expected for a in t]
