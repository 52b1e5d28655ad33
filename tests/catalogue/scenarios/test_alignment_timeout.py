"""An aligned checkpoint that times out into an unaligned one, restored with every record
processed once; the same job with a timeout that never elapses checkpoints aligned."""

from __future__ import annotations

from flinkstate.catalogue.scenario import Outcome
from flinkstate.lab.scenario_run import run_scenario

TIMED_OUT = "alignment-timeout-unaligned"


def test_the_timeout_turns_the_checkpoint_unaligned_and_exactly_once_holds() -> None:
    """Over many schedules the checkpoint completes unaligned, with channel state (the data
    its priority barriers overtook, the in-flight data of the channels still to align), and
    the restarted job processes every record once."""
    for seed in range(20):
        run = run_scenario(TIMED_OUT, seed=seed)
        assert run.outcome is Outcome.RECOVERED, (seed, run.message)
        checkpoint = run.checkpoint
        assert checkpoint is not None
        assert checkpoint.unaligned
        assert checkpoint.input_channel_state or checkpoint.result_subpartition_state


def test_a_checkpoint_within_its_timeout_stays_aligned() -> None:
    for seed in range(20):
        run = run_scenario(TIMED_OUT, seed=seed, overrides={"aligned_checkpoint_timeout": 10_000})
        assert run.outcome is Outcome.RECOVERED, (seed, run.message)
        checkpoint = run.checkpoint
        assert checkpoint is not None
        assert not checkpoint.unaligned
        assert not checkpoint.input_channel_state
        assert not checkpoint.result_subpartition_state
