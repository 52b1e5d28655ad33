"""``flinkstate buffers``: how many network buffers a gate, a result partition and a
TaskManager get, by Flink's arithmetic."""

from __future__ import annotations

import argparse
import json
from typing import Any

from flinkstate.cli.table import render_table
from flinkstate.errors import InvalidParameterError
from flinkstate.memory_size import parse_bytes
from flinkstate.network.config import number_of_network_buffers
from flinkstate.network.gate_buffers_spec import (
    DEFAULT_MAX_REQUIRED_BUFFERS_PER_GATE_FOR_STREAM,
    create_gate_buffers_spec,
    effective_max_required_buffers_per_gate,
)
from flinkstate.network.netty_shuffle_utils import (
    UNBOUNDED_POOL_SIZE,
    SortShuffle,
    result_partition_pool_bounds,
)
from flinkstate.network.result_partition_type import ResultPartitionType


def add_buffers_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "buffers",
        help="network buffers of an input gate, a result partition and a TaskManager",
        description=(
            "Show the buffers Flink gives an input gate of CHANNELS channels (exclusive per "
            "channel, floating required and at most, the gate's target), the pool of a result "
            "partition of SUBPARTITIONS subpartitions, and with --network-memory how many "
            "buffers a TaskManager's network memory makes. Flink 2.x fixes 2 buffers per "
            "channel and 8 floating buffers per gate; the other values are what-ifs."
        ),
    )
    parser.add_argument("--channels", type=int, default=None, help="input channels of the gate")
    parser.add_argument(
        "--subpartitions", type=int, default=None, help="subpartitions of the result partition"
    )
    parser.add_argument(
        "--type",
        default=ResultPartitionType.PIPELINED_BOUNDED.value,
        help="partition type: " + ", ".join(t.value for t in ResultPartitionType),
    )
    parser.add_argument("--buffers-per-channel", type=int, default=2)
    parser.add_argument("--floating-buffers", type=int, default=8, help="per gate")
    parser.add_argument(
        "--max-required",
        type=int,
        default=None,
        help="taskmanager.network.memory.read-buffer.required-per-gate.max (default: none for "
        "pipelined inputs, 1000 for batch ones)",
    )
    parser.add_argument(
        "--sort-shuffle-min-buffers",
        type=int,
        default=SortShuffle().min_buffers,
        help="taskmanager.network.sort-shuffle.min-buffers",
    )
    parser.add_argument(
        "--network-memory", default=None, help="a TaskManager's network memory, e.g. 64m or 1g"
    )
    parser.add_argument(
        "--segment-size", default="32k", help="taskmanager.memory.segment-size (default 32k)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.set_defaults(handler=_buffers)


def _bound(value: int) -> int | str:
    return "unbounded" if value == UNBOUNDED_POOL_SIZE else value


def _buffers(args: argparse.Namespace) -> str:
    if args.channels is None and args.subpartitions is None and args.network_memory is None:
        raise InvalidParameterError(
            "name what to size: --channels (an input gate), --subpartitions (a result "
            "partition) or --network-memory (a TaskManager)"
        )
    kind = ResultPartitionType.parse(args.type)
    report: dict[str, Any] = {"partition_type": kind.flink}
    sections = []
    if args.channels is not None:
        spec = create_gate_buffers_spec(
            args.channels,
            args.buffers_per_channel,
            args.floating_buffers,
            kind,
            args.max_required,
        )
        cap = effective_max_required_buffers_per_gate(kind, args.max_required)
        capped = None if cap == DEFAULT_MAX_REQUIRED_BUFFERS_PER_GATE_FOR_STREAM else cap
        report["gate"] = {
            "channels": args.channels,
            "max_required_buffers": capped,
            "exclusive_per_channel": spec.exclusive_per_channel,
            "required_floating": spec.required_floating,
            "total_floating": spec.total_floating,
            "target_total": spec.target_total,
        }
        sections.append(
            f"input gate of {args.channels} channel(s) reading a {kind.flink} partition"
            + ("" if capped is None else f" (at most {capped} required buffers)")
            + "\n\n"
            + render_table(
                ["exclusive per channel", "floating required", "floating at most", "target"],
                [
                    [
                        spec.exclusive_per_channel,
                        spec.required_floating,
                        spec.total_floating,
                        spec.target_total,
                    ]
                ],
            )
        )
    if args.subpartitions is not None:
        minimum, maximum = result_partition_pool_bounds(
            args.subpartitions,
            args.buffers_per_channel,
            args.floating_buffers,
            kind,
            SortShuffle(min_buffers=args.sort_shuffle_min_buffers),
        )
        report["result_partition"] = {
            "subpartitions": args.subpartitions,
            "min": minimum,
            "max": None if maximum == UNBOUNDED_POOL_SIZE else maximum,
        }
        sections.append(
            f"{kind.flink} result partition of {args.subpartitions} subpartition(s)\n\n"
            + render_table(["pool min", "pool max"], [[minimum, _bound(maximum)]])
        )
    if args.network_memory is not None:
        memory = parse_bytes(args.network_memory)
        page = parse_bytes(args.segment_size)
        count = number_of_network_buffers(memory, page)
        report["task_manager"] = {"network_memory": memory, "segment_size": page, "buffers": count}
        sections.append(
            f"{memory} bytes of network memory in {page}-byte segments: {count} network buffers"
        )
    if args.json:
        return json.dumps(report)
    return "\n\n".join(sections)
