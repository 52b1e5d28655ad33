"""Reading a checkpoint Flink wrote: chunks and record framing against reading the bytes.

A synthetic channel-state file in Flink's layout (version header, then 4 KiB chunks of
length-framed ``Tuple2<Long,String>`` records that span chunks) is written once; the baseline
is reading the same file from disk in the same run. The target: framing the records at no less
than a quarter of that speed. Framing and keying every record with numpy
(``record_columns.channel_columns``, Long key ``f0%1000`` and String key ``f1``) is measured per
core against the same baseline (target: 100 MB/s) and against the scalar reader (``decode`` and
the key per record) on the same bytes. The largest real checkpoint is read as well.
"""

from __future__ import annotations

import struct
import tempfile
from functools import partial
from pathlib import Path

import numpy as np

from benchmarks.harness import Measurement, best_of
from flinkstate.flinkcheckpoint.channel_state_file import read_channel
from flinkstate.flinkcheckpoint.files import StateFiles
from flinkstate.flinkcheckpoint.handles import ChannelStateHandle, RelativeFileStateHandle
from flinkstate.flinkcheckpoint.key_selector import key_function
from flinkstate.flinkcheckpoint.record_columns import channel_columns
from flinkstate.flinkcheckpoint.stream_element import decode, frames, value_decoder
from flinkstate.flinkcheckpoint.summary import summarize

SEGMENT = 4096
TYPE = "Tuple2<Long,String>"
REAL = Path(__file__).parents[1] / "data" / "real-checkpoints"


def _records(count: int, varied: bool) -> bytes:
    rng = np.random.default_rng(3)
    sizes = rng.integers(10, 60, count) if varied else np.full(count, 16)
    parts = []
    for seq, size in enumerate(sizes.tolist()):
        text = f"p{seq}".ljust(size, "x").encode()
        body = b"\x00" + struct.pack(">qq", -(2**63), seq) + bytes([len(text) + 1]) + text
        parts.append(struct.pack(">i", len(body)) + body)
    return b"".join(parts)


def _write(directory: Path, payload: bytes) -> ChannelStateHandle:
    """One channel's state in SEGMENT-sized chunks, as ChannelStateCheckpointWriter lays it out."""
    path = directory / "channel-state"
    offsets = []
    with path.open("wb") as out:
        out.write(struct.pack(">i", 0))
        position = 4
        for start in range(0, len(payload), SEGMENT):
            chunk = payload[start : start + SEGMENT]
            offsets.append(position)
            out.write(struct.pack(">i", len(chunk)) + chunk)
            position += 4 + len(chunk)
    size = path.stat().st_size
    return ChannelStateHandle(
        True, 0, 0, 0, tuple(offsets), size - 4, RelativeFileStateHandle(path.name, size)
    )


def run(smoke: bool) -> list[Measurement]:
    records = 20_000 if smoke else 5_000_000  # 5M records of 38 bytes + 4: ~210 MB
    repeat = 2 if smoke else 3
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        for varied in (False, True):
            payload = _records(records if not varied else records // 2, varied)
            handle = _write(directory, payload)
            path = directory / "channel-state"
            label = "varying" if varied else "equal"
            raw = best_of(path.read_bytes, repeat)
            with StateFiles(directory) as files:
                data = read_channel(handle, files).data
                if data != payload:
                    raise AssertionError("the chunks do not give back the records written")
                chunks = best_of(partial(read_channel, handle, files), repeat)
            offsets, _, trailing = frames(data)
            if trailing or len(offsets) != (records if not varied else records // 2):
                raise AssertionError("framing lost records")
            framing = best_of(partial(frames, data), repeat)
            size = path.stat().st_size
            for spec in ("f0%1000", "f1"):
                key = key_function(spec, TYPE)
                keyed = best_of(
                    partial(channel_columns, data, TYPE, key, 128, "bench"),
                    repeat,
                )
                results.append(
                    Measurement(
                        f"records framed and keyed by {spec}, numpy ({label} lengths)",
                        keyed,
                        "reading the file",
                        raw,
                        size,
                    )
                )
            results += [
                Measurement(
                    f"chunks read ({label} lengths)", chunks, "reading the file", raw, size
                ),
                Measurement(
                    f"records framed ({label} lengths)", framing, "reading the file", raw, size
                ),
            ]
        sample = data[: min(len(data), 2_000_000)]
        decoder = value_decoder(TYPE)
        decoding = best_of(lambda: decode(sample, decoder), repeat)
        key = key_function("f0%1000", TYPE)

        def scalar_keys() -> list[object]:
            return [key(e.value) for e in decode(sample, decoder).elements if e.is_record]

        results.append(
            Measurement(
                "records framed and keyed by f0%1000, numpy",
                best_of(lambda: channel_columns(sample, TYPE, key, 128, "bench"), repeat),
                "the scalar reader (decode, a key per record)",
                best_of(scalar_keys, repeat),
                len(sample),
            )
        )
        copy = best_of(lambda: bytes(bytearray(sample)), repeat)
        results.append(
            Measurement(
                "records decoded (Tuple2<Long,String>)",
                decoding,
                "copying the bytes",
                copy,
                len(sample),
            )
        )
    largest = max(
        REAL.glob("*/*/chk-*"),
        key=lambda p: sum(f.stat().st_size for f in p.rglob("*") if f.is_file()),
    )
    whole = best_of(lambda: summarize(largest, value=value_decoder("Tuple2<Long,String>")), repeat)
    size = sum(f.stat().st_size for f in largest.rglob("*") if f.is_file())
    read_all = best_of(lambda: [f.read_bytes() for f in largest.rglob("*") if f.is_file()], repeat)
    results.append(
        Measurement(
            f"inspect {largest.parents[1].name}", whole, "reading its files", read_all, size
        )
    )
    return results
