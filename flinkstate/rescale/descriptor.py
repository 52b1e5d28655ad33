"""``InflightDataRescalingDescriptor``: what a new subtask is told about its rescaled gate.

Flink hands every restored subtask one descriptor per input gate (and per result partition):
which old subtasks' state it got, how its new channels map to old channels, and which old
subtasks it shares with other new subtasks (so that their records must be filtered).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from flinkstate.rescale.mappings import SYMMETRIC_IDENTITY, RescaleMappings


class MappingType(StrEnum):
    IDENTITY = "identity"
    RESCALING = "rescaling"


@dataclass(frozen=True)
class GateOrPartitionRescalingDescriptor:
    """Flink's ``InflightDataGateOrPartitionRescalingDescriptor`` for one gate or partition."""

    old_subtask_indexes: tuple[int, ...]
    rescaled_channels_mapping: RescaleMappings
    ambiguous_subtask_indexes: frozenset[int]
    mapping_type: MappingType

    @property
    def is_identity(self) -> bool:
        return self.mapping_type is MappingType.IDENTITY

    def is_ambiguous(self, old_subtask: int) -> bool:
        """Records from ``old_subtask`` may belong to another new subtask: filter them."""
        return old_subtask in self.ambiguous_subtask_indexes


#: Nothing was rescaled: no old subtasks to demultiplex, channels map to themselves.
NO_RESCALE = GateOrPartitionRescalingDescriptor(
    old_subtask_indexes=(),
    rescaled_channels_mapping=SYMMETRIC_IDENTITY,
    ambiguous_subtask_indexes=frozenset(),
    mapping_type=MappingType.IDENTITY,
)
