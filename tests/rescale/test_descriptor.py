"""A gate's or partition's rescaling descriptor, against the values of Flink's
``InflightDataRescalingDescriptorTest``.

Flink has two descriptors that name nothing: ``InflightDataRescalingDescriptor.NO_RESCALE``
(a whole task) and ``InflightDataGateOrPartitionRescalingDescriptor.NO_STATE`` (one gate or
partition of a task that rescaled, carrying no channel state since FLINK-38267). Both answer
no old subtasks, the symmetric identity and no ambiguous subtask; the model's one value for
them is :data:`~flinkstate.rescale.NO_RESCALE`. A task's descriptor is the tuple of its gates'
(or partitions') descriptors (``TaskRestore.gates`` and ``.partitions``).
"""

from __future__ import annotations

from flinkstate.rescale import (
    NO_RESCALE,
    SYMMETRIC_IDENTITY,
    GateOrPartitionRescalingDescriptor,
    MappingType,
    RescaleMappings,
)


def test_no_state_descriptor_returns_empty_old_subtask_instances() -> None:
    # InflightDataRescalingDescriptorTest.testNoStateDescriptorReturnsEmptyOldSubtaskInstances
    # (FLINK-38483)
    assert NO_RESCALE.old_subtask_indexes == ()


def test_no_state_descriptor_returns_symmetric_identity() -> None:
    # InflightDataRescalingDescriptorTest.testNoStateDescriptorReturnsSymmetricIdentity
    # (FLINK-38483): Integer.MAX_VALUE sources and targets
    assert NO_RESCALE.rescaled_channels_mapping == SYMMETRIC_IDENTITY
    assert RescaleMappings.identity(2**31 - 1, 2**31 - 1) == SYMMETRIC_IDENTITY
    assert SYMMETRIC_IDENTITY.is_identity


def test_no_state_descriptor_is_identity() -> None:
    # InflightDataRescalingDescriptorTest.testNoStateDescriptorIsIdentity
    assert NO_RESCALE.is_identity
    assert NO_RESCALE.mapping_type is MappingType.IDENTITY
    assert NO_RESCALE.ambiguous_subtask_indexes == frozenset()


def test_regular_descriptor_does_not_throw() -> None:
    # InflightDataRescalingDescriptorTest.testRegularDescriptorDoesNotThrow: old subtasks
    # {0, 1, 2}, mappings {{0}, {1}, {2}} over 3 targets, RESCALING: not an identity
    # descriptor, though its mapping normalises to the identity
    mappings = RescaleMappings.of([[0], [1], [2]], 3)
    descriptor = GateOrPartitionRescalingDescriptor(
        (0, 1, 2), mappings, frozenset(), MappingType.RESCALING
    )
    assert descriptor.old_subtask_indexes == (0, 1, 2)
    assert descriptor.rescaled_channels_mapping == mappings
    assert mappings.is_identity
    assert not descriptor.is_identity


def test_identity_descriptor() -> None:
    # InflightDataRescalingDescriptorTest.testIdentityDescriptor: old subtasks {0},
    # identity(1, 1), IDENTITY
    mappings = RescaleMappings.identity(1, 1)
    descriptor = GateOrPartitionRescalingDescriptor(
        (0,), mappings, frozenset(), MappingType.IDENTITY
    )
    assert descriptor.is_identity
    assert descriptor.old_subtask_indexes == (0,)
    assert descriptor.rescaled_channels_mapping == mappings


def test_task_descriptor_with_a_no_state_gate() -> None:
    # InflightDataRescalingDescriptorTest.testInflightDataRescalingDescriptorWithNoStateDescriptor:
    # gate 0 NO_STATE, gate 1 old subtasks {0, 1} with mappings {{0}, {1}} over 2 targets
    gates = (
        NO_RESCALE,
        GateOrPartitionRescalingDescriptor(
            (0, 1), RescaleMappings.of([[0], [1]], 2), frozenset(), MappingType.RESCALING
        ),
    )
    assert gates[0].old_subtask_indexes == ()
    assert gates[0].rescaled_channels_mapping == SYMMETRIC_IDENTITY
    assert gates[1].old_subtask_indexes == (0, 1)
    assert gates[1].rescaled_channels_mapping is not None
    assert not gates[0].is_ambiguous(0)
