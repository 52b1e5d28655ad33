"""Rescaling in-flight data: subtask state mappers, rescale mappings, partitioners, exchanges,
virtual channels and record filters."""

from __future__ import annotations

from flinkstate.face import lazy_face
from flinkstate.rescale.descriptor import (
    NO_RESCALE,
    GateOrPartitionRescalingDescriptor,
    MappingType,
)
from flinkstate.rescale.exchange import (
    DownstreamSubtaskRescale,
    DownstreamSubtaskSummary,
    ExchangeRescale,
    ExchangeSummary,
    UpstreamSubtaskRescale,
    UpstreamSubtaskSummary,
    VirtualChannelBlock,
    rescale_exchange,
    summarise_exchange,
)
from flinkstate.rescale.mapper import UNSUPPORTED_MESSAGE, MapperRanges, SubtaskStateMapper
from flinkstate.rescale.mappings import SYMMETRIC_IDENTITY, RescaleMappings
from flinkstate.rescale.partitioner import Partitioner
from flinkstate.rescale.record_filter import PartitionerRecordFilter
from flinkstate.rescale.virtual_channels import VirtualChannel, virtual_channels

#: the rest of the package's face, loaded on first use (``flinkstate.face``): what other
#: packages use beyond the values above (``tests/test_faces.py`` holds them to it)
FACE: dict[str, str] = {
    "ChannelSelection": "channel_selection",
    "ConsumerInputs": "reassignment",
    "InputReassignment": "reassignment",
    "input_state_redistributed": "reassignment",
    "output_state_redistributed": "reassignment",
    "StatelessAssignment": "reassignment",
    "MappingScope": "reassignment",
    "check_subtask_mappings": "reassignment",
    "VertexState": "reassignment",
    "input_mapping_computed": "reassignment",
    "output_mapping_computed": "reassignment",
    "state_assigned": "reassignment",
    "JobShape": "routes",
    "key_type_of": "routes",
    "MAX_SWEEP": "routes",
    "OUTPUT": "routes",
    "SweepPlan": "routes",
}
__getattr__, __dir__ = lazy_face(__name__, FACE)

__all__ = [
    "NO_RESCALE",
    "SYMMETRIC_IDENTITY",
    "UNSUPPORTED_MESSAGE",
    "DownstreamSubtaskRescale",
    "DownstreamSubtaskSummary",
    "ExchangeRescale",
    "ExchangeSummary",
    "GateOrPartitionRescalingDescriptor",
    "MapperRanges",
    "MappingType",
    "Partitioner",
    "PartitionerRecordFilter",
    "RescaleMappings",
    "SubtaskStateMapper",
    "UpstreamSubtaskRescale",
    "UpstreamSubtaskSummary",
    "VirtualChannel",
    "VirtualChannelBlock",
    "rescale_exchange",
    "summarise_exchange",
    "virtual_channels",
    *FACE,
]
