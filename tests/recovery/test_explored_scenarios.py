"""Known hazards found by exploring every interleaving of a scenario's restart from a minimal
configuration, and their fixed variants explored to the end with nothing found."""

from __future__ import annotations

from flinkstate.network.world import NetworkWorld
from flinkstate.recovery.scenarios import prepare_scenario
from flinkstate.sim.explorer import FindingKind, explore

#: the sequential reader at parallelism 1, two records per source, the checkpoint two steps
#: in (seed 4's schedule takes it with both inputs in flight): about a thousand states
MINIMAL_SEQUENTIAL = {
    "records": 2,
    "record_size": 100,
    "checkpoint_interval": 2,
    "cost": 0,
    "parallelism": 1,
    "source_parallelism": 1,
    "network_buffers": 32,
}


def restart(name: str) -> NetworkWorld:
    run = prepare_scenario(name, overrides=MINIMAL_SEQUENTIAL, seed=4)
    assert run.simulation is not None, run.message
    model = run.simulation.model
    assert isinstance(model, NetworkWorld)
    return model


def test_the_selective_reader_deadlocks_in_every_interleaving_that_ends() -> None:
    result = explore(restart("selective-reading-all-gates"))
    assert result.exhausted
    assert [f.kind for f in result.findings] == [FindingKind.DEADLOCK]
    deadlock = result.findings[0]
    # the task waits for its gate's conversion, the conversion for the task
    assert deadlock.name == (
        "request-partitions sequential[0]<first -> task sequential[0] -> "
        "request-partitions sequential[0]<first"
    )
    assert result.finished == 0  # no interleaving gets through


def test_converting_each_gate_on_its_own_recovers_in_every_interleaving() -> None:
    result = explore(restart("selective-reading-per-gate"))
    assert result.exhausted
    assert result.findings == ()
    assert result.finished >= 1
