"""The tour of notebook 8: the explorer's counterexample to FLINK-40482, stop by stop."""

from __future__ import annotations

import json
from pathlib import Path

from flinkstate.views.tours import failed_as_finished_counterexample as tour
from flinkstate.views.tours import get_tour
from flinkstate.views.tours.failed_as_finished_counterexample import counterexample
from tests.views.tours.walk import check_every_stop, follow


def test_every_stop_comes_filled_and_rings_what_is_on_the_canvas() -> None:
    shown = check_every_stop(get_tour("failed-as-finished-counterexample"))
    assert 4 <= len(shown) <= 7
    assert "checkpoint-completeness" in shown[-1].text


def test_the_tour_goes_along_the_explorers_trace() -> None:
    """The stepper follows the counterexample's actions, and the last stop is where it breaks
    the invariant: the trace's end."""
    trace = counterexample()
    widget, shown = follow("failed-as-finished-counterexample")
    assert shown[-1].step == len(trace)
    simulation = widget.stepper.simulation
    assert simulation is not None
    assert tuple(e.action for e in simulation.events) == trace[: len(simulation.events)]


def test_the_tour_explores_the_job_notebook_8_explores() -> None:
    """The tour's trace is the one notebook 8's explorer finds only while both cut the job down
    the same way: its cell that says how is run here and compared."""
    notebook = Path(__file__).parents[3] / "notebooks" / "08-exploring-every-interleaving.ipynb"
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    (setting,) = [c for c in cells if "SMALL = {" in "".join(c["source"])]
    said: dict[str, object] = {"get_scenario": lambda name: type("S", (), {"title": name})()}
    exec("".join(setting["source"]).replace("print(", "str("), said)
    assert said["JOB"] == tour.SCENARIO
    assert said["SMALL"] == dict(tour.SMALL)
    assert "max_states=2_000" in "".join("".join(c["source"]) for c in cells)
    assert tour.MAX_STATES == 2_000
