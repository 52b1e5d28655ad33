"""The sample checkpoints committed in ``data/``: each one a scenario's first checkpoint.

A sample is a recipe (scenario, seed, parameters) plus one line on what it shows; the committed
tables are its output, and a test rebuilds every sample and compares, so the data in ``data/``
can never drift from the model that explains it. ``flinkstate samples --write data`` rebuilds
them after a deliberate change to the model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from flinkstate.dataset import Dataset, check_dataset_target, write_dataset
from flinkstate.errors import InvalidParameterError
from flinkstate.lab.scenario_run import prepare_scenario
from flinkstate.lab.simulation_export import from_simulation


@dataclass(frozen=True)
class Sample:
    name: str
    scenario: str
    shows: str
    seed: int = 0
    overrides: Mapping[str, object] = field(default_factory=dict)


SAMPLES: Mapping[str, Sample] = {
    s.name: s
    for s in (
        Sample(
            "keyed",
            "baseline-recovery",
            "the keyed job (4 sources -keyBy-> 4 slow counters -forward-> 4 sinks) under "
            "back-pressure: input and output state of the keyBy exchange, none of the forward one",
        ),
        Sample(
            "rebalance",
            "rebalance-rescale",
            "source -rebalance-> map -keyBy-> slow -rebalance-> sink(1), back-pressured by the "
            "slow keyed operator: channel state on round-robin exchanges next to a keyed one",
        ),
        Sample(
            "broadcast",
            "itcase-broadcast-5-to-2",
            "UnalignedCheckpointRescaleITCase's BROADCAST job at parallelism 5 (12 operators, "
            "11 exchanges): state only where data was in flight (global, rebalance, shuffle); "
            "the broadcast and rescale exchanges, and every input of an operator reading one, "
            "are aligned (unaligned_supported false) and never carry any",
        ),
        Sample(
            "spanning-records",
            "spanning-records-rescale",
            "32 KiB records on 4 KiB segments through two keyBy exchanges: most persisted "
            "buffers hold a fragment of a record that started in an earlier buffer or goes on "
            "in a later one",
        ),
    )
}


def get_sample(name: str) -> Sample:
    try:
        return SAMPLES[name]
    except KeyError:
        raise InvalidParameterError(
            f"unknown sample {name!r}; known: {', '.join(SAMPLES)}"
        ) from None


def build_sample(sample: Sample) -> Dataset:
    """Run the sample's scenario until its first checkpoint completes; that checkpoint's
    tables."""
    run = prepare_scenario(sample.scenario, seed=sample.seed, overrides=sample.overrides)
    if run.checkpoint is None or run.job is None:
        raise InvalidParameterError(
            f"sample {sample.name}: scenario {sample.scenario} completed no checkpoint "
            f"({run.outcome.value}: {run.message})"
        )
    description = (
        f"sample {sample.name}: scenario {sample.scenario}, seed {sample.seed}, "
        f"checkpoint {run.checkpoint.id}: {sample.shows}"
    )
    return from_simulation(run.job, run.checkpoint, description)


def write_samples(directory: Path, names: list[str] | None = None) -> list[Path]:
    """Write the samples (all, or ``names``) as ``directory/<name>/``, each whole; every
    target is checked before the first scenario runs."""
    chosen = [get_sample(name) for name in dict.fromkeys(names or list(SAMPLES))]
    targets = [check_dataset_target(directory / sample.name) for sample in chosen]
    for sample, target in zip(chosen, targets, strict=True):
        write_dataset(build_sample(sample), target)
    return targets


#: where the repository keeps the committed samples (absent from an installed wheel)
COMMITTED = Path(__file__).resolve().parents[1] / "data"


def sample_path(name: str, cache: Path | None = None) -> Path:
    """The folder of sample ``name``: the committed one in the repository's ``data/``, or,
    where flinkstate runs without its repository, one written from the model into ``cache``
    (default: a per-user cache folder) the first time it is asked for."""
    sample = get_sample(name)
    committed = COMMITTED / sample.name
    if (committed / "manifest.json").is_file():
        return committed
    from flinkstate import __version__

    root = cache or Path.home() / ".cache" / "flinkstate" / f"samples-{__version__}"
    target = root / sample.name
    if not (target / "manifest.json").is_file():
        write_dataset(build_sample(sample), target)
    return target
