"""The scenes of a run's consecutive steps, each derived from the one before.

A page draws every step of a run: twelve thousand scenes for a deadlock found after a long
job. Built from scratch, a scene costs a millisecond and more (every place's hover, every
buffer's pieces, every segment's owner counted), and a page took twenty seconds. But a step
changes little: an action says what it may touch (its footprint, the resources of
:mod:`flinkstate.runtime.world.exploration.footprint` that partial-order reduction reads),
and every segment that changes owner is one of the step's moves. So the places those
resources and moves belong to are drawn anew, with the items in them, and every other place
and item is the previous scene's, the very same objects. An action that may touch anything
(no footprint), or a change to the checkpoint in progress (which marks buffers persisted and
tasks acknowledged everywhere), draws the whole scene again.

The scenes are the ones :func:`flinkstate.views.scene.build_scene` makes (the page's tests
compare them at every step of runs that take every kind of action).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

from flinkstate.runtime.buffer.owners import Owner
from flinkstate.runtime.world.exploration.footprint import Resource, ResourceKind
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.action import Action
from flinkstate.sim.core import Event, Simulation
from flinkstate.views.glyphs import in_legend_order, item_glyphs, place_glyphs, scene_legend
from flinkstate.views.ownership import (
    channel_node,
    gate_node,
    held_by_node,
    owner_node,
    ownership_places,
    partition_node,
    recovery_paths,
    subpartition_node,
    task_node,
)
from flinkstate.views.scene import (
    collapsed,
    hidden_places,
    mark_places,
    place_details,
    scene_frame,
    scene_places,
    waiting_places,
)
from flinkstate.views.scene_items import ItemBuilder, ItemGroup
from flinkstate.views.scene_layout import SceneLayout

#: resources whose change no scene shows (record ids and paths drawn, sources left)
_UNSEEN = frozenset({ResourceKind.RECORDS, ResourceKind.SOURCES})


class SceneSteps:
    """The scene of a world at its current step, kept up to date step by step.

    ``scene`` is the scene as :func:`~flinkstate.views.scene.build_scene` draws it with
    every lane collapsed (``expanded=()``), ``items`` every item of the world (what a caption
    compares). Call :meth:`step` instead of ``simulation.step`` to take a step and draw it.
    """

    def __init__(self, world: NetworkWorld, layout: SceneLayout | None = None) -> None:
        self.layout = layout or SceneLayout.of(world)
        self.hidden = hidden_places(world, self.layout, ())
        self.nodes: dict[Owner, str] = {}
        self.places_of = _places_of_resources(world)
        self.groups: dict[ItemGroup, list[dict[str, Any]]] = {}
        self.places: dict[str, dict[str, Any]] = {}
        #: the places in the scene's order, each's position in it, and what each waited for
        self.scene_places: list[dict[str, Any]] = []
        self.listed: dict[str, int] = {}
        self.waiting: dict[str, str] = {}
        #: the glyph classes of the items in each place, and of each place (with the place)
        self.item_classes: dict[str, frozenset[str]] = {}
        self.place_classes: dict[str, tuple[dict[str, Any], frozenset[str]]] = {}
        #: how many scenes were drawn whole (every place and item anew)
        self.redrawn = 0
        self._draw(world, None, None)

    def step(self, simulation: Simulation, action: Action) -> Event:
        """Take ``action`` in ``simulation`` (whose model is this world) and draw its scene."""
        world = simulation.model
        assert isinstance(world, NetworkWorld)
        touched = world.footprint(action)
        event = simulation.step(action)
        assert event is not None, "a recorded step must replay"
        world = simulation.model
        assert isinstance(world, NetworkWorld)
        for move in event.moves:
            self._count(world, move.source, -1)  # type: ignore[arg-type]
            self._count(world, move.target, 1)  # type: ignore[arg-type]
        changed = None
        if touched is not None and self._checkpoint_key(world) == self.checkpoint_key:
            changed = self._changed_places(world, event, touched)
        self._draw(world, event, changed)
        return event

    def _count(self, world: NetworkWorld, owner: Owner, change: int) -> None:
        """One segment more or less for ``owner`` in ``held`` (kinds holding none left out,
        as :func:`~flinkstate.views.ownership.held_by_node` does)."""
        node = self.nodes.get(owner)
        if node is None:
            node = self.nodes[owner] = owner_node(world, owner)
        kinds = self.held.setdefault(node, Counter())
        kinds[owner.kind] += change
        if not kinds[owner.kind]:
            del kinds[owner.kind]
            if not kinds:
                del self.held[node]

    def _draw(self, world: NetworkWorld, event: Event | None, changed: set[str] | None) -> None:
        """Draw the scene, the places in ``changed`` and their items anew (every place and
        item where it is None), the others taken from the scene before."""
        layout = self.layout
        hidden = self.hidden
        if changed is None:
            tasks = None
            self.redrawn += 1
            self.held = held_by_node(world, Counter(world.owner).items())
            graph = ownership_places(
                world, None, layout.ownership, lambda node: node not in hidden, self.held
            )
            self.order = list(graph.nodes)
            self.paths = _FixedPaths.of(graph.edges)
            self.listed = {}
        else:
            tasks = {layout.place_task[node] for node in changed if node in layout.place_task}
            graph = ownership_places(
                world,
                None,
                layout.ownership,
                lambda node: node in changed and node not in hidden,
                self.held,
                tasks,
            )
        fresh = {p["id"]: p for p in scene_places(graph, layout, world.tasks)}
        waiting = waiting_places(world)
        mark_places(list(fresh.values()), place_details(world, tasks), waiting)
        places = self._merged(fresh, waiting)
        builder = ItemBuilder(world, layout)
        self.groups = builder.grouped(
            {} if changed is None else self.groups, () if changed is None else changed
        )
        self.items = [item for group in self.groups.values() for item in group]
        self.places = {p["id"]: p for p in places}
        self.scene_places = places
        wires_and_moves = _wires_and_moves(world, event, self.order, self.paths)
        whole = scene_frame(world, event, layout, places, wires_and_moves, self.items)
        self.scene: dict[str, Any] = (
            whole if not layout.collapsible else collapsed(whole, hidden, layout.collapsible, ())
        )
        # the glyphs it may be drawn with, as build_scene names them: those of the places and
        # items kept, found before; of a folded job, what its folded places show
        present = self._glyphs(changed, self.scene["places"])
        self.scene["legend"] = scene_legend(self.scene, in_legend_order(present, self.scene))
        self.checkpoint_key = self._checkpoint_key(world)

    def _glyphs(self, changed: set[str] | None, shown: list[dict[str, Any]]) -> set[str]:
        """The glyph classes of the scene's items and ``shown`` places: the items' found
        anew for the places in ``changed`` (place by place: ``overflow`` is a place's), those
        of a folded place's items left out (the folded place counts them); a place's for each
        place object not seen before (a folded task's place is a new one at every step)."""
        if changed is None:
            self.item_classes = {}
        else:
            for place in changed:
                self.item_classes.pop(place, None)
        hidden = self.hidden
        fresh: dict[str, list[dict[str, Any]]] = {}
        for (_, place), items in self.groups.items():
            if (changed is None or place in changed) and place not in hidden:
                fresh.setdefault(place, []).extend(items)
        for place, items in fresh.items():
            self.item_classes[place] = frozenset(item_glyphs(items))
        present: set[str] = set().union(*self.item_classes.values())
        for drawn in shown:
            known = self.place_classes.get(drawn["id"])
            if known is None or known[0] is not drawn:
                known = (drawn, frozenset(place_glyphs((drawn,))))
                self.place_classes[drawn["id"]] = known
            present |= known[1]
        return present

    def _merged(
        self, fresh: Mapping[str, dict[str, Any]], waiting: Mapping[str, str]
    ) -> list[dict[str, Any]]:
        """The places in the graph's order: those drawn anew, the others the scene before's
        (a copy where what it waits for changed, as that is asked of the whole world)."""
        if len(fresh) == len(self.places) or not self.listed:  # all drawn anew
            places = [fresh[node] for node in self.order if node in fresh]
            self.listed = {p["id"]: index for index, p in enumerate(places)}
            self.waiting = dict(waiting)
            return places
        places = list(self.scene_places)
        for node, place in fresh.items():
            places[self.listed[node]] = place
        before = self.waiting
        for node in {*before, *waiting}:
            if node in fresh or node not in self.listed or before.get(node) == waiting.get(node):
                continue
            place = {k: v for k, v in self.places[node].items() if k != "waits"}
            if node in waiting:
                place["waits"] = waiting[node]
            places[self.listed[node]] = place
        self.waiting = dict(waiting)
        return places

    def _changed_places(
        self, world: NetworkWorld, event: Event, touched: frozenset[Resource]
    ) -> set[str] | None:
        """The places a step with footprint ``touched`` may have changed: those of the
        resources (a task's own state is its place and its reader's and drainer's), the ends
        of its moves and the heap; None: any."""
        changed = {"heap"}
        for resource in touched:
            places = self.places_of.get(resource)
            if places is not None:
                changed |= places
            elif resource.kind is ResourceKind.EVENT_TIME:
                changed.update(self.layout.place_task)  # every task's watermark
            elif resource.kind not in _UNSEEN:
                return None
        for move in event.moves:
            changed.add(self.nodes[move.source])  # type: ignore[index]
            changed.add(self.nodes[move.target])  # type: ignore[index]
        return changed

    @staticmethod
    def _checkpoint_key(world: NetworkWorld) -> Hashable:
        """What of the checkpoints every place and item may show: which is in progress, who
        acknowledged it and which buffers it persisted, and how many completed."""
        progress = world.checkpoints.pending
        pending = (
            None
            if progress is None
            else (progress.id, len(progress.acknowledged), len(progress.persisted_buffers))
        )
        return pending, len(world.checkpoints.completed)


def _places_of_resources(world: NetworkWorld) -> dict[Resource, set[str]]:
    """The places that show each resource a footprint names: a task's own state shows on
    its place and its reader's and drainer's; a channel's resources (its pipe, its state,
    its builder) on the channel, its gate, the subpartition it reads and that one's
    partition (a channel's credit reads the subpartition's queue); a local pool on its
    partition, or on its gate and the gate's channels; a network pool on itself."""
    places: dict[Resource, set[str]] = {}
    partition_of = {
        sub.name: partition_node(partition)
        for task in world.tasks.values()
        for partition in task.partitions
        for sub in partition.subpartitions
    }
    for task in world.tasks.values():
        own = {task_node(task)}
        if task.name in world.readers:
            own.add(world.readers[task.name].name)
        if task.name in world.drainers:
            own.add(world.drainers[task.name].name)
        places[Resource(ResourceKind.TASK, task.name)] = own
        # its reader's and drainer's own steps (``HELPER``) redraw the same places
        places[Resource(ResourceKind.HELPER, task.name)] = own
        for partition in task.partitions:
            node = partition_node(partition)
            places.setdefault(Resource(ResourceKind.POOL, partition.pool.name), set()).add(node)
        for gate in task.gates:
            gate_places = {gate_node(gate), *map(channel_node, gate.channels)}
            places.setdefault(Resource(ResourceKind.POOL, gate.pool.name), set()).update(
                gate_places
            )
            for channel in gate.channels:
                sub = world.subpartitions[channel.subpartition]
                seen = {
                    channel_node(channel),
                    gate_node(gate),
                    subpartition_node(sub),
                    partition_of[sub.name],
                }
                for kind in (
                    ResourceKind.LINK,
                    ResourceKind.CHANNEL,
                    ResourceKind.POLLABLE,
                    ResourceKind.BUILDER,
                ):
                    places.setdefault(Resource(kind, channel.name), set()).update(seen)
    for name, pool in world.network_pools.items():
        for label in {name, pool.name}:
            places[Resource(ResourceKind.NETWORK_POOL, label)] = {pool.name}
    places[Resource(ResourceKind.HEAP)] = {"heap"}  # the heap's place, redrawn at every step
    return places


#: the kinds of path the canvas draws as wires
_WIRES = ("local", "remote", "restore", "drain")


@dataclass(frozen=True)
class _FixedPaths:
    """The ownership graph's edges that stay as they are while the job's structure does
    (structure and data paths, not recovery's), by source in the graph's order; and the
    wires they are drawn as, made once (a scene shares them with the one before)."""

    out: Mapping[str, list[Path]]
    wires: Mapping[str, list[dict[str, Any]]]
    #: what is made from them once, by name (their wires in order, the nodes' positions)
    made: dict[str, Any]

    @classmethod
    def of(cls, edges: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> _FixedPaths:
        out = {
            source: fixed
            for source, targets in edges.items()
            if (fixed := [(t, d["kind"]) for t, d in targets.items() if d["kind"] not in _DYNAMIC])
        }
        wires = {
            source: [{"from": source, "to": t, "kind": kind} for t, kind in fixed if kind in _WIRES]
            for source, fixed in out.items()
        }
        return cls(out, wires, {})

    def positions(self, order: list[str]) -> dict[str, int]:
        """Each node's position in ``order`` (made once)."""
        known = self.made.get("positions")
        if known is None:
            known = self.made["positions"] = {node: index for index, node in enumerate(order)}
        return known

    def all_wires(self, order: list[str]) -> list[dict[str, Any]]:
        """The wires of the fixed paths alone, source by source in ``order`` (one list, made
        once, for every step that moves nothing)."""
        known = self.made.get("wires")
        if known is None:
            known = self.made["wires"] = [w for s in order for w in self.wires.get(s, ())]
        return known


#: the ownership graph's edges that come and go: recovery's paths and the step's moves
_DYNAMIC = ("restore", "drain", "move")
#: a path from a source: its target and its kind
Path = tuple[str, str]


def _wires_and_moves(
    world: NetworkWorld, event: Event | None, order: list[str], paths: _FixedPaths
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The scene's wires and the step's moves as :func:`~flinkstate.views.scene.build_scene`
    lists them from its ownership graph (source by source in the graph's order, each
    source's paths in the order they were added; a move along a path replaces it, as the
    graph's edge does), without walking the job's places for them."""
    moved: dict[str, dict[str, int]] = {}
    if event is not None:
        counts = Counter(
            (owner_node(world, m.source), owner_node(world, m.target))  # type: ignore[arg-type]
            for m in event.moves
        )
        for (source, target), count in counts.items():
            if source != target:
                moved.setdefault(source, {})[target] = count
    recovery: dict[str, list[Path]] = {}
    for source, target, kind in recovery_paths(world):
        recovery.setdefault(source, []).append((target, kind))
    if not recovery:
        return _moved_over(paths, order, moved)
    wires: list[dict[str, Any]] = []
    moves: list[dict[str, Any]] = []
    for source in order:
        here = moved.get(source)
        extra = recovery.get(source)
        if here is None and extra is None:
            wires.extend(paths.wires.get(source, ()))
            continue
        out = [*paths.out.get(source, ()), *(extra or ())]
        here = here or {}
        for target, kind in out:
            if target in here:
                moves.append({"from": source, "to": target, "count": here[target]})
            elif kind in _WIRES:
                wires.append({"from": source, "to": target, "kind": kind})
        known = {target for target, _ in out}
        for target, count in here.items():
            if target not in known:
                moves.append({"from": source, "to": target, "count": count})
    return wires, moves


def _moved_over(
    paths: _FixedPaths, order: list[str], moved: Mapping[str, Mapping[str, int]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """:func:`_wires_and_moves` where no recovery path is open: the fixed wires but those a
    move runs along, and the moves source by source in ``order``, each source's along its
    paths first."""
    if not moved:
        return paths.all_wires(order), []
    along = {(source, target) for source, targets in moved.items() for target in targets}
    wires = [w for w in paths.all_wires(order) if (w["from"], w["to"]) not in along]
    position = paths.positions(order)
    moves: list[dict[str, Any]] = []
    for source in sorted((s for s in moved if s in position), key=position.__getitem__):
        here = moved[source]
        out = [target for target, _ in paths.out.get(source, ())]
        moves += [{"from": source, "to": t, "count": here[t]} for t in out if t in here]
        moves += [{"from": source, "to": t, "count": c} for t, c in here.items() if t not in out]
    return wires, moves
