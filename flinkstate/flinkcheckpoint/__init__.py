"""Reading checkpoints that Flink itself wrote: the ``_metadata`` file, the channel-state files
and the records inside them. Nothing read is ever executed or unpickled; every length read from
a file is checked against what remains before anything is allocated."""

from __future__ import annotations

from pathlib import Path

from flinkstate.errors import InvalidParameterError
from flinkstate.face import lazy_face

#: the checkpoints Flink 2.3.0 wrote, committed with the repository
REAL_CHECKPOINTS = Path(__file__).resolve().parents[2] / "data" / "real-checkpoints"


def real_checkpoint(name: str) -> Path:
    """The ``chk-N`` directory of one of ``data/real-checkpoints`` (e.g. ``keyed-hash-p2-p4``).

    Examples
    --------
    The checkpoints Flink 2.3.0 wrote, committed in ``data/real-checkpoints``:

    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> checkpoint.relative_to(REAL_CHECKPOINTS).as_posix()
    'keyed-hash-p2-p4/5d009e04dbf8e413889bc15e43e79d49/chk-48'
    >>> sorted(path.name for path in checkpoint.iterdir())
    ['5f9f274d-7b0c-4d04-8390-709817c72ab4', '_metadata']
    >>> real_checkpoint("no-such-job")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    flinkstate.errors.InvalidParameterError: no real checkpoint 'no-such-job' in ...
    """
    found = sorted(REAL_CHECKPOINTS.glob(f"{name}/*/chk-*"))
    found = [p for p in found if p.is_dir()]
    if not found:
        known = (
            sorted(p.name for p in REAL_CHECKPOINTS.iterdir() if p.is_dir())
            if (REAL_CHECKPOINTS.is_dir())
            else []
        )
        raise InvalidParameterError(
            f"no real checkpoint {name!r} in {REAL_CHECKPOINTS}"
            + (f"; known: {', '.join(known)}" if known else " (run from the repository)")
        )
    return found[0]


#: the package's face: each name other packages (and the lessons) use, by the module of the
#: package that defines it, loaded on first use (``flinkstate.face``; ``tests/test_faces.py``
#: holds every import from another package to it)
FACE: dict[str, str] = {
    "buffer_batch": "channel_rows",
    "ChannelKeying": "channel_rows",
    "ChannelName": "channel_rows",
    "ChannelRead": "channel_rows",
    "ChannelSide": "channel_rows",
    "fragment_batch": "channel_rows",
    "read_channel": "channel_state_file",
    "read_channels": "channel_state_file",
    "exchange_option": "export",
    "ExchangeSpec": "export",
    "ExportPlan": "export",
    "plan_export": "export",
    "to_dataset": "export",
    "map_file": "files",
    "open_regular": "files",
    "reroot_options": "files",
    "StateFiles": "files",
    "ChannelStateHandle": "handles",
    "channels_of": "inflight",
    "Edge": "inflight",
    "exchange_name": "inflight",
    "logical_channels": "inflight",
    "LogicalChannel": "inflight",
    "read_records": "inflight",
    "resolve_edges": "inflight",
    "key_function": "key_selector",
    "KeySelector": "key_selector",
    "keyed_entries": "keyed_state",
    "read_keyed_state": "keyed_state",
    "CheckpointMetadata": "metadata",
    "parse_metadata": "metadata",
    "read_metadata": "metadata",
    "value_decoder": "stream_element",
    "ValueDecoder": "stream_element",
    "checkpoint_dir": "summary",
    "summarize": "summary",
    "types_that_read_text": "summary",
}
__all__ = sorted([*FACE, "REAL_CHECKPOINTS", "real_checkpoint"])
__getattr__, __dir__ = lazy_face(__name__, FACE)
