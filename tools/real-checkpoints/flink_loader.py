"""Flink's own view of retained checkpoints, as JSON, for comparing flinkstate's reader with it.

Runs in the environment of the ``flink`` extra (``.venv-flink``): PyFlink's Java gateway starts a
JVM with Flink's jars, ``Checkpoints.loadCheckpointMetadata`` loads each ``_metadata``, and every
operator, subtask and state handle Flink loaded is written out under the field names of the
ground-truth reports in ``data/real-checkpoints`` (``chk-N.groundtruth.json``). Merged channel
handles are unmerged with Flink's ``ChannelStateHelper``, as restore does.

    .venv-flink/bin/python tools/real-checkpoints/flink_loader.py CHK_DIR [CHK_DIR ...] > out.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def main(paths: list[str]) -> None:
    from pyflink.java_gateway import get_gateway  # only in the flink extra's environment

    jvm = get_gateway().jvm
    report = {str(Path(p).resolve()): load(jvm, Path(p).resolve()) for p in paths}
    json.dump(report, sys.stdout, indent=1, sort_keys=True)


def load(jvm: Any, checkpoint: Path) -> dict[str, Any]:
    stream = jvm.java.io.DataInputStream(jvm.java.io.FileInputStream(str(checkpoint / "_metadata")))
    try:
        metadata = jvm.org.apache.flink.runtime.checkpoint.Checkpoints.loadCheckpointMetadata(
            stream, jvm.java.lang.ClassLoader.getSystemClassLoader(), str(checkpoint)
        )
    finally:
        stream.close()
    helper = jvm.org.apache.flink.runtime.state.ChannelStateHelper
    operators, channels, keyed = [], [], []
    for operator in items(metadata.getOperatorStates()):
        operator_id = operator.getOperatorID().toHexString()
        subtasks = []
        states = operator.getSubtaskStates()
        for index in sorted(items(states.keySet())):
            state = states.get(index)
            subtasks.append(
                {
                    "subtask_index": index,
                    "managed_operator_state": [
                        operator_state(h) for h in items(state.getManagedOperatorState())
                    ],
                    "raw_operator_state": [
                        operator_state(h) for h in items(state.getRawOperatorState())
                    ],
                    "raw_keyed_state": [
                        str(h.getClass().getName()) for h in items(state.getRawKeyedState())
                    ],
                }
            )
            for handle in items(state.getManagedKeyedState()):
                keyed.append(keyed_handle(operator_id, index, handle))
            for handle in items(helper.extractUnmergedInputHandles(state)):
                channels.append(channel(operator_id, handle, "input"))
            for handle in items(helper.extractUnmergedOutputHandles(state)):
                channels.append(channel(operator_id, handle, "output"))
        coordinator = operator.getCoordinatorState()
        operators.append(
            {
                "operator_id": operator_id,
                "name": optional(operator.getOperatorName()),
                "uid": optional(operator.getOperatorUid()),
                "parallelism": operator.getParallelism(),
                "max_parallelism": operator.getMaxParallelism(),
                "fully_finished": operator.isFullyFinished(),
                "coordinator_state": None if coordinator is None else stream_handle(coordinator),
                "subtasks": subtasks,
            }
        )
    return {
        "checkpoint_id": metadata.getCheckpointId(),
        "master_states": [str(m.getName()) for m in items(metadata.getMasterStates())],
        "operators": operators,
        "channel_state_handles": channels,
        "keyed_state_handles": keyed,
    }


def items(collection: Any) -> list[Any]:
    """The elements of a Java collection (py4j converts lists and sets, not every
    ``Collection``)."""
    found = []
    iterator = collection.iterator()
    while iterator.hasNext():
        found.append(iterator.next())
    return found


def optional(value: Any) -> str | None:
    return str(value.get()) if value.isPresent() else None


def stream_handle(handle: Any) -> dict[str, Any]:
    """A delegate under the reports' names: the tag its class has in ``_metadata`` and what
    the bytes of ``_metadata`` hold for it."""
    kind = handle.getClass().getSimpleName()
    if kind == "ByteStreamStateHandle":
        return {
            "metadata_tag": 1,
            "handle_name": str(handle.getHandleName()),
            "inline_bytes": len(handle.getData()),
        }
    if kind == "RelativeFileStateHandle":
        return {
            "metadata_tag": 6,
            "relative_path": str(handle.getRelativePath()),
            "size": handle.getStateSize(),
        }
    if kind == "FileStateHandle":
        return {
            "metadata_tag": 2,
            "path_as_stored": str(handle.getFilePath().toString()),
            "size": handle.getStateSize(),
        }
    if kind == "SegmentFileStateHandle":
        return {
            "metadata_tag": 15,
            "path_as_stored": str(handle.getFilePath().toString()),
            "start_pos": handle.getStartPos(),
            "size": handle.getStateSize(),
            "scope": str(handle.getScope().name()),
            "logical_file_id": str(handle.getLogicalFileId().getKeyString()),
        }
    if kind == "EmptySegmentFileStateHandle":
        return {"metadata_tag": 16, "size": 0}
    raise ValueError(f"a stream handle this report does not know: {kind}")


def operator_state(handle: Any) -> dict[str, Any]:
    offsets = handle.getStateNameToPartitionOffsets()
    return {
        "states": {
            str(name): {
                "mode": str(offsets.get(name).getDistributionMode().name()),
                "offsets": list(offsets.get(name).getOffsets()),
            }
            for name in items(offsets.keySet())
        },
        "state_size": handle.getStateSize(),
        "delegate": stream_handle(handle.getDelegateStateHandle()),
    }


def keyed_handle(operator_id: str, subtask: int, handle: Any) -> dict[str, Any]:
    kind = handle.getClass().getSimpleName()
    if kind != "KeyGroupsStateHandle":
        raise ValueError(f"a keyed-state handle this report does not know: {kind}")
    groups = handle.getKeyGroupRange()
    offsets = handle.getGroupRangeOffsets()
    return {
        "operator_id": operator_id,
        "subtask_index": subtask,
        "class": str(handle.getClass().getName()),
        "key_group_start": groups.getStartKeyGroup(),
        "key_group_end": groups.getEndKeyGroup(),
        "key_group_offsets": [
            offsets.getKeyGroupOffset(g)
            for g in range(groups.getStartKeyGroup(), groups.getEndKeyGroup() + 1)
        ],
        "state_size": handle.getStateSize(),
        "state_handle_id": str(handle.getStateHandleId().getKeyString()),
        "delegate": stream_handle(handle.getDelegateStateHandle()),
    }


def channel(operator_id: str, handle: Any, kind: str) -> dict[str, Any]:
    info = handle.getInfo()
    where = (
        {"gate_idx": info.getGateIdx(), "input_channel_idx": info.getInputChannelIdx()}
        if kind == "input"
        else {
            "partition_idx": info.getPartitionIdx(),
            "subpartition_idx": info.getSubPartitionIdx(),
        }
    )
    return {
        "operator_id": operator_id,
        "subtask_index": handle.getSubtaskIndex(),
        "kind": kind,
        **where,
        "offsets": list(handle.getOffsets()),
        "state_size": handle.getStateSize(),
        "delegate": stream_handle(handle.getDelegate()),
    }


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: flink_loader.py CHK_DIR [CHK_DIR ...]")
    main(sys.argv[1:])
