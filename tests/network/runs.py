"""Runs of catalogued topologies for the network tests, checked at every step by default."""

from __future__ import annotations

from flinkstate.network.topologies import topology
from flinkstate.network.world import NetworkWorld
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
