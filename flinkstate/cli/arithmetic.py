"""``flinkstate keygroup`` and ``flinkstate mapping``: Flink's rescaling arithmetic as tables,
down to one input channel's virtual channels and one subtask's record filter."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from typing import Any

from flinkstate.cli.table import format_indexes, render_table
from flinkstate.errors import InvalidParameterError, KeyTypeError
from flinkstate.javahash import JavaType, infer_java_type, long_key
from flinkstate.keygroups import (
    assign_to_key_group,
    check_parallelism_against_max,
    compute_default_max_parallelism,
    key_group_ranges,
    place_key,
)
from flinkstate.rescale import (
    ExchangeSummary,
    Partitioner,
    PartitionerRecordFilter,
    SubtaskStateMapper,
    VirtualChannel,
    VirtualChannelBlock,
    rescale_exchange,
    summarise_exchange,
    virtual_channels,
)

#: the most values ``mapping --json`` lists, and the largest plan ``--channel`` builds to read
#: one gate of it: a FULL mapping from 20000 to 20000 subtasks is 400 million pairs, gigabytes
#: of JSON; the tables show any mapping as ranges instead
MAX_JSON_VALUES = 1_000_000


def add_keygroup_parser(subparsers: Any) -> None:
    """Add ``flinkstate keygroup``: the key group and subtask of each key, every step of Flink's
    arithmetic shown, or every subtask's key-group range.

    Examples
    --------
    An ``Integer`` and a ``String`` key at parallelism 3, in the key groups Flink gives them
    (``tests/reference``):

    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="flinkstate")
    >>> add_keygroup_parser(parser.add_subparsers())
    >>> args = parser.parse_args(["keygroup", "-p", "3", "42", "Flink"])
    >>> print(args.handler(args))
    max parallelism 128 (Flink's default for parallelism 3), parallelism 3
    <BLANKLINE>
    key      type     hashCode()  murmurHash  key group  subtask  subtask owns
    -------  -------  ----------  ----------  ---------  -------  ------------
    42       Integer          42  1134849565         29        0  [0, 42]
    'Flink'  String     67968320   688019071        127        2  [86, 127]
    <BLANKLINE>
    Whole numbers were read as Integer; pass --type long for Long keys.

    Without a key, every subtask's key groups:

    >>> args = parser.parse_args(["keygroup", "-p", "3"])
    >>> print(args.handler(args))
    max parallelism 128 (Flink's default for parallelism 3), parallelism 3
    <BLANKLINE>
    subtask  first key group  last key group  key groups
    -------  ---------------  --------------  ----------
          0                0              42          43
          1               43              85          43
          2               86             127          42
    """
    parser = subparsers.add_parser(
        "keygroup",
        help="which key group and subtask a key goes to",
        description=(
            "Show the Java hashCode, murmur hash, key group and owning subtask of each KEY, as "
            "Flink's keyBy computes them. Without KEY, list every subtask's key-group range."
        ),
    )
    parser.add_argument("keys", nargs="*", metavar="KEY", help="key value(s)")
    parser.add_argument("-p", "--parallelism", type=int, required=True, help="operator parallelism")
    parser.add_argument(
        "-m",
        "--max-parallelism",
        type=int,
        default=None,
        help="number of key groups (default: Flink's default for the parallelism)",
    )
    parser.add_argument(
        "-t",
        "--type",
        default="auto",
        help="Java key type: auto, "
        + ", ".join(t.value for t in JavaType)
        + " (auto: Integer for whole numbers that fit 32 bits, Long for larger "
        "ones, else String)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(handler=_keygroup)


def add_mapping_parser(subparsers: Any) -> None:
    """Add ``flinkstate mapping``: a subtask state mapper's mapping both ways, or a whole exchange's
    recovery plan, down to one channel's virtual channels and one subtask's record filter.

    Examples
    --------
    RANGE from 3 to 4 subtasks (Flink's ``SubtaskStateMapperTest``):

    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="flinkstate")
    >>> add_mapping_parser(parser.add_subparsers())
    >>> args = parser.parse_args(["mapping", "--mapper", "range", "--old", "3", "--new", "4"])
    >>> print(args.handler(args))
    RANGE 3 -> 4: old key-group ranges onto new ones; overlaps are filtered
    <BLANKLINE>
    new subtask  reads old subtasks  shared, filtered
    -----------  ------------------  ----------------
              0  0                   0
              1  0, 1                0, 1
              2  1, 2                1, 2
              3  2                   2
    <BLANKLINE>
    old subtask  read by new subtasks
    -----------  --------------------
              0  0, 1
              1  1, 2
              2  2, 3

    New subtask 1 of a keyBy rescaled from 2 to 3: what its input channel 0 carries, and which
    records its filter keeps (``Long`` 42 is in key group 29, subtask 0's; 4294967295 in 80, its
    own):

    >>> args = parser.parse_args(
    ...     ["mapping", "--partitioner", "keyBy", "--old", "2", "--new", "3", "--subtask", "1",
    ...      "--channel", "0", "--key", "42", "--key", "4294967295"]
    ... )
    >>> print(args.handler(args))  # doctest: +NORMALIZE_WHITESPACE
    keyBy() (KeyGroupStreamPartitioner): upstream 2 -> 3, downstream 2 -> 3; mappers: downstream
    RANGE, upstream ARBITRARY
    <BLANKLINE>
    new downstream subtask 1, input channel 0:
      old subtasks it reads      0, 1
      of them shared (filtered)  0, 1
      old channels mapped to it  0
      virtual channels           (0,0)* (1,0)*
      each is (old subtask, old channel); * = its records are kept only if this subtask owns them
    <BLANKLINE>
    record filter of new subtask 1 of 3, max parallelism 128 (Flink's default for --old 2; a
    restore keeps it):
    <BLANKLINE>
           key  key group  owner  subtask 1
    ----------  ---------  -----  ---------
            42         29      0  drops
    4294967295         80      1  keeps
    <BLANKLINE>
    owner: the key group's owner at the new parallelism. The filter applies only to records of
    filtered virtual channels (*); every other record is kept.
    """
    parser = subparsers.add_parser(
        "mapping",
        help="which old subtasks' in-flight data each new subtask reads",
        description=(
            "Show a SubtaskStateMapper's mapping from OLD to NEW parallelism in both directions, "
            "or with --partitioner the whole recovery plan of one exchange: the state each new "
            "subtask reads, the virtual channels it demultiplexes and which of them it filters."
        ),
    )
    choice = parser.add_mutually_exclusive_group(required=True)
    choice.add_argument("--mapper", help=", ".join(m.name for m in SubtaskStateMapper))
    choice.add_argument(
        "--partitioner", help=", ".join(p.datastream_call.removesuffix("()") for p in Partitioner)
    )
    parser.add_argument("--old", type=int, required=True, help="old parallelism")
    parser.add_argument("--new", type=int, required=True, help="new parallelism")
    parser.add_argument(
        "--upstream-old",
        type=int,
        default=None,
        help="with --partitioner: old upstream parallelism (default --old)",
    )
    parser.add_argument(
        "--upstream-new",
        type=int,
        default=None,
        help="with --partitioner: new upstream parallelism (default --new)",
    )
    parser.add_argument(
        "--recover-output-on-downstream",
        action="store_true",
        help="with --partitioner: the downstream reads the upstream's output state",
    )
    parser.add_argument(
        "--subtask",
        type=int,
        default=None,
        help="with --partitioner: one new downstream subtask, for --channel and --key",
    )
    parser.add_argument(
        "--channel",
        type=int,
        default=None,
        help="with --subtask: one of its new input channels (one per new upstream subtask): "
        "the virtual channels it demultiplexes and which of them it filters",
    )
    parser.add_argument(
        "--key",
        action="append",
        metavar="KEY",
        help="with --subtask: a record's Long key; says whether the subtask's record filter "
        "keeps it (repeatable)",
    )
    parser.add_argument(
        "-m",
        "--max-parallelism",
        type=int,
        default=None,
        help="with --key: the downstream operator's key groups (default: Flink's default for "
        "--old, which a restored job keeps)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.set_defaults(handler=_mapping)


def _keygroup(args: argparse.Namespace) -> str:
    parallelism: int = args.parallelism
    if not args.keys and args.type != "auto":
        raise InvalidParameterError(
            f"--type {args.type} says how to read KEYs, and none is given; name a key or drop "
            "--type to list every subtask's key-group range"
        )
    default_used = args.max_parallelism is None
    max_parallelism = (
        compute_default_max_parallelism(parallelism) if default_used else args.max_parallelism
    )
    # Validates both bounds before any key is looked at.
    ranges = key_group_ranges(max_parallelism, parallelism)
    origin = f" (Flink's default for parallelism {parallelism})" if default_used else ""
    header = f"max parallelism {max_parallelism}{origin}, parallelism {parallelism}"

    if not args.keys:
        if args.json:
            return json.dumps(
                {
                    "max_parallelism": max_parallelism,
                    "parallelism": parallelism,
                    "ranges": [[r.start, r.end] for r in ranges],
                }
            )
        range_rows = [[i, r.start, r.end, r.number_of_key_groups] for i, r in enumerate(ranges)]
        return (
            header
            + "\n\n"
            + render_table(
                ["subtask", "first key group", "last key group", "key groups"], range_rows
            )
        )

    placements = [
        place_key(key, max_parallelism, parallelism, java_type)
        for java_type, key in (_parse_key(text, args.type) for text in args.keys)
    ]
    if args.json:
        return json.dumps(
            {
                "max_parallelism": max_parallelism,
                "parallelism": parallelism,
                "keys": [
                    {
                        "key": p.key,
                        "type": p.java_type.java_name,
                        "hash_code": p.hash_code,
                        "murmur_hash": p.murmur_hash,
                        "key_group": p.key_group,
                        "subtask": p.subtask,
                        "subtask_key_groups": [
                            p.subtask_key_groups.start,
                            p.subtask_key_groups.end,
                        ],
                    }
                    for p in placements
                ],
            }
        )
    rows: list[list[object]] = [
        [
            repr(p.key) if isinstance(p.key, str) else p.key,
            p.java_type.java_name,
            p.hash_code,
            p.murmur_hash,
            p.key_group,
            p.subtask,
            str(p.subtask_key_groups),
        ]
        for p in placements
    ]
    table = render_table(
        ["key", "type", "hashCode()", "murmurHash", "key group", "subtask", "subtask owns"], rows
    )
    note = ""
    if args.type == "auto" and any(p.java_type is JavaType.INT for p in placements):
        note = "\n\nWhole numbers were read as Integer; pass --type long for Long keys."
    return header + "\n\n" + table + note


def _parse_key(text: str, type_name: str) -> tuple[JavaType, object]:
    """Turn command-line text into a value of the requested (or inferred) Java type."""
    if type_name == "auto":
        try:
            value: object = int(text)
        except ValueError:
            value = text
        return infer_java_type(value), value
    java_type = JavaType.parse(type_name)
    if java_type in (JavaType.STRING, JavaType.CHAR):
        return java_type, text
    if java_type is JavaType.BOOLEAN:
        if text.lower() not in ("true", "false"):
            raise KeyTypeError(f"a Boolean key must be true or false, got {text!r}")
        return java_type, text.lower() == "true"
    try:
        if java_type in (JavaType.FLOAT, JavaType.DOUBLE):
            return java_type, float(text)
        return java_type, int(text)
    except ValueError:
        kind = "a number" if java_type in (JavaType.FLOAT, JavaType.DOUBLE) else "a whole number"
        raise KeyTypeError(f"a {java_type.java_name} key must be {kind}, got {text!r}") from None


def _mapping(args: argparse.Namespace) -> str:
    if args.mapper is not None:
        ignored = [
            option
            for option, given in (
                ("--upstream-old", args.upstream_old is not None),
                ("--upstream-new", args.upstream_new is not None),
                ("--recover-output-on-downstream", args.recover_output_on_downstream),
                ("--subtask", args.subtask is not None),
                ("--channel", args.channel is not None),
                ("--key", args.key is not None),
                ("--max-parallelism", args.max_parallelism is not None),
            )
            if given
        ]
        if ignored:
            verb = "apply" if len(ignored) > 1 else "applies"
            raise InvalidParameterError(
                f"{' and '.join(ignored)} only {verb} to a whole exchange: use --partitioner "
                "instead of --mapper (a mapper maps one side's subtasks only)"
            )
        return _mapper_tables(args)
    if any(given is not None for given in (args.subtask, args.channel, args.key)):
        return _subtask_view(args)
    if args.max_parallelism is not None:
        raise InvalidParameterError("--max-parallelism only applies to a record filter: add --key")
    return _exchange_tables(args)


def _too_many(values: int, what: str) -> InvalidParameterError:
    return InvalidParameterError(
        f"--json would list {values:,} values ({what}), more than the {MAX_JSON_VALUES:,} it "
        "lists; drop --json for the tables, which show every subtask's share as ranges, or use "
        "smaller parallelisms"
    )


def _mapper_tables(args: argparse.Namespace) -> str:
    mapper = SubtaskStateMapper.parse(args.mapper)
    # rows as ranges: the cost follows the parallelisms, not the (new, old) pairs
    ranges = mapper.ranges(args.old, args.new)
    if args.json:
        if 2 * ranges.pairs > MAX_JSON_VALUES:
            raise _too_many(2 * ranges.pairs, f"its {ranges.pairs:,} (new, old) pairs, each way")
        return json.dumps(
            {
                "mapper": mapper.name,
                "old": args.old,
                "new": args.new,
                "new_to_old": [list(row) for row in ranges.new_to_old],
                "old_to_new": [list(row) for row in ranges.old_to_new],
                "is_identity": ranges.is_identity,
                "is_ambiguous": mapper.is_ambiguous,
                "ambiguous_old_subtasks": sorted(ranges.ambiguous),
            }
        )
    title = f"{mapper.name} {args.old} -> {args.new}: {mapper.description}"
    if ranges.is_identity:
        title += " (identity)"
    forward = render_table(
        ["new subtask", "reads old subtasks", "shared, filtered"],
        [
            [index, format_indexes(row), format_indexes(ranges.shared(index))]
            for index, row in enumerate(ranges.new_to_old)
        ],
    )
    backward = render_table(
        ["old subtask", "read by new subtasks"],
        [[index, format_indexes(row)] for index, row in enumerate(ranges.old_to_new)],
    )
    return f"{title}\n\n{forward}\n\n{backward}"


def _upstream(args: argparse.Namespace) -> tuple[int, int]:
    """The upstream's (old, new) parallelism: the downstream's unless given."""
    return (
        args.old if args.upstream_old is None else args.upstream_old,
        args.new if args.upstream_new is None else args.upstream_new,
    )


def _summary(args: argparse.Namespace) -> ExchangeSummary:
    """The exchange the arguments describe, in ranges (``summarise_exchange``)."""
    return summarise_exchange(
        args.partitioner,
        _upstream(args),
        (args.old, args.new),
        recover_output_on_downstream=args.recover_output_on_downstream,
    )


def _exchange_tables(args: argparse.Namespace) -> str:
    upstream = _upstream(args)
    # in ranges first: cheap at any parallelism, and it sizes the full plan before it is built
    summary = _summary(args)
    if args.json:
        if summary.plan_size > MAX_JSON_VALUES:
            raise _too_many(
                summary.plan_size, f"{summary.virtual_channels:,} of them virtual channels"
            )
        return _exchange_json(args, upstream)
    return _exchange_text(summary)


def _exchange_json(args: argparse.Namespace, upstream: tuple[int, int]) -> str:
    plan = rescale_exchange(
        args.partitioner,
        upstream,
        (args.old, args.new),
        recover_output_on_downstream=args.recover_output_on_downstream,
    )
    return json.dumps(
        {
            "partitioner": plan.partitioner.name,
            "upstream": list(plan.upstream_parallelism),
            "downstream": list(plan.downstream_parallelism),
            "carries_channel_state": plan.carries_channel_state,
            "note": plan.note,
            "downstream_subtasks": [
                {
                    "subtask": d.subtask,
                    "input_state_from": list(d.input_state_from),
                    "upstream_output_state_from": [list(p) for p in d.upstream_output_state_from],
                    "virtual_channels": [
                        [[vc.old_subtask, vc.old_channel, vc.filtered] for vc in channel]
                        for channel in d.virtual_channels
                    ],
                    "ambiguous_old_subtasks": sorted(d.descriptor.ambiguous_subtask_indexes),
                }
                for d in plan.downstream
            ],
            "upstream_subtasks": [
                {"subtask": u.subtask, "output_state_from": list(u.output_state_from)}
                for u in plan.upstream
            ],
        }
    )


def _title(plan: ExchangeSummary) -> str:
    kind = plan.partitioner
    (up_old, up_new), (down_old, down_new) = plan.upstream_parallelism, plan.downstream_parallelism
    return (
        f"{kind.datastream_call} ({kind.flink_class}): upstream {up_old} -> {up_new}, "
        f"downstream {down_old} -> {down_new}; mappers: downstream "
        f"{kind.downstream_mapper.name}, upstream {kind.upstream_mapper.name}"
    )


def _exchange_text(plan: ExchangeSummary) -> str:
    title = _title(plan)
    if not plan.carries_channel_state:
        return f"{title}\n\n{plan.note}"
    down_rows = [
        [
            d.subtask,
            format_indexes(d.input_state_from),
            d.upstream_output_handles if plan.recover_output_on_downstream else "-",
            " ".join(_block(block) for block in d.virtual_channels) or "-",
            "yes" if d.filters else "no",
        ]
        for d in plan.downstream
    ]
    down = render_table(
        [
            "new downstream",
            "input state of old",
            "upstream output handles",
            "virtual channels (old subtask, old channel)",
            "filters",
        ],
        down_rows,
    )
    up = render_table(
        ["new upstream", "output state of old"],
        [[u.subtask, format_indexes(u.output_state_from)] for u in plan.upstream],
    )
    notes = [
        "a..b stands for every index from a to b: (1,0..2) is (1,0) (1,1) (1,2)",
        "* records of these virtual channels are filtered: each is kept only if its new "
        "owner is this subtask",
    ]
    if plan.note:
        notes.insert(0, plan.note)
    if plan.recover_output_on_downstream:
        notes.append("output state is recovered on the downstream subtasks")
    return f"{title}\n\n{down}\n\n{up}\n\n" + "\n".join(notes)


def _block(block: VirtualChannelBlock) -> str:
    """``(1,0..2)*``: old subtask 1's virtual channels of old channels 0 to 2, filtered."""
    return f"({_run(block.old_subtasks)},{_run(block.old_channels)})" + (
        "*" if block.filtered else ""
    )


def _run(indexes: range) -> str:
    return str(indexes.start) if len(indexes) == 1 else f"{indexes.start}..{indexes[-1]}"


# --- one subtask: an input channel's virtual channels, the record filter ---------------------


def _subtask_view(args: argparse.Namespace) -> str:
    """``--subtask`` with ``--channel`` and/or ``--key``: what one new downstream subtask does
    with the recovered data of one input channel, and which records its filter keeps."""
    if args.subtask is None:
        given = "--channel" if args.channel is not None else "--key"
        raise InvalidParameterError(
            f"{given} needs --subtask: the new downstream subtask whose "
            + ("input channel" if given == "--channel" else "record filter")
            + " it asks about"
        )
    if args.channel is None and args.key is None:
        raise InvalidParameterError(
            "--subtask asks about one input channel (--channel) or the record filter (--key) "
            "of that subtask: name one"
        )
    if args.max_parallelism is not None and args.key is None:
        raise InvalidParameterError("--max-parallelism only applies to a record filter: add --key")
    # checks the partitioner and every parallelism before any index is looked at
    summary = _summary(args)
    if not 0 <= args.subtask < args.new:
        raise InvalidParameterError(
            f"--subtask {args.subtask} is out of range 0 to {args.new - 1} (new downstream "
            f"parallelism {args.new})"
        )
    channel = None if args.channel is None else _channel(args, summary)
    record_filter = None if args.key is None else _record_filter(args, summary)
    if args.json:
        return json.dumps(
            {
                "partitioner": summary.partitioner.name,
                "upstream": list(summary.upstream_parallelism),
                "downstream": list(summary.downstream_parallelism),
                "subtask": args.subtask,
                **({} if channel is None else channel.json()),
                **({} if record_filter is None else record_filter.json()),
            }
        )
    sections = [_title(summary)]
    if channel is not None:
        sections.append(channel.text())
    if record_filter is not None:
        sections.append(record_filter.text())
    return "\n\n".join(sections)


@dataclass(frozen=True)
class _ChannelView:
    """One new input channel of one new downstream subtask, from its gate's descriptor."""

    subtask: int
    channel: int
    old_subtasks: tuple[int, ...]
    ambiguous: tuple[int, ...]
    old_channels: tuple[int, ...]
    virtual: tuple[VirtualChannel, ...]
    note: str

    def json(self) -> dict[str, Any]:
        return {
            "channel": self.channel,
            "old_subtasks": list(self.old_subtasks),
            "ambiguous_old_subtasks": list(self.ambiguous),
            "old_channels": list(self.old_channels),
            "virtual_channels": [
                [vc.old_subtask, vc.old_channel, vc.filtered] for vc in self.virtual
            ],
        }

    def text(self) -> str:
        head = f"new downstream subtask {self.subtask}, input channel {self.channel}:"
        if not self.virtual:
            return f"{head} no virtual channels\n  {self.note}"
        pairs = " ".join(
            f"({vc.old_subtask},{vc.old_channel})" + ("*" if vc.filtered else "")
            for vc in self.virtual
        )
        shared = [old for old in self.old_subtasks if old in self.ambiguous]
        facts = [
            ("old subtasks it reads", format_indexes(self.old_subtasks)),
            ("of them shared (filtered)", format_indexes(shared)),
            ("old channels mapped to it", format_indexes(self.old_channels)),
            ("virtual channels", pairs),
        ]
        width = max(len(label) for label, _ in facts)
        lines = [head, *(f"  {label.ljust(width)}  {value}" for label, value in facts)]
        lines.append("  each is (old subtask, old channel)")
        if any(vc.filtered for vc in self.virtual):
            lines[-1] += "; * = its records are kept only if this subtask owns them"
        return "\n".join(lines)


def _channel(args: argparse.Namespace, summary: ExchangeSummary) -> _ChannelView:
    channels = summary.upstream_parallelism[1]
    if not 0 <= args.channel < channels:
        raise InvalidParameterError(
            f"--channel {args.channel} is out of range 0 to {channels - 1} (one input channel "
            f"per new upstream subtask: {channels})"
        )
    if summary.plan_size > MAX_JSON_VALUES:
        raise InvalidParameterError(
            f"--channel reads the exchange's whole plan, {summary.plan_size:,} values, more "
            f"than the {MAX_JSON_VALUES:,} it builds; use smaller parallelisms, or drop "
            "--subtask for the tables of every subtask"
        )
    plan = rescale_exchange(
        args.partitioner,
        summary.upstream_parallelism,
        summary.downstream_parallelism,
        recover_output_on_downstream=args.recover_output_on_downstream,
    )
    descriptor = plan.downstream[args.subtask].descriptor
    virtual = virtual_channels(descriptor, args.channel)
    old_channels = descriptor.rescaled_channels_mapping.mapped_indexes(args.channel)
    if not plan.carries_channel_state:
        note = plan.note
    elif not descriptor.old_subtask_indexes:
        note = "its gate was not rescaled, so the channel is read as it is"
    else:
        note = f"no old channel is mapped to channel {args.channel}, so nothing recovered "
        note += "arrives on it"
    return _ChannelView(
        args.subtask,
        args.channel,
        descriptor.old_subtask_indexes,
        tuple(sorted(descriptor.ambiguous_subtask_indexes)),
        old_channels if descriptor.old_subtask_indexes else (),
        virtual,
        note,
    )


@dataclass(frozen=True)
class _FilterView:
    """The record filter of one new downstream subtask, asked about each ``--key``."""

    record_filter: PartitionerRecordFilter
    default_max_parallelism_of: int | None
    keys: tuple[int, ...]

    def json(self) -> dict[str, Any]:
        f = self.record_filter
        return {
            "max_parallelism": f.max_parallelism,
            "keys": [
                {
                    "key": key,
                    **self._key_group(key),
                    "owner": f.selected_subtask(key),
                    "kept": f.keeps(key),
                }
                for key in self.keys
            ],
        }

    def _key_group(self, key: int) -> dict[str, int]:
        if self.record_filter.partitioner is not Partitioner.HASH:
            return {}
        return {"key_group": assign_to_key_group(key, self.record_filter.max_parallelism, "long")}

    def text(self) -> str:
        f = self.record_filter
        origin = ""
        if self.default_max_parallelism_of is not None:
            old = self.default_max_parallelism_of
            origin = f" (Flink's default for --old {old}; a restore keeps it)"
        head = (
            f"record filter of new subtask {f.subtask} of {f.parallelism}, max "
            f"parallelism {f.max_parallelism}{origin}:"
        )
        keyed = f.partitioner is Partitioner.HASH
        headers = ["key", *(["key group"] if keyed else []), "owner", f"subtask {f.subtask}"]
        rows = [
            [
                key,
                *([self._key_group(key)["key_group"]] if keyed else []),
                f.selected_subtask(key),
                "keeps" if f.keeps(key) else "drops",
            ]
            for key in self.keys
        ]
        rule = (
            "the key group's owner at the new parallelism"
            if keyed
            else "the key modulo the new parallelism"
        )
        return (
            f"{head}\n\n{render_table(headers, rows)}\n\n"
            f"owner: {rule}. The filter applies only to records of filtered\n"
            "virtual channels (*); every other record is kept."
        )


def _record_filter(args: argparse.Namespace, summary: ExchangeSummary) -> _FilterView:
    default = args.max_parallelism is None
    if not default:  # a restored job keeps its max parallelism: the old one fitted it too
        for parallelism in (args.new, args.old):
            check_parallelism_against_max(parallelism, args.max_parallelism)
    record_filter = PartitionerRecordFilter(
        summary.partitioner,
        args.subtask,
        args.new,
        compute_default_max_parallelism(args.old) if default else args.max_parallelism,
    )
    keys = tuple(_long_key(text) for text in args.key)
    return _FilterView(record_filter, args.old if default else None, keys)


def _long_key(text: str) -> int:
    """A ``--key``, refused here if it is no whole number or does not fit a ``Long``."""
    try:
        value = int(text)
    except ValueError:
        raise KeyTypeError(
            f"--key {text!r} is not a record key: the model's records carry Long keys (whole "
            "numbers)"
        ) from None
    return long_key(value)
