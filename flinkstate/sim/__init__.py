"""The simulation core: a small, model-agnostic engine in the spirit of SimPy.

A *model* (the world object) holds all mutable state and offers the atomic actions its actors
can take now; a *scheduler* picks one by a seeded policy; the :class:`Simulation` steps, runs,
goes back and replays. Nothing here knows about Flink: the network model plugs in through the
:class:`~flinkstate.sim.core.Model` protocol.
"""

from __future__ import annotations

from flinkstate.face import lazy_face
from flinkstate.sim.action import Action
from flinkstate.sim.core import (
    Event,
    Model,
    Move,
    RunResult,
    RunStatus,
    Simulation,
    Violation,
)
from flinkstate.sim.deadlock import DeadlockReport, Wait, find_deadlock
from flinkstate.sim.scheduler import (
    FixedPriority,
    Recorded,
    RoundRobin,
    Scheduler,
    SeededRandom,
    make_scheduler,
)

#: the rest of the package's face, loaded on first use (``flinkstate.face``): what other
#: packages use beyond the values above (``tests/test_faces.py`` holds them to it)
FACE: dict[str, str] = {
    "SNAPSHOT_EVERY": "core",
    "end_of_run": "core",
    "Node": "deadlock",
    "splitmix64": "scheduler",
    "check_parameters": "trace",
    "check_step": "trace",
    "compare_phase": "trace",
    "different_run": "trace",
    "MAX_LINE_CHARS": "trace",
    "PhaseMarker": "trace",
    "replay_phase": "trace",
    "scan_trace": "trace",
    "SINGLE_PHASE": "trace",
    "TRACE_FORMAT": "trace",
    "TraceError": "trace",
    "TraceHeader": "trace",
    "TraceReader": "trace",
    "write_trace": "trace",
}
__getattr__, __dir__ = lazy_face(__name__, FACE)

__all__ = [
    "Action",
    "DeadlockReport",
    "Event",
    "FixedPriority",
    "Model",
    "Move",
    "Recorded",
    "RoundRobin",
    "RunResult",
    "RunStatus",
    "Scheduler",
    "SeededRandom",
    "Simulation",
    "Violation",
    "Wait",
    "find_deadlock",
    "make_scheduler",
    *FACE,
]
