"""A scene's layout: what stays the same from one step of a run to the next (the place of
each task's containers, the order of the source splits a record's colour goes by, the key-group
ranges, which operators are folded), computed once per run rather than once per step."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from flinkstate.keygroups import assign_to_key_group
from flinkstate.runtime.jobgraph import JobGraph
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.views.ownership import (
    OwnershipLayout,
    channel_node,
    gate_node,
    partition_node,
    subpartition_node,
    task_node,
)

#: an operator with more subtasks than this shows its lanes collapsed to counts
COLLAPSE_OVER = 8


@dataclass(frozen=True)
class SceneLayout:
    """What stays the same at every step of one run: the ownership layout, the colour index
    of each source split (records are coloured by the source subtask that read them), and
    which task every place belongs to (its lane)."""

    ownership: OwnershipLayout
    splits: Mapping[str, int]
    max_parallelism: Mapping[str, int]
    #: place id -> the key in ``world.tasks`` of the task whose lane it is in
    place_task: Mapping[str, str]
    #: operators with more than :data:`COLLAPSE_OVER` subtasks
    collapsible: frozenset[str]
    #: place id -> its position as a scene gives it (rounded once, not at every step)
    rounded: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    #: (key, max parallelism) -> key group, filled as records are drawn: a record's key group
    #: never changes, and hashing its key again at every step was a large job's main cost
    key_groups: dict[tuple[type, object, int], int] = field(default_factory=dict, compare=False)

    @classmethod
    def of(cls, world: NetworkWorld) -> SceneLayout:
        ownership = OwnershipLayout.of(world)
        return cls(
            ownership,
            {name: index for index, name in enumerate(_splits(world))},
            _max_parallelism(world.graph),
            _place_tasks(world),
            frozenset(op.name for op in world.graph.operators if op.parallelism > COLLAPSE_OVER),
            {node: (round(x, 4), round(y, 4)) for node, (x, y) in ownership.positions.items()},
        )

    def key_group(self, key: object, max_parallelism: int) -> int:
        """The key group of a record's ``key`` (Flink's assignment, remembered)."""
        remembered = (type(key), key, max_parallelism)  # 1 and True are not one key
        known = self.key_groups.get(remembered)
        if known is None:
            known = assign_to_key_group(key, max_parallelism, "long")
            self.key_groups[remembered] = known
        return known


def _place_tasks(world: NetworkWorld) -> dict[str, str]:
    places: dict[str, str] = {}
    for key, task in world.tasks.items():
        places[task_node(task)] = key
        for partition in task.partitions:
            places[partition_node(partition)] = key
            for sub in partition.subpartitions:
                places[subpartition_node(sub)] = key
        for gate in task.gates:
            places[gate_node(gate)] = key
            for channel in gate.channels:
                places[channel_node(channel)] = key
        if task.name in world.readers:
            places[world.readers[task.name].name] = key
        if task.name in world.drainers:
            places[world.drainers[task.name].name] = key
    return places


def _splits(world: NetworkWorld) -> list[str]:
    """Every source split of the run, in a fixed order (shorter names first, so that
    ``source[2]`` comes before ``source[10]``)."""
    names = {split for task in world.tasks.values() for split in task.splits}
    names.update(record.source for record in world.records.values())
    return sorted(names, key=lambda name: (len(name), name))


def _max_parallelism(graph: JobGraph) -> dict[str, int]:
    return {op.name: op.effective_max_parallelism for op in graph.operators}
