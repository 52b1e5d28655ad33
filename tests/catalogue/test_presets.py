from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from flinkstate.catalogue.presets import (
    LARGE_PARALLELISM,
    MAX_BUFFER_DOUBLINGS,
    PARALLELISM_PARAMETERS,
    Preset,
    fit_network_buffers,
    preset_values,
    scenario_preset,
    topology_preset,
    with_preset,
)
from flinkstate.catalogue.scenario import Outcome
from flinkstate.catalogue.scenarios import SCENARIOS, get_scenario
from flinkstate.catalogue.topologies import topology
from flinkstate.cli import main
from flinkstate.errors import InvalidParameterError
from flinkstate.lab.scenario_run import no_checkpoint_message, run_scenario
from flinkstate.lab.scenario_trace import load_scenario_trace
from flinkstate.runtime.options import CheckpointFailure, CheckpointFailureReason


def test_large_keeps_the_scenarios_shape() -> None:
    # 7 -> 3 from 4 sources: x9 keeps a non-divisible downscale non-divisible
    preset = scenario_preset("large", get_scenario("keyed-downscale"))
    assert preset.factor == 9
    assert preset.values == {
        "source_parallelism": 36,
        "parallelism": 63,
        "new_parallelism": 27,
        "checkpoint_interval": 1800,
        "slots_per_tm": 4,
        "network_buffers": 2048 * 4,
    }


def test_large_scales_every_phase_and_leaves_unchanged_parameters_zero() -> None:
    # 1 -> 10 -> 1: the third phase scales with the rest; 0 (unchanged) stays 0
    preset = scenario_preset("large", get_scenario("flip-547-rescale-cycle"))
    assert preset.factor == LARGE_PARALLELISM // 10
    assert preset.values["parallelism"] == 6
    assert preset.values["new_parallelism"] == 60
    assert preset.values["then_parallelism"] == 6
    assert preset.values["restart_checkpoint_interval"] == 40 * 6
    assert "new_source_parallelism" not in preset.values
    assert "checkpoint_timeout" not in preset.values


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_large_never_exceeds_its_parallelism_or_the_max_parallelism(name: str) -> None:
    item = get_scenario(name)
    preset = scenario_preset(Preset.LARGE, item)
    scaled = [preset.values.get(n, 0) for n in PARALLELISM_PARAMETERS]
    assert 0 < max(scaled) <= LARGE_PARALLELISM
    # the scenario resolves with the preset: every value is in its parameter's range
    resolved = item.resolve(preset.values)
    if "max_parallelism" in resolved:
        assert max(scaled) <= resolved["max_parallelism"]
    # the widest operator of the job, and of the whole job restarted, stays within the bound
    job = topology(item.topology)
    own = {p.name for p in job.parameters}
    values = {k: v for k, v in resolved.items() if k in own}
    widths = [values] + (
        [{**values, "parallelism": resolved["new_job_parallelism"]}]
        if resolved.get("new_job_parallelism")
        else []
    )
    for phase in widths:
        assert max(op.parallelism for op in job.graph(phase).operators) <= LARGE_PARALLELISM


def test_jobs_wider_than_their_parallelism_scale_less() -> None:
    # the ITCase jobs run their upscaling map at twice the parallelism: 2 -> 3 becomes 20 -> 30
    preset = scenario_preset("large", get_scenario("itcase-union-2-to-3"))
    assert preset.factor == 10
    assert preset.values["parallelism"] == 20
    assert preset.values["new_job_parallelism"] == 30
    assert topology_preset("large", topology("keyed")).factor == 16


def test_max_parallelism_rises_with_the_parallelism_where_it_must() -> None:
    item = topology("keyed")
    values = item.resolve({"max_parallelism": 32, "parallelism": 4, "source_parallelism": 2})
    preset = preset_values("large", values)
    assert preset.factor == 16
    assert preset.values["parallelism"] == 64
    assert preset.values["max_parallelism"] == 32 * 16


def test_the_users_values_win_over_the_preset() -> None:
    preset = scenario_preset("large", get_scenario("keyed-upscale"))
    merged = with_preset(preset, {"new_parallelism": 5, "records": 10})
    assert merged["new_parallelism"] == 5
    assert merged["records"] == 10
    assert merged["parallelism"] == preset.values["parallelism"]
    assert with_preset(None, {"records": 10}) == {"records": 10}


def test_an_unknown_preset_names_the_known_ones() -> None:
    with pytest.raises(InvalidParameterError, match="unknown preset 'huge'; choose large"):
        preset_values("huge", {"parallelism": 4})


def test_a_job_without_a_parallelism_is_refused() -> None:
    with pytest.raises(InvalidParameterError, match="no parallelism parameter"):
        preset_values("large", {"records": 4})


@pytest.mark.slow
def test_run_with_the_large_preset_says_what_it_changed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    trace = tmp_path / "large.jsonl"
    args = ["run", "keyed-downscale", "--preset", "large", "--set", "records=20"]
    code = main([*args, "--trace", str(trace)])
    out = capsys.readouterr().out
    assert code == 0
    lines = out.splitlines()
    assert lines[1] == (
        "  keyBy exchange rescaled 7 -> 3 "
        "(UnalignedCheckpointRescaleITCase (downscale); StateAssignmentOperationTest)"
    )
    assert lines[2].startswith("  preset large: parallelism and steps x9 (source_parallelism=36")
    assert lines[3] == "  beyond the preset, this run differs from the scenario: records=20"
    assert "restart: counter 63 -> 27, sink 63 -> 27" in out
    # the trace holds the values the preset chose: it replays without the preset
    loaded = load_scenario_trace(trace)
    assert loaded.overrides["parallelism"] == 63
    assert loaded.run.values["new_parallelism"] == 27
    code = main([*args, "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert summary["preset"] == "large"
    assert summary["differs_from_scenario"]["new_parallelism"] == 27


@pytest.mark.slow
def test_run_a_topology_with_the_large_preset(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "keyed", "--preset", "large", "--set", "records=2", "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0
    assert summary["preset"] == "large"
    assert summary["status"] == "finished"
    assert summary["records_emitted_by_sources"] == 2 * 64


def test_a_run_with_overrides_says_its_figures_are_not_the_titles(
    capsys: pytest.CaptureFixture[str],
) -> None:
    main(["run", "keyed-upscale", "--set", "new_parallelism=5", "--set", "records=10"])
    out = capsys.readouterr().out.splitlines()
    assert out[2] == "  this run differs from the scenario: new_parallelism=5, records=10"
    main(["run", "keyed-upscale", "--set", "new_parallelism=7", "--set", "records=120"])
    out = capsys.readouterr().out.splitlines()
    assert not any("differs" in line for line in out)


def test_a_bad_preset_on_the_command_line_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "keyed-upscale", "--preset", "huge"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "flinkstate: error: unknown preset 'huge'; choose large"


def test_the_network_buffers_double_until_the_job_fits() -> None:
    preset = scenario_preset("large", get_scenario("keyed-upscale"))
    tried: list[object] = []

    def attempt(values: Mapping[str, object]) -> bool:
        tried.append(values["network_buffers"])
        return int(str(values["network_buffers"])) >= 30_000  # fits from 32768 on

    fits, fitted, merged = fit_network_buffers(attempt, preset, {"records": 3}, lambda ok: not ok)
    assert fits
    assert tried == [8192, 16384, 32768]
    assert merged["network_buffers"] == 32768
    assert merged["records"] == 3
    assert fitted.raised_from == 8192
    assert fitted.describe().endswith("network buffers raised from 8192: the gates needed more")


def test_the_doubling_stops_and_never_overrules_the_user() -> None:
    preset = scenario_preset("large", get_scenario("keyed-upscale"))
    tried: list[object] = []

    def never(values: Mapping[str, object]) -> bool:
        tried.append(values["network_buffers"])
        return False

    fits, fitted, _ = fit_network_buffers(never, preset, {}, lambda ok: not ok)
    assert not fits
    assert len(tried) == MAX_BUFFER_DOUBLINGS + 1
    assert tried[-1] == 8192 * 2**MAX_BUFFER_DOUBLINGS
    tried.clear()
    fits, fitted, _ = fit_network_buffers(
        never, preset, {"network_buffers": 100}, lambda ok: not ok
    )
    assert tried == [100]
    assert fitted.raised_from is None


def test_the_checkpoint_timeout_grows_faster_than_the_parallelism() -> None:
    # keyed 4 -> 64: x16 for parallelism and intervals, x64 for the timeout (its barriers cross
    # 16 x 16 times the channels; the first checkpoint takes 55 times the steps)
    preset = scenario_preset("large", get_scenario("barrier-held-by-blocked-subpartition"))
    assert preset.factor == 16
    assert preset.values["checkpoint_interval"] == 200 * 16
    assert preset.values["checkpoint_timeout"] == 600 * 64
    assert "checkpoint timeout x64" in preset.describe()


@pytest.mark.slow
def test_a_held_barrier_still_expires_at_the_large_size() -> None:
    # the hazard keeps its outcome at 64 x 64; with the timeout scaled like the intervals the
    # job's own first checkpoint expired, and the run said why and what to change
    run = run_scenario(
        "barrier-held-by-blocked-subpartition",
        overrides=scenario_preset(
            "large", get_scenario("barrier-held-by-blocked-subpartition")
        ).values,
    )
    assert run.outcome is Outcome.JOB_FAILED
    assert run.as_expected
    short = run_scenario(
        "barrier-held-by-blocked-subpartition",
        overrides={
            **scenario_preset("large", get_scenario("barrier-held-by-blocked-subpartition")).values,
            "checkpoint_timeout": 600 * 16,
        },
    )
    assert short.outcome is Outcome.NO_CHECKPOINT
    assert short.message.startswith(
        "the job completed no checkpoint before it failed over: checkpoint 1 failed at step "
        "13006 (CHECKPOINT_EXPIRED, counted): after 9600 steps"
    )
    assert short.message.endswith("; raise checkpoint_timeout")


def test_no_checkpoint_names_the_first_failure_and_what_to_change() -> None:
    expired = CheckpointFailure(1, CheckpointFailureReason.CHECKPOINT_EXPIRED, 700)
    declined = CheckpointFailure(
        2, CheckpointFailureReason.CHECKPOINT_DECLINED_TASK_NOT_READY, 900, "task counter[0]"
    )
    assert no_checkpoint_message([], "") == (
        "the job completed no checkpoint before it ended; lower checkpoint_interval"
    )
    message = no_checkpoint_message([expired, declined], "too many failures")
    assert message.startswith("the job completed no checkpoint before it failed over: ")
    assert expired.describe() in message
    assert message.endswith(" (and 1 more); raise checkpoint_timeout")
    assert no_checkpoint_message([declined], "").endswith("; see the failure's reason")
