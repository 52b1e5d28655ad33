"""Runs of catalogued topologies for the network tests, checked at every step by default."""

from __future__ import annotations

from flinkstate.catalogue.topologies import topology
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim import Simulation, make_scheduler


def simulate(
    name: str = "keyed",
    seed: int = 0,
    scheduler: str = "random",
    full_check_every: int = 1,
    **overrides: object,
) -> Simulation:
    item = topology(name)
    return Simulation(
        lambda: item.build(overrides, seed=seed, full_check_every=full_check_every),
        make_scheduler(scheduler, seed),
    )


def world(sim: Simulation) -> NetworkWorld:
    assert isinstance(sim.model, NetworkWorld)
    return sim.model


def saturated_backpressure() -> Simulation:
    """A slow consumer (cost 30) whose subpartitions hold at most 2 buffers, 600 steps in:
    some producer waits for a buffer of its saturated pool."""
    sim = simulate(
        "backpressure",
        records=60,
        cost=30,
        max_buffers_per_channel=2,
        parallelism=2,
        record_size=2000,
    )
    sim.run(600)
    return sim
