"""ipywidgets controllers: they read the model and redraw figures in place."""

from __future__ import annotations

from flinkstate.face import lazy_face

#: the package's face: each name other packages (and the lessons) use, by the module of the
#: package that defines it, loaded on first use (``flinkstate.face``; ``tests/test_faces.py``
#: holds every import from another package to it)
FACE: dict[str, str] = {
    "CheckpointRescaler": "checkpoint_rescaler",
    "ComparisonPanel": "comparison",
    "Exercise": "exercise",
    "InterleavingExplorer": "interleaving_explorer",
    "RecoveryStepper": "recovery_stepper",
    "RescaleExplorer": "rescale_explorer",
    "TourWidget": "tour",
}
__all__ = sorted(FACE)
__getattr__, __dir__ = lazy_face(__name__, FACE)
