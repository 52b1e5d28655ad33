"""Figures: plain functions from model values to plotly figures, usable without a notebook."""

from __future__ import annotations

from flinkstate.face import lazy_face

#: the package's face: each name other packages (and the lessons) use, by the module of the
#: package that defines it, loaded on first use (``flinkstate.face``; ``tests/test_faces.py``
#: holds every import from another package to it)
FACE: dict[str, str] = {
    "bug_history_figure": "bug_history",
    "caption": "captions",
    "in_flight_figure": "checkpoint_files",
    "key_group_figure": "checkpoint_files",
    "records_figure": "checkpoint_files",
    "cycle_text": "deadlock",
    "deadlock_figure": "deadlock",
    "key_group_heatmap": "movement",
    "movement_sankey": "movement",
    "subtask_bars": "movement",
    "sweep_figure": "movement",
    "ownership_figure": "ownership",
    "ownership_graph": "ownership",
    "ownership_spec": "ownership",
    "forecast_page": "page",
    "scenario_page": "page",
    "topology_page": "page",
    "html_table": "palette",
    "wrap": "palette",
    "owner_timeline_figure": "recovery",
    "whatif_figure": "recovery",
    "trigger_figure": "recovery_trigger",
    "trigger_history": "recovery_trigger",
    "trigger_table": "recovery_trigger",
    "report_html": "report",
    "key_group_ownership_figure": "rescaling",
    "not_keyed_note": "rescaling",
    "state_reading_figure": "rescaling",
    "build_scene": "scene",
    "CANVAS_MODULE": "scene",
    "scene_items": "scene_items",
    "SceneLayout": "scene_layout",
    "WHAT": "site",
    "SitePage": "site",
    "check_site_target": "site",
    "index_page": "site",
    "is_site": "site",
    "site_pages": "site",
    "write_manifest": "site",
    "write_site_page": "site",
    "event_time_figure": "timelines",
    "Timelines": "timelines",
    "timelines_figure": "timelines",
    "timelines_spec": "timelines",
    "get_tour": "tours",
    "locate": "tours",
    "Tour": "tours",
    "TOURS": "tours",
    "tour_page": "tour_page",
}
__all__ = sorted(FACE)
__getattr__, __dir__ = lazy_face(__name__, FACE)
