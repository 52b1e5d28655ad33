"""Presets: a scenario or a topology at another size, with one word instead of a dozen ``--set``.

The scenarios are small so that every step can be watched. A design reviewer asks what the same
recovery does at a production job's size. The ``large`` preset answers with the same job, not
another one: every parallelism of the scenario (before the restart, after it, in a third phase)
is multiplied by one factor, the largest that keeps every operator at most
:data:`LARGE_PARALLELISM` (the ITCase jobs run one operator at twice their parallelism), so an
upscale stays an upscale and a non-divisible rescale stays non-divisible (7 -> 3 becomes
63 -> 27). The parameters counted in steps (checkpoint interval, timeout, restart delay) are
multiplied by the same factor: a step is one action of one actor, and with ``factor`` times as
many actors each subtask needs ``factor`` times as many steps to be as far along when the
checkpoint is taken. The checkpoint timeout grows faster (``factor`` to the power
:data:`TIMEOUT_EXPONENT`): a checkpoint's barriers cross every channel of an all-to-all
exchange, whose channels grow with the square of the parallelism, while the scheduler
interleaves every actor's actions. Measured on ``keyed`` (4 -> 64 sources and counters, 20 ->
4,160 channels), the first checkpoint took 347 steps and 18,947 steps (x55, between ``factor``
and its square): x16 would expire it at 9,600 steps, so that the scenarios waiting for a
checkpoint ended with none; x64 (``factor`` ** 1.5) keeps the timeout about as far above a
checkpoint's duration as the scenario's own (600 steps against 347) and still expires the
barriers that the hazards hold (not every race of a scenario keeps its outcome at another size:
at 64 x 64 the FLINK-39018 fix's checkpoint during recovery outlasts the timeout too, and the
aligned checkpoint of FLINK-40518 is never triggered before the restored job ends; in
FLINK-40482's failover another source has finished by the time the failed region is down, and
the checkpoint asked for then would trigger a sink, which the model cannot do: the run's report
says so).

TaskManagers get :data:`LARGE_SLOTS_PER_TM` slots where the scenario keeps one, as production
clusters run several slots per TaskManager (and a job of 64 one-slot TaskManagers would read
every channel remotely), each with the network buffers of four (network memory is a share of a
TaskManager's memory, which grows with its slots). Records per source, the other buffer
settings and the scenario's switches stay as they are.

A job whose gates grow with its parallelism (a union of many inputs, each all-to-all) may need
more network buffers at that size than four slots' share; Flink then refuses it, and its users
give the TaskManagers more network memory. :func:`fit_network_buffers` does the same: it doubles
the preset's network buffers until the job is set up (a few times at most), and the report says
so. A ``--set`` given with a preset wins over it: the preset is the starting point, the user's
values the last word (network buffers set by the user are never raised).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from flinkstate.catalogue.scenario import Scenario
from flinkstate.catalogue.topologies import topology
from flinkstate.catalogue.topology import Topology
from flinkstate.choice import Choice
from flinkstate.errors import InvalidParameterError

#: the largest parallelism of a scenario under the ``large`` preset: a production job's
LARGE_PARALLELISM = 64
#: slots per TaskManager under the ``large`` preset where the scenario keeps the default one
LARGE_SLOTS_PER_TM = 4
#: how many times :func:`fit_network_buffers` doubles the network buffers before it gives up
MAX_BUFFER_DOUBLINGS = 4
#: the parameters that are a parallelism (0 where it means "unchanged": left 0)
PARALLELISM_PARAMETERS = (
    "source_parallelism",
    "parallelism",
    "new_parallelism",
    "new_job_parallelism",
    "new_source_parallelism",
    "then_parallelism",
    "then_source_parallelism",
)
#: the parameters counted in steps (0 where it means "none" or "as the other": left 0)
STEP_PARAMETERS = (
    "checkpoint_interval",
    "restart_checkpoint_interval",
    "checkpoint_timeout",
    "restart_delay",
)
#: the checkpoint timeout is multiplied by the factor to this power (a checkpoint's barriers
#: cross a number of channels that grows with the square of the parallelism; see above)
TIMEOUT_EXPONENT = 1.5
#: the step parameters scaled by that power instead of the factor
TIMEOUT_PARAMETERS = ("checkpoint_timeout",)


class Preset(Choice):
    """A named size for a scenario or a topology."""

    LARGE = "large"


@dataclass(frozen=True)
class PresetValues:
    """The parameters a preset sets for one scenario or topology, and by what factor."""

    preset: Preset
    factor: int
    values: Mapping[str, Any]
    #: the network buffers the preset started from, where the job needed more
    #: (:func:`fit_network_buffers`)
    raised_from: int | None = None

    def describe(self) -> str:
        """One line for a run's report: what the preset changed."""
        changed = ", ".join(f"{name}={value}" for name, value in self.values.items())
        raised = (
            ""
            if self.raised_from is None
            else f"; network buffers raised from {self.raised_from}: the gates needed more"
        )
        scaled = f"parallelism and steps x{self.factor}"
        if any(name in self.values for name in TIMEOUT_PARAMETERS):
            scaled += f", checkpoint timeout x{round(self.factor**TIMEOUT_EXPONENT)}"
        return f"preset {self.preset.value}: {scaled} ({changed}){raised}"


def scenario_preset(preset: Preset | str, item: Scenario) -> PresetValues:
    """What ``preset`` sets for a scenario (before the user's overrides)."""
    values = item.resolve()
    return preset_values(preset, values, _width(topology(item.topology), values))


def topology_preset(preset: Preset | str, item: Topology) -> PresetValues:
    """What ``preset`` sets for a topology's fresh run (before the user's overrides)."""
    values = item.resolve()
    return preset_values(preset, values, _width(item, values))


def _width(item: Topology, values: Mapping[str, Any]) -> float:
    """How much wider than its parallelism parameters the job runs: its largest operator's
    parallelism over the largest of them (2 for the ITCase jobs' upscaling map, 1 mostly)."""
    own = {p.name for p in item.parameters}
    job = {k: v for k, v in values.items() if k in own}
    largest = max((int(job[n]) for n in PARALLELISM_PARAMETERS if job.get(n)), default=0)
    widest = max(op.parallelism for op in item.graph(job).operators)
    return max(1.0, widest / largest) if largest else 1.0


def preset_values(
    preset: Preset | str, values: Mapping[str, Any], width: float = 1.0
) -> PresetValues:
    """What ``preset`` sets, given a scenario's or a topology's resolved parameter ``values``
    (its own, before the user's overrides) and how much wider its widest operator runs than
    its largest parallelism parameter (``width``): only parameters it has."""
    chosen = Preset.parse(preset)
    parallelisms = [int(values[n]) for n in PARALLELISM_PARAMETERS if values.get(n)]
    if not parallelisms:
        raise InvalidParameterError(
            f"preset {chosen.value} scales parallelism, and this job has no parallelism parameter"
        )
    factor = max(1, LARGE_PARALLELISM // math.ceil(max(parallelisms) * width))
    changed: dict[str, Any] = {}
    timeout_factor = round(factor**TIMEOUT_EXPONENT)
    for name in (*PARALLELISM_PARAMETERS, *STEP_PARAMETERS):
        value = values.get(name)
        if value:  # 0: unchanged, none, or the same as another parameter
            scale = timeout_factor if name in TIMEOUT_PARAMETERS else factor
            changed[name] = int(value) * scale
    if values.get("slots_per_tm") == 1:
        changed["slots_per_tm"] = LARGE_SLOTS_PER_TM
        if values.get("network_buffers"):
            # a TaskManager with four slots has four slots' memory: each slot keeps its share
            changed["network_buffers"] = int(values["network_buffers"]) * LARGE_SLOTS_PER_TM
    largest = max(int(changed.get(n, 0)) for n in PARALLELISM_PARAMETERS)
    max_parallelism = values.get("max_parallelism")
    if max_parallelism is not None and largest > int(max_parallelism):
        # Flink refuses a parallelism above the max parallelism; keep the key groups per
        # subtask as they were by scaling both
        changed["max_parallelism"] = int(max_parallelism) * factor
    return PresetValues(chosen, factor, changed)


def with_preset(preset: PresetValues | None, overrides: Mapping[str, object]) -> dict[str, object]:
    """The overrides a run gets: the preset's values, then the user's (``overrides``, by
    parameter name), which win."""
    if preset is None:
        return dict(overrides)
    return {**preset.values, **overrides}


_T = TypeVar("_T")


def fit_network_buffers(
    attempt: Callable[[Mapping[str, object]], _T],
    preset: PresetValues,
    overrides: Mapping[str, object],
    short_of_buffers: Callable[[_T], bool],
) -> tuple[_T, PresetValues, dict[str, object]]:
    """``attempt(with_preset(preset, overrides))``, and where Flink refused it for too few
    network buffers (``short_of_buffers`` of what it gave), again with the preset's network
    buffers doubled, at most :data:`MAX_BUFFER_DOUBLINGS` times. Returns what the last attempt
    gave, the preset as it ended and the overrides it ran with. Where the user set the network
    buffers, or the preset sets none, the first answer stands."""
    start = int(preset.values.get("network_buffers", 0))
    fixed = not start or "network_buffers" in overrides
    fitted, doublings = preset, 0
    while True:
        merged = with_preset(fitted, overrides)
        result = attempt(merged)
        if fixed or doublings == MAX_BUFFER_DOUBLINGS or not short_of_buffers(result):
            return result, fitted, merged
        doublings += 1
        fitted = replace(
            fitted,
            values={**fitted.values, "network_buffers": start * 2**doublings},
            raised_from=start,
        )
