"""A scene's items: every buffer, event and write request of the world, each in the place of
the container that holds it, found by the world's one walk over its holdings
(:func:`~flinkstate.runtime.world.holdings.holdings`). Kept apart from the places and wires
(:mod:`flinkstate.views.scene`) because the items are what changes at nearly every step, and a
page derives them container by container (:mod:`flinkstate.views.scene_steps`)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from typing import Any

from flinkstate.runtime.buffer.buffer import HEAP, Buffer
from flinkstate.runtime.buffer.records import StreamElementKind
from flinkstate.runtime.checkpoint.channel.channel_state_reader import ChannelStateReader
from flinkstate.runtime.checkpoint.channel.channel_state_writer import ChannelStateWriter
from flinkstate.runtime.events import (
    BARRIER,
    END_OF_INPUT_STATE,
    END_OF_OUTPUT_STATE,
    END_OF_PARTITION,
    RECOVERY_BARRIER,
    SUBTASK_CONNECTION,
)
from flinkstate.runtime.partition.consumer.input_gate import Channel
from flinkstate.runtime.partition.result_partition import Subpartition
from flinkstate.runtime.tasks.task import Task
from flinkstate.runtime.watermark.watermarks import watermark_text
from flinkstate.runtime.world.holdings import Holding, Lane, holdings
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.views.ownership import (
    channel_node,
    subpartition_node,
    task_node,
)
from flinkstate.views.scene_layout import SceneLayout

#: short labels of events drawn inside a queue
EVENT_LABELS: Mapping[str, str] = {
    BARRIER: "barrier",
    RECOVERY_BARRIER: "recovery barrier",
    END_OF_PARTITION: "end of partition",
    END_OF_OUTPUT_STATE: "end of output state",
    END_OF_INPUT_STATE: "end of input state",
    SUBTASK_CONNECTION: "descriptor",
}


#: a container's items in a scene: its lane and its place
ItemGroup = tuple[Lane, str]


def _holding_place(holding: Holding) -> str:
    """The place whose items a container's are (as the item builder draws them)."""
    container = holding[2]
    if isinstance(container, Subpartition):
        return subpartition_node(container)
    if isinstance(container, Channel):
        return channel_node(container)
    if isinstance(container, Task):
        return task_node(container)
    name: str = container.name
    return name


def _in_recovery(channel: Channel) -> bool:
    """A recovered channel, or (V2) one whose drained state is still ahead of its data: only
    then are its recovered and stashed buffers drawn."""
    return channel.recovered or channel.recoverable.in_recovery


class ItemBuilder:
    """Walks the world's containers once and makes an item of every buffer and request."""

    def __init__(self, world: NetworkWorld, layout: SceneLayout) -> None:
        self.world = world
        self.layout = layout
        progress = world.checkpoints.pending
        self.persisting = (progress.id, frozenset(progress.persisted_buffers)) if progress else None
        last = world.checkpoints.completed[-1] if world.checkpoints.completed else None
        self.persisted = (last.id, last.persisted_buffers) if last is not None else None

    def items(self) -> Iterator[dict[str, Any]]:
        """An item per buffer and write request, container by container in the order of the
        world's one walk over them (:func:`~flinkstate.runtime.world.holdings.holdings`); free
        segments are counts on their places, not items."""
        draws = self._draws()
        for holding in holdings(self.world, network_pools=False):
            draw = draws.get(holding[0])
            if draw is not None:
                yield from draw(holding)

    def grouped(
        self, previous: Mapping[ItemGroup, list[dict[str, Any]]], drawn: Collection[str]
    ) -> dict[ItemGroup, list[dict[str, Any]]]:
        """The items of every container, in the order of :meth:`items`, by lane and place:
        those of places not in ``drawn`` taken from ``previous`` where it has them (the
        caller knows they did not change), the others drawn."""
        draws = self._draws()
        groups: dict[ItemGroup, list[dict[str, Any]]] = {}
        for holding in holdings(self.world, network_pools=False):
            lane = holding[0]
            draw = draws.get(lane)
            if draw is None:
                continue
            key = (lane, _holding_place(holding))
            known = None if key[1] in drawn else previous.get(key)
            fresh = list(draw(holding)) if known is None else known
            groups[key] = groups[key] + fresh if key in groups else fresh
        return groups

    def _draws(self) -> dict[Lane, Callable[[Holding], Iterator[dict[str, Any]]]]:
        return {
            Lane.QUEUE: self._subpartition_queue,
            Lane.BUILDER: self._subpartition_builder,
            Lane.RECOVERED: self._recovered_queue,
            Lane.STASH: self._channel_queue,
            Lane.RECEIVED: self._channel_queue,
            Lane.DESERIALIZER: self._deserializer,
            Lane.PRE_FILTER: self._pre_filter,
            Lane.POST_FILTER: self._post_filter,
            Lane.REQUEST: self._requests,
        }

    def _subpartition_queue(self, holding: Holding) -> Iterator[dict[str, Any]]:
        _, _, sub, operator, buffers, _ = holding
        assert isinstance(sub, Subpartition)
        place = subpartition_node(sub)
        yield from self._queue(buffers, place, "queue", operator, sub.name)

    def _subpartition_builder(self, holding: Holding) -> Iterator[dict[str, Any]]:
        _, _, sub, operator, (builder,), _ = holding
        assert isinstance(sub, Subpartition)
        place = subpartition_node(sub)
        yield self._buffer(builder, place, "builder", len(sub.queue), operator, sub.name)

    def _channel_queue(self, holding: Holding) -> Iterator[dict[str, Any]]:
        lane, _, channel, operator, buffers, _ = holding
        assert isinstance(channel, Channel)
        if lane is Lane.STASH and not _in_recovery(channel):
            return
        place = channel_node(channel)
        yield from self._queue(buffers, place, lane.value, operator, channel.name)

    def _deserializer(self, holding: Holding) -> Iterator[dict[str, Any]]:
        _, _, task, operator, (current,), _ = holding
        assert isinstance(task, Task)
        if task.current is None:
            return
        yield self._buffer(
            current,
            task_node(task),
            "deserializer",
            0,
            operator,
            task.current.name,
            ready=frozenset(task.ready),
        )

    def _pre_filter(self, holding: Holding) -> Iterator[dict[str, Any]]:
        """The buffer being filtered: its bytes are the records in the reader's ``pending``."""
        _, _, reader, _, _, (segment,) = holding
        assert isinstance(reader, ChannelStateReader)
        yield {
            "id": f"pre {reader.name}",
            "kind": "buffer",
            "place": reader.name,
            "lane": "pre-filter",
            "slot": 0,
            "of": reader.pre_channel,
            "segment": segment,
            "used": 0,
            "capacity": self.world.config.segment_size,
            "heap": segment == HEAP,
            "recovered": True,
            "pieces": [],
        }

    def _post_filter(self, holding: Holding) -> Iterator[dict[str, Any]]:
        _, _, reader, operator, buffers, _ = holding
        assert isinstance(reader, ChannelStateReader)
        for slot, buffer in enumerate(buffers, start=1):
            yield self._buffer(
                buffer, reader.name, "post-filter", slot, operator, reader.pre_channel
            )

    def _requests(self, holding: Holding) -> Iterator[dict[str, Any]]:
        writer = holding[2]  # its requests are drawn, not the segments they retain
        assert isinstance(writer, ChannelStateWriter)
        for slot, request in enumerate(writer.requests):
            records = {f.record for f in request.fragments}
            yield {
                "id": f"w{request.uid}",
                "kind": "request",
                "place": writer.name,
                "lane": "request",
                "slot": slot,
                "checkpoint": request.checkpoint,
                "side": "output" if request.output else "input",
                "of": request.channel,
                "from": f"b{request.buffer}" if request.buffer >= 0 else None,
                "bytes": sum(f.length for f in request.fragments),
                "records": sorted(records),
            }

    def _recovered_queue(self, holding: Holding) -> Iterator[dict[str, Any]]:
        """Recovered buffers, with the records the new subtask will drop struck through: a
        descriptor names the virtual channel the buffers behind it come from."""
        _, _, channel, operator, buffers, _ = holding
        assert isinstance(channel, Channel)
        if not _in_recovery(channel):
            return
        task = self.world.task_named(channel.task)
        gate = self.world.gates[channel.gate]
        place = channel_node(channel)
        plan = gate.plan
        virtual = channel.demultiplexer.selected
        for slot, buffer in enumerate(buffers):
            if buffer.descriptor is not None:
                virtual = buffer.descriptor
            dropped: frozenset[int] = frozenset()
            if (
                plan is not None
                and virtual is not None
                and not buffer.is_event
                and plan.filters_virtual_channel(channel.index, *virtual)
            ):
                dropped = frozenset(
                    f.record
                    for f in buffer.fragments
                    if self.world.selected_subtask(gate, f.record) != task.index
                )
            yield self._buffer(
                buffer, place, "recovered", slot, operator, channel.name, dropped=dropped
            )

    def _queue(
        self, queue: Iterable[Buffer], place: str, lane: str, operator: str, of: str
    ) -> Iterator[dict[str, Any]]:
        for slot, buffer in enumerate(queue):
            yield self._buffer(buffer, place, lane, slot, operator, of)

    def _buffer(
        self,
        buffer: Buffer,
        place: str,
        lane: str,
        slot: int,
        operator: str,
        of: str,
        *,
        dropped: frozenset[int] = frozenset(),
        ready: frozenset[int] = frozenset(),
    ) -> dict[str, Any]:
        item: dict[str, Any] = {
            "id": f"b{buffer.uid}",
            "place": place,
            "lane": lane,
            "slot": slot,
            "of": of,
        }
        if buffer.is_event:
            event = buffer.event or ""
            item["kind"] = "barrier" if event in (BARRIER, RECOVERY_BARRIER) else "event"
            item["event"] = event
            item["label"] = EVENT_LABELS.get(event, event)
            if buffer.checkpoint >= 0:
                item["checkpoint"] = buffer.checkpoint
                item["priority"] = buffer.priority
            if buffer.descriptor is not None:
                item["descriptor"] = list(buffer.descriptor)
            return item
        records = self.world.records
        max_parallelism = self.layout.max_parallelism[operator]
        pieces = []
        for f in buffer.fragments:
            record = records[f.record]
            if not record.is_record:
                # a watermark or status: no source split or key group; its label instead
                label = (
                    f"watermark {watermark_text(record.timestamp)}"
                    if record.kind is StreamElementKind.WATERMARK
                    else ("IDLE" if record.idle else "ACTIVE")
                )
                pieces.append([f.record, f.start, f.length, f.total, -1, -1, "", label])
                continue
            state = "dropped" if f.record in dropped else ("ready" if f.record in ready else "")
            pieces.append(
                [
                    f.record,
                    f.start,
                    f.length,
                    f.total,
                    self.layout.splits.get(record.source, 0),
                    self.layout.key_group(record.key, max_parallelism),
                    state,
                ]
            )
        item.update(
            {
                "kind": "buffer",
                "segment": buffer.segment,
                "used": buffer.used,
                "capacity": buffer.capacity,
                "heap": buffer.segment == HEAP,
                "recovered": buffer.recovered,
                "pieces": pieces,
            }
        )
        if self.persisting is not None and buffer.uid in self.persisting[1]:
            item["persisted"] = self.persisting[0]
        elif self.persisted is not None and buffer.uid in self.persisted[1]:
            item["persisted"] = self.persisted[0]
        return item


def scene_items(world: NetworkWorld, layout: SceneLayout) -> list[dict[str, Any]]:
    """Every item of the world (a scene's ``items``): what a caption compares, all of them
    also where a large job's lanes are folded."""
    return list(ItemBuilder(world, layout).items())
