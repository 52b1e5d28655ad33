"""Stream partitioners and the subtask state mappers Flink gives each side of their exchange.

Which old subtasks' in-flight data a new subtask reads depends only on the partitioner of the
exchange: its *downstream* mapper splits the input channel state of the consuming operator, its
*upstream* mapper the output (subpartition) state of the producing one. Pointwise (forward,
rescale) and broadcast exchanges are never checkpointed unaligned, so they carry no in-flight
data to rescale.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from flinkstate.errors import InvalidParameterError
from flinkstate.rescale.mapper import SubtaskStateMapper


@dataclass(frozen=True)
class _PartitionerFacts:
    flink_class: str
    datastream_call: str
    downstream_mapper: SubtaskStateMapper
    upstream_mapper: SubtaskStateMapper
    is_pointwise: bool
    is_broadcast: bool = False


class Partitioner(Enum):
    """The partitioners of a DataStream exchange, named as in the DataStream API.

    Examples
    --------
    >>> keyed = Partitioner.parse("keyBy")
    >>> keyed.flink_class, keyed.downstream_mapper.name, keyed.upstream_mapper.name
    ('KeyGroupStreamPartitioner', 'RANGE', 'ARBITRARY')
    >>> Partitioner.parse("rebalance()").downstream_mapper.name
    'ROUND_ROBIN'

    Forward, rescale and broadcast exchanges are aligned, so they carry no in-flight data:

    >>> [p.datastream_call for p in Partitioner if not p.supports_unaligned_checkpoint]
    ['forward()', 'rescale()', 'broadcast()']
    """

    FORWARD = _PartitionerFacts(
        "ForwardPartitioner",
        "forward()",
        SubtaskStateMapper.UNSUPPORTED,
        SubtaskStateMapper.UNSUPPORTED,
        is_pointwise=True,
    )
    REBALANCE = _PartitionerFacts(
        "RebalancePartitioner",
        "rebalance()",
        SubtaskStateMapper.ROUND_ROBIN,
        SubtaskStateMapper.ARBITRARY,
        is_pointwise=False,
    )
    SHUFFLE = _PartitionerFacts(
        "ShufflePartitioner",
        "shuffle()",
        SubtaskStateMapper.ROUND_ROBIN,
        SubtaskStateMapper.ARBITRARY,
        is_pointwise=False,
    )
    RESCALE = _PartitionerFacts(
        "RescalePartitioner",
        "rescale()",
        SubtaskStateMapper.UNSUPPORTED,
        SubtaskStateMapper.UNSUPPORTED,
        is_pointwise=True,
    )
    HASH = _PartitionerFacts(
        "KeyGroupStreamPartitioner",
        "keyBy()",
        SubtaskStateMapper.RANGE,
        SubtaskStateMapper.ARBITRARY,
        is_pointwise=False,
    )
    BROADCAST = _PartitionerFacts(
        "BroadcastPartitioner",
        "broadcast()",
        SubtaskStateMapper.UNSUPPORTED,
        SubtaskStateMapper.UNSUPPORTED,
        is_pointwise=False,
        is_broadcast=True,
    )
    GLOBAL = _PartitionerFacts(
        "GlobalPartitioner",
        "global()",
        SubtaskStateMapper.FIRST,
        SubtaskStateMapper.ARBITRARY,
        is_pointwise=False,
    )
    CUSTOM = _PartitionerFacts(
        "CustomPartitionerWrapper",
        "partitionCustom()",
        SubtaskStateMapper.FULL,
        SubtaskStateMapper.ARBITRARY,
        is_pointwise=False,
    )

    @classmethod
    def parse(cls, name: str | Partitioner) -> Partitioner:
        """Accept ``keyBy``, ``hash``, ``KeyGroupStreamPartitioner``, ``rebalance()``, ..."""
        if isinstance(name, Partitioner):
            return name
        if not isinstance(name, str):  # a picker set to None from code, say
            raise InvalidParameterError(f"a partitioner is named by text, got {name!r}")
        text = name.strip().removesuffix("()").replace("-", "_").replace(" ", "_").lower()
        for partitioner in cls:
            aliases = {
                partitioner.name.lower(),
                partitioner.value.flink_class.lower(),
                partitioner.value.datastream_call.removesuffix("()").lower(),
            }
            if text in aliases or text in _EXTRA_ALIASES.get(partitioner.name, ()):
                return partitioner
        known = ", ".join(p.value.datastream_call.removesuffix("()") for p in cls)
        raise InvalidParameterError(f"unknown partitioner {name!r}; known partitioners: {known}")

    @property
    def flink_class(self) -> str:
        return self.value.flink_class

    @property
    def datastream_call(self) -> str:
        return self.value.datastream_call

    @property
    def downstream_mapper(self) -> SubtaskStateMapper:
        """Splits the consumer's input channel state."""
        return self.value.downstream_mapper

    @property
    def upstream_mapper(self) -> SubtaskStateMapper:
        """Splits the producer's output (subpartition) state."""
        return self.value.upstream_mapper

    @property
    def is_pointwise(self) -> bool:
        return self.value.is_pointwise

    @property
    def is_broadcast(self) -> bool:
        return self.value.is_broadcast

    @property
    def supports_unaligned_checkpoint(self) -> bool:
        """False for pointwise and broadcast exchanges: their barriers are aligned."""
        return not self.is_pointwise and not self.is_broadcast


_EXTRA_ALIASES = {
    "HASH": ("keyby", "keyed", "key_group", "keygroup"),
    "CUSTOM": ("partitioncustom", "custom_partitioner"),
}
