"""``flinkstate buffers``: how many network buffers a gate, a result partition and a
TaskManager get, by Flink's arithmetic, and whether the TaskManager's buffers are enough when
its tasks set the gates and partitions up."""

from __future__ import annotations

import argparse
import json
from typing import Any

from flinkstate.cli.table import render_table
from flinkstate.errors import InvalidParameterError
from flinkstate.memory_segment import DEFAULT_SEGMENT_SIZE, check_segment_size
from flinkstate.memory_size import parse_bytes
from flinkstate.runtime.buffer.network_buffer_pool import JAVA_INT_MAX
from flinkstate.runtime.shuffle.config import (
    DEFAULT_MAX_BUFFERS_PER_CHANNEL,
    number_of_network_buffers,
)
from flinkstate.runtime.shuffle.gate_buffers_spec import (
    DEFAULT_MAX_REQUIRED_BUFFERS_PER_GATE_FOR_STREAM,
    create_gate_buffers_spec,
    effective_max_required_buffers_per_gate,
)
from flinkstate.runtime.shuffle.netty_shuffle_utils import (
    UNBOUNDED_POOL_SIZE,
    SortShuffle,
    result_partition_pool_bounds,
)
from flinkstate.runtime.shuffle.result_partition_type import ResultPartitionType
from flinkstate.runtime.tasks.task_setup import (
    GateSetup,
    PartitionSetup,
    PoolSize,
    SetupReport,
    setup_partitions_and_gates,
)

#: exit status when the TaskManager's buffers are not enough for the setup
SETUP_REFUSED = 1
#: how much playing a setup request by request may cost: remote channels x local pools
#: (every request resizes every pool; 5 million take a few seconds)
MAX_SETUP_WORK = 5_000_000
MAX_POOLS = 1000


def add_buffers_parser(subparsers: Any) -> None:
    r"""Add ``flinkstate buffers``: the buffers Flink gives an input gate, a result partition and a
    TaskManager, and whether they are enough when the TaskManager's tasks set up.

    Examples
    --------
    A gate of 4 channels and a partition of 4 subpartitions, with Flink 2.x's 2 buffers per channel
    and 8 floating buffers per gate: the gate's figures are those of Flink's
    ``GateBuffersSpecTest``; the partition's pool holds at least a buffer per subpartition and one
    more, at most 2 per subpartition and the 8 floating ones (``NettyShuffleUtils``):

    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="flinkstate")
    >>> add_buffers_parser(parser.add_subparsers())
    >>> args = parser.parse_args(["buffers", "--channels", "4", "--subpartitions", "4"])
    >>> print(args.handler(args))
    input gate of 4 channel(s) reading a PIPELINED_BOUNDED partition
    <BLANKLINE>
    exclusive per channel  floating required  floating at most  target
    ---------------------  -----------------  ----------------  ------
                        2                  1                 8      16
    <BLANKLINE>
    PIPELINED_BOUNDED result partition of 4 subpartition(s)
    <BLANKLINE>
    pool min  pool max
    --------  --------
           5        16

    A TaskManager's 64 MiB of network memory in 32 KiB segments, setting up one such partition and
    one such gate:

    >>> args = parser.parse_args(
    ...     ["buffers", "--channels", "4", "--subpartitions", "4", "--network-memory", "64m",
    ...      "--gates", "1"]
    ... )
    >>> text, status = args.handler(args)
    >>> print(text.split("\n\n", 4)[4])  # doctest: +NORMALIZE_WHITESPACE
    67108864 bytes of network memory in 32768-byte segments: 2048 network buffers
    <BLANKLINE>
    a TaskManager of 2048 network buffers setting up 1 result partition(s), then 1 input gate(s)
    (every channel remote)
    <BLANKLINE>
    pool                required  max  size  free
    ------------------  --------  ---  ----  ----
    result partition 1         5   16    16     1
    input gate 1               1    8     8     1
    <BLANKLINE>
    reserved 14 of 2048 segments (8 as exclusive buffers of remote channels); 2038 free in the
    global pool
    >>> status
    0

    Sixteen partitions and sixteen gates of 1000 channels each do not fit in 1 GiB: Flink refuses
    them where the buffers run out:

    >>> args = parser.parse_args(
    ...     ["buffers", "--channels", "1000", "--subpartitions", "1000", "--network-memory", "1g",
    ...      "--gates", "16", "--partitions", "16"]
    ... )
    >>> text, status = args.handler(args)
    >>> status, text.splitlines()[-1].split(": ")[0]
    (1, 'refused at the exclusive buffers of remote channel 369 of input gate 9')
    """
    parser = subparsers.add_parser(
        "buffers",
        help="network buffers of an input gate, a result partition and a TaskManager",
        description=(
            "Show the buffers Flink gives an input gate of CHANNELS channels (exclusive per "
            "channel, floating required and at most, the gate's target), the pool of a result "
            "partition of SUBPARTITIONS subpartitions, and with --network-memory how many "
            "buffers a TaskManager's network memory makes; with --partitions N and/or --gates "
            "N too, whether they are enough when its tasks set up N such partitions and then N "
            "such gates (every channel remote), request by request as Flink does: each pool's "
            "size after redistribution, or Flink's refusal where the buffers run out (exit "
            "status 1). "
            "Flink 2.x fixes 2 buffers per channel and 8 floating buffers per gate; the other "
            "values are what-ifs."
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
        "--segment-size",
        default=None,
        help="taskmanager.memory.segment-size (default 32k), with --network-memory",
    )
    parser.add_argument(
        "--gates",
        type=int,
        default=None,
        metavar="N",
        help="set up N gates of --channels channels on the --network-memory buffers (1 when "
        "only --partitions is given)",
    )
    parser.add_argument(
        "--partitions",
        type=int,
        default=None,
        metavar="N",
        help="set up N partitions of --subpartitions subpartitions on the --network-memory "
        "buffers, before the gates (1 when only --gates is given)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.set_defaults(handler=_buffers)


def _bound(value: int) -> int | str:
    return "unbounded" if value == UNBOUNDED_POOL_SIZE else value


def _buffers(args: argparse.Namespace) -> str | tuple[str, int]:
    """Size what was named (a gate, a partition, a TaskManager) and, given counts, play the
    TaskManager's setup; its exit status says whether the buffers were enough."""
    if args.channels is None and args.subpartitions is None and args.network_memory is None:
        raise InvalidParameterError(
            "name what to size: --channels (an input gate), --subpartitions (a result "
            "partition) or --network-memory (a TaskManager)"
        )
    _check_counts(args)
    gates, partitions = _setup_counts(args)
    kind = ResultPartitionType.parse(args.type)
    report: dict[str, Any] = {"partition_type": kind.flink}
    sections = []
    gate_setup: GateSetup | None = None
    partition_setup: PartitionSetup | None = None
    if args.channels is not None:
        gate_setup, report["gate"], text = _gate(args, kind)
        sections.append(text)
    if args.subpartitions is not None:
        partition_setup, report["result_partition"], text = _partition(args, kind)
        sections.append(text)
    if args.network_memory is not None:
        memory = parse_bytes(args.network_memory)
        given = args.segment_size
        page = check_segment_size(DEFAULT_SEGMENT_SIZE if given is None else parse_bytes(given))
        count = number_of_network_buffers(memory, page)
        report["task_manager"] = {"network_memory": memory, "segment_size": page, "buffers": count}
        sections.append(
            f"{memory} bytes of network memory in {page}-byte segments: {count} network buffers"
        )
        if args.gates is not None or args.partitions is not None:
            setup = setup_partitions_and_gates(
                count,
                page,
                [partition_setup] * partitions if partition_setup is not None else [],
                [gate_setup] * gates if gate_setup is not None else [],
            )
            report["setup"] = _setup_json(setup)
            sections.append(_setup_text(setup, partitions, gates))
            status = 0 if setup.fits else SETUP_REFUSED
            if args.json:
                return json.dumps(report), status
            return "\n\n".join(sections), status
    if args.json:
        return json.dumps(report)
    return "\n\n".join(sections)


#: the options that count something Flink counts in a Java int
_COUNTS = (
    "channels",
    "subpartitions",
    "buffers_per_channel",
    "floating_buffers",
    "max_required",
    "sort_shuffle_min_buffers",
    "gates",
    "partitions",
)


def _check_counts(args: argparse.Namespace) -> None:
    """Refuse a count past a Java int (Flink could not hold it; the arithmetic would stop at
    2147483647 without a word) and a segment size that sizes nothing."""
    for name in _COUNTS:
        value = getattr(args, name)
        if value is not None and value > JAVA_INT_MAX:
            raise InvalidParameterError(
                f"--{name.replace('_', '-')} {value} is more than Flink counts in an int "
                f"({JAVA_INT_MAX})"
            )
    if args.segment_size is not None and args.network_memory is None:
        raise InvalidParameterError(
            "--segment-size divides a TaskManager's --network-memory into buffers; give "
            "--network-memory with it (a gate's or a partition's buffers are counted, not sized)"
        )


def _gate(
    args: argparse.Namespace, kind: ResultPartitionType
) -> tuple[GateSetup, dict[str, Any], str]:
    """An input gate's buffers (exclusive, floating, target), as its setup, JSON and text."""
    spec = create_gate_buffers_spec(
        args.channels,
        args.buffers_per_channel,
        args.floating_buffers,
        kind,
        args.max_required,
    )
    cap = effective_max_required_buffers_per_gate(kind, args.max_required)
    capped = None if cap == DEFAULT_MAX_REQUIRED_BUFFERS_PER_GATE_FOR_STREAM else cap
    report = {
        "channels": args.channels,
        "max_required_buffers": capped,
        "exclusive_per_channel": spec.exclusive_per_channel,
        "required_floating": spec.required_floating,
        "total_floating": spec.total_floating,
        "target_total": spec.target_total,
    }
    text = (
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
    return GateSetup(spec, args.channels), report, text


def _partition(
    args: argparse.Namespace, kind: ResultPartitionType
) -> tuple[PartitionSetup, dict[str, Any], str]:
    """A result partition's pool bounds, as its setup, JSON and text."""
    minimum, maximum = result_partition_pool_bounds(
        args.subpartitions,
        args.buffers_per_channel,
        args.floating_buffers,
        kind,
        SortShuffle(min_buffers=args.sort_shuffle_min_buffers),
    )
    setup = PartitionSetup(minimum, maximum, args.subpartitions, DEFAULT_MAX_BUFFERS_PER_CHANNEL)
    report = {
        "subpartitions": args.subpartitions,
        "min": minimum,
        "max": None if maximum == UNBOUNDED_POOL_SIZE else maximum,
    }
    text = (
        f"{kind.flink} result partition of {args.subpartitions} subpartition(s)\n\n"
        + render_table(["pool min", "pool max"], [[minimum, _bound(maximum)]])
    )
    return setup, report, text


def _setup_counts(args: argparse.Namespace) -> tuple[int, int]:
    """How many gates and partitions the TaskManager sets up; refused without what they
    need, or when playing them request by request would take too long."""
    for flag, value, needs, present in (
        ("--gates", args.gates, "--channels", args.channels),
        ("--partitions", args.partitions, "--subpartitions", args.subpartitions),
    ):
        if value is None:
            continue
        if args.network_memory is None or present is None:
            raise InvalidParameterError(f"{flag} needs --network-memory and {needs}")
        if not 1 <= value <= MAX_POOLS:
            raise InvalidParameterError(f"{flag} must be between 1 and {MAX_POOLS}, got {value}")
    gates = 0 if args.channels is None else (args.gates or 1)
    partitions = 0 if args.subpartitions is None else (args.partitions or 1)
    if args.gates is not None or args.partitions is not None:
        work = gates * (args.channels or 0) * (gates + partitions)
        if work > MAX_SETUP_WORK:
            raise InvalidParameterError(
                f"{gates} gate(s) of {args.channels} channel(s) beside {partitions} "
                f"partition(s) are too many to play request by request: remote channels x "
                f"pools is {work}, at most {MAX_SETUP_WORK}"
            )
    return gates, partitions


def _pool_rows(pools: tuple[PoolSize, ...]) -> list[list[object]]:
    """One row per run of pools of one kind alike in every figure (``input gates 1-16``)."""
    rows: list[list[object]] = []
    runs: list[tuple[PoolSize, int]] = []
    for pool in pools:
        if runs:
            first, last = runs[-1]
            if (first.kind, first.required, first.maximum, first.size, first.free) == (
                pool.kind,
                pool.required,
                pool.maximum,
                pool.size,
                pool.free,
            ) and pool.index == last + 1:
                runs[-1] = (first, pool.index)
                continue
        runs.append((pool, pool.index))
    for first, last in runs:
        name = (
            f"{first.kind} {first.index}"
            if first.index == last
            else f"{first.kind}s {first.index}-{last}"
        )
        rows.append([name, first.required, _bound(first.maximum), first.size, first.free])
    return rows


def _setup_text(setup: SetupReport, partitions: int, gates: int) -> str:
    parts = []
    if partitions:
        parts.append(f"{partitions} result partition(s)")
    if gates:
        parts.append(f"{gates} input gate(s) (every channel remote)")
    lines = [
        f"a TaskManager of {setup.segments} network buffers setting up " + ", then ".join(parts),
        "",
        render_table(["pool", "required", "max", "size", "free"], _pool_rows(setup.pools)),
        "",
        f"reserved {setup.required} of {setup.segments} segments ({setup.exclusive} as "
        f"exclusive buffers of remote channels); {setup.available} free in the global pool",
    ]
    if setup.usage_warning is not None:
        lines.append(f"Flink warns: {setup.usage_warning}")
    if setup.refusal is not None:
        lines.append(f"refused at {setup.refused_at}: {setup.refusal}")
    return "\n".join(lines)


def _setup_json(setup: SetupReport) -> dict[str, Any]:
    return {
        "segments": setup.segments,
        "segment_size": setup.segment_size,
        "pools": [
            {
                "kind": pool.kind.value,
                "index": pool.index,
                "required": pool.required,
                "max": None if pool.maximum == UNBOUNDED_POOL_SIZE else pool.maximum,
                "size": pool.size,
                "free": pool.free,
            }
            for pool in setup.pools
        ],
        "exclusive": setup.exclusive,
        "required": setup.required,
        "available": setup.available,
        "usage_percent": setup.usage,
        "usage_warning": setup.usage_warning,
        "fits": setup.fits,
        "refusal": setup.refusal,
        "refused_at": setup.refused_at,
    }
