"""The canvas's scene of a job with watermarks: watermark pieces and each task's watermark."""

from __future__ import annotations

import pytest

from flinkstate.catalogue.topologies import topology
from flinkstate.sim import Simulation, make_scheduler
from flinkstate.views.scene import build_scene


@pytest.mark.slow
def test_watermarks_are_labelled_pieces_and_tasks_show_their_watermark() -> None:
    sim = Simulation(
        lambda: topology("keyed").build({"records": 20, "watermark_interval": 2}),
        make_scheduler("random", 0),
    )
    labels: set[str] = set()
    marks: set[str] = set()
    for _ in range(400):
        if sim.step() is None:
            break
        scene = build_scene(sim.model)
        assert scene["event_time"] is True
        for item in scene["items"]:
            for piece in item.get("pieces", ()):
                if len(piece) > 7:
                    labels.add(piece[7])
                    assert piece[4] == piece[5] == -1  # no source colour or key group
        marks |= {p["watermark"] for p in scene["places"] if "watermark" in p}
    assert any(label.startswith("watermark ") for label in labels)
    assert "none" in marks
    assert any(m.isdigit() for m in marks)


def test_a_job_without_watermarks_draws_as_before() -> None:
    world = topology("keyed").build({"records": 4})
    scene = build_scene(world)
    assert "event_time" not in scene
    assert all("watermark" not in p for p in scene["places"])
