"""The named recovery scenarios: data only (what each runs and expects, and where in Flink it
comes from). The value type is :class:`~flinkstate.catalogue.scenario.Scenario`; running one is
:func:`~flinkstate.lab.scenario_run.run_scenario`.

Each family of scenarios is a module of this package, most of them pairs before and after a
fix in Flink; the catalogue lists them family by family, in the order they are taught.
"""

from __future__ import annotations

from flinkstate.catalogue.scenario import Scenario
from flinkstate.catalogue.scenarios import (
    alignment_timeout,
    blocked_subpartition,
    checkpoint_declined_until_recovered,
    checkpoint_during_recovery,
    custom_partitioner,
    failover,
    filtering_on_read,
    flip_547,
    gate_mappings,
    in_flight_capture,
    recovered_channels,
    recovered_watermarks,
    recovery_error,
    refused,
    rescale_itcase,
    restart,
    restore_order,
    same_upstream,
    selective_reading,
    stateless_operator,
)
from flinkstate.errors import InvalidParameterError

SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        *restart.SCENARIOS,
        *rescale_itcase.SCENARIOS,
        *blocked_subpartition.SCENARIOS,
        *filtering_on_read.SCENARIOS,
        *selective_reading.SCENARIOS,
        *same_upstream.SCENARIOS,
        *custom_partitioner.SCENARIOS,
        *checkpoint_during_recovery.SCENARIOS,
        *recovered_watermarks.SCENARIOS,
        *failover.SCENARIOS,
        *flip_547.SCENARIOS,
        *refused.SCENARIOS,
        *in_flight_capture.SCENARIOS,
        *stateless_operator.SCENARIOS,
        *gate_mappings.SCENARIOS,
        *recovered_channels.SCENARIOS,
        *checkpoint_declined_until_recovered.SCENARIOS,
        *restore_order.SCENARIOS,
        *recovery_error.SCENARIOS,
        *alignment_timeout.SCENARIOS,
    )
}


def get_scenario(name: str) -> Scenario:
    try:
        return SCENARIOS[name]
    except KeyError:
        raise InvalidParameterError(
            f"unknown scenario {name!r}; known: {', '.join(sorted(SCENARIOS))}"
        ) from None


def scenarios_of_bug(bug: str) -> list[Scenario]:
    """The scenarios whose title or reference names Flink issue ``bug`` (``FLINK-35351``,
    ``flink-35351`` or ``35351``), in the catalogue's order: a fix's before and after.

    Examples
    --------
    >>> [s.name for s in scenarios_of_bug("flink-35351")]
    ['custom-partitioner-input-kept', 'custom-partitioner-input-split', \
'custom-partitioner-input-still-kept']
    >>> scenarios_of_bug("FLINK-1")
    Traceback (most recent call last):
    ...
    flinkstate.errors.InvalidParameterError: no scenario names FLINK-1; the bugs the catalogue \
names: ...
    """
    said = bug.strip().upper()
    number = said.removeprefix("FLINK-")
    if not (number.isascii() and number.isdigit()):
        raise InvalidParameterError(
            f"{bug!r} is not a Flink issue: write it as FLINK-NNNNN (or its number)"
        )
    wanted = f"FLINK-{int(number)}"
    found = [s for s in SCENARIOS.values() if wanted in s.bugs]
    if not found:
        named = sorted({b for s in SCENARIOS.values() for b in s.bugs}, key=_issue_number)
        raise InvalidParameterError(
            f"no scenario names {wanted}; the bugs the catalogue names: {', '.join(named)}"
        )
    return found


def _issue_number(bug: str) -> int:
    return int(bug.removeprefix("FLINK-"))
