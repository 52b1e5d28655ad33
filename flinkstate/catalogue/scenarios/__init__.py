"""The named recovery scenarios: data only (what each runs and expects, and where in Flink it
comes from). The value type is :class:`~flinkstate.catalogue.scenario.Scenario`; running one is
:func:`~flinkstate.lab.scenario_run.run_scenario`.

Each family of scenarios is a module of this package, most of them pairs before and after a
fix in Flink; the catalogue lists them family by family, in the order they are taught.
"""

from __future__ import annotations

from flinkstate.catalogue.scenario import Scenario
from flinkstate.catalogue.scenarios import (
    blocked_subpartition,
    checkpoint_during_recovery,
    custom_partitioner,
    failover,
    filtering_on_read,
    flip_547,
    gate_mappings,
    recovered_watermarks,
    refused,
    rescale_itcase,
    restart,
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
        *stateless_operator.SCENARIOS,
        *gate_mappings.SCENARIOS,
    )
}


def get_scenario(name: str) -> Scenario:
    try:
        return SCENARIOS[name]
    except KeyError:
        raise InvalidParameterError(
            f"unknown scenario {name!r}; known: {', '.join(sorted(SCENARIOS))}"
        ) from None
