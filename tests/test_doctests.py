"""The ``Examples`` in the docstrings run, and every public function and class of the modules
below has some.

The examples are documentation that runs: each shows real values (key groups, mappings,
memory sizes, buffer counts, checkpoints read from ``data/``), and the values that come from
Flink are the ones Flink's own jar and tests give (``tests/reference``, ``tests/test_*.py``).
Only these modules run their doctests; ``--doctest-modules`` is not turned on for the package.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
from types import ModuleType

import pytest

#: the modules whose examples run and whose public functions and classes must have them; of the
#: command line, the two modules that compute figures: ``arithmetic`` (``flinkstate keygroup``
#: and ``mapping``) and ``buffers``, not the ones that wire options or render pages
DOCTESTED = (
    "flinkstate.cli.arithmetic",
    "flinkstate.cli.buffers",
    "flinkstate.cli.table",
    "flinkstate.dataset",
    "flinkstate.face",
    "flinkstate.flinkcheckpoint",
    "flinkstate.flinkcheckpoint.channel_rows",
    "flinkstate.flinkcheckpoint.channel_state_file",
    "flinkstate.flinkcheckpoint.datainput",
    "flinkstate.flinkcheckpoint.export",
    "flinkstate.flinkcheckpoint.files",
    "flinkstate.flinkcheckpoint.handles",
    "flinkstate.flinkcheckpoint.inflight",
    "flinkstate.flinkcheckpoint.javaserial",
    "flinkstate.flinkcheckpoint.key_selector",
    "flinkstate.flinkcheckpoint.keyed_state",
    "flinkstate.flinkcheckpoint.metadata",
    "flinkstate.flinkcheckpoint.metadata_writer",
    "flinkstate.flinkcheckpoint.record_columns",
    "flinkstate.flinkcheckpoint.stream_element",
    "flinkstate.flinkcheckpoint.summary",
    "flinkstate.flinkcheckpoint.writer",
    "flinkstate.javahash",
    "flinkstate.keygroups",
    "flinkstate.run_rules",
    "flinkstate.lab.simulation_export",
    "flinkstate.lessons",
    "flinkstate.memory_segment",
    "flinkstate.memory_size",
    "flinkstate.rescale",
    "flinkstate.rescale.channel_selection",
    "flinkstate.rescale.descriptor",
    "flinkstate.rescale.exchange",
    "flinkstate.rescale.mapper",
    "flinkstate.rescale.mappings",
    "flinkstate.rescale.partitioner",
    "flinkstate.rescale.record_filter",
    "flinkstate.rescale.routes",
    "flinkstate.rescale.virtual_channels",
    "flinkstate.runtime.action_kind",
    "flinkstate.runtime.buffer.buffer",
    "flinkstate.runtime.buffer.owners",
    "flinkstate.runtime.buffer.records",
    "flinkstate.runtime.checkpoint.channel.channel_state_reader",
    "flinkstate.runtime.checkpoint.channel.channel_state_writer",
    "flinkstate.runtime.checkpoint.checkpoint",
    "flinkstate.runtime.checkpoint.checkpoint_plan",
    "flinkstate.runtime.checkpoint.coordinator_state",
    "flinkstate.runtime.copying",
    "flinkstate.runtime.events",
    "flinkstate.runtime.execution_state",
    "flinkstate.runtime.failover.failure_handling",
    "flinkstate.runtime.failover.pipelined_region",
    "flinkstate.runtime.happening",
    "flinkstate.runtime.jobgraph",
    "flinkstate.runtime.options",
    "flinkstate.runtime.partition.consumer.deserializer",
    "flinkstate.runtime.shuffle.config",
    "flinkstate.runtime.shuffle.gate_buffers_spec",
    "flinkstate.runtime.shuffle.netty_shuffle_utils",
    "flinkstate.runtime.shuffle.result_partition_type",
    "flinkstate.runtime.tasks.task_setup",
    "flinkstate.runtime.watermark.combined_watermark_status",
    "flinkstate.runtime.watermark.event_time",
    "flinkstate.runtime.watermark.status_watermark_valve",
    "flinkstate.runtime.watermark.virtual_channel_watermarks",
    "flinkstate.runtime.world.holdings",
    "flinkstate.runtime.world.metrics",
    "flinkstate.runtime.world.narration",
    "flinkstate.sim.action",
    "flinkstate.sim.core",
    "flinkstate.sim.explore.budget",
    "flinkstate.spark.connect_channel",
    "flinkstate.spark.settings",
    "flinkstate.views.site",
    "flinkstate.views.tour_page",
)

#: the engine's behaviour over a model: a run is its example (``tests/sim/test_core.py``; a
#: Flink job's run in ``flinkstate.lab``), not a value
_ENGINE = "the engine's behaviour over a whole model, shown by a run, not a value"

#: public names that need no example, each with why
WITHOUT_EXAMPLES: dict[str, str] = {
    "flinkstate.sim.core.Model": "a protocol: the world is its one implementation",
    "flinkstate.sim.core.Snapshots": "a protocol: the world is its one implementation",
    "flinkstate.runtime.buffer.buffer.BufferFactory": "a protocol: the world is its one maker",
    "flinkstate.sim.core.Simulation": _ENGINE,
    "flinkstate.sim.core.end_of_run": _ENGINE,
    "flinkstate.sim.core.take_snapshot": _ENGINE,
}

#: the heading of a numpy-style section of examples
HEADING = "Examples\n--------\n"


def _public(module: ModuleType) -> list[str]:
    """The public functions and classes ``module`` defines (not those it imports)."""
    return sorted(
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and (inspect.isfunction(value) or inspect.isclass(value))
        and value.__module__ == module.__name__
    )


@pytest.mark.parametrize("name", DOCTESTED)
def test_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.REPORT_NDIFF)
    report: list[str] = []
    for test in finder.find(module, name):
        runner.run(test, out=report.append)
    results = runner.summarize(verbose=False)
    assert results.failed == 0, "".join(report)
    assert results.attempted > 0 or not _public(module), f"{name} has no example"


@pytest.mark.parametrize("name", DOCTESTED)
def test_every_public_function_and_class_has_examples(name: str) -> None:
    module = importlib.import_module(name)
    missing = []
    for attribute in _public(module):
        if f"{name}.{attribute}" in WITHOUT_EXAMPLES:
            continue
        # the object's own docstring: a class without one would show its base's
        doc = inspect.cleandoc(getattr(module, attribute).__doc__ or "")
        _, heading, examples = doc.partition(HEADING)
        if not heading or ">>> " not in examples:
            missing.append(attribute)
    assert missing == [], f"{name}: no Examples section with a doctest in {missing}"
