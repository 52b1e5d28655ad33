"""What the lessons (the notebooks in ``notebooks/``) use, in one place.

A notebook imports from here only (``from flinkstate.lessons import RecoveryStepper,
run_scenario``), so that moving a module inside the package changes this table, not the
lessons. A name is imported when first used: a lesson about key groups does not start Spark or
load the simulator.

Examples
--------
>>> from flinkstate.lessons import key_group_ranges
>>> key_group_ranges(128, 3)[0]
KeyGroupRange(start=0, end=42)
>>> "RecoveryStepper" in __all__
True
"""

from __future__ import annotations

from flinkstate.face import lazy_face

#: each name the lessons use, and the module that defines it
WHERE: dict[str, str] = {
    # Scenarios and runs
    "SCENARIOS": "flinkstate.catalogue.scenarios",
    "get_scenario": "flinkstate.catalogue.scenarios",
    "exploration_subject": "flinkstate.lab.counterexample",
    "prepare_forecast": "flinkstate.lab.forecast",
    "run_forecast": "flinkstate.lab.forecast",
    "prepare_scenario": "flinkstate.lab.scenario_run",
    "run_scenario": "flinkstate.lab.scenario_run",
    "what_if": "flinkstate.lab.whatif",
    "explore": "flinkstate.sim.explore",
    # Widgets
    "CheckpointRescaler": "flinkstate.widgets.checkpoint_rescaler",
    "ComparisonPanel": "flinkstate.widgets.comparison",
    "Exercise": "flinkstate.widgets.exercise",
    "InterleavingExplorer": "flinkstate.widgets.interleaving_explorer",
    "RecoveryStepper": "flinkstate.widgets.recovery_stepper",
    "RescaleExplorer": "flinkstate.widgets.rescale_explorer",
    "TourWidget": "flinkstate.widgets.tour",
    # Figures and tours
    "in_flight_figure": "flinkstate.views.checkpoint_files",
    "key_group_figure": "flinkstate.views.checkpoint_files",
    "records_figure": "flinkstate.views.checkpoint_files",
    "deadlock_figure": "flinkstate.views.deadlock",
    "ownership_figure": "flinkstate.views.ownership",
    "owner_timeline_figure": "flinkstate.views.recovery",
    "whatif_figure": "flinkstate.views.recovery",
    "trigger_figure": "flinkstate.views.recovery_trigger",
    "trigger_history": "flinkstate.views.recovery_trigger",
    "trigger_table": "flinkstate.views.recovery_trigger",
    "key_group_ownership_figure": "flinkstate.views.rescaling",
    "state_reading_figure": "flinkstate.views.rescaling",
    "Timelines": "flinkstate.views.timelines",
    "event_time_figure": "flinkstate.views.timelines",
    "timelines_figure": "flinkstate.views.timelines",
    "TOURS": "flinkstate.views.tours",
    "get_tour": "flinkstate.views.tours",
    "locate": "flinkstate.views.tours",
    # Key groups and rescaling
    "assign_to_key_group": "flinkstate.keygroups",
    "check_parallelism_against_max": "flinkstate.keygroups",
    "key_group_ranges": "flinkstate.keygroups",
    "place_key": "flinkstate.keygroups",
    "SubtaskStateMapper": "flinkstate.rescale",
    "rescale_exchange": "flinkstate.rescale",
    # Checkpoints Flink wrote, and datasets
    "write_dataset": "flinkstate.dataset",
    "REAL_CHECKPOINTS": "flinkstate.flinkcheckpoint",
    "real_checkpoint": "flinkstate.flinkcheckpoint",
    "read_channel": "flinkstate.flinkcheckpoint.channel_state_file",
    "ExchangeSpec": "flinkstate.flinkcheckpoint.export",
    "to_dataset": "flinkstate.flinkcheckpoint.export",
    "StateFiles": "flinkstate.flinkcheckpoint.files",
    "logical_channels": "flinkstate.flinkcheckpoint.inflight",
    "read_records": "flinkstate.flinkcheckpoint.inflight",
    "key_function": "flinkstate.flinkcheckpoint.key_selector",
    "keyed_entries": "flinkstate.flinkcheckpoint.keyed_state",
    "read_keyed_state": "flinkstate.flinkcheckpoint.keyed_state",
    "read_metadata": "flinkstate.flinkcheckpoint.metadata",
    "value_decoder": "flinkstate.flinkcheckpoint.stream_element",
    "summarize": "flinkstate.flinkcheckpoint.summary",
    "SAMPLES": "flinkstate.samples",
    "sample_path": "flinkstate.samples",
    "spark_session": "flinkstate.spark.session",
    # Constants and values the lessons name
    "FlinkstateError": "flinkstate.errors",
    "LENGTH_PREFIX_BYTES": "flinkstate.memory_segment",
    "MIN_WATERMARK": "flinkstate.runtime.buffer.records",
    "SEGMENT_HEADER_BYTES": "flinkstate.runtime.checkpoint.channel.fetched_channel_state",
    "RecoveryCheckpointTrigger": "flinkstate.runtime.options",
    "watermark_text": "flinkstate.runtime.watermark.watermarks",
}

__all__ = sorted(WHERE)

__getattr__, __dir__ = lazy_face(__name__, WHERE, relative_to="")
