"""What each actor may ever touch (its reach) and what decides which actions it has (its
guard): the static half of persistent sets."""

from __future__ import annotations

from benchmarks.bench_explorer import JOB
from flinkstate.catalogue.topologies import topology
from flinkstate.runtime.world.exploration.footprint import RECORDS, SOURCES, Resource, ResourceKind
from flinkstate.runtime.world.world import NetworkWorld

#: two sources, two counters, two sinks, one record each (the benchmark's job)
SMALL = JOB


def job(values: dict[str, object]) -> NetworkWorld:
    return topology("keyed").build(dict(values))


def task(name: str) -> Resource:
    return Resource(ResourceKind.TASK, name)


def test_each_actor_reaches_its_own_resources_and_what_its_kind_of_step_draws_on() -> None:
    world = job(SMALL)
    found = world.interference
    source = found.reach["task source[0]"]
    assert {task("task source[0]"), RECORDS, SOURCES} <= source
    assert Resource(ResourceKind.BUILDER, "counter[1]<source[0]") in source
    counter = found.reach["task counter[1]"]
    assert Resource(ResourceKind.CHANNEL, "counter[1]<source[0]") in counter
    assert RECORDS not in counter  # a counter draws no record id
    # a remote channel's transport: the pipe, the channel, the pools at both ends
    netty = found.reach["netty counter[0]<source[1]"]
    assert Resource(ResourceKind.LINK, "counter[0]<source[1]") in netty
    assert Resource(ResourceKind.POOL, "pool source[1]>counter") in netty
    # the users of a resource are the actors whose reach holds it
    link = Resource(ResourceKind.LINK, "counter[0]<source[1]")
    assert set(found.users[link]) == {
        "task source[1]",
        "task counter[0]",
        "netty counter[0]<source[1]",
    }


def test_a_task_that_computes_decides_by_itself_and_one_that_polls_reads_its_channels() -> None:
    found = job(SMALL).interference
    assert found.guard("task counter[0]", "compute") == {task("task counter[0]")}
    polling = found.guard("task counter[0]", "poll")
    assert polling is not None
    assert Resource(ResourceKind.POLLABLE, "counter[0]<source[1]") in polling
    assert found.guard("channel-state-writer tm0", "write") is None  # no reach: anything
