"""The recovery canvas as a widget: Python sends a scene, a small ES module draws it in SVG.

The module (``flinkstate/views/canvas.js``, which a written page embeds too) needs no build
step: anywidget loads it as it is. It draws every place of the scene (tasks, result partitions
and their subpartition queues, the wires, input gates and their channels, pools,
channel-state readers and writers, drainers), the items in them (buffers with their records,
barriers, events, write requests), and moves an item from its old place to its new one when
the next scene arrives. The current step's caption sits over the drawing, the few steps
before it under it, newest first; a highlighted place or item (a tour's stop) is zoomed to.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anywidget
import traitlets

from flinkstate.views.scene import CANVAS_MODULE


class RecoveryCanvas(anywidget.AnyWidget):
    """A scene (:func:`flinkstate.views.scene.build_scene`) and the captions beside it.

    ``captions`` holds ``[step, sentence]`` pairs, newest first. ``animate`` false draws the
    next scene in place (a new run, a lane opened); otherwise what moved travels.
    """

    _esm = CANVAS_MODULE
    scene = traitlets.Dict().tag(sync=True)
    captions: traitlets.List[list[Any]] = traitlets.List().tag(sync=True)
    animate = traitlets.Bool(True).tag(sync=True)
    #: ids of places and items to ring (a tour's stop points at them)
    highlight: traitlets.List[str] = traitlets.List().tag(sync=True)
    #: a CSS height the drawing may not exceed (it scrolls inside, and a highlight is zoomed
    #: into it), so a lesson's controls and caption stay on screen beside it; "" for none
    max_height = traitlets.Unicode("").tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        #: task keys whose lanes are open although their operator is collapsed (large jobs)
        self.expanded: set[str] = set()
        self._lanes_changed: Callable[[], None] | None = None
        self.on_msg(lambda _widget, content, _buffers: self.receive(content))

    def on_lanes_changed(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` when the learner opens or folds a lane on the canvas."""
        self._lanes_changed = callback

    def receive(self, content: object) -> None:
        """A message from the page: a click on a collapsed subtask opens its lane (``{"expand":
        task}``), *fold* closes it again (``{"collapse": task}``); anything else is ignored."""
        if not isinstance(content, dict):
            return
        if isinstance(content.get("expand"), str):
            self.expanded.add(content["expand"])
        elif isinstance(content.get("collapse"), str):
            self.expanded.discard(content["collapse"])
        else:
            return
        if self._lanes_changed is not None:
            self._lanes_changed()

    def show(
        self,
        scene: dict[str, Any],
        captions: list[list[Any]],
        *,
        animate: bool,
        highlight: list[str] | None = None,
    ) -> None:
        """Send a new scene, its captions and highlight in one message: one redraw."""
        with self.hold_sync():
            self.animate = animate
            self.captions = captions
            self.highlight = highlight or []
            self.scene = scene
