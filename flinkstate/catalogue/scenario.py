"""What a recovery scenario is: a job, a checkpoint, a restart, and the outcome Flink would show.

A scenario names a catalogued topology, the parameters that matter, the restart's own parameters
(``RESTORE_PARAMETERS``), the outcome expected (a hazard scenario *expects* its deadlock), and
the Flink change or test it comes from, so a run that differs from the expectation is a finding,
not noise. The scenarios themselves are data, in :mod:`flinkstate.catalogue.scenarios`; running
one is :mod:`flinkstate.lab.scenario_run`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from flinkstate.catalogue.parameters import MAX_JOB_PARALLELISM, Parameter, by_name
from flinkstate.catalogue.topologies import topology
from flinkstate.runtime.options import (
    RECOVER_OUTPUT_ON_DOWNSTREAM_KEY,
    Fault,
)


class Outcome(StrEnum):
    RECOVERED = "recovered"
    """The restored job ran to its end; every invariant held."""
    DEADLOCK = "deadlock"
    VIOLATION = "violation"
    REJECTED = "rejected"
    """Flink refuses the configuration before anything runs."""
    NO_CHECKPOINT = "no-checkpoint"
    """The first run completed no checkpoint to restore from."""
    STOPPED = "stopped"
    """The step limit was reached first."""
    CHECKPOINT_EXPIRED = "checkpoint-expired"
    """The restored job ran to its end, but a checkpoint it took expired."""
    JOB_FAILED = "job-failed"
    """The job failed over and the run ends there: more counted checkpoint failures in a row
    (declined or expired) than ``tolerable_failed_checkpoints`` (Flink restarts the job from its
    last completed checkpoint), or a task failed and its pipelined region restarts (from the
    last completed checkpoint too); every invariant held."""
    FINISHED = "finished"
    """The job before any restart (phase ``job``) ran to its end; every invariant held."""


def expectation(expected: str, *, other_values: bool) -> str:
    """ "expected OUTCOME" for a run that did not end as its scenario expects, naming the
    scenario's own values when the run had others: the expectation holds for those, and a race
    may end otherwise at other sizes."""
    return f"expected {expected}" + (" with the scenario's own values" if other_values else "")


#: parameters of the restart, on top of the topology's own
RESTORE_PARAMETERS = (
    Parameter(
        "new_parallelism",
        0,
        "parallelism of every non-source operator after the restart (0: unchanged)",
        minimum=0,
        maximum=MAX_JOB_PARALLELISM,
    ),
    Parameter(
        "new_job_parallelism",
        0,
        "restart the whole job at this parallelism: every operator gets the parallelism the "
        "topology gives it for this p (0: unchanged; ITCase style)",
        minimum=0,
        maximum=MAX_JOB_PARALLELISM,
    ),
    Parameter(
        "new_source_parallelism",
        0,
        "parallelism of the sources after the restart (0: unchanged); their splits are dealt "
        "out anew",
        minimum=0,
        maximum=MAX_JOB_PARALLELISM,
    ),
    Parameter(
        "recover_output_on_downstream",
        False,
        RECOVER_OUTPUT_ON_DOWNSTREAM_KEY,
        flink_key=RECOVER_OUTPUT_ON_DOWNSTREAM_KEY,
    ),
    Parameter(
        "restart_aligned",
        False,
        "the restarted job takes aligned checkpoints: it restores the unaligned checkpoint "
        "with execution.checkpointing.unaligned.enabled=false, as Flink allows",
    ),
    Parameter(
        "then_parallelism",
        0,
        "restart once more, every non-source operator at this parallelism, from the first "
        "checkpoint the restarted job completes (0: no third phase; FLIP-547's 1 -> 10 -> 1)",
        minimum=0,
        maximum=MAX_JOB_PARALLELISM,
    ),
    Parameter(
        "then_source_parallelism",
        0,
        "restart once more, the sources at this parallelism (their splits dealt out anew), from "
        "the first checkpoint the restarted job completes (0: unchanged)",
        minimum=0,
        maximum=MAX_JOB_PARALLELISM,
    ),
    Parameter(
        "restart_checkpoint_interval",
        0,
        "checkpoint interval of the restarted job in steps (0: checkpoint_interval)",
        minimum=0,
        maximum=10_000_000,
    ),
)


#: a Flink issue's id as a scenario names it
_FLINK_ISSUE = re.compile(r"\bFLINK-(\d+)\b")


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    explanation: str
    topology: str
    parameters: Mapping[str, object]
    expected: Outcome
    reference: str
    matters: tuple[str, ...]
    #: operator -> parallelism after the restart, beyond new_parallelism
    rescale: Mapping[str, int] = field(default_factory=dict)
    #: bugs re-introduced into the restarted job: the broken variant a fix prevents, for the
    #: invariants to catch
    faults: frozenset[Fault] = frozenset()

    @property
    def bugs(self) -> tuple[str, ...]:
        """The Flink issues its title and reference name (``FLINK-NNNNN``), each once, in
        the order they are named.

        Examples
        --------
        >>> from flinkstate.catalogue.scenarios import get_scenario
        >>> get_scenario("custom-partitioner-input-kept").bugs
        ('FLINK-35351',)
        """
        named = _FLINK_ISSUE.findall(f"{self.title} {self.reference}")
        return tuple(dict.fromkeys(f"FLINK-{number}" for number in named))

    def by_name(self, overrides: Mapping[str, object]) -> dict[str, object]:
        """``overrides`` keyed by parameter names, Flink's keys renamed (``by_name``)."""
        return by_name(overrides, (*RESTORE_PARAMETERS, *topology(self.topology).parameters))

    def resolve(self, overrides: Mapping[str, object] | None = None) -> dict[str, Any]:
        """The scenario's parameters with the user's overrides, each checked."""
        item = topology(self.topology)
        merged = {**self.parameters, **self.by_name(overrides or {})}
        restore = {p.name: p for p in RESTORE_PARAMETERS}
        values: dict[str, Any] = {p.name: p.default for p in RESTORE_PARAMETERS}
        job = {k: v for k, v in merged.items() if k not in restore}
        values.update(item.resolve(job))
        for name, raw in merged.items():
            if name in restore:
                values[name] = restore[name].parse(raw)
        return values
