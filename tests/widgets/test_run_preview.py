"""The preview of a run to its end: the same end as the whole run, however it is sliced, and in
a running event loop a slice per callback."""

from __future__ import annotations

import asyncio

import pytest

from flinkstate.lab.scenario_run import prepare_scenario, run_scenario
from flinkstate.widgets.run_preview import RunPreview

OVERRIDES = {"records": 30}


def test_the_preview_ends_as_the_whole_run_and_leaves_the_run_at_step_zero() -> None:
    whole = run_scenario("keyed-upscale", seed=3, overrides=OVERRIDES)
    assert whole.result is not None
    run = prepare_scenario("keyed-upscale", seed=3, overrides=OVERRIDES)
    preview = RunPreview(run, 200_000)
    end = preview.finish()
    assert end.result == whole.result
    assert end.summary == whole.summary()
    assert preview.steps == end.steps == whole.result.steps > 0
    assert run.simulation is not None
    assert run.simulation.step_count == 0  # the run handed in is not stepped
    assert run.result is None


@pytest.mark.slow
def test_thin_slices_and_a_step_limit_end_as_an_unsliced_run() -> None:
    run = prepare_scenario("baseline-recovery", overrides=OVERRIDES)
    limited = RunPreview(run, 150)
    slices = 0
    while not limited.advance(7):
        slices += 1
    assert slices == 150 // 7  # the last slice, cut to the limit, is the end
    assert limited.end is not None
    whole = prepare_scenario("baseline-recovery", overrides=OVERRIDES)
    assert whole.simulation is not None
    expected = whole.simulation.run(max_steps=150)
    assert limited.end.result == expected  # stopped at the limit, as a whole run stops
    assert limited.advance() is True  # an ended preview stays ended


def test_in_a_running_event_loop_it_steps_a_slice_per_callback_until_its_end() -> None:
    run = prepare_scenario("baseline-recovery", overrides=OVERRIDES)
    seen: list[tuple[int, bool]] = []

    async def preview_in_loop() -> RunPreview:
        preview = RunPreview(run, 200_000)
        preview.start(lambda p: seen.append((p.steps, p.end is not None)))
        assert seen == []  # nothing stepped before the loop runs its callbacks
        while preview.end is None:
            await asyncio.sleep(0)
        return preview

    preview = asyncio.run(preview_in_loop())
    assert preview.end is not None
    assert len(seen) == -(-preview.steps // 1_000)  # one report per slice of 1,000 steps
    assert [s for s, _ in seen] == sorted(s for s, _ in seen)
    assert [ended for _, ended in seen] == [False] * (len(seen) - 1) + [True]


def test_a_cancelled_preview_stops_and_reports_no_more() -> None:
    run = prepare_scenario("baseline-recovery", overrides=OVERRIDES)
    seen: list[int] = []

    async def cancel_after_one_slice() -> RunPreview:
        preview = RunPreview(run, 200_000)

        def progress(p: RunPreview) -> None:
            seen.append(p.steps)
            p.cancel()

        preview.start(progress)
        for _ in range(20):
            await asyncio.sleep(0)
        return preview

    preview = asyncio.run(cancel_after_one_slice())
    assert preview.cancelled
    assert seen == [1_000]
    assert preview.end is None
