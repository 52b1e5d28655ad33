"""What the scenarios of a pair share: everything but the setting the pair is about."""

from __future__ import annotations

from flinkstate.lab.scenario_run import run_scenario


def differ_only_in(before: str, after: str, name: str) -> None:
    one = run_scenario(before, seed=0).values
    other = run_scenario(after, seed=0).values
    assert {k: v for k, v in one.items() if k != name} == {
        k: v for k, v in other.items() if k != name
    }
    assert one[name] != other[name]


#: the ITCase's other recovery settings, under which a rescaling pair must hold as well: output
#: state recovered downstream, alone and with checkpoints during recovery under V1 and V2
OUTPUT_DOWNSTREAM_EVERY_GENERATION: list[dict[str, object]] = [
    {"recover_output_on_downstream": True},
    {
        "recover_output_on_downstream": True,
        "checkpointing_during_recovery": True,
        "generation": "v1",
    },
    {
        "recover_output_on_downstream": True,
        "checkpointing_during_recovery": True,
        "generation": "v2",
    },
]
