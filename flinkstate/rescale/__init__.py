"""Rescaling in-flight data: subtask state mappers, rescale mappings, partitioners, exchanges."""

from __future__ import annotations

from flinkstate.rescale.descriptor import (
    NO_RESCALE,
    GateOrPartitionRescalingDescriptor,
    MappingType,
)
from flinkstate.rescale.exchange import (
    DownstreamSubtaskRescale,
    ExchangeRescale,
    UpstreamSubtaskRescale,
    VirtualChannel,
    rescale_exchange,
)
from flinkstate.rescale.mapper import UNSUPPORTED_MESSAGE, SubtaskStateMapper
from flinkstate.rescale.mappings import SYMMETRIC_IDENTITY, RescaleMappings
from flinkstate.rescale.partitioner import Partitioner

__all__ = [
    "NO_RESCALE",
    "SYMMETRIC_IDENTITY",
    "UNSUPPORTED_MESSAGE",
    "DownstreamSubtaskRescale",
    "ExchangeRescale",
    "GateOrPartitionRescalingDescriptor",
    "MappingType",
    "Partitioner",
    "RescaleMappings",
    "SubtaskStateMapper",
    "UpstreamSubtaskRescale",
    "VirtualChannel",
    "rescale_exchange",
]
