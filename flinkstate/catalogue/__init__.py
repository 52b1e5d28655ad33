"""The catalogue: data, apart from mechanism. Topologies (jobs and their parameters),
recovery scenarios, presets, and the small reproducers of every fault and hazard."""

from __future__ import annotations

from flinkstate.face import lazy_face

#: the package's face: each name other packages (and the lessons) use, by the module of the
#: package that defines it, loaded on first use (``flinkstate.face``; ``tests/test_faces.py``
#: holds every import from another package to it)
FACE: dict[str, str] = {
    "BUGS": "bugs",
    "BugFamily": "bugs",
    "FlinkBug": "bugs",
    "bug": "bugs",
    "by_name": "parameters",
    "COMMON": "parameters",
    "CONNECTED_MAPPING_LOOKUP": "parameters",
    "INPUT_REASSIGNMENT": "parameters",
    "MAPPING_SCOPE": "parameters",
    "Parameter": "parameters",
    "STATELESS_ASSIGNMENT": "parameters",
    "fit_network_buffers": "presets",
    "LARGE_PARALLELISM": "presets",
    "PresetValues": "presets",
    "scenario_preset": "presets",
    "topology_preset": "presets",
    "expectation": "scenario",
    "Outcome": "scenario",
    "RESTORE_PARAMETERS": "scenario",
    "Scenario": "scenario",
    "get_scenario": "scenarios",
    "SCENARIOS": "scenarios",
    "scenarios_of_bug": "scenarios",
    "CATALOGUE": "topologies",
    "topology": "topologies",
    "Topology": "topology",
}
__all__ = sorted(FACE)
__getattr__, __dir__ = lazy_face(__name__, FACE)
