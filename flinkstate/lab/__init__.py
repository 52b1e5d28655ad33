"""Running the model for people: scenario traces, what-if sweeps, forecasts from real
checkpoints, counterexamples from the explorer, and the traces of topologies."""

from __future__ import annotations

from flinkstate.face import lazy_face

#: the package's face: each name other packages (and the lessons) use, by the module of the
#: package that defines it, loaded on first use (``flinkstate.face``; ``tests/test_faces.py``
#: holds every import from another package to it)
FACE: dict[str, str] = {
    "BugReplay": "bug_history",
    "ScenarioVerdict": "bug_history",
    "replay": "bug_history",
    "replay_all": "bug_history",
    "COUNTEREXAMPLES": "counterexample",
    "DEFAULT_MAX_STATES": "counterexample",
    "exploration_subject": "counterexample",
    "ExplorationSubject": "counterexample",
    "failing_step": "counterexample",
    "is_trace_folder": "counterexample",
    "seconds_bound": "counterexample",
    "SubjectKind": "counterexample",
    "trace_file_names": "counterexample",
    "whole_bound": "counterexample",
    "write_counterexamples": "counterexample",
    "Forecast": "forecast",
    "prepare_forecast": "forecast",
    "run_forecast": "forecast",
    "NewParallelism": "new_parallelism",
    "job_segment_size": "real_checkpoint",
    "PHASES": "scenario_run",
    "prepare_scenario": "scenario_run",
    "run_scenario": "scenario_run",
    "ScenarioRun": "scenario_run",
    "load_scenario_trace": "scenario_trace",
    "write_scenario_trace": "scenario_trace",
    "from_simulation": "simulation_export",
    "explore_on_spark": "spark_exploration",
    "state_digest": "state_digest",
    "explore_swarm": "swarm_search",
    "topology_trace_header": "topology_trace",
    "write_topology_trace": "topology_trace",
    "what_if": "whatif",
}
__all__ = sorted(FACE)
__getattr__, __dir__ = lazy_face(__name__, FACE)
