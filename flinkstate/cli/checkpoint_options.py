"""The options of the commands that read a checkpoint Flink wrote (``inspect``, ``forecast``,
``rescale``): defined once and parsed once, so that the three take, explain and refuse them
alike. The checkpoint does not record what its exchanges' partitioners and keys were, which
partition fed which gate where several could have, where its files went after a move, nor the
records' type: these options say it."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flinkstate.errors import InvalidParameterError

if TYPE_CHECKING:
    from flinkstate.flinkcheckpoint.export import ExchangeSpec
    from flinkstate.flinkcheckpoint.inflight import Edge
    from flinkstate.flinkcheckpoint.key_selector import KeySelector
    from flinkstate.flinkcheckpoint.stream_element import ValueDecoder

#: the record types ``--record-type`` reads, as its help names them
RECORD_TYPES = (
    "Long, Integer, Short, Byte, Double, Float, Boolean, String, TupleN<...> or Row<...> of them"
)


def add_reading_options(
    parser: argparse.ArgumentParser,
    *,
    record_type_help: str,
    exchange_note: str = "",
    prefix: str = "",
) -> None:
    """``--record-type``, ``--exchange``, ``--edge`` and ``--reroot``. ``prefix`` starts each
    help (a command that reads other inputs too says which these are for); ``exchange_note``
    ends ``--exchange``'s (what the command does with a key)."""
    parser.add_argument("--record-type", default=None, help=prefix + record_type_help)
    parser.add_argument(
        "--exchange",
        action="append",
        default=[],
        metavar="UP->DOWN=PARTITIONER[:KEY]",
        help=prefix + "what the checkpoint does not record: e.g. "
        "to-record->slow-counter=hash:f0%%1000 or to-record->relay=rebalance (KEY: f<N>, "
        "f<N>%%M, value, value%%M; its Java type, Long, Integer or String, is the field's in "
        "--record-type)" + exchange_note,
    )
    parser.add_argument(
        "--edge",
        action="append",
        default=[],
        metavar="UP:PARTITION>DOWN:GATE",
        help=prefix + "an exchange that carried channel state, where it cannot be inferred",
    )
    parser.add_argument(
        "--reroot",
        action="append",
        default=[],
        metavar="STORED=LOCAL",
        help=prefix + "where files stored under an absolute path STORED are now",
    )


def add_segment_size_option(parser: argparse.ArgumentParser, *, prefix: str = "") -> None:
    """``--segment-size``: the job's buffer size, which the checkpoint does not record."""
    parser.add_argument(
        "--segment-size",
        default=None,
        metavar="BYTES",
        help=prefix + "the job's taskmanager.memory.segment-size (e.g. 4kb; Flink's default "
        "32kb when not given), which the checkpoint does not record",
    )


def segment_size(args: argparse.Namespace) -> int | None:
    """``--segment-size`` in bytes, checked as Flink checks it; None where not given."""
    if args.segment_size is None:
        return None
    from flinkstate.memory_segment import check_segment_size
    from flinkstate.memory_size import parse_bytes

    return check_segment_size(parse_bytes(args.segment_size))


@dataclass(frozen=True)
class ReadingOptions:
    """What the reading options said, parsed and checked."""

    #: as given: None (framing only) or ``raw`` (bytes kept) read no values
    record_type: str | None
    #: by exchange name (``UP->DOWN``)
    exchanges: dict[str, ExchangeSpec]
    #: the ``--exchange`` texts whose key reads the records' values, as given
    keyed_by: tuple[str, ...]
    edges: list[Edge] | None
    reroot: dict[str, str]

    @property
    def reads_values(self) -> bool:
        return self.record_type not in (None, "raw")

    def value(self) -> ValueDecoder | None:
        """The decoder of the records' values (None where the type reads none)."""
        if not self.reads_values:
            return None
        from flinkstate.flinkcheckpoint.stream_element import value_decoder

        assert self.record_type is not None
        return value_decoder(self.record_type)

    def keys(self) -> dict[str, KeySelector]:
        """The key selector of each keyed exchange, by its name."""
        from flinkstate.flinkcheckpoint.key_selector import KeySelector

        return {
            name: spec.key
            for name, spec in self.exchanges.items()
            if isinstance(spec.key, KeySelector)
        }

    def require_values(self, suggestion: str) -> None:
        """Refuse a keyed exchange without a type that reads the records' values, naming the
        option and ``suggestion`` (the types that would read them, or where to find them)."""
        if not self.keyed_by or self.reads_values:
            return
        if self.record_type == "raw":
            raise InvalidParameterError(
                f"--exchange {self.keyed_by[0]} keys records by their values, which "
                "--record-type raw does not decode: give their type"
            )
        raise InvalidParameterError(
            f"--exchange {self.keyed_by[0]} keys records by their values: give their type "
            f"(--record-type); {suggestion}"
        )


def reading_options(args: argparse.Namespace) -> ReadingOptions:
    """The reading options of ``args`` parsed (each ``--exchange`` with the key's Java type
    from ``--record-type``), every text refused in one line naming its option."""
    from flinkstate.flinkcheckpoint.export import exchange_option
    from flinkstate.flinkcheckpoint.files import reroot_options
    from flinkstate.flinkcheckpoint.inflight import Edge

    record_type = args.record_type
    exchanges: dict[str, Any] = {}
    keyed_by = []
    for item in args.exchange:
        name, spec = exchange_option(item, record_type)
        if name in exchanges:  # two partitioners for one exchange: the first was dropped
            raise InvalidParameterError(f"--exchange names {name} twice; give it once")
        exchanges[name] = spec
        if spec.key is not None:
            keyed_by.append(item)
    return ReadingOptions(
        record_type,
        exchanges,
        tuple(keyed_by),
        [Edge.parse(e) for e in args.edge] or None,
        reroot_options(args.reroot),
    )
