"""The figures the notebooks' prose names, computed from the runs they describe.

A markdown cell cannot compute its figures, so each one it names is listed here with the run
that gives it: the test finds the sentence in the notebook (edit one, and this table points at
what to check) and computes its figures from the model, as the tours' and exercises' are."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from flinkstate.lab.scenario_run import prepare_scenario
from flinkstate.memory_segment import LENGTH_PREFIX_BYTES
from flinkstate.runtime.world.world import NetworkWorld
from tests.notebooks.executed import NOTEBOOK_FOLDER


def _restored(overrides: dict[str, object] | None = None) -> NetworkWorld:
    """The pre-filter deadlock's job restored, before its first recovery step."""
    run = prepare_scenario("prefilter-deadlock", seed=0, overrides=overrides)
    assert run.simulation is not None
    world = run.simulation.model
    assert isinstance(world, NetworkWorld)
    return world


def _buffers_per_record(world: NetworkWorld) -> int:
    """The buffers of the network's segment size the longest restored record fills, its length
    prefix included (as the reader's post-filter buffers take it)."""
    assert world.restore is not None
    longest = max(r.serialized_length for r in world.restore.records.values() if r.is_record)
    return -(-longest // world.config.segment_size)


def _record_bytes(world: NetworkWorld) -> int:
    assert world.restore is not None
    lengths = {r.serialized_length for r in world.restore.records.values() if r.is_record}
    (length,) = lengths
    return length - LENGTH_PREFIX_BYTES  # the record's bytes, without its length


def _notebook_03_reproduce() -> str:
    world = _restored()
    task = next(t for t in world.tasks.values() if t.gates)
    gate = task.gates[0]
    return (
        f"restarts the keyed job with {_record_bytes(world):,}-byte records on "
        f"{world.config.segment_size // 1024} KiB segments (a record\nspans "
        f"{_buffers_per_record(world)} buffers), {gate.exclusive_per_channel} exclusive "
        "buffers per channel and "
        f"{gate.pool.size} floating per gate"
    )


def _notebook_03_exercise() -> str:
    return f"With {_record_bytes(_restored()):,}-byte records, which of"


def _notebook_05_boundary() -> str:
    small, large = (_restored({"record_size": size}) for size in (36_000, 37_000))
    return (
        f"a {_record_bytes(small):,}-byte record needs {_buffers_per_record(small)} post-filter "
        f"buffers of\n{small.config.segment_size // 1024} KiB, a {_record_bytes(large):,}-byte "
        f"one {_buffers_per_record(large)}."
    )


def _values(name: str) -> dict[str, object]:
    """The settings a scenario's run resolves (its own, its topology's, the defaults)."""
    return prepare_scenario(name, seed=0).values


def _notebook_05_budget() -> str:
    sizes = [_record_bytes(_restored({"record_size": s})) for s in (36_000, 37_000, 41_000)]
    values = _values("prefilter-deadlock")
    kib = [f"{size // 1000}" for size in sizes]
    return (
        f"with {values['buffers_per_channel']} or 3 exclusive buffers per channel (`E`), "
        f"{values['floating_buffers']} floating ones (`L`), and records\nof {kib[0]}, {kib[1]} "
        f"and {kib[2]} KB:"
    )


def _notebook_06_drain() -> str:
    values = _values("checkpoint-during-drain")
    return (
        f"restarts the keyed job with {values['new_parallelism']} counters instead of "
        f"{values['parallelism']} and asks for a\ncheckpoint every "
        f"{values['restart_checkpoint_interval']} steps."
    )


def _notebook_06_coordinator() -> str:
    every = _values("checkpoint-before-drainer")["restart_checkpoint_interval"]
    return f"triggers a checkpoint every {every} steps from the restart"


def _notebook_06_aligned() -> str:
    timeout = _values("aligned-checkpoint-during-recovery")["checkpoint_timeout"]
    return f"timeout of {timeout} steps the checkpoint expires"


def _notebook_06_watermarks() -> str:
    both = [_values(f"merged-watermarks-{kind}") for kind in ("passed-through", "aggregated")]
    shared = {k: v for k, v in both[0].items() if both[1][k] == v}
    return (
        f"restart the keyed job with {shared['new_parallelism']} counters instead of "
        f"{shared['parallelism']} under v2, each\nsource emitting a watermark every "
        f"{shared['watermark_interval']} records."
    )


#: (notebook, what its prose says, computed from the run it describes)
FIGURES: list[tuple[str, Callable[[], str]]] = [
    ("03-buffer-ownership-and-the-prefilter-deadlock.ipynb", _notebook_03_reproduce),
    ("03-buffer-ownership-and-the-prefilter-deadlock.ipynb", _notebook_03_exercise),
    ("05-restarting-from-a-checkpoint.ipynb", _notebook_05_boundary),
    ("05-restarting-from-a-checkpoint.ipynb", _notebook_05_budget),
    ("06-checkpointing-during-recovery.ipynb", _notebook_06_drain),
    ("06-checkpointing-during-recovery.ipynb", _notebook_06_coordinator),
    ("06-checkpointing-during-recovery.ipynb", _notebook_06_aligned),
    ("06-checkpointing-during-recovery.ipynb", _notebook_06_watermarks),
]


@pytest.mark.parametrize(
    ("notebook", "sentence"), FIGURES, ids=[f"{n[:2]}-{f.__name__}" for n, f in FIGURES]
)
def test_the_prose_names_the_figures_of_its_run(notebook: str, sentence: Callable[[], str]) -> None:
    cells = json.loads((NOTEBOOK_FOLDER / notebook).read_text(encoding="utf-8"))["cells"]
    text = "".join("".join(cell["source"]) for cell in cells)
    expected = sentence()
    assert expected in text, f"{notebook} no longer says: {expected!r}"
