"""The actor index and the action cache: a change marks exactly the actors that read it."""

from __future__ import annotations

from flinkstate.network.actors import ActionCache, ActorKind, ActorRef
from flinkstate.network.ledger import Changes
from flinkstate.network.topologies import topology


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
