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
    """Whether a gate's or partition's channels were rescaled: Flink's
    ``InflightDataGateOrPartitionRescalingDescriptor.MappingType``.

    Examples
    --------
    A gate of a subtask whose parallelism did not change maps its channels to themselves; one of a
    downscaled ``keyBy`` exchange demultiplexes:

    >>> NO_RESCALE.mapping_type
    <MappingType.IDENTITY: 'identity'>
    >>> from flinkstate.rescale.exchange import rescale_exchange
    >>> rescale_exchange("keyBy", (3, 2), (3, 2)).downstream[0].descriptor.mapping_type
    <MappingType.RESCALING: 'rescaling'>
    """

    IDENTITY = "identity"
    RESCALING = "rescaling"


@dataclass(frozen=True)
class GateOrPartitionRescalingDescriptor:
    """Flink's ``InflightDataGateOrPartitionRescalingDescriptor`` for one gate or partition.

    Examples
    --------
    The input gate of new subtask 0 after a ``keyBy`` exchange went from 3 to 2 subtasks on both
    sides (Flink's ``StateAssignmentOperationTest``): it reads old subtasks 0 and 1, old subtask 1
    is shared with new subtask 1, and old channels 0 and 2 arrive on its new channel 0:

    >>> from flinkstate.rescale.exchange import rescale_exchange
    >>> gate = rescale_exchange("keyBy", (3, 2), (3, 2)).downstream[0].descriptor
    >>> gate.old_subtask_indexes, sorted(gate.ambiguous_subtask_indexes)
    ((0, 1), [1])
    >>> print(gate.rescaled_channels_mapping)
    [[0, 2], [1]]
    >>> gate.is_ambiguous(0), gate.is_ambiguous(1), gate.is_identity
    (False, True, False)
    """

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
