"""Parameters by Flink's keys: a key Flink reads stands for its parameter, one it does not is
refused naming the one it does."""

from __future__ import annotations

from dataclasses import fields

import pytest

from flinkstate.catalogue.parameters import MAX_JOB_PARALLELISM, by_name
from flinkstate.catalogue.topologies import CATALOGUE, topology
from flinkstate.errors import InvalidParameterError
from flinkstate.runtime.options import (
    CHECKPOINTING_DURING_RECOVERY_KEY,
    MISNAMED_DURING_RECOVERY_KEY,
    TOLERABLE_FAILED_CHECKPOINTS_KEY,
    UNALIGNED_KEY,
    RunOptions,
)
from flinkstate.runtime.shuffle.config import NetworkConfig


def test_flinks_keys_stand_for_their_parameters() -> None:
    keyed = topology("keyed")
    values = keyed.resolve(
        {
            UNALIGNED_KEY: "false",
            CHECKPOINTING_DURING_RECOVERY_KEY: "true",
            TOLERABLE_FAILED_CHECKPOINTS_KEY: "3",
            "records": 7,
        }
    )
    assert values["unaligned"] is False
    assert values["checkpointing_during_recovery"] is True
    assert values["tolerable_failed_checkpoints"] == 3
    assert values["records"] == 7


def test_every_flink_key_is_one_parameters() -> None:
    for item in CATALOGUE.values():
        keys = [p.flink_key for p in item.parameters if p.flink_key]
        assert len(keys) == len(set(keys))
        assert all(key.startswith("execution.checkpointing.") for key in keys)


def test_the_release_notes_key_is_refused_naming_the_right_one() -> None:
    with pytest.raises(InvalidParameterError) as refused:
        topology("keyed").resolve({MISNAMED_DURING_RECOVERY_KEY: "true"})
    message = str(refused.value)
    assert message.startswith(f"{MISNAMED_DURING_RECOVERY_KEY} is not a Flink option")
    assert CHECKPOINTING_DURING_RECOVERY_KEY in message
    assert "checkpointing_during_recovery" in message


def test_a_setting_given_by_name_and_by_key_is_refused() -> None:
    parameters = topology("keyed").parameters
    for overrides in (
        {"unaligned": True, UNALIGNED_KEY: False},
        {UNALIGNED_KEY: False, "unaligned": True},
    ):
        with pytest.raises(
            InvalidParameterError, match=f"unaligned is given twice .*{UNALIGNED_KEY}"
        ):
            by_name(overrides, parameters)


def test_a_production_sized_parallelism_is_accepted_and_one_beyond_the_bound_refused() -> None:
    keyed = topology("keyed")
    values = keyed.resolve({"parallelism": 200, "source_parallelism": MAX_JOB_PARALLELISM})
    assert (values["parallelism"], values["source_parallelism"]) == (200, MAX_JOB_PARALLELISM)
    with pytest.raises(InvalidParameterError, match="source_parallelism = 513 is above"):
        keyed.resolve({"source_parallelism": MAX_JOB_PARALLELISM + 1})
    # beyond the key groups: refused in Flink's words once the job is built
    with pytest.raises(InvalidParameterError, match="above max parallelism 128"):
        keyed.build({"parallelism": 200, "source_parallelism": 1})


def test_each_network_and_run_setting_has_one_name() -> None:
    """A topology's parameter, the ``NetworkConfig`` or ``RunOptions`` field it sets, and the
    value the built world runs with: one name all the way."""
    keyed = topology("keyed")
    names = {p.name for p in keyed.parameters}
    assert {f.name for f in fields(NetworkConfig)} <= names
    world = keyed.build({"floating_buffers": 3, "slots_per_tm": 2, "checkpoints": 4})
    assert (world.config.floating_buffers, world.config.slots_per_tm) == (3, 2)
    assert world.options.checkpoints == 4
    run_settings = {f.name for f in fields(RunOptions)} & names
    assert {"checkpoints", "checkpoint_interval", "generation"} <= run_settings
